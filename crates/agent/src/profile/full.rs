//! `full`: everything rein has. A lazy call grammar (free text until the family's call
//! marker), the repairing reader (bare JSON calls, obvious name variants), a note that
//! says what to fix for every failure, a larger allowance for a call the limit cut
//! (a reply cut for looping is retried with a note instead, unless its complete calls
//! include a new one: those run),
//! calls-only decoding after a call written in the wrong format, and the verification
//! guard.

use rein_engine::{Completion, ReadMode};
use rein_format::{hermes::ParseError, Family, ReplyProblem, ToolFormat};
use rein_protocol::ToolChoice;
use serde_json::json;

use super::{ReadContext, RetryMode, Shape, Step, Strategy};
use crate::recovery::{self, FailureClass};

/// The `full` profile.
pub(crate) struct Full;

/// The call example shown in format notes, in `family`'s syntax.
fn call_example(family: Family) -> String {
    match family {
        Family::Hermes | Family::Generic => {
            "<tool_call>\n{\"name\": \"list_dir\", \"arguments\": {\"path\": \".\"}}\n</tool_call>"
                .to_string()
        }
        other => other.call_text("list_dir", &json!({"path": "."})),
    }
}

/// The lines of `text` before the first line that repeats an earlier one; empty when
/// no line repeats (the loop was inside a line).
fn lines_once(text: &str) -> String {
    let mut seen = std::collections::HashSet::new();
    let mut kept = Vec::new();
    for line in text.lines() {
        if !line.trim().is_empty() && !seen.insert(line.trim()) {
            return kept.join("\n").trim().to_string();
        }
        kept.push(line);
    }
    String::new()
}

impl Strategy for Full {
    fn shape(&self, tool_format: ToolFormat, forced: Option<&ToolChoice>) -> Shape {
        Shape {
            tools: true,
            tool_format,
            choice: forced.cloned().unwrap_or(ToolChoice::Auto),
            constrained: true,
            read: ReadMode::REPAIR,
            stop: Vec::new(),
        }
    }

    fn read(&self, completion: &Completion, context: ReadContext<'_>) -> Step {
        let reply = &completion.reply;
        if completion.looped && !reply.calls.is_empty() && context.new_call {
            // A first plan that repeats its call over and over (`read_file` of one path
            // eight times): the calls written in full run, identical ones once.
            return Step::calls(reply);
        }
        if completion.looped && context.answering && reply.calls.is_empty() {
            // An answer that says its line again and again (the result it was shown,
            // three times): its lines up to the first repeat are the answer.
            let text = reply.content.as_deref().map(lines_once).unwrap_or_default();
            if !text.trim().is_empty() {
                return Step::Answer(text);
            }
        }
        if completion.looped {
            // Cut early for repeating itself: a larger allowance would only repeat
            // more. The retry samples hotter (see the retry heat).
            return Step::retry(
                FailureClass::Repetition,
                "the reply kept repeating itself and was cut",
                Some(recovery::LOOP_NOTE.to_string()),
                RetryMode::Same,
            );
        }
        // A forced retry is read like any reply: a text answer is still an answer.
        match reply
            .problems
            .iter()
            .find(|p| **p != ReplyProblem::CallMissing)
        {
            Some(ReplyProblem::Parse(ParseError::Truncated)) => {
                return Step::retry(
                    FailureClass::Truncated,
                    "the reply hit the token limit inside a call",
                    None,
                    RetryMode::LargerAllowance,
                )
            }
            Some(ReplyProblem::Parse(error)) => {
                let reason = error.to_string();
                let note = recovery::format_note(&reason, &call_example(context.family));
                return Step::retry(FailureClass::Format, reason, Some(note), RetryMode::Same);
            }
            Some(ReplyProblem::InventedTool(name)) => {
                // The reply is nothing but a call, to a tool that does not exist: not
                // an answer. Say which tools there are and decode the retry under the
                // calls-only grammar.
                let names: Vec<&str> = context.tool_names.iter().map(String::as_str).collect();
                return Step::retry(
                    FailureClass::UnknownTool,
                    ReplyProblem::InventedTool(name.clone()).to_string(),
                    Some(recovery::unknown_tool_note(name, &names)),
                    RetryMode::CallsOnly,
                );
            }
            Some(problem @ ReplyProblem::Misformatted(calls)) => {
                // Calls in another format (`<tools>`, fenced JSON in prose): the intent
                // is clear, so the retry shows the calls in the right format and is
                // decoded under the calls-only grammar; several calls stay several
                // (three stock prices asked at once are three calls in one reply).
                let reason = problem.to_string();
                let note = recovery::format_note(&reason, &calls.join("\n"));
                let mode = match calls.len() {
                    1 => RetryMode::CallsOnly,
                    _ => RetryMode::SeveralCalls,
                };
                return Step::retry(FailureClass::Format, reason, Some(note), mode);
            }
            Some(ReplyProblem::CallMissing) | None => {}
        }
        if !reply.calls.is_empty() {
            return Step::calls(reply);
        }
        let text = reply.content.clone().unwrap_or_default();
        if says_nothing(&text) {
            // After a failed call, an empty reply is most often a step not taken: the
            // note says what failed instead of inviting a claim that all is done, and
            // the retry is decoded as a call (asked the same way, a small model ends
            // its reply at once again and again).
            let (note, mode) = match (context.latest_failure, context.planned) {
                (Some(failure), _) => (format!(
                    "Your last reply was empty. The last call failed: {failure}\nThe task is not done yet: make the corrected call now."
                ), RetryMode::CallsOnly),
                // A call that waited for the latest result is the step to take.
                (None, [_, ..]) => (format!(
                    "Your last reply was empty. Your earlier reply also called {}, which has not run yet (it waited for the result that is here now): make that call now, with values from the results above.",
                    crate::guards::backticked_list(context.planned)
                ), RetryMode::CallsOnly),
                // "Say what you did" got "The task is done." for a question.
                (None, []) => ("Your last reply was empty. If the results above answer the task, reply with that answer, taken from them, in one or two sentences (or, for a change, what you changed); otherwise call the next tool.".to_string(), RetryMode::NotBlank),
            };
            return Step::retry(
                FailureClass::Format,
                crate::recovery::EMPTY_REPLY,
                Some(note),
                mode,
            );
        }
        Step::Answer(text)
    }

    fn explains_rejections(&self) -> bool {
        true
    }

    fn guards_answers(&self) -> bool {
        true
    }
}

/// Whether `text` holds no words outside bare markup: empty, or only tags without
/// attributes and fences (`<tools></tools>`, an empty fenced block), which no answer
/// is. A tag with attributes (`<tool name="read_file" …/>`) is a call gone wrong, not
/// nothing.
fn says_nothing(text: &str) -> bool {
    let bare_tag = |tag: &str| {
        let name = tag.trim_start_matches('<').trim_start_matches('/');
        let name = name.trim_end_matches('>');
        !name.is_empty() && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
    };
    let mut rest = text;
    let mut words = String::new();
    while let Some(open) = rest.find('<') {
        words.push_str(&rest[..open]);
        match rest[open..].find('>') {
            Some(close) if bare_tag(&rest[open..=open + close]) => {
                rest = &rest[open + close + 1..];
            }
            _ => {
                words.push('<');
                rest = &rest[open + 1..];
            }
        }
    }
    words.push_str(rest);
    words
        .lines()
        .map(str::trim)
        .all(|line| line.is_empty() || line.starts_with("```"))
}

#[cfg(test)]
mod tests {
    use super::{lines_once, says_nothing};

    #[test]
    fn markup_without_words_says_nothing() {
        for text in [
            "",
            "  \n",
            "<tools></tools>",
            "<tool_call>\n</tool_call>",
            "```json\n```",
        ] {
            assert!(says_nothing(text), "{text:?}");
        }
        for text in [
            "42",
            "<b>42</b>",
            "a < b",
            "```\nls\n```",
            "<tools>\n<tool name=\"read_file\" />\n</tools>",
        ] {
            assert!(!says_nothing(text), "{text:?}");
        }
    }

    #[test]
    fn a_looped_answer_keeps_its_lines_up_to_the_first_repeat() {
        let looped = "BTC/USD: 67412.50\nBTC/USD: 67412.50\nBTC/USD: 67412.50\nBTC/";
        assert_eq!(lines_once(looped), "BTC/USD: 67412.50");
        let two = "Oslo: 9.4 °C\nMadrid: 31.7 °C\n\nOslo: 9.4 °C\nMad";
        assert_eq!(lines_once(two), "Oslo: 9.4 °C\nMadrid: 31.7 °C");
        // A loop inside one line is no answer.
        assert_eq!(lines_once("ha ha ha ha ha ha"), "");
    }
}
