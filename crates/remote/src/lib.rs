//! The backend for remote OpenAI-compatible servers (vLLM, llama-server, Ollama,
//! another `rein serve`): the conversation and the offered tools go to
//! `POST {base}/chat/completions` in the OpenAI wire types; the message that comes
//! back is read by the same reader as local text — its content for calls in other
//! wrappers, its `tool_calls` checked against the tools — so the loop validates and
//! recovers them exactly as it does for a local model.
#![deny(missing_docs)]

use std::path::PathBuf;
use std::time::{Duration, Instant};

use rein_engine::{Backend, BackendError, BackendInfo, Completion, ReplySink, TurnRequest};
use rein_format::hermes::RawCall;
use rein_format::{plan_turn, Family, ReplyReader};
use rein_protocol::openai::{
    ChatRequest, ChatResponse, ResponseMessage, StopStrings, WireMessage, WireToolChoice,
};
use rein_protocol::ToolSpec;
use serde_json::Value;

pub mod gguf_tokenizer;

/// Where the remote model is and how to reach it.
#[derive(Clone)]
pub struct RemoteSettings {
    /// The API base, e.g. `http://127.0.0.1:8080/v1`.
    pub base_url: String,
    /// The model name the server knows.
    pub model: String,
    /// A bearer key, if the server wants one.
    pub api_key: Option<String>,
    /// The remote model's `tokenizer.json`, for token counts when the server reports none.
    pub tokenizer: Option<PathBuf>,
    /// The remote model's context in tokens, for compaction.
    pub context_tokens: Option<usize>,
    /// The longest a request may take.
    pub timeout: Duration,
}

/// The key is never printed, in logs or anywhere else.
impl std::fmt::Debug for RemoteSettings {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RemoteSettings")
            .field("base_url", &self.base_url)
            .field("model", &self.model)
            .field(
                "api_key",
                &self.api_key.as_ref().map(|_| "(set, not shown)"),
            )
            .field("tokenizer", &self.tokenizer)
            .field("context_tokens", &self.context_tokens)
            .field("timeout", &self.timeout)
            .finish()
    }
}

impl RemoteSettings {
    /// Settings for `model` at `base_url`, with no key or tokenizer and a 10-minute timeout.
    pub fn new(base_url: impl Into<String>, model: impl Into<String>) -> Self {
        Self {
            base_url: base_url.into(),
            model: model.into(),
            api_key: None,
            tokenizer: None,
            context_tokens: None,
            timeout: Duration::from_secs(600),
        }
    }
}

/// A model behind an OpenAI-compatible HTTP API.
pub struct RemoteBackend {
    settings: RemoteSettings,
    agent: ureq::Agent,
    tokenizer: Option<tokenizers::Tokenizer>,
}

impl std::fmt::Debug for RemoteBackend {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RemoteBackend")
            .field("base_url", &self.settings.base_url)
            .field("model", &self.settings.model)
            .finish_non_exhaustive()
    }
}

/// The tokenizer in `path`: a GGUF model file (its own vocabulary and merges) or a
/// `tokenizer.json`.
fn load_tokenizer(path: &std::path::Path) -> Result<tokenizers::Tokenizer, String> {
    let mut magic = [0u8; 4];
    let is_gguf = std::fs::File::open(path)
        .and_then(|mut file| std::io::Read::read_exact(&mut file, &mut magic))
        .is_ok()
        && &magic == b"GGUF";
    match is_gguf {
        true => gguf_tokenizer::from_gguf(path),
        false => tokenizers::Tokenizer::from_file(path).map_err(|e| e.to_string()),
    }
}

impl RemoteBackend {
    /// A backend for `settings`; loads the tokenizer when one is given.
    pub fn new(settings: RemoteSettings) -> Result<Self, BackendError> {
        let tokenizer = match &settings.tokenizer {
            None => None,
            Some(path) => Some(load_tokenizer(path).map_err(|reason| {
                BackendError::Other(format!(
                    "cannot load the tokenizer {}: {reason}",
                    path.display()
                ))
            })?),
        };
        let agent = ureq::AgentBuilder::new().timeout(settings.timeout).build();
        Ok(Self {
            settings,
            agent,
            tokenizer,
        })
    }

    /// Tokens in `text` by the remote model's tokenizer, or about four characters per
    /// token without one.
    fn count(&self, text: &str) -> usize {
        match &self.tokenizer {
            Some(t) => t
                .encode(text, false)
                .map(|e| e.len())
                .unwrap_or(text.len() / 4),
            None => text.len().div_ceil(4),
        }
    }

    /// The request body: the server renders tools itself (native), unless the turn
    /// asks for them emulated (then they are taught in the system message and the
    /// history is written as Hermes text).
    fn body(&self, request: &TurnRequest) -> (ChatRequest, Vec<WireMessage>) {
        let plan = plan_turn(Family::Hermes, true, &request.spec());
        let messages: Vec<WireMessage> = plan
            .messages
            .iter()
            .map(WireMessage::from_message)
            .collect();
        let tools: Option<Vec<ToolSpec>> = plan.tools.map(|definitions| {
            definitions
                .into_iter()
                .filter_map(|d| serde_json::from_value(d).ok())
                .collect()
        });
        let has_tools = tools.as_ref().is_some_and(|t| !t.is_empty());
        let body = ChatRequest {
            model: Some(self.settings.model.clone()),
            messages: messages.clone(),
            tool_choice: has_tools.then(|| WireToolChoice::from(&request.choice)),
            parallel_tool_calls: has_tools.then_some(request.parallel_calls),
            tools: tools.filter(|t| !t.is_empty()),
            max_tokens: request.max_tokens,
            temperature: Some(request.sampling.temperature),
            seed: Some(i64::from(request.sampling.seed)),
            stop: (!request.stop.is_empty()).then(|| StopStrings::Many(request.stop.clone())),
            ..ChatRequest::default()
        };
        (body, messages)
    }
}

/// The message read like local text: its content for calls in other wrappers, its
/// `tool_calls` checked against the offered tools (arguments that are not JSON are a
/// problem the loop recovers from, never a call).
fn read_message(
    message: &ResponseMessage,
    request: &TurnRequest,
    cut_off: bool,
    events: &mut dyn ReplySink,
) -> rein_format::Reply {
    let mut reader = ReplyReader::new(
        Family::Hermes,
        request.tools.as_deref(),
        &request.choice,
        request.read,
    );
    if let Some(content) = &message.content {
        events.events(reader.push(content));
    }
    for call in &message.tool_calls {
        match call.parsed_arguments() {
            Ok(arguments) => events.event(reader.push_call(RawCall {
                name: call.function.name.clone(),
                arguments,
            })),
            Err(text) => reader.push_malformed(format!(
                "the arguments of `{}` are not JSON: {text}",
                call.function.name
            )),
        }
    }
    let read = reader.finish(cut_off);
    events.events(read.events);
    read.reply
}

/// The reply as trace text: the content, then each call in the Hermes syntax.
fn reply_text(message: &ResponseMessage) -> String {
    let mut parts = Vec::new();
    if let Some(content) = message.content.as_deref().filter(|c| !c.trim().is_empty()) {
        parts.push(content.trim().to_string());
    }
    for call in &message.tool_calls {
        let arguments = call.parsed_arguments().unwrap_or_else(Value::String);
        parts.push(Family::Hermes.call_text(&call.function.name, &arguments));
    }
    parts.join("\n")
}

/// Why a remote call failed, in words.
fn transport_error(error: ureq::Error) -> BackendError {
    match error {
        ureq::Error::Status(code, response) => {
            let body = response.into_string().unwrap_or_default();
            let message = serde_json::from_str::<Value>(&body)
                .ok()
                .and_then(|v| v["error"]["message"].as_str().map(String::from))
                .unwrap_or(body);
            BackendError::Other(format!("the server answered {code}: {message}"))
        }
        other => BackendError::Other(format!("the server could not be reached: {other}")),
    }
}

impl Backend for RemoteBackend {
    fn info(&self) -> BackendInfo {
        BackendInfo {
            description: format!("{} at {}", self.settings.model, self.settings.base_url),
            family: Family::Hermes,
            context_tokens: self.settings.context_tokens,
            decodes_grammars: false,
        }
    }

    async fn complete(
        &mut self,
        request: TurnRequest,
        events: &mut dyn ReplySink,
    ) -> Result<Completion, BackendError> {
        let started = Instant::now();
        let (body, sent) = self.body(&request);
        let url = format!(
            "{}/chat/completions",
            self.settings.base_url.trim_end_matches('/')
        );
        let mut post = self.agent.post(&url);
        if let Some(key) = &self.settings.api_key {
            post = post.set("authorization", &format!("Bearer {key}"));
        }
        let response: ChatResponse = tokio::task::spawn_blocking(move || {
            post.send_json(body)
                .map_err(transport_error)?
                .into_json::<ChatResponse>()
                .map_err(|e| {
                    BackendError::Other(format!("the server's reply is not a chat completion: {e}"))
                })
        })
        .await
        .map_err(|e| BackendError::Other(format!("the request task failed: {e}")))??;
        let Some(choice) = response.choices.into_iter().next() else {
            return Err(BackendError::Other(
                "the server's reply has no choices[0].message".into(),
            ));
        };
        let message = choice.message;
        let cut_off = choice.finish_reason.as_deref() == Some("length");
        let text = reply_text(&message);
        let reply = read_message(&message, &request, cut_off, events);
        let usage = response.usage.unwrap_or_default();
        let prompt_tokens = match usage.prompt_tokens {
            0 => sent
                .iter()
                .map(|m| self.count(&serde_json::to_string(m).unwrap_or_default()))
                .sum(),
            n => n as usize,
        };
        let completion_tokens = match usage.completion_tokens {
            0 => self.count(&text),
            n => n as usize,
        };
        let elapsed = started.elapsed();
        Ok(Completion {
            cut_off,
            looped: false,
            prompt_tokens,
            reused_tokens: usage
                .prompt_tokens_details
                .map_or(0, |d| d.cached_tokens as usize),
            completion_tokens,
            ttft: elapsed,
            elapsed,
            text,
            reply,
            prepared: None,
        })
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;
    use rein_engine::{NoEvents, ReadMode};
    use rein_format::ToolSet;
    use rein_protocol::Message;
    use serde_json::json;

    fn tools_request() -> TurnRequest {
        let specs: Vec<ToolSpec> = serde_json::from_value(json!([
            {"type": "function", "function": {"name": "read_file", "parameters": {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]}}},
            {"type": "function", "function": {"name": "list_dir"}}
        ]))
        .unwrap();
        let mut request = TurnRequest::text(vec![Message::user("go")]);
        request.tools = Some(Arc::new(ToolSet::prepare(&specs).unwrap()));
        request.read = ReadMode::REPAIR;
        request
    }

    #[test]
    fn calls_come_back_checked_by_the_reader() {
        let message: ResponseMessage = serde_json::from_value(json!({"content": "Reading it.", "tool_calls": [
            {"id": "x", "type": "function", "function": {"name": "read_file", "arguments": "{\"path\": \"a.txt\"}"}},
            {"id": "y", "type": "function", "function": {"name": "list_dir", "arguments": ""}}
        ]}))
        .unwrap();
        let reply = read_message(&message, &tools_request(), false, &mut NoEvents);
        assert_eq!(reply.content.as_deref(), Some("Reading it."));
        assert_eq!(reply.calls.len(), 2);
        assert_eq!(reply.calls[0].arguments, json!({"path": "a.txt"}));
        assert!(reply.problems.is_empty());
        // The trace text is the same reply in the Hermes syntax.
        let parsed = Family::Hermes.parse_reply(&reply_text(&message)).unwrap();
        assert_eq!(parsed.content.as_deref(), Some("Reading it."));
        assert_eq!(parsed.calls.len(), 2);
    }

    #[test]
    fn arguments_that_are_not_json_are_refused_by_the_reader() {
        let message: ResponseMessage = serde_json::from_value(json!({"content": null, "tool_calls": [
            {"id": "x", "type": "function", "function": {"name": "read_file", "arguments": "{path: a.txt"}}
        ]}))
        .unwrap();
        let reply = read_message(&message, &tools_request(), false, &mut NoEvents);
        assert!(reply.calls.is_empty());
        assert!(
            matches!(&reply.problems[..], [rein_format::ReplyProblem::Parse(_)]),
            "{:?}",
            reply.problems
        );
    }

    #[test]
    fn the_request_carries_the_tools_and_the_history_in_openai_shape() {
        let settings = RemoteSettings::new("http://127.0.0.1:9/v1", "m");
        let backend = RemoteBackend::new(settings).unwrap();
        let (body, _) = backend.body(&tools_request());
        let wire = serde_json::to_value(&body).unwrap();
        assert_eq!(wire["tools"].as_array().map(Vec::len), Some(2));
        assert_eq!(wire["tool_choice"], "auto");
        assert_eq!(
            wire["messages"][0],
            json!({"role": "user", "content": "go"})
        );
    }

    #[test]
    fn an_unreachable_server_is_an_error_not_a_panic() {
        let mut settings = RemoteSettings::new("http://127.0.0.1:9/v1", "m");
        settings.timeout = Duration::from_secs(5);
        let mut backend = RemoteBackend::new(settings).unwrap();
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        let mut request = TurnRequest::text(vec![Message::user("hi")]);
        request.max_tokens = Some(8);
        let error = runtime
            .block_on(backend.complete(request, &mut NoEvents))
            .unwrap_err();
        assert!(
            error.to_string().contains("could not be reached"),
            "{error}"
        );
    }

    #[test]
    fn token_counts_use_the_given_tokenizer() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("tokenizer.json");
        let tokenizer = json!({
            "version": "1.0",
            "truncation": null, "padding": null, "added_tokens": [],
            "normalizer": null,
            "pre_tokenizer": {"type": "Whitespace"},
            "post_processor": null, "decoder": null,
            "model": {"type": "WordLevel", "vocab": {"[UNK]": 0, "read": 1, "the": 2, "file": 3},
                      "unk_token": "[UNK]"}
        });
        std::fs::write(&path, tokenizer.to_string()).unwrap();
        let mut settings = RemoteSettings::new("http://127.0.0.1:9/v1", "m");
        settings.tokenizer = Some(path);
        let backend = RemoteBackend::new(settings).unwrap();
        // Five words and a comma: six tokens; the estimate says 7 (26 characters / 4).
        assert_eq!(backend.count("read the file, then reread"), 6);
        let plain = RemoteBackend::new(RemoteSettings::new("http://127.0.0.1:9/v1", "m")).unwrap();
        assert_eq!(plain.count("read the file, then reread"), 7);
    }

    #[test]
    fn a_missing_tokenizer_file_is_a_clear_error() {
        let mut settings = RemoteSettings::new("http://127.0.0.1:9/v1", "m");
        settings.tokenizer = Some("/nonexistent/tokenizer.json".into());
        let error = RemoteBackend::new(settings).unwrap_err();
        assert!(
            error.to_string().contains("/nonexistent/tokenizer.json"),
            "{error}"
        );
    }
}
