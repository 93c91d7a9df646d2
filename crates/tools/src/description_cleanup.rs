//! Removing sentences that mention tools that are not available, from a tool's
//! description and the descriptions inside its schema.

use serde_json::Value;

/// `spec` with every sentence that names one of `absent` (as a whole word) removed
/// from its description and from each `description` in its parameter schema.
pub(crate) fn without_mentions(
    mut spec: rein_protocol::ToolSpec,
    absent: &[&str],
) -> rein_protocol::ToolSpec {
    if let Some(description) = spec.function.description.take() {
        let cleaned = remove_sentences(&description, absent);
        spec.function.description = (!cleaned.is_empty()).then_some(cleaned);
    }
    if let Some(parameters) = spec.function.parameters.as_mut() {
        clean_schema(parameters, absent);
    }
    spec
}

/// Whether `text` names one of `names` as a whole word.
pub(crate) fn mentions_any(text: &str, names: &[&str]) -> bool {
    names.iter().any(|name| mentions(text, name))
}

fn clean_schema(schema: &mut Value, absent: &[&str]) {
    match schema {
        Value::Object(map) => {
            if let Some(Value::String(description)) = map.get("description") {
                let cleaned = remove_sentences(description, absent);
                if cleaned.is_empty() {
                    map.remove("description");
                } else {
                    map.insert("description".to_string(), Value::String(cleaned));
                }
            }
            for (key, value) in map.iter_mut() {
                if key != "description" {
                    clean_schema(value, absent);
                }
            }
        }
        Value::Array(items) => items.iter_mut().for_each(|item| clean_schema(item, absent)),
        _ => {}
    }
}

/// `text` without the sentences that mention any of `names`.
fn remove_sentences(text: &str, names: &[&str]) -> String {
    let kept: Vec<&str> = sentences(text)
        .into_iter()
        .filter(|sentence| !mentions_any(sentence, names))
        .collect();
    kept.join(" ")
}

/// Sentences end at `.`, `!` or `?` followed by whitespace or the end, and at line
/// breaks.
fn sentences(text: &str) -> Vec<&str> {
    let bytes = text.as_bytes();
    let mut found = Vec::new();
    let mut start = 0;
    for (index, &byte) in bytes.iter().enumerate() {
        let ends_sentence = byte == b'\n'
            || (matches!(byte, b'.' | b'!' | b'?')
                && bytes
                    .get(index + 1)
                    .is_none_or(|next| next.is_ascii_whitespace()));
        if ends_sentence {
            found.push(text[start..=index].trim());
            start = index + 1;
        }
    }
    found.push(text[start..].trim());
    found
        .into_iter()
        .filter(|sentence| !sentence.is_empty())
        .collect()
}

fn mentions(text: &str, name: &str) -> bool {
    let is_word = |character: char| character.is_alphanumeric() || character == '_';
    text.match_indices(name).any(|(start, _)| {
        let before = text[..start].chars().next_back();
        let after = text[start + name.len()..].chars().next();
        !before.is_some_and(is_word) && !after.is_some_and(is_word)
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use rein_protocol::{FunctionSpec, ToolSpec};
    use serde_json::json;

    #[test]
    fn sentences_naming_absent_tools_are_removed_as_whole_words() {
        let text = "Read a file. Use list_dir for directories. Use the shell tool for binaries! Shells are fine.";
        assert_eq!(
            remove_sentences(text, &["shell", "list_dir"]),
            "Read a file. Shells are fine."
        );
        assert!(mentions("call `shell`.", "shell"));
        assert!(!mentions("shells", "shell"));
        assert!(!mentions("myshell", "shell"));
    }

    #[test]
    fn schema_descriptions_are_cleaned_too() {
        let spec = ToolSpec {
            kind: "function".to_string(),
            function: FunctionSpec {
                name: "read_file".to_string(),
                description: Some("Use shell for pipes.".to_string()),
                parameters: Some(json!({
                    "type": "object",
                    "properties": {"path": {"type": "string", "description": "A path. Or ask shell."}}
                })),
            },
        };
        let cleaned = without_mentions(spec, &["shell"]);
        assert_eq!(cleaned.function.description, None);
        assert_eq!(
            cleaned.function.parameters.unwrap()["properties"]["path"]["description"],
            "A path."
        );
    }
}
