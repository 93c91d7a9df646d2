//! JSON-Schema type names, and the aliases found in the wild (Python's, mostly).

/// The seven JSON-Schema types, plus "anything".
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum TypeName {
    Object,
    Array,
    String,
    Integer,
    Number,
    Boolean,
    Null,
    Any,
}

impl TypeName {
    /// The canonical name for `name`, and whether it was an alias.
    pub(crate) fn parse(name: &str) -> Option<(TypeName, bool)> {
        let canonical = match name {
            "object" => return Some((TypeName::Object, false)),
            "array" => return Some((TypeName::Array, false)),
            "string" => return Some((TypeName::String, false)),
            "integer" => return Some((TypeName::Integer, false)),
            "number" => return Some((TypeName::Number, false)),
            "boolean" => return Some((TypeName::Boolean, false)),
            "null" => return Some((TypeName::Null, false)),
            _ => match name.to_ascii_lowercase().as_str() {
                "dict" | "map" | "mapping" | "object" | "obj" | "record" => TypeName::Object,
                "list" | "tuple" | "set" | "sequence" | "array" => TypeName::Array,
                "str" | "string" | "text" => TypeName::String,
                "int" | "integer" | "long" => TypeName::Integer,
                "float" | "double" | "number" | "decimal" | "num" => TypeName::Number,
                "bool" | "boolean" => TypeName::Boolean,
                "none" | "nonetype" | "null" | "nil" => TypeName::Null,
                "any" | "object?" | "unknown" => TypeName::Any,
                _ => return None,
            },
        };
        Some((canonical, true))
    }

    /// The JSON-Schema name (`Any` has none).
    pub(crate) fn json_name(self) -> Option<&'static str> {
        Some(match self {
            TypeName::Object => "object",
            TypeName::Array => "array",
            TypeName::String => "string",
            TypeName::Integer => "integer",
            TypeName::Number => "number",
            TypeName::Boolean => "boolean",
            TypeName::Null => "null",
            TypeName::Any => return None,
        })
    }

    /// Whether `value` is of this type.
    pub(crate) fn admits(self, value: &serde_json::Value) -> bool {
        use serde_json::Value;
        match (self, value) {
            (TypeName::Any, _) => true,
            (TypeName::Object, Value::Object(_)) => true,
            (TypeName::Array, Value::Array(_)) => true,
            (TypeName::String, Value::String(_)) => true,
            (TypeName::Integer, Value::Number(n)) => {
                n.is_i64() || n.is_u64() || n.as_f64().is_some_and(|f| f.fract() == 0.0)
            }
            (TypeName::Number, Value::Number(_)) => true,
            (TypeName::Boolean, Value::Bool(_)) => true,
            (TypeName::Null, Value::Null) => true,
            _ => false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn python_names_map_to_json_schema_types() {
        for (alias, expected) in [
            ("dict", TypeName::Object),
            ("float", TypeName::Number),
            ("int", TypeName::Integer),
            ("str", TypeName::String),
            ("bool", TypeName::Boolean),
            ("list", TypeName::Array),
            ("tuple", TypeName::Array),
            ("any", TypeName::Any),
            ("Dict", TypeName::Object),
        ] {
            assert_eq!(TypeName::parse(alias), Some((expected, true)), "{alias}");
        }
        assert_eq!(TypeName::parse("integer"), Some((TypeName::Integer, false)));
        assert_eq!(TypeName::parse("quaternion"), None);
    }
}
