//! The checks `full` makes between validation and execution: the run's first calls
//! held once when none takes a value from the request (`grounding`; twice in a lookup
//! run, the second time for an answer, see `answer_now`), calls with an
//! identifier nothing showed answered instead of run (`guesses`), the request written
//! over a file not run (`copies`), a tool's name as a shell command not run
//! (`tool_commands`), a call for another item than the task's superlative picks
//! not run once (`extreme_pick`), a write over a file the run never read not run
//! (`unread_writes`), and a failure next to another tool's success in the same reply
//! explained.

use rein_engine::Backend;
use rein_protocol::{EventSink, RunEvent};

use crate::agent::{Agent, Flow};
use crate::call_outcome::CallOutcome;
use crate::copies::{copied_note_note, copied_request_note};
use crate::extreme_pick::{wrong_pick_call_note, wrong_pick_in_call};
use crate::grounding::{enum_values, offered_values, ungrounded_note, ungrounded_values};
use crate::guesses::{guessed_identifier, guessed_note};
use crate::profile::RetryMode;
use crate::recovery::FailureClass;
use crate::rules::Rule;
use crate::state::RunState;
use crate::tool_commands::tool_as_command_note;
use crate::tool_names::READ_TOOL;
use crate::unread_writes::unread_overwrite_note;
use crate::validate::ReadyCall;

impl<B: Backend> Agent<B> {
    /// Runs `ready`, except (under `full`) the calls that pass an identifier nothing
    /// in the conversation showed: those get a result saying so, in their place.
    pub(crate) async fn run_unguessed(
        &mut self,
        run: &mut RunState,
        ready: &[ReadyCall],
        events: &mut dyn EventSink,
    ) -> Vec<CallOutcome> {
        let root = self.executor.workspace.root();
        let mut pick_refused = false;
        let rules = &self.config.rules;
        let guesses: Vec<Option<(Rule, CallOutcome)>> = ready
            .iter()
            .map(|call| {
                if !self.strategy.guards_answers() {
                    return None;
                }
                // A value the tool's own schema offers (an enum member, a const, a
                // default) is a choice the model was shown, not a guess.
                let mut offered = std::collections::HashSet::new();
                if let Some(schema) = self
                    .tools
                    .get(&call.name)
                    .and_then(|tool| tool.spec.function.parameters.as_ref())
                {
                    offered_values(schema, &mut offered);
                }
                if rules.on(Rule::GuessedIdentifier) {
                    if let Some(value) = guessed_identifier(call, &run.history, &offered, root) {
                        let outcome = CallOutcome::guessed(guessed_note(&call.name, &value));
                        return Some((Rule::GuessedIdentifier, outcome));
                    }
                }
                let read_call = |path: &str| {
                    self.info
                        .family
                        .call_text(READ_TOOL, &serde_json::json!({ "path": path }))
                };
                let workspace = &self.executor.workspace;
                let copied = || {
                    copied_request_note(call, &run.history, root).or_else(|| copied_note_note(call))
                };
                let refused = rules
                    .on(Rule::CopiedRequest)
                    .then(copied)
                    .flatten()
                    .map(|note| (Rule::CopiedRequest, CallOutcome::failed(note)))
                    .or_else(|| {
                        rules
                            .on(Rule::ToolAsCommand)
                            .then(|| {
                                tool_as_command_note(call, &self.tool_names, |name, arguments| {
                                    self.info.family.call_text(name, arguments)
                                })
                            })
                            .flatten()
                            .map(|note| (Rule::ToolAsCommand, CallOutcome::failed(note)))
                    });
                if refused.is_some() {
                    return refused;
                }
                // A call for another item than the task's superlative picks, once a
                // run: it may be a side effect that cannot be undone (a booking).
                // Several calls of one tool in a reply go over the items (the status
                // of every order): no pick is made there.
                let alone = ready.iter().filter(|other| other.name == call.name).count() == 1;
                if alone
                    && !run.memory.pick_refused
                    && !pick_refused
                    && rules.on(Rule::WrongPickCall)
                {
                    let results = run.results();
                    if let Some((pick, fixed)) =
                        wrong_pick_in_call(run.task(), &results, &call.arguments)
                    {
                        pick_refused = true;
                        let fixed_call = fixed
                            .map(|arguments| self.info.family.call_text(&call.name, &arguments));
                        let note = wrong_pick_call_note(&pick, fixed_call);
                        return Some((Rule::WrongPickCall, CallOutcome::until_step(note)));
                    }
                }
                rules
                    .on(Rule::UnreadOverwrite)
                    .then(|| {
                        unread_overwrite_note(call, workspace, &run.memory.seen_files, read_call)
                    })
                    .flatten()
                    .map(|note| (Rule::UnreadOverwrite, CallOutcome::until_step(note)))
            })
            .collect();
        for (call, refusal) in ready.iter().zip(&guesses) {
            if let Some((rule, outcome)) = refusal {
                let detail = format!("{}: {}", call.name, first_line(&outcome.text));
                run.fire(events, *rule, &detail);
            }
        }
        let guesses: Vec<Option<CallOutcome>> = guesses
            .into_iter()
            .map(|refusal| refusal.map(|(_, outcome)| outcome))
            .collect();
        run.memory.pick_refused |= pick_refused;
        let runnable: Vec<ReadyCall> = ready
            .iter()
            .zip(&guesses)
            .filter(|(_, guess)| guess.is_none())
            .map(|(call, _)| call.clone())
            .collect();
        let mut ran = self
            .executor
            .run(&runnable, run.turns, &mut run.memory, events)
            .await
            .into_iter();
        let mut outcomes: Vec<CallOutcome> = Vec::with_capacity(ready.len());
        for (call, guess) in ready.iter().zip(guesses) {
            let outcome = match guess {
                None => ran.next(),
                Some(outcome) => {
                    events.emit(&RunEvent::ToolResult {
                        turn: run.turns,
                        id: call.id.clone(),
                        name: call.name.clone(),
                        arguments: call.arguments.clone(),
                        group: 0,
                        ok: false,
                        timed_out: false,
                        output: outcome.text.clone(),
                        ms: 0,
                    });
                    Some(outcome)
                }
            };
            // The executor answers every call it is given; a missing outcome is the
            // same internal error it reports for one.
            outcomes.push(
                outcome.unwrap_or_else(|| CallOutcome::failed("internal error: not run".into())),
            );
        }
        if self.strategy.guards_answers() && self.config.rules.on(Rule::BatchDependency) {
            for noted in note_batch_dependencies(ready, &mut outcomes) {
                let detail = format!("{}: needs a result of the same reply", ready[noted].name);
                run.fire(events, Rule::BatchDependency, &detail);
            }
        }
        outcomes
    }

    /// The run's first calls, held once when none of them takes a value from the
    /// request (see `grounding`): the retry may answer directly.
    pub(crate) fn hold_ungrounded(
        &self,
        run: &mut RunState,
        ready: &[ReadyCall],
        events: &mut dyn EventSink,
    ) -> Option<Flow> {
        let held_before = run
            .recoveries
            .get(&FailureClass::Ungrounded)
            .copied()
            .unwrap_or_default();
        // Held once; in a lookup run, a second such call is a request no tool fits.
        let again = held_before == 1
            && crate::answer_now::lookup_run(&run.memory)
            && ready.iter().all(|call| self.executor.is_lookup(call));
        let first_calls = run.tool_calls == 0
            && (held_before == 0 || again)
            && self.strategy.guards_answers()
            && self.config.grounding_check
            && self.config.rules.on(Rule::UngroundedFirstCall)
            && (!again || self.config.rules.on(Rule::NoToolFits));
        if !first_calls || ready.is_empty() {
            return None;
        }
        // The commands the system prompt said the workspace's manifests imply
        // (`python3 -m pytest`) were given to the model too.
        let commands = crate::facts::likely_commands(&run.facts);
        let request = run.task().to_string();
        let root = self.executor.workspace.root();
        let mut held = Vec::with_capacity(ready.len());
        for call in ready {
            let mut enums = std::collections::HashSet::new();
            if let Some(tool) = self.tools.get(&call.name) {
                if let Some(schema) = &tool.spec.function.parameters {
                    enum_values(schema, &mut enums);
                }
            }
            held.push(ungrounded_values(call, &request, root, &enums, &commands)?);
        }
        let first = &ready[0];
        let detail = format!("{}: {}", first.name, held[0].join(", "));
        let rule = match again {
            true => Rule::NoToolFits,
            false => Rule::UngroundedFirstCall,
        };
        run.fire(events, rule, &detail);
        let note = match again {
            true => {
                // The retry is decoded as the answer, from what the model knows.
                run.answer_only = true;
                run.from_knowledge = true;
                crate::answer_now::no_tool_fits_note(&first.name, run.task())
            }
            false => ungrounded_note(&first.name, &held[0]),
        };
        Some(self.retry(
            run,
            FailureClass::Ungrounded,
            &detail,
            Some(note),
            RetryMode::Same,
            events,
        ))
    }
}

/// A call that failed after another tool's call in the same reply succeeded may have
/// needed that result (`get_ci_status` with `sha: "latest"` next to the `get_branch`
/// that gives the sha): its result says so.
/// The indexes of the calls noted so.
fn note_batch_dependencies(ready: &[ReadyCall], outcomes: &mut [CallOutcome]) -> Vec<usize> {
    let mut noted = Vec::new();
    for index in 1..ready.len().min(outcomes.len()) {
        let outcome = &outcomes[index];
        if outcome.ok || outcome.repeated || outcome.guessed || outcome.timed_out {
            continue;
        }
        let earlier = (0..index).find(|&before| {
            outcomes[before].ok
                && !outcomes[before].repeated_success
                && ready[before].name != ready[index].name
        });
        if let Some(before) = earlier {
            let tool = &ready[before].name;
            outcomes[index].text.push_str(&format!(
                "\n(This call was made in the same reply as `{tool}`, before its result existed. If it needs a value from that result, call it again with that value.)"
            ));
            noted.push(index);
        }
    }
    noted
}

/// The first line of a refusal, for the trace.
fn first_line(text: &str) -> &str {
    text.lines().next().unwrap_or_default()
}
