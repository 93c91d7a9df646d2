//! `rein bench forced`: how fast agent-shaped calls decode when the tokens the grammar
//! forces are appended without sampling, against plain constrained decoding. The
//! turns are those of `rein bench speculative` (the built-in tools, history with calls
//! and results like the eval traces'), each decoded as a call (`required`: the grammar
//! a reply gets once its opening reads as a call); three engines of the same model —
//! llama.cpp's GBNF sampler, llguidance sampling every token, llguidance with forced
//! tokens — decode each greedily, interleaved, decode time only.

use std::time::Duration;

use clap::Args;
use rein_format::{ToolChoice, ToolSet};
use rein_llama::{Engine, GrammarEngine, LocalModel};
use serde_json::json;

use super::bench::{median, round};
use super::bench_speculative::{decode, scenarios};

/// Arguments of `rein bench forced`.
#[derive(Args)]
pub struct ForcedBenchArgs {
    /// The model and how it is loaded (`--grammar-engine` and `--no-forced-tokens`
    /// are set per arm).
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

/// What one arm decoded.
#[derive(Default)]
struct Arm {
    tokens: usize,
    forced: usize,
    decode: Duration,
    /// Tokens per second of each repetition (all scenarios together).
    rates: Vec<f64>,
}

/// Runs `rein bench forced`.
pub async fn run(args: ForcedBenchArgs) -> anyhow::Result<()> {
    anyhow::ensure!(args.reps >= 1, "--reps needs at least 1");
    let path = args.model.resolve()?;
    let base = args.model.engine_config(path, None, 1)?;
    let arms = [
        ("gbnf", GrammarEngine::Gbnf, false),
        ("llguidance", GrammarEngine::Llguidance, false),
        ("llguidance+forced", GrammarEngine::Llguidance, true),
    ];
    let mut models = Vec::new();
    for (_, engine, forced) in arms {
        let mut config = base.clone();
        config.grammar_engine = engine;
        config.forced_tokens = forced;
        models.push(LocalModel::new(Engine::load(config).await?)?);
    }
    let tools = ToolSet::prepare(&rein_tools::Registry::builtin().specs())?;
    let scenarios = scenarios();
    let mut totals: Vec<Arm> = arms.iter().map(|_| Arm::default()).collect();
    let mut texts: Vec<Vec<String>> = vec![Vec::new(); arms.len()];
    for rep in 0..args.reps {
        let mut reps: Vec<Arm> = arms.iter().map(|_| Arm::default()).collect();
        for scenario in &scenarios {
            // Interleaved, the arm that goes first rotating by repetition.
            for k in 0..arms.len() {
                let arm = (k + rep) % arms.len();
                let output = decode(
                    &models[arm],
                    &tools,
                    scenario,
                    args.max_tokens,
                    &ToolChoice::Required,
                )
                .await?;
                anyhow::ensure!(
                    output.grammar_engine == Some(arms[arm].1),
                    "{}: the grammar was held by {:?}",
                    arms[arm].0,
                    output.grammar_engine
                );
                if rep == 0 {
                    texts[arm].push(output.text.clone());
                }
                reps[arm].tokens += output.tokens.len();
                reps[arm].forced += output.forced_tokens;
                reps[arm].decode += output.decode_time;
            }
        }
        for (total, rep_arm) in totals.iter_mut().zip(reps) {
            total
                .rates
                .push(rep_arm.tokens as f64 / rep_arm.decode.as_secs_f64().max(1e-9));
            total.tokens += rep_arm.tokens;
            total.forced += rep_arm.forced;
            total.decode += rep_arm.decode;
        }
    }
    let rates: Vec<f64> = totals.iter().map(|a| median(a.rates.clone())).collect();
    let forced_arm = &totals[2];
    let per_arm: serde_json::Map<_, _> = arms
        .iter()
        .zip(&totals)
        .zip(&rates)
        .map(|(((name, _, _), arm), rate)| {
            (
                name.to_string(),
                json!({
                    "tokens_per_s": round(*rate),
                    "tokens": arm.tokens,
                    "forced_tokens": arm.forced,
                }),
            )
        })
        .collect();
    let same_as_plain = texts[2] == texts[1];
    let same_as_gbnf = texts[1] == texts[0];
    let result = json!({
        "model": models[0].engine().info().description,
        "reps": args.reps,
        "scenarios": scenarios.iter().map(|s| s.name).collect::<Vec<_>>(),
        "arms": per_arm,
        "forced_share": round(100.0 * forced_arm.forced as f64 / forced_arm.tokens.max(1) as f64),
        "speedup_vs_llguidance": round(100.0 * rates[2] / rates[1].max(1e-9)) / 100.0,
        "speedup_vs_gbnf": round(100.0 * rates[2] / rates[0].max(1e-9)) / 100.0,
        "texts_forced_equal_plain": same_as_plain,
        "texts_llguidance_equal_gbnf": same_as_gbnf,
        "texts": texts,
    });
    if args.json {
        println!("{result}");
    } else {
        println!(
            "gbnf {:.1} tokens/s, llguidance {:.1}, llguidance with forced tokens {:.1} ({:.0}% of tokens forced); texts: forced = plain {same_as_plain}, llguidance = gbnf {same_as_gbnf}",
            rates[0],
            rates[1],
            rates[2],
            100.0 * forced_arm.forced as f64 / forced_arm.tokens.max(1) as f64
        );
    }
    Ok(())
}
