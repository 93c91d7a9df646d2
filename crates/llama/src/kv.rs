//! Removing and copying KV cells, with every refusal handled. llama.cpp may refuse to
//! remove part of a sequence (a model whose memory cannot be cut at a position); the
//! tokens rein believes are cached must then not stay out of step with the cache, so a
//! refused partial removal clears the whole sequence and its prompt is evaluated again.

use llama_cpp_2::context::LlamaContext;

use crate::TokenId;

/// The KV cache operations the worker needs: llama.cpp's context, or a stand-in in
/// tests.
pub(crate) trait KvCells {
    /// Removes `seq`'s cells from position `from` on (all of them when `None`);
    /// `false` when llama.cpp refused.
    fn remove(&mut self, seq: i32, from: Option<usize>) -> bool;
    /// Copies positions `[0, len)` of `source` into `target`; `false` when refused.
    fn copy_prefix(&mut self, source: i32, target: i32, len: usize) -> bool;
}

impl KvCells for LlamaContext<'_> {
    fn remove(&mut self, seq: i32, from: Option<usize>) -> bool {
        let (Ok(seq), Ok(from)) = (u32::try_from(seq), from.map(u32::try_from).transpose()) else {
            return false;
        };
        self.clear_kv_cache_seq(Some(seq), from, None)
            .unwrap_or(false)
    }

    fn copy_prefix(&mut self, source: i32, target: i32, len: usize) -> bool {
        let Ok(len) = u32::try_from(len) else {
            return false;
        };
        self.copy_kv_cache_seq(source, target, Some(0), Some(len))
            .is_ok()
    }
}

/// Clears all of `seq`'s cells. llama.cpp never refuses a whole-sequence removal; if
/// it ever does, that is logged, since nothing safer remains to do.
pub(crate) fn clear(kv: &mut impl KvCells, seq: i32) {
    if !kv.remove(seq, None) {
        tracing::error!(seq, "llama.cpp refused to clear a whole KV sequence");
    }
}

/// Keeps the longest prefix `cached` shares with `prompt` and removes the rest of the
/// sequence's cells; returns how many tokens are kept. A refused removal clears the
/// whole sequence and keeps nothing.
pub(crate) fn keep_common_prefix(
    kv: &mut impl KvCells,
    seq: i32,
    cached: &mut Vec<TokenId>,
    prompt: &[TokenId],
) -> usize {
    let common = crate::slots::common_prefix(cached, prompt);
    if common < cached.len() {
        if kv.remove(seq, Some(common)) {
            cached.truncate(common);
        } else {
            tracing::debug!(
                seq,
                common,
                "a partial KV removal was refused; re-evaluating the prompt"
            );
            clear(kv, seq);
            cached.clear();
            return 0;
        }
    }
    common
}

/// Replaces `seq`'s cells with the first `len` positions of `source`; returns whether
/// the copy happened (if not, the sequence is left empty).
pub(crate) fn copy_shared_prefix(kv: &mut impl KvCells, source: i32, seq: i32, len: usize) -> bool {
    clear(kv, seq);
    if kv.copy_prefix(source, seq, len) {
        true
    } else {
        clear(kv, seq);
        false
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A cache that records what it was asked and refuses what it is told to.
    #[derive(Default)]
    struct Cells {
        refuse_partial: bool,
        refuse_copy: bool,
        removed: Vec<(i32, Option<usize>)>,
        copied: Vec<(i32, i32, usize)>,
    }

    impl KvCells for Cells {
        fn remove(&mut self, seq: i32, from: Option<usize>) -> bool {
            self.removed.push((seq, from));
            from.is_none() || !self.refuse_partial
        }

        fn copy_prefix(&mut self, source: i32, target: i32, len: usize) -> bool {
            self.copied.push((source, target, len));
            !self.refuse_copy
        }
    }

    #[test]
    fn the_common_prefix_is_kept_and_the_rest_removed() {
        let mut cells = Cells::default();
        let mut cached = vec![1, 2, 3, 4, 5];
        assert_eq!(
            keep_common_prefix(&mut cells, 0, &mut cached, &[1, 2, 3, 9, 9]),
            3
        );
        assert_eq!(cached, vec![1, 2, 3]);
        assert_eq!(cells.removed, vec![(0, Some(3))]);
        // Nothing to remove when the prompt extends the cache.
        let mut cells = Cells::default();
        let mut cached = vec![1, 2];
        assert_eq!(
            keep_common_prefix(&mut cells, 0, &mut cached, &[1, 2, 3]),
            2
        );
        assert!(cells.removed.is_empty());
    }

    #[test]
    fn a_refused_partial_removal_clears_the_sequence_and_keeps_nothing() {
        let mut cells = Cells {
            refuse_partial: true,
            ..Cells::default()
        };
        let mut cached = vec![1, 2, 3, 4, 5];
        assert_eq!(
            keep_common_prefix(&mut cells, 2, &mut cached, &[1, 2, 3, 9]),
            0
        );
        assert!(
            cached.is_empty(),
            "the cached tokens must match the (empty) cache"
        );
        assert_eq!(cells.removed, vec![(2, Some(3)), (2, None)]);
    }

    #[test]
    fn a_refused_copy_leaves_the_sequence_empty() {
        let mut cells = Cells {
            refuse_copy: true,
            ..Cells::default()
        };
        assert!(!copy_shared_prefix(&mut cells, 1, 0, 40));
        assert_eq!(cells.removed, vec![(0, None), (0, None)]);
        let mut cells = Cells::default();
        assert!(copy_shared_prefix(&mut cells, 1, 0, 40));
        assert_eq!(cells.copied, vec![(1, 0, 40)]);
    }
}
