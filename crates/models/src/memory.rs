//! Memory estimates from GGUF metadata: pure functions, no model loaded.

use std::fmt;
use std::str::FromStr;

/// The element type of the KV cache.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum KvCacheType {
    /// 32-bit floats.
    F32,
    /// 16-bit floats (llama.cpp's default).
    #[default]
    F16,
    /// 8-bit blocks of 32 with an f16 scale.
    Q8_0,
    /// 4-bit blocks of 32 with an f16 scale.
    Q4_0,
}

impl KvCacheType {
    /// Bytes per block and elements per block, as ggml stores them.
    pub fn block_bytes(self) -> (u64, u64) {
        match self {
            KvCacheType::F32 => (4, 1),
            KvCacheType::F16 => (2, 1),
            KvCacheType::Q8_0 => (34, 32),
            KvCacheType::Q4_0 => (18, 32),
        }
    }

    /// The name llama.cpp uses.
    pub fn name(self) -> &'static str {
        match self {
            KvCacheType::F32 => "f32",
            KvCacheType::F16 => "f16",
            KvCacheType::Q8_0 => "q8_0",
            KvCacheType::Q4_0 => "q4_0",
        }
    }
}

impl fmt::Display for KvCacheType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for KvCacheType {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s.to_ascii_lowercase().as_str() {
            "f32" => Ok(KvCacheType::F32),
            "f16" => Ok(KvCacheType::F16),
            "q8_0" => Ok(KvCacheType::Q8_0),
            "q4_0" => Ok(KvCacheType::Q4_0),
            other => Err(format!(
                "unknown KV cache type `{other}`: use f32, f16, q8_0 or q4_0"
            )),
        }
    }
}

/// KV bytes per token for a transformer with `n_layer` layers whose keys and values
/// have `k_width` and `v_width` elements per layer (head size × KV heads).
pub fn kv_bytes_per_token(n_layer: u64, k_width: u64, v_width: u64, kv_type: KvCacheType) -> u64 {
    let (bytes, per) = kv_type.block_bytes();
    n_layer * ((k_width * bytes).div_ceil(per) + (v_width * bytes).div_ceil(per))
}

/// The memory the machine has free for new allocations (`MemAvailable` from
/// /proc/meminfo), in bytes; `None` where that is not known (non-Linux).
pub fn available_memory() -> Option<u64> {
    let text = std::fs::read_to_string("/proc/meminfo").ok()?;
    let line = text.lines().find(|l| l.starts_with("MemAvailable:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024)
}

/// The most resident memory this process has used so far (`VmHWM` from
/// /proc/self/status), in bytes; `None` where that is not known (non-Linux).
pub fn peak_resident_memory() -> Option<u64> {
    let text = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = text.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kv_bytes_follow_ggml_block_sizes() {
        // 30 layers, 3 KV heads of 64: SmolLM2-135M's shape.
        assert_eq!(
            kv_bytes_per_token(30, 192, 192, KvCacheType::F16),
            30 * 2 * 192 * 2
        );
        assert_eq!(
            kv_bytes_per_token(30, 192, 192, KvCacheType::F32),
            30 * 2 * 192 * 4
        );
        assert_eq!(
            kv_bytes_per_token(30, 192, 192, KvCacheType::Q8_0),
            30 * 2 * 6 * 34
        );
        assert_eq!(
            kv_bytes_per_token(30, 192, 192, KvCacheType::Q4_0),
            30 * 2 * 6 * 18
        );
    }

    #[test]
    fn kv_type_parses_and_prints() {
        for t in [
            KvCacheType::F32,
            KvCacheType::F16,
            KvCacheType::Q8_0,
            KvCacheType::Q4_0,
        ] {
            assert_eq!(t.name().parse::<KvCacheType>().unwrap(), t);
        }
        assert!("q5_1".parse::<KvCacheType>().unwrap_err().contains("q4_0"));
    }
}
