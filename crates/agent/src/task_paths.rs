//! The workspace paths a task names (`settings.py`, `services/`, `data/events.log`)
//! that exist at the start: where a model that answers, or calls a tool that does not
//! exist, before it has looked at anything is sent first.

use rein_tools::Workspace;

/// The most paths kept.
const KEPT: usize = 4;

/// A path the task names, and whether it is a directory.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct TaskPath {
    /// As the task writes it, without a trailing `/`.
    pub path: String,
    /// It is a directory (else a file).
    pub dir: bool,
}

/// The paths `task` names that exist in `workspace`, in the task's order, each once:
/// words with a `.` or `/` inside (`README.md`, `logs/`), in backticks or not.
pub(crate) fn named_paths(task: &str, workspace: &Workspace) -> Vec<TaskPath> {
    let mut found: Vec<TaskPath> = Vec::new();
    for token in task.split(|c: char| !(c.is_alphanumeric() || "_./-".contains(c))) {
        let token = token.trim_end_matches(['.', ',']);
        let path = token.trim_end_matches('/');
        let shaped = path.len() >= 2
            && (token.contains('/') || path.contains('.'))
            && !path.starts_with('/')
            && !path.split('/').any(|part| part == "..");
        if !shaped || found.len() == KEPT || found.iter().any(|f| f.path == path) {
            continue;
        }
        let Ok(resolved) = workspace.resolve(path) else {
            continue;
        };
        if resolved.is_file() || resolved.is_dir() {
            found.push(TaskPath {
                path: path.to_string(),
                dir: resolved.is_dir(),
            });
        }
    }
    found
}

/// Whether `task` asks about the workspace's files ("Which file defines…", "some
/// file in this project").
pub(crate) fn asks_about_files(task: &str) -> bool {
    const WORDS: [&str; 9] = [
        "file",
        "files",
        "directory",
        "folder",
        "project",
        "repository",
        "repo",
        "workspace",
        "codebase",
    ];
    task.split(|c: char| !c.is_alphanumeric())
        .any(|word| WORDS.contains(&word.to_lowercase().as_str()))
}

/// A file name in `answer` (`userrepository.py`, `/home/me/notes.txt`) that is not in
/// `workspace`, if there is one: a name with a dot before a short extension that
/// holds a letter (`3.14` and `e.g.` are not names).
pub(crate) fn absent_file(answer: &str, workspace: &Workspace) -> Option<String> {
    answer
        .split(|c: char| !(c.is_alphanumeric() || "_./-".contains(c)))
        .map(|token| token.trim_end_matches(['.', ',']))
        .filter(|token| {
            let name = token.rsplit('/').next().unwrap_or(token);
            name.rsplit_once('.').is_some_and(|(stem, ext)| {
                stem.chars().count() >= 2
                    && (1..=8).contains(&ext.len())
                    && ext.chars().all(|c| c.is_ascii_alphanumeric())
                    && ext.chars().any(|c| c.is_ascii_alphabetic())
            })
        })
        .find(|token| !workspace.resolve(token).is_ok_and(|path| path.exists()))
        .map(String::from)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_paths_a_task_names_are_found_when_they_exist() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("services/auth")).unwrap();
        std::fs::write(dir.path().join("settings.py"), "x").unwrap();
        std::fs::write(dir.path().join("services/auth/VERSION"), "1").unwrap();
        let workspace = Workspace::new(dir.path(), rein_tools::ToolLimits::default()).unwrap();
        let found = named_paths(
            "In settings.py, change the timeout. Every service under services/ has a VERSION file; see `services/auth/VERSION`. Ignore notes.txt and ../secret.txt.",
            &workspace,
        );
        assert_eq!(
            found,
            vec![
                TaskPath {
                    path: "settings.py".into(),
                    dir: false
                },
                TaskPath {
                    path: "services".into(),
                    dir: true
                },
                TaskPath {
                    path: "services/auth/VERSION".into(),
                    dir: false
                },
            ]
        );
        assert!(named_paths("What is 12 times 12? Answer e.g. 144.", &workspace).is_empty());
    }

    #[test]
    fn a_file_the_answer_names_outside_the_workspace_is_found() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("store")).unwrap();
        std::fs::write(dir.path().join("store/accounts.py"), "x").unwrap();
        let workspace = Workspace::new(dir.path(), rein_tools::ToolLimits::default()).unwrap();
        assert_eq!(
            absent_file(
                "file:///home/username/Documents/userrepository.py",
                &workspace
            )
            .as_deref(),
            Some("///home/username/Documents/userrepository.py")
        );
        assert_eq!(
            absent_file("It is in repo/user.py.", &workspace).as_deref(),
            Some("repo/user.py")
        );
        for answer in [
            "store/accounts.py",
            "It is defined in `store/accounts.py`.",
            "Pi is 3.14, e.g. about 22/7.",
            "144",
        ] {
            assert_eq!(absent_file(answer, &workspace), None, "{answer}");
        }
        assert!(asks_about_files("Which file defines the class?"));
        assert!(!asks_about_files("What is 12 times 12?"));
    }
}
