//! Loading the canitoolcall fixtures of one family (`spec/fixture.schema.json`).

use std::path::{Path, PathBuf};

use serde::Deserialize;
use serde_json::Value;

/// The pinned corpus version, as `scripts/fetch-fixtures.sh` unpacks it.
pub const CORPUS: &str = "canitoolcall-0.1.1";

/// One fixture record.
#[derive(Debug, Deserialize)]
pub struct Fixture {
    pub id: String,
    pub models: Vec<String>,
    pub spec_version: String,
    pub tools: Vec<Value>,
    pub raw_output: String,
    pub tags: Vec<String>,
    pub expected: Option<Expected>,
    pub expected_error: Option<ExpectedError>,
    pub output_token_ids: Option<Vec<u32>>,
    pub generation_prompt: Option<String>,
}

/// The correct parse (`""` means absent).
#[derive(Debug, Deserialize)]
pub struct Expected {
    pub content: Option<String>,
    pub reasoning_content: Option<String>,
    pub tool_calls: Vec<ExpectedCall>,
}

/// One expected call.
#[derive(Debug, Deserialize)]
pub struct ExpectedCall {
    pub name: String,
    pub arguments: Value,
}

/// The accepted outcomes for truncated or malformed output.
#[derive(Debug, Deserialize)]
pub struct ExpectedError {
    pub accept: Vec<String>,
}

/// `family.json`.
#[derive(Debug, Deserialize)]
pub struct Family {
    pub markers: Vec<String>,
    pub reference_models: Vec<ReferenceModel>,
}

/// A family's reference model.
#[derive(Debug, Deserialize)]
pub struct ReferenceModel {
    pub repo: String,
    pub default_generation_prompt: Option<String>,
}

impl Fixture {
    /// Cut by the token limit.
    pub fn truncated(&self) -> bool {
        self.tags.iter().any(|t| t == "truncated")
    }

    /// The generation prompt: the fixture's, else its reference model's default.
    pub fn generation_prompt<'a>(&'a self, family: &'a Family) -> Option<&'a str> {
        self.generation_prompt.as_deref().or_else(|| {
            family
                .reference_models
                .iter()
                .find(|m| Some(&m.repo) == self.models.first())
                .and_then(|m| m.default_generation_prompt.as_deref())
        })
    }
}

/// The fixtures cache: `REIN_FIXTURES_DIR`, else `$XDG_CACHE_HOME/rein/fixtures`, else
/// `~/.cache/rein/fixtures`.
pub fn cache_dir() -> PathBuf {
    if let Some(dir) = std::env::var_os("REIN_FIXTURES_DIR") {
        return PathBuf::from(dir);
    }
    let cache = std::env::var_os("XDG_CACHE_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| Path::new(&h).join(".cache")))
        .expect("HOME or XDG_CACHE_HOME");
    cache.join("rein").join("fixtures")
}

/// The family's directory; fails with instructions when the corpus is missing.
pub fn family_dir(slug: &str) -> PathBuf {
    let root = cache_dir().join(CORPUS);
    let dir = root
        .join("canitoolcall")
        .join("_data")
        .join("fixtures")
        .join(slug);
    assert!(
        root.join(".complete").is_file() && dir.is_dir(),
        "the canitoolcall fixtures are not in {}; run scripts/fetch-fixtures.sh (scripts/test.sh does)",
        root.display()
    );
    dir
}

/// The family metadata and every fixture in its `.jsonl` files, in file order.
pub fn load(slug: &str) -> (Family, Vec<Fixture>) {
    let dir = family_dir(slug);
    let family_text = std::fs::read_to_string(dir.join("family.json")).expect("family.json");
    let family: Family = serde_json::from_str(&family_text).expect("family.json parses");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .expect("fixtures dir")
        .map(|e| e.expect("dir entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "jsonl"))
        .collect();
    files.sort();
    let mut fixtures = Vec::new();
    for file in files {
        let text = std::fs::read_to_string(&file).expect("fixture file");
        for (n, line) in text.lines().enumerate() {
            if line.trim().is_empty() {
                continue;
            }
            let fixture: Fixture = serde_json::from_str(line)
                .unwrap_or_else(|e| panic!("{}:{}: {e}", file.display(), n + 1));
            assert_eq!(
                fixture.spec_version.split('.').next(),
                Some("0"),
                "{}: unsupported spec_version",
                fixture.id
            );
            fixtures.push(fixture);
        }
    }
    (family, fixtures)
}
