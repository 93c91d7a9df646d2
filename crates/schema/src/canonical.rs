//! The canonical schema subset: what the grammar layer supports fully.

use serde_json::{json, Map, Value};

/// A sanitized schema node.
#[derive(Debug, Clone, PartialEq)]
pub struct Schema {
    /// What values it admits.
    pub kind: SchemaKind,
    /// The description shown to the model.
    pub description: Option<String>,
}

/// The kinds of canonical schema.
#[derive(Debug, Clone, PartialEq)]
pub enum SchemaKind {
    /// Any JSON value.
    Any,
    /// `null`.
    Null,
    /// `true` or `false`.
    Boolean,
    /// An integer, with optional bounds.
    Integer(NumberBounds),
    /// A number, with optional bounds.
    Number(NumberBounds),
    /// A string, with optional length bounds and shape.
    String {
        /// Fewest characters.
        min_length: Option<u64>,
        /// Most characters.
        max_length: Option<u64>,
        /// A format or pattern the grammar writes (lengths then go to validation).
        shape: Option<StringShape>,
    },
    /// One of these values.
    Enum(Vec<Value>),
    /// A list whose items all match `items`.
    Array {
        /// The item schema.
        items: Box<Schema>,
        /// Fewest items.
        min_items: Option<u64>,
        /// Most items.
        max_items: Option<u64>,
    },
    /// An object: either declared properties (closed), or a map whose values all
    /// match `additional` (when there are no declared properties).
    Object {
        /// Declared properties, in order.
        properties: Vec<Property>,
        /// For maps: the schema of every value. `None` with no properties = `{}` only.
        additional: Option<Box<Schema>>,
    },
    /// Any of these.
    AnyOf(Vec<Schema>),
}

/// The shape of a string that the grammar enforces.
#[derive(Debug, Clone, PartialEq)]
pub enum StringShape {
    /// A `format` the grammar can write.
    Format(StringFormat),
    /// A `pattern` (ECMA-262 syntax) within what the grammar can express.
    Pattern(String),
}

/// The `format`s the grammar enforces; other formats are left to validation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum StringFormat {
    /// `2024-02-29` (RFC 3339 full-date, leap years included).
    Date,
    /// `14:30:00Z`, `09:05:00.5+02:00` (RFC 3339 full-time).
    Time,
    /// A date, `T`, a time.
    DateTime,
    /// `local@host.example`.
    Email,
    /// Hyphenated hexadecimal UUID.
    Uuid,
    /// An absolute URI with an authority: `https://host/path?query#fragment`.
    Uri,
    /// Dotted decimal IPv4.
    Ipv4,
    /// IPv6 in any of its RFC 4291 text forms.
    Ipv6,
}

impl StringFormat {
    /// Every format the grammar enforces.
    pub const ALL: [StringFormat; 8] = [
        Self::Date,
        Self::Time,
        Self::DateTime,
        Self::Email,
        Self::Uuid,
        Self::Uri,
        Self::Ipv4,
        Self::Ipv6,
    ];

    /// The format named `name` in JSON Schema, if the grammar enforces it.
    pub fn parse(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|f| f.name() == name)
    }

    /// Its JSON Schema name.
    pub fn name(self) -> &'static str {
        match self {
            Self::Date => "date",
            Self::Time => "time",
            Self::DateTime => "date-time",
            Self::Email => "email",
            Self::Uuid => "uuid",
            Self::Uri => "uri",
            Self::Ipv4 => "ipv4",
            Self::Ipv6 => "ipv6",
        }
    }
}

/// Numeric bounds (JSON Schema draft 6+ meaning).
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct NumberBounds {
    /// `minimum`.
    pub minimum: Option<f64>,
    /// `maximum`.
    pub maximum: Option<f64>,
    /// `exclusiveMinimum`.
    pub exclusive_minimum: Option<f64>,
    /// `exclusiveMaximum`.
    pub exclusive_maximum: Option<f64>,
}

/// A declared property of an object.
#[derive(Debug, Clone, PartialEq)]
pub struct Property {
    /// The name the model sees (legal everywhere).
    pub name: String,
    /// The name the tool declared (restored in the arguments).
    pub original_name: String,
    /// Whether it must be present.
    pub required: bool,
    /// Its schema.
    pub schema: Schema,
}

impl Schema {
    pub(crate) fn new(kind: SchemaKind) -> Self {
        Self {
            kind,
            description: None,
        }
    }

    /// The canonical schema as JSON Schema (what the model and the grammar see).
    pub fn to_json(&self) -> Value {
        let mut out = match &self.kind {
            SchemaKind::Any => Map::new(),
            SchemaKind::Null => object(json!({"type": "null"})),
            SchemaKind::Boolean => object(json!({"type": "boolean"})),
            SchemaKind::Integer(b) => bounds_json("integer", b),
            SchemaKind::Number(b) => bounds_json("number", b),
            SchemaKind::String {
                min_length,
                max_length,
                shape,
            } => {
                let mut m = object(json!({"type": "string"}));
                insert_opt(&mut m, "minLength", min_length);
                insert_opt(&mut m, "maxLength", max_length);
                match shape {
                    Some(StringShape::Format(f)) => {
                        m.insert("format".into(), Value::from(f.name()));
                    }
                    Some(StringShape::Pattern(p)) => {
                        m.insert("pattern".into(), Value::from(p.as_str()));
                    }
                    None => {}
                }
                m
            }
            SchemaKind::Enum(values) => object(json!({ "enum": values })),
            SchemaKind::Array {
                items,
                min_items,
                max_items,
            } => {
                let mut m = object(json!({"type": "array", "items": items.to_json()}));
                insert_opt(&mut m, "minItems", min_items);
                insert_opt(&mut m, "maxItems", max_items);
                m
            }
            SchemaKind::Object {
                properties,
                additional,
            } => {
                let mut m = object(json!({"type": "object"}));
                if !properties.is_empty() {
                    let props: Map<String, Value> = properties
                        .iter()
                        .map(|p| (p.name.clone(), p.schema.to_json()))
                        .collect();
                    m.insert("properties".into(), Value::Object(props));
                    let required: Vec<&str> = properties
                        .iter()
                        .filter(|p| p.required)
                        .map(|p| p.name.as_str())
                        .collect();
                    if !required.is_empty() {
                        m.insert("required".into(), json!(required));
                    }
                }
                let extra = match additional {
                    Some(schema) if properties.is_empty() => match schema.kind {
                        SchemaKind::Any => None,
                        _ => Some(schema.to_json()),
                    },
                    _ => Some(Value::Bool(false)),
                };
                if let Some(extra) = extra {
                    m.insert("additionalProperties".into(), extra);
                }
                m
            }
            SchemaKind::AnyOf(branches) => {
                object(json!({ "anyOf": branches.iter().map(Schema::to_json).collect::<Vec<_>>() }))
            }
        };
        if let Some(d) = &self.description {
            out.insert("description".into(), Value::String(d.clone()));
        }
        Value::Object(out)
    }

    /// Renames argument keys back to the names the tool declared, following the
    /// schema; values the schema does not describe are left as they are.
    pub fn restore_names(&self, value: &Value) -> Value {
        match (&self.kind, value) {
            (
                SchemaKind::Object {
                    properties,
                    additional,
                },
                Value::Object(map),
            ) => {
                let mut out = Map::with_capacity(map.len());
                for (key, v) in map {
                    match properties.iter().find(|p| &p.name == key) {
                        Some(p) => {
                            out.insert(p.original_name.clone(), p.schema.restore_names(v));
                        }
                        None => {
                            let v = additional
                                .as_ref()
                                .map_or_else(|| v.clone(), |s| s.restore_names(v));
                            out.insert(key.clone(), v);
                        }
                    }
                }
                Value::Object(out)
            }
            (SchemaKind::Array { items, .. }, Value::Array(list)) => {
                Value::Array(list.iter().map(|v| items.restore_names(v)).collect())
            }
            (SchemaKind::AnyOf(branches), _) => branches
                .iter()
                .find(|b| b.shape_fits(value))
                .map_or_else(|| value.clone(), |b| b.restore_names(value)),
            _ => value.clone(),
        }
    }

    /// Whether `value` has this schema's outer shape (type, and for objects: every
    /// key declared), used to pick an `anyOf` branch.
    fn shape_fits(&self, value: &Value) -> bool {
        match (&self.kind, value) {
            (SchemaKind::Integer(_), Value::Number(n)) => n.is_i64() || n.is_u64(),
            (
                SchemaKind::Object {
                    properties,
                    additional,
                },
                Value::Object(map),
            ) => {
                additional.is_some() || map.keys().all(|k| properties.iter().any(|p| &p.name == k))
            }
            (SchemaKind::AnyOf(branches), v) => branches.iter().any(|b| b.shape_fits(v)),
            _ => self.admits_shape(value),
        }
    }
}

fn object(value: Value) -> Map<String, Value> {
    match value {
        Value::Object(m) => m,
        _ => Map::new(),
    }
}

fn insert_opt<T: Into<Value> + Copy>(m: &mut Map<String, Value>, key: &str, value: &Option<T>) {
    if let Some(v) = value {
        m.insert(key.into(), (*v).into());
    }
}

fn bounds_json(ty: &str, b: &NumberBounds) -> Map<String, Value> {
    let mut m = object(json!({ "type": ty }));
    let number = |f: f64| {
        if ty == "integer" && f.fract() == 0.0 && f.abs() < 9.0e15 {
            Value::from(f as i64)
        } else {
            Value::from(f)
        }
    };
    for (key, v) in [
        ("minimum", b.minimum),
        ("maximum", b.maximum),
        ("exclusiveMinimum", b.exclusive_minimum),
        ("exclusiveMaximum", b.exclusive_maximum),
    ] {
        if let Some(v) = v {
            m.insert(key.into(), number(v));
        }
    }
    m
}
