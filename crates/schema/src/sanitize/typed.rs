//! Types (named, inferred, several), enums and consts, and objects with their
//! properties.

use super::*;

impl Walker<'_> {
    pub(super) fn enumeration(
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

    pub(super) fn types(
        &mut self,
        map: &mut Map<String, Value>,
        path: &str,
    ) -> Result<Types, SchemaError> {
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

    pub(super) fn typed(
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
                let shape = self.string_shape(map, path, min_length.or(max_length).is_some());
                SchemaKind::String {
                    min_length,
                    max_length,
                    shape,
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

    pub(super) fn object(
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
}

pub(super) enum Types {
    One(TypeName),
    Many(Vec<TypeName>),
}

pub(super) fn is_type_keyword(key: &str) -> bool {
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

pub(super) fn infer_type(map: &Map<String, Value>) -> TypeName {
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
