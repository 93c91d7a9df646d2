//! Which item of a list of objects is lowest and highest in each number or date the
//! items differ in, as one line per field: the comparison a small model reading a
//! list of flights, warehouses or orders does not make reliably.

use serde_json::{Map, Value};

use crate::json_leaves::{dotted, rank, scalar};

/// The fields compared at most, per list.
const MAX_COMPARED: usize = 3;

/// `(by price.amount: lowest WN-2240 at 214, highest UA-1187 at 289)` for each number
/// or ISO date the objects of `items` differ in, at most [`MAX_COMPARED`].
pub(crate) fn extremes(items: &[Value]) -> Vec<String> {
    let objects: Vec<&Map<String, Value>> = items.iter().filter_map(Value::as_object).collect();
    if objects.len() < 2 || objects.len() != items.len() {
        return Vec::new();
    }
    let flat: Vec<Vec<(String, &Value)>> = objects
        .iter()
        .map(|map| {
            let mut fields = Vec::new();
            flatten(map, "", &mut fields);
            fields
        })
        .collect();
    let labels: Vec<String> = objects
        .iter()
        .zip(&flat)
        .enumerate()
        .map(|(index, (map, fields))| label(map, fields, index))
        .collect();
    let mut out = Vec::new();
    for (key, _) in &flat[0] {
        if out.len() == MAX_COMPARED {
            break;
        }
        if rank(key.rsplit('.').next().unwrap_or(key)) < 2 {
            continue;
        }
        let values: Option<Vec<Comparable>> = flat
            .iter()
            .map(|fields| {
                let (_, value) = fields.iter().find(|(k, _)| k == key)?;
                Comparable::of(value)
            })
            .collect();
        let Some(values) = values else { continue };
        let dates = matches!(values[0], Comparable::Date(_));
        if values
            .iter()
            .any(|v| matches!(v, Comparable::Date(_)) != dates)
        {
            continue;
        }
        let (Some(low), Some(high)) = (
            values.iter().min_by(|a, b| a.cmp(b)),
            values.iter().max_by(|a, b| a.cmp(b)),
        ) else {
            continue;
        };
        if low.cmp(high).is_eq() {
            continue;
        }
        let holders = |wanted: &Comparable| -> String {
            let names: Vec<&str> = values
                .iter()
                .zip(&labels)
                .filter(|(v, _)| v.cmp(wanted).is_eq())
                .map(|(_, l)| l.as_str())
                .collect();
            names.join(", ")
        };
        let (lowest, highest) = if dates {
            ("earliest", "latest")
        } else {
            ("lowest", "highest")
        };
        out.push(format!(
            "(by {key}: {lowest} {} at {}, {highest} {} at {})",
            holders(low),
            low.text(),
            holders(high),
            high.text()
        ));
    }
    out
}

/// A value lists are compared by: a number, or a date written `YYYY-MM-DD…`.
#[derive(Debug, Clone, PartialEq)]
enum Comparable {
    Number(f64, String),
    Date(String),
}

impl Comparable {
    fn of(value: &Value) -> Option<Self> {
        match value {
            Value::Number(n) => Some(Self::Number(n.as_f64()?, n.to_string())),
            Value::String(s) if is_iso_date(s) => Some(Self::Date(s.clone())),
            _ => None,
        }
    }

    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        match (self, other) {
            (Self::Number(a, _), Self::Number(b, _)) => a.total_cmp(b),
            (Self::Date(a), Self::Date(b)) => a.cmp(b),
            (Self::Number(..), Self::Date(_)) => std::cmp::Ordering::Less,
            (Self::Date(_), Self::Number(..)) => std::cmp::Ordering::Greater,
        }
    }

    fn text(&self) -> &str {
        match self {
            Self::Number(_, text) | Self::Date(text) => text,
        }
    }
}

/// `2024-06-10`, `2024-06-13T17:02:11Z`: dates that compare as text.
fn is_iso_date(text: &str) -> bool {
    let bytes = text.as_bytes();
    bytes.len() >= 10
        && bytes[..4].iter().all(u8::is_ascii_digit)
        && bytes[4] == b'-'
        && bytes[5..7].iter().all(u8::is_ascii_digit)
        && bytes[7] == b'-'
        && bytes[8..10].iter().all(u8::is_ascii_digit)
}

/// The scalar fields of `map` under dotted keys, through nested objects (not lists).
fn flatten<'a>(map: &'a Map<String, Value>, prefix: &str, fields: &mut Vec<(String, &'a Value)>) {
    for (key, value) in map {
        let path = dotted(prefix, key);
        match value {
            Value::Object(inner) => flatten(inner, &path, fields),
            Value::Array(_) => {}
            other => fields.push((path, other)),
        }
    }
}

/// How an item is named in a comparison: its identifier, else its name, else its
/// place in the list.
fn label(map: &Map<String, Value>, fields: &[(String, &Value)], index: usize) -> String {
    let named = |wanted: u8| {
        map.iter()
            .find(|(key, value)| rank(key) == wanted && (value.is_string() || value.is_number()))
            .map(|(_, value)| scalar(value))
    };
    named(1)
        .or_else(|| named(2))
        .or_else(|| {
            fields
                .iter()
                .find(|(key, _)| rank(key.rsplit('.').next().unwrap_or(key)) == 1)
                .map(|(_, value)| scalar(value))
        })
        .unwrap_or_else(|| format!("item {}", index + 1))
}
