//! The bodies of rein's fuzz targets, one function per target, so the seeds and every
//! crash found can also run as ordinary tests (`tests/seeds.rs`). Each function takes
//! the fuzzer's raw bytes and panics only when an invariant of rein breaks.

use rein_format::stream::StreamEvent;
use rein_format::{Family, ToolChoice, ToolSet, REGISTRY};
use rein_protocol::ToolSpec;
use rein_schema::{repair_historical_json, sanitize, schema_grammar, ArgumentValidator, Limits};
use serde_json::{json, Value};

/// The largest grammar a fuzz input (at most a few KiB) may produce: sanitizer limits
/// must keep grammars small whatever the schema.
const MAX_GRAMMAR_BYTES: usize = 4 << 20;

/// Schema sanitizer: any JSON either fails with an error or gives a canonical schema
/// that is a fixed point of the sanitizer, compiles to a bounded GBNF grammar, gets a
/// validator, and yields a tool set and call grammar in every family.
pub fn sanitizer(data: &[u8]) {
    let Ok(input) = serde_json::from_slice::<Value>(data) else {
        return;
    };
    let Ok(first) = sanitize(&input, Limits::default()) else {
        return;
    };
    let canonical = first.schema.to_json();
    let second = sanitize(&canonical, Limits::default())
        .unwrap_or_else(|e| panic!("canonical schema refused: {e}\n{canonical}"));
    assert_eq!(
        second.schema.to_json(),
        canonical,
        "canonical schema is not a fixed point"
    );
    assert!(
        second.report.is_empty(),
        "canonical schema changed again: {:?}",
        second.report
    );
    let grammar = schema_grammar(&first.schema);
    check_grammar(&grammar, "schema");
    let _ = ArgumentValidator::new(&first);

    let spec: ToolSpec = match serde_json::from_value(json!({
        "type": "function",
        "function": {"name": "fuzzed", "description": "d", "parameters": input},
    })) {
        Ok(spec) => spec,
        Err(_) => return,
    };
    let Ok(set) = ToolSet::prepare(&[spec]) else {
        return;
    };
    for family in REGISTRY {
        for choice in [ToolChoice::Auto, ToolChoice::Required] {
            if let Some(grammar) = family.call_grammar(&set, &choice, true) {
                check_grammar(&grammar.gbnf, family.as_str());
            }
        }
        let _ = family.emulated_instructions(&set.definitions());
    }
}

/// Tool-call parsers: for any reply text in any family, the streaming parser gives the
/// same reply however the text is split (here: the fuzzer's chunks and one character
/// at a time) as the one-shot parse; the events concatenate to that reply's content,
/// reasoning and calls; no event is empty; the strict parser never panics.
///
/// Input: byte 0 picks the family and the flags, byte 1 seeds the chunk sizes, the
/// rest (lossy UTF-8) is the reply.
pub fn parser(data: &[u8]) {
    let [flags, seed, rest @ ..] = data else {
        return;
    };
    let family = REGISTRY[usize::from(flags & 7) % REGISTRY.len()];
    let reasoning_open = flags & 8 != 0;
    let cut_off = flags & 16 != 0;
    let calls_only = flags & 32 != 0;
    let text = String::from_utf8_lossy(rest);

    let whole = family.parse_complete(&text, reasoning_open, cut_off);
    let chunked = run_stream(family, chunks(&text, *seed), reasoning_open, cut_off);
    let per_char: Vec<String> = text.chars().map(String::from).collect();
    let per_char = run_stream(
        family,
        per_char.iter().map(String::as_str).collect(),
        reasoning_open,
        cut_off,
    );
    assert_eq!(chunked.1, whole, "{family}: chunked stream differs");
    assert_eq!(per_char.1, whole, "{family}: per-character stream differs");
    let merged = merged(&chunked.0);
    assert_eq!(
        merged,
        crate::merged(&per_char.0),
        "{family}: events differ"
    );
    assert_eq!(merged.0, whole.content.clone().unwrap_or_default());
    assert_eq!(merged.1, whole.reasoning.clone().unwrap_or_default());
    let calls: Vec<(String, Value)> = whole
        .calls
        .iter()
        .map(|c| (c.name.clone(), c.arguments.clone()))
        .collect();
    let streamed: Vec<(String, Value)> = merged
        .2
        .iter()
        .map(|(name, args)| {
            let args = serde_json::from_str(args)
                .unwrap_or_else(|e| panic!("{family}: streamed arguments {args:?}: {e}"));
            (name.clone(), args)
        })
        .collect();
    assert_eq!(streamed, calls, "{family}: streamed calls differ");
    for call in &whole.calls {
        assert!(
            call.arguments.is_object(),
            "{family}: arguments not an object"
        );
    }
    let _ = family.parse_reply_checked(&text, cut_off, calls_only);
}

/// Argument checking: for any schema and any argument text, validation never panics,
/// accepted arguments are an object, coercion is idempotent, and the historical-call
/// repair leaves valid JSON as it is.
///
/// Input: the schema as JSON, a newline, then the arguments as text.
pub fn coercer(data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    let (schema, arguments) = text.split_once('\n').unwrap_or((&text, "{}"));
    if let Some(repaired) = repair_historical_json(arguments) {
        if let Ok(valid) = serde_json::from_str::<Value>(arguments) {
            assert_eq!(repaired, valid, "repair changed valid JSON");
        }
    }
    let Ok(schema) = serde_json::from_str::<Value>(schema) else {
        return;
    };
    let Ok(sanitized) = sanitize(&schema, Limits::default()) else {
        return;
    };
    let (validator, _) = ArgumentValidator::new(&sanitized);
    if let Ok(accepted) = validator.check(arguments) {
        assert!(accepted.is_object(), "accepted arguments are not an object");
    }
    if let Ok(value) = serde_json::from_str::<Value>(arguments) {
        let once = sanitized.schema.coerce(value);
        let twice = sanitized.schema.coerce(once.clone());
        assert_eq!(twice, once, "coercion is not idempotent");
        let _ = sanitized.schema.restore_names(&once);
    }
}

/// A generated grammar is bounded in size and every `{min,max}` repetition outside
/// literals and character classes has min <= max (llama.cpp's parser allocates without
/// limit on `{5,2}`).
fn check_grammar(grammar: &str, what: &str) {
    assert!(
        grammar.len() <= MAX_GRAMMAR_BYTES,
        "{what} grammar of {} bytes",
        grammar.len()
    );
    let mut chars = grammar.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '"' | '[' => {
                let close = if c == '"' { '"' } else { ']' };
                while let Some(inner) = chars.next() {
                    match inner {
                        '\\' => {
                            chars.next();
                        }
                        _ if inner == close => break,
                        _ => {}
                    }
                }
            }
            '{' => {
                let mut body = String::new();
                for inner in chars.by_ref() {
                    if inner == '}' {
                        break;
                    }
                    body.push(inner);
                }
                if let Some((min, max)) = body.split_once(',') {
                    if let (Ok(min), Ok(max)) =
                        (min.trim().parse::<u64>(), max.trim().parse::<u64>())
                    {
                        assert!(min <= max, "{what} grammar repeats {{{body}}}\n{grammar}");
                    }
                }
            }
            _ => {}
        }
    }
}

/// Splits `text` at character boundaries into pieces of 1 to 8 characters, sizes
/// drawn from `seed`.
fn chunks(text: &str, seed: u8) -> Vec<&str> {
    let mut state = u32::from(seed) | 1;
    let mut pieces = Vec::new();
    let mut rest = text;
    while !rest.is_empty() {
        state = state.wrapping_mul(1_103_515_245).wrapping_add(12_345);
        let take = 1 + (state >> 16) as usize % 8;
        let end = rest
            .char_indices()
            .nth(take)
            .map_or(rest.len(), |(index, _)| index);
        pieces.push(&rest[..end]);
        rest = &rest[end..];
    }
    pieces
}

fn run_stream(
    family: Family,
    pieces: Vec<&str>,
    reasoning_open: bool,
    cut_off: bool,
) -> (Vec<StreamEvent>, rein_format::stream::StreamReply) {
    let mut stream = family.stream(reasoning_open);
    let mut events = Vec::new();
    for piece in pieces {
        events.extend(stream.push(piece));
    }
    let finished = stream.finish(cut_off);
    events.extend(finished.events);
    (events, finished.reply)
}

/// Content, reasoning and `(name, arguments text)` per call, from the events alone.
fn merged(events: &[StreamEvent]) -> (String, String, Vec<(String, String)>) {
    let (mut content, mut reasoning, mut calls) = (String::new(), String::new(), Vec::new());
    for event in events {
        match event {
            StreamEvent::Content(t) => {
                assert!(!t.is_empty(), "empty content event");
                content.push_str(t);
            }
            StreamEvent::Reasoning(t) => {
                assert!(!t.is_empty(), "empty reasoning event");
                reasoning.push_str(t);
            }
            StreamEvent::ToolCallStart { index, name } => {
                assert_eq!(*index, calls.len(), "call index out of order");
                calls.push((name.clone(), String::new()));
            }
            StreamEvent::ToolCallArguments { index, delta } => {
                let call: &mut (String, String) = calls
                    .get_mut(*index)
                    .unwrap_or_else(|| panic!("arguments for call {index} before its start"));
                call.1.push_str(delta);
            }
            StreamEvent::ToolCallEnd { index } => {
                assert_eq!(
                    *index + 1,
                    calls.len(),
                    "end of a call that is not the last"
                );
            }
        }
    }
    (content, reasoning, calls)
}

#[cfg(test)]
mod tests {
    use super::check_grammar;

    #[test]
    #[should_panic(expected = "repeats {5,2}")]
    fn a_repetition_with_min_above_max_is_caught() {
        check_grammar(r#"root ::= "a" [0-9]{5,2}"#, "test");
    }

    #[test]
    fn braces_inside_literals_and_classes_are_text() {
        check_grammar(r#"root ::= "{5,2}" [{}] "\"{9,1}" [0-9]{2,5}"#, "test");
    }
}

/// The server's request parser and the OpenAI wire types: any body is either refused
/// with a 4xx error object or becomes an engine request whose prompt renders (ChatML,
/// control texts guarded) with every literal range on a control-token text; requests,
/// responses and chunks that parse serialize and parse back to themselves.
pub fn request(data: &[u8]) {
    match rein_serve::check_request(data) {
        Ok(turn) => {
            let format = rein_format::ModelFormat::detect(None, "llama")
                .expect("ChatML compiles")
                .with_control_texts(CHATML_MARKERS.map(String::from));
            // A template refusal is an answer too; only a panic is a bug.
            if let Ok(prepared) = format.prepare(&turn.spec()) {
                for range in &prepared.literal {
                    let text = prepared
                        .prompt
                        .get(range.clone())
                        .unwrap_or_else(|| panic!("range {range:?} off the prompt"));
                    assert!(
                        CHATML_MARKERS.iter().any(|m| escaped_or_not(m, text)),
                        "range {text:?} is not a marker"
                    );
                }
                assert!(!prepared.prompt.contains(['\u{FDD0}', '\u{FDD1}']));
            }
        }
        Err(error) => assert!(
            error.status.is_client_error(),
            "a bad body got {}: {}",
            error.status,
            error.message
        ),
    }
    round_trip::<rein_protocol::openai::ChatRequest>(data);
    round_trip::<rein_protocol::openai::ChatResponse>(data);
    round_trip::<rein_protocol::openai::ChatChunk>(data);
}

const CHATML_MARKERS: [&str; 4] = ["<|im_start|>", "<|im_end|>", "<|endoftext|>", "<tool_call>"];

fn escaped_or_not(marker: &str, text: &str) -> bool {
    marker == text || serde_json::to_string(marker).is_ok_and(|j| j.trim_matches('"') == text)
}

fn round_trip<T>(data: &[u8])
where
    T: serde::Serialize + serde::de::DeserializeOwned + PartialEq + std::fmt::Debug,
{
    let Ok(value) = serde_json::from_slice::<T>(data) else {
        return;
    };
    let text = serde_json::to_string(&value).expect("a parsed value serializes");
    let again: T =
        serde_json::from_str(&text).unwrap_or_else(|e| panic!("{text} does not parse back: {e}"));
    assert_eq!(again, value, "{text}");
}
