//! GBNF (llama.cpp's grammar format) for values of a canonical [`Schema`].
//!
//! The grammar keeps JSON compact — at most one space where JSON allows whitespace —
//! because small models that may emit unbounded whitespace spiral into newlines.
//! Integer bounds, lengths and item counts (already capped by the sanitizer) are
//! enforced here, and a non-negative lower bound for numbers; other numeric bounds,
//! string patterns and formats are left to validation.

use std::collections::BTreeMap;
use std::fmt::Write;

use serde_json::Value;

use crate::gbnf_int::integer_expression;
use crate::{Schema, SchemaKind};

/// Shared rules every grammar may use.
const PRIMITIVES: &[(&str, &str)] = &[
    ("ws", r#"" "?"#),
    (
        "json-char",
        r#"[^"\\\x7F\x00-\x1F] | "\\" (["\\/bfnrt] | "u" [0-9a-fA-F]{4})"#,
    ),
    ("json-string", r#""\"" json-char* "\"""#),
    ("json-integer", r#""-"? ("0" | [1-9] [0-9]{0,17})"#),
    (
        "json-number",
        r#""-"? ("0" | [1-9] [0-9]{0,17}) ("." [0-9]{1,17})? ([eE] [-+]? [0-9]{1,3})?"#,
    ),
    ("json-boolean", r#""true" | "false""#),
    ("json-null", r#""null""#),
    (
        "json-value",
        r#"json-object | json-array | json-string | json-number | json-boolean | json-null"#,
    ),
    (
        "json-object",
        r#""{" ws ( json-string ws ":" ws json-value ( "," ws json-string ws ":" ws json-value )* )? ws "}""#,
    ),
    (
        "json-array",
        r#""[" ws ( json-value ( "," ws json-value )* )? ws "]""#,
    ),
];

/// Builds a grammar out of schema rules; rule names are unique and stable.
#[derive(Debug, Default)]
pub struct GrammarBuilder {
    rules: BTreeMap<String, String>,
    order: Vec<String>,
    used_primitives: Vec<&'static str>,
}

impl GrammarBuilder {
    /// An empty grammar.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds `name ::= body` (a later definition of the same name is ignored) and
    /// returns the name.
    pub fn rule(&mut self, name: &str, body: impl Into<String>) -> String {
        if !self.rules.contains_key(name) {
            self.rules.insert(name.to_string(), body.into());
            self.order.push(name.to_string());
        }
        name.to_string()
    }

    fn primitive(&mut self, name: &'static str) -> String {
        if !self.used_primitives.contains(&name) {
            self.used_primitives.push(name);
            // json-value pulls in every other primitive.
            if name == "json-value" || name == "json-object" || name == "json-array" {
                for (other, _) in PRIMITIVES {
                    if !self.used_primitives.contains(other) {
                        self.used_primitives.push(other);
                    }
                }
            }
            if name == "json-string" && !self.used_primitives.contains(&"json-char") {
                self.used_primitives.push("json-char");
            }
        }
        name.to_string()
    }

    /// The rule that matches values of `schema`; `prefix` names its rules.
    pub fn schema(&mut self, schema: &Schema, prefix: &str) -> String {
        self.primitive("ws");
        let body = match &schema.kind {
            SchemaKind::Any => return self.primitive("json-value"),
            SchemaKind::Null => return self.primitive("json-null"),
            SchemaKind::Boolean => return self.primitive("json-boolean"),
            SchemaKind::Integer(bounds) => match integer_expression(bounds) {
                Some(expr) => expr,
                None => return self.primitive("json-integer"),
            },
            SchemaKind::Number(bounds) => {
                let non_negative = bounds.minimum.is_some_and(|m| m >= 0.0)
                    || bounds.exclusive_minimum.is_some_and(|m| m >= 0.0);
                if !non_negative {
                    return self.primitive("json-number");
                }
                r#"("0" | [1-9] [0-9]{0,17}) ("." [0-9]{1,17})? ([eE] [-+]? [0-9]{1,3})?"#
                    .to_string()
            }
            SchemaKind::String {
                min_length: None,
                max_length: None,
            } => return self.primitive("json-string"),
            SchemaKind::String {
                min_length,
                max_length,
            } => {
                self.primitive("json-string");
                let count = repetition(min_length.unwrap_or(0), *max_length);
                format!(r#""\"" json-char{count} "\"""#)
            }
            SchemaKind::Enum(values) => values
                .iter()
                .map(|v| literal(&compact_json(v)))
                .collect::<Vec<_>>()
                .join(" | "),
            SchemaKind::Array {
                items,
                min_items,
                max_items,
            } => {
                let item = self.schema(items, &format!("{prefix}-item"));
                match list_items(&item, r#""," ws"#, *min_items, *max_items) {
                    Some(list) => format!(r#""[" ws {list} ws "]""#),
                    None => r#""[" ws "]""#.to_string(),
                }
            }
            SchemaKind::Object {
                properties,
                additional,
            } if properties.is_empty() => match additional {
                None => r#""{" ws "}""#.to_string(),
                Some(value) => {
                    let v = self.schema(value, &format!("{prefix}-value"));
                    let key = self.primitive("json-string");
                    format!(
                        r#""{{" ws ( {key} ws ":" ws {v} ( "," ws {key} ws ":" ws {v} )* )? ws "}}""#
                    )
                }
            },
            SchemaKind::Object { properties, .. } => {
                let pairs: Vec<(String, bool)> = properties
                    .iter()
                    .map(|p| {
                        let value =
                            self.schema(&p.schema, &format!("{prefix}-{}", rule_name(&p.name)));
                        let key = literal(&compact_json(&Value::String(p.name.clone())));
                        (format!(r#"{key} ws ":" ws {value}"#), p.required)
                    })
                    .collect();
                let body = self.property_sequence(&pairs, prefix);
                format!(r#""{{" ws {body} ws "}}""#)
            }
            SchemaKind::AnyOf(branches) => branches
                .iter()
                .enumerate()
                .map(|(i, b)| self.schema(b, &format!("{prefix}-{i}")))
                .collect::<Vec<_>>()
                .join(" | "),
        };
        let name = self.unique(prefix);
        self.rule(&name, body)
    }

    /// Properties in declared order, optional ones optional, commas only between.
    fn property_sequence(&mut self, pairs: &[(String, bool)], prefix: &str) -> String {
        // after(k): the properties from k on, when one was already written.
        let after = |k: usize| -> String {
            pairs[k..]
                .iter()
                .map(|(kv, required)| {
                    if *required {
                        format!(r#""," ws {kv}"#)
                    } else {
                        format!(r#"( "," ws {kv} )?"#)
                    }
                })
                .collect::<Vec<_>>()
                .join(" ")
        };
        // first(k): the properties from k on, when none was written yet.
        let mut next = String::new(); // first(n) is empty
        for k in (0..pairs.len()).rev() {
            let (kv, required) = &pairs[k];
            let rest = after(k + 1);
            let this = if *required {
                format!("{kv} {rest}")
            } else if next.is_empty() {
                format!("( {kv} {rest} )?")
            } else {
                format!("( {kv} {rest} | {next} )")
            };
            let name = self.unique(&format!("{prefix}-from{k}"));
            next = self.rule(&name, this.trim().to_string());
        }
        next
    }

    fn unique(&self, prefix: &str) -> String {
        let base = rule_name(prefix);
        if !self.rules.contains_key(&base) {
            return base;
        }
        (2..)
            .map(|n| format!("{base}-{n}"))
            .find(|n| !self.rules.contains_key(n))
            .unwrap_or(base)
    }

    /// The grammar text with `root` as its start rule.
    pub fn build(&self, root: &str) -> String {
        let mut out = String::new();
        let _ = writeln!(out, "root ::= {root}");
        for name in &self.order {
            let _ = writeln!(out, "{name} ::= {}", self.rules[name]);
        }
        for (name, body) in PRIMITIVES {
            if self.used_primitives.contains(name) {
                let _ = writeln!(out, "{name} ::= {body}");
            }
        }
        out
    }
}

/// A GBNF repetition suffix for `min` to `max` occurrences (`{min,}` when `max` is
/// open). A minimum above the maximum is lowered to it, so the suffix always compiles
/// (llama.cpp's parser allocates without limit on `{5,2}`).
pub fn repetition(min: u64, max: Option<u64>) -> String {
    match max {
        Some(max) => format!("{{{},{max}}}", min.min(max)),
        None => format!("{{{min},}}"),
    }
}

/// The inside of a bracketed list of `item`s joined by `separator`, holding
/// `min_items` to `max_items` items (optional as a whole when the list may be empty);
/// `None` when the list must be empty.
pub fn list_items(
    item: &str,
    separator: &str,
    min_items: Option<u64>,
    max_items: Option<u64>,
) -> Option<String> {
    let min = min_items.unwrap_or(0);
    let more = match (min, max_items) {
        (_, Some(0)) => return None,
        (_, Some(max)) => repetition(min.saturating_sub(1), Some(max - 1)),
        (0 | 1, None) => "*".to_string(),
        (_, None) => repetition(min - 1, None),
    };
    let list = format!("{item} ( {separator} {item} ){more}");
    Some(match min {
        0 => format!("( {list} )?"),
        _ => list,
    })
}

/// A GBNF string literal for `text`.
pub fn literal(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 2);
    out.push('"');
    for c in text.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if (c as u32) < 0x20 => {
                let _ = write!(out, "\\x{:02X}", c as u32);
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// A rule name from any text: lowercase letters, digits and dashes.
pub fn rule_name(text: &str) -> String {
    let mut out: String = text
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() {
                c.to_ascii_lowercase()
            } else {
                '-'
            }
        })
        .collect();
    while out.contains("--") {
        out = out.replace("--", "-");
    }
    let out = out.trim_matches('-').to_string();
    if out.is_empty() {
        "r".to_string()
    } else if out.starts_with(|c: char| c.is_ascii_digit()) {
        format!("r{out}")
    } else {
        out
    }
}

/// JSON as the grammar writes it: Python-like separators are *not* used; keys and
/// values as compact as serde writes them.
fn compact_json(value: &Value) -> String {
    value.to_string()
}

/// The grammar for one schema alone (root = the schema's values).
pub fn schema_grammar(schema: &Schema) -> String {
    let mut builder = GrammarBuilder::new();
    let root = builder.schema(schema, "value");
    builder.build(&root)
}
