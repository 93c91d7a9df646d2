//! The local model cache: where pulled models live.

use std::path::{Path, PathBuf};

use crate::{ModelEntry, ModelError};

/// The directory that holds pulled model files.
#[derive(Debug, Clone)]
pub struct ModelCache {
    dir: PathBuf,
}

impl ModelCache {
    /// The cache at `dir`.
    pub fn at(dir: impl Into<PathBuf>) -> Self {
        Self { dir: dir.into() }
    }

    /// `REIN_MODELS_DIR` when set, else `rein/models` under the user's cache directory
    /// (`$XDG_CACHE_HOME` or `~/.cache` on Linux).
    pub fn from_env() -> Result<Self, ModelError> {
        if let Some(dir) = std::env::var_os("REIN_MODELS_DIR").filter(|d| !d.is_empty()) {
            return Ok(Self::at(dir));
        }
        let base = dirs::cache_dir().ok_or(ModelError::NoCacheDir)?;
        Ok(Self::at(base.join("rein").join("models")))
    }

    /// The cache directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Where `rein models quantize` writes `label` quantized to `quant`:
    /// `quantized/<label>.<quant>.gguf` (with a `.json` file beside it saying what it
    /// came from).
    pub fn quantized_path(&self, label: &str, quant: &str) -> PathBuf {
        self.dir
            .join("quantized")
            .join(format!("{label}.{}.gguf", quant.to_ascii_lowercase()))
    }

    /// Where `entry` lives once pulled.
    pub fn path_for(&self, entry: &ModelEntry) -> PathBuf {
        self.dir.join(&entry.file)
    }

    /// The path of `entry` if it is in the cache with the recorded size. Files only
    /// reach their final name after their digest was verified, so size is enough here.
    pub fn complete_path(&self, entry: &ModelEntry) -> Option<PathBuf> {
        let path = self.path_for(entry);
        let meta = std::fs::metadata(&path).ok()?;
        (meta.is_file() && meta.len() == entry.size).then_some(path)
    }
}
