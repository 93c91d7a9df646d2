//! New tool-call arguments: strict parsing, narrow coercion, names mapped back, and
//! validation errors that name the parameter, the expected type and the value.

use rein_schema::{sanitize, ArgumentError, ArgumentValidator, Limits};
use serde_json::json;

fn validator(schema: serde_json::Value) -> ArgumentValidator {
    let (v, degraded) = ArgumentValidator::new(&sanitize(&schema, Limits::default()).unwrap());
    assert!(!degraded);
    v
}

#[test]
fn valid_arguments_come_back_with_the_tools_names_and_coerced_values() {
    let v = validator(json!({
        "type": "object",
        "properties": {
            "file path": {"type": "str"},
            "count": {"type": "int", "minimum": 1},
            "tags": {"type": "list", "items": {"type": "string"}},
            "dry": {"type": "bool"}
        },
        "required": ["file path"]
    }));
    let out = v
        .check(r#"{"file_path": "a.txt", "count": "3", "tags": "x", "dry": "false"}"#)
        .unwrap();
    assert_eq!(
        out,
        json!({"file path": "a.txt", "count": 3, "tags": ["x"], "dry": false})
    );
}

#[test]
fn errors_name_the_parameter_the_type_and_the_value() {
    let v = validator(json!({
        "type": "object",
        "properties": {"days": {"type": "integer", "maximum": 7}, "unit": {"enum": ["c", "f"]}},
        "required": ["days"]
    }));
    let err = v.check(r#"{"days": "4.5"}"#).unwrap_err();
    assert_eq!(
        err,
        ArgumentError::Invalid {
            parameter: "days".into(),
            message: r#""4.5" is not of type "integer""#.into()
        }
    );
    let err = v.check(r#"{"days": 9}"#).unwrap_err();
    assert!(
        matches!(&err, ArgumentError::Invalid { parameter, message } if parameter == "days" && message.contains("maximum of 7")),
        "{err}"
    );
    let err = v.check(r#"{"days": 1, "unit": "k"}"#).unwrap_err();
    assert!(
        matches!(&err, ArgumentError::Invalid { parameter, .. } if parameter == "unit"),
        "{err}"
    );
    let err = v.check(r#"{"unit": "c"}"#).unwrap_err();
    assert!(
        err.to_string().contains("\"days\" is a required property"),
        "{err}"
    );
    assert!(matches!(
        v.check("{\"days\": 1,}"),
        Err(ArgumentError::NotJson(_))
    ));
    assert!(matches!(v.check("[1]"), Err(ArgumentError::NotAnObject(_))));
    assert!(matches!(
        v.check("```json\n{}\n```"),
        Err(ArgumentError::NotJson(_))
    ));
}

#[test]
fn constraints_the_grammar_drops_are_still_validated() {
    let v = validator(json!({
        "type": "object",
        "properties": {"email": {"type": "string", "pattern": "^[^@]+@[^@]+$"}, "n": {"type": "integer", "multipleOf": 5}}
    }));
    assert!(v.check(r#"{"email": "a@b", "n": 10}"#).is_ok());
    assert!(
        matches!(v.check(r#"{"email": "nope"}"#), Err(ArgumentError::Invalid { parameter, .. }) if parameter == "email")
    );
    assert!(
        matches!(v.check(r#"{"n": 7}"#), Err(ArgumentError::Invalid { parameter, .. }) if parameter == "n")
    );
}

#[test]
fn nested_parameters_are_named_by_path() {
    let v = validator(json!({
        "type": "object",
        "properties": {"opts": {"type": "object", "properties": {"limit": {"type": "integer"}}}}
    }));
    let err = v.check(r#"{"opts": {"limit": "many"}}"#).unwrap_err();
    assert!(
        matches!(&err, ArgumentError::Invalid { parameter, .. } if parameter == "opts/limit"),
        "{err}"
    );
}
