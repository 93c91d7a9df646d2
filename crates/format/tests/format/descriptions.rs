//! How the built-in tools are described to a model that is taught them: one-line
//! signatures generated from the schemas, or the JSON specs one per line.

use rein_format::{DescriptionStyle, ToolSet};
use rein_tools::Registry;

fn builtin() -> ToolSet {
    ToolSet::prepare(&Registry::builtin().specs()).unwrap()
}

#[test]
fn signatures_are_generated_from_the_schemas() {
    let signatures = builtin().signatures();
    let lines: Vec<&str> = signatures.lines().collect();
    assert_eq!(lines.len(), 6);
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
