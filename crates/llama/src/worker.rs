//! The owner thread of one loaded model. `LlamaContext` is not `Send`, so the model,
//! its context and every session's KV sequence live on this thread; the rest of rein
//! talks to it through channels.

use std::num::NonZeroU32;
use std::sync::mpsc::Receiver;
use std::time::Instant;

use llama_cpp_2::context::params::LlamaContextParams;
use llama_cpp_2::context::LlamaContext;
use llama_cpp_2::llama_batch::LlamaBatch;
use llama_cpp_2::model::params::LlamaModelParams;
use llama_cpp_2::model::LlamaModel;
use llama_cpp_2::token::LlamaToken;
use tokio::sync::{mpsc, oneshot};

use crate::backend::backend;
use crate::sampler::{build_grammar, build_sampler, TokenPicker};
use crate::stop::{StopMatcher, StopScan};
use crate::utf8::Utf8Stream;
use crate::{
    EngineConfig, EngineError, GenerateEvent, GenerateOutput, GenerateRequest, ModelInfo, Prompt,
    StopReason, TokenId,
};

/// Largest context chosen when the user does not set one.
const DEFAULT_MAX_CTX: u32 = 4096;

/// Requests the owner thread serves.
pub(crate) enum Command {
    Tokenize {
        text: String,
        add_special: bool,
        reply: oneshot::Sender<Vec<TokenId>>,
    },
    Detokenize {
        tokens: Vec<TokenId>,
        reply: oneshot::Sender<Result<String, EngineError>>,
    },
    OpenSession {
        reply: oneshot::Sender<Result<i32, EngineError>>,
    },
    CloseSession {
        seq: i32,
    },
    Generate {
        seq: i32,
        request: GenerateRequest,
        events: mpsc::UnboundedSender<Result<GenerateEvent, EngineError>>,
    },
}

/// Loads the model, reports readiness, then serves commands until every handle is gone.
pub(crate) fn run(
    config: EngineConfig,
    ready: oneshot::Sender<Result<ModelInfo, EngineError>>,
    commands: Receiver<Command>,
) {
    let loaded = load(&config);
    let model = match loaded {
        Ok(model) => model,
        Err(e) => {
            let _ = ready.send(Err(e));
            return;
        }
    };
    let mut worker = match Worker::new(&config, &model) {
        Ok(worker) => worker,
        Err(e) => {
            let _ = ready.send(Err(e));
            return;
        }
    };
    if ready.send(Ok(worker.info(&config))).is_err() {
        return;
    }
    while let Ok(command) = commands.recv() {
        worker.handle(command);
    }
}

fn load(config: &EngineConfig) -> Result<LlamaModel, EngineError> {
    let backend = backend()?;
    let params = LlamaModelParams::default()
        .with_n_gpu_layers(config.gpu_layers)
        .with_use_mmap(config.use_mmap);
    LlamaModel::load_from_file(backend, &config.model_path, &params).map_err(|e| {
        EngineError::ModelLoad {
            path: config.model_path.clone(),
            reason: e.to_string(),
        }
    })
}

struct Worker<'m> {
    model: &'m LlamaModel,
    ctx: LlamaContext<'m>,
    batch: LlamaBatch<'static>,
    n_batch: usize,
    threads: u32,
    /// The tokens in each sequence's KV cache; `None` = slot free.
    sessions: Vec<Option<Vec<TokenId>>>,
}

impl<'m> Worker<'m> {
    fn new(config: &EngineConfig, model: &'m LlamaModel) -> Result<Self, EngineError> {
        let backend = backend()?;
        let n_ctx = config
            .n_ctx
            .unwrap_or_else(|| model.n_ctx_train().clamp(1, DEFAULT_MAX_CTX));
        let threads = config.threads.unwrap_or_else(|| {
            std::thread::available_parallelism()
                .map(|n| n.get() as u32)
                .unwrap_or(1)
        });
        let n_batch = config.n_batch.clamp(1, n_ctx.max(1));
        let sessions = config.max_sessions.max(1);
        let params = LlamaContextParams::default()
            .with_n_ctx(NonZeroU32::new(n_ctx))
            .with_n_batch(n_batch)
            .with_n_ubatch(n_batch)
            .with_n_threads(threads as i32)
            .with_n_threads_batch(threads as i32)
            .with_n_seq_max(sessions)
            .with_kv_unified(true);
        let ctx = model
            .new_context(backend, params)
            .map_err(|e| EngineError::Context {
                n_ctx,
                reason: e.to_string(),
            })?;
        Ok(Self {
            model,
            ctx,
            batch: LlamaBatch::new(n_batch as usize, 1),
            n_batch: n_batch as usize,
            threads,
            sessions: vec![None; sessions as usize],
        })
    }

    fn info(&self, config: &EngineConfig) -> ModelInfo {
        let meta = |key: &str| self.model.meta_val_str(key).ok();
        let vocab = self.model.vocab();
        let piece = |t: LlamaToken| {
            String::from_utf8_lossy(&vocab.token_to_piece(t, true, None)).into_owned()
        };
        let description = [
            meta("general.architecture"),
            meta("general.size_label"),
            meta("general.name"),
        ]
        .into_iter()
        .flatten()
        .collect::<Vec<_>>()
        .join(" ");
        ModelInfo {
            path: config.model_path.clone(),
            description,
            chat_template: meta("tokenizer.chat_template"),
            bos_token: piece(vocab.bos()),
            eos_token: piece(vocab.eos()),
            n_ctx: self.ctx.n_ctx(),
            n_ctx_train: self.model.n_ctx_train(),
            n_vocab: self.model.n_vocab(),
            weights_bytes: self.model.size(),
            n_params: self.model.n_params(),
            threads: self.threads,
        }
    }

    fn handle(&mut self, command: Command) {
        match command {
            Command::Tokenize {
                text,
                add_special,
                reply,
            } => {
                let _ = reply.send(self.tokenize(&text, add_special));
            }
            Command::Detokenize { tokens, reply } => {
                let _ = reply.send(self.detokenize(&tokens));
            }
            Command::OpenSession { reply } => {
                let _ = reply.send(self.open_session());
            }
            Command::CloseSession { seq } => self.close_session(seq),
            Command::Generate {
                seq,
                request,
                events,
            } => {
                if let Err(e) = self.generate(seq, request, &events) {
                    let _ = events.send(Err(e));
                }
            }
        }
    }

    fn tokenize(&self, text: &str, add_special: bool) -> Vec<TokenId> {
        self.model
            .vocab()
            .tokenize(text.as_bytes(), add_special, true)
            .into_iter()
            .map(|t| t.0)
            .collect()
    }

    fn detokenize(&self, tokens: &[TokenId]) -> Result<String, EngineError> {
        let vocab = self.model.vocab();
        let mut bytes = Vec::new();
        for &t in tokens {
            self.check_token(t)?;
            bytes.extend(vocab.token_to_piece(LlamaToken(t), false, None));
        }
        Ok(String::from_utf8_lossy(&bytes).into_owned())
    }

    fn check_token(&self, token: TokenId) -> Result<(), EngineError> {
        if (0..self.model.n_vocab()).contains(&token) {
            Ok(())
        } else {
            Err(EngineError::BadToken(token))
        }
    }

    fn open_session(&mut self) -> Result<i32, EngineError> {
        let free = self
            .sessions
            .iter()
            .position(Option::is_none)
            .ok_or(EngineError::NoFreeSession(self.sessions.len() as u32))?;
        self.sessions[free] = Some(Vec::new());
        Ok(free as i32)
    }

    fn close_session(&mut self, seq: i32) {
        if let Some(slot) = self.sessions.get_mut(seq as usize) {
            *slot = None;
            let _ = self.ctx.clear_kv_cache_seq(Some(seq as u32), None, None);
        }
    }

    /// Evaluates `tokens` at positions from `start` in `seq`, in batches of `n_batch`;
    /// only the last token gets logits.
    fn decode(&mut self, seq: i32, start: usize, tokens: &[TokenId]) -> Result<(), EngineError> {
        let last = tokens.len().saturating_sub(1);
        for (chunk_index, chunk) in tokens.chunks(self.n_batch).enumerate() {
            self.batch.clear();
            for (i, &token) in chunk.iter().enumerate() {
                let index = chunk_index * self.n_batch + i;
                self.batch
                    .add(
                        LlamaToken(token),
                        (start + index) as i32,
                        &[seq],
                        index == last,
                    )
                    .map_err(|e| EngineError::Decode(e.to_string()))?;
            }
            self.ctx
                .decode(&mut self.batch)
                .map_err(|e| EngineError::Decode(e.to_string()))?;
        }
        Ok(())
    }

    fn generate(
        &mut self,
        seq: i32,
        request: GenerateRequest,
        events: &mpsc::UnboundedSender<Result<GenerateEvent, EngineError>>,
    ) -> Result<(), EngineError> {
        let prompt = match &request.prompt {
            Prompt::Text(text) => self.tokenize(text, true),
            Prompt::Tokens(tokens) => tokens.clone(),
        };
        if prompt.is_empty() {
            return Err(EngineError::EmptyPrompt);
        }
        for &t in &prompt {
            self.check_token(t)?;
        }
        let n_ctx = self.ctx.n_ctx();
        if prompt.len() >= n_ctx as usize {
            return Err(EngineError::PromptTooLong {
                prompt_tokens: prompt.len(),
                n_ctx,
            });
        }
        // Compiled before the prefill, so a bad grammar costs nothing.
        let grammar = request
            .grammar
            .as_ref()
            .map(|g| build_grammar(self.model, g))
            .transpose()?;
        let mut cached = self
            .sessions
            .get_mut(seq as usize)
            .and_then(Option::take)
            .ok_or(EngineError::NoFreeSession(self.sessions.len() as u32))?;

        // Keep the longest common prefix; the last prompt token is always evaluated
        // again, since logits exist only for what was just decoded.
        let common = cached
            .iter()
            .zip(&prompt)
            .take_while(|(a, b)| a == b)
            .count()
            .min(prompt.len() - 1);
        if common < cached.len() {
            let _ = self
                .ctx
                .clear_kv_cache_seq(Some(seq as u32), Some(common as u32), None);
            cached.truncate(common);
        }
        let started = Instant::now();
        let result = self.decode(seq, common, &prompt[common..]);
        if let Err(e) = result {
            let _ = self.ctx.clear_kv_cache_seq(Some(seq as u32), None, None);
            self.sessions[seq as usize] = Some(Vec::new());
            return Err(e);
        }
        cached.extend_from_slice(&prompt[common..]);
        let prefill_time = started.elapsed();

        let outcome = self.sample_loop(seq, &request, grammar, &mut cached, events);
        self.sessions[seq as usize] = Some(cached);
        let (text, tokens, stop_reason) = outcome?;
        let _ = events.send(Ok(GenerateEvent::Done(GenerateOutput {
            text,
            tokens,
            stop_reason,
            prompt_tokens: prompt.len(),
            reused_tokens: common,
            prefill_time,
            decode_time: started.elapsed() - prefill_time,
        })));
        Ok(())
    }

    /// Samples until a stop condition; `cached` tracks what is in the KV cache.
    fn sample_loop(
        &mut self,
        seq: i32,
        request: &GenerateRequest,
        grammar: Option<llama_cpp_2::sampling::LlamaSampler>,
        cached: &mut Vec<TokenId>,
        events: &mpsc::UnboundedSender<Result<GenerateEvent, EngineError>>,
    ) -> Result<(String, Vec<TokenId>, StopReason), EngineError> {
        let chain = build_sampler(&request.sampling, self.model.n_vocab());
        let mut picker = TokenPicker::new(chain, grammar, self.model.vocab().eos());
        let mut utf8 = Utf8Stream::default();
        let mut stops = StopMatcher::new(&request.stop);
        let mut text = String::new();
        let mut generated = Vec::new();
        let n_ctx = self.ctx.n_ctx() as usize;
        let emit = |chunk: String, text: &mut String| -> bool {
            if chunk.is_empty() {
                return true;
            }
            text.push_str(&chunk);
            events.send(Ok(GenerateEvent::Text(chunk))).is_ok()
        };
        let reason = loop {
            if generated.len() >= request.max_tokens as usize {
                break StopReason::MaxTokens;
            }
            let token = picker.pick(&self.ctx, self.batch.n_tokens() - 1);
            if !request.ignore_eog && self.model.vocab().is_eog(token) {
                break StopReason::EndOfGeneration;
            }
            generated.push(token.0);
            let piece = self.model.vocab().token_to_piece(token, false, None);
            match stops.push(&utf8.push(&piece)) {
                StopScan::Continue(chunk) => {
                    if !emit(chunk, &mut text) {
                        break StopReason::Cancelled;
                    }
                }
                StopScan::Stopped(chunk, stop) => {
                    emit(chunk, &mut text);
                    break StopReason::StopString(stop);
                }
            }
            if cached.len() + 1 > n_ctx {
                break StopReason::ContextFull;
            }
            let position = cached.len();
            self.decode(seq, position, &[token.0])?;
            cached.push(token.0);
        };
        if !matches!(reason, StopReason::StopString(_)) {
            let rest = utf8.finish();
            let mut tail = match stops.push(&rest) {
                StopScan::Continue(chunk) | StopScan::Stopped(chunk, _) => chunk,
            };
            tail.push_str(&stops.flush());
            emit(tail, &mut text);
        }
        Ok((text, generated, reason))
    }
}
