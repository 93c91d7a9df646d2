//! Picks and steps the loop checks: a call for another item than the task's
//! superlative picks is not run once, a file's text copied back as the answer is held
//! once, a call deferred long ago holds no answer, a value not found is followed by
//! the call with the one an earlier result gave, and a placeholder where the value
//! goes is held.

use std::sync::{Arc, Mutex};

use rein_agent::{Profile, RunConfig};

use rein_protocol::{FunctionSpec, ToolChoice, ToolSpec};
use rein_test_support::ScriptedBackend;
use rein_tools::{Access, Registry, Tool, ToolOutcome, Workspace};
use serde_json::{json, Value};

use super::{call, recoveries, run_full, run_with_tools, seen, tool_outputs};

/// A read-only tool that answers every call with the same JSON.
struct Fixed {
    name: &'static str,
    properties: Value,
    result: Value,
}

impl Tool for Fixed {
    fn name(&self) -> &str {
        self.name
    }

    fn spec(&self) -> ToolSpec {
        spec(self.name, "Looks something up.", self.properties.clone())
    }

    fn access(&self, _args: &Value, _workspace: &Workspace) -> Access {
        Access::Read(Vec::new())
    }

    fn call(&self, _args: &Value, _workspace: &Workspace) -> ToolOutcome {
        ToolOutcome::success(self.result.to_string())
    }
}

/// Flights to compare.
fn flights() -> Arc<Fixed> {
    Arc::new(Fixed {
        name: "search_flights",
        properties: json!({"origin": {"type": "string"}}),
        result: json!({"flights": [
            {"flight_id": "UA-1187", "price": {"amount": 289}},
            {"flight_id": "WN-2240", "price": {"amount": 214}},
            {"flight_id": "DL-0931", "price": {"amount": 247}}
        ]}),
    })
}

/// A booking that records what it booked.
struct Booking {
    booked: Arc<Mutex<Vec<String>>>,
}

impl Tool for Booking {
    fn name(&self) -> &str {
        "book_flight"
    }

    fn spec(&self) -> ToolSpec {
        spec(
            "book_flight",
            "Books a flight.",
            json!({"flight_id": {"type": "string"}, "passenger_name": {"type": "string"}}),
        )
    }

    fn access(&self, _args: &Value, _workspace: &Workspace) -> Access {
        Access::Write(Vec::new())
    }

    fn call(&self, args: &Value, _workspace: &Workspace) -> ToolOutcome {
        let id = args["flight_id"].as_str().unwrap_or_default().to_string();
        self.booked.lock().unwrap().push(id);
        ToolOutcome::success("status: confirmed\nconfirmation_code: XR2P9L".to_string())
    }
}

/// The built-in tools, the flights to compare, and a booking whose record comes back.
fn flights_and_booking() -> (Registry, Arc<Mutex<Vec<String>>>) {
    let booked = Arc::new(Mutex::new(Vec::new()));
    let mut registry = Registry::builtin();
    registry.add(flights());
    registry.add(Arc::new(Booking {
        booked: Arc::clone(&booked),
    }));
    (registry, booked)
}

fn spec(name: &str, description: &str, properties: Value) -> ToolSpec {
    ToolSpec {
        kind: "function".into(),
        function: FunctionSpec {
            name: name.into(),
            description: Some(description.into()),
            parameters: Some(json!({"type": "object", "properties": properties})),
        },
    }
}

#[test]
fn a_call_for_another_item_than_the_superlative_picks_is_not_run_once() {
    let dir = tempfile::tempdir().unwrap();
    let (registry, booked) = flights_and_booking();
    let task = "Search for flights from BOS, then book the cheapest of them for the passenger \"Ana Souza\". Tell me the flight id you booked.";
    let book = |id: &str| {
        call(
            "book_flight",
            &format!(r#"{{"flight_id": "{id}", "passenger_name": "Ana Souza"}}"#),
        )
    };
    let backend = ScriptedBackend::new(
        vec![
            call("search_flights", r#"{"origin": "BOS"}"#),
            book("DL-0931"),
            book("WN-2240"),
            "Booked WN-2240, confirmation XR2P9L.".into(),
        ],
        true,
    );
    let r = run_with_tools(
        dir.path(),
        task,
        backend,
        &registry,
        RunConfig::new(Profile::Full),
    );
    assert_eq!(
        r.result.answer.as_deref(),
        Some("Booked WN-2240, confirmation XR2P9L.")
    );
    assert_eq!(*booked.lock().unwrap(), vec!["WN-2240".to_string()]);
    let refused = tool_outputs(&r.events)[1];
    assert!(
        refused.starts_with("Not run: the task asks for the cheapest price.amount, and the list shows that is WN-2240 (214), not DL-0931.")
            && refused.contains(r#""flight_id":"WN-2240""#),
        "{refused}"
    );

    // Once a run: the same call again is made.
    let (registry, booked) = flights_and_booking();
    let backend = ScriptedBackend::new(
        vec![
            call("search_flights", r#"{"origin": "BOS"}"#),
            book("DL-0931"),
            book("DL-0931"),
            "Booked DL-0931.".into(),
        ],
        true,
    );
    let mut config = RunConfig::new(Profile::Full);
    config.answer_guards = false;
    run_with_tools(dir.path(), task, backend, &registry, config);
    assert_eq!(*booked.lock().unwrap(), vec!["DL-0931".to_string()]);

    // `naive` runs the call.
    let (registry, booked) = flights_and_booking();
    let backend = ScriptedBackend::new(
        vec![
            call("search_flights", r#"{"origin": "BOS"}"#),
            book("DL-0931"),
            "Booked DL-0931.".into(),
        ],
        true,
    );
    run_with_tools(
        dir.path(),
        task,
        backend,
        &registry,
        RunConfig::new(Profile::Naive),
    );
    assert_eq!(*booked.lock().unwrap(), vec!["DL-0931".to_string()]);
}

#[test]
fn a_call_for_a_superlative_the_list_does_not_decide_alone_runs_at_once() {
    // "the cheapest nonstop flight": the list compares prices, not stops, so the
    // pick is the model's; its booking runs the first time it is made.
    let dir = tempfile::tempdir().unwrap();
    let (registry, booked) = flights_and_booking();
    let task = "Search for flights from BOS, then book the cheapest nonstop flight for the passenger \"Ana Souza\". Tell me the flight id you booked.";
    let backend = ScriptedBackend::new(
        vec![
            call("search_flights", r#"{"origin": "BOS"}"#),
            call(
                "book_flight",
                r#"{"flight_id": "DL-0931", "passenger_name": "Ana Souza"}"#,
            ),
            "Booked DL-0931, confirmation XR2P9L.".into(),
        ],
        true,
    );
    let r = run_with_tools(
        dir.path(),
        task,
        backend,
        &registry,
        RunConfig::new(Profile::Full),
    );
    assert_eq!(*booked.lock().unwrap(), vec!["DL-0931".to_string()]);
    // Nor is the answer naming it held.
    assert_eq!(
        r.result.answer.as_deref(),
        Some("Booked DL-0931, confirmation XR2P9L.")
    );
    assert!(
        !r.result.rules.contains_key("wrong_pick_call")
            && !r.result.rules.contains_key("wrong_pick"),
        "{:?}",
        r.result.rules
    );
}

#[test]
fn a_file_copied_back_as_the_read_showed_it_is_held() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("limits.toml"),
        "[limits]\nmax_connections = 250\ntimeout_s = 30\n",
    )
    .unwrap();
    let task = "Read limits.toml and tell me the value of max_connections in it.";
    let copy = "1| [limits]\n   2| max_connections = 250\n   3| timeout_s = 30";
    let replies = vec![
        call("read_file", r#"{"path": "limits.toml"}"#),
        copy.to_string(),
        "max_connections is 250.".to_string(),
    ];
    let r = run_full(dir.path(), task, replies);
    assert_eq!(r.result.answer.as_deref(), Some("max_connections is 250."));
    assert_eq!(recoveries(&r.events), vec!["not_an_answer"]);
    let note = seen(&r, 2);
    assert!(note.contains("it copies a file's text"), "{note}");
    // The retry may answer: it is not forced into a call.
    assert_eq!(
        r.agent.backend().requests[2].request.choice,
        ToolChoice::Auto
    );
}

#[test]
fn a_call_deferred_two_steps_of_other_calls_ago_holds_no_answer() {
    let dir = tempfile::tempdir().unwrap();
    for (name, text) in [
        ("a.txt", "pears\n"),
        ("b.txt", "apples\n"),
        ("c.txt", "plums\n"),
    ] {
        std::fs::write(dir.path().join(name), text).unwrap();
    }
    let task = "Read a.txt, b.txt and c.txt and tell me which fruit is in b.txt.";
    let read = |path: &str| call("read_file", &format!(r#"{{"path": "{path}"}}"#));
    // The listing waits for the first read's result (planned), and is never made.
    let sprayed = [read("a.txt"), call("list_dir", r#"{"path": "."}"#)].join("\n");
    let answer = "b.txt holds apples.".to_string();
    let passed_by = vec![
        sprayed.clone(),
        read("b.txt"),
        read("c.txt"),
        answer.clone(),
    ];
    let r = run_full(dir.path(), task, passed_by);
    assert_eq!(
        r.result.answer.as_deref(),
        Some(answer.as_str()),
        "{:?}",
        r.events
    );
    assert!(
        !recoveries(&r.events).contains(&"not_an_answer".to_string()),
        "{:?}",
        r.events
    );
    // One step later, the plan still holds the answer once.
    let fresh = vec![sprayed, read("b.txt"), answer.clone(), answer.clone()];
    let r = run_full(dir.path(), task, fresh);
    assert!(
        r.events.iter().any(|e| matches!(
            e,
            rein_protocol::RunEvent::Recovery { detail, .. } if detail.starts_with("planned_calls")
        )),
        "{:?}",
        r.events
    );
}

/// A repository lookup, and a branch lookup that knows only `trunk`.
fn repo() -> Arc<Fixed> {
    Arc::new(Fixed {
        name: "get_repository",
        properties: json!({"repo": {"type": "string"}}),
        result: json!({"full_name": "acme/ledger", "default_branch": "trunk"}),
    })
}

struct Branch;

impl Tool for Branch {
    fn name(&self) -> &str {
        "get_branch"
    }

    fn spec(&self) -> ToolSpec {
        spec(
            "get_branch",
            "Gets a branch.",
            json!({"repo": {"type": "string"}, "branch": {"type": "string"}}),
        )
    }

    fn access(&self, _args: &Value, _workspace: &Workspace) -> Access {
        Access::Read(Vec::new())
    }

    fn call(&self, args: &Value, _workspace: &Workspace) -> ToolOutcome {
        match args["branch"].as_str() {
            Some("trunk") => ToolOutcome::success("name: trunk\ncommit.sha: 9f3c2e1".to_string()),
            _ => ToolOutcome::success("error: branch not found".to_string()),
        }
    }
}

#[test]
fn a_value_not_found_is_followed_by_the_call_with_the_one_an_earlier_result_gave() {
    let dir = tempfile::tempdir().unwrap();
    let mut registry = Registry::builtin();
    registry.add(repo());
    registry.add(Arc::new(Branch));
    let task = "For the repository acme/ledger, get the repository to find its default branch (do not assume it is \"main\"), then get that branch and tell me its latest commit sha.";
    let backend = ScriptedBackend::new(
        vec![
            call("get_repository", r#"{"repo": "acme/ledger"}"#),
            call("get_branch", r#"{"repo": "acme/ledger", "branch": "main"}"#),
            call(
                "get_branch",
                r#"{"repo": "acme/ledger", "branch": "trunk"}"#,
            ),
            "The latest commit is 9f3c2e1.".into(),
        ],
        true,
    );
    let r = run_with_tools(
        dir.path(),
        task,
        backend,
        &registry,
        RunConfig::new(Profile::Full),
    );
    assert_eq!(
        r.result.answer.as_deref(),
        Some("The latest commit is 9f3c2e1.")
    );
    let next = seen(&r, 2);
    assert!(
        next.contains("`main` was not found; an earlier result gave `default_branch: trunk`. The same call with it:")
            && next.contains(r#""branch":"trunk""#),
        "{next}"
    );
}

#[test]
fn calls_of_one_tool_over_several_items_make_no_pick_to_check() {
    let dir = tempfile::tempdir().unwrap();
    let (registry, booked) = flights_and_booking();
    let task = "Search for flights from BOS, then hold a seat on each for \"Ana Souza\" and tell me which is the cheapest.";
    let book = |id: &str| {
        call(
            "book_flight",
            &format!(r#"{{"flight_id": "{id}", "passenger_name": "Ana Souza"}}"#),
        )
    };
    let sweep = [book("UA-1187"), book("DL-0931"), book("WN-2240")].join("\n");
    let backend = ScriptedBackend::new(
        vec![
            call("search_flights", r#"{"origin": "BOS"}"#),
            sweep,
            "WN-2240 is the cheapest.".into(),
        ],
        true,
    );
    run_with_tools(
        dir.path(),
        task,
        backend,
        &registry,
        RunConfig::new(Profile::Full),
    );
    let mut ran = booked.lock().unwrap().clone();
    ran.sort();
    assert_eq!(ran, vec!["DL-0931", "UA-1187", "WN-2240"]);
}

#[test]
fn an_answer_with_a_placeholder_where_the_value_goes_is_held() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("code.txt"), "gateway code PG-4471\n").unwrap();
    let task = "Read code.txt and tell me the gateway code.";
    let replies = vec![
        call("read_file", r#"{"path": "code.txt"}"#),
        "The gateway code is <gateway_code>.".to_string(),
        "The gateway code is PG-4471.".to_string(),
    ];
    let r = run_full(dir.path(), task, replies);
    assert_eq!(
        r.result.answer.as_deref(),
        Some("The gateway code is PG-4471.")
    );
    assert_eq!(recoveries(&r.events), vec!["not_an_answer"]);
    let note = seen(&r, 2);
    assert!(
        note.contains("it writes `<gateway_code>` where a value goes"),
        "{note}"
    );
    assert_eq!(
        r.agent.backend().requests[2].request.choice,
        ToolChoice::Auto
    );
}
