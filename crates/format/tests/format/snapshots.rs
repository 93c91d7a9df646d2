//! Snapshots (insta) of what the model sees and what constrains it: the tool prompt
//! rendered by the Qwen2.5 template, the emulated prompt for SmolLM2, and the call
//! grammars for each tool choice.

use crate::golden::read as golden;
use rein_format::{hermes, Family, ModelFormat, ToolChoice, ToolSet, TurnSpec};
use rein_protocol::{Message, ToolSpec};
use serde_json::json;

/// Tools in the wild: a Python type name, a nullable, an illegal property name, a ref.
fn tools() -> ToolSet {
    let specs: Vec<ToolSpec> = serde_json::from_value(json!([
        {"type": "function", "function": {"name": "read_file", "description": "Read a text file",
            "parameters": {"type": "object", "properties": {
                "file path": {"type": "str"},
                "offset": {"type": "int", "minimum": 0},
                "limit": {"type": ["integer", "null"], "maximum": 2000}
            }, "required": ["file path"]}}},
        {"type": "function", "function": {"name": "search", "description": "Search the workspace",
            "parameters": {"type": "object", "$defs": {"Mode": {"enum": ["literal", "regex"]}},
                "properties": {"pattern": {"type": "string", "maxLength": 200}, "mode": {"$ref": "#/$defs/Mode"},
                    "globs": {"type": "array", "items": {"type": "string"}, "maxItems": 4}},
                "required": ["pattern"]}}}
    ]))
    .unwrap();
    ToolSet::prepare(&specs).unwrap()
}

/// The prompt the one preparer writes for `template` with the tools offered.
fn tool_prompt(template: &str, architecture: &str, bos: &str, eos: &str) -> String {
    let format = ModelFormat::detect(Some(&golden(template)), architecture)
        .unwrap()
        .with_special_tokens(bos, eos);
    let tools = tools();
    let messages = [Message::user("Find TODOs in src.")];
    let turn = TurnSpec {
        tools: Some(&tools),
        constrained: true,
        ..TurnSpec::plain(&messages)
    };
    format.prepare(&turn).unwrap().prompt
}

#[test]
fn qwen_tool_prompt() {
    let prompt = tool_prompt("qwen2.5.jinja", "qwen2", "<|endoftext|>", "<|im_end|>");
    insta::assert_snapshot!(prompt);
}

#[test]
fn smollm2_emulated_tool_prompt() {
    // SmolLM2's template cannot render tools: they are taught in a system message.
    let prompt = tool_prompt("smollm2.jinja", "llama", "<|im_start|>", "<|im_end|>");
    insta::assert_snapshot!(prompt);
}

#[test]
fn call_grammars() {
    let set = tools();
    for (name, choice, parallel) in [
        ("required_parallel", ToolChoice::Required, true),
        ("named_single", ToolChoice::Named("read_file".into()), false),
        ("auto", ToolChoice::Auto, true),
    ] {
        let grammar = hermes::call_grammar(&set, &choice, parallel).unwrap();
        insta::assert_snapshot!(
            format!("grammar_{name}"),
            format!("triggers: {:?}\n{}", grammar.lazy_triggers, grammar.gbnf)
        );
    }
}

#[test]
fn family_call_grammars_and_emulated_instructions() {
    let set = tools();
    for family in [Family::Llama3, Family::Mistral, Family::Gemma] {
        for (name, choice, parallel) in [
            ("required_parallel", ToolChoice::Required, true),
            ("named_single", ToolChoice::Named("read_file".into()), false),
            ("auto", ToolChoice::Auto, true),
        ] {
            let grammar = family.call_grammar(&set, &choice, parallel).unwrap();
            insta::assert_snapshot!(
                format!("{family}_grammar_{name}"),
                format!("triggers: {:?}\n{}", grammar.lazy_triggers, grammar.gbnf)
            );
        }
        insta::assert_snapshot!(
            format!("{family}_emulated_instructions"),
            family.emulated_instructions(&set.definitions())
        );
    }
}
