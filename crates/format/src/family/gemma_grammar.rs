//! The Gemma 4 argument grammar: object notation typed by each tool's canonical
//! schema (properties by name in declared order, required ones required, strings in
//! `<|"|>` quotes with their length bounds, enums, arrays with item bounds, integers
//! within their bounds, numbers with a sign only when the minimum allows one). Number
//! ranges beyond the sign are left to validation.

use std::collections::HashSet;

use rein_schema::{
    integer_expression, list_items, literal, repetition, rule_name, GrammarBuilder, NumberBounds,
    Schema, SchemaKind,
};

use super::object_notation::{self, QUOTE};

/// A grammar builder that names every schema rule uniquely.
pub(crate) struct OnBuilder {
    /// The rules.
    pub builder: GrammarBuilder,
    used: HashSet<String>,
}

impl OnBuilder {
    /// A builder holding the shared rules.
    pub(crate) fn new() -> Self {
        let mut builder = GrammarBuilder::new();
        primitives(&mut builder);
        OnBuilder {
            builder,
            used: HashSet::new(),
        }
    }

    /// Adds `body` under a fresh name made from `prefix`.
    fn rule(&mut self, prefix: &str, body: String) -> String {
        let base = rule_name(prefix);
        let name = std::iter::once(base.clone())
            .chain((2..).map(|n| format!("{base}-{n}")))
            .find(|n| !self.used.contains(n))
            .unwrap_or(base);
        self.used.insert(name.clone());
        self.builder.rule(&name, body)
    }
}

/// Rules shared by every schema.
fn primitives(b: &mut GrammarBuilder) {
    // Any text without `<|`, so a string ends only at its closing quote.
    b.rule("on-char", r#"[^<] | "<" [^|]"#);
    b.rule("on-string", format!("{q} on-char* {q}", q = literal(QUOTE)));
    b.rule("on-number", r#""-"? on-unsigned"#);
    b.rule(
        "on-unsigned",
        r#"("0" | [1-9] [0-9]{0,17}) ("." [0-9]{1,17})? ([eE] [-+]? [0-9]{1,3})?"#,
    );
    b.rule("on-integer", r#""-"? on-natural"#);
    b.rule("on-natural", r#""0" | [1-9] [0-9]{0,17}"#);
    b.rule("on-key", r#"[a-zA-Z_] [a-zA-Z0-9_ ]*"#);
    b.rule(
        "on-value",
        r#"on-string | on-number | on-object | on-array | "true" | "false" | "null""#,
    );
    b.rule(
        "on-object",
        r#""{" ( on-key ":" on-value ( "," on-key ":" on-value )* )? "}""#,
    );
    b.rule("on-array", r#""[" ( on-value ( "," on-value )* )? "]""#);
}

fn non_negative(bounds: &NumberBounds) -> bool {
    bounds.minimum.is_some_and(|m| m >= 0.0) || bounds.exclusive_minimum.is_some_and(|m| m >= 0.0)
}

/// The rule that matches values of `schema` in object notation; `prefix` names its
/// rules.
pub(crate) fn schema(b: &mut OnBuilder, of: &Schema, prefix: &str) -> String {
    let body = match &of.kind {
        SchemaKind::Any => return "on-value".into(),
        SchemaKind::Null => return r#""null""#.into(),
        SchemaKind::Boolean => r#""true" | "false""#.into(),
        SchemaKind::Integer(bounds) => match integer_expression(bounds) {
            Some(expr) => expr,
            None if non_negative(bounds) => return "on-natural".into(),
            None => return "on-integer".into(),
        },
        SchemaKind::Number(bounds) if non_negative(bounds) => return "on-unsigned".into(),
        SchemaKind::Number(_) => return "on-number".into(),
        SchemaKind::String {
            min_length: None,
            max_length: None,
        } => return "on-string".into(),
        SchemaKind::String {
            min_length,
            max_length,
        } => {
            let count = repetition(min_length.unwrap_or(0), *max_length);
            format!("{q} on-char{count} {q}", q = literal(QUOTE))
        }
        SchemaKind::Enum(values) => values
            .iter()
            .map(|v| literal(&object_notation::write(v)))
            .collect::<Vec<_>>()
            .join(" | "),
        SchemaKind::Array {
            items,
            min_items,
            max_items,
        } => {
            let item = schema(b, items, &format!("{prefix}-item"));
            match list_items(&item, r#"",""#, *min_items, *max_items) {
                Some(list) => format!(r#""[" {list} "]""#),
                None => r#""[" "]""#.to_string(),
            }
        }
        SchemaKind::Object {
            properties,
            additional,
        } if properties.is_empty() => match additional {
            None => r#""{" "}""#.to_string(),
            Some(value) => {
                let v = schema(b, value, &format!("{prefix}-value"));
                format!(r#""{{" ( on-key ":" {v} ( "," on-key ":" {v} )* )? "}}""#)
            }
        },
        SchemaKind::Object { properties, .. } => {
            let pairs: Vec<(String, bool)> = properties
                .iter()
                .map(|p| {
                    let value = schema(b, &p.schema, &format!("{prefix}-{}", rule_name(&p.name)));
                    (
                        format!(r#"{} {value}"#, literal(&format!("{}:", p.name))),
                        p.required,
                    )
                })
                .collect();
            let body = property_sequence(b, &pairs, prefix);
            format!(r#""{{" {body} "}}""#)
        }
        SchemaKind::AnyOf(branches) => branches
            .iter()
            .enumerate()
            .map(|(i, s)| schema(b, s, &format!("{prefix}-{i}")))
            .collect::<Vec<_>>()
            .join(" | "),
    };
    b.rule(prefix, body)
}

/// Properties in declared order, optional ones optional, commas only between.
fn property_sequence(b: &mut OnBuilder, pairs: &[(String, bool)], prefix: &str) -> String {
    let after = |k: usize| -> String {
        pairs[k..]
            .iter()
            .map(|(kv, required)| match required {
                true => format!(r#""," {kv}"#),
                false => format!(r#"( "," {kv} )?"#),
            })
            .collect::<Vec<_>>()
            .join(" ")
    };
    let mut next = String::new();
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
        next = b.rule(&format!("{prefix}-from{k}"), this.trim().to_string());
    }
    next
}
