//! A one-line change asked on a context of its own (`full`): when a call that would
//! change the file the task asks to change fails (an `edit_file` whose old and new
//! text are the same, or whose old text is not in the file), and the task quotes a
//! term that exactly one line of that file holds ("Fix the spelling mistake 'recieve'
//! in docs/guide.md"), the model is asked for that line with the task's change made —
//! the task, the line, nothing else — and the failure ends with the `edit_file` call
//! that makes the change. The 0.5B model, which sent the line back unchanged as its
//! `new_string` again and again in the conversation, writes it corrected when asked
//! for that line alone.

use rein_engine::{Backend, TurnRequest};
use rein_protocol::{EventSink, Message, RunEvent, ToolChoice};
use serde_json::Value;

use crate::agent::Agent;
use crate::call_outcome::CallOutcome;
use crate::described_edit::LineEdit;
use crate::state::RunState;
use crate::tool_names::{EDIT_TOOL, WRITE_TOOL};
use crate::validate::ReadyCall;

/// Terms of the task longer than this are not looked for.
const MAX_TERM_CHARS: usize = 40;
/// Lines longer than this are not asked about.
const MAX_LINE_CHARS: usize = 300;
/// Tokens the changed line may take.
const REPLY_TOKENS: u32 = 128;

/// The terms `task` quotes ('recieve', `calc`, "Acme Ltd"): text between a pair of
/// single quotes, backticks or double quotes that opens after a space or the start
/// and closes before a space, punctuation or the end (so the apostrophe of "class's"
/// opens nothing), once each.
pub(crate) fn quoted_terms(task: &str) -> Vec<String> {
    let chars: Vec<char> = task.chars().collect();
    let mut terms: Vec<String> = Vec::new();
    let mut at = 0;
    while at < chars.len() {
        let quote = chars[at];
        let opens = matches!(quote, '\'' | '`' | '"')
            && (at == 0 || chars[at - 1].is_whitespace() || chars[at - 1] == '(');
        if !opens {
            at += 1;
            continue;
        }
        let Some(length) = chars[at + 1..].iter().position(|&c| c == quote) else {
            // An unclosed quote ("the '90s config") quotes nothing.
            at += 1;
            continue;
        };
        let close = at + 1 + length;
        let closes = chars
            .get(close + 1)
            .is_none_or(|c| c.is_whitespace() || c.is_ascii_punctuation());
        let term: String = chars[at + 1..close].iter().collect();
        let term = term.trim();
        let shaped = closes
            && !term.is_empty()
            && term.chars().count() <= MAX_TERM_CHARS
            && !term.contains('\n');
        if shaped && !terms.iter().any(|t| t == term) {
            terms.push(term.to_string());
        }
        at = if closes { close + 1 } else { at + 1 };
    }
    terms
}

/// Whether `line` holds `term` as a whole word (not inside a longer name: `calc` is not
/// in `calculate_total`).
fn holds(line: &str, term: &str) -> bool {
    let word = |c: Option<char>| c.is_some_and(|c| c.is_alphanumeric() || c == '_');
    line.match_indices(term).any(|(at, _)| {
        let before = line[..at].chars().next_back();
        let after = line[at + term.len()..].chars().next();
        !word(before) && !word(after)
    })
}

/// The one line of `content` (its number from 1, and its text) that holds one of
/// `terms`; `None` when no line or several do.
pub(crate) fn line_to_change(content: &str, terms: &[String]) -> Option<(usize, String)> {
    let mut found = content
        .lines()
        .enumerate()
        .filter(|(_, line)| terms.iter().any(|term| holds(line, term)));
    let (index, line) = found.next()?;
    let long = line.chars().count() > MAX_LINE_CHARS;
    if found.next().is_some() || line.trim().is_empty() || long {
        return None;
    }
    Some((index + 1, line.to_string()))
}

/// Where `terms` are in `content` (the file `path`), when the first (what the task
/// changes) is in no line as a word and a later one (what it becomes) is: "`calc` is in no line of `app.py` as a word; `calculate_total`
/// is on lines 1, 6", and what to reply if the change is already made.
pub(crate) fn places_note(content: &str, path: &str, terms: &[String]) -> Option<String> {
    let places: Vec<(&String, Vec<usize>)> = terms
        .iter()
        .map(|term| {
            let lines = content
                .lines()
                .enumerate()
                .filter(|(_, line)| holds(line, term))
                .map(|(index, _)| index + 1)
                .collect();
            (term, lines)
        })
        .collect();
    // The first term (what is to change) is gone and a later one (what it becomes)
    // is there: before a rename is made it is the other way round.
    let (first, later) = places.split_first()?;
    let present = later.iter().any(|(_, lines)| !lines.is_empty());
    if !(first.1.is_empty() && present) {
        return None;
    }
    let said: Vec<String> = places
        .iter()
        .map(|(term, lines)| match lines.as_slice() {
            [] => format!("`{term}` is in no line of `{path}` as a word"),
            [one] => format!("`{term}` is on line {one}"),
            several => {
                let numbers: Vec<String> = several.iter().take(8).map(usize::to_string).collect();
                format!("`{term}` is on lines {}", numbers.join(", "))
            }
        })
        .collect();
    Some(format!(
        "\nOf the terms the task quotes, {}. If `{path}` already is as the task asks, reply that no change was needed and why.",
        said.join("; ")
    ))
}

/// The request's one message: the task, the line as the file has it, and the ask.
pub(crate) fn messages(task: &str, path: &str, number: usize, line: &str) -> Vec<Message> {
    vec![Message::user(format!(
        "The task: {}\n\nLine {number} of `{path}` now:\n{}\n\nMake the task's change to this line. Reply with the changed line only.",
        task.trim(),
        line.trim()
    ))]
}

/// The changed line in `reply`, when it is one: its first line of text (past a code
/// fence, without a "Line 3:" or "3|" label or backticks around it) that differs from
/// `old` and keeps at least half of its words.
pub(crate) fn changed_line(reply: &str, old: &str) -> Option<String> {
    let old = old.trim();
    let first = reply
        .lines()
        .map(str::trim)
        .find(|line| !line.is_empty() && !line.starts_with("```"))?;
    let mut line = first;
    // A line label the reply put in front ("Line 3:", "3|"), unless the line itself
    // opens with a number so (`8080: web`).
    if let (Some(rest), None) = (unlabelled(line), unlabelled(old)) {
        line = rest;
    }
    if line.len() > 1 && line.starts_with('`') && line.ends_with('`') && !old.starts_with('`') {
        line = line[1..line.len() - 1].trim();
    }
    let kept = old
        .split_whitespace()
        .filter(|word| line.split_whitespace().any(|w| w == *word))
        .count();
    let words = old.split_whitespace().count();
    // A line of one or two words may change all of them (`1.0.3` → `1.1.0`).
    let close = (words <= 2 || kept * 2 >= words) && line.len() <= old.len() * 2 + 20;
    (!line.is_empty() && line != old && close).then(|| line.to_string())
}

/// `line` without a line-number label in front ("Line 3: …", "3| …"), when it has one.
fn unlabelled(line: &str) -> Option<&str> {
    let (label, rest) = line.split_once(['|', ':'])?;
    let label = label.trim().trim_start_matches("Line").trim();
    (!label.is_empty() && label.chars().all(|c| c.is_ascii_digit())).then(|| rest.trim())
}

impl<B: Backend> Agent<B> {
    /// After a step whose call to change the task's file failed: the call that makes
    /// the one-line change the model gives on a context of its own, at the end of that
    /// failure (asked once a run; shown again while the line is unchanged).
    pub(crate) async fn focused_edit_note(
        &mut self,
        run: &mut RunState,
        ready: &[ReadyCall],
        outcomes: &mut [CallOutcome],
        events: &mut dyn EventSink,
    ) {
        if !self.config.focused_edit || !self.tool_names.iter().any(|t| t == EDIT_TOOL) {
            return;
        }
        let Some((file, unchanged)) = self.task_file(run) else {
            return;
        };
        let workspace = &self.executor.workspace;
        let target = workspace.resolve(&file).ok();
        let failed = ready
            .iter()
            .zip(outcomes.iter())
            .rposition(|(call, outcome)| {
                let changes = call.name == EDIT_TOOL || call.name == WRITE_TOOL;
                let path = call.arguments.get("path").and_then(Value::as_str);
                let same =
                    target.is_some() && path.is_some_and(|p| workspace.resolve(p).ok() == target);
                changes && same && !outcome.ok
            });
        let Some(failed) = failed else {
            return;
        };
        // The file as it is now, read once for every note below.
        let content = target.and_then(|path| std::fs::read_to_string(path).ok());
        if !unchanged {
            // Changed already: an edit that changes nothing, of text the file now
            // holds, is the model writing its done change again.
            let call = &ready[failed];
            let text = |key: &str| call.arguments.get(key).and_then(Value::as_str);
            let again = match (text("old_string"), text("new_string"), &content) {
                (Some(old), Some(new), Some(content)) => {
                    old == new && !old.trim().is_empty() && content.contains(old)
                }
                _ => false,
            };
            if again && call.name == EDIT_TOOL {
                outcomes[failed].text.push_str(&format!(
                    "\n`{file}` was changed in this run and already holds this text. If that change is what the task asks, it is done: reply with a short final answer."
                ));
            }
            return;
        }
        if run.asked_edit.is_none() {
            let (line, new) = self.ask_line_edit(run, &file, content.as_deref()).await;
            events.emit(&RunEvent::FocusedEdit {
                turn: run.turns,
                path: file.clone(),
                line: line
                    .as_ref()
                    .and_then(|(number, _)| u32::try_from(*number).ok()),
                old: line.as_ref().map(|(_, old)| old.clone()),
                new: new.clone(),
            });
            run.asked_edit = Some(line.zip(new).map(|((number, old), new)| {
                (
                    number,
                    LineEdit {
                        old: old.trim().to_string(),
                        new,
                    },
                )
            }));
        }
        let Some(Some((number, edit))) = &run.asked_edit else {
            // No line to ask about: where the task's quoted terms are, when the first
            // is gone from the file and a later one is there (a rename already made).
            let terms = quoted_terms(run.task());
            if let Some(note) = content.and_then(|c| places_note(&c, &file, &terms)) {
                outcomes[failed].text.push_str(&note);
            }
            return;
        };
        let still_there = content.is_some_and(|content| content.contains(edit.old.as_str()));
        if still_there {
            let text = &mut outcomes[failed].text;
            text.push_str(&format!(
                "\nWith the task's change made, line {number} of `{file}` reads:\n{}\nThe call that makes that change:\n{}",
                edit.new,
                self.edit_call(&file, edit)
            ));
        }
    }

    /// The file the task asks to change, and whether it is unchanged: the file the
    /// task says to change (unchanged while its bytes are), or else the one file a
    /// task that asks for a change names (unchanged while no call changed anything).
    fn task_file(&self, run: &RunState) -> Option<(String, bool)> {
        let memory = &run.memory;
        if let Some((file, hash)) = &memory.file_to_change {
            let now = crate::task_asks::content_hash(&self.executor.workspace, file);
            return Some((file.clone(), now == Some(*hash)));
        }
        let files: Vec<&crate::task_paths::TaskPath> =
            memory.task_paths.iter().filter(|p| !p.dir).collect();
        match (memory.expects_change, files.as_slice()) {
            (true, [one]) => Some((one.path.clone(), memory.changes_made == 0)),
            _ => None,
        }
    }

    /// The line of `file` (holding `content`) the task's quoted terms pick (its number
    /// and text), and that line with the task's change made as the model writes it on
    /// a context of its own (`None` when the reply is not such a line).
    async fn ask_line_edit(
        &mut self,
        run: &mut RunState,
        file: &str,
        content: Option<&str>,
    ) -> (Option<(usize, String)>, Option<String>) {
        let mut terms = quoted_terms(run.task());
        terms.extend(run.memory.task_needles.iter().cloned());
        let Some((number, line)) = content.and_then(|c| line_to_change(c, &terms)) else {
            return (None, None);
        };
        let mut request = TurnRequest::text(messages(run.task(), file, number, &line));
        request.choice = ToolChoice::None;
        request.prose = true;
        request.no_blank = true;
        request.stop = vec![self.info.family.call_opener().to_string()];
        request.sampling = self.sampling(run);
        request.max_tokens = Some(REPLY_TOKENS);
        run.requests += 1;
        let new = match self.ask_once(run, request).await {
            Ok(completion) => {
                run.account(&completion);
                changed_line(&completion.text, &line)
            }
            Err(_) => None,
        };
        (Some((number, line)), new)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quoted_terms_are_taken_and_apostrophes_are_not_quotes() {
        assert_eq!(
            quoted_terms("Fix the spelling mistake 'recieve' in docs/guide.md."),
            vec!["recieve"]
        );
        assert_eq!(
            quoted_terms("In app.py, rename the function `calc` to `calculate_total`."),
            vec!["calc", "calculate_total"]
        );
        assert!(quoted_terms(
            "In settings.py, change the Http class's timeout from 10 to 30. The Database's stays."
        )
        .is_empty());
        assert_eq!(
            quoted_terms("Set \"name\" to \"Acme Ltd\" (see 'notes')."),
            vec!["name", "Acme Ltd", "notes"]
        );
        assert_eq!(
            quoted_terms("In the '90s config, rename \"calc\" please."),
            vec!["calc"]
        );
    }

    #[test]
    fn the_line_is_the_only_one_holding_a_term_as_a_word() {
        let guide = "# Guide\n\nTo recieve updates, subscribe to the channel.\n";
        assert_eq!(
            line_to_change(guide, &["recieve".into()]),
            Some((3, "To recieve updates, subscribe to the channel.".into()))
        );
        let app =
            "def calculate_total(prices):\n    return sum(prices)\n\nprint(calculate_total([3]))\n";
        // `calc` only inside a longer name; `calculate_total` on two lines.
        assert_eq!(line_to_change(app, &["calc".into()]), None);
        assert_eq!(line_to_change(app, &["calculate_total".into()]), None);
        assert_eq!(line_to_change(guide, &["absent".into()]), None);
    }

    #[test]
    fn the_places_of_quoted_terms_are_said_when_one_is_missing() {
        let app =
            "def calculate_total(prices):\n    return sum(prices)\n\nprint(calculate_total([3]))\n";
        let terms = vec!["calc".to_string(), "calculate_total".to_string()];
        assert_eq!(
            places_note(app, "app.py", &terms).as_deref(),
            Some("\nOf the terms the task quotes, `calc` is in no line of `app.py` as a word; `calculate_total` is on lines 1, 4. If `app.py` already is as the task asks, reply that no change was needed and why.")
        );
        // Every term there, or none, or the rename still to make: nothing to say.
        assert_eq!(places_note(app, "app.py", &terms[1..]), None);
        assert_eq!(places_note(app, "app.py", &terms[..1]), None);
        let before = "def calc(prices):\n    return sum(prices)\n\nprint(calc([3]))\n";
        assert_eq!(places_note(before, "app.py", &terms), None);
    }

    #[test]
    fn a_changed_line_is_taken_from_the_reply_and_an_unchanged_one_is_not() {
        let old = "To recieve updates, subscribe to the channel.";
        let fixed = "To receive updates, subscribe to the channel.";
        assert_eq!(changed_line(fixed, old).as_deref(), Some(fixed));
        assert_eq!(
            changed_line(&format!("```markdown\n{fixed}\n```"), old).as_deref(),
            Some(fixed)
        );
        assert_eq!(
            changed_line(&format!("Line 3: `{fixed}`"), old).as_deref(),
            Some(fixed)
        );
        assert_eq!(
            changed_line(&format!("3| {fixed}"), old).as_deref(),
            Some(fixed)
        );
        assert_eq!(changed_line(old, old), None);
        // Short lines may change every word; a number opening the line is no label.
        assert_eq!(changed_line("1.1.0", "1.0.3").as_deref(), Some("1.1.0"));
        assert_eq!(
            changed_line("8081: web", "8080: web").as_deref(),
            Some("8081: web")
        );
        assert_eq!(changed_line("Sure, here it is.", old), None);
        assert_eq!(changed_line("\n\n", old), None);
    }
}
