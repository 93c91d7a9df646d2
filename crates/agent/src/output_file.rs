//! What the results say about the task's output file while it does not exist: a look
//! at it shows the workspace lines that hold the task's own word (`TODO`), a write of
//! it under another letter case names the file, and a write that drops `path:line:`
//! from some of the lines shown says which; and a reply held for the missing file that
//! named the one value a result showed (`the gateway error code is "PG-4471"`) gets that
//! value back in the note of the write.

use std::sync::Arc;

use crate::call_outcome::CallOutcome;
use crate::execute::Executor;
use crate::memory::Memory;
use crate::tool_names::WRITE_TOOL;
use crate::validate::ReadyCall;

/// Lines shown at most for the task's word when the output file is looked for.
const WORD_LINES: usize = 20;

impl Executor {
    /// A failed read, listing or search of the task's output file, while it does not
    /// exist: the tool's message is replaced by what the file is and the next move, with
    /// the workspace's lines that hold the task's own word (`TODO`) when a few do.
    pub(crate) async fn output_file_note(
        &self,
        outcome: CallOutcome,
        call: &ReadyCall,
        memory: &mut Memory,
    ) -> CallOutcome {
        let Some(file) = memory.output_file.clone() else {
            return outcome;
        };
        let path = call.arguments["path"].as_str().unwrap_or_default();
        let (path, file) = (path.trim_start_matches("./"), file.trim_start_matches("./"));
        if !path.eq_ignore_ascii_case(file) {
            return outcome;
        }
        let writes = call.name == WRITE_TOOL;
        let exists = || self.workspace.root().join(file).exists();
        if outcome.ok && writes && path != file && !exists() {
            let mut outcome = outcome;
            outcome.text.push_str(&format!(
                "\nThe task asks for `{file}`, with its letters' case as written there, and that file does not exist yet: write the content to `{file}`."
            ));
            return outcome;
        }
        if outcome.ok && writes && path == file {
            let content = call.arguments["content"].as_str().unwrap_or_default();
            let mut outcome = outcome;
            outcome
                .text
                .push_str(&left_out_note(&memory.word_lines, content, file));
            return outcome;
        }
        if outcome.ok || path != file || writes || exists() {
            return outcome;
        }
        let mut text =
            format!("`{file}` does not exist yet: it is the file this task asks you to write. ");
        match self.task_word_lines(&memory.search_words).await {
            Some((word, lines)) => {
                text.push_str(&format!(
                "What goes in it comes from the workspace's files. The task's word `{word}` is on {}:\n```\n{}\n```\nIf they are what the task asks for, write `{file}` now with write_file (its whole content); otherwise search or read the files that hold it.",
                match lines.len() {
                    1 => "this line".to_string(),
                    n => format!("these {n} lines"),
                },
                lines.join("\n")
                ));
                memory.word_lines = lines;
            }
            None => text.push_str(
                "Find what goes in it first (search or read the files that hold it), then write it with write_file.",
            ),
        }
        CallOutcome::failed(text)
    }

    /// The first of `words` that a few lines of the workspace hold, with those lines
    /// as `search` lists them.
    async fn task_word_lines(&self, words: &[String]) -> Option<(String, Vec<String>)> {
        let workspace = Arc::clone(&self.workspace);
        let words = words.to_vec();
        let found = tokio::task::spawn_blocking(move || {
            words.into_iter().find_map(|word| {
                let lines = rein_tools::word_lines(&workspace, &word, WORD_LINES)?;
                Some((word, lines))
            })
        });
        found.await.ok().flatten()
    }
}

/// After a write of the output file: the lines the missing-file note showed whose
/// `path:line` the content leaves out while it has another's (the model kept the
/// format for some lines and dropped it for others), as a note; empty otherwise.
fn left_out_note(shown: &[String], content: &str, file: &str) -> String {
    let place = |line: &String| -> Option<String> {
        let mut parts = line.splitn(3, ':');
        Some(format!("{}:{}:", parts.next()?, parts.next()?))
    };
    let places: Vec<(String, &String)> = shown
        .iter()
        .filter_map(|line| Some((place(line)?, line)))
        .collect();
    let missing: Vec<&String> = places
        .iter()
        .filter(|(place, _)| !content.contains(place.as_str()))
        .map(|(_, line)| *line)
        .collect();
    if missing.is_empty() || missing.len() == places.len() {
        return String::new();
    }
    let all: Vec<&str> = places.iter().map(|(_, line)| line.as_str()).collect();
    format!(
        "\n`{file}` has {} of the {} lines shown for the task's word with their `path:line:`; it lacks:\n{}\nIf the task asks for all of them, write `{file}` again with every line, as shown:\n```\n{}\n```",
        places.len() - missing.len(),
        places.len(),
        missing.iter().map(|l| l.as_str()).collect::<Vec<_>>().join("\n"),
        all.join("\n")
    )
}

/// Whether `text` holds `value` with no letter or digit right before or after it
/// (`80` is not in "port 8080").
fn holds_word(text: &str, value: &str) -> bool {
    text.match_indices(value).any(|(at, _)| {
        let before = text[..at].chars().next_back();
        let after = text[at + value.len()..].chars().next();
        !before.is_some_and(char::is_alphanumeric) && !after.is_some_and(char::is_alphanumeric)
    })
}

/// Longer quoted text is a passage, not a value.
const MAX_VALUE_CHARS: usize = 80;

/// The one value `reply` quotes (in `"…"`, `'…'` or `` `…` ``) that a result of
/// `results` shows verbatim, other than `file` and the task's own words (`ERROR` in
/// "the line with the level ERROR" is what was looked for, not what was found);
/// `None` when it quotes none or several.
pub(crate) fn quoted_result_value(
    reply: &str,
    results: &[&str],
    file: &str,
    task: &str,
) -> Option<String> {
    let mut found: Vec<&str> = Vec::new();
    for quote in ['"', '`', '\''] {
        let parts: Vec<&str> = reply.split(quote).collect();
        // The odd parts are inside a pair of quotes.
        for inside in parts
            .iter()
            .skip(1)
            .step_by(2)
            .take(parts.len().saturating_sub(1) / 2)
        {
            let value = inside.trim();
            let fits = (2..=MAX_VALUE_CHARS).contains(&value.chars().count())
                && value != file
                && !holds_word(task, value)
                && !value.contains('\n')
                && results.iter().any(|r| r.contains(value));
            if fits && !found.contains(&value) {
                found.push(value);
            }
        }
    }
    match found.as_slice() {
        [one] => Some(one.to_string()),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const TASK: &str = "Exactly one line of server.log has the level ERROR. Write the gateway code from it (it looks like PG-0000) into incident.txt.";
    const RESULT: &str =
        "server.log:132: ERROR charge failed: gateway returned code PG-4471 (card_declined)";

    #[test]
    fn the_one_quoted_value_a_result_shows_is_found() {
        let reply = "In this case, the gateway error code is \"PG-4471\". Let's write it into `incident.txt`.";
        assert_eq!(
            quoted_result_value(reply, &[RESULT], "incident.txt", TASK).as_deref(),
            Some("PG-4471")
        );
    }

    #[test]
    fn no_value_several_values_or_values_no_result_shows_give_nothing() {
        let none = "I will write the code into incident.txt.";
        assert_eq!(
            quoted_result_value(none, &[RESULT], "incident.txt", TASK),
            None
        );
        let two = "Either `PG-4471` or `card_declined`.";
        assert_eq!(
            quoted_result_value(two, &[RESULT], "incident.txt", TASK),
            None
        );
        let made_up = "The code is `PG-9999`.";
        assert_eq!(
            quoted_result_value(made_up, &[RESULT], "incident.txt", TASK),
            None
        );
        // The word the task looked for is no value found.
        let looked_for = "I will read the line containing \"ERROR\".";
        assert_eq!(
            quoted_result_value(looked_for, &[RESULT], "incident.txt", TASK),
            None
        );
    }
}
