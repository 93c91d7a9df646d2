//! Drafts for speculative decoding by prompt lookup: the tokens that followed the
//! latest earlier occurrence of the sequence's last few tokens. An agent's replies copy
//! paths, names, JSON keys and values from their prompt, so a reply often continues
//! the way an earlier stretch of the same sequence did. The draft is only a guess: the
//! worker decodes it in the same batch as the real next token and keeps the drafted
//! tokens the sampler then picks itself (see `worker::step`).

use crate::TokenId;

/// The longest run of last tokens looked up first.
const MAX_NGRAM: usize = 3;

/// The shortest run looked up; a single token matches too often to guess well.
const MIN_NGRAM: usize = 2;

/// How far back (in tokens) a lookup searches: the latest stretch of a long prompt is
/// the likeliest to be copied, and the search stays cheap next to a decode.
const SEARCH_WINDOW: usize = 8_192;

/// At most `max` tokens that followed the latest earlier occurrence of the last
/// [`MAX_NGRAM`] (else [`MIN_NGRAM`]) tokens of `sequence`; empty when none occurs.
pub(crate) fn draft(sequence: &[TokenId], max: usize) -> Vec<TokenId> {
    if max == 0 {
        return Vec::new();
    }
    let window = &sequence[sequence.len().saturating_sub(SEARCH_WINDOW)..];
    for n in (MIN_NGRAM..=MAX_NGRAM).rev() {
        if window.len() <= n {
            continue;
        }
        let tail = &window[window.len() - n..];
        // An occurrence that ends before the tail starts has a token after it.
        let found = (0..window.len() - n)
            .rev()
            .find(|&start| &window[start..start + n] == tail);
        if let Some(start) = found {
            let from = start + n;
            let take = (window.len() - from).min(max);
            return window[from..from + take].to_vec();
        }
    }
    Vec::new()
}

/// How many of `draft` a step keeps: `pick(offset)` picks the token after the pending
/// one and the first `offset` drafted tokens (`None` when the generation stops there);
/// picking goes on while each pick equals the drafted token at its place. The last
/// pick, which matched no draft, is the next pending token.
pub(crate) fn kept(draft: &[TokenId], mut pick: impl FnMut(usize) -> Option<TokenId>) -> usize {
    let mut kept = 0;
    while let Some(token) = pick(kept) {
        match draft.get(kept) {
            Some(&drafted) if drafted == token => kept += 1,
            _ => break,
        }
    }
    kept
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_tokens_after_the_latest_earlier_occurrence_are_drafted() {
        // … 1 2 3 4 5 … 1 2 3 9 … 1 2 3 → the later occurrence wins: 9, then what followed.
        let sequence = [7, 1, 2, 3, 4, 5, 8, 1, 2, 3, 9, 6, 0, 1, 2, 3];
        assert_eq!(draft(&sequence, 3), vec![9, 6, 0]);
        assert_eq!(draft(&sequence, 1), vec![9]);
        assert_eq!(draft(&sequence, 0), Vec::<TokenId>::new());
    }

    #[test]
    fn a_shorter_run_is_looked_up_when_the_longer_one_never_occurred() {
        // The last three (5, 2, 3) occur nowhere else; the last two (2, 3) do.
        let sequence = [2, 3, 4, 4, 9, 5, 2, 3];
        assert_eq!(draft(&sequence, 4), vec![4, 4, 9, 5]);
        // Nothing repeats: no draft.
        assert!(draft(&[1, 2, 3, 4, 5], 4).is_empty());
        assert!(draft(&[1, 2], 4).is_empty());
    }

    #[test]
    fn drafted_tokens_are_kept_while_the_picks_match_them() {
        let picks = |script: Vec<Option<TokenId>>| {
            let mut asked = Vec::new();
            let kept = kept(&[4, 5, 6], |offset| {
                asked.push(offset);
                script[offset]
            });
            (kept, asked)
        };
        // All three kept; the pick after the last draft is the next pending token.
        assert_eq!(
            picks(vec![Some(4), Some(5), Some(6), Some(9)]),
            (3, vec![0, 1, 2, 3])
        );
        // The second pick differs: one kept, nothing asked past it.
        assert_eq!(picks(vec![Some(4), Some(7)]), (1, vec![0, 1]));
        // The generation stops at the first pick: nothing kept.
        assert_eq!(picks(vec![None]), (0, vec![0]));
        // Stopped after a kept draft.
        assert_eq!(picks(vec![Some(4), None]), (1, vec![0, 1]));
        // No draft: one pick, as plain decoding.
        assert_eq!(kept(&[], |_| Some(1)), 0);
    }

    #[test]
    fn a_draft_may_run_into_the_tail_itself() {
        // A repeated pattern continues as itself, up to the end of the sequence.
        let sequence = [5, 6, 5, 6, 5, 6];
        assert_eq!(draft(&sequence, 4), vec![5, 6]);
    }
}
