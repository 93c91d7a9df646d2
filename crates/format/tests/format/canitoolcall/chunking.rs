//! The corpus's chunking strategies (`canitoolcall.chunking`): group sizes over a
//! fixture's units, reproduced exactly (Python's seeded `random.Random`).

use super::pyrandom::PyRandom;

/// One strategy.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Strategy {
    /// The whole output as one delta.
    One,
    /// Every special unit alone, each run of ordinary units as one delta.
    Special,
    /// One unit per delta.
    Token,
    /// Groups of 1..=max units drawn from `random.Random(seed)`.
    Rand { seed: u32, max: u32 },
    /// Characters: seed 0 one per delta, else groups of 1..=8 from `random.Random(seed)`.
    Char { seed: u32 },
}

impl Strategy {
    /// The strategy id as the corpus writes it.
    pub fn id(&self) -> String {
        match self {
            Strategy::One => "one".into(),
            Strategy::Special => "special".into(),
            Strategy::Token => "token".into(),
            Strategy::Rand { seed, max } => format!("rand:{seed}:{max}"),
            Strategy::Char { seed } => format!("char:{seed}"),
        }
    }
}

/// Sizes of consecutive groups covering `n` units (`group_sizes`); `special` flags
/// the special units (used by [`Strategy::Special`] only).
pub fn group_sizes(n: usize, strategy: Strategy, special: &[bool]) -> Vec<usize> {
    let random = |seed: u32, max: u32| {
        let mut rng = PyRandom::new(seed);
        let mut sizes = Vec::new();
        let mut left = n;
        while left > 0 {
            let k = (rng.randint_from_1(max) as usize).min(left);
            sizes.push(k);
            left -= k;
        }
        sizes
    };
    match strategy {
        Strategy::Special => {
            let mut sizes = Vec::new();
            let mut run = 0;
            for &is_special in special {
                if is_special {
                    if run > 0 {
                        sizes.push(run);
                        run = 0;
                    }
                    sizes.push(1);
                } else {
                    run += 1;
                }
            }
            if run > 0 {
                sizes.push(run);
            }
            sizes
        }
        _ if n == 0 => Vec::new(),
        Strategy::One => vec![n],
        Strategy::Token | Strategy::Char { seed: 0 } => vec![1; n],
        Strategy::Rand { seed, max } => random(seed, max),
        Strategy::Char { seed } => random(seed, 8),
    }
}

/// Splits `units` by `sizes`.
pub fn split<T: Clone>(units: &[T], sizes: &[usize]) -> Vec<Vec<T>> {
    let mut out = Vec::with_capacity(sizes.len());
    let mut at = 0;
    for &k in sizes {
        out.push(units[at..at + k].to_vec());
        at += k;
    }
    assert_eq!(at, units.len(), "group sizes cover the units");
    out
}
