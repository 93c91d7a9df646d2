//! A call whose result says its value was not found, while an earlier result gave
//! another value under a key that ends with the argument's name: asked to "get that
//! branch" after `default_branch: trunk`, the 1.5B model called `get_branch` with
//! `main` (the task's "do not assume it is main"), got "error: branch not found" and
//! answered that the branch does not exist. The result then ends with the earlier
//! value and the same call with it.

use serde_json::Value;

use crate::validate::ReadyCall;

/// Results longer than this are not a bare "not found".
const MAX_NOT_FOUND_CHARS: usize = 200;
/// Words that say a value was not found.
const NOT_FOUND: [&str; 4] = ["not found", "no such", "does not exist", "doesn't exist"];

/// The note to add to `result` of `call` when it says the value was not found and
/// exactly one earlier result (of `earlier`) gives one other value under a key that
/// ends with the name of the call's argument; `call_text` writes the call with it.
pub(crate) fn not_found_note(
    call: &ReadyCall,
    result: &str,
    earlier: &[&str],
    call_text: impl Fn(&str, &Value) -> String,
) -> Option<String> {
    let lower = result.to_lowercase();
    if result.chars().count() > MAX_NOT_FOUND_CHARS
        || !NOT_FOUND.iter().any(|words| lower.contains(words))
    {
        return None;
    }
    let arguments = call.arguments.as_object()?;
    let mut found: Option<(String, String, String)> = None;
    for (name, value) in arguments {
        let Some(value) = value.as_str() else {
            continue;
        };
        for (key, other) in earlier.iter().flat_map(|r| key_values(r)) {
            let last = key.rsplit('.').next().unwrap_or(key);
            // A short name (`id`, `sha`) only under a key whose other part is a
            // part of the tool's name (`order_id` for `get_order`).
            let named = last == name
                || last
                    .strip_suffix(&format!("_{name}"))
                    .is_some_and(|prefix| {
                        name.len() > 3 || call.name.split('_').any(|part| part == prefix)
                    });
            if !named || other == value {
                continue;
            }
            match &found {
                Some((n, _, o)) if n == name && o == other => {}
                // Two candidates: no judgement.
                Some(_) => return None,
                None => found = Some((name.clone(), key.to_string(), other.to_string())),
            }
        }
    }
    let (name, key, other) = found?;
    let value = arguments.get(&name)?.as_str()?;
    let mut fixed = call.arguments.clone();
    fixed[name.as_str()] = Value::String(other.clone());
    Some(format!(
        "\n`{value}` was not found; an earlier result gave `{key}: {other}`. The same call with it:\n{}",
        call_text(&call.name, &fixed)
    ))
}

/// The `key: value` lines of a result whose value is one word.
fn key_values(result: &str) -> impl Iterator<Item = (&str, &str)> {
    result.lines().filter_map(|line| {
        let (key, value) = line.trim().split_once(": ")?;
        let value = value.trim();
        let word = |s: &str| !s.is_empty() && !s.contains(char::is_whitespace);
        (word(key) && word(value) && !key.starts_with('-')).then_some((key, value))
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn call(arguments: Value) -> ReadyCall {
        ReadyCall {
            id: "call_1".into(),
            name: "get_branch".into(),
            arguments,
        }
    }

    const REPOSITORY: &str = "full_name: acme/ledger\nprivate: false\ndefault_branch: trunk";

    #[test]
    fn a_value_not_found_gets_the_one_an_earlier_result_gave() {
        let branch = call(json!({"repo": "acme/ledger", "branch": "main"}));
        let note = not_found_note(
            &branch,
            "error: branch not found",
            &[REPOSITORY],
            |name, args| format!("{name} {args}"),
        )
        .unwrap();
        assert!(
            note.contains("`main` was not found; an earlier result gave `default_branch: trunk`"),
            "{note}"
        );
        assert!(
            note.ends_with(r#"get_branch {"repo":"acme/ledger","branch":"trunk"}"#),
            "{note}"
        );
    }

    #[test]
    fn found_values_other_keys_and_two_candidates_give_nothing() {
        let write = |_: &str, _: &Value| String::new();
        let branch = call(json!({"repo": "acme/ledger", "branch": "main"}));
        assert_eq!(
            not_found_note(&branch, "name: main", &[REPOSITORY], write),
            None
        );
        let other = call(json!({"sha": "abc123"}));
        assert_eq!(
            not_found_note(&other, "error: not found", &[REPOSITORY], write),
            None
        );
        // A short name under an unrelated key: `user_id` is no order's id.
        let order = ReadyCall {
            id: "call_2".into(),
            name: "get_order".into(),
            arguments: json!({"id": "ORD-9"}),
        };
        assert_eq!(
            not_found_note(&order, "order not found", &["user_id: 42"], write),
            None
        );
        assert!(not_found_note(&order, "order not found", &["order_id: ORD-7"], write).is_some());
        // "unknown" is a state, not a miss.
        assert_eq!(
            not_found_note(&branch, "state: unknown", &[REPOSITORY], write),
            None
        );
        let two = "default_branch: trunk\nrelease_branch: stable";
        assert_eq!(
            not_found_note(&branch, "error: branch not found", &[two], write),
            None
        );
    }
}
