//! The generator's random numbers: SplitMix64, so a seed gives the same task on every
//! machine and with every version of every dependency.

/// A deterministic random source.
#[derive(Debug, Clone)]
pub struct Rng(u64);

impl Rng {
    /// A source for `seed`; `stream` separates independent uses of one seed.
    pub fn new(seed: u64, stream: u64) -> Self {
        let mut rng = Rng(seed ^ stream.wrapping_mul(0xD1B5_4A32_D192_ED03));
        rng.next_u64();
        rng
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// A number in `0..n` (0 when `n` is 0).
    pub fn below(&mut self, n: usize) -> usize {
        if n == 0 {
            0
        } else {
            (self.next_u64() % n as u64) as usize
        }
    }

    /// A number in `low..=high`.
    pub fn range(&mut self, low: i64, high: i64) -> i64 {
        let span = (high - low).max(0) as u64 + 1;
        low + (self.next_u64() % span) as i64
    }

    /// True about `percent` times in a hundred.
    pub fn chance(&mut self, percent: u64) -> bool {
        self.next_u64() % 100 < percent
    }

    /// One item of a non-empty slice.
    pub fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len())]
    }

    /// `k` different items of `items` (all of them when `k` is larger), in random order.
    pub fn distinct<T: Clone>(&mut self, items: &[T], k: usize) -> Vec<T> {
        let mut all = items.to_vec();
        self.shuffle(&mut all);
        all.truncate(k);
        all
    }

    /// Puts `items` in random order.
    pub fn shuffle<T>(&mut self, items: &mut [T]) {
        for i in (1..items.len()).rev() {
            let j = self.below(i + 1);
            items.swap(i, j);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_seed_gives_the_same_numbers_and_streams_differ() {
        let a: Vec<u64> = (0..4).map(|_| Rng::new(7, 1).next_u64()).collect();
        assert!(a.windows(2).all(|w| w[0] == w[1]));
        let mut one = Rng::new(7, 1);
        let mut two = Rng::new(7, 2);
        assert_ne!(one.next_u64(), two.next_u64());
        // Pinned: a change of the algorithm changes every generated task.
        assert_eq!(Rng::new(0, 0).next_u64(), 7_960_286_522_194_355_700);
        assert_eq!(
            Rng::new(10_007, 0x6e65).next_u64(),
            7_639_614_648_428_129_184
        );
        let mut rng = Rng::new(3, 0);
        for _ in 0..200 {
            let v = rng.range(-2, 2);
            assert!((-2..=2).contains(&v));
        }
        let picked = Rng::new(5, 0).distinct(&[1, 2, 3, 4, 5], 3);
        assert_eq!(picked.len(), 3);
        let mut sorted = picked.clone();
        sorted.sort();
        sorted.dedup();
        assert_eq!(sorted.len(), 3);
    }
}
