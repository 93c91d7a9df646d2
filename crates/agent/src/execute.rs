//! Running a reply's calls: scheduled into groups (a group's calls run at once), each
//! under the tool timeout; a call that failed before is answered with the earlier
//! error instead of running again; source edits are tracked for the verification
//! guard; every result is reported as an event.

use std::borrow::Cow;
use std::sync::Arc;
use std::time::{Duration, Instant};

use rein_protocol::{EventSink, RunEvent};
use rein_tools::{Access, Registry, Tool, ToolOutcome, Workspace};
use serde_json::Value;

use crate::approval::{preview, refused_note, ApprovalPolicy, ApprovalRequest, Approver, Decision};
use crate::call_outcome::CallOutcome;
use crate::memory::Memory;
use crate::named_files::{unopened_note, unopened_paths};
use crate::observation::json_as_lines;
use crate::recovery;
use crate::result_text::wrap_untrusted;
use crate::rules::{fired, Rule, RuleSwitches};
use crate::schedule;
use crate::validate::ReadyCall;

/// A tool's outcome as the loop keeps it: JSON as lines when `json_lines`, outside
/// text wrapped as untrusted.
fn outcome_of(tool: &dyn Tool, outcome: ToolOutcome, json_lines: bool) -> CallOutcome {
    let text = match json_lines.then(|| json_as_lines(&outcome.text)).flatten() {
        Some(lines) => lines,
        None => outcome.text,
    };
    let text = if tool.untrusted_output() {
        wrap_untrusted(&text)
    } else {
        text
    };
    CallOutcome {
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
    /// Which calls wait for the user, and who is asked (`--approve`).
    pub approval: Option<(ApprovalPolicy, Arc<dyn Approver>)>,
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
        let (calls, decided) = self.approved(calls, &accesses, turn, events);
        for (group_index, group) in schedule::plan(&accesses).into_iter().enumerate() {
            let mut running = Vec::with_capacity(group.len());
            for index in group {
                let started = Instant::now();
                if decided[index] == Some(Decision::Refuse) {
                    let outcome = CallOutcome::failed(refused_note(&calls[index].name));
                    running.push((index, started, Started::Done(outcome)));
                    continue;
                }
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
                let outcome = match &decided[index] {
                    // The model's call is in the conversation as it wrote it: the
                    // result says what ran instead.
                    Some(Decision::Edit(arguments)) => CallOutcome {
                        text: format!(
                            "(The user changed this call before it ran; it ran with the arguments {arguments}.)\n{}",
                            outcome.text
                        ),
                        ..outcome
                    },
                    _ => outcome,
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

    /// `calls` after the user's decisions (`--approve`): each call the policy asks
    /// about is shown, and run as it is, run with the user's arguments (they replace
    /// the call's), or refused; each call's decision, if one was asked for.
    fn approved<'c>(
        &self,
        calls: &'c [ReadyCall],
        accesses: &[Access],
        turn: u32,
        events: &mut dyn EventSink,
    ) -> (Cow<'c, [ReadyCall]>, Vec<Option<Decision>>) {
        let mut decided = vec![None; calls.len()];
        let Some((policy, approver)) = &self.approval else {
            return (Cow::Borrowed(calls), decided);
        };
        let mut calls = calls.to_vec();
        for (index, call) in calls.iter_mut().enumerate() {
            if !policy.asks(&call.name, &accesses[index]) {
                continue;
            }
            let request = ApprovalRequest {
                tool: call.name.clone(),
                arguments: call.arguments.clone(),
                preview: preview(&call.name, &call.arguments, &self.workspace),
            };
            // The user may take a while: other tasks of a multi-threaded runtime go on.
            let decision =
                match tokio::runtime::Handle::try_current().map(|handle| handle.runtime_flavor()) {
                    Ok(tokio::runtime::RuntimeFlavor::MultiThread) => {
                        tokio::task::block_in_place(|| approver.decide(&request))
                    }
                    _ => approver.decide(&request),
                };
            let shown = match &decision {
                Decision::Run => "run",
                Decision::Edit(arguments) => {
                    call.arguments = arguments.clone();
                    "edit"
                }
                Decision::Refuse => "refuse",
            };
            events.emit(&RunEvent::Approval {
                turn,
                id: call.id.clone(),
                name: call.name.clone(),
                decision: shown.into(),
            });
            decided[index] = Some(decision);
        }
        (Cow::Owned(calls), decided)
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
                outcome_of(&*tool, outcome, self.json_lines)
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
