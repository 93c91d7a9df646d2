//! Calls that pass an identifier the conversation never showed: `get_order_status`
//! with `ORD-10000` in the same reply as the `list_orders` call that would give the
//! real one. A small model fills a dependent call with a made-up id instead of waiting
//! for the result; the `full` profile does not run such a call and says where the
//! value has to come from. A value the tool's schema offers (an enum member such as
//! `utf8` or `us-east-1`, a const, a default) was shown to the model: no guess.

use std::collections::HashSet;
use std::path::Path;

use rein_protocol::{Message, Role};

use crate::grounding::{names_existing_path, strings};
use crate::validate::ReadyCall;

/// The first argument of `call` that is a whole identifier (letters and digits, as
/// `ORD-10000`, `U-7731` or `9f3c2e1ab7d4`) found nowhere in what the model was shown
/// (the user's messages, the tool results in `history`) and not a path under `root`;
/// a value the tool's schema `offered` (enum members, consts, defaults) is a choice.
pub(crate) fn guessed_identifier(
    call: &ReadyCall,
    history: &[Message],
    offered: &HashSet<String>,
    root: &Path,
) -> Option<String> {
    let mut values = Vec::new();
    strings(&call.arguments, &mut values);
    let shown = || {
        history
            .iter()
            .filter(|m| matches!(m.role, Role::User | Role::Tool))
            .filter_map(|m| m.content.as_deref())
            .map(str::to_lowercase)
            .collect::<Vec<_>>()
    };
    let candidates: Vec<&str> = values
        .into_iter()
        .map(str::trim)
        .filter(|value| is_identifier(value) && !names_existing_path(value, root))
        .collect();
    if candidates.is_empty() {
        return None;
    }
    let shown = shown();
    candidates
        .into_iter()
        .find(|value| {
            let lower = value.to_lowercase();
            !shown.iter().any(|text| text.contains(&lower)) && !offered.contains(*value)
        })
        .map(String::from)
}

/// The result given instead of running a call with a guessed `value`.
pub(crate) fn guessed_note(tool: &str, value: &str) -> String {
    format!(
        "Not run: `{value}` appears nowhere in the request or in any result so far, so it is a guess. Get the real value first (the call whose result gives it), then call `{tool}` again with the value from that result."
    )
}

/// Whether `value` is one identifier: 4 to 64 characters of letters, digits, `-` and
/// `_`, starting and ending with a letter or digit, with at least one letter and one
/// digit (so neither a word nor a number nor a date).
pub(crate) fn is_identifier(value: &str) -> bool {
    let length = value.chars().count();
    (4..=64).contains(&length)
        && value
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
        && value.starts_with(|c: char| c.is_ascii_alphanumeric())
        && value.ends_with(|c: char| c.is_ascii_alphanumeric())
        && value.chars().any(|c| c.is_ascii_alphabetic())
        && value.chars().any(|c| c.is_ascii_digit())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{json, Value};

    fn call(arguments: Value) -> ReadyCall {
        ReadyCall {
            id: "call_2".into(),
            name: "get_order_status".into(),
            arguments,
        }
    }

    fn root() -> std::path::PathBuf {
        std::env::temp_dir().join("rein-guesses-no-such-dir")
    }

    fn history(result: &str) -> Vec<Message> {
        vec![
            Message::system("rules mention ORD-1"),
            Message::user("What is the status of the latest order of U-7731?"),
            Message::tool_result("call_1", "list_orders", result),
        ]
    }

    #[test]
    fn an_identifier_nobody_showed_is_a_guess() {
        let h = history("orders: ORD-88120, ORD-89954");
        assert_eq!(
            guessed_identifier(
                &call(json!({"order_id": "ORD-10000"})),
                &h,
                &HashSet::new(),
                &root()
            )
            .as_deref(),
            Some("ORD-10000")
        );
        // From a result or the request, in any case: not a guess.
        assert_eq!(
            guessed_identifier(
                &call(json!({"order_id": "ord-89954"})),
                &h,
                &HashSet::new(),
                &root()
            ),
            None
        );
        assert_eq!(
            guessed_identifier(
                &call(json!({"user_id": "U-7731"})),
                &h,
                &HashSet::new(),
                &root()
            ),
            None
        );
        // The system prompt is not something the model was shown as data.
        assert!(guessed_identifier(
            &call(json!({"order_id": "ORD-1"})),
            &h,
            &HashSet::new(),
            &root()
        )
        .is_some());
    }

    #[test]
    fn a_value_the_tool_s_schema_offers_is_no_guess() {
        let h = history("nothing");
        let schema = json!({
            "type": "object",
            "properties": {
                "encoding": {"type": "string", "enum": ["utf8", "latin1"]},
                "region": {"type": "string", "default": "us-east-1"},
                "order_id": {"type": "string", "description": "The order, e.g. ORD-10000."}
            }
        });
        let mut offered = HashSet::new();
        crate::grounding::offered_values(&schema, &mut offered);
        let encoding = call(json!({"encoding": "utf8"}));
        assert_eq!(guessed_identifier(&encoding, &h, &offered, &root()), None);
        let region = call(json!({"region": "us-east-1"}));
        assert_eq!(guessed_identifier(&region, &h, &offered, &root()), None);
        // Without the schema both are values nothing showed; the example a
        // description gives is still a guess when copied.
        assert!(guessed_identifier(&encoding, &h, &HashSet::new(), &root()).is_some());
        let example = call(json!({"order_id": "ORD-10000"}));
        assert_eq!(
            guessed_identifier(&example, &h, &offered, &root()).as_deref(),
            Some("ORD-10000")
        );
    }

    #[test]
    fn words_numbers_dates_paths_and_text_are_not_identifiers() {
        for value in [
            "latest",
            "2024-07-15",
            "12345",
            "src/main.rs",
            "a1",
            "hello world 42",
            "-x1y-",
        ] {
            assert!(!is_identifier(value), "{value}");
        }
        for value in ["ORD-10000", "U-7731", "9f3c2e1ab7d4", "WN-2240", "sha_1a2b"] {
            assert!(is_identifier(value), "{value}");
        }
        let h = history("nothing");
        assert_eq!(
            guessed_identifier(
                &call(json!({"path": "migrations/0005_add.sql"})),
                &h,
                &HashSet::new(),
                &root()
            ),
            None
        );
        // A file that exists is not a guess, whatever its name.
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("data2"), "x").unwrap();
        assert_eq!(
            guessed_identifier(
                &call(json!({"path": "data2"})),
                &h,
                &HashSet::new(),
                dir.path()
            ),
            None
        );
    }
}
