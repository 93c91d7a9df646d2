//! A `tools/call` result as the text the model reads: text blocks as they are,
//! embedded text resources with their URI, resource links as one line each, and
//! images, audio and binary resources described (kind, type, size), never dropped
//! silently and never pasted as base64. Structured content stands in when there is
//! no text. The whole is bounded.

use serde_json::Value;

/// The text of `result` (a `CallToolResult` as JSON), at most `max_chars`
/// characters, and whether the server marked it an error.
pub fn render(result: &Value, max_chars: usize) -> (String, bool) {
    let is_error = result
        .get("isError")
        .and_then(Value::as_bool)
        .unwrap_or(false);
    let mut parts: Vec<String> = result
        .get("content")
        .and_then(Value::as_array)
        .map(|blocks| blocks.iter().filter_map(render_block).collect())
        .unwrap_or_default();
    let has_text = result
        .get("content")
        .and_then(Value::as_array)
        .is_some_and(|blocks| {
            blocks
                .iter()
                .any(|b| b.get("type").and_then(Value::as_str) == Some("text"))
        });
    if !has_text {
        if let Some(structured) = result.get("structuredContent").filter(|v| !v.is_null()) {
            parts.insert(0, structured.to_string());
        }
    }
    let text = if parts.is_empty() {
        "(the tool returned nothing)".to_string()
    } else {
        parts.join("\n")
    };
    (bounded(&text, max_chars), is_error)
}

fn render_block(block: &Value) -> Option<String> {
    let field = |key: &str| block.get(key).and_then(Value::as_str);
    let kind = field("type").unwrap_or("");
    let rendered = match kind {
        "text" => field("text").unwrap_or("").to_string(),
        "image" | "audio" => described(
            kind,
            field("mimeType"),
            field("data").map(base64_bytes),
            None,
        ),
        "resource" => {
            let resource = block.get("resource")?;
            let part = |key: &str| resource.get(key).and_then(Value::as_str);
            let uri = part("uri").unwrap_or("?");
            match part("text") {
                Some(text) => format!("resource {uri}:\n{text}"),
                None => described(
                    "resource",
                    part("mimeType"),
                    part("blob").map(base64_bytes),
                    Some(uri),
                ),
            }
        }
        "resource_link" => {
            let mut line = format!(
                "resource link: {} {}",
                field("name").unwrap_or("(unnamed)"),
                field("uri").unwrap_or("?")
            );
            let size = block.get("size").and_then(Value::as_u64);
            match (field("mimeType"), size) {
                (Some(mime), Some(size)) => line.push_str(&format!(" ({mime}, {size} bytes)")),
                (Some(mime), None) => line.push_str(&format!(" ({mime})")),
                (None, Some(size)) => line.push_str(&format!(" ({size} bytes)")),
                (None, None) => {}
            }
            if let Some(description) = field("description").filter(|d| !d.trim().is_empty()) {
                line.push_str(&format!(": {}", one_line(description)));
            }
            line
        }
        other => format!("[content of type `{}`, not shown]", one_line(other)),
    };
    Some(rendered)
}

/// `[image image/png, 1234 bytes, not shown]`.
fn described(kind: &str, mime: Option<&str>, bytes: Option<usize>, uri: Option<&str>) -> String {
    let mut text = format!("[{kind}");
    if let Some(uri) = uri {
        text.push_str(&format!(" {uri}"));
    }
    if let Some(mime) = mime {
        text.push_str(&format!(" {}", one_line(mime)));
    }
    if let Some(bytes) = bytes {
        text.push_str(&format!(", {bytes} bytes"));
    }
    text.push_str(", not shown]");
    text
}

/// The decoded size of base64 `data`.
fn base64_bytes(data: &str) -> usize {
    let digits = data.bytes().filter(|b| !b.is_ascii_whitespace()).count();
    let padding = data
        .trim_end()
        .bytes()
        .rev()
        .take_while(|b| *b == b'=')
        .count();
    (digits * 3 / 4).saturating_sub(padding)
}

/// `text` on one line, runs of whitespace as one space.
pub(crate) fn one_line(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// `text` on one line and at most `max_chars` characters: a longer one keeps its
/// start and its end (where a schema error says what is wrong) around `…`.
pub(crate) fn one_short_line(text: &str, max_chars: usize) -> String {
    let line = one_line(text);
    let total = line.chars().count();
    if total <= max_chars {
        return line;
    }
    let half = max_chars.saturating_sub(1) / 2;
    let start: String = line.chars().take(half).collect();
    let end: String = line.chars().skip(total - half).collect();
    format!("{start}…{end}")
}

/// `text` cut to `max_chars` characters, the cut said in a last line.
fn bounded(text: &str, max_chars: usize) -> String {
    let total = text.chars().count();
    if total <= max_chars {
        return text.to_string();
    }
    let kept: String = text.chars().take(max_chars).collect();
    format!(
        "{kept}\n[… {} more characters not shown]",
        total - max_chars
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_long_line_keeps_its_start_and_end() {
        assert_eq!(one_short_line("a  b\nc", 10), "a b c");
        let long = format!("at /{}: too deep", "next/".repeat(40));
        let short = one_short_line(&long, 41);
        assert_eq!(short.chars().count(), 41);
        assert!(
            short.starts_with("at /next/") && short.ends_with("t/: too deep"),
            "{short}"
        );
    }

    #[test]
    fn text_and_resources_are_shown_binary_content_is_described() {
        let result = json!({"content": [
            {"type": "text", "text": "hello"},
            {"type": "image", "data": "aGVsbG8=", "mimeType": "image/png"},
            {"type": "audio", "data": "AAAA", "mimeType": "audio/wav"},
            {"type": "resource", "resource": {"uri": "file:///a.txt", "text": "A"}},
            {"type": "resource", "resource": {"uri": "file:///b.bin", "blob": "AAAAAA==", "mimeType": "application/octet-stream"}},
            {"type": "resource_link", "uri": "file:///c.md", "name": "c.md", "mimeType": "text/markdown", "description": "the\nreadme"},
            {"type": "hologram"}
        ]});
        let (text, is_error) = render(&result, 10_000);
        assert!(!is_error);
        assert_eq!(
            text,
            "hello\n[image image/png, 5 bytes, not shown]\n[audio audio/wav, 3 bytes, not shown]\n\
             resource file:///a.txt:\nA\n[resource file:///b.bin application/octet-stream, 4 bytes, not shown]\n\
             resource link: c.md file:///c.md (text/markdown): the readme\n[content of type `hologram`, not shown]"
        );
    }

    #[test]
    fn structured_content_stands_in_for_missing_text_and_errors_are_marked() {
        let (text, is_error) = render(
            &json!({"content": [], "structuredContent": {"temp": 21}, "isError": true}),
            100,
        );
        assert_eq!(text, r#"{"temp":21}"#);
        assert!(is_error);
        let (text, _) = render(
            &json!({"content": [{"type": "text", "text": "21 C"}], "structuredContent": {"temp": 21}}),
            100,
        );
        assert_eq!(text, "21 C");
        assert_eq!(render(&json!({}), 100).0, "(the tool returned nothing)");
    }

    #[test]
    fn long_results_are_cut_and_say_so() {
        let (text, _) = render(
            &json!({"content": [{"type": "text", "text": "é".repeat(50)}]}),
            10,
        );
        assert_eq!(
            text,
            format!("{}\n[… 40 more characters not shown]", "é".repeat(10))
        );
    }
}
