//! `hf:owner/repo/file.gguf` sources, fetched with the `hf-hub` crate.

use std::path::PathBuf;

use hf_hub::api::sync::ApiBuilder;
use hf_hub::{Cache, Repo};

use crate::pull::{ProgressUnit, PullProgress};
use crate::ModelError;

/// A model file in a hub repository.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HubSource {
    /// `owner/repo`.
    pub repo: String,
    /// The file's path inside the repository.
    pub file: String,
}

impl HubSource {
    /// Parses `hf:owner/repo/file.gguf` (the file may sit in folders).
    pub fn parse(text: &str) -> Result<Self, ModelError> {
        let bad = || ModelError::BadHubSource(text.to_string());
        let rest = text.strip_prefix("hf:").ok_or_else(bad)?;
        let mut parts = rest.splitn(3, '/');
        let (owner, repo, file) = match (parts.next(), parts.next(), parts.next()) {
            (Some(o), Some(r), Some(f)) if !o.is_empty() && !r.is_empty() && !f.is_empty() => {
                (o, r, f)
            }
            _ => return Err(bad()),
        };
        if file.split('/').any(|seg| seg.is_empty() || seg == "..") {
            return Err(bad());
        }
        Ok(Self {
            repo: format!("{owner}/{repo}"),
            file: file.to_string(),
        })
    }
}

impl std::fmt::Display for HubSource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "hf:{}/{}", self.repo, self.file)
    }
}

/// Where and how the hub is reached.
#[derive(Debug, Clone, Default)]
pub struct HubSettings {
    /// The hub's base URL (`HF_ENDPOINT`); the crate's default when `None`.
    pub endpoint: Option<String>,
    /// The hub cache (`HF_HOME`/hub); the crate's default when `None`.
    pub cache_dir: Option<PathBuf>,
    /// Only the local cache is consulted (`HF_HUB_OFFLINE=1`).
    pub offline: bool,
}

impl HubSettings {
    /// Settings from `HF_ENDPOINT`, `HF_HOME` and `HF_HUB_OFFLINE`.
    pub fn from_env() -> Self {
        let offline = std::env::var("HF_HUB_OFFLINE")
            .map(|v| matches!(v.to_ascii_lowercase().as_str(), "1" | "true" | "yes" | "on"))
            .unwrap_or(false);
        Self {
            endpoint: std::env::var("HF_ENDPOINT").ok().filter(|e| !e.is_empty()),
            cache_dir: None,
            offline,
        }
    }

    /// The hub cache's directory (`HF_HOME/hub` unless set).
    pub fn cache_path(&self) -> PathBuf {
        self.cache().path().clone()
    }

    fn cache(&self) -> Cache {
        match &self.cache_dir {
            Some(dir) => Cache::new(dir.clone()),
            None => Cache::from_env(),
        }
    }

    /// The local path of `source`, downloading it unless it is cached or offline.
    pub fn fetch(
        &self,
        source: &HubSource,
        progress: &dyn PullProgress,
    ) -> Result<PathBuf, ModelError> {
        let cache = self.cache();
        if let Some(path) = cache
            .repo(Repo::model(source.repo.clone()))
            .get(&source.file)
        {
            return Ok(path);
        }
        if self.offline {
            return Err(ModelError::HubOffline(source.to_string()));
        }
        let mut builder = ApiBuilder::from_cache(cache).with_progress(false);
        if let Some(endpoint) = &self.endpoint {
            builder = builder.with_endpoint(endpoint.clone());
        }
        let hub_error = |e: hf_hub::api::sync::ApiError| ModelError::Hub {
            source_name: source.to_string(),
            reason: e.to_string(),
        };
        let api = builder.build().map_err(hub_error)?;
        let adapter = ProgressAdapter { progress };
        let path = api
            .model(source.repo.clone())
            .download_with_progress(&source.file, adapter)
            .map_err(hub_error);
        progress.finish();
        path
    }
}

struct ProgressAdapter<'a> {
    progress: &'a dyn PullProgress,
}

impl hf_hub::api::Progress for ProgressAdapter<'_> {
    fn init(&mut self, size: usize, filename: &str) {
        self.progress.phase(
            &format!("downloading {filename}"),
            size as u64,
            ProgressUnit::Bytes,
        );
    }
    fn update(&mut self, size: usize) {
        self.progress.advance(size as u64);
    }
    fn finish(&mut self) {}
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_hub_sources() {
        let s = HubSource::parse("hf:owner/repo/dir/model.Q4_K_M.gguf").unwrap();
        assert_eq!(s.repo, "owner/repo");
        assert_eq!(s.file, "dir/model.Q4_K_M.gguf");
        assert_eq!(s.to_string(), "hf:owner/repo/dir/model.Q4_K_M.gguf");
        for bad in [
            "hf:owner/repo",
            "hf:/repo/f.gguf",
            "owner/repo/f.gguf",
            "hf:o/r/../x.gguf",
            "hf:o/r/",
        ] {
            assert!(HubSource::parse(bad).is_err(), "{bad}");
        }
    }
}
