//! The served model: a source of sessions on one loaded model, the name clients use,
//! how tools reach its prompts, and how much context one request may use.

use rein_engine::SessionSource;
use rein_format::ToolFormat;

/// A loaded model ready to answer chat requests.
pub struct ServedModel<S: SessionSource> {
    source: S,
    id: String,
    tool_format: ToolFormat,
    context_per_request: u32,
    call_example: bool,
}

impl<S: SessionSource> std::fmt::Debug for ServedModel<S> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ServedModel")
            .field("id", &self.id)
            .field("tool_format", &self.tool_format)
            .finish_non_exhaustive()
    }
}

impl<S: SessionSource> ServedModel<S> {
    /// Serves `source` under the name `id`. Each request may use up to
    /// `context_per_request` tokens (prompt and reply, at most a session's share of
    /// the context); `tool_format` chooses native or emulated tool calling.
    pub fn new(
        source: S,
        id: impl Into<String>,
        tool_format: ToolFormat,
        context_per_request: u32,
    ) -> Self {
        let share = source
            .info()
            .context_tokens
            .map_or(u32::MAX, |t| u32::try_from(t).unwrap_or(u32::MAX));
        Self {
            context_per_request: context_per_request.clamp(16, share.max(16)),
            source,
            id: id.into(),
            tool_format,
            call_example: true,
        }
    }

    /// Whether prompts that offer tools with parallel calls show an example of several
    /// calls in one reply (on unless turned off).
    pub fn with_call_example(mut self, on: bool) -> Self {
        self.call_example = on;
        self
    }

    /// Whether prompts show an example of several calls in one reply.
    pub fn call_example(&self) -> bool {
        self.call_example
    }

    /// The source of sessions.
    pub fn source(&self) -> &S {
        &self.source
    }

    /// The name clients use.
    pub fn id(&self) -> &str {
        &self.id
    }

    /// Native or emulated tool calling.
    pub fn tool_format(&self) -> ToolFormat {
        self.tool_format
    }

    /// Tokens one request may use, prompt and reply together.
    pub fn context_per_request(&self) -> u32 {
        self.context_per_request
    }
}
