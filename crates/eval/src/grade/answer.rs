//! Final-answer graders: a text, a pattern, or a JSON value.

use serde_json::Value;

/// Whether the answer contains `text` (case-insensitive) when `wanted`, or lacks it.
pub fn contains(answer: &str, text: &str, wanted: bool) -> Result<String, String> {
    let found = answer.to_lowercase().contains(&text.to_lowercase());
    match (found, wanted) {
        (true, true) => Ok(format!("answer contains {text:?}")),
        (false, false) => Ok(format!("answer lacks {text:?}")),
        (false, true) => Err(format!(
            "answer does not contain {text:?}: {}",
            excerpt(answer)
        )),
        (true, false) => Err(format!("answer contains {text:?}")),
    }
}

/// Whether the answer matches `pattern`.
pub fn matches(answer: &str, pattern: &str) -> Result<String, String> {
    let regex = regex::Regex::new(pattern).map_err(|e| format!("bad regex: {e}"))?;
    if regex.is_match(answer) {
        Ok(format!("answer matches /{pattern}/"))
    } else {
        Err(format!(
            "answer does not match /{pattern}/: {}",
            excerpt(answer)
        ))
    }
}

/// Whether a JSON value in the answer (the whole answer, a fenced block, or the
/// first `{`/`[` to its matching end) equals `value`, numbers by value.
pub fn json_equals(answer: &str, value: &Value) -> Result<String, String> {
    let found = json_values(answer);
    if found.is_empty() {
        return Err(format!("no JSON in the answer: {}", excerpt(answer)));
    }
    if found
        .iter()
        .any(|v| super::json_subset(value, v) && super::json_subset(v, value))
    {
        Ok("answer holds the expected JSON".into())
    } else {
        Err(format!("answer JSON {} is not {value}", found[0]))
    }
}

/// The JSON values the answer holds: the whole text, or each balanced `{..}`/`[..]`.
fn json_values(answer: &str) -> Vec<Value> {
    let trimmed = answer.trim();
    if let Ok(v) = serde_json::from_str::<Value>(trimmed) {
        return vec![v];
    }
    let mut values = Vec::new();
    for (start, c) in answer.char_indices() {
        if c != '{' && c != '[' {
            continue;
        }
        let mut stream = serde_json::Deserializer::from_str(&answer[start..]).into_iter::<Value>();
        if let Some(Ok(v)) = stream.next() {
            values.push(v);
        }
    }
    values
}

fn excerpt(answer: &str) -> String {
    let one_line = answer.replace('\n', " ");
    if one_line.chars().count() > 120 {
        format!("{:?}…", one_line.chars().take(120).collect::<String>())
    } else {
        format!("{one_line:?}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn contains_is_case_insensitive_and_can_fail() {
        assert!(contains("The answer is FORTY-TWO", "forty-two", true).is_ok());
        assert!(contains("The answer is 41", "42", true).is_err());
        assert!(contains("The answer is 42", "42", false).is_err());
    }

    #[test]
    fn matches_can_fail() {
        assert!(matches("port 8080", r"\b8080\b").is_ok());
        assert!(matches("port 80800", r"\b8080\b").is_err());
    }

    #[test]
    fn json_is_found_inside_prose_and_compared_exactly() {
        let want = json!({"total": 7, "items": ["a", "b"]});
        assert!(json_equals(r#"{"total": 7.0, "items": ["a","b"]}"#, &want).is_ok());
        assert!(json_equals(
            "Result:\n```json\n{\"total\": 7, \"items\": [\"a\", \"b\"]}\n```",
            &want
        )
        .is_ok());
        assert!(json_equals(r#"{"total": 7, "items": ["a","b"], "extra": 1}"#, &want).is_err());
        assert!(json_equals("seven", &want).is_err());
    }
}
