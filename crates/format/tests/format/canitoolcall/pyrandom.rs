//! Python's `random.Random(seed)` (MT19937 seeded by `init_by_array`) as far as the
//! chunking strategies use it: `randint(1, hi)`.

/// A Mersenne Twister seeded the way Python seeds it from an int.
pub struct PyRandom {
    state: [u32; 624],
    index: usize,
}

impl PyRandom {
    /// `random.Random(seed)` for a non-negative seed below 2^32.
    pub fn new(seed: u32) -> Self {
        let mut rng = PyRandom {
            state: [0; 624],
            index: 624,
        };
        rng.init_genrand(19_650_218);
        let key = [seed];
        let (mut i, mut j) = (1usize, 0usize);
        for _ in 0..624.max(key.len()) {
            let prev = rng.state[i - 1] ^ (rng.state[i - 1] >> 30);
            rng.state[i] = (rng.state[i] ^ prev.wrapping_mul(1_664_525))
                .wrapping_add(key[j])
                .wrapping_add(j as u32);
            i += 1;
            j += 1;
            if i >= 624 {
                rng.state[0] = rng.state[623];
                i = 1;
            }
            if j >= key.len() {
                j = 0;
            }
        }
        for _ in 0..623 {
            let prev = rng.state[i - 1] ^ (rng.state[i - 1] >> 30);
            rng.state[i] = (rng.state[i] ^ prev.wrapping_mul(1_566_083_941)).wrapping_sub(i as u32);
            i += 1;
            if i >= 624 {
                rng.state[0] = rng.state[623];
                i = 1;
            }
        }
        rng.state[0] = 0x8000_0000;
        rng
    }

    fn init_genrand(&mut self, seed: u32) {
        self.state[0] = seed;
        for i in 1..624 {
            let prev = self.state[i - 1] ^ (self.state[i - 1] >> 30);
            self.state[i] = 1_812_433_253u32.wrapping_mul(prev).wrapping_add(i as u32);
        }
    }

    fn next_u32(&mut self) -> u32 {
        if self.index >= 624 {
            for k in 0..624 {
                let y = (self.state[k] & 0x8000_0000) | (self.state[(k + 1) % 624] & 0x7fff_ffff);
                let mut v = self.state[(k + 397) % 624] ^ (y >> 1);
                if y & 1 == 1 {
                    v ^= 0x9908_b0df;
                }
                self.state[k] = v;
            }
            self.index = 0;
        }
        let mut y = self.state[self.index];
        self.index += 1;
        y ^= y >> 11;
        y ^= (y << 7) & 0x9d2c_5680;
        y ^= (y << 15) & 0xefc6_0000;
        y ^ (y >> 18)
    }

    /// `randint(1, hi)`: `1 + _randbelow(hi)` by rejection on `getrandbits`.
    pub fn randint_from_1(&mut self, hi: u32) -> u32 {
        let bits = 32 - hi.leading_zeros();
        loop {
            let r = self.next_u32() >> (32 - bits);
            if r < hi {
                return 1 + r;
            }
        }
    }
}
