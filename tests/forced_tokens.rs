//! Tokens a grammar forces, appended without sampling (llguidance as the grammar
//! engine): for every family's call grammar over the built-in tools, greedy decoding
//! with forced tokens writes the same text as plain constrained decoding (every token
//! sampled under the same grammar), and forced tokens were actually appended. Where
//! the grammar forces text, llguidance allows only the tokenizer's own spelling of
//! it, while llama.cpp's GBNF sampler allows any spelling: the test counts how often
//! greedy GBNF decoding wrote another text. Also: llguidance reads every family
//! grammar rein builds for the wild schemas of `family_grammars` (none falls back to
//! the GBNF sampler).

use proptest::prelude::*;
use rein_format::{ToolChoice, ToolSet, REGISTRY};
use rein_llama::{Engine, EngineConfig, GenerateOutput, GenerateRequest, GrammarEngine, Prompt};
use rein_protocol::{Grammar, ToolSpec};
use serde_json::{json, Value};

use crate::support::{fixed_runner, model_path};

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
}

fn engine(
    runtime: &tokio::runtime::Runtime,
    grammar_engine: GrammarEngine,
    forced_tokens: bool,
) -> Engine {
    let mut config = EngineConfig::new(model_path("tiny"));
    config.n_ctx = Some(2048);
    config.threads = Some(2);
    config.grammar_engine = grammar_engine;
    config.forced_tokens = forced_tokens;
    runtime.block_on(Engine::load(config)).expect("load tiny")
}

fn greedy(
    runtime: &tokio::runtime::Runtime,
    engine: &Engine,
    prompt: &str,
    grammar: &Grammar,
    max_tokens: u32,
) -> GenerateOutput {
    let mut request = GenerateRequest::new(Prompt::Text(prompt.into()));
    request.max_tokens = max_tokens;
    request.grammar = Some(grammar.clone());
    runtime
        .block_on(async { engine.session().await.unwrap().generate(request).await })
        .expect("generate")
}

/// The byte where `a` and `b` first differ (one ending before the other counts).
fn first_difference(a: &str, b: &str) -> Option<usize> {
    let common = a.bytes().zip(b.bytes()).take_while(|(x, y)| x == y).count();
    (common < a.len().max(b.len())).then_some(common)
}

/// The index of the token of `tokens` whose text holds byte `at` of their text.
fn token_at(
    runtime: &tokio::runtime::Runtime,
    engine: &Engine,
    tokens: &[i32],
    at: usize,
) -> usize {
    (1..=tokens.len())
        .find(|&n| {
            let text = runtime.block_on(engine.detokenize(&tokens[..n])).unwrap();
            text.len() > at
        })
        .map_or(tokens.len(), |n| n - 1)
}

#[test]
fn forced_tokens_write_what_plain_constrained_decoding_writes() {
    let _model = rein_test_support::model_lock();
    let runtime = runtime();
    let gbnf = engine(&runtime, GrammarEngine::Gbnf, false);
    let plain = engine(&runtime, GrammarEngine::Llguidance, false);
    let forced = engine(&runtime, GrammarEngine::Llguidance, true);
    let set = ToolSet::prepare(&rein_tools::Registry::builtin().specs()).unwrap();
    let read = |path: &str| json!({"path": path});
    let write = json!({"path": "TODO.md", "content": "- fix the parser\n- cover empty input\n"});
    let mut compared = 0;
    let mut other_spelling = 0;
    let mut parted = 0;
    for family in REGISTRY {
        let cases = [
            (
                ToolChoice::Required,
                false,
                family.call_text("read_file", &read("src/main.rs")),
            ),
            (
                ToolChoice::Required,
                true,
                family.calls_text(&[
                    ("read_file", &read("README.md")),
                    ("search", &json!({"pattern": "TODO"})),
                ]),
            ),
            (
                ToolChoice::Named("write_file".into()),
                false,
                family.call_text("write_file", &write),
            ),
        ];
        for (choice, parallel, example) in cases {
            let grammar = family.call_grammar(&set, &choice, parallel).unwrap();
            // A reply the model copies from its own last turn.
            let prompt = format!(
                "<|im_start|>user\nDo the task.<|im_end|>\n<|im_start|>assistant\n{example}<|im_end|>\n<|im_start|>user\nDo the task again, exactly as before.<|im_end|>\n<|im_start|>assistant\n"
            );
            let expected = greedy(&runtime, &gbnf, &prompt, &grammar, 96);
            let unforced = greedy(&runtime, &plain, &prompt, &grammar, 96);
            let got = greedy(&runtime, &forced, &prompt, &grammar, 96);
            let case = format!("{family} {choice:?} parallel={parallel}");
            assert_eq!(expected.grammar_engine, Some(GrammarEngine::Gbnf));
            assert_eq!(
                (unforced.grammar_engine, got.grammar_engine),
                (
                    Some(GrammarEngine::Llguidance),
                    Some(GrammarEngine::Llguidance)
                ),
                "{case}: llguidance did not take the grammar"
            );
            // Where the texts part, the forced decoding's text came from a sampled
            // token: a forced one is the only text the grammar allows there, which
            // plain decoding writes too. (A sampled pick may differ: forced tokens are
            // evaluated in one batch, whose kernels round otherwise, and a near-tie
            // can flip.)
            if let Some(at) = first_difference(&got.text, &unforced.text) {
                let token = token_at(&runtime, &forced, &got.tokens, at);
                assert!(
                    !got.forced_positions.contains(&token),
                    "{case}: the texts part at byte {at}, inside forced token {token}\nforced: {:?}\nplain:  {:?}",
                    got.text,
                    unforced.text
                );
                parted += 1;
            }
            assert_eq!(unforced.forced_tokens, 0, "{case}");
            assert!(got.forced_tokens > 0, "{case}: nothing forced");
            assert!(got.tokens.len() >= got.forced_tokens, "{case}");
            eprintln!(
                "{case}: {} of {} tokens forced: {:?}",
                got.forced_tokens,
                got.tokens.len(),
                got.text
            );
            if unforced.text != expected.text {
                other_spelling += 1;
            }
            compared += 1;
        }
    }
    assert_eq!(compared, REGISTRY.len() * 3);
    eprintln!(
        "{compared} replies compared; forced and plain decoding parted at a sampled token in {parted}; greedy GBNF decoding wrote another text in {other_spelling}"
    );
    assert!(parted < compared, "forced and plain decoding never agreed");
}

#[test]
fn llguidance_reads_every_family_grammar_for_wild_schemas() {
    let _model = rein_test_support::model_lock();
    let runtime = runtime();
    let engine = engine(&runtime, GrammarEngine::Llguidance, true);
    let (mut runner, cases) = fixed_runner("REIN_GRAMMAR_CASES", 40, 16);
    let result = runner.run(
        &(crate::family_grammars::tool_list(), any::<bool>()),
        |(tools, parallel)| {
            let specs: Vec<ToolSpec> = serde_json::from_value(Value::Array(tools.clone())).unwrap();
            let set = ToolSet::prepare(&specs)
                .map_err(|e| TestCaseError::fail(format!("tool set refused: {e}")))?;
            let first = set.tools()[0].name.clone();
            for family in REGISTRY {
                for choice in [ToolChoice::Required, ToolChoice::Named(first.clone())] {
                    let grammar = family.call_grammar(&set, &choice, parallel).unwrap();
                    let output = greedy(&runtime, &engine, "Call a tool.", &grammar, 4);
                    prop_assert_eq!(
                        output.grammar_engine,
                        Some(GrammarEngine::Llguidance),
                        "{} {:?}: {}",
                        family,
                        choice,
                        grammar.gbnf
                    );
                }
            }
            Ok(())
        },
    );
    eprintln!("llguidance read the family grammars of {cases} tool sets");
    result.unwrap();
}
