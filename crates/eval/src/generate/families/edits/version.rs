//! Bumping a package's version in its manifest with a changelog entry, while a
//! dependency at the same version stays.

use std::collections::BTreeMap;

use serde_json::{json, Map, Value};

use super::{render, Format};
use crate::generate::words::{self, python_check, unchanged};
use crate::generate::{GenTask, Outcome, Rng};

/// A package manifest.
#[derive(Clone, Copy, PartialEq)]
enum Manifest {
    /// package.json.
    Npm,
    /// Cargo.toml.
    Cargo,
    /// pyproject.toml.
    Python,
}

/// A version as text.
fn version(v: (i64, i64, i64)) -> String {
    format!("{}.{}.{}", v.0, v.1, v.2)
}

/// The version released before `v`, if any.
fn previous(rng: &mut Rng, v: (i64, i64, i64)) -> Option<(i64, i64, i64)> {
    if v.2 > 0 {
        Some((v.0, v.1, rng.range(0, v.2 - 1)))
    } else if v.1 > 0 {
        Some((v.0, v.1 - 1, rng.range(0, 6)))
    } else if v.0 > 0 {
        Some((v.0 - 1, rng.range(1, 9), rng.range(0, 6)))
    } else {
        None
    }
}

/// Changelog lines: each template takes a noun.
const CHANGES: &[&str] = &[
    "Add retry support to the {} client",
    "Fix a crash when the {} list is empty",
    "Speed up {} exports",
    "Drop the deprecated {} flag",
    "Log {} timeouts as warnings",
    "Support pagination in {} queries",
    "Improve error messages for {} failures",
    "Rename the {} option for clarity",
    "Remove unused {} helpers",
    "Handle empty {} responses",
    "Document the {} settings",
    "Validate {} input earlier",
];

/// Builds a `version-bump` task.
pub(super) fn version_bump(rng: &mut Rng, phrasing: usize) -> GenTask {
    let manifest = *rng.pick(&[Manifest::Npm, Manifest::Cargo, Manifest::Python]);
    let nouns = rng.distinct(words::NOUNS, 4 + CHANGES.len());
    let tail = *rng.pick(&["", "-kit", "-core", "-client", "-utils"]);
    let name = format!("{}{tail}", nouns[0]);
    let dep = format!(
        "{}-{}",
        nouns[1],
        rng.pick(&["sdk", "core", "proto", "types"])
    );
    let other_dep = format!("{}-{}", nouns[2], rng.pick(&["io", "lib", "fmt"]));
    let mut old_v = (rng.range(0, 4), rng.range(0, 14), rng.range(0, 9));
    if old_v.0 == 0 {
        old_v.1 = old_v.1.max(3);
    }
    let part = *rng.pick(&["patch", "minor", "major"]);
    let new_v = match part {
        "patch" => (old_v.0, old_v.1, old_v.2 + 1),
        "minor" => (old_v.0, old_v.1 + 1, 0),
        _ => (old_v.0 + 1, 0, 0),
    };
    let (old, new) = (version(old_v), version(new_v));
    let other_version = version((
        old_v.0 + 2 + rng.range(0, 3),
        rng.range(0, 9),
        rng.range(0, 9),
    ));
    let pinned = rng.chance(50);
    let doc: Value = match manifest {
        Manifest::Npm => {
            let mut deps = vec![
                (
                    dep.clone(),
                    json!(if pinned {
                        old.clone()
                    } else {
                        format!("^{old}")
                    }),
                ),
                (other_dep.clone(), json!(format!("^{other_version}"))),
            ];
            rng.shuffle(&mut deps);
            json!({
                "name": name, "version": old, "description": format!("The {} service.", nouns[0]),
                "main": "index.js", "scripts": {"test": "node test.js"},
                "dependencies": deps.into_iter().collect::<Map<String, Value>>(),
            })
        }
        Manifest::Cargo => {
            let dep_value = if pinned {
                json!(old)
            } else {
                json!({"version": old, "features": ["derive"]})
            };
            json!({
                "package": {"name": name, "version": old, "edition": "2021"},
                "dependencies": {other_dep.clone(): other_version, dep.clone(): dep_value},
            })
        }
        Manifest::Python => {
            let op = if pinned { "==" } else { ">=" };
            json!({"project": {
                "name": name, "version": old, "requires-python": ">=3.9",
                "dependencies": [format!("{dep}{op}{old}"), format!("{other_dep}>={other_version}")],
            }})
        }
    };
    let (file_name, format, keys) = match manifest {
        Manifest::Npm => ("package.json", Format::Json, vec!["version".to_string()]),
        Manifest::Cargo => (
            "Cargo.toml",
            Format::Toml,
            vec!["package".into(), "version".into()],
        ),
        Manifest::Python => (
            "pyproject.toml",
            Format::Toml,
            vec!["project".into(), "version".into()],
        ),
    };
    let dir = match (manifest, rng.below(3)) {
        (_, 0) => String::new(),
        (Manifest::Npm, _) => format!("packages/{name}/"),
        (Manifest::Cargo, _) => format!("crates/{name}/"),
        (Manifest::Python, _) => format!("{name}/"),
    };
    let as_text = |value: &Value| render(format, value.as_object().unwrap_or(&Map::new()), 2);
    let set_version = |value: &Value, to: &str| {
        let mut value = value.clone();
        let mut slot = &mut value;
        for key in &keys {
            slot = &mut slot[key.as_str()];
        }
        *slot = json!(to);
        value
    };
    let manifest_path = format!("{dir}{file_name}");
    let changelog_path = format!("{dir}CHANGELOG.md");
    let mut files = BTreeMap::new();
    let manifest_text = as_text(&doc);
    files.insert(manifest_path.clone(), manifest_text.clone());
    // The history: older versions below the current one, with dated entries.
    let mut versions = vec![old_v];
    for _ in 0..rng.range(1, 3) {
        match versions.last().and_then(|v| previous(rng, *v)) {
            Some(v) => versions.push(v),
            None => break,
        }
    }
    let style = rng.below(3);
    let (mut year, mut month) = (rng.range(2022, 2024), rng.range(6, 12));
    let heading = |v: &str, year: i64, month: i64, day: i64| match style {
        0 => format!("## [{v}] - {year}-{month:02}-{day:02}\n\n### Changed\n"),
        1 => format!("## {v}\n\n"),
        _ => format!("## v{v} ({year}-{month:02}-{day:02})\n\n"),
    };
    let changes: Vec<String> = CHANGES
        .iter()
        .zip(&nouns[4..])
        .map(|(t, n)| t.replace("{}", n))
        .collect();
    let changes = rng.distinct(&changes, 1 + 2 * versions.len());
    let text = changes[0].clone();
    let mut history = String::new();
    for (i, v) in versions.iter().enumerate() {
        history.push_str(&heading(&version(*v), year, month, rng.range(1, 28)));
        for line in changes.iter().skip(1 + 2 * i).take(1 + rng.below(2)) {
            history.push_str(&format!("- {line}\n"));
        }
        history.push('\n');
        month -= rng.range(1, 3);
        if month < 1 {
            month += 12;
            year -= 1;
        }
    }
    let title = if rng.chance(50) {
        "# Changelog\n\nAll notable changes to this project are listed here.\n\n".to_string()
    } else {
        "# Changelog\n\n".to_string()
    };
    let changelog = format!("{title}{history}");
    files.insert(changelog_path.clone(), changelog.clone());
    let new_entry = format!("{}- {text}\n\n", heading(&new, 2025, 1, rng.range(1, 28)));
    let new_changelog = format!("{title}{new_entry}{history}");
    // Another package of the same monorepo at the same version stays as it is.
    let sibling = if dir.is_empty() {
        None
    } else {
        let other = format!("{}{tail}", nouns[3]);
        let path = format!(
            "{}{other}/{file_name}",
            dir.trim_end_matches('/')
                .rsplit_once('/')
                .map(|(p, _)| format!("{p}/"))
                .unwrap_or_default()
        );
        let mut value = doc.clone();
        match manifest {
            Manifest::Npm => value["name"] = json!(other),
            Manifest::Cargo => value["package"]["name"] = json!(other),
            Manifest::Python => value["project"]["name"] = json!(other),
        }
        files.insert(path.clone(), as_text(&value));
        Some(path)
    };
    let readme = if dir.is_empty() {
        "README.md".to_string()
    } else {
        format!("{dir}README.md")
    };
    files.insert(
        readme,
        format!("# {name}\n\nThe {} service's {name} package.\n", nouns[0]),
    );
    let wanted = set_version(&doc, &new);
    let old_lines: Vec<Value> = changelog
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| json!(l.trim()))
        .collect();
    let changelog_check = format!(
        "import json, re, sys\nlines = open({p}).read().splitlines()\n\
         def head(v):\n    pat = re.compile(r\"^#+ .*(?<![\\d.])\" + re.escape(v) + r\"(?!\\d)(?!\\.\\d)\")\n    \
         return next((i for i, l in enumerate(lines) if pat.search(l)), -1)\n\
         n, o = head({new_s}), head({old_s})\n\
         if n < 0: sys.exit(\"no heading for the new version\")\n\
         if o < n: sys.exit(\"the previous top entry is gone or above the new one\")\n\
         if {text_s}.lower() not in \"\\n\".join(lines[n:o]).lower(): sys.exit(\"entry text not under the new heading\")\n\
         have = set(l.strip() for l in lines)\n\
         if any(l not in have for l in {olds}): sys.exit(\"an older line is gone\")\n",
        p = json!(changelog_path),
        new_s = json!(new),
        old_s = json!(old),
        text_s = json!(text),
        olds = super::py_json(&Value::Array(old_lines)),
    );
    let mut grade = vec![
        format.value_check(&manifest_path, &keys, &json!(new)),
        format.whole_check(&manifest_path, &wanted),
        python_check(&changelog_check),
    ];
    if let Some(path) = &sibling {
        grade.push(unchanged(path));
    }
    let solution = Outcome {
        writes: vec![
            (manifest_path.clone(), as_text(&wanted)),
            (changelog_path.clone(), new_changelog.clone()),
        ],
        answer: Some(format!("Bumped {name} to {new}.")),
        ..Outcome::default()
    };
    let mistake_writes = match rng.below(3) {
        0 => vec![
            (manifest_path.clone(), manifest_text.replace(&old, &new)),
            (changelog_path.clone(), new_changelog),
        ],
        1 => vec![
            (manifest_path.clone(), as_text(&wanted)),
            (changelog_path.clone(), format!("{title}{new_entry}")),
        ],
        _ => vec![
            (manifest_path.clone(), as_text(&wanted)),
            (changelog_path.clone(), format!("{changelog}{new_entry}")),
        ],
    };
    let prompt = match phrasing {
        0 => format!("Bump {name} to {new} and add a CHANGELOG.md entry for it: \"{text}\"."),
        1 => format!(
            "We're about to release {name}. Please do a {part} version bump in {manifest_path} \
             (it is at {old} now) and add an entry for the new version at the top of \
             {changelog_path} with the line \"{text}\". Keep the older entries as they are."
        ),
        2 => format!(
            "Could you bump the {part} version of {name} and note \"{text}\" in its changelog \
             under the new version?"
        ),
        3 => format!(
            "Release {new} of {name}: set the version in {manifest_path}, then add a new top \
             entry for {new} to {changelog_path} that says: {text}"
        ),
        4 => format!(
            "Hi! Would you mind doing a {part} release of {name}? Just the package's own version \
             number in its manifest, plus \"{text}\" as the new version's entry at the top of \
             its changelog. Thank you so much!"
        ),
        _ => format!("{part} bump for {name}; changelog line: {text}"),
    };
    GenTask {
        prompt,
        files,
        grade,
        solution,
        mistake: Outcome {
            writes: mistake_writes,
            answer: Some("Done.".into()),
            ..Outcome::default()
        },
        ..GenTask::default()
    }
}
