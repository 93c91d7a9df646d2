//! Schemas as they come in the wild, sanitized: the canonical result and the report.

use rein_schema::{sanitize, ChangeKind, Limits, SchemaError, SchemaKind};
use serde_json::{json, Value};

fn canon(schema: Value) -> (Value, Vec<ChangeKind>) {
    let s = sanitize(&schema, Limits::default()).unwrap_or_else(|e| panic!("{e}"));
    (
        s.schema.to_json(),
        s.report.changes.iter().map(|c| c.kind).collect(),
    )
}

#[test]
fn an_openai_schema_passes_unchanged() {
    let schema = json!({
        "type": "object",
        "properties": {
            "city": {"type": "string", "description": "City name"},
            "unit": {"type": "string", "enum": ["c", "f"]},
            "days": {"type": "integer", "minimum": 1, "maximum": 7}
        },
        "required": ["city"],
        "additionalProperties": false
    });
    let s = sanitize(&schema, Limits::default()).unwrap();
    assert!(s.report.is_empty(), "{:?}", s.report);
    assert_eq!(
        s.schema.to_json(),
        json!({
            "type": "object",
            "properties": {
                "city": {"type": "string", "description": "City name"},
                "unit": {"enum": ["c", "f"]},
                "days": {"type": "integer", "minimum": 1, "maximum": 7}
            },
            "required": ["city"],
            "additionalProperties": false
        })
    );
    assert_eq!(s.original, schema);
}

#[test]
fn python_type_names_and_a_missing_top_level_type() {
    let (out, kinds) = canon(json!({
        "properties": {
            "opts": {"type": "dict"},
            "ratio": {"type": "float"},
            "n": {"type": "int"},
            "name": {"type": "str"},
            "flag": {"type": "bool"},
            "xs": {"type": "list", "items": {"type": "int"}},
            "pair": {"type": "tuple"},
            "anything": {"type": "any"}
        }
    }));
    assert_eq!(out["properties"]["opts"], json!({"type": "object"}));
    assert_eq!(out["properties"]["ratio"], json!({"type": "number"}));
    assert_eq!(out["properties"]["n"], json!({"type": "integer"}));
    assert_eq!(out["properties"]["name"], json!({"type": "string"}));
    assert_eq!(out["properties"]["flag"], json!({"type": "boolean"}));
    assert_eq!(
        out["properties"]["xs"],
        json!({"type": "array", "items": {"type": "integer"}})
    );
    assert_eq!(
        out["properties"]["pair"],
        json!({"type": "array", "items": {}})
    );
    assert_eq!(out["properties"]["anything"], json!({}));
    assert!(kinds.contains(&ChangeKind::TopLevelObjectAdded));
    assert_eq!(
        kinds
            .iter()
            .filter(|k| **k == ChangeKind::TypeRenamed)
            .count(),
        9
    );
}

#[test]
fn nullable_forms_become_any_of() {
    let (out, kinds) = canon(json!({
        "type": "object",
        "properties": {
            "a": {"type": ["string", "null"]},
            "b": {"anyOf": [{"type": "integer"}, {"type": "null"}]},
            "c": {"type": "number", "nullable": true}
        }
    }));
    assert_eq!(
        out["properties"]["a"],
        json!({"anyOf": [{"type": "string"}, {"type": "null"}]})
    );
    assert_eq!(
        out["properties"]["b"],
        json!({"anyOf": [{"type": "integer"}, {"type": "null"}]})
    );
    assert_eq!(
        out["properties"]["c"],
        json!({"anyOf": [{"type": "number"}, {"type": "null"}]})
    );
    assert_eq!(
        kinds
            .iter()
            .filter(|k| **k == ChangeKind::UnionExpanded)
            .count(),
        2
    );
}

#[test]
fn refs_defs_and_definitions_are_inlined() {
    let (out, kinds) = canon(json!({
        "type": "object",
        "$defs": {"Point": {"type": "object", "properties": {"x": {"type": "number"}, "y": {"type": "number"}}, "required": ["x", "y"]}},
        "definitions": {"Colour": {"enum": ["red", "green"]}},
        "properties": {
            "from": {"$ref": "#/$defs/Point"},
            "to": {"$ref": "#/$defs/Point", "description": "where to"},
            "colour": {"$ref": "#/definitions/Colour"}
        }
    }));
    let point = json!({"type": "object", "properties": {"x": {"type": "number"}, "y": {"type": "number"}}, "required": ["x", "y"], "additionalProperties": false});
    assert_eq!(out["properties"]["from"], point);
    let mut described = point.clone();
    described["description"] = json!("where to");
    assert_eq!(out["properties"]["to"], described);
    assert_eq!(
        out["properties"]["colour"],
        json!({"enum": ["red", "green"]})
    );
    assert_eq!(
        kinds
            .iter()
            .filter(|k| **k == ChangeKind::RefInlined)
            .count(),
        3
    );
}

#[test]
fn recursive_refs_are_cut_and_reported() {
    let s = sanitize(
        &json!({
            "type": "object",
            "$defs": {"Node": {"type": "object", "properties": {"value": {"type": "integer"}, "children": {"type": "array", "items": {"$ref": "#/$defs/Node"}}}}},
            "properties": {"tree": {"$ref": "#/$defs/Node"}}
        }),
        Limits::default(),
    )
    .unwrap();
    let cut: Vec<_> = s.report.of_kind(ChangeKind::RecursionCut).collect();
    assert_eq!(cut.len(), 1, "{:?}", s.report);
    let json = s.schema.to_json();
    // Two levels of Node, then any value.
    let level2 = &json["properties"]["tree"]["properties"]["children"]["items"];
    assert_eq!(level2["properties"]["children"]["items"], json!({}));
}

#[test]
fn unknown_refs_and_impossible_schemas_are_errors() {
    let err = sanitize(
        &json!({"type": "object", "properties": {"a": {"$ref": "#/$defs/Missing"}}}),
        Limits::default(),
    )
    .unwrap_err();
    assert!(
        matches!(err, SchemaError::UnknownRef { ref path, .. } if path == "/properties/a"),
        "{err}"
    );
    let err = sanitize(
        &json!({"type": "object", "properties": {"a": {"$ref": "http://example.com/s.json"}}}),
        Limits::default(),
    )
    .unwrap_err();
    assert!(err.to_string().contains("only local references"), "{err}");
    let err = sanitize(
        &json!({"type": "object", "properties": {"a": {"enum": []}}}),
        Limits::default(),
    )
    .unwrap_err();
    assert!(matches!(err, SchemaError::Unsatisfiable { .. }), "{err}");
    let err = sanitize(
        &json!({"type": "object", "properties": {"a": {"type": "quaternion"}}}),
        Limits::default(),
    )
    .unwrap_err();
    assert_eq!(
        err.to_string(),
        "at /properties/a: unknown type `quaternion`"
    );
    let err = sanitize(&json!({"type": "string"}), Limits::default()).unwrap_err();
    assert!(matches!(err, SchemaError::NotAnObject { .. }), "{err}");
    let err = sanitize(&json!([1, 2]), Limits::default()).unwrap_err();
    assert!(matches!(err, SchemaError::NotAnObject { .. }), "{err}");
    let err = sanitize(
        &json!({"type": "object", "properties": {"a": 5}}),
        Limits::default(),
    )
    .unwrap_err();
    assert!(matches!(err, SchemaError::NotASchema { .. }), "{err}");
    let err = sanitize(
        &json!({"allOf": [{"type": "string"}, {"type": "integer"}]}),
        Limits::default(),
    )
    .unwrap_err();
    assert!(matches!(err, SchemaError::Unsatisfiable { .. }), "{err}");
}

#[test]
fn all_of_merges_and_one_of_becomes_any_of() {
    let (out, kinds) = canon(json!({
        "allOf": [
            {"type": "object", "properties": {"a": {"type": "string"}}, "required": ["a"]},
            {"properties": {"b": {"type": "integer"}}, "required": ["b"]}
        ],
        "properties": {"c": {"oneOf": [{"type": "string"}, {"type": "integer"}]}}
    }));
    assert_eq!(out["required"], json!(["a", "b"]));
    assert_eq!(
        out["properties"]["c"],
        json!({"anyOf": [{"type": "string"}, {"type": "integer"}]})
    );
    assert!(kinds.contains(&ChangeKind::AllOfMerged));
    assert!(kinds.contains(&ChangeKind::OneOfAsAnyOf));
}

#[test]
fn enum_and_const() {
    let (out, kinds) = canon(json!({
        "type": "object",
        "properties": {
            "mode": {"const": "fast"},
            "level": {"type": "integer", "enum": [1, 2, "3"]},
            "dup": {"enum": ["a", "a", "b"]}
        }
    }));
    assert_eq!(out["properties"]["mode"], json!({"enum": ["fast"]}));
    assert_eq!(out["properties"]["level"], json!({"enum": [1, 2]}));
    assert_eq!(out["properties"]["dup"], json!({"enum": ["a", "b"]}));
    assert!(kinds.contains(&ChangeKind::ConstAsEnum));
    assert!(kinds.contains(&ChangeKind::EnumFiltered));
}

#[test]
fn patterns_formats_and_huge_bounds_are_recorded() {
    let s = sanitize(
        &json!({
            "type": "object",
            "properties": {
                "email": {"type": "string", "format": "idn-email", "pattern": "^(?=.*@).+$", "maxLength": 5000},
                "tags": {"type": "array", "items": {"type": "string"}, "minItems": 1, "maxItems": 10000, "uniqueItems": true},
                "n": {"type": "number", "minimum": 0, "multipleOf": 0.5}
            }
        }),
        Limits::default(),
    )
    .unwrap();
    let out = s.schema.to_json();
    assert_eq!(out["properties"]["email"], json!({"type": "string"}));
    assert_eq!(
        out["properties"]["tags"],
        json!({"type": "array", "items": {"type": "string"}, "minItems": 1})
    );
    assert_eq!(
        out["properties"]["n"],
        json!({"type": "number", "minimum": 0.0})
    );
    let texts: Vec<String> = s.report.changes.iter().map(|c| c.to_string()).collect();
    for expected in [
        "/properties/email: format: not enforced by the grammar; validation enforces it",
        "/properties/email: pattern: not enforced by the grammar (not a pattern the grammar can write (look-around, including look-ahead and look-behind, is not supported)); validation enforces it",
        "/properties/email: maxLength 5000 is above the grammar limit 256: removed from the grammar (validation enforces it)",
        "/properties/tags: maxItems 10000 is above the grammar limit 32: removed from the grammar (validation enforces it)",
        "/properties/tags: uniqueItems: not enforced by the grammar; validation enforces it",
        "/properties/n: multipleOf: not enforced by the grammar; validation enforces it",
    ] {
        assert!(texts.iter().any(|t| t == expected), "missing {expected:?} in {texts:#?}");
    }
    // The validation schema keeps all of it.
    assert_eq!(
        s.validation["properties"]["email"]["maxLength"],
        json!(5000)
    );
    assert_eq!(
        s.validation["properties"]["email"]["pattern"],
        json!("^(?=.*@).+$")
    );
}

#[test]
fn contradictory_bounds_leave_the_grammar_and_stay_in_validation() {
    // A minimum above the maximum: no value fits. Left in a grammar, `{27,21}` makes
    // llama.cpp's parser allocate without limit; the sanitizer removes both bounds.
    let s = sanitize(
        &json!({
            "type": "object",
            "properties": {
                "s": {"type": "string", "minLength": 27, "maxLength": 21},
                "l": {"type": "array", "items": {"type": "integer"}, "minItems": 4, "maxItems": 2},
                "ok": {"type": "string", "minLength": 2, "maxLength": 2}
            }
        }),
        Limits::default(),
    )
    .unwrap();
    let out = s.schema.to_json();
    assert_eq!(out["properties"]["s"], json!({"type": "string"}));
    assert_eq!(
        out["properties"]["l"],
        json!({"type": "array", "items": {"type": "integer"}})
    );
    assert_eq!(
        out["properties"]["ok"],
        json!({"type": "string", "minLength": 2, "maxLength": 2})
    );
    let texts: Vec<String> = s.report.changes.iter().map(|c| c.to_string()).collect();
    assert_eq!(
        texts,
        [
            "/properties/s: minLength 27 is above maxLength 21: no value satisfies both; both removed from the grammar (validation refuses every value)",
            "/properties/l: minItems 4 is above maxItems 2: no value satisfies both; both removed from the grammar (validation refuses every value)",
        ]
    );
    assert!(s
        .report
        .changes
        .iter()
        .all(|c| c.kind == ChangeKind::BoundsContradict));
    // The grammar is the one of the same schema without the contradictory bounds.
    let unbounded = sanitize(
        &json!({
            "type": "object",
            "properties": {
                "s": {"type": "string"},
                "l": {"type": "array", "items": {"type": "integer"}},
                "ok": {"type": "string", "minLength": 2, "maxLength": 2}
            }
        }),
        Limits::default(),
    )
    .unwrap();
    assert_eq!(
        rein_schema::schema_grammar(&s.schema),
        rein_schema::schema_grammar(&unbounded.schema)
    );
    let (validator, _) = rein_schema::ArgumentValidator::new(&s);
    assert!(validator.check(r#"{"s": "abc"}"#).is_err());
}

#[test]
fn additional_properties_maps_and_closing() {
    let (out, kinds) = canon(json!({
        "type": "object",
        "properties": {
            "env": {"type": "object", "additionalProperties": {"type": "string"}},
            "free": {"type": "object"},
            "mixed": {"type": "object", "properties": {"a": {"type": "string"}}, "additionalProperties": true}
        }
    }));
    assert_eq!(
        out["properties"]["env"],
        json!({"type": "object", "additionalProperties": {"type": "string"}})
    );
    assert_eq!(out["properties"]["free"], json!({"type": "object"}));
    assert_eq!(
        out["properties"]["mixed"]["additionalProperties"],
        json!(false)
    );
    assert!(kinds.contains(&ChangeKind::ObjectClosed));
}

#[test]
fn illegal_property_names_are_renamed_and_mapped_back() {
    let s = sanitize(
        &json!({
            "type": "object",
            "properties": {
                "file path": {"type": "string"},
                "file_path": {"type": "string"},
                "opts": {"type": "object", "properties": {"dry run?": {"type": "boolean"}}},
                "items": {"type": "array", "items": {"type": "object", "properties": {"$value": {"type": "integer"}}}}
            },
            "required": ["file path", "missing"]
        }),
        Limits::default(),
    )
    .unwrap();
    let out = s.schema.to_json();
    let names: Vec<&String> = out["properties"].as_object().unwrap().keys().collect();
    assert_eq!(names, vec!["file_path_2", "file_path", "opts", "items"]);
    assert_eq!(out["required"], json!(["file_path_2"]));
    assert_eq!(s.report.of_kind(ChangeKind::RequiredDropped).count(), 1);
    assert_eq!(s.report.of_kind(ChangeKind::PropertyRenamed).count(), 3);

    let args = json!({"file_path_2": "a b.txt", "file_path": "c", "opts": {"dry_run_": true}, "items": [{"_value": 1}]});
    assert_eq!(
        s.schema.restore_names(&args),
        json!({"file path": "a b.txt", "file_path": "c", "opts": {"dry run?": true}, "items": [{"$value": 1}]})
    );
}

#[test]
fn empty_schemas_accept_any_arguments() {
    for schema in [json!({}), json!(true), json!({"type": "object"})] {
        let s = sanitize(&schema, Limits::default()).unwrap();
        assert!(
            matches!(s.schema.kind, SchemaKind::Object { .. }),
            "{schema}"
        );
        assert_eq!(s.schema.to_json(), json!({"type": "object"}), "{schema}");
    }
}

#[test]
fn too_deep_is_an_error_not_a_stack_overflow() {
    // serde_json refuses to parse past 128 levels, so that is as deep as input gets.
    let mut text = String::from(r#"{"type": "string"}"#);
    for _ in 0..60 {
        text = format!(r#"{{"type": "object", "properties": {{"x": {text}}}}}"#);
    }
    let schema: Value = serde_json::from_str(&text).unwrap();
    let err = sanitize(&schema, Limits::default()).unwrap_err();
    assert!(
        matches!(err, SchemaError::TooDeep { limit: 32, .. }),
        "{err}"
    );
}

#[test]
fn required_holds_without_a_top_level_type() {
    for schema in [
        json!({"properties": {"a": {"type": "string"}, "b": {"type": "integer"}}, "required": ["a"]}),
        json!({"type": "object", "properties": {"a": {"type": "string"}, "b": {"type": "integer"}}, "required": ["a"]}),
    ] {
        let s = sanitize(&schema, Limits::default()).unwrap();
        let rein_schema::SchemaKind::Object { properties, .. } = &s.schema.kind else {
            panic!("not an object: {:?}", s.schema.kind);
        };
        let required: Vec<(&str, bool)> = properties
            .iter()
            .map(|p| (p.name.as_str(), p.required))
            .collect();
        assert_eq!(required, vec![("a", true), ("b", false)], "{schema}");
        // In the grammar `a` is not optional: the rule that starts the properties
        // begins with it.
        let grammar = rein_schema::schema_grammar(&s.schema);
        let first = grammar
            .lines()
            .find(|l| l.starts_with("value-from0 ::="))
            .unwrap_or_default()
            .to_string();
        assert!(
            first.starts_with("value-from0 ::= \"\\\"a\\\"\""),
            "{grammar}"
        );
    }
}
