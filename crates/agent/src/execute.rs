//! Running a reply's calls: scheduled into groups (a group's calls run at once), each
//! under the tool timeout; a call that failed before is answered with the earlier
//! error instead of running again; source edits are tracked for the verification
//! guard; every result is reported as an event.

use std::collections::{BTreeSet, HashMap};
use std::sync::Arc;
use std::time::{Duration, Instant};

use rein_protocol::{EventSink, RunEvent};
use rein_tools::{Access, Registry, Tool, ToolOutcome, Workspace};
use serde_json::Value;

use crate::named_files::{unopened_note, unopened_paths};
use crate::observation::json_as_lines;
use crate::prompt::wrap_untrusted;
use crate::recovery;
use crate::rules::{fired, Rule, RuleSwitches};
use crate::schedule;
use crate::validate::ReadyCall;

/// A tool's result as the loop keeps it.
#[derive(Debug, Clone)]
pub(crate) struct CallOutcome {
    /// It succeeded.
    pub ok: bool,
    /// It ran out of time.
    pub timed_out: bool,
    /// Not run: the same call failed before.
    pub repeated: bool,
    /// Not run: the same call succeeded before and nothing has changed since.
    pub repeated_success: bool,
    /// What the model sees.
    pub text: String,
    /// It worked and found nothing at all.
    pub found_nothing: bool,
    /// Not run: an argument was an identifier nothing showed (see `guesses`).
    pub guessed: bool,
    /// Not run until a step the run has not taken yet (a write over a file before
    /// its read): not remembered as a failure, so the same call runs once the step
    /// is taken.
    pub until_step: bool,
    /// Tools this result makes callable from the next turn (`tool_search`).
    pub reveals: Vec<String>,
}

impl CallOutcome {
    /// A call that failed with `text` as its result.
    pub(crate) fn failed(text: String) -> Self {
        Self {
            ok: false,
            timed_out: false,
            repeated: false,
            repeated_success: false,
            text,
            found_nothing: false,
            guessed: false,
            until_step: false,
            reveals: Vec::new(),
        }
    }

    /// A call not run until a step the run has not taken, with `note` as its result.
    pub(crate) fn until_step(note: String) -> Self {
        Self {
            until_step: true,
            ..Self::failed(note)
        }
    }

    /// A call not run for a guessed identifier, with `note` as its result.
    pub(crate) fn guessed(note: String) -> Self {
        Self {
            guessed: true,
            ..Self::failed(note)
        }
    }

    fn from_tool(tool: &dyn Tool, outcome: ToolOutcome, json_lines: bool) -> Self {
        let text = match json_lines.then(|| json_as_lines(&outcome.text)).flatten() {
            Some(lines) => lines,
            None => outcome.text,
        };
        let text = if tool.untrusted_output() {
            wrap_untrusted(&text)
        } else {
            text
        };
        Self {
            ok: outcome.ok,
            timed_out: outcome.timed_out,
            repeated: false,
            repeated_success: false,
            text,
            found_nothing: outcome.found_nothing,
            guessed: false,
            until_step: false,
            reveals: outcome.reveals,
        }
    }
}

/// The harness's own words for a command that reached nothing: a shell result whose
/// every output line says one of these holds no content to use.
const REACHED_NOTHING: [&str; 4] = [
    "Permission denied",
    "Operation not permitted",
    "No such file or directory",
    "not found",
];

/// Whether a successful result holds something to use: not a search that found
/// nothing, and not a shell command whose output is only errors or empty (`cat` of a
/// file the sandbox denies, piped on, exits 0).
pub(crate) fn holds_content(result: &str, found_nothing: bool) -> bool {
    if found_nothing {
        return false;
    }
    let text = crate::prompt::result_excerpt(result, usize::MAX);
    let Some((_, output)) = text.split_once("\noutput:") else {
        return true;
    };
    output
        .lines()
        .map(str::trim)
        .filter(|line| !line.is_empty() && *line != "(none)" && !line.starts_with('['))
        .any(|line| !REACHED_NOTHING.iter().any(|error| line.contains(error)))
}

/// What execution remembers across turns.
#[derive(Debug, Default)]
pub(crate) struct Memory {
    /// How often each rule fired (see `rules`).
    pub fired: crate::rules::Fired,
    /// Calls that failed, by [`ReadyCall::key`], with their error and the
    /// [`Memory::changes`] count when they ran.
    pub failed_calls: HashMap<String, (String, u64)>,
    /// The keys of [`Memory::failed_calls`] in the order they first failed.
    pub failed_order: Vec<String>,
    /// Calls that succeeded, by [`ReadyCall::key`], with their result and the
    /// [`Memory::changes`] count when they ran.
    pub succeeded_calls: HashMap<String, (String, u64)>,
    /// The keys of [`Memory::succeeded_calls`] in the order they first succeeded,
    /// each with whether its result found nothing.
    pub succeeded_order: Vec<(String, bool)>,
    /// The files `write_file` wrote in this run (as the call named them) with their
    /// content, in order.
    pub written_files: Vec<(String, String)>,
    /// Calls run so far that may have changed something (writes, the shell).
    pub changes: u64,
    /// Calls that may have changed something and succeeded.
    pub changes_made: u64,
    /// The task asks for a change in the workspace (`full`): an answer before any
    /// call that may change something succeeded is held once.
    pub expects_change: bool,
    /// Source files edited since the last test or build.
    pub unverified_edits: BTreeSet<String>,
    /// The file the task asks for, when it did not exist at the start (`full`): the
    /// output-file guard holds answers without it, and a failed look at it says that
    /// it is to be written.
    pub output_file: Option<String>,
    /// The task's words to look for when a model looks for the missing output file
    /// (see `task_words`).
    pub search_words: Vec<String>,
    /// The lines that note showed for one of those words.
    pub word_lines: Vec<String>,
    /// The task asks for a new file that `output_file` could not name (`full`): an
    /// answer before any call wrote anything is held once.
    pub expects_write: bool,
    /// The existing file the task asks to change, with a hash of its bytes at the
    /// start (`full`): an answer while it is unchanged is held once.
    pub file_to_change: Option<(String, u64)>,
    /// The workspace paths the task names that exist at the start (`full`): an answer
    /// or a call to no tool before any call ran is sent to the first of them.
    pub task_paths: Vec<crate::task_paths::TaskPath>,
    /// The files (resolved) a successful call of this run read, searched, edited or
    /// wrote: a write over any other existing file is not run (`full`).
    pub seen_files: std::collections::HashSet<std::path::PathBuf>,
    /// A call for another item than the task's superlative picks was not run once
    /// (see `extreme_pick`).
    pub pick_refused: bool,
    /// Tools whose calls were deferred for an earlier result and have not run since.
    pub planned: Vec<String>,
    /// Steps with calls since the latest step that deferred some.
    pub steps_since_plan: u32,
    /// Values the task names, shown where a read missed them (see `task_needles`).
    pub task_needles: Vec<String>,
    /// The command the task says to run, until a call ran it (see `task_command`).
    pub task_command: Option<String>,
}

/// Runs calls for one agent: its tools in its workspace.
pub(crate) struct Executor {
    /// The tools.
    pub registry: Registry,
    /// Where they run.
    pub workspace: Arc<Workspace>,
    /// The longest any non-shell tool may run.
    pub tool_timeout: Duration,
    /// A call that succeeded is not run again while nothing has changed (`full`).
    pub skips_repeats: bool,
    /// JSON results are shown as `key: value` lines.
    pub json_lines: bool,
    /// The loop's rules that may add notes to results.
    pub rules: RuleSwitches,
}

impl Memory {
    /// Whether some successful result holds content the run could use (see
    /// [`holds_content`]).
    pub(crate) fn results_in_hand(&self) -> bool {
        self.succeeded_order.iter().any(|(key, found_nothing)| {
            self.succeeded_calls
                .get(key)
                .is_some_and(|(result, _)| holds_content(result, *found_nothing))
        })
    }

    /// Whether the task asks for a file to be written or changed.
    pub(crate) fn task_asks_for_a_file(&self) -> bool {
        self.output_file.is_some()
            || self.expects_write
            || self.expects_change
            || self.file_to_change.is_some()
    }
}

impl Executor {
    /// Whether `call` is a lookup: it reads, and nothing of the workspace (a tool
    /// that answers from elsewhere: a price, the weather, a user record).
    pub(crate) fn is_lookup(&self, call: &ReadyCall) -> bool {
        self.registry.get(&call.name).is_some_and(|tool| {
            matches!(tool.access(&call.arguments, &self.workspace), Access::Read(paths) if paths.is_empty())
        })
    }

    /// Runs the calls in scheduled groups; a group's calls run at once.
    pub(crate) async fn run(
        &self,
        calls: &[ReadyCall],
        turn: u32,
        memory: &mut Memory,
        events: &mut dyn EventSink,
    ) -> Vec<CallOutcome> {
        let accesses: Vec<Access> = calls
            .iter()
            .map(|c| match self.registry.get(&c.name) {
                Some(tool) => tool.access(&c.arguments, &self.workspace),
                None => Access::Read(Vec::new()),
            })
            .collect();
        let mut outcomes: Vec<Option<CallOutcome>> = vec![None; calls.len()];
        for (group_index, group) in schedule::plan(&accesses).into_iter().enumerate() {
            let mut running = Vec::with_capacity(group.len());
            for index in group {
                let started = Instant::now();
                let (start, offered) = self.start(&calls[index], memory);
                if let Some(offered) = offered {
                    fired(
                        &mut memory.fired,
                        events,
                        turn,
                        Rule::UnopenedFiles,
                        &offered,
                    );
                }
                running.push((index, started, start));
            }
            for (index, started, run) in running {
                let call = &calls[index];
                let outcome = match run {
                    Started::Done(outcome) => outcome,
                    Started::Running(handle) => {
                        let outcome = self.finish(call, handle, memory).await;
                        let before = outcome.text.clone();
                        let outcome = match self.rules.on(Rule::OutputFileLook) {
                            true => self.output_file_note(outcome, call, memory).await,
                            false => outcome,
                        };
                        changed(
                            memory,
                            events,
                            turn,
                            Rule::OutputFileLook,
                            &before,
                            &outcome,
                        );
                        let path = call.arguments.get("path").and_then(Value::as_str);
                        let before = outcome.text.clone();
                        let outcome = match path {
                            Some(path) if self.rules.on(Rule::KeyPath) => {
                                crate::key_paths::with_key_path_note(
                                    outcome,
                                    path,
                                    &memory.seen_files,
                                    &self.workspace,
                                )
                            }
                            _ => outcome,
                        };
                        changed(memory, events, turn, Rule::KeyPath, &before, &outcome);
                        let before = outcome.text.clone();
                        let read = matches!(accesses[index], Access::Read(_));
                        let outcome = match path {
                            Some(path) if read && self.rules.on(Rule::TaskNeedles) => {
                                crate::task_needles::with_needle_lines(
                                    outcome,
                                    path,
                                    &memory.task_needles,
                                    &self.workspace,
                                )
                            }
                            _ => outcome,
                        };
                        changed(memory, events, turn, Rule::TaskNeedles, &before, &outcome);
                        if !matches!(accesses[index], Access::Read(_)) {
                            memory.changes += 1;
                            memory.changes_made += u64::from(outcome.ok);
                        }
                        if outcome.ok {
                            let first = memory
                                .succeeded_calls
                                .insert(call.key(), (outcome.text.clone(), memory.changes))
                                .is_none();
                            if first {
                                memory
                                    .succeeded_order
                                    .push((call.key(), outcome.found_nothing));
                            }
                            if call.name == crate::tool_names::WRITE_TOOL {
                                let argument =
                                    |key: &str| call.arguments.get(key).and_then(Value::as_str);
                                if let (Some(path), Some(content)) =
                                    (argument("path"), argument("content"))
                                {
                                    memory
                                        .written_files
                                        .push((path.to_string(), content.to_string()));
                                }
                            }
                            if let Some(path) =
                                crate::unread_writes::file_seen(call, &self.workspace)
                            {
                                memory.seen_files.insert(path);
                            }
                        }
                        outcome
                    }
                };
                events.emit(&RunEvent::ToolResult {
                    turn,
                    id: call.id.clone(),
                    name: call.name.clone(),
                    arguments: call.arguments.clone(),
                    group: group_index,
                    ok: outcome.ok,
                    timed_out: outcome.timed_out,
                    output: outcome.text.clone(),
                    ms: started.elapsed().as_millis() as u64,
                });
                outcomes[index] = Some(outcome);
            }
        }
        outcomes
            .into_iter()
            .map(|o| o.unwrap_or_else(|| CallOutcome::failed("internal error: not run".into())))
            .collect()
    }

    /// Starts a call on a blocking thread, or answers it at once (a repeated failure,
    /// an unknown tool); with the offer of unread files the answer made, if any.
    fn start(&self, call: &ReadyCall, memory: &Memory) -> (Started, Option<String>) {
        // The same failing call again fails the same way, unless something changed
        // since (the file it could not find was written meanwhile).
        if let Some((previous, changes)) = memory.failed_calls.get(&call.key()) {
            if *changes == memory.changes {
                let outcome = CallOutcome {
                    repeated: true,
                    ..CallOutcome::failed(recovery::repetition_note(previous))
                };
                return (Started::Done(outcome), None);
            }
        }
        if let Some((previous, changes)) = memory.succeeded_calls.get(&call.key()) {
            if self.skips_repeats && *changes == memory.changes {
                let mut note = recovery::repeated_success_note(previous);
                let mut offered = None;
                if self.rules.on(Rule::UnopenedFiles) {
                    let named = unopened_paths(previous, call, &self.workspace, memory);
                    let offer = unopened_note(&named);
                    note.push_str(&offer);
                    offered = (!offer.is_empty()).then(|| offer.trim().to_string());
                }
                let outcome = CallOutcome {
                    ok: true,
                    repeated_success: true,
                    ..CallOutcome::failed(note)
                };
                return (Started::Done(outcome), offered);
            }
        }
        let Some(tool) = self.registry.get(&call.name).cloned() else {
            let names = self.registry.names().join(", ");
            let outcome = CallOutcome::failed(format!(
                "unknown tool `{}`; the tools are: {names}",
                call.name
            ));
            return (Started::Done(outcome), None);
        };
        let workspace = Arc::clone(&self.workspace);
        let arguments = call.arguments.clone();
        let running = tokio::task::spawn_blocking(move || {
            let outcome = tool.call(&arguments, &workspace);
            (tool, outcome)
        });
        (Started::Running(running), None)
    }

    /// Waits for a running call, within the tool timeout.
    async fn finish(&self, call: &ReadyCall, handle: Running, memory: &mut Memory) -> CallOutcome {
        match tokio::time::timeout(self.tool_timeout, handle).await {
            Ok(Ok((tool, outcome))) => {
                self.observe_effects(memory, &*tool, &call.arguments, &outcome);
                CallOutcome::from_tool(&*tool, outcome, self.json_lines)
            }
            Ok(Err(join_error)) => CallOutcome::failed(format!("the tool crashed: {join_error}")),
            Err(_) => CallOutcome {
                timed_out: true,
                ..CallOutcome::failed(format!(
                    "`{}` did not finish within {} s; try a smaller request",
                    call.name,
                    self.tool_timeout.as_secs()
                ))
            },
        }
    }

    /// Tracks source edits not yet verified, for the verification guard.
    fn observe_effects(
        &self,
        memory: &mut Memory,
        tool: &dyn Tool,
        arguments: &Value,
        outcome: &ToolOutcome,
    ) {
        if outcome.ok && tool.is_source_edit() {
            for file in &outcome.changed_files {
                if is_source_file(file) {
                    memory
                        .unverified_edits
                        .insert(self.workspace.relative(file));
                }
            }
        }
        if !outcome.timed_out && tool.is_verification(arguments) {
            memory.unverified_edits.clear();
        }
    }
}

type Running = tokio::task::JoinHandle<(Arc<dyn Tool>, ToolOutcome)>;

/// A call started, or answered without running.
enum Started {
    Done(CallOutcome),
    Running(Running),
}

/// Records `rule` as fired when it changed a result's text (`before` is the text it
/// had).
fn changed(
    memory: &mut Memory,
    events: &mut dyn EventSink,
    turn: u32,
    rule: Rule,
    before: &str,
    outcome: &CallOutcome,
) {
    if outcome.text != before {
        let added = outcome.text.strip_prefix(before).unwrap_or(&outcome.text);
        fired(&mut memory.fired, events, turn, rule, added.trim());
    }
}

/// Whether an edited file is program source (so a build or test should follow).
fn is_source_file(path: &std::path::Path) -> bool {
    const CODE: [&str; 24] = [
        "rs", "py", "js", "mjs", "cjs", "ts", "tsx", "jsx", "go", "c", "h", "cc", "cpp", "hpp",
        "java", "kt", "rb", "php", "cs", "swift", "scala", "sh", "lua", "zig",
    ];
    let by_name = path.file_name().and_then(|n| n.to_str()).is_some_and(|n| {
        matches!(
            n,
            "Makefile"
                | "CMakeLists.txt"
                | "Cargo.toml"
                | "package.json"
                | "pyproject.toml"
                | "go.mod"
        )
    });
    by_name
        || path
            .extension()
            .and_then(|e| e.to_str())
            .is_some_and(|e| CODE.contains(&e))
}

#[cfg(test)]
mod tests {
    use super::holds_content;
    use crate::prompt::wrap_untrusted;

    #[test]
    fn a_shell_output_of_only_errors_holds_nothing_to_use() {
        let shell =
            |output: &str| wrap_untrusted(&format!("exit code: 0\ncwd: .\noutput:\n{output}"));
        assert!(!holds_content(
            &shell("cat: /srv/a.md: Permission denied"),
            false
        ));
        assert!(!holds_content(&shell("/bin/sh: 2: fs:: not found"), false));
        assert!(!holds_content(
            &wrap_untrusted("exit code: 0\ncwd: .\noutput: (none)"),
            false
        ));
        assert!(holds_content(&shell("version 0.4.2"), false));
        assert!(holds_content(
            &shell("grep: x: No such file or directory\n0.4.2"),
            false
        ));
        assert!(holds_content("   1| ## 0.4.2", false));
        assert!(!holds_content("no matches for `x`", true));
    }
}
