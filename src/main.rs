//! The `rein` command line: run an agent on a task, chat with a local model, replay
//! traces, and manage models.

mod commands;
mod logging;
mod progress;

use std::process::ExitCode;

use clap::{CommandFactory, Parser, Subcommand};

/// rein: an agent harness with the language model inside the process.
#[derive(Parser)]
#[command(name = "rein", version = concat!(env!("CARGO_PKG_VERSION"), " (", env!("REIN_GIT_HASH"), ")"))]
struct Cli {
    /// More log output on stderr (-v info, -vv debug, -vvv trace); RUST_LOG overrides.
    #[arg(short, long, action = clap::ArgAction::Count, global = true)]
    verbose: u8,
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Chat with a local model: one prompt (an argument or piped in), or a session at a
    /// terminal; the reply streams to stdout.
    Chat(commands::chat::ChatArgs),
    /// Let an agent work on a task in a workspace with the built-in tools.
    Run(commands::run::RunArgs),
    /// Measure KV reuse and concurrent decoding on a model.
    #[command(subcommand)]
    Bench(commands::bench::BenchCommand),
    /// Serve the model over an OpenAI-compatible HTTP API.
    Serve(commands::serve::ServeArgs),
    /// Run evaluation suites (A/B across profiles, models, KV types, quantizations)
    /// and write results, a report and plots.
    Eval(commands::eval::EvalArgs),
    /// Put a workspace back as it was before a `rein run` (files it created, changed or
    /// deleted); a file changed again since is left alone.
    Undo(commands::undo::UndoArgs),
    /// Print a run's trace readably.
    Replay(commands::replay::ReplayArgs),
    /// List, pull, locate and inspect models.
    #[command(subcommand)]
    Models(commands::models::ModelsCommand),
    /// List or clear the prompt cache on disk (the KV of system prompts and tools).
    #[command(subcommand)]
    Cache(commands::prompt_cache::CacheCommand),
    /// Print a shell completion script (e.g. `rein completions bash > ~/.local/share/bash-completion/completions/rein`).
    Completions {
        /// The shell.
        shell: clap_complete::Shell,
    },
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    logging::init(cli.verbose);
    let result = match cli.command {
        Command::Chat(args) => commands::chat::run(args),
        Command::Run(args) => commands::run::run(args),
        Command::Serve(args) => commands::serve::run(args),
        Command::Eval(args) => commands::eval::run(args),
        Command::Replay(args) => commands::replay::run(args),
        Command::Undo(args) => commands::undo::run(args),
        Command::Bench(command) => commands::bench::run(command),
        Command::Models(command) => commands::models::run(command),
        Command::Cache(command) => commands::prompt_cache::run(command),
        Command::Completions { shell } => {
            clap_complete::generate(shell, &mut Cli::command(), "rein", &mut std::io::stdout());
            Ok(())
        }
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e:#}");
            ExitCode::FAILURE
        }
    }
}
