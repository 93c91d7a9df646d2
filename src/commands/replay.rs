//! `rein replay`: a run's JSONL trace, printed readably.

use std::path::PathBuf;

use clap::Args;

/// Arguments of `rein replay`.
#[derive(Args)]
pub struct ReplayArgs {
    /// The trace file (`rein run` prints its path).
    pub trace: PathBuf,
}

/// Runs `rein replay`.
pub fn run(args: ReplayArgs) -> anyhow::Result<()> {
    for event in rein_protocol::read_trace(&args.trace)? {
        println!("{}", event.render());
    }
    Ok(())
}
