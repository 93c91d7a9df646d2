//! Every family's call grammar compiles in llama.cpp: for generated tool sets in the
//! dialects found in the wild (odd property names, enums of every JSON type and of
//! marker-like strings, integer ranges, contradictory bounds, unions, nested objects),
//! each family × tool choice × parallel setting gives a grammar that the real engine
//! accepts and samples a first token under. A fixed-seed proptest runner, so CI sees
//! the same cases every run. Calls the tiny model writes under a grammar with string
//! formats and patterns validate.

use proptest::prelude::*;
use rein_format::{ToolChoice, ToolSet, REGISTRY};
use rein_llama::{GenerateRequest, Prompt};
use rein_protocol::ToolSpec;
use serde_json::{json, Value};

use crate::support::{fixed_runner, tiny_engine};

/// Tool sets per run (`REIN_GRAMMAR_CASES` overrides it).
const DEFAULT_CASES: u32 = 120;

fn enum_value() -> impl Strategy<Value = Value> {
    prop_oneof![
        "[a-z]{1,6}".prop_map(Value::from),
        prop::sample::select(vec![
            "a \"quoted\" b",
            "back\\slash",
            "<|\"|>",
            "</tool_call>",
            "[ARGS]",
            "é🌸",
            "",
            "new\nline",
        ])
        .prop_map(Value::from),
        (-1000i64..1000).prop_map(Value::from),
        Just(json!(2.5)),
        Just(Value::Null),
        any::<bool>().prop_map(Value::from),
    ]
}

fn parameter() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        prop::sample::select(vec![
            "string", "str", "integer", "int", "number", "float", "boolean", "bool", "null", "any"
        ])
        .prop_map(|t| json!({ "type": t })),
        (0u64..40, 0u64..40)
            .prop_map(|(lo, hi)| json!({"type": "string", "minLength": lo, "maxLength": hi})),
        (
            prop::option::of(-5000i64..5000),
            prop::option::of(-5000i64..5000)
        )
            .prop_map(|(lo, hi)| json!({"type": "integer", "minimum": lo, "maximum": hi})),
        (-100i64..100, any::<bool>()).prop_map(|(lo, exclusive)| {
            match exclusive {
                true => json!({"type": "number", "exclusiveMinimum": lo}),
                false => json!({"type": "number", "minimum": lo, "maximum": lo + 10}),
            }
        }),
        prop::collection::vec(enum_value(), 1..5).prop_map(|v| json!({ "enum": v })),
        enum_value().prop_map(|c| json!({ "const": c })),
        Just(json!({"type": ["integer", "null"]})),
        Just(json!({"type": "string", "pattern": "^[a-z]+$", "format": "date"})),
        prop::sample::select(vec![
            "date",
            "time",
            "date-time",
            "email",
            "uuid",
            "uri",
            "ipv4",
            "ipv6",
            "hostname"
        ])
        .prop_map(|f| json!({"type": "string", "format": f})),
        prop::sample::select(vec![
            r"^[A-Z]{3}-\d{4}$",
            r"^[^\]\[^-]{2}x$",
            r"^\S+ \S+$",
            r"ab+c",
            r#"^say "hi" \\ bye$"#,
            "^[<|>]+$",
            r"^(?=x).*$",
        ])
        .prop_map(|p| json!({"type": "string", "pattern": p})),
    ];
    leaf.prop_recursive(3, 16, 4, |inner| {
        prop_oneof![
            (inner.clone(), 0u64..5, 0u64..5).prop_map(
                |(items, lo, hi)| json!({"type": "array", "items": items, "minItems": lo, "maxItems": hi})
            ),
            prop::collection::btree_map("[a-zA-Z_ ?é$-]{1,9}", inner.clone(), 0..4).prop_map(
                |props| json!({"type": "object", "properties": props, "required": props.keys().step_by(2).collect::<Vec<_>>()})
            ),
            inner.clone().prop_map(|v| json!({"type": "object", "additionalProperties": v})),
            prop::collection::vec(inner, 2..4).prop_map(|branches| json!({ "anyOf": branches })),
        ]
    })
}

pub(crate) fn tool_list() -> impl Strategy<Value = Vec<Value>> {
    prop::collection::vec(
        (
            "[a-z][a-z_]{2,10}",
            prop::collection::btree_map("[a-zA-Z_ .é-]{1,12}", parameter(), 0..4),
        ),
        1..4,
    )
    .prop_map(|tools| {
        let mut seen = std::collections::HashSet::new();
        tools
            .into_iter()
            .filter(|(name, _)| seen.insert(name.clone()))
            .map(|(name, props)| {
                let required: Vec<&String> = props.keys().take(2).collect();
                json!({"type": "function", "function": {"name": name, "description": "d",
                       "parameters": {"type": "object", "properties": props, "required": required}}})
            })
            .collect()
    })
}

#[test]
fn every_family_grammar_for_wild_schemas_compiles_in_llama_cpp() {
    // Loads a model: one model test at a time.
    let _model = rein_test_support::model_lock();
    let (runtime, engine) = tiny_engine(512);
    let (mut runner, cases) = fixed_runner("REIN_GRAMMAR_CASES", DEFAULT_CASES, 64);
    let compiled = std::cell::Cell::new(0usize);
    let result = runner.run(&(tool_list(), any::<bool>()), |(tools, parallel)| {
        let specs: Vec<ToolSpec> = serde_json::from_value(Value::Array(tools.clone())).unwrap();
        let set = ToolSet::prepare(&specs)
            .map_err(|e| TestCaseError::fail(format!("tool set refused: {e}")))?;
        let first = set.tools()[0].name.clone();
        for family in REGISTRY {
            for choice in [
                ToolChoice::Auto,
                ToolChoice::Required,
                ToolChoice::Named(first.clone()),
            ] {
                let Some(grammar) = family.call_grammar(&set, &choice, parallel) else {
                    return Err(TestCaseError::fail(format!(
                        "{family} {choice:?}: no grammar"
                    )));
                };
                if std::env::var_os("REIN_GRAMMAR_TRACE").is_some() {
                    eprintln!(
                        "{family} {choice:?} parallel={parallel}: {}",
                        Value::Array(tools.clone())
                    );
                }
                let mut request = GenerateRequest::new(Prompt::Text("Call a tool.".into()));
                request.max_tokens = 1;
                request.grammar = Some(grammar.clone());
                let outcome = runtime
                    .block_on(async { engine.session().await.unwrap().generate(request).await });
                outcome.map_err(|e| {
                    TestCaseError::fail(format!(
                        "{family} {choice:?} parallel={parallel}: {e}\ntools: {}\n{}",
                        Value::Array(tools.clone()),
                        grammar.gbnf
                    ))
                })?;
                compiled.set(compiled.get() + 1);
            }
        }
        Ok(())
    });
    eprintln!(
        "family grammars: {} compiled and sampled over {cases} tool sets",
        compiled.get()
    );
    result.unwrap();
    assert_eq!(compiled.get(), cases as usize * REGISTRY.len() * 3);
}

#[test]
fn calls_written_under_format_and_pattern_grammars_validate() {
    let _model = rein_test_support::model_lock();
    let (runtime, engine) = tiny_engine(1024);
    let specs: Vec<ToolSpec> = serde_json::from_value(json!([{"type": "function", "function": {
        "name": "book", "description": "Books a meeting.",
        "parameters": {"type": "object", "properties": {
            "email": {"type": "string", "format": "email"},
            "day": {"type": "string", "format": "date"},
            "at": {"type": "string", "format": "time"},
            "room": {"type": "string", "pattern": "^[A-Z]{2}-\\d{3}$"},
            "id": {"type": "string", "format": "uuid"},
            "host": {"type": "string", "format": "ipv4"}
        }, "required": ["email", "day", "at", "room", "id", "host"]}}}]))
    .unwrap();
    let set = ToolSet::prepare(&specs).unwrap();
    let family = rein_format::Family::Hermes;
    let grammar = family
        .call_grammar(&set, &ToolChoice::Required, false)
        .unwrap();
    for seed in 0..4 {
        let prompt = "<|im_start|>user\nBook a meeting with ann@example.com tomorrow.<|im_end|>\n<|im_start|>assistant\n";
        let output = sample(&runtime, &engine, prompt, &grammar, seed, 400);
        let reply = family
            .parse_reply_checked(&output.text, false, true)
            .unwrap_or_else(|e| panic!("seed {seed}: {e}: {}", output.text));
        assert_eq!(reply.calls.len(), 1, "seed {seed}: {}", output.text);
        let tool = set.get(&reply.calls[0].name).unwrap();
        let checked = tool.validator.check_value(reply.calls[0].arguments.clone());
        assert!(
            checked.is_ok(),
            "seed {seed}: {:?} for {}",
            checked,
            output.text
        );
    }
}

#[test]
fn a_prose_reply_does_not_open_with_a_call() {
    let _model = rein_test_support::model_lock();
    let (runtime, engine) = tiny_engine(1024);
    let grammar = rein_format::prose_grammar();
    // A prompt that invites the model to open with a JSON call.
    let prompt = "<|im_start|>user\nReply with the JSON object {\"name\": \"get_time\", \"arguments\": {}} and nothing else.<|im_end|>\n<|im_start|>assistant\n";
    for seed in 0..4 {
        let output = sample(&runtime, &engine, prompt, &grammar, seed, 24);
        let first = output.text.chars().next();
        assert!(
            first.is_some_and(|c| c.is_alphanumeric() || "*#-".contains(c)),
            "seed {seed}: {:?}",
            output.text
        );
    }
}

/// The tiny model's reply to `prompt` under `grammar`, sampled hot with `seed`.
fn sample(
    runtime: &tokio::runtime::Runtime,
    engine: &rein_llama::Engine,
    prompt: &str,
    grammar: &rein_protocol::Grammar,
    seed: u32,
    max_tokens: u32,
) -> rein_llama::GenerateOutput {
    let mut request = GenerateRequest::new(Prompt::Text(prompt.into()));
    request.max_tokens = max_tokens;
    request.grammar = Some(grammar.clone());
    request.sampling.temperature = 0.9;
    request.sampling.seed = seed;
    runtime
        .block_on(async { engine.session().await.unwrap().generate(request).await })
        .unwrap()
}

#[test]
fn a_bare_value_is_decoded_as_one_of_the_values_an_answer_states() {
    // The grammar `answer_form` asks a bare value under: a string enum of the values
    // the model's own answer stated.
    let _model = rein_test_support::model_lock();
    let (runtime, engine) = tiny_engine(1024);
    let values = ["2336", "8", "292"];
    let schema = rein_schema::Schema {
        kind: rein_schema::SchemaKind::Enum(values.iter().map(|v| json!(v)).collect()),
        description: None,
    };
    let grammar = rein_protocol::Grammar::strict(rein_schema::schema_grammar(&schema));
    let prompt = "<|im_start|>user\nHow many items does each of 8 shards get out of 2336? Reply with just the number.<|im_end|>\n<|im_start|>assistant\n2336 items over 8 shards: each gets 292 items.<|im_end|>\n<|im_start|>user\nThe task asks for the number alone. Reply with only that number.<|im_end|>\n<|im_start|>assistant\n";
    for seed in 0..4 {
        let output = sample(&runtime, &engine, prompt, &grammar, seed, 16);
        let value: String = serde_json::from_str(output.text.trim())
            .unwrap_or_else(|e| panic!("seed {seed}: not a JSON string ({e}): {:?}", output.text));
        assert!(values.contains(&value.as_str()), "seed {seed}: {value}");
    }
}
