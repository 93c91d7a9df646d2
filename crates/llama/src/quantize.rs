//! Quantizing a GGUF file in-process with llama.cpp's `llama_model_quantize`.

use std::ffi::CString;
use std::fmt;
use std::path::{Path, PathBuf};
use std::str::FromStr;

use crate::backend::backend;

/// A quantization type `rein models quantize` can write.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum QuantizeTarget {
    /// 8-bit, blocks of 32.
    Q8_0,
    /// 6-bit k-quant.
    Q6K,
    /// 5-bit k-quant, medium mix.
    Q5KM,
    /// 4-bit k-quant, medium mix.
    Q4KM,
    /// 3-bit k-quant, medium mix.
    Q3KM,
    /// 2-bit k-quant.
    Q2K,
}

impl QuantizeTarget {
    /// Every target, from the most bits to the fewest.
    pub const ALL: [QuantizeTarget; 6] = [
        QuantizeTarget::Q8_0,
        QuantizeTarget::Q6K,
        QuantizeTarget::Q5KM,
        QuantizeTarget::Q4KM,
        QuantizeTarget::Q3KM,
        QuantizeTarget::Q2K,
    ];

    /// The lower-case name used on the command line and in file names.
    pub fn name(self) -> &'static str {
        match self {
            QuantizeTarget::Q8_0 => "q8_0",
            QuantizeTarget::Q6K => "q6_k",
            QuantizeTarget::Q5KM => "q5_k_m",
            QuantizeTarget::Q4KM => "q4_k_m",
            QuantizeTarget::Q3KM => "q3_k_m",
            QuantizeTarget::Q2K => "q2_k",
        }
    }

    fn ftype(self) -> llama_cpp_sys_2::llama_ftype {
        match self {
            QuantizeTarget::Q8_0 => llama_cpp_sys_2::LLAMA_FTYPE_MOSTLY_Q8_0,
            QuantizeTarget::Q6K => llama_cpp_sys_2::LLAMA_FTYPE_MOSTLY_Q6_K,
            QuantizeTarget::Q5KM => llama_cpp_sys_2::LLAMA_FTYPE_MOSTLY_Q5_K_M,
            QuantizeTarget::Q4KM => llama_cpp_sys_2::LLAMA_FTYPE_MOSTLY_Q4_K_M,
            QuantizeTarget::Q3KM => llama_cpp_sys_2::LLAMA_FTYPE_MOSTLY_Q3_K_M,
            QuantizeTarget::Q2K => llama_cpp_sys_2::LLAMA_FTYPE_MOSTLY_Q2_K,
        }
    }
}

impl fmt::Display for QuantizeTarget {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for QuantizeTarget {
    type Err = QuantizeError;
    fn from_str(text: &str) -> Result<Self, Self::Err> {
        let wanted = text.trim().to_ascii_lowercase();
        Self::ALL
            .into_iter()
            .find(|target| target.name() == wanted)
            .ok_or_else(|| QuantizeError::UnknownTarget(text.to_string()))
    }
}

/// Why a quantization did not happen.
#[derive(Debug, thiserror::Error)]
pub enum QuantizeError {
    /// A type name that is not one of the targets.
    #[error("unknown quantization `{0}`: use q8_0, q6_k, q5_k_m, q4_k_m, q3_k_m or q2_k")]
    UnknownTarget(String),
    /// A path llama.cpp cannot take (not UTF-8, or with a NUL byte).
    #[error("path {0} cannot be passed to llama.cpp")]
    Path(PathBuf),
    /// The llama.cpp backend did not start.
    #[error(transparent)]
    Backend(#[from] crate::EngineError),
    /// llama.cpp reported a failure (its log says more).
    #[error("llama.cpp could not quantize {src} to {target} (status {status})")]
    Failed {
        /// The source file.
        src: PathBuf,
        /// The requested type.
        target: QuantizeTarget,
        /// llama_model_quantize's return value.
        status: u32,
    },
}

fn c_path(path: &Path) -> Result<CString, QuantizeError> {
    path.to_str()
        .and_then(|p| CString::new(p).ok())
        .ok_or_else(|| QuantizeError::Path(path.to_path_buf()))
}

/// Writes `src` quantized to `target` at `dst` (overwritten; the caller writes to a
/// temporary name and renames it on success). Tensors that are already quantized
/// are re-quantized only with `allow_requantize`; without it llama.cpp refuses them.
/// Blocks for as long as the quantization takes.
pub fn quantize(
    src: &Path,
    dst: &Path,
    target: QuantizeTarget,
    allow_requantize: bool,
    threads: Option<u32>,
) -> Result<(), QuantizeError> {
    backend()?;
    let src_c = c_path(src)?;
    let dst_c = c_path(dst)?;
    // SAFETY: llama_model_quantize_default_params returns a plain struct by value.
    let mut params = unsafe { llama_cpp_sys_2::llama_model_quantize_default_params() };
    params.ftype = target.ftype();
    params.allow_requantize = allow_requantize;
    params.nthread = threads.map(|t| t as i32).unwrap_or(0);
    // SAFETY: both paths are valid NUL-terminated strings for the duration of the
    // call, and `params` is a fully initialised struct that outlives it.
    let status =
        unsafe { llama_cpp_sys_2::llama_model_quantize(src_c.as_ptr(), dst_c.as_ptr(), &params) };
    if status == 0 {
        Ok(())
    } else {
        Err(QuantizeError::Failed {
            src: src.to_path_buf(),
            target,
            status,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn targets_parse_by_name_in_any_case() {
        for target in QuantizeTarget::ALL {
            assert_eq!(
                target.name().to_uppercase().parse::<QuantizeTarget>().ok(),
                Some(target)
            );
        }
        assert!(matches!(
            "q1_x".parse::<QuantizeTarget>(),
            Err(QuantizeError::UnknownTarget(_))
        ));
    }
}
