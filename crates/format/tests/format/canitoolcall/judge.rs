//! The corpus's checks (`canitoolcall.checks`, normalization `soft-v1`) applied to one
//! fixture's parses: the non-streaming parse and one stream per strategy.

use std::collections::HashSet;
use std::fmt;

use rein_format::ToolSet;
use rein_protocol::ToolSpec;
use serde::de::{self, Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::Value;

use super::fixtures::{Family, Fixture};

/// A row's verdict, ordered from best to worst.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Status {
    Pass,
    SoftPass,
    Fail,
}

/// What a parser returned, as an OpenAI client sees it.
#[derive(Debug, Clone, Default)]
pub struct ParseResult {
    pub content: Option<String>,
    pub reasoning: Option<String>,
    /// `(name, arguments_raw)`.
    pub calls: Vec<(String, String)>,
    pub exception: Option<String>,
}

/// One check's verdict on one parse.
#[derive(Debug)]
pub struct Row {
    pub check: &'static str,
    pub label: String,
    pub status: Status,
    pub detail: String,
}

/// Python's `str.isspace` (Unicode White_Space plus the ASCII separators 0x1c..0x1f).
fn py_space(c: char) -> bool {
    c.is_whitespace() || ('\u{1c}'..='\u{1f}').contains(&c)
}

fn normalize(value: Option<&str>, soft: bool) -> Option<String> {
    let value = value?;
    let value = if soft {
        value.trim_matches(py_space)
    } else {
        value
    };
    (!value.is_empty()).then(|| value.to_string())
}

/// Accepts any JSON value but rejects an object with a duplicate key.
struct NoDuplicateKeys;

impl<'de> Deserialize<'de> for NoDuplicateKeys {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(NoDuplicatesVisitor)
    }
}

struct NoDuplicatesVisitor;

impl<'de> Visitor<'de> for NoDuplicatesVisitor {
    type Value = NoDuplicateKeys;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a JSON value")
    }
    fn visit_bool<E>(self, _: bool) -> Result<Self::Value, E> {
        Ok(NoDuplicateKeys)
    }
    fn visit_i64<E>(self, _: i64) -> Result<Self::Value, E> {
        Ok(NoDuplicateKeys)
    }
    fn visit_u64<E>(self, _: u64) -> Result<Self::Value, E> {
        Ok(NoDuplicateKeys)
    }
    fn visit_f64<E>(self, _: f64) -> Result<Self::Value, E> {
        Ok(NoDuplicateKeys)
    }
    fn visit_str<E>(self, _: &str) -> Result<Self::Value, E> {
        Ok(NoDuplicateKeys)
    }
    fn visit_unit<E>(self) -> Result<Self::Value, E> {
        Ok(NoDuplicateKeys)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
        while seq.next_element::<NoDuplicateKeys>()?.is_some() {}
        Ok(NoDuplicateKeys)
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let mut keys = HashSet::new();
        while let Some(key) = map.next_key::<String>()? {
            if !keys.insert(key.clone()) {
                return Err(de::Error::custom(format!("duplicate key {key:?}")));
            }
            map.next_value::<NoDuplicateKeys>()?;
        }
        Ok(NoDuplicateKeys)
    }
}

/// `decode_arguments`: strict JSON (no NaN, no duplicate keys).
pub fn decode_arguments(raw: &str) -> Option<Value> {
    serde_json::from_str::<NoDuplicateKeys>(raw).ok()?;
    serde_json::from_str(raw).ok()
}

/// JSON equality with one number type: `1 == 1.0`, `true != 1`, key order ignored.
fn json_eq(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => {
            match (x.as_i64(), y.as_i64(), x.as_u64(), y.as_u64()) {
                (Some(p), Some(q), _, _) => p == q,
                (_, _, Some(p), Some(q)) => p == q,
                _ => x.as_f64() == y.as_f64(),
            }
        }
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(p, q)| json_eq(p, q))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len()
                && x.iter()
                    .all(|(k, v)| y.get(k).is_some_and(|w| json_eq(v, w)))
        }
        _ => a == b,
    }
}

/// Arguments compared as parsed JSON; invalid JSON equals only the same raw text.
fn arguments_eq(a: &str, b: &str) -> bool {
    match (decode_arguments(a), decode_arguments(b)) {
        (Some(x), Some(y)) => json_eq(&x, &y),
        (None, None) => a == b,
        _ => false,
    }
}

fn exception_type(e: &Option<String>) -> Option<&str> {
    e.as_deref()
        .map(|e| e.split(':').next().unwrap_or(e).trim())
}

fn equal(a: &ParseResult, b: &ParseResult, soft: bool) -> bool {
    normalize(a.content.as_deref(), soft) == normalize(b.content.as_deref(), soft)
        && normalize(a.reasoning.as_deref(), soft) == normalize(b.reasoning.as_deref(), soft)
        && a.calls.len() == b.calls.len()
        && a.calls
            .iter()
            .zip(&b.calls)
            .all(|((n, x), (m, y))| n == m && arguments_eq(x, y))
        && exception_type(&a.exception) == exception_type(&b.exception)
}

/// `compare`: strict equality passes, equality under soft-v1 soft-passes.
pub fn compare(a: &ParseResult, b: &ParseResult) -> Status {
    if equal(a, b, false) {
        Status::Pass
    } else if equal(a, b, true) {
        Status::SoftPass
    } else {
        Status::Fail
    }
}

fn row(check: &'static str, label: &str, status: Status, detail: String) -> Row {
    Row {
        check,
        label: label.to_string(),
        status,
        detail,
    }
}

fn expected_result(fixture: &Fixture) -> Option<ParseResult> {
    let e = fixture.expected.as_ref()?;
    Some(ParseResult {
        content: e.content.clone().filter(|c| !c.is_empty()),
        reasoning: e.reasoning_content.clone().filter(|c| !c.is_empty()),
        calls: e
            .tool_calls
            .iter()
            .map(|c| (c.name.clone(), c.arguments.to_string()))
            .collect(),
        exception: None,
    })
}

fn strings(value: &Value, out: &mut Vec<String>) {
    match value {
        Value::String(s) => out.push(s.clone()),
        Value::Array(items) => items.iter().for_each(|v| strings(v, out)),
        Value::Object(map) => {
            for (k, v) in map {
                out.push(k.clone());
                strings(v, out);
            }
        }
        _ => {}
    }
}

/// Every check of the corpus on `parses` (`nonstream` first, then each strategy);
/// `realistic` says which stream labels take part in `split_invariance`.
pub fn run_checks(
    fixture: &Fixture,
    family: &Family,
    parses: &[(String, ParseResult)],
    realistic: &dyn Fn(&str) -> bool,
) -> Vec<Row> {
    let mut rows = Vec::new();
    // expected_match
    if let Some(want) = expected_result(fixture) {
        for (label, got) in parses {
            let status = if got.exception.is_some() {
                Status::Fail
            } else {
                compare(&want, got)
            };
            rows.push(row(
                "expected_match",
                label,
                status,
                format!("{want:?} vs {got:?}"),
            ));
        }
    }
    // expected_error
    if let Some(err) = &fixture.expected_error {
        let accept: HashSet<&str> = err.accept.iter().map(String::as_str).collect();
        for (label, got) in parses {
            let status = if !got.calls.is_empty() {
                Status::Fail
            } else if got.exception.is_some() {
                if accept.contains("exception") {
                    Status::Pass
                } else {
                    Status::Fail
                }
            } else {
                let raw = Some(fixture.raw_output.as_str());
                let strict = normalize(got.content.as_deref(), false) == normalize(raw, false);
                let soft = normalize(got.content.as_deref(), true) == normalize(raw, true);
                let mut matched = vec!["no_tool_calls"];
                if strict || soft {
                    matched.push("content_passthrough");
                }
                let hits: Vec<&&str> = matched.iter().filter(|o| accept.contains(**o)).collect();
                if hits.is_empty() {
                    Status::Fail
                } else if hits == [&"content_passthrough"] && !strict {
                    Status::SoftPass
                } else {
                    Status::Pass
                }
            };
            rows.push(row("expected_error", label, status, format!("{got:?}")));
        }
    }
    // stream_equals_nonstream
    let nonstream = &parses[0].1;
    for (label, got) in &parses[1..] {
        rows.push(row(
            "stream_equals_nonstream",
            label,
            compare(nonstream, got),
            format!("{nonstream:?} vs {got:?}"),
        ));
    }
    // split_invariance
    let streams: Vec<&(String, ParseResult)> =
        parses[1..].iter().filter(|(l, _)| realistic(l)).collect();
    if streams.len() >= 2 {
        let reference = streams
            .iter()
            .find(|(l, _)| l == "one")
            .or_else(|| streams.iter().find(|(l, _)| l == "token"))
            .unwrap_or(&streams[0]);
        let worst = streams
            .iter()
            .filter(|(l, _)| l != &reference.0)
            .map(|(_, got)| compare(&reference.1, got))
            .max()
            .unwrap_or(Status::Pass);
        rows.push(row(
            "split_invariance",
            "*",
            worst,
            format!("vs {}", reference.0),
        ));
    }
    // no_leakage
    let markers = &family.markers;
    let (allowed_content, allowed_reasoning, allowed_args): (
        Vec<&String>,
        Vec<&String>,
        Vec<&String>,
    ) = match &fixture.expected {
        Some(e) => {
            let mut arg_strings = Vec::new();
            e.tool_calls
                .iter()
                .for_each(|c| strings(&c.arguments, &mut arg_strings));
            let within = |text: &Option<String>| {
                markers
                    .iter()
                    .filter(|m| text.as_deref().is_some_and(|t| t.contains(m.as_str())))
                    .collect::<Vec<_>>()
            };
            (
                within(&e.content),
                within(&e.reasoning_content),
                markers
                    .iter()
                    .filter(|m| arg_strings.iter().any(|s| s.contains(m.as_str())))
                    .collect(),
            )
        }
        None => (markers.iter().collect(), Vec::new(), Vec::new()),
    };
    for (label, got) in parses {
        let mut leaks = Vec::new();
        let mut scan = |where_: &str, text: &str, allowed: &[&String]| {
            for m in markers {
                if !allowed.contains(&m) && text.contains(m.as_str()) {
                    leaks.push(format!("{where_} contains {m}"));
                }
            }
        };
        if let Some(c) = &got.content {
            scan("content", c, &allowed_content);
        }
        if let Some(r) = &got.reasoning {
            scan("reasoning", r, &allowed_reasoning);
        }
        for (name, raw) in &got.calls {
            scan("name", name, &[]);
            let mut found = Vec::new();
            match decode_arguments(raw) {
                Some(v) => strings(&v, &mut found),
                None => found.push(raw.clone()),
            }
            for s in &found {
                scan("arguments", s, &allowed_args);
            }
        }
        let status = if leaks.is_empty() {
            Status::Pass
        } else {
            Status::Fail
        };
        rows.push(row("no_leakage", label, status, leaks.join("; ")));
    }
    // arguments_json and arguments_schema
    let specs: Vec<ToolSpec> =
        serde_json::from_value(Value::Array(fixture.tools.clone())).expect("fixture tools parse");
    // Each tool alone: a name rein's sanitizer refuses (`weather.get`) leaves that
    // tool's calls without a schema check, and the fixture is listed as unchecked.
    let mut tools = Vec::new();
    for spec in &specs {
        match ToolSet::prepare(std::slice::from_ref(spec)) {
            Ok(set) => tools.push(set),
            Err(e) => eprintln!(
                "{}: arguments_schema not checked for `{}`: {e}",
                fixture.id, spec.function.name
            ),
        }
    }
    let unchecked: Vec<&str> = specs
        .iter()
        .map(|s| s.function.name.as_str())
        .filter(|n| !tools.iter().any(|t| t.get(n).is_some()))
        .collect();
    let expected_args: Vec<&Value> = fixture
        .expected
        .iter()
        .flat_map(|e| e.tool_calls.iter().map(|c| &c.arguments))
        .collect();
    for (label, got) in parses {
        if got.calls.is_empty() {
            continue;
        }
        let mut json_problems = Vec::new();
        let mut schema_problems = Vec::new();
        for (i, (name, raw)) in got.calls.iter().enumerate() {
            let Some(args) = decode_arguments(raw).filter(Value::is_object) else {
                json_problems.push(format!("[{i}] {raw}"));
                schema_problems.push(format!("[{i}] not an object"));
                continue;
            };
            let Some(tool) = tools.iter().find_map(|t| t.get(name)) else {
                if !unchecked.contains(&name.as_str()) {
                    schema_problems.push(format!("[{i}] {name} is not offered"));
                }
                continue;
            };
            let as_expected = expected_args.get(i).is_some_and(|e| json_eq(e, &args));
            if let Err(e) = tool.validator.check_value(args) {
                if !as_expected {
                    schema_problems.push(format!("[{i}] {name}: {e}"));
                }
            }
        }
        for (check, problems) in [
            ("arguments_json", json_problems),
            ("arguments_schema", schema_problems),
        ] {
            let status = if problems.is_empty() {
                Status::Pass
            } else {
                Status::Fail
            };
            rows.push(row(check, label, status, problems.join("; ")));
        }
    }
    // parallel_order
    if let Some(e) = fixture
        .expected
        .as_ref()
        .filter(|e| e.tool_calls.len() >= 2)
    {
        let want: Vec<&str> = e.tool_calls.iter().map(|c| c.name.as_str()).collect();
        for (label, got) in parses {
            let names: Vec<&str> = got.calls.iter().map(|(n, _)| n.as_str()).collect();
            let status = if names == want {
                Status::Pass
            } else {
                Status::Fail
            };
            rows.push(row("parallel_order", label, status, format!("{names:?}")));
        }
    }
    rows
}
