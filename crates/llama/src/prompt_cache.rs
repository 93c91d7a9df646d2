//! A prompt cache that outlives the process: the KV state of a conversation's stable
//! prefix (the system prompt, the tool block, the template's opening) saved to disk
//! the first time it is computed and loaded by the next process that starts with the
//! same prefix — or, when no file holds that prefix, the file that shares the longest
//! start with the prompt, loaded and cut to what the two share. A file is named by a
//! hash of the model file's sha256, the context settings and the prefix's token ids;
//! the token ids stored in it are compared with the prompt's before its KV is used, so
//! a stale, foreign, truncated or corrupt file is ignored (and recomputed), never used.
//! Files are written atomically and the directory is kept under a size bound, least
//! recently used first.

use std::fs;
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use llama_cpp_2::context::LlamaContext;
use llama_cpp_2::LlamaStateSeqFlags;
use sha2::{Digest, Sha256};

use crate::{KvCacheType, TokenId};

/// The extension of a cached prefix's file.
const ENTRY_EXTENSION: &str = "kv";

/// A prefix shorter than this is not worth a file (its prefill takes milliseconds).
pub(crate) const MIN_PERSISTED_TOKENS: usize = 64;

/// How many entries, most recently used first, a lookup for the longest shared start
/// reads the token ids of (the default bound holds about 60).
const MAX_SCANNED_ENTRIES: usize = 128;

/// A saved prefix that another prompt starts like: its file, the tokens it holds and
/// how many of them the prompt shares.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct SharedStart {
    pub(crate) path: PathBuf,
    pub(crate) tokens: Vec<TokenId>,
    pub(crate) shared: usize,
}

/// Where the cache lives and how large it may grow.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PromptCacheConfig {
    /// The cache directory (created when missing).
    pub dir: PathBuf,
    /// Bytes the directory's entries may take; the least recently used go first.
    pub max_bytes: u64,
    /// The model file's sha256 when the caller knows it (a named model, verified when
    /// it was pulled); otherwise the file is hashed once and the hash remembered.
    pub model_sha256: Option<String>,
}

impl PromptCacheConfig {
    /// The size bound unless set otherwise: 2 GiB (about 60 prefixes of the default
    /// model's system prompt and tools).
    pub const DEFAULT_MAX_BYTES: u64 = 2 << 30;

    /// A cache in `dir` with the default size bound.
    pub fn new(dir: impl Into<PathBuf>) -> Self {
        Self {
            dir: dir.into(),
            max_bytes: Self::DEFAULT_MAX_BYTES,
            model_sha256: None,
        }
    }
}

/// One cached prefix on disk.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PromptCacheEntry {
    /// Its file.
    pub path: PathBuf,
    /// Its size.
    pub bytes: u64,
    /// When it was last written or used.
    pub used: SystemTime,
}

/// The cached prefixes in `dir`, most recently used first (none when `dir` does not
/// exist).
pub fn list_prompt_cache(dir: &Path) -> io::Result<Vec<PromptCacheEntry>> {
    let reading = match fs::read_dir(dir) {
        Ok(reading) => reading,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(e),
    };
    let mut entries = Vec::new();
    for item in reading {
        let item = item?;
        let path = item.path();
        if path.extension().and_then(|e| e.to_str()) != Some(ENTRY_EXTENSION) {
            continue;
        }
        let meta = item.metadata()?;
        if !meta.is_file() {
            continue;
        }
        entries.push(PromptCacheEntry {
            path,
            bytes: meta.len(),
            used: meta.modified().unwrap_or(SystemTime::UNIX_EPOCH),
        });
    }
    entries.sort_by(|a, b| b.used.cmp(&a.used).then_with(|| a.path.cmp(&b.path)));
    Ok(entries)
}

/// Removes every cached prefix (and the remembered model hashes) in `dir`; returns
/// how many prefixes and bytes were removed.
pub fn clear_prompt_cache(dir: &Path) -> io::Result<(usize, u64)> {
    let entries = list_prompt_cache(dir)?;
    let mut bytes = 0;
    for entry in &entries {
        fs::remove_file(&entry.path)?;
        bytes += entry.bytes;
    }
    if let Ok(reading) = fs::read_dir(dir) {
        for item in reading.flatten() {
            let path = item.path();
            if path.extension().and_then(|e| e.to_str()) == Some("sha256") {
                fs::remove_file(path)?;
            }
        }
    }
    Ok((entries.len(), bytes))
}

/// The open cache of one engine: its directory and the identity of its model and
/// context settings.
#[derive(Debug)]
pub(crate) struct PromptCache {
    config: PromptCacheConfig,
    /// The model's sha256 and the settings the KV depends on, hashed into every name.
    identity: String,
}

impl PromptCache {
    /// Opens the cache for the model at `model_path` loaded with `kv_type` and `n_ctx`.
    /// The model's sha256 is computed once per file version and remembered in the
    /// directory.
    pub(crate) fn open(
        config: PromptCacheConfig,
        model_path: &Path,
        kv_type: KvCacheType,
        n_ctx: u32,
    ) -> Result<Self, String> {
        fs::create_dir_all(&config.dir)
            .map_err(|e| format!("cannot create {}: {e}", config.dir.display()))?;
        let known = config
            .model_sha256
            .clone()
            .filter(|sha| sha.len() == 64 && sha.bytes().all(|b| b.is_ascii_hexdigit()));
        let model_sha = match known {
            Some(sha) => sha.to_ascii_lowercase(),
            None => model_sha256(&config.dir, model_path)?,
        };
        let identity = format!(
            "rein prompt cache 1\nrein-llama {}\nmodel {model_sha}\nkv {kv_type:?}\nn_ctx {n_ctx}\n",
            env!("CARGO_PKG_VERSION")
        );
        Ok(Self { config, identity })
    }

    /// The file of the prefix `tokens`.
    pub(crate) fn path_for(&self, tokens: &[TokenId]) -> PathBuf {
        let mut hasher = Sha256::new();
        hasher.update(self.identity.as_bytes());
        for token in tokens {
            hasher.update(token.to_le_bytes());
        }
        let name = hex(&hasher.finalize()[..20]);
        self.config.dir.join(format!("{name}.{ENTRY_EXTENSION}"))
    }

    /// The saved entry of this cache's identity that shares the longest start with
    /// `prompt`, when that start is at least `min` tokens. Only the entries' headers
    /// (identity and token ids) are read, of at most [`MAX_SCANNED_ENTRIES`] entries,
    /// most recently used first; the entry itself is checked whole when it is loaded.
    pub(crate) fn longest_shared_start(
        &self,
        prompt: &[TokenId],
        min: usize,
    ) -> Option<SharedStart> {
        let identity = self.identity_digest();
        let entries = list_prompt_cache(&self.config.dir).ok()?;
        let mut best: Option<SharedStart> = None;
        for entry in entries.into_iter().take(MAX_SCANNED_ENTRIES) {
            let Some(tokens) = Entry::read_tokens(&entry.path, &identity) else {
                continue;
            };
            let shared = crate::slots::common_prefix(&tokens, prompt);
            let longer = best.as_ref().is_none_or(|b| shared > b.shared);
            if shared >= min && longer {
                best = Some(SharedStart {
                    path: entry.path,
                    tokens,
                    shared,
                });
            }
        }
        best
    }

    /// Where an entry is written before it is renamed into place.
    pub(crate) fn temporary_path(path: &Path) -> PathBuf {
        path.with_extension(format!("tmp{}", std::process::id()))
    }

    /// Marks `path` as used now (the eviction order).
    pub(crate) fn touch(path: &Path) {
        let touched = fs::File::options()
            .write(true)
            .open(path)
            .and_then(|file| file.set_modified(SystemTime::now()));
        if let Err(e) = touched {
            tracing::debug!(path = %path.display(), %e, "could not mark a cached prefix as used");
        }
    }

    /// Puts the prefix `expected` stored at `path` into `seq` (which is cleared first):
    /// `true` when the file is whole, names this cache's model and settings, holds
    /// exactly those tokens, and llama.cpp took its KV. Any other file is left to be
    /// overwritten, and `seq` is left empty.
    pub(crate) fn load(
        &self,
        ctx: &mut LlamaContext<'_>,
        seq: i32,
        path: &Path,
        expected: &[TokenId],
    ) -> bool {
        crate::kv::clear(ctx, seq);
        let reason = match fs::read(path) {
            Ok(bytes) => match Entry::parse(&bytes, &self.identity_digest(), expected) {
                Ok(payload) => {
                    // SAFETY: the payload is byte for byte what llama.cpp's
                    // `state_seq_get_data_ext` gave for a sequence of this model under
                    // these context settings: the file names this cache's identity (the
                    // model's sha256, KV type, context size, rein's version) and the
                    // payload's sha256 matches the one written with it.
                    let taken = unsafe {
                        ctx.state_seq_set_data_ext(payload, seq, LlamaStateSeqFlags::empty())
                    };
                    if taken {
                        Self::touch(path);
                        return true;
                    }
                    "llama.cpp refused its state".to_string()
                }
                Err(reason) => reason.to_string(),
            },
            Err(e) => e.to_string(),
        };
        tracing::warn!(
            path = %path.display(),
            "ignoring a cached prompt prefix ({reason}); computing it again"
        );
        crate::kv::clear(ctx, seq);
        false
    }

    /// Saves `seq`, which holds exactly `tokens`, as the prefix file `path`. A failure
    /// only costs the next process the prefill, so it is logged, not returned.
    pub(crate) fn save(&self, ctx: &LlamaContext<'_>, seq: i32, path: &Path, tokens: &[TokenId]) {
        let flags = LlamaStateSeqFlags::empty();
        let size = ctx.state_seq_get_size_ext(seq, flags);
        let mut payload = vec![0u8; size];
        // SAFETY: `payload` holds the `size` bytes llama.cpp reports this sequence's
        // state takes.
        let written = unsafe { ctx.state_seq_get_data_ext(payload.as_mut_ptr(), seq, flags) };
        if written != size || size == 0 {
            tracing::warn!(
                written,
                size,
                "could not read a sequence's state to cache it"
            );
            return;
        }
        let bytes = Entry::encode(&self.identity_digest(), tokens, &payload);
        if let Err(e) = self.store(path, &bytes) {
            tracing::warn!(path = %path.display(), "could not save a prompt prefix: {e}");
        }
    }

    /// Writes an entry atomically and keeps the directory within its bound.
    fn store(&self, path: &Path, bytes: &[u8]) -> io::Result<()> {
        write_atomically(path, bytes)?;
        self.evict(path)
    }

    /// The sha256 of the identity, written into every entry.
    fn identity_digest(&self) -> [u8; 32] {
        Sha256::digest(self.identity.as_bytes()).into()
    }

    /// Removes the least recently used entries (never `keep`) until the directory's
    /// entries fit the size bound.
    fn evict(&self, keep: &Path) -> io::Result<()> {
        let entries = list_prompt_cache(&self.config.dir)?;
        let mut total: u64 = entries.iter().map(|e| e.bytes).sum();
        for entry in entries.iter().rev() {
            if total <= self.config.max_bytes {
                break;
            }
            if entry.path == keep {
                continue;
            }
            fs::remove_file(&entry.path)?;
            total -= entry.bytes;
        }
        Ok(())
    }
}

/// The file format of one cached prefix: a magic, the cache identity's sha256, the
/// token ids, then llama.cpp's state of the sequence with its length and sha256. All
/// integers little-endian. Everything is checked before llama.cpp sees a byte.
struct Entry;

/// Why an entry is not used.
#[derive(Debug, thiserror::Error)]
enum EntryError {
    #[error("not a rein prompt cache file")]
    Magic,
    #[error("written for another model or other settings")]
    Foreign,
    #[error("it holds other tokens than the prompt's")]
    OtherTokens,
    #[error("it is truncated")]
    Truncated,
    #[error("its state does not match its checksum")]
    Checksum,
}

impl Entry {
    const MAGIC: &'static [u8; 8] = b"REINKV01";
    /// The magic, the identity's sha256 and the number of token ids.
    const HEADER_BYTES: usize = 48;

    /// The number of token ids an entry's header (its first [`Self::HEADER_BYTES`])
    /// announces, when it is an entry of `identity`.
    fn token_count(head: &[u8], identity: &[u8; 32]) -> Result<usize, EntryError> {
        let mut cursor = Cursor(head);
        if cursor.take(8)? != Self::MAGIC {
            return Err(EntryError::Magic);
        }
        if cursor.take(32)? != identity {
            return Err(EntryError::Foreign);
        }
        usize::try_from(cursor.word()?).map_err(|_| EntryError::Truncated)
    }

    fn encode(identity: &[u8; 32], tokens: &[TokenId], payload: &[u8]) -> Vec<u8> {
        let mut out = Vec::with_capacity(payload.len() + tokens.len() * 4 + 96);
        out.extend_from_slice(Self::MAGIC);
        out.extend_from_slice(identity);
        out.extend_from_slice(&(tokens.len() as u64).to_le_bytes());
        for token in tokens {
            out.extend_from_slice(&token.to_le_bytes());
        }
        out.extend_from_slice(&(payload.len() as u64).to_le_bytes());
        out.extend_from_slice(&Sha256::digest(payload));
        out.extend_from_slice(payload);
        out
    }

    /// The token ids of the entry at `path` when it is one of `identity`, read from its
    /// header alone (its state is not read or checked here).
    fn read_tokens(path: &Path, identity: &[u8; 32]) -> Option<Vec<TokenId>> {
        use std::io::Read;
        let mut file = fs::File::open(path).ok()?;
        let mut head = [0u8; Self::HEADER_BYTES];
        file.read_exact(&mut head).ok()?;
        let count = Self::token_count(&head, identity).ok()?;
        let length = file.metadata().ok()?.len();
        if count.checked_mul(4)? as u64 > length {
            return None;
        }
        let mut ids = vec![0u8; count * 4];
        file.read_exact(&mut ids).ok()?;
        Some(
            ids.chunks_exact(4)
                .map(|b| TokenId::from_le_bytes([b[0], b[1], b[2], b[3]]))
                .collect(),
        )
    }

    /// The state in `bytes`, when they are a whole entry of `identity` for exactly
    /// the tokens `expected`.
    fn parse<'b>(
        bytes: &'b [u8],
        identity: &[u8; 32],
        expected: &[TokenId],
    ) -> Result<&'b [u8], EntryError> {
        let mut cursor = Cursor(bytes);
        if Self::token_count(cursor.take(Self::HEADER_BYTES)?, identity)? != expected.len() {
            return Err(EntryError::OtherTokens);
        }
        let tokens = cursor.take(expected.len() * 4)?;
        let same = tokens
            .chunks_exact(4)
            .zip(expected)
            .all(|(b, t)| b == t.to_le_bytes());
        if !same {
            return Err(EntryError::OtherTokens);
        }
        let length = usize::try_from(cursor.word()?).map_err(|_| EntryError::Truncated)?;
        let checksum = cursor.take(32)?;
        let payload = cursor.take(length)?;
        if !cursor.0.is_empty() || Sha256::digest(payload).as_slice() != checksum {
            return Err(EntryError::Checksum);
        }
        Ok(payload)
    }
}

/// Reads an entry front to back.
struct Cursor<'b>(&'b [u8]);

impl<'b> Cursor<'b> {
    fn take(&mut self, n: usize) -> Result<&'b [u8], EntryError> {
        if self.0.len() < n {
            return Err(EntryError::Truncated);
        }
        let (head, tail) = self.0.split_at(n);
        self.0 = tail;
        Ok(head)
    }

    fn word(&mut self) -> Result<u64, EntryError> {
        let bytes: [u8; 8] = self
            .take(8)?
            .try_into()
            .map_err(|_| EntryError::Truncated)?;
        Ok(u64::from_le_bytes(bytes))
    }
}

/// The sha256 of the model file, remembered in `dir` under a name made of the file's
/// path, size and modification time (a changed file is hashed again).
fn model_sha256(dir: &Path, model_path: &Path) -> Result<String, String> {
    let meta = fs::metadata(model_path)
        .map_err(|e| format!("cannot read {}: {e}", model_path.display()))?;
    let canonical = fs::canonicalize(model_path).unwrap_or_else(|_| model_path.to_path_buf());
    let modified = meta
        .modified()
        .ok()
        .and_then(|t| t.duration_since(SystemTime::UNIX_EPOCH).ok())
        .map(|d| d.as_nanos())
        .unwrap_or_default();
    let mut hasher = Sha256::new();
    hasher.update(canonical.to_string_lossy().as_bytes());
    hasher.update(meta.len().to_le_bytes());
    hasher.update(modified.to_le_bytes());
    let memo = dir.join(format!("model-{}.sha256", hex(&hasher.finalize()[..16])));
    if let Ok(text) = fs::read_to_string(&memo) {
        let text = text.trim();
        if text.len() == 64 && text.bytes().all(|b| b.is_ascii_hexdigit()) {
            return Ok(text.to_string());
        }
    }
    let sha = rein_models::file_sha256(model_path).map_err(|e| e.to_string())?;
    if let Err(e) = write_atomically(&memo, sha.as_bytes()) {
        tracing::debug!(memo = %memo.display(), %e, "could not remember the model's sha256");
    }
    Ok(sha)
}

/// Writes `bytes` to a temporary file beside `path`, then renames it into place.
/// No `fsync`: a file a crash leaves torn fails its checks on the next load and is
/// computed again, so the cache needs no durability, only atomic names.
fn write_atomically(path: &Path, bytes: &[u8]) -> io::Result<()> {
    let temporary = PromptCache::temporary_path(path);
    let written = fs::File::create(&temporary).and_then(|mut file| file.write_all(bytes));
    match written.and_then(|()| fs::rename(&temporary, path)) {
        Ok(()) => Ok(()),
        Err(e) => {
            let _ = fs::remove_file(&temporary);
            Err(e)
        }
    }
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cache_in(dir: &Path, max_bytes: u64) -> PromptCache {
        let model = dir.join("model.gguf");
        fs::write(&model, b"not really a model").unwrap();
        let config = PromptCacheConfig {
            max_bytes,
            ..PromptCacheConfig::new(dir.join("cache"))
        };
        PromptCache::open(config, &model, KvCacheType::F16, 4096).unwrap()
    }

    #[test]
    fn names_depend_on_the_tokens_the_model_and_the_settings() {
        let dir = tempfile::tempdir().unwrap();
        let cache = cache_in(dir.path(), 1 << 20);
        let a = cache.path_for(&[1, 2, 3]);
        assert_eq!(a, cache.path_for(&[1, 2, 3]));
        assert_ne!(a, cache.path_for(&[1, 2, 4]));
        let model = dir.path().join("model.gguf");
        let config = PromptCacheConfig::new(dir.path().join("cache"));
        let q8 = PromptCache::open(config.clone(), &model, KvCacheType::Q8_0, 4096).unwrap();
        assert_ne!(a, q8.path_for(&[1, 2, 3]));
        let wider = PromptCache::open(config.clone(), &model, KvCacheType::F16, 8192).unwrap();
        assert_ne!(a, wider.path_for(&[1, 2, 3]));
        let other = dir.path().join("other.gguf");
        fs::write(&other, b"another model").unwrap();
        let foreign = PromptCache::open(config, &other, KvCacheType::F16, 4096).unwrap();
        assert_ne!(a, foreign.path_for(&[1, 2, 3]));
    }

    #[test]
    fn the_model_hash_is_remembered_and_recomputed_when_the_file_changes() {
        let dir = tempfile::tempdir().unwrap();
        let cache_dir = dir.path().join("cache");
        fs::create_dir_all(&cache_dir).unwrap();
        let model = dir.path().join("model.gguf");
        fs::write(&model, b"abc").unwrap();
        let first = model_sha256(&cache_dir, &model).unwrap();
        assert_eq!(
            first,
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
        let memos: Vec<_> = fs::read_dir(&cache_dir).unwrap().flatten().collect();
        assert_eq!(memos.len(), 1);
        fs::write(&model, b"abcd").unwrap();
        let second = model_sha256(&cache_dir, &model).unwrap();
        assert_ne!(first, second);
    }

    #[test]
    fn storing_keeps_the_directory_within_its_bound_least_recently_used_first() {
        let dir = tempfile::tempdir().unwrap();
        let cache = cache_in(dir.path(), 250);
        let mut paths: Vec<PathBuf> = Vec::new();
        for i in 0..3 {
            let path = cache.path_for(&[i]);
            if i == 2 {
                // The first entry was used since: the second is the oldest now.
                PromptCache::touch(&paths[0]);
            }
            cache.store(&path, &[0u8; 100]).unwrap();
            if i < 2 {
                let when = SystemTime::UNIX_EPOCH + std::time::Duration::from_secs(1000 + i as u64);
                fs::File::options()
                    .write(true)
                    .open(&path)
                    .unwrap()
                    .set_modified(when)
                    .unwrap();
            }
            paths.push(path);
        }
        assert!(paths[0].exists(), "recently used");
        assert!(!paths[1].exists(), "least recently used, evicted");
        assert!(paths[2].exists(), "just written");
        let listed = list_prompt_cache(&dir.path().join("cache")).unwrap();
        assert_eq!(listed.len(), 2);
        assert_eq!(
            clear_prompt_cache(&dir.path().join("cache")).unwrap(),
            (2, 200)
        );
        assert!(list_prompt_cache(&dir.path().join("cache"))
            .unwrap()
            .is_empty());
    }

    #[test]
    fn the_entry_sharing_the_longest_start_is_found_from_headers() {
        let dir = tempfile::tempdir().unwrap();
        let cache = cache_in(dir.path(), 1 << 20);
        let identity = cache.identity_digest();
        let save = |tokens: &[TokenId]| {
            let bytes = Entry::encode(&identity, tokens, b"state");
            cache.store(&cache.path_for(tokens), &bytes).unwrap();
        };
        save(&[1, 2, 3, 9]);
        save(&[1, 2, 3, 4, 5, 8]);
        save(&[7, 7, 7, 7, 7, 7]);
        // A foreign entry that would share more is never picked.
        let foreign = Entry::encode(&[0u8; 32], &[1, 2, 3, 4, 5, 6], b"state");
        cache
            .store(&cache.path_for(&[1, 2, 3, 4, 5, 6]), &foreign)
            .unwrap();
        // A torn header is skipped.
        fs::write(dir.path().join("cache").join("torn.kv"), &foreign[..44]).unwrap();

        let prompt = [1, 2, 3, 4, 5, 6, 10];
        let best = cache.longest_shared_start(&prompt, 2).unwrap();
        assert_eq!(best.tokens, vec![1, 2, 3, 4, 5, 8]);
        assert_eq!(best.shared, 5);
        assert_eq!(best.path, cache.path_for(&[1, 2, 3, 4, 5, 8]));
        assert!(cache.longest_shared_start(&prompt, 6).is_none());
        assert!(cache.longest_shared_start(&[5, 5], 1).is_none());
    }

    #[test]
    fn an_entry_is_used_only_whole_for_its_identity_and_tokens() {
        let identity = [7u8; 32];
        let bytes = Entry::encode(&identity, &[1, 2, 3], b"state bytes");
        assert_eq!(
            Entry::parse(&bytes, &identity, &[1, 2, 3]).unwrap(),
            b"state bytes"
        );
        let err = |bytes: &[u8], identity: &[u8; 32], tokens: &[TokenId]| {
            Entry::parse(bytes, identity, tokens)
                .unwrap_err()
                .to_string()
        };
        assert!(err(&bytes, &[8u8; 32], &[1, 2, 3]).contains("another model"));
        assert!(err(&bytes, &identity, &[1, 2, 4]).contains("other tokens"));
        assert!(err(&bytes, &identity, &[1, 2]).contains("other tokens"));
        for cut in [0, 5, 40, 60, bytes.len() - 1] {
            let e = err(&bytes[..cut], &identity, &[1, 2, 3]);
            assert!(
                e.contains("truncated") || e.contains("not a rein"),
                "{cut}: {e}"
            );
        }
        let mut flipped = bytes.clone();
        let last = flipped.len() - 1;
        flipped[last] ^= 1;
        assert!(err(&flipped, &identity, &[1, 2, 3]).contains("checksum"));
        let mut longer = bytes.clone();
        longer.push(0);
        assert!(err(&longer, &identity, &[1, 2, 3]).contains("checksum"));
        assert!(err(&[0x5a; 200], &identity, &[1, 2, 3]).contains("not a rein"));
    }

    #[test]
    fn a_missing_directory_lists_nothing() {
        let dir = tempfile::tempdir().unwrap();
        assert!(list_prompt_cache(&dir.path().join("absent"))
            .unwrap()
            .is_empty());
    }
}
