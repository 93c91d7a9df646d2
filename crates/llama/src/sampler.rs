//! Builds llama.cpp's sampler chain from [`SamplingParams`], and samples under a
//! grammar "check first": the unconstrained choice is tested against the grammar and
//! the grammar is applied to the whole vocabulary only when that choice is rejected
//! (llama.cpp's grammar sampler costs tens of milliseconds per full-vocabulary pass on
//! a 150k vocabulary).

use llama_cpp_2::context::LlamaContext;
use llama_cpp_2::model::LlamaModel;
use llama_cpp_2::sampling::LlamaSampler;
use llama_cpp_2::token::data::LlamaTokenData;
use llama_cpp_2::token::data_array::LlamaTokenDataArray;
use llama_cpp_2::token::LlamaToken;

use crate::{EngineError, SamplingParams};
use rein_protocol::Grammar;

/// The chain llama.cpp's own tools use: penalties, top-k, top-p, min-p, temperature,
/// then a seeded draw; greedy when the temperature is 0.
pub(crate) fn build_sampler(params: &SamplingParams, n_vocab: i32) -> LlamaSampler {
    let mut chain = Vec::new();
    if params.repeat_penalty != 1.0 && params.repeat_last_n != 0 {
        chain.push(LlamaSampler::penalties(
            n_vocab,
            params.repeat_last_n,
            params.repeat_penalty,
            0.0,
            0.0,
        ));
    }
    if params.temperature <= 0.0 {
        chain.push(LlamaSampler::greedy());
        return LlamaSampler::chain_simple(chain);
    }
    if params.top_k > 0 {
        chain.push(LlamaSampler::top_k(params.top_k));
    }
    if params.top_p < 1.0 {
        chain.push(LlamaSampler::top_p(params.top_p, 1));
    }
    if params.min_p > 0.0 {
        chain.push(LlamaSampler::min_p(params.min_p, 1));
    }
    chain.push(LlamaSampler::temp(params.temperature));
    chain.push(LlamaSampler::dist(params.seed));
    LlamaSampler::chain_simple(chain)
}

/// Compiles `grammar` for `model` with llama.cpp's GBNF sampler.
pub(crate) fn build_grammar(
    model: &LlamaModel,
    grammar: &Grammar,
) -> Result<LlamaSampler, EngineError> {
    let result = if grammar.lazy_triggers.is_empty() {
        LlamaSampler::grammar(model, &grammar.gbnf, &grammar.root)
    } else {
        LlamaSampler::grammar_lazy_patterns(
            model,
            &grammar.gbnf,
            &grammar.root,
            &grammar.lazy_triggers,
            &[],
        )
    };
    result.map_err(|e| EngineError::Grammar(e.to_string()))
}

/// The grammar a generation is held to: llama.cpp's GBNF sampler, or an llguidance
/// matcher (which can also say which tokens the grammar forces).
pub(crate) enum Constraint {
    Gbnf(LlamaSampler),
    #[cfg(feature = "llguidance")]
    Guided(Box<crate::guidance::Guided>),
}

impl Constraint {
    /// The library holding the grammar.
    pub(crate) fn engine(&self) -> crate::GrammarEngine {
        match self {
            Constraint::Gbnf(_) => crate::GrammarEngine::Gbnf,
            #[cfg(feature = "llguidance")]
            Constraint::Guided(_) => crate::GrammarEngine::Llguidance,
        }
    }

    /// Whether `token` (with its `logit`) may come next.
    fn allows(&mut self, token: LlamaToken, logit: f32) -> bool {
        match self {
            Constraint::Gbnf(sampler) => {
                let mut single =
                    LlamaTokenDataArray::new(vec![LlamaTokenData::new(token, logit, 0.0)], false);
                single.apply_sampler(sampler);
                single.data.first().is_some_and(|d| d.logit().is_finite())
            }
            #[cfg(feature = "llguidance")]
            Constraint::Guided(guided) => guided
                .mask()
                .is_some_and(|mask| mask.is_allowed(token.0 as u32)),
        }
    }

    /// Sets every candidate the grammar does not allow to minus infinity.
    fn restrict(&mut self, candidates: &mut LlamaTokenDataArray) {
        match self {
            Constraint::Gbnf(sampler) => candidates.apply_sampler(sampler),
            #[cfg(feature = "llguidance")]
            Constraint::Guided(guided) => {
                let mask = guided.mask();
                for data in candidates.data.iter_mut() {
                    let id = data.id().0 as u32;
                    if !mask.is_some_and(|mask| mask.is_allowed(id)) {
                        data.set_logit(f32::NEG_INFINITY);
                    }
                }
            }
        }
    }

    fn accept(&mut self, token: LlamaToken) {
        match self {
            Constraint::Gbnf(sampler) => sampler.accept(token),
            #[cfg(feature = "llguidance")]
            Constraint::Guided(guided) => guided.accept(token),
        }
    }
}

/// Picks the next token: the chain alone, or the chain checked against `grammar`;
/// tokens masked (end-of-generation while the reply is still blank) are never picked.
pub(crate) struct TokenPicker {
    chain: LlamaSampler,
    grammar: Option<Constraint>,
    /// Chosen when a grammar leaves no token at all.
    fallback: LlamaToken,
    /// Tokens that may not be picked now.
    masked: Vec<LlamaToken>,
    /// How often the unconstrained choice was rejected by the grammar.
    pub(crate) resamples: usize,
}

impl TokenPicker {
    pub(crate) fn new(
        chain: LlamaSampler,
        grammar: Option<Constraint>,
        fallback: LlamaToken,
    ) -> Self {
        Self {
            chain,
            grammar,
            fallback,
            masked: Vec::new(),
            resamples: 0,
        }
    }

    /// From now on `tokens` are not picked, until [`Self::unmask`].
    pub(crate) fn mask(&mut self, tokens: Vec<LlamaToken>) {
        self.masked = tokens;
    }

    /// Every token may be picked again.
    pub(crate) fn unmask(&mut self) {
        self.masked.clear();
    }

    /// The library holding the grammar, if there is one.
    pub(crate) fn grammar_engine(&self) -> Option<crate::GrammarEngine> {
        self.grammar.as_ref().map(Constraint::engine)
    }

    /// Whether some tokens are masked.
    pub(crate) fn masks(&self) -> bool {
        !self.masked.is_empty()
    }

    /// Samples from the logits of batch position `idx` and records the choice.
    pub(crate) fn pick(&mut self, ctx: &LlamaContext<'_>, idx: i32) -> LlamaToken {
        if self.grammar.is_none() && self.masked.is_empty() {
            return self.chain.sample(ctx, idx);
        }
        let mut candidates = masked_candidates(ctx, idx, &self.masked);
        candidates.apply_sampler(&mut self.chain);
        let first = candidates.selected_token();
        let Some(grammar) = self.grammar.as_mut() else {
            let token = first.unwrap_or(self.fallback);
            self.chain.accept(token);
            return token;
        };
        let allowed = first.is_some_and(|token| {
            let logit = ctx
                .get_logits_ith(idx)
                .get(token.0 as usize)
                .copied()
                .unwrap_or(0.0);
            grammar.allows(token, logit)
        });
        let token = match first {
            Some(token) if allowed => token,
            _ => {
                self.resamples += 1;
                let mut constrained = masked_candidates(ctx, idx, &self.masked);
                grammar.restrict(&mut constrained);
                constrained.apply_sampler(&mut self.chain);
                constrained.selected_token().unwrap_or(self.fallback)
            }
        };
        grammar.accept(token);
        self.chain.accept(token);
        token
    }

    /// At most `max` of the tokens the grammar forces next (llguidance only, when
    /// fast-forwarding), recorded as picked: they are the generation's next tokens,
    /// decoded without sampling.
    pub(crate) fn forced(&mut self, max: usize) -> Vec<LlamaToken> {
        #[cfg(feature = "llguidance")]
        if let Some(Constraint::Guided(guided)) = self.grammar.as_mut() {
            let tokens = guided.forced(max);
            for &token in &tokens {
                self.chain.accept(token);
            }
            return tokens;
        }
        let _ = max;
        Vec::new()
    }
}

/// The candidates at batch position `idx` in vocabulary order, `masked` ones at minus
/// infinity.
fn masked_candidates(
    ctx: &LlamaContext<'_>,
    idx: i32,
    masked: &[LlamaToken],
) -> LlamaTokenDataArray {
    let mut candidates = ctx.token_data_array_ith(idx);
    for token in masked {
        if let Some(data) = candidates.data.get_mut(token.0 as usize) {
            data.set_logit(f32::NEG_INFINITY);
        }
    }
    candidates
}
