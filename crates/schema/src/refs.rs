//! Local `$ref` resolution: `#`, `#/$defs/Name`, `#/definitions/Name`, any JSON pointer.

use serde_json::Value;

use crate::SchemaError;

/// The node `reference` points to inside `root`.
pub(crate) fn resolve<'a>(
    root: &'a Value,
    reference: &str,
    path: &str,
) -> Result<&'a Value, SchemaError> {
    let unknown = || SchemaError::UnknownRef {
        path: path.to_string(),
        reference: reference.to_string(),
    };
    let pointer = reference.strip_prefix('#').ok_or_else(unknown)?;
    if pointer.is_empty() {
        return Ok(root);
    }
    if !pointer.starts_with('/') {
        return Err(unknown());
    }
    let decoded = percent_decode(pointer).ok_or_else(unknown)?;
    root.pointer(&decoded).ok_or_else(unknown)
}

/// Escapes a key for use in a JSON pointer.
pub(crate) fn escape(key: &str) -> String {
    key.replace('~', "~0").replace('/', "~1")
}

/// URI-fragment percent-decoding (`%24defs` → `$defs`).
fn percent_decode(text: &str) -> Option<String> {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = std::str::from_utf8(bytes.get(i + 1..i + 3)?).ok()?;
            out.push(u8::from_str_radix(hex, 16).ok()?);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(out).ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn resolves_local_pointers() {
        let root = json!({"$defs": {"A/B": {"type": "string"}}, "definitions": {"n": {"type": "integer"}}});
        assert_eq!(
            resolve(&root, "#/$defs/A~1B", "").unwrap(),
            &json!({"type": "string"})
        );
        assert_eq!(
            resolve(&root, "#/definitions/n", "").unwrap(),
            &json!({"type": "integer"})
        );
        assert_eq!(
            resolve(&root, "#/%24defs/A~1B", "").unwrap(),
            &json!({"type": "string"})
        );
        assert_eq!(resolve(&root, "#", "").unwrap(), &root);
        for bad in ["#/$defs/missing", "other.json#/x", "#bad", "#/%zz"] {
            assert!(resolve(&root, bad, "/p").is_err(), "{bad}");
        }
    }
}
