//! The in-process backend: the model's own chat template, llama.cpp through rein's
//! engine, and one KV session kept across turns so each turn only evaluates new tokens.

use std::time::Instant;

use rein_format::{ChatTemplate, Family, ModelFormat, RenderContext};
use rein_llama::{Engine, GenerateRequest, Prompt, SamplingParams, Session, StopReason};

use crate::backend::{Backend, BackendError, Completion, TurnRequest};

/// A loaded model with one session for the run.
pub struct LocalBackend {
    session: Session,
    template: ChatTemplate,
    family: Family,
    bos_token: String,
    eos_token: String,
    description: String,
    n_ctx: usize,
}

impl std::fmt::Debug for LocalBackend {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LocalBackend")
            .field("model", &self.description)
            .finish_non_exhaustive()
    }
}

impl LocalBackend {
    /// Opens a session on `engine`, with the model's chat template (ChatML when the
    /// model has none).
    pub async fn new(engine: &Engine) -> Result<Self, BackendError> {
        let info = engine.info();
        let ModelFormat { template, family } =
            ModelFormat::detect(info.chat_template.as_deref(), info.architecture())?;
        let session = engine.session().await?;
        let file = info
            .path
            .file_name()
            .map(|f| f.to_string_lossy().into_owned())
            .unwrap_or_default();
        Ok(Self {
            session,
            template,
            family,
            bos_token: info.bos_token.clone(),
            eos_token: info.eos_token.clone(),
            description: format!("{file} ({})", info.description),
            // The engine's context is shared by its sessions: a run plans within its
            // share, so concurrent runs cannot crowd each other out of the KV cache.
            n_ctx: (info.n_ctx / info.max_sessions.max(1)) as usize,
        })
    }
}

impl Backend for LocalBackend {
    fn native_tools(&self) -> bool {
        self.template.supports_tools()
    }

    fn family(&self) -> Family {
        self.family
    }

    fn describe(&self) -> String {
        self.description.clone()
    }

    fn context_tokens(&self) -> Option<usize> {
        Some(self.n_ctx)
    }

    async fn complete(&mut self, request: TurnRequest) -> Result<Completion, BackendError> {
        let started = Instant::now();
        let prompt = self.template.render(&RenderContext {
            messages: &request.messages,
            tools: request.tools.as_deref(),
            add_generation_prompt: true,
            bos_token: &self.bos_token,
            eos_token: &self.eos_token,
        })?;
        let mut generate = GenerateRequest::new(Prompt::Text(prompt));
        generate.sampling = SamplingParams {
            temperature: request.temperature,
            seed: request.seed,
            ..SamplingParams::default()
        };
        generate.max_tokens = request.max_tokens;
        generate.stop = request.stop;
        generate.grammar = request.grammar;
        let output = self.session.generate(generate).await?;
        Ok(Completion {
            cut_off: matches!(
                output.stop_reason,
                StopReason::MaxTokens | StopReason::ContextFull
            ),
            prompt_tokens: output.prompt_tokens,
            reused_tokens: output.reused_tokens,
            completion_tokens: output.tokens.len(),
            ttft: output.prefill_time,
            elapsed: started.elapsed(),
            text: output.text,
        })
    }
}
