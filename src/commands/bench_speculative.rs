//! `rein bench speculative`: how fast agent-shaped replies decode with drafting (prompt
//! lookup, or `--draft-model`) against plain decoding, on two engines of the same model. Each scenario is
//! an agent turn as the loop sends it (the built-in tools rendered by the model's
//! template, the call grammar under `auto`, history with calls and results like those
//! of the eval traces); both arms decode it greedily, so their texts must be
//! identical, and the report says whether they were. Repetitions interleave the arms;
//! decode time only (the prompt's evaluation is not counted).

use std::time::Duration;

use clap::Args;
use rein_format::{ToolChoice, ToolSet, TurnSpec};
use rein_llama::{Engine, GenerateOutput, GenerateRequest, LocalModel, Prompt, SamplingParams};
use rein_protocol::{FunctionCall, Message, Role, ToolCall};
use serde_json::json;

use super::bench::{median, round};

/// Arguments of `rein bench speculative`.
#[derive(Args)]
pub struct SpeculativeBenchArgs {
    /// The model and how it is loaded; its `--draft-tokens` is the speculative arm's
    /// draft length (8 when not given; 3 with `--draft-model`), and its
    /// `--draft-model` the speculative arm's draft source (prompt lookup when not
    /// given).
    #[command(flatten)]
    pub model: super::ModelArgs,
    /// Repetitions (interleaved arms; medians over repetitions are reported).
    #[arg(long, default_value_t = 3)]
    pub reps: usize,
    /// Most tokens a reply may take.
    #[arg(long, default_value_t = 192)]
    pub max_tokens: u32,
    /// Print one JSON object as the last line.
    #[arg(long)]
    pub json: bool,
}

/// The speculative arm's draft length when `--draft-tokens` is not given.
const DEFAULT_DRAFT: u32 = 8;

/// One agent turn: its name and the conversation before the reply.
pub(super) struct Scenario {
    pub(super) name: &'static str,
    pub(super) messages: Vec<Message>,
}

fn call(id: &str, name: &str, arguments: serde_json::Value) -> Message {
    Message {
        role: Role::Assistant,
        content: None,
        tool_calls: vec![ToolCall {
            id: Some(id.into()),
            kind: "function".into(),
            function: FunctionCall {
                name: name.into(),
                arguments,
            },
        }],
        tool_call_id: None,
        name: None,
    }
}

const SYSTEM: &str = "You are a careful software agent working in a workspace directory. You act only through the tools: you call them, and their results come back to you.";

/// The turns measured: writing a file from search results (the README's demo), an edit
/// copied from a file just read, a call whose path comes from a listing, and an answer
/// quoting a result.
pub(super) fn scenarios() -> Vec<Scenario> {
    let todo_task = "Find every TODO comment in this project and write them, one per line as `path:line: text`, into a new file TODO.md.";
    let todo_lines = "4 matching lines in 3 files:\nsrc/parser.py:12: # TODO: handle quoted fields that span lines\nsrc/parser.py:48: # TODO: report the column of a bad delimiter\nsrc/cli.py:7: # TODO: read the delimiter from --sep\ntests/test_parser.py:30: # TODO: cover empty input";
    let settings = "   1| class Database:\n   2|     host = \"db.internal\"\n   3|     timeout = 10\n   4| \n   5| \n   6| class Http:\n   7|     base_url = \"https://api.example.com\"\n   8|     timeout = 10";
    let listing = "`services/` (3 entries):\n  billing/\n  inventory/\n  shipping/";
    let log_line = "1 matching line in 1 file:\nserver.log:31234: 2026-10-01T07:12:44Z ERROR gateway timeout code=PG-4471 upstream=payments-eu-2";
    vec![
        Scenario {
            name: "write-from-search",
            messages: vec![
                Message::system(SYSTEM),
                Message::user(todo_task),
                call("call_1", "search", json!({"pattern": "TODO"})),
                Message::tool_result("call_1", "search", todo_lines),
            ],
        },
        Scenario {
            name: "edit-from-read",
            messages: vec![
                Message::system(SYSTEM),
                Message::user("In settings.py, change the Http class's timeout from 10 to 30. The Database timeout must stay 10."),
                call("call_1", "read_file", json!({"path": "settings.py"})),
                Message::tool_result("call_1", "read_file", settings),
            ],
        },
        Scenario {
            name: "path-from-listing",
            messages: vec![
                Message::system(SYSTEM),
                Message::user("Every service under services/ has a VERSION file. Read the one of the inventory service and tell me its version."),
                call("call_1", "list_dir", json!({"path": "services"})),
                Message::tool_result("call_1", "list_dir", listing),
            ],
        },
        Scenario {
            name: "answer-from-result",
            messages: vec![
                Message::system(SYSTEM),
                Message::user("server.log is a long application log. Find the line with level ERROR and tell me the whole line and the gateway code in it."),
                call("call_1", "search", json!({"pattern": "ERROR", "path": "server.log"})),
                Message::tool_result("call_1", "search", log_line),
            ],
        },
    ]
}

/// One decode of `scenario` on `model`: greedy, under the grammar and stops of a turn
/// with tool choice `choice`.
pub(super) async fn decode(
    model: &LocalModel,
    tools: &ToolSet,
    scenario: &Scenario,
    max_tokens: u32,
    choice: &ToolChoice,
) -> anyhow::Result<GenerateOutput> {
    let spec = TurnSpec {
        tools: Some(tools),
        choice,
        constrained: true,
        ..TurnSpec::plain(&scenario.messages)
    };
    let prepared = model.format().prepare(&spec)?;
    let mut request = GenerateRequest::new(Prompt::Rendered {
        text: prepared.prompt,
        literal: prepared.literal,
    });
    request.sampling = SamplingParams::greedy();
    request.max_tokens = max_tokens;
    request.stop = prepared.stops;
    request.grammar = prepared.grammar;
    let mut session = model.engine().session().await?;
    Ok(session.generate(request).await?)
}

/// What one arm decoded over the repetitions.
#[derive(Default)]
struct Arm {
    tokens: usize,
    decode: Duration,
    drafted: usize,
    accepted: usize,
    /// Tokens per second of each repetition (all scenarios together).
    rates: Vec<f64>,
}

/// `value` to three decimals.
fn thousandths(value: f64) -> f64 {
    (value * 1000.0).round() / 1000.0
}

/// Runs `rein bench speculative`.
pub async fn run(args: SpeculativeBenchArgs) -> anyhow::Result<()> {
    anyhow::ensure!(args.reps >= 1, "--reps needs at least 1");
    let path = args.model.resolve()?;
    let mut plain_config = args.model.engine_config(path, None, 1)?;
    let draft_model = plain_config.draft_model.take();
    let draft_tokens = match (args.model.draft_tokens, &draft_model) {
        (0, None) => DEFAULT_DRAFT,
        (0, Some(_)) => plain_config.draft_tokens,
        (n, _) => n,
    };
    plain_config.draft_tokens = 0;
    let mut drafting_config = plain_config.clone();
    drafting_config.draft_tokens = draft_tokens;
    drafting_config.draft_model = draft_model.clone();
    let plain = LocalModel::new(Engine::load(plain_config).await?)?;
    let drafting = LocalModel::new(Engine::load(drafting_config).await?)?;
    let tools = ToolSet::prepare(&rein_tools::Registry::builtin().specs())?;
    let scenarios = scenarios();
    let (mut plain_arm, mut drafting_arm) = (Arm::default(), Arm::default());
    let mut identical = true;
    let mut per_scenario = serde_json::Map::new();
    for rep in 0..args.reps {
        let (mut plain_rep, mut drafting_rep) = (Arm::default(), Arm::default());
        for scenario in &scenarios {
            // Interleaved, the arm that goes first alternating by repetition.
            let (first, second) = match rep % 2 {
                0 => (&plain, &drafting),
                _ => (&drafting, &plain),
            };
            let a = decode(first, &tools, scenario, args.max_tokens, &ToolChoice::Auto).await?;
            let b = decode(second, &tools, scenario, args.max_tokens, &ToolChoice::Auto).await?;
            let (p, d) = match rep % 2 {
                0 => (a, b),
                _ => (b, a),
            };
            if p.text != d.text {
                identical = false;
                eprintln!(
                    "{}: the arms differ:\nplain: {:?}\ndrafting: {:?}",
                    scenario.name, p.text, d.text
                );
            }
            if rep == 0 {
                per_scenario.insert(
                    scenario.name.to_string(),
                    json!({
                        "tokens": p.tokens.len(),
                        "drafted": d.drafted_tokens,
                        "accepted": d.accepted_tokens,
                        "plain_ms": round(p.decode_time.as_secs_f64() * 1000.0),
                        "speculative_ms": round(d.decode_time.as_secs_f64() * 1000.0),
                    }),
                );
            }
            for (arm, output) in [(&mut plain_rep, &p), (&mut drafting_rep, &d)] {
                arm.tokens += output.tokens.len();
                arm.decode += output.decode_time;
                arm.drafted += output.drafted_tokens;
                arm.accepted += output.accepted_tokens;
            }
        }
        for (total, rep_arm) in [
            (&mut plain_arm, plain_rep),
            (&mut drafting_arm, drafting_rep),
        ] {
            total
                .rates
                .push(rep_arm.tokens as f64 / rep_arm.decode.as_secs_f64().max(1e-9));
            total.tokens += rep_arm.tokens;
            total.decode += rep_arm.decode;
            total.drafted += rep_arm.drafted;
            total.accepted += rep_arm.accepted;
        }
    }
    let plain_rate = median(plain_arm.rates.clone());
    let drafting_rate = median(drafting_arm.rates.clone());
    let acceptance = drafting_arm.accepted as f64 / (drafting_arm.drafted.max(1)) as f64;
    let result = json!({
        "model": plain.engine().info().description,
        "draft_tokens": draft_tokens,
        "draft_source": match &draft_model {
            Some(path) => format!("draft model {}", path.display()),
            None => "prompt lookup".to_string(),
        },
        "reps": args.reps,
        "plain_tokens_per_s": round(plain_rate),
        "speculative_tokens_per_s": round(drafting_rate),
        "speedup": thousandths(drafting_rate / plain_rate.max(1e-9)),
        "acceptance": thousandths(acceptance),
        "drafted_tokens": drafting_arm.drafted,
        "accepted_tokens": drafting_arm.accepted,
        "generated_tokens": drafting_arm.tokens,
        "identical_output": identical,
        "scenarios": per_scenario,
    });
    if args.json {
        println!("{result}");
    } else {
        println!(
            "plain {plain_rate:.1} tokens/s, speculative {drafting_rate:.1} tokens/s ({:.2}x); {} of {} drafted tokens kept ({:.0}%); outputs {}",
            drafting_rate / plain_rate.max(1e-9),
            drafting_arm.accepted,
            drafting_arm.drafted,
            acceptance * 100.0,
            if identical { "identical" } else { "DIFFERENT" }
        );
    }
    anyhow::ensure!(
        identical,
        "speculative decoding changed the greedy output (see above)"
    );
    Ok(())
}
