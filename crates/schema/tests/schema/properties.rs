//! Property tests: the sanitizer never panics, its output is a fixed point, and
//! renamed property names always map back.

use proptest::prelude::*;
use rein_schema::{sanitize, Limits, SchemaKind};
use serde_json::{json, Map, Value};

fn any_json() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(Value::from),
        "[a-z$#/]{0,8}".prop_map(Value::from),
        prop::sample::select(vec![
            "object",
            "array",
            "string",
            "dict",
            "int",
            "float",
            "any",
            "null",
            "$ref",
            "#/$defs/a"
        ])
        .prop_map(Value::from),
    ];
    leaf.prop_recursive(5, 64, 6, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
            prop::collection::vec(
                (
                    prop::sample::select(vec![
                        "type",
                        "properties",
                        "items",
                        "required",
                        "enum",
                        "const",
                        "anyOf",
                        "oneOf",
                        "allOf",
                        "$ref",
                        "$defs",
                        "nullable",
                        "minimum",
                        "maxLength",
                        "additionalProperties",
                        "x",
                        "description",
                    ]),
                    inner
                ),
                0..5
            )
            .prop_map(|pairs| Value::Object(
                pairs.into_iter().map(|(k, v)| (k.to_string(), v)).collect()
            )),
        ]
    })
}

/// Schemas in the dialects found in the wild.
fn wild_schema() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        prop::sample::select(vec![
            "string", "str", "integer", "int", "number", "float", "boolean", "bool", "null"
        ])
        .prop_map(|t| json!({ "type": t })),
        (0u64..600, 0u64..600).prop_map(
            |(a, b)| json!({"type": "string", "minLength": a.min(b), "maxLength": a.max(b)})
        ),
        (-50i64..50, 0i64..100)
            .prop_map(|(lo, span)| json!({"type": "integer", "minimum": lo, "maximum": lo + span})),
        prop::collection::vec("[a-z]{1,5}", 1..4).prop_map(|v| json!({ "enum": v })),
        "[a-z]{1,5}".prop_map(|c| json!({ "const": c })),
        Just(json!({"type": ["string", "null"]})),
        Just(json!({"type": "any"})),
        Just(json!({"type": "number", "nullable": true, "description": "maybe"})),
    ];
    leaf.prop_recursive(4, 48, 5, |inner| {
        prop_oneof![
            (inner.clone(), 0u64..60)
                .prop_map(|(items, max)| json!({"type": "list", "items": items, "maxItems": max})),
            prop::collection::btree_map("[a-zA-Z _/?$é]{1,10}", inner.clone(), 0..5).prop_map(
                |props| {
                    let required: Vec<&String> = props.keys().step_by(2).collect();
                    json!({"type": "object", "properties": props, "required": required})
                }
            ),
            prop::collection::vec(inner.clone(), 1..3)
                .prop_map(|branches| json!({ "anyOf": branches })),
            prop::collection::vec(inner, 1..3).prop_map(|branches| json!({ "oneOf": branches })),
        ]
    })
}

fn top_level(props: Value) -> Value {
    json!({"properties": {"arg": props}})
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn arbitrary_input_never_panics(schema in any_json()) {
        let _ = sanitize(&schema, Limits::default());
    }

    #[test]
    fn canonical_output_is_a_fixed_point(schema in wild_schema()) {
        let first = sanitize(&top_level(schema), Limits::default()).unwrap();
        let json = first.schema.to_json();
        let second = sanitize(&json, Limits::default()).unwrap();
        prop_assert!(second.report.is_empty(), "{:?}", second.report);
        prop_assert_eq!(second.schema.to_json(), json);
    }

    #[test]
    fn renamed_properties_map_back(names in prop::collection::btree_set("[a-zA-Z0-9 _./?$é-]{0,70}", 1..8)) {
        let props: Map<String, Value> = names.iter().map(|n| (n.clone(), json!({"type": "integer"}))).collect();
        let s = sanitize(&json!({"type": "object", "properties": props}), Limits::default()).unwrap();
        let SchemaKind::Object { properties, .. } = &s.schema.kind else { panic!("not an object") };
        let offered: Vec<&String> = properties.iter().map(|p| &p.name).collect();
        let unique: std::collections::BTreeSet<&&String> = offered.iter().collect();
        prop_assert_eq!(unique.len(), names.len());
        for name in &offered {
            prop_assert!(!name.is_empty() && name.len() <= 64);
            prop_assert!(name.chars().all(|c| c.is_ascii_alphanumeric() || "_.-".contains(c)));
        }
        let args: Map<String, Value> = offered.iter().enumerate().map(|(i, n)| ((*n).clone(), json!(i))).collect();
        let restored = s.schema.restore_names(&Value::Object(args));
        let keys: std::collections::BTreeSet<String> = restored.as_object().unwrap().keys().cloned().collect();
        prop_assert_eq!(keys, names);
    }
}
