//! `POST /v1/chat/completions` bodies: read, checked field by field, and turned into
//! one prepared turn. Every refusal names the field and what was expected.

use rein_format::{ToolChoice, ToolSet};
use rein_llama::SamplingParams;
use rein_protocol::{FunctionCall, Message, Role, ToolCall, ToolSpec};
use rein_schema::{sanitize, Limits, Schema, SchemaKind};
use serde::Deserialize;
use serde_json::Value;

use crate::error::ApiError;

/// The body as clients send it; fields rein does not use (`model`, `user`, ...) are
/// ignored: the loaded model answers whatever name is asked for.
#[derive(Debug, Deserialize)]
pub struct ChatRequest {
    /// The conversation.
    pub messages: Vec<Value>,
    #[serde(default)]
    tools: Option<Vec<Value>>,
    #[serde(default)]
    tool_choice: Option<Value>,
    #[serde(default)]
    parallel_tool_calls: Option<bool>,
    #[serde(default)]
    temperature: Option<f32>,
    #[serde(default)]
    top_p: Option<f32>,
    #[serde(default)]
    max_tokens: Option<u32>,
    #[serde(default)]
    max_completion_tokens: Option<u32>,
    #[serde(default)]
    seed: Option<i64>,
    #[serde(default)]
    stop: Option<Value>,
    #[serde(default)]
    response_format: Option<Value>,
    #[serde(default)]
    stream: Option<bool>,
    #[serde(default)]
    stream_options: Option<Value>,
    #[serde(default)]
    n: Option<u32>,
    #[serde(default)]
    logprobs: Option<bool>,
    #[serde(default)]
    frequency_penalty: Option<f32>,
    #[serde(default)]
    presence_penalty: Option<f32>,
}

/// How the reply's text is constrained when no call is made.
#[derive(Debug)]
pub enum ResponseFormat {
    /// Free text.
    Text,
    /// A JSON value of this canonical schema (`json_object`: any object).
    Json {
        /// The schema the grammar follows.
        schema: Schema,
    },
}

/// One request, checked and ready to render and run.
#[derive(Debug)]
pub struct Turn {
    /// The conversation in template shape.
    pub messages: Vec<Message>,
    /// The tools, when there are any.
    pub tools: Option<ToolSet>,
    /// Which calls the model may make.
    pub choice: ToolChoice,
    /// More than one call per reply.
    pub parallel: bool,
    /// Sampling settings.
    pub sampling: SamplingParams,
    /// The client's token limit, if it set one.
    pub max_tokens: Option<u32>,
    /// Stop strings.
    pub stop: Vec<String>,
    /// The reply's shape without calls.
    pub response: ResponseFormat,
    /// Server-sent events instead of one body.
    pub stream: bool,
    /// A last chunk with token usage (streaming only).
    pub include_usage: bool,
}

impl Turn {
    /// Whether the model may call tools this turn.
    pub fn offers_tools(&self) -> bool {
        self.choice != ToolChoice::None && self.tools.as_ref().is_some_and(|t| !t.is_empty())
    }
}

/// Default sampling temperature when a request sets none.
pub const DEFAULT_TEMPERATURE: f32 = 0.7;

/// Parses a request body.
pub fn parse(body: &[u8]) -> Result<ChatRequest, ApiError> {
    serde_json::from_slice(body)
        .map_err(|e| ApiError::bad_request(format!("the body is not a valid request: {e}")))
}

/// Checks every field and prepares the turn.
pub fn prepare(request: ChatRequest) -> Result<Turn, ApiError> {
    if request.n.is_some_and(|n| n != 1) {
        return Err(ApiError::invalid("n", "only n = 1 is supported"));
    }
    if request.logprobs == Some(true) {
        return Err(ApiError::invalid("logprobs", "logprobs are not supported"));
    }
    for (name, value) in [
        ("frequency_penalty", request.frequency_penalty),
        ("presence_penalty", request.presence_penalty),
    ] {
        if value.is_some_and(|v| v != 0.0) {
            return Err(ApiError::invalid(
                name,
                format!("{name} is not supported; leave it out or set it to 0"),
            ));
        }
    }
    let temperature = request.temperature.unwrap_or(DEFAULT_TEMPERATURE);
    if !(0.0..=2.0).contains(&temperature) {
        return Err(ApiError::invalid(
            "temperature",
            format!("temperature must be between 0 and 2, got {temperature}"),
        ));
    }
    let top_p = request.top_p.unwrap_or(1.0);
    if !(top_p > 0.0 && top_p <= 1.0) {
        return Err(ApiError::invalid(
            "top_p",
            format!("top_p must be in (0, 1], got {top_p}"),
        ));
    }
    let max_tokens = request.max_completion_tokens.or(request.max_tokens);
    if max_tokens == Some(0) {
        return Err(ApiError::invalid(
            "max_tokens",
            "max_tokens must be at least 1",
        ));
    }
    let seed = match request.seed {
        Some(seed) => (seed as u64 & u64::from(u32::MAX)) as u32,
        None => fresh_seed(),
    };
    let messages = request
        .messages
        .iter()
        .enumerate()
        .map(|(i, m)| message(i, m))
        .collect::<Result<Vec<_>, _>>()?;
    if messages.is_empty() {
        return Err(ApiError::invalid("messages", "messages must not be empty"));
    }
    let messages = name_tool_results(messages);
    let tools = match &request.tools {
        None => None,
        Some(raw) => Some(tools(raw)?),
    };
    let choice = tool_choice(request.tool_choice.as_ref())?;
    match &tools {
        Some(set) => set
            .check_choice(&choice)
            .map_err(|e| ApiError::invalid("tool_choice", e.to_string()))?,
        None if matches!(choice, ToolChoice::Required | ToolChoice::Named(_)) => {
            return Err(ApiError::invalid(
                "tool_choice",
                "tool_choice asks for a call but no tools were given",
            ))
        }
        None => {}
    }
    let response = response_format(request.response_format.as_ref())?;
    let stream = request.stream.unwrap_or(false);
    let include_usage = request
        .stream_options
        .as_ref()
        .and_then(|o| o.get("include_usage"))
        .and_then(Value::as_bool)
        .unwrap_or(false);
    let turn = Turn {
        messages,
        tools,
        choice,
        parallel: request.parallel_tool_calls.unwrap_or(true),
        sampling: SamplingParams {
            temperature,
            top_p,
            seed,
            ..SamplingParams::default()
        },
        max_tokens,
        stop: stop_strings(request.stop.as_ref())?,
        response,
        stream,
        include_usage,
    };
    if turn.offers_tools()
        && turn.choice == ToolChoice::Auto
        && !matches!(turn.response, ResponseFormat::Text)
    {
        return Err(ApiError::invalid(
            "response_format",
            "response_format with tools needs tool_choice `none` (a JSON reply) or `required` (calls only)",
        ));
    }
    Ok(turn)
}

/// A seed for requests that set none: different per request, like OpenAI's default.
fn fresh_seed() -> u32 {
    use std::sync::atomic::{AtomicU32, Ordering};
    static COUNTER: AtomicU32 = AtomicU32::new(0);
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.subsec_nanos())
        .unwrap_or(0);
    nanos ^ COUNTER.fetch_add(0x9E37_79B9, Ordering::Relaxed)
}

fn message(index: usize, raw: &Value) -> Result<Message, ApiError> {
    let at = |field: &str| format!("messages[{index}].{field}");
    let object = raw.as_object().ok_or_else(|| {
        ApiError::invalid(
            format!("messages[{index}]"),
            "each message must be an object",
        )
    })?;
    let role_text = object
        .get("role")
        .and_then(Value::as_str)
        .ok_or_else(|| ApiError::invalid(at("role"), "role is missing"))?;
    let role = match role_text {
        "system" | "developer" => Role::System,
        "user" => Role::User,
        "assistant" => Role::Assistant,
        "tool" => Role::Tool,
        other => {
            return Err(ApiError::invalid(
                at("role"),
                format!(
                    "unknown role `{other}`; expected system, developer, user, assistant or tool"
                ),
            ))
        }
    };
    let content = content_text(object.get("content"), &at("content"))?;
    let mut message = Message {
        role,
        content,
        tool_calls: Vec::new(),
        tool_call_id: None,
        name: None,
    };
    match role {
        Role::Assistant => {
            if let Some(calls) = object.get("tool_calls").filter(|c| !c.is_null()) {
                let calls = calls.as_array().ok_or_else(|| {
                    ApiError::invalid(at("tool_calls"), "tool_calls must be an array")
                })?;
                for (k, call) in calls.iter().enumerate() {
                    message.tool_calls.push(history_call(
                        call,
                        &format!("messages[{index}].tool_calls[{k}]"),
                    )?);
                }
            }
            if message.content.is_none() && message.tool_calls.is_empty() {
                message.content = Some(String::new());
            }
        }
        Role::Tool => {
            let id = object
                .get("tool_call_id")
                .and_then(Value::as_str)
                .ok_or_else(|| {
                    ApiError::invalid(at("tool_call_id"), "a tool message needs tool_call_id")
                })?;
            message.tool_call_id = Some(id.to_string());
            message.name = object.get("name").and_then(Value::as_str).map(String::from);
            if message.content.is_none() {
                message.content = Some(String::new());
            }
        }
        Role::System | Role::User => {
            if message.content.is_none() {
                return Err(ApiError::invalid(at("content"), "content is missing"));
            }
        }
    }
    Ok(message)
}

/// A message's text: a string, or the text parts of a content array.
fn content_text(raw: Option<&Value>, param: &str) -> Result<Option<String>, ApiError> {
    match raw {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(text)) => Ok(Some(text.clone())),
        Some(Value::Array(parts)) => {
            let mut text = String::new();
            for part in parts {
                match part.get("type").and_then(Value::as_str) {
                    Some("text") => {
                        text.push_str(part.get("text").and_then(Value::as_str).ok_or_else(
                            || ApiError::invalid(param, "a text part needs a string `text`"),
                        )?)
                    }
                    other => {
                        return Err(ApiError::invalid(
                            param,
                            format!(
                                "content part type {} is not supported; only text",
                                other.map_or("(none)".to_string(), |t| format!("`{t}`"))
                            ),
                        ))
                    }
                }
            }
            Ok(Some(text))
        }
        Some(_) => Err(ApiError::invalid(
            param,
            "content must be a string, an array of text parts, or null",
        )),
    }
}

/// A call from the history. Its arguments arrive as a JSON string; a broken one is
/// repaired for display (it was already executed), or kept as text.
fn history_call(raw: &Value, param: &str) -> Result<ToolCall, ApiError> {
    let function = raw
        .get("function")
        .ok_or_else(|| ApiError::invalid(param, "a tool call needs `function`"))?;
    let name = function
        .get("name")
        .and_then(Value::as_str)
        .ok_or_else(|| ApiError::invalid(format!("{param}.function.name"), "name is missing"))?;
    let arguments = match function.get("arguments") {
        None | Some(Value::Null) => Value::Object(Default::default()),
        Some(Value::String(text)) if text.trim().is_empty() => Value::Object(Default::default()),
        Some(Value::String(text)) => serde_json::from_str(text)
            .ok()
            .or_else(|| rein_schema::repair_historical_json(text))
            .unwrap_or_else(|| Value::String(text.clone())),
        Some(other) => other.clone(),
    };
    Ok(ToolCall {
        id: raw.get("id").and_then(Value::as_str).map(String::from),
        kind: "function".into(),
        function: FunctionCall {
            name: name.to_string(),
            arguments,
        },
    })
}

/// Tool results without a `name` get the name of the call they answer.
fn name_tool_results(mut messages: Vec<Message>) -> Vec<Message> {
    let mut names = std::collections::HashMap::new();
    for message in &mut messages {
        for call in &message.tool_calls {
            if let Some(id) = &call.id {
                names.insert(id.clone(), call.function.name.clone());
            }
        }
        if message.role == Role::Tool && message.name.is_none() {
            message.name = message
                .tool_call_id
                .as_ref()
                .and_then(|id| names.get(id))
                .cloned();
        }
    }
    messages
}

fn tools(raw: &[Value]) -> Result<ToolSet, ApiError> {
    let specs = raw
        .iter()
        .enumerate()
        .map(|(i, tool)| {
            serde_json::from_value::<ToolSpec>(tool.clone()).map_err(|e| {
                ApiError::invalid(
                    format!("tools[{i}]"),
                    format!("expected {{\"type\": \"function\", \"function\": {{\"name\", \"description\", \"parameters\"}}}}: {e}"),
                )
            })
        })
        .collect::<Result<Vec<_>, _>>()?;
    ToolSet::prepare(&specs)
        .map_err(|e| ApiError::invalid("tools", e.to_string()).code("invalid_schema"))
}

fn tool_choice(raw: Option<&Value>) -> Result<ToolChoice, ApiError> {
    match raw {
        None | Some(Value::Null) => Ok(ToolChoice::Auto),
        Some(Value::String(s)) => match s.as_str() {
            "auto" => Ok(ToolChoice::Auto),
            "none" => Ok(ToolChoice::None),
            "required" => Ok(ToolChoice::Required),
            other => Err(ApiError::invalid(
                "tool_choice",
                format!("unknown tool_choice `{other}`; expected auto, none, required or {{\"type\": \"function\", \"function\": {{\"name\": ...}}}}"),
            )),
        },
        Some(object) => object
            .pointer("/function/name")
            .and_then(Value::as_str)
            .map(|name| ToolChoice::Named(name.to_string()))
            .ok_or_else(|| {
                ApiError::invalid(
                    "tool_choice",
                    "a named tool_choice is {\"type\": \"function\", \"function\": {\"name\": ...}}",
                )
            }),
    }
}

fn stop_strings(raw: Option<&Value>) -> Result<Vec<String>, ApiError> {
    let stops = match raw {
        None | Some(Value::Null) => Vec::new(),
        Some(Value::String(s)) => vec![s.clone()],
        Some(Value::Array(items)) => items
            .iter()
            .map(|v| v.as_str().map(String::from))
            .collect::<Option<Vec<_>>>()
            .ok_or_else(|| {
                ApiError::invalid("stop", "stop must be a string or an array of strings")
            })?,
        Some(_) => {
            return Err(ApiError::invalid(
                "stop",
                "stop must be a string or an array of strings",
            ))
        }
    };
    if stops.len() > 4 {
        return Err(ApiError::invalid("stop", "at most 4 stop strings"));
    }
    if stops.iter().any(String::is_empty) {
        return Err(ApiError::invalid("stop", "stop strings must not be empty"));
    }
    Ok(stops)
}

fn response_format(raw: Option<&Value>) -> Result<ResponseFormat, ApiError> {
    let Some(raw) = raw.filter(|r| !r.is_null()) else {
        return Ok(ResponseFormat::Text);
    };
    let schema = match raw.get("type").and_then(Value::as_str) {
        Some("text") => return Ok(ResponseFormat::Text),
        Some("json_object") => serde_json::json!({"type": "object"}),
        Some("json_schema") => raw.pointer("/json_schema/schema").cloned().ok_or_else(|| {
            ApiError::invalid(
                "response_format.json_schema.schema",
                "a json_schema response_format needs json_schema.schema",
            )
        })?,
        other => {
            return Err(ApiError::invalid(
                "response_format.type",
                format!(
                    "unknown response_format type {}; expected text, json_object or json_schema",
                    other.map_or("(none)".to_string(), |t| format!("`{t}`"))
                ),
            ))
        }
    };
    let sanitized = sanitize(&schema, Limits::default()).map_err(|e| {
        ApiError::invalid("response_format.json_schema.schema", e.to_string())
            .code("invalid_schema")
    })?;
    let mut canonical = sanitized.schema.clone();
    // `json_object` and open objects: any JSON object.
    if let SchemaKind::Object {
        properties,
        additional,
    } = &mut canonical.kind
    {
        if properties.is_empty() && additional.is_none() {
            *additional = Some(Box::new(Schema {
                kind: SchemaKind::Any,
                description: None,
            }));
        }
    }
    for change in &sanitized.report.changes {
        tracing::info!("response_format schema changed: {change}");
    }
    Ok(ResponseFormat::Json { schema: canonical })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn turn(body: Value) -> Result<Turn, ApiError> {
        prepare(parse(body.to_string().as_bytes())?)
    }

    #[test]
    fn a_plain_request_gets_defaults() {
        let t = turn(json!({"messages": [{"role": "user", "content": "hi"}]})).unwrap();
        assert_eq!(t.messages, vec![Message::user("hi")]);
        assert_eq!(t.choice, ToolChoice::Auto);
        assert!(t.parallel && !t.stream && !t.offers_tools());
        assert_eq!(t.sampling.temperature, DEFAULT_TEMPERATURE);
    }

    #[test]
    fn each_bad_field_is_named() {
        let cases = [
            (json!({"messages": []}), "messages"),
            (
                json!({"messages": [{"role": "bot", "content": "x"}]}),
                "messages[0].role",
            ),
            (
                json!({"messages": [{"role": "user"}]}),
                "messages[0].content",
            ),
            (
                json!({"messages": [{"role": "tool", "content": "x"}]}),
                "messages[0].tool_call_id",
            ),
            (
                json!({"messages": [{"role": "user", "content": [{"type": "image_url"}]}]}),
                "messages[0].content",
            ),
            (
                json!({"messages": [{"role": "user", "content": "x"}], "temperature": 3}),
                "temperature",
            ),
            (
                json!({"messages": [{"role": "user", "content": "x"}], "top_p": 0}),
                "top_p",
            ),
            (
                json!({"messages": [{"role": "user", "content": "x"}], "max_tokens": 0}),
                "max_tokens",
            ),
            (
                json!({"messages": [{"role": "user", "content": "x"}], "n": 2}),
                "n",
            ),
            (
                json!({"messages": [{"role": "user", "content": "x"}], "stop": [1]}),
                "stop",
            ),
            (
                json!({"messages": [{"role": "user", "content": "x"}], "tool_choice": "required"}),
                "tool_choice",
            ),
            (
                json!({"messages": [{"role": "user", "content": "x"}], "tools": [{"type": "function"}]}),
                "tools[0]",
            ),
            (
                json!({"messages": [{"role": "user", "content": "x"}],
                    "tools": [{"type": "function", "function": {"name": "bad name"}}]}),
                "tools",
            ),
            (
                json!({"messages": [{"role": "user", "content": "x"}],
                    "tools": [{"type": "function", "function": {"name": "f"}}],
                    "tool_choice": {"type": "function", "function": {"name": "g"}}}),
                "tool_choice",
            ),
            (
                json!({"messages": [{"role": "user", "content": "x"}], "response_format": {"type": "xml"}}),
                "response_format.type",
            ),
            (
                json!({"messages": [{"role": "user", "content": "x"}],
                    "tools": [{"type": "function", "function": {"name": "f", "parameters": {"type": "object", "properties": {"a": {"$ref": "#/nowhere"}}}}}]}),
                "tools",
            ),
        ];
        for (body, param) in cases {
            let error = turn(body.clone()).expect_err(&body.to_string());
            assert_eq!(error.param.as_deref(), Some(param), "{body}: {error}");
            assert_eq!(error.status, 400);
        }
    }

    #[test]
    fn malformed_json_is_a_400_that_says_where() {
        let error = parse(b"{\"messages\": [").unwrap_err();
        assert_eq!(error.status, 400);
        assert!(error.message.contains("line 1"), "{}", error.message);
    }

    #[test]
    fn history_calls_are_parsed_and_tool_results_named() {
        let t = turn(json!({"messages": [
            {"role": "user", "content": "weather?"},
            {"role": "assistant", "content": null, "tool_calls": [
                {"id": "c1", "type": "function", "function": {"name": "get_weather", "arguments": "{\"city\": \"Oslo\",}"}}]},
            {"role": "tool", "tool_call_id": "c1", "content": "cold"}
        ]}))
        .unwrap();
        assert_eq!(
            t.messages[1].tool_calls[0].function.arguments,
            json!({"city": "Oslo"})
        );
        assert_eq!(t.messages[2].name.as_deref(), Some("get_weather"));
    }

    #[test]
    fn tool_choice_forms() {
        let base = json!({"messages": [{"role": "user", "content": "x"}],
                          "tools": [{"type": "function", "function": {"name": "f"}}]});
        for (choice, expected) in [
            (json!("none"), ToolChoice::None),
            (json!("required"), ToolChoice::Required),
            (
                json!({"type": "function", "function": {"name": "f"}}),
                ToolChoice::Named("f".into()),
            ),
        ] {
            let mut body = base.clone();
            body["tool_choice"] = choice;
            assert_eq!(turn(body).unwrap().choice, expected);
        }
    }

    #[test]
    fn json_object_admits_any_object_and_tools_with_auto_conflict() {
        let t = turn(json!({"messages": [{"role": "user", "content": "x"}],
                            "response_format": {"type": "json_object"}}))
        .unwrap();
        let ResponseFormat::Json { schema, .. } = &t.response else {
            panic!("not json");
        };
        assert!(matches!(
            &schema.kind,
            SchemaKind::Object {
                additional: Some(_),
                ..
            }
        ));
        let error = turn(json!({"messages": [{"role": "user", "content": "x"}],
                                "tools": [{"type": "function", "function": {"name": "f"}}],
                                "response_format": {"type": "json_object"}}))
        .unwrap_err();
        assert_eq!(error.param.as_deref(), Some("response_format"));
    }
}
