//! Files a tool result names that no call has read yet (`conf/prod/limits.toml` in a
//! config file): offered when the model reads the same file again instead of going on
//! to the one it points to.

use rein_tools::Workspace;
use serde_json::Value;

use rein_protocol::{Message, Role};

use crate::memory::Memory;
use crate::validate::ReadyCall;

/// The most file names a repeat's note offers.
const NAMED_PATHS: usize = 5;

/// Files of the workspace that `result` names (`conf/prod/limits.toml` in a config
/// file) and that no successful call has read yet: where a model that reads the same
/// file again was most likely meant to go next.
pub(crate) fn unopened_paths(
    result: &str,
    call: &ReadyCall,
    workspace: &Workspace,
    memory: &Memory,
) -> Vec<String> {
    let own = call.arguments.get("path").and_then(Value::as_str);
    let mut found = unopened(result, own, None, workspace, memory);
    // A listing names its entries by their bare names, inside the listed directory.
    if call.name == crate::tool_names::LIST_TOOL {
        let base = own.unwrap_or(".").trim_end_matches('/');
        for path in unopened(result, own, Some(base), workspace, memory) {
            if found.len() < NAMED_PATHS && !found.contains(&path) {
                found.push(path);
            }
        }
    }
    found
}

/// The files `result` names that exist in `workspace`, are not `own` and that no
/// successful call has taken as an argument; with `base`, the names are of entries
/// inside that directory (a listing's).
fn unopened(
    result: &str,
    own: Option<&str>,
    base: Option<&str>,
    workspace: &Workspace,
    memory: &Memory,
) -> Vec<String> {
    let mut found: Vec<String> = Vec::new();
    for token in result.split(|c: char| !(c.is_alphanumeric() || "_./-".contains(c))) {
        let token = token.trim_matches('.');
        let shaped = match base {
            Some(_) => token.len() >= 2 && !token.starts_with('/'),
            None => token.len() >= 3 && token.contains(['/', '.']),
        };
        if found.len() == NAMED_PATHS || !shaped {
            continue;
        }
        let joined = match base {
            Some(".") | None => token.to_string(),
            Some(base) => format!("{base}/{token}"),
        };
        let token = joined.as_str();
        let is_file = workspace.resolve(token).is_ok_and(|path| path.is_file());
        if is_file
            && Some(token) != own
            && !taken_as_argument(memory, token)
            && !found.iter().any(|f| f == token)
        {
            found.push(token.to_string());
        }
    }
    found
}

/// Whether a successful call of the run took `path` as an argument value.
fn taken_as_argument(memory: &Memory, path: &str) -> bool {
    let quoted = format!("\"{path}\"");
    memory
        .succeeded_calls
        .keys()
        .any(|key| key.contains(&quoted))
}

/// The line a repeat's note ends with, naming `paths`; empty when there are none.
pub(crate) fn unopened_note(paths: &[String]) -> String {
    if paths.is_empty() {
        return String::new();
    }
    format!(
        "\nFiles this result names that you have not read: {}. If the task needs one of them, read it next.",
        crate::guards::backticked_list(paths)
    )
}

/// The unread file of the workspace that `text` means by a bare name (`limits.toml`
/// in a plan to read it, for the `conf/prod/limits.toml` a result named): the latest
/// result that names such a file decides; when none does, the one unread workspace
/// file the text puts in backticks (`VERSION`).
pub(crate) fn meant_file(
    text: &str,
    history: &[Message],
    workspace: &Workspace,
    memory: &Memory,
) -> Option<String> {
    let names: Vec<&str> = text
        .split(|c: char| !(c.is_alphanumeric() || "_./-".contains(c)))
        .map(|t| t.trim_matches('.'))
        .filter(|t| {
            t.rsplit_once('.').is_some_and(|(stem, ext)| {
                !stem.is_empty()
                    && (1..=8).contains(&ext.len())
                    && ext.chars().all(|c| c.is_ascii_alphanumeric())
            })
        })
        .collect();
    let task = crate::task_words::task_of(history).to_lowercase();
    let candidates = history
        .iter()
        .rev()
        .filter(|m| m.role == Role::Tool && !names.is_empty())
        .filter_map(|m| m.content.as_deref())
        .map(|result| {
            let meant: Vec<String> = unopened(result, None, None, workspace, memory)
                .into_iter()
                .filter(|path| {
                    names
                        .iter()
                        .any(|name| path == name || path.ends_with(&format!("/{name}")))
                })
                .collect();
            meant
        })
        .find(|meant| !meant.is_empty());
    match candidates {
        Some(candidates) => one_meant(candidates, &task),
        None => backticked_file(text, workspace, memory),
    }
}

/// The one existing file `text` names in backticks (`VERSION`, a name with no dot that
/// no result's file list shows) that no successful call has taken as an argument.
fn backticked_file(text: &str, workspace: &Workspace, memory: &Memory) -> Option<String> {
    let mut found: Vec<&str> = text
        .split('`')
        .skip(1)
        .step_by(2)
        .map(str::trim)
        .filter(|name| {
            !name.is_empty()
                && name.len() <= 200
                && !name.contains(char::is_whitespace)
                && workspace.resolve(name).is_ok_and(|path| path.is_file())
                && !taken_as_argument(memory, name)
        })
        .collect();
    found.dedup();
    match found.as_slice() {
        [one] => Some(one.to_string()),
        _ => None,
    }
}

/// The one file of `candidates` that is meant: the only one, or the only one whose
/// file name shares a word with the task (`limits.toml` for "the limits settings",
/// when the text echoed `logging.toml` and `features.toml` too); `None` when that
/// does not decide.
fn one_meant(mut candidates: Vec<String>, task: &str) -> Option<String> {
    if candidates.len() == 1 {
        return candidates.pop();
    }
    let in_task = |path: &String| {
        let name = path.rsplit('/').next().unwrap_or(path);
        let stem = name.split('.').next().unwrap_or(name).to_lowercase();
        stem.len() >= 3
            && task
                .split(|c: char| !c.is_alphanumeric() && c != '_')
                .any(|word| word == stem)
    };
    let mut named: Vec<String> = candidates.into_iter().filter(in_task).collect();
    match named.len() {
        1 => named.pop(),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_file_a_plan_names_in_backticks_is_meant_when_it_is_the_only_one_unread() {
        let dir = tempfile::tempdir().unwrap();
        for name in ["VERSION", "OWNERS", "README.md"] {
            std::fs::write(dir.path().join(name), "x").unwrap();
        }
        let workspace = Workspace::new(dir.path(), rein_tools::ToolLimits::default()).unwrap();
        let mut memory = Memory::default();
        memory.succeeded_calls.insert(
            crate::validate::call_key("read_file", &serde_json::json!({"path": "README.md"})),
            ("…".into(), 0),
        );
        let history = [Message::user(
            "Read README.md and carry out its release procedure.",
        )];
        let plan = "Execute the first step: read the version number from the file `VERSION`.";
        assert_eq!(
            meant_file(plan, &history, &workspace, &memory).as_deref(),
            Some("VERSION")
        );
        let two = "Read `VERSION`, then `OWNERS`; `README.md` says so.";
        assert_eq!(meant_file(two, &history, &workspace, &memory), None);
        assert_eq!(
            meant_file("Run `make test`.", &history, &workspace, &memory),
            None
        );
    }

    #[test]
    fn of_several_files_the_one_the_task_names_is_meant() {
        let files = || {
            [
                "conf/shared/logging.toml",
                "conf/prod/limits.toml",
                "conf/shared/features.toml",
            ]
            .map(String::from)
            .to_vec()
        };
        let task = "the file config.json says which file holds the limits settings (under app.settings.limits).";
        assert_eq!(
            one_meant(files(), task).as_deref(),
            Some("conf/prod/limits.toml")
        );
        assert_eq!(one_meant(files(), "read the settings"), None);
        assert_eq!(
            one_meant(vec!["conf/a.toml".into()], "anything").as_deref(),
            Some("conf/a.toml")
        );
    }
}
