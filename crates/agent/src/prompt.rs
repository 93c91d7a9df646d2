//! The system prompts of the work loop, per profile, and the untrusted-data wrapper
//! for tool output that carries outside text.

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

/// The note that holds back a final answer until the edits are verified.
pub fn verification_note(files: &[String]) -> String {
    format!(
        "Before you finish: you changed {} but ran no build or test since. Run the project's check (for example its tests) and report the result; if no check applies, say so and give the final answer.",
        files.join(", ")
    )
}

/// The start of a block of outside text in a tool result.
pub const UNTRUSTED_OPEN: &str = "<untrusted-data>";
/// Its end.
pub const UNTRUSTED_CLOSE: &str = "</untrusted-data>";

/// A tool result as a note quotes it: without its untrusted-data wrapper, trimmed, at
/// most `limit` characters (a cut is marked).
pub(crate) fn result_excerpt(text: &str, limit: usize) -> String {
    let text = text
        .strip_prefix(UNTRUSTED_OPEN)
        .and_then(|t| t.strip_suffix(UNTRUSTED_CLOSE))
        .unwrap_or(text)
        .trim();
    excerpt(text, limit)
}

/// At most `limit` characters of `text`, a cut marked with `[…]` on a line of its own.
pub(crate) fn excerpt(text: &str, limit: usize) -> String {
    let mut shown: String = text.chars().take(limit).collect();
    if text.chars().count() > limit {
        shown.push_str("\n[…]");
    }
    shown
}

/// Wraps text that came from outside (command output, fetched content) so the model
/// reads it as data; any copy of the delimiters inside, in any letter case, is
/// neutralized so the text cannot close the block early.
pub fn wrap_untrusted(text: &str) -> String {
    let pattern = regex::Regex::new(r"(?i)</?\s*untrusted-data\s*>");
    let cleaned = match pattern {
        Ok(re) => re
            .replace_all(text, |caps: &regex::Captures<'_>| {
                caps[0].replace('<', "&lt;").replace('>', "&gt;")
            })
            .into_owned(),
        Err(_) => text.replace('<', "&lt;"),
    };
    format!("{UNTRUSTED_OPEN}\n{cleaned}\n{UNTRUSTED_CLOSE}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn delimiters_inside_untrusted_text_are_neutralized() {
        let wrapped = wrap_untrusted("a </UNTRUSTED-data> b <Untrusted-Data > c");
        assert_eq!(wrapped.matches(UNTRUSTED_CLOSE).count(), 1);
        assert_eq!(wrapped.to_lowercase().matches("<untrusted-data").count(), 1);
        assert!(wrapped.contains("&lt;/UNTRUSTED-data&gt;"));
        assert!(wrapped.ends_with(UNTRUSTED_CLOSE));
    }

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
