//! The line that encloses a search hit, found by indentation as `git grep -p` finds a
//! hunk's function: the nearest line above with less indentation (a function, a
//! class, a config section, a parent key), or for an unindented hit in Markdown the
//! nearest heading. No language is parsed, so it serves every file type alike. A hit
//! that is a comment gets none: a comment is the text sought (a marker, a note), not a
//! line whose meaning depends on its definition.

use std::path::Path;

/// Files larger than this are not read again for context.
const MAX_BYTES: u64 = 2 * 1024 * 1024;
/// Enclosing lines shown at most for one hit.
const MAX_LEVELS: usize = 3;
/// Characters of the enclosing line shown.
pub(crate) const SHOWN_CHARS: usize = 80;

/// A file's lines, read once for all its hits.
pub(crate) struct FileLines {
    path: std::path::PathBuf,
    lines: Vec<String>,
}

impl FileLines {
    /// Reads `path` (nothing when too large or not text).
    pub(crate) fn read(path: &Path) -> Option<Self> {
        let metadata = std::fs::metadata(path).ok()?;
        if metadata.len() > MAX_BYTES {
            return None;
        }
        let text = std::fs::read_to_string(path).ok()?;
        Some(FileLines {
            path: path.to_path_buf(),
            lines: text.lines().map(str::to_string).collect(),
        })
    }

    /// Whether these are the lines of `path`.
    pub(crate) fn is_of(&self, path: &Path) -> bool {
        self.path == path
    }

    /// The lines that enclose line `line` (1-based), outermost first, at most
    /// [`MAX_LEVELS`] of them (the innermost): each line's number and its text, trimmed.
    /// A function, then the block inside it; a section, then a parent key.
    pub(crate) fn enclosing_chain(&self, line: u64) -> Vec<(u64, String)> {
        let mut chain = Vec::new();
        let mut current = line;
        while let Some((number, text)) = self.enclosing(current) {
            chain.push((number, text));
            current = number;
        }
        chain.truncate(MAX_LEVELS);
        chain.reverse();
        chain
    }

    /// The enclosing line of line `line` (1-based): its number and its text, trimmed.
    pub(crate) fn enclosing(&self, line: u64) -> Option<(u64, String)> {
        let index = usize::try_from(line).ok()?.checked_sub(1)?;
        let hit = self.lines.get(index)?;
        let markdown = self
            .path
            .extension()
            .is_some_and(|e| e == "md" || e == "markdown");
        let hit_indent = indent(hit);
        if !markdown && (hit_indent == 0 || is_comment(hit.trim_start())) {
            return None;
        }
        let found = self.lines[..index]
            .iter()
            .enumerate()
            .rev()
            .find(|(_, text)| {
                let trimmed = text.trim_start();
                if markdown && hit_indent == 0 {
                    return trimmed.starts_with('#') && indent(text) == 0;
                }
                !trimmed.is_empty()
                    && indent(text) < hit_indent
                    && !trimmed.starts_with(['}', ')', ']'])
                    && !is_comment(trimmed)
            })?;
        Some((found.0 as u64 + 1, found.1.trim().to_string()))
    }
}

/// Leading whitespace, a tab counted as four.
fn indent(line: &str) -> usize {
    line.chars()
        .take_while(|c| c.is_whitespace())
        .map(|c| if c == '\t' { 4 } else { 1 })
        .sum()
}

fn is_comment(trimmed: &str) -> bool {
    ["//", "/*", "*", "#", "--", "<!--", ";"]
        .iter()
        .any(|start| trimmed.starts_with(start))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lines(name: &str, text: &str) -> (tempfile::TempDir, FileLines) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(name);
        std::fs::write(&path, text).unwrap();
        let lines = FileLines::read(&path).unwrap();
        (dir, lines)
    }

    #[test]
    fn a_hit_in_a_body_gets_its_function_or_section() {
        let (_d, py) = lines(
            "m.py",
            "import os\n\n# helpers\ndef parse_user(value):\n    if not value:\n        raise ValueError(\"bad id\")\n    return value\n",
        );
        assert_eq!(py.enclosing(6), Some((5, "if not value:".into())));
        assert_eq!(py.enclosing(5), Some((4, "def parse_user(value):".into())));
        assert_eq!(
            py.enclosing_chain(6),
            vec![
                (4, "def parse_user(value):".into()),
                (5, "if not value:".into())
            ]
        );
        assert_eq!(py.enclosing(1), None);
        let (_d, todo) = lines("t.py", "def f():\n    # TODO: cache\n    return 1\n");
        assert_eq!(todo.enclosing(2), None, "a comment is the text sought");
        assert_eq!(todo.enclosing(3), Some((1, "def f():".into())));
        let (_d, rs) = lines(
            "m.rs",
            "fn other() {\n}\n\npub fn load(v: &str) {\n    if v.is_empty() {\n        return;\n    }\n    // note\n    panic!(\"x\");\n}\n",
        );
        assert_eq!(rs.enclosing(9), Some((4, "pub fn load(v: &str) {".into())));
        let (_d, yaml) = lines("c.yaml", "server:\n  port: 80\nclient:\n  port: 81\n");
        assert_eq!(yaml.enclosing(4), Some((3, "client:".into())));
        let (_d, md) = lines("n.md", "# Title\n\n## Setup\n\nRun the tool.\n");
        assert_eq!(md.enclosing(5), Some((3, "## Setup".into())));
    }
}
