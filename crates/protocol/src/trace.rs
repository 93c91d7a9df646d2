//! Traces: every event of a run as one JSON object per line, written as it happens
//! (a crashed run still leaves what it did), and read back by `rein replay` and the
//! eval graders.

use std::fs::File;
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::time::Instant;

use serde_json::Value;

use crate::event::RunEvent;
use crate::sink::EventSink;

/// Why a trace could not be written or read.
#[derive(Debug, thiserror::Error)]
pub enum TraceError {
    /// A file problem.
    #[error("trace {path}: {source}")]
    Io {
        /// The trace file.
        path: PathBuf,
        /// The error.
        source: std::io::Error,
    },
    /// A line that is not a trace event.
    #[error("trace {path}, line {line}: {source}")]
    Parse {
        /// The trace file.
        path: PathBuf,
        /// The line (from 1).
        line: usize,
        /// The error.
        source: serde_json::Error,
    },
}

/// Appends events to a JSONL file, each stamped with the milliseconds since the run
/// started.
#[derive(Debug)]
pub struct TraceWriter {
    file: File,
    path: PathBuf,
    started: Instant,
}

impl TraceWriter {
    /// Creates `path` (and its directory).
    pub fn create(path: impl Into<PathBuf>) -> Result<Self, TraceError> {
        let path = path.into();
        let io = |source| TraceError::Io {
            path: path.clone(),
            source,
        };
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir).map_err(io)?;
        }
        let file = File::create(&path).map_err(io)?;
        Ok(Self {
            file,
            path,
            started: Instant::now(),
        })
    }

    /// The file's path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Writes one event. A failed write is logged, not fatal: the run matters more.
    pub fn write(&mut self, event: &RunEvent) {
        let mut line = match serde_json::to_value(event) {
            Ok(value) => value,
            Err(e) => {
                tracing::warn!("cannot encode a trace event: {e}");
                return;
            }
        };
        line["t_ms"] = Value::from(self.started.elapsed().as_millis() as u64);
        if let Err(e) = writeln!(self.file, "{line}") {
            tracing::warn!("cannot write trace {}: {e}", self.path.display());
        }
    }
}

impl EventSink for TraceWriter {
    fn emit(&mut self, event: &RunEvent) {
        self.write(event);
    }

    fn record_path(&self) -> Option<String> {
        Some(self.path.display().to_string())
    }
}

/// Reads every event of a trace file.
pub fn read_trace(path: &Path) -> Result<Vec<RunEvent>, TraceError> {
    let file = File::open(path).map_err(|source| TraceError::Io {
        path: path.to_path_buf(),
        source,
    })?;
    let mut events = Vec::new();
    for (index, line) in BufReader::new(file).lines().enumerate() {
        let line = line.map_err(|source| TraceError::Io {
            path: path.to_path_buf(),
            source,
        })?;
        if line.trim().is_empty() {
            continue;
        }
        let event = serde_json::from_str(&line).map_err(|source| TraceError::Parse {
            path: path.to_path_buf(),
            line: index + 1,
            source,
        })?;
        events.push(event);
    }
    Ok(events)
}
