//! Every model file rein's caches hold — named models, quantized copies with what they
//! were made from, files pulled from the hub, other GGUF files put in the cache — with
//! size and last use, and their removal (only ever of files inside those caches).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};

use crate::{dir_files, HubSource, Manifest, ModelCache, ModelError};

/// The file in the cache directory that records when each model file was last loaded.
const LAST_USED_FILE: &str = "last-used.json";

/// What a cached model file is.
#[derive(Debug, Clone, PartialEq)]
pub enum CachedKind {
    /// A model of the manifest, by name.
    Named(String),
    /// A copy `rein models quantize` wrote: its type and what it was made from.
    Quantized {
        /// The quantization type (`q8_0`, …).
        quant: String,
        /// The source model's name or file, from the provenance record.
        source: Option<String>,
        /// The source was itself quantized.
        requantized: bool,
    },
    /// A file pulled from the hub.
    Hub(HubSource),
    /// A GGUF file in the cache that rein did not put there under a known name.
    Other,
}

/// One model file in a cache.
#[derive(Debug, Clone, PartialEq)]
pub struct CachedModel {
    /// How `rein models rm` and `--model` name it.
    pub name: String,
    /// What it is.
    pub kind: CachedKind,
    /// The file.
    pub path: PathBuf,
    /// Its size in bytes.
    pub size: u64,
    /// When a command last loaded it (seconds since the Unix epoch), if one has.
    pub last_used: Option<u64>,
}

/// Where rein's model files are: its own cache and the hub's.
#[derive(Debug, Clone)]
pub struct Caches<'a> {
    /// The named models of the manifest.
    pub manifest: &'a Manifest,
    /// rein's model cache.
    pub cache: &'a ModelCache,
    /// The hub cache (`HF_HOME/hub`), when there is one.
    pub hub_dir: Option<PathBuf>,
}

impl Caches<'_> {
    /// Every model file in the caches, named models first, then quantized copies, hub
    /// files and other files, each group by name.
    pub fn list(&self) -> Vec<CachedModel> {
        let used = last_uses(self.cache);
        let mut models = Vec::new();
        let mut known: Vec<PathBuf> = Vec::new();
        for entry in self.manifest.entries() {
            if let Some(path) = self.cache.complete_path(entry) {
                known.push(path.clone());
                models.push(model(
                    entry.name.clone(),
                    CachedKind::Named(entry.name.clone()),
                    path,
                    &used,
                ));
            }
        }
        for path in gguf_files(&self.cache.dir().join("quantized")) {
            let kind = quantized_kind(&path);
            models.push(model(file_stem(&path), kind, path, &used));
        }
        if let Some(hub) = &self.hub_dir {
            for (source, path) in hub_files(hub) {
                models.push(model(
                    source.to_string(),
                    CachedKind::Hub(source),
                    path,
                    &used,
                ));
            }
        }
        for path in gguf_files(self.cache.dir()) {
            if !known.contains(&path) {
                models.push(model(file_name(&path), CachedKind::Other, path, &used));
            }
        }
        models
    }

    /// Removes the model `target` names (a name from [`Caches::list`], or a path to a
    /// file in a cache) and what belongs to it (a quantized copy's provenance record, a
    /// hub file's blob when no other snapshot links it); returns the paths removed.
    pub fn remove(&self, target: &str) -> Result<Vec<PathBuf>, ModelError> {
        let models = self.list();
        let wanted = Path::new(target)
            .canonicalize()
            .ok()
            .filter(|p| p.is_file());
        let found = models.into_iter().find(|m| {
            m.name == target
                || wanted
                    .as_ref()
                    .is_some_and(|w| m.path.canonicalize().ok().as_ref() == Some(w))
        });
        let Some(found) = found else {
            return Err(ModelError::NotCached(target.to_string()));
        };
        let mut removed = Vec::new();
        match &found.kind {
            CachedKind::Hub(source) => {
                let blob = std::fs::canonicalize(&found.path).ok();
                remove_file(&found.path, &mut removed)?;
                if let Some(blob) = blob.filter(|b| b != &found.path) {
                    let repo = self
                        .hub_dir
                        .as_ref()
                        .map(|hub| hub.join(format!("models--{}", source.repo.replace('/', "--"))));
                    let still_linked = repo.is_some_and(|repo| links_to(&repo, &blob));
                    if !still_linked {
                        remove_file(&blob, &mut removed)?;
                    }
                }
            }
            CachedKind::Quantized { .. } => {
                remove_file(&found.path, &mut removed)?;
                let record = provenance_path(&found.path);
                if record.is_file() {
                    remove_file(&record, &mut removed)?;
                }
            }
            CachedKind::Named(_) | CachedKind::Other => remove_file(&found.path, &mut removed)?,
        }
        forget_use(self.cache, &found.path);
        Ok(removed)
    }
}

fn model(
    name: String,
    kind: CachedKind,
    path: PathBuf,
    used: &BTreeMap<String, u64>,
) -> CachedModel {
    let size = std::fs::metadata(&path).map(|m| m.len()).unwrap_or(0);
    let last_used = used.get(&path.display().to_string()).copied();
    CachedModel {
        name,
        kind,
        path,
        size,
        last_used,
    }
}

fn remove_file(path: &Path, removed: &mut Vec<PathBuf>) -> Result<(), ModelError> {
    std::fs::remove_file(path).map_err(ModelError::io("cannot remove", path))?;
    removed.push(path.to_path_buf());
    Ok(())
}

/// The provenance record `rein models quantize` writes beside a copy.
pub fn provenance_path(model: &Path) -> PathBuf {
    let mut name = model.as_os_str().to_os_string();
    name.push(".json");
    PathBuf::from(name)
}

/// A quantized copy's type (from its name, `<label>.<quant>.gguf`) and its source.
fn quantized_kind(path: &Path) -> CachedKind {
    let stem = file_stem(path);
    let quant = stem.rsplit('.').next().unwrap_or_default().to_string();
    let record: Option<serde_json::Value> = std::fs::read_to_string(provenance_path(path))
        .ok()
        .and_then(|text| serde_json::from_str(&text).ok());
    let source = record.as_ref().and_then(|r| {
        let model = r["source_model"].as_str()?;
        Some(match r["source_type"].as_str() {
            Some(kind) => format!("{model} ({kind})"),
            None => model.to_string(),
        })
    });
    let requantized = record
        .as_ref()
        .and_then(|r| r["requantized"].as_bool())
        .unwrap_or(false);
    CachedKind::Quantized {
        quant,
        source,
        requantized,
    }
}

/// The `.gguf` files directly in `dir`, by name.
fn gguf_files(dir: &Path) -> Vec<PathBuf> {
    dir_files::with_extension(dir, "gguf").unwrap_or_default()
}

/// The `.gguf` files of the hub cache: `models--owner--repo/snapshots/<rev>/<file>`,
/// one per source (the newest snapshot's), by source.
fn hub_files(hub: &Path) -> Vec<(HubSource, PathBuf)> {
    let mut found: BTreeMap<String, (HubSource, PathBuf, SystemTime)> = BTreeMap::new();
    let Ok(repos) = std::fs::read_dir(hub) else {
        return Vec::new();
    };
    for repo in repos.flatten() {
        let dir_name = repo.file_name().to_string_lossy().into_owned();
        let Some(name) = dir_name.strip_prefix("models--") else {
            continue;
        };
        let repo_name = name.replacen("--", "/", 1);
        let Ok(snapshots) = std::fs::read_dir(repo.path().join("snapshots")) else {
            continue;
        };
        for snapshot in snapshots.flatten() {
            for file in gguf_files_below(&snapshot.path()) {
                let Ok(relative) = file.strip_prefix(snapshot.path()) else {
                    continue;
                };
                let source = HubSource {
                    repo: repo_name.clone(),
                    file: relative.to_string_lossy().into_owned(),
                };
                let modified = std::fs::symlink_metadata(&file)
                    .and_then(|m| m.modified())
                    .unwrap_or(UNIX_EPOCH);
                let key = source.to_string();
                if found.get(&key).is_none_or(|(_, _, seen)| modified > *seen) {
                    found.insert(key, (source, file, modified));
                }
            }
        }
    }
    found.into_values().map(|(s, p, _)| (s, p)).collect()
}

/// The `.gguf` files (or links to them) anywhere below `dir`.
fn gguf_files_below(dir: &Path) -> Vec<PathBuf> {
    dir_files::below(dir)
        .into_iter()
        .filter(|path| path.extension().is_some_and(|e| e == "gguf"))
        .collect()
}

/// Some link below `repo`'s snapshots still resolves to `blob`.
fn links_to(repo: &Path, blob: &Path) -> bool {
    let Ok(snapshots) = std::fs::read_dir(repo.join("snapshots")) else {
        return false;
    };
    snapshots.flatten().any(|snapshot| {
        gguf_files_below(&snapshot.path())
            .iter()
            .any(|file| std::fs::canonicalize(file).ok().as_deref() == Some(blob))
    })
}

fn file_stem(path: &Path) -> String {
    path.file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default()
}

fn file_name(path: &Path) -> String {
    path.file_name()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default()
}

/// When each model file was last loaded, by path.
fn last_uses(cache: &ModelCache) -> BTreeMap<String, u64> {
    std::fs::read_to_string(cache.dir().join(LAST_USED_FILE))
        .ok()
        .and_then(|text| serde_json::from_str(&text).ok())
        .unwrap_or_default()
}

fn write_last_uses(cache: &ModelCache, uses: &BTreeMap<String, u64>) -> std::io::Result<()> {
    std::fs::create_dir_all(cache.dir())?;
    let text = serde_json::to_string_pretty(uses).map_err(std::io::Error::other)?;
    let mut file = tempfile::NamedTempFile::new_in(cache.dir())?;
    std::io::Write::write_all(&mut file, text.as_bytes())?;
    file.persist(cache.dir().join(LAST_USED_FILE))
        .map_err(|e| e.error)?;
    Ok(())
}

/// Records that `path` was loaded now (for `rein models list`); a record that cannot be
/// written is logged and skipped, never an error of the command that loads the model.
pub fn record_use(cache: &ModelCache, path: &Path) {
    let now = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0);
    let mut uses = last_uses(cache);
    uses.insert(path.display().to_string(), now);
    if let Err(error) = write_last_uses(cache, &uses) {
        tracing::debug!("last use of {} not recorded: {error}", path.display());
    }
}

fn forget_use(cache: &ModelCache, path: &Path) {
    let mut uses = last_uses(cache);
    if uses.remove(&path.display().to_string()).is_some() {
        if let Err(error) = write_last_uses(cache, &uses) {
            tracing::debug!("last use of {} not forgotten: {error}", path.display());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MANIFEST: &str = r#"
[models.toy]
description = "a toy"
file = "toy.gguf"
size = 4
sha256 = "0000000000000000000000000000000000000000000000000000000000000000"
packages = [{ name = "toy", version = "1" }]
"#;

    /// A cache with a named model, a quantized copy with its record, a stray file, and a
    /// hub repository whose snapshot links a blob.
    fn caches_on_disk(root: &Path) -> (Manifest, ModelCache, PathBuf) {
        let manifest = Manifest::parse(MANIFEST).unwrap();
        let cache = ModelCache::at(root.join("models"));
        std::fs::create_dir_all(cache.dir().join("quantized")).unwrap();
        std::fs::write(cache.dir().join("toy.gguf"), b"GGUF").unwrap();
        let copy = cache.dir().join("quantized/toy.q8_0.gguf");
        std::fs::write(&copy, b"GGUF-q8").unwrap();
        std::fs::write(
            provenance_path(&copy),
            r#"{"source_model": "toy", "source_type": "Q4_K_M", "requantized": true}"#,
        )
        .unwrap();
        std::fs::write(cache.dir().join("stray.gguf"), b"GGUF-stray").unwrap();
        let hub = root.join("hub");
        let repo = hub.join("models--own--rep");
        std::fs::create_dir_all(repo.join("blobs")).unwrap();
        std::fs::create_dir_all(repo.join("snapshots/rev1/sub")).unwrap();
        std::fs::write(repo.join("blobs/abc"), b"GGUF-hub").unwrap();
        std::os::unix::fs::symlink("../../../blobs/abc", repo.join("snapshots/rev1/sub/m.gguf"))
            .unwrap();
        (manifest, cache, hub)
    }

    #[test]
    fn every_kind_of_cached_file_is_listed_with_size_and_last_use() {
        let dir = tempfile::tempdir().unwrap();
        let (manifest, cache, hub) = caches_on_disk(dir.path());
        let caches = Caches {
            manifest: &manifest,
            cache: &cache,
            hub_dir: Some(hub),
        };
        record_use(&cache, &cache.dir().join("toy.gguf"));
        let models = caches.list();
        let names: Vec<&str> = models.iter().map(|m| m.name.as_str()).collect();
        assert_eq!(
            names,
            ["toy", "toy.q8_0", "hf:own/rep/sub/m.gguf", "stray.gguf"]
        );
        assert_eq!(models[0].kind, CachedKind::Named("toy".into()));
        assert!(models[0].last_used.is_some());
        assert_eq!(models[0].size, 4);
        assert_eq!(
            models[1].kind,
            CachedKind::Quantized {
                quant: "q8_0".into(),
                source: Some("toy (Q4_K_M)".into()),
                requantized: true
            }
        );
        assert!(models[1].last_used.is_none());
        assert!(matches!(&models[2].kind, CachedKind::Hub(s) if s.repo == "own/rep"));
        assert_eq!(models[2].size, 8);
        assert_eq!(models[3].kind, CachedKind::Other);
    }

    #[test]
    fn removal_takes_what_belongs_to_a_model_and_nothing_outside_the_caches() {
        let dir = tempfile::tempdir().unwrap();
        let (manifest, cache, hub) = caches_on_disk(dir.path());
        let caches = Caches {
            manifest: &manifest,
            cache: &cache,
            hub_dir: Some(hub.clone()),
        };
        let outside = dir.path().join("mine.gguf");
        std::fs::write(&outside, b"GGUF").unwrap();
        let refused = caches.remove(outside.to_str().unwrap()).unwrap_err();
        assert!(matches!(refused, ModelError::NotCached(_)), "{refused}");
        assert!(outside.is_file());
        assert!(caches.remove("nothing").is_err());

        let removed = caches.remove("hf:own/rep/sub/m.gguf").unwrap();
        assert_eq!(removed.len(), 2, "{removed:?}");
        assert!(!hub.join("models--own--rep/blobs/abc").exists());

        let removed = caches.remove("toy.q8_0").unwrap();
        assert_eq!(removed.len(), 2, "the copy and its record: {removed:?}");

        let stray = cache.dir().join("stray.gguf");
        assert_eq!(caches.remove(stray.to_str().unwrap()).unwrap(), [stray]);

        record_use(&cache, &cache.dir().join("toy.gguf"));
        caches.remove("toy").unwrap();
        assert!(caches.list().is_empty());
        assert!(
            last_uses(&cache).is_empty(),
            "a removed file's last use is forgotten"
        );
    }
}
