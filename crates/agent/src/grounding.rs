//! Whether the run's first call takes its values from the request. A small model
//! asked something no tool fits ("What is 12 times 12?" with weather tools) still
//! calls a tool, with values the request never gave (`{"city": "Rome"}`); the `full`
//! profile holds such a first call once and says that answering directly is allowed.

use std::collections::HashSet;
use std::path::Path;

use serde_json::Value;

use crate::validate::ReadyCall;

/// The string values of `call` that are not grounded in `request`, when every one of
/// them is (and there is at least one); `None` when the call is grounded, or has no
/// value to judge. A value is grounded when it shares a word (three or more letters
/// or digits; plural or not) with the request, when it is `.`-like, when it names a
/// path that exists under `root`, or when it is one of `commands` (those the
/// workspace's manifests imply, shown to the model), alone or with arguments; a value
/// the schema lists in an `enum` is a choice, not a fact, and is not judged.
pub(crate) fn ungrounded_values(
    call: &ReadyCall,
    request: &str,
    root: &Path,
    enums: &HashSet<String>,
    commands: &[&str],
) -> Option<Vec<String>> {
    let request_words = stems(request);
    let mut judged = Vec::new();
    strings(&call.arguments, &mut judged);
    let judged: Vec<&str> = judged
        .into_iter()
        .map(str::trim)
        .filter(|value| value.chars().count() > 1 && !matches!(*value, "./" | ".."))
        .filter(|value| !enums.contains(*value))
        .collect();
    if judged.is_empty() {
        return None;
    }
    let given_command = |value: &str| {
        commands
            .iter()
            .any(|command| value == *command || value.starts_with(&format!("{command} ")))
    };
    let grounded = |value: &str| {
        !stems(value).is_disjoint(&request_words)
            || names_existing_path(value, root)
            || given_command(value)
    };
    if judged.iter().any(|value| grounded(value)) {
        return None;
    }
    Some(judged.into_iter().map(String::from).collect())
}

/// The note for a held first call.
pub(crate) fn ungrounded_note(tool: &str, values: &[String]) -> String {
    let shown: Vec<String> = values
        .iter()
        .take(3)
        .map(|value| format!("\"{}\"", value.chars().take(60).collect::<String>()))
        .collect();
    format!(
        "Your call of `{tool}` was not run: the request does not mention {}. If the request needs `{tool}`, call it again with values taken from the request. If no tool fits the request (a question you can answer from what you know), answer it directly in plain words, without a call.",
        shown.join(", ")
    )
}

/// Words that tie a value to no request: a SQL query's `FROM` shares "from" with
/// "Sort these numbers from smallest to largest" and takes nothing from it.
const FUNCTION_WORDS: [&str; 24] = [
    "the", "and", "for", "from", "with", "into", "onto", "this", "that", "these", "those", "what",
    "which", "who", "how", "are", "was", "were", "not", "but", "all", "any", "its", "than",
];

/// The lowercase words of `text` that are three or more letters or digits long,
/// function words left out.
pub(crate) fn words(text: &str) -> HashSet<String> {
    text.split(|c: char| !c.is_alphanumeric())
        .filter(|word| word.chars().count() >= 3)
        .map(str::to_lowercase)
        .filter(|word| !FUNCTION_WORDS.contains(&word.as_str()))
        .collect()
}

/// [`words`], each without a plural's `s` (`tests` and `test` are one word).
fn stems(text: &str) -> HashSet<String> {
    words(text)
        .into_iter()
        .map(|word| match word.strip_suffix('s') {
            Some(stem) if stem.chars().count() >= 3 && !stem.ends_with('s') => stem.to_string(),
            _ => word,
        })
        .collect()
}

/// Every string in `value`, keys excluded.
pub(crate) fn strings<'a>(value: &'a Value, out: &mut Vec<&'a str>) {
    match value {
        Value::String(text) => out.push(text),
        Value::Array(items) => items.iter().for_each(|item| strings(item, out)),
        Value::Object(map) => map.values().for_each(|item| strings(item, out)),
        _ => {}
    }
}

/// Whether `value` is a relative path that exists under `root`.
pub(crate) fn names_existing_path(value: &str, root: &Path) -> bool {
    let path = Path::new(value);
    path.is_relative()
        && !path
            .components()
            .any(|c| matches!(c, std::path::Component::ParentDir))
        && root.join(path).exists()
}

/// The string values `enum`s allow anywhere in `schema`.
pub(crate) fn enum_values(schema: &Value, out: &mut HashSet<String>) {
    match schema {
        Value::Object(map) => {
            for (key, item) in map {
                match (key.as_str(), item) {
                    ("enum", Value::Array(values)) => {
                        out.extend(values.iter().filter_map(Value::as_str).map(String::from))
                    }
                    ("const", Value::String(value)) => {
                        out.insert(value.clone());
                    }
                    _ => enum_values(item, out),
                }
            }
        }
        Value::Array(items) => items.iter().for_each(|item| enum_values(item, out)),
        _ => {}
    }
}

/// The string values `schema` offers as choices anywhere: its `enum` members and
/// `const`s, and the `default` of a property (not its examples or description: a
/// made-up value is often the example copied).
pub(crate) fn offered_values(schema: &Value, out: &mut HashSet<String>) {
    enum_values(schema, out);
    default_values(schema, out);
}

/// The string `default`s anywhere in `schema`.
fn default_values(schema: &Value, out: &mut HashSet<String>) {
    match schema {
        Value::Object(map) => {
            for (key, item) in map {
                match (key.as_str(), item) {
                    ("default", Value::String(value)) => {
                        out.insert(value.clone());
                    }
                    _ => default_values(item, out),
                }
            }
        }
        Value::Array(items) => items.iter().for_each(|item| default_values(item, out)),
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn call(arguments: Value) -> ReadyCall {
        ReadyCall {
            id: "call_1".into(),
            name: "tool".into(),
            arguments,
        }
    }

    fn judge(arguments: Value, request: &str) -> Option<Vec<String>> {
        let root = std::env::temp_dir();
        ungrounded_values(&call(arguments), request, &root, &HashSet::new(), &[])
    }

    #[test]
    fn values_the_request_never_gave_are_ungrounded() {
        assert_eq!(
            judge(json!({"city": "Rome"}), "What is 12 times 12?"),
            Some(vec!["Rome".to_string()])
        );
        assert!(judge(
            json!({"date": "2023-04-01"}),
            "What is the capital of France?"
        )
        .is_some());
        // A word like "from" ties nothing.
        assert!(judge(
            json!({"query": "SELECT * FROM sales WHERE price = 7"}),
            "Sort these numbers from smallest to largest: 9, 2, 7."
        )
        .is_some());
        assert!(judge(
            json!({"path": "C:\\Users\\User\\LeapYear.txt"}),
            "How many days are there in a leap year?"
        )
        .is_some());
    }

    #[test]
    fn values_from_the_request_or_the_workspace_are_grounded() {
        assert_eq!(judge(json!({"city": "Paris"}), "Weather in paris?"), None);
        assert_eq!(
            judge(
                json!({"query": "ship it", "limit": 3}),
                "Find the note where she said ship it"
            ),
            None
        );
        assert_eq!(judge(json!({"path": "."}), "List the files"), None);
        assert_eq!(judge(json!({"limit": 3}), "anything"), None);
        assert_eq!(judge(json!({}), "anything"), None);
        // One grounded value is enough.
        assert_eq!(
            judge(
                json!({"symbol": "AAPL", "exchange": "NASDAQ"}),
                "Price of AAPL?"
            ),
            None
        );
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("notes.txt"), "x").unwrap();
        let notes = call(json!({"path": "notes.txt"}));
        assert_eq!(
            ungrounded_values(
                &notes,
                "What does it say?",
                dir.path(),
                &HashSet::new(),
                &[]
            ),
            None
        );
        let outside = call(json!({"path": "../notes.txt"}));
        assert!(ungrounded_values(
            &outside,
            "What does it say?",
            dir.path(),
            &HashSet::new(),
            &[]
        )
        .is_some());
    }

    #[test]
    fn a_command_that_runs_what_the_request_names_is_grounded() {
        // "Run the tests" and `cargo test`: one word, plural or not.
        assert_eq!(
            judge(json!({"command": "cargo test"}), "Run the tests."),
            None
        );
        assert_eq!(judge(json!({"command": "npm run build"}), "Build it"), None);
        assert!(judge(json!({"command": "ls -la"}), "What is 12 times 12?").is_some());
        // A command the workspace's manifest implies, alone or with arguments, is
        // given; a value that merely shares one of its words is not.
        let root = std::env::temp_dir();
        let commands = ["python3 -m pytest"];
        let run = |command: &str| {
            let call = call(json!({ "command": command }));
            ungrounded_values(
                &call,
                "Check it all works.",
                &root,
                &HashSet::new(),
                &commands,
            )
        };
        assert_eq!(run("python3 -m pytest"), None);
        assert_eq!(run("python3 -m pytest -q tests/"), None);
        assert!(run("python3 -c 'print(1)'").is_some());
    }

    #[test]
    fn enum_choices_are_not_judged() {
        let mut enums = HashSet::new();
        enum_values(
            &json!({"properties": {"unit": {"enum": ["celsius", "fahrenheit"]}, "kind": {"const": "full"}}}),
            &mut enums,
        );
        assert!(enums.contains("fahrenheit") && enums.contains("full"));
        let root = std::env::temp_dir();
        let choice = call(json!({"unit": "celsius"}));
        assert_eq!(
            ungrounded_values(&choice, "How warm is it?", &root, &enums, &[]),
            None
        );
    }
}
