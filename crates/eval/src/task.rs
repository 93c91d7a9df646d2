//! The task format: `evals/<suite>/<task>/task.toml` + `input/` + optional
//! `expected/`, read into [`Task`]s and checked before anything runs.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::grade::GraderSpec;
use crate::setup::SetupStep;
use crate::EvalError;

/// One task of a suite.
#[derive(Debug, Clone)]
pub struct Task {
    /// The suite's name (its directory name).
    pub suite: String,
    /// The task's name (its directory name).
    pub id: String,
    /// The task's directory.
    pub dir: PathBuf,
    /// What `task.toml` says.
    pub spec: TaskSpec,
}

impl Task {
    /// `input/`: copied into each run's fresh workspace.
    pub fn input_dir(&self) -> PathBuf {
        self.dir.join("input")
    }

    /// The task's MCP servers, `{evals}` replaced by the evals directory.
    pub fn mcp_servers(&self) -> Result<Vec<rein_mcp::ServerConfig>, String> {
        let evals = self
            .dir
            .parent()
            .and_then(Path::parent)
            .unwrap_or(Path::new("."));
        let evals = evals.canonicalize().unwrap_or_else(|_| evals.to_path_buf());
        self.spec
            .tools
            .mcp
            .iter()
            .map(|flag| {
                rein_mcp::config::from_flag(&flag.replace("{evals}", &evals.display().to_string()))
                    .map_err(|error| format!("{}/{}: {error}", self.suite, self.id))
            })
            .collect()
    }

    /// `expected/`: the files the workspace must hold at the end.
    pub fn expected_dir(&self) -> PathBuf {
        self.dir.join("expected")
    }
}

/// The contents of `task.toml`.
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct TaskSpec {
    /// What the agent is asked to do.
    pub prompt: String,
    /// Failure-mode tags: the report has a row per tag.
    #[serde(default)]
    pub tags: Vec<String>,
    /// Limits of a run.
    #[serde(default)]
    pub budget: Budget,
    /// Which tools the agent gets.
    #[serde(default)]
    pub tools: ToolsSpec,
    /// Steps run after `input/` is copied (pipes, huge files, binary files).
    #[serde(default)]
    pub setup: Vec<SetupStep>,
    /// The graders; the run is solved when every one passes.
    pub grade: Vec<GraderSpec>,
}

/// The limits of one run of a task.
#[derive(Debug, Clone, Copy, Deserialize, Serialize)]
#[serde(deny_unknown_fields, default)]
pub struct Budget {
    /// Most model turns (retries count).
    pub max_turns: u32,
    /// Most generated tokens over the run.
    pub max_tokens: u64,
    /// Most seconds for the run.
    pub timeout_s: u64,
    /// A reply's token allowance.
    pub reply_tokens: u32,
}

impl Default for Budget {
    fn default() -> Self {
        Self {
            max_turns: 10,
            max_tokens: 4096,
            timeout_s: 300,
            reply_tokens: 512,
        }
    }
}

/// The tools of a task: the built-in ones and tools declared by the task itself.
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields, default)]
pub struct ToolsSpec {
    /// Offer rein's built-in file and shell tools.
    pub builtin: bool,
    /// Tools that exist only for this task, with canned results.
    pub declared: Vec<DeclaredToolSpec>,
    /// MCP servers started afresh in each run's workspace, written as `--mcp`
    /// values (`NAME=COMMAND ARG…`); `{evals}` stands for the evals directory.
    pub mcp: Vec<String>,
}

impl Default for ToolsSpec {
    fn default() -> Self {
        Self {
            builtin: true,
            declared: Vec::new(),
            mcp: Vec::new(),
        }
    }
}

/// A tool declared by a task: its schema and what it returns.
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct DeclaredToolSpec {
    /// The tool's name.
    pub name: String,
    /// What it does, as the model reads it.
    pub description: String,
    /// The JSON schema of its arguments: a TOML table, or JSON text.
    #[serde(default = "empty_object_schema")]
    pub parameters: Value,
    /// The reply to any call no case matches.
    #[serde(default = "default_result")]
    pub result: String,
    /// Replies for calls whose arguments contain `when` (compared as a subset).
    #[serde(default)]
    pub cases: Vec<ResultCase>,
}

/// A declared tool's reply to calls with particular arguments.
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct ResultCase {
    /// The arguments this case answers (a subset of the call's).
    pub when: Value,
    /// The reply.
    pub result: String,
}

fn empty_object_schema() -> Value {
    serde_json::json!({"type": "object", "properties": {}})
}

fn default_result() -> String {
    "ok".to_string()
}

impl DeclaredToolSpec {
    /// The parameters schema as JSON (JSON text is parsed).
    pub fn schema(&self) -> Result<Value, String> {
        match &self.parameters {
            Value::String(text) => serde_json::from_str(text)
                .map_err(|e| format!("tool `{}`: parameters is not JSON: {e}", self.name)),
            other => Ok(other.clone()),
        }
    }
}

/// Reads one task directory.
pub fn load_task(suite: &str, dir: &Path) -> Result<Task, EvalError> {
    let file = dir.join("task.toml");
    let text = std::fs::read_to_string(&file).map_err(|source| EvalError::Io {
        path: file.clone(),
        source,
    })?;
    let spec: TaskSpec = toml::from_str(&text).map_err(|e| EvalError::Task {
        path: file.clone(),
        reason: e.to_string(),
    })?;
    let id = dir
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let task = Task {
        suite: suite.to_string(),
        id,
        dir: dir.to_path_buf(),
        spec,
    };
    check_task(&task).map_err(|reason| EvalError::Task { path: file, reason })?;
    Ok(task)
}

/// Everything that can be checked without running: graders present, `expected/`
/// there when a grader compares with it, regexes compile, declared schemas parse.
fn check_task(task: &Task) -> Result<(), String> {
    if task.spec.prompt.trim().is_empty() {
        return Err("prompt is empty".into());
    }
    if task.spec.grade.is_empty() {
        return Err("no [[grade]] entries: a task must say how it is graded".into());
    }
    if !task.spec.tools.builtin
        && task.spec.tools.declared.is_empty()
        && task.spec.tools.mcp.is_empty()
    {
        return Err("no tools: set tools.builtin = true, declare tools or MCP servers".into());
    }
    task.mcp_servers()?;
    for grader in &task.spec.grade {
        grader.check(task)?;
    }
    for tool in &task.spec.tools.declared {
        let schema = tool.schema()?;
        if !schema.is_object() {
            return Err(format!(
                "tool `{}`: parameters must be an object",
                tool.name
            ));
        }
    }
    for step in &task.spec.setup {
        step.check()?;
    }
    Ok(())
}

/// Reads every task of `evals_dir/<suite>`, in name order.
pub fn load_suite(evals_dir: &Path, suite: &str) -> Result<Vec<Task>, EvalError> {
    let dir = evals_dir.join(suite);
    let entries = std::fs::read_dir(&dir).map_err(|source| EvalError::Io {
        path: dir.clone(),
        source,
    })?;
    let mut dirs: Vec<PathBuf> = entries
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.join("task.toml").is_file())
        .collect();
    dirs.sort();
    if dirs.is_empty() {
        return Err(EvalError::Task {
            path: dir,
            reason: "no tasks (directories with a task.toml)".into(),
        });
    }
    dirs.iter().map(|d| load_task(suite, d)).collect()
}

/// The suites under `evals_dir`: directories holding at least one task.
pub fn list_suites(evals_dir: &Path) -> Vec<String> {
    let Ok(entries) = std::fs::read_dir(evals_dir) else {
        return Vec::new();
    };
    let mut suites: Vec<String> = entries
        .filter_map(Result::ok)
        .filter(|e| {
            std::fs::read_dir(e.path())
                .map(|mut inner| {
                    inner.any(|t| {
                        t.map(|t| t.path().join("task.toml").is_file())
                            .unwrap_or(false)
                    })
                })
                .unwrap_or(false)
        })
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    suites.sort();
    suites
}
