//! The schema validation uses: the original, with type names normalized.

use serde_json::{Map, Value};

use crate::types::TypeName;

/// The original schema with alias type names replaced and the top-level object type
/// added, so a standard validator accepts it; everything else is kept.
pub(super) fn validation_schema(original: &Value) -> Value {
    let mut v = normalize_types(original);
    if let Value::Object(m) = &mut v {
        if !m.contains_key("type") && !m.contains_key("$ref") {
            m.insert("type".into(), Value::from("object"));
        }
    }
    v
}

pub(super) fn normalize_types(value: &Value) -> Value {
    match value {
        Value::Object(map) => {
            let mut out = Map::with_capacity(map.len());
            for (k, v) in map {
                let v = match (k.as_str(), v) {
                    ("type", Value::String(name)) => match TypeName::parse(name) {
                        Some((TypeName::Any, _)) => continue,
                        Some((ty, _)) => Value::from(ty.json_name().unwrap_or("object")),
                        None => v.clone(),
                    },
                    ("type", Value::Array(names)) => {
                        let mapped: Vec<Value> = names
                            .iter()
                            .map(|n| {
                                n.as_str()
                                    .and_then(TypeName::parse)
                                    .and_then(|(t, _)| t.json_name())
                                    .map_or_else(|| n.clone(), Value::from)
                            })
                            .collect();
                        Value::Array(mapped)
                    }
                    ("enum" | "const" | "default" | "examples" | "example", _) => v.clone(),
                    _ => normalize_types(v),
                };
                out.insert(k.clone(), v);
            }
            Value::Object(out)
        }
        Value::Array(list) => Value::Array(list.iter().map(normalize_types).collect()),
        other => other.clone(),
    }
}
