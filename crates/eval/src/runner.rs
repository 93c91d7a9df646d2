//! The runner: every task × repetition of one arm, each in a fresh workspace, as
//! many at once as memory allows (sessions of one loaded model, decoded in one
//! batch), each graded and appended to `results.jsonl` as soon as it ends.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use std::future::Future;

use futures_util::StreamExt;
use rein_agent::{Agent, RunConfig};
use rein_engine::SessionSource;
use rein_models::{
    plan_admitted, plan_request, GgufInfo, GpuLayers, KvCacheType, Machine, MemoryPlan,
};
use rein_protocol::{read_trace, RunEvent, RunResult, TraceWriter};
use rein_tools::{Registry, SandboxMode, ToolLimits, Workspace};

use crate::declared::DeclaredTool;
use crate::experiment::Arm;
use crate::grade::GradeContext;
use crate::record::{append_record, compliance, RunRecord};
use crate::setup::prepare_workspace;
use crate::task::Task;
use crate::EvalError;

/// The model file an arm runs, and what is recorded about it.
#[derive(Debug, Clone)]
pub struct ModelPlan {
    /// The GGUF file.
    pub path: PathBuf,
    /// Its label in reports (the name, or the file's stem).
    pub label: String,
    /// Its sha256.
    pub sha256: String,
    /// Its metadata.
    pub info: GgufInfo,
}

impl ModelPlan {
    /// File bits per parameter (what a quantization really costs on disk).
    pub fn bits_per_weight(&self) -> f64 {
        self.info.bits_per_weight()
    }
}

/// Settings shared by every arm of an experiment.
#[derive(Debug, Clone)]
pub struct RunSettings {
    /// Repetitions of each task (seeds `seed`, `seed + 1`, …).
    pub reps: u32,
    /// The first repetition's seed.
    pub seed: u32,
    /// Runs at once; `None`: as many as memory allows, at most 2.
    pub parallel: Option<u32>,
    /// CPU threads for the model (`None`: all cores).
    pub threads: Option<u32>,
    /// Context tokens per run.
    pub ctx: u32,
    /// Sampling temperature.
    pub temperature: f32,
    /// Seconds a shell command may run.
    pub shell_timeout: u64,
    /// How every task's shell is confined.
    pub sandbox: SandboxMode,
    /// The output directory (results.jsonl, traces/).
    pub out_dir: PathBuf,
    /// MCP servers started afresh in every run's workspace; their tools are offered
    /// beside the task's.
    pub mcp: Vec<rein_mcp::ServerConfig>,
    /// How their tools are offered.
    pub mcp_disclosure: rein_mcp::Disclosure,
}

/// What the runner asks of the model runtime: the machine it plans memory on, and a
/// model loaded for an arm (the binary gives llama.cpp's).
pub trait ArmLoader: Sync {
    /// The loaded model: a source of sessions, one per run.
    type Source: SessionSource;

    /// This machine, as the memory planner sees it.
    fn machine(&self) -> Machine;

    /// Loads `load.path` for `load.sessions` runs of `load.ctx` tokens at once.
    fn load(&self, load: LoadSpec) -> impl Future<Output = Result<Self::Source, String>> + Send;
}

/// How an arm's model is loaded.
#[derive(Debug, Clone, PartialEq)]
pub struct LoadSpec {
    /// The GGUF file.
    pub path: PathBuf,
    /// Context tokens per run.
    pub ctx: u32,
    /// Runs at once (sessions).
    pub sessions: u32,
    /// Layers on the GPU.
    pub gpu_layers: u32,
    /// CPU threads (`None`: all cores).
    pub threads: Option<u32>,
    /// The KV cache type.
    pub kv: KvCacheType,
}

/// Told about each run as it ends.
pub trait Progress {
    /// A run ended (or was skipped because results.jsonl already has it).
    fn run_done(&self, record: Option<&RunRecord>);
}

/// How many runs fit at once, and where the model's layers go: the memory planner's
/// answer for `wanted` runs (default 2) of `ctx` tokens, at most as many as fit.
/// Refuses when not even one run fits, with the numbers.
pub fn plan_parallel(
    info: &GgufInfo,
    ctx: u32,
    kv: KvCacheType,
    wanted: Option<u32>,
    machine: &Machine,
) -> Result<MemoryPlan, EvalError> {
    let wanted = wanted.unwrap_or(2).max(1);
    let request = plan_request(u64::from(ctx), wanted, kv, GpuLayers::Auto);
    plan_admitted(info, request, machine).map_err(EvalError::Setting)
}

/// Runs every task × repetition of `arm` not in `done`; returns the new records
/// (already appended to `results.jsonl`).
pub async fn run_arm<L: ArmLoader>(
    loader: &L,
    arm: &Arm,
    model: &ModelPlan,
    tasks: &[Task],
    settings: &RunSettings,
    done: &BTreeSet<String>,
    progress: &dyn Progress,
) -> Result<Vec<RunRecord>, EvalError> {
    let kv = arm.kv()?;
    let plan = plan_parallel(
        &model.info,
        settings.ctx,
        kv,
        settings.parallel,
        &loader.machine(),
    )?;
    let parallel = plan.request.sessions;
    let mut jobs = Vec::new();
    for rep in 0..settings.reps {
        for task in tasks {
            if done.contains(&run_id(arm, task, rep)) {
                progress.run_done(None);
            } else {
                jobs.push((task, rep));
            }
        }
    }
    if jobs.is_empty() {
        return Ok(Vec::new());
    }
    let engine = loader
        .load(LoadSpec {
            path: model.path.clone(),
            ctx: settings.ctx,
            sessions: parallel,
            gpu_layers: plan.gpu_layers,
            threads: settings.threads,
            kv,
        })
        .await
        .map_err(|e| EvalError::Engine(format!("{}: {e}", model.path.display())))?;
    tracing::info!("arm {}: {} runs, {parallel} at once", arm.name, jobs.len());
    let results_path = settings.out_dir.join("results.jsonl");
    let mut runs = futures_util::stream::iter(jobs)
        .map(|(task, rep)| run_one(&engine, arm, model, task, rep, settings))
        .buffer_unordered(parallel as usize);
    let mut records = Vec::new();
    while let Some(record) = runs.next().await {
        append_record(&results_path, &record)?;
        progress.run_done(Some(&record));
        records.push(record);
    }
    Ok(records)
}

/// The id of one run in results.jsonl.
pub fn run_id(arm: &Arm, task: &Task, rep: u32) -> String {
    format!("{}/{}/{}/{rep}", arm.name, task.suite, task.id)
}

/// One run: workspace, agent, grading. Harness failures become records too.
async fn run_one<S: SessionSource>(
    engine: &S,
    arm: &Arm,
    model: &ModelPlan,
    task: &Task,
    rep: u32,
    settings: &RunSettings,
) -> RunRecord {
    let trace = format!(
        "traces/{}/{}/{}/rep{rep}.jsonl",
        arm.dir_name(),
        task.suite,
        task.id
    );
    let seed = settings.seed.wrapping_add(rep);
    let mut record = RunRecord {
        run_id: run_id(arm, task, rep),
        arm: arm.name.clone(),
        suite: task.suite.clone(),
        task: task.id.clone(),
        tags: task.spec.tags.clone(),
        rep,
        seed,
        model: model.label.clone(),
        model_sha256: model.sha256.clone(),
        model_type: model.info.file_type.clone(),
        bits_per_weight: model.bits_per_weight(),
        profile: arm.profile.clone(),
        kv: arm.kv.clone(),
        rein_version: env!("CARGO_PKG_VERSION").to_string(),
        solved: false,
        grades: Vec::new(),
        compliance_first: None,
        compliance_recovered: None,
        turns: 0,
        tool_calls: 0,
        tool_errors: 0,
        errors_by_class: Default::default(),
        rules_fired: Default::default(),
        prompt_tokens: 0,
        completion_tokens: 0,
        ttft_ms: 0,
        wall_ms: 0,
        stop_reason: "harness_error".into(),
        answer: None,
        trace: trace.clone(),
        error: None,
    };
    if let Err(error) = run_and_grade(engine, arm, task, seed, settings, &trace, &mut record).await
    {
        record.error = Some(error);
    }
    record
}

async fn run_and_grade<S: SessionSource>(
    engine: &S,
    arm: &Arm,
    task: &Task,
    seed: u32,
    settings: &RunSettings,
    trace: &str,
    record: &mut RunRecord,
) -> Result<(), String> {
    let dir = prepare_workspace(task).map_err(|e| e.to_string())?;
    let workspace = Workspace::new(
        dir.path(),
        ToolLimits {
            shell_timeout: Duration::from_secs(settings.shell_timeout.max(1)),
            sandbox: settings.sandbox,
            ..ToolLimits::default()
        },
    )
    .map_err(|e| e.to_string())?;
    let mut registry = registry(task)?;
    let config = run_config(arm, task, seed, settings.temperature).map_err(|e| e.to_string())?;
    let trace_path = settings.out_dir.join(trace);
    let mut writer = TraceWriter::create(&trace_path).map_err(|e| e.to_string())?;
    let mut servers = settings.mcp.clone();
    servers.extend(task.mcp_servers()?);
    let hub = rein_mcp::McpHub::start_reported(servers, workspace.root(), &mut writer).await;
    hub.extend_for(
        &mut registry,
        settings.mcp_disclosure,
        settings.ctx as usize,
    );
    let backend = engine.session().await.map_err(|e| e.to_string())?;
    let agent = Agent::new(backend, workspace, &registry, config).map_err(|e| e.to_string());
    let result = match agent {
        Ok(mut agent) => Ok(agent.run_with(&task.spec.prompt, &mut writer).await),
        Err(error) => Err(error),
    };
    // The session went back to the engine with the agent; the servers stop before
    // grading.
    hub.shutdown_reported(&mut writer).await;
    drop(writer);
    let result = result?;
    let events = read_trace(&trace_path).map_err(|e| e.to_string())?;
    let context = GradeContext {
        task,
        workspace: dir.path(),
        result: &result,
        events: &events,
    };
    record.grades = task.spec.grade.iter().map(|g| g.grade(&context)).collect();
    record.solved = record.grades.iter().all(|g| g.passed);
    let (first, recovered) = judged_compliance(&registry, &events);
    record.compliance_first = first;
    record.compliance_recovered = recovered;
    fill_from_result(record, &result);
    Ok(())
}

fn fill_from_result(record: &mut RunRecord, result: &RunResult) {
    record.turns = result.turns;
    record.tool_calls = result.tool_calls;
    record.tool_errors = result.tool_errors;
    record.errors_by_class = result.recoveries.clone().into_iter().collect();
    record.rules_fired = result.rules.clone();
    record.prompt_tokens = result.prompt_tokens;
    record.completion_tokens = result.completion_tokens;
    record.ttft_ms = result.first_ttft_ms;
    record.wall_ms = result.wall_ms;
    record.stop_reason = result.stop_reason.as_str().to_string();
    record.answer = result.answer.clone();
}

/// Compliance with calls judged against the tools' own schemas, whatever the profile
/// checked (profiles without validation run invalid calls).
fn judged_compliance(registry: &Registry, events: &[RunEvent]) -> (Option<f64>, Option<f64>) {
    let tools = rein_format::ToolSet::prepare(&registry.specs()).ok();
    let valid = |name: &str, arguments: &serde_json::Value| match &tools {
        _ if name == rein_agent::FINISH_TOOL => true,
        Some(tools) => tools
            .get(name)
            .is_some_and(|tool| tool.validator.check_value(arguments.clone()).is_ok()),
        None => true,
    };
    compliance(events, valid)
}

/// Recomputes a record's compliance from its trace (under `out_dir`) with the task's
/// tools, for results written before calls were judged against their schemas.
pub fn recheck_compliance(
    record: &mut RunRecord,
    task: &Task,
    out_dir: &Path,
) -> Result<(), EvalError> {
    let registry = registry(task).map_err(|reason| EvalError::Task {
        path: task.dir.clone(),
        reason,
    })?;
    let path = out_dir.join(&record.trace);
    let events = read_trace(&path).map_err(|e| EvalError::Results {
        path: path.clone(),
        reason: e.to_string(),
    })?;
    let (first, recovered) = judged_compliance(&registry, &events);
    record.compliance_first = first;
    record.compliance_recovered = recovered;
    Ok(())
}

/// The task's tools: the built-in ones (when asked for) and its declared ones.
fn registry(task: &Task) -> Result<Registry, String> {
    let mut registry = if task.spec.tools.builtin {
        Registry::builtin()
    } else {
        Registry::empty()
    };
    for spec in &task.spec.tools.declared {
        registry.add(Arc::new(DeclaredTool::new(spec.clone())?));
    }
    Ok(registry)
}

/// The arm's profile with the task's budget.
fn run_config(arm: &Arm, task: &Task, seed: u32, temperature: f32) -> Result<RunConfig, EvalError> {
    let budget = task.spec.budget;
    let mut config = RunConfig::new(arm.profile()?);
    config.max_turns = budget.max_turns.max(1);
    config.max_tokens = budget.max_tokens.max(1);
    config.wall_clock = Duration::from_secs(budget.timeout_s.max(1));
    config.reply_tokens = budget.reply_tokens.clamp(16, 4096);
    config.temperature = temperature;
    config.seed = seed;
    config.tool_format = arm.tool_format()?;
    arm.apply(&mut config)?;
    Ok(config)
}

/// Where an experiment's files go, created when missing.
pub fn prepare_out_dir(dir: &Path) -> Result<(), EvalError> {
    std::fs::create_dir_all(dir).map_err(|source| EvalError::Io {
        path: dir.to_path_buf(),
        source,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn info(weights: u64) -> GgufInfo {
        GgufInfo {
            path: PathBuf::from("m.gguf"),
            file_size: weights,
            architecture: "llama".into(),
            name: None,
            parameter_count: 1,
            tensor_count: 1,
            file_type: "Q4_0".into(),
            context_length: Some(2048),
            block_count: 2,
            head_count: 2,
            head_count_kv: 2,
            embedding_length: 64,
            key_length: 32,
            value_length: 32,
            weights_bytes: weights,
            layer_bytes: vec![weights / 2; 2],
            output_bytes: 0,
            matrix_bytes_by_type: Default::default(),
            vocab_size: 1000,
            feed_forward_length: 256,
            chat_template: None,
        }
    }

    #[test]
    fn parallel_runs_are_bounded_by_free_memory() {
        let model = info(100 << 20);
        let machine = |ram| Machine {
            ram,
            ..Machine::default()
        };
        let one = plan_parallel(&model, 1000, KvCacheType::F16, Some(1), &machine(None)).unwrap();
        let per_run = one.ram.kv_per_session;
        // Room for exactly three runs inside 90% of what is free.
        let free = (one.ram.total(3) + per_run / 2) / 9 * 10;
        let sessions = |wanted, ram| {
            plan_parallel(&model, 1000, KvCacheType::F16, wanted, &machine(ram))
                .map(|p| p.request.sessions)
        };
        assert_eq!(sessions(Some(8), Some(free)).unwrap(), 3);
        assert_eq!(sessions(Some(2), Some(free)).unwrap(), 2);
        let refused = sessions(None, Some(50 << 20)).unwrap_err().to_string();
        assert!(refused.contains("not even one session fits"), "{refused}");
        assert_eq!(sessions(None, None).unwrap(), 2);
    }
}
