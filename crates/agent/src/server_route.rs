//! A call failed to reach a path outside the workspace (a built-in refused it, or a
//! sandboxed shell command could not read it) while an MCP server's tools are offered:
//! the server tool whose name says it does that job (`fs__read_text_file` for
//! `read_file`) is named with the call to make, and made callable when it was kept
//! behind `tool_search`. A small model otherwise repeats the refused call or answers
//! with the refusal (measured with the reference filesystem server).

use rein_protocol::ToolSpec;
use rein_tools::{Confinement, Workspace};
use serde_json::{Map, Value};

use crate::tool_names::{EDIT_TOOL, LIST_TOOL, READ_TOOL, SHELL_TOOL, WRITE_TOOL};

/// The built-in content search.
const SEARCH_TOOL: &str = "search";

/// What joins a server's name to its tool's (`fs__read_file`), as rein-mcp names them.
const SERVER_SEPARATOR: &str = "__";

/// The verb a server tool's name leads with when it does what `builtin` does with
/// `path`, and the words it would also name (a file, a directory). A content search
/// has no usual server equivalent (the filesystem server's `search_files` matches
/// names): a search of one file outside becomes its read, of a directory its listing.
fn job_of(builtin: &str, path: &str) -> Option<(&'static str, &'static [&'static str])> {
    const READ: (&str, &[&str]) = ("read", &["file", "text"]);
    const LIST: (&str, &[&str]) = ("list", &["directory", "dir"]);
    match builtin {
        READ_TOOL => Some(READ),
        WRITE_TOOL => Some(("write", &["file"])),
        EDIT_TOOL => Some(("edit", &["file"])),
        LIST_TOOL => Some(LIST),
        SEARCH_TOOL => {
            let last = path
                .trim_end_matches('/')
                .rsplit('/')
                .next()
                .unwrap_or(path);
            Some(match last.contains('.') && !path.ends_with('/') {
                true => READ,
                false => LIST,
            })
        }
        _ => None,
    }
}

/// Whether `error` is a refusal of a path outside the workspace.
fn refused_outside(error: &Confinement) -> bool {
    matches!(
        error,
        Confinement::Outside { .. } | Confinement::SymlinkOutside { .. }
    )
}

/// Whether `path` is outside `workspace` (refused by its confinement).
fn outside(workspace: &Workspace, path: &str) -> bool {
    workspace
        .resolve(path)
        .err()
        .is_some_and(|e| refused_outside(&e))
}

/// A call that tried and failed to reach a path outside the workspace: the built-in
/// whose job a server tool would do, the path, and the arguments to carry over. A
/// built-in refused such a path; a shell command that names one as an absolute path
/// failed or reached nothing (`cat /srv/notes/release.md | grep …` under the strict
/// sandbox exits 0 with "Permission denied"): reading it (a name with an extension)
/// or listing it is the job.
pub(crate) fn refused_reach(
    name: &str,
    arguments: &Value,
    (ok, output): (bool, &str),
    workspace: &Workspace,
) -> Option<(&'static str, String, Value)> {
    if name == SHELL_TOOL {
        if ok && crate::call_outcome::holds_content(output, false) {
            return None;
        }
        let command = arguments.get("command")?.as_str()?;
        let path = command
            .split(|c: char| c.is_whitespace() || "'\";|&<>()".contains(c))
            .find(|token| token.starts_with('/') && outside(workspace, token))?;
        let last = path
            .trim_end_matches('/')
            .rsplit('/')
            .next()
            .unwrap_or(path);
        let job = match last.contains('.') && !path.ends_with('/') {
            true => READ_TOOL,
            false => LIST_TOOL,
        };
        return Some((job, path.to_string(), serde_json::json!({ "path": path })));
    }
    if ok {
        return None;
    }
    let path = arguments.get("path")?.as_str()?;
    let job = [READ_TOOL, WRITE_TOOL, EDIT_TOOL, LIST_TOOL, SEARCH_TOOL]
        .into_iter()
        .find(|builtin| *builtin == name)?;
    outside(workspace, path).then(|| (job, path.to_string(), arguments.clone()))
}

/// A server tool's own name split into lowercase words: `fs__read_text_file` →
/// `read`, `text`, `file`.
fn words(name: &str) -> Vec<String> {
    let own = name
        .split_once(SERVER_SEPARATOR)
        .map_or(name, |(_, tool)| tool);
    let mut words = Vec::new();
    let mut word = String::new();
    let mut previous_lower = false;
    for c in own.chars() {
        let breaks = matches!(c, '_' | '-' | '.') || (c.is_uppercase() && previous_lower);
        if breaks && !word.is_empty() {
            words.push(std::mem::take(&mut word));
        }
        previous_lower = c.is_lowercase();
        if c.is_alphanumeric() {
            word.extend(c.to_lowercase());
        }
    }
    if !word.is_empty() {
        words.push(word);
    }
    words
}

/// The server tool among `tools` that does `builtin`'s job on `path`: its name leads
/// with the job's verb (`read_…`); among several, the one naming the job's object,
/// then the one with the fewest words (`read_text_file` before
/// `read_multiple_files`), then the first offered. Tools the server marks deprecated
/// are left out.
pub(crate) fn server_tool_for<'a>(
    builtin: &str,
    path: &str,
    tools: impl IntoIterator<Item = &'a ToolSpec>,
) -> Option<&'a ToolSpec> {
    let (verb, objects) = job_of(builtin, path)?;
    tools
        .into_iter()
        .filter(|spec| spec.function.name.contains(SERVER_SEPARATOR))
        .filter(|spec| !marked_deprecated(spec))
        .filter_map(|spec| {
            let words = words(&spec.function.name);
            (words.first().map(String::as_str) == Some(verb)).then_some((spec, words))
        })
        .min_by_key(|(_, words)| {
            let names_object = words.iter().any(|w| objects.contains(&w.as_str()));
            (!names_object, words.len())
        })
        .map(|(spec, _)| spec)
}

/// Whether the server says not to use the tool any more.
fn marked_deprecated(spec: &ToolSpec) -> bool {
    spec.function
        .description
        .as_deref()
        .is_some_and(|d| d.to_lowercase().contains("deprecated"))
}

/// The arguments of the server call: the built-in call's arguments that the server
/// tool also takes, when they cover every parameter it requires.
pub(crate) fn carried_arguments(spec: &ToolSpec, arguments: &Value) -> Option<Value> {
    let schema = spec.function.parameters.as_ref()?;
    let properties = schema.get("properties")?.as_object()?;
    let given = arguments.as_object()?;
    let carried: Map<String, Value> = given
        .iter()
        .filter(|(name, _)| properties.contains_key(name.as_str()))
        .map(|(name, value)| (name.clone(), value.clone()))
        .collect();
    let required = schema
        .get("required")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(Value::as_str);
    let mut required = required.peekable();
    let covered = required.all(|name| carried.contains_key(name));
    (covered && !carried.is_empty()).then_some(Value::Object(carried))
}

#[cfg(test)]
mod tests {
    use super::*;
    use rein_protocol::FunctionSpec;
    use serde_json::json;

    fn spec(name: &str, parameters: Value) -> ToolSpec {
        ToolSpec {
            kind: "function".into(),
            function: FunctionSpec {
                name: name.into(),
                description: None,
                parameters: Some(parameters),
            },
        }
    }

    fn path_only(name: &str) -> ToolSpec {
        spec(
            name,
            json!({"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]}),
        )
    }

    #[test]
    fn the_server_tool_that_does_the_same_job_is_found() {
        let mut deprecated = path_only("fs__read_file");
        deprecated.function.description = Some("DEPRECATED: Use read_text_file instead.".into());
        let tools = [
            path_only("read_file"),
            deprecated,
            path_only("fs__read_multiple_files"),
            path_only("fs__read_text_file"),
            path_only("fs__read_media_file"),
            path_only("fs__list_allowed_directories"),
            path_only("fs__list_directory_with_sizes"),
            path_only("fs__list_directory"),
            path_only("fs__directory_tree"),
        ];
        let name = |builtin, path| {
            server_tool_for(builtin, path, &tools).map(|s| s.function.name.as_str())
        };
        assert_eq!(name("read_file", "/n/a.md"), Some("fs__read_text_file"));
        assert_eq!(name("list_dir", "/n"), Some("fs__list_directory"));
        assert_eq!(name("search", "/n/release.md"), Some("fs__read_text_file"));
        assert_eq!(name("search", "/n/docs"), Some("fs__list_directory"));
        assert_eq!(name("write_file", "/n/a.md"), None);
        assert_eq!(name("shell", "/n"), None);
        assert_eq!(words("srv__getFileText-v2"), ["get", "file", "text", "v2"]);
    }

    #[test]
    fn arguments_carry_over_only_when_they_cover_what_is_required() {
        let read = path_only("fs__read_text_file");
        assert_eq!(
            carried_arguments(&read, &json!({"path": "/tmp/notes.md", "limit": 5})),
            Some(json!({"path": "/tmp/notes.md"}))
        );
        let write = spec(
            "fs__write_file",
            json!({"type": "object", "properties": {"path": {}, "content": {}}, "required": ["path", "content"]}),
        );
        assert_eq!(carried_arguments(&write, &json!({"path": "/tmp/a"})), None);
        assert!(carried_arguments(&write, &json!({"path": "/tmp/a", "content": "x"})).is_some());
        let other = spec(
            "fs__read",
            json!({"type": "object", "properties": {"file": {}}}),
        );
        assert_eq!(carried_arguments(&other, &json!({"path": "/tmp/a"})), None);
    }

    #[test]
    fn a_reach_outside_the_workspace_is_told_from_the_call() {
        let dir = tempfile::tempdir().unwrap();
        let workspace = Workspace::new(dir.path(), rein_tools::ToolLimits::default()).unwrap();
        const FAILED: (bool, &str) = (false, "");
        let read = json!({"path": "/srv/notes/release.md"});
        // A call that worked reached what it asked for.
        assert_eq!(
            refused_reach("read_file", &read, (true, ""), &workspace),
            None
        );
        let ran = json!({"command": "cat /srv/notes/release.md"});
        assert_eq!(
            refused_reach(
                "shell",
                &ran,
                (true, "exit code: 0\noutput:\n## 0.4.2"),
                &workspace
            ),
            None
        );
        assert_eq!(
            refused_reach("read_file", &read, FAILED, &workspace),
            Some(("read_file", "/srv/notes/release.md".into(), read.clone()))
        );
        assert_eq!(
            refused_reach(
                "read_file",
                &json!({"path": "notes.md"}),
                FAILED,
                &workspace
            ),
            None
        );
        assert_eq!(
            refused_reach("fs__read_text_file", &read, FAILED, &workspace),
            None
        );
        let cat = json!({"command": "cat '/srv/notes/release.md' | head -n 5"});
        assert_eq!(
            refused_reach(
                "shell",
                &cat,
                (
                    true,
                    "exit code: 0\noutput:\ncat: /srv/notes/release.md: Permission denied"
                ),
                &workspace
            ),
            Some(("read_file", "/srv/notes/release.md".into(), read))
        );
        let ls = json!({"command": "ls -la /srv/notes"});
        assert_eq!(
            refused_reach("shell", &ls, FAILED, &workspace).map(|(job, path, _)| (job, path)),
            Some(("list_dir", "/srv/notes".into()))
        );
        let inside = json!({"command": format!("cat {}/a.md", dir.path().display())});
        assert_eq!(refused_reach("shell", &inside, FAILED, &workspace), None);
        assert_eq!(
            refused_reach(
                "shell",
                &json!({"command": "make test"}),
                FAILED,
                &workspace
            ),
            None
        );
    }
}
