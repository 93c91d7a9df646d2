//! `rein serve` over real HTTP on loopback with the real tiny model: tool calls plain
//! and streamed, refusals as OpenAI error objects, the queue, and disconnects.

use std::io::{BufRead, BufReader};
use std::sync::Arc;
use std::time::{Duration, Instant};

use rein_format::{ToolFormat, ToolSet};
use rein_llama::{Engine, EngineConfig, LocalModel};
use rein_protocol::ToolSpec;
use rein_serve::{AppState, ServedModel, ServerLimits};
use serde_json::{json, Value};

use crate::support::tiny_model;

/// A server on an ephemeral loopback port, stopped when dropped.
pub struct TestServer {
    pub url: String,
    /// The served model, for requests that bypass HTTP.
    pub model: LocalModel,
    runtime: Option<tokio::runtime::Runtime>,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
}

impl TestServer {
    /// The tiny model, 2048 tokens per session.
    pub fn start(sessions: u32, queue_timeout: Duration, api_key: Option<&str>) -> Self {
        Self::start_model(tiny_model(), sessions, queue_timeout, api_key)
    }

    /// The model at `path`, 2048 tokens per session.
    pub fn start_model(
        path: std::path::PathBuf,
        sessions: u32,
        queue_timeout: Duration,
        api_key: Option<&str>,
    ) -> Self {
        Self::start_full(
            path,
            sessions,
            queue_timeout,
            api_key,
            ServerLimits::default(),
        )
    }

    /// The tiny model, one session, within `limits`.
    pub fn start_limited(limits: ServerLimits) -> Self {
        Self::start_full(tiny_model(), 1, Duration::from_secs(60), None, limits)
    }

    fn start_full(
        path: std::path::PathBuf,
        sessions: u32,
        queue_timeout: Duration,
        api_key: Option<&str>,
        limits: ServerLimits,
    ) -> Self {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .unwrap();
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        let key = api_key.map(String::from);
        let (url, local) = runtime.block_on(async move {
            let mut config = EngineConfig::new(path);
            config.n_ctx = Some(2048 * sessions);
            config.threads = Some(2);
            config.max_sessions = sessions;
            config.queue_timeout = queue_timeout;
            let engine = Engine::load(config).await.unwrap();
            let local = LocalModel::new(engine).unwrap();
            let model = ServedModel::new(local.clone(), "tiny", ToolFormat::Native, 2048);
            let state = Arc::new(AppState::new(model, key, 64 * 1024).with_limits(limits));
            let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
            let url = format!("http://{}", listener.local_addr().unwrap());
            tokio::spawn(rein_serve::serve_with_limits(
                listener,
                rein_serve::router(state),
                limits,
                async {
                    let _ = stopped.await;
                },
            ));
            (url, local)
        });
        Self {
            url,
            model: local,
            runtime: Some(runtime),
            stop: Some(stop),
        }
    }

    pub fn post(&self, body: &Value) -> (u16, Value, Option<String>) {
        let response = ureq::post(&format!("{}/v1/chat/completions", self.url))
            .timeout(Duration::from_secs(120))
            .send_json(body.clone());
        let response = match response {
            Ok(r) => r,
            Err(ureq::Error::Status(_, r)) => r,
            Err(e) => panic!("transport error: {e}"),
        };
        let status = response.status();
        let retry = response.header("retry-after").map(String::from);
        (status, response.into_json().unwrap(), retry)
    }

    /// A streamed request: the data chunks (without `[DONE]`) and whether `[DONE]` came.
    pub fn post_stream(&self, body: &Value) -> (Vec<Value>, bool) {
        let mut body = body.clone();
        body["stream"] = json!(true);
        body["stream_options"] = json!({"include_usage": true});
        let response = ureq::post(&format!("{}/v1/chat/completions", self.url))
            .timeout(Duration::from_secs(120))
            .send_json(body)
            .unwrap_or_else(|e| panic!("stream request failed: {e}"));
        assert_eq!(response.content_type(), "text/event-stream");
        let mut chunks = Vec::new();
        for line in BufReader::new(response.into_reader()).lines() {
            let line = line.unwrap();
            let Some(data) = line.strip_prefix("data: ") else {
                continue;
            };
            if data == "[DONE]" {
                return (chunks, true);
            }
            chunks.push(serde_json::from_str(data).unwrap());
        }
        (chunks, false)
    }

    pub fn health(&self) -> Value {
        ureq::get(&format!("{}/health", self.url))
            .call()
            .unwrap()
            .into_json()
            .unwrap()
    }
}

impl Drop for TestServer {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(runtime) = self.runtime.take() {
            runtime.shutdown_timeout(Duration::from_secs(5));
        }
    }
}

/// What a response says, without the parts that differ per request (ids, times).
#[derive(Debug, PartialEq)]
pub struct Said {
    pub content: String,
    pub calls: Vec<(String, Value)>,
    pub finish: String,
    pub usage: Value,
}

pub fn said_plain(response: &Value) -> Said {
    let choice = &response["choices"][0];
    let message = &choice["message"];
    assert_eq!(message["role"], "assistant");
    let calls = message["tool_calls"]
        .as_array()
        .map(|calls| {
            calls
                .iter()
                .map(|c| {
                    assert_eq!(c["type"], "function");
                    assert!(c["id"].as_str().is_some_and(|id| !id.is_empty()));
                    let arguments = c["function"]["arguments"]
                        .as_str()
                        .expect("arguments string");
                    (
                        c["function"]["name"].as_str().unwrap().to_string(),
                        serde_json::from_str(arguments).expect("arguments parse"),
                    )
                })
                .collect()
        })
        .unwrap_or_default();
    Said {
        content: message["content"].as_str().unwrap_or_default().to_string(),
        calls,
        finish: choice["finish_reason"].as_str().unwrap().to_string(),
        usage: response["usage"].clone(),
    }
}

pub fn said_streamed(chunks: &[Value]) -> Said {
    let mut content = String::new();
    let mut calls: Vec<(String, String)> = Vec::new();
    let mut finish = String::new();
    let mut usage = Value::Null;
    for chunk in chunks {
        assert_eq!(chunk["object"], "chat.completion.chunk");
        if let Some(u) = chunk.get("usage").filter(|u| !u.is_null()) {
            usage = u.clone();
        }
        let Some(choice) = chunk["choices"].get(0) else {
            continue;
        };
        let delta = &choice["delta"];
        if let Some(text) = delta["content"].as_str() {
            content.push_str(text);
        }
        for call in delta["tool_calls"].as_array().into_iter().flatten() {
            let index = call["index"].as_u64().expect("integer index") as usize;
            if index == calls.len() {
                calls.push((String::new(), String::new()));
            }
            if let Some(name) = call["function"]["name"].as_str() {
                calls[index].0.push_str(name);
            }
            if let Some(arguments) = call["function"]["arguments"].as_str() {
                calls[index].1.push_str(arguments);
            }
        }
        if let Some(reason) = choice["finish_reason"].as_str() {
            finish = reason.to_string();
        }
    }
    Said {
        content,
        calls: calls
            .into_iter()
            .map(|(name, arguments)| {
                (
                    name,
                    serde_json::from_str(&arguments).expect("arguments parse"),
                )
            })
            .collect(),
        finish,
        usage,
    }
}

pub fn tool(name: &str, description: &str, parameters: Value) -> Value {
    json!({"type": "function", "function": {"name": name, "description": description, "parameters": parameters}})
}

pub fn weather() -> Value {
    tool(
        "get_weather",
        "Current weather for a city",
        json!({"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}),
    )
}

pub fn user(text: &str) -> Value {
    json!([{"role": "user", "content": text}])
}

pub fn request(messages: Value, tools: Value, choice: Value, parallel: bool) -> Value {
    json!({
        "model": "tiny", "messages": messages, "tools": tools, "tool_choice": choice,
        "parallel_tool_calls": parallel, "temperature": 0, "max_tokens": 200, "seed": 7,
    })
}

/// Checks each call against the request's tools with rein's own validator.
pub fn assert_calls_validate(body: &Value, said: &Said) {
    let specs: Vec<ToolSpec> = serde_json::from_value(body["tools"].clone()).unwrap();
    let tools = ToolSet::prepare(&specs).unwrap();
    for (name, arguments) in &said.calls {
        let tool = tools
            .get(name)
            .unwrap_or_else(|| panic!("unknown tool {name}"));
        tool.validator
            .check_value(arguments.clone())
            .unwrap_or_else(|e| panic!("{name}({arguments}): {e}"));
    }
}

#[test]
fn tool_calls_plain_and_streamed_say_the_same_thing() {
    // Loads a model: one model test at a time.
    let _model = rein_test_support::model_lock();
    // Two servers that see the same requests in the same order: one answers plainly,
    // one streams. Their caches evolve alike, so greedy replies must match exactly.
    let plain = TestServer::start(2, Duration::from_secs(60), None);
    let streamed = TestServer::start(2, Duration::from_secs(60), None);
    let nested = tool(
        "create_event",
        "Create a calendar event",
        json!({"type": "object", "properties": {
            "title": {"type": "string"},
            "place": {"type": "object", "properties": {"city": {"type": "string"}, "floor": {"type": "integer"}}, "required": ["city"]},
            "guests": {"type": "array", "items": {"type": "string"}, "maxItems": 4},
            "kind": {"type": "string", "enum": ["réunion", "fête", "会议"]}
        }, "required": ["title", "place", "guests", "kind"]}),
    );
    let no_arguments = json!({"type": "function", "function": {"name": "get_time", "description": "The current time"}});
    let follow_up = json!([
        {"role": "user", "content": "What is the weather in Paris?"},
        {"role": "assistant", "content": null, "tool_calls": [
            {"id": "call_1", "type": "function", "function": {"name": "get_weather", "arguments": "{\"city\": \"Paris\"}"}}]},
        {"role": "tool", "tool_call_id": "call_1", "content": "{\"temperature_c\": 21, \"sky\": \"sunny\"}"}
    ]);
    let cases = [
        (
            "single call",
            request(
                user("What is the weather in Paris?"),
                json!([weather()]),
                json!("required"),
                false,
            ),
        ),
        (
            "parallel calls",
            request(
                user("What is the weather in Paris and in Tokyo?"),
                json!([weather()]),
                json!("required"),
                true,
            ),
        ),
        (
            "no call needed",
            request(user("Say hello."), json!([weather()]), json!("none"), true),
        ),
        (
            "model decides",
            request(
                user("Hi! How are you today?"),
                json!([weather()]),
                json!("auto"),
                true,
            ),
        ),
        (
            "nested and unicode",
            request(
                user("Plan a party called «Fête d'été» in Zürich with 李雷 and Zoë."),
                json!([nested]),
                json!("required"),
                false,
            ),
        ),
        (
            "no arguments",
            request(
                user("What time is it?"),
                json!([no_arguments.clone()]),
                json!("required"),
                false,
            ),
        ),
        (
            "forced tool",
            request(
                user("What is the weather in Oslo?"),
                json!([weather(), no_arguments]),
                json!({"type": "function", "function": {"name": "get_time"}}),
                false,
            ),
        ),
        (
            "follow-up",
            request(follow_up, json!([weather()]), json!("auto"), false),
        ),
    ];
    for (name, body) in cases {
        let (status, response, _) = plain.post(&body);
        assert_eq!(status, 200, "{name}: {response}");
        let said = said_plain(&response);
        let (chunks, done) = streamed.post_stream(&body);
        assert!(done, "{name}: the stream did not end with [DONE]");
        assert_eq!(
            said_streamed(&chunks),
            said,
            "{name}: streamed differs from plain"
        );
        assert_calls_validate(&body, &said);
        let calls = said.calls.len();
        assert_eq!(said.finish == "tool_calls", calls > 0, "{name}: {said:?}");
        match name {
            "single call" => {
                assert_eq!(calls, 1, "{said:?}");
                assert_eq!(said.calls[0].0, "get_weather");
            }
            "parallel calls" => assert!(calls >= 2, "{said:?}"),
            "no call needed" => {
                assert_eq!(calls, 0);
                assert!(!said.content.trim().is_empty());
                assert!(!said.content.contains("<tool_call>"), "{said:?}");
            }
            "nested and unicode" => {
                assert_eq!(calls, 1, "{said:?}");
                // The grammar allows only these values: non-ASCII text crosses token
                // boundaries and JSON escaping intact, plain and streamed.
                let kind = said.calls[0].1["kind"].as_str().unwrap_or_default();
                assert!(["réunion", "fête", "会议"].contains(&kind), "{said:?}");
                assert!(said.calls[0].1["place"]["city"].is_string(), "{said:?}");
            }
            "no arguments" => assert_eq!(said.calls, vec![("get_time".to_string(), json!({}))]),
            "forced tool" => assert!(
                said.calls.iter().all(|(n, _)| n == "get_time") && calls == 1,
                "{said:?}"
            ),
            "follow-up" => {
                let usage = &said.usage;
                assert!(usage["prompt_tokens"].as_u64().unwrap() > 50, "{usage}");
            }
            _ => {}
        }
        // Content never carries a call marker when calls are parsed.
        assert!(!said.content.contains("<tool_call>"), "{name}: {said:?}");
        assert_eq!(
            said.usage["total_tokens"].as_u64(),
            Some(
                said.usage["prompt_tokens"].as_u64().unwrap()
                    + said.usage["completion_tokens"].as_u64().unwrap()
            )
        );
    }
}

#[test]
fn a_conversations_next_request_reuses_its_cached_prefix() {
    // Loads a model: one model test at a time.
    let _model = rein_test_support::model_lock();
    let server = TestServer::start(2, Duration::from_secs(60), None);
    let first = json!({"messages": user("Name three rivers in Europe."), "temperature": 0, "max_tokens": 30});
    let (status, response, _) = server.post(&first);
    assert_eq!(status, 200);
    let reply = response["choices"][0]["message"]["content"]
        .as_str()
        .unwrap()
        .to_string();
    let prompt_tokens = response["usage"]["prompt_tokens"].as_u64().unwrap();
    let second = json!({"messages": [
        {"role": "user", "content": "Name three rivers in Europe."},
        {"role": "assistant", "content": reply},
        {"role": "user", "content": "Which is the longest?"}
    ], "temperature": 0, "max_tokens": 20});
    let (status, response, _) = server.post(&second);
    assert_eq!(status, 200);
    let cached = response["usage"]["prompt_tokens_details"]["cached_tokens"]
        .as_u64()
        .unwrap();
    assert!(
        cached >= prompt_tokens,
        "cached {cached} of the first {prompt_tokens} prompt tokens"
    );
}

#[test]
fn bad_requests_get_openai_error_objects() {
    // Loads a model: one model test at a time.
    let _model = rein_test_support::model_lock();
    let server = TestServer::start(1, Duration::from_secs(60), None);
    let post_raw = |body: &str| match ureq::post(&format!("{}/v1/chat/completions", server.url))
        .set("content-type", "application/json")
        .send_string(body)
    {
        Ok(r) => (r.status(), r.into_json::<Value>().unwrap()),
        Err(ureq::Error::Status(code, r)) => (code, r.into_json::<Value>().unwrap()),
        Err(e) => panic!("{e}"),
    };
    let too_big = format!(
        "{{\"messages\": [{{\"role\": \"user\", \"content\": \"{}\"}}]}}",
        "x".repeat(70 * 1024)
    );
    let cases: Vec<(String, u16, Option<&str>)> = vec![
        ("{\"messages\": [".into(), 400, None),
        (json!({"messages": [{"role": "wizard", "content": "hi"}]}).to_string(), 400, Some("messages[0].role")),
        (json!({"messages": user("hi"), "temperature": 9}).to_string(), 400, Some("temperature")),
        (json!({"messages": user("hi"), "max_tokens": 0}).to_string(), 400, Some("max_tokens")),
        (json!({"messages": user("hi"), "tools": [tool("f", "", json!({"type": "object", "properties": {"a": {"$ref": "#/missing"}}}))]}).to_string(), 400, Some("tools")),
        (json!({"messages": user("hi"), "tools": [weather()], "tool_choice": {"type": "function", "function": {"name": "nope"}}}).to_string(), 400, Some("tool_choice")),
        (json!({"messages": user(&"word ".repeat(3000))}).to_string(), 400, Some("messages")),
        (too_big, 413, None),
    ];
    for (body, status, param) in cases {
        let (got, error) = post_raw(&body);
        let short: String = body.chars().take(80).collect();
        assert_eq!(got, status, "{short}: {error}");
        let message = error["error"]["message"].as_str().unwrap_or_default();
        assert!(!message.is_empty(), "{short}: {error}");
        assert!(error["error"]["type"].is_string(), "{error}");
        if let Some(param) = param {
            assert_eq!(error["error"]["param"], param, "{short}: {error}");
        }
    }
    let missing = ureq::get(&format!("{}/v2/nothing", server.url)).call();
    assert!(matches!(missing, Err(ureq::Error::Status(404, _))));
    // The server still answers after all that.
    let (status, _, _) = server.post(&json!({"messages": user("hi"), "max_tokens": 4}));
    assert_eq!(status, 200);
}

#[test]
fn the_bearer_key_is_required_when_configured() {
    // Loads a model: one model test at a time.
    let _model = rein_test_support::model_lock();
    let server = TestServer::start(1, Duration::from_secs(60), Some("sesame"));
    let url = format!("{}/v1/models", server.url);
    assert!(matches!(
        ureq::get(&url).call(),
        Err(ureq::Error::Status(401, _))
    ));
    let wrong = ureq::get(&url).set("authorization", "Bearer nope").call();
    assert!(matches!(wrong, Err(ureq::Error::Status(401, _))));
    let models: Value = ureq::get(&url)
        .set("authorization", "Bearer sesame")
        .call()
        .unwrap()
        .into_json()
        .unwrap();
    assert_eq!(models["data"][0]["id"], "tiny");
    // Health stays open for load balancers.
    assert_eq!(server.health()["status"], "ok");
}

/// A reply the grammar keeps long: 30 strings of at least 200 characters.
fn long_reply() -> Value {
    json!({"messages": user("Write thirty long sentences."), "temperature": 0, "max_tokens": 1900,
           "response_format": {"type": "json_schema", "json_schema": {"name": "long", "schema": {
               "type": "object",
               "properties": {"lines": {"type": "array", "minItems": 30, "maxItems": 30,
                   "items": {"type": "string", "minLength": 200, "maxLength": 256}}},
               "required": ["lines"]}}}})
}

#[test]
fn a_client_that_disconnects_mid_stream_frees_its_session() {
    // Loads a model: one model test at a time.
    let _model = rein_test_support::model_lock();
    let server = TestServer::start(1, Duration::from_secs(60), None);
    let mut body = long_reply();
    body["stream"] = json!(true);
    let response = ureq::post(&format!("{}/v1/chat/completions", server.url))
        .send_json(body)
        .unwrap();
    let mut reader = BufReader::new(response.into_reader());
    let mut line = String::new();
    let mut data_lines = 0;
    while data_lines < 5 {
        line.clear();
        reader.read_line(&mut line).unwrap();
        if line.starts_with("data: ") {
            data_lines += 1;
        }
    }
    assert_eq!(server.health()["sessions"]["busy"], 1);
    drop(reader);
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let health = server.health();
        if health["sessions"]["busy"] == 0 {
            assert_eq!(health["requests"]["streams_cancelled"], 1, "{health}");
            break;
        }
        assert!(
            Instant::now() < deadline,
            "the session was not freed: {health}"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    // The only session is free again: the next request is answered.
    let (status, _, _) = server.post(&json!({"messages": user("hi"), "max_tokens": 4}));
    assert_eq!(status, 200);
}

#[test]
fn requests_beyond_the_queue_timeout_get_503_with_retry_after() {
    // Loads a model: one model test at a time.
    let _model = rein_test_support::model_lock();
    let server = TestServer::start(1, Duration::from_secs(1), None);
    let url = server.url.clone();
    let holder = std::thread::spawn(move || {
        ureq::post(&format!("{url}/v1/chat/completions"))
            .send_json(long_reply())
            .map(|r| r.status())
            .map_err(|e| e.to_string())
    });
    let deadline = Instant::now() + Duration::from_secs(30);
    while server.health()["sessions"]["busy"] != 1 {
        assert!(Instant::now() < deadline, "the first request never started");
        std::thread::sleep(Duration::from_millis(20));
    }
    let (status, error, retry) = server.post(&json!({"messages": user("hi"), "max_tokens": 4}));
    assert_eq!(status, 503, "{error}");
    assert_eq!(error["error"]["code"], "server_busy");
    assert!(retry.is_some_and(|s| s.parse::<u64>().is_ok()));
    assert_eq!(holder.join().unwrap().unwrap(), 200);
}
