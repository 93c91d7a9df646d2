//! A generation that loops: its last tokens are one short block repeated, exactly,
//! over a long span (a small model repeating itself inside a string or writing the
//! same call again and again). Such a reply is cut there instead of running to the
//! token limit.

use crate::TokenId;

/// The longest repeated block looked for, in tokens: a `<tools>` block of three calls
/// written again and again is some 55.
const MAX_PERIOD: usize = 128;
/// The shortest span of repetition that counts as a loop, in tokens.
const MIN_SPAN: usize = 96;
/// The fewest repeats of the block that count as a loop.
const MIN_REPEATS: usize = 3;

/// Whether the tail of `tokens` is one block of at most [`MAX_PERIOD`] tokens repeated
/// at least [`MIN_REPEATS`] times over at least [`MIN_SPAN`] tokens.
pub(crate) fn loops(tokens: &[TokenId]) -> bool {
    (1..=MAX_PERIOD).any(|period| {
        let span = MIN_SPAN.max(MIN_REPEATS * period);
        if tokens.len() < span {
            return false;
        }
        let tail = &tokens[tokens.len() - span..];
        (period..span).all(|i| tail[i] == tail[i - period])
    })
}

/// The fewest equal lines in a row that end a reply the token limit cut as a loop.
const MIN_LINE_REPEATS: usize = 3;

/// Whether the complete lines of `text` (an unfinished last line left out) end with
/// one non-empty line [`MIN_LINE_REPEATS`] or more times in a row: a call too long
/// for [`MAX_PERIOD`] written again and again until the token limit cut it.
pub(crate) fn ends_in_repeated_lines(text: &str) -> bool {
    let complete = match text.rfind('\n') {
        Some(end) => &text[..end],
        None => return false,
    };
    let mut lines = complete
        .lines()
        .rev()
        .filter(|line| !line.trim().is_empty());
    let Some(last) = lines.next() else {
        return false;
    };
    1 + lines.take_while(|line| *line == last).count() >= MIN_LINE_REPEATS
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cut_reply_that_ends_in_one_line_again_and_again_loops() {
        let call = r#"{"name": "create_event", "arguments": {"title": "Budget review", "date": "2024-07-02"}}"#;
        let cut = format!("{call}\n{call}\n{call}\n{{\"name\": \"create_ev");
        assert!(ends_in_repeated_lines(&cut));
        assert!(ends_in_repeated_lines(&format!(
            "{call}\n\n{call}\n\n{call}\n"
        )));
        // Twice is not a loop, nor are different lines, nor one unfinished line.
        assert!(!ends_in_repeated_lines(&format!("{call}\n{call}\n{{\"na")));
        assert!(!ends_in_repeated_lines("a\nb\nc\nd\n"));
        assert!(!ends_in_repeated_lines(call));
    }

    #[test]
    fn a_block_repeated_over_a_long_span_is_a_loop() {
        let block = [5, 6, 7, 8, 9];
        let mut tokens: Vec<TokenId> = vec![1, 2, 3];
        while tokens.len() < 3 + MIN_SPAN - 1 {
            tokens.extend(block);
        }
        tokens.truncate(3 + MIN_SPAN - 1);
        assert!(!loops(&tokens), "one token short of the span");
        tokens.push(block[(MIN_SPAN - 1) % block.len()]);
        assert!(loops(&tokens));
        // One token of the same length is a loop too (newlines, spaces).
        assert!(loops(&[0; MIN_SPAN]));
        // A long block needs three repeats.
        let long: Vec<TokenId> = (100..140).collect();
        let twice: Vec<TokenId> = long.iter().chain(&long).copied().collect();
        assert!(!loops(&twice));
        let thrice: Vec<TokenId> = twice.iter().chain(&long).copied().collect();
        assert!(loops(&thrice));
        // So does the longest block looked for; a longer one is not looked for.
        for (period, looped) in [(MAX_PERIOD, true), (MAX_PERIOD + 1, false)] {
            let block: Vec<TokenId> = (1000..1000 + period as TokenId).collect();
            let thrice: Vec<TokenId> = block.iter().cycle().take(3 * period).copied().collect();
            assert_eq!(loops(&thrice), looped, "period {period}");
        }
    }

    #[test]
    fn text_that_varies_is_not_a_loop() {
        // Lines that share a shape but not their numbers.
        let tokens: Vec<TokenId> = (0..400)
            .map(|i| if i % 4 == 3 { i } else { i % 4 })
            .collect();
        assert!(!loops(&tokens));
        assert!(!loops(&[]));
    }
}
