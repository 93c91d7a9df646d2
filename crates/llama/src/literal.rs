//! Tokenizing a rendered prompt so that only the template's own markers become
//! control tokens: the byte ranges that came from content (see
//! `rein_format::PreparedTurn::literal`) are tokenized as plain text, cut into pieces
//! until no piece is a control or user-defined token.
//!
//! llama.cpp tokenizes the text between special tokens fragment by fragment, so
//! cutting the prompt at a range's edges leaves every token outside the range as it
//! was: only the range itself changes, from one control token to plain pieces.

use std::ops::Range;

use llama_cpp_2::token::LlamaToken;
use llama_cpp_2::token_type::LlamaTokenAttr;
use llama_cpp_2::vocab::LlamaVocab;

use crate::ControlToken;

/// Whether `token` is a marker of the conversation's structure, never allowed from
/// content: a control token (made from its text when special tokens are parsed), or a
/// user-defined token spelled like a tag (`<tool_call>`, `[TOOL_CALLS]`; matched even
/// without special parsing). User-defined runs of whitespace (Gemma's `\n\n`, its
/// indentation tokens) are text.
fn is_marker(vocab: &LlamaVocab<'_>, token: LlamaToken) -> bool {
    let attr = vocab.attr(token);
    if attr.contains(LlamaTokenAttr::Control) {
        return true;
    }
    attr.contains(LlamaTokenAttr::UserDefined)
        && vocab
            .text(token)
            .and_then(|t| t.to_str().ok())
            .is_some_and(|t| !t.is_empty() && !t.chars().any(char::is_whitespace))
}

/// The model's structure markers (see [`is_marker`]) with their texts.
pub(crate) fn control_tokens(vocab: &LlamaVocab<'_>) -> Vec<ControlToken> {
    vocab
        .tokens()
        .filter(|&t| is_marker(vocab, t))
        .filter_map(|t| {
            let text = vocab.text(t)?.to_string_lossy().into_owned();
            (!text.is_empty()).then_some(ControlToken { id: t.0, text })
        })
        .collect()
}

/// `text` tokenized with special tokens parsed, except the byte ranges `literal`,
/// which are plain text; BOS first when `add_special` and the model wants it.
pub(crate) fn tokenize_rendered(
    vocab: &LlamaVocab<'_>,
    text: &str,
    literal: &[Range<usize>],
    add_special: bool,
) -> Vec<LlamaToken> {
    if literal.is_empty() {
        return vocab.tokenize(text.as_bytes(), add_special, true);
    }
    let mut out = Vec::new();
    if add_special && vocab.should_add_bos() {
        out.push(vocab.bos());
    }
    let mut at = 0;
    for range in literal {
        let (start, end) = (range.start.max(at), range.end.min(text.len()));
        if start >= end || !text.is_char_boundary(start) || !text.is_char_boundary(end) {
            continue;
        }
        out.extend(vocab.tokenize(&text.as_bytes()[at..start], false, true));
        out.extend(plain_tokens(vocab, &text[start..end]));
        at = end;
    }
    out.extend(vocab.tokenize(&text.as_bytes()[at..], false, true));
    out
}

/// `text` as tokens none of which is a control or user-defined token: tokenized
/// without special parsing, and where that still yields one (user-defined tokens
/// match regardless), cut after its first character and tried again.
fn plain_tokens(vocab: &LlamaVocab<'_>, text: &str) -> Vec<LlamaToken> {
    let tokens = vocab.tokenize(text.as_bytes(), false, false);
    if !tokens.iter().any(|&t| is_marker(vocab, t)) {
        return tokens;
    }
    let Some(first) = text.chars().next() else {
        return tokens;
    };
    let (head, rest) = text.split_at(first.len_utf8());
    if rest.is_empty() {
        // One character that is itself a marker token: its bytes, as the model's
        // byte tokens would spell them, cannot be had here; keep the plain result.
        return tokens;
    }
    let mut out = plain_tokens(vocab, head);
    out.extend(plain_tokens(vocab, rest));
    out
}
