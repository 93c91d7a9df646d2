//! How tools are prepared and described to a model that is taught them: one-line
//! signatures generated from the schemas, or the JSON specs one per line; a tool with
//! empty `properties` takes no parameters.

use rein_format::{DescriptionStyle, ToolSet};
use rein_tools::Registry;

fn builtin() -> ToolSet {
    ToolSet::prepare(&Registry::builtin().specs()).unwrap()
}

#[test]
fn signatures_are_generated_from_the_schemas() {
    let signatures = builtin().signatures();
    let lines: Vec<&str> = signatures.lines().collect();
    assert_eq!(lines.len(), 8);
    assert_eq!(
        lines[0],
        "read_file(path: string, offset?: integer, limit?: integer, char_offset?: integer) - Read a text file; each line is shown with its number."
    );
    assert!(lines[3].starts_with("search(pattern: string, path?: string, glob?: string, mode?: \"content\"|\"files\") - "), "{}", lines[3]);
    assert!(
        lines[5].starts_with("shell(command: string, timeout_s?: integer) - "),
        "{}",
        lines[5]
    );
    assert!(
        lines[6].starts_with("query_data(path: string, where?: ")
            && lines[6]
                .contains("op: \"count\"|\"sum\"|\"min\"|\"max\"|\"first\"|\"last\"|\"list\""),
        "{}",
        lines[6]
    );
    assert!(
        lines[7].starts_with(
            "replace_in_files(old: string, new: string, path?: string, whole_word?: boolean) - "
        ),
        "{}",
        lines[7]
    );
}

#[test]
fn descriptions_come_in_two_styles() {
    let tools = builtin();
    assert_eq!(
        tools.describe(DescriptionStyle::Compact),
        tools.signatures()
    );
    let full = tools.describe(DescriptionStyle::Full);
    let specs: Vec<rein_protocol::ToolSpec> = full
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect();
    assert_eq!(specs, Registry::builtin().specs());
}

#[test]
fn empty_properties_mean_no_parameters_and_a_free_form_object_stays_open() {
    let specs: Vec<rein_protocol::ToolSpec> = serde_json::from_value(serde_json::json!([
        {"type": "function", "function": {"name": "now", "description": "d",
         "parameters": {"type": "object", "properties": {}}}},
        {"type": "function", "function": {"name": "configure", "description": "d",
         "parameters": {"type": "object"}}}
    ]))
    .unwrap();
    let set = rein_format::ToolSet::prepare(&specs).unwrap();
    let now = &set.get("now").unwrap().validator;
    assert!(now.check("{}").is_ok());
    assert!(now.check(r#"{"type": "object"}"#).is_err());
    let grammar = rein_format::Family::Hermes
        .call_grammar(&set, &rein_format::ToolChoice::Named("now".into()), false)
        .unwrap();
    assert!(!grammar.gbnf.contains("json-value"), "{}", grammar.gbnf);
    let configure = &set.get("configure").unwrap().validator;
    assert!(configure.check(r#"{"type": "object", "depth": 2}"#).is_ok());
}
