//! What becomes of an answer: the final one, or held back once more when it is not an
//! answer yet (see `guards`). Holds are bounded per run, so a run always ends.

use rein_engine::Backend;
use rein_protocol::{EventSink, Message, RunEvent, StopReason};

use crate::agent::{Agent, Flow};
use crate::answer_text::{
    after_check, asks_to_be_shown, echoes_a_read, echoes_a_result, echoes_the_note, first_line,
    result_tags_inner, shorten, tagged_result, talks_about_tools,
};
use crate::guards::Held;
use crate::named_files::meant_file;
use crate::not_an_answer::{
    already_ran_note, explained_steps_note, mentions_tool, named_tool, not_an_answer, NotAnswer,
};
use crate::profile::RetryMode;
use crate::recovery::FailureClass;
use crate::rules::Rule;
use crate::state::RunState;
use crate::supported::unsupported_value;
use crate::task_asks::{content_hash, missing_output};
use crate::tool_names::{LIST_TOOL, READ_TOOL, SEARCH_TOOL, WRITE_TOOL};

/// Results of one reply's calls of a tool a note shows at most.
const BATCH_SHOWN: usize = 4;

impl<B: Backend> Agent<B> {
    /// The flow after the model answered `text`.
    pub(crate) fn on_answer(
        &self,
        run: &mut RunState,
        text: String,
        events: &mut dyn EventSink,
    ) -> Flow {
        // An answer in the template's result tags that repeats a result the tools
        // gave is that result; any other text in those tags is held (below).
        let text = match self.strategy.guards_answers() {
            true => match result_tags_inner(&text) {
                // Not a result that found nothing: that is no answer.
                // Nor a file's text copied back for a task that asks to be told
                // nothing: "carry out its release procedure" is not done by
                // reciting the procedure.
                Some(inner)
                    if echoes_a_result(run, inner)
                        && !run.latest_found_nothing
                        && (asks_to_be_shown(run.task()) || !echoes_a_read(run, inner)) =>
                {
                    inner.to_string()
                }
                _ => text,
            },
            false => text,
        };
        // No tool fits: a reply about the tools ("No tool fits.", "No tool can run.")
        // or a copy of the note is not the answer the question wants; asked once more,
        // as an answer.
        if run.from_knowledge
            && self.strategy.guards_answers()
            && self.config.rules.on(Rule::TalksAboutTools)
            && (talks_about_tools(&text) || echoes_the_note(run, &text))
            && run.holds.allow(&Held::NotAnAnswer(NotAnswer::EchoesNote))
        {
            run.fire(events, Rule::TalksAboutTools, &text);
            run.answer_only = true;
            let note = format!(
                "That was not an answer: it talks about the tools, and no tool is needed here. Answer the question itself, from what you know, in one or two sentences: {}",
                run.task()
            );
            return self.retry_not_an_answer(run, &text, note, events);
        }
        let echoes = self.strategy.guards_answers()
            && self.config.rules.on(Rule::NotAnAnswer)
            && echoes_the_note(run, &text);
        let held = match echoes {
            true => Some(Held::NotAnAnswer(NotAnswer::EchoesNote)),
            // No tool fits: the answer is the model's own ("12 × 12 = 144 … the final
            // answer is:"), however it is worded.
            false if run.from_knowledge => None,
            false => self.held(run, &text),
        };
        let Some(held) = held else {
            return Flow::Stop((StopReason::Answered, Some(after_check(run, text)), None));
        };
        if !run.holds.allow(&held) {
            return Flow::Stop((StopReason::Answered, Some(after_check(run, text)), None));
        }
        let detail = format!("{}: {}", held.kind(), first_line(&text));
        run.fire(events, held.rule(), &detail);
        if let Held::NotAnAnswer(why) = &held {
            // Steps explained to the user after a step that worked are most often
            // the answer not given yet: the latest result is shown like a narrated one.
            let echoed = *why == NotAnswer::EchoesNote;
            // So is a claim that the task is done, or the task given back: the latest
            // result is shown again, for the answer it holds.
            let empty = matches!(
                why,
                NotAnswer::ClaimsDone | NotAnswer::EchoesTask | NotAnswer::NamesACall
            );
            // An announced plan after a step that worked is treated the same way.
            let explains = matches!(why, NotAnswer::ExplainsSteps | NotAnswer::Announces);
            // Talk of another tool around a value the latest result gave ("you can use
            // `get_event` with the id EVT-6120" after the create returned EVT-6120) is
            // that result's answer, half given: the latest result is shown again too.
            let quotes =
                matches!(why, NotAnswer::Narrates(_)) && self.quotes_latest_result(run, &text);
            let any_tool = explains || echoed || quotes || empty;
            // A plan to read a file nothing has read ("To read the
            // `conf/prod/limits.toml` file, I will use `read_file`") is a step still to
            // take, whatever ran before: its note (below) shows that read.
            let unread = self.tool_names.iter().any(|t| t == READ_TOOL)
                && meant_file(&text, &run.history, &self.executor.workspace, &run.memory).is_some();
            // A result the reply wrote itself after its plan: the plan is the step.
            let made_up = matches!(why, NotAnswer::PlanThenMadeUpResult(_));
            let done = match unread || made_up {
                true => None,
                false => self.ran_already(run, &text, any_tool, quotes),
            };
            if let Some((tool, result)) = done {
                // It talks about a tool that already ran: the step is done, so the
                // retry gets its result again and is read as an answer; after a
                // repeated call it is decoded as one.
                let note = match explains {
                    true => explained_steps_note(&tool, &result),
                    false => already_ran_note(why, &tool, &result),
                };
                let note = self.with_meant_file(run, &text, note);
                // A copied note came from an answer-only turn: so is its retry.
                run.answer_only |= run.repeats >= 1 || echoed;
                return self.retry_not_an_answer(run, &text, note, events);
            }
        }
        match held {
            Held::Unverified(files) => {
                // The answer stays: the check it asks for completes it.
                events.emit(&RunEvent::VerificationRequested {
                    turn: run.turns,
                    files: files.clone(),
                });
                run.answer_before_check = Some((text.clone(), run.tool_calls));
                run.history.push(Message::assistant(text));
                run.history
                    .push(Message::user(Held::Unverified(files).note()));
                Flow::Next
            }
            other => {
                // Not kept: the retry sees the clean history and the note, and it is
                // decoded as a call (the step it talked about, or the one before it).
                let (class, mode) = match other {
                    // With results in hand, the retry is the write itself; the
                    // answer-only decoding of a repeat gives way to it. A reply that
                    // talks of another step to take first (read a file, search) is
                    // let take it: a write forced then holds what was not found.
                    Held::MissingOutput(_, false)
                        if run.memory.results_in_hand()
                            && self.tool_names.iter().any(|t| t == WRITE_TOOL) =>
                    {
                        run.answer_only = false;
                        (FailureClass::MissingOutput, RetryMode::WriteOutput)
                    }
                    Held::MissingOutput(..) => {
                        run.answer_only = false;
                        (FailureClass::MissingOutput, RetryMode::CallsOnly)
                    }
                    // The retry is the write itself, or another step before it.
                    Held::NothingWritten => {
                        run.answer_only = false;
                        (FailureClass::MissingOutput, RetryMode::CallsOnly)
                    }
                    // "No change was needed" stays a possible answer.
                    Held::NothingChanged => {
                        run.answer_only = false;
                        (FailureClass::NotAnAnswer, RetryMode::Same)
                    }
                    // The answer itself, from what was written or found: decoded as
                    // one.
                    Held::StoredInstead(..) | Held::NoPath(..) | Held::NearMissPath(..) => {
                        run.answer_only = true;
                        (FailureClass::NotAnAnswer, RetryMode::Same)
                    }
                    // A focused answer's value or pick is asked again on the
                    // focused context, with the note (see `focused_answer`).
                    Held::Unsupported(..) | Held::WrongPick(_) => {
                        run.answer_only |= run.focused.is_some();
                        (FailureClass::NotAnAnswer, RetryMode::Same)
                    }
                    // The planned call may turn out not to be needed: an answer
                    // stays possible.
                    Held::PlannedCalls(_) => (FailureClass::NotAnAnswer, RetryMode::Same),
                    // A file's text copied back, or a placeholder: the value a result
                    // holds may be the answer, or a call may find it.
                    Held::NotAnAnswer(NotAnswer::CopiesRead | NotAnswer::Placeholder(_)) => {
                        (FailureClass::NotAnAnswer, RetryMode::Same)
                    }
                    // A call written as plain text (an answer-only turn): asked again.
                    _ if rein_format::read::bare_calls(&text).is_some() => {
                        (FailureClass::NotAnAnswer, RetryMode::Same)
                    }
                    _ => (FailureClass::NotAnAnswer, RetryMode::CallsOnly),
                };
                let detail = format!("{}: {}", other.kind(), first_line(&text));
                let note = match (&other, mode) {
                    (Held::MissingOutput(file, _), RetryMode::WriteOutput) => {
                        // What the task says goes in it ("just that code"), in its words.
                        let says = crate::task_asks::sentence_naming(run.task(), file)
                            .map(|sentence| format!(" The task says: \"{sentence}\""))
                            .unwrap_or_default();
                        // The value the held reply itself named, when a result shows it.
                        let results = run.results();
                        let named = crate::output_file::quoted_result_value(
                            &text,
                            &results,
                            file,
                            run.task(),
                        )
                            .map(|value| format!(" Your reply named `{value}`: if that is the text the task asks for, write just that."))
                            .unwrap_or_default();
                        format!(
                            "The task asks for `{file}`, and it does not exist yet. Write it now with {WRITE_TOOL}: path `{file}`, and as content the whole text the task asks for, taken from the results above.{says}{named} Then reply with a short final answer."
                        )
                    }
                    (Held::NotAnAnswer(_), _) => self.with_meant_file(run, &text, other.note()),
                    (Held::Unchanged(file), _) => match self.described_edit(file, &text) {
                        Some(edit) => format!(
                            "{}\nYour answer describes this change; make it with:\n{}",
                            other.note(),
                            self.edit_call(file, &edit)
                        ),
                        None => other.note(),
                    },
                    (Held::DescribedEdit(file, edit), _) => format!(
                        "Not done yet: `{file}` is still unchanged, and your answer describes the change. Make it now:\n{}\nthen reply with a short final answer.",
                        self.edit_call(file, edit)
                    ),
                    (Held::NotLooked(Some(named)), _) => {
                        match self.look_first(named, "answer from what it shows") {
                            Some(look) => format!(
                                "Not answered yet: no call has looked at the workspace. {look}"
                            ),
                            None => other.note(),
                        }
                    }
                    _ => other.note(),
                };
                // A focused answer's value, pick or path: the note says what is
                // wrong with it, and the retry, focused too, gets it.
                run.focused_note = run.focused.is_some()
                    && matches!(
                        other,
                        Held::Unsupported(..)
                            | Held::WrongPick(_)
                            | Held::NoPath(..)
                            | Held::NearMissPath(..)
                            | Held::StoredInstead(..)
                    );
                self.retry(run, class, &detail, Some(note), mode, events)
            }
        }
    }

    /// The same request again with `note`, for a reply `text` that is not an answer.
    fn retry_not_an_answer(
        &self,
        run: &mut RunState,
        text: &str,
        note: String,
        events: &mut dyn EventSink,
    ) -> Flow {
        let detail = format!("not_an_answer: {}", first_line(text));
        self.retry(
            run,
            FailureClass::NotAnAnswer,
            &detail,
            Some(note),
            RetryMode::Same,
            events,
        )
    }

    /// A tool that already ran with success, and its latest result: the one `text`
    /// talks about if it ran, else the latest that succeeded. `None` when `text` names
    /// no tool, unless `any_tool`, and when it names one that has not run, unless
    /// `quotes_result` (it quotes the latest result).
    fn ran_already(
        &self,
        run: &RunState,
        text: &str,
        any_tool: bool,
        quotes_result: bool,
    ) -> Option<(String, String)> {
        let named = named_tool(text, &self.tool_names);
        if named.is_none() && !any_tool {
            return None;
        }
        let results_of = |tool: &str| -> Vec<&String> {
            let prefix = format!("{tool}\u{0}");
            run.memory
                .succeeded_calls
                .iter()
                .filter(|(key, _)| key.starts_with(&prefix))
                .map(|(_, (result, _))| result)
                .collect()
        };
        // It names a tool that has not run ("I will call `book_flight`" after the
        // search): that step is still to be taken, whatever else ran; unless the text
        // quotes the latest result, whose value is the answer.
        let lower = text.to_lowercase();
        let not_run = self.tool_names.iter().any(|tool| {
            crate::not_an_answer::mentions_tool(&lower, tool) && results_of(tool).is_empty()
        });
        if not_run && !quotes_result {
            return None;
        }
        // The latest successful result in the history, of `tool` or of any tool,
        // with the other results of that tool the same reply's calls gave (the
        // weather of both cities asked at once).
        let succeeded = |m: &rein_protocol::Message, tool: Option<&str>| {
            let name = m.name.as_deref()?;
            let content = m.content.as_ref()?;
            (m.role == rein_protocol::Role::Tool
                && tool.is_none_or(|t| t == name)
                && results_of(name).contains(&content))
            .then(|| (name.to_string(), content.clone()))
        };
        let latest = |tool: Option<&str>| {
            let last = run
                .history
                .iter()
                .rposition(|m| succeeded(m, tool).is_some())?;
            let (name, _) = succeeded(&run.history[last], tool)?;
            let batch = run.history[..=last]
                .iter()
                .rev()
                .take_while(|m| m.role == rein_protocol::Role::Tool)
                .filter_map(|m| succeeded(m, Some(&name)))
                .take(BATCH_SHOWN)
                .map(|(_, content)| shorten(&content))
                .collect::<Vec<_>>();
            let shown: Vec<String> = batch.into_iter().rev().collect();
            Some((name, shown.join("\n")))
        };
        named
            .and_then(|tool| latest(Some(tool)))
            .or_else(|| latest(None))
    }

    /// `note`, and the call that reads the file `text` means by a bare name, when a
    /// result named such a file and nothing read it yet (a plan to "read
    /// `limits.toml`" for the `conf/prod/limits.toml` a config file names).
    fn with_meant_file(&self, run: &RunState, text: &str, note: String) -> String {
        if !self.tool_names.iter().any(|t| t == READ_TOOL) {
            return note;
        }
        match meant_file(text, &run.history, &self.executor.workspace, &run.memory) {
            Some(path) => format!(
                "{note}\nThe file you mean is most likely `{path}`; read it with:\n{}",
                self.info
                    .family
                    .call_text(READ_TOOL, &serde_json::json!({ "path": path }))
            ),
            None => note,
        }
    }

    /// Why `text` is not the final answer yet, if it is not.
    fn held(&self, run: &RunState, text: &str) -> Option<Held> {
        if !self.strategy.guards_answers() {
            return None;
        }
        // A hold applies when its rule is on and its cap has room.
        let room = |held: &Held| self.config.rules.on(held.rule()) && run.holds.has_room(held);
        if self.config.answer_guards {
            // A call the reader could not take, or a result the model wrote itself,
            // comes before the missing output file: that hold is spent once, and a
            // write now would copy what no tool returned.
            // A real result quoted in result tags after some words is an answer
            // that shows its source, not a made-up one.
            // (Written inside a string, its quotes and line ends escaped.)
            let why = not_an_answer(text, &self.tool_names)
                .filter(|why| {
                    !matches!(why, NotAnswer::PlanThenMadeUpResult(_))
                        || !tagged_result(text).is_some_and(|inner| {
                            let unescaped = inner.replace("\\\"", "\"").replace("\\n", "\n");
                            echoes_a_result(run, inner) || echoes_a_result(run, unescaped.trim())
                        })
                })
                // A line a search or read gave, copied as the answer, is no list of
                // steps though it ends in a colon (`store/a.py:1: class Repo:`).
                .filter(|why| {
                    *why != NotAnswer::ExplainsSteps
                        || !(text.trim().contains(' ') && echoes_a_result(run, text.trim()))
                })
                .or_else(|| crate::empty_answer::empty_answer(text, run.task()))
                .or_else(|| {
                    crate::empty_answer::placeholder(text, run.task(), &run.results())
                        .map(NotAnswer::Placeholder)
                });
            if let Some(call_shaped) = why.clone().filter(NotAnswer::is_call_shaped) {
                let held = Held::NotAnAnswer(call_shaped);
                if room(&held) {
                    return Some(held);
                }
            }
            // The missing output file next: its note says exactly what to do next.
            if let Some(file) = &run.memory.output_file {
                if run.holds.missing_output == 0
                    && self.config.rules.on(Rule::MissingOutput)
                    && missing_output(self.executor.workspace.root(), file)
                {
                    // A reply that talks of another step than the write (a plan, an
                    // announced or narrated look) is let take that step.
                    let lower = text.to_lowercase();
                    let names_another_tool = self
                        .tool_names
                        .iter()
                        .filter(|tool| *tool != WRITE_TOOL)
                        .any(|tool| mentions_tool(&lower, tool));
                    let other_step = match &why {
                        Some(NotAnswer::Narrates(_)) => names_another_tool,
                        Some(
                            NotAnswer::Announces
                            | NotAnswer::ExplainsSteps
                            | NotAnswer::PlanThenMadeUpResult(_),
                        ) => names_another_tool || !mentions_tool(&lower, WRITE_TOOL),
                        _ => false,
                    };
                    let held = Held::MissingOutput(file.clone(), other_step);
                    if room(&held) {
                        return Some(held);
                    }
                }
            }
            // Talk of an edit of the file the task asks to change ("replace the line
            // `api:chart-lib:2.9.0` with …") that decides the line: the ready call is
            // the most useful note.
            if let (Some(_), Some((file, hash))) = (&why, &run.memory.file_to_change) {
                if content_hash(&self.executor.workspace, file) == Some(*hash) {
                    if let Some(edit) = self.described_edit(file, text) {
                        let held = Held::DescribedEdit(file.clone(), edit);
                        if room(&held) {
                            return Some(held);
                        }
                    }
                }
            }
            // A hold whose cap is spent gives way to the next one that applies.
            if let Some(why) = why {
                let held = Held::NotAnAnswer(why);
                if room(&held) {
                    return Some(held);
                }
            }
            if let Some((file, hash)) = &run.memory.file_to_change {
                if content_hash(&self.executor.workspace, file) == Some(*hash) {
                    let held = Held::Unchanged(file.clone());
                    if room(&held) {
                        return Some(held);
                    }
                    // Held once more when the answer says which line to change.
                    if let Some(edit) = self.described_edit(file, text) {
                        let held = Held::DescribedEdit(file.clone(), edit);
                        if room(&held) {
                            return Some(held);
                        }
                    }
                }
            }
            if run.memory.expects_write && run.memory.changes == 0 && room(&Held::NothingWritten) {
                return Some(Held::NothingWritten);
            }
            if let Some(held) = self.not_looked(run, text) {
                return Some(held);
            }
            // An answer that states a value the latest result computed (a tool that
            // does more than show a file: a query, a command) answers from it ("Add
            // up the orders column…" asks to be told): not held.
            let computed = run
                .memory
                .succeeded_order
                .last()
                .and_then(|(key, _)| crate::validate::call_key_parts(key))
                .is_some_and(|(tool, _)| ![READ_TOOL, SEARCH_TOOL, LIST_TOOL].contains(&tool));
            if run.memory.expects_change
                && run.memory.changes_made == 0
                && room(&Held::NothingChanged)
                && !(computed && self.quotes_latest_result(run, text))
            {
                return Some(Held::NothingChanged);
            }
            let results = run.results();
            if let Some(pick) = crate::extreme_pick::wrong_pick(run.task(), &results, text) {
                let held = Held::WrongPick(pick);
                if room(&held) {
                    return Some(held);
                }
            }
            // An answer taken from the latest result is not held for a call that waited
            // for it: that call was most often the model's other way to the same value.
            // Nor is an answer asked from the evidence: the loop had decided the next
            // reply answers (the 0.5B model's answer naming the failed test was held
            // for an `edit_file` sprayed seven turns before, on the run's last turn).
            let planned = Held::PlannedCalls(run.memory.planned.clone());
            if !run.memory.planned.is_empty()
                && run.focused.is_none()
                && room(&planned)
                && !self.quotes_latest_result(run, text)
            {
                return Some(planned);
            }
            if let Some((path, content)) =
                crate::stored_answer::stored_instead(text, run.task(), &run.memory)
            {
                let held = Held::StoredInstead(path, content);
                if room(&held) {
                    return Some(held);
                }
            }
            // A value nothing showed, once a tool has run (before, an answer may be
            // the model's own knowledge: a request no tool fits).
            if !run.memory.succeeded_calls.is_empty() {
                let root = self.executor.workspace.root();
                if let Some(value) = unsupported_value(text, &run.history, &run.results_seen, root)
                {
                    let meant = crate::supported::longer_path_named(&value, &run.history);
                    let held = Held::Unsupported(value, meant);
                    if room(&held) {
                        return Some(held);
                    }
                }
            }
            // A question of which file, answered without a file's path while a
            // result names one.
            let root = self.executor.workspace.root();
            if crate::path_answer::asks_for_a_path(run.task())
                && !crate::path_answer::names_a_file(text, root)
            {
                // A path that misses one file only by case or a leading dot: the
                // answer is the model's to give again, told which file exists.
                if let Some((said, path)) = crate::path_answer::near_miss(text, root) {
                    // Held once; given again, it is the model's answer as written.
                    let held = Held::NearMissPath(said, path);
                    return room(&held).then_some(held);
                }
                if let Some((tool, result)) =
                    crate::path_answer::result_naming_a_file(&run.history, root)
                {
                    let held = Held::NoPath(tool, result);
                    if room(&held) {
                        return Some(held);
                    }
                }
            }
        }
        let unverified = &run.memory.unverified_edits;
        (self.config.verification_guard
            && self.config.rules.on(Rule::Unverified)
            && !unverified.is_empty())
        .then(|| Held::Unverified(unverified.iter().cloned().collect()))
    }
}
