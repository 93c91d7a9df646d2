//! One generation in progress: its sampler, stop matching, streamed text, and the
//! tokens of its KV sequence. The worker advances all of them together, one pick
//! each per batched `decode` (with the tokens the grammar forced after it).

use std::time::{Duration, Instant};

use llama_cpp_2::model::LlamaModel;
use llama_cpp_2::token::LlamaToken;
use tokio::sync::mpsc;

use crate::sampler::TokenPicker;
use crate::stop::{StopMatcher, StopScan};
use crate::utf8::Utf8Stream;
use crate::{EngineError, GenerateEvent, GenerateOutput, StopReason, TokenId};

/// Where a generation's events go.
pub(crate) type Events = mpsc::UnboundedSender<Result<GenerateEvent, EngineError>>;

/// A generation between its prefill and its stop.
pub(crate) struct Active {
    /// The KV sequence.
    pub(crate) seq: i32,
    /// The tokens in the sequence's KV cache.
    pub(crate) cached: Vec<TokenId>,
    /// Tokens picked (or forced by the grammar) and not yet decoded, in order; the
    /// last one's logits give the next pick.
    pub(crate) pending: Vec<LlamaToken>,
    pub(crate) picker: TokenPicker,
    utf8: Utf8Stream,
    stops: StopMatcher,
    text: String,
    generated: Vec<TokenId>,
    max_tokens: usize,
    ignore_eog: bool,
    events: Events,
    prompt_tokens: usize,
    reused_tokens: usize,
    shared_tokens: usize,
    loaded_tokens: usize,
    mixed_tokens: usize,
    started: Instant,
    prefill_time: Duration,
    /// Tokens drafted for this generation, and the ones the sampler kept.
    pub(crate) drafted: usize,
    pub(crate) accepted: usize,
    /// Where in `generated` the tokens the grammar forced (appended without
    /// sampling) are.
    forced: Vec<usize>,
}

/// What the prefill leaves for the generation.
pub(crate) struct Prefilled {
    pub(crate) seq: i32,
    pub(crate) cached: Vec<TokenId>,
    pub(crate) prompt_tokens: usize,
    pub(crate) reused_tokens: usize,
    pub(crate) shared_tokens: usize,
    pub(crate) loaded_tokens: usize,
    /// Prompt tokens evaluated in decodes shared with running generations' steps.
    pub(crate) mixed_tokens: usize,
    pub(crate) started: Instant,
    pub(crate) prefill_time: Duration,
}

impl Active {
    pub(crate) fn new(
        prefilled: Prefilled,
        picker: TokenPicker,
        stop: &[String],
        max_tokens: u32,
        ignore_eog: bool,
        events: Events,
    ) -> Self {
        Self {
            seq: prefilled.seq,
            cached: prefilled.cached,
            pending: Vec::new(),
            picker,
            utf8: Utf8Stream::default(),
            stops: StopMatcher::new(stop),
            text: String::new(),
            generated: Vec::new(),
            max_tokens: max_tokens as usize,
            ignore_eog,
            events,
            prompt_tokens: prefilled.prompt_tokens,
            reused_tokens: prefilled.reused_tokens,
            shared_tokens: prefilled.shared_tokens,
            loaded_tokens: prefilled.loaded_tokens,
            mixed_tokens: prefilled.mixed_tokens,
            started: prefilled.started,
            prefill_time: prefilled.prefill_time,
            drafted: 0,
            accepted: 0,
            forced: Vec::new(),
        }
    }

    /// Whether nobody listens any more (the stream was dropped).
    pub(crate) fn abandoned(&self) -> bool {
        self.events.is_closed()
    }

    /// Whether the token budget is spent before anything is sampled.
    pub(crate) fn budget_spent(&self) -> bool {
        self.generated.len() >= self.max_tokens
    }

    /// At most `max` tokens drafted to follow the pending tokens — by `draft_model`
    /// when there is one, else by prompt lookup: no more than the generation may still
    /// produce after them, nor than its context still holds.
    pub(crate) fn draft(
        &self,
        max: usize,
        n_ctx: usize,
        draft_model: Option<&mut crate::draft_model::DraftModel<'_>>,
    ) -> Vec<TokenId> {
        let left = self.max_tokens.saturating_sub(self.generated.len() + 1);
        let room = n_ctx.saturating_sub(self.cached.len() + self.pending.len() + 1);
        let max = max.min(left).min(room);
        if max == 0 {
            return Vec::new();
        }
        let mut sequence = Vec::with_capacity(self.cached.len() + self.pending.len());
        sequence.extend_from_slice(&self.cached);
        sequence.extend(self.pending.iter().map(|t| t.0));
        match draft_model {
            Some(model) => model.draft(self.seq, &sequence, max),
            None => crate::lookup::draft(&sequence, max),
        }
    }

    /// Takes a sampled token: streams its text, and says whether the generation stops
    /// here. Otherwise the token is pending, to be decoded in the next step.
    pub(crate) fn accept(
        &mut self,
        model: &LlamaModel,
        token: LlamaToken,
        n_ctx: usize,
    ) -> Option<StopReason> {
        if !self.ignore_eog && model.vocab().is_eog(token) {
            return Some(StopReason::EndOfGeneration);
        }
        self.generated.push(token.0);
        let piece = model.vocab().token_to_piece(token, false, None);
        if self.picker.masks() && piece.iter().any(|b| !b.is_ascii_whitespace()) {
            // The reply says something: it may end from here on.
            self.picker.unmask();
        }
        match self.stops.push(&self.utf8.push(&piece)) {
            StopScan::Continue(chunk) => {
                if !self.emit(chunk) {
                    return Some(StopReason::Cancelled);
                }
            }
            StopScan::Stopped(chunk, stop) => {
                self.emit(chunk);
                return Some(StopReason::StopString(stop));
            }
        }
        if self.generated.len() >= self.max_tokens {
            return Some(StopReason::MaxTokens);
        }
        // A benchmark's fixed token count (`ignore_eog`) runs on regardless.
        if !self.ignore_eog && crate::repetition::loops(&self.generated) {
            return Some(StopReason::Loop);
        }
        if self.cached.len() + self.pending.len() + 1 > n_ctx {
            return Some(StopReason::ContextFull);
        }
        self.pending.push(token);
        None
    }

    /// Takes the tokens the grammar forces after the last pick, at most `max` (none
    /// unless the grammar engine fast-forwards), each as [`Self::accept`] takes a
    /// sampled one; says whether the generation stops on one of them.
    pub(crate) fn accept_forced(
        &mut self,
        model: &LlamaModel,
        n_ctx: usize,
        max: usize,
    ) -> Option<StopReason> {
        for token in self.picker.forced(max) {
            self.forced.push(self.generated.len());
            if let Some(reason) = self.accept(model, token, n_ctx) {
                return Some(reason);
            }
        }
        None
    }

    /// Sends the text still held back and the final result; returns the sequence and
    /// its cached tokens.
    pub(crate) fn finish(mut self, reason: StopReason) -> (i32, Vec<TokenId>) {
        if !matches!(reason, StopReason::StopString(_)) {
            let rest = self.utf8.finish();
            let mut tail = match self.stops.push(&rest) {
                StopScan::Continue(chunk) | StopScan::Stopped(chunk, _) => chunk,
            };
            tail.push_str(&self.stops.flush());
            self.emit(tail);
        }
        let elapsed = self.started.elapsed();
        let _ = self.events.send(Ok(GenerateEvent::Done(GenerateOutput {
            text: std::mem::take(&mut self.text),
            tokens: std::mem::take(&mut self.generated),
            stop_reason: reason,
            prompt_tokens: self.prompt_tokens,
            reused_tokens: self.reused_tokens,
            shared_tokens: self.shared_tokens,
            loaded_tokens: self.loaded_tokens,
            mixed_tokens: self.mixed_tokens,
            prefill_time: self.prefill_time,
            decode_time: elapsed.saturating_sub(self.prefill_time),
            drafted_tokens: self.drafted,
            accepted_tokens: self.accepted,
            forced_tokens: self.forced.len(),
            forced_positions: std::mem::take(&mut self.forced),
            grammar_engine: self.picker.grammar_engine(),
        })));
        (self.seq, self.cached)
    }

    /// Reports an error; returns the sequence (its cache is no longer trusted).
    pub(crate) fn fail(self, error: EngineError) -> i32 {
        let _ = self.events.send(Err(error));
        self.seq
    }

    fn emit(&mut self, chunk: String) -> bool {
        if chunk.is_empty() {
            return true;
        }
        self.text.push_str(&chunk);
        self.events.send(Ok(GenerateEvent::Text(chunk))).is_ok()
    }
}
