//! A GGUF file's own tokenizer description — its vocabulary, token types, merges and
//! pre-tokenizer name — read from the metadata (no weights), so that a tokenizer can be
//! built without the model's `tokenizer.json`.

use std::path::Path;

use candle_core::quantized::gguf_file::Value;

use crate::gguf::{open_gguf, read_header};
use crate::ModelError;

/// llama.cpp's token type codes (`tokenizer.ggml.token_type`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TokenType {
    /// An ordinary piece of text.
    Normal,
    /// The unknown-token placeholder.
    Unknown,
    /// A control token (`<|im_end|>`): markup of the template, never plain text.
    Control,
    /// A token the model's authors added (`<tool_call>`), matched whole in text.
    UserDefined,
    /// A slot that is never used (padding of the vocabulary).
    Unused,
    /// A raw byte (`<0x0A>`), in vocabularies with byte fallback.
    Byte,
}

impl TokenType {
    fn from_code(code: i64) -> Self {
        match code {
            2 => Self::Unknown,
            3 => Self::Control,
            4 => Self::UserDefined,
            5 => Self::Unused,
            6 => Self::Byte,
            _ => Self::Normal,
        }
    }

    /// Whether llama.cpp matches this token whole in text when it parses special
    /// tokens (control, user-defined and unknown tokens).
    pub fn is_matched_whole(self) -> bool {
        matches!(self, Self::Control | Self::UserDefined | Self::Unknown)
    }
}

/// The tokenizer a GGUF file describes.
#[derive(Debug, Clone, PartialEq)]
pub struct GgufVocab {
    /// `tokenizer.ggml.model`: `gpt2` (byte-level BPE), `llama` (SentencePiece), ...
    pub model: String,
    /// `tokenizer.ggml.pre`: the pre-tokenizer's name (`qwen2`, `smollm`, `llama-bpe`).
    pub pre: Option<String>,
    /// Each token's text, by id.
    pub tokens: Vec<String>,
    /// Each token's type, by id.
    pub types: Vec<TokenType>,
    /// The BPE merges in rank order, each two pieces separated by one space.
    pub merges: Vec<String>,
}

impl GgufVocab {
    /// Reads the tokenizer metadata of the GGUF file at `path`.
    pub fn read(path: &Path) -> Result<Self, ModelError> {
        let invalid = |reason: String| ModelError::InvalidGguf {
            path: path.to_path_buf(),
            reason,
        };
        let content = read_header(path, open_gguf(path)?)?;
        let meta = &content.metadata;
        let model = meta
            .get("tokenizer.ggml.model")
            .and_then(|v| v.to_string().ok())
            .cloned()
            .ok_or_else(|| invalid("no tokenizer.ggml.model in the metadata".into()))?;
        let pre = meta
            .get("tokenizer.ggml.pre")
            .and_then(|v| v.to_string().ok())
            .cloned();
        let strings = |key: &str| -> Result<Vec<String>, ModelError> {
            let Some(value) = meta.get(key) else {
                return Ok(Vec::new());
            };
            let list = value
                .to_vec()
                .map_err(|_| invalid(format!("{key} is not a list")))?;
            list.iter()
                .map(|item| {
                    item.to_string()
                        .cloned()
                        .map_err(|_| invalid(format!("{key} holds a value that is not text")))
                })
                .collect()
        };
        let tokens = strings("tokenizer.ggml.tokens")?;
        if tokens.is_empty() {
            return Err(invalid("no tokenizer.ggml.tokens in the metadata".into()));
        }
        let merges = strings("tokenizer.ggml.merges")?;
        let types = match meta.get("tokenizer.ggml.token_type") {
            None => vec![TokenType::Normal; tokens.len()],
            Some(value) => {
                let list = value
                    .to_vec()
                    .map_err(|_| invalid("tokenizer.ggml.token_type is not a list".into()))?;
                list.iter()
                    .map(|item| TokenType::from_code(code(item)))
                    .collect()
            }
        };
        if types.len() != tokens.len() {
            return Err(invalid(format!(
                "{} token types for {} tokens",
                types.len(),
                tokens.len()
            )));
        }
        Ok(Self {
            model,
            pre,
            tokens,
            types,
            merges,
        })
    }
}

/// A token type code, whatever integer type the file stores it as.
fn code(value: &Value) -> i64 {
    value
        .to_i32()
        .map(i64::from)
        .or_else(|_| value.to_u32().map(i64::from))
        .or_else(|_| value.to_i64())
        .unwrap_or(1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_file_that_is_not_gguf_is_a_clear_error() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("tokenizer.json");
        std::fs::write(&path, "{}").unwrap();
        let error = GgufVocab::read(&path).unwrap_err();
        assert!(error.to_string().contains("GGUF magic"), "{error}");
    }

    #[test]
    fn token_type_codes_follow_llama_cpp() {
        assert_eq!(TokenType::from_code(1), TokenType::Normal);
        assert_eq!(TokenType::from_code(3), TokenType::Control);
        assert_eq!(TokenType::from_code(4), TokenType::UserDefined);
        assert_eq!(TokenType::from_code(5), TokenType::Unused);
        assert!(TokenType::Control.is_matched_whole());
        assert!(TokenType::UserDefined.is_matched_whole());
        assert!(!TokenType::Normal.is_matched_whole());
        assert!(!TokenType::Unused.is_matched_whole());
    }
}
