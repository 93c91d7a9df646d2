//! The numbered steps a task lists, each taken by a tool whose name its words spell
//! ("3. Get the CI status of that commit sha." — `get_ci_status`): an answer while a
//! step's tool has not run with success is held once (`full`). The 1.5B model got the
//! branch, answered with its latest commit, and never asked for the CI status the
//! task was about.

use crate::execute::Memory;

/// The built-in tools a step's words may spell; another built-in may take such a
/// step (a read by `search`, an edit by `write_file`), so they are not judged.
const BUILT_IN: [&str; 4] = ["read_file", "write_file", "edit_file", "list_dir"];

/// A step of the task that no successful call has taken.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct UntakenStep {
    /// Its number, as the task writes it.
    pub number: String,
    /// Its text.
    pub text: String,
    /// The tool whose name its words spell.
    pub tool: String,
}

/// The first numbered step of `task` whose one tool among `tools` (not a built-in)
/// has not run with success (a step no single tool spells is skipped).
pub(crate) fn untaken_step(task: &str, tools: &[String], memory: &Memory) -> Option<UntakenStep> {
    for (number, text) in numbered_steps(task) {
        let words = crate::empty_answer::words(text);
        let spelled: Vec<&String> = tools
            .iter()
            .filter(|tool| !BUILT_IN.contains(&tool.as_str()) && spells(tool, &words))
            .collect();
        let [tool] = spelled.as_slice() else {
            continue;
        };
        let prefix = format!("{tool}\u{0}");
        if !memory
            .succeeded_calls
            .keys()
            .any(|key| key.starts_with(&prefix))
        {
            return Some(UntakenStep {
                number: number.to_string(),
                text: text.to_string(),
                tool: tool.to_string(),
            });
        }
    }
    None
}

/// The task's lines that open with a number and `.` or `)`: (number, text).
fn numbered_steps(task: &str) -> Vec<(&str, &str)> {
    task.lines()
        .filter_map(|line| {
            let (number, rest) = numbered_item(line.trim())?;
            let text = rest.trim();
            (!text.is_empty()).then_some((number, text))
        })
        .collect()
}

/// A line that opens with a number and `.` or `)` (`3. Get …`, `2) …`): the number,
/// and the rest of the line after the marker, as it is.
pub(crate) fn numbered_item(line: &str) -> Option<(&str, &str)> {
    let digits = line.find(|c: char| !c.is_ascii_digit())?;
    let (number, rest) = line.split_at(digits);
    let rest = rest.strip_prefix(['.', ')'])?;
    (!number.is_empty()).then_some((number, rest))
}

/// Words after a step's verb within which the rest of a tool's name must come.
const OBJECT_WORDS: usize = 5;

/// Whether `tool`'s name (`get_ci_status`) spells the opening of the step: its first
/// part is the step's first word (the verb), and its other parts follow in order
/// within the next [`OBJECT_WORDS`] words ("Get the CI status of …"; a plural `s`
/// allowed), the name having two parts or more. "Get the repository to find its
/// default branch" spells `get_repository`, not `get_branch`.
fn spells(tool: &str, words: &[String]) -> bool {
    let parts: Vec<String> = tool
        .split('_')
        .filter(|part| !part.is_empty())
        .map(str::to_lowercase)
        .collect();
    let [verb, object @ ..] = parts.as_slice() else {
        return false;
    };
    if object.is_empty() || words.first() != Some(verb) {
        return false;
    }
    let mut after = words.iter().skip(1).take(OBJECT_WORDS);
    object
        .iter()
        .all(|part| after.any(|word| word == part || word.strip_suffix('s') == Some(part.as_str())))
}

#[cfg(test)]
mod tests {
    use super::*;

    const TASK: &str = "For the repository acme/ledger:\n1. Get the repository to find its default branch.\n2. Get that branch to find the sha of its latest commit.\n3. Get the CI status of that commit sha.\nThen tell me which CI check failed.";

    fn tools() -> Vec<String> {
        ["get_repository", "get_branch", "get_ci_status", "read_file"]
            .map(String::from)
            .to_vec()
    }

    fn ran(tools: &[&str]) -> Memory {
        let mut memory = Memory::default();
        for tool in tools {
            memory
                .succeeded_calls
                .insert(format!("{tool}\u{0}{{}}"), (String::new(), 0));
        }
        memory
    }

    #[test]
    fn the_first_step_whose_tool_has_not_run_is_found() {
        let step = untaken_step(TASK, &tools(), &ran(&["get_repository", "get_branch"])).unwrap();
        assert_eq!(step.number, "3");
        assert_eq!(step.tool, "get_ci_status");
        assert_eq!(step.text, "Get the CI status of that commit sha.");
        let first = untaken_step(TASK, &tools(), &ran(&[])).unwrap();
        assert_eq!(first.tool, "get_repository");
        let all = ran(&["get_repository", "get_branch", "get_ci_status"]);
        assert_eq!(untaken_step(TASK, &tools(), &all), None);
    }

    #[test]
    fn steps_no_single_tool_spells_and_tasks_without_steps_give_nothing() {
        assert_eq!(
            untaken_step("Get the CI status.", &tools(), &ran(&[])),
            None
        );
        // A built-in's step may be taken by another built-in.
        let read = "1. Read the file app.py.\n2. Edit the file to fix the bug.";
        let builtins = ["read_file".to_string(), "edit_file".to_string()];
        assert_eq!(untaken_step(read, &builtins, &ran(&[])), None);
        let vague = "1. Look around.\n2. Tell me what you see.";
        assert_eq!(untaken_step(vague, &tools(), &ran(&[])), None);
        // A plural spells its singular: "List that user's orders" — `list_orders`.
        let orders = "1. List that user's orders.";
        let step = untaken_step(orders, &["list_orders".to_string()], &ran(&[])).unwrap();
        assert_eq!(step.tool, "list_orders");
    }
}
