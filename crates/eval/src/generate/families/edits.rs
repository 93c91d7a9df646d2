//! Families of edits to files already there: change one nested setting, rename a
//! function across files, bump a version with its changelog, fix the bug a test
//! exposes, replace a value everywhere. Each is graded on the files the run leaves.

/// `replace-everywhere`.
mod address;
/// `fix-by-test`.
mod bugs;
/// `rename-function`.
mod rename;
/// `version-bump`.
mod version;

use std::collections::BTreeMap;

use serde_json::{Map, Value};

use crate::generate::words::{self, distinct_numbers, python_check};
use crate::generate::{Family, GenTask, Outcome, Rng};
use crate::grade::GraderSpec;

/// The families of this file.
pub(super) const FAMILIES: &[Family] = &[
    Family {
        name: "edit-setting",
        kind: "edit",
        about: "change one nested setting in a JSON, TOML, INI or .env file, beside the same key in another section and sibling keys, keeping every other value",
        phrasings: 6,
        build: edit_setting,
    },
    Family {
        name: "rename-function",
        kind: "edit",
        about: "rename a function at its definition and every call site across 2-4 files of one language, while a longer name that starts with the old one keeps its name",
        phrasings: 6,
        build: rename::rename_function,
    },
    Family {
        name: "version-bump",
        kind: "edit",
        about: "bump a package's version in package.json, Cargo.toml or pyproject.toml and add a top CHANGELOG.md entry, while a dependency at the same version stays",
        phrasings: 6,
        build: version::version_bump,
    },
    Family {
        name: "fix-by-test",
        kind: "edit",
        about: "fix the one bug (off-by-one, comparison, operator, default) a Python or Node test script exposes, without touching the test",
        phrasings: 6,
        build: bugs::fix_by_test,
    },
    Family {
        name: "replace-everywhere",
        kind: "edit",
        about: "replace an old URL, host, host:port or email address in 3-6 files of mixed types (code, YAML, Markdown, shell), while a look-alike value stays",
        phrasings: 6,
        build: address::replace_everywhere,
    },
];

/// `value` as a Python literal (a JSON text read by `json.loads`).
fn py_json(value: &Value) -> String {
    let text = serde_json::to_string(value).unwrap_or_default();
    format!("json.loads({})", Value::String(text))
}

/// A structured file format a check can parse with Python's standard library.
#[derive(Clone, Copy, PartialEq, Debug)]
enum Format {
    /// JSON, read with `json`.
    Json,
    /// TOML, read with `tomllib`.
    Toml,
    /// INI, read with `configparser`.
    Ini,
    /// A .env file of `KEY=value` lines.
    Env,
}

impl Format {
    /// Python lines that read the file at `path` into `d` (a dict), after `import json, sys`.
    fn parse(self, path: &str) -> String {
        let p = Value::String(path.to_string());
        match self {
            Format::Json => format!("d = json.load(open({p}))\n"),
            Format::Toml => format!("import tomllib\nd = tomllib.load(open({p}, \"rb\"))\n"),
            Format::Ini => format!(
                "import configparser\nc = configparser.ConfigParser(interpolation=None)\n\
                 if not c.read({p}): sys.exit(\"missing\")\n\
                 d = {{s: dict(c[s]) for s in c.sections()}}\n"
            ),
            Format::Env => format!(
                "d = {{}}\nfor line in open({p}):\n    line = line.strip()\n    \
                 if not line or line.startswith(\"#\"): continue\n    \
                 if line.startswith(\"export \"): line = line[7:]\n    \
                 k, _, v = line.partition(\"=\")\n    d[k.strip()] = v.strip().strip(\"'\\\"\")\n"
            ),
        }
    }

    /// The value as the parsed file holds it: INI and .env values are strings, and a
    /// .env file's sections are one flat list of variables.
    fn parsed(self, value: &Value) -> Value {
        match (self, value) {
            (Format::Env, Value::Object(map)) if map.values().all(Value::is_object) => {
                let flat: Map<String, Value> = map
                    .values()
                    .filter_map(Value::as_object)
                    .flat_map(|m| m.iter().map(|(k, v)| (k.clone(), Format::Ini.parsed(v))))
                    .collect();
                Value::Object(flat)
            }
            (Format::Ini | Format::Env, Value::Object(map)) => Value::Object(
                map.iter()
                    .map(|(k, v)| (k.clone(), self.parsed(v)))
                    .collect(),
            ),
            (Format::Ini | Format::Env, Value::String(_)) => value.clone(),
            (Format::Ini | Format::Env, other) => Value::String(other.to_string()),
            _ => value.clone(),
        }
    }

    /// A check that the file parses and the value at `keys` is `want`.
    fn value_check(self, path: &str, keys: &[String], want: &Value) -> GraderSpec {
        let keys = if self == Format::Env {
            &keys[keys.len().saturating_sub(1)..]
        } else {
            keys
        };
        let index: String = keys
            .iter()
            .map(|k| format!("[{}]", Value::String(k.clone())))
            .collect();
        python_check(&format!(
            "import json, sys\n{}try:\n    got = d{index}\nexcept (KeyError, TypeError):\n    \
             sys.exit(\"no such key\")\nsys.exit(0 if got == {} else \"wrong value\")\n",
            self.parse(path),
            py_json(&self.parsed(want)),
        ))
    }

    /// A check that the file parses into exactly `want`.
    fn whole_check(self, path: &str, want: &Value) -> GraderSpec {
        python_check(&format!(
            "import json, sys\n{}sys.exit(0 if d == {} else \"other values changed\")\n",
            self.parse(path),
            py_json(&self.parsed(want)),
        ))
    }
}

/// Renders a document (an object of objects, scalars first) in `format`; `indent` is
/// JSON's indentation. INI and .env documents are one level of sections deep.
fn render(format: Format, doc: &Map<String, Value>, indent: usize) -> String {
    /// A TOML value: strings quoted, arrays inline.
    fn scalar(v: &Value) -> String {
        match v {
            Value::String(s) => format!("\"{s}\""),
            Value::Array(items) => {
                let items: Vec<String> = items.iter().map(scalar).collect();
                format!("[{}]", items.join(", "))
            }
            other => other.to_string(),
        }
    }
    match format {
        Format::Json => {
            let pad = " ".repeat(indent);
            let formatter = serde_json::ser::PrettyFormatter::with_indent(pad.as_bytes());
            let mut out = Vec::new();
            let mut ser = serde_json::Serializer::with_formatter(&mut out, formatter);
            let _ = serde::Serialize::serialize(doc, &mut ser);
            let mut text = String::from_utf8(out).unwrap_or_default();
            text.push('\n');
            text
        }
        Format::Toml => {
            let mut text = String::new();
            toml_table(&mut text, "", doc, &scalar);
            text.trim_start().to_string()
        }
        Format::Ini => doc
            .iter()
            .map(|(section, keys)| {
                let body: String = keys
                    .as_object()
                    .map(|m| m.iter().map(|(k, v)| format!("{k} = {v}\n")).collect())
                    .unwrap_or_default();
                format!("[{section}]\n{body}\n")
            })
            .collect(),
        Format::Env => doc
            .iter()
            .map(|(_, keys)| {
                let body: String = keys
                    .as_object()
                    .map(|m| m.iter().map(|(k, v)| format!("{k}={v}\n")).collect())
                    .unwrap_or_default();
                format!("{body}\n")
            })
            .collect(),
    }
}

/// Writes a TOML table: its scalars under `[name]`, then its sub-tables.
fn toml_table(
    out: &mut String,
    name: &str,
    table: &Map<String, Value>,
    scalar: &dyn Fn(&Value) -> String,
) {
    let scalars: Vec<_> = table.iter().filter(|(_, v)| !v.is_object()).collect();
    if !scalars.is_empty() {
        if !name.is_empty() {
            out.push_str(&format!("\n[{name}]\n"));
        }
        for (k, v) in scalars {
            out.push_str(&format!("{k} = {}\n", scalar(v)));
        }
    }
    for (k, v) in table {
        if let Value::Object(inner) = v {
            let full = if name.is_empty() {
                k.clone()
            } else {
                format!("{name}.{k}")
            };
            toml_table(out, &full, inner, scalar);
        }
    }
}

/// Puts `key: value` in the table at `path` of `doc`, making the tables on the way.
fn insert_at(doc: &mut Map<String, Value>, path: &[String], key: &str, value: Value) {
    match path.split_first() {
        None => {
            doc.insert(key.to_string(), value);
        }
        Some((first, rest)) => {
            let entry = doc
                .entry(first.clone())
                .or_insert_with(|| Value::Object(Map::new()));
            if let Value::Object(inner) = entry {
                insert_at(inner, rest, key, value);
            }
        }
    }
}

/// The value at `keys` in `doc`, made mutable.
fn at<'a>(doc: &'a mut Map<String, Value>, keys: &[String]) -> Option<&'a mut Value> {
    let (first, rest) = keys.split_first()?;
    let mut value = doc.get_mut(first)?;
    for key in rest {
        value = value.as_object_mut()?.get_mut(key)?;
    }
    Some(value)
}

/// Groups a nested setting can sit under (environments, regions).
const GROUPS: &[&str] = &[
    "production",
    "staging",
    "development",
    "eu",
    "us",
    "canary",
    "default",
    "live",
];

/// Builds an `edit-setting` task.
fn edit_setting(rng: &mut Rng, phrasing: usize) -> GenTask {
    let format = *rng.pick(&[Format::Json, Format::Toml, Format::Ini, Format::Env]);
    let deep = matches!(format, Format::Json | Format::Toml) && rng.chance(60);
    let sections = rng.distinct(words::SECTIONS, 3);
    let numeric: Vec<&str> = words::SETTINGS
        .iter()
        .copied()
        .filter(|s| !matches!(*s, "log_level" | "region"))
        .collect();
    let keys = rng.distinct(&numeric, 5);
    let values = distinct_numbers(rng, 9, 2, 9_999);
    let new = values[8];
    let service = *rng.pick(words::NOUNS);
    let (env, upper) = (format == Format::Env, |s: &str| s.to_uppercase());
    let key_name = |section: &str, key: &str| {
        if env {
            format!("{}_{}", upper(section), upper(key))
        } else {
            key.to_string()
        }
    };
    // Section paths: the target's, the one holding the same key, and a third.
    let (target, other, third): (Vec<String>, Vec<String>, Vec<String>) = if deep {
        let groups = rng.distinct(GROUPS, 2);
        (
            vec![groups[0].into(), sections[0].into()],
            vec![groups[1].into(), sections[0].into()],
            vec![groups[0].into(), sections[1].into()],
        )
    } else {
        (
            vec![sections[0].into()],
            vec![sections[1].into()],
            vec![sections[2].into()],
        )
    };
    let section_of = |path: &[String]| path.last().cloned().unwrap_or_default();
    let (key, sibling) = (keys[0], keys[1]);
    let mut target_keys = vec![
        (key_name(&section_of(&target), key), values[0]),
        (key_name(&section_of(&target), sibling), values[1]),
    ];
    if rng.chance(60) {
        target_keys.push((key_name(&section_of(&target), keys[2]), values[2]));
    }
    rng.shuffle(&mut target_keys);
    let mut other_keys = vec![
        (key_name(&section_of(&other), key), values[3]),
        (key_name(&section_of(&other), keys[3]), values[4]),
    ];
    rng.shuffle(&mut other_keys);
    let third_keys = vec![
        (key_name(&section_of(&third), keys[4]), values[5]),
        (key_name(&section_of(&third), sibling), values[6]),
    ];
    let mut placed = vec![
        (target.clone(), target_keys),
        (other.clone(), other_keys),
        (third, third_keys),
    ];
    rng.shuffle(&mut placed);
    let mut doc = Map::new();
    if matches!(format, Format::Json | Format::Toml) && rng.chance(50) {
        doc.insert("name".into(), Value::from(service));
    }
    for (path, pairs) in &placed {
        for (k, v) in pairs {
            insert_at(&mut doc, path, k, Value::from(*v));
        }
    }
    let old = values[0];
    let full = |path: &[String]| {
        let mut all = if env { Vec::new() } else { path.to_vec() };
        if env {
            all.push(section_of(path));
        }
        all.push(key_name(&section_of(path), key));
        all
    };
    let (target_keys_path, other_keys_path) = (full(&target), full(&other));
    let mut wanted = doc.clone();
    if let Some(v) = at(&mut wanted, &target_keys_path) {
        *v = Value::from(new);
    }
    let mut wrong = doc.clone();
    if let Some(v) = at(&mut wrong, &other_keys_path) {
        *v = Value::from(new);
    }
    let indent = *rng.pick(&[2, 4]);
    let comment = match format {
        Format::Json => String::new(),
        Format::Ini => format!("; {service} settings\n"),
        _ => format!("# {service} settings\n"),
    };
    let with_comment = |text: String| format!("{comment}{text}");
    let dir = *rng.pick(&["", "config/", "deploy/", "services/api/", "etc/"]);
    let name = match format {
        Format::Json => format!("{}.json", rng.pick(&[service, "config", "settings"])),
        Format::Toml => format!("{}.toml", rng.pick(&[service, "config", "settings"])),
        Format::Ini => rng
            .pick(&[
                format!("{service}.ini"),
                "settings.ini".into(),
                "setup.cfg".into(),
            ])
            .clone(),
        Format::Env => rng.pick(&[".env", ".env.local"]).to_string(),
    };
    let path = format!("{dir}{name}");
    let mut files = BTreeMap::new();
    files.insert(path.clone(), with_comment(render(format, &doc, indent)));
    files.insert(
        "README.md".into(),
        format!("# {service}\n\nThe {service} service reads its settings from `{path}`.\n"),
    );
    // Names of the target in prose: dotted, and in words.
    let target_key = key_name(&section_of(&target), key);
    let (dotted, words_of) = if env {
        (target_key.clone(), format!("`{target_key}`"))
    } else if deep {
        (
            format!("{}.{}.{key}", target[0], target[1]),
            format!("`{key}` in the `{}` block under `{}`", target[1], target[0]),
        )
    } else {
        (
            format!("{}.{key}", target[0]),
            if format == Format::Json {
                format!("`{key}` in the `{}` object", target[0])
            } else {
                format!("`{key}` in the `[{}]` section", target[0])
            },
        )
    };
    let format_name = match format {
        Format::Json => "JSON",
        Format::Toml => "TOML",
        Format::Ini => "INI",
        Format::Env => ".env",
    };
    let direction = if new > old { "up" } else { "down" };
    let prompt = match phrasing {
        0 => format!("Set {dotted} to {new} in {path}."),
        1 => format!(
            "Our {service} service reads its settings from {path}. Please change {words_of} to \
             {new}. Only that one value should change: keep the file valid {format_name} and \
             leave every other setting, including keys with the same name elsewhere, exactly \
             as it is."
        ),
        2 => format!("Could you update {path} so that {dotted} is {new} instead of {old}?"),
        3 => format!(
            "In the {format_name} config file of this project, change {words_of} to {new}. \
             Don't touch anything else in the file."
        ),
        4 => format!(
            "Hello! Whenever you get a chance, would you mind taking {words_of} {direction} to \
             {new} in our config? Everything else should stay as it is. Thanks so much!"
        ),
        _ => format!("{path}: {dotted} {old} -> {new}"),
    };
    let mistake_text = if rng.chance(50) {
        with_comment(render(format, &wrong, indent))
    } else {
        // Only the changed line, in a file of its own shape.
        let mut only = Map::new();
        let sections_path = &target_keys_path[..target_keys_path.len() - 1];
        insert_at(&mut only, sections_path, &target_key, Value::from(new));
        render(format, &only, indent)
    };
    GenTask {
        prompt,
        files,
        grade: vec![
            format.value_check(&path, &target_keys_path, &Value::from(new)),
            format.whole_check(&path, &Value::Object(wanted.clone())),
        ],
        solution: Outcome::write(path.clone(), with_comment(render(format, &wanted, indent))),
        mistake: Outcome::write(path, mistake_text),
        ..GenTask::default()
    }
}
