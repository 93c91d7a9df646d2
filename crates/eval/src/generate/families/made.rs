//! Families of made jobs: the agent reads a tree and writes a new file from it — a list of
//! comment markers, an index of document titles, per-file counts, a converted data file, a
//! merged list. The marker list lives here, the others in `made/`, with the README job's
//! generated workspaces (`made/todo_workspace.rs`).

mod convert;
mod tally;
mod titles;
mod todo_workspace;

pub use todo_workspace::{todo_workspace, TodoWorkspace};

use crate::generate::words::{self, file_lacks, Lang};
use crate::generate::{Family, GenTask, Outcome, Rng};
use crate::grade::GraderSpec;

/// The families of this file.
pub(super) const FAMILIES: &[Family] = &[
    Family {
        name: "marker-list",
        kind: "made",
        about: "every comment marker of one kind (TODO, FIXME, HACK, XXX, NOTE) across code, SQL, YAML, CSS, HTML and Markdown files at several depths, written to a file as path:line: text, beside other markers and the word in strings and names",
        phrasings: 6,
        build: marker_list,
    },
    Family {
        name: "title-index",
        kind: "made",
        about: "an index of the titles of a docs tree's Markdown or HTML documents (first # heading or <title>), written as `- path: title`, leaving out a drafts folder, a README outside the tree and look-alike files",
        phrasings: 6,
        build: titles::title_index,
    },
    Family {
        name: "per-file-tally",
        kind: "made",
        about: "for each CSV file of a directory its data rows, or for each log its lines of one level, written as `name: count`, beside trailing blank lines, lower-case mentions, rotated and archived copies",
        phrasings: 6,
        build: tally::per_file_tally,
    },
    Family {
        name: "convert-data",
        kind: "made",
        about: "a CSV converted to a JSON array of objects with numbers as numbers, or a JSON array to CSV in a given column order, with values that need CSV quoting",
        phrasings: 6,
        build: convert::convert_data,
    },
    Family {
        name: "merge-lists",
        kind: "made",
        about: "two or three text or JSON lists merged into one sorted, de-duplicated list, with entries that differ only by surrounding whitespace (or case) and a list file to leave out",
        phrasings: 6,
        build: convert::merge_lists,
    },
];

/// The file matches `regex`.
fn file_matches(path: &str, regex: String) -> GraderSpec {
    GraderSpec::FileMatches {
        path: path.to_string(),
        regex,
    }
}

/// `k` texts from `make` of which none is written inside another.
fn distinct_texts(
    rng: &mut Rng,
    k: usize,
    mut make: impl FnMut(&mut Rng) -> String,
) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let mut tries = 0usize;
    while out.len() < k {
        tries += 1;
        let mut text = make(rng);
        if tries > 400 {
            text = format!("{text} {tries}");
        }
        if out
            .iter()
            .all(|o| !o.contains(&text) && !text.contains(o.as_str()))
        {
            out.push(text);
        }
    }
    out
}

/// `word` with its first letter in upper case.
fn capital(word: &str) -> String {
    let mut chars = word.chars();
    match chars.next() {
        Some(first) => first.to_uppercase().chain(chars).collect(),
        None => String::new(),
    }
}

/// A file type of the marker list: its extension and how a comment opens and closes.
#[derive(Clone, Copy)]
struct Style {
    ext: &'static str,
    open: &'static str,
    close: &'static str,
}

/// File types beside the code languages, each with its own comment syntax.
const MARKUP_STYLES: &[Style] = &[
    Style {
        ext: "md",
        open: "<!--",
        close: " -->",
    },
    Style {
        ext: "html",
        open: "<!--",
        close: " -->",
    },
    Style {
        ext: "sql",
        open: "--",
        close: "",
    },
    Style {
        ext: "yaml",
        open: "#",
        close: "",
    },
    Style {
        ext: "css",
        open: "/*",
        close: " */",
    },
];

/// The marker words.
const MARKERS: &[&str] = &["TODO", "FIXME", "HACK", "XXX", "NOTE"];

/// What a line of a generated file is, for the graders.
#[derive(Clone, Copy, PartialEq)]
enum Tag {
    Plain,
    /// A comment with the asked marker: index into the messages.
    Target(usize),
    /// A comment with another marker.
    Other(usize),
    /// The marker word in a string or a name.
    Decoy,
}

/// The body of a file of `style` and where a top-level line may go.
fn marker_filler(rng: &mut Rng, style: Style, noun: &str) -> (Vec<String>, Vec<usize>) {
    if let Some(lang) = words::CODE_LANGS.iter().find(|l| l.ext == style.ext) {
        let verbs = rng.distinct(words::VERBS, 2);
        let name = |verb: &str| {
            let snake = words::snake(verb, noun);
            if matches!(lang.ext, "js" | "ts" | "go") {
                words::camel(&snake)
            } else {
                snake
            }
        };
        let header = match lang.ext {
            "py" => "import os\n\n".to_string(),
            "go" => format!("package {noun}\n\nimport \"errors\"\n\n"),
            "sh" => "#!/bin/sh\nset -e\n\n".to_string(),
            "rs" => "use std::fmt;\n\n".to_string(),
            "js" => "'use strict';\n\n".to_string(),
            _ => String::new(),
        };
        let first = lang.function(&name(verbs[0]), &lang.raise(&format!("bad {noun} input")));
        let second = lang.function(&name(verbs[1]), "");
        let mut top = vec![header.lines().count()];
        let mut lines: Vec<String> = header.lines().map(String::from).collect();
        lines.extend(first.lines().map(String::from));
        lines.push(String::new());
        top.push(lines.len());
        lines.extend(second.lines().map(String::from));
        return (lines, top);
    }
    let (word, other) = (capital(noun), rng.pick(words::NOUNS));
    let setting = rng.distinct(words::SETTINGS, 2);
    let n = rng.range(2, 90);
    let text = match style.ext {
        "md" => format!(
            "# {word}\n\nThe {noun} module talks to {other}.\n\n## Usage\n\nRun `make {noun}` to build it.\nSet `{}` before the first run.\n",
            setting[0]
        ),
        "html" => format!(
            "<!DOCTYPE html>\n<html>\n<head>\n  <title>{word}</title>\n</head>\n<body>\n  <h1>{word}</h1>\n  <p>Status of {other}.</p>\n</body>\n</html>\n"
        ),
        "sql" => format!(
            "CREATE TABLE {noun} (\n  id INTEGER PRIMARY KEY,\n  {} INTEGER NOT NULL,\n  {} TEXT\n);\n\nINSERT INTO {noun} (id, {}) VALUES (1, {n});\n",
            setting[0], setting[1], setting[0]
        ),
        "yaml" => format!(
            "{noun}:\n  {}: {n}\n  {}: {other}\n{other}:\n  enabled: true\n",
            setting[0], setting[1]
        ),
        _ => format!(
            ".{noun} {{\n  color: #333;\n  margin: {n}px;\n}}\n\n.{other}-panel {{\n  display: flex;\n}}\n"
        ),
    };
    let lines: Vec<String> = text.lines().map(String::from).collect();
    let top = if style.ext == "yaml" {
        vec![0]
    } else {
        Vec::new()
    };
    (lines, top)
}

/// A line with the marker word in a name and a string, for a file of `ext` (none for
/// types without one).
fn marker_decoy(ext: &str, marker: &str, word: &str) -> Option<String> {
    let lower = marker.to_lowercase();
    let snake = format!("{lower}_label");
    let upper = snake.to_uppercase();
    let text = format!("{word} {marker} items");
    Some(match ext {
        "py" => format!("{snake} = \"{text}\""),
        "js" | "ts" => format!("const {} = \"{text}\";", words::camel(&snake)),
        "rs" => format!("const {upper}: &str = \"{text}\";"),
        "go" => format!("var {} = \"{text}\"", words::camel(&snake)),
        "rb" => format!("{upper} = \"{text}\".freeze"),
        "sh" => format!("{upper}=\"{text}\""),
        "yaml" => format!("{snake}: \"{text}\""),
        _ => return None,
    })
}

/// Puts a comment holding `body` at a random line of `lines` (never above a shebang or
/// a doctype), indented as the line it goes before, tagged `tag`.
fn insert_comment<T>(
    rng: &mut Rng,
    lines: &mut Vec<(String, T)>,
    style: Style,
    body: &str,
    tag: T,
) {
    let at = rng
        .below(lines.len() + 1)
        .max(usize::from(matches!(style.ext, "sh" | "html")));
    let indent: String = lines
        .get(at)
        .map(|(l, _)| l.chars().take_while(|c| c.is_whitespace()).collect())
        .unwrap_or_default();
    lines.insert(
        at,
        (format!("{indent}{} {body}{}", style.open, style.close), tag),
    );
}

fn marker_list(rng: &mut Rng, phrasing: usize) -> GenTask {
    let marker = *rng.pick(MARKERS);
    let others: Vec<&str> = MARKERS.iter().copied().filter(|m| *m != marker).collect();
    let mut styles: Vec<Style> = words::CODE_LANGS
        .iter()
        .map(|l: &Lang| Style {
            ext: l.ext,
            open: l.comment,
            close: "",
        })
        .chain(MARKUP_STYLES.iter().copied())
        .collect();
    rng.shuffle(&mut styles);
    let count = rng.range(5, 7) as usize;
    let mut chosen: Vec<Style> = styles.into_iter().take(count).collect();
    if rng.chance(50) {
        chosen.push(chosen[rng.below(3)]);
    }
    let stems = rng.distinct(words::NOUNS, chosen.len());
    let dirs = [
        "src", "lib", "app", "pkg", "web", "internal", "db", "config", "scripts", "docs",
    ];
    let mut paths = Vec::new();
    for (style, stem) in chosen.iter().zip(&stems) {
        let depth = rng.below(4);
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
        paths.push(parts.join("/"));
    }
    let targets = rng.range(4, 7) as usize;
    let distractors = rng.range(2, 4) as usize;
    let messages = distinct_texts(rng, targets + distractors, |rng| {
        let (verb, noun) = (rng.pick(words::VERBS), rng.pick(words::NOUNS));
        match rng.below(5) {
            0 => format!("{verb} {noun} data lazily"),
            1 => format!("handle empty {noun} input in {verb}"),
            2 => format!("{verb} the {noun} cache only once"),
            3 => format!("drop the {noun} fallback after the {verb} rewrite"),
            _ => format!("{noun} {verb} ignores the timeout"),
        }
    });
    // Each file's lines, tagged.
    let mut files: Vec<Vec<(String, Tag)>> = Vec::new();
    let mut decoys = 0;
    for (i, style) in chosen.iter().enumerate() {
        let (filler, top) = marker_filler(rng, *style, stems[i]);
        let mut lines: Vec<(String, Tag)> = filler.into_iter().map(|l| (l, Tag::Plain)).collect();
        let word = *rng.pick(&["Open", "Show", "Count", "Hide"]);
        if let (Some(decoy), false) = (marker_decoy(style.ext, marker, word), top.is_empty()) {
            if decoys < 2 && (decoys == 0 || rng.chance(50)) {
                lines.insert(*rng.pick(&top), (decoy, Tag::Decoy));
                decoys += 1;
            }
        }
        files.push(lines);
    }
    // The first three targets in three files of different types, the rest anywhere.
    let mut comments: Vec<(usize, Tag)> = (0..targets)
        .map(|t| {
            (
                if t < 3 { t } else { rng.below(chosen.len()) },
                Tag::Target(t),
            )
        })
        .collect();
    comments.extend((0..distractors).map(|d| (rng.below(chosen.len()), Tag::Other(targets + d))));
    for (file, tag) in comments {
        let style = chosen[file];
        let (word, index) = match tag {
            Tag::Target(i) => (marker, i),
            Tag::Other(i) => (*rng.pick(&others), i),
            _ => continue,
        };
        let body = match rng.below(4) {
            0 => format!(
                "{word}({}): {}",
                rng.pick(words::PEOPLE).to_lowercase(),
                messages[index]
            ),
            1 => format!("{word} {}", messages[index]),
            _ => format!("{word}: {}", messages[index]),
        };
        insert_comment(rng, &mut files[file], style, &body, tag);
    }
    let out = match rng.below(6) {
        0 => "markers.txt".to_string(),
        1 => format!("{}s.txt", marker.to_lowercase()),
        2 => format!("reports/{}-list.txt", marker.to_lowercase()),
        3 => format!("{}_report.txt", marker.to_lowercase()),
        4 => "audit/markers.log".to_string(),
        _ => format!("notes/open-{}s.md", marker.to_lowercase()),
    };
    let mut task = GenTask::default();
    let mut found: Vec<(String, usize, String, &str)> = Vec::new();
    for (i, lines) in files.iter().enumerate() {
        let path = &paths[i];
        let mut text = String::new();
        for (n, (line, tag)) in lines.iter().enumerate() {
            text.push_str(line);
            text.push('\n');
            let at = n + 1;
            match tag {
                Tag::Target(t) => {
                    task.grade.push(file_matches(
                        &out,
                        format!(
                            r"(?m)^(?:\./)?{}:{at}:.*{}",
                            regex::escape(path),
                            regex::escape(&messages[*t])
                        ),
                    ));
                    let body = line
                        .trim()
                        .trim_start_matches(chosen[i].open)
                        .trim_end_matches(chosen[i].close);
                    found.push((path.clone(), at, body.trim().to_string(), chosen[i].ext));
                }
                Tag::Other(o) => task.grade.push(file_lacks(&out, &messages[*o])),
                Tag::Decoy => task.grade.push(file_lacks(&out, &format!("{path}:{at}:"))),
                Tag::Plain => {}
            }
        }
        task.files.insert(path.clone(), text);
    }
    found.sort();
    let listing = |only: Option<&str>| -> String {
        found
            .iter()
            .filter(|f| only.is_none_or(|ext| f.3 == ext))
            .map(|(path, line, body, _)| format!("{path}:{line}: {body}\n"))
            .collect()
    };
    let others = others.join(", ");
    task.prompt = match phrasing {
        0 => format!(
            "List every {marker} comment in this repo into {out}, one per line as `path:line: text` (path relative to the repo root). Only comments count, not the word inside strings or names."
        ),
        1 => format!(
            "Before the release I'd like an inventory of the {marker} comments still left in this code base, in every kind of file there is, not only the source code. Please collect each comment that carries a {marker} marker and write them to the file `{out}`, one per line, in the form `path:line: text`, where path is relative to the project root, line is the 1-based line number and text is what the comment says. The word {marker} inside a string literal or an identifier is not a comment, so leave those out, and leave out the other markers ({others}) as well."
        ),
        2 => format!(
            "Could you find all the {marker} comments in this project, whatever the file type, and put them in {out}? One per line, formatted `path:line: text`, with paths from the project root. A {marker} that is part of a string or a variable name doesn't count."
        ),
        3 => format!(
            "Collect the {marker} markers from comments across all files.\nOutput: {out}\nLine format: <path>:<line>: <comment text>\nPaths relative to the root, lines numbered from 1. Skip {marker} inside strings and identifiers, and skip {others}."
        ),
        4 => format!(
            "Hi! Hope your day is going well. When you have a moment, would you gather up every {marker} comment in this repository for me? Please write them into {out} as `path:line: text` lines, one per comment, paths relative to the repository root. Comments in any file type count; mentions of {marker} in code strings or names don't. Thank you so much!"
        ),
        _ => format!(
            "Write {out} listing each {marker} comment in the codebase (`path:line: text` per line, path from the top of the workspace). Real comments only — not strings, not identifiers, not the other tags."
        ),
    };
    let first_ext = chosen[0].ext;
    task.solution = Outcome::write(out.clone(), listing(None));
    task.mistake = Outcome::write(out, listing(Some(first_ext)));
    task
}
