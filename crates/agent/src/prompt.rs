//! The system prompts of the work loop, per profile, and the opening request that
//! puts the workspace facts before the task.

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

/// How the opening request introduces the workspace facts.
const FACTS_HEADER: &str = "Workspace facts:\n";

/// The system prompt for `profile` and, when the tools are not rendered by the
/// template, their description. It holds nothing of the workspace or the task, so
/// every run of one model, profile and tool set starts with the same tokens and
/// shares one cached prefix (the facts go into the opening request).
pub fn system_prompt(profile: Profile, tool_text: Option<&str>) -> String {
    let mut out = String::from(WORK_RULES);
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

/// The run's first user message: the workspace facts (one line each; a line break in
/// a fact, such as one in a file name, is shown as a space), then the task.
pub fn opening_request(facts: &[String], task: &str) -> String {
    if facts.is_empty() {
        return task.to_string();
    }
    let mut out = String::from(FACTS_HEADER);
    for fact in facts {
        out.push_str("- ");
        out.push_str(&fact.replace(['\n', '\r'], " "));
        out.push('\n');
    }
    out.push('\n');
    out.push_str(task);
    out
}

/// The task of an opening request written by [`opening_request`] (the whole text
/// when it holds no facts).
pub fn task_in(opening: &str) -> &str {
    let Some(facts) = opening.strip_prefix(FACTS_HEADER) else {
        return opening;
    };
    let mut rest = facts;
    while let Some(line_end) = rest.strip_prefix("- ").and_then(|line| line.find('\n')) {
        rest = &rest[2 + line_end + 1..];
    }
    rest.strip_prefix('\n').unwrap_or(opening)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn profiles_add_their_own_format_rules() {
        let react = system_prompt(Profile::React, Some("TOOLS"));
        assert!(react.contains("Action Input:"));
        assert!(react.ends_with("TOOLS"));
        assert!(system_prompt(Profile::Structured, None).contains("`finish`"));
        assert!(!system_prompt(Profile::Full, None).contains("Action:"));
    }

    #[test]
    fn the_opening_request_holds_the_facts_and_gives_back_the_task() {
        let facts = vec![
            "Cargo.toml: a Rust project".to_string(),
            "files: a\n\nb.rs, c.md".to_string(),
        ];
        let task = "- Find every TODO\n\nand list them.";
        let opening = opening_request(&facts, task);
        assert!(opening.starts_with("Workspace facts:\n- Cargo.toml: a Rust project\n"));
        assert!(opening.contains("- files: a  b.rs, c.md\n"));
        assert!(opening.ends_with(task));
        assert_eq!(task_in(&opening), task);
        assert_eq!(opening_request(&[], task), task);
        assert_eq!(task_in(task), task);
        // A task that only looks like a facts block is kept whole.
        let lookalike = "Workspace facts:\n- one\nno blank line after";
        assert_eq!(task_in(lookalike), lookalike);
    }
}
