//! The work loop: propose → validate → schedule → execute → observe, until the model
//! answers without a call (or calls `finish`) or a budget ends the run. What each
//! profile decides is asked of its strategy (`profile/`); validation, execution and
//! the history live in their own modules; every step is an event for the sinks.

use std::sync::Arc;
use std::time::Duration;

use rein_engine::{
    Backend, BackendError, BackendInfo, Completion, NoEvents, ReadMode, Sampling, TurnRequest,
};
use rein_format::{ToolSet, ToolSetError};
use rein_protocol::{
    EventSink, FunctionSpec, Message, NoSink, RunEvent, RunResult, StopReason, ToolChoice,
    ToolSpec, TraceWriter,
};
use rein_tools::{Registry, Workspace};
use serde_json::json;

use crate::config::RunConfig;
use crate::execute::Executor;
use crate::profile::{ReadContext, RetryMode, Step, Strategy};
use crate::prompt::system_prompt;
use crate::recovery::FailureClass;
use crate::rules::Rule;
use crate::state::RunState;
use crate::tool_names::{FINISH_TOOL, WRITE_TOOL};

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
    tool_text: Option<String>,
    pub(crate) info: BackendInfo,
}

/// Why a request got no completion.
enum AskError {
    /// The run's wall clock ran out.
    WallClock,
    /// The backend refused or failed.
    Backend(BackendError),
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

impl<B: Backend> Agent<B> {
    /// An agent over the tools of `registry` that can run in `workspace`.
    pub fn new(
        backend: B,
        mut workspace: Workspace,
        registry: &Registry,
        config: RunConfig,
    ) -> Result<Self, AgentError> {
        workspace.set_result_context(config.result_context);
        let registry = registry.available(&workspace);
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
            },
            tool_names: tools.tools().iter().map(|t| t.name.clone()).collect(),
            tools: Arc::new(tools),
            config,
            strategy,
            tool_text,
        })
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
    fn forget_revealed(&mut self) {
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

    /// Runs `task` to the end, writing every event to `trace` when given.
    pub async fn run(&mut self, task: &str, trace: Option<TraceWriter>) -> RunResult {
        match trace {
            Some(mut trace) => self.run_with(task, &mut trace).await,
            None => self.run_with(task, &mut NoSink).await,
        }
    }

    /// Runs `task` to the end, telling `events` every step.
    pub async fn run_with(&mut self, task: &str, events: &mut dyn EventSink) -> RunResult {
        // Each run starts with only the listed tools.
        self.forget_revealed();
        let mut run = self.start(task, events);
        if self.config.tool_preview && self.strategy.guards_answers() {
            self.preview_tools(&mut run, events).await;
        }
        let (stop, answer, detail) = loop {
            if let Some(stop) = self.budget_exhausted(&run) {
                break (stop, None, None);
            }
            run.turns += 1;
            run.requests += 1;
            self.last_turn_answers(&mut run, events);
            if let Some(size) = run.prompt_size {
                let note = run.note.clone();
                self.keep_in_context(&mut run.history, note.as_deref(), size, run.turns, events);
            }
            run.focused = self.focused_evidence(&run);
            if let Some(evidence) = &run.focused {
                events.emit(&RunEvent::FocusedAnswer {
                    turn: run.turns,
                    evidence: evidence.clone(),
                });
            }
            let completion = match self.ask_within_context(&mut run, events).await {
                Ok(completion) => completion,
                Err(end) => break end,
            };
            // A focused turn's prompt is not the history: it teaches the size model
            // nothing.
            run.focused_note = false;
            if run.focused.is_none() {
                run.prompt_size = Some(crate::context::PromptSize::measure(
                    run.prompt_size,
                    &run.history,
                    run.note.as_deref(),
                    completion.prompt_tokens,
                ));
            }
            let answering = std::mem::take(&mut run.answer_only);
            run.account(&completion);
            events.emit(&turn_event(&run, &completion));
            let step = self
                .strategy
                .read(&completion, self.read_context(&run, &completion, answering));
            let flow = self.take(step, &mut run, &completion, events).await;
            if let Some(end) = self.advance(&mut run, flow) {
                break end;
            }
        };
        let mut result = run.result(
            stop,
            answer,
            detail,
            self.info.description.clone(),
            self.config.profile.as_str(),
        );
        result.trace = events.record_path();
        events.emit(&RunEvent::RunEnd {
            result: serde_json::to_value(&result).unwrap_or_default(),
        });
        result
    }

    /// The run's first event and its opening conversation.
    fn start(&self, task: &str, events: &mut dyn EventSink) -> RunState {
        let facts =
            crate::facts::detect(self.executor.workspace.root(), self.config.workspace_files);
        events.emit(&RunEvent::RunStart {
            task: task.to_string(),
            model: self.info.description.clone(),
            profile: self.config.profile.as_str().into(),
            version: env!("CARGO_PKG_VERSION").into(),
            settings: self.config.to_json(),
            tools: self.tool_names(),
            facts: facts.clone(),
        });
        let system = system_prompt(self.config.profile, &facts, self.tool_text.as_deref());
        let mut run = RunState::new(system, task, self.config.reply_tokens);
        run.facts = facts;
        // The file the task asks for, when it does not exist yet (the guards of
        // `full` hold answers without it).
        if self.strategy.guards_answers() {
            run.memory.output_file = crate::guards::output_file(task)
                .filter(|file| crate::guards::missing_output(self.executor.workspace.root(), file));
            if run.memory.output_file.is_some() {
                run.memory.search_words = crate::task_words::search_words(task, 6);
            }
            run.memory.file_to_change = crate::guards::file_to_change(task).and_then(|file| {
                let hash = crate::guards::content_hash(&self.executor.workspace, &file)?;
                Some((file, hash))
            });
            run.memory.task_paths = crate::task_paths::named_paths(task, &self.executor.workspace);
            run.memory.task_needles = crate::task_needles::task_needles(task);
            run.memory.task_command = crate::task_command::task_command(task);
            run.memory.expects_write = crate::guards::output_file(task).is_none()
                && run.memory.file_to_change.is_none()
                && crate::guards::asks_to_create(task);
            // A change of the workspace: asked in so many words, of a path it names
            // (a file to change or to write has its own hold).
            run.memory.expects_change = crate::guards::output_file(task).is_none()
                && run.memory.file_to_change.is_none()
                && !run.memory.expects_write
                && !run.memory.task_paths.is_empty()
                && crate::guards::asks_to_change(task);
        }
        run
    }

    /// One model turn, within what is left of the wall clock. A prompt the backend
    /// counts longer than the context (the size model guessed low: digits and odd
    /// bytes cost more tokens per character than the results before them) teaches the
    /// size model the real count, is compacted again and is asked again, twice at
    /// most; only a prompt that compaction cannot shorten ends the run.
    async fn ask_within_context(
        &mut self,
        run: &mut RunState,
        events: &mut dyn EventSink,
    ) -> Result<Completion, End> {
        let mut refits = 0;
        loop {
            let error = match self.ask(run).await {
                Err(AskError::Backend(error)) => error,
                Err(AskError::WallClock) => return Err((StopReason::WallClock, None, None)),
                Ok(completion) => return Ok(completion),
            };
            let too_long = match error {
                BackendError::PromptTooLong { prompt_tokens, .. } if refits < 2 => prompt_tokens,
                other => return Err((StopReason::BackendError, None, Some(other.to_string()))),
            };
            refits += 1;
            let note = run.note.clone();
            let size = crate::context::PromptSize::measure(
                run.prompt_size,
                &run.history,
                note.as_deref(),
                too_long,
            );
            run.prompt_size = Some(size);
            let before = run.history.clone();
            self.keep_in_context(&mut run.history, note.as_deref(), size, run.turns, events);
            if run.history == before {
                return Err((StopReason::BackendError, None, Some(error.to_string())));
            }
        }
    }

    /// One request to the backend, within what is left of the wall clock.
    async fn ask(&mut self, run: &RunState) -> Result<Completion, AskError> {
        let request = self.request(run);
        let remaining = self.config.wall_clock.saturating_sub(run.started.elapsed());
        match tokio::time::timeout(remaining, self.backend.complete(request, &mut NoEvents)).await {
            Err(_) => Err(AskError::WallClock),
            Ok(Err(e)) => Err(AskError::Backend(e)),
            Ok(Ok(completion)) => Ok(completion),
        }
    }

    /// What the profile makes of a reply.
    async fn take(
        &mut self,
        step: Step,
        run: &mut RunState,
        completion: &Completion,
        events: &mut dyn EventSink,
    ) -> Flow {
        match step {
            Step::Calls {
                content,
                calls,
                format_repair,
            } => {
                if let Some(detail) = format_repair {
                    events.emit(&RunEvent::FormatRepaired {
                        turn: run.turns,
                        detail,
                    });
                }
                self.run_calls(run, completion, content, calls, events)
                    .await
            }
            Step::Retry {
                class,
                detail,
                note,
                mode,
                keep,
            } => {
                run.history.extend(keep);
                let mut note = note;
                // Every profile answers a loop so; under `full` it is a rule.
                let full = self.strategy.guards_answers();
                if completion.looped
                    && !run.memory.succeeded_calls.is_empty()
                    && (!full || self.config.rules.on(Rule::LoopAnswer))
                {
                    // A loop after a step that worked is most often the same call
                    // again and again: the retry shows the result and is an answer,
                    // unless that result found nothing (then it asks for another step).
                    // A lookup run's answer may take more than the latest result
                    // (two cities' weather): every result so far is shown.
                    let results = match crate::answer_now::lookup_run(&run.memory) {
                        true => crate::answer_now::results_so_far(&run.memory),
                        false => Vec::new(),
                    };
                    let latest = match results.len() > 1 {
                        true => Some(results.join("\n")),
                        false => crate::calls::latest_result(&run.history),
                    };
                    if let Some(result) = latest {
                        if run.latest_found_nothing {
                            note = Some(format!(
                                "{} The latest result found nothing:\n{result}\nDo not repeat that call: try a different pattern, another place, or another tool.",
                                crate::recovery::LOOP_NOTE
                            ));
                        } else {
                            note = Some(format!(
                                "{} The latest result was:\n{result}\nReply to the task now with what the results say.",
                                crate::recovery::LOOP_NOTE
                            ));
                            run.answer_only = true;
                            if full {
                                run.fire(events, Rule::LoopAnswer, &detail);
                            }
                        }
                    }
                }
                self.retry(run, class, &detail, note, mode, events)
            }
            Step::Answer(text) => self.on_answer(run, text, events),
        }
    }

    /// Sets up the next turn after `flow`; the run's end when it ends.
    fn advance(&self, run: &mut RunState, flow: Flow) -> Option<End> {
        match flow {
            Flow::Next => {
                run.note = None;
                run.forced = None;
                run.no_blank = false;
                run.several_calls = false;
                run.reply_tokens = self.config.reply_tokens;
                run.attempt = 1;
            }
            Flow::Retry { note, mode } => {
                // The broken reply is not kept: the retry sees the clean history.
                run.note = note;
                run.several_calls = mode == RetryMode::SeveralCalls;
                run.forced = match mode {
                    RetryMode::CallsOnly | RetryMode::SeveralCalls => Some(ToolChoice::Required),
                    RetryMode::WriteOutput => Some(ToolChoice::Named(WRITE_TOOL.to_string())),
                    RetryMode::Same | RetryMode::NotBlank | RetryMode::LargerAllowance => None,
                };
                run.no_blank = mode == RetryMode::NotBlank;
                if mode == RetryMode::LargerAllowance {
                    run.reply_tokens = run
                        .reply_tokens
                        .saturating_mul(2)
                        .min(self.config.reply_tokens_cap);
                }
                run.attempt += 1;
            }
            Flow::Stop(end) => return Some(end),
        }
        None
    }

    /// The result lines the next reply answers from alone (`full`): when it is decoded
    /// as the answer to a question, and some result bears on the question (see
    /// `focused_answer`).
    fn focused_evidence(&self, run: &RunState) -> Option<String> {
        let memory = &run.memory;
        let asked = run.answer_only
            && self.config.focused_answer
            && self.strategy.guards_answers()
            && !run.from_knowledge
            && !memory.task_asks_for_a_file()
            && crate::focused_answer::asks_for_an_answer(run.task());
        asked
            .then(|| crate::focused_answer::evidence(run.task(), memory))
            .flatten()
    }

    /// The request of the next turn: the history (and a retry's note), shaped by the
    /// profile.
    fn request(&self, run: &RunState) -> TurnRequest {
        if let Some(evidence) = &run.focused {
            return self.focused_request(run, evidence);
        }
        let mut shape = self
            .strategy
            .shape(self.config.tool_format, run.forced.as_ref());
        if run.answer_only {
            // The same call twice gave the same result: this reply answers. The tools
            // stay in the prompt (its cached prefix with them); the reply may not open
            // with a call (the prose grammar), a call later in it is cut at its
            // opening, and the text is the answer.
            shape.constrained = false;
            shape.read = ReadMode::TEXT;
            shape.stop.push(self.info.family.call_opener().to_string());
            // A call begun on a later line ends the answer there.
            shape.stop.push("\n{\"name\"".to_string());
        }
        let mut messages = run.history.clone();
        if let Some(note) = &run.note {
            messages.push(Message::user(note));
        }
        TurnRequest {
            messages,
            tools: shape.tools.then(|| Arc::clone(&self.tools)),
            choice: shape.choice,
            tool_format: shape.tool_format,
            describe: self.config.describe,
            constrained: shape.constrained,
            // A retry fixes one step: one call (unless the reply it retries wrote
            // several in another format).
            parallel_calls: self.config.parallel_calls && (run.attempt == 1 || run.several_calls),
            response: None,
            call_example: self.config.call_example
                && self.config.parallel_calls
                && self.strategy.guards_answers(),
            wrapper_grammar: self.config.wrapper_grammar,
            // Not on a retry of a reply that wrote calls in another format, whose
            // repair reads them; an answer-only turn is prose already.
            call_or_answer: self.config.call_or_answer && !run.answer_only,
            // An answer-only turn may not open with a call (the small models write
            // their last call again as bare JSON).
            prose: run.answer_only,
            read: shape.read,
            sampling: self.sampling(run),
            max_tokens: Some(self.reply_allowance(run)),
            stop: shape.stop,
            no_blank: run.no_blank || self.config.no_blank,
        }
    }

    /// A question's answer asked from `evidence` alone: no tools, no history, prose.
    fn focused_request(&self, run: &RunState, evidence: &str) -> TurnRequest {
        // The retry of a focused answer held for its value, pick or path carries the
        // hold's note. Any other note (a reply cut for looping with the latest result,
        // "that was not an answer" with another result) is the conversation's, and
        // left out: the 0.5B model copied such notes as its answer.
        let note = run.note.as_deref().filter(|_| run.focused_note);
        let mut request =
            TurnRequest::text(crate::focused_answer::messages(run.task(), evidence, note));
        request.choice = ToolChoice::None;
        request.prose = true;
        request.no_blank = true;
        request.stop = vec![self.info.family.call_opener().to_string()];
        request.sampling = self.sampling(run);
        request.max_tokens = Some(self.reply_allowance(run));
        request
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

    /// The next reply's token allowance, within what the run's budget has left.
    fn reply_allowance(&self, run: &RunState) -> u32 {
        let remaining = self.config.max_tokens.saturating_sub(run.completion_tokens);
        run.reply_tokens
            .min(u32::try_from(remaining).unwrap_or(u32::MAX))
            .max(1)
    }

    fn read_context<'a>(
        &'a self,
        run: &'a RunState,
        completion: &Completion,
        answering: bool,
    ) -> ReadContext<'a> {
        let memory = &run.memory;
        // Only a reply cut for looping asks (see the `full` profile).
        let new_call = completion.looped
            && completion.reply.calls.iter().any(|call| {
                let key = crate::validate::call_key(&call.name, &call.arguments);
                !memory.succeeded_calls.contains_key(&key)
                    && !memory.failed_calls.contains_key(&key)
            });
        ReadContext {
            family: self.info.family,
            tool_names: &self.tool_names,
            latest_failure: run.latest_failure.as_deref(),
            new_call,
            planned: &memory.planned,
            answering,
        }
    }

    /// The turn the budget allows last answers (`full`): with results in hand and no
    /// file asked for, a reply decoded as the answer beats one more call that no
    /// turn would follow (a small model calling its create again ends with none).
    /// The last turn is the last the turn budget allows, or the last the wall clock
    /// has room for at the pace of the turns so far (a slow machine).
    fn last_turn_answers(&self, run: &mut RunState, events: &mut dyn EventSink) {
        let by_turns = run.turns == self.config.max_turns && self.config.max_turns > 1;
        let by_clock = last_by_clock(
            run.started.elapsed(),
            run.turns.saturating_sub(1),
            self.config.wall_clock,
        );
        let last = by_turns || by_clock;
        if !last
            || !self.strategy.guards_answers()
            || !self.config.rules.on(Rule::LastTurnAnswer)
            || run.answer_only
            || !run.memory.results_in_hand()
            || run.memory.task_asks_for_a_file()
            // A call that waited for a result may be the step still missing, unless
            // the task only asks to be answered: no turn would follow that call.
            || (!run.memory.planned.is_empty()
                && !crate::focused_answer::asks_for_an_answer(run.task()))
        {
            return;
        }
        run.answer_only = true;
        run.forced = None;
        let why = match by_turns {
            true => "the turn budget's last turn",
            false => "the wall clock's last turn",
        };
        run.fire(events, Rule::LastTurnAnswer, why);
        let last = "This is the last turn: reply to the task now with what the results above say.";
        run.note = Some(match run.note.take() {
            Some(note) => format!("{note}\n{last}"),
            None => last.to_string(),
        });
    }

    fn budget_exhausted(&self, run: &RunState) -> Option<StopReason> {
        if run.turns >= self.config.max_turns {
            Some(StopReason::MaxTurns)
        } else if run.completion_tokens >= self.config.max_tokens {
            Some(StopReason::MaxTokens)
        } else if run.started.elapsed() >= self.config.wall_clock {
            Some(StopReason::WallClock)
        } else {
            None
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
}

/// The event of one model turn.
fn turn_event(run: &RunState, completion: &Completion) -> RunEvent {
    RunEvent::Turn {
        turn: run.turns,
        attempt: run.attempt,
        prompt_tokens: completion.prompt_tokens,
        reused_tokens: completion.reused_tokens,
        completion_tokens: completion.completion_tokens,
        max_tokens: run.reply_tokens,
        ttft_ms: completion.ttft.as_millis() as u64,
        ms: completion.elapsed.as_millis() as u64,
        cut_off: completion.cut_off,
        raw: completion.text.clone(),
    }
}

/// Whether the wall clock has room for one more turn at most: less than two turns'
/// time is left at the pace of the `done` turns so far (`elapsed`).
fn last_by_clock(elapsed: Duration, done: u32, wall_clock: Duration) -> bool {
    if done == 0 {
        return false;
    }
    let pace = elapsed / done;
    wall_clock.saturating_sub(elapsed) < pace * 2
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

#[cfg(test)]
mod tests {
    use super::last_by_clock;
    use std::time::Duration;

    #[test]
    fn the_clock_makes_a_turn_the_last_when_two_more_would_not_fit() {
        let minutes = Duration::from_secs(300);
        // 4 turns in 240 s (60 s each), 60 s left: one more at most.
        assert!(last_by_clock(Duration::from_secs(240), 4, minutes));
        // 4 turns in 100 s (25 s each), 200 s left: room for more.
        assert!(!last_by_clock(Duration::from_secs(100), 4, minutes));
        // Before any turn: never.
        assert!(!last_by_clock(Duration::from_secs(290), 0, minutes));
    }
}
