//! The served model: its engine, chat template and tool-call family, and how one turn
//! becomes a prompt and a decoding constraint.

use rein_format::{ChatTemplate, Family, ModelFormat, RenderContext, ToolFormat};
use rein_llama::Engine;
use rein_protocol::{Grammar, Message, Role};

use crate::error::ApiError;
use crate::request::{ResponseFormat, Turn};

/// A loaded model ready to answer chat requests.
pub struct ServedModel {
    engine: Engine,
    id: String,
    template: ChatTemplate,
    family: Family,
    native_tools: bool,
    bos_token: String,
    eos_token: String,
    context_per_request: u32,
}

impl std::fmt::Debug for ServedModel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ServedModel")
            .field("id", &self.id)
            .field("family", &self.family)
            .field("native_tools", &self.native_tools)
            .finish_non_exhaustive()
    }
}

impl ServedModel {
    /// Serves `engine` under the name `id`. Each request may use up to
    /// `context_per_request` tokens (prompt and reply); `tool_format` chooses native
    /// or emulated tool calling.
    pub fn new(
        engine: Engine,
        id: impl Into<String>,
        tool_format: ToolFormat,
        context_per_request: u32,
    ) -> Result<Self, rein_format::TemplateError> {
        let info = engine.info();
        let format = ModelFormat::detect(info.chat_template.as_deref(), info.architecture())?;
        let native_tools = format.native_tools(tool_format);
        let ModelFormat { template, family } = format;
        Ok(Self {
            bos_token: info.bos_token.clone(),
            eos_token: info.eos_token.clone(),
            context_per_request: context_per_request.clamp(16, info.n_ctx),
            engine,
            id: id.into(),
            template,
            family,
            native_tools,
        })
    }

    /// The engine.
    pub fn engine(&self) -> &Engine {
        &self.engine
    }

    /// The name clients use.
    pub fn id(&self) -> &str {
        &self.id
    }

    /// The tool-call family.
    pub fn family(&self) -> Family {
        self.family
    }

    /// Tokens one request may use, prompt and reply together.
    pub fn context_per_request(&self) -> u32 {
        self.context_per_request
    }

    /// The prompt text of `turn`: native tools rendered by the template, or taught in
    /// the system prompt with the history rewritten in the family's syntax.
    pub fn render(&self, turn: &Turn) -> Result<String, ApiError> {
        let definitions = turn
            .tools
            .as_ref()
            .filter(|_| turn.offers_tools())
            .map(|tools| {
                let offered = tools.offered(&turn.choice);
                tools
                    .definitions()
                    .into_iter()
                    .filter(|d| {
                        let name = d.pointer("/function/name").and_then(|n| n.as_str());
                        offered.iter().any(|t| Some(t.name.as_str()) == name)
                    })
                    .collect::<Vec<_>>()
            });
        let history_has_tools = turn
            .messages
            .iter()
            .any(|m| m.role == Role::Tool || !m.tool_calls.is_empty());
        let mut messages: Vec<Message>;
        let tools_for_template;
        if self.native_tools {
            messages = turn.messages.clone();
            tools_for_template = definitions.as_deref();
        } else {
            messages = if history_has_tools {
                self.family.emulate_history(&turn.messages)
            } else {
                turn.messages.clone()
            };
            if let Some(definitions) = &definitions {
                let taught = self.family.emulated_instructions(definitions);
                match messages.first_mut() {
                    Some(first) if first.role == Role::System => {
                        let text = first.content.get_or_insert_with(String::new);
                        text.push_str("\n\n");
                        text.push_str(&taught);
                    }
                    _ => messages.insert(0, Message::system(taught)),
                }
            }
            tools_for_template = None;
        }
        self.template
            .render(&RenderContext {
                messages: &messages,
                tools: tools_for_template,
                add_generation_prompt: true,
                bos_token: &self.bos_token,
                eos_token: &self.eos_token,
            })
            .map_err(|e| {
                ApiError::bad_request(format!(
                    "the model's chat template cannot render these messages: {e}"
                ))
            })
    }

    /// The decoding constraint of `turn`: the family's call grammar when tools are
    /// offered, else the response format's, else none.
    pub fn grammar(&self, turn: &Turn) -> Option<Grammar> {
        if turn.offers_tools() {
            if let Some(tools) = &turn.tools {
                return self.family.call_grammar(tools, &turn.choice, turn.parallel);
            }
        }
        match &turn.response {
            ResponseFormat::Text => None,
            ResponseFormat::Json { schema, .. } => {
                Some(Grammar::strict(rein_schema::schema_grammar(schema)))
            }
        }
    }
}
