//! Values the task names (`EVT-77812`, `maxRetries`, `API_TOKEN_TTL`) in a file a read
//! showed only part of: the read's result opens with the lines that hold each one, so
//! a model paging through a 40,000-line log from the top is not left to page (and the
//! lines survive when compaction keeps only a long result's first lines).

use std::io::{BufRead, BufReader};

use rein_tools::Workspace;

use crate::call_outcome::CallOutcome;

/// Files larger than this are not scanned.
const MAX_SCANNED_BYTES: u64 = 64 << 20;
/// Lines shown for one value.
const SHOWN_LINES: usize = 3;
/// Values of one task looked for.
const MAX_NEEDLES: usize = 3;
/// Characters of a matching line shown around the value.
const LINE_CHARS: usize = 200;
/// What a lead sentence says after the value it names.
const LEAD_MARK: &str = ", which the task names, is on ";

/// Whether `line` is one of the lead's own sentences (which line holds a value), not a
/// line of the file: the evidence of a focused answer leaves it out, as the 0.5B model
/// copied it ("`EVT-77812`, which the task names, is on line 31234 …") instead of the
/// line under it.
pub(crate) fn is_lead_sentence(line: &str) -> bool {
    line.starts_with('`') && line.contains(LEAD_MARK) && line.ends_with("shows:")
}

/// The task's values worth finding in a file: words of four characters or more that
/// mix letters and digits (`EVT-77812`) or have a capital past their first letter
/// (`maxRetries`, `API_TOKEN_TTL`), each once, in the task's order. File names and
/// paths are left out (`README.md`, `src/main.rs`): a read of that file is how it is
/// found.
pub(crate) fn task_needles(task: &str) -> Vec<String> {
    let mut needles: Vec<String> = Vec::new();
    for token in task.split_whitespace() {
        let word = token.trim_matches(|c: char| !(c.is_alphanumeric() || c == '_'));
        let shaped = word.chars().count() >= 4
            && word
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
        if !shaped {
            continue;
        }
        let letters = word.chars().any(|c| c.is_ascii_alphabetic());
        let digits = word.chars().any(|c| c.is_ascii_digit());
        let capital_inside = word.chars().skip(1).any(|c| c.is_ascii_uppercase());
        if letters && (digits || capital_inside) && !needles.iter().any(|n| n == word) {
            needles.push(word.to_string());
        }
    }
    needles.truncate(MAX_NEEDLES);
    needles
}

/// `outcome` of a successful look at the file `path` (a read, a listing, a search in
/// it), led by the lines of the file that hold a value of `needles` the result does
/// not show. Any other `path` (a directory, nothing) leaves it as it is.
pub(crate) fn with_needle_lines(
    outcome: CallOutcome,
    path: &str,
    needles: &[String],
    workspace: &Workspace,
) -> CallOutcome {
    if !outcome.ok || outcome.repeated_success || needles.is_empty() {
        return outcome;
    }
    let missing: Vec<&String> = needles
        .iter()
        .filter(|needle| !outcome.text.contains(needle.as_str()))
        .collect();
    if missing.is_empty() {
        return outcome;
    }
    let Ok(file) = workspace.resolve(path) else {
        return outcome;
    };
    let small_enough =
        std::fs::metadata(&file).is_ok_and(|m| m.is_file() && m.len() <= MAX_SCANNED_BYTES);
    if !small_enough {
        return outcome;
    }
    let Ok(found) = find_lines(&file, &missing) else {
        return outcome;
    };
    let mut lead = String::new();
    for (needle, (lines, count)) in missing.iter().zip(found) {
        if lines.is_empty() {
            continue;
        }
        let numbers: Vec<String> = lines.iter().map(|(n, _)| n.to_string()).collect();
        let more = match count > lines.len() {
            true => format!(" (and {} more)", count - lines.len()),
            false => String::new(),
        };
        let noun = if count == 1 { "line" } else { "lines" };
        lead.push_str(&format!(
            "`{needle}`{LEAD_MARK}{noun} {}{more} of `{path}`, not in the part this read shows:\n",
            numbers.join(", ")
        ));
        for (number, text) in &lines {
            lead.push_str(&format!("{number:>4}| {}\n", around(text, needle)));
        }
    }
    if lead.is_empty() {
        return outcome;
    }
    let mut outcome = outcome;
    outcome.text = format!("{lead}The part read:\n{}", outcome.text);
    outcome
}

/// For each needle, its first [`SHOWN_LINES`] lines (number, text) and how many lines
/// hold it.
type Found = Vec<(Vec<(usize, String)>, usize)>;

fn find_lines(file: &std::path::Path, needles: &[&String]) -> std::io::Result<Found> {
    let mut found: Found = vec![(Vec::new(), 0); needles.len()];
    let mut reader = BufReader::new(std::fs::File::open(file)?);
    let mut buffer = Vec::new();
    let mut number = 0;
    loop {
        buffer.clear();
        if reader.read_until(b'\n', &mut buffer)? == 0 {
            break;
        }
        number += 1;
        let line = String::from_utf8_lossy(&buffer);
        for (needle, (lines, count)) in needles.iter().zip(found.iter_mut()) {
            if line.contains(needle.as_str()) {
                *count += 1;
                if lines.len() < SHOWN_LINES {
                    lines.push((number, line.trim_end().to_string()));
                }
            }
        }
    }
    Ok(found)
}

/// `line` whole when short, else [`LINE_CHARS`] characters around `needle` (as a
/// search shows a long matching line).
fn around(line: &str, needle: &str) -> String {
    if line.chars().count() <= LINE_CHARS {
        return line.to_string();
    }
    rein_tools::window_around(line, line.find(needle).unwrap_or(0), LINE_CHARS)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_that_mix_letters_and_digits_or_capitals_are_needles() {
        assert_eq!(
            task_needles("data/events.log is very large. Find the event with id EVT-77812 and answer with its status."),
            vec!["EVT-77812"]
        );
        assert_eq!(
            task_needles("config.min.json is minified onto one very long line. What is the value of maxRetries in it?"),
            vec!["maxRetries"]
        );
        assert_eq!(
            task_needles("Some file in this project sets API_TOKEN_TTL. Find it and answer with the file's path and the value it sets."),
            vec!["API_TOKEN_TTL"]
        );
        // Plain words, file names and paths are not values.
        assert!(task_needles(
            "Follow README.md to run the stats script, and answer with the mean it prints."
        )
        .is_empty());
        assert!(task_needles("Fix the spelling in docs/guide.md and src/Main2.java").is_empty());
    }

    #[test]
    fn a_long_line_is_shown_around_the_value() {
        let line = format!(
            "{{{}\"maxRetries\": 17, {}}}",
            "a".repeat(5000),
            "b".repeat(5000)
        );
        let shown = around(&line, "maxRetries");
        assert!(shown.starts_with('…') && shown.ends_with('…'), "{shown}");
        assert!(shown.contains("\"maxRetries\": 17,"), "{shown}");
        assert!(shown.chars().count() <= LINE_CHARS + 2);
    }

    #[test]
    fn a_read_that_misses_the_value_gets_its_lines() {
        let dir = tempfile::tempdir().unwrap();
        let workspace = Workspace::new(dir.path(), rein_tools::ToolLimits::default()).unwrap();
        let mut log = String::new();
        for n in 1..=500 {
            log.push_str(&format!("id=EVT-{n} status=DELIVERED\n"));
            if n == 300 {
                log.push_str("id=EVT-77812 status=REFUNDED\n");
            }
        }
        std::fs::write(dir.path().join("events.log"), log).unwrap();
        let needles = vec!["EVT-77812".to_string()];
        let page = CallOutcome {
            ok: true,
            ..CallOutcome::failed(
                "   1| id=EVT-1 status=DELIVERED\n[lines 1-1 of 501 shown]".into(),
            )
        };
        let noted = with_needle_lines(page, "events.log", &needles, &workspace);
        assert_eq!(
            noted.text,
            "`EVT-77812`, which the task names, is on line 301 of `events.log`, not in the part this read shows:\n 301| id=EVT-77812 status=REFUNDED\nThe part read:\n   1| id=EVT-1 status=DELIVERED\n[lines 1-1 of 501 shown]"
        );
        // The lead's sentence is known as the harness's own; the file's line is not.
        let lines: Vec<&str> = noted.text.lines().collect();
        assert!(is_lead_sentence(lines[0]));
        assert!(!is_lead_sentence(lines[1]));
        // A read that shows it, or a failed one, is left as it is.
        let shown = CallOutcome {
            ok: true,
            ..CallOutcome::failed(" 301| id=EVT-77812 status=REFUNDED".into())
        };
        let kept = with_needle_lines(shown, "events.log", &needles, &workspace);
        assert_eq!(kept.text, " 301| id=EVT-77812 status=REFUNDED");
        let failed = with_needle_lines(
            CallOutcome::failed("no".into()),
            "events.log",
            &needles,
            &workspace,
        );
        assert_eq!(failed.text, "no");
    }
}
