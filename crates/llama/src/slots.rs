//! The table of KV sequences: which are free (their last tokens still cached, for a
//! later request of the same conversation or with the same system prompt), which a
//! session holds idle, which are generating; the order free ones are handed out and
//! evicted in (least recently freed first); and where the longest shared prefix of a
//! new prompt already sits.

use crate::{EngineError, TokenId};

/// The shortest gain worth a KV copy from another sequence.
pub(crate) const MIN_SHARED_PREFIX: usize = 16;

/// How many leading tokens of `prompt` are already in `cached`; the last prompt token
/// is always evaluated again, since logits exist only for what was just decoded.
pub(crate) fn common_prefix(cached: &[TokenId], prompt: &[TokenId]) -> usize {
    cached
        .iter()
        .zip(prompt)
        .take_while(|(a, b)| a == b)
        .count()
        .min(prompt.len().saturating_sub(1))
}

/// The state of one KV sequence.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Slot {
    /// No session holds it; its tokens stay in the KV cache until evicted.
    Free {
        /// The tokens still in the KV cache.
        cached: Vec<TokenId>,
        /// When it was freed (a counter; larger is more recent).
        freed: u64,
    },
    /// A session holds it; these tokens are in its KV cache.
    Idle(Vec<TokenId>),
    /// A generation is running in it (its tokens are the generation's).
    Generating,
}

/// Every KV sequence's state.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct SlotTable {
    slots: Vec<Slot>,
    /// Counts closes, to order free slots.
    closes: u64,
}

impl SlotTable {
    /// `count` free, empty sequences.
    pub(crate) fn new(count: usize) -> Self {
        SlotTable {
            slots: vec![
                Slot::Free {
                    cached: Vec::new(),
                    freed: 0,
                };
                count.max(1)
            ],
            closes: 0,
        }
    }

    /// How many sequences there are.
    pub(crate) fn len(&self) -> usize {
        self.slots.len()
    }

    /// Hands out the least recently freed sequence; its old tokens stay as the new
    /// session's cache (a first prompt that shares them reuses them).
    pub(crate) fn open(&mut self) -> Result<i32, EngineError> {
        let free = self
            .slots
            .iter()
            .enumerate()
            .filter_map(|(index, slot)| match slot {
                Slot::Free { freed, .. } => Some((index, *freed)),
                _ => None,
            })
            .min_by_key(|(_, freed)| *freed)
            .map(|(index, _)| index)
            .ok_or(EngineError::NoFreeSession(self.slots.len() as u32))?;
        let cached = match std::mem::replace(&mut self.slots[free], Slot::Generating) {
            Slot::Free { cached, .. } => cached,
            _ => Vec::new(),
        };
        self.slots[free] = Slot::Idle(cached);
        Ok(free as i32)
    }

    /// Frees `seq`; `ended` holds the tokens of a generation that was still running.
    pub(crate) fn close(&mut self, seq: i32, ended: Option<Vec<TokenId>>) {
        self.closes += 1;
        let freed = self.closes;
        if let Some(slot) = self.slot_mut(seq) {
            let cached = match std::mem::replace(slot, Slot::Generating) {
                Slot::Idle(cached) => cached,
                _ => ended.unwrap_or_default(),
            };
            *slot = Slot::Free { cached, freed };
        }
    }

    /// Marks `seq` generating and returns its cached tokens; refused unless a session
    /// holds it idle.
    pub(crate) fn start(&mut self, seq: i32) -> Result<Vec<TokenId>, EngineError> {
        let count = self.slots.len() as u32;
        let slot = self
            .slot_mut(seq)
            .ok_or(EngineError::NoFreeSession(count))?;
        match std::mem::replace(slot, Slot::Generating) {
            Slot::Idle(cached) => Ok(cached),
            other => {
                *slot = other;
                Err(EngineError::SessionBusy)
            }
        }
    }

    /// Gives `seq` back to its session with `cached` in its KV cache.
    pub(crate) fn idle(&mut self, seq: i32, cached: Vec<TokenId>) {
        if let Some(slot) = self.slot_mut(seq) {
            *slot = Slot::Idle(cached);
        }
    }

    /// Tokens cached in every sequence but `seq` that is not generating.
    pub(crate) fn held_by_others(&self, seq: i32) -> usize {
        self.slots
            .iter()
            .enumerate()
            .filter(|(index, _)| *index as i32 != seq)
            .map(|(_, slot)| match slot {
                Slot::Free { cached, .. } | Slot::Idle(cached) => cached.len(),
                Slot::Generating => 0,
            })
            .sum()
    }

    /// Forgets the tokens of the least recently freed sequence that still caches any;
    /// returns it and how many tokens it held (the caller removes its KV cells).
    pub(crate) fn evict_oldest_free(&mut self) -> Option<(i32, usize)> {
        let (index, _) = self
            .slots
            .iter()
            .enumerate()
            .filter_map(|(index, slot)| match slot {
                Slot::Free { cached, freed } if !cached.is_empty() => Some((index, *freed)),
                _ => None,
            })
            .min_by_key(|(_, freed)| *freed)?;
        match &mut self.slots[index] {
            Slot::Free { cached, .. } => {
                let held = cached.len();
                cached.clear();
                Some((index as i32, held))
            }
            _ => None,
        }
    }

    /// The sequence (other than `seq`, among the cached ones and the `running`
    /// generations) whose tokens share the longest prefix with `prompt`, when that
    /// prefix beats `own` by at least [`MIN_SHARED_PREFIX`].
    pub(crate) fn best_prefix<'a>(
        &'a self,
        seq: i32,
        prompt: &[TokenId],
        own: usize,
        running: impl Iterator<Item = (i32, &'a [TokenId])>,
    ) -> Option<(i32, usize)> {
        let cached = self
            .slots
            .iter()
            .enumerate()
            .filter_map(|(index, slot)| match slot {
                Slot::Idle(tokens) | Slot::Free { cached: tokens, .. } => {
                    Some((index as i32, tokens.as_slice()))
                }
                Slot::Generating => None,
            });
        cached
            .chain(running)
            .filter(|(other, _)| *other != seq)
            .map(|(other, tokens)| (other, common_prefix(tokens, prompt)))
            .filter(|(_, length)| *length >= own + MIN_SHARED_PREFIX)
            .max_by_key(|(_, length)| *length)
    }

    fn slot_mut(&mut self, seq: i32) -> Option<&mut Slot> {
        usize::try_from(seq)
            .ok()
            .and_then(|i| self.slots.get_mut(i))
    }

    #[cfg(test)]
    fn slot(&self, seq: i32) -> &Slot {
        &self.slots[seq as usize]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tokens(range: std::ops::Range<i32>) -> Vec<TokenId> {
        range.collect()
    }

    #[test]
    fn sequences_are_handed_out_least_recently_freed_first() {
        let mut table = SlotTable::new(3);
        let (a, b, c) = (
            table.open().unwrap(),
            table.open().unwrap(),
            table.open().unwrap(),
        );
        assert_eq!((a, b, c), (0, 1, 2));
        assert!(matches!(table.open(), Err(EngineError::NoFreeSession(3))));
        table.close(b, None);
        table.close(a, None);
        assert_eq!(table.open().unwrap(), b, "b was freed first");
        assert_eq!(table.open().unwrap(), a);
    }

    #[test]
    fn a_freed_sequence_keeps_its_tokens_for_the_next_session() {
        let mut table = SlotTable::new(1);
        let seq = table.open().unwrap();
        assert_eq!(table.start(seq).unwrap(), Vec::<TokenId>::new());
        assert!(matches!(table.start(seq), Err(EngineError::SessionBusy)));
        table.idle(seq, tokens(0..40));
        table.close(seq, None);
        assert_eq!(
            table.slot(seq),
            &Slot::Free {
                cached: tokens(0..40),
                freed: 1
            }
        );
        let again = table.open().unwrap();
        assert_eq!(table.start(again).unwrap(), tokens(0..40));
    }

    #[test]
    fn closing_a_generating_sequence_keeps_what_the_generation_held() {
        let mut table = SlotTable::new(1);
        let seq = table.open().unwrap();
        table.start(seq).unwrap();
        table.close(seq, Some(tokens(0..5)));
        assert_eq!(
            table.slot(seq),
            &Slot::Free {
                cached: tokens(0..5),
                freed: 1
            }
        );
    }

    #[test]
    fn eviction_takes_the_oldest_free_tokens_and_never_a_held_sequence() {
        let mut table = SlotTable::new(3);
        for _ in 0..3 {
            let seq = table.open().unwrap();
            table.start(seq).unwrap();
            table.idle(seq, tokens(0..10 * (seq + 1)));
        }
        table.close(2, None);
        table.close(0, None);
        assert_eq!(table.held_by_others(1), 30 + 10);
        assert_eq!(table.evict_oldest_free(), Some((2, 30)));
        assert_eq!(table.evict_oldest_free(), Some((0, 10)));
        assert_eq!(
            table.evict_oldest_free(),
            None,
            "sequence 1 is held by a session"
        );
        assert_eq!(table.held_by_others(1), 0);
    }

    #[test]
    fn the_longest_shared_prefix_is_found_among_cached_and_running_sequences() {
        let mut table = SlotTable::new(3);
        let prompt = tokens(0..100);
        for seq in 0..3 {
            table.open().unwrap();
            table.start(seq).unwrap();
        }
        table.idle(0, tokens(0..30));
        table.idle(1, tokens(0..20));
        let running = [(2, tokens(0..60))];
        let found = table.best_prefix(
            1,
            &prompt,
            20,
            running.iter().map(|(s, t)| (*s, t.as_slice())),
        );
        assert_eq!(found, Some((2, 60)));
        // A gain below the minimum is not worth a copy.
        assert_eq!(table.best_prefix(1, &prompt, 20, std::iter::empty()), None);
        assert_eq!(
            table.best_prefix(2, &prompt, 0, std::iter::empty()),
            Some((0, 30))
        );
        // The last prompt token is always evaluated again.
        assert_eq!(common_prefix(&tokens(0..10), &tokens(0..10)), 9);
    }
}
