//! The reader on written replies: strict and repairing reads, wrapped calls for the
//! agent and for clients, and streaming that equals the whole read for every split.

use super::*;
use rein_protocol::ToolSpec;
use serde_json::json;

fn tools() -> ToolSet {
    let specs: Vec<ToolSpec> = serde_json::from_value(json!([
        {"type": "function", "function": {"name": "read_file", "parameters": {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]}}},
        {"type": "function", "function": {"name": "list_dir", "parameters": {"type": "object", "properties": {"path": {"type": "string"}}}}}
    ]))
    .unwrap();
    ToolSet::prepare(&specs).unwrap()
}

fn read(text: &str, cut_off: bool, choice: ToolChoice, mode: ReadMode) -> Reply {
    let tools = tools();
    let mut reader = ReplyReader::new(Family::Hermes, Some(&tools), &choice, mode);
    reader.push(text);
    reader.finish(cut_off).reply
}

/// Every split of `text` streams the same message as reading it whole.
fn streamed(text: &str, split: usize, mode: ReadMode) -> (String, Vec<ReadCall>) {
    let tools = tools();
    let mut reader = ReplyReader::new(Family::Hermes, Some(&tools), &ToolChoice::Auto, mode);
    let mut events = Vec::new();
    let chars: Vec<char> = text.chars().collect();
    for piece in chars.chunks(split.max(1)) {
        events.extend(reader.push(&piece.iter().collect::<String>()));
    }
    events.extend(reader.finish(false).events);
    let mut content = String::new();
    let mut calls = Vec::new();
    for event in events {
        match event {
            ReplyEvent::Content(text) => content.push_str(&text),
            ReplyEvent::Call(call) => calls.push(call),
            ReplyEvent::Reasoning(_) => {}
        }
    }
    (content, calls)
}

#[test]
fn strict_reading_separates_answers_calls_and_cuts() {
    let answer = read("All done.", false, ToolChoice::Auto, ReadMode::STRICT);
    assert_eq!(answer.content.as_deref(), Some("All done."));
    assert!(answer.calls.is_empty() && answer.problems.is_empty());
    let call = "<tool_call>\n{\"name\": \"list_dir\", \"arguments\": {}}\n</tool_call>";
    let read_call = read(call, false, ToolChoice::Auto, ReadMode::STRICT);
    assert_eq!(read_call.calls.len(), 1);
    assert_eq!(read_call.calls[0].check, CallCheck::Valid);
    let cut = read(
        "<tool_call>\n{\"name\": \"list",
        true,
        ToolChoice::Auto,
        ReadMode::STRICT,
    );
    assert_eq!(
        cut.problems,
        vec![ReplyProblem::Parse(ParseError::Truncated)]
    );
    assert!(cut.calls.is_empty());
    let missing = read("no call", false, ToolChoice::Required, ReadMode::STRICT);
    assert_eq!(missing.problems, vec![ReplyProblem::CallMissing]);
    let bad = read(
        "<tool_call>\n{\"name\": 3}\n</tool_call>",
        false,
        ToolChoice::Auto,
        ReadMode::STRICT,
    );
    assert!(matches!(
        bad.problems[..],
        [ReplyProblem::Parse(ParseError::BadCall { .. })]
    ));
    // Strict reading repairs nothing.
    let bare = read(
        "{\"name\": \"list_dir\", \"arguments\": {}}",
        false,
        ToolChoice::Auto,
        ReadMode::STRICT,
    );
    assert!(bare.calls.is_empty() && bare.problems.is_empty());
}

#[test]
fn calls_in_other_wrappers_are_read_or_reported() {
    let fenced = "```json\n{\"name\": \"read_file\", \"arguments\": {\"path\": \"a.txt\"}}\n```";
    let reply = read(fenced, false, ToolChoice::Auto, ReadMode::REPAIR);
    assert_eq!(reply.calls.len(), 1);
    assert!(reply.calls[0].wrapped && reply.content.is_none());
    assert!(reply.format_repair.is_some());
    let invented = read(
        "{\"name\": \"delete_everything\", \"arguments\": {}}",
        false,
        ToolChoice::Auto,
        ReadMode::REPAIR,
    );
    assert_eq!(
        invented.problems,
        vec![ReplyProblem::InventedTool("delete_everything".into())]
    );
    let prose =
        "I will read it: {\"name\": \"read_file\", \"arguments\": {\"path\": \"a.txt\"}} now.";
    let misformatted = read(prose, false, ToolChoice::Auto, ReadMode::REPAIR);
    assert!(misformatted.calls.is_empty());
    assert!(
        matches!(&misformatted.problems[..], [ReplyProblem::Misformatted(calls)] if calls.len() == 1 && calls[0].starts_with("<tool_call>"))
    );
    // Every distinct call of the first tool is shown, in order, each once (the other
    // tools' calls are later steps).
    let several = "I will read {\"name\": \"read_file\", \"arguments\": {\"path\": \"a.txt\"}}, then {\"name\": \"read_file\", \"arguments\": {\"path\": \"b.txt\"}}, write {\"name\": \"write_file\", \"arguments\": {\"path\": \"c.txt\", \"content\": \"x\"}} and {\"name\": \"read_file\", \"arguments\": {\"path\": \"a.txt\"}} again.";
    let read_several = read(several, false, ToolChoice::Auto, ReadMode::REPAIR);
    match &read_several.problems[..] {
        [ReplyProblem::Misformatted(calls)] => {
            assert_eq!(calls.len(), 2, "{calls:?}");
            assert!(
                calls[0].contains("a.txt") && calls[1].contains("b.txt"),
                "{calls:?}"
            );
        }
        other => panic!("{other:?}"),
    }
    let variant =
        "<tool_call>\n{\"name\": \"Read-File\", \"arguments\": {\"path\": \"a\"}}\n</tool_call>";
    let repaired = read(variant, false, ToolChoice::Auto, ReadMode::REPAIR);
    assert_eq!(repaired.calls[0].name, "read_file");
    assert_eq!(repaired.calls[0].written_name, "Read-File");
    let strict = read(variant, false, ToolChoice::Auto, ReadMode::STRICT);
    assert_eq!(strict.calls[0].check, CallCheck::UnknownTool);
}

#[test]
fn a_client_gets_wrapped_calls_only_when_they_validate() {
    let invalid = "{\"name\": \"read_file\", \"arguments\": {\"file\": \"a.txt\"}}";
    let agent = read(invalid, false, ToolChoice::Auto, ReadMode::REPAIR);
    assert!(matches!(agent.calls[0].check, CallCheck::Invalid(_)));
    let client = read(invalid, false, ToolChoice::Auto, ReadMode::CLIENT);
    assert!(client.calls.is_empty());
    assert_eq!(client.content.as_deref(), Some(invalid));
}

#[test]
fn held_text_streams_the_same_as_the_whole_reply() {
    for text in [
        "```json\n{\"name\": \"read_file\", \"arguments\": {\"path\": \"a.txt\"}}\n```",
        "{\"name\": \"list_dir\", \"arguments\": {}}\n{\"name\": \"read_file\", \"arguments\": {\"path\": \"b\"}}",
        "{not a call}",
        "Plain text with {\"name\": \"x\"} inside.",
        "Let me look.\n<tool_call>\n{\"name\": \"list_dir\", \"arguments\": {}}\n</tool_call>",
        "Let me look.\n```json\n{\"name\": \"list_dir\", \"arguments\": {}}\n```",
        "Here is `code` inline.\n  ```python\nprint(1)\n```\nDone.",
        "<tools>{\"name\": \"read_file\", \"arguments\": {\"path\": \"x\"}}</tools>",
        "I will read both.\n```json\n{{\"name\": \"read_file\", \"arguments\": {\"path\": \"a\"}}}\n```\n\n```json\n{{\"name\": \"read_file\", \"arguments\": {\"path\": \"b\"}}}\n```\n\nAfter these calls I will have both files.",
        "{\"name\": \"list_dir\", \"arguments\": {}}\nThat lists the folder.",
    ] {
        let whole = streamed(text, usize::MAX, ReadMode::CLIENT);
        for split in 1..9 {
            assert_eq!(streamed(text, split, ReadMode::CLIENT), whole, "{text:?} split {split}");
        }
        let reply = read(text, false, ToolChoice::Auto, ReadMode::CLIENT);
        assert_eq!(whole.0, reply.content.unwrap_or_default(), "{text:?}");
        assert_eq!(whole.1, reply.calls, "{text:?}");
    }
}

#[test]
fn prose_may_follow_wrapped_calls_and_doubled_braces_are_read() {
    let text = "I will read both.\n```json\n{{\"name\": \"read_file\", \"arguments\": {\"path\": \"a\"}}}\n```\n\n```json\n{{\"name\": \"read_file\", \"arguments\": {\"path\": \"b\"}}}\n```\n\nAfter these calls I will have both files.";
    let reply = read(text, false, ToolChoice::Auto, ReadMode::CLIENT);
    let paths: Vec<&Value> = reply.calls.iter().map(|c| &c.arguments["path"]).collect();
    assert_eq!(paths, [&json!("a"), &json!("b")]);
    assert_eq!(
        reply.content.as_deref(),
        Some("I will read both.\n\nAfter these calls I will have both files.")
    );
    // What follows the calls stays text only when it cannot hold a call itself.
    for text in [
        "{\"name\": \"list_dir\", \"arguments\": {}}\nthen {\"name\": \"read_file\", \"arguments\": {\"path\": \"a\"}}",
        "{\"name\": \"list_dir\", \"arguments\": {}}\n<tool_call>",
        "{{\"name\": \"list_dir\", \"arguments\": {}}",
        "{{{\"name\": \"list_dir\", \"arguments\": {}}}}",
    ] {
        let reply = read(text, false, ToolChoice::Auto, ReadMode::CLIENT);
        assert!(reply.calls.is_empty(), "{text}");
    }
}

#[test]
fn a_reply_cut_for_looping_keeps_the_calls_it_wrote_in_full() {
    let tools = tools();
    let call = r#"{"name":"read_file","arguments":{"path":"TODO.md"}}"#;
    let text = format!("```json\n{call}\n{call}\n{call}\n{{\"name\":\"read_f");
    let looped = |text: &str| {
        let mut reader = ReplyReader::new(
            Family::Hermes,
            Some(&tools),
            &ToolChoice::Auto,
            ReadMode::REPAIR,
        );
        reader.push(text);
        reader.finish_looped().reply
    };
    let reply = looped(&text);
    assert_eq!(reply.calls.len(), 3, "{reply:?}");
    assert_eq!(reply.calls[0].name, "read_file");
    assert_eq!(reply.calls[0].arguments, json!({"path": "TODO.md"}));
    // The same text cut by the token limit has written the same calls in full; not
    // cut, its broken last call leaves it no call.
    assert_eq!(
        read(&text, true, ToolChoice::Auto, ReadMode::REPAIR)
            .calls
            .len(),
        3
    );
    assert!(read(&text, false, ToolChoice::Auto, ReadMode::REPAIR)
        .calls
        .is_empty());
    // Prose that loops holds no call.
    assert!(looped("The files are a a a a\na a a a").calls.is_empty());
}
