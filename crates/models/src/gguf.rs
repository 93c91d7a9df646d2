//! GGUF metadata read with candle-core's reader (no weights loaded), and the checks
//! that keep a damaged file away from llama.cpp, which aborts on some of them.

use std::collections::{BTreeMap, HashMap};
use std::fs::File;
use std::io::{BufReader, Read};
use std::path::{Path, PathBuf};

use candle_core::quantized::gguf_file::{Content, Value};
use candle_core::quantized::GgmlDType;

use crate::memory::{kv_bytes_per_token, KvCacheType};
use crate::ModelError;

/// What `rein models inspect` shows about a GGUF file.
#[derive(Debug, Clone, PartialEq)]
pub struct GgufInfo {
    /// The file.
    pub path: PathBuf,
    /// The file's size in bytes.
    pub file_size: u64,
    /// `general.architecture` (`llama`, `qwen2`, ...).
    pub architecture: String,
    /// `general.name`, when present.
    pub name: Option<String>,
    /// The number of weights (elements of all tensors).
    pub parameter_count: u64,
    /// The number of tensors.
    pub tensor_count: usize,
    /// `general.file_type` as llama.cpp names it (`Q4_K_M`, ...).
    pub file_type: String,
    /// The training context length.
    pub context_length: Option<u64>,
    /// Transformer layers.
    pub block_count: u64,
    /// Attention heads.
    pub head_count: u64,
    /// Key/value heads (grouped-query attention).
    pub head_count_kv: u64,
    /// Embedding width.
    pub embedding_length: u64,
    /// Width of one key head.
    pub key_length: u64,
    /// Width of one value head.
    pub value_length: u64,
    /// Bytes of tensor data.
    pub weights_bytes: u64,
    /// Bytes of tensor data in each transformer layer (`blk.N.*`), by layer index.
    pub layer_bytes: Vec<u64>,
    /// Bytes of the output head (`output.weight`, `output_norm.*`), which is offloaded
    /// to a GPU together with the last layer.
    pub output_bytes: u64,
    /// Bytes of the weights used in matrix products (every tensor but the token
    /// embeddings), by ggml type name (`Q4_K`, `Q8_0`, ...): the CPU backend keeps a
    /// second, repacked copy of some types.
    pub matrix_bytes_by_type: BTreeMap<String, u64>,
    /// Tokens in the vocabulary.
    pub vocab_size: u64,
    /// Width of the feed-forward layer.
    pub feed_forward_length: u64,
    /// `tokenizer.chat_template`, when present.
    pub chat_template: Option<String>,
}

impl GgufInfo {
    /// File bits per parameter (what a quantization really costs on disk); 0 when the
    /// file does not say how many parameters it has.
    pub fn bits_per_weight(&self) -> f64 {
        if self.parameter_count == 0 {
            return 0.0;
        }
        self.file_size as f64 * 8.0 / self.parameter_count as f64
    }

    /// Reads the metadata of the GGUF file at `path` and checks that every tensor lies
    /// inside the file.
    pub fn read(path: &Path) -> Result<Self, ModelError> {
        let invalid = |reason: String| ModelError::InvalidGguf {
            path: path.to_path_buf(),
            reason,
        };
        let file = open_gguf(path)?;
        let file_size = file
            .metadata()
            .map_err(ModelError::io("reading metadata of", path))?
            .len();
        let content = read_header(path, file)?;
        let meta = &content.metadata;
        let architecture = meta_string(meta, "general.architecture")
            .ok_or_else(|| invalid("no general.architecture in the metadata".into()))?;
        let arch_u64 = |key: &str| meta_u64(meta, &format!("{architecture}.{key}"));
        let require = |key: &str| {
            arch_u64(key).ok_or_else(|| invalid(format!("no {architecture}.{key} in the metadata")))
        };
        let block_count = require("block_count")?;
        let head_count = require("attention.head_count")?;
        let embedding_length = require("embedding_length")?;
        let head_count_kv = arch_u64("attention.head_count_kv").unwrap_or(head_count);
        let head_width = embedding_length.checked_div(head_count).unwrap_or(0);
        let key_length = arch_u64("attention.key_length").unwrap_or(head_width);
        let value_length = arch_u64("attention.value_length").unwrap_or(head_width);

        let mut parameter_count = 0u64;
        let mut weights_bytes = 0u64;
        let mut data_end = 0u64;
        let mut layer_bytes = vec![0u64; usize::try_from(block_count).unwrap_or(0).min(4096)];
        let mut output_bytes = 0u64;
        let mut matrix_bytes_by_type = BTreeMap::new();
        for (name, info) in &content.tensor_infos {
            let elements = info.shape.elem_count() as u64;
            let block = info.ggml_dtype.block_size() as u64;
            if block == 0 || !elements.is_multiple_of(block) {
                return Err(invalid(format!(
                    "tensor {name} has a shape that does not fit its type"
                )));
            }
            let bytes = elements / block * info.ggml_dtype.type_size() as u64;
            parameter_count += elements;
            weights_bytes += bytes;
            if !name.starts_with("token_embd") && info.shape.dims().len() >= 2 {
                *matrix_bytes_by_type
                    .entry(ggml_type_name(info.ggml_dtype).to_string())
                    .or_insert(0) += bytes;
            }
            match tensor_layer(name) {
                Some(layer) => {
                    if let Some(total) = layer_bytes.get_mut(layer) {
                        *total += bytes;
                    }
                }
                None if name.starts_with("output") => output_bytes += bytes,
                None => {}
            }
            data_end = data_end.max(content.tensor_data_offset + info.offset + bytes);
        }
        if data_end > file_size {
            return Err(invalid(format!(
                "the file is truncated: tensors need {data_end} bytes but the file has {file_size}"
            )));
        }
        Ok(Self {
            path: path.to_path_buf(),
            file_size,
            name: meta_string(meta, "general.name"),
            parameter_count,
            tensor_count: content.tensor_infos.len(),
            file_type: meta_u64(meta, "general.file_type")
                .map(file_type_name)
                .unwrap_or_else(|| "unknown".into()),
            context_length: arch_u64("context_length"),
            block_count,
            head_count,
            head_count_kv,
            embedding_length,
            key_length,
            value_length,
            weights_bytes,
            layer_bytes,
            output_bytes,
            matrix_bytes_by_type,
            vocab_size: arch_u64("vocab_size")
                .or_else(|| {
                    meta.get("tokenizer.ggml.tokens")
                        .and_then(|v| v.to_vec().ok())
                        .map(|tokens| tokens.len() as u64)
                })
                .unwrap_or(0),
            feed_forward_length: arch_u64("feed_forward_length").unwrap_or(4 * embedding_length),
            chat_template: meta_string(meta, "tokenizer.chat_template"),
            architecture,
        })
    }

    /// KV cache bytes per token for `kv_type`.
    pub fn kv_bytes_per_token(&self, kv_type: KvCacheType) -> u64 {
        kv_bytes_per_token(
            self.block_count,
            self.key_length * self.head_count_kv,
            self.value_length * self.head_count_kv,
            kv_type,
        )
    }
}

/// Checks that `path` is a complete GGUF file before it is handed to llama.cpp.
///
/// A file whose tensor types the metadata reader does not know (newer quantizations)
/// passes with only its magic checked; llama.cpp then has the last word.
pub fn validate_gguf(path: &Path) -> Result<(), ModelError> {
    match GgufInfo::read(path) {
        Ok(_) => Ok(()),
        Err(ModelError::InvalidGguf { reason, .. }) if reason.contains("unknown dtype") => {
            tracing::debug!(path = %path.display(), %reason, "GGUF reader cannot check every tensor");
            Ok(())
        }
        Err(e) => Err(e),
    }
}

/// The metadata and tensor table of the GGUF file `file` (opened from `path`).
pub(crate) fn read_header(path: &Path, file: File) -> Result<Content, ModelError> {
    let mut reader = BufReader::new(file);
    Content::read(&mut reader).map_err(|e| {
        // candle appends a backtrace to some messages; the first line says it all.
        let message = e.to_string();
        let first = message
            .lines()
            .next()
            .unwrap_or_default()
            .trim()
            .to_string();
        ModelError::InvalidGguf {
            path: path.to_path_buf(),
            reason: format!(
                "the header does not parse; the file is truncated or damaged ({first})"
            ),
        }
    })
}

/// Opens `path` and checks the GGUF magic, so that a wrong file gets a plain message.
pub(crate) fn open_gguf(path: &Path) -> Result<File, ModelError> {
    let mut file = File::open(path).map_err(|e| match e.kind() {
        std::io::ErrorKind::NotFound => ModelError::MissingFile(path.to_path_buf()),
        _ => ModelError::io("opening", path)(e),
    })?;
    if file.metadata().map(|m| m.is_dir()).unwrap_or(false) {
        return Err(ModelError::InvalidGguf {
            path: path.to_path_buf(),
            reason: "it is a directory".into(),
        });
    }
    let mut magic = [0u8; 4];
    let read = file
        .read(&mut magic)
        .map_err(ModelError::io("reading", path))?;
    if read < 4 || &magic != b"GGUF" {
        return Err(ModelError::InvalidGguf {
            path: path.to_path_buf(),
            reason: "it does not start with the GGUF magic (not a GGUF file)".into(),
        });
    }
    drop(file);
    File::open(path).map_err(ModelError::io("opening", path))
}

/// llama.cpp's name of a tensor type.
fn ggml_type_name(dtype: GgmlDType) -> &'static str {
    match dtype {
        GgmlDType::F32 => "F32",
        GgmlDType::F16 => "F16",
        GgmlDType::BF16 => "BF16",
        GgmlDType::Q4_0 => "Q4_0",
        GgmlDType::Q4_1 => "Q4_1",
        GgmlDType::Q5_0 => "Q5_0",
        GgmlDType::Q5_1 => "Q5_1",
        GgmlDType::Q8_0 => "Q8_0",
        GgmlDType::Q8_1 => "Q8_1",
        GgmlDType::Q2K => "Q2_K",
        GgmlDType::Q3K => "Q3_K",
        GgmlDType::Q4K => "Q4_K",
        GgmlDType::Q5K => "Q5_K",
        GgmlDType::Q6K => "Q6_K",
        GgmlDType::Q8K => "Q8_K",
    }
}

/// The layer index of a tensor named `blk.N.…`.
fn tensor_layer(name: &str) -> Option<usize> {
    name.strip_prefix("blk.")?.split('.').next()?.parse().ok()
}

fn meta_string(meta: &HashMap<String, Value>, key: &str) -> Option<String> {
    meta.get(key)?.to_string().ok().cloned()
}

fn meta_u64(meta: &HashMap<String, Value>, key: &str) -> Option<u64> {
    let v = meta.get(key)?;
    v.to_u64()
        .ok()
        .or_else(|| v.to_u32().ok().map(u64::from))
        .or_else(|| v.to_i32().ok().and_then(|x| u64::try_from(x).ok()))
        .or_else(|| v.to_i64().ok().and_then(|x| u64::try_from(x).ok()))
}

/// llama.cpp's names for `general.file_type` (`enum llama_ftype`).
fn file_type_name(code: u64) -> String {
    let name = match code {
        0 => "F32",
        1 => "F16",
        2 => "Q4_0",
        3 => "Q4_1",
        7 => "Q8_0",
        8 => "Q5_0",
        9 => "Q5_1",
        10 => "Q2_K",
        11 => "Q3_K_S",
        12 => "Q3_K_M",
        13 => "Q3_K_L",
        14 => "Q4_K_S",
        15 => "Q4_K_M",
        16 => "Q5_K_S",
        17 => "Q5_K_M",
        18 => "Q6_K",
        19 => "IQ2_XXS",
        20 => "IQ2_XS",
        21 => "Q2_K_S",
        22 => "IQ3_XS",
        23 => "IQ3_XXS",
        24 => "IQ1_S",
        25 => "IQ4_NL",
        26 => "IQ3_S",
        27 => "IQ3_M",
        28 => "IQ2_S",
        29 => "IQ2_M",
        30 => "IQ4_XS",
        31 => "IQ1_M",
        32 => "BF16",
        36 => "TQ1_0",
        37 => "TQ2_0",
        38 => "MXFP4_MOE",
        other => return format!("type {other}"),
    };
    name.to_string()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    fn write_tmp(bytes: &[u8]) -> tempfile::NamedTempFile {
        let mut f = tempfile::NamedTempFile::new().unwrap();
        f.write_all(bytes).unwrap();
        f
    }

    #[test]
    fn not_a_gguf_file_is_named_as_such() {
        let f = write_tmp(b"PK\x03\x04 this is a zip");
        let err = GgufInfo::read(f.path()).unwrap_err().to_string();
        assert!(err.contains("not a GGUF file"), "{err}");
        let empty = write_tmp(b"");
        assert!(validate_gguf(empty.path())
            .unwrap_err()
            .to_string()
            .contains("GGUF magic"));
    }

    #[test]
    fn truncated_header_is_rejected() {
        let f = write_tmp(b"GGUF\x03\x00\x00\x00\x10");
        let err = validate_gguf(f.path()).unwrap_err().to_string();
        assert!(err.contains("header does not parse"), "{err}");
    }

    #[test]
    fn missing_file_says_so() {
        let err = validate_gguf(Path::new("/nonexistent/model.gguf")).unwrap_err();
        assert!(matches!(err, ModelError::MissingFile(_)), "{err}");
    }

    #[test]
    fn file_type_names_match_llama_cpp() {
        assert_eq!(file_type_name(3), "Q4_1");
        assert_eq!(file_type_name(15), "Q4_K_M");
        assert_eq!(file_type_name(999), "type 999");
    }
}
