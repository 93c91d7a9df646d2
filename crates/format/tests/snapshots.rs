//! Snapshots (insta) of what the model sees and what constrains it: the tool prompt
//! rendered by the Qwen2.5 template, the emulated prompt for SmolLM2, and the call
//! grammars for each tool choice.

use std::path::PathBuf;

use rein_format::{hermes, ChatTemplate, Family, RenderContext, ToolChoice, ToolSet};
use rein_protocol::{Message, ToolSpec};
use serde_json::json;

fn golden(name: &str) -> String {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/golden/templates")
        .join(name);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

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

#[test]
fn qwen_tool_prompt() {
    let template = ChatTemplate::new(&golden("qwen2.5.jinja")).unwrap();
    let definitions = tools().definitions();
    let prompt = template
        .render(&RenderContext {
            messages: &[Message::user("Find TODOs in src.")],
            tools: Some(&definitions),
            add_generation_prompt: true,
            bos_token: "<|endoftext|>",
            eos_token: "<|im_end|>",
        })
        .unwrap();
    insta::assert_snapshot!(prompt);
}

#[test]
fn smollm2_emulated_tool_prompt() {
    let template = ChatTemplate::new(&golden("smollm2.jinja")).unwrap();
    let system = hermes::emulated_instructions(&tools().definitions());
    let prompt = template
        .render(&RenderContext {
            messages: &[Message::system(system), Message::user("Find TODOs in src.")],
            tools: None,
            add_generation_prompt: true,
            bos_token: "<|im_start|>",
            eos_token: "<|im_end|>",
        })
        .unwrap();
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
