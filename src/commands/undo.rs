//! `rein undo`: puts a workspace back as it was before a `rein run`, from the run's
//! record (every file the run created, changed or deleted, with its content before);
//! a file changed again since the run is left alone and named.

use std::path::{Path, PathBuf};

use anyhow::Context;
use clap::Args;
use rein_tools::{RunRecord, RunRecorder};

/// Arguments of `rein undo`.
#[derive(Args)]
pub struct UndoArgs {
    /// The run: its id (printed when the run ends; the trace's file name without
    /// `.jsonl`) or its trace's path. Default: the newest run not undone yet.
    pub run: Option<String>,
    /// List the runs that can be undone, newest first, instead.
    #[arg(long)]
    pub list: bool,
    /// One JSON object: {"run", "workspace", "restored", "removed", "left": [{"path",
    /// "why"}]}, or with --list {"runs": [{"run", "workspace", "files"}]}.
    #[arg(long)]
    pub json: bool,
}

/// Where run records live: `REIN_RUNS_DIR`, else `rein/runs` in the user's cache.
pub fn runs_dir() -> anyhow::Result<PathBuf> {
    if let Some(dir) = std::env::var_os("REIN_RUNS_DIR").filter(|d| !d.is_empty()) {
        return Ok(PathBuf::from(dir));
    }
    let models = rein_models::ModelCache::from_env()?;
    models
        .dir()
        .parent()
        .map(|p| p.join("runs"))
        .context("no directory for run records; set REIN_RUNS_DIR")
}

/// The id of the run whose trace is `trace`.
pub fn run_id(trace: &Path) -> String {
    trace
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|| "run".to_string())
}

/// Starts recording the workspace `root` for the run `id`; a record that cannot be
/// started is a warning (the run goes on without undo), never an error of the run.
pub fn start_record(root: &Path, id: &str) -> Option<(RunRecorder, PathBuf)> {
    let dir = match runs_dir() {
        Ok(runs) => {
            remove_abandoned(&runs);
            runs.join(id)
        }
        Err(error) => {
            tracing::warn!("no undo record for this run: {error:#}");
            return None;
        }
    };
    match RunRecorder::start(root, &dir) {
        Ok(recorder) => Some((recorder, dir)),
        Err(error) => {
            tracing::warn!("no undo record for this run: {error}");
            let _ = std::fs::remove_dir_all(&dir);
            None
        }
    }
}

/// Records kept; older ones are removed when a run starts.
const KEPT_RECORDS: usize = 100;

/// Removes what no undo will need: a record without its `record.json` a day after it was
/// started (its run was killed), and records beyond the newest [`KEPT_RECORDS`].
fn remove_abandoned(runs: &Path) {
    const ABANDONED: std::time::Duration = std::time::Duration::from_secs(24 * 3600);
    let Ok(entries) = std::fs::read_dir(runs) else {
        return;
    };
    let mut complete = Vec::new();
    for entry in entries.flatten() {
        let modified = entry.metadata().and_then(|m| m.modified()).ok();
        if entry.path().join("record.json").exists() {
            complete.push((modified, entry.path()));
            continue;
        }
        let old = modified
            .and_then(|t| t.elapsed().ok())
            .is_some_and(|age| age > ABANDONED);
        if old {
            let _ = std::fs::remove_dir_all(entry.path());
        }
    }
    complete.sort_by_key(|entry| std::cmp::Reverse(entry.0));
    for (_, path) in complete.into_iter().skip(KEPT_RECORDS) {
        let _ = std::fs::remove_dir_all(path);
    }
}

/// Ends the record: the files the run changed, or `None` when it changed none (then no
/// record is kept).
pub fn finish_record(recorder: RunRecorder, dir: &Path) -> Option<RunRecord> {
    match recorder.finish() {
        Ok(record) if !record.changes.is_empty() => Some(record),
        Ok(_) => {
            let _ = std::fs::remove_dir_all(dir);
            None
        }
        Err(error) => {
            tracing::warn!("the undo record of this run is incomplete: {error}");
            None
        }
    }
}

/// Runs `rein undo`.
pub fn run(args: UndoArgs) -> anyhow::Result<()> {
    let runs = runs_dir()?;
    if args.list && args.json {
        let runs: Vec<serde_json::Value> = undoable(&runs)
            .into_iter()
            .map(|(id, record)| {
                serde_json::json!({
                    "run": id,
                    "workspace": record.workspace.display().to_string(),
                    "files": record.changes.len(),
                })
            })
            .collect();
        println!("{}", serde_json::json!({ "runs": runs }));
        return Ok(());
    }
    if args.list {
        for (id, record) in undoable(&runs) {
            println!(
                "{id}  {} file(s) in {}",
                record.changes.len(),
                record.workspace.display()
            );
        }
        return Ok(());
    }
    let id = match &args.run {
        Some(run) => run_id(Path::new(run)),
        None => undoable(&runs)
            .into_iter()
            .next()
            .map(|(id, _)| id)
            .context(
                "no run left to undo (`rein run` keeps a record of each run that changes files)",
            )?,
    };
    let dir = runs.join(&id);
    if !dir.join("record.json").is_file() {
        anyhow::bail!(
            "no record of run {id} in {} (`rein undo --list` shows the runs that can be undone)",
            runs.display()
        );
    }
    let record = RunRecord::read(&dir)?;
    if !args.json {
        println!("undoing run {id} in {}", record.workspace.display());
    }
    let report = rein_tools::undo(&dir)?;
    if args.json {
        let left: Vec<serde_json::Value> = report
            .refused
            .iter()
            .map(|(path, why)| serde_json::json!({"path": path, "why": why}))
            .collect();
        println!(
            "{}",
            serde_json::json!({
                "run": id,
                "workspace": record.workspace.display().to_string(),
                "restored": report.restored,
                "removed": report.removed,
                "left": left,
            })
        );
    }
    for path in report.restored.iter().filter(|_| !args.json) {
        println!("restored {path}");
    }
    for path in report.removed.iter().filter(|_| !args.json) {
        println!("removed  {path}");
    }
    for (path, why) in report.refused.iter().filter(|_| !args.json) {
        println!("left     {path}: {why}");
    }
    if !report.refused.is_empty() {
        anyhow::bail!(
            "{} file(s) were left as they are; the rest is undone",
            report.refused.len()
        );
    }
    Ok(())
}

/// The runs with a record not yet undone, newest first (ids sort by their start time).
fn undoable(runs: &Path) -> Vec<(String, RunRecord)> {
    let Ok(entries) = std::fs::read_dir(runs) else {
        return Vec::new();
    };
    let mut found: Vec<(std::time::SystemTime, String, RunRecord)> = entries
        .flatten()
        .filter_map(|entry| {
            let record = RunRecord::read(&entry.path()).ok()?;
            let written = entry
                .path()
                .join("record.json")
                .metadata()
                .and_then(|m| m.modified())
                .ok()?;
            (!record.undone).then(|| {
                (
                    written,
                    entry.file_name().to_string_lossy().into_owned(),
                    record,
                )
            })
        })
        .collect();
    found.sort_by_key(|entry| std::cmp::Reverse(entry.0));
    found
        .into_iter()
        .map(|(_, id, record)| (id, record))
        .collect()
}
