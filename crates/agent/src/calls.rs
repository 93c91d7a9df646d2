//! One turn's calls: each validated (the first rejection drops the reply and retries
//! it), checked (`call_checks`), then run in scheduled groups; failures counted by
//! class, and the exchange written into the history as the profile records it.

use rein_engine::{Backend, Completion};
use rein_protocol::{EventSink, RunEvent, StopReason};

use crate::agent::{Agent, Flow};
use crate::answer_now;
use crate::call_outcome::CallOutcome;
use crate::named_files::meant_file;
use crate::profile::{Exchange, RetryMode};
use crate::recovery::FailureClass;
use crate::rules::Rule;
use crate::state::RunState;
use crate::stepwise::{
    copied_from_results, defer_other_tools, deferred_note, spray_after_success, sprayed_note,
};
use crate::tool_names::{FINISH_TOOL, READ_TOOL};
use crate::validate::{validate, ProposedCall, ReadyCall, Rejection};

/// Steps of other calls after which a deferred call is no longer the plan.
const PLAN_KEPT_STEPS: u32 = 2;

impl<B: Backend> Agent<B> {
    /// Validates the proposed calls, runs them, and appends the exchange to the history.
    pub(crate) async fn run_calls(
        &mut self,
        run: &mut RunState,
        completion: &Completion,
        content: Option<String>,
        calls: Vec<ProposedCall>,
        events: &mut dyn EventSink,
    ) -> Flow {
        let mut ready = Vec::with_capacity(calls.len());
        for call in calls {
            run.call_ids += 1;
            let validated = validate(call, run.call_ids, run.turns, &self.tool_names, events)
                .and_then(|call| {
                    match self.strategy.explains_rejections()
                        && self.config.rules.on(Rule::CopiedResult)
                    {
                        true => refuse_copied_result(call, &run.history),
                        false => Ok(call),
                    }
                });
            match validated {
                Ok(mut call) => {
                    if self.strategy.guards_answers() && self.config.rules.on(Rule::RequestQuotes) {
                        self.restore_request_quotes(run, &mut call, events);
                    }
                    ready.push(call)
                }
                Err(rejection) => {
                    if rejection.copies_result {
                        run.fire(events, Rule::CopiedResult, &rejection.detail);
                    }
                    // Profiles that explain failures say what to fix; others retry blindly.
                    let mut note = rejection.note;
                    if rejection.shows_result {
                        if let Some(result) = latest_result(&run.history) {
                            note.push_str("\nThe latest result, to copy from:\n");
                            note.push_str(&result);
                        }
                    }
                    let note = self.strategy.explains_rejections().then_some(note);
                    return self.retry(
                        run,
                        rejection.class,
                        &rejection.detail,
                        note,
                        RetryMode::Same,
                        events,
                    );
                }
            }
        }
        if let Some(flow) = self.hold_ungrounded(run, &ready, events) {
            return flow;
        }
        run.failures.clean_reply();
        // Identical calls in one reply run once.
        let mut seen = std::collections::HashSet::new();
        ready.retain(|call| seen.insert(call.key()));
        if let Some(flow) = self.answer_repeat_led(run, &ready, events) {
            return flow;
        }
        let stepwise = self.config.stepwise && self.strategy.guards_answers();
        let mut sprayed = Vec::new();
        let deferred = match stepwise {
            true => {
                let memory = &run.memory;
                let unchanged = |(_, changes): &(String, u64)| *changes == memory.changes;
                let succeeded = |call: &ReadyCall| {
                    memory
                        .succeeded_calls
                        .get(&call.key())
                        .is_some_and(unchanged)
                };
                // A repeat (of a call that worked or failed, with nothing changed
                // since) is answered from memory, so it does not lead.
                let repeats = |call: &ReadyCall| {
                    succeeded(call) || memory.failed_calls.get(&call.key()).is_some_and(unchanged)
                };
                sprayed = spray_after_success(&mut ready, succeeded);
                match sprayed.is_empty() {
                    true => {
                        let results = run.results();
                        let root = self.executor.workspace.root();
                        let settled = |call: &ReadyCall| {
                            copied_from_results(call, run.task(), &results, root)
                        };
                        defer_other_tools(&mut ready, repeats, settled)
                    }
                    false => Vec::new(),
                }
            }
            false => Vec::new(),
        };
        events.emit(&ReadyCall::event(run.turns, &ready));
        if let Some(finish) = ready.iter().find(|c| c.name == FINISH_TOOL) {
            let answer = finish.arguments["answer"]
                .as_str()
                .unwrap_or_default()
                .to_string();
            return Flow::Stop((StopReason::Finished, Some(answer), None));
        }
        let mut outcomes = self.run_unguessed(run, &ready, events).await;
        // The results as traced: what the loop appends below is traced as notes.
        let traced: Vec<usize> = outcomes.iter().map(|o| o.text.len()).collect();
        for outcome in outcomes
            .iter_mut()
            .filter(|o| o.ok && !o.reveals.is_empty())
        {
            let names = std::mem::take(&mut outcome.reveals);
            if let Err(error) = self.reveal(&names) {
                outcome
                    .text
                    .push_str(&format!("\n(these tools cannot be called: {error})"));
            }
        }
        run.memory
            .planned
            .retain(|tool| !ready.iter().any(|call| &call.name == tool));
        let finds_tools = |name: &str| {
            self.executor
                .registry
                .get(name)
                .is_some_and(|tool| tool.finds_tools())
        };
        // A plan that two steps of other calls passed by is dropped: the model went
        // another way (a `list_dir` deferred on the first turn was held for after
        // the task's file was written, eight turns later).
        match deferred.is_empty() {
            true => {
                run.memory.steps_since_plan += 1;
                if run.memory.steps_since_plan >= PLAN_KEPT_STEPS {
                    run.memory.planned.clear();
                }
            }
            false => run.memory.steps_since_plan = 0,
        }
        for tool in deferred.iter().filter(|tool| !finds_tools(tool)) {
            if !run.memory.planned.contains(tool) {
                run.memory.planned.push(tool.clone());
            }
        }
        // Calls not run now: the trace says which, and the last result says why.
        let left = [
            (&sprayed, sprayed_note as fn(&[String]) -> String),
            (&deferred, deferred_note),
        ];
        for (tools, note) in left.into_iter().filter(|(tools, _)| !tools.is_empty()) {
            events.emit(&RunEvent::CallsDeferred {
                turn: run.turns,
                tools: tools.clone(),
            });
            if let Some(last) = outcomes.last_mut() {
                last.text.push_str(&note(tools));
            }
        }
        if self.strategy.guards_answers() {
            let rules = self.config.rules.clone();
            let mut routed = Vec::new();
            for (call, outcome) in ready.iter().zip(outcomes.iter_mut()) {
                let before = outcome.text.len();
                if rules.on(Rule::MeantFile) {
                    self.name_the_meant_file(run, call, outcome);
                    noted(run, events, Rule::MeantFile, call, outcome, before);
                }
                let before = outcome.text.len();
                if rules.on(Rule::ServerRoute) {
                    routed.extend(self.route_to_server_tool(call, outcome));
                    noted(run, events, Rule::ServerRoute, call, outcome, before);
                }
                if outcome.text.len() == before && rules.on(Rule::InsidePath) {
                    self.path_inside_note(run.task(), call, outcome);
                    noted(run, events, Rule::InsidePath, call, outcome, before);
                }
            }
            if rules.on(Rule::TaskCommand) {
                let before: Vec<usize> = outcomes.iter().map(|o| o.text.len()).collect();
                self.task_command_note(run, &ready, &mut outcomes);
                for ((call, outcome), before) in ready.iter().zip(&outcomes).zip(before) {
                    noted(run, events, Rule::TaskCommand, call, outcome, before);
                }
            }
            self.focused_edit_note(run, &ready, &mut outcomes, events)
                .await;
            if let (Err(error), Some(last)) = (self.reveal(&routed), outcomes.last_mut()) {
                last.text
                    .push_str(&format!("\n(these tools cannot be called: {error})"));
            }
        }
        let mut exhausted = None;
        for (call, outcome) in ready.iter().zip(&outcomes) {
            run.tool_calls += 1;
            if outcome.guessed {
                // Not run: nothing to remember, and the same call is fine once a
                // result shows the value.
                run.tool_errors += 1;
                let detail = format!("{}: {}", call.name, outcome.text);
                if self.fail(run, FailureClass::Guessed, &detail, None, events) {
                    exhausted = Some(FailureClass::Guessed);
                }
                continue;
            }
            if outcome.repeated_success {
                // The same result again: say so, and after the second time decode the
                // next reply as an answer.
                run.repeats += 1;
                // Not when the step repeated found nothing: that is no answer.
                run.answer_only = run.repeats >= 2 && !run.latest_found_nothing;
                let detail = format!("{}: the same successful call again", call.name);
                if self.fail(run, FailureClass::Repetition, &detail, None, events) {
                    exhausted = Some(FailureClass::Repetition);
                }
                continue;
            }
            if outcome.ok {
                run.failures.tool_succeeded();
                continue;
            }
            run.tool_errors += 1;
            let class = if outcome.timed_out {
                FailureClass::ToolTimeout
            } else if outcome.repeated {
                FailureClass::Repetition
            } else {
                FailureClass::ToolFailure
            };
            let first_line = outcome.text.lines().next().unwrap_or_default();
            if self.fail(
                run,
                class,
                &format!("{}: {first_line}", call.name),
                None,
                events,
            ) {
                exhausted = Some(class);
            }
            if !outcome.repeated && !outcome.until_step {
                let changes = run.memory.changes;
                let first = run
                    .memory
                    .failed_calls
                    .insert(call.key(), (outcome.text.clone(), changes))
                    .is_none();
                if first {
                    run.memory.failed_order.push(call.key());
                }
            }
        }
        run.latest_found_nothing = outcomes.last().is_some_and(|outcome| outcome.found_nothing);
        run.latest_failure = outcomes
            .last()
            .filter(|outcome| !outcome.ok && !outcome.repeated_success)
            .map(|outcome| failure_line(&outcome.text));
        if run.answer_only
            && self.strategy.guards_answers()
            && self.config.rules.on(Rule::AnswerFromResults)
            && answer_now::lookup_run(&run.memory)
        {
            // The next reply answers: in a lookup run it gets the request and every
            // result so far (the small model answered "Dallas, TX: 78.5 °C" with the
            // weather of Oslo and Madrid above it).
            let results = answer_now::results_so_far(&run.memory);
            if let (Some(last), false) = (outcomes.last_mut(), results.is_empty()) {
                last.text.push_str("\n\n");
                last.text
                    .push_str(&answer_now::answer_from_results(run.task(), &results));
                let detail = format!("{} results shown with the last", results.len());
                run.fire(events, Rule::AnswerFromResults, &detail);
            }
        }
        // A value not found, where an earlier result gave another under the
        // argument's name: the result ends with that value's call.
        if self.strategy.guards_answers() && self.config.rules.on(Rule::NotFound) {
            let earlier: Vec<String> = run.results().into_iter().map(String::from).collect();
            let earlier: Vec<&str> = earlier.iter().map(String::as_str).collect();
            for (call, outcome) in ready.iter().zip(outcomes.iter_mut()) {
                let note = crate::not_found::not_found_note(
                    call,
                    &outcome.text,
                    &earlier,
                    |name, args| self.info.family.call_text(name, args),
                );
                if let Some(note) = note {
                    let before = outcome.text.len();
                    outcome.text.push_str(&note);
                    noted(run, events, Rule::NotFound, call, outcome, before);
                }
            }
        }
        // A reply that found something new made progress, whatever it repeated
        // around it: the run goes on (the next reply still gets the notes).
        if outcomes.iter().any(|o| o.ok && !o.repeated_success) {
            exhausted = None;
        }
        for ((call, outcome), traced) in ready.iter().zip(&outcomes).zip(traced) {
            if let Some(note) = outcome.text.get(traced..).filter(|n| !n.is_empty()) {
                events.emit(&RunEvent::ResultNote {
                    turn: run.turns,
                    id: call.id.clone(),
                    note: note.to_string(),
                });
            }
        }
        let results: Vec<String> = outcomes.into_iter().map(|o| o.text).collect();
        run.results_seen.extend(results.iter().cloned());
        self.strategy.record(
            Exchange {
                raw: &completion.text,
                content: content.as_deref(),
                calls: &ready,
                results: &results,
            },
            &mut run.history,
        );
        match exhausted {
            Some(class) => Flow::Stop((
                StopReason::RecoveryExhausted,
                None,
                Some(class.as_str().into()),
            )),
            None => Flow::Next,
        }
    }

    /// A lookup run's reply that opens with a call it already made and goes on to
    /// others (see `answer_now`): nothing runs, and the retry is decoded as the
    /// answer, with the results so far in its note.
    fn answer_repeat_led(
        &self,
        run: &mut RunState,
        ready: &[ReadyCall],
        events: &mut dyn EventSink,
    ) -> Option<Flow> {
        if !self.strategy.guards_answers()
            || !self.config.rules.on(Rule::RepeatLedAnswer)
            || !answer_now::lookup_run(&run.memory)
        {
            return None;
        }
        let repeat = answer_now::opening_repeat(ready, &run.memory, run.task())?;
        // A step of a look through the workspace (the next page of a file after the
        // first again) goes on; lookups elsewhere had their answer.
        if !ready.iter().all(|call| self.executor.is_lookup(call)) {
            return None;
        }
        let results = answer_now::results_so_far(&run.memory);
        let note = answer_now::repeat_led_note(repeat, run.task(), &results);
        let detail = format!(
            "{}: a reply led by a call already made, with {} more",
            repeat.name,
            ready.len() - 1
        );
        run.answer_only = true;
        run.fire(events, Rule::RepeatLedAnswer, &detail);
        Some(self.retry(
            run,
            FailureClass::Repetition,
            &detail,
            Some(note),
            RetryMode::Same,
            events,
        ))
    }
}

/// The latest tool result in the history (shortened), without its untrusted-data
/// wrapper.
pub(crate) fn latest_result(history: &[rein_protocol::Message]) -> Option<String> {
    let text = history
        .iter()
        .rev()
        .find(|m| m.role == rein_protocol::Role::Tool)?
        .content
        .as_deref()?;
    Some(crate::result_text::result_excerpt(text, 1500))
}

/// A call whose text argument is only a copy of a short earlier result (`Created
/// TODO.md (311 bytes, 5 lines).`): a small model's way of "repeating" a step, which
/// would overwrite real content with a status line. Refused with a note.
fn refuse_copied_result(
    call: ReadyCall,
    history: &[rein_protocol::Message],
) -> Result<ReadyCall, Rejection> {
    let recent: Vec<&str> = history
        .iter()
        .rev()
        .filter(|m| m.role == rein_protocol::Role::Tool)
        .take(3)
        .filter_map(|m| m.content.as_deref())
        .map(str::trim)
        .filter(|text| text.len() < 300)
        .collect();
    let copied = call.arguments.as_object().and_then(|arguments| {
        arguments.iter().find_map(|(key, value)| {
            let text = value.as_str()?.trim();
            (text.len() >= 10 && recent.contains(&text)).then(|| (key.clone(), text.to_string()))
        })
    });
    match copied {
        None => Ok(call),
        Some((key, text)) => Err(Rejection {
            class: FailureClass::Schema,
            detail: format!("{}: `{key}` copies an earlier result", call.name),
            note: format!(
                "Your call of `{}` was not run: `{key}` is `{text}`, the result of an earlier call, not text to write. What that call did is done. If the task is finished, reply with a short final answer."
            , call.name),
            shows_result: false,
            copies_result: true,
        }),
    }
}

/// Records `rule` as fired when it added to `outcome`'s text (longer than `before`).
fn noted(
    run: &mut RunState,
    events: &mut dyn EventSink,
    rule: Rule,
    call: &ReadyCall,
    outcome: &CallOutcome,
    before: usize,
) {
    if let Some(note) = outcome.text.get(before..).filter(|note| !note.is_empty()) {
        let detail = format!("{}: {}", call.name, note.trim());
        run.fire(events, rule, &detail);
    }
}

impl<B: Backend> Agent<B> {
    /// A failed read of a file that does not exist (`limits.toml`), when a result
    /// named a file of that name that nothing has read (`conf/prod/limits.toml` in a
    /// config file): the result says that is the one meant, among the files of the
    /// same name the tool suggests.
    fn name_the_meant_file(&self, run: &RunState, call: &ReadyCall, outcome: &mut CallOutcome) {
        if call.name != READ_TOOL || outcome.ok || outcome.repeated {
            return;
        }
        let Some(path) = call
            .arguments
            .get("path")
            .and_then(serde_json::Value::as_str)
        else {
            return;
        };
        let workspace = &self.executor.workspace;
        if workspace.resolve(path).is_ok_and(|p| p.exists()) {
            return;
        }
        if let Some(meant) = meant_file(path, &run.history, workspace, &run.memory) {
            if meant != path {
                outcome.text.push_str(&format!(
                    "\n`{meant}` is the one an earlier result names, not read yet: read it next."
                ));
            }
        }
    }

    /// A call that failed to reach a path outside the workspace, while a server tool
    /// does that job: the result names that tool and the call to make (see
    /// `server_route`). Returns the tool's name when it is still to be revealed.
    fn route_to_server_tool(&self, call: &ReadyCall, outcome: &mut CallOutcome) -> Option<String> {
        let (job, path, arguments) = crate::server_route::refused_reach(
            &call.name,
            &call.arguments,
            (outcome.ok, &outcome.text),
            &self.executor.workspace,
        )?;
        let specs: Vec<_> = self
            .executor
            .registry
            .tools()
            .iter()
            .map(|t| t.spec())
            .collect();
        let spec = crate::server_route::server_tool_for(job, &path, &specs)?;
        let name = &spec.function.name;
        let next = match crate::server_route::carried_arguments(spec, &arguments) {
            Some(arguments) => {
                format!("Call it:\n{}", self.info.family.call_text(name, &arguments))
            }
            None => format!(
                "Call it with the values the task gives: {}",
                rein_format::signature(spec)
            ),
        };
        outcome.text.push_str(&format!(
            "\nThe tools of MCP servers are not confined to the workspace, and `{name}` does this job. {next}"
        ));
        self.tools.get(name).is_none().then(|| name.clone())
    }

    /// Runs `call` with the request's own text where a string argument copies it with
    /// other quote characters (see `quoted_copies`), telling `events`.
    fn restore_request_quotes(
        &self,
        run: &mut RunState,
        call: &mut ReadyCall,
        events: &mut dyn EventSink,
    ) {
        let from = call.arguments.clone();
        if crate::quoted_copies::restore_request_quotes(&mut call.arguments, run.task()) {
            run.fire(events, Rule::RequestQuotes, &call.name);
            events.emit(&RunEvent::Coerced {
                turn: run.turns,
                tool: call.name.clone(),
                from,
                to: call.arguments.clone(),
            });
        }
    }
}

/// What a failed call's result says, on one line: without the untrusted-data wrapper
/// and the shell's `cwd:` line (a command's failure is its exit code and output), at
/// most 300 characters.
fn failure_line(text: &str) -> String {
    let text = crate::result_text::result_excerpt(text, 2000);
    let lines: Vec<&str> = text
        .lines()
        .map(str::trim)
        .filter(|line| !line.is_empty() && !line.starts_with("cwd: "))
        .collect();
    let joined = match lines.first() {
        Some(first) if first.starts_with("exit code: ") => lines.join(" "),
        Some(first) => first.to_string(),
        None => String::new(),
    };
    crate::result_text::excerpt(&joined, 300).replace('\n', " ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_failure_is_told_by_what_it_says_not_by_its_wrapper() {
        let shell = crate::result_text::wrap_untrusted(
            "exit code: 127\ncwd: .\noutput:\n/bin/sh: 2: new: not found",
        );
        assert_eq!(
            failure_line(&shell),
            "exit code: 127 output: /bin/sh: 2: new: not found"
        );
        assert_eq!(
            failure_line("`notes.txt` does not exist.\nUse list_dir to see what is there."),
            "`notes.txt` does not exist."
        );
    }
}
