//! `POST /v1/chat/completions` bodies: read into the OpenAI wire types (a field of
//! the wrong type is named by its path), checked field by field, and turned into one
//! prepared turn. Every refusal names the field and what was expected.

use std::sync::Arc;

use rein_engine::{ReadMode, Sampling, TurnRequest};
use rein_format::{DescriptionStyle, ToolFormat, ToolSet};
use rein_protocol::openai::{
    ChatRequest, WireContent, WireMessage, WireResponseFormat, WireToolCall, WireToolChoice,
};
use rein_protocol::{FunctionCall, Message, Role, ToolCall, ToolChoice, ToolSpec};
use rein_schema::{sanitize, Limits, Schema, SchemaKind};
use serde_json::Value;

use crate::error::ApiError;

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

/// One request, checked and ready to run.
#[derive(Debug)]
pub struct Turn {
    /// The conversation in template shape.
    pub messages: Vec<Message>,
    /// The tools, when there are any.
    pub tools: Option<Arc<ToolSet>>,
    /// Which calls the model may make.
    pub choice: ToolChoice,
    /// More than one call per reply.
    pub parallel: bool,
    /// Sampling settings.
    pub sampling: Sampling,
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

    /// The engine request of this turn: tools under the call grammar, read with every
    /// repair a client can rely on (a wrapped call counts only when it validates).
    pub fn request(
        &self,
        tool_format: ToolFormat,
        call_example: bool,
        max_tokens: Option<u32>,
    ) -> TurnRequest {
        TurnRequest {
            messages: self.messages.clone(),
            tools: self.tools.clone(),
            choice: self.choice.clone(),
            tool_format,
            describe: DescriptionStyle::Full,
            constrained: true,
            parallel_calls: self.parallel,
            response: match &self.response {
                ResponseFormat::Text => None,
                ResponseFormat::Json { schema } => Some(schema.clone()),
            },
            call_example: call_example && self.parallel,
            wrapper_grammar: true,
            call_or_answer: false,
            prose: false,
            read: if self.offers_tools() {
                ReadMode::CLIENT
            } else {
                ReadMode::TEXT
            },
            sampling: self.sampling,
            max_tokens,
            stop: self.stop.clone(),
            // A client's reply is the model's own, blank or not.
            no_blank: false,
        }
    }
}

/// Default sampling temperature when a request sets none.
pub const DEFAULT_TEMPERATURE: f32 = 0.7;

/// Parses a request body; a field of the wrong shape is named by its path.
pub fn parse(body: &[u8]) -> Result<ChatRequest, ApiError> {
    let mut deserializer = serde_json::Deserializer::from_slice(body);
    serde_path_to_error::deserialize(&mut deserializer).map_err(|error| {
        let path = error.path().to_string();
        let inner = error.into_inner();
        if inner.is_syntax() || inner.is_eof() || path == "." {
            ApiError::bad_request(format!("the body is not a valid request: {inner}"))
        } else {
            ApiError::invalid(path, format!("the body is not a valid request: {inner}"))
        }
    })
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
        Some(specs) => Some(Arc::new(tools(specs)?)),
    };
    let choice = tool_choice(request.tool_choice.as_ref())?;
    match &tools {
        Some(set) => set
            .check_choice(&choice)
            .map_err(|e| ApiError::invalid("tool_choice", e.to_string()))?,
        None if choice.requires_call() => {
            return Err(ApiError::invalid(
                "tool_choice",
                "tool_choice asks for a call but no tools were given",
            ))
        }
        None => {}
    }
    let response = response_format(request.response_format.as_ref())?;
    let stop = stop_strings(request.stop.map(|s| s.into_vec()).unwrap_or_default())?;
    let turn = Turn {
        messages,
        tools,
        choice,
        parallel: request.parallel_tool_calls.unwrap_or(true),
        sampling: Sampling {
            temperature,
            top_p,
            seed,
            repeat_penalty: 1.0,
        },
        max_tokens,
        stop,
        response,
        stream: request.stream.unwrap_or(false),
        include_usage: request
            .stream_options
            .and_then(|o| o.include_usage)
            .unwrap_or(false),
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

fn message(index: usize, wire: &WireMessage) -> Result<Message, ApiError> {
    let at = |field: &str| format!("messages[{index}].{field}");
    let role = match wire.role.as_str() {
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
    let content = content_text(wire.content.as_ref(), &at("content"))?;
    let mut message = Message {
        role,
        content,
        tool_calls: Vec::new(),
        tool_call_id: None,
        name: None,
    };
    match role {
        Role::Assistant => {
            for call in wire.tool_calls.iter().flatten() {
                message.tool_calls.push(history_call(call));
            }
            if message.content.is_none() && message.tool_calls.is_empty() {
                message.content = Some(String::new());
            }
        }
        Role::Tool => {
            let id = wire.tool_call_id.as_deref().ok_or_else(|| {
                ApiError::invalid(at("tool_call_id"), "a tool message needs tool_call_id")
            })?;
            message.tool_call_id = Some(id.to_string());
            message.name = wire.name.clone();
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
fn content_text(content: Option<&WireContent>, param: &str) -> Result<Option<String>, ApiError> {
    match content {
        None => Ok(None),
        Some(WireContent::Text(text)) => Ok(Some(text.clone())),
        Some(WireContent::Parts(parts)) => {
            let mut text = String::new();
            for part in parts {
                match part.kind.as_deref() {
                    Some("text") => text.push_str(part.text.as_deref().ok_or_else(|| {
                        ApiError::invalid(param, "a text part needs a string `text`")
                    })?),
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
    }
}

/// A call from the history. Its arguments arrive as a JSON string; a broken one is
/// repaired for display (it was already executed), or kept as text.
fn history_call(call: &WireToolCall) -> ToolCall {
    let arguments = call.parsed_arguments().unwrap_or_else(|text| {
        rein_schema::repair_historical_json(&text).unwrap_or(Value::String(text))
    });
    ToolCall {
        id: call.id.clone(),
        kind: "function".into(),
        function: FunctionCall {
            name: call.function.name.clone(),
            arguments,
        },
    }
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

fn tools(specs: &[ToolSpec]) -> Result<ToolSet, ApiError> {
    ToolSet::prepare(specs)
        .map_err(|e| ApiError::invalid("tools", e.to_string()).code("invalid_schema"))
}

fn tool_choice(raw: Option<&WireToolChoice>) -> Result<ToolChoice, ApiError> {
    match raw {
        None => Ok(ToolChoice::Auto),
        Some(WireToolChoice::Mode(mode)) => match mode.as_str() {
            "auto" => Ok(ToolChoice::Auto),
            "none" => Ok(ToolChoice::None),
            "required" => Ok(ToolChoice::Required),
            other => Err(ApiError::invalid(
                "tool_choice",
                format!("unknown tool_choice `{other}`; expected auto, none, required or {{\"type\": \"function\", \"function\": {{\"name\": ...}}}}"),
            )),
        },
        Some(WireToolChoice::Named(named)) => Ok(ToolChoice::Named(named.function.name.clone())),
    }
}

fn stop_strings(stops: Vec<String>) -> Result<Vec<String>, ApiError> {
    if stops.len() > 4 {
        return Err(ApiError::invalid("stop", "at most 4 stop strings"));
    }
    if stops.iter().any(String::is_empty) {
        return Err(ApiError::invalid("stop", "stop strings must not be empty"));
    }
    Ok(stops)
}

fn response_format(raw: Option<&WireResponseFormat>) -> Result<ResponseFormat, ApiError> {
    let Some(raw) = raw else {
        return Ok(ResponseFormat::Text);
    };
    let schema = match raw.kind.as_deref() {
        Some("text") => return Ok(ResponseFormat::Text),
        Some("json_object") => serde_json::json!({"type": "object"}),
        Some("json_schema") => raw
            .json_schema
            .as_ref()
            .and_then(|s| s.schema.clone())
            .ok_or_else(|| {
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
