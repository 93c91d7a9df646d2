//! Teacher-forced next-token logits: a model reads a recorded prompt and reply, token
//! by token as they were written, and returns its logits before the reply's tokens
//! that were asked for — what `rein quant-diff` compares across quantizations of one
//! model. The KV cache keeps what consecutive readings share (a run's turns extend
//! one another), so each turn evaluates only its new tokens.

use std::num::NonZeroU32;
use std::ops::Range;
use std::path::Path;

use llama_cpp_2::context::params::LlamaContextParams;
use llama_cpp_2::context::LlamaContext;
use llama_cpp_2::llama_batch::LlamaBatch;
use llama_cpp_2::model::params::LlamaModelParams;
use llama_cpp_2::model::LlamaModel;
use llama_cpp_2::token::LlamaToken;

use crate::backend::backend;
use crate::kv::KvCells;
use crate::{EngineError, KvCacheType, TokenId};

/// Tokens evaluated per `decode`.
const BATCH: u32 = 512;

/// A model loaded for teacher-forced reading (CPU; weights memory-mapped).
pub struct ForcingModel {
    model: LlamaModel,
}

/// One asked-for position of a reply: the token there and the logits before it.
#[derive(Debug, Clone, PartialEq)]
pub struct ForcedLogits {
    /// The reply's token index.
    pub index: usize,
    /// The token the reply has there.
    pub token: TokenId,
    /// The model's logits for that position (one per vocabulary entry), given the
    /// prompt and the reply's tokens before it.
    pub logits: Vec<f32>,
}

impl ForcingModel {
    /// Loads the GGUF file at `path`, every layer on the CPU.
    pub fn load(path: &Path) -> Result<Self, EngineError> {
        let params = LlamaModelParams::default().with_n_gpu_layers(0);
        let model = LlamaModel::load_from_file(backend()?, path, &params).map_err(|e| {
            EngineError::ModelLoad {
                path: path.to_path_buf(),
                reason: e.to_string(),
            }
        })?;
        Ok(Self { model })
    }

    /// Whether `other` reads and writes tokens exactly as this model does (the same
    /// vocabulary, token by token); otherwise why not (said of `other`).
    pub fn same_tokenizer(&self, other: &ForcingModel) -> Result<(), String> {
        crate::draft_model::same_tokenizer(&other.model, &self.model)
    }

    /// The reply's tokens (special-token texts read as those tokens) with the byte
    /// range of `reply` each one spells; `None` when the pieces do not spell `reply`
    /// exactly.
    pub fn reply_tokens(&self, reply: &str) -> Option<Vec<(TokenId, Range<usize>)>> {
        let vocab = self.model.vocab();
        let mut at = 0;
        let mut out = Vec::new();
        for token in vocab.tokenize(reply.as_bytes(), false, true) {
            let piece = vocab.token_to_piece(token, true, None);
            let end = at + piece.len();
            if reply.as_bytes().get(at..end) != Some(piece.as_slice()) {
                return None;
            }
            out.push((token.0, at..end));
            at = end;
        }
        (at == reply.len()).then_some(out)
    }

    /// A reader holding up to `n_ctx` tokens, its KV cache of type `kv`, on `threads`
    /// threads (all cores when `None`). Every reader uses flash attention (llama.cpp
    /// needs it for a quantized V cache), so readers of different KV types differ in
    /// the cache alone.
    pub fn reader(
        &self,
        n_ctx: u32,
        threads: Option<u32>,
        kv: KvCacheType,
    ) -> Result<ForcedReader<'_>, EngineError> {
        let threads = threads.unwrap_or_else(|| {
            std::thread::available_parallelism()
                .map(|n| n.get() as u32)
                .unwrap_or(1)
        }) as i32;
        if n_ctx < 2 {
            return Err(EngineError::Context {
                n_ctx,
                reason: "a reader needs room for a prompt and a reply".into(),
            });
        }
        let n_batch = BATCH.min(n_ctx);
        let llama_kv = crate::worker::kv_cache_type(kv);
        let params = LlamaContextParams::default()
            .with_n_ctx(NonZeroU32::new(n_ctx))
            .with_n_batch(n_batch)
            .with_n_ubatch(n_batch)
            .with_n_threads(threads)
            .with_n_threads_batch(threads)
            .with_type_k(llama_kv)
            .with_type_v(llama_kv)
            .with_flash_attention_policy(llama_cpp_sys_2::LLAMA_FLASH_ATTN_TYPE_ENABLED);
        let ctx = self
            .model
            .new_context(backend()?, params)
            .map_err(|e| EngineError::Context {
                n_ctx,
                reason: e.to_string(),
            })?;
        Ok(ForcedReader {
            model: &self.model,
            ctx,
            batch: LlamaBatch::new(n_batch as usize, 1),
            n_batch: n_batch as usize,
            n_ctx: n_ctx as usize,
            cached: Vec::new(),
        })
    }
}

/// A context reading prompts and replies teacher-forced.
pub struct ForcedReader<'m> {
    model: &'m LlamaModel,
    ctx: LlamaContext<'m>,
    batch: LlamaBatch<'static>,
    n_batch: usize,
    n_ctx: usize,
    /// The tokens sequence 0 holds in the KV cache.
    cached: Vec<TokenId>,
}

impl ForcedReader<'_> {
    /// The prompt's tokens as the engine reads a rendered prompt: special tokens
    /// parsed except in the byte ranges `literal`, BOS first when the model wants it.
    pub fn prompt_tokens(&self, prompt: &str, literal: &[Range<usize>]) -> Vec<TokenId> {
        crate::literal::tokenize_rendered(&self.model.vocab(), prompt, literal, true)
            .into_iter()
            .map(|t| t.0)
            .collect()
    }

    /// The logits before each of the reply's tokens at `indices` (each below
    /// `reply.len()`), the prompt and the reply's earlier tokens read first; in the
    /// order of `indices`. A repeated index is read once and returned for each.
    pub fn logits_at(
        &mut self,
        prompt: &[TokenId],
        reply: &[TokenId],
        indices: &[usize],
    ) -> Result<Vec<ForcedLogits>, EngineError> {
        let Some(&last) = indices.iter().max() else {
            return Ok(Vec::new());
        };
        if prompt.is_empty() {
            return Err(EngineError::EmptyPrompt);
        }
        if let Some(&bad) = indices.iter().find(|&&i| i >= reply.len()) {
            return Err(EngineError::Decode(format!(
                "reply token {bad} asked of a reply of {} tokens",
                reply.len()
            )));
        }
        // The logits before reply token i are read at sequence position
        // prompt.len() + i - 1: the sequence needs every token up to that one.
        let sequence: Vec<TokenId> = prompt.iter().chain(&reply[..last]).copied().collect();
        if sequence.len() > self.n_ctx {
            return Err(EngineError::PromptTooLong {
                prompt_tokens: sequence.len(),
                n_ctx: self.n_ctx as u32,
            });
        }
        let wanted: std::collections::BTreeSet<usize> =
            indices.iter().map(|&i| prompt.len() + i - 1).collect();
        let first_wanted = wanted.first().copied().unwrap_or(0);
        let keep = crate::slots::common_prefix(&self.cached, &sequence).min(first_wanted);
        if keep < self.cached.len() {
            let keep = if self.ctx.remove(0, Some(keep)) {
                keep
            } else {
                crate::kv::clear(&mut self.ctx, 0);
                0
            };
            self.cached.truncate(keep);
        }
        let mut read = std::collections::BTreeMap::new();
        let start = self.cached.len();
        for (chunk_at, chunk) in sequence[start..].chunks(self.n_batch).enumerate() {
            let base = start + chunk_at * self.n_batch;
            self.batch.clear();
            for (i, &token) in chunk.iter().enumerate() {
                let position = base + i;
                self.batch
                    .add(
                        LlamaToken(token),
                        position as i32,
                        &[0],
                        wanted.contains(&position),
                    )
                    .map_err(|e| EngineError::Decode(e.to_string()))?;
            }
            if let Err(error) = self.ctx.decode(&mut self.batch) {
                crate::kv::clear(&mut self.ctx, 0);
                self.cached.clear();
                return Err(EngineError::Decode(error.to_string()));
            }
            self.cached.extend_from_slice(chunk);
            for i in 0..chunk.len() {
                if wanted.contains(&(base + i)) {
                    read.insert(base + i, self.ctx.get_logits_ith(i as i32).to_vec());
                }
            }
        }
        indices
            .iter()
            .map(|&index| {
                let position = prompt.len() + index - 1;
                let logits = read.get(&position).cloned().ok_or_else(|| {
                    EngineError::Decode(format!("no logits were read at position {position}"))
                })?;
                Ok(ForcedLogits {
                    index,
                    token: reply[index],
                    logits,
                })
            })
            .collect()
    }
}
