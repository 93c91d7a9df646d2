//! Narrow, schema-directed coercion of new tool-call arguments: only where the
//! declared type leaves no doubt ("42" → 42 for an integer, "true" → true for a
//! boolean, a bare value → [value] for an array, a JSON-encoded string → the array or
//! object the schema expects). A value that does not convert is left as it is, for
//! validation to reject with a specific message.

use serde_json::Value;

use crate::{Schema, SchemaKind};

impl Schema {
    /// `value` coerced toward this schema (property names as the model sees them).
    pub fn coerce(&self, value: Value) -> Value {
        match &self.kind {
            SchemaKind::Any => value,
            SchemaKind::Null => match value {
                Value::String(s) if s == "null" => Value::Null,
                other => other,
            },
            SchemaKind::Boolean => match value {
                Value::String(s) if s.eq_ignore_ascii_case("true") => Value::Bool(true),
                Value::String(s) if s.eq_ignore_ascii_case("false") => Value::Bool(false),
                other => other,
            },
            SchemaKind::Integer(_) => match value {
                Value::String(s) => parse_integer(&s).map_or(Value::String(s), Value::from),
                other => other,
            },
            SchemaKind::Number(_) => match value {
                Value::String(s) => parse_number(&s).map_or(Value::String(s), Value::from),
                other => other,
            },
            SchemaKind::String { .. } => value,
            SchemaKind::Enum(values) => {
                if values.contains(&value) {
                    return value;
                }
                match &value {
                    Value::String(s) => match serde_json::from_str::<Value>(s.trim()) {
                        Ok(parsed) if !parsed.is_string() && values.contains(&parsed) => parsed,
                        _ => value,
                    },
                    _ => value,
                }
            }
            SchemaKind::Array { items, .. } => {
                let list = match value {
                    Value::Array(list) => list,
                    Value::String(s) => match parse_json_text(&s) {
                        Some(Value::Array(list)) => list,
                        _ => {
                            let item = items.coerce(Value::String(s.clone()));
                            return if items.admits_shape(&item) {
                                Value::Array(vec![item])
                            } else {
                                Value::String(s)
                            };
                        }
                    },
                    Value::Null => return Value::Null,
                    other => vec![other],
                };
                Value::Array(list.into_iter().map(|v| items.coerce(v)).collect())
            }
            SchemaKind::Object {
                properties,
                additional,
            } => {
                let map = match value {
                    Value::Object(map) => map,
                    Value::String(s) => match parse_json_text(&s) {
                        Some(Value::Object(map)) => map,
                        _ => return Value::String(s),
                    },
                    other => return other,
                };
                Value::Object(
                    map.into_iter()
                        .map(|(k, v)| {
                            let v = match properties.iter().find(|p| p.name == k) {
                                Some(p) => p.schema.coerce(v),
                                None => additional.as_ref().map_or(v.clone(), |s| s.coerce(v)),
                            };
                            (k, v)
                        })
                        .collect(),
                )
            }
            SchemaKind::AnyOf(branches) => {
                if branches.iter().any(|b| b.admits_shape(&value)) {
                    // Already a shape one branch takes: coerce inside that branch only.
                    return match branches.iter().find(|b| b.admits_shape(&value)) {
                        Some(b) => b.coerce(value),
                        None => value,
                    };
                }
                for branch in branches {
                    let coerced = branch.coerce(value.clone());
                    if branch.admits_shape(&coerced) {
                        return coerced;
                    }
                }
                value
            }
        }
    }

    /// Whether `value` has the JSON type this schema asks for (bounds not checked).
    pub(crate) fn admits_shape(&self, value: &Value) -> bool {
        match (&self.kind, value) {
            (SchemaKind::Any, _) => true,
            (SchemaKind::Null, Value::Null) | (SchemaKind::Boolean, Value::Bool(_)) => true,
            (SchemaKind::Integer(_), Value::Number(n)) => {
                n.is_i64() || n.is_u64() || n.as_f64().is_some_and(|f| f.fract() == 0.0)
            }
            (SchemaKind::Number(_), Value::Number(_)) => true,
            (SchemaKind::String { .. }, Value::String(_)) => true,
            (SchemaKind::Enum(values), v) => values.contains(v),
            (SchemaKind::Array { .. }, Value::Array(_)) => true,
            (SchemaKind::Object { .. }, Value::Object(_)) => true,
            (SchemaKind::AnyOf(branches), v) => branches.iter().any(|b| b.admits_shape(v)),
            _ => false,
        }
    }
}

/// An integer written as a string: optional sign and digits only ("4.5", "1e3" and
/// "0x10" are not integers here).
fn parse_integer(text: &str) -> Option<i64> {
    let t = text.trim();
    let digits = t.strip_prefix(['-', '+']).unwrap_or(t);
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    t.parse().ok()
}

/// A finite number written as a string in JSON number syntax.
fn parse_number(text: &str) -> Option<f64> {
    match serde_json::from_str::<Value>(text.trim()) {
        Ok(Value::Number(n)) => n.as_f64().filter(|f| f.is_finite()),
        _ => None,
    }
}

/// A string that holds a JSON array or object.
fn parse_json_text(text: &str) -> Option<Value> {
    let t = text.trim();
    if !(t.starts_with('[') || t.starts_with('{')) {
        return None;
    }
    serde_json::from_str(t).ok()
}

#[cfg(test)]
mod tests {
    use crate::{sanitize, Limits};
    use serde_json::{json, Value};

    fn coerce(schema: Value, value: Value) -> Value {
        let s = sanitize(
            &json!({"type": "object", "properties": {"v": schema}}),
            Limits::default(),
        )
        .unwrap();
        s.schema.coerce(json!({ "v": value }))["v"].clone()
    }

    #[test]
    fn integers_only_from_integer_text() {
        let int = json!({"type": "integer"});
        assert_eq!(coerce(int.clone(), json!("42")), json!(42));
        assert_eq!(coerce(int.clone(), json!(" -7 ")), json!(-7));
        assert_eq!(coerce(int.clone(), json!("4.5")), json!("4.5"));
        assert_eq!(coerce(int.clone(), json!("1e3")), json!("1e3"));
        assert_eq!(coerce(int.clone(), json!("forty")), json!("forty"));
        assert_eq!(coerce(json!({"type": "number"}), json!("4.5")), json!(4.5));
        assert_eq!(
            coerce(json!({"type": "number"}), json!("NaN")),
            json!("NaN")
        );
    }

    #[test]
    fn booleans_and_null() {
        assert_eq!(
            coerce(json!({"type": "boolean"}), json!("true")),
            json!(true)
        );
        assert_eq!(
            coerce(json!({"type": "boolean"}), json!("False")),
            json!(false)
        );
        assert_eq!(
            coerce(json!({"type": "boolean"}), json!("yes")),
            json!("yes")
        );
        assert_eq!(
            coerce(json!({"type": ["integer", "null"]}), json!("null")),
            Value::Null
        );
        // A nullable string keeps "null": it is a valid string.
        assert_eq!(
            coerce(json!({"type": ["string", "null"]}), json!("null")),
            json!("null")
        );
        // Not nullable: "null" stays.
        assert_eq!(
            coerce(json!({"type": "integer"}), json!("null")),
            json!("null")
        );
    }

    #[test]
    fn arrays_and_objects() {
        let ints = json!({"type": "array", "items": {"type": "integer"}});
        assert_eq!(coerce(ints.clone(), json!(5)), json!([5]));
        assert_eq!(coerce(ints.clone(), json!("5")), json!([5]));
        assert_eq!(coerce(ints.clone(), json!("abc")), json!("abc"));
        assert_eq!(coerce(ints.clone(), json!("[1, \"2\"]")), json!([1, 2]));
        assert_eq!(coerce(ints, json!(["3", 4])), json!([3, 4]));
        let strings = json!({"type": "array", "items": {"type": "string"}});
        assert_eq!(coerce(strings, json!("a.txt")), json!(["a.txt"]));
        let obj = json!({"type": "object", "properties": {"n": {"type": "integer"}}});
        assert_eq!(
            coerce(obj.clone(), json!("{\"n\": \"3\"}")),
            json!({"n": 3})
        );
        assert_eq!(coerce(obj, json!("not json")), json!("not json"));
    }

    #[test]
    fn unions_prefer_a_branch_that_already_fits() {
        let u = json!({"anyOf": [{"type": "integer"}, {"type": "string"}]});
        assert_eq!(coerce(u.clone(), json!("42")), json!("42"));
        let u = json!({"anyOf": [{"type": "integer"}, {"type": "boolean"}]});
        assert_eq!(coerce(u.clone(), json!("42")), json!(42));
        assert_eq!(coerce(u, json!("true")), json!(true));
        assert_eq!(coerce(json!({"enum": [1, 2]}), json!("2")), json!(2));
        assert_eq!(coerce(json!({"enum": ["1", 2]}), json!("1")), json!("1"));
    }
}
