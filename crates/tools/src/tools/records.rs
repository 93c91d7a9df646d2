//! A data file read as records with named fields: CSV or TSV with a header row, a JSON
//! list of objects (or an object holding one), JSON lines, and text lines whose
//! `key=value` pairs are fields (logfmt), the date or time and the severity word that
//! open a text line being its fields `time` and `level` — every line also keeps its words, so a condition on a field the line
//! does not name can still match it as a word.

use serde_json::Value;

/// One record: where it is, how it reads, its fields and its words.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Record {
    /// Its line in the file (1-based); for a JSON list, its position in the list.
    pub line: usize,
    /// The record as shown: the line, or the object as compact JSON.
    pub text: String,
    /// Its fields in order, nested JSON keys joined with dots.
    pub fields: Vec<(String, String)>,
}

impl Record {
    /// The value of `name` (letter case ignored), if the record has that field.
    pub(crate) fn field(&self, name: &str) -> Option<&str> {
        self.fields
            .iter()
            .find(|(key, _)| key.eq_ignore_ascii_case(name))
            .map(|(_, value)| value.as_str())
    }

    /// Whether the record holds `text`: a field's whole value, or else each of its
    /// words among the record's words (any order).
    pub(crate) fn has_words(&self, text: &str) -> bool {
        let text = text.trim();
        if self
            .fields
            .iter()
            .any(|(_, v)| v.eq_ignore_ascii_case(text))
        {
            return true;
        }
        let mut words = text.split_whitespace().peekable();
        words.peek().is_some() && words.all(|word| self.has_word(word))
    }

    /// Whether `word` is one of the record's words (letter case and a plural or
    /// verb `s` ignored: `warns` is `WARN`): a field's value, or a token of its text
    /// with brackets and quotes stripped.
    fn has_word(&self, word: &str) -> bool {
        let word = word.trim_matches(|c: char| "[](){}<>\"'`:,.".contains(c));
        !word.is_empty()
            && (self.fields.iter().any(|(_, v)| same_word(v, word))
                || self
                    .text
                    .split(|c: char| c.is_whitespace() || ",;|=".contains(c))
                    .map(|token| token.trim_matches(|c: char| "[](){}<>\"'`:".contains(c)))
                    .any(|token| same_word(token, word)))
    }
}

/// Two words the same but for letter case and a trailing `s` of one of them.
pub(crate) fn same_word(a: &str, b: &str) -> bool {
    let stem = |w: &str| -> String {
        let lower = w.to_lowercase();
        match lower.len() > 3 && lower.ends_with('s') && !lower.ends_with("ss") {
            true => lower[..lower.len() - 1].to_string(),
            false => lower,
        }
    };
    a.eq_ignore_ascii_case(b) || (!a.is_empty() && !b.is_empty() && stem(a) == stem(b))
}

/// What kind of data a file held.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Layout {
    /// Rows under a header, split by the separator.
    Table(char),
    /// A JSON list of objects.
    JsonList,
    /// One record a line (JSON lines, `key=value` pairs, or plain text).
    Lines,
}

impl Layout {
    /// The layout in words.
    pub(crate) fn describe(self) -> &'static str {
        match self {
            Layout::Table('\t') => "TSV rows",
            Layout::Table(_) => "CSV rows",
            Layout::JsonList => "JSON objects",
            Layout::Lines => "lines",
        }
    }
}

/// The records of a file named `name` holding `text`.
pub(crate) fn parse(name: &str, text: &str) -> (Layout, Vec<Record>) {
    if let Some(records) = json_list(text) {
        return (Layout::JsonList, records);
    }
    if let Some(separator) = table_separator(name, text) {
        if let Some(records) = table(text, separator) {
            return (Layout::Table(separator), records);
        }
    }
    (Layout::Lines, lines(text))
}

/// Data files larger than this get no hint.
const HINT_MAX_BYTES: u64 = 1024 * 1024;

/// Whether a (lowercase) file name is a data file's by its extension: a table, JSON
/// lines, or a log (rotated ones too).
pub(crate) fn is_data_name(lower: &str) -> bool {
    [".csv", ".tsv", ".jsonl", ".ndjson", ".log"]
        .iter()
        .any(|ext| lower.ends_with(ext))
        || lower.contains(".log.")
}

/// The note a look at a data file ends with when `query_data` is offered: what the
/// file holds and that the tool counts, sums and picks its records. `None` for a file
/// that is not data (prose, code) or has fewer than three records.
pub(crate) fn data_hint(path: &std::path::Path, shown: &str) -> Option<String> {
    let metadata = std::fs::metadata(path).ok()?;
    if !metadata.is_file() || metadata.len() > HINT_MAX_BYTES {
        return None;
    }
    // A `.json` file is data only as a list of objects (a config file is not).
    let data_name = is_data_name(&shown.to_ascii_lowercase());
    let text = std::fs::read_to_string(path).ok()?;
    let (layout, records) = parse(shown, &text);
    let tabular = matches!(layout, Layout::Table(_) | Layout::JsonList);
    if records.len() < 3 || !(data_name || tabular) {
        return None;
    }
    let names = field_names(&records);
    let fields = match names.is_empty() {
        true => String::new(),
        false => format!("; fields: {}", names.join(", ")),
    };
    Some(format!(
        "(`{shown}` is a data file of {} {}{fields}. query_data counts, sums, or finds the lowest, highest, first or last of its records that meet conditions.)",
        records.len(),
        layout.describe()
    ))
}

/// The field names of `records`, in the order first seen.
pub(crate) fn field_names(records: &[Record]) -> Vec<String> {
    let mut names: Vec<String> = Vec::new();
    for record in records {
        for (key, _) in &record.fields {
            if !names.iter().any(|n| n.eq_ignore_ascii_case(key)) {
                names.push(key.clone());
            }
        }
    }
    names
}

/// A whole-file JSON list of objects, or an object whose one list of objects it is.
fn json_list(text: &str) -> Option<Vec<Record>> {
    let trimmed = text.trim_start();
    if !trimmed.starts_with(['[', '{']) {
        return None;
    }
    let value: Value = serde_json::from_str(text).ok()?;
    let items = match &value {
        Value::Array(items) => items,
        Value::Object(map) => {
            let mut lists = map
                .values()
                .filter_map(Value::as_array)
                .filter(|items| items.iter().any(Value::is_object));
            let list = lists.next()?;
            if lists.next().is_some() {
                return None;
            }
            list
        }
        _ => return None,
    };
    let records: Vec<Record> = items
        .iter()
        .enumerate()
        .filter(|(_, item)| item.is_object())
        .map(|(index, item)| Record {
            line: index + 1,
            text: item.to_string(),
            fields: flattened(item),
        })
        .collect();
    (!records.is_empty()).then_some(records)
}

/// The separator of a table: by the file's extension, or a header and rows that split
/// into the same number of columns (two at least) on a tab, `;`, `|` or `,`.
fn table_separator(name: &str, text: &str) -> Option<char> {
    let lower = name.to_ascii_lowercase();
    if lower.ends_with(".tsv") || lower.ends_with(".tab") {
        return Some('\t');
    }
    let mut rows = text.lines().filter(|line| !line.trim().is_empty());
    let header = rows.next()?;
    let sample: Vec<&str> = rows.take(5).collect();
    let consistent = |separator: char| {
        let columns = header.split(separator).count();
        columns >= 2
            && !sample.is_empty()
            && sample
                .iter()
                .all(|row| row.split(separator).count() == columns)
    };
    if lower.ends_with(".csv") {
        return ['\t', ';', '|', ',']
            .into_iter()
            .find(|s| consistent(*s))
            .or(Some(','));
    }
    // Not a table: a header of `key=value` pairs or of JSON.
    if header.contains('=') || header.trim_start().starts_with('{') {
        return None;
    }
    ['\t', ';', '|', ','].into_iter().find(|s| consistent(*s))
}

/// Rows under a header, quoted fields as CSV quotes them.
fn table(text: &str, separator: char) -> Option<Vec<Record>> {
    let delimiter = u8::try_from(separator).ok()?;
    let mut reader = csv::ReaderBuilder::new()
        .delimiter(delimiter)
        .flexible(true)
        .trim(csv::Trim::All)
        .from_reader(text.as_bytes());
    let header: Vec<String> = reader.headers().ok()?.iter().map(str::to_string).collect();
    let source: Vec<&str> = text.lines().collect();
    let mut records = Vec::new();
    for row in reader.records() {
        let row = row.ok()?;
        let line = row.position().map_or(0, |p| p.line() as usize);
        let fields = header
            .iter()
            .zip(row.iter())
            .map(|(key, value)| (key.clone(), value.to_string()))
            .collect();
        let shown = source.get(line.saturating_sub(1)).map_or_else(
            || row.iter().collect::<Vec<_>>().join(","),
            |l| (*l).to_string(),
        );
        records.push(Record {
            line,
            text: shown,
            fields,
        });
    }
    Some(records)
}

/// One record a non-empty line: a JSON object's fields, or the line's `key=value`
/// pairs (values may be quoted).
fn lines(text: &str) -> Vec<Record> {
    text.lines()
        .enumerate()
        .filter(|(_, line)| !line.trim().is_empty())
        .map(|(index, line)| {
            let trimmed = line.trim();
            let fields = match serde_json::from_str::<Value>(trimmed) {
                Ok(value @ Value::Object(_)) => flattened(&value),
                _ => with_opening_fields(trimmed, pairs(trimmed)),
            };
            Record {
                line: index + 1,
                text: line.to_string(),
                fields,
            }
        })
        .collect()
}

/// The name of the field a text line's opening date or time is.
pub(crate) const OPENING_TIME: &str = "time";
/// The name of the field a text line's severity word is.
pub(crate) const OPENING_LEVEL: &str = "level";
/// Severity words a log line opens with (after its time), in any letter case.
const LEVELS: [&str; 10] = [
    "trace", "debug", "info", "notice", "warn", "warning", "error", "fatal", "critical", "panic",
];

/// `fields` with what opens `line` first: its date or time as field [`OPENING_TIME`]
/// (`2026-03-09T08:44:08Z evt-5RVJ7 user=Farah`, `[2026-03-09 08:44:08] …`) and the
/// severity word after it as field [`OPENING_LEVEL`] (`… WARN [queue] retrying`),
/// unless a pair already names that field: the time and level a plain log line was
/// written with, which picks order by and counts select on.
fn with_opening_fields(line: &str, mut fields: Vec<(String, String)>) -> Vec<(String, String)> {
    let named = |fields: &[(String, String)], name: &str| {
        fields.iter().any(|(key, _)| key.eq_ignore_ascii_case(name))
    };
    let mut tokens = line
        .split_whitespace()
        .map(|token| token.trim_matches(|c: char| "[]()<>,:".contains(c)))
        .filter(|token| !token.contains('='))
        .peekable();
    let mut opening = Vec::new();
    if let Some(first) = tokens.next_if(|token| is_date(token)) {
        // A date and a clock written apart (`2026-03-09 08:44:08`) are one time.
        let time = match tokens.next_if(|token| first.len() == 10 && is_clock(token)) {
            Some(clock) => format!("{first} {clock}"),
            None => first.to_string(),
        };
        if !named(&fields, OPENING_TIME) {
            opening.push((OPENING_TIME.to_string(), time));
        }
        if let Some(level) =
            tokens.next_if(|token| LEVELS.iter().any(|l| l.eq_ignore_ascii_case(token)))
        {
            if !named(&fields, OPENING_LEVEL) {
                opening.push((OPENING_LEVEL.to_string(), level.to_string()));
            }
        }
    }
    opening.append(&mut fields);
    opening
}

/// `2026-03-09`, alone or followed by a time of day (`2026-03-09T08:44:08Z`).
fn is_date(token: &str) -> bool {
    let bytes = token.as_bytes();
    let digits = |range: std::ops::Range<usize>| {
        bytes
            .get(range)
            .is_some_and(|b| b.iter().all(u8::is_ascii_digit))
    };
    digits(0..4)
        && bytes.get(4) == Some(&b'-')
        && digits(5..7)
        && bytes.get(7) == Some(&b'-')
        && digits(8..10)
        && bytes
            .get(10)
            .is_none_or(|b| matches!(b, b'T' | b't' | b'_'))
}

/// `08:44:08`, `08:44`, `08:44:08.123Z`.
fn is_clock(token: &str) -> bool {
    let bytes = token.as_bytes();
    bytes.len() >= 5
        && bytes[..2].iter().all(u8::is_ascii_digit)
        && bytes[2] == b':'
        && bytes[3..5].iter().all(u8::is_ascii_digit)
}

/// The `key=value` pairs of a line, a value in double quotes taken whole.
fn pairs(line: &str) -> Vec<(String, String)> {
    let mut fields = Vec::new();
    let mut rest = line;
    while let Some(at) = rest.find('=') {
        let key_start = rest[..at]
            .rfind(|c: char| c.is_whitespace())
            .map_or(0, |i| i + 1);
        let key = rest[key_start..at].trim();
        let after = &rest[at + 1..];
        let (value, next) = match after.strip_prefix('"') {
            Some(quoted) => match quoted.find('"') {
                Some(end) => (&quoted[..end], &quoted[end + 1..]),
                None => (quoted, ""),
            },
            None => {
                let end = after.find(char::is_whitespace).unwrap_or(after.len());
                (&after[..end], &after[end..])
            }
        };
        let plain_key = !key.is_empty()
            && key
                .chars()
                .all(|c| c.is_alphanumeric() || "_.-".contains(c));
        if plain_key {
            fields.push((key.to_string(), value.to_string()));
        }
        rest = next;
    }
    fields
}

/// A JSON object's leaves as fields, nested keys joined with dots, lists of leaves
/// joined with commas.
fn flattened(value: &Value) -> Vec<(String, String)> {
    fn walk(prefix: &str, value: &Value, out: &mut Vec<(String, String)>) {
        match value {
            Value::Object(map) => {
                for (key, inner) in map {
                    let path = match prefix.is_empty() {
                        true => key.clone(),
                        false => format!("{prefix}.{key}"),
                    };
                    walk(&path, inner, out);
                }
            }
            Value::String(text) => out.push((prefix.to_string(), text.clone())),
            Value::Array(items) => {
                let shown: Vec<String> = items
                    .iter()
                    .map(|item| match item {
                        Value::String(text) => text.clone(),
                        other => other.to_string(),
                    })
                    .collect();
                out.push((prefix.to_string(), shown.join(", ")));
            }
            Value::Null => out.push((prefix.to_string(), String::new())),
            other => out.push((prefix.to_string(), other.to_string())),
        }
    }
    let mut out = Vec::new();
    walk("", value, &mut out);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_csv_with_quoted_fields_is_rows_under_its_header() {
        let text = "city,note,qty\n\"Quito, IN\",gift wrap,143\nLisbon,\"ask for \"\"T\"\"\",117\n";
        let (layout, records) = parse("metrics.csv", text);
        assert_eq!(layout, Layout::Table(','));
        assert_eq!(records.len(), 2);
        assert_eq!(records[0].field("city"), Some("Quito, IN"));
        assert_eq!(records[1].field("NOTE"), Some("ask for \"T\""));
        assert_eq!(records[1].line, 3);
        assert_eq!(records[1].text, "Lisbon,\"ask for \"\"T\"\"\",117");
    }

    #[test]
    fn a_tsv_and_a_semicolon_table_are_found_by_their_columns() {
        let (layout, records) = parse("sales.tsv", "id\tregion\tunits\n1\tnorth\t4\n");
        assert_eq!(layout, Layout::Table('\t'));
        assert_eq!(records[0].field("units"), Some("4"));
        let (layout, _) = parse("export.txt", "a;b;c\n1;2;3\n4;5;6\n");
        assert_eq!(layout, Layout::Table(';'));
    }

    #[test]
    fn json_lists_json_lines_and_logfmt_lines_have_named_fields() {
        let (layout, records) = parse(
            "p.json",
            r#"{"products": [{"name": "lamp", "dims": {"w": 3}}, {"name": "desk"}]}"#,
        );
        assert_eq!(layout, Layout::JsonList);
        assert_eq!(records[0].field("dims.w"), Some("3"));
        let (layout, records) = parse(
            "e.jsonl",
            "{\"id\":\"evt-1\",\"user\":\"Ana\"}\n\n{\"id\":\"evt-2\",\"user\":\"Bo\"}\n",
        );
        assert_eq!(layout, Layout::Lines);
        assert_eq!((records[1].line, records[1].field("user")), (3, Some("Bo")));
        let (_, records) = parse(
            "w.log",
            "time=2026-03-04T10:48:36Z level=error component=gateway msg=\"request failed\"\n",
        );
        assert_eq!(records[0].field("msg"), Some("request failed"));
        assert_eq!(records[0].field("level"), Some("error"));
    }

    #[test]
    fn a_plain_log_line_keeps_its_words() {
        let (layout, records) = parse(
            "app.log",
            "2026-03-04T10:48:36Z ERROR [gateway] request failed\n",
        );
        assert_eq!(layout, Layout::Lines);
        assert_eq!(
            records[0].fields,
            vec![
                ("time".to_string(), "2026-03-04T10:48:36Z".to_string()),
                ("level".to_string(), "ERROR".to_string())
            ]
        );
        assert!(records[0].has_word("error") && records[0].has_word("gateway"));
        assert!(!records[0].has_word("gate"));
    }

    #[test]
    fn the_date_or_time_opening_a_text_line_is_its_time_field() {
        let (_, records) = parse(
            "events.log",
            "2026-03-09T08:44:08Z evt-5RVJ7 user=Farah event=refund\n[2026-03-09 09:01:00] evt-2 user=Bo\n",
        );
        assert_eq!(records[0].field("time"), Some("2026-03-09T08:44:08Z"));
        assert_eq!(records[0].field("user"), Some("Farah"));
        assert_eq!(records[1].field("time"), Some("2026-03-09 09:01:00"));
        // A pair named `time` is the line's own; a number or a word opening a line is
        // no time; a date inside a pair is that pair's value.
        let (_, records) = parse(
            "w.log",
            "2026-03-09 time=10:00 level=info\n1712 started\nstarted at 2026-03-09\nday=2026-03-09 ok\n",
        );
        assert_eq!(records[0].field("time"), Some("10:00"));
        assert_eq!(records[1].field("time"), None);
        assert_eq!(records[2].field("time"), None);
        assert_eq!(
            records[3].fields,
            vec![("day".to_string(), "2026-03-09".to_string())]
        );
        // The severity word after the time; a word that is none is no level.
        let (_, records) = parse(
            "server.log",
            "2026-03-04 10:06:42 warn [queue] job done\n2026-03-04T10:09:03Z [storage] retrying\n",
        );
        assert_eq!(records[0].field("time"), Some("2026-03-04 10:06:42"));
        assert_eq!(records[0].field("level"), Some("warn"));
        assert_eq!(records[1].field("level"), None);
    }
}
