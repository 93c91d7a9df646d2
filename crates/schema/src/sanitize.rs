//! The walk from a schema in the wild to the canonical subset, recording each change.

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

    fn reference(
        &mut self,
        reference: Value,
        siblings: Map<String, Value>,
        path: &str,
        depth: usize,
    ) -> Result<Schema, SchemaError> {
        let Value::String(reference) = reference else {
            return Err(SchemaError::NotASchema {
                path: format!("{path}/$ref"),
                found: "a $ref that is not a string".into(),
            });
        };
        let target = resolve(self.root, &reference, path)?;
        let expansions = self.ref_stack.iter().filter(|r| **r == reference).count();
        if expansions >= self.limits.max_ref_expansions {
            self.report.add(
                path,
                ChangeKind::RecursionCut,
                format!("recursive $ref {reference} cut after {expansions} levels: any value accepted here"),
            );
            return Ok(Schema::new(SchemaKind::Any));
        }
        self.report.add(
            path,
            ChangeKind::RefInlined,
            format!("inlined $ref {reference}"),
        );
        let mut merged = match target {
            Value::Object(m) => m.clone(),
            other => {
                let mut m = Map::new();
                m.insert("allOf".into(), Value::Array(vec![other.clone()]));
                m
            }
        };
        for (k, v) in siblings {
            merged.insert(k, v);
        }
        self.ref_stack.push(reference);
        let result = self.node(&Value::Object(merged), path, depth + 1);
        self.ref_stack.pop();
        result
    }

    /// Merges `allOf` members (and the node's own keywords) into one schema object.
    fn merge_all_of(
        &mut self,
        mut base: Map<String, Value>,
        members: Value,
        path: &str,
    ) -> Result<Map<String, Value>, SchemaError> {
        let Value::Array(members) = members else {
            return Err(SchemaError::NotASchema {
                path: format!("{path}/allOf"),
                found: "an allOf that is not a list".into(),
            });
        };
        self.report.add(
            path,
            ChangeKind::AllOfMerged,
            format!("merged {} allOf members", members.len()),
        );
        for (i, member) in members.into_iter().enumerate() {
            let member_path = format!("{path}/allOf/{i}");
            let member = match member {
                Value::Object(mut m) => {
                    // A member that is a $ref is merged by its content.
                    if let Some(Value::String(r)) = m.remove("$ref") {
                        let target = resolve(self.root, &r, &member_path)?;
                        if let Value::Object(t) = target {
                            for (k, v) in t {
                                m.entry(k.clone()).or_insert_with(|| v.clone());
                            }
                        }
                    }
                    m
                }
                Value::Bool(true) => continue,
                other => {
                    return Err(SchemaError::NotASchema {
                        path: member_path,
                        found: describe(&other),
                    })
                }
            };
            merge_into(&mut base, member, &member_path)?;
        }
        Ok(base)
    }

    fn union(
        &mut self,
        keyword: &str,
        branches: Value,
        siblings: Map<String, Value>,
        path: &str,
        depth: usize,
    ) -> Result<Schema, SchemaError> {
        let Value::Array(branches) = branches else {
            return Err(SchemaError::NotASchema {
                path: format!("{path}/{keyword}"),
                found: format!("a {keyword} that is not a list"),
            });
        };
        if keyword == "oneOf" {
            self.report.add(
                path,
                ChangeKind::OneOfAsAnyOf,
                "oneOf treated as anyOf (exclusivity is checked by validation)",
            );
        }
        let mut siblings = siblings;
        let description = take_description(&mut siblings);
        let mut schemas = Vec::new();
        for (i, branch) in branches.into_iter().enumerate() {
            let branch_path = format!("{path}/{keyword}/{i}");
            let value = if siblings.is_empty() {
                branch
            } else {
                let mut m = siblings.clone();
                m.insert("allOf".into(), Value::Array(vec![branch]));
                Value::Object(m)
            };
            match self.node(&value, &branch_path, depth + 1) {
                Ok(schema) => schemas.push(schema),
                // An impossible branch does not make the union impossible.
                Err(SchemaError::Unsatisfiable { why, .. }) => {
                    self.report.add(
                        &branch_path,
                        ChangeKind::KeywordDropped,
                        format!("branch removed: {why}"),
                    );
                }
                Err(e) => return Err(e),
            }
        }
        if schemas.is_empty() {
            return Err(SchemaError::Unsatisfiable {
                path: path.to_string(),
                why: format!("{keyword} has no satisfiable branch"),
            });
        }
        let mut schema = any_of(schemas);
        schema.description = description.or(schema.description);
        Ok(schema)
    }

    fn enumeration(
        &mut self,
        map: &mut Map<String, Value>,
        path: &str,
    ) -> Result<Schema, SchemaError> {
        let mut values = match (map.remove("enum"), map.remove("const")) {
            (_, Some(c)) => {
                self.report.add(
                    path,
                    ChangeKind::ConstAsEnum,
                    "const became a one-value enum",
                );
                vec![c]
            }
            (Some(Value::Array(values)), None) => values,
            (Some(_), None) | (None, None) => {
                return Err(SchemaError::NotASchema {
                    path: format!("{path}/enum"),
                    found: "an enum that is not a list".into(),
                })
            }
        };
        if map.contains_key("type") {
            let allowed = match self.types(map, path)? {
                Types::One(ty) => vec![ty],
                Types::Many(types) => types,
            };
            let before = values.len();
            values.retain(|v| allowed.iter().any(|t| t.admits(v)));
            if values.len() != before {
                let names: Vec<&str> = allowed
                    .iter()
                    .map(|t| t.json_name().unwrap_or("any"))
                    .collect();
                self.report.add(
                    path,
                    ChangeKind::EnumFiltered,
                    format!(
                        "removed {} enum values that are not {}",
                        before - values.len(),
                        names.join(" or ")
                    ),
                );
            }
        }
        let mut deduped: Vec<Value> = Vec::with_capacity(values.len());
        for v in values {
            if !deduped.contains(&v) {
                deduped.push(v);
            }
        }
        if deduped.is_empty() {
            return Err(SchemaError::Unsatisfiable {
                path: path.to_string(),
                why: "the enum is empty".into(),
            });
        }
        // Keywords beside an enum only narrow it further; validation enforces them.
        for key in map
            .keys()
            .filter(|k| !ANNOTATIONS.contains(&k.as_str()))
            .cloned()
            .collect::<Vec<_>>()
        {
            map.remove(&key);
            self.report.add(
                path,
                ChangeKind::KeywordDropped,
                format!("{key} beside enum removed (validation enforces it)"),
            );
        }
        Ok(Schema::new(SchemaKind::Enum(deduped)))
    }

    fn types(&mut self, map: &mut Map<String, Value>, path: &str) -> Result<Types, SchemaError> {
        let parse = |walker: &mut Self, name: &Value| -> Result<TypeName, SchemaError> {
            let text = name.as_str().ok_or_else(|| SchemaError::NotASchema {
                path: format!("{path}/type"),
                found: format!("type {}", describe(name)),
            })?;
            let (ty, alias) = TypeName::parse(text).ok_or_else(|| SchemaError::UnknownType {
                path: path.to_string(),
                name: text.to_string(),
            })?;
            if alias {
                let to = ty.json_name().unwrap_or("any value");
                walker.report.add(
                    path,
                    ChangeKind::TypeRenamed,
                    format!("type `{text}` read as `{to}`"),
                );
            }
            Ok(ty)
        };
        match map.remove("type") {
            None => {
                let ty = infer_type(map);
                if ty != TypeName::Any {
                    self.report.add(
                        path,
                        ChangeKind::TypeInferred,
                        format!(
                            "missing type inferred as {}",
                            ty.json_name().unwrap_or("any")
                        ),
                    );
                }
                Ok(Types::One(ty))
            }
            Some(Value::Array(names)) => {
                let mut types = Vec::new();
                for name in &names {
                    let ty = parse(self, name)?;
                    if !types.contains(&ty) {
                        types.push(ty);
                    }
                }
                match types.len() {
                    0 => Err(SchemaError::Unsatisfiable {
                        path: path.to_string(),
                        why: "the type list is empty".into(),
                    }),
                    1 => Ok(Types::One(types[0])),
                    _ if types.contains(&TypeName::Any) => Ok(Types::One(TypeName::Any)),
                    _ => Ok(Types::Many(types)),
                }
            }
            Some(name) => Ok(Types::One(parse(self, &name)?)),
        }
    }

    fn typed(
        &mut self,
        ty: TypeName,
        map: &mut Map<String, Value>,
        path: &str,
        depth: usize,
    ) -> Result<Schema, SchemaError> {
        let kind = match ty {
            TypeName::Any => SchemaKind::Any,
            TypeName::Null => SchemaKind::Null,
            TypeName::Boolean => SchemaKind::Boolean,
            TypeName::Integer => SchemaKind::Integer(self.bounds(map, path)),
            TypeName::Number => SchemaKind::Number(self.bounds(map, path)),
            TypeName::String => {
                let cap = self.limits.max_length_bound;
                let (min_length, max_length) =
                    self.bound_pair(map, ("minLength", "maxLength"), cap, path);
                SchemaKind::String {
                    min_length,
                    max_length,
                }
            }
            TypeName::Array => {
                let items = match map.remove("items").or_else(|| map.remove("prefixItems")) {
                    None => Schema::new(SchemaKind::Any),
                    Some(Value::Array(tuple)) => {
                        self.report.add(
                            path,
                            ChangeKind::KeywordDropped,
                            "tuple items became a list whose items match any of the positions",
                        );
                        let mut branches = Vec::new();
                        for (i, item) in tuple.iter().enumerate() {
                            branches.push(self.node(
                                item,
                                &format!("{path}/items/{i}"),
                                depth + 1,
                            )?);
                        }
                        if branches.is_empty() {
                            Schema::new(SchemaKind::Any)
                        } else {
                            any_of(branches)
                        }
                    }
                    Some(item) => self.node(&item, &format!("{path}/items"), depth + 1)?,
                };
                let cap = self.limits.max_items_bound;
                let (min_items, max_items) =
                    self.bound_pair(map, ("minItems", "maxItems"), cap, path);
                SchemaKind::Array {
                    items: Box::new(items),
                    min_items,
                    max_items,
                }
            }
            TypeName::Object => self.object(map, path, depth)?,
        };
        Ok(Schema::new(kind))
    }

    fn object(
        &mut self,
        map: &mut Map<String, Value>,
        path: &str,
        depth: usize,
    ) -> Result<SchemaKind, SchemaError> {
        let declared = match map.remove("properties") {
            None => Map::new(),
            Some(Value::Object(p)) => p,
            Some(other) => {
                return Err(SchemaError::NotASchema {
                    path: format!("{path}/properties"),
                    found: describe(&other),
                })
            }
        };
        let required: Vec<String> = match map.remove("required") {
            Some(Value::Array(list)) => list
                .into_iter()
                .filter_map(|v| match v {
                    Value::String(s) => Some(s),
                    other => {
                        self.report.add(
                            path,
                            ChangeKind::RequiredDropped,
                            format!("required entry {other} is not a name"),
                        );
                        None
                    }
                })
                .collect(),
            Some(Value::Bool(_)) | None => Vec::new(),
            Some(other) => {
                self.report.add(
                    path,
                    ChangeKind::RequiredDropped,
                    format!("required {} is not a list", describe(&other)),
                );
                Vec::new()
            }
        };
        for name in required.iter().filter(|n| !declared.contains_key(*n)) {
            self.report.add(
                path,
                ChangeKind::RequiredDropped,
                format!("required names `{name}`, which is not a property"),
            );
        }
        let additional = map.remove("additionalProperties");
        let mut names = NameAllocator::new(declared.keys());
        let mut properties = Vec::with_capacity(declared.len());
        for (original_name, schema) in &declared {
            let name = names.assign(original_name);
            let prop_path = format!("{path}/properties/{}", escape(original_name));
            if &name != original_name {
                self.report.add(&prop_path, ChangeKind::PropertyRenamed, format!("property `{original_name}` is offered as `{name}` and mapped back in the arguments"));
            }
            properties.push(Property {
                schema: self.node(schema, &prop_path, depth + 1)?,
                required: required.contains(original_name),
                name,
                original_name: original_name.clone(),
            });
        }
        let additional = if properties.is_empty() {
            match additional {
                Some(Value::Bool(false)) => None,
                None | Some(Value::Bool(true)) => Some(Box::new(Schema::new(SchemaKind::Any))),
                Some(schema) => Some(Box::new(self.node(
                    &schema,
                    &format!("{path}/additionalProperties"),
                    depth + 1,
                )?)),
            }
        } else {
            if matches!(&additional, Some(v) if v != &Value::Bool(false)) {
                self.report.add(path, ChangeKind::ObjectClosed, "undeclared properties are not offered to the model (additionalProperties beside declared properties)");
            }
            None
        };
        Ok(SchemaKind::Object {
            properties,
            additional,
        })
    }

    fn bounds(&mut self, map: &mut Map<String, Value>, path: &str) -> NumberBounds {
        let mut take = |key: &str| -> Option<Value> { map.remove(key) };
        let (minimum, maximum) = (take("minimum"), take("maximum"));
        let (ex_min, ex_max) = (take("exclusiveMinimum"), take("exclusiveMaximum"));
        let num = |v: &Option<Value>| v.as_ref().and_then(Value::as_f64);
        let mut b = NumberBounds {
            minimum: num(&minimum),
            maximum: num(&maximum),
            exclusive_minimum: num(&ex_min),
            exclusive_maximum: num(&ex_max),
        };
        // Draft 4: exclusiveMinimum: true makes `minimum` exclusive.
        if ex_min == Some(Value::Bool(true)) {
            b.exclusive_minimum = b.minimum.take();
        }
        if ex_max == Some(Value::Bool(true)) {
            b.exclusive_maximum = b.maximum.take();
        }
        for (key, v) in [("minimum", &minimum), ("maximum", &maximum)] {
            if matches!(v, Some(v) if !v.is_number()) {
                self.report.add(
                    path,
                    ChangeKind::KeywordDropped,
                    format!("{key} is not a number"),
                );
            }
        }
        b
    }

    /// A lower and an upper length/count bound (`keys`); a lower bound above the upper
    /// one would make a grammar no text matches (and llama.cpp's parser allocates
    /// without limit on `{min,max}` with min > max), so both are removed and reported.
    fn bound_pair(
        &mut self,
        map: &mut Map<String, Value>,
        (min_key, max_key): (&str, &str),
        cap: u64,
        path: &str,
    ) -> (Option<u64>, Option<u64>) {
        let min = self.bound(map, min_key, cap, path);
        let max = self.bound(map, max_key, cap, path);
        match (min, max) {
            (Some(lo), Some(hi)) if lo > hi => {
                self.report.add(
                    path,
                    ChangeKind::BoundsContradict,
                    format!("{min_key} {lo} is above {max_key} {hi}: no value satisfies both; both removed from the grammar (validation refuses every value)"),
                );
                (None, None)
            }
            pair => pair,
        }
    }

    /// A length/count bound; bounds above `cap` are removed and reported.
    fn bound(
        &mut self,
        map: &mut Map<String, Value>,
        key: &str,
        cap: u64,
        path: &str,
    ) -> Option<u64> {
        let value = map.remove(key)?;
        match value
            .as_u64()
            .or_else(|| value.as_f64().filter(|f| *f >= 0.0).map(|f| f as u64))
        {
            Some(n) if n <= cap => Some(n),
            Some(n) => {
                self.report.add(path, ChangeKind::BoundCapped, format!("{key} {n} is above the grammar limit {cap}: removed from the grammar (validation enforces it)"));
                None
            }
            None => {
                self.report.add(
                    path,
                    ChangeKind::KeywordDropped,
                    format!("{key} {value} is not a count"),
                );
                None
            }
        }
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

enum Types {
    One(TypeName),
    Many(Vec<TypeName>),
}

fn is_type_keyword(key: &str) -> bool {
    matches!(
        key,
        "properties"
            | "required"
            | "additionalProperties"
            | "items"
            | "prefixItems"
            | "minItems"
            | "maxItems"
            | "minLength"
            | "maxLength"
            | "minimum"
            | "maximum"
            | "exclusiveMinimum"
            | "exclusiveMaximum"
    )
}

fn infer_type(map: &Map<String, Value>) -> TypeName {
    let has = |keys: &[&str]| keys.iter().any(|k| map.contains_key(*k));
    if has(&[
        "properties",
        "additionalProperties",
        "required",
        "patternProperties",
    ]) {
        TypeName::Object
    } else if has(&["items", "prefixItems", "minItems", "maxItems"]) {
        TypeName::Array
    } else if has(&["minLength", "maxLength", "pattern", "format"]) {
        TypeName::String
    } else if has(&[
        "minimum",
        "maximum",
        "exclusiveMinimum",
        "exclusiveMaximum",
        "multipleOf",
    ]) {
        TypeName::Number
    } else {
        TypeName::Any
    }
}

fn take_description(map: &mut Map<String, Value>) -> Option<String> {
    match map.remove("description") {
        Some(Value::String(s)) => Some(s),
        Some(other) => Some(other.to_string()),
        None => None,
    }
}

/// A union of `branches`, flattened and without duplicates; one branch is itself.
fn any_of(branches: Vec<Schema>) -> Schema {
    let mut flat: Vec<Schema> = Vec::new();
    for b in branches {
        let parts = match b.kind {
            SchemaKind::AnyOf(inner) if b.description.is_none() => inner,
            kind => vec![Schema {
                kind,
                description: b.description,
            }],
        };
        for p in parts {
            if !flat.contains(&p) {
                flat.push(p);
            }
        }
    }
    if flat.iter().any(|s| s.kind == SchemaKind::Any) {
        return Schema::new(SchemaKind::Any);
    }
    if flat.len() == 1 {
        return flat.remove(0);
    }
    Schema::new(SchemaKind::AnyOf(flat))
}

/// Merges one `allOf` member into `base`: properties and required are united, types
/// intersected, other keywords kept from whichever declares them first.
fn merge_into(
    base: &mut Map<String, Value>,
    member: Map<String, Value>,
    path: &str,
) -> Result<(), SchemaError> {
    for (key, value) in member {
        match key.as_str() {
            "properties" => {
                let entry = base
                    .entry("properties")
                    .or_insert_with(|| Value::Object(Map::new()));
                if let (Value::Object(into), Value::Object(from)) = (entry, value) {
                    for (name, schema) in from {
                        match into.get_mut(&name) {
                            Some(existing) => {
                                let both = Value::Array(vec![existing.clone(), schema]);
                                let mut m = Map::new();
                                m.insert("allOf".into(), both);
                                *existing = Value::Object(m);
                            }
                            None => {
                                into.insert(name, schema);
                            }
                        }
                    }
                }
            }
            "required" => {
                let entry = base
                    .entry("required")
                    .or_insert_with(|| Value::Array(Vec::new()));
                if let (Value::Array(into), Value::Array(from)) = (entry, value) {
                    for name in from {
                        if !into.contains(&name) {
                            into.push(name);
                        }
                    }
                }
            }
            "type" => match base.get("type") {
                None => {
                    base.insert(key, value);
                }
                Some(existing) if existing == &value => {}
                Some(existing) => {
                    let intersect = intersect_types(existing, &value).ok_or_else(|| {
                        SchemaError::Unsatisfiable {
                            path: path.to_string(),
                            why: format!("allOf requires both type {existing} and {value}"),
                        }
                    })?;
                    base.insert(key, intersect);
                }
            },
            _ => {
                base.entry(key).or_insert(value);
            }
        }
    }
    Ok(())
}

fn intersect_types(a: &Value, b: &Value) -> Option<Value> {
    let names = |v: &Value| -> Vec<String> {
        match v {
            Value::String(s) => vec![s.clone()],
            Value::Array(list) => list
                .iter()
                .filter_map(|x| x.as_str().map(str::to_string))
                .collect(),
            _ => Vec::new(),
        }
    };
    let canon = |n: &String| TypeName::parse(n).map(|(t, _)| t);
    let (left, right) = (names(a), names(b));
    let mut out = Vec::new();
    for l in left.iter().filter_map(canon) {
        for r in right.iter().filter_map(canon) {
            let meet = match (l, r) {
                (x, y) if x == y => Some(x),
                (TypeName::Any, y) => Some(y),
                (x, TypeName::Any) => Some(x),
                (TypeName::Integer, TypeName::Number) | (TypeName::Number, TypeName::Integer) => {
                    Some(TypeName::Integer)
                }
                _ => None,
            };
            if let Some(name) = meet.and_then(TypeName::json_name) {
                if !out.contains(&name) {
                    out.push(name);
                }
            }
        }
    }
    match out.len() {
        0 => None,
        1 => Some(Value::from(out[0])),
        _ => Some(Value::from(out)),
    }
}

/// The original schema with alias type names replaced and the top-level object type
/// added, so a standard validator accepts it; everything else is kept.
fn validation_schema(original: &Value) -> Value {
    let mut v = normalize_types(original);
    if let Value::Object(m) = &mut v {
        if !m.contains_key("type") && !m.contains_key("$ref") {
            m.insert("type".into(), Value::from("object"));
        }
    }
    v
}

fn normalize_types(value: &Value) -> Value {
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
