//! A shell command that is the name of one of the run's own tools (`read_file
//! README.md`): the 0.5B model wrote such commands again and again in `traps`, and
//! each came back "read_file: not found" with exit code 127, which names no next
//! move. Under `full` the command is not run; its result says that the name is a tool
//! and, for the workspace tools that take a path, shows the call to make.

use serde_json::json;

use crate::tool_names::{LIST_TOOL, READ_TOOL, SHELL_TOOL};
use crate::validate::ReadyCall;

/// The result given instead of running `call`, when it is a shell command whose first
/// word is one of `tools`; `call_text` writes a call in the model's format.
pub(crate) fn tool_as_command_note(
    call: &ReadyCall,
    tools: &[String],
    call_text: impl Fn(&str, &serde_json::Value) -> String,
) -> Option<String> {
    if call.name != SHELL_TOOL {
        return None;
    }
    let command = call.arguments.get("command")?.as_str()?.trim();
    let mut words = command.split_whitespace();
    let tool = words.next()?;
    if tool == SHELL_TOOL || !tools.iter().any(|t| t == tool) {
        return None;
    }
    let path = words.next().map(|p| p.trim_matches(['"', '\'']));
    let example = match (tool, path) {
        (READ_TOOL | LIST_TOOL, Some(path)) => {
            format!(" like this:\n{}", call_text(tool, &json!({ "path": path })))
        }
        (LIST_TOOL, None) => format!(" like this:\n{}", call_text(tool, &json!({ "path": "." }))),
        _ => ", with its arguments.".to_string(),
    };
    Some(format!(
        "Not run: `{tool}` is one of your tools, not a shell command (the shell would answer \"{tool}: not found\"). Call the tool itself{example}"
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shell(command: &str) -> ReadyCall {
        ReadyCall {
            id: "call_1".into(),
            name: SHELL_TOOL.into(),
            arguments: json!({ "command": command, "timeout_s": 10 }),
        }
    }

    fn tools() -> Vec<String> {
        ["read_file", "list_dir", "search", "shell"]
            .map(String::from)
            .to_vec()
    }

    fn text(name: &str, arguments: &serde_json::Value) -> String {
        format!("<tool_call>{{\"name\": \"{name}\", \"arguments\": {arguments}}}</tool_call>")
    }

    #[test]
    fn a_tool_name_as_a_command_gets_the_call_to_make() {
        let note = tool_as_command_note(&shell("read_file README.md"), &tools(), text).unwrap();
        assert!(note.contains("`read_file` is one of your tools"), "{note}");
        assert!(
            note.contains(r#"{"name": "read_file", "arguments": {"path":"README.md"}}"#),
            "{note}"
        );
        let bare = tool_as_command_note(&shell("read_file"), &tools(), text).unwrap();
        assert!(bare.ends_with("with its arguments."), "{bare}");
        let list = tool_as_command_note(&shell(" list_dir"), &tools(), text).unwrap();
        assert!(list.contains(r#""path":".""#), "{list}");
    }

    #[test]
    fn real_commands_and_other_tools_run() {
        for command in ["cat README.md", "grep -rn search .", "shell ls", ""] {
            assert_eq!(tool_as_command_note(&shell(command), &tools(), text), None);
        }
        let read = ReadyCall {
            id: "call_2".into(),
            name: READ_TOOL.into(),
            arguments: json!({ "path": "search" }),
        };
        assert_eq!(tool_as_command_note(&read, &tools(), text), None);
    }
}
