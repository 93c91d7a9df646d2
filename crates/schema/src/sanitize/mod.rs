//! The walk from a schema in the wild to the canonical subset, recording each change.
//! This module holds the entry point and the walk over one node; how references and
//! combinators merge (`combine`), how types, enums and objects are read (`typed`),
//! how bounds are kept (`bounds`) and the schema validation uses (`validation`) live
//! in their own files.

mod bounds;
mod combine;
mod shape;
mod typed;
mod validation;

use combine::any_of;
use typed::{is_type_keyword, Types};
use validation::validation_schema;

use serde_json::{Map, Value};

use crate::canonical::NumberBounds;
use crate::names::NameAllocator;
use crate::refs::{escape, resolve};
use crate::report::ChangeKind;
use crate::types::TypeName;
use crate::{Property, Report, Schema, SchemaError, SchemaKind};

/// Bounds that keep grammars small. Bounds past them are removed from the canonical
/// schema (validation against the original still enforces them).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// Deepest nesting accepted.
    pub max_depth: usize,
    /// How many times one `$ref` may be expanded inside itself before it is cut.
    pub max_ref_expansions: usize,
    /// Largest `minLength`/`maxLength` kept.
    pub max_length_bound: u64,
    /// Largest `minItems`/`maxItems` kept.
    pub max_items_bound: u64,
}

impl Default for Limits {
    fn default() -> Self {
        Self {
            max_depth: 32,
            max_ref_expansions: 2,
            max_length_bound: 256,
            max_items_bound: 32,
        }
    }
}

/// The result of sanitizing one parameters schema.
#[derive(Debug, Clone, PartialEq)]
pub struct Sanitized {
    /// The canonical schema (grammar and prompt).
    pub schema: Schema,
    /// Every change made.
    pub report: Report,
    /// The original with only type names normalized, for validating arguments (after
    /// [`Schema::restore_names`]).
    pub validation: Value,
    /// The original, untouched.
    pub original: Value,
}

/// Sanitizes the `parameters` schema of one tool.
pub fn sanitize(original: &Value, limits: Limits) -> Result<Sanitized, SchemaError> {
    let mut walker = Walker {
        root: original,
        limits,
        report: Report::default(),
        ref_stack: Vec::new(),
    };
    let mut top = match original {
        Value::Object(map) => map.clone(),
        Value::Bool(true) => Map::new(),
        other => {
            return Err(SchemaError::NotAnObject {
                found: describe(other),
            })
        }
    };
    for container in ["$defs", "definitions"] {
        if top.remove(container).is_some() {
            walker.report.add(
                &format!("/{container}"),
                ChangeKind::AnnotationDropped,
                format!("{container} removed: each definition is inlined where it is referenced"),
            );
        }
    }
    let declares_type = top.contains_key("type") || top.contains_key("$ref");
    let mut schema = walker.node(&Value::Object(top), "", 0)?;
    schema = match schema.kind {
        SchemaKind::Object { .. } => {
            if !declares_type {
                walker.report.add(
                    "",
                    ChangeKind::TopLevelObjectAdded,
                    "added the missing top-level type: object",
                );
            }
            schema
        }
        SchemaKind::Any => {
            walker.report.add(
                "",
                ChangeKind::TopLevelObjectAdded,
                "an empty schema became an object accepting any arguments",
            );
            Schema {
                kind: SchemaKind::Object {
                    properties: Vec::new(),
                    additional: Some(Box::new(Schema::new(SchemaKind::Any))),
                },
                description: schema.description,
            }
        }
        other => {
            return Err(SchemaError::NotAnObject {
                found: kind_name(&other).to_string(),
            })
        }
    };
    Ok(Sanitized {
        schema,
        report: walker.report,
        validation: validation_schema(original),
        original: original.clone(),
    })
}

struct Walker<'a> {
    root: &'a Value,
    limits: Limits,
    report: Report,
    ref_stack: Vec<String>,
}

/// Keywords that only annotate.
const ANNOTATIONS: &[&str] = &[
    "title",
    "$schema",
    "$id",
    "$comment",
    "examples",
    "example",
    "default",
    "deprecated",
    "readOnly",
    "writeOnly",
    "$anchor",
    "x-order",
];

/// Keywords that constrain but that the canonical subset does not carry.
const UNSUPPORTED: &[&str] = &[
    "pattern",
    "format",
    "multipleOf",
    "uniqueItems",
    "contains",
    "minContains",
    "maxContains",
    "patternProperties",
    "propertyNames",
    "minProperties",
    "maxProperties",
    "dependencies",
    "dependentRequired",
    "dependentSchemas",
    "unevaluatedProperties",
    "unevaluatedItems",
    "if",
    "then",
    "else",
    "not",
    "contentEncoding",
    "contentMediaType",
    "contentSchema",
    "additionalItems",
];

impl Walker<'_> {
    fn node(&mut self, value: &Value, path: &str, depth: usize) -> Result<Schema, SchemaError> {
        if depth > self.limits.max_depth {
            return Err(SchemaError::TooDeep {
                path: path.to_string(),
                limit: self.limits.max_depth,
            });
        }
        let mut map = match value {
            Value::Object(map) => map.clone(),
            Value::Bool(true) => return Ok(Schema::new(SchemaKind::Any)),
            Value::Bool(false) => {
                return Err(SchemaError::Unsatisfiable {
                    path: path.to_string(),
                    why: "the schema is `false`".into(),
                })
            }
            other => {
                return Err(SchemaError::NotASchema {
                    path: path.to_string(),
                    found: describe(other),
                })
            }
        };
        if let Some(reference) = map.remove("$ref") {
            return self.reference(reference, map, path, depth);
        }
        if let Some(members) = map.remove("allOf") {
            let merged = self.merge_all_of(map, members, path)?;
            return self.node(&Value::Object(merged), path, depth + 1);
        }
        for keyword in ["anyOf", "oneOf"] {
            if let Some(branches) = map.remove(keyword) {
                return self.union(keyword, branches, map, path, depth);
            }
        }
        if map.get("nullable") == Some(&Value::Bool(true)) {
            map.remove("nullable");
            self.report.add(
                path,
                ChangeKind::UnionExpanded,
                "nullable: true became anyOf [..., null]",
            );
            let inner = self.node(&Value::Object(map), path, depth + 1)?;
            return Ok(any_of(vec![inner, Schema::new(SchemaKind::Null)]));
        }
        map.remove("nullable");
        let description = take_description(&mut map);
        let mut schema = if map.contains_key("enum") || map.contains_key("const") {
            self.enumeration(&mut map, path)?
        } else {
            match self.types(&mut map, path)? {
                Types::One(ty) => self.typed(ty, &mut map, path, depth)?,
                Types::Many(types) => {
                    self.report.add(
                        path,
                        ChangeKind::UnionExpanded,
                        format!(
                            "type list [{}] became anyOf",
                            types
                                .iter()
                                .filter_map(|t| t.json_name())
                                .collect::<Vec<_>>()
                                .join(", ")
                        ),
                    );
                    let mut branches = Vec::new();
                    for ty in types {
                        let mut copy = map.clone();
                        branches.push(self.typed(ty, &mut copy, path, depth)?);
                    }
                    map.clear();
                    any_of(branches)
                }
            }
        };
        self.report_leftovers(&map, path);
        schema.description = description.or(schema.description);
        Ok(schema)
    }

    fn report_leftovers(&mut self, map: &Map<String, Value>, path: &str) {
        for key in map.keys() {
            let (kind, why) = if ANNOTATIONS.contains(&key.as_str()) {
                (ChangeKind::AnnotationDropped, "annotation removed")
            } else if UNSUPPORTED.contains(&key.as_str()) {
                (
                    ChangeKind::KeywordDropped,
                    "not enforced by the grammar; validation enforces it",
                )
            } else if is_type_keyword(key) {
                (ChangeKind::KeywordDropped, "does not apply to this type")
            } else {
                (ChangeKind::UnknownKeywordDropped, "unknown keyword removed")
            };
            self.report.add(path, kind, format!("{key}: {why}"));
        }
    }
}

fn take_description(map: &mut Map<String, Value>) -> Option<String> {
    match map.remove("description") {
        Some(Value::String(s)) => Some(s),
        Some(other) => Some(other.to_string()),
        None => None,
    }
}

fn describe(value: &Value) -> String {
    match value {
        Value::Null => "null".into(),
        Value::Bool(b) => format!("the boolean {b}"),
        Value::Number(n) => format!("the number {n}"),
        Value::String(s) => format!("the string {s:?}"),
        Value::Array(_) => "a list".into(),
        Value::Object(_) => "an object".into(),
    }
}

fn kind_name(kind: &SchemaKind) -> &'static str {
    match kind {
        SchemaKind::Any => "any value",
        SchemaKind::Null => "null",
        SchemaKind::Boolean => "a boolean",
        SchemaKind::Integer(_) => "an integer",
        SchemaKind::Number(_) => "a number",
        SchemaKind::String { .. } => "a string",
        SchemaKind::Enum(_) => "an enum",
        SchemaKind::Array { .. } => "an array",
        SchemaKind::Object { .. } => "an object",
        SchemaKind::AnyOf(_) => "a union",
    }
}
