//! GBNF (llama.cpp's grammar format) for values of a canonical [`Schema`], built as
//! the `gbnf` crate's typed grammar and rendered by it. One walker serves every value
//! syntax: JSON ([`Json`]) here, Gemma's object notation in the format layer, each a
//! [`ValueSyntax`] that says how a leaf, a key, a string and a separator are written.
//!
//! Integer bounds, lengths and item counts (already capped by the sanitizer) are
//! enforced, a non-negative lower bound for numbers, the common string formats and
//! simple patterns (see [`formats`] and [`pattern`]); other numeric bounds, and the
//! lengths of a string with a shape, are left to validation. Rules are named from the schema's
//! property paths, uniquely; a syntax's shared rules are written only when used.

mod expr;
mod formats;
mod int;
mod json;
mod pattern;

use std::collections::{HashMap, HashSet};

use gbnf::{Grammar, GrammarItem, NonTerminalSymbol, Rule};
use serde_json::Value;

pub use expr::{
    alt, ch, chars, group, lit, lit_rep, literal, one_of, range, refers_to, repeat, rule,
    rule_name, rule_rep, seq, without_empty_repeats, CharacterSetItem, Item, Production, Repeat,
};
pub use formats::format_body;
pub use int::integer_expression;
pub use json::{unsigned_number, Json};
pub use pattern::{pattern_body, pattern_support};

use crate::{NumberBounds, Schema, SchemaKind, StringFormat, StringShape};

/// How a value syntax writes one character inside a string.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum InString {
    /// As it is.
    Plain,
    /// As this escape.
    Escaped(&'static str),
    /// Not at all (the grammar leaves it out).
    Impossible,
}

/// How a leaf of a schema is written.
#[derive(Debug, Clone)]
pub enum Leaf {
    /// A shared rule of the syntax, referred to as it is.
    Shared(&'static str),
    /// An expression used in place.
    Inline(Item),
    /// A rule of its own, named after the schema's path.
    Rule(Production),
}

/// What a value syntax supplies to the walker.
pub trait ValueSyntax {
    /// The syntax's shared rules, in the order they are written (each only when used).
    fn shared_rules(&self) -> Vec<(&'static str, Production)>;
    /// Optional whitespace between tokens, if the syntax has any.
    fn space(&self) -> Vec<Item>;
    /// Any value.
    fn any(&self) -> Leaf;
    /// `null`.
    fn null(&self) -> Leaf;
    /// `true` or `false`.
    fn boolean(&self) -> Leaf;
    /// An integer without bounds worth writing (`non_negative`: no sign).
    fn integer(&self, non_negative: bool) -> Leaf;
    /// A number (`non_negative`: no sign).
    fn number(&self, non_negative: bool) -> Leaf;
    /// A string of any length.
    fn string(&self) -> Leaf;
    /// A string of `count` characters.
    fn bounded_string(&self, count: Repeat) -> Production;
    /// A string whose inside is `body` (text built from [`Self::in_string`]).
    fn shaped_string(&self, body: Vec<Item>) -> Production;
    /// Any character of a string, as the syntax writes it, repeated.
    fn string_char(&self, repeat: Repeat) -> Item;
    /// How the character `c` is written inside a string.
    fn in_string(&self, c: char) -> InString;
    /// One enum value, exactly.
    fn value(&self, value: &Value) -> Item;
    /// A property's key and what separates it from its value.
    fn key(&self, name: &str) -> Vec<Item>;
    /// Any key and its separator (objects with additional properties).
    fn any_key(&self) -> Vec<Item>;
}

/// Builds a grammar out of rules; rule names are unique and stable.
#[derive(Debug, Default)]
pub struct GrammarBuilder {
    rules: Vec<(String, Production)>,
    names: HashSet<String>,
    /// The rule written for each format, shared by every string in it.
    formats: HashMap<StringFormat, Item>,
}

impl GrammarBuilder {
    /// An empty grammar.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds `name ::= body` (a later definition of the same name is ignored) and
    /// returns a reference to it.
    pub fn rule(&mut self, name: &str, body: Production) -> Item {
        if self.names.insert(name.to_string()) {
            self.rules.push((name.to_string(), body));
        }
        rule(name)
    }

    /// A rule name made from `prefix` that no rule has yet.
    pub fn fresh(&self, prefix: &str) -> String {
        let base = rule_name(prefix);
        std::iter::once(base.clone())
            .chain((2..).map(|n| format!("{base}-{n}")))
            .find(|n| !self.names.contains(n))
            .unwrap_or(base)
    }

    /// The rule that matches values of `schema` in `syntax`; `prefix` names its rules.
    pub fn schema(&mut self, schema: &Schema, prefix: &str, syntax: &dyn ValueSyntax) -> Item {
        let leaf = match &schema.kind {
            SchemaKind::Any => syntax.any(),
            SchemaKind::Null => syntax.null(),
            SchemaKind::Boolean => syntax.boolean(),
            SchemaKind::Integer(bounds) => match integer_expression(bounds) {
                Some(expression) => Leaf::Rule(expression),
                None => syntax.integer(non_negative(bounds)),
            },
            SchemaKind::Number(bounds) => syntax.number(non_negative(bounds)),
            SchemaKind::String {
                min_length,
                max_length,
                shape,
            } => match shape.as_ref().and_then(|s| self.shape_body(s, syntax)) {
                Some(body) => Leaf::Rule(syntax.shaped_string(body)),
                None if min_length.is_none() && max_length.is_none() => syntax.string(),
                None => {
                    Leaf::Rule(syntax.bounded_string(repeat(min_length.unwrap_or(0), *max_length)))
                }
            },
            SchemaKind::Enum(values) => {
                Leaf::Rule(one_of(values.iter().map(|v| seq([syntax.value(v)]))))
            }
            SchemaKind::Array {
                items,
                min_items,
                max_items,
            } => {
                let item = self.schema(items, &format!("{prefix}-item"), syntax);
                let mut separator = vec![lit(",")];
                separator.extend(syntax.space());
                let list = list_items(item, separator, *min_items, *max_items);
                let mut body = vec![lit("[")];
                body.extend(syntax.space());
                if !list.is_empty() {
                    body.extend(list);
                    body.extend(syntax.space());
                }
                body.push(lit("]"));
                Leaf::Rule(seq(body))
            }
            SchemaKind::Object {
                properties,
                additional,
            } if properties.is_empty() => Leaf::Rule(match additional {
                None => seq(wrapped(syntax, Vec::new())),
                Some(value) => {
                    let value = self.schema(value, &format!("{prefix}-value"), syntax);
                    let mut pair = syntax.any_key();
                    pair.push(value);
                    let mut more = vec![lit(",")];
                    more.extend(syntax.space());
                    more.extend(pair.clone());
                    pair.push(group(seq(more), Repeat::ZeroOrMore));
                    seq(wrapped(syntax, vec![group(seq(pair), Repeat::ZeroOrOne)]))
                }
            }),
            SchemaKind::Object { properties, .. } => {
                let pairs: Vec<(Vec<Item>, bool)> = properties
                    .iter()
                    .map(|p| {
                        let value = self.schema(
                            &p.schema,
                            &format!("{prefix}-{}", rule_name(&p.name)),
                            syntax,
                        );
                        let mut pair = syntax.key(&p.name);
                        pair.push(value);
                        (pair, p.required)
                    })
                    .collect();
                let body = self.property_sequence(&pairs, prefix, syntax);
                Leaf::Rule(seq(wrapped(syntax, vec![body])))
            }
            SchemaKind::AnyOf(branches) => {
                Leaf::Rule(one_of(branches.iter().enumerate().map(|(i, b)| {
                    seq([self.schema(b, &format!("{prefix}-{i}"), syntax)])
                })))
            }
        };
        match leaf {
            Leaf::Shared(name) => rule(name),
            Leaf::Inline(item) => item,
            Leaf::Rule(body) => {
                let name = self.fresh(prefix);
                self.rule(&name, body)
            }
        }
    }

    /// The inside of a string of `shape` (`None`: the syntax cannot write it, and
    /// the string is written plainly).
    fn shape_body(&mut self, shape: &StringShape, syntax: &dyn ValueSyntax) -> Option<Vec<Item>> {
        match shape {
            StringShape::Format(format) => {
                if let Some(item) = self.formats.get(format) {
                    return Some(vec![item.clone()]);
                }
                let name = self.fresh(&format!("format-{}", format.name()));
                let item = self.rule(&name, seq(formats::format_body(*format)));
                self.formats.insert(*format, item.clone());
                Some(vec![item])
            }
            StringShape::Pattern(pattern) => pattern_body(pattern, syntax).ok(),
        }
    }

    /// Properties in declared order, optional ones optional, commas only between.
    fn property_sequence(
        &mut self,
        pairs: &[(Vec<Item>, bool)],
        prefix: &str,
        syntax: &dyn ValueSyntax,
    ) -> Item {
        let comma = |pair: &[Item]| {
            let mut items = vec![lit(",")];
            items.extend(syntax.space());
            items.extend(pair.iter().cloned());
            items
        };
        // after(k): the properties from k on, when one was already written.
        let after = |k: usize| -> Vec<Item> {
            pairs[k..]
                .iter()
                .flat_map(|(pair, required)| {
                    if *required {
                        comma(pair)
                    } else {
                        vec![group(seq(comma(pair)), Repeat::ZeroOrOne)]
                    }
                })
                .collect()
        };
        // first(k): the properties from k on, when none was written yet.
        let mut next: Option<Item> = None; // first(n) is empty
        for k in (0..pairs.len()).rev() {
            let (pair, required) = &pairs[k];
            let mut this = pair.clone();
            this.extend(after(k + 1));
            let body = match (&next, required) {
                (_, true) => seq(this),
                (None, false) => seq([group(seq(this), Repeat::ZeroOrOne)]),
                (Some(rest), false) => seq([alt([seq(this), seq([rest.clone()])])]),
            };
            let name = self.fresh(&format!("{prefix}-from{k}"));
            next = Some(self.rule(&name, body));
        }
        next.unwrap_or_else(|| group(seq([]), Repeat::One))
    }

    /// The grammar text with `root` as its start rule, followed by the rules of
    /// `syntax` that are used.
    pub fn build(&self, root: Item, syntax: &dyn ValueSyntax) -> String {
        let mut rules: Vec<(String, Production)> = vec![("root".to_string(), seq([root]))];
        rules.extend(self.rules.iter().cloned());
        let shared = syntax.shared_rules();
        let mut used: Vec<&(&str, Production)> = Vec::new();
        // Shared rules used by the grammar, and the shared rules they use in turn.
        loop {
            let before = used.len();
            for entry in &shared {
                let (name, _) = entry;
                let wanted = rules.iter().any(|(_, body)| refers_to(body, name))
                    || used.iter().any(|(_, body)| refers_to(body, name));
                if wanted && !used.iter().any(|(n, _)| n == name) {
                    used.push(entry);
                }
            }
            if used.len() == before {
                break;
            }
        }
        for (name, body) in &shared {
            if used.iter().any(|(n, _)| n == name) {
                rules.push((name.to_string(), body.clone()));
            }
        }
        let grammar = Grammar {
            items: rules
                .into_iter()
                .map(|(name, rhs)| {
                    GrammarItem::Rule(Rule {
                        lhs: NonTerminalSymbol { name },
                        rhs: without_empty_repeats(rhs),
                    })
                })
                .collect(),
            recurring_items: Default::default(),
        };
        grammar.to_string()
    }
}

/// Braces around `body`, with the syntax's optional space inside.
fn wrapped(syntax: &dyn ValueSyntax, body: Vec<Item>) -> Vec<Item> {
    let mut items = vec![lit("{")];
    items.extend(syntax.space());
    items.extend(body);
    items.extend(syntax.space());
    items.push(lit("}"));
    items
}

fn non_negative(bounds: &NumberBounds) -> bool {
    bounds.minimum.is_some_and(|m| m >= 0.0) || bounds.exclusive_minimum.is_some_and(|m| m >= 0.0)
}

/// A list of `item`s joined by `separator`, holding `min_items` to `max_items` items
/// (optional as a whole when the list may be empty); nothing when it must be empty.
pub fn list_items(
    item: Item,
    separator: Vec<Item>,
    min_items: Option<u64>,
    max_items: Option<u64>,
) -> Vec<Item> {
    let min = min_items.unwrap_or(0);
    let more = match (min, max_items) {
        (_, Some(0)) => return Vec::new(),
        (_, Some(max)) => repeat(min.saturating_sub(1), Some(max - 1)),
        (0 | 1, None) => Repeat::ZeroOrMore,
        (_, None) => repeat(min - 1, None),
    };
    let mut next = separator;
    next.push(item.clone());
    let list = vec![item, group(seq(next), more)];
    match min {
        0 => vec![group(seq(list), Repeat::ZeroOrOne)],
        _ => list,
    }
}

/// The grammar for one schema alone in JSON (root = the schema's values).
pub fn schema_grammar(schema: &Schema) -> String {
    let mut builder = GrammarBuilder::new();
    let root = builder.schema(schema, "value", &Json);
    builder.build(root, &Json)
}
