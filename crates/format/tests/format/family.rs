//! The family registry: detection from real and representative chat templates, and
//! each family's emulated history read back by its own parser.

use crate::golden::read as golden;
use rein_format::{Family, REGISTRY};
use rein_protocol::Message;
use serde_json::json;

const LLAMA3: &str = "{{- bos_token }}{%- if tools is not none %}{{- '<|start_header_id|>system<|end_header_id|>\\n\\n' }}{%- endif %}{{- '<|python_tag|>' }}";
const MISTRAL_V3: &str =
    "{%- for m in messages %}{{- '[INST] ' + m.content + '[/INST]' }}{%- endfor %}";
const MISTRAL_TOOLS: &str =
    "{%- if tools %}[AVAILABLE_TOOLS]{{ tools|tojson }}[/AVAILABLE_TOOLS]{%- endif %}[TOOL_CALLS]";
const GEMMA4: &str = "{%- if tools %}<|turn>system\n{%- endif %}<|tool_call>call:";

#[test]
fn detection_follows_the_registry_order() {
    assert_eq!(
        REGISTRY,
        [
            Family::Gemma,
            Family::Mistral,
            Family::Llama3,
            Family::Hermes,
            Family::Generic
        ]
    );
    // The real templates: Qwen2.5 renders tools in Hermes form; SmolLM2 (architecture
    // `llama`) has no tool support.
    assert_eq!(
        Family::detect(&golden("qwen2.5.jinja"), "qwen2"),
        Family::Hermes
    );
    assert_eq!(
        Family::detect(&golden("smollm2.jinja"), "llama"),
        Family::Generic
    );
    assert_eq!(Family::detect(LLAMA3, "llama"), Family::Llama3);
    assert_eq!(Family::detect(MISTRAL_V3, "llama"), Family::Mistral);
    assert_eq!(Family::detect(MISTRAL_TOOLS, "llama"), Family::Mistral);
    assert_eq!(Family::detect(GEMMA4, "gemma4"), Family::Gemma);
    assert_eq!(Family::detect("{{ messages }}", "gemma3"), Family::Gemma);
    // A Llama 3 header template without tools is not the Llama 3 tool family.
    assert_eq!(
        Family::detect("<|start_header_id|>{{ m.content }}", "llama"),
        Family::Generic
    );
    for family in REGISTRY {
        assert_eq!(family.as_str().parse::<Family>(), Ok(family));
    }
    assert!("qwen".parse::<Family>().is_err());
}

#[test]
fn emulated_history_reads_back_in_every_family() {
    let messages: Vec<Message> = serde_json::from_value(json!([
        {"role": "user", "content": "go"},
        {"role": "assistant", "content": "Looking.", "tool_calls": [
            {"type": "function", "function": {"name": "read_file", "arguments": {"path": "a.txt"}}},
            {"type": "function", "function": {"name": "list_dir", "arguments": {}}}
        ]},
        {"role": "tool", "content": "one", "name": "read_file"},
        {"role": "tool", "content": "two", "name": "list_dir"}
    ]))
    .unwrap();
    for family in REGISTRY {
        let out = family.emulate_history(&messages);
        assert_eq!(out.len(), 3, "{family}");
        assert!(out[1].tool_calls.is_empty(), "{family}");
        let text = out[1].content.as_deref().unwrap();
        let parsed = family.parse_reply(text).unwrap();
        assert_eq!(
            parsed.content.as_deref(),
            Some("Looking."),
            "{family}: {text}"
        );
        let calls: Vec<_> = parsed
            .calls
            .iter()
            .map(|c| (c.name.as_str(), c.arguments.clone()))
            .collect();
        assert_eq!(
            calls,
            vec![
                ("read_file", json!({"path": "a.txt"})),
                ("list_dir", json!({}))
            ],
            "{family}: {text}"
        );
        assert_eq!(
            out[2].content.as_deref(),
            Some("<tool_response>\none\n</tool_response>\n<tool_response>\ntwo\n</tool_response>")
        );
    }
}
