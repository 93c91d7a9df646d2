//! The `rein` command line: run an agent on a task, chat with a local model, replay
//! traces, and manage models.

mod commands;
mod config;
mod logging;
mod progress;

use std::process::ExitCode;

use clap::{CommandFactory, FromArgMatches, Parser, Subcommand};

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
    /// Where a quantization bends the model's decisions: the turns a model recorded in
    /// its traces, read by it and by another quantization of it; KL divergence and
    /// top-1 agreement at the tokens that decide a call, per decision kind.
    QuantDiff(commands::quant_diff::QuantDiffArgs),
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
    /// The settings of a command as rein.toml files, the environment and the built-in
    /// defaults resolve them.
    #[command(subcommand)]
    Config(ConfigCommand),
    /// Print a shell completion script (e.g. `rein completions bash > ~/.local/share/bash-completion/completions/rein`).
    Completions {
        /// The shell.
        shell: clap_complete::Shell,
    },
}

/// `rein config` subcommands.
#[derive(Subcommand)]
enum ConfigCommand {
    /// Each flag of a command with its value and where the value comes from (a
    /// rein.toml file and table, an environment variable, or the default); flags given
    /// on a command line override all of these.
    Show {
        /// The command, e.g. `run`, `serve`, `bench reuse`.
        #[arg(default_value = "run", num_args = 1..)]
        command: Vec<String>,
        /// One JSON object: {"files": [{"path", "read"}], "settings": [{"flag", "value",
        /// "source"}]}.
        #[arg(long)]
        json: bool,
    },
}

fn main() -> ExitCode {
    let files = config::files(commands::mcp::user_config_dir().as_deref());
    let mut definition = Cli::command();
    let applied = match config::apply(&mut definition, &files) {
        Ok(applied) => applied,
        Err(e) => {
            eprintln!("error: {e:#}");
            return ExitCode::FAILURE;
        }
    };
    let cli = match Cli::from_arg_matches(&definition.get_matches_mut()) {
        Ok(cli) => cli,
        Err(e) => e.exit(),
    };
    logging::init(cli.verbose);
    let result = match cli.command {
        Command::Chat(args) => commands::chat::run(args),
        Command::Run(args) => commands::run::run(args),
        Command::Serve(args) => commands::serve::run(args),
        Command::Eval(args) => commands::eval::run(args),
        Command::Replay(args) => commands::replay::run(args),
        Command::Undo(args) => commands::undo::run(args),
        Command::QuantDiff(args) => commands::quant_diff::run(args),
        Command::Bench(command) => commands::bench::run(command),
        Command::Models(command) => commands::models::run(command),
        Command::Cache(command) => commands::prompt_cache::run(command),
        Command::Config(ConfigCommand::Show { command, json }) => {
            show_config(&definition, &command.join(" "), &files, &applied, json)
        }
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

/// Prints `rein config show`.
fn show_config(
    definition: &clap::Command,
    command: &str,
    files: &[std::path::PathBuf],
    applied: &config::Applied,
    json: bool,
) -> anyhow::Result<()> {
    let settings = config::show(definition, command, applied)?;
    if json {
        let files: Vec<serde_json::Value> = files
            .iter()
            .map(|f| serde_json::json!({"path": f.display().to_string(), "read": f.is_file()}))
            .collect();
        println!(
            "{}",
            serde_json::json!({"files": files, "settings": settings})
        );
        return Ok(());
    }
    for file in files {
        let state = if file.is_file() { "read" } else { "none" };
        println!("# {} ({state})", file.display());
    }
    for setting in settings {
        println!(
            "{:<22} {:<24} {}",
            setting.flag, setting.value, setting.source
        );
    }
    Ok(())
}
