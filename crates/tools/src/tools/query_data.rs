//! `query_data`: counts, sums, the lowest or highest, and the first or last of the
//! records of a data file that meet conditions — the arithmetic a small model gets
//! wrong when it reads the rows itself. The result states the number, how many records
//! matched out of how many, how each condition was read, and the matching records.

use std::cmp::Ordering;

use serde_json::{json, Value};

use super::records::{field_names, is_data_name, parse, Record};
use super::spec::function_spec;
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

/// One condition: a comparison of a field, or a word.
#[derive(Debug, Clone, PartialEq)]
enum Condition {
    Compare {
        field: String,
        op: Cmp,
        value: String,
    },
    Word(String),
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum Cmp {
    Eq,
    Ne,
    Lt,
    Gt,
    Le,
    Ge,
}

impl Condition {
    fn parse(text: &str) -> Option<Self> {
        let text = text.trim();
        if text.is_empty() {
            return None;
        }
        for (token, op) in [
            ("!=", Cmp::Ne),
            ("<=", Cmp::Le),
            (">=", Cmp::Ge),
            ("==", Cmp::Eq),
            ("=", Cmp::Eq),
            ("<", Cmp::Lt),
            (">", Cmp::Gt),
        ] {
            if let Some((field, value)) = text.split_once(token) {
                let field = field.trim();
                if !field.is_empty() && !field.contains(char::is_whitespace) {
                    return Some(Condition::Compare {
                        field: field.to_string(),
                        op,
                        value: unquoted(value).to_string(),
                    });
                }
            }
        }
        Some(Condition::Word(unquoted(text).to_string()))
    }

    /// Whether `record` meets it; a field no record has is matched as a word.
    fn holds(&self, record: &Record, known: &[String]) -> bool {
        match self {
            Condition::Word(word) => record.has_word(word),
            Condition::Compare { field, op, value } => {
                if !known.iter().any(|k| k.eq_ignore_ascii_case(field)) {
                    return *op == Cmp::Eq && record.has_word(value);
                }
                let Some(have) = record.field(field) else {
                    return *op == Cmp::Ne;
                };
                let order = compare(have, value);
                match op {
                    Cmp::Eq => order == Ordering::Equal,
                    Cmp::Ne => order != Ordering::Equal,
                    Cmp::Lt => order == Ordering::Less,
                    Cmp::Gt => order == Ordering::Greater,
                    Cmp::Le => order != Ordering::Greater,
                    Cmp::Ge => order != Ordering::Less,
                }
            }
        }
    }

    /// How it was read, for the result.
    fn describe(&self, known: &[String]) -> String {
        match self {
            Condition::Word(word) => format!("contains the word `{word}`"),
            Condition::Compare { field, op, value } => {
                let sign = match op {
                    Cmp::Eq => "=",
                    Cmp::Ne => "!=",
                    Cmp::Lt => "<",
                    Cmp::Gt => ">",
                    Cmp::Le => "<=",
                    Cmp::Ge => ">=",
                };
                match known.iter().any(|k| k.eq_ignore_ascii_case(field)) {
                    true => format!("{field} {sign} {value}"),
                    false if *op == Cmp::Eq => {
                        format!("contains the word `{value}` (no field is named `{field}`)")
                    }
                    false => format!(
                        "{field} {sign} {value} (no field is named `{field}`: nothing matches)"
                    ),
                }
            }
        }
    }
}

fn unquoted(text: &str) -> &str {
    text.trim()
        .trim_matches(|c| c == '"' || c == '\'' || c == '`')
}

/// Two values compared as numbers when both are, else as text (letter case ignored;
/// ISO dates and times sort so).
fn compare(a: &str, b: &str) -> Ordering {
    match (number(a), number(b)) {
        (Some(x), Some(y)) => x.partial_cmp(&y).unwrap_or(Ordering::Equal),
        _ => a.trim().to_lowercase().cmp(&b.trim().to_lowercase()),
    }
}

/// A value as a number: digits with an optional sign, decimal point and a leading
/// currency sign or trailing percent.
fn number(text: &str) -> Option<f64> {
    let text = text.trim();
    let text = text
        .trim_start_matches(['$', '€', '£'])
        .trim_end_matches('%');
    if text.is_empty() || !text.chars().any(|c| c.is_ascii_digit()) {
        return None;
    }
    text.parse::<f64>().ok().filter(|n| n.is_finite())
}

/// A number as the result states it: whole numbers without a fraction.
fn shown_number(value: f64) -> String {
    if value.fract() == 0.0 && value.abs() < 1e15 {
        format!("{}", value as i64)
    } else {
        let text = format!("{value:.6}");
        text.trim_end_matches('0').trim_end_matches('.').to_string()
    }
}

/// Data files listed at most when the one asked for is not there.
const LISTED_FILES: usize = 8;
/// Files visited at most when listing them.
const VISITED_FILES: usize = 20_000;

/// The reply to a path that does not exist: the workspace's data files (by name: a
/// table, JSON, JSON lines or a log), so the next call names one of them.
fn missing_file(workspace: &Workspace, shown: &str) -> String {
    let found: Vec<String> = ignore::WalkBuilder::new(workspace.root())
        .require_git(false)
        .sort_by_file_name(|a, b| a.cmp(b))
        .build()
        .filter_map(Result::ok)
        .take(VISITED_FILES)
        .filter(|entry| entry.file_type().is_some_and(|kind| kind.is_file()))
        .filter(|entry| {
            let name = entry.file_name().to_string_lossy().to_ascii_lowercase();
            is_data_name(&name) || name.ends_with(".json")
        })
        .map(|entry| format!("`{}`", workspace.relative(entry.path())))
        .take(LISTED_FILES + 1)
        .collect();
    match found.len() {
        0 => format!("`{shown}` does not exist, and no data file (CSV, TSV, JSON, JSON lines, log) is in the workspace. Use search to find where the data is."),
        n if n > LISTED_FILES => format!(
            "`{shown}` does not exist. Data files in the workspace include {}. Call {NAME} again with the path of the one the task means.",
            found[..LISTED_FILES].join(", ")
        ),
        _ => format!(
            "`{shown}` does not exist. Data files in the workspace: {}. Call {NAME} again with the path of the one the task means.",
            found.join(", ")
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
        return ToolOutcome::failure(format!(
            "`{shown_path}` is a directory; {NAME} reads one data file. Use list_dir to see its files."
        ));
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
    let (answer, shown) = match outcome(query, &matching, &known) {
        Ok(done) => done,
        Err(message) => return ToolOutcome::failure(format!("{out}{message}")),
    };
    out.push_str(&answer);
    out.push('\n');
    let limit = if query.op == "list" { LISTED } else { SHOWN };
    let heading = match query.op {
        "list" => "Matching records",
        "min" | "max" | "first" | "last" => "The record",
        _ => "Matching records",
    };
    if !shown.is_empty() {
        out.push_str(&format!("{heading}:\n"));
        for record in shown.iter().take(limit) {
            out.push_str(&format!("{:>5}| {}\n", record.line, record.text));
        }
        if shown.len() > limit {
            out.push_str(&format!("[{} more not shown]\n", shown.len() - limit));
        }
    }
    let outcome = ToolOutcome::success(out.trim_end().to_string());
    match matching.is_empty() {
        true => outcome.nothing_found(),
        false => outcome,
    }
}

/// The result line and the records shown under it; an error names what is missing.
fn outcome<'r>(
    query: &Query<'_>,
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
                        listed(known)
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
        "count" => Ok((format!("Result: {}{ignored}", matching.len()), all)),
        "list" => Ok((format!("Result: {} records{ignored}", matching.len()), all)),
        "sum" => {
            let field = field.unwrap_or_default();
            let values: Vec<f64> = matching
                .iter()
                .filter_map(|r| r.field(field).and_then(number))
                .collect();
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
            let best = match field {
                Some(field) => pick(matching, |a, b| compare_field(a, b, field), last),
                None if last => matching.last().copied(),
                None => matching.first().copied(),
            };
            let order = match field {
                Some(field) => format!("by {field}"),
                None => "in file order".to_string(),
            };
            Ok(match best {
                Some(record) => (
                    format!(
                        "Result: the {} of {} matching records ({order}) is at line {}{ignored}",
                        query.op,
                        matching.len(),
                        record.line
                    ),
                    vec![record],
                ),
                None => ("Result: none (no record matches)".to_string(), Vec::new()),
            })
        }
    }
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
mod tests {
    use super::*;
    use crate::tools::test_files::workspace;

    fn query(workspace: &Workspace, args: Value) -> ToolOutcome {
        QueryData.call(&args, workspace)
    }

    #[test]
    fn a_sum_over_the_rows_that_match_states_the_total() {
        let (_dir, ws) = workspace(&[(
            "data/orders.csv",
            "id,channel,orders\n1,phone,59\n2,web,80\n3,phone,28\n4,Phone,10\n",
        )]);
        let out = query(
            &ws,
            json!({"path": "data/orders.csv", "where": ["channel=phone"], "op": "sum", "field": "orders"}),
        );
        assert!(out.ok, "{}", out.text);
        assert!(
            out.text
                .contains("Result: 97 (sum of orders over 3 records)"),
            "{}",
            out.text
        );
        assert!(
            out.text.contains("3 of 4 match: channel = phone."),
            "{}",
            out.text
        );
        assert!(out.text.contains("    2| 1,phone,59"), "{}", out.text);
    }

    #[test]
    fn a_count_on_plain_log_lines_matches_fields_it_lacks_as_words() {
        let (_dir, ws) = workspace(&[(
            "var/log/app.log",
            "t1 ERROR [gateway] request failed\nt2 ERROR [inventory] retrying\nt3 WARN [gateway] slow\nt4 ERROR [gateway] reset\n",
        )]);
        let out = query(
            &ws,
            json!({"path": "var/log/app.log", "where": ["level=ERROR", "component=gateway"], "op": "count"}),
        );
        assert!(out.text.contains("Result: 2"), "{}", out.text);
        assert!(
            out.text
                .contains("contains the word `gateway` (no field is named `component`)"),
            "{}",
            out.text
        );
    }

    #[test]
    fn the_last_matching_event_and_the_highest_value_are_picked() {
        let events = "{\"id\":\"e1\",\"time\":\"2026-03-09T08:00:00Z\",\"user\":\"Ana\",\"event\":\"buy\"}\n\
                      {\"id\":\"e2\",\"time\":\"2026-03-09T09:00:00Z\",\"user\":\"Bo\",\"event\":\"buy\"}\n\
                      {\"id\":\"e3\",\"time\":\"2026-03-09T10:00:00Z\",\"user\":\"Ana\",\"event\":\"buy\"}\n";
        let products = r#"[{"name":"lamp","price":12},{"name":"scanner","price":989},{"name":"desk","price":250}]"#;
        let (_dir, ws) = workspace(&[("events.jsonl", events), ("products.json", products)]);
        let out = query(
            &ws,
            json!({"path": "events.jsonl", "where": {"user": "ana", "event": "buy"}, "op": "last"}),
        );
        assert!(
            out.text
                .contains("the last of 2 matching records (in file order) is at line 3"),
            "{}",
            out.text
        );
        assert!(out.text.contains("\"id\":\"e3\""), "{}", out.text);
        let out = query(
            &ws,
            json!({"path": "products.json", "op": "max", "field": "price"}),
        );
        assert!(
            out.text
                .contains("Result: 989 (highest of price among 3 records)"),
            "{}",
            out.text
        );
        assert!(out.text.contains("scanner"), "{}", out.text);
    }

    #[test]
    fn a_field_that_is_not_there_gets_the_fields_that_are() {
        let (_dir, ws) = workspace(&[("s.csv", "id,units\n1,4\n2,5\n")]);
        let out = query(
            &ws,
            json!({"path": "s.csv", "op": "sum", "field": "quantity"}),
        );
        assert!(!out.ok);
        assert!(
            out.text.contains("the fields are: id, units"),
            "{}",
            out.text
        );
        let out = query(&ws, json!({"path": "s.csv", "op": "average"}));
        assert!(
            !out.ok && out.text.contains("must be one of count, sum"),
            "{}",
            out.text
        );
        let out = query(&ws, json!({"path": "missing.csv", "op": "count"}));
        assert!(
            !out.ok && out.text.contains("does not exist"),
            "{}",
            out.text
        );
    }

    #[test]
    fn an_order_by_a_field_that_is_not_there_is_file_order() {
        let log = "t1 evt-A user=Chen event=refund\nt2 evt-B user=Ana event=refund\nt3 evt-C user=Chen event=refund\n";
        let (_dir, ws) = workspace(&[("audit/events.log", log)]);
        let out = query(
            &ws,
            json!({"path": "audit/events.log", "where": ["event=refund", "user=Chen"], "op": "first", "field": "evt-id"}),
        );
        assert!(out.ok, "{}", out.text);
        assert!(
            out.text
                .contains("is at line 1 (no field is named `evt-id`, so it was not used)"),
            "{}",
            out.text
        );
        assert!(out.text.contains("t1 evt-A user=Chen"), "{}", out.text);
    }

    #[test]
    fn a_look_at_a_data_file_points_to_this_tool_when_the_hint_is_on() {
        let (_dir, mut ws) = workspace(&[
            ("s.csv", "id,units\n1,9\n2,10\n3,100\n"),
            ("notes.md", "# Notes\nsome prose\nmore prose\nand more\n"),
            (
                "config.json",
                "{\n  \"db\": {\n    \"port\": 5432,\n    \"host\": \"x\"\n  }\n}\n",
            ),
        ]);
        let search = |ws: &Workspace, path: &str| {
            crate::Search
                .call(&json!({"pattern": "1", "path": path}), ws)
                .text
        };
        let read =
            |ws: &Workspace, path: &str| crate::ReadFile.call(&json!({"path": path}), ws).text;
        let hint = "(`s.csv` is a data file of 3 CSV rows; fields: id, units. query_data counts";
        assert!(!search(&ws, "s.csv").contains("query_data"));
        ws.set_data_hint(true);
        assert!(
            search(&ws, "s.csv").contains(hint),
            "{}",
            search(&ws, "s.csv")
        );
        assert!(read(&ws, "s.csv").contains(hint), "{}", read(&ws, "s.csv"));
        assert!(!read(&ws, "notes.md").contains("query_data"));
        assert!(!read(&ws, "config.json").contains("query_data"));
        assert!(!search(&ws, ".").contains("query_data"));
    }

    #[test]
    fn a_comparison_of_numbers_is_numeric() {
        let (_dir, ws) = workspace(&[("s.csv", "id,units\n1,9\n2,10\n3,100\n")]);
        let out = query(
            &ws,
            json!({"path": "s.csv", "where": ["units>9"], "op": "count"}),
        );
        assert!(out.text.contains("Result: 2"), "{}", out.text);
    }
}
