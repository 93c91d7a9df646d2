//! The Hermes stream (the marker engine with the Hermes syntax): split invariance
//! against the one-shot parse and the strict Hermes parser (property tests), held-back
//! markers, and malformed or cut input.

use proptest::prelude::*;
use rein_format::hermes::{self, ParseError};
use rein_format::stream::{parse_complete, Rejection, StreamEvent, StreamReply};
use rein_format::Family;
use serde_json::{json, Value};

/// Feeds `chunks` and returns every event plus the final reply.
fn stream(chunks: &[&str], open: bool, cut_off: bool) -> (Vec<StreamEvent>, StreamReply) {
    let mut parser = Family::Hermes.stream(open);
    let mut events = Vec::new();
    for c in chunks {
        events.extend(parser.push(c));
    }
    let finished = parser.finish(cut_off);
    events.extend(finished.events);
    (events, finished.reply)
}

/// Content, reasoning and `(name, arguments)` per call, from events alone.
fn merged(events: &[StreamEvent]) -> (String, String, Vec<(String, String)>) {
    let (mut content, mut reasoning, mut calls) = (String::new(), String::new(), Vec::new());
    for e in events {
        match e {
            StreamEvent::Content(t) => content.push_str(t),
            StreamEvent::Reasoning(t) => reasoning.push_str(t),
            StreamEvent::ToolCallStart { index, name } => {
                assert_eq!(*index, calls.len());
                calls.push((name.clone(), String::new()));
            }
            StreamEvent::ToolCallArguments { index, delta } => calls[*index].1.push_str(delta),
            StreamEvent::ToolCallEnd { index } => assert_eq!(*index + 1, calls.len()),
        }
    }
    (content, reasoning, calls)
}

fn split_at<'a>(text: &'a str, cuts: &[usize]) -> Vec<&'a str> {
    let mut bounds: Vec<usize> = cuts
        .iter()
        .map(|c| c % (text.len() + 1))
        .filter(|&c| text.is_char_boundary(c))
        .collect();
    bounds.push(0);
    bounds.push(text.len());
    bounds.sort_unstable();
    bounds.dedup();
    bounds.windows(2).map(|w| &text[w[0]..w[1]]).collect()
}

fn text_piece() -> impl Strategy<Value = String> {
    prop::collection::vec(
        prop_oneof![
            Just("<".to_string()),
            Just("<tool_".to_string()),
            Just("</think".to_string()),
            Just(" ".to_string()),
            Just("\n".to_string()),
            Just("é🌸".to_string()),
            "[a-z]{1,6}",
        ],
        0..6,
    )
    .prop_map(|parts| parts.concat())
}

fn call() -> impl Strategy<Value = (String, Value)> {
    let value = prop_oneof![
        Just(json!("</tool_call> <tool_call> \"}")),
        Just(json!("<think>x</think>")),
        Just(json!(3)),
        Just(json!([1, {"a": null}])),
        "[a-z\\\\\"{}<>/ ]{0,12}".prop_map(Value::String),
    ];
    (
        "[a-z_]{1,8}",
        prop::collection::btree_map("[a-z]{1,4}", value, 0..3),
    )
        .prop_map(|(name, args)| (name, json!(args)))
}

fn reply() -> impl Strategy<Value = (String, String, bool)> {
    (
        prop::option::of(text_piece()),
        text_piece(),
        prop::collection::vec((call(), text_piece(), any::<bool>()), 0..3),
        any::<bool>(),
    )
        .prop_map(|(reasoning, lead, calls, open)| {
            let mut body = lead;
            for ((name, args), after, newline) in calls {
                let nl = if newline { "\n" } else { "" };
                body.push_str(&format!(
                    "<tool_call>{nl}{{\"name\": \"{name}\", \"arguments\": {args}}}{nl}</tool_call>{after}"
                ));
            }
            let full = match (&reasoning, open) {
                (Some(r), true) => format!("{r}</think>{body}"),
                (Some(r), false) => format!("<think>{r}</think>{body}"),
                (None, _) => body.clone(),
            };
            (full, body, open && reasoning.is_some())
        })
}

proptest! {
    #[test]
    fn any_split_gives_the_one_shot_result((text, body, open) in reply(),
                                           cuts in prop::collection::vec(any::<usize>(), 0..12),
                                           cut_off in any::<bool>()) {
        let whole = parse_complete(&text, open, cut_off);
        let (events, reply) = stream(&split_at(&text, &cuts), open, cut_off);
        prop_assert_eq!(&reply, &whole);
        let chars: Vec<String> = text.chars().map(String::from).collect();
        let per_char: Vec<&str> = chars.iter().map(String::as_str).collect();
        let (char_events, char_reply) = stream(&per_char, open, cut_off);
        prop_assert_eq!(&char_reply, &whole);
        let (content, reasoning, calls) = merged(&events);
        prop_assert_eq!(merged(&char_events), (content.clone(), reasoning.clone(), calls.clone()));
        prop_assert_eq!(whole.content.clone().unwrap_or_default(), content);
        prop_assert_eq!(whole.reasoning.clone().unwrap_or_default(), reasoning);
        let expected: Vec<(String, String)> =
            whole.calls.iter().map(|c| (c.name.clone(), c.arguments.to_string())).collect();
        prop_assert_eq!(expected, calls);
        if !cut_off && !open && !text.trim_start().starts_with("<think>") {
            if let Ok(strict) = hermes::parse_reply(&body) {
                if whole.rejected.is_empty() {
                    prop_assert_eq!(strict.content, whole.content.clone());
                    prop_assert_eq!(strict.calls, whole.calls.clone());
                }
            }
        }
        for e in &events {
            if let StreamEvent::Content(t) | StreamEvent::Reasoning(t) = e {
                prop_assert!(!t.is_empty());
            }
        }
    }
}

#[test]
fn a_partial_marker_is_held_until_settled() {
    let mut parser = Family::Hermes.stream(false);
    assert_eq!(
        parser.push("Hi <tool_"),
        vec![StreamEvent::Content("Hi".into())]
    );
    assert_eq!(
        parser.push("box> there"),
        vec![StreamEvent::Content(" <tool_box> there".into())]
    );
    let mut parser = Family::Hermes.stream(true);
    assert_eq!(
        parser.push("plan</th"),
        vec![StreamEvent::Reasoning("plan".into())]
    );
    let events = parser.push("ink>\n\nok");
    assert_eq!(events, vec![StreamEvent::Content("ok".into())]);
    let reply = parser.finish(false).reply;
    assert_eq!(reply.reasoning.as_deref(), Some("plan"));
    assert_eq!(reply.content.as_deref(), Some("ok"));
}

#[test]
fn a_call_streams_once_closed_with_markers_in_strings_as_data() {
    let text =
        "<tool_call>\n{\"name\": \"echo\", \"arguments\": {\"t\": \"</tool_call>\"}}\n</tool_call>";
    let (events, reply) = stream(&split_at(text, &[5, 20, 40, 70]), false, false);
    assert_eq!(
        events,
        vec![
            StreamEvent::ToolCallStart {
                index: 0,
                name: "echo".into()
            },
            StreamEvent::ToolCallArguments {
                index: 0,
                delta: "{\"t\":\"</tool_call>\"}".into()
            },
            StreamEvent::ToolCallEnd { index: 0 },
        ]
    );
    assert_eq!(reply.calls[0].arguments, json!({"t": "</tool_call>"}));
    assert_eq!(reply.problem(), None);
}

#[test]
fn cut_and_malformed_calls_are_reported_not_returned() {
    let first = "<tool_call>{\"name\": \"a\", \"arguments\": {}}</tool_call>";
    let cut = parse_complete(
        &format!("Ok.\n{first}\n<tool_call>{{\"name\": \"b\", \"argu"),
        false,
        true,
    );
    assert_eq!(cut.calls.len(), 1);
    assert_eq!(cut.content.as_deref(), Some("Ok."));
    assert_eq!(cut.rejected[0].rejection, Rejection::Truncated);
    assert_eq!(cut.rejected[0].position, 2);
    assert_eq!(cut.problem(), Some(ParseError::Truncated));
    let unclosed = parse_complete("<tool_call>{\"name\": \"b\"}", false, false);
    assert_eq!(unclosed.problem(), Some(ParseError::Unclosed));
    assert_eq!(unclosed.content, None);
    let partial = parse_complete("Let me <tool", false, true);
    assert_eq!(partial.content.as_deref(), Some("Let me"));
    assert_eq!(
        parse_complete("Let me <tool", false, false)
            .content
            .as_deref(),
        Some("Let me <tool")
    );
    let bad = "<tool_call>not json</tool_call>";
    let malformed = parse_complete(bad, false, false);
    assert_eq!(malformed.content.as_deref(), Some(bad));
    assert!(malformed.calls.is_empty());
    assert!(matches!(
        malformed.problem(),
        Some(ParseError::BadCall { index: 1, .. })
    ));
}

#[test]
fn reasoning_cut_off_is_reasoning() {
    let reply = parse_complete("<think>\nThe user wants", false, true);
    assert_eq!(reply.reasoning.as_deref(), Some("The user wants"));
    assert_eq!(reply.content, None);
    let open = parse_complete("The user wants", true, true);
    assert_eq!(open.reasoning.as_deref(), Some("The user wants"));
}
