//! `rein serve` with the small model over real HTTP: the calls it writes in its own
//! wrappers (fenced JSON, not the template's `<tool_call>` markers) come back as
//! `tool_calls`, streamed and not, the same message either way; a request for two
//! lookups gets two calls, a tool without parameters gets empty arguments, and a
//! request no tool fits gets an answer and no call.

use std::sync::Arc;
use std::time::Duration;

use rein_format::ToolSet;
use rein_protocol::ToolSpec;
use serde_json::{json, Value};

use crate::serve::{
    assert_calls_validate, request, said_plain, said_streamed, tool, user, weather, TestServer,
};
use crate::support::model_path;

/// What the served model itself wrote for `body`, read strictly (no repairs).
fn strict_reading(server: &TestServer, body: &Value) -> rein_format::Reply {
    use rein_engine::{Backend, NoEvents, ReadMode, SessionSource};
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let specs: Vec<ToolSpec> = serde_json::from_value(body["tools"].clone()).unwrap();
    let mut request =
        rein_engine::TurnRequest::text(serde_json::from_value(body["messages"].clone()).unwrap());
    request.tools = Some(Arc::new(ToolSet::prepare(&specs).unwrap()));
    request.constrained = true;
    request.read = ReadMode::STRICT;
    request.sampling = rein_engine::Sampling {
        temperature: 0.0,
        top_p: 1.0,
        seed: body["seed"].as_u64().unwrap_or(0) as u32,
        repeat_penalty: 1.0,
    };
    request.max_tokens = body["max_tokens"].as_u64().map(|m| m as u32);
    runtime.block_on(async {
        let mut session = server.model.session().await.unwrap();
        session
            .complete(request, &mut NoEvents)
            .await
            .unwrap()
            .reply
    })
}

#[test]
fn a_small_model_call_in_its_own_wrapper_comes_back_as_tool_calls() {
    // Loads a model: one model test at a time.
    let _model = rein_test_support::model_lock();
    let server = TestServer::start_model(model_path("small"), 1, Duration::from_secs(120), None);
    let nested = tool(
        "create_event",
        "Create a calendar event",
        json!({"type": "object", "properties": {
            "title": {"type": "string"},
            "place": {"type": "object", "properties": {"city": {"type": "string"}, "floor": {"type": "integer"}}, "required": ["city"]},
            "guests": {"type": "array", "items": {"type": "string"}, "maxItems": 4}
        }, "required": ["title", "place", "guests"]}),
    );
    let cases = [
        ("single call", "What is the weather in Paris?", weather(), "get_weather", json!({"city": "Paris"})),
        ("unicode", "Wie ist das Wetter in Zürich?", weather(), "get_weather", json!({"city": "Zürich"})),
        ("after reasoning", "I'm flying to Oslo tomorrow. First think about what you need, then check the weather there.", weather(), "get_weather", json!({"city": "Oslo"})),
        ("nested", "Plan a party called «Fête d'été» in Zürich with 李雷 and Zoë.", nested, "create_event", json!({"title": "Fête d'été", "place": {"city": "Zürich"}})),
    ];
    for (name, question, offered, tool_name, expected) in cases {
        let mut body = request(user(question), json!([offered]), json!("auto"), true);
        body["max_tokens"] = json!(300);
        // The small model does not write the template's `<tool_call>` markers: read
        // strictly, its reply holds no call.
        let strict = strict_reading(&server, &body);
        assert!(strict.calls.is_empty(), "{name}: {strict:?}");
        let (status, response, _) = server.post(&body);
        assert_eq!(status, 200, "{name}: {response}");
        let said = said_plain(&response);
        let (chunks, done) = server.post_stream(&body);
        assert!(done, "{name}: the stream did not end with [DONE]");
        let streamed = said_streamed(&chunks);
        assert_eq!(said.calls, streamed.calls, "{name}: streamed = plain");
        assert_eq!(said.content, streamed.content, "{name}: streamed = plain");
        assert_eq!(said.finish, "tool_calls", "{name}: {response}");
        assert_eq!(said.content, "", "{name}: no wrapper text leaks");
        assert_eq!(said.calls.len(), 1, "{name}: {:?}", said.calls);
        let (called, arguments) = &said.calls[0];
        assert_eq!(called, tool_name, "{name}");
        assert!(
            rein_eval::json_subset(&expected, arguments),
            "{name}: {arguments} should hold {expected}"
        );
        assert_calls_validate(&body, &said);
    }
}

/// Plain and streamed replies for `body`, checked to say the same thing.
fn said_both_ways(server: &TestServer, body: &Value, name: &str) -> crate::serve::Said {
    let (status, response, _) = server.post(body);
    assert_eq!(status, 200, "{name}: {response}");
    let said = said_plain(&response);
    let (chunks, done) = server.post_stream(body);
    assert!(done, "{name}: the stream did not end with [DONE]");
    let streamed = said_streamed(&chunks);
    assert_eq!(said.calls, streamed.calls, "{name}: streamed = plain");
    assert_eq!(said.content, streamed.content, "{name}: streamed = plain");
    assert_eq!(said.finish, streamed.finish, "{name}: streamed = plain");
    said
}

#[test]
fn the_small_model_makes_parallel_and_no_argument_calls_and_none_when_no_tool_fits() {
    let _model = rein_test_support::model_lock();
    let server = TestServer::start_model(model_path("small"), 1, Duration::from_secs(120), None);

    // Two independent lookups: two calls in one reply.
    let mut body = request(
        user("What is the weather in Paris and in Tokyo?"),
        json!([weather()]),
        json!("auto"),
        true,
    );
    body["max_tokens"] = json!(300);
    let said = said_both_ways(&server, &body, "parallel");
    assert_eq!(said.finish, "tool_calls", "parallel: {:?}", said.calls);
    assert_eq!(said.content, "", "parallel: no wrapper text leaks");
    let cities: Vec<&str> = said
        .calls
        .iter()
        .filter(|(name, _)| name == "get_weather")
        .filter_map(|(_, arguments)| arguments["city"].as_str())
        .collect();
    assert!(
        cities.contains(&"Paris") && cities.contains(&"Tokyo"),
        "parallel: {:?}",
        said.calls
    );
    assert_calls_validate(&body, &said);

    // A tool without parameters: a call with empty arguments.
    let clock = tool(
        "get_server_time",
        "The current time on the production server",
        json!({"type": "object", "properties": {}}),
    );
    let mut body = request(
        user("What time is it on the production server right now?"),
        json!([clock]),
        json!("auto"),
        true,
    );
    body["max_tokens"] = json!(200);
    let said = said_both_ways(&server, &body, "no arguments");
    assert_eq!(said.finish, "tool_calls", "no arguments: {:?}", said);
    assert_eq!(said.calls.len(), 1, "no arguments: {:?}", said.calls);
    assert_eq!(said.calls[0].0, "get_server_time");
    assert_eq!(said.calls[0].1, json!({}));
    assert_calls_validate(&body, &said);

    // Nothing the tools do: an answer in text, no call.
    let mut body = request(
        user("Write a two-line poem about the sea."),
        json!([weather()]),
        json!("auto"),
        true,
    );
    body["max_tokens"] = json!(120);
    let said = said_both_ways(&server, &body, "irrelevant");
    assert!(said.calls.is_empty(), "irrelevant: {:?}", said.calls);
    assert_ne!(said.finish, "tool_calls");
    assert!(!said.content.trim().is_empty(), "irrelevant: an answer");
}
