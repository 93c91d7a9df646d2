//! A key path used as a file path (`read_file app.settings.limits` after reading a
//! `config.json` that has `app.settings.limits`): the failed call's result says what
//! the key holds in the JSON file the run read, and which file that names.

use std::collections::HashSet;
use std::path::PathBuf;

use rein_tools::Workspace;
use serde_json::Value;

use crate::call_outcome::CallOutcome;

/// Files of more bytes than this are not parsed.
const MAX_JSON_BYTES: u64 = 1 << 20;

/// `outcome` of a failed call on `path` that does not exist, with a line on what the
/// key path `path` holds in one of the `seen` JSON files, when it holds a scalar.
pub(crate) fn with_key_path_note(
    outcome: CallOutcome,
    path: &str,
    seen: &HashSet<PathBuf>,
    workspace: &Workspace,
) -> CallOutcome {
    if outcome.ok {
        return outcome;
    }
    let keys: Vec<&str> = path.split('.').collect();
    let shaped = keys.len() >= 2
        && keys.iter().all(|key| {
            !key.is_empty()
                && key
                    .chars()
                    .all(|c| c.is_alphanumeric() || c == '_' || c == '-')
        });
    if !shaped || workspace.resolve(path).is_ok_and(|p| p.exists()) {
        return outcome;
    }
    let mut files: Vec<&PathBuf> = seen
        .iter()
        .filter(|file| file.extension().is_some_and(|ext| ext == "json"))
        .collect();
    files.sort();
    let Some((file, value)) = files
        .into_iter()
        .find_map(|file| Some((file, scalar_at(file, &keys)?)))
    else {
        return outcome;
    };
    let shown = workspace.relative(file);
    let mut line = format!(
        "\n`{path}` is not a file but a key path: in `{shown}` (read earlier) it holds {}.",
        Value::String(value.clone())
    );
    if workspace.resolve(&value).is_ok_and(|p| p.is_file()) {
        line.push_str(&format!(
            " That is a file of the workspace: read `{value}` next."
        ));
    }
    let mut outcome = outcome;
    outcome.text.push_str(&line);
    outcome
}

/// The scalar at `keys` in the JSON file `file`, as text.
fn scalar_at(file: &PathBuf, keys: &[&str]) -> Option<String> {
    if std::fs::metadata(file).ok()?.len() > MAX_JSON_BYTES {
        return None;
    }
    let document: Value = serde_json::from_slice(&std::fs::read(file).ok()?).ok()?;
    let mut at = &document;
    for key in keys {
        at = match at {
            Value::Object(map) => map.get(*key)?,
            Value::Array(items) => items.get(key.parse::<usize>().ok()?)?,
            _ => return None,
        };
    }
    match at {
        Value::String(text) => Some(text.clone()),
        Value::Number(number) => Some(number.to_string()),
        Value::Bool(flag) => Some(flag.to_string()),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_key_path_read_as_a_file_is_told_what_it_holds() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("conf/prod")).unwrap();
        std::fs::write(
            dir.path().join("config.json"),
            r#"{"app": {"settings": {"limits": "conf/prod/limits.toml", "retries": 3}}}"#,
        )
        .unwrap();
        std::fs::write(
            dir.path().join("conf/prod/limits.toml"),
            "max_connections = 480\n",
        )
        .unwrap();
        let workspace = Workspace::new(dir.path(), rein_tools::ToolLimits::default()).unwrap();
        let seen: HashSet<PathBuf> = [workspace.resolve("config.json").unwrap()].into();
        let failed = || CallOutcome::failed("`app.settings.limits` does not exist.".into());
        let told = with_key_path_note(failed(), "app.settings.limits", &seen, &workspace);
        assert_eq!(
            told.text,
            "`app.settings.limits` does not exist.\n`app.settings.limits` is not a file but a key path: in `config.json` (read earlier) it holds \"conf/prod/limits.toml\". That is a file of the workspace: read `conf/prod/limits.toml` next."
        );
        let number = with_key_path_note(failed(), "app.settings.retries", &seen, &workspace);
        assert!(number.text.ends_with("it holds \"3\"."), "{}", number.text);
        for path in ["app.settings.missing", "notes.txt", "app.settings"] {
            assert_eq!(
                with_key_path_note(failed(), path, &seen, &workspace).text,
                failed().text,
                "{path}"
            );
        }
        // Nothing read: nothing said.
        let none = with_key_path_note(failed(), "app.settings.limits", &HashSet::new(), &workspace);
        assert_eq!(none.text, failed().text);
    }
}
