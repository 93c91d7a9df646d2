//! Files a tool result names that no call has read yet (`conf/prod/limits.toml` in a
//! config file): offered when the model reads the same file again instead of going on
//! to the one it points to.

use rein_tools::Workspace;
use serde_json::Value;

use rein_protocol::{Message, Role};

use crate::execute::Memory;
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
    unopened(result, own, workspace, memory)
}

/// The files `result` names that exist in `workspace`, are not `own` and that no
/// successful call has taken as an argument.
fn unopened(
    result: &str,
    own: Option<&str>,
    workspace: &Workspace,
    memory: &Memory,
) -> Vec<String> {
    let read = |path: &str| {
        memory
            .succeeded_calls
            .keys()
            .any(|key| key.contains(&format!("\"{path}\"")))
    };
    let mut found: Vec<String> = Vec::new();
    for token in result.split(|c: char| !(c.is_alphanumeric() || "_./-".contains(c))) {
        let token = token.trim_matches('.');
        if found.len() == NAMED_PATHS || token.len() < 3 || !token.contains(['/', '.']) {
            continue;
        }
        let is_file = workspace.resolve(token).is_ok_and(|path| path.is_file());
        if is_file && Some(token) != own && !read(token) && !found.iter().any(|f| f == token) {
            found.push(token.to_string());
        }
    }
    found
}

/// The line a repeat's note ends with, naming `paths`; empty when there are none.
pub(crate) fn unopened_note(paths: &[String]) -> String {
    if paths.is_empty() {
        return String::new();
    }
    let names: Vec<String> = paths.iter().map(|p| format!("`{p}`")).collect();
    format!(
        "\nFiles this result names that you have not read: {}. If the task needs one of them, read it next.",
        names.join(", ")
    )
}

/// The unread file of the workspace that `text` means by a bare name (`limits.toml`
/// in a plan to read it, for the `conf/prod/limits.toml` a result named): the latest
/// result that names such a file decides.
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
    if names.is_empty() {
        return None;
    }
    history
        .iter()
        .rev()
        .filter(|m| m.role == Role::Tool)
        .filter_map(|m| m.content.as_deref())
        .find_map(|result| {
            unopened(result, None, workspace, memory)
                .into_iter()
                .find(|path| {
                    names
                        .iter()
                        .any(|name| path == name || path.ends_with(&format!("/{name}")))
                })
        })
}
