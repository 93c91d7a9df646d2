//! The convert-data and merge-lists families: a CSV/JSON conversion and a merged list,
//! each graded by a Python check that reads the file the agent wrote.

use serde_json::{Map, Value};

use super::capital;
use crate::generate::words::{self, python_check};
use crate::generate::{GenTask, Outcome, Rng};

/// Country codes after a city.
pub(super) const COUNTRIES: &[&str] = &[
    "PT", "KE", "JP", "EC", "EE", "GH", "AU", "NO", "PE", "SN", "AT", "IN", "UK", "SE", "FI",
];

/// `text` as a Python string literal (a JSON string is one).
fn py_str(text: &str) -> String {
    Value::String(text.to_string()).to_string()
}

/// One CSV field, quoted when it holds a comma, a quote or a line break.
fn csv_field(text: &str) -> String {
    if text.contains([',', '"', '\n']) {
        format!("\"{}\"", text.replace('"', "\"\""))
    } else {
        text.to_string()
    }
}

/// A value as CSV cell text (strings bare, numbers as JSON writes them).
fn cell(value: &Value) -> String {
    match value {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// The typed value of column `column` for row `row`; `comma` and `quote` force a value
/// that CSV must quote.
fn data_value(
    rng: &mut Rng,
    column: &str,
    row: usize,
    start: i64,
    comma: bool,
    quote: bool,
) -> Value {
    match column {
        "id" => Value::from(start + row as i64),
        "year" => Value::from(rng.range(2015, 2024)),
        "qty" => Value::from(rng.range(1, 500)),
        "price" => Value::from(rng.range(99, 49_999) as f64 / 100.0),
        "weight_kg" => Value::from(rng.range(1, 900) as f64 / 10.0),
        "name" => Value::from(rng.pick(words::PEOPLE).to_string()),
        "city" if comma || rng.chance(20) => Value::from(format!(
            "{}, {}",
            rng.pick(words::CITIES),
            rng.pick(COUNTRIES)
        )),
        "city" => Value::from(rng.pick(words::CITIES).to_string()),
        _ if quote => Value::from(format!(
            "ask for \"{}\" at the desk",
            rng.pick(words::PEOPLE)
        )),
        _ => Value::from(
            rng.pick(&[
                "fragile",
                "leave at door",
                "gift wrap",
                "no invoice",
                "second try",
                "paid, thanks",
            ])
            .to_string(),
        ),
    }
}

/// The input CSV of `records`.
fn csv_text(columns: &[&str], records: &[Map<String, Value>]) -> String {
    let mut text = columns.join(",");
    for record in records {
        let cells: Vec<String> = columns
            .iter()
            .map(|c| csv_input_cell(c, record.get(*c).unwrap_or(&Value::Null)))
            .collect();
        text.push('\n');
        text.push_str(&cells.join(","));
    }
    text.push('\n');
    text
}

/// The input JSON of `records`: keys in `keys` order and a stamp the output leaves out.
fn json_text(keys: &[&str], records: &[Map<String, Value>], stamp: &str) -> String {
    let objects: Vec<Value> = records
        .iter()
        .map(|r| {
            let mut object: Map<String, Value> = keys
                .iter()
                .map(|k| (k.to_string(), r.get(*k).cloned().unwrap_or(Value::Null)))
                .collect();
            object.insert("updated_at".into(), Value::from(stamp));
            Value::Object(object)
        })
        .collect();
    serde_json::to_string_pretty(&Value::Array(objects)).unwrap_or_default() + "\n"
}

/// A number as an input CSV writes it (prices with two decimals).
fn csv_input_cell(column: &str, value: &Value) -> String {
    match (column, value.as_f64()) {
        ("price", Some(p)) => format!("{p:.2}"),
        _ => csv_field(&cell(value)),
    }
}

/// A CSV converted to a JSON array of objects, or a JSON array to CSV in a given order.
pub(super) fn convert_data(rng: &mut Rng, phrasing: usize) -> GenTask {
    let to_json = rng.chance(50);
    let mut columns = vec![
        "city",
        "note",
        *rng.pick(&["price", "weight_kg"]),
        *rng.pick(&["id", "qty"]),
    ];
    let optional = rng.below(3);
    columns.extend(rng.distinct(&["name", "year"], optional));
    rng.shuffle(&mut columns);
    let rows = rng.range(4, 7) as usize;
    let (comma_row, quote_row) = (rng.below(rows), rng.below(rows));
    let start = rng.range(100, 9_000);
    let records: Vec<Map<String, Value>> = (0..rows)
        .map(|row| {
            columns
                .iter()
                .map(|c| {
                    (
                        c.to_string(),
                        data_value(rng, c, row, start, row == comma_row, row == quote_row),
                    )
                })
                .collect()
        })
        .collect();
    // An older copy of the input, one row short and with other numbers.
    let mut older = records[..rows - 1].to_vec();
    for record in &mut older {
        for value in record.values_mut() {
            if let Some(n) = value.as_i64() {
                *value = Value::from(n + 7);
            }
        }
    }
    let noun = rng.pick(words::NOUNS);
    let dir = *rng.pick(&["", "data/", "exports/", "shared/tables/"]);
    let mut task = GenTask::default();
    let (input, out);
    if to_json {
        input = format!("{dir}{noun}.csv");
        out = if rng.chance(50) {
            format!("{dir}{noun}.json")
        } else {
            format!("out/{noun}.json")
        };
        task.files
            .insert(input.clone(), csv_text(&columns, &records));
        task.files
            .insert(format!("archive/{input}"), csv_text(&columns, &older));
        let want = Value::Array(records.iter().cloned().map(Value::Object).collect());
        let script = format!(
            "import json, sys\nwant = json.loads({})\nwith open({}, encoding=\"utf-8\") as f:\n    have = json.load(f)\nif have != want:\n    sys.exit(\"got %r\\nwant %r\" % (have, want))\n",
            py_str(&want.to_string()),
            py_str(&out)
        );
        task.grade.push(python_check(&script));
        task.solution = Outcome::write(
            out.clone(),
            serde_json::to_string_pretty(&want).unwrap_or_default(),
        );
        let strings: Vec<Value> = records
            .iter()
            .map(|r| {
                Value::Object(
                    r.iter()
                        .map(|(k, v)| (k.clone(), Value::from(cell(v))))
                        .collect(),
                )
            })
            .collect();
        task.mistake = Outcome::write(
            out.clone(),
            serde_json::to_string_pretty(&strings).unwrap_or_default(),
        );
    } else {
        input = format!("{dir}{noun}.json");
        out = if rng.chance(50) {
            format!("{dir}{noun}.csv")
        } else {
            format!("export/{noun}.csv")
        };
        let mut keys: Vec<&str> = columns.clone();
        rng.shuffle(&mut keys);
        let stamp = format!(
            "2024-{:02}-{:02}T09:00:00Z",
            rng.range(1, 12),
            rng.range(1, 28)
        );
        task.files
            .insert(input.clone(), json_text(&keys, &records, &stamp));
        task.files
            .insert(format!("archive/{input}"), json_text(&keys, &older, &stamp));
        let want: Vec<Vec<Value>> = records
            .iter()
            .map(|r| columns.iter().map(|c| r[*c].clone()).collect())
            .collect();
        let script = format!(
            "import csv, json, sys\ncols, want = json.loads({})\nwith open({}, newline=\"\", encoding=\"utf-8\") as f:\n    rows = [r for r in csv.reader(f) if r]\nif not rows or rows[0] != cols:\n    sys.exit(\"header %r, want %r\" % (rows[:1], cols))\nif len(rows) - 1 != len(want):\n    sys.exit(\"%d rows, want %d\" % (len(rows) - 1, len(want)))\nfor got, row in zip(rows[1:], want):\n    if len(got) != len(row):\n        sys.exit(\"row %r, want %r\" % (got, row))\n    for c, v in zip(got, row):\n        if isinstance(v, str):\n            ok = c == v\n        else:\n            try:\n                ok = float(c) == v\n            except ValueError:\n                ok = False\n        if not ok:\n            sys.exit(\"cell %r, want %r\" % (c, v))\n",
            py_str(&serde_json::json!([columns, want]).to_string()),
            py_str(&out)
        );
        task.grade.push(python_check(&script));
        let body = |quote: bool| -> String {
            want.iter()
                .map(|row| {
                    let cells: Vec<String> = row
                        .iter()
                        .map(|v| if quote { csv_field(&cell(v)) } else { cell(v) })
                        .collect();
                    cells.join(",") + "\n"
                })
                .collect()
        };
        task.solution = Outcome::write(
            out.clone(),
            format!("{}\n{}", columns.join(","), body(true)),
        );
        task.mistake = Outcome::write(
            out.clone(),
            if rng.chance(50) {
                body(true)
            } else {
                format!("{}\n{}", columns.join(","), body(false))
            },
        );
    }
    let order = columns.join(", ");
    task.prompt = if to_json {
        match phrasing {
            0 => format!("Convert {input} to JSON at {out}: an array of objects keyed by the header, numbers as JSON numbers."),
            1 => format!(
                "I have a spreadsheet export at {input} and need it as JSON for a script. Please write {out} containing a JSON array with one object per data row, whose keys are the column names from the header line. Numeric values must be real JSON numbers, not strings; text stays text, and quoted CSV fields should lose their quotes the way a CSV reader would read them."
            ),
            2 => format!(
                "Can you turn {input} into a JSON file, {out}? It should be an array of objects (one per row, header names as keys) with numbers kept as numbers."
            ),
            3 => format!(
                "CSV → JSON. Source: {input}. Target: {out}. Shape: [{{column: value, ...}}, ...], one object per row, in row order. Numbers unquoted."
            ),
            4 => format!(
                "Hi! If it's not too much trouble, could you please convert the CSV file {input} into JSON for me and save it as {out}? A list of objects with the header's column names as keys would be perfect — and please keep the numbers as numbers rather than strings. Thanks!"
            ),
            _ => format!(
                "Read the rows of {input} (parse it as real CSV, quoted fields included) and save them to {out} as a JSON array of objects, numeric fields as numbers."
            ),
        }
    } else {
        match phrasing {
            0 => format!("Convert {input} to CSV at {out}, columns in this order: {order}. Header row first."),
            1 => format!(
                "Our JSON dump {input} has to go into a spreadsheet. Please write {out} as a CSV file: a header row with exactly these columns in this order — {order} — then one row per object of the array, in the same order. Fields that contain commas or double quotes must be quoted the standard CSV way, and columns not listed are dropped."
            ),
            2 => format!(
                "Could you export {input} to {out} as CSV? I need a header line and the columns {order}, in that order, with proper CSV quoting."
            ),
            3 => format!(
                "JSON → CSV.\nIn: {input}\nOut: {out}\nColumns (header row, this order): {order}\nOther keys dropped. Quote fields per RFC 4180."
            ),
            4 => format!(
                "Hello! When you get a chance, would you mind turning the records in {input} into a CSV file called {out}? The header should list {order}, in that order, and the rows should follow the order of the file. Anything with a comma or a quote in it needs quoting so it opens correctly. Much appreciated!"
            ),
            _ => format!(
                "Write {out}: the objects of {input} as CSV rows under a header of {order} (that column order, standard quoting, one row per object)."
            ),
        }
    };
    task
}

/// Merges two or three lists into one sorted list without duplicates.
pub(super) fn merge_lists(rng: &mut Rng, phrasing: usize) -> GenTask {
    let json = rng.chance(50);
    let ignore_case = rng.chance(50);
    let mut pool: Vec<String> = words::NOUNS
        .iter()
        .chain(words::PRODUCTS)
        .map(|w| w.to_string())
        .chain(words::CITIES.iter().map(|c| c.to_lowercase()))
        .collect();
    pool.sort();
    pool.dedup();
    rng.shuffle(&mut pool);
    let inputs = rng.range(2, 3) as usize;
    let shared = rng.range(4, 7) as usize;
    // Two entries of each input's own, then shared ones in two inputs or more; the rest
    // of the pool feeds the list that is left out.
    let mut lists: Vec<Vec<String>> = (0..inputs)
        .map(|i| pool[2 * i..2 * i + 2].to_vec())
        .collect();
    let shared_items = pool[2 * inputs..2 * inputs + shared].to_vec();
    for item in &shared_items {
        let first = rng.below(inputs);
        let second = (first + 1 + rng.below(inputs - 1)) % inputs;
        for (i, list) in lists.iter_mut().enumerate() {
            if i == first || i == second || rng.chance(30) {
                list.push(item.clone());
            }
        }
    }
    if rng.chance(50) {
        let i = rng.below(inputs);
        let again = rng.pick(&lists[i]).clone();
        lists[i].push(again);
    }
    for list in &mut lists {
        rng.shuffle(list);
    }
    let mut want: Vec<String> = lists.iter().flatten().cloned().collect();
    want.sort();
    want.dedup();
    // Whitespace (and case) variants on later copies of two shared entries.
    let mut raw: Vec<Vec<String>> = lists.clone();
    for item in rng.distinct(&shared_items, 2) {
        let spots: Vec<(usize, usize)> = lists
            .iter()
            .enumerate()
            .flat_map(|(i, l)| {
                l.iter()
                    .enumerate()
                    .filter(|(_, x)| **x == item)
                    .map(move |(j, _)| (i, j))
            })
            .collect();
        if let Some(&(i, j)) = spots
            .get(1 + rng.below(spots.len().saturating_sub(1).max(1)))
            .or(spots.last())
        {
            let text = if ignore_case && rng.chance(60) {
                if rng.chance(50) {
                    item.to_uppercase()
                } else {
                    capital(&item)
                }
            } else {
                item.clone()
            };
            raw[i][j] = rng
                .pick(&["  {}", "{}  ", "\t{}", " {} ", "{}\t"])
                .replace("{}", &text);
        }
    }
    if ignore_case {
        let (i, item) = (rng.below(inputs), rng.pick(&shared_items).clone());
        raw[i].push(capital(&item));
    }
    let cat = *rng.pick(&["tags", "keywords", "topics", "labels", "terms"]);
    let sources = rng.distinct(
        &[
            "web", "mobile", "partners", "legacy", "2023", "2024", "import", "manual",
        ],
        inputs,
    );
    let ext = if json { "json" } else { "txt" };
    let dir = *rng.pick(&["lists/", "data/lists/", "", "shared/"]);
    let paths: Vec<String> = sources
        .iter()
        .map(|s| format!("{dir}{cat}_{s}.{ext}"))
        .collect();
    let render = |entries: &[String]| -> String {
        if json {
            serde_json::to_string_pretty(entries).unwrap_or_default() + "\n"
        } else {
            entries.join("\n") + "\n"
        }
    };
    let mut task = GenTask::default();
    for (path, entries) in paths.iter().zip(&raw) {
        let mut entries = entries.clone();
        if !json && rng.chance(40) {
            let at = rng.below(entries.len());
            entries.insert(at, String::new());
        }
        task.files.insert(path.clone(), render(&entries));
    }
    let rejected = pool[2 * inputs + shared..2 * inputs + shared + 3].to_vec();
    task.files
        .insert(format!("{dir}{cat}_rejected.{ext}"), render(&rejected));
    let out = rng
        .pick(&[
            format!("{dir}{cat}_all.{ext}"),
            format!("merged.{ext}"),
            format!("out/{cat}.{ext}"),
        ])
        .clone();
    let script = if json {
        format!(
            "import json, sys\nwant = json.loads({})\nwith open({}, encoding=\"utf-8\") as f:\n    have = json.load(f)\nif have != want:\n    sys.exit(\"got %r\\nwant %r\" % (have, want))\n",
            py_str(&Value::from(want.clone()).to_string()),
            py_str(&out)
        )
    } else {
        format!(
            "import json, sys\nwant = json.loads({})\nwith open({}, encoding=\"utf-8\") as f:\n    have = [l.strip() for l in f.read().splitlines() if l.strip()]\nif have != want:\n    sys.exit(\"got %r\\nwant %r\" % (have, want))\n",
            py_str(&Value::from(want.clone()).to_string()),
            py_str(&out)
        )
    };
    task.grade.push(python_check(&script));
    let names = match paths.as_slice() {
        [a, b] => format!("{a} and {b}"),
        [a, b, c] => format!("{a}, {b} and {c}"),
        _ => paths.join(", "),
    };
    let case = if ignore_case {
        "Letter case doesn't matter: entries that differ only in case are the same, and every entry is written in lower case."
    } else {
        "Entries are compared exactly (case matters)."
    };
    let shape = if json {
        "a JSON array of strings"
    } else {
        "a text file with one entry per line"
    };
    task.prompt = match phrasing {
        0 => format!(
            "Merge {names} into {out} ({shape}): sorted A–Z, no duplicates, surrounding whitespace trimmed. {case}"
        ),
        1 => format!(
            "We keep our {cat} in several files and I'd like a single combined list. Please take every entry from {names}, trim the spaces and tabs around each one, drop duplicates, sort what's left alphabetically and write it to {out} as {shape}. {case} The {cat}_rejected file is not part of this."
        ),
        2 => format!(
            "Could you combine the {cat} lists {names} into one alphabetically sorted list without repeats in {out}? Treat entries that only differ by leading or trailing whitespace as the same. {case} Output: {shape}."
        ),
        3 => format!(
            "Inputs: {names}.\nOutput: {out}, {shape}.\nRules: trim whitespace, de-duplicate, sort ascending. {case}"
        ),
        4 => format!(
            "Hi there! Would you kindly merge the {cat} from {names} into one list for me? Please remove any duplicates (ignoring stray spaces around the entries), sort them alphabetically and save them in {out} as {shape}. {case} Thank you!"
        ),
        _ => format!(
            "Union of {names}, whitespace around each entry stripped, each entry once, in alphabetical order — write it to {out} as {shape}. {case}"
        ),
    };
    task.solution = Outcome::write(out.clone(), render(&want));
    let mistake: Vec<String> = if rng.chance(50) {
        let mut kept: Vec<String> = lists[..inputs - 1].iter().flatten().cloned().collect();
        kept.sort();
        kept.dedup();
        kept
    } else {
        let mut kept: Vec<String> = raw.iter().flatten().cloned().collect();
        kept.sort_by_key(|k| k.trim().to_lowercase());
        kept.dedup();
        kept
    };
    task.mistake = Outcome::write(out, render(&mistake));
    task
}
