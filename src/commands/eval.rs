//! `rein eval`: run task suites against a model under one or more arms (`--ab`),
//! append every run to `results.jsonl` (an interrupted run resumes), then write the
//! report and plots; `rein eval report` rebuilds them from a results file.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use anyhow::Context;
use clap::{Args, Subcommand};
use indicatif::{ProgressBar, ProgressStyle};
use rein_eval::{
    arms, drop_torn_tail, finished_runs, generate, load_suite, read_records, run_arm, write_report,
    Arm, ArmLoader, Baseline, LoadSpec, ModelPlan, Progress, RunRecord, RunSettings, Task,
};
use rein_models::GgufInfo;
use rein_tools::SandboxMode;
use serde_json::{json, Value};

/// Arguments of `rein eval`.
#[derive(Args)]
#[command(args_conflicts_with_subcommands = true)]
pub struct EvalArgs {
    /// `rein eval report`.
    #[command(subcommand)]
    pub command: Option<EvalCommand>,
    /// The experiment.
    #[command(flatten)]
    pub run: EvalRunArgs,
}

/// `rein eval` subcommands.
#[derive(Subcommand)]
pub enum EvalCommand {
    /// Rebuild report.md, report.json and the plots from a results file.
    Report {
        /// The results.jsonl of an experiment.
        results: PathBuf,
        /// Where the report goes (default: the results file's directory).
        #[arg(long)]
        out: Option<PathBuf>,
        /// Recompute tool-call compliance from the traces with the tasks' tools (in
        /// --evals-dir), judging every call against its schema, and rewrite the results.
        #[arg(long)]
        recheck_calls: bool,
        /// The directory of suites (for --recheck-calls).
        #[arg(long, default_value = "evals")]
        evals_dir: PathBuf,
        /// Write the quantization report of a `quant=` or `kv=` experiment to this
        /// markdown file instead (plots as SVG in the folder beside it named after it,
        /// e.g. docs/quantization/), from the results and the files below alone.
        #[arg(long, conflicts_with_all = ["out", "recheck_calls"])]
        quantization: Option<PathBuf>,
        /// `rein quant-diff --json` output for the quantization report (repeatable).
        #[arg(long, requires = "quantization")]
        divergence: Vec<PathBuf>,
        /// `rein bench speed --json` output for the quantization report.
        #[arg(long, requires = "quantization")]
        speed: Option<PathBuf>,
        /// A text file of the commands that made the inputs, one per line, shown in
        /// the quantization report.
        #[arg(long, requires = "quantization")]
        commands: Option<PathBuf>,
    },
    /// List the suites and their tasks, checking every task file, and the generated
    /// families.
    List {
        /// The directory of suites.
        #[arg(long, default_value = "evals")]
        evals_dir: PathBuf,
        /// Also print each generated family's six phrasings, as development seeds
        /// (`family index + 30 × phrasing`) word them.
        #[arg(long)]
        phrasings: bool,
    },
    /// Write the generated workspace of SEED for the README's first job (TODO comments in
    /// other languages and layouts) into DIR, with the `path:line` of each TODO comment in
    /// --expected and of the other markers' comments in --absent.
    TodoWorkspace {
        /// The seed.
        #[arg(long)]
        seed: u64,
        /// Where the workspace goes (empty or new).
        dir: PathBuf,
        /// The file listing every TODO comment's `path:line`.
        #[arg(long)]
        expected: PathBuf,
        /// The file listing the `path:line` of comments with other markers.
        #[arg(long)]
        absent: PathBuf,
    },
}

/// The settings of an experiment.
#[derive(Args)]
pub struct EvalRunArgs {
    /// Suites to run, comma-separated (directories under --evals-dir, or `gen`: tasks
    /// generated from --seeds).
    #[arg(long)]
    pub suite: Option<String>,
    /// The seeds of `--suite gen`, `A..B` (B excluded) or `A..=B`: one task per seed.
    /// Seeds below 10000 are for development; report figures from a range above.
    #[arg(long)]
    pub seeds: Option<String>,
    /// The model: a name, a .gguf path, or hf:owner/repo/file.gguf.
    #[arg(long, short, default_value = "small")]
    pub model: String,
    /// Repetitions per task, each with the next seed.
    #[arg(long, default_value_t = 3)]
    pub reps: u32,
    /// The first repetition's seed.
    #[arg(long, default_value_t = 0)]
    pub seed: u32,
    /// The output directory (results.jsonl, report.md, report.json, plots, traces/).
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// One variable and its values: profile=…, model=…, kv=…, quant=…, tool_format=….
    #[arg(long)]
    pub ab: Option<String>,
    /// A run setting every arm takes (as `rein run --set`), repeatable: KEY=VALUE.
    #[arg(long = "set", value_name = "KEY=VALUE", value_parser = super::parse_setting)]
    pub set: Vec<(String, String)>,
    /// The harness profile when it is not the variable.
    #[arg(long, default_value = "full", value_parser = super::choices::PROFILES)]
    pub profile: String,
    /// The KV cache type when it is not the variable.
    #[arg(long, default_value = "f16", value_parser = super::choices::KV_TYPES)]
    pub kv: String,
    /// native or emulated tool calling when it is not the variable.
    #[arg(long, default_value = "native", value_parser = super::choices::TOOL_FORMATS)]
    pub tool_format: String,
    /// Runs at once (default: what memory allows, at most 2).
    #[arg(long)]
    pub parallel: Option<u32>,
    /// CPU threads (default: all cores).
    #[arg(long)]
    pub threads: Option<u32>,
    /// Context tokens per run.
    #[arg(long, default_value_t = 4096)]
    pub ctx: u32,
    /// Sampling temperature (seeds make runs differ when above 0).
    #[arg(long, default_value_t = 0.2)]
    pub temperature: f32,
    /// Seconds a shell command may run.
    #[arg(long, default_value_t = 20)]
    pub shell_timeout: u64,
    /// How shell commands are confined: workspace (writes only in the workspace and a
    /// private temporary directory, no network), strict (also reads only the system's
    /// and the toolchains' directories) or off.
    #[arg(long, env = "REIN_SANDBOX", default_value = "workspace", value_parser = super::choices::typed::<SandboxMode>(&super::choices::SANDBOX_MODES))]
    pub sandbox: SandboxMode,
    /// Only the first N tasks of each suite (smoke runs).
    #[arg(long)]
    pub limit: Option<usize>,
    /// Only these tasks (comma-separated names).
    #[arg(long)]
    pub tasks: Option<String>,
    /// The directory of suites.
    #[arg(long, default_value = "evals")]
    pub evals_dir: PathBuf,
    /// Start over: remove this experiment's earlier results in --out.
    #[arg(long)]
    pub fresh: bool,
    /// Fail instead of pulling a named model that is not in the cache.
    #[arg(long)]
    pub no_pull: bool,
    /// Do not keep the KV of the system prompt and tools on disk (`rein cache`).
    #[arg(long, env = "REIN_NO_PROMPT_CACHE", value_parser = clap::builder::FalseyValueParser::new())]
    pub no_prompt_cache: bool,
    /// The library that holds replies to their grammar in every arm (`gbnf` or
    /// `llguidance`, as `rein run --grammar-engine`).
    #[arg(long, default_value = "llguidance", value_parser = super::choices::typed::<rein_llama::GrammarEngine>(&super::choices::GRAMMAR_ENGINES))]
    pub grammar_engine: rein_llama::GrammarEngine,
    /// With `llguidance`, sample every token, even those the grammar forces.
    #[arg(long)]
    pub no_forced_tokens: bool,
    /// An MCP server for every run, repeatable: `NAME=COMMAND ARG…` or
    /// `NAME=http://host:port/mcp`; started afresh in each run's workspace.
    #[arg(long = "mcp", value_name = "NAME=COMMAND ARG…")]
    pub mcp: Vec<String>,
    /// How server tools are offered: auto, all or search (as `rein run`).
    #[arg(long, default_value = "auto")]
    pub mcp_disclosure: rein_mcp::Disclosure,
}

/// Runs `rein eval`.
pub fn run(args: EvalArgs) -> anyhow::Result<()> {
    match args.command {
        Some(EvalCommand::Report {
            results,
            quantization: Some(path),
            divergence,
            speed,
            commands,
            ..
        }) => quantization_report(
            &results,
            &path,
            &divergence,
            speed.as_deref(),
            commands.as_deref(),
        ),
        Some(EvalCommand::Report {
            results,
            out,
            recheck_calls,
            evals_dir,
            ..
        }) => report(&results, out, recheck_calls.then_some(evals_dir.as_path())),
        Some(EvalCommand::List {
            evals_dir,
            phrasings,
        }) => list(&evals_dir, phrasings),
        Some(EvalCommand::TodoWorkspace {
            seed,
            dir,
            expected,
            absent,
        }) => super::todo_workspace::write(seed, &dir, &expected, &absent),
        None => experiment(args.run),
    }
}

/// `rein eval report --quantization`: the quantization report from the results, the
/// divergence and speed files and the list of commands.
fn quantization_report(
    results: &Path,
    path: &Path,
    divergence: &[PathBuf],
    speed: Option<&Path>,
    commands: Option<&Path>,
) -> anyhow::Result<()> {
    let records = read_records(results)?;
    anyhow::ensure!(!records.is_empty(), "{} holds no runs", results.display());
    let read =
        |file: &Path| std::fs::read_to_string(file).with_context(|| file.display().to_string());
    let mut diffs: Vec<rein_eval::quant_diff::QuantDiff> = Vec::new();
    for file in divergence {
        let more: Vec<rein_eval::quant_diff::QuantDiff> = serde_json::from_str(&read(file)?)
            .with_context(|| format!("{}: not `rein quant-diff --json` output", file.display()))?;
        diffs.extend(more);
    }
    let speed: Vec<rein_eval::quant_report::SpeedRow> = match speed {
        Some(file) => serde_json::from_str(&read(file)?)
            .with_context(|| format!("{}: not `rein bench speed --json` output", file.display()))?,
        None => Vec::new(),
    };
    let commands: Vec<String> = match commands {
        Some(file) => read(file)?.lines().map(str::to_string).collect(),
        None => Vec::new(),
    };
    let inputs = rein_eval::quant_report::QuantInputs {
        records: &records,
        divergence: &diffs,
        speed: &speed,
        commands: &commands,
    };
    for written in rein_eval::quant_report::write(&inputs, path)? {
        println!("{}", written.display());
    }
    Ok(())
}

fn report(results: &Path, out: Option<PathBuf>, recheck: Option<&Path>) -> anyhow::Result<()> {
    let mut records = read_records(results)?;
    anyhow::ensure!(!records.is_empty(), "{} holds no runs", results.display());
    if let Some(evals_dir) = recheck {
        let base = results.parent().unwrap_or(Path::new("."));
        let mut suites = std::collections::BTreeMap::new();
        for record in &mut records {
            if !suites.contains_key(&record.suite) {
                // Generated tasks live beside the results they were run for.
                let dir = if record.suite == generate::SUITE {
                    base.join("tasks")
                } else {
                    evals_dir.to_path_buf()
                };
                suites.insert(record.suite.clone(), load_suite(&dir, &record.suite)?);
            }
            let task = suites[&record.suite]
                .iter()
                .find(|t| t.id == record.task)
                .with_context(|| {
                    format!(
                        "no task {}/{} in {}",
                        record.suite,
                        record.task,
                        evals_dir.display()
                    )
                })?;
            rein_eval::recheck_compliance(record, task, base)?;
        }
        let lines: Vec<String> = records
            .iter()
            .map(serde_json::to_string)
            .collect::<Result<_, _>>()?;
        rein_tools::write_atomically(results, format!("{}\n", lines.join("\n")).as_bytes())
            .with_context(|| results.display().to_string())?;
    }
    let dir = out
        .or_else(|| results.parent().map(Path::to_path_buf))
        .unwrap_or_else(|| PathBuf::from("."));
    std::fs::create_dir_all(&dir).with_context(|| dir.display().to_string())?;
    for path in write_report(&records, &dir)? {
        println!("{}", path.display());
    }
    Ok(())
}

fn list(evals_dir: &Path, phrasings: bool) -> anyhow::Result<()> {
    let suites = rein_eval::list_suites(evals_dir);
    anyhow::ensure!(
        !suites.is_empty(),
        "no suites under {}",
        evals_dir.display()
    );
    for suite in suites {
        let tasks = load_suite(evals_dir, &suite)?;
        println!("{suite} ({} tasks)", tasks.len());
        for task in tasks {
            println!("  {:<40} {}", task.id, task.spec.tags.join(", "));
        }
    }
    let families = generate::families();
    println!(
        "{} (generated from --seeds: {} families; seeds below {} for development)",
        generate::SUITE,
        families.len(),
        generate::FIRST_TEST_SEED
    );
    let count = families.len() as u64;
    for (index, family) in families.iter().enumerate() {
        println!(
            "  {:<40} {}, {} phrasings",
            family.name, family.kind, family.phrasings
        );
        if phrasings {
            for phrasing in 0..family.phrasings as u64 {
                let seed = index as u64 + count * phrasing;
                let (_, _, task) = generate::generate(seed);
                println!("    seed {seed}: {}", task.prompt.replace('\n', " / "));
            }
        }
    }
    Ok(())
}

/// The tasks of the chosen suites, after --limit and --tasks; generated tasks are
/// written under `out/tasks/gen/`.
fn select_tasks(args: &EvalRunArgs, out: &Path) -> anyhow::Result<Vec<Task>> {
    let suites = args
        .suite
        .as_deref()
        .context("--suite is required (e.g. --suite traps; `rein eval list` shows the suites)")?;
    anyhow::ensure!(
        args.evals_dir.is_dir(),
        "no suites directory at {}: run from the rein checkout or pass --evals-dir",
        args.evals_dir.display()
    );
    let wanted: Option<BTreeSet<&str>> = args.tasks.as_deref().map(|t| {
        t.split(',')
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .collect()
    });
    let mut tasks = Vec::new();
    for suite in suites.split(',').map(str::trim).filter(|s| !s.is_empty()) {
        let mut of_suite = if suite == generate::SUITE {
            generated_tasks(args, out)?
        } else {
            load_suite(&args.evals_dir, suite)?
        };
        if let Some(wanted) = &wanted {
            of_suite.retain(|t| wanted.contains(t.id.as_str()));
        }
        if let Some(limit) = args.limit {
            of_suite.truncate(limit);
        }
        tasks.extend(of_suite);
    }
    if let Some(wanted) = &wanted {
        let found: BTreeSet<&str> = tasks.iter().map(|t| t.id.as_str()).collect();
        let missing: Vec<&&str> = wanted.iter().filter(|w| !found.contains(**w)).collect();
        anyhow::ensure!(missing.is_empty(), "--tasks: no such task(s): {missing:?}");
    }
    anyhow::ensure!(!tasks.is_empty(), "no tasks selected");
    Ok(tasks)
}

/// The tasks of `--seeds`, written under `out/tasks/gen/` (the same seed writes the
/// same task, so a resumed experiment finds its tasks again).
fn generated_tasks(args: &EvalRunArgs, out: &Path) -> anyhow::Result<Vec<Task>> {
    let seeds = args.seeds.as_deref().context(
        "--suite gen needs --seeds A..B (seeds below 10000 are for development, e.g. --seeds 0..48)",
    )?;
    let seeds = generate::parse_seeds(seeds).map_err(anyhow::Error::msg)?;
    let server = args.evals_dir.join("../tests/mcp-servers/generated.mjs");
    let env = generate::GenEnv {
        mcp_server: server.canonicalize().unwrap_or(server),
    };
    Ok(generate::write_suite(&out.join("tasks"), seeds, &env)?)
}

/// What every arm shares unless `--ab` varies it.
fn baseline(args: &EvalRunArgs) -> Baseline {
    Baseline {
        profile: args.profile.clone(),
        model: args.model.clone(),
        kv: args.kv.clone(),
        tool_format: args.tool_format.clone(),
        settings: args.set.clone(),
    }
}

/// What must stay the same for earlier results in --out to be resumed.
fn experiment_identity(args: &EvalRunArgs, tasks: &[Task]) -> Value {
    let mut identity = json!({
        "suites": args.suite,
        "tasks": tasks.iter().map(|t| format!("{}/{}", t.suite, t.id)).collect::<Vec<_>>(),
        "ab": args.ab,
        "baseline": baseline(args),
        "seed": args.seed,
        "ctx": args.ctx,
        "temperature": args.temperature,
        "shell_timeout_s": args.shell_timeout,
        "sandbox": args.sandbox.as_str(),
        "rein_version": env!("CARGO_PKG_VERSION"),
    });
    if let Some(seeds) = &args.seeds {
        identity["seeds"] = json!(seeds);
    }
    // Recorded unless GBNF (the engine of every experiment before decision 0063), so
    // those stay resumable.
    if args.grammar_engine != rein_llama::GrammarEngine::Gbnf {
        identity["grammar_engine"] = json!(args.grammar_engine.as_str());
        identity["forced_tokens"] = json!(!args.no_forced_tokens);
    }
    if !args.mcp.is_empty() {
        identity["mcp"] = json!(args.mcp);
        identity["mcp_disclosure"] = json!(format!("{:?}", args.mcp_disclosure).to_lowercase());
    }
    identity
}

/// Checks (or records) the experiment in `out`, so a resume never mixes experiments.
fn claim_out_dir(out: &Path, identity: &Value, fresh: bool) -> anyhow::Result<()> {
    std::fs::create_dir_all(out).with_context(|| format!("--out {}", out.display()))?;
    let file = out.join("experiment.json");
    if fresh {
        for name in ["results.jsonl", "experiment.json"] {
            let path = out.join(name);
            if path.exists() {
                std::fs::remove_file(&path).with_context(|| path.display().to_string())?;
            }
        }
        let traces = out.join("traces");
        if traces.is_dir() {
            std::fs::remove_dir_all(&traces).with_context(|| traces.display().to_string())?;
        }
    }
    if let Ok(text) = std::fs::read_to_string(&file) {
        let earlier: Value = serde_json::from_str(&text)
            .with_context(|| format!("{} is not JSON", file.display()))?;
        anyhow::ensure!(
            &earlier == identity,
            "{} holds a different experiment ({}); pass --fresh to start over or choose another --out",
            out.display(),
            file.display()
        );
        return Ok(());
    }
    let text = serde_json::to_string_pretty(identity)?;
    rein_tools::write_atomically(&file, text.as_bytes()).with_context(|| file.display().to_string())
}

/// The model file of `arm`, with its label, hash and metadata.
fn model_plan(arm: &Arm, pull: bool) -> anyhow::Result<ModelPlan> {
    let source = super::resolve(&arm.model, pull)?;
    let (path, label) = match &arm.quant {
        None => {
            let label = super::model_label(&arm.model, &source)?;
            (source, label)
        }
        Some(quant) => super::quantized_copy(&arm.model, &source, quant)?,
    };
    let sha256 = super::file_sha256_of(&arm.model, &path, arm.quant.is_some())?;
    let info = GgufInfo::read(&path)?;
    Ok(ModelPlan {
        path,
        label,
        sha256,
        info,
    })
}

/// The sha256 `rein models quantize` recorded beside a file it wrote.
pub(crate) fn recorded_sha256(path: &Path) -> Option<String> {
    let text = std::fs::read_to_string(rein_models::provenance_path(path)).ok()?;
    let value: Value = serde_json::from_str(&text).ok()?;
    let size = std::fs::metadata(path).ok()?.len();
    (value["size"].as_u64() == Some(size))
        .then(|| value["sha256"].as_str().map(str::to_string))
        .flatten()
}

/// A progress bar over every run of the experiment.
struct RunBar {
    bar: ProgressBar,
    solved: std::cell::Cell<u64>,
    finished: std::cell::Cell<u64>,
}

impl Progress for RunBar {
    fn run_done(&self, record: Option<&RunRecord>) {
        if let Some(record) = record {
            self.finished.set(self.finished.get() + 1);
            if record.solved {
                self.solved.set(self.solved.get() + 1);
            }
            if let Some(error) = &record.error {
                self.bar
                    .println(format!("{}: harness error: {error}", record.run_id));
            }
            self.bar.set_message(format!(
                "{} · solved {}/{}",
                record.arm,
                self.solved.get(),
                self.finished.get()
            ));
        }
        self.bar.inc(1);
    }
}

fn experiment(args: EvalRunArgs) -> anyhow::Result<()> {
    anyhow::ensure!(args.reps >= 1, "--reps must be at least 1");
    anyhow::ensure!(
        (0.0..=5.0).contains(&args.temperature),
        "--temperature must be between 0 and 5"
    );
    let out = args
        .out
        .clone()
        .context("--out DIR is required (results.jsonl, report and plots go there)")?;
    let tasks = select_tasks(&args, &out)?;
    let arms = arms(&baseline(&args), args.ab.as_deref())?;
    // Every arm's model is found (and pulled) before the first run.
    let plans: Vec<ModelPlan> = arms
        .iter()
        .map(|arm| model_plan(arm, !args.no_pull))
        .collect::<anyhow::Result<_>>()?;
    claim_out_dir(&out, &experiment_identity(&args, &tasks), args.fresh)?;
    let results = out.join("results.jsonl");
    drop_torn_tail(&results)?;
    let done = finished_runs(&read_records(&results)?);
    let settings = RunSettings {
        reps: args.reps,
        seed: args.seed,
        parallel: args.parallel,
        threads: args.threads,
        ctx: args.ctx.max(512),
        temperature: args.temperature,
        shell_timeout: args.shell_timeout,
        sandbox: args.sandbox,
        out_dir: out.clone(),
        mcp: rein_mcp::config::gather(None, None, &args.mcp)?,
        mcp_disclosure: args.mcp_disclosure,
    };
    let total = (arms.len() * tasks.len()) as u64 * u64::from(args.reps);
    let bar = ProgressBar::new(total);
    if let Ok(style) = ProgressStyle::with_template(
        "{bar:30} {pos}/{len} runs {msg} [{elapsed_precise}, eta {eta}]",
    ) {
        bar.set_style(style.progress_chars("=> "));
    }
    let progress = RunBar {
        bar,
        solved: Default::default(),
        finished: Default::default(),
    };
    eprintln!(
        "rein eval: {} task(s) × {} rep(s) × {} arm(s) → {}",
        tasks.len(),
        args.reps,
        arms.len(),
        out.display()
    );
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()?;
    for (arm, plan) in arms.iter().zip(&plans) {
        runtime.block_on(run_arm(
            &LlamaLoader {
                prompt_cache: super::prompt_cache::config(!args.no_prompt_cache, None),
                grammar_engine: args.grammar_engine,
                forced_tokens: !args.no_forced_tokens,
            },
            arm,
            plan,
            &tasks,
            &settings,
            &done,
            &progress,
        ))?;
    }
    progress.bar.finish_and_clear();
    let records = read_records(&results)?;
    for path in write_report(&records, &out)? {
        println!("{}", path.display());
    }
    Ok(())
}

/// The runner's model runtime: llama.cpp in this process.
struct LlamaLoader {
    /// The prompt cache on disk every arm's engine uses.
    prompt_cache: Option<rein_llama::PromptCacheConfig>,
    /// The grammar engine, and whether it appends forced tokens without sampling.
    grammar_engine: rein_llama::GrammarEngine,
    forced_tokens: bool,
}

impl ArmLoader for LlamaLoader {
    type Source = rein_llama::LocalModel;

    fn machine(&self) -> rein_models::Machine {
        rein_llama::machine()
    }

    async fn load(&self, load: LoadSpec) -> Result<rein_llama::LocalModel, String> {
        let mut config = rein_llama::EngineConfig::new(&load.path);
        config.n_ctx = Some(load.ctx * load.sessions);
        config.max_sessions = load.sessions;
        config.gpu_layers = load.gpu_layers;
        config.threads = load.threads;
        config.kv_type = load.kv;
        config.prompt_cache = self.prompt_cache.clone();
        config.grammar_engine = self.grammar_engine;
        config.forced_tokens = self.forced_tokens;
        config.queue_timeout = std::time::Duration::from_secs(24 * 3600);
        let engine = rein_llama::Engine::load(config)
            .await
            .map_err(|e| e.to_string())?;
        rein_llama::LocalModel::new(engine).map_err(|e| e.to_string())
    }
}
