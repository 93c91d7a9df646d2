//! The agent: a model, its tools in a workspace and the settings of its runs; how it
//! is set up, which tools it offers (a deferred tool revealed by a search), how a
//! turn samples, and how a dropped reply is recorded and retried.

use std::sync::Arc;

use rein_engine::{
    Backend, BackendError, BackendInfo, Completion, NoEvents, Sampling, TurnRequest,
};
use rein_format::{ToolSet, ToolSetError};
use rein_protocol::{EventSink, FunctionSpec, RunEvent, StopReason, ToolSpec};
use rein_tools::{Registry, Workspace};
use serde_json::json;

use crate::approval::{ApprovalPolicy, Approver};
use crate::config::RunConfig;
use crate::execute::Executor;
use crate::profile::{RetryMode, Strategy};
use crate::recovery::FailureClass;
use crate::rules::Rule;
use crate::state::RunState;
use crate::tool_names::{FINISH_TOOL, LIST_TOOL, QUERY_DATA_TOOL, READ_TOOL, REPLACE_TOOL};

/// Why an agent could not be set up.
#[derive(Debug, thiserror::Error)]
pub enum AgentError {
    /// The tools' schemas were refused.
    #[error("the tools cannot be offered: {0}")]
    Tools(#[from] ToolSetError),
}

/// An agent: a model, tools in a workspace, and the settings of its runs.
pub struct Agent<B: Backend> {
    pub(crate) backend: B,
    pub(crate) executor: Executor,
    pub(crate) tools: Arc<ToolSet>,
    pub(crate) tool_names: Vec<String>,
    pub(crate) config: RunConfig,
    pub(crate) strategy: &'static dyn Strategy,
    /// The profile's own description of the tools, when it writes one.
    pub(crate) tool_text: Option<String>,
    pub(crate) info: BackendInfo,
    /// Turns true when the user asks the run to stop (see [`Agent::stop_when`]).
    pub(crate) stop: Option<tokio::sync::watch::Receiver<bool>>,
}

/// How a step of the loop ended.
pub(crate) enum Flow {
    /// The step is done; the next turn starts clean.
    Next,
    /// The reply is dropped; the same context is asked again, with a note if any.
    Retry {
        note: Option<String>,
        mode: RetryMode,
    },
    /// The run ends.
    Stop(End),
}

/// How a run ended: why, the answer, and a detail.
pub(crate) type End = (StopReason, Option<String>, Option<String>);

/// Why a request got no completion.
pub(crate) enum AskError {
    /// The run's wall clock ran out.
    WallClock,
    /// The user stopped the run.
    Interrupted,
    /// The backend refused or failed.
    Backend(BackendError),
}

impl<B: Backend> Agent<B> {
    /// `request` sent once, within what is left of the wall clock.
    pub(crate) async fn ask_once(
        &mut self,
        run: &RunState,
        request: TurnRequest,
    ) -> Result<Completion, AskError> {
        let remaining = self.config.wall_clock.saturating_sub(run.started.elapsed());
        let stop = self.stop.clone();
        let mut quiet = NoEvents;
        let asked = tokio::time::timeout(remaining, self.backend.complete(request, &mut quiet));
        tokio::select! {
            asked = asked => match asked {
                Err(_) => Err(AskError::WallClock),
                Ok(Err(e)) => Err(AskError::Backend(e)),
                Ok(Ok(completion)) => Ok(completion),
            },
            () = until_stopped(stop) => Err(AskError::Interrupted),
        }
    }

    /// An agent over the tools of `registry` that can run in `workspace`.
    pub fn new(
        backend: B,
        mut workspace: Workspace,
        registry: &Registry,
        config: RunConfig,
    ) -> Result<Self, AgentError> {
        workspace.set_result_context(config.result_context);
        let mut registry = registry.available(&workspace);
        if !config.query_data {
            registry = registry.without(QUERY_DATA_TOOL);
        }
        if !config.replace_in_files {
            registry = registry.without(REPLACE_TOOL);
        }
        // A look at a data file points to the tool that computes over it, where it
        // is offered.
        workspace.set_data_hint(registry.get(QUERY_DATA_TOOL).is_some());
        let strategy = config.profile.strategy();
        // Deferred tools stay out of the prompt until a search result reveals them.
        let mut specs: Vec<_> = registry
            .tools()
            .iter()
            .filter(|tool| !tool.deferred())
            .map(|tool| tool.spec())
            .collect();
        if strategy.offers_finish() {
            specs.push(finish_spec());
        }
        let tools = ToolSet::prepare(&specs)?;
        let tool_text = strategy.describes_tools().then(|| {
            format!(
                "Tools (Action is the name, Action Input the JSON arguments):\n{}",
                tools.describe(config.describe)
            )
        });
        Ok(Self {
            info: backend.info(),
            backend,
            executor: Executor {
                registry,
                workspace: Arc::new(workspace),
                tool_timeout: config.tool_timeout,
                skips_repeats: strategy.guards_answers(),
                json_lines: config.result_lines && strategy.guards_answers(),
                rules: config.rules.clone(),
                approval: None,
            },
            tool_names: tools.tools().iter().map(|t| t.name.clone()).collect(),
            tools: Arc::new(tools),
            config,
            strategy,
            tool_text,
            stop: None,
        })
    }

    /// Ends a run cleanly when `signal` turns true (Ctrl-C in `rein run`): a request
    /// to the model in progress is dropped, calls already running finish and their
    /// results are kept, and the run stops as `interrupted` with its conversation in
    /// the trace, to be resumed.
    pub fn stop_when(&mut self, signal: tokio::sync::watch::Receiver<bool>) {
        self.stop = Some(signal);
    }

    /// Shows each call `policy` asks about to `approver` before it runs: the user
    /// runs it, runs it with other arguments, or refuses it (the model is told, and
    /// nothing changes).
    pub fn approve_with(&mut self, policy: ApprovalPolicy, approver: Arc<dyn Approver>) {
        self.executor.approval = match policy {
            ApprovalPolicy::Never => None,
            policy => Some((policy, approver)),
        };
    }

    /// Whether the user has asked the run to stop.
    pub(crate) fn stop_requested(&self) -> bool {
        self.stop.as_ref().is_some_and(|signal| *signal.borrow())
    }

    /// Makes the deferred tools `names` callable from the next turn, without showing
    /// them: the prompt's prefix (and its cached KV) stays as it was. Names that are
    /// not deferred tools of this agent, or are callable already, are skipped.
    pub(crate) fn reveal(&mut self, names: &[String]) -> Result<(), ToolSetError> {
        let new: Vec<_> = names
            .iter()
            .filter(|name| self.tools.get(name).is_none())
            .filter_map(|name| self.executor.registry.get(name))
            .filter(|tool| tool.deferred())
            .map(|tool| tool.spec())
            .collect();
        if new.is_empty() {
            return Ok(());
        }
        let listed = self.tools.listed().len();
        let mut specs = self.tools.specs();
        specs.extend(new);
        let tools = ToolSet::prepare_listing(&specs, listed)?;
        self.tool_names = tools.tools().iter().map(|t| t.name.clone()).collect();
        self.tools = Arc::new(tools);
        Ok(())
    }
    /// Back to the listed tools only.
    pub(crate) fn forget_revealed(&mut self) {
        let listed = self.tools.listed().len();
        if listed == self.tools.tools().len() {
            return;
        }
        let specs: Vec<_> = self.tools.specs().into_iter().take(listed).collect();
        if let Ok(tools) = ToolSet::prepare(&specs) {
            self.tool_names = tools.tools().iter().map(|t| t.name.clone()).collect();
            self.tools = Arc::new(tools);
        }
    }
    /// The model backend (tests inspect a scripted one).
    pub fn backend(&self) -> &B {
        &self.backend
    }
    /// The names of the tools offered.
    pub fn tool_names(&self) -> Vec<String> {
        self.tool_names.clone()
    }
    /// The next request's sampling. A retry of the same context samples hotter, so it
    /// does not repeat the reply that was dropped.
    pub(crate) fn sampling(&self, run: &RunState) -> Sampling {
        Sampling {
            temperature: (self.config.temperature
                + self.config.retry_heat * (run.attempt - 1) as f32)
                .min(1.2),
            top_p: self.config.top_p,
            seed: self.config.seed.wrapping_add(run.requests),
            repeat_penalty: self.config.repeat_penalty,
        }
    }
    /// Records a failure of `class`; returns whether the class is over its cap.
    pub(crate) fn fail(
        &self,
        run: &mut RunState,
        class: FailureClass,
        detail: &str,
        note: Option<String>,
        events: &mut dyn EventSink,
    ) -> bool {
        *run.recoveries.entry(class).or_default() += 1;
        events.emit(&RunEvent::Recovery {
            turn: run.turns,
            class: class.as_str().into(),
            detail: detail.into(),
            note,
        });
        run.failures.record(class)
    }
    /// A dropped reply: retried with `note` unless `class` is over its cap.
    pub(crate) fn retry(
        &self,
        run: &mut RunState,
        class: FailureClass,
        detail: &str,
        note: Option<String>,
        mode: RetryMode,
        events: &mut dyn EventSink,
    ) -> Flow {
        let (mut note, mut mode) = (note, mode);
        // A call to nothing before any call ran, in a task that names a path of the
        // workspace (`set_version` for "every service under services/"): the work
        // starts at that path, and the retry is a call.
        let look = match (class, run.tool_calls) {
            (FailureClass::UnknownTool, 0) if self.config.rules.on(Rule::UnknownToolLook) => run
                .memory
                .task_paths
                .first()
                .and_then(|named| self.look_first(named, "go on from what it shows")),
            _ => None,
        };
        if let Some(look) = look {
            run.fire(events, Rule::UnknownToolLook, &look);
            mode = RetryMode::CallsOnly;
            if let Some(note) = note.as_mut() {
                note.push(' ');
                note.push_str(&look);
            }
        } else if class == FailureClass::UnknownTool {
            // A call to nothing: after a step that worked, often an extra step the task
            // never asked for; before any, often a request no tool fits. Either way
            // the retry may answer instead.
            mode = RetryMode::Same;
            let second_before_any = run.tool_calls == 0
                && run.recoveries.contains_key(&FailureClass::UnknownTool)
                && crate::answer_now::lookup_run(&run.memory)
                && (!self.strategy.guards_answers() || self.config.rules.on(Rule::NoToolFits));
            let hint = match run.tool_calls {
                // The second call to nothing in a lookup run, and nothing else called:
                // a request no tool fits (`multiply` with weather tools). The retry
                // is decoded as the answer.
                0 if second_before_any => {
                    if self.strategy.guards_answers() {
                        run.fire(events, Rule::NoToolFits, detail);
                    }
                    run.answer_only = true;
                    run.from_knowledge = true;
                    format!(" {}", crate::answer_now::no_tool_fits(run.task()))
                }
                0 => " If none of them fits the request, answer it directly in plain words, without a call.".to_string(),
                _ if !run.memory.succeeded_calls.is_empty() => {
                    " If the task is already done, reply with the answer instead.".to_string()
                }
                _ => String::new(),
            };
            if let Some(note) = note.as_mut() {
                note.push_str(&hint);
            }
        }
        if self.fail(run, class, detail, note.clone(), events) {
            Flow::Stop((
                StopReason::RecoveryExhausted,
                None,
                Some(class.as_str().into()),
            ))
        } else {
            Flow::Retry { note, mode }
        }
    }

    /// The sentences that send a model to the path the task names, with the call that
    /// looks at it and what to do `then`; `None` when the tool for it is not offered.
    pub(crate) fn look_first(
        &self,
        named: &crate::task_paths::TaskPath,
        then: &str,
    ) -> Option<String> {
        let tool = match named.dir {
            true => LIST_TOOL,
            false => READ_TOOL,
        };
        self.tool_names.iter().any(|t| t == tool).then(|| {
            format!(
                "The task names `{}`, which is in the workspace. Look at it first:\n{}\nthen {then}.",
                named.path,
                self.info
                    .family
                    .call_text(tool, &serde_json::json!({ "path": named.path }))
            )
        })
    }
}

/// The `finish` tool of the structured profile.
fn finish_spec() -> ToolSpec {
    ToolSpec {
        kind: "function".into(),
        function: FunctionSpec {
            name: FINISH_TOOL.into(),
            description: Some("End the task with the final answer.".into()),
            parameters: Some(json!({
                "type": "object",
                "properties": {"answer": {"type": "string", "description": "The final answer."}},
                "required": ["answer"]
            })),
        },
    }
}

/// Waits until `signal` turns true; forever when there is none or its sender is gone.
async fn until_stopped(signal: Option<tokio::sync::watch::Receiver<bool>>) {
    if let Some(mut signal) = signal {
        if signal.wait_for(|stopped| *stopped).await.is_ok() {
            return;
        }
    }
    std::future::pending().await
}
