//! An edit the answer describes instead of making ("change `BULK_DISCOUNT_RATE` in
//! pricing.py from `0.10` to `0.15`"), while the file the task asks to change is
//! unchanged: the line it means, and the same line with the new value, for the note
//! that shows the `edit_file` call to make.

use regex::Regex;

/// A described change of one line: the line as the file has it, and as it would be.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct LineEdit {
    /// The line now (trimmed).
    pub old: String,
    /// The line with the new value.
    pub new: String,
}

/// The line edit `answer` describes for a file holding `content`: a "from X to Y" in
/// the answer, and the one line of the file that holds X (where several do, the one
/// that also holds a name the answer puts in backticks); `None` when that does not
/// decide.
pub(crate) fn described_edit(answer: &str, content: &str) -> Option<LineEdit> {
    let (from, to, mut names) = match from_to(answer) {
        Some((from, to)) => (from, to, Vec::new()),
        None => replaced_term(answer)?,
    };
    if from == to {
        return None;
    }
    let (from, to) = (from.as_str(), to.as_str());
    let holds = |line: &str, value: &str| {
        line.match_indices(value).any(|(at, _)| {
            let before = line[..at].chars().next_back();
            let after = line[at + value.len()..].chars().next();
            let apart =
                |c: Option<char>| c.is_none_or(|c| !(c.is_alphanumeric() || c == '_' || c == '.'));
            apart(before) && apart(after)
        })
    };
    let lines: Vec<&str> = content.lines().filter(|line| holds(line, from)).collect();
    let line = match lines.as_slice() {
        [one] => *one,
        [] => return None,
        several => {
            names.extend(
                answer
                    .split('`')
                    .skip(1)
                    .step_by(2)
                    .filter(|name| name.len() >= 3 && *name != from && *name != to)
                    .map(str::to_string),
            );
            let named: Vec<&&str> = several
                .iter()
                .filter(|line| names.iter().any(|name| line.contains(name.as_str())))
                .collect();
            match named.as_slice() {
                [one] => **one,
                _ => return None,
            }
        }
    };
    let old = line.trim().to_string();
    let new = old.replacen(from, to, 1);
    Some(LineEdit { old, new })
}

/// The values of a "from X to Y" in `answer`.
fn from_to(answer: &str) -> Option<(String, String)> {
    let change = Regex::new(
        r#"(?i)\bfrom\s+[`'"]?([^\s`'"]+?)[`'"]?\s+to\s+[`'"]?([^\s`'"]+?)[`'"]?(?:[\s,;]|\.(?:\s|$)|$)"#,
    )
    .ok()?;
    let caps = change.captures(answer)?;
    Some((caps.get(1)?.as_str().into(), caps.get(2)?.as_str().into()))
}

/// The one term that differs in a "replace `A` with `B`" (or "change `A` to `B`") of
/// `answer`, and the terms the two share, which name the line: a small model writes
/// the line in a notation of its own (`api:chart-lib:2.9.0` → `api:chart-lib:3.2.1`
/// for a JSON line under `"api"`), and only the differing version is in the file.
fn replaced_term(answer: &str) -> Option<(String, String, Vec<String>)> {
    let replace =
        Regex::new(r"(?i)\b(?:replace|change)\b[^`]{0,20}`([^`]+)`\s+(?:with|to|by)\s+`([^`]+)`")
            .ok()?;
    let caps = replace.captures(answer)?;
    let terms = |text: &str| -> Vec<String> {
        text.split(|c: char| c.is_whitespace() || matches!(c, ':' | '=' | ',' | '"' | '\''))
            .filter(|term| !term.is_empty())
            .map(str::to_string)
            .collect()
    };
    let (old, new) = (terms(caps.get(1)?.as_str()), terms(caps.get(2)?.as_str()));
    if old.len() != new.len() {
        return None;
    }
    let differing: Vec<usize> = (0..old.len()).filter(|&i| old[i] != new[i]).collect();
    let [at] = differing.as_slice() else {
        return None;
    };
    let shared = old
        .iter()
        .enumerate()
        .filter(|(i, term)| i != at && term.len() >= 3)
        .map(|(_, term)| term.clone())
        .collect();
    Some((old[*at].clone(), new[*at].clone(), shared))
}

/// What the run asked for its one-line change: nothing yet, or the edit the model gave
/// (`None` when the line could not be chosen or the reply was not a changed line).
pub(crate) type AskedEdit = Option<Option<(usize, LineEdit)>>;

#[cfg(test)]
mod tests {
    use super::*;

    const PRICING: &str = "MEMBER_DISCOUNT_RATE = 0.05\nBULK_THRESHOLD = 20\nBULK_DISCOUNT_RATE = 0.10\nTAX_RATE = 0.21\nrate = 0.0\n";

    #[test]
    fn the_line_a_described_change_means_is_found() {
        let edit = described_edit(
            "To fix the failing test, change the constant `BULK_DISCOUNT_RATE` in the `pricing.py` file from `0.10` to `0.15`.",
            PRICING,
        );
        assert_eq!(
            edit,
            Some(LineEdit {
                old: "BULK_DISCOUNT_RATE = 0.10".into(),
                new: "BULK_DISCOUNT_RATE = 0.15".into()
            })
        );
        // Several lines hold the value: the one the answer names decides.
        let two = "[http]\ntimeout = 10\n[database]\ntimeout = 10\n";
        assert_eq!(
            described_edit("I changed the timeout from 10 to 30.", two),
            None
        );
        let config = "HTTP_TIMEOUT = 10\nDB_TIMEOUT = 10\n";
        assert_eq!(
            described_edit("Set `HTTP_TIMEOUT` from 10 to 30.", config).map(|e| e.new),
            Some("HTTP_TIMEOUT = 30".into())
        );
        // A line written in a notation of the model's own: the one term that differs.
        let deps = "    \"web\": {\n        \"chart-lib\": { \"version\": \"3.2.1\" },\n    \"api\": {\n        \"chart-lib\": { \"version\": \"2.9.0\" },\n        \"queue-lite\": { \"version\": \"2.9.1\" }\n";
        assert_eq!(
            described_edit(
                "you can use `edit_file` to replace the line `api:chart-lib:2.9.0` with `api:chart-lib:3.2.1`.",
                deps
            ),
            Some(LineEdit {
                old: "\"chart-lib\": { \"version\": \"2.9.0\" },".into(),
                new: "\"chart-lib\": { \"version\": \"3.2.1\" },".into()
            })
        );
        // More than one term differs, or the terms do not pair up: nothing is decided.
        for answer in [
            "replace `api:chart-lib:2.9.0` with `web:chart-lib:3.2.1`",
            "replace `chart-lib 2.9.0` with `3.2.1`",
        ] {
            assert_eq!(described_edit(answer, deps), None, "{answer}");
        }
        for answer in [
            "The rate is 0.10.",
            "Changed it from 0.99 to 0.15.",
            "from 0.10 to 0.10",
        ] {
            assert_eq!(described_edit(answer, PRICING), None, "{answer}");
        }
    }
}
