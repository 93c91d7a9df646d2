//! References, `allOf` merges and unions (`anyOf`/`oneOf`, nullable forms).

use super::*;

impl Walker<'_> {
    pub(super) fn reference(
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
    pub(super) fn merge_all_of(
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

    pub(super) fn union(
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
}

/// A union of `branches`, flattened and without duplicates; one branch is itself.
pub(super) fn any_of(branches: Vec<Schema>) -> Schema {
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
pub(super) fn merge_into(
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

pub(super) fn intersect_types(a: &Value, b: &Value) -> Option<Value> {
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
