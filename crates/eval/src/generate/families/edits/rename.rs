//! Renaming a function across the files of one language, while a longer name that starts
//! with the old one stays.

use std::collections::BTreeMap;

use serde_json::{json, Value};

use super::py_json;
use crate::generate::words::{self, python_check, Lang};
use crate::generate::{GenTask, Outcome, Rng};

/// Things a function loads or stores.
const ENTITIES: &[&str] = &[
    "user", "order", "invoice", "account", "report", "session", "token", "profile", "ticket",
    "record", "shipment", "payment", "customer", "device",
];

/// What a longer function name adds to the short one.
const SUFFIXES: &[&str] = &["list", "all", "batch", "cached", "many", "raw", "safe"];

/// Names of files that call a function.
const CALLERS: &[&str] = &[
    "handlers", "routes", "jobs", "cli", "worker", "views", "sync", "admin", "tasks",
];

/// The language's name in prose.
fn lang_name(ext: &str) -> &'static str {
    match ext {
        "py" => "Python",
        "js" => "JavaScript",
        "ts" => "TypeScript",
        "rs" => "Rust",
        "go" => "Go",
        "rb" => "Ruby",
        _ => "shell",
    }
}

/// Whether the language names functions in camelCase.
fn camel_case(ext: &str) -> bool {
    matches!(ext, "js" | "ts" | "go")
}

/// Whether `c` is part of a word (an identifier).
fn word_char(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

/// The byte offsets where `name` stands as a whole word in `text`.
fn word_at(text: &str, name: &str) -> Vec<usize> {
    text.match_indices(name)
        .filter(|(i, _)| {
            let before = text[..*i].chars().next_back().is_some_and(word_char);
            let after = text[i + name.len()..].chars().next().is_some_and(word_char);
            !before && !after
        })
        .map(|(i, _)| i)
        .collect()
}

/// `text` with `name` replaced by `new` where it stands as a whole word.
fn replace_word(text: &str, name: &str, new: &str) -> String {
    let mut out = String::new();
    let mut last = 0;
    for i in word_at(text, name) {
        out.push_str(&text[last..i]);
        out.push_str(new);
        last = i + name.len();
    }
    out.push_str(&text[last..]);
    out
}

/// The definition file: the function and the longer one, which calls it.
fn definition(lang: &Lang, old: &str, longer: &str, package: &str, longer_first: bool) -> String {
    let ext = lang.ext;
    let short = lang.function(old, "");
    let long = match ext {
        "py" => format!("def {longer}(values):\n    return [{old}(v) for v in values]\n"),
        "js" => format!("function {longer}(values) {{\n  return values.map((v) => {old}(v));\n}}\n"),
        "ts" => format!(
            "export function {longer}(values: string[]): string[] {{\n  return values.map((v) => {old}(v));\n}}\n"
        ),
        "rs" => format!(
            "pub fn {longer}<'a>(values: &[&'a str]) -> Result<Vec<&'a str>, String> {{\n    values.iter().map(|v| {old}(v)).collect()\n}}\n"
        ),
        "go" => format!(
            "func {longer}(values []string) ([]string, error) {{\n\tout := make([]string, 0, len(values))\n\tfor _, v := range values {{\n\t\tr, err := {old}(v)\n\t\tif err != nil {{\n\t\t\treturn nil, err\n\t\t}}\n\t\tout = append(out, r)\n\t}}\n\treturn out, nil\n}}\n"
        ),
        "rb" => format!("def {longer}(values)\n  values.map {{ |v| {old}(v) }}\nend\n"),
        _ => format!("{longer}() {{\n  for v in \"$@\"; do\n    {old} \"$v\"\n  done\n}}\n"),
    };
    let (a, b) = if longer_first {
        (long, short)
    } else {
        (short, long)
    };
    let gap = if ext == "py" { "\n\n" } else { "\n" };
    let head = match ext {
        "go" => format!("package {package}\n\n"),
        "sh" => "#!/bin/sh\n\n".to_string(),
        _ => String::new(),
    };
    let tail = if ext == "js" {
        format!("\nmodule.exports = {{ {old}, {longer} }};\n")
    } else {
        String::new()
    };
    format!("{head}{a}{gap}{b}{tail}")
}

/// A call of `func` stored in `var`; `many` passes a list.
fn call(ext: &str, var: &str, func: &str, many: bool) -> String {
    let arg = match (ext, many) {
        (_, false) if ext == "sh" => "\"$1\"",
        (_, false) => "request",
        ("rs", true) => "&[request]",
        ("go", true) => "[]string{request}",
        ("sh", true) => "\"$@\"",
        _ => "[request]",
    };
    match ext {
        "py" => format!("    {var} = {func}({arg})\n"),
        "rb" => format!("  {var} = {func}({arg})\n"),
        "js" | "ts" => format!("  const {var} = {func}({arg});\n"),
        "rs" => format!("    let {var} = {func}({arg})?;\n"),
        "go" => {
            format!("\t{var}, err := {func}({arg})\n\tif err != nil {{\n\t\treturn err\n\t}}\n\t_ = {var}\n")
        }
        _ => format!("  {var}=$({func} {arg})\n"),
    }
}

/// A handler function around `body`, returning `var`.
fn handler(ext: &str, name: &str, body: &str, var: &str) -> String {
    match ext {
        "py" => format!("def {name}(request):\n{body}    return {var}\n"),
        "js" => format!("function {name}(request) {{\n{body}  return {var};\n}}\n"),
        "ts" => format!("export function {name}(request: string) {{\n{body}  return {var};\n}}\n"),
        "rs" => format!("pub fn {name}(request: &str) -> Result<(), String> {{\n{body}    println!(\"{{:?}}\", {var});\n    Ok(())\n}}\n"),
        "go" => format!("func {name}(request string) error {{\n{body}\treturn nil\n}}\n"),
        "rb" => format!("def {name}(request)\n{body}  {var}\nend\n"),
        _ => format!("{name}() {{\n{body}  echo \"${var}\"\n}}\n"),
    }
}

/// The lines a caller starts with to reach `names` in the definition file.
fn import(
    ext: &str,
    module: &str,
    base: &str,
    nested: bool,
    names: &[String],
    package: &str,
) -> String {
    let up = if nested { "../" } else { "./" };
    let list = names.join(", ");
    match ext {
        "py" => {
            let dotted: String = base
                .split('/')
                .filter(|p| !p.is_empty())
                .map(|p| format!("{p}."))
                .collect();
            format!("from {dotted}{module} import {list}\n\n\n")
        }
        "js" => format!("const {{ {list} }} = require(\"{up}{module}\");\n\n"),
        "ts" => format!("import {{ {list} }} from \"{up}{module}\";\n\n"),
        "rs" if names.len() == 1 => format!("use crate::{module}::{list};\n\n"),
        "rs" => format!("use crate::{module}::{{{list}}};\n\n"),
        "go" => format!("package {package}\n\n"),
        "rb" => format!(
            "require_relative \"{}{module}\"\n\n",
            if nested { "../" } else { "" }
        ),
        _ => format!(
            "#!/bin/sh\n. \"$(dirname \"$0\")/{}{module}.sh\"\n\n",
            if nested { "../" } else { "" }
        ),
    }
}

/// Builds a `rename-function` task.
pub(super) fn rename_function(rng: &mut Rng, phrasing: usize) -> GenTask {
    let lang = *rng.pick(words::CODE_LANGS);
    let ext = lang.ext;
    let verbs = rng.distinct(words::VERBS, 2);
    let things = rng.distinct(ENTITIES, 2);
    let suffix = *rng.pick(SUFFIXES);
    let style = |s: String| if camel_case(ext) { words::camel(&s) } else { s };
    let old = style(format!("{}_{}", verbs[0], things[0]));
    let longer = style(format!("{}_{}_{suffix}", verbs[0], things[0]));
    let new = style(if rng.chance(50) {
        format!("{}_{}", verbs[1], things[0])
    } else {
        format!("{}_{}", verbs[0], things[1])
    });
    let entity = things[0];
    let module = rng
        .pick(&[
            format!("{entity}s"),
            format!("{entity}_store"),
            format!("{entity}_repo"),
        ])
        .clone();
    let package = format!("{entity}s");
    let base = match ext {
        "rs" => "src/",
        "go" => *rng.pick(&["", "internal/store/", "pkg/records/"]),
        "py" => *rng.pick(&["", "app/", "lib/"]),
        _ => *rng.pick(&["", "src/", "lib/", "app/"]),
    };
    let def_path = format!("{base}{module}.{ext}");
    let mut files = BTreeMap::new();
    files.insert(
        def_path.clone(),
        definition(&lang, &old, &longer, &package, rng.chance(50)),
    );
    let callers = 1 + rng.below(3);
    let names = rng.distinct(CALLERS, callers + 1);
    let subs = rng.distinct(
        &["handlers", "jobs", "api", "services", "commands"],
        callers + 1,
    );
    let nouns = rng.distinct(words::NOUNS, 2 * callers + 2);
    let mut caller_paths = Vec::new();
    for (i, name) in names.iter().enumerate() {
        let distractor = i == callers;
        if distractor && rng.chance(40) {
            continue;
        }
        let nested = ext != "go" && rng.chance(60);
        let dir = if nested {
            format!("{base}{}/", subs[i])
        } else {
            base.to_string()
        };
        let uses_longer = distractor || rng.chance(50);
        let mut imported = Vec::new();
        if !distractor {
            imported.push(old.clone());
        }
        if uses_longer {
            imported.push(longer.clone());
        }
        let mut text = import(ext, &module, base, nested, &imported, &package);
        let handlers = if distractor { 1 } else { 1 + rng.below(2) };
        for h in 0..handlers {
            let hname = style(format!("handle_{}", nouns[2 * i + h]));
            let mut body = String::new();
            let mut var = entity.to_string();
            if !distractor {
                body.push_str(&call(ext, entity, &old, false));
            }
            if uses_longer && (h == 0 || distractor) {
                var = format!("{entity}s");
                body.push_str(&call(ext, &var, &longer, true));
            }
            if h > 0 {
                text.push('\n');
                if ext == "py" {
                    text.push_str("\n\n");
                }
            }
            text.push_str(&handler(ext, &hname, &body, &var));
        }
        let path = format!("{dir}{name}.{ext}");
        files.insert(path.clone(), text);
        if !distractor {
            caller_paths.push(path);
        }
    }
    let checked: Vec<(String, bool, usize)> = files
        .iter()
        .map(|(p, t)| {
            (
                p.clone(),
                !word_at(t, &old).is_empty(),
                word_at(t, &longer).len(),
            )
        })
        .collect();
    let renamed = checked
        .iter()
        .filter(|(_, has, _)| *has)
        .map(|(p, _, _)| json!(p))
        .collect::<Vec<_>>();
    let counts: serde_json::Map<String, Value> = checked
        .iter()
        .map(|(p, _, n)| (p.clone(), json!(n)))
        .collect();
    let script_head = format!(
        "import json, re, sys\nold, new, longer = {}, {}, {}\n",
        Value::String(old.clone()),
        Value::String(new.clone()),
        Value::String(longer.clone())
    );
    let renamed_check = format!(
        "{script_head}for p in {}:\n    t = open(p).read()\n    \
         if re.search(r\"\\b\" + re.escape(old) + r\"\\b\", t): sys.exit(p + \": old name left\")\n    \
         if not re.search(r\"\\b\" + re.escape(new) + r\"\\b\", t): sys.exit(p + \": no new name\")\n",
        py_json(&Value::Array(renamed))
    );
    let longer_check = format!(
        "{script_head}for p, n in {}.items():\n    \
         if len(re.findall(r\"\\b\" + re.escape(longer) + r\"\\b\", open(p).read())) != n: \
         sys.exit(p + \": longer name changed\")\n",
        py_json(&Value::Object(counts))
    );
    let solution_writes: Vec<(String, String)> = files
        .iter()
        .filter(|(_, t)| !word_at(t, &old).is_empty())
        .map(|(p, t)| (p.clone(), replace_word(t, &old, &new)))
        .collect();
    let mistake_writes: Vec<(String, String)> = if rng.chance(50) {
        files
            .iter()
            .map(|(p, t)| (p.clone(), t.replace(&old, &new)))
            .collect()
    } else {
        let missed = caller_paths.last().cloned().unwrap_or_default();
        solution_writes
            .iter()
            .filter(|(p, _)| *p != missed)
            .cloned()
            .collect()
    };
    let language = lang_name(ext);
    let prompt = match phrasing {
        0 => format!("Rename `{old}` to `{new}` everywhere."),
        1 => format!(
            "The {language} function `{old}`, defined in {def_path}, has a misleading name. \
             Please rename it to `{new}`: the definition, every import and every call site \
             across the codebase. No other function should change its name."
        ),
        2 => format!(
            "Can you rename the function {old} to {new} throughout this project, including \
             all the places that call it?"
        ),
        3 => format!(
            "Rename the function {old} to {new} in all .{ext} files. Note that `{longer}` is a \
             different function and keeps its name (calls to {old} inside it do change)."
        ),
        4 => format!(
            "Hi there! We decided that {new} is a clearer name than {old}. Would you be so kind \
             as to rename that function, at its definition and in all its callers? Many thanks!"
        ),
        _ => format!("refactor: {old} -> {new} (defined in {def_path}; update the callers too)"),
    };
    GenTask {
        prompt,
        files,
        grade: vec![python_check(&renamed_check), python_check(&longer_check)],
        solution: Outcome {
            writes: solution_writes,
            answer: Some("Renamed.".into()),
            ..Outcome::default()
        },
        mistake: Outcome {
            writes: mistake_writes,
            answer: Some("Renamed.".into()),
            ..Outcome::default()
        },
        ..GenTask::default()
    }
}
