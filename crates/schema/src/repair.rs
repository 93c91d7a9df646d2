//! Repair of *historical* tool-call JSON being replayed into a prompt (raw control
//! characters, trailing commas, unclosed strings and brackets, a code fence). Never
//! used to execute a new call: new calls are parsed strictly.

use serde_json::Value;

/// Parses `text` as JSON, repairing the damage small models leave; `None` when even
/// the repaired text does not parse.
pub fn repair_historical_json(text: &str) -> Option<Value> {
    if let Ok(v) = serde_json::from_str(text) {
        return Some(v);
    }
    let body = strip_fence(text.trim());
    let mut out = String::with_capacity(body.len() + 8);
    let mut closers: Vec<char> = Vec::new();
    let mut in_string = false;
    let mut escaped = false;
    for c in body.chars() {
        if in_string {
            if escaped {
                escaped = false;
                out.push(c);
            } else if c == '\\' {
                escaped = true;
                out.push(c);
            } else if c == '"' {
                in_string = false;
                out.push(c);
            } else if (c as u32) < 0x20 {
                match c {
                    '\n' => out.push_str("\\n"),
                    '\r' => out.push_str("\\r"),
                    '\t' => out.push_str("\\t"),
                    other => out.push_str(&format!("\\u{:04x}", other as u32)),
                }
            } else {
                out.push(c);
            }
            continue;
        }
        match c {
            '"' => {
                in_string = true;
                out.push(c);
            }
            '{' => {
                closers.push('}');
                out.push(c);
            }
            '[' => {
                closers.push(']');
                out.push(c);
            }
            '}' | ']' => {
                drop_trailing_comma(&mut out);
                if closers.last() == Some(&c) {
                    closers.pop();
                }
                out.push(c);
            }
            c if (c as u32) < 0x20 && !matches!(c, '\n' | '\r' | '\t') => {}
            c => out.push(c),
        }
    }
    if escaped {
        out.pop();
    }
    if in_string {
        out.push('"');
    }
    drop_trailing_comma(&mut out);
    if out.trim_end().ends_with(':') {
        out.push_str(" null");
    }
    while let Some(closer) = closers.pop() {
        drop_trailing_comma(&mut out);
        out.push(closer);
    }
    serde_json::from_str(&out).ok()
}

fn drop_trailing_comma(out: &mut String) {
    let trimmed = out.trim_end().len();
    if out[..trimmed].ends_with(',') {
        out.truncate(trimmed - 1);
    }
}

fn strip_fence(text: &str) -> &str {
    let Some(rest) = text.strip_prefix("```") else {
        return text;
    };
    let rest = rest.trim_start_matches(|c: char| c.is_ascii_alphanumeric());
    rest.trim_end().strip_suffix("```").unwrap_or(rest).trim()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn repairs_what_small_models_break() {
        let cases = [
            (r#"{"a": 1,}"#, json!({"a": 1})),
            (r#"{"a": [1, 2,], }"#, json!({"a": [1, 2]})),
            ("{\"a\": \"line\nbreak\"}", json!({"a": "line\nbreak"})),
            (r#"{"a": {"b": "open"#, json!({"a": {"b": "open"}})),
            (r#"{"a": "#, json!({"a": null})),
            (r#"{"a": ""#, json!({"a": ""})),
            (r#"{"a":"#, json!({"a": null})),
            ("```json\n{\"a\": 1}\n```", json!({"a": 1})),
            ("{\"a\": \"x\"}\u{1}", json!({"a": "x"})),
            (
                r#"{"a": "quote \" inside", "b": [{"c": 1}"#,
                json!({"a": "quote \" inside", "b": [{"c": 1}]}),
            ),
        ];
        for (text, expected) in cases {
            assert_eq!(repair_historical_json(text), Some(expected), "{text:?}");
        }
        assert_eq!(repair_historical_json("not json at all"), None);
    }
}
