//! `query_data`: counts, sums, the lowest or highest, and the first or last of the
//! records of a data file that meet conditions — the arithmetic a small model gets
//! wrong when it reads the rows itself. The result states the number, how many records
//! matched out of how many, how each condition was read, and the matching records;
//! when nothing matched, what each condition meets alone and which values are there.

use std::cmp::Ordering;

use serde_json::{json, Value};

use super::query_conditions::{compare, nothing_matched, number, orders, shown_number, Condition};
use super::records::{field_names, is_data_name, parse, Record};
use super::spec::function_spec;
use super::workspace_files::files_under;
use crate::args::{optional_string, read_access, required_string, ArgError};
use crate::outcome::{Access, ToolOutcome};
use crate::tool::Tool;
use crate::workspace::Workspace;

/// Counts, sums, compares or picks records of a data file that meet conditions.
#[derive(Debug, Default, Clone, Copy)]
pub struct QueryData;

const NAME: &str = "query_data";
/// The operations, as the schema lists them.
const OPS: [&str; 7] = ["count", "sum", "min", "max", "first", "last", "list"];
/// Matching records shown under the result at most (`list` shows more).
const SHOWN: usize = 8;
/// Records `list` shows at most.
const LISTED: usize = 40;
/// The largest file read.
const MAX_BYTES: u64 = 8 * 1024 * 1024;

impl Tool for QueryData {
    fn name(&self) -> &str {
        NAME
    }

    fn spec(&self) -> rein_protocol::ToolSpec {
        function_spec(
            NAME,
            "Compute over the records of a data file (CSV or TSV rows, a JSON list, JSON lines, log lines): how many meet conditions, the sum of a field over them, the one with the lowest or highest value of a field, or the first or last of them. Use it for counts and totals instead of adding up rows yourself; to read one setting of a config file, use search or read_file.",
            json!({
                "type": "object",
                "properties": {
                    "path": {"type": "string", "description": "The data file, relative to the workspace root."},
                    "where": {
                        "type": "array",
                        "items": {"type": "string"},
                        "description": "Conditions a record must meet, all of them: `field=value` (also !=, <, >, <=, >=), or a word the record must contain. Empty: every record."
                    },
                    "op": {"type": "string", "enum": OPS, "description": "count the matching records; sum, min or max of `field` over them; the first or last of them (in file order, or by `field`); or list them."},
                    "field": {"type": "string", "description": "The field to sum or compare (sum, min, max), or to order by (first, last)."}
                },
                "required": ["path", "op"],
                "additionalProperties": false
            }),
        )
    }

    fn access(&self, args: &Value, workspace: &Workspace) -> Access {
        read_access(args, workspace, None)
    }

    fn call(&self, args: &Value, workspace: &Workspace) -> ToolOutcome {
        match Query::from_args(args) {
            Ok(query) => run(workspace, &query),
            Err(error) => error.into_outcome(NAME),
        }
    }
}

/// A call's arguments, read.
struct Query<'a> {
    path: &'a str,
    conditions: Vec<String>,
    op: &'a str,
    field: Option<&'a str>,
}

impl<'a> Query<'a> {
    fn from_args(args: &'a Value) -> Result<Self, ArgError> {
        let path = required_string(args, "path")?;
        let op = required_string(args, "op")?;
        let field = optional_string(args, "field")?.filter(|f| !f.trim().is_empty());
        let conditions = match args.get("where") {
            None | Some(Value::Null) => Vec::new(),
            Some(Value::Array(items)) => items
                .iter()
                .map(|item| match item {
                    Value::String(text) => text.clone(),
                    other => other.to_string(),
                })
                .collect(),
            Some(Value::String(text)) => vec![text.clone()],
            Some(Value::Object(map)) => map
                .iter()
                .map(|(key, value)| match value {
                    Value::String(text) => format!("{key}={text}"),
                    other => format!("{key}={other}"),
                })
                .collect(),
            Some(other) => vec![other.to_string()],
        };
        Ok(Self {
            path,
            conditions,
            op,
            field,
        })
    }
}

/// Data files listed at most when the one asked for is not there.
const LISTED_FILES: usize = 8;
/// Files visited at most when listing them.
const VISITED_FILES: usize = 20_000;

/// The data files under `root` (by name: a table, JSON, JSON lines or a log), as the
/// workspace names them, at most `LISTED_FILES + 1`.
fn data_files(workspace: &Workspace, root: &std::path::Path) -> Vec<String> {
    files_under(root, VISITED_FILES)
        .filter(|entry| {
            let name = entry.file_name().to_string_lossy().to_ascii_lowercase();
            is_data_name(&name) || name.ends_with(".json")
        })
        .map(|entry| workspace.relative(entry.path()))
        .take(LISTED_FILES + 1)
        .collect()
}

/// The files of `found` as a result lists them.
fn quoted_list(found: &[String]) -> String {
    found
        .iter()
        .take(LISTED_FILES)
        .map(|f| format!("`{f}`"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// The reply to a path that does not exist: the workspace's data files, so the next
/// call names one of them.
fn missing_file(workspace: &Workspace, shown: &str) -> String {
    let found = data_files(workspace, workspace.root());
    match found.len() {
        0 => format!("`{shown}` does not exist, and no data file (CSV, TSV, JSON, JSON lines, log) is in the workspace. Use search to find where the data is."),
        n if n > LISTED_FILES => format!(
            "`{shown}` does not exist. Data files in the workspace include {}. Call {NAME} again with the path of the one the task means.",
            quoted_list(&found)
        ),
        _ => format!(
            "`{shown}` does not exist. Data files in the workspace: {}. Call {NAME} again with the path of the one the task means.",
            quoted_list(&found)
        ),
    }
}

/// The reply to a directory: its data files, so the next call names one of them.
fn directory(workspace: &Workspace, dir: &std::path::Path, shown: &str) -> String {
    let found = data_files(workspace, dir);
    match found.len() {
        0 => format!("`{shown}` is a directory and holds no data file (CSV, TSV, JSON, JSON lines, log); {NAME} reads one data file."),
        n if n > LISTED_FILES => format!(
            "`{shown}` is a directory; {NAME} reads one data file. Its data files include {}. Call {NAME} again with the path of the one the task means.",
            quoted_list(&found)
        ),
        _ => format!(
            "`{shown}` is a directory; {NAME} reads one data file. Its data files: {}. Call {NAME} again with the path of the one the task means.",
            quoted_list(&found)
        ),
    }
}

fn run(workspace: &Workspace, query: &Query<'_>) -> ToolOutcome {
    if !OPS.contains(&query.op) {
        return ToolOutcome::failure(format!(
            "{NAME}: `op` must be one of {}; got `{}`. Call {NAME} again with it corrected.",
            OPS.join(", "),
            query.op
        ));
    }
    let resolved = match workspace.resolve(query.path) {
        Ok(resolved) => resolved,
        Err(refusal) => return ToolOutcome::failure(refusal.to_string()),
    };
    let shown_path = workspace.relative(&resolved);
    if resolved.is_dir() {
        return ToolOutcome::failure(directory(workspace, &resolved, &shown_path));
    }
    if std::fs::metadata(&resolved).is_ok_and(|m| m.len() > MAX_BYTES) {
        return ToolOutcome::failure(format!(
            "`{shown_path}` is over {} MiB; {NAME} reads smaller files.",
            MAX_BYTES / 1024 / 1024
        ));
    }
    let text = match std::fs::read(&resolved) {
        Ok(bytes) => String::from_utf8_lossy(&bytes).into_owned(),
        Err(_) => return ToolOutcome::failure(missing_file(workspace, &shown_path)),
    };
    let (layout, records) = parse(&shown_path, &text);
    let known = field_names(&records);
    let conditions: Vec<Condition> = query
        .conditions
        .iter()
        .filter_map(|c| Condition::parse(c))
        .collect();
    let matching: Vec<&Record> = records
        .iter()
        .filter(|r| conditions.iter().all(|c| c.holds(r, &known)))
        .collect();
    let mut out = format!("`{shown_path}`: {} {}", records.len(), layout.describe());
    match known.is_empty() {
        true => out.push_str(" (no named fields; conditions match words).\n"),
        false => out.push_str(&format!("; fields: {}.\n", known.join(", "))),
    }
    let read: Vec<String> = conditions.iter().map(|c| c.describe(&known)).collect();
    match read.is_empty() {
        true => out.push_str(&format!("All {} records taken.\n", records.len())),
        false => out.push_str(&format!(
            "{} of {} match: {}.\n",
            matching.len(),
            records.len(),
            read.join("; ")
        )),
    }
    let (answer, shown) = match outcome(query, &conditions, &matching, &known) {
        Ok(done) => done,
        Err(message) => return ToolOutcome::failure(format!("{out}{message}")),
    };
    out.push_str(&answer);
    out.push('\n');
    let limit = if query.op == "list" { LISTED } else { SHOWN };
    push_records(&mut out, query.op, &shown, limit);
    if matching.is_empty() && !conditions.is_empty() {
        out.push_str(nothing_matched(&conditions, &records, &known).trim_start());
        out.push('\n');
        if let Some(instead) = over_all_records(query, &conditions, &records, &known) {
            out.push_str(&instead);
        }
    }
    let outcome = ToolOutcome::success(out.trim_end().to_string());
    match matching.is_empty() {
        true => outcome.nothing_found(),
        false => outcome,
    }
}

/// The records a result shows under its result line.
fn push_records(out: &mut String, op: &str, shown: &[&Record], limit: usize) {
    if shown.is_empty() {
        return;
    }
    let heading = match op {
        "min" | "max" | "first" | "last" => "The record",
        _ => "Matching records",
    };
    out.push_str(&format!("{heading}:\n"));
    for record in shown.iter().take(limit) {
        out.push_str(&format!("{:>5}| {}\n", record.line, record.text));
    }
    if shown.len() > limit {
        out.push_str(&format!("[{} more not shown]\n", shown.len() - limit));
    }
}

/// A pick (lowest, highest, first, last) over every record, when no record met the
/// conditions and each of them was on the very field the pick goes by (`rating = 1`
/// for the lowest rating): the pick itself is what those conditions tried to say.
fn over_all_records(
    query: &Query<'_>,
    conditions: &[Condition],
    records: &[Record],
    known: &[String],
) -> Option<String> {
    if !matches!(query.op, "min" | "max" | "first" | "last") {
        return None;
    }
    let field = query.field?;
    let on_field = conditions.iter().all(|c| {
        c.compared_field(known)
            .is_some_and(|f| f.eq_ignore_ascii_case(field))
    });
    if !on_field {
        return None;
    }
    let all: Vec<&Record> = records.iter().collect();
    let (line, shown) = outcome(query, conditions, &all, known).ok()?;
    let mut out = format!(
        "Every condition was on `{field}`, the field this picks by; over all {} records instead: {}\n",
        records.len(),
        line.trim_start_matches("Result: ")
    );
    push_records(&mut out, query.op, &shown, SHOWN);
    Some(out)
}

/// The result line and the records shown under it; an error names what is missing.
/// `conditions` are the call's, as read.
fn outcome<'r>(
    query: &Query<'_>,
    conditions: &[Condition],
    matching: &[&'r Record],
    known: &[String],
) -> Result<(String, Vec<&'r Record>), String> {
    let needs_field = matches!(query.op, "sum" | "min" | "max");
    // A field no record has, where the operation does not need one (an order for
    // first or last, a field to count): file order, and the result says so.
    let mut ignored = String::new();
    let field = match query.field {
        Some(field) if !needs_field && !known.iter().any(|k| k.eq_ignore_ascii_case(field)) => {
            ignored = format!(" (no field is named `{field}`, so it was not used)");
            None
        }
        Some(field) => Some(
            known
                .iter()
                .find(|k| k.eq_ignore_ascii_case(field))
                .ok_or_else(|| {
                    format!(
                        "No field is named `{field}`; the fields are: {}. Call {NAME} again with one of them.",
                        with_examples(known, matching)
                    )
                })?
                .as_str(),
        ),
        None if needs_field => {
            return Err(format!(
                "`{}` needs `field`: one of {}. Call {NAME} again with it.",
                query.op,
                listed(known)
            ))
        }
        None => None,
    };
    let all = matching.to_vec();
    match query.op {
        "count" => {
            let mut line = format!("Result: {}{ignored}", matching.len());
            // A count asked with a number field: the field's total too, in case
            // the total was meant.
            if let Some(field) = field {
                let values = numbers_of(matching, field);
                if !values.is_empty() && values.len() == matching.len() {
                    line.push_str(&format!(
                        " records; the sum of their {field} is {}",
                        shown_number(values.iter().sum())
                    ));
                }
            }
            Ok((line, all))
        }
        "list" => Ok((format!("Result: {} records{ignored}", matching.len()), all)),
        "sum" => {
            let field = field.unwrap_or_default();
            let values = numbers_of(matching, field);
            let skipped = matching.len() - values.len();
            let mut line = format!(
                "Result: {} (sum of {field} over {} records)",
                shown_number(values.iter().sum()),
                values.len()
            );
            if skipped > 0 {
                line.push_str(&format!(
                    "; {skipped} records without a number in {field} left out"
                ));
            }
            Ok((line, all))
        }
        "min" | "max" => {
            let field = field.unwrap_or_default();
            // Fields the call's own conditions compare come first among those
            // offered instead (`rating > 2` in a max of `name` meant the rating).
            let compared: Vec<&str> = conditions
                .iter()
                .filter_map(|c| c.compared_field(known))
                .collect();
            if let Some(refusal) = unordered(query.op, field, known, &compared, matching) {
                return Err(refusal);
            }
            let best = pick(
                matching,
                |a, b| compare_field(a, b, field),
                query.op == "max",
            );
            Ok(match best {
                Some(record) => (
                    format!(
                        "Result: {} ({} of {field} among {} records)",
                        record.field(field).unwrap_or_default(),
                        if query.op == "max" {
                            "highest"
                        } else {
                            "lowest"
                        },
                        matching.len()
                    ),
                    vec![record],
                ),
                None => ("Result: none (no record matches)".to_string(), Vec::new()),
            })
        }
        _ => {
            let last = query.op == "last";
            // Records are ordered by a field of numbers or times; by names or ids
            // they are not (the field is then what the result states of the pick).
            let ordering = field.filter(|f| matching.iter().filter_map(|r| r.field(f)).all(orders));
            let best = match ordering {
                Some(field) => pick(matching, |a, b| compare_field(a, b, field), last),
                None if last => matching.last().copied(),
                None => matching.first().copied(),
            };
            let order = match (ordering, field) {
                (Some(field), _) => format!("by {field}"),
                (None, Some(field)) => {
                    format!("in file order: `{field}` holds no numbers or times to order by")
                }
                (None, None) => "in file order".to_string(),
            };
            Ok(match best {
                Some(record) => {
                    let mut line = format!(
                        "Result: the {} of {} matching records ({order}) is at line {}{ignored}",
                        query.op,
                        matching.len(),
                        record.line
                    );
                    if let Some(value) = field.and_then(|f| Some((f, record.field(f)?))) {
                        line.push_str(&format!("; its {} is `{}`", value.0, value.1));
                    }
                    (line, vec![record])
                }
                None => ("Result: none (no record matches)".to_string(), Vec::new()),
            })
        }
    }
}

/// The values of `field` that are numbers, over `records`.
fn numbers_of(records: &[&Record], field: &str) -> Vec<f64> {
    records
        .iter()
        .filter_map(|r| r.field(field).and_then(number))
        .collect()
}

/// Why `op` (min or max) cannot pick by `field`: none of its values among `matching`
/// is a number or a time, so "the highest name" would be the last in the alphabet,
/// which no one asks for. The message names the fields that do order records, those
/// in `compared` (the call's conditions) first; the record a pick shows has `field` too.
fn unordered(
    op: &str,
    field: &str,
    known: &[String],
    compared: &[&str],
    matching: &[&Record],
) -> Option<String> {
    let values: Vec<&str> = matching.iter().filter_map(|r| r.field(field)).collect();
    if values.is_empty() || values.iter().any(|v| orders(v)) {
        return None;
    }
    let mut ordering: Vec<String> = known
        .iter()
        .filter(|name| {
            let mut values = matching.iter().filter_map(|r| r.field(name)).peekable();
            values.peek().is_some() && values.all(orders)
        })
        .cloned()
        .collect();
    // A stable sort: the compared fields first, each group in the file's order.
    ordering.sort_by_key(|name| !compared.iter().any(|c| c.eq_ignore_ascii_case(name)));
    let (lowest_or_highest, picks) = match op {
        "min" => ("lowest", "the record with the lowest"),
        _ => ("highest", "the record with the highest"),
    };
    Some(match ordering.is_empty() {
        true => format!(
            "`{field}` holds no numbers or times, so no record has its {lowest_or_highest} `{field}`, and no field here holds numbers or times to pick by. To see the records, call {NAME} with op `list`."
        ),
        false => format!(
            "`{field}` holds no numbers or times, so no record has its {lowest_or_highest} `{field}`. {op} picks {picks} value of a field of numbers or times — here {} — and shows that whole record, its `{field}` included. Call {NAME} again with one of them as `field`.",
            with_examples(&ordering, matching)
        ),
    })
}

/// Field names each with a value from the first record that has it (`price` (`279`)),
/// so the next call can pick the field by what it holds.
fn with_examples(names: &[String], records: &[&Record]) -> String {
    if names.is_empty() {
        return listed(names);
    }
    names
        .iter()
        .map(|name| match records.iter().find_map(|r| r.field(name)) {
            Some(value) if !value.is_empty() && value.chars().count() <= 40 => {
                format!("{name} (`{value}`)")
            }
            _ => name.clone(),
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// Field names as a result lists them.
fn listed(known: &[String]) -> String {
    match known.is_empty() {
        true => "(none)".to_string(),
        false => known.join(", "),
    }
}

fn compare_field(a: &Record, b: &Record, field: &str) -> Ordering {
    match (a.field(field), b.field(field)) {
        (Some(x), Some(y)) => compare(x, y),
        (Some(_), None) => Ordering::Greater,
        (None, Some(_)) => Ordering::Less,
        (None, None) => Ordering::Equal,
    }
}

/// The highest (or lowest) record by `order`; the first of equals.
fn pick<'r>(
    records: &[&'r Record],
    order: impl Fn(&Record, &Record) -> Ordering,
    highest: bool,
) -> Option<&'r Record> {
    let mut best: Option<&'r Record> = None;
    for record in records {
        best = match best {
            None => Some(record),
            Some(current) => {
                let better = match highest {
                    true => order(record, current) == Ordering::Greater,
                    false => order(record, current) == Ordering::Less,
                };
                Some(if better { record } else { current })
            }
        };
    }
    best
}

#[cfg(test)]
mod tests;
