//! `rein run -i`: an agent session at the terminal. The user gives a task, the agent
//! works on it (a line per call as it runs, a spinner while the model thinks, what
//! each change did), answers, and the user follows up in the same workspace: the
//! conversation — and so the model's cached prefix — is kept, so a follow-up evaluates
//! only its new tokens. `/undo` puts back what the last task changed; Ctrl-C stops the
//! task under way and keeps the session; Ctrl-D or `/bye` leaves.

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use rein_agent::Agent;
use rein_engine::Backend;
use rein_protocol::{
    recorded_history, EventSink, Message, RunEvent, RunResult, Sinks, TraceWriter,
};
use rein_remote::RemoteBackend;
use rein_tools::{Registry, Workspace};
use rustyline::error::ReadlineError;
use rustyline::DefaultEditor;
use tokio::runtime::Runtime;

use super::run::{RunArgs, Servers};
use super::undo::{finish_record, run_id, start_record};

/// What the session shows before each task.
const PROMPT: &str = "task> ";

const HELP: &str = "Type a task, or a follow-up to the last one. Commands:
  /undo   put back the files the last task changed
  /reset  start a new conversation (the workspace stays as it is)
  /help   this list
  /bye    leave (or Ctrl-D); Ctrl-C stops the task under way";

/// Runs the session until Ctrl-D or `/bye`, its tasks recorded in `trace`.
pub fn run(
    args: &RunArgs,
    workspace: Workspace,
    config: rein_agent::RunConfig,
    (trace, trace_path): (TraceWriter, &Path),
    servers: Servers,
) -> anyhow::Result<()> {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()?;
    let session = Session {
        args,
        trace,
        id: run_id(trace_path),
    };
    let result = match args.backend.as_str() {
        "local" => {
            let (_engine, backend) = runtime.block_on(super::run::local_backend(args))?;
            session.run(&runtime, backend, workspace, config, servers)
        }
        "openai" => {
            let backend = RemoteBackend::new(super::run::remote_settings(args)?)?;
            session.run(&runtime, backend, workspace, config, servers)
        }
        other => Err(anyhow::anyhow!(
            "--backend must be local or openai, got `{other}`"
        )),
    };
    runtime.shutdown_background();
    result
}

/// A session's settings and trace.
struct Session<'a> {
    args: &'a RunArgs,
    trace: TraceWriter,
    /// The session's id; each task's undo record is `ID-N`.
    id: String,
}

impl Session<'_> {
    fn run<B: Backend>(
        mut self,
        runtime: &Runtime,
        backend: B,
        workspace: Workspace,
        config: rein_agent::RunConfig,
        (servers, disclosure, context_tokens): Servers,
    ) -> anyhow::Result<()> {
        let root = workspace.root().to_path_buf();
        let hub = runtime.block_on(super::mcp::start(servers, &root, &mut self.trace));
        let mut registry = Registry::builtin();
        hub.extend_for(&mut registry, disclosure, context_tokens);
        let mut agent = Agent::new(backend, workspace, &registry, config)?;
        let spinner = spinner();
        agent.approve_with(
            self.args.approve,
            Arc::new(super::approve::TerminalApprover::new(Some(spinner.clone()))),
        );
        let mut editor = DefaultEditor::new()?;
        let mut conversation: Option<Vec<Message>> = None;
        let mut undoable: Option<String> = None;
        let mut first = self.args.task.clone();
        let mut count = 0u32;
        println!(
            "rein run -i in {} (approve: {}). /help lists the commands; Ctrl-D leaves.",
            root.display(),
            self.args.approve.as_str()
        );
        loop {
            let line = match first.take() {
                Some(task) => task,
                None => match editor.readline(PROMPT) {
                    Ok(line) => line,
                    Err(ReadlineError::Interrupted) => {
                        println!("(Ctrl-D or /bye leaves)");
                        continue;
                    }
                    Err(ReadlineError::Eof) => break,
                    Err(error) => return Err(error.into()),
                },
            };
            let task = line.trim();
            match task {
                "" => continue,
                "/bye" | "/exit" | "/quit" => break,
                "/help" => {
                    println!("{HELP}");
                    continue;
                }
                "/reset" => {
                    conversation = None;
                    println!("(a new conversation; the files are as they are)");
                    continue;
                }
                "/undo" => {
                    undo(undoable.take());
                    continue;
                }
                command if command.starts_with('/') => {
                    println!("unknown command {command}; /help lists them");
                    continue;
                }
                _ => {}
            }
            let _ = editor.add_history_entry(task);
            count += 1;
            let record_id = format!("{}-{count}", self.id);
            let record = match self.args.no_undo {
                true => None,
                false => start_record(&root, &record_id),
            };
            let (stop, stopped) = tokio::sync::watch::channel(false);
            agent.stop_when(stopped);
            let listener = runtime.spawn(async move {
                if tokio::signal::ctrl_c().await.is_ok() {
                    let _ = stop.send(true);
                }
            });
            spinner.reset();
            spinner.set_draw_target(ProgressDrawTarget::stderr());
            spinner.enable_steady_tick(Duration::from_millis(120));
            let mut printer = SessionPrinter {
                spinner: spinner.clone(),
            };
            let mut recorded = Recorded::default();
            let result = {
                let mut sinks = Sinks::new()
                    .with(&mut self.trace)
                    .with(&mut printer)
                    .with(&mut recorded);
                match conversation.take() {
                    None => runtime.block_on(agent.run_with(task, &mut sinks)),
                    Some(mut history) => {
                        history.push(Message::user(task));
                        runtime.block_on(agent.follow_up(task, history, &mut sinks))
                    }
                }
            };
            listener.abort();
            spinner.disable_steady_tick();
            spinner.finish_and_clear();
            spinner.set_draw_target(ProgressDrawTarget::hidden());
            show(&result);
            conversation = Some(recorded.conversation(&result));
            let changed = record.and_then(|(recorder, dir)| finish_record(recorder, &dir));
            if let Some(record) = changed {
                println!(
                    "[{} file(s) changed; /undo puts them back]",
                    record.changes.len()
                );
                undoable = Some(record_id);
            }
        }
        runtime.block_on(hub.shutdown_reported(&mut self.trace));
        Ok(())
    }
}

/// A spinner, drawn on standard error (when it is a terminal) while a task runs.
fn spinner() -> ProgressBar {
    let spinner = ProgressBar::with_draw_target(None, ProgressDrawTarget::hidden());
    if let Ok(style) = ProgressStyle::with_template("{spinner} {msg}") {
        spinner.set_style(style);
    }
    spinner.set_message("thinking");
    spinner
}

/// The answer of a task and what it cost.
fn show(result: &RunResult) {
    if let Some(answer) = &result.answer {
        println!("{answer}");
    }
    println!(
        "[{}: {} turns, {} tool calls, {:.1} s; prompt {} tokens, {} of them reused]",
        super::run::stop_text(result),
        result.turns,
        result.tool_calls,
        result.wall_ms as f64 / 1000.0,
        result.prompt_tokens,
        result.reused_tokens,
    );
}

/// Puts back the files of the task recorded as `id`.
fn undo(id: Option<String>) {
    let Some(id) = id else {
        println!("(nothing to undo: no task of this session has changed a file since)");
        return;
    };
    let dir = match super::undo::runs_dir() {
        Ok(runs) => runs.join(&id),
        Err(error) => {
            println!("cannot undo: {error:#}");
            return;
        }
    };
    match rein_tools::undo(&dir) {
        Ok(report) => {
            for path in &report.restored {
                println!("restored {path}");
            }
            for path in &report.removed {
                println!("removed  {path}");
            }
            for (path, why) in &report.refused {
                println!("left     {path}: {why}");
            }
        }
        Err(error) => println!("cannot undo: {error}"),
    }
}

/// One line per call as it runs (with the first line of what a change did), and each
/// recovery, printed above the spinner.
struct SessionPrinter {
    spinner: ProgressBar,
}

impl EventSink for SessionPrinter {
    fn emit(&mut self, event: &RunEvent) {
        let line = match event {
            RunEvent::ToolResult {
                name,
                arguments,
                ok,
                output,
                ..
            } => {
                let status = if *ok { "ok" } else { "failed" };
                let what = output.lines().next().unwrap_or_default();
                format!(
                    "  {name} {} {status}: {}",
                    short(&arguments.to_string(), 80),
                    short(what, 100)
                )
            }
            RunEvent::Recovery { class, .. } => format!("  ! {class}"),
            _ => return,
        };
        self.spinner.suspend(|| eprintln!("{line}"));
    }
}

/// `text` cut to `max` characters.
fn short(text: &str, max: usize) -> String {
    match text.char_indices().nth(max) {
        Some((at, _)) => format!("{}…", &text[..at]),
        None => text.to_string(),
    }
}

/// The conversation a task's `history` events recorded.
#[derive(Default)]
struct Recorded {
    events: Vec<RunEvent>,
}

impl EventSink for Recorded {
    fn emit(&mut self, event: &RunEvent) {
        if matches!(event, RunEvent::History { .. }) {
            self.events.push(event.clone());
        }
    }
}

impl Recorded {
    /// The conversation after `result`: as the last request saw it, and the answer.
    fn conversation(&self, result: &RunResult) -> Vec<Message> {
        let mut history = recorded_history(&self.events);
        if let Some(answer) = &result.answer {
            history.push(Message::assistant(answer.clone()));
        }
        history
    }
}
