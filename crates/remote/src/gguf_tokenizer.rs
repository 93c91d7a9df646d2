//! A `tokenizers` tokenizer built from a GGUF file's own vocabulary and merges, with
//! the pre-tokenizer llama.cpp uses for that vocabulary, so that a remote model's
//! tokens are counted as llama.cpp counts them without its `tokenizer.json`.

use std::path::Path;

use rein_models::{GgufVocab, TokenType};
use tokenizers::models::bpe::{Vocab, BPE};
use tokenizers::pre_tokenizers::byte_level::ByteLevel;
use tokenizers::pre_tokenizers::sequence::Sequence;
use tokenizers::pre_tokenizers::split::{Split, SplitPattern};
use tokenizers::pre_tokenizers::PreTokenizerWrapper;
use tokenizers::{AddedToken, SplitDelimiterBehavior, Tokenizer};

/// llama.cpp's splitting expressions for the byte-level BPE pre-tokenizers it names in
/// `tokenizer.ggml.pre`, applied one after another (llama-vocab.cpp).
fn split_expressions(pre: &str) -> Option<&'static [&'static str]> {
    const GPT2: &str = r"'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)";
    const QWEN2: &str = r"(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+";
    const LLAMA3: &str = r"(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+";
    match pre {
        "qwen2" | "deepseek-r1-qwen" | "stablelm2" | "hunyuan" => Some(&[QWEN2]),
        "llama3" | "llama-bpe" | "llama-v3" | "dbrx" | "smaug-bpe" => Some(&[LLAMA3]),
        "smollm" | "starcoder" | "refact" | "command-r" | "codeshell" | "exaone" | "minerva-7b" => {
            Some(&[r"\p{N}", GPT2])
        }
        "gpt-2" | "gpt2" | "mpt" | "olmo" | "jais" | "trillion" => Some(&[GPT2]),
        _ => None,
    }
}

/// The pre-tokenizer names this builder knows, for the error that names them.
const KNOWN: &str = "qwen2, llama-bpe, smollm, starcoder, gpt-2";

/// The tokenizer of the GGUF file at `path`.
pub fn from_gguf(path: &Path) -> Result<Tokenizer, String> {
    let vocab = GgufVocab::read(path).map_err(|e| e.to_string())?;
    build(&vocab).map_err(|reason| format!("{}: {reason}", path.display()))
}

/// Builds the tokenizer `vocab` describes: byte-level BPE over llama.cpp's splits, and
/// every control, user-defined and unknown token matched whole (as llama.cpp does
/// when it parses special tokens).
pub fn build(vocab: &GgufVocab) -> Result<Tokenizer, String> {
    if vocab.model != "gpt2" {
        return Err(format!(
            "its vocabulary is of type `{}`; a tokenizer is built only from byte-level BPE (`gpt2`) vocabularies — pass the model's tokenizer.json instead",
            vocab.model
        ));
    }
    let pre = vocab.pre.as_deref().unwrap_or("gpt-2");
    let expressions = split_expressions(pre).ok_or_else(|| {
        format!("its pre-tokenizer `{pre}` is not one rein knows ({KNOWN}); pass the model's tokenizer.json instead")
    })?;
    let mut ids = Vocab::with_capacity(vocab.tokens.len());
    for (id, (token, kind)) in vocab.tokens.iter().zip(&vocab.types).enumerate() {
        if *kind == TokenType::Unused {
            continue;
        }
        let id = u32::try_from(id).map_err(|_| "the vocabulary is too large".to_string())?;
        ids.entry(token.clone()).or_insert(id);
    }
    let merges = vocab
        .merges
        .iter()
        .map(|merge| {
            merge
                .split_once(' ')
                .map(|(a, b)| (a.to_string(), b.to_string()))
                .ok_or_else(|| format!("a merge without two parts: `{merge}`"))
        })
        .collect::<Result<Vec<_>, _>>()?;
    let model = BPE::builder()
        .vocab_and_merges(ids, merges)
        .build()
        .map_err(|e| format!("its merges do not fit its vocabulary: {e}"))?;
    let mut steps: Vec<PreTokenizerWrapper> = Vec::new();
    for expression in expressions {
        let pattern = SplitPattern::Regex((*expression).to_string());
        let split = Split::new(pattern, SplitDelimiterBehavior::Isolated, false)
            .map_err(|e| format!("a split expression does not compile: {e}"))?;
        steps.push(split.into());
    }
    steps.push(ByteLevel::new(false, false, false).into());
    let mut tokenizer = Tokenizer::new(model);
    tokenizer.with_pre_tokenizer(Some(Sequence::new(steps)));
    let whole: Vec<AddedToken> = vocab
        .tokens
        .iter()
        .zip(&vocab.types)
        .filter(|(_, kind)| kind.is_matched_whole())
        .map(|(token, _)| AddedToken::from(token.clone(), true))
        .collect();
    tokenizer
        .add_special_tokens(whole)
        .map_err(|e| format!("its special tokens cannot be added: {e}"))?;
    Ok(tokenizer)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn vocab(model: &str, pre: Option<&str>) -> GgufVocab {
        // Byte-level pieces: `Ġ` is a space.
        let tokens = ["a", "b", "ab", "Ġ", "Ġab", "<|end|>", "1", "2"];
        GgufVocab {
            model: model.into(),
            pre: pre.map(str::to_string),
            tokens: tokens.iter().map(|t| t.to_string()).collect(),
            types: tokens
                .iter()
                .map(|t| match *t {
                    "<|end|>" => TokenType::Control,
                    _ => TokenType::Normal,
                })
                .collect(),
            merges: vec!["a b".into(), "Ġ ab".into()],
        }
    }

    fn ids(tokenizer: &Tokenizer, text: &str) -> Vec<u32> {
        tokenizer.encode(text, false).unwrap().get_ids().to_vec()
    }

    #[test]
    fn merges_apply_by_rank_and_control_tokens_match_whole() {
        let tokenizer = build(&vocab("gpt2", Some("qwen2"))).unwrap();
        assert_eq!(ids(&tokenizer, "ab ab"), vec![2, 4]);
        assert_eq!(ids(&tokenizer, "ab<|end|>ab"), vec![2, 5, 2]);
    }

    #[test]
    fn digits_split_one_by_one_where_llama_cpp_splits_them() {
        let tokenizer = build(&vocab("gpt2", Some("smollm"))).unwrap();
        assert_eq!(ids(&tokenizer, "12"), vec![6, 7]);
    }

    #[test]
    fn unknown_kinds_are_clear_errors() {
        let error = build(&vocab("llama", None)).unwrap_err();
        assert!(
            error.contains("`llama`") && error.contains("tokenizer.json"),
            "{error}"
        );
        let error = build(&vocab("gpt2", Some("mystery"))).unwrap_err();
        assert!(
            error.contains("`mystery`") && error.contains("qwen2"),
            "{error}"
        );
    }
}
