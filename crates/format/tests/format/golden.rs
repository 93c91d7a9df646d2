//! The Qwen2.5 and SmolLM2 chat templates render exactly as the reference Python
//! Jinja2 rendering does (goldens from `scripts/render_golden_templates.py`).

use std::path::PathBuf;

use rein_format::{ChatTemplate, RenderContext};
use rein_protocol::Message;
use serde::Deserialize;

#[derive(Deserialize)]
struct Spec {
    tools: Vec<serde_json::Value>,
    cases: Vec<Case>,
}

#[derive(Deserialize)]
struct Case {
    name: String,
    templates: Vec<String>,
    with_tools: bool,
    add_generation_prompt: bool,
    messages: Vec<Message>,
}

#[derive(Deserialize)]
struct Tokens {
    bos_token: String,
    eos_token: String,
}

fn golden_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests/golden/templates")
}

/// A file of `tests/golden/templates` (templates and their expected renders).
pub fn read(name: &str) -> String {
    std::fs::read_to_string(golden_dir().join(name)).unwrap_or_else(|e| panic!("{name}: {e}"))
}

fn check_template(template_name: &str) -> usize {
    let spec: Spec = serde_json::from_str(&read("cases.json")).unwrap();
    let tokens: Tokens = serde_json::from_str(&read(&format!("{template_name}.json"))).unwrap();
    let template = ChatTemplate::new(&read(&format!("{template_name}.jinja"))).unwrap();
    let mut checked = 0;
    for case in spec
        .cases
        .iter()
        .filter(|c| c.templates.iter().any(|t| t == template_name))
    {
        let rendered = template
            .render(&RenderContext {
                messages: &case.messages,
                tools: case.with_tools.then_some(spec.tools.as_slice()),
                add_generation_prompt: case.add_generation_prompt,
                bos_token: &tokens.bos_token,
                eos_token: &tokens.eos_token,
            })
            .unwrap_or_else(|e| panic!("{template_name}/{}: {e}", case.name));
        let expected = read(&format!("{template_name}__{}.txt", case.name));
        assert_eq!(
            rendered, expected,
            "{template_name}/{} differs from the reference",
            case.name
        );
        checked += 1;
    }
    checked
}

#[test]
fn qwen25_renders_like_the_reference_with_and_without_tools() {
    assert_eq!(check_template("qwen2.5"), 4);
}

#[test]
fn smollm2_renders_like_the_reference_with_and_without_tools() {
    assert_eq!(check_template("smollm2"), 3);
}
