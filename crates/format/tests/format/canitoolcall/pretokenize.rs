//! Byte-level BPE pre-tokenizers, written out by hand. Qwen2's split regex
//! `(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+`
//! (alternatives tried in order); Llama 3's is the same with `\p{N}{1,3}`. A BPE
//! token never crosses these pieces. [`Pretok::Whole`] does not split at all (sound
//! for any tokenizer, only slower to align).

/// Which pre-tokenizer cuts the text between markers.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Pretok {
    /// Qwen2: one digit per piece.
    Qwen2,
    /// Llama 3: up to three digits per piece.
    Llama3,
    /// No pre-tokenization: each run of text between markers is one unit.
    Whole,
}

fn letter(c: char) -> bool {
    c.is_alphabetic()
}

fn number(c: char) -> bool {
    c.is_numeric()
}

fn newline(c: char) -> bool {
    c == '\r' || c == '\n'
}

/// How many chars the regex matches at `i`.
fn match_len(chars: &[char], i: usize, max_digits: usize) -> usize {
    let n = chars.len();
    let c = chars[i];
    if c == '\'' {
        for suffix in ["s", "t", "re", "ve", "m", "ll", "d"] {
            let fits = suffix.chars().enumerate().all(|(k, s)| {
                chars
                    .get(i + 1 + k)
                    .is_some_and(|&x| x.to_lowercase().eq(std::iter::once(s)))
            });
            if fits {
                return 1 + suffix.len();
            }
        }
    }
    let letters_from = |at: usize| chars[at..].iter().take_while(|&&x| letter(x)).count();
    if !letter(c) && !number(c) && !newline(c) && i + 1 < n && letter(chars[i + 1]) {
        return 1 + letters_from(i + 1);
    }
    if letter(c) {
        return letters_from(i);
    }
    if number(c) {
        return chars[i..]
            .iter()
            .take(max_digits)
            .take_while(|&&x| number(x))
            .count();
    }
    let punct = |x: char| !x.is_whitespace() && !letter(x) && !number(x);
    let start = if c == ' ' { i + 1 } else { i };
    if start < n && punct(chars[start]) {
        let mut k = start;
        while k < n && punct(chars[k]) {
            k += 1;
        }
        while k < n && newline(chars[k]) {
            k += 1;
        }
        return k - i;
    }
    let mut end = i;
    while end < n && chars[end].is_whitespace() {
        end += 1;
    }
    if let Some(last) = (i..end).rev().find(|&p| newline(chars[p])) {
        return last + 1 - i;
    }
    if end == n || end - i == 1 {
        end - i
    } else {
        end - i - 1
    }
}

/// The pre-token pieces of `text`, in order.
pub fn pretokenize(text: &str, pretok: Pretok) -> Vec<&str> {
    let max_digits = match pretok {
        Pretok::Qwen2 => 1,
        Pretok::Llama3 => 3,
        Pretok::Whole => {
            return if text.is_empty() {
                Vec::new()
            } else {
                vec![text]
            }
        }
    };
    let chars: Vec<char> = text.chars().collect();
    let offsets: Vec<usize> = text
        .char_indices()
        .map(|(b, _)| b)
        .chain(std::iter::once(text.len()))
        .collect();
    let mut pieces = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        let len = match_len(&chars, i, max_digits).max(1);
        pieces.push(&text[offsets[i]..offsets[i + len]]);
        i += len;
    }
    pieces
}
