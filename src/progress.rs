//! A progress bar on stderr (indicatif) for model pulls; hidden when stderr is not a
//! terminal.

use indicatif::{ProgressBar, ProgressStyle};
use rein_models::{ProgressUnit, PullProgress};

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
