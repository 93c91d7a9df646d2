//! llguidance as the grammar engine: its token trie over the model's vocabulary with
//! llama.cpp's own tokenizer as the canonical one (so the tokens a grammar forces
//! are spelled as the tokenizer would spell that text), the GBNF rein builds read
//! through its Lark form, and a matcher per generation that masks, consumes and
//! hands out the tokens the grammar forces.

use std::sync::Arc;

use llama_cpp_2::model::LlamaModel;
use llama_cpp_2::sampling::LlamaSampler;
use llama_cpp_2::token::LlamaToken;
use llguidance::toktrie::{self, SimpleVob, TokEnv, TokTrie, TokenizerEnv};
use llguidance::{Matcher, ParserFactory};

use crate::EngineError;
use rein_protocol::Grammar;

/// The model's vocabulary as llguidance sees it, tokenized by llama.cpp.
struct LlamaTokEnv {
    trie: TokTrie,
    model: Arc<LlamaModel>,
}

impl TokenizerEnv for LlamaTokEnv {
    fn tok_trie(&self) -> &TokTrie {
        &self.trie
    }

    /// llama.cpp's tokenization of `s` (no begin token; special tokens as text, user
    /// tokens such as `<tool_call>` whole, as llama.cpp always matches them). Bytes
    /// that are not UTF-8 text are split by the trie instead.
    fn tokenize_bytes(&self, s: &[u8]) -> Vec<toktrie::TokenId> {
        if std::str::from_utf8(s).is_err() {
            return self.trie.greedy_tokenize(s);
        }
        self.model
            .vocab()
            .tokenize(s, false, false)
            .into_iter()
            .map(|t| t.0 as u32)
            .collect()
    }

    fn tokenize_is_canonical(&self) -> bool {
        true
    }
}

/// llguidance's parser factory for `model` (walks the whole vocabulary: a few
/// hundred milliseconds on a 150k vocabulary; built once per engine). The trie is
/// llama-cpp-2's (every token's bytes, control tokens behind llguidance's marker,
/// every end-of-generation token); only the tokenizer behind it is replaced.
pub(crate) fn factory(model: Arc<LlamaModel>) -> Result<ParserFactory, EngineError> {
    let trie = LlamaSampler::llguidance_tok_env(&model).tok_trie().clone();
    let env: TokEnv = Arc::new(LlamaTokEnv { trie, model });
    let mut factory = ParserFactory::new_simple(&env)
        .map_err(|e| EngineError::Grammar(format!("llguidance: {e}")))?;
    factory.quiet();
    Ok(factory)
}

/// A generation's grammar under llguidance.
pub(crate) struct Guided {
    matcher: Matcher,
    /// The mask of the current state, computed once per picked token.
    mask: Option<SimpleVob>,
    /// Whether the tokens the grammar forces are handed out ([`Self::forced`]).
    fast_forward: bool,
}

impl Guided {
    /// Compiles `grammar` (rein's GBNF, read in its Lark form); a lazy grammar is
    /// refused (llguidance has no trigger patterns).
    pub(crate) fn new(
        factory: &ParserFactory,
        grammar: &Grammar,
        fast_forward: bool,
    ) -> Result<Self, EngineError> {
        if !grammar.lazy_triggers.is_empty() {
            return Err(EngineError::Grammar(
                "llguidance has no lazy triggers".into(),
            ));
        }
        let lark = crate::lark::gbnf_to_lark(&grammar.gbnf, &grammar.root)
            .map_err(|e| EngineError::Grammar(format!("llguidance: {}", e.0)))?;
        let top = llguidance::api::TopLevelGrammar::from_lark(lark);
        let parser = factory
            .create_parser(top)
            .map_err(|e| EngineError::Grammar(format!("llguidance: {e}")))?;
        let matcher = Matcher::new(Ok(parser));
        if let Some(error) = matcher.get_error() {
            return Err(EngineError::Grammar(format!("llguidance: {error}")));
        }
        Ok(Self {
            matcher,
            mask: None,
            fast_forward,
        })
    }

    /// The tokens allowed now (only end-of-generation once the grammar is complete);
    /// `None` when the matcher has failed.
    pub(crate) fn mask(&mut self) -> Option<&SimpleVob> {
        if self.mask.is_none() {
            self.mask = self.matcher.compute_mask_or_eos().ok();
        }
        self.mask.as_ref()
    }

    /// Records a picked token.
    pub(crate) fn accept(&mut self, token: LlamaToken) {
        self.mask = None;
        if !self.matcher.is_stopped() {
            let _ = self.matcher.consume_token(token.0 as u32);
        }
    }

    /// The first `max` of the tokens the grammar allows as the only continuation,
    /// consumed (none unless fast-forwarding is on).
    pub(crate) fn forced(&mut self, max: usize) -> Vec<LlamaToken> {
        if !self.fast_forward || self.matcher.is_stopped() {
            return Vec::new();
        }
        let mut tokens = self.matcher.compute_ff_tokens();
        tokens.truncate(max);
        if tokens.is_empty() || self.matcher.consume_tokens(&tokens).is_err() {
            return Vec::new();
        }
        self.mask = None;
        tokens.into_iter().map(|t| LlamaToken(t as i32)).collect()
    }
}
