//! The fix-build chore: a build that fails on one broken reference (a misspelled
//! file, a wrong module name, a folder nobody creates).

use std::collections::BTreeMap;

use super::join;
use crate::generate::words::{self, command};
use crate::generate::{GenTask, Outcome, Rng};

/// `word` with two neighbouring letters swapped, never equal to any of `taken`.
fn misspell(rng: &mut Rng, word: &str, taken: &[&str]) -> String {
    let chars: Vec<char> = word.chars().collect();
    let spots: Vec<usize> = (1..chars.len().saturating_sub(1))
        .filter(|&i| chars[i] != chars[i + 1])
        .collect();
    let mut out = if spots.is_empty() {
        format!("{word}s")
    } else {
        let i = *rng.pick(&spots);
        let mut swapped = chars.clone();
        swapped.swap(i, i + 1);
        swapped.into_iter().collect()
    };
    while out == word || taken.contains(&out.as_str()) {
        out.push('_');
    }
    out
}

/// A broken build: the file to fix with its broken, fixed and step-dropped texts, the
/// product and what the product must hold (`__count N`: exactly N lines).
struct Broken {
    /// The file that holds the broken reference.
    file: String,
    /// Its text in the workspace.
    broken: String,
    /// Its text once fixed.
    fixed: String,
    /// Its text with the failing step dropped (the typical mistake).
    dropped: String,
    /// What the build makes.
    product: String,
    /// Lines the product must hold.
    markers: Vec<String>,
}

/// Concatenated parts, by `build.sh` or a Makefile, one part misspelled.
fn cat_typo(
    rng: &mut Rng,
    files: &mut BTreeMap<String, String>,
    make: bool,
    script: &str,
    dist: &str,
    project: &str,
    version: &str,
) -> Broken {
    let pool = [
        "header", "intro", "body", "content", "footer", "summary", "notes", "chapter", "appendix",
        "preface",
    ];
    let parts = rng.distinct(&pool, 3);
    let ext = *rng.pick(&["txt", "html", "md"]);
    let src = *rng.pick(&["src", "parts", "pages", "content"]);
    let product = join(
        dist,
        &format!("{}.{ext}", rng.pick(&[project, "index", "bundle"])),
    );
    let bad = rng.below(3);
    let typo = misspell(rng, parts[bad], &parts);
    let mut markers = Vec::new();
    for part in &parts {
        let line = format!("{part} of {project} {}", words::code(rng, 6));
        files.insert(format!("{src}/{part}.{ext}"), format!("{line}\n"));
        markers.push(line);
    }
    markers.push(format!("version {version}"));
    let list = |with_typo: bool, skip: bool| -> String {
        parts
            .iter()
            .enumerate()
            .filter(|(i, _)| !(skip && *i == bad))
            .map(|(i, p)| {
                format!(
                    "{src}/{}.{ext}",
                    if with_typo && i == bad {
                        typo.as_str()
                    } else {
                        p
                    }
                )
            })
            .collect::<Vec<_>>()
            .join(" ")
    };
    let text = |list: String| {
        if make {
            format!(
                "all: {product}\n\n{product}: {list}\n\tmkdir -p {dist}\n\tcat $^ > $@\n\t\
                 echo \"version {version}\" >> $@\n\n.PHONY: all\n"
            )
        } else {
            format!(
                "#!/bin/sh\nset -e\nmkdir -p {dist}\ncat {list} > {product}\n\
                 echo \"version {version}\" >> {product}\necho \"built {product}\"\n"
            )
        }
    };
    Broken {
        file: if make {
            "Makefile".to_string()
        } else {
            script.to_string()
        },
        broken: text(list(true, false)),
        fixed: text(list(false, false)),
        dropped: text(list(false, true)),
        product,
        markers,
    }
}

/// A Python or Node generator whose import names a module that is not there.
fn wrong_module(
    rng: &mut Rng,
    files: &mut BTreeMap<String, String>,
    python: bool,
    script: &str,
    dist: &str,
    project: &str,
) -> Broken {
    let dir = *rng.pick(&["tools", "scripts", "gen"]);
    let (module, wrong) = if python {
        *rng.pick(&[
            ("text_fmt", "textfmt"),
            ("helpers", "helper"),
            ("formatting", "formating"),
            ("render_utils", "render_util"),
            ("strutil", "str_util"),
        ])
    } else {
        *rng.pick(&[
            ("format", "formt"),
            ("banner", "baner"),
            ("text-utils", "text_utils"),
            ("render", "renderer"),
            ("strings", "string"),
        ])
    };
    let function = *rng.pick(if python {
        &["banner", "heading", "title_line"]
    } else {
        &["banner", "heading", "titleLine"]
    });
    let (left, right) = *rng.pick(&[
        ("== ", " =="),
        ("## ", ""),
        ("*** ", " ***"),
        (">> ", " <<"),
    ]);
    let title = format!(
        "{project} {}",
        rng.pick(&["release notes", "status report", "changelog", "team digest"])
    );
    let items: Vec<String> = rng
        .distinct(words::PRODUCTS, 3)
        .iter()
        .map(|p| format!("{p} {}", words::code(rng, 4)))
        .collect();
    let quoted = items
        .iter()
        .map(|i| format!("{i:?}"))
        .collect::<Vec<_>>()
        .join(", ");
    let product = join(dist, &format!("{project}.txt"));
    // The main file's text, importing `from` (None: no import, the helpers inlined away).
    let main_text = |from: Option<&str>| -> String {
        let (head, shown, line) = match from {
            Some(m) => (
                if python {
                    format!("from {m} import {function}, bullet\n\n")
                } else {
                    format!("const {{ {function}, bullet }} = require(\"./lib/{m}\");\n\n")
                },
                format!("{function}({title:?})"),
                "bullet(item)",
            ),
            None => (String::new(), format!("{title:?}"), "\"- \" + item"),
        };
        if python {
            format!("{head}ITEMS = [{quoted}]\n\nprint({shown})\nfor item in ITEMS:\n    print({line})\n")
        } else {
            format!("{head}const items = [{quoted}];\n\nconsole.log({shown});\nfor (const item of items) {{\n  console.log({line});\n}}\n")
        }
    };
    let (main, runner) = if python {
        files.insert(
            format!("{dir}/{module}.py"),
            format!(
                "\"\"\"Formatting helpers for the build.\"\"\"\n\n\ndef {function}(text):\n    \
                 return {left:?} + text.upper() + {right:?}\n\n\ndef bullet(item):\n    return \"- \" + item\n"
            ),
        );
        (format!("{dir}/generate.py"), "python3")
    } else {
        files.insert(
            format!("{dir}/lib/{module}.js"),
            format!(
                "function {function}(text) {{\n  return {left:?} + text.toUpperCase() + {right:?};\n}}\n\n\
                 function bullet(item) {{\n  return \"- \" + item;\n}}\n\nmodule.exports = {{ {function}, bullet }};\n"
            ),
        );
        (format!("{dir}/build.js"), "node")
    };
    files.insert(
        script.to_string(),
        format!("#!/bin/sh\nset -e\nmkdir -p {dist}\n{runner} {main} > {product}\necho \"built {product}\"\n"),
    );
    let mut markers = vec![format!("{left}{}{right}", title.to_uppercase())];
    markers.extend(items.iter().map(|i| format!("- {i}")));
    Broken {
        file: main,
        broken: main_text(Some(wrong)),
        fixed: main_text(Some(module)),
        dropped: main_text(None),
        product,
        markers,
    }
}

/// `build.sh` writes a sorted list into a folder nobody creates.
fn missing_dir(
    rng: &mut Rng,
    files: &mut BTreeMap<String, String>,
    script: &str,
    version: &str,
) -> Broken {
    let src = *rng.pick(&["data", "lists", "input"]);
    let out = *rng.pick(&["reports", "out/lists", "generated", "results"]);
    let list = *rng.pick(&["names", "hosts", "tags", "owners"]);
    let count = 6 + rng.below(5);
    let unique = rng.distinct(words::NOUNS, count);
    let mut lines: Vec<&str> = unique.clone();
    lines.extend(rng.distinct(&unique, 3));
    rng.shuffle(&mut lines);
    files.insert(
        format!("{src}/{list}.txt"),
        lines.iter().map(|l| format!("{l}\n")).collect(),
    );
    let product = format!("{out}/{list}_sorted.txt");
    let text = |mkdir: bool, step: bool| {
        format!(
            "#!/bin/sh\nset -e\n{}mkdir -p logs\necho \"build {version} started\" > logs/build.log\n{}\
             echo \"build {version} done\" >> logs/build.log\n",
            if mkdir { format!("mkdir -p {out}\n") } else { String::new() },
            if step { format!("sort -u {src}/{list}.txt > {product}\n") } else { String::new() }
        )
    };
    let mut markers: Vec<String> = unique.iter().take(3).map(|u| u.to_string()).collect();
    markers.push(format!("__count {}", unique.len()));
    Broken {
        file: script.to_string(),
        broken: text(false, true),
        fixed: text(true, true),
        dropped: text(false, false),
        product,
        markers,
    }
}

/// Builds a fix-build task.
pub(super) fn fix_build(rng: &mut Rng, phrasing: usize) -> GenTask {
    let breakage = rng.below(5);
    let project = *rng.pick(words::NOUNS);
    let script = *rng.pick(&["build.sh", "scripts/build.sh", "ci/build.sh"]);
    let build = if breakage == 1 {
        "make".to_string()
    } else {
        format!("sh {script}")
    };
    let dist = *rng.pick(&["dist", "build", "public", "out"]);
    let version = format!(
        "{}.{}.{}",
        rng.range(0, 4),
        rng.range(0, 19),
        rng.range(0, 9)
    );
    let mut files = BTreeMap::new();
    files.insert(
        "README.md".into(),
        format!("# {project}\n\nBuild with `{build}`.\n"),
    );
    let broken = match breakage {
        0 | 1 => cat_typo(
            rng,
            &mut files,
            breakage == 1,
            script,
            dist,
            project,
            &version,
        ),
        2 | 3 => wrong_module(rng, &mut files, breakage == 2, script, dist, project),
        _ => missing_dir(rng, &mut files, script, &version),
    };
    files.insert(broken.file.clone(), broken.broken.clone());
    let product = broken.product.clone();
    let checks: Vec<String> = broken
        .markers
        .iter()
        .map(|m| match m.strip_prefix("__count ") {
            Some(n) => format!("[ \"$(wc -l < {product})\" -eq {n} ]"),
            None => format!("grep -qF -- {} {product}", words::shell_quote(m)),
        })
        .collect();
    let quiet = format!("{build} >/dev/null 2>&1");
    let prompt = match phrasing {
        0 => format!("`{build}` fails; fix it so it produces `{product}`."),
        1 => format!(
            "Our build is broken: running `{build}` from the workspace root exits with an error \
             instead of producing `{product}`. Please find what is wrong and fix it, keeping \
             everything the build is supposed to do."
        ),
        2 => format!("Why does `{build}` fail here? Can you fix the problem so the build goes through and `{product}` gets built?"),
        3 => format!("Fix the build.\nCommand: `{build}`\nExpected output: `{product}`\nDo not remove build steps."),
        4 => format!(
            "Hey, hope you're well! I tried `{build}` this morning and it errors out. Could you \
             please take a look and get it working again, so that it produces `{product}` like it \
             used to? Thanks!"
        ),
        _ => format!("Make `{build}` succeed again. It should still do all of its steps and leave `{product}` behind."),
    };
    let file = broken.file;
    GenTask {
        prompt,
        files,
        grade: vec![
            command(build.clone()),
            command(format!(
                "{quiet}; test -f {product} && {}",
                checks.join(" && ")
            )),
        ],
        solution: Outcome {
            writes: vec![(file.clone(), broken.fixed)],
            answer: Some(format!(
                "Fixed the broken reference in {file}; `{build}` now builds {product}."
            )),
            ..Outcome::default()
        },
        mistake: Outcome {
            writes: vec![(file, broken.dropped)],
            answer: Some("Removed the failing step; the build passes now.".into()),
            ..Outcome::default()
        },
        ..GenTask::default()
    }
}
