//! Drafts for speculative decoding from a smaller model that shares the target's
//! tokenizer (Qwen2.5-Coder 0.5B drafting for 1.5B): it keeps a KV sequence of its own
//! for every session, brought up to the target's tokens before each draft, and guesses
//! the next tokens greedily, one decode each. Like prompt lookup's drafts, they are
//! only guesses: the worker keeps a drafted token only where its own sampler picks it
//! (see `worker::step`), so the output does not depend on the draft model.

use llama_cpp_2::context::params::LlamaContextParams;
use llama_cpp_2::context::LlamaContext;
use llama_cpp_2::llama_batch::LlamaBatch;
use llama_cpp_2::model::LlamaModel;
use llama_cpp_2::token::LlamaToken;

use crate::backend::backend;
use crate::kv;
use crate::{EngineError, TokenId};

/// A draft model's context and what each of its sequences holds.
pub(crate) struct DraftModel<'m> {
    model: &'m LlamaModel,
    ctx: LlamaContext<'m>,
    batch: LlamaBatch<'static>,
    n_batch: usize,
    /// The tokens each sequence holds in the draft model's KV cache, by sequence id.
    cached: Vec<Vec<TokenId>>,
}

impl<'m> DraftModel<'m> {
    /// A context of the model's shape (`params`: context size, batch, threads,
    /// sequences; f16 KV cache) for `model`, refused when its tokenizer is not
    /// `target`'s.
    pub(crate) fn new(
        model: &'m LlamaModel,
        target: &LlamaModel,
        params: LlamaContextParams,
    ) -> Result<Self, EngineError> {
        same_tokenizer(model, target).map_err(|reason| {
            EngineError::DraftModel(format!("{reason}; pick a smaller model of the same family"))
        })?;
        let n_batch = params.n_batch() as usize;
        let sessions = params.n_seq_max() as usize;
        let ctx = model
            .new_context(backend()?, params)
            .map_err(|e| EngineError::DraftModel(format!("its context: {e}")))?;
        Ok(Self {
            model,
            ctx,
            batch: LlamaBatch::new(n_batch, 1),
            n_batch,
            cached: vec![Vec::new(); sessions],
        })
    }

    /// Up to `max` tokens the draft model expects after `sequence` (the tokens of
    /// sequence `seq` so far, its pending one last), greedily; empty when it cannot say.
    pub(crate) fn draft(&mut self, seq: i32, sequence: &[TokenId], max: usize) -> Vec<TokenId> {
        if max == 0 || sequence.is_empty() {
            return Vec::new();
        }
        match self.try_draft(seq, sequence, max) {
            Ok(draft) => draft,
            Err(reason) => {
                // A draft is only an optimization: the step goes on without one.
                tracing::debug!(seq, %reason, "no draft from the draft model");
                self.forget(seq);
                Vec::new()
            }
        }
    }

    fn try_draft(
        &mut self,
        seq: i32,
        sequence: &[TokenId],
        max: usize,
    ) -> Result<Vec<TokenId>, String> {
        let index = usize::try_from(seq)
            .ok()
            .filter(|&i| i < self.cached.len())
            .ok_or("a sequence the draft model has no room for")?;
        let n_ctx = self.ctx.n_ctx() as usize;
        let max = max.min(n_ctx.saturating_sub(sequence.len() + 1));
        if max == 0 {
            return Ok(Vec::new());
        }
        // Only the sequence's last token may be re-decoded: its logits start the draft.
        let common = kv::keep_common_prefix(
            &mut self.ctx,
            seq,
            &mut self.cached[index],
            &sequence[..sequence.len() - 1],
        );
        self.make_room(index, sequence.len() - common + max);
        let mut draft = Vec::with_capacity(max);
        self.decode(seq, &sequence[common..])?;
        self.cached[index].extend_from_slice(&sequence[common..]);
        loop {
            let token = self.greedy();
            if self.model.vocab().is_eog(LlamaToken(token)) {
                break;
            }
            draft.push(token);
            if draft.len() == max {
                break;
            }
            self.decode(seq, &[token])?;
            self.cached[index].push(token);
        }
        Ok(draft)
    }

    /// Evaluates `tokens` of `seq` after what it holds, logits for the last one.
    fn decode(&mut self, seq: i32, tokens: &[TokenId]) -> Result<(), String> {
        let start = self.cached.get(seq as usize).map_or(0, Vec::len);
        let mut done = 0;
        for chunk in tokens.chunks(self.n_batch) {
            self.batch.clear();
            for (i, &token) in chunk.iter().enumerate() {
                let last = done + i + 1 == tokens.len();
                self.batch
                    .add(LlamaToken(token), (start + done + i) as i32, &[seq], last)
                    .map_err(|e| e.to_string())?;
            }
            self.ctx
                .decode(&mut self.batch)
                .map_err(|e| e.to_string())?;
            done += chunk.len();
        }
        Ok(())
    }

    /// The most likely token after the batch's last logits.
    fn greedy(&self) -> TokenId {
        let logits = self.ctx.get_logits_ith(self.batch.n_tokens() - 1);
        logits
            .iter()
            .enumerate()
            .max_by(|a, b| a.1.total_cmp(b.1))
            .map_or(0, |(token, _)| token as TokenId)
    }

    /// Clears other sequences, those holding the most first, until `needed` more
    /// tokens of sequence `index` fit in the context.
    fn make_room(&mut self, index: usize, needed: usize) {
        let n_ctx = self.ctx.n_ctx() as usize;
        loop {
            let used: usize = self.cached.iter().map(Vec::len).sum();
            if used + needed <= n_ctx {
                return;
            }
            let largest = (0..self.cached.len())
                .filter(|&i| i != index && !self.cached[i].is_empty())
                .max_by_key(|&i| self.cached[i].len());
            let Some(other) = largest else {
                return;
            };
            self.forget(other as i32);
        }
    }

    /// Empties sequence `seq` of the draft model's cache.
    fn forget(&mut self, seq: i32) {
        kv::clear(&mut self.ctx, seq);
        if let Some(cached) = usize::try_from(seq)
            .ok()
            .and_then(|i| self.cached.get_mut(i))
        {
            cached.clear();
        }
    }
}

/// Whether `draft` reads and writes tokens exactly as `target` does: the same
/// vocabulary, token by token, and the same special tokens; otherwise why not (said
/// of `draft`, "it", against "the model").
pub(crate) fn same_tokenizer(draft: &LlamaModel, target: &LlamaModel) -> Result<(), String> {
    let (d, t) = (draft.n_vocab(), target.n_vocab());
    if d != t {
        return Err(format!(
            "it does not share the model's tokenizer: {d} tokens in its vocabulary against {t}"
        ));
    }
    let (dv, tv) = (draft.vocab(), target.vocab());
    if dv.bos() != tv.bos() || dv.eos() != tv.eos() {
        return Err(
            "it does not share the model's tokenizer: its begin and end tokens differ".into(),
        );
    }
    let differs = (0..t).map(LlamaToken).find(|&token| {
        dv.token_to_piece(token, true, None) != tv.token_to_piece(token, true, None)
    });
    match differs {
        Some(token) => Err(format!(
            "it does not share the model's tokenizer: token {} is {:?} in it and {:?} in the model",
            token.0,
            String::from_utf8_lossy(&dv.token_to_piece(token, true, None)),
            String::from_utf8_lossy(&tv.token_to_piece(token, true, None)),
        )),
        None => Ok(()),
    }
}
