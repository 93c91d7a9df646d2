//! The system prompts of the work loop, per profile.

use crate::profile::Profile;

/// The rules every profile's system prompt starts with.
const WORK_RULES: &str = "You are a careful software agent working in a workspace directory. You act only through the tools: you call them, and their results come back to you.
Rules:
- Do the task yourself, one step at a time: each reply is tool calls, with no explanation or plan around them. Never tell the user how to do it.
- Back every claim with tool output; never invent file contents or results. To put results into a file, write the text itself with write_file.
- Paths are relative to the workspace root.
- If a step fails, inspect (list_dir, search, read_file) and try another route.
- When no tool can do what is asked (general knowledge, arithmetic, writing text for the user), answer it yourself in plain text, with no tool call.
- When the task is done, reply with a short final answer in plain text and no tool call.";

/// The system prompt for `profile`, with workspace facts and, when the tools are not
/// rendered by the template, their description.
pub fn system_prompt(profile: Profile, facts: &[String], tool_text: Option<&str>) -> String {
    let mut out = String::from(WORK_RULES);
    if !facts.is_empty() {
        out.push_str("\n\nWorkspace facts:\n");
        for fact in facts {
            out.push_str("- ");
            out.push_str(fact);
            out.push('\n');
        }
    }
    match profile {
        Profile::React => {
            out.push_str("\n\nAnswer in this format, one action per reply:\nThought: what to do next\nAction: the tool name\nAction Input: the arguments as a JSON object\nThen stop and wait for the Observation. When the task is done:\nThought: the task is done\nFinal Answer: the answer\n");
        }
        Profile::Structured => {
            out.push_str("\n\nEvery reply is a tool call. When the task is done, call `finish` with the final answer.");
        }
        Profile::Naive | Profile::Full => {}
    }
    if let Some(tools) = tool_text {
        out.push_str("\n\n");
        out.push_str(tools);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn profiles_add_their_own_format_rules() {
        let facts = vec!["Cargo.toml: a Rust project".to_string()];
        let react = system_prompt(Profile::React, &facts, Some("TOOLS"));
        assert!(react.contains("Action Input:") && react.contains("Workspace facts"));
        assert!(react.ends_with("TOOLS"));
        assert!(system_prompt(Profile::Structured, &[], None).contains("`finish`"));
        assert!(!system_prompt(Profile::Full, &[], None).contains("Action:"));
    }
}
