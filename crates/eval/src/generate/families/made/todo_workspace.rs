//! Workspaces for the README's first job made from a seed: TODO comments in the
//! comment syntax of other languages and file types (JavaScript, shell, Go, Rust, Ruby,
//! SQL, YAML, CSS, HTML, Markdown …) at several depths, beside comments with other
//! markers. The job's request stays the README's; only the workspace changes, so CI can
//! show the job is not solved for one workspace only.

use std::collections::BTreeMap;

use super::{distinct_texts, insert_comment, marker_filler, Style, MARKUP_STYLES};
use crate::generate::words;
use crate::generate::Rng;

/// A generated workspace of the README's job.
#[derive(Debug, Clone)]
pub struct TodoWorkspace {
    /// Relative path → content.
    pub files: BTreeMap<String, String>,
    /// `path:line` of every TODO comment, sorted (as `examples/todo.expected`).
    pub expected: Vec<String>,
    /// `path:line` of the comments with other markers, which the list must not hold.
    pub other_markers: Vec<String>,
}

/// The stream of the workspace generator (apart from the families' tasks of one seed).
const STREAM: u64 = 0x7464;

/// The workspace of `seed`. Python, the language of `examples/todo`, is never among its
/// file types.
pub fn todo_workspace(seed: u64) -> TodoWorkspace {
    let mut rng = Rng::new(seed, STREAM);
    let mut styles: Vec<Style> = words::CODE_LANGS
        .iter()
        .filter(|l| l.ext != "py")
        .map(|l| Style {
            ext: l.ext,
            open: l.comment,
            close: "",
        })
        .chain(MARKUP_STYLES.iter().copied())
        .collect();
    rng.shuffle(&mut styles);
    let chosen: Vec<Style> = styles.into_iter().take(rng.range(4, 6) as usize).collect();
    let stems = rng.distinct(words::NOUNS, chosen.len());
    let dirs = [
        "src", "lib", "app", "web", "scripts", "docs", "config", "db",
    ];
    let paths: Vec<String> = chosen
        .iter()
        .zip(&stems)
        .map(|(style, stem)| {
            let depth = rng.below(3);
            let mut parts: Vec<String> = (0..depth)
                .map(|d| {
                    if d == 0 {
                        rng.pick(&dirs).to_string()
                    } else {
                        rng.pick(words::NOUNS).to_string()
                    }
                })
                .collect();
            parts.push(format!("{stem}.{}", style.ext));
            parts.join("/")
        })
        .collect();
    let todos = rng.range(3, 6) as usize;
    let others = rng.range(0, 2) as usize;
    let messages = distinct_texts(&mut rng, todos + others, |rng| {
        let (verb, noun) = (rng.pick(words::VERBS), rng.pick(words::NOUNS));
        match rng.below(4) {
            0 => format!("{verb} the {noun} list in one pass"),
            1 => format!("handle an empty {noun} before we {verb} it"),
            2 => format!("make the {noun} limit configurable"),
            _ => format!("{verb} {noun} entries in a stable order"),
        }
    });
    let mut files: Vec<Vec<(String, Option<bool>)>> = chosen
        .iter()
        .zip(&stems)
        .map(|(style, stem)| {
            let (lines, _) = marker_filler(&mut rng, *style, stem);
            lines.into_iter().map(|l| (l, None)).collect()
        })
        .collect();
    // The first TODOs go to different files, the rest anywhere; `Some(true)` tags a TODO.
    for (i, message) in messages.iter().enumerate() {
        let is_todo = i < todos;
        let file = if i < chosen.len().min(todos) {
            i
        } else {
            rng.below(chosen.len())
        };
        let style = chosen[file];
        let marker = if is_todo {
            "TODO"
        } else {
            *rng.pick(&["FIXME", "NOTE", "HACK"])
        };
        let body = match rng.below(3) {
            0 => format!("{marker}: {message}"),
            1 => format!("{marker} {message}"),
            _ => format!(
                "{marker}({}): {message}",
                rng.pick(words::PEOPLE).to_lowercase()
            ),
        };
        insert_comment(&mut rng, &mut files[file], style, &body, Some(is_todo));
    }
    let mut workspace = TodoWorkspace {
        files: BTreeMap::new(),
        expected: Vec::new(),
        other_markers: Vec::new(),
    };
    for (path, lines) in paths.iter().zip(&files) {
        let mut text = String::new();
        for (n, (line, tag)) in lines.iter().enumerate() {
            text.push_str(line);
            text.push('\n');
            match tag {
                Some(true) => workspace.expected.push(format!("{path}:{}", n + 1)),
                Some(false) => workspace.other_markers.push(format!("{path}:{}", n + 1)),
                None => {}
            }
        }
        workspace.files.insert(path.clone(), text);
    }
    workspace.expected.sort();
    workspace.other_markers.sort();
    workspace
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_expected_line_holds_a_todo_comment_and_no_other_line_does() {
        for seed in 0..200 {
            let ws = todo_workspace(seed);
            assert!(ws.expected.len() >= 3, "seed {seed}");
            let mut todo_lines = Vec::new();
            for (path, text) in &ws.files {
                assert!(!path.ends_with(".py"), "seed {seed}: {path}");
                for (n, line) in text.lines().enumerate() {
                    if line.contains("TODO") {
                        todo_lines.push(format!("{path}:{}", n + 1));
                    }
                }
            }
            todo_lines.sort();
            assert_eq!(todo_lines, ws.expected, "seed {seed}");
            for other in &ws.other_markers {
                assert!(!ws.expected.contains(other), "seed {seed}");
            }
        }
    }

    #[test]
    fn a_seed_makes_the_same_workspace_and_seeds_differ() {
        let a = todo_workspace(7);
        assert_eq!(a.files, todo_workspace(7).files);
        assert_ne!(a.files, todo_workspace(8).files);
    }

    #[test]
    fn workspaces_span_several_file_types_and_depths() {
        let mut exts = std::collections::BTreeSet::new();
        let mut nested = 0;
        for seed in 0..50 {
            for path in todo_workspace(seed).files.keys() {
                exts.insert(path.rsplit('.').next().unwrap_or("").to_string());
                nested += usize::from(path.contains('/'));
            }
        }
        assert!(exts.len() >= 8, "{exts:?}");
        assert!(nested > 50, "{nested}");
    }
}
