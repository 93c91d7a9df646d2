//! The work loop: propose → validate → schedule → execute → observe, until the model
//! answers without a call (or calls `finish`) or a budget ends the run. What each
//! profile decides is asked of its strategy (`profile/`); the agent, its tools and its
//! retries live in `agent`, a turn's calls in `calls`, an answer's fate in `answer`;
//! every step is an event for the sinks.

use std::sync::Arc;
use std::time::Duration;

use rein_engine::{Backend, BackendError, Completion, ReadMode, TurnRequest};
use rein_protocol::{
    EventSink, Message, NoSink, RunEvent, RunResult, StopReason, ToolChoice, TraceWriter,
};

use crate::agent::AskError;
use crate::agent::{Agent, End, Flow};
use crate::call_intent::Opening;
use crate::profile::{ReadContext, RetryMode, Step};
use crate::prompt::system_prompt;
use crate::rules::Rule;
use crate::state::RunState;
use crate::tool_names::WRITE_TOOL;

impl<B: Backend> Agent<B> {
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
        self.drive(run, events).await
    }

    /// The loop of a started run, to its end.
    pub(crate) async fn drive(
        &mut self,
        mut run: RunState,
        events: &mut dyn EventSink,
    ) -> RunResult {
        let (stop, answer, detail) = loop {
            // The conversation as it stands, for `--resume` even after a kill.
            if let Some(history) = run.history_event() {
                events.emit(&history);
            }
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
                run.prompt_size = Some(crate::prompt_size::PromptSize::measure(
                    run.prompt_size,
                    &run.history,
                    run.note.as_deref(),
                    completion.prompt_tokens,
                ));
            }
            let answering = std::mem::take(&mut run.answer_only);
            run.account(&completion);
            events.emit(&run.turn_event(&completion, self.config.record_prompts));
            let step = self
                .strategy
                .read(&completion, self.read_context(&run, &completion, answering));
            let flow = self.take(step, &mut run, &completion, events).await;
            if let Some(end) = self.advance(&mut run, flow) {
                break end;
            }
        };
        let answer = match (answer, stop == StopReason::Answered) {
            (Some(text), true) => Some(self.answer_in_form(&mut run, text, events).await),
            (answer, _) => answer,
        };
        let mut result = run.result(
            stop,
            answer,
            detail,
            self.info.description.clone(),
            self.config.profile.as_str(),
        );
        result.trace = events.record_path();
        if let Some(history) = run.history_event() {
            events.emit(&history);
        }
        events.emit(&RunEvent::RunEnd {
            result: serde_json::to_value(&result).unwrap_or_default(),
        });
        result
    }

    /// The run's first event and its opening conversation.
    pub(crate) fn start(&self, task: &str, events: &mut dyn EventSink) -> RunState {
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
        let system = system_prompt(self.config.profile, self.tool_text.as_deref());
        let opening = crate::prompt::opening_request(&facts, task);
        let mut run = RunState::new(system, &opening, self.config.reply_tokens);
        run.facts = facts;
        // The file the task asks for, when it does not exist yet (the guards of
        // `full` hold answers without it).
        if self.strategy.guards_answers() {
            run.memory.output_file = crate::task_asks::output_file(task).filter(|file| {
                crate::task_asks::missing_output(self.executor.workspace.root(), file)
            });
            if run.memory.output_file.is_some() {
                run.memory.search_words = crate::task_words::search_words(task, 6);
            }
            run.memory.file_to_change = crate::task_asks::file_to_change(task).and_then(|file| {
                let hash = crate::task_asks::content_hash(&self.executor.workspace, &file)?;
                Some((file, hash))
            });
            run.memory.task_paths = crate::task_paths::named_paths(task, &self.executor.workspace);
            run.memory.task_needles = crate::task_needles::task_needles(task);
            run.memory.task_command = crate::task_command::task_command(task);
            run.memory.expects_write = crate::task_asks::output_file(task).is_none()
                && run.memory.file_to_change.is_none()
                && crate::task_asks::asks_to_create(task);
            // A change of the workspace: asked in so many words, of a path it names
            // (a file to change or to write has its own hold).
            run.memory.expects_change = crate::task_asks::output_file(task).is_none()
                && run.memory.file_to_change.is_none()
                && !run.memory.expects_write
                && !run.memory.task_paths.is_empty()
                && crate::task_asks::asks_to_change(task);
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
            let error = match self.ask(run, events).await {
                Err(AskError::Backend(error)) => error,
                Err(AskError::WallClock) => return Err((StopReason::WallClock, None, None)),
                Err(AskError::Interrupted) => return Err((StopReason::Interrupted, None, None)),
                Ok(completion) => return Ok(completion),
            };
            let too_long = match error {
                BackendError::PromptTooLong { prompt_tokens, .. } if refits < 2 => prompt_tokens,
                other => return Err((StopReason::BackendError, None, Some(other.to_string()))),
            };
            refits += 1;
            let note = run.note.clone();
            let size = crate::prompt_size::PromptSize::measure(
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

    /// One request to the backend, within what is left of the wall clock. With
    /// `call_intent`, a reply whose shape the model chooses is first opened without a
    /// grammar; an opening that begins calls has the reply decoded as the family's
    /// calls from its first token.
    async fn ask(
        &mut self,
        run: &RunState,
        events: &mut dyn EventSink,
    ) -> Result<Completion, AskError> {
        let mut request = self.request(run);
        let opening = match self.config.call_intent
            && self.info.decodes_grammars
            && run.focused.is_none()
            && crate::call_intent::chooses_shape(&request)
        {
            true => {
                let probe = crate::call_intent::opening_request(&request);
                Some(self.ask_once(run, probe).await?)
            }
            false => None,
        };
        if let Some(opening) = &opening {
            let read =
                crate::call_intent::read_opening(&opening.text, self.info.family, &self.tool_names);
            let shape = match read {
                Opening::Calls => {
                    request.choice = ToolChoice::Required;
                    request.call_or_answer = false;
                    Some("calls")
                }
                Opening::Answer => {
                    // As an answer-only turn: prose from the first character, cut
                    // where a call would begin.
                    request.constrained = false;
                    request.call_or_answer = false;
                    request.prose = true;
                    request
                        .stop
                        .push(self.info.family.call_opener().to_string());
                    Some("answer")
                }
                Opening::Free => None,
            };
            if let Some(shape) = shape {
                events.emit(&RunEvent::OpeningRead {
                    turn: run.turns,
                    opening: opening.text.clone(),
                    shape: shape.into(),
                });
            }
        }
        let mut completion = self.ask_once(run, request).await?;
        if let Some(opening) = opening {
            // The opening's work is the reply's: its prompt evaluation, its tokens and
            // its time.
            completion.reused_tokens = opening.reused_tokens;
            completion.completion_tokens += opening.completion_tokens;
            completion.ttft += opening.elapsed;
            completion.elapsed += opening.elapsed;
        }
        Ok(completion)
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
        if self.stop_requested() {
            Some(StopReason::Interrupted)
        } else if run.turns >= self.config.max_turns {
            Some(StopReason::MaxTurns)
        } else if run.completion_tokens >= self.config.max_tokens {
            Some(StopReason::MaxTokens)
        } else if run.started.elapsed() >= self.config.wall_clock {
            Some(StopReason::WallClock)
        } else {
            None
        }
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
