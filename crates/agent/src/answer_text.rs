//! What an answer's text is made of: a result copied back inside the template's
//! result tags, talk about tools, the note it echoes, a file's text recited.

use crate::state::RunState;
use crate::tool_names::READ_TOOL;

/// The text of an answer written inside the template's result tags
/// (`<tool_response>…</tool_response>`, the model imitating the turn it just read).
pub(crate) fn result_tags_inner(text: &str) -> Option<&str> {
    let inner = text
        .trim()
        .strip_prefix("<tool_response>")?
        .strip_suffix("</tool_response>")?
        .trim();
    (!inner.is_empty() && !inner.contains("<tool_response>")).then_some(inner)
}

/// Whether `text` is a short reply about the tools rather than about the question
/// ("No tool fits.", "There is no function for that.").
pub(crate) fn talks_about_tools(text: &str) -> bool {
    let lower = text.trim().to_lowercase();
    lower.chars().count() < 80
        && lower
            .split(|c: char| !c.is_alphanumeric() && c != '_')
            .any(|word| matches!(word, "tool" | "tools" | "function" | "functions"))
}

/// The final answer `text`, after the answer held for the verification guard when a
/// call (the check) ran since: the check's report ("The project's check passed.")
/// completes that answer rather than replacing it, unless it restates it.
pub(crate) fn after_check(run: &RunState, text: String) -> String {
    match &run.answer_before_check {
        Some((held, calls)) if run.tool_calls > *calls && !text.contains(held.trim()) => {
            format!("{}\n\n{}", held.trim(), text.trim())
        }
        _ => text,
    }
}

/// The text inside the first result tags of `text` (as the template writes them; to
/// its end when they are not closed), trimmed; `None` without the tag or with nothing inside.
pub(crate) fn tagged_result(text: &str) -> Option<&str> {
    let open = "<tool_response>";
    let rest = &text[text.find(open)? + open.len()..];
    let inner = match rest.find("</tool_response>") {
        Some(end) => &rest[..end],
        None => rest,
    };
    Some(inner.trim()).filter(|inner| !inner.is_empty())
}

/// Whether `text` is a sentence of the note this reply was given (a small model
/// copying "Reply to the task now…" as its answer) and of no tool result (a note may
/// quote one, and a result is an answer).
pub(crate) fn echoes_the_note(run: &RunState, text: &str) -> bool {
    let text = text.trim();
    // The end of a line of the note, or its opening words ("Not done yet." for "Not
    // done yet: your earlier reply also called …").
    let opening = text.trim_end_matches(['.', '!']);
    let in_note = run.note.as_deref().is_some_and(|note| {
        note.lines().any(|line| {
            let line = line.trim();
            line.ends_with(text) || line.starts_with(&format!("{opening}:"))
        })
    });
    let in_results = run
        .results()
        .into_iter()
        .any(|result| result.contains(text));
    let copies_words = run.note.as_deref().is_some_and(|note| {
        let mut shown = run.task().to_string();
        for result in run.results() {
            shown.push('\n');
            shown.push_str(result);
        }
        copies_a_run_of_words(text, note, &shown)
    });
    // A line of the loop's own words in a result ("Do not repeat it: use this
    // result …" after a repeated call) is an instruction, not a finding.
    let harness_words = crate::recovery::NOTE_PHRASES
        .iter()
        .any(|phrase| text.contains(phrase));
    (text.chars().count() >= 12 && in_note && !in_results) || copies_words || harness_words
}

/// Words in a row that make a reply a copy of the note they come from.
const COPIED_WORDS: usize = 8;

/// Whether `text` holds [`COPIED_WORDS`] words in a row of `note` (letter case and
/// punctuation aside) that the request and the results (`shown`) do not hold: "The
/// function `get_file_metadata` was not run: no tool fits this request, which gives
/// …" copies the note; a value copied from a result the note quotes does not.
fn copies_a_run_of_words(text: &str, note: &str, shown: &str) -> bool {
    let words = crate::empty_answer::words;
    let runs = |text: &str| -> std::collections::HashSet<Vec<String>> {
        words(text)
            .windows(COPIED_WORDS)
            .map(<[String]>::to_vec)
            .collect()
    };
    let (in_note, in_shown) = (runs(note), runs(shown));
    words(text)
        .windows(COPIED_WORDS)
        .any(|run| in_note.contains(run) && !in_shown.contains(run))
}

/// Whether `inner` repeats (part of) a result a call gave with success.
pub(crate) fn echoes_a_result(run: &RunState, inner: &str) -> bool {
    run.memory.succeeded_calls.values().any(|(result, _)| {
        let result = shorten(result);
        result == inner || (inner.chars().count() >= 3 && result.contains(inner))
    })
}

/// Whether `inner` is (part of) a file's text a `read_file` of this run gave.
pub(crate) fn echoes_a_read(run: &RunState, inner: &str) -> bool {
    let read = format!("{READ_TOOL}\u{0}");
    run.memory
        .succeeded_calls
        .iter()
        .any(|(key, (result, _))| key.starts_with(&read) && shorten(result).contains(inner))
}

/// Whether `task` asks for something to be told (`stored_answer::asks_to_be_told`) or
/// shown ("show", "print", "what" …), so a file's text may be its answer.
pub(crate) fn asks_to_be_shown(task: &str) -> bool {
    let lower = task.to_lowercase();
    crate::stored_answer::asks_to_be_told(task)
        || ["show", "print", "display", "what ", "which ", "content"]
            .iter()
            .any(|p| lower.contains(p))
}

/// A tool result as the note shows it: without its untrusted-data wrapper, at most
/// 1,200 characters.
pub(crate) fn shorten(text: &str) -> String {
    crate::result_text::result_excerpt(text, 1200)
}

pub(crate) fn first_line(text: &str) -> String {
    let line = text.lines().next().unwrap_or_default();
    line.chars().take(120).collect()
}
