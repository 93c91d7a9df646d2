//! Families of questions answered from the workspace's files: configuration values at
//! depth, where something is defined, counts, sums and events.

use serde_json::Value;

use crate::generate::words::{self, answer_is, answer_number, distinct_numbers};
use crate::generate::{Family, GenTask, Outcome, Rng};

/// The families of this file.
pub(super) const FAMILIES: &[Family] = &[
    Family {
        name: "config-value",
        kind: "question",
        about: "the value of a nested setting in a JSON, YAML, TOML, INI or .env file, beside sibling keys, the same key in another section and a stale copy",
        phrasings: 6,
        build: config_value,
    },
    Family {
        name: "which-file-defines",
        kind: "question",
        about: "which file of a source tree in one of seven languages defines a function, where other files call it and a longer name starting with it is defined elsewhere",
        phrasings: 6,
        build: super::questions_code::which_file_defines,
    },
    Family {
        name: "which-function-raises",
        kind: "question",
        about: "which function raises a given error message, beside a function raising a near-identical message, in one of seven languages",
        phrasings: 6,
        build: super::questions_code::which_function_raises,
    },
    Family {
        name: "count-log-lines",
        kind: "question",
        about: "how many lines of a log have a level for one component, beside other levels, other components and a rotated older log",
        phrasings: 6,
        build: super::questions_data::count_log_lines,
    },
    Family {
        name: "column-sum",
        kind: "question",
        about: "the sum of a CSV or TSV column over the rows where another column has a value",
        phrasings: 6,
        build: super::questions_data::column_sum,
    },
    Family {
        name: "first-last-event",
        kind: "question",
        about: "the id of the first or last event of a type for one user in a JSON-lines or plain log",
        phrasings: 6,
        build: super::questions_data::first_last_event,
    },
    Family {
        name: "extreme-item",
        kind: "question",
        about: "which item of a JSON or CSV list has the highest or lowest value of a field",
        phrasings: 6,
        build: super::questions_data::extreme_item,
    },
];

/// A configuration format.
#[derive(Clone, Copy, PartialEq)]
enum Format {
    Json,
    Yaml,
    Toml,
    Ini,
    Env,
}

impl Format {
    fn ext(self) -> &'static str {
        match self {
            Format::Json => "json",
            Format::Yaml => "yaml",
            Format::Toml => "toml",
            Format::Ini => "ini",
            Format::Env => "env",
        }
    }

    /// The file's text: sections of (key, value).
    fn render(self, sections: &[(String, Vec<(String, Value)>)]) -> String {
        let scalar = |v: &Value, quote: bool| match v {
            Value::String(s) if quote => format!("\"{s}\""),
            Value::String(s) => s.clone(),
            other => other.to_string(),
        };
        match self {
            Format::Json => {
                let mut root = serde_json::Map::new();
                for (section, keys) in sections {
                    let mut inner = serde_json::Map::new();
                    for (k, v) in keys {
                        inner.insert(k.clone(), v.clone());
                    }
                    root.insert(section.clone(), Value::Object(inner));
                }
                let mut text =
                    serde_json::to_string_pretty(&Value::Object(root)).unwrap_or_default();
                text.push('\n');
                text
            }
            Format::Yaml => sections
                .iter()
                .map(|(section, keys)| {
                    let body: String = keys
                        .iter()
                        .map(|(k, v)| format!("  {k}: {}\n", scalar(v, false)))
                        .collect();
                    format!("{section}:\n{body}")
                })
                .collect(),
            Format::Toml | Format::Ini => sections
                .iter()
                .map(|(section, keys)| {
                    let body: String = keys
                        .iter()
                        .map(|(k, v)| format!("{k} = {}\n", scalar(v, self == Format::Toml)))
                        .collect();
                    format!("[{section}]\n{body}\n")
                })
                .collect(),
            Format::Env => sections
                .iter()
                .flat_map(|(section, keys)| {
                    keys.iter().map(move |(k, v)| {
                        format!(
                            "{}_{}={}\n",
                            section.to_uppercase(),
                            k.to_uppercase(),
                            scalar(v, false)
                        )
                    })
                })
                .collect(),
        }
    }
}

fn config_value(rng: &mut Rng, phrasing: usize) -> GenTask {
    let format = *rng.pick(&[
        Format::Json,
        Format::Yaml,
        Format::Toml,
        Format::Ini,
        Format::Env,
    ]);
    let sections = rng.distinct(words::SECTIONS, 3);
    let keys = rng.distinct(words::SETTINGS, 4);
    let values = distinct_numbers(rng, 8, 3, 9_999);
    let (target_section, other_section, third) = (&sections[0], &sections[1], &sections[2]);
    let (key, sibling) = (&keys[0], &keys[1]);
    // The target, the same key elsewhere, a sibling key, and the stale copy's value.
    let (value, elsewhere, sibling_value, stale) = (values[0], values[1], values[2], values[3]);
    let mut target_keys = vec![
        (sibling.to_string(), Value::from(sibling_value)),
        (key.to_string(), Value::from(value)),
        (keys[2].to_string(), Value::from(values[4])),
    ];
    rng.shuffle(&mut target_keys);
    let mut layout = vec![
        (
            third.to_string(),
            vec![(keys[3].to_string(), Value::from(values[5]))],
        ),
        (target_section.to_string(), target_keys),
        (
            other_section.to_string(),
            vec![
                (key.to_string(), Value::from(elsewhere)),
                (keys[2].to_string(), Value::from(values[6])),
            ],
        ),
    ];
    rng.shuffle(&mut layout);
    let service = rng.pick(words::NOUNS);
    let dir = *rng.pick(&[
        "",
        "config/",
        "deploy/prod/",
        "services/api/config/",
        "etc/",
    ]);
    let path = if format == Format::Env {
        format!("{dir}.env")
    } else {
        format!("{dir}{service}.{}", format.ext())
    };
    let mut files = std::collections::BTreeMap::new();
    files.insert(path.clone(), format.render(&layout));
    // A stale copy with the target changed: an example or an archived file.
    let mut old = layout.clone();
    for (section, keys) in &mut old {
        if section == target_section {
            for (k, v) in keys.iter_mut() {
                if k == key {
                    *v = Value::from(stale);
                }
            }
        }
    }
    let stale_path = if rng.chance(50) {
        format!("archive/{}", path.trim_start_matches(dir))
    } else {
        format!("{path}.example")
    };
    files.insert(stale_path, format.render(&old));
    files.insert(
        "README.md".into(),
        format!("# {service}\n\nThe {service} service. Settings live in `{path}`.\n"),
    );
    let shown_key = if format == Format::Env {
        format!("{}_{}", target_section.to_uppercase(), key.to_uppercase())
    } else {
        format!("{target_section}.{key}")
    };
    let bare = matches!(phrasing, 3 | 5);
    let prompt = match phrasing {
        0 => format!("Value of {shown_key} in {path}?"),
        1 => format!(
            "I need to know what the {key} setting of the {target_section} section is set to in \
             our configuration file {path}. Please look it up and tell me the value."
        ),
        2 => format!(
            "What is {key} set to for {target_section} in this project's live configuration?"
        ),
        3 => format!("Read {path} and reply with only the value of `{shown_key}`, nothing else."),
        4 => format!(
            "Hi! Could you please check the config for me and let me know the {key} under \
             {target_section}? Not the example or archived copy, the one in use. Thanks a lot."
        ),
        _ => format!("Look up the key `{shown_key}` in {path} and give me just its value."),
    };
    let value_text = value.to_string();
    GenTask {
        prompt,
        files,
        grade: vec![if bare {
            answer_is(&value_text)
        } else {
            answer_number(value)
        }],
        solution: Outcome::answer(if bare {
            value_text.clone()
        } else {
            format!("{shown_key} is {value_text} (in {path}).")
        }),
        mistake: Outcome::answer(if rng.chance(50) {
            format!("{shown_key} is {elsewhere}.")
        } else {
            format!("It is set to {stale}.")
        }),
        ..GenTask::default()
    }
}
