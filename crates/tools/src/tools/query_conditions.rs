//! The conditions of a `query_data` call: read from their text, held against a
//! record, described in the result — and, when no record meets them all, what each
//! meets alone and which values the compared fields do hold, so the next call can be
//! corrected from the result instead of guessed again.

use std::cmp::Ordering;

use super::records::{same_word, Record};

/// One condition: a comparison of a field, or words the record must contain.
#[derive(Debug, Clone, PartialEq)]
pub(super) enum Condition {
    Compare {
        field: String,
        op: Cmp,
        value: String,
    },
    Word(String),
}

#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) enum Cmp {
    Eq,
    Ne,
    Lt,
    Gt,
    Le,
    Ge,
}

impl Cmp {
    fn sign(self) -> &'static str {
        match self {
            Cmp::Eq => "=",
            Cmp::Ne => "!=",
            Cmp::Lt => "<",
            Cmp::Gt => ">",
            Cmp::Le => "<=",
            Cmp::Ge => ">=",
        }
    }
}

/// Distinct values of a field a result names at most.
const VALUES_SHOWN: usize = 12;

impl Condition {
    pub(super) fn parse(text: &str) -> Option<Self> {
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

    /// Whether `record` meets it; a field no record has is matched as words.
    pub(super) fn holds(&self, record: &Record, known: &[String]) -> bool {
        match self {
            Condition::Word(word) => record.has_words(word),
            Condition::Compare { field, op, value } => {
                if !is_known(known, field) {
                    return *op == Cmp::Eq && record.has_words(value);
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
    pub(super) fn describe(&self, known: &[String]) -> String {
        match self {
            Condition::Word(word) => contains(word),
            Condition::Compare { field, op, value } => match is_known(known, field) {
                true => format!("{field} {} {value}", op.sign()),
                false if *op == Cmp::Eq => {
                    format!("{} (no field is named `{field}`)", contains(value))
                }
                false => format!(
                    "{field} {} {value} (no field is named `{field}`: nothing matches)",
                    op.sign()
                ),
            },
        }
    }

    /// The text it looks for: a comparison's value, or the words.
    fn text(&self) -> &str {
        match self {
            Condition::Compare { value, .. } => value,
            Condition::Word(words) => words,
        }
    }

    /// The known field it compares, if it compares one.
    pub(super) fn compared_field<'k>(&self, known: &'k [String]) -> Option<&'k str> {
        match self {
            Condition::Compare { field, .. } => known
                .iter()
                .find(|k| k.eq_ignore_ascii_case(field))
                .map(String::as_str),
            Condition::Word(_) => None,
        }
    }
}

/// "contains the word `x`", or for several words each of them.
fn contains(text: &str) -> String {
    let words: Vec<&str> = text.split_whitespace().collect();
    match words.len() {
        0 | 1 => format!("contains the word `{}`", text.trim()),
        _ => format!(
            "contains each of the words {} (any order, any case)",
            words
                .iter()
                .map(|w| format!("`{w}`"))
                .collect::<Vec<_>>()
                .join(", ")
        ),
    }
}

fn is_known(known: &[String], field: &str) -> bool {
    known.iter().any(|k| k.eq_ignore_ascii_case(field))
}

/// What a result adds when no record meets all of `conditions`: how many records
/// each condition meets alone (when there are several), and for each comparison no
/// record meets, the values its field does hold.
pub(super) fn nothing_matched(
    conditions: &[Condition],
    records: &[Record],
    known: &[String],
) -> String {
    let mut out = String::new();
    let alone: Vec<usize> = conditions
        .iter()
        .map(|c| records.iter().filter(|r| c.holds(r, known)).count())
        .collect();
    if conditions.len() > 1 {
        let each: Vec<String> = conditions
            .iter()
            .zip(&alone)
            .map(|(c, n)| format!("{}: {n}", c.describe(known)))
            .collect();
        out.push_str(&format!(
            "\nRecords each condition meets alone: {}.",
            each.join("; ")
        ));
    }
    for (condition, count) in conditions.iter().zip(&alone) {
        if *count > 0 {
            continue;
        }
        let suggested = fields_holding_words(condition, records, known);
        if !suggested.is_empty() {
            out.push_str(&format!(
                "\nThe words of `{}` are values of fields: {}.",
                condition.text(),
                suggested.join(", ")
            ));
        }
    }
    let mut named: Vec<&str> = Vec::new();
    for (condition, count) in conditions.iter().zip(&alone) {
        let Some(field) = condition.compared_field(known) else {
            continue;
        };
        if *count > 0 || named.contains(&field) {
            continue;
        }
        named.push(field);
        out.push_str(&format!("\n{}", values_of(field, records)));
    }
    out
}

/// For a condition no record meets, the conditions its words make as values of fields
/// (`level=WARN` for the word `warns`), each as a record first holds it.
fn fields_holding_words(
    condition: &Condition,
    records: &[Record],
    known: &[String],
) -> Vec<String> {
    let text = condition.text();
    let compared = condition.compared_field(known);
    let mut found: Vec<String> = Vec::new();
    for word in text.split_whitespace() {
        let hit = records.iter().find_map(|record| {
            record.fields.iter().find(|(key, value)| {
                same_word(value, word) && compared.is_none_or(|f| !f.eq_ignore_ascii_case(key))
            })
        });
        if let Some((key, value)) = hit {
            let made = format!("`{key}={value}`");
            if !found.contains(&made) {
                found.push(made);
            }
        }
    }
    found
}

/// The values `field` holds across `records`, as a result states them: the range of
/// numbers, else the distinct values (the first few).
fn values_of(field: &str, records: &[Record]) -> String {
    let values: Vec<&str> = records.iter().filter_map(|r| r.field(field)).collect();
    let numbers: Vec<f64> = values.iter().filter_map(|v| number(v)).collect();
    if !numbers.is_empty() && numbers.len() == values.len() {
        let low = numbers.iter().copied().fold(f64::INFINITY, f64::min);
        let high = numbers.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        return format!(
            "`{field}` ranges from {} to {} in these records.",
            shown_number(low),
            shown_number(high)
        );
    }
    let mut distinct: Vec<&str> = Vec::new();
    for value in &values {
        if !distinct.iter().any(|d| d.eq_ignore_ascii_case(value)) {
            distinct.push(value);
        }
    }
    let shown: Vec<String> = distinct
        .iter()
        .take(VALUES_SHOWN)
        .map(|v| format!("`{v}`"))
        .collect();
    let more = match distinct.len().saturating_sub(VALUES_SHOWN) {
        0 => String::new(),
        n => format!(" and {n} more"),
    };
    format!("Values of `{field}` here: {}{more}.", shown.join(", "))
}

pub(super) fn unquoted(text: &str) -> &str {
    text.trim()
        .trim_matches(|c| c == '"' || c == '\'' || c == '`')
}

/// Two values compared as numbers when both are, else as text (letter case ignored;
/// ISO dates and times sort so).
pub(super) fn compare(a: &str, b: &str) -> Ordering {
    match (number(a), number(b)) {
        (Some(x), Some(y)) => x.partial_cmp(&y).unwrap_or(Ordering::Equal),
        _ => a.trim().to_lowercase().cmp(&b.trim().to_lowercase()),
    }
}

/// Whether a value orders records: a number, or a date or time (`2026-03-09…`,
/// `09:30`). Names and ids do not: their order is not the records' order.
pub(super) fn orders(value: &str) -> bool {
    let value = value.trim();
    let bytes = value.as_bytes();
    let digits = |range: std::ops::Range<usize>| {
        bytes
            .get(range)
            .is_some_and(|b| b.iter().all(u8::is_ascii_digit))
    };
    let date = digits(0..4) && bytes.get(4) == Some(&b'-') && digits(5..7);
    let clock = (digits(0..2) && bytes.get(2) == Some(&b':'))
        || (digits(0..1) && bytes.get(1) == Some(&b':') && digits(2..4));
    number(value).is_some() || date || clock
}

/// A value as a number: digits with an optional sign, decimal point and a leading
/// currency sign or trailing percent.
pub(super) fn number(text: &str) -> Option<f64> {
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
pub(super) fn shown_number(value: f64) -> String {
    if value.fract() == 0.0 && value.abs() < 1e15 {
        format!("{}", value as i64)
    } else {
        let text = format!("{value:.6}");
        text.trim_end_matches('0').trim_end_matches('.').to_string()
    }
}
