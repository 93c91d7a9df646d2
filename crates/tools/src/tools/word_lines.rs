//! The workspace's lines that hold one word, rendered as `search` renders them: what
//! the agent shows when a model looks for the task's output file before anything that
//! goes in it (the word comes from the task).

use super::search::{render_hit, MAX_FILES};
use super::search_engine::{content_matcher, search_contents, whole_word_regex, Scope};
use crate::workspace::Workspace;

/// The lines of the workspace's files (hidden and ignored files left out) holding
/// `word` as a whole word, as `search` lists them (`path:line: text`), when there are
/// between one and `at_most`; `None` otherwise. A word in lower case matches in any
/// case; one with a capital letter only as written.
pub fn word_lines(workspace: &Workspace, word: &str, at_most: usize) -> Option<Vec<String>> {
    let word = word.trim();
    if word.is_empty() || at_most == 0 {
        return None;
    }
    let any_case = !word.chars().any(char::is_uppercase);
    let pattern = whole_word_regex(word);
    let matcher = content_matcher(&pattern, any_case).ok()?;
    let scope = Scope {
        path: workspace.root(),
        root: workspace.root(),
        glob: None,
        everything: false,
        max_files: MAX_FILES,
    };
    let tally = search_contents(scope, &matcher, at_most, at_most + 1).ok()?;
    if tally.count == 0 || tally.count > at_most || tally.incomplete {
        return None;
    }
    Some(
        tally
            .hits
            .iter()
            .map(|hit| render_hit(workspace, hit))
            .collect(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tools::test_files::workspace;

    #[test]
    fn lines_holding_the_word_come_back_as_search_lists_them() {
        let (_dir, ws) = workspace(&[
            ("src/a.py", "x = 1\n# TODO: merge files\n"),
            ("lib/b.py", "# TODO: threshold\ntodo_list = []\n"),
        ]);
        let lines = word_lines(&ws, "TODO", 10).unwrap();
        assert_eq!(
            lines,
            [
                "lib/b.py:1: # TODO: threshold",
                "src/a.py:2: # TODO: merge files"
            ]
        );
    }

    #[test]
    fn a_lower_case_word_matches_any_case_and_too_many_lines_give_none() {
        let (_dir, ws) = workspace(&[("c.toml", "Port = 80\nport = 81\nsupport = 1\n")]);
        let lines = word_lines(&ws, "port", 5).unwrap();
        assert_eq!(lines, ["c.toml:1: Port = 80", "c.toml:2: port = 81"]);
        assert_eq!(word_lines(&ws, "port", 1), None);
        assert_eq!(word_lines(&ws, "absent", 5), None);
    }
}
