//! A generation that loops: its last tokens are one short block repeated, exactly,
//! over a long span (a small model repeating itself inside a string or writing the
//! same call again and again). Such a reply is cut there instead of running to the
//! token limit.

use crate::TokenId;

/// The longest repeated block looked for, in tokens.
const MAX_PERIOD: usize = 48;
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

#[cfg(test)]
mod tests {
    use super::*;

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
