//! Each output token's text, recovered from the fixtures alone (no tokenizer file):
//! every fixture gives its token ids and their decoded concatenation (`raw_output`),
//! and one id always decodes to the same bytes. A fixture's text is cut into units
//! no token crosses (family markers, which are added tokens, and the tokenizer's pre-token
//! pieces); the ids are aligned to the units by search, and an id's text is fixed
//! when every alignment of some fixture agrees on it, repeating until nothing
//! changes. Nothing is guessed: a fixture with an id no search pins down (an
//! ambiguous split, or a search over its limits) has no token texts. Every recovered
//! fixture's texts are checked to rebuild its output byte for byte.

use std::collections::HashMap;
use std::path::Path;

use super::pretokenize::{pretokenize, Pretok};

/// The recovered texts.
pub struct TokenTexts {
    /// Bytes of each id.
    pub texts: HashMap<u32, Vec<u8>>,
    /// Ids of the marker units (the special/added tokens).
    pub markers: Vec<u32>,
    /// Indexes of the fixtures whose token texts were all recovered (and rebuild
    /// their output exactly).
    pub complete: Vec<usize>,
}

struct Unit {
    bytes: Vec<u8>,
    marker: bool,
}

fn units(text: &str, markers: &[String], pretok: Pretok) -> Vec<Unit> {
    let mut out = Vec::new();
    let mut rest = text;
    loop {
        let next = markers
            .iter()
            .filter_map(|m| rest.find(m.as_str()).map(|at| (at, m)))
            .min_by_key(|&(at, m)| (at, std::cmp::Reverse(m.len())));
        let (plain, marker) = match next {
            Some((at, m)) => (&rest[..at], Some(m)),
            None => (rest, None),
        };
        out.extend(pretokenize(plain, pretok).into_iter().map(|p| Unit {
            bytes: p.as_bytes().to_vec(),
            marker: false,
        }));
        match marker {
            Some(m) => {
                out.push(Unit {
                    bytes: m.as_bytes().to_vec(),
                    marker: true,
                });
                rest = &rest[plain.len() + m.len()..];
            }
            None => return out,
        }
    }
}

/// Search limits per fixture and round.
const MAX_SOLUTIONS: usize = 64;
const MAX_NODES: usize = 2_000_000;

struct Search<'a> {
    ids: &'a [u32],
    units: &'a [Unit],
    known: &'a HashMap<u32, Vec<u8>>,
    local: HashMap<u32, Vec<u8>>,
    solutions: Vec<HashMap<u32, Vec<u8>>>,
    nodes: usize,
}

impl Search<'_> {
    fn text(&self, id: u32) -> Option<&Vec<u8>> {
        self.known.get(&id).or_else(|| self.local.get(&id))
    }

    /// Aligns ids from `i` with unit `u` at byte `o`; false when a limit was hit.
    fn run(&mut self, i: usize, u: usize, o: usize) -> bool {
        self.nodes += 1;
        if self.nodes > MAX_NODES || self.solutions.len() >= MAX_SOLUTIONS {
            return false;
        }
        if u == self.units.len() {
            if i == self.ids.len() {
                self.solutions.push(self.local.clone());
            }
            return true;
        }
        let ids_left = self.ids.len() - i;
        if ids_left < self.units.len() - u {
            return true;
        }
        let id = self.ids[i];
        let unit = &self.units[u];
        let rest = &unit.bytes[o..];
        let advance = |len: usize| {
            if len == rest.len() {
                (u + 1, 0)
            } else {
                (u, o + len)
            }
        };
        if let Some(text) = self.text(id) {
            if !rest.starts_with(text) {
                return true;
            }
            let (nu, no) = advance(text.len());
            return self.run(i + 1, nu, no);
        }
        let lengths: Vec<usize> = if unit.marker {
            vec![rest.len()]
        } else {
            (1..=rest.len()).rev().collect()
        };
        for len in lengths {
            let (nu, no) = advance(len);
            self.local.insert(id, rest[..len].to_vec());
            let complete = self.run(i + 1, nu, no);
            self.local.remove(&id);
            if !complete {
                return false;
            }
        }
        true
    }
}

/// Recovers the texts of every id in `fixtures` (`(ids, raw_output)` pairs).
pub fn recover(fixtures: &[(&[u32], &str)], markers: &[String], pretok: Pretok) -> TokenTexts {
    let prepared: Vec<(&[u32], Vec<Unit>)> = fixtures
        .iter()
        .map(|(ids, text)| (*ids, units(text, markers, pretok)))
        .collect();
    let mut known: HashMap<u32, Vec<u8>> = HashMap::new();
    loop {
        let mut changed = false;
        for (ids, units) in &prepared {
            if ids.iter().all(|id| known.contains_key(id)) {
                continue;
            }
            let mut search = Search {
                ids,
                units,
                known: &known,
                local: HashMap::new(),
                solutions: Vec::new(),
                nodes: 0,
            };
            let complete = search.run(0, 0, 0);
            let solutions = search.solutions;
            if !complete || solutions.is_empty() {
                continue;
            }
            let mut agreed = HashMap::new();
            for (id, text) in &solutions[0] {
                if solutions.iter().all(|s| s.get(id) == Some(text)) {
                    agreed.insert(*id, text.clone());
                }
            }
            changed |= !agreed.is_empty();
            known.extend(agreed);
        }
        if !changed {
            break;
        }
    }
    let mut marker_ids = Vec::new();
    let mut complete = Vec::new();
    for (n, ((ids, text), (_, units))) in fixtures.iter().zip(&prepared).enumerate() {
        if !rebuilds(ids, text, &known) {
            continue;
        }
        complete.push(n);
        for id in *ids {
            let bytes = &known[id];
            if units.iter().any(|u| u.marker && &u.bytes == bytes) && !marker_ids.contains(id) {
                marker_ids.push(*id);
            }
        }
    }
    TokenTexts {
        texts: known,
        markers: marker_ids,
        complete,
    }
}

/// Token texts from a tokenizer's vocabulary: `path` is a file written by
/// `scripts/token-texts.py` (`{"texts": {id: hex}, "special": [ids]}`); `None` when it
/// is absent. A fixture counts as complete only when its ids all have texts and
/// rebuild its output byte for byte, so a tokenizer that is not the fixture's own
/// cannot pass unnoticed.
pub fn from_vocabulary(path: &Path, fixtures: &[(&[u32], &str)]) -> Option<TokenTexts> {
    let text = std::fs::read_to_string(path).ok()?;
    let file: serde_json::Value = serde_json::from_str(&text).expect("token texts parse");
    let texts: HashMap<u32, Vec<u8>> = file["texts"]
        .as_object()
        .expect("texts")
        .iter()
        .map(|(id, hex)| {
            let hex = hex.as_str().expect("hex text");
            let bytes = (0..hex.len())
                .step_by(2)
                .map(|i| u8::from_str_radix(&hex[i..i + 2], 16).expect("hex"))
                .collect();
            (id.parse().expect("token id"), bytes)
        })
        .collect();
    let markers: Vec<u32> = file["special"]
        .as_array()
        .expect("special")
        .iter()
        .map(|id| id.as_u64().expect("special id") as u32)
        .collect();
    let complete = fixtures
        .iter()
        .enumerate()
        .filter(|(_, (ids, text))| rebuilds(ids, text, &texts))
        .map(|(n, _)| n)
        .collect();
    Some(TokenTexts {
        texts,
        markers,
        complete,
    })
}

/// Whether every id of `ids` has a text and together they are `text`, byte for byte.
fn rebuilds(ids: &[u32], text: &str, texts: &HashMap<u32, Vec<u8>>) -> bool {
    let mut rebuilt = Vec::with_capacity(text.len());
    for id in ids {
        match texts.get(id) {
            Some(bytes) => rebuilt.extend_from_slice(bytes),
            None => return false,
        }
    }
    rebuilt == text.as_bytes()
}
