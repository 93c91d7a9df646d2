//! The title-index family: an index of a docs tree's document titles, read from each
//! Markdown heading or HTML `<title>`.

use super::{capital, distinct_texts, file_matches};
use crate::generate::words::{self, file_lacks};
use crate::generate::{GenTask, Outcome, Rng};

/// Folders inside a docs tree.
const DOC_DIRS: &[&str] = &[
    "guides",
    "api",
    "ops",
    "howto",
    "reference",
    "team",
    "setup",
    "internals",
    "runbooks",
    "faq",
];

/// Document file stems.
const DOC_STEMS: &[&str] = &[
    "intro",
    "overview",
    "install",
    "usage",
    "deploy",
    "questions",
    "index",
    "limits",
    "backups",
    "errors",
    "glossary",
    "changelog",
    "upgrade",
    "testing",
    "security",
    "tuning",
];

/// A document title that the file name does not give away.
fn doc_title(rng: &mut Rng) -> String {
    let (a, b) = (*rng.pick(words::NOUNS), *rng.pick(words::NOUNS));
    let (a, b) = (capital(a), capital(b));
    match rng.below(10) {
        0 => format!("{a} Rollout Checklist"),
        1 => format!("Running {a} in Production"),
        2 => format!("How {a} Talks to {b}"),
        3 => format!("Notes on {a} Retention"),
        4 => format!("{a} Failure Modes"),
        5 => format!("A Tour of the {a} Service"),
        6 => format!("When {a} Falls Behind"),
        7 => format!("{a} On-Call Handbook"),
        8 => format!("Migrating {a} Data"),
        _ => format!("{a} and {b} Limits"),
    }
}

/// A Markdown document titled `title`: maybe a line before it, a code block with a `#`
/// comment, maybe a second top-level heading.
fn markdown_doc(rng: &mut Rng, title: &str, later: &str) -> String {
    let noun = rng.pick(words::NOUNS);
    let mut text = String::new();
    match rng.below(3) {
        0 => text.push_str(&format!("<!-- owned by the {noun} team -->\n\n")),
        1 => text.push_str(&format!(
            "> Last reviewed: 2024-{:02}-{:02}\n\n",
            rng.range(1, 12),
            rng.range(1, 28)
        )),
        _ => {}
    }
    text.push_str(&format!(
        "# {title}\n\nThis page covers the {noun} side of things.\n\n## Steps\n\n```sh\n# {later}\nmake {noun}\n```\n"
    ));
    if rng.chance(60) {
        let section = *rng.pick(words::NOUNS);
        text.push_str(&format!(
            "\n# Appendix: {}\n\nMore about {noun}.\n",
            capital(section)
        ));
    }
    text
}

/// An HTML page whose `<title>` is `title` and whose `<h1>` says something else.
fn html_doc(rng: &mut Rng, title: &str) -> String {
    let noun = rng.pick(words::NOUNS);
    format!(
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n  <meta charset=\"utf-8\">\n  <title>{title}</title>\n</head>\n<body>\n  <h1>{} overview</h1>\n  <p>Pages about {noun}.</p>\n</body>\n</html>\n",
        capital(noun)
    )
}

pub(super) fn title_index(rng: &mut Rng, phrasing: usize) -> GenTask {
    let root = *rng.pick(&["docs", "handbook", "wiki", "site/pages", "documentation"]);
    // 0: Markdown, 1: HTML, 2: both.
    let mode = rng.below(3);
    let exclude = matches!(phrasing, 1 | 3 | 4);
    let count = rng.range(5, 8) as usize;
    let dirs = rng.distinct(DOC_DIRS, 4);
    let stems = rng.distinct(DOC_STEMS, count + 2);
    let titles = distinct_texts(rng, count + 5, doc_title);
    let ext_of = |i: usize, rng: &mut Rng| match mode {
        0 => "md",
        1 => "html",
        _ if i < 2 => ["md", "html"][i],
        _ => *rng.pick(&["md", "html"]),
    };
    let mut docs: Vec<(String, String, String)> = Vec::new();
    for i in 0..count {
        let depth = match i {
            0 => 1,
            1 => 3,
            2 => 2,
            _ => rng.range(1, 3) as usize,
        };
        let dir = match depth {
            1 => root.to_string(),
            2 => format!("{root}/{}", dirs[rng.below(2)]),
            _ => format!("{root}/{}/{}", dirs[0], dirs[2]),
        };
        let ext = ext_of(i, rng);
        docs.push((
            format!("{dir}/{}.{ext}", stems[i]),
            titles[i].clone(),
            stems[i].to_string(),
        ));
    }
    let later = doc_title(rng);
    let mut task = GenTask::default();
    let write_doc = |task: &mut GenTask, rng: &mut Rng, path: &str, title: &str| {
        let text = if path.ends_with(".md") {
            markdown_doc(rng, title, &later)
        } else {
            html_doc(rng, title)
        };
        task.files.insert(path.to_string(), text);
    };
    for (path, title, _) in &docs {
        write_doc(&mut task, rng, path, title);
    }
    let left_out = *rng.pick(&["drafts", "archive", "_drafts", "old"]);
    let mut lacking = vec![titles[count].clone()];
    task.files.insert(
        "README.md".into(),
        format!(
            "# {}\n\nSee `{root}/` for the documentation.\n",
            titles[count]
        ),
    );
    if exclude {
        for k in 0..rng.range(1, 2) as usize {
            let path = format!("{root}/{left_out}/{}.{}", stems[count + k], ext_of(k, rng));
            write_doc(&mut task, rng, &path, &titles[count + 1 + k]);
            lacking.push(titles[count + 1 + k].clone());
        }
    }
    let look_alike = titles[count + 3].clone();
    if mode == 0 {
        task.files.insert(
            format!("{root}/snippets/setup.sh"),
            format!("#!/bin/sh\n# {look_alike}\nmake all\n"),
        );
    } else {
        task.files.insert(
            format!("{root}/assets/logo.svg"),
            format!("<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"16\" height=\"16\">\n  <title>{look_alike}</title>\n  <rect width=\"16\" height=\"16\"/>\n</svg>\n"),
        );
    }
    lacking.push(look_alike);
    let out = rng
        .pick(&[
            "doc-index.txt",
            "TITLES.md",
            "index/titles.txt",
            "reports/doc-titles.md",
        ])
        .to_string();
    docs.sort();
    for (path, title, _) in &docs {
        task.grade.push(file_matches(
            &out,
            format!(
                r"(?m)^[ \t]*-[ \t]+(?:\./)?{}:[ \t]*{}[ \t]*$",
                regex::escape(path),
                regex::escape(title)
            ),
        ));
    }
    for title in &lacking {
        task.grade.push(file_lacks(&out, title));
    }
    let kind = ["Markdown document (its title is the first `# ` heading)", "HTML page (its title is the `<title>` element)", "Markdown document (title: the first `# ` heading) and HTML page (title: the `<title>` element)"][mode];
    let kinds = [
        "Markdown files",
        "HTML pages",
        "Markdown and HTML documents",
    ][mode];
    task.prompt = match phrasing {
        0 => format!(
            "Make {out}: one line `- path: title` for every {kind} under {root}/, path relative to the workspace root."
        ),
        1 => format!(
            "We need an index of our documentation. Please go through every {kind} in the {root}/ tree, subfolders included, and write the index to {out}, one line per document in the form `- path: title`, where path is relative to the workspace root (so it starts with `{root}/`) and title is the document's real title as written in the file. The {root}/{left_out}/ folder is not published, so leave everything in it out."
        ),
        2 => format!(
            "What are the titles of the {kinds} under {root}/? Write them to {out} as `- path: title` lines (one per document, paths from the workspace root, titles as the files state them: first `# ` heading for Markdown, `<title>` for HTML)."
        ),
        3 => format!(
            "Index the titles of the {kinds} in {root}/ (all depths) into {out}. Format per line: `- <path>: <title>`, path from the workspace root. Title = first `# ` heading of a Markdown file, `<title>` of an HTML file. Skip {root}/{left_out}/."
        ),
        4 => format!(
            "Hello! Would you be so kind as to put together a list of document titles for me? For every {kind} inside {root}/ (and its subfolders), add a line `- path: title` to {out}, with the path relative to the workspace root. Please don't include anything from {root}/{left_out}/, those aren't ready. Many thanks!"
        ),
        _ => format!(
            "Read each {kind} in {root}/ and its subdirectories and record its title in {out} as `- path: title`, one per line, paths relative to the workspace root."
        ),
    };
    let line = |(path, title, _): &(String, String, String)| format!("- {path}: {title}\n");
    task.solution = Outcome::write(out.clone(), docs.iter().map(line).collect::<String>());
    let mistake: String = if rng.chance(50) {
        docs.iter()
            .map(|(path, _, stem)| format!("- {path}: {}\n", capital(stem)))
            .collect()
    } else {
        let skipped = format!("{root}/{}/", dirs[0]);
        docs.iter()
            .filter(|d| !d.0.starts_with(&skipped))
            .map(line)
            .collect()
    };
    task.mistake = Outcome::write(out, mistake);
    task
}
