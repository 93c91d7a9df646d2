//! The owner thread of one loaded model. `LlamaContext` is not `Send`, so the model,
//! its context and every session's KV sequence live on this thread; the rest of rein
//! talks to it through channels.

use std::num::NonZeroU32;
use std::sync::mpsc::{Receiver, TryRecvError};
use std::time::Instant;

use llama_cpp_2::context::params::{KvCacheType as LlamaKvType, LlamaContextParams};
use llama_cpp_2::context::LlamaContext;
use llama_cpp_2::llama_batch::{BatchAddError, LlamaBatch};
use llama_cpp_2::model::params::LlamaModelParams;
use llama_cpp_2::model::LlamaModel;
use llama_cpp_2::token::LlamaToken;
use tokio::sync::{mpsc, oneshot};

use crate::backend::backend;
use crate::draft_model::DraftModel;
use crate::generation::{Active, Events, Prefilled};
use crate::kv::{self, KvCells};
use crate::prompt_cache::{PromptCache, MIN_PERSISTED_TOKENS};
use crate::sampler::{build_grammar, build_sampler, Constraint, TokenPicker};
use crate::slots::SlotTable;
use crate::{
    EngineConfig, EngineError, GenerateEvent, GenerateRequest, GrammarEngine, KvCacheType,
    ModelInfo, Prompt, StopReason, TokenId,
};

/// Largest context chosen when the user does not set one.
const DEFAULT_MAX_CTX: u32 = 4096;

/// Requests the owner thread serves.
pub(crate) enum Command {
    Tokenize {
        text: String,
        literal: Vec<std::ops::Range<usize>>,
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
    let loaded = load(&config.model_path, &config).and_then(|model| {
        let draft = config
            .draft_model
            .as_ref()
            .map(|path| load(path, &config))
            .transpose()?;
        Ok((model, draft))
    });
    let (model, draft) = match loaded {
        Ok((model, draft)) => (std::sync::Arc::new(model), draft),
        Err(e) => {
            let _ = ready.send(Err(e));
            return;
        }
    };
    let mut worker = match Worker::new(&config, &model, draft.as_ref()) {
        Ok(worker) => worker,
        Err(e) => {
            let _ = ready.send(Err(e));
            return;
        }
    };
    if ready.send(Ok(worker.info(&config))).is_err() {
        return;
    }
    // Idle: wait for a command. Busy: take whatever commands have arrived (new
    // generations join between steps), then advance every generation by one token.
    while let Ok(command) = commands.recv() {
        worker.handle(command);
        while worker.busy() {
            loop {
                match commands.try_recv() {
                    Ok(command) => worker.handle(command),
                    Err(TryRecvError::Empty) => break,
                    Err(TryRecvError::Disconnected) => return,
                }
            }
            if worker.busy() {
                worker.step();
            }
        }
    }
}

/// Loads the model file at `path` (the model, or its draft model) as `config` says.
fn load(path: &std::path::Path, config: &EngineConfig) -> Result<LlamaModel, EngineError> {
    let backend = backend()?;
    let params = LlamaModelParams::default()
        .with_n_gpu_layers(config.gpu_layers)
        .with_use_mmap(config.use_mmap);
    LlamaModel::load_from_file(backend, path, &params).map_err(|e| EngineError::ModelLoad {
        path: path.to_path_buf(),
        reason: e.to_string(),
    })
}

/// Prompt tokens per chunk while other generations are decoding (see `decode`).
const INTERLEAVED_PREFILL: usize = 128;

struct Worker<'m> {
    model: &'m LlamaModel,
    ctx: LlamaContext<'m>,
    batch: LlamaBatch<'static>,
    n_batch: usize,
    threads: u32,
    /// Each KV sequence's state.
    slots: SlotTable,
    /// Generations in progress, advanced together.
    active: Vec<Active>,
    grammar_engine: GrammarEngine,
    /// Stable prompt prefixes kept on disk across processes.
    prompt_cache: Option<PromptCache>,
    /// Tokens drafted per step and generation (0 = none).
    draft_tokens: usize,
    /// The model that drafts them; prompt lookup when `None`.
    draft_model: Option<DraftModel<'m>>,
    /// Prompt chunks share a `decode` with the running generations' next tokens.
    mixed_batches: bool,
    /// Prompt tokens of the prefill in progress that went into mixed batches.
    mixed_prompt_tokens: usize,
    /// The vocabulary's end-of-generation tokens (masked while a `no_blank` reply is
    /// still blank), found on the first such request.
    end_tokens: std::cell::OnceCell<Vec<LlamaToken>>,
    /// Tokens a grammar forces are appended without sampling (llguidance only).
    #[cfg(feature = "llguidance")]
    forced_tokens: bool,
    /// The model, shared with llguidance's tokenizer.
    #[cfg(feature = "llguidance")]
    shared_model: std::sync::Arc<LlamaModel>,
    /// llguidance's parser factory for this vocabulary, built on first use.
    #[cfg(feature = "llguidance")]
    llguidance: Option<std::sync::Arc<llguidance::ParserFactory>>,
}

impl<'m> Worker<'m> {
    fn new(
        config: &EngineConfig,
        shared_model: &'m std::sync::Arc<LlamaModel>,
        draft: Option<&'m LlamaModel>,
    ) -> Result<Self, EngineError> {
        let model: &'m LlamaModel = shared_model;
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
        // The draft model's context has the same shape, with an f16 KV cache.
        let shape = LlamaContextParams::default()
            .with_n_ctx(NonZeroU32::new(n_ctx))
            .with_n_batch(n_batch)
            .with_n_ubatch(n_batch)
            .with_n_threads(threads as i32)
            .with_n_threads_batch(threads as i32)
            .with_n_seq_max(sessions)
            .with_kv_unified(true);
        let params = shape
            .clone()
            .with_type_k(kv_cache_type(config.kv_type))
            .with_type_v(kv_cache_type(config.kv_type));
        // llama.cpp stores a quantized V cache only with flash attention.
        let params = if config.kv_type == KvCacheType::F16 || config.kv_type == KvCacheType::F32 {
            params
        } else {
            params.with_flash_attention_policy(llama_cpp_sys_2::LLAMA_FLASH_ATTN_TYPE_ENABLED)
        };
        let ctx = model
            .new_context(backend, params)
            .map_err(|e| EngineError::Context {
                n_ctx,
                reason: e.to_string(),
            })?;
        let draft_model = draft
            .map(|draft| DraftModel::new(draft, model, shape))
            .transpose()?;
        // A cache that cannot be opened costs only speed: the engine runs without it.
        let prompt_cache = config.prompt_cache.clone().and_then(|cache| {
            let dir = cache.dir.clone();
            PromptCache::open(cache, &config.model_path, config.kv_type, n_ctx)
                .map_err(|e| {
                    tracing::warn!(dir = %dir.display(), "no prompt cache on disk: {e}");
                })
                .ok()
        });
        Ok(Self {
            model,
            ctx,
            batch: LlamaBatch::new(n_batch as usize, 1),
            n_batch: n_batch as usize,
            threads,
            slots: SlotTable::new(sessions as usize),
            active: Vec::new(),
            grammar_engine: config.grammar_engine,
            prompt_cache,
            draft_tokens: config.draft_tokens as usize,
            draft_model,
            mixed_batches: config.mixed_batches,
            mixed_prompt_tokens: 0,
            end_tokens: std::cell::OnceCell::new(),
            #[cfg(feature = "llguidance")]
            forced_tokens: config.forced_tokens,
            #[cfg(feature = "llguidance")]
            shared_model: std::sync::Arc::clone(shared_model),
            #[cfg(feature = "llguidance")]
            llguidance: None,
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
            control_tokens: crate::literal::control_tokens(&vocab),
            n_ctx: self.ctx.n_ctx(),
            n_ctx_train: self.model.n_ctx_train(),
            n_vocab: self.model.n_vocab(),
            weights_bytes: self.model.size(),
            n_params: self.model.n_params(),
            threads: self.threads,
            max_sessions: self.slots.len() as u32,
        }
    }

    fn handle(&mut self, command: Command) {
        match command {
            Command::Tokenize {
                text,
                literal,
                add_special,
                reply,
            } => {
                let _ = reply.send(self.tokenize_rendered(&text, &literal, add_special));
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
                let reply = events.clone();
                if let Err(e) = self.start(seq, request, events) {
                    let _ = reply.send(Err(e));
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

    /// `text` tokenized with special tokens parsed outside the byte ranges `literal`
    /// and as plain text inside them.
    fn tokenize_rendered(
        &self,
        text: &str,
        literal: &[std::ops::Range<usize>],
        add_special: bool,
    ) -> Vec<TokenId> {
        crate::literal::tokenize_rendered(&self.model.vocab(), text, literal, add_special)
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

    /// Takes the least recently freed sequence; its old tokens stay as the new
    /// session's cache (a first prompt that shares them reuses them).
    fn open_session(&mut self) -> Result<i32, EngineError> {
        self.slots.open()
    }

    fn close_session(&mut self, seq: i32) {
        // A generation still running for the session ends with it.
        let mut ended = None;
        if let Some(index) = self.active.iter().position(|a| a.seq == seq) {
            let active = self.active.remove(index);
            ended = Some(active.finish(StopReason::Cancelled).1);
        }
        self.slots.close(seq, ended);
    }

    /// Frees the KV cells of free sequences, least recently freed first, until `seq`
    /// (holding `own` tokens) has room for `needed` more within the context.
    fn make_room(&mut self, seq: i32, own: usize, needed: usize) {
        let n_ctx = self.ctx.n_ctx() as usize;
        let running: usize = self
            .active
            .iter()
            .filter(|a| a.seq != seq)
            .map(|a| a.cached.len())
            .sum();
        let mut used = self.slots.held_by_others(seq) + running + own;
        while used + needed > n_ctx {
            let Some((evicted, held)) = self.slots.evict_oldest_free() else {
                break;
            };
            used -= held;
            kv::clear(&mut self.ctx, evicted);
        }
    }

    /// Evaluates `tokens` at positions from `start` in `seq`: all but the last in
    /// batches of `n_batch` without logits, then the last alone with logits. The last
    /// token is always decoded on its own, so a prompt's first logits are the same
    /// whether its prefix came from the cache (which re-decodes only the last token)
    /// or was computed now: batch size changes the floating-point sums.
    ///
    /// While other generations run, the prompt goes in chunks of at most
    /// [`INTERLEAVED_PREFILL`] tokens, each in one `decode` together with the next
    /// token of every running generation (a mixed batch; or, with mixed batches off,
    /// followed by a decode step of theirs): a long prompt slows them down instead of
    /// stopping them.
    fn decode(&mut self, seq: i32, start: usize, tokens: &[TokenId]) -> Result<(), EngineError> {
        let Some((&last, body)) = tokens.split_last() else {
            return Ok(());
        };
        let mut done = 0;
        while done < body.len() {
            if self.active.is_empty() {
                let chunk = &body[done..(done + self.n_batch).min(body.len())];
                self.decode_batch(seq, start + done, chunk, false)?;
                done += chunk.len();
                continue;
            }
            let pending: usize = self.active.iter().map(|a| a.pending.len()).sum();
            let room = self.n_batch.saturating_sub(pending).max(1);
            let size = INTERLEAVED_PREFILL.min(room);
            let chunk = &body[done..(done + size).min(body.len())];
            if self.mixed_batches {
                self.mixed_step(seq, start + done, chunk)?;
            } else {
                self.decode_batch(seq, start + done, chunk, false)?;
                self.step();
            }
            done += chunk.len();
        }
        self.decode_batch(seq, start + body.len(), &[last], true)
    }

    /// One `decode` of a prompt chunk (`tokens` of `seq` from position `first`, no
    /// logits) together with the pending token of every running generation, which
    /// then picks its next one as in [`Self::step`]. A failed decode fails the
    /// generations and the prompt alike.
    fn mixed_step(
        &mut self,
        seq: i32,
        first: usize,
        tokens: &[TokenId],
    ) -> Result<(), EngineError> {
        self.end_abandoned();
        self.batch.clear();
        let mut added = self.add_prompt(seq, first, tokens, false);
        let pending = self.add_pending(&mut added);
        let decoded = self.decode_filled(added);
        if decoded.is_ok() && !pending.is_empty() {
            self.mixed_prompt_tokens += tokens.len();
        }
        self.take_picks(pending, decoded.clone());
        decoded
    }

    /// One `decode` of `tokens` from position `first`; `logits` for the last one.
    fn decode_batch(
        &mut self,
        seq: i32,
        first: usize,
        tokens: &[TokenId],
        logits: bool,
    ) -> Result<(), EngineError> {
        self.batch.clear();
        let added = self.add_prompt(seq, first, tokens, logits);
        self.decode_filled(added)
    }

    /// Adds `tokens` of `seq` from position `first` to the batch, logits for the last
    /// one when `logits`; stops at the first token the batch refuses.
    fn add_prompt(
        &mut self,
        seq: i32,
        first: usize,
        tokens: &[TokenId],
        logits: bool,
    ) -> Result<(), BatchAddError> {
        let last = tokens.len().saturating_sub(1);
        for (i, &token) in tokens.iter().enumerate() {
            self.batch.add(
                LlamaToken(token),
                (first + i) as i32,
                &[seq],
                logits && i == last,
            )?;
        }
        Ok(())
    }

    /// Validates the request, evaluates the new prompt tokens, samples the first token
    /// and, unless that already ends it, adds the generation to the active set.
    fn start(
        &mut self,
        seq: i32,
        request: GenerateRequest,
        events: Events,
    ) -> Result<(), EngineError> {
        let prompt = match &request.prompt {
            Prompt::Text(text) => self.tokenize(text, true),
            Prompt::Rendered { text, literal } => self.tokenize_rendered(text, literal, true),
            Prompt::Tokens(tokens) => tokens.clone(),
        };
        if prompt.is_empty() {
            return Err(EngineError::EmptyPrompt);
        }
        for &t in &prompt {
            self.check_token(t)?;
        }
        let n_ctx = self.session_ctx() as u32;
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
            .map(|g| self.compile_grammar(g))
            .transpose()?;
        // A generation whose stream was dropped ends before this one starts.
        self.end_abandoned();
        let mut cached = self.slots.start(seq)?;

        // Keep the longest common prefix (all of the sequence is cleared when llama.cpp
        // refuses to cut it, so the cached tokens always match the cache).
        let mut common = kv::keep_common_prefix(&mut self.ctx, seq, &mut cached, &prompt);
        // A longer prefix in another sequence (the same system prompt and tools) is
        // copied instead of recomputed.
        let mut shared = 0;
        let running = self.active.iter().map(|a| (a.seq, a.cached.as_slice()));
        if let Some((source, length)) = self.slots.best_prefix(seq, &prompt, common, running) {
            if kv::copy_shared_prefix(&mut self.ctx, source, seq, length) {
                cached = prompt[..length].to_vec();
                common = length;
                shared = length;
            } else {
                cached.clear();
                common = 0;
            }
        }
        let started = Instant::now();
        self.mixed_prompt_tokens = 0;
        // A stable prefix neither this sequence nor another holds: from the disk
        // cache, or computed and saved there for the next process.
        let mut loaded = 0;
        let mut save = None;
        if let Some((len, path)) = self.persisted_prefix(&request, &prompt) {
            if common < len {
                // The file of this prefix, or else the saved prefix that shares the
                // longest start with it, loaded and cut to what the two share. The cut
                // stays within the stable prefix: the prompt's last token is always
                // evaluated (its logits start the reply).
                let prefix = &prompt[..len];
                let exact = path.exists();
                let source = match exact {
                    true => Some((path.clone(), prefix.to_vec())),
                    false => {
                        let min = (common + 1).max(MIN_PERSISTED_TOKENS);
                        self.prompt_cache
                            .as_ref()
                            .and_then(|cache| cache.longest_shared_start(prefix, min))
                            .map(|start| (start.path, start.tokens))
                    }
                };
                if let Some((from, tokens)) = source {
                    let whole = prompt.len() + request.max_tokens as usize;
                    self.make_room(seq, 0, whole.min(n_ctx as usize));
                    let taken = self
                        .prompt_cache
                        .as_ref()
                        .is_some_and(|cache| cache.load(&mut self.ctx, seq, &from, &tokens));
                    cached = if taken { tokens } else { Vec::new() };
                    common = kv::keep_common_prefix(&mut self.ctx, seq, &mut cached, prefix);
                    loaded = common;
                    shared = 0;
                }
                // A prefix no file held whole is computed and saved for the next process.
                if !exact || common < len {
                    save = Some((len, path));
                }
            }
        }
        let wanted = prompt.len() - common + request.max_tokens as usize;
        self.make_room(seq, common, wanted.min(n_ctx as usize - common));
        if let Err(e) = self.prefill(seq, common, &prompt, save) {
            kv::clear(&mut self.ctx, seq);
            self.slots.idle(seq, Vec::new());
            return Err(e);
        }
        cached.extend_from_slice(&prompt[common..]);
        let prefilled = Prefilled {
            seq,
            cached,
            prompt_tokens: prompt.len(),
            reused_tokens: common,
            shared_tokens: shared,
            loaded_tokens: loaded,
            mixed_tokens: self.mixed_prompt_tokens,
            started,
            prefill_time: started.elapsed(),
        };
        let chain = build_sampler(&request.sampling, self.model.n_vocab());
        let mut picker = TokenPicker::new(chain, grammar, self.model.vocab().eos());
        if request.no_blank {
            let model = self.model;
            let end_tokens = self.end_tokens.get_or_init(|| {
                (0..model.n_vocab())
                    .map(LlamaToken)
                    .filter(|&token| model.vocab().is_eog(token))
                    .collect()
            });
            picker.mask(end_tokens.clone());
        }
        let mut active = Active::new(
            prefilled,
            picker,
            &request.stop,
            request.max_tokens,
            request.ignore_eog,
            events,
        );
        if active.budget_spent() {
            self.end(active, StopReason::MaxTokens);
            return Ok(());
        }
        // The prefill's logits are overwritten by the next decode: sample now.
        let token = active.picker.pick(&self.ctx, self.batch.n_tokens() - 1);
        let max_forced = self.max_forced();
        let stopped = active
            .accept(self.model, token, n_ctx as usize)
            .or_else(|| active.accept_forced(self.model, n_ctx as usize, max_forced));
        match stopped {
            Some(reason) => self.end(active, reason),
            None => self.active.push(active),
        }
        Ok(())
    }

    /// Evaluates `prompt` from position `from` on; with `save`, the sequence is saved
    /// to the prompt cache once it holds exactly the stable prefix (its length, its
    /// file), before the rest is evaluated.
    fn prefill(
        &mut self,
        seq: i32,
        from: usize,
        prompt: &[TokenId],
        save: Option<(usize, std::path::PathBuf)>,
    ) -> Result<(), EngineError> {
        let Some((len, path)) = save.filter(|(len, _)| from < *len) else {
            return self.decode(seq, from, &prompt[from..]);
        };
        self.decode(seq, from, &prompt[from..len])?;
        if let Some(cache) = &self.prompt_cache {
            cache.save(&self.ctx, seq, &path, &prompt[..len]);
        }
        self.decode(seq, len, &prompt[len..])
    }

    /// The stable prefix of `prompt` the request names, in tokens, and its file in the
    /// prompt cache; `None` without a cache, without a prefix, or when it is short. At
    /// least the prompt's last token stays outside it (its logits start the reply).
    fn persisted_prefix(
        &self,
        request: &GenerateRequest,
        prompt: &[TokenId],
    ) -> Option<(usize, std::path::PathBuf)> {
        let cache = self.prompt_cache.as_ref()?;
        let bytes = request.persist_prefix?;
        let prefix = match &request.prompt {
            Prompt::Text(text) => self.tokenize(text.get(..bytes)?, true),
            Prompt::Rendered { text, literal } => {
                let head = text.get(..bytes)?;
                let clipped: Vec<_> = literal
                    .iter()
                    .filter(|r| r.start < bytes)
                    .map(|r| r.start..r.end.min(bytes))
                    .collect();
                self.tokenize_rendered(head, &clipped, true)
            }
            Prompt::Tokens(_) => return None,
        };
        // Tokens at the cut may merge differently: only what both tokenizations share.
        let len = crate::slots::common_prefix(&prefix, prompt).min(prompt.len() - 1);
        (len >= MIN_PERSISTED_TOKENS).then(|| (len, cache.path_for(&prompt[..len])))
    }

    /// Compiles a grammar with the configured engine. Under llguidance, a grammar it
    /// cannot take (lazy triggers, or a form its Lark reader refuses) is held by the
    /// GBNF sampler instead, so every request keeps its grammar.
    fn compile_grammar(
        &mut self,
        grammar: &rein_protocol::Grammar,
    ) -> Result<Constraint, EngineError> {
        if self.grammar_engine == GrammarEngine::Llguidance {
            match self.guided(grammar) {
                Ok(constraint) => return Ok(constraint),
                Err(e) => tracing::debug!("grammar kept by the GBNF sampler: {e}"),
            }
        }
        build_grammar(self.model, grammar).map(Constraint::Gbnf)
    }

    #[cfg(feature = "llguidance")]
    fn guided(&mut self, grammar: &rein_protocol::Grammar) -> Result<Constraint, EngineError> {
        let factory = match &self.llguidance {
            Some(factory) => std::sync::Arc::clone(factory),
            None => {
                let model = std::sync::Arc::clone(&self.shared_model);
                let factory = std::sync::Arc::new(crate::guidance::factory(model)?);
                self.llguidance = Some(std::sync::Arc::clone(&factory));
                factory
            }
        };
        let guided = crate::guidance::Guided::new(&factory, grammar, self.forced_tokens)?;
        Ok(Constraint::Guided(Box::new(guided)))
    }

    #[cfg(not(feature = "llguidance"))]
    fn guided(&mut self, _grammar: &rein_protocol::Grammar) -> Result<Constraint, EngineError> {
        Err(EngineError::Grammar(
            "this build has no llguidance engine; rebuild with --features llguidance".into(),
        ))
    }

    /// The tokens one session may hold: its share of the context. Every session
    /// staying inside its share is what keeps the shared KV cache from running out
    /// while others generate.
    fn session_ctx(&self) -> usize {
        crate::types::session_share(self.ctx.n_ctx(), self.slots.len() as u32) as usize
    }

    /// Whether generations are in progress.
    fn busy(&self) -> bool {
        !self.active.is_empty()
    }

    /// One step of every active generation: their pending tokens go through a single
    /// `decode`, then each samples its next token from its own logits. With drafting
    /// on, each pending token brings the tokens prompt lookup (or the draft model)
    /// guesses will follow it (at their positions, logits for all); the sampler then
    /// picks token after token from those logits for as long as it picks the drafted
    /// one, so one `decode` yields several tokens: the picks plain decoding makes (the
    /// same sampler chain, grammar and seeded draws, in the same order) from logits a
    /// batch computes up to the rounding of its kernels (docs/decisions/0031). Drafted
    /// cells the sampler did not keep are removed from the KV cache.
    fn step(&mut self) {
        self.end_abandoned();
        if self.active.is_empty() {
            return;
        }
        self.batch.clear();
        let mut added = Ok(());
        let pending = self.add_pending(&mut added);
        let decoded = self.decode_filled(added);
        self.take_picks(pending, decoded);
    }

    /// One `decode` of the batch as filled, unless a token could not be added to it.
    fn decode_filled(&mut self, added: Result<(), BatchAddError>) -> Result<(), EngineError> {
        added
            .map_err(|e| EngineError::Decode(e.to_string()))
            .and_then(|()| {
                self.ctx
                    .decode(&mut self.batch)
                    .map_err(|e| EngineError::Decode(e.to_string()))
            })
    }

    /// Adds every running generation's pending tokens to the batch (logits for the
    /// last), each with the tokens drafted to follow them (logits for all), within the
    /// batch's room; returns each generation's drafted tokens and the batch index of
    /// its last pending token. A refused add is left in `added`.
    fn add_pending(&mut self, added: &mut Result<(), BatchAddError>) -> Vec<(Vec<TokenId>, i32)> {
        let n_ctx = self.session_ctx();
        // Drafts never take the room another generation's pending tokens need.
        let used = self.batch.n_tokens() as usize;
        let pending_total: usize = self.active.iter().map(|a| a.pending.len()).sum();
        let mut spare = self.n_batch.saturating_sub(used + pending_total);
        let mut pending = Vec::with_capacity(self.active.len());
        for active in &self.active {
            let draft = match self.draft_tokens.min(spare) {
                0 => Vec::new(),
                max => active.draft(max, n_ctx, self.draft_model.as_mut()),
            };
            spare -= draft.len();
            let last = active.pending.len().saturating_sub(1);
            let first = self.batch.n_tokens() + last as i32;
            let at = active.cached.len();
            let tokens = active
                .pending
                .iter()
                .copied()
                .chain(draft.iter().map(|&t| LlamaToken(t)));
            for (offset, token) in tokens.enumerate() {
                if added.is_ok() {
                    *added =
                        self.batch
                            .add(token, (at + offset) as i32, &[active.seq], offset >= last);
                }
            }
            pending.push((draft, first));
        }
        pending
    }

    /// Most tokens a generation takes from its grammar in one step: half its share
    /// of the batch, less its own pick (the other half stays for drafts and the
    /// chunks of a prompt evaluated beside it).
    fn max_forced(&self) -> usize {
        (self.n_batch / (2 * self.slots.len().max(1))).saturating_sub(1)
    }

    /// After the `decode` of [`Self::add_pending`]'s batch: each generation picks its
    /// next tokens (see [`Self::step`]), or every one fails with the decode's error.
    fn take_picks(&mut self, pending: Vec<(Vec<TokenId>, i32)>, decoded: Result<(), EngineError>) {
        let n_ctx = self.session_ctx();
        let max_forced = self.max_forced();
        if let Err(error) = decoded {
            for active in std::mem::take(&mut self.active) {
                let seq = active.fail(error.clone());
                kv::clear(&mut self.ctx, seq);
                self.slots.idle(seq, Vec::new());
            }
            return;
        }
        let mut still = Vec::with_capacity(self.active.len());
        let generations = std::mem::take(&mut self.active).into_iter();
        for (mut active, (draft, first)) in generations.zip(pending) {
            let mut stopped = None;
            let kept = crate::lookup::kept(&draft, |offset| {
                // Everything pending is in the cache now: the tokens of this step and,
                // past the first pick, the drafted token that pick kept.
                let decoded = std::mem::take(&mut active.pending);
                active.cached.extend(decoded.into_iter().map(|t| t.0));
                let token = active.picker.pick(&self.ctx, first + offset as i32);
                stopped = active.accept(self.model, token, n_ctx);
                stopped.is_none().then_some(token.0)
            });
            if stopped.is_none() {
                stopped = active.accept_forced(self.model, n_ctx, max_forced);
            }
            active.drafted += draft.len();
            active.accepted += kept;
            if kept < draft.len() && !self.ctx.remove(active.seq, Some(active.cached.len())) {
                // The cache would hold cells the sequence does not: it cannot go on.
                let seq = active.fail(EngineError::Decode(
                    "llama.cpp refused to remove drafted tokens from the KV cache".into(),
                ));
                kv::clear(&mut self.ctx, seq);
                self.slots.idle(seq, Vec::new());
                continue;
            }
            match stopped {
                Some(reason) => self.end(active, reason),
                None => still.push(active),
            }
        }
        self.active = still;
    }

    /// Ends the generations whose streams were dropped.
    fn end_abandoned(&mut self) {
        let (gone, kept): (Vec<Active>, Vec<Active>) = std::mem::take(&mut self.active)
            .into_iter()
            .partition(Active::abandoned);
        self.active = kept;
        for active in gone {
            self.end(active, StopReason::Cancelled);
        }
    }

    /// Ends a generation and gives its sequence back to its session.
    fn end(&mut self, active: Active, reason: StopReason) {
        let (seq, cached) = active.finish(reason);
        self.slots.idle(seq, cached);
    }
}

/// llama.cpp's name for a KV cache element type.
pub(crate) fn kv_cache_type(kind: KvCacheType) -> LlamaKvType {
    match kind {
        KvCacheType::F32 => LlamaKvType::F32,
        KvCacheType::F16 => LlamaKvType::F16,
        KvCacheType::Q8_0 => LlamaKvType::Q8_0,
        KvCacheType::Q4_0 => LlamaKvType::Q4_0,
    }
}
