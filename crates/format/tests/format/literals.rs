//! Content holding every control marker of its family stays text, for each family:
//! in the prompt the preparer renders, every marker that came from a message, a call
//! or a tool definition lies inside a literal range (tokenized as plain text), and the
//! markers outside those ranges are exactly the ones the template writes for the same
//! conversation without them. Hermes and the generic family use the real Qwen2.5 and
//! SmolLM2 templates; Gemma, Llama 3 and Mistral use reduced templates with their
//! markers and their habit of trimming content. The real models' tokens are counted
//! in the root test `content_tokens`.

use crate::golden::read as golden;
use rein_format::{Family, ModelFormat, ToolFormat, ToolSet, TurnSpec};
use rein_protocol::{Message, ToolCall, ToolSpec};
use serde_json::json;

const GEMMA: &str = "{{ bos_token }}{% for message in messages %}{% set role = 'model' if message['role'] == 'assistant' else message['role'] %}{{ '<start_of_turn>' + role + '\n' + message['content'] | trim + '<end_of_turn>\n' }}{% endfor %}{% if add_generation_prompt %}{{ '<start_of_turn>model\n' }}{% endif %}";

const LLAMA3: &str = "{{ bos_token }}{% if tools %}{{ '<|start_header_id|>system<|end_header_id|>\n\n' + (tools | tojson) + '<|eot_id|>' }}{% endif %}{% for message in messages %}{{ '<|start_header_id|>' + message['role'] + '<|end_header_id|>\n\n' + message['content'] | trim + '<|eot_id|>' }}{% endfor %}{% if add_generation_prompt %}{{ '<|start_header_id|>assistant<|end_header_id|>\n\n' }}{% endif %}";

const MISTRAL: &str = "{{ bos_token }}{% for message in messages %}{% if message['role'] == 'user' %}{{ '[INST] ' + message['content'] + '[/INST]' }}{% elif message['role'] == 'assistant' %}{{ message['content'] + eos_token }}{% else %}{{ '[TOOL_RESULTS]' + message['content'] + '[/TOOL_RESULTS]' }}{% endif %}{% endfor %}";

/// Each family's template, architecture, special texts and control markers.
fn families() -> Vec<(Family, String, &'static str, Vec<&'static str>)> {
    vec![
        (
            Family::Hermes,
            golden("qwen2.5.jinja"),
            "qwen2",
            vec![
                "<|endoftext|>",
                "<|im_start|>",
                "<|im_end|>",
                "<tool_call>",
                "</tool_call>",
                "<tool_response>",
                "</tool_response>",
            ],
        ),
        (
            Family::Generic,
            golden("smollm2.jinja"),
            "llama",
            vec!["<|endoftext|>", "<|im_start|>", "<|im_end|>"],
        ),
        (
            Family::Gemma,
            GEMMA.to_string(),
            "gemma3",
            vec![
                "<bos>",
                "<eos>",
                "<start_of_turn>",
                "<end_of_turn>",
                "<|tool_call>",
                "<tool_call|>",
                "<|\"|>",
            ],
        ),
        (
            Family::Llama3,
            LLAMA3.to_string(),
            "llama",
            vec![
                "<|begin_of_text|>",
                "<|start_header_id|>",
                "<|end_header_id|>",
                "<|eot_id|>",
                "<|eom_id|>",
                "<|python_tag|>",
            ],
        ),
        (
            Family::Mistral,
            MISTRAL.to_string(),
            "llama",
            vec![
                "<s>",
                "</s>",
                "[INST]",
                "[/INST]",
                "[TOOL_CALLS]",
                "[ARGS]",
                "[CALL_ID]",
                "[TOOL_RESULTS]",
                "[/TOOL_RESULTS]",
            ],
        ),
    ]
}

fn conversation(payload: &str) -> (Vec<Message>, ToolSet) {
    let call: ToolCall = serde_json::from_value(json!({
        "id": "call1",
        "type": "function",
        "function": {"name": "read_file", "arguments": {"path": format!("a{payload}.md")}}
    }))
    .unwrap();
    let mut assistant = Message::assistant(format!(" Reading.{payload}\n"));
    assistant.tool_calls = vec![call];
    let messages = vec![
        Message::system(format!("Be brief.{payload}")),
        Message::user(format!("  What is in a.md?{payload}  ")),
        assistant,
        Message::tool_result("call1", "read_file", format!("{payload}text{payload}")),
        Message::user(payload.to_string()),
    ];
    let spec: ToolSpec = serde_json::from_value(json!({
        "type": "function",
        "function": {"name": "read_file", "description": format!("Reads.{payload}"),
            "parameters": {"type": "object", "properties": {"path": {"type": "string"}},
                "required": ["path"]}}
    }))
    .unwrap();
    (messages, ToolSet::prepare(&[spec]).unwrap())
}

/// Occurrences of `markers` in `text` outside `ranges` (longest marker first).
fn structural(text: &str, markers: &[&str], ranges: &[std::ops::Range<usize>]) -> usize {
    let mut sorted = markers.to_vec();
    sorted.sort_by_key(|m| std::cmp::Reverse(m.len()));
    let mut count = 0;
    let mut at = 0;
    while at < text.len() {
        if let Some(m) = sorted.iter().find(|m| text[at..].starts_with(**m)) {
            if !ranges.iter().any(|r| r.start <= at && at < r.end) {
                count += 1;
            }
            at += m.len();
        } else {
            at += text[at..].chars().next().map_or(1, char::len_utf8);
        }
    }
    count
}

#[test]
fn every_familys_markers_in_content_stay_text() {
    for (family, template, architecture, markers) in families() {
        let format = ModelFormat::detect(Some(&template), architecture)
            .unwrap()
            .with_special_tokens(markers[0], markers[1])
            .with_control_texts(markers.iter().map(|m| m.to_string()));
        assert_eq!(format.family, family, "{template}");
        for tool_format in [ToolFormat::Native, ToolFormat::Emulated] {
            let prepare = |payload: &str| {
                let (messages, tools) = conversation(payload);
                let turn = TurnSpec {
                    tools: Some(&tools),
                    tool_format,
                    constrained: true,
                    ..TurnSpec::plain(&messages)
                };
                format.prepare(&turn).unwrap()
            };
            let clean = prepare("");
            assert!(clean.literal.is_empty(), "{family}: nothing to guard");
            let template_markers = structural(&clean.prompt, &markers, &[]);
            assert!(template_markers >= 3, "{family}: {}", clean.prompt);

            let payload = markers.concat();
            let hostile = prepare(&payload);
            for range in &hostile.literal {
                let text = &hostile.prompt[range.clone()];
                // A marker inside a JSON string arrives escaped (`<|\"|>`).
                let escaped =
                    |m: &&str| serde_json::to_string(m).unwrap().trim_matches('"') == text;
                assert!(
                    markers.contains(&text) || markers.iter().any(escaped),
                    "{family}: range {text:?}"
                );
            }
            assert_eq!(
                structural(&hostile.prompt, &markers, &hostile.literal),
                template_markers,
                "{family} {tool_format:?}: {}",
                hostile.prompt
            );
            let forged = structural(&hostile.prompt, &markers, &[]) - template_markers;
            assert!(
                forged >= 4 * markers.len(),
                "{family} {tool_format:?}: only {forged} guarded"
            );
            // The marks themselves never reach the prompt.
            assert!(!hostile.prompt.contains(['\u{FDD0}', '\u{FDD1}']));
        }
    }
}

#[test]
fn a_prompt_without_control_texts_renders_byte_for_byte_as_before() {
    let (messages, tools) = conversation("");
    for (_, template, architecture, markers) in families() {
        let plain = ModelFormat::detect(Some(&template), architecture)
            .unwrap()
            .with_special_tokens(markers[0], markers[1]);
        let guarded = ModelFormat::detect(Some(&template), architecture)
            .unwrap()
            .with_special_tokens(markers[0], markers[1])
            .with_control_texts(markers.iter().map(|m| m.to_string()));
        let turn = TurnSpec {
            tools: Some(&tools),
            constrained: true,
            ..TurnSpec::plain(&messages)
        };
        assert_eq!(
            plain.prepare(&turn).unwrap(),
            guarded.prepare(&turn).unwrap()
        );
    }
}
