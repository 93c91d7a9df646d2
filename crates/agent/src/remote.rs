//! A remote OpenAI-compatible backend (vLLM, llama-server, Ollama, `rein serve`): the
//! conversation and tool schemas go to `POST {base}/chat/completions`; the reply's
//! calls come back as text in the Hermes syntax, so the loop parses, validates and
//! recovers them exactly as it does for a local model.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use rein_format::{Family, ToolChoice};
use rein_protocol::{Message, Role};
use serde_json::{json, Map, Value};

use crate::backend::{Backend, BackendError, Completion, TurnRequest};

/// Where the remote model is and how to reach it.
#[derive(Debug, Clone)]
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

impl RemoteBackend {
    /// A backend for `settings`; loads the tokenizer when one is given.
    pub fn new(settings: RemoteSettings) -> Result<Self, BackendError> {
        let tokenizer = match &settings.tokenizer {
            None => None,
            Some(path) => Some(tokenizers::Tokenizer::from_file(path).map_err(|e| {
                BackendError::Other(format!("cannot load the tokenizer {}: {e}", path.display()))
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

    fn body(&self, request: &TurnRequest) -> Value {
        let mut body = json!({
            "model": self.settings.model,
            "messages": request.messages.iter().map(wire_message).collect::<Vec<_>>(),
            "max_tokens": request.max_tokens,
            "temperature": request.temperature,
            "seed": request.seed,
        });
        if !request.stop.is_empty() {
            body["stop"] = json!(request.stop);
        }
        if let Some(tools) = request.tools.as_ref().filter(|t| !t.is_empty()) {
            body["tools"] = json!(tools);
            body["tool_choice"] = match &request.tool_choice {
                ToolChoice::Auto => json!("auto"),
                ToolChoice::None => json!("none"),
                ToolChoice::Required => json!("required"),
                ToolChoice::Named(name) => json!({"type": "function", "function": {"name": name}}),
            };
            body["parallel_tool_calls"] = json!(request.parallel_calls);
        }
        body
    }
}

/// A message as OpenAI servers read it: call arguments as JSON text, ids on calls.
fn wire_message(message: &Message) -> Value {
    let role = match message.role {
        Role::System => "system",
        Role::User => "user",
        Role::Assistant => "assistant",
        Role::Tool => "tool",
    };
    let mut out = Map::new();
    out.insert("role".into(), json!(role));
    out.insert(
        "content".into(),
        match &message.content {
            Some(text) => json!(text),
            None if message.role == Role::Assistant => Value::Null,
            None => json!(""),
        },
    );
    if !message.tool_calls.is_empty() {
        let calls: Vec<Value> = message
            .tool_calls
            .iter()
            .enumerate()
            .map(|(i, call)| {
                let arguments = match &call.function.arguments {
                    Value::String(text) => text.clone(),
                    other => other.to_string(),
                };
                json!({
                    "id": call.id.clone().unwrap_or_else(|| format!("call_{i}")),
                    "type": "function",
                    "function": {"name": call.function.name, "arguments": arguments},
                })
            })
            .collect();
        out.insert("tool_calls".into(), json!(calls));
    }
    if let Some(id) = &message.tool_call_id {
        out.insert("tool_call_id".into(), json!(id));
    }
    if message.role == Role::Tool {
        if let Some(name) = &message.name {
            out.insert("name".into(), json!(name));
        }
    }
    Value::Object(out)
}

/// The reply as the loop reads it: the content, then each call in the Hermes syntax.
/// Arguments that are not JSON are kept as a string, which the strict parser refuses
/// (a format failure the loop recovers from), never executed.
fn reply_text(message: &Value) -> String {
    let mut parts = Vec::new();
    if let Some(content) = message["content"].as_str().filter(|c| !c.trim().is_empty()) {
        parts.push(content.trim().to_string());
    }
    for call in message["tool_calls"].as_array().into_iter().flatten() {
        let name = call["function"]["name"].as_str().unwrap_or_default();
        let arguments = match &call["function"]["arguments"] {
            Value::String(text) if text.trim().is_empty() => json!({}),
            Value::String(text) => serde_json::from_str(text).unwrap_or_else(|_| json!(text)),
            Value::Null => json!({}),
            other => other.clone(),
        };
        parts.push(Family::Hermes.call_text(name, &arguments));
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
    fn native_tools(&self) -> bool {
        true
    }

    fn family(&self) -> Family {
        Family::Hermes
    }

    fn context_tokens(&self) -> Option<usize> {
        self.settings.context_tokens
    }

    fn describe(&self) -> String {
        format!("{} at {}", self.settings.model, self.settings.base_url)
    }

    async fn complete(&mut self, request: TurnRequest) -> Result<Completion, BackendError> {
        let started = Instant::now();
        let body = self.body(&request);
        let url = format!(
            "{}/chat/completions",
            self.settings.base_url.trim_end_matches('/')
        );
        let mut post = self.agent.post(&url);
        if let Some(key) = &self.settings.api_key {
            post = post.set("authorization", &format!("Bearer {key}"));
        }
        let response: Value = tokio::task::spawn_blocking(move || {
            post.send_json(body)
                .map_err(transport_error)?
                .into_json::<Value>()
                .map_err(|e| BackendError::Other(format!("the server's reply is not JSON: {e}")))
        })
        .await
        .map_err(|e| BackendError::Other(format!("the request task failed: {e}")))??;
        let choice = &response["choices"][0];
        if !choice["message"].is_object() {
            return Err(BackendError::Other(format!(
                "the server's reply has no choices[0].message: {response}"
            )));
        }
        let text = reply_text(&choice["message"]);
        let usage = &response["usage"];
        let prompt_tokens = match usage["prompt_tokens"].as_u64() {
            Some(n) => n as usize,
            None => request
                .messages
                .iter()
                .map(|m| self.count(&wire_message(m).to_string()))
                .sum(),
        };
        let completion_tokens = usage["completion_tokens"]
            .as_u64()
            .map_or_else(|| self.count(&text), |n| n as usize);
        let elapsed = started.elapsed();
        Ok(Completion {
            cut_off: choice["finish_reason"] == "length",
            prompt_tokens,
            reused_tokens: usage["prompt_tokens_details"]["cached_tokens"]
                .as_u64()
                .unwrap_or(0) as usize,
            completion_tokens,
            ttft: elapsed,
            elapsed,
            text,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rein_protocol::{FunctionCall, ToolCall};

    #[test]
    fn history_goes_out_in_openai_shape() {
        let assistant = Message {
            role: Role::Assistant,
            content: None,
            tool_calls: vec![ToolCall {
                id: Some("c1".into()),
                kind: "function".into(),
                function: FunctionCall {
                    name: "read_file".into(),
                    arguments: json!({"path": "a.txt"}),
                },
            }],
            tool_call_id: None,
            name: None,
        };
        let wire = wire_message(&assistant);
        assert_eq!(wire["content"], Value::Null);
        assert_eq!(wire["tool_calls"][0]["id"], "c1");
        assert_eq!(
            wire["tool_calls"][0]["function"]["arguments"],
            "{\"path\":\"a.txt\"}"
        );
        let result = wire_message(&Message::tool_result("c1", "read_file", "hello"));
        assert_eq!(
            result,
            json!({"role": "tool", "content": "hello", "tool_call_id": "c1", "name": "read_file"})
        );
    }

    #[test]
    fn calls_come_back_as_hermes_text_the_strict_parser_reads() {
        let message = json!({"content": "Reading it.", "tool_calls": [
            {"id": "x", "type": "function", "function": {"name": "read_file", "arguments": "{\"path\": \"a.txt\"}"}},
            {"id": "y", "type": "function", "function": {"name": "list_dir", "arguments": ""}}
        ]});
        let text = reply_text(&message);
        let parsed = Family::Hermes.parse_reply(&text).unwrap();
        assert_eq!(parsed.content.as_deref(), Some("Reading it."));
        assert_eq!(parsed.calls.len(), 2);
        assert_eq!(parsed.calls[0].arguments, json!({"path": "a.txt"}));
    }

    #[test]
    fn arguments_that_are_not_json_are_refused_by_the_parser() {
        let message = json!({"content": null, "tool_calls": [
            {"id": "x", "type": "function", "function": {"name": "read_file", "arguments": "{path: a.txt"}}
        ]});
        assert!(Family::Hermes.parse_reply(&reply_text(&message)).is_err());
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
        let request = TurnRequest {
            messages: vec![Message::user("hi")],
            tools: None,
            grammar: None,
            tool_choice: ToolChoice::Auto,
            parallel_calls: true,
            max_tokens: 8,
            stop: Vec::new(),
            temperature: 0.0,
            seed: 0,
        };
        let error = runtime.block_on(backend.complete(request)).unwrap_err();
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
