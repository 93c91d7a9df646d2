//! Calls that pass an identifier the conversation never showed: `get_order_status`
//! with `ORD-10000` in the same reply as the `list_orders` call that would give the
//! real one. A small model fills a dependent call with a made-up id instead of waiting
//! for the result; the `full` profile does not run such a call and says where the
//! value has to come from. A value the tool's schema spells out (an enum member such
//! as `utf8` or `us-east-1`, a default, an example) was shown to the model: no guess.

use std::path::Path;

use rein_protocol::{Message, Role};

use crate::grounding::{names_existing_path, strings};
use crate::validate::ReadyCall;

/// The first argument of `call` that is a whole identifier (letters and digits, as
/// `ORD-10000`, `U-7731` or `9f3c2e1ab7d4`) found nowhere in what the model was shown
/// (the user's messages, the tool results in `history`, the tool's `schema` as JSON
/// text) and not a path under `root`.
pub(crate) fn guessed_identifier(
    call: &ReadyCall,
    history: &[Message],
    schema: &str,
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
    let schema = schema.to_lowercase();
    candidates
        .into_iter()
        .find(|value| {
            let value = value.to_lowercase();
            !shown.iter().any(|text| text.contains(&value)) && !spells(&schema, &value)
        })
        .map(String::from)
}

/// Whether `text` holds `value` as a whole token (not inside a longer identifier).
fn spells(text: &str, value: &str) -> bool {
    let part = |c: char| c.is_ascii_alphanumeric() || c == '-' || c == '_';
    text.match_indices(value).any(|(at, _)| {
        let before = text[..at].chars().next_back();
        let after = text[at + value.len()..].chars().next();
        !before.is_some_and(part) && !after.is_some_and(part)
    })
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
            guessed_identifier(&call(json!({"order_id": "ORD-10000"})), &h, "", &root()).as_deref(),
            Some("ORD-10000")
        );
        // From a result or the request, in any case: not a guess.
        assert_eq!(
            guessed_identifier(&call(json!({"order_id": "ord-89954"})), &h, "", &root()),
            None
        );
        assert_eq!(
            guessed_identifier(&call(json!({"user_id": "U-7731"})), &h, "", &root()),
            None
        );
        // The system prompt is not something the model was shown as data.
        assert!(guessed_identifier(&call(json!({"order_id": "ORD-1"})), &h, "", &root()).is_some());
    }

    #[test]
    fn a_value_the_tool_s_schema_spells_out_is_no_guess() {
        let h = history("nothing");
        let schema = json!({
            "type": "object",
            "properties": {
                "encoding": {"type": "string", "enum": ["utf8", "latin1"]},
                "region": {"type": "string", "description": "Region, such as us-east-1."}
            }
        })
        .to_string();
        let encoding = call(json!({"encoding": "utf8"}));
        assert_eq!(guessed_identifier(&encoding, &h, &schema, &root()), None);
        let region = call(json!({"region": "us-east-1"}));
        assert_eq!(guessed_identifier(&region, &h, &schema, &root()), None);
        // Without the schema both are values nothing showed; a longer one that
        // merely contains a listed value is still a guess.
        assert!(guessed_identifier(&encoding, &h, "", &root()).is_some());
        let longer = call(json!({"region": "us-east-12"}));
        assert_eq!(
            guessed_identifier(&longer, &h, &schema, &root()).as_deref(),
            Some("us-east-12")
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
                "",
                &root()
            ),
            None
        );
        // A file that exists is not a guess, whatever its name.
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("data2"), "x").unwrap();
        assert_eq!(
            guessed_identifier(&call(json!({"path": "data2"})), &h, "", dir.path()),
            None
        );
    }
}
