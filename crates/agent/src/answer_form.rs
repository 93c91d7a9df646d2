//! Answers in the form the task asks. A task that asks for a bare value ("Reply with
//! just the number", "id only, please", "only the value of `port`, nothing else") and
//! gets a sentence is asked once more — its answer in the history — for that value
//! alone, and the reply is decoded under a grammar that admits only the values the
//! model's own answer states: its numbers, for a number; otherwise its words, quoted
//! and code spans. The value is the model's; the harness only holds it to the form the
//! task named. The task is read once, by the shape of the request (a reply verb or a
//! short clause, `just`/`only` and the kind of value), not by the words of any task.

use std::time::Duration;

use regex::Regex;
use rein_engine::{Backend, ReadMode, TurnRequest};
use rein_protocol::{EventSink, Message, RunEvent};
use rein_schema::{Schema, SchemaKind};
use serde_json::Value;

use crate::agent::Agent;
use crate::rules::Rule;
use crate::state::RunState;

/// The kind of bare value a task asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Form {
    /// A number (a count, a total, an amount).
    Number,
    /// One value (a name, an id, a path, a code, a setting's value).
    Value,
}

/// What the task asks the answer to be: the form and the noun it names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct AskedForm {
    pub form: Form,
    pub noun: String,
}

/// The nouns of a number.
const NUMBER_NOUNS: &str = "number|count|total|sum|amount|figure";
/// The nouns of one value.
const VALUE_NOUNS: &str =
    "value|name|id|identifier|path|code|word|date|time|key|version|filename|file\\s+name|result";
/// Candidate values offered at most.
const CANDIDATES: usize = 60;
/// Words a clause may have and still be a bare request without a reply verb
/// ("Just the number.", "Name only, please.").
const SHORT_CLAUSE: usize = 6;

/// The bare value `task` asks for, when it asks for one.
pub(crate) fn asked_form(task: &str) -> Option<AskedForm> {
    let nouns = format!("{NUMBER_NOUNS}|{VALUE_NOUNS}");
    let before = Regex::new(&format!(
        r"(?i)\b(?:just|only)\s+(?:(?:the|its|their|a|one)\s+(?:[\w'-]+\s+)?)?({nouns})\b"
    ))
    .ok()?;
    let after = Regex::new(&format!(r"(?i)\b({nouns})\s+only\b")).ok()?;
    let reply_verb =
        Regex::new(r"(?i)\b(?:reply|respond|answer|give|tell|return|print|output|say)\b").ok()?;
    let clauses = Regex::new(r"[.!?;:,\x{2014}](?:\s|$)|\n").ok()?;
    for clause in clauses.split(task) {
        let found = before
            .captures(clause)
            .filter(|caps| {
                let start = caps.get(0).map_or(0, |m| m.start());
                !clause[..start].to_lowercase().trim_end().ends_with("not")
            })
            .or_else(|| after.captures(clause));
        let Some(noun) = found.and_then(|caps| caps.get(1)) else {
            continue;
        };
        let short = clause.split_whitespace().count() <= SHORT_CLAUSE;
        if !short && !reply_verb.is_match(clause) {
            continue;
        }
        let noun = noun.as_str().to_lowercase();
        let number = NUMBER_NOUNS.split('|').any(|n| n == noun);
        return Some(AskedForm {
            form: if number { Form::Number } else { Form::Value },
            noun: noun.split_whitespace().collect::<Vec<_>>().join(" "),
        });
    }
    None
}

/// `answer` without what may wrap a bare value (quotes, backticks, bold, a final stop).
fn unwrapped(answer: &str) -> &str {
    let wrapping = |c: char| "`\"'*".contains(c);
    answer
        .trim()
        .trim_end_matches('.')
        .trim_matches(wrapping)
        .trim_end_matches('.')
        .trim()
}

/// Whether `answer` already is a bare value of `form`.
pub(crate) fn is_bare(answer: &str, form: Form) -> bool {
    let value = unwrapped(answer);
    match form {
        Form::Number => value.replace(',', "").parse::<f64>().is_ok(),
        Form::Value => {
            !value.is_empty() && !value.contains('\n') && value.split_whitespace().count() <= 3
        }
    }
}

/// The values `answer` states that a bare answer of `form` may be, in order.
pub(crate) fn candidates(answer: &str, form: Form) -> Vec<String> {
    let mut found: Vec<String> = Vec::new();
    let mut add = |value: &str| {
        let value = value.trim();
        if !value.is_empty() && value.len() <= 120 && !found.iter().any(|f| f == value) {
            found.push(value.to_string());
        }
    };
    match form {
        Form::Number => {
            if let Ok(number) = Regex::new(r"-?\d[\d,]*(?:\.\d+)?") {
                for m in number.find_iter(answer) {
                    add(m.as_str().trim_end_matches(','));
                }
            }
        }
        Form::Value => {
            if let Ok(spans) = Regex::new(r#"`([^`\n]+)`|"([^"\n]+)""#) {
                for caps in spans.captures_iter(answer) {
                    if let Some(span) = caps.get(1).or_else(|| caps.get(2)) {
                        add(span.as_str());
                    }
                }
            }
            for word in answer.split_whitespace() {
                add(word.trim_matches(|c: char| ".,;:!?()[]{}\"'*`".contains(c)));
            }
        }
    }
    found.truncate(CANDIDATES);
    found
}

/// The note that asks for the value alone.
fn form_note(asked: &AskedForm) -> String {
    format!(
        "The task asks for the {noun} alone. Reply with only that {noun}, exactly as your answer above states it: no sentence, no other words. If your answer states no {noun}, reply with your answer again as it was.",
        noun = asked.noun
    )
}

/// Tokens a bare value may take (the answer kept whole may take as many more as it
/// has characters).
const VALUE_TOKENS: u32 = 48;

impl<B: Backend> Agent<B> {
    /// The run's final `answer`, held to the bare form the task asks for: when the task
    /// asks for one and the answer says more, the model gives the value alone, chosen
    /// among the values its answer states. Any failure keeps the answer as it was.
    pub(crate) async fn answer_in_form(
        &mut self,
        run: &mut RunState,
        answer: String,
        events: &mut dyn EventSink,
    ) -> String {
        if !self.strategy.guards_answers()
            || !self.config.rules.on(Rule::AnswerForm)
            || !self.info.decodes_grammars
        {
            return answer;
        }
        // A task that asks for a file is answered by the file; its answer reports it.
        if crate::task_asks::output_file(run.task()).is_some() {
            return answer;
        }
        let Some(asked) = asked_form(run.task()) else {
            return answer;
        };
        let mut options = candidates(&answer, asked.form);
        if is_bare(&answer, asked.form) || options.is_empty() {
            return answer;
        }
        // The answer whole is one of the options: one that states no such value ("the
        // key is not in the file") is kept, not cut to one of its words.
        let whole = answer.trim().to_string();
        if !options.contains(&whole) {
            options.push(whole.clone());
        }
        let mut messages = run.history.clone();
        messages.push(Message::assistant(answer.clone()));
        messages.push(Message::user(form_note(&asked)));
        // The prompt is the run's (its cached prefix: the tools taught as every turn
        // taught them); the reply is decoded under the values' grammar, not the calls'.
        let shape = self.strategy.shape(self.config.tool_format, None);
        let mut request = TurnRequest::text(messages);
        request.tools = shape.tools.then(|| std::sync::Arc::clone(&self.tools));
        request.choice = shape.choice;
        request.tool_format = shape.tool_format;
        request.describe = self.config.describe;
        request.parallel_calls = self.config.parallel_calls;
        request.call_example = self.config.call_example && self.config.parallel_calls;
        request.wrapper_grammar = self.config.wrapper_grammar;
        request.constrained = false;
        request.read = ReadMode::TEXT;
        request.response = Some(Schema {
            kind: SchemaKind::Enum(options.iter().cloned().map(Value::String).collect()),
            description: None,
        });
        request.sampling = self.sampling(run);
        let whole_tokens = u32::try_from(whole.len()).unwrap_or(u32::MAX);
        request.max_tokens = Some(VALUE_TOKENS.saturating_add(whole_tokens));
        let remaining = self.config.wall_clock.saturating_sub(run.started.elapsed());
        if remaining < Duration::from_secs(1) {
            return answer;
        }
        let Ok(completion) = self.ask_once(run, request).await else {
            return answer;
        };
        run.turns += 1;
        run.requests += 1;
        run.account(&completion);
        let mut event = run.turn_event(&completion, self.config.record_prompts);
        if let RunEvent::Turn {
            prompt: Some(prompt),
            ..
        } = &mut event
        {
            prompt.values_only = true;
        }
        events.emit(&event);
        let value = serde_json::from_str::<String>(completion.text.trim())
            .ok()
            .filter(|value| options.contains(value));
        let Some(value) = value else {
            return answer;
        };
        let kept = value == whole;
        let detail = match kept {
            true => format!(
                "the task asks for the {} alone; the answer \"{}\" was kept whole",
                asked.noun,
                crate::answer_text::first_line(&answer)
            ),
            false => format!(
                "the task asks for the {} alone; the answer \"{}\" gave `{value}`",
                asked.noun,
                crate::answer_text::first_line(&answer)
            ),
        };
        run.fire(events, Rule::AnswerForm, &detail);
        match kept {
            true => answer,
            false => value,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn form(task: &str) -> Option<(Form, String)> {
        asked_form(task).map(|asked| (asked.form, asked.noun))
    }

    #[test]
    fn bare_requests_are_read_in_their_many_phrasings() {
        let number = |noun: &str| Some((Form::Number, noun.to_string()));
        let value = |noun: &str| Some((Form::Value, noun.to_string()));
        assert_eq!(
            form("Total hours, team alpha, from x.csv. Just the number."),
            number("number")
        );
        assert_eq!(
            form("How many lines? Reply with the number only."),
            number("number")
        );
        assert_eq!(
            form("Read a.toml and reply with only the value of `db.port`, nothing else."),
            value("value")
        );
        assert_eq!(
            form("last export event of Rosa: id only, please."),
            value("id")
        );
        assert_eq!(
            form("Cheapest product in p.json? Name only."),
            value("name")
        );
        assert_eq!(
            form("Which file defines f? Reply with the file's path only."),
            value("path")
        );
        assert_eq!(
            form("Reply with just the name of the product with the most stock in p.json."),
            value("name")
        );
        assert_eq!(
            form("Book it. Reply with only the confirmation code."),
            value("code")
        );
        assert_eq!(
            form("Path of the file defining f() — just the path, please."),
            value("path")
        );
    }

    #[test]
    fn other_uses_of_only_and_just_ask_no_form() {
        assert_eq!(
            form("List the TODO comments into todo.txt. Only comments count, not strings."),
            None
        );
        assert_eq!(form("Collect the markers in every kind of file there is, not only the source code, into m.txt."), None);
        assert_eq!(
            form("Add up the `qty` column of a.csv, counting only the rows whose `kind` is tool."),
            None
        );
        assert_eq!(
            form("Change the port in config.toml to 8080. Only that file."),
            None
        );
        assert_eq!(
            form("What is the port of the database in config.toml?"),
            None
        );
        assert_eq!(form("I just need you to rename the function everywhere in the code base and update every caller of it."), None);
    }

    #[test]
    fn a_bare_answer_stays_and_a_sentence_offers_its_values() {
        assert!(is_bare("185", Form::Number));
        assert!(is_bare("`1,024`.", Form::Number));
        assert!(!is_bare("The total is 185.", Form::Number));
        assert!(is_bare("lib/session.py", Form::Value));
        assert!(!is_bare(
            "The file defining it is `lib/session.py`.",
            Form::Value
        ));
        assert_eq!(
            candidates(
                "2336 items over 8 shards: each gets 292 items.",
                Form::Number
            ),
            ["2336", "8", "292"]
        );
        let values = candidates("The file defining it is `lib/session.py`.", Form::Value);
        assert_eq!(values[0], "lib/session.py");
        assert!(values.contains(&"defining".to_string()));
        assert_eq!(values.iter().filter(|v| *v == "lib/session.py").count(), 1);
    }
}
