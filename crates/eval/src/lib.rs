//! rein's evaluation harness: task suites (data, not code) run in fresh workspaces,
//! graded mechanically from the final file-system state, the answer and the trace;
//! repeated with seeds; A/B arms that change one variable; reports and plots.
#![deny(missing_docs)]

mod declared;
mod experiment;
pub mod generate;
mod grade;
mod plot;
pub mod quant_diff;
pub mod quant_report;
mod record;
mod report;
mod runner;
mod setup;
mod task;

use std::path::{Path, PathBuf};

pub use declared::DeclaredTool;
pub use experiment::{arms, Arm, Baseline, VARIABLES};
pub use grade::{json_subset, Grade, GradeContext, GraderSpec};
pub use plot::write_plots;
pub use record::{compliance, drop_torn_tail, finished_runs, read_records, RunRecord};
pub use report::{build as build_report, markdown as report_markdown, ArmSummary, Report, Stat};
pub use runner::{
    plan_parallel, prepare_out_dir, recheck_compliance, run_arm, run_id, ArmLoader, LoadSpec,
    ModelPlan, Progress, RunSettings,
};
pub use setup::{copy_tree, prepare_workspace, SetupStep};
pub use task::{
    list_suites, load_suite, load_task, Budget, DeclaredToolSpec, Task, TaskSpec, ToolsSpec,
};

/// What can go wrong in an evaluation.
#[derive(Debug, thiserror::Error)]
pub enum EvalError {
    /// A file problem.
    #[error("{path}: {source}")]
    Io {
        /// The file or directory.
        path: PathBuf,
        /// The error.
        source: std::io::Error,
    },
    /// A task that cannot be used as written.
    #[error("{path}: {reason}")]
    Task {
        /// Its task.toml (or directory).
        path: PathBuf,
        /// What is wrong.
        reason: String,
    },
    /// A setting or experiment that cannot run.
    #[error("{0}")]
    Setting(String),
    /// A results file that cannot be read or written.
    #[error("{path}: {reason}")]
    Results {
        /// The file.
        path: PathBuf,
        /// What is wrong.
        reason: String,
    },
    /// The model could not be loaded.
    #[error("model: {0}")]
    Engine(String),
    /// A plot could not be drawn.
    #[error("plot: {0}")]
    Plot(String),
}

/// Writes `report.md`, `report.json` and the plots for `records` into `dir`; returns
/// the files written.
pub fn write_report(records: &[RunRecord], dir: &Path) -> Result<Vec<PathBuf>, EvalError> {
    if records.is_empty() {
        return Err(EvalError::Setting("no runs to report".into()));
    }
    let report = build_report(records);
    let write = |name: &str, bytes: &[u8]| -> Result<PathBuf, EvalError> {
        let path = dir.join(name);
        rein_tools::write_atomically(&path, bytes).map_err(|source| EvalError::Io {
            path: path.clone(),
            source,
        })?;
        Ok(path)
    };
    let mut written = vec![
        write("report.md", report_markdown(&report).as_bytes())?,
        write(
            "report.json",
            serde_json::to_string_pretty(&report)
                .map_err(|e| EvalError::Setting(e.to_string()))?
                .as_bytes(),
        )?,
    ];
    written.extend(write_plots(&report, dir)?);
    Ok(written)
}
