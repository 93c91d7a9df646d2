//! Tool calls decoded under the grammar by the real tiny model: for generated tool
//! schemas (a fixed-seed proptest runner, so CI sees the same cases every run), every
//! call parses, names an offered tool, and validates against the tool's schema.
//!
//! A reply cut off by the token limit, or by the loop detector, holds no call (a partial
//! call is never used); it is retried with twice the allowance and counted. The tiny
//! model sometimes repeats itself inside an unbounded string until any limit; those
//! cases end as "truncated", never as a malformed call.

use proptest::prelude::*;
use rein_format::hermes::ParseError;
use rein_format::{CallCheck, Family, ReadMode, ReplyProblem, ToolChoice, ToolSet, TurnSpec};
use rein_llama::{GenerateRequest, LocalModel, Prompt, SamplingParams, StopReason};
use rein_protocol::{Message, ToolSpec};
use serde_json::{json, Value};

use crate::support::{fixed_runner, tiny_engine};

/// Parameter schemas in the dialects found in the wild.
fn parameter() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        prop::sample::select(vec![
            "string", "str", "integer", "int", "number", "float", "boolean", "bool"
        ])
        .prop_map(|t| json!({ "type": t })),
        (1u64..20).prop_map(|max| json!({"type": "string", "maxLength": max})),
        (-10i64..10).prop_map(|lo| json!({"type": "integer", "minimum": lo})),
        prop::collection::vec("[a-z]{1,6}", 1..4).prop_map(|v| json!({ "enum": v })),
        Just(json!({"type": ["string", "null"]})),
    ];
    leaf.prop_recursive(2, 12, 3, |inner| {
        prop_oneof![
            (inner.clone(), 1u64..4).prop_map(|(items, max)| json!({"type": "list", "items": items, "maxItems": max})),
            prop::collection::btree_map("[a-z][a-z_ ]{0,8}", inner, 1..3)
                .prop_map(|props| json!({"type": "object", "properties": props, "required": props.keys().take(1).collect::<Vec<_>>()})),
        ]
    })
}

fn tool() -> impl Strategy<Value = Value> {
    ("[a-z][a-z_]{2,12}", prop::collection::btree_map("[a-z][a-z_ ]{0,10}", parameter(), 0..4)).prop_map(|(name, props)| {
        let required: Vec<&String> = props.keys().step_by(2).collect();
        json!({"type": "function", "function": {"name": name, "description": format!("Does {name}"), "parameters": {"type": "object", "properties": props, "required": required}}})
    })
}

fn tool_list() -> impl Strategy<Value = Vec<Value>> {
    prop::collection::vec(tool(), 1..4).prop_map(|mut tools| {
        let mut seen = std::collections::HashSet::new();
        tools.retain(|t| {
            seen.insert(
                t["function"]["name"]
                    .as_str()
                    .unwrap_or_default()
                    .to_string(),
            )
        });
        tools
    })
}

/// Generated tool sets per run (`REIN_TOOL_CASES` overrides it for a quicker local run).
const DEFAULT_CASES: u32 = 200;

#[derive(Default, Debug)]
struct Tally {
    cases: usize,
    calls: usize,
    truncated_first_try: usize,
    truncated_after_retries: usize,
    /// Replies the loop detector cut (each also counted as truncated).
    looped: usize,
}

#[test]
fn every_required_call_from_the_tiny_model_parses_and_validates() {
    // Loads a model: one model test at a time.
    let _model = rein_test_support::model_lock();
    let (runtime, engine) = tiny_engine(2048);
    let info = engine.info().clone();
    let model = LocalModel::new(engine.clone()).unwrap();
    let format = model.format();
    // SmolLM2 (architecture `llama`, ChatML without tools) is the generic family.
    assert_eq!(format.family, Family::Generic, "{}", info.description);

    let (mut runner, cases) = fixed_runner("REIN_TOOL_CASES", DEFAULT_CASES, 8);
    let tally = std::cell::RefCell::new(Tally::default());
    let result = runner.run(
        &(tool_list(), any::<u32>(), any::<bool>()),
        |(tools, seed, parallel)| {
            let specs: Vec<ToolSpec> = serde_json::from_value(Value::Array(tools)).unwrap();
            let set = ToolSet::prepare(&specs).unwrap();
            // The one preparer: the tools taught in a system message (the template
            // cannot render them), the required call grammar.
            let messages = [Message::user(
                "Call one of the tools with sensible arguments.",
            )];
            let prepared = format
                .prepare(&TurnSpec {
                    tools: Some(&set),
                    choice: &ToolChoice::Required,
                    constrained: true,
                    parallel,
                    ..TurnSpec::plain(&messages)
                })
                .unwrap();
            let grammar = prepared.grammar.clone().unwrap();
            let prompt = prepared.prompt.clone();
            // As the agent loop will: a reply cut off mid-call is retried with twice the
            // allowance, at most 4 attempts; a partial call is never used.
            let mut max_tokens = 128;
            let parsed = loop {
                let mut request = GenerateRequest::new(Prompt::Text(prompt.clone()));
                request.sampling = SamplingParams {
                    temperature: 0.8,
                    repeat_penalty: 1.1,
                    seed,
                    ..SamplingParams::default()
                };
                request.max_tokens = max_tokens;
                request.grammar = Some(grammar.clone());
                let started = std::time::Instant::now();
                let out = runtime.block_on(async {
                    engine
                        .session()
                        .await
                        .unwrap()
                        .generate(request)
                        .await
                        .unwrap()
                });
                if std::env::var_os("REIN_TOOL_TRACE").is_some() {
                    eprintln!(
                        "{:?} {} tokens {:?}: {:?}",
                        started.elapsed(),
                        out.tokens.len(),
                        out.stop_reason,
                        out.text.chars().take(200).collect::<String>()
                    );
                }
                // A reply the loop detector cut is cut off, as the engine's backend
                // reads it: its open call is truncated, never malformed.
                let looped = out.stop_reason == StopReason::Loop;
                tally.borrow_mut().looped += usize::from(looped);
                let cut = looped
                    || matches!(
                        out.stop_reason,
                        StopReason::MaxTokens | StopReason::ContextFull
                    );
                // The one reader, strictly: calls in the family's syntax only.
                let reply = format.read(
                    &out.text,
                    cut,
                    Some(&set),
                    &ToolChoice::Required,
                    ReadMode::STRICT,
                );
                match reply.problems.first() {
                    Some(ReplyProblem::Parse(ParseError::Truncated)) if max_tokens < 512 => {
                        tally.borrow_mut().truncated_first_try += usize::from(max_tokens == 128);
                        max_tokens *= 2;
                    }
                    Some(ReplyProblem::Parse(ParseError::Truncated)) => {
                        let mut t = tally.borrow_mut();
                        t.truncated_after_retries += 1;
                        t.cases += 1;
                        return Ok(());
                    }
                    Some(problem) => {
                        return Err(TestCaseError::fail(format!("{problem}\n{}", out.text)))
                    }
                    None => break reply,
                }
            };
            prop_assert!(
                parsed.content.is_none(),
                "text outside calls: {:?}",
                parsed.content
            );
            prop_assert!(!parsed.calls.is_empty());
            if !parallel {
                prop_assert_eq!(parsed.calls.len(), 1);
            }
            for call in &parsed.calls {
                match &call.check {
                    CallCheck::Valid => {}
                    CallCheck::UnknownTool => {
                        return Err(TestCaseError::fail(format!("unknown tool {}", call.name)))
                    }
                    CallCheck::Invalid(e) => {
                        return Err(TestCaseError::fail(format!(
                            "{}: {e}\n{}",
                            call.name, call.written_arguments
                        )))
                    }
                }
            }
            let mut t = tally.borrow_mut();
            t.cases += 1;
            t.calls += parsed.calls.len();
            Ok(())
        },
    );
    let tally = tally.into_inner();
    eprintln!("tool-call property: {tally:?}");
    result.unwrap();
    assert_eq!(tally.cases, cases as usize);
    // Most replies must hold checked calls, or the property above says little.
    assert!(
        tally.truncated_after_retries * 4 <= tally.cases,
        "{tally:?}"
    );
}
