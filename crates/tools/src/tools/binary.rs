//! Telling binary files from text by their first bytes.

/// Bytes inspected to decide whether a file is binary.
pub(crate) const SAMPLE_BYTES: usize = 8192;

/// Whether `sample`, the first bytes of a file, looks binary: it contains a NUL
/// byte, or more than a tenth of it is not valid UTF-8. When `truncated`, an
/// incomplete character at the end of the sample is not held against it.
pub(crate) fn looks_binary(sample: &[u8], truncated: bool) -> bool {
    if sample.contains(&0) {
        return true;
    }
    let mut invalid = 0;
    let mut rest = sample;
    while let Err(error) = std::str::from_utf8(rest) {
        match error.error_len() {
            Some(length) => {
                invalid += length;
                rest = &rest[error.valid_up_to() + length..];
            }
            None => {
                if !truncated {
                    invalid += rest.len() - error.valid_up_to();
                }
                break;
            }
        }
    }
    invalid * 10 > sample.len()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nul_bytes_and_mostly_invalid_utf8_are_binary() {
        assert!(looks_binary(b"abc\0def", false));
        assert!(looks_binary(&[0xff, 0xfe, 0x41, 0x80, 0x81], false));
        assert!(!looks_binary("plain text, ünïcödé\n".as_bytes(), false));
        assert!(!looks_binary(
            b"one stray byte \xe9 in a long enough line of text",
            false
        ));
    }

    #[test]
    fn a_character_cut_by_the_sample_end_is_not_binary() {
        let text = "ab€".as_bytes();
        assert!(!looks_binary(&text[..3], true));
        assert!(looks_binary(&text[..3], false));
    }
}
