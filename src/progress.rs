//! Progress on stderr, shown only when stderr is a terminal: a bar (indicatif) for
//! model pulls, and one line per step of an agent run (a sink of the run's events).

use std::io::{IsTerminal, Write};

use indicatif::{ProgressBar, ProgressStyle};
use rein_models::{ProgressUnit, PullProgress};
use rein_protocol::{EventSink, RunEvent};

/// One short line per tool call and recovery of a run.
pub struct StepPrinter {
    shown: bool,
}

impl StepPrinter {
    /// Prints to stderr when it is a terminal; silent otherwise.
    pub fn stderr() -> Self {
        Self {
            shown: std::io::stderr().is_terminal(),
        }
    }
}

impl EventSink for StepPrinter {
    fn emit(&mut self, event: &RunEvent) {
        if !self.shown {
            return;
        }
        let line = match event {
            RunEvent::Turn {
                turn,
                ms,
                completion_tokens,
                ..
            } => {
                format!("turn {turn}: {completion_tokens} tokens in {ms} ms")
            }
            RunEvent::ToolResult { name, ok, ms, .. } => {
                format!("  {name} {} ({ms} ms)", if *ok { "ok" } else { "failed" })
            }
            RunEvent::Recovery { class, detail, .. } => format!("  ! {class}: {detail}"),
            _ => return,
        };
        let _ = writeln!(std::io::stderr(), "{line}");
    }
}

/// Shows pull progress as a bar.
pub struct BarProgress {
    bar: ProgressBar,
}

impl BarProgress {
    /// A bar that is not drawn until the first phase starts.
    pub fn new() -> Self {
        Self {
            bar: ProgressBar::hidden(),
        }
    }
}

impl PullProgress for BarProgress {
    fn phase(&self, message: &str, total: u64, unit: ProgressUnit) {
        let template = match unit {
            ProgressUnit::Bytes => {
                "{msg} [{bar:30}] {bytes}/{total_bytes} {bytes_per_sec} eta {eta}"
            }
            ProgressUnit::Packages => "{msg} [{bar:30}] {pos}/{len}",
        };
        if self.bar.is_hidden() {
            self.bar
                .set_draw_target(indicatif::ProgressDrawTarget::stderr());
        }
        if let Ok(style) = ProgressStyle::with_template(template) {
            self.bar.set_style(style.progress_chars("=> "));
        }
        self.bar.set_length(total);
        self.bar.set_position(0);
        self.bar.set_message(message.to_string());
    }

    fn advance(&self, delta: u64) {
        self.bar.inc(delta);
    }

    fn finish(&self) {
        self.bar.finish_and_clear();
    }
}
