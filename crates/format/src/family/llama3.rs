//! Llama 3.1–3.3 (JSON): a reply that is a call is a JSON object
//! `{"name": ..., "parameters": {...}}` (`arguments` is read too), either the whole
//! reply or after `<|python_tag|>`; several calls are separated by `;`. A JSON object
//! that is not a call, or text around an untagged object, is content.

use serde_json::Value;

use rein_schema::gbnf::lit;
use rein_schema::Json;

use super::grammar::CallForm;
use super::json_call::{quoted, read_call, value_at, JsonError};
use super::marker_stream::{partial_marker_len, Body, CallSyntax, Scan};
use crate::hermes::{regex_escape, RawCall};
use crate::stream::{RejectedCall, Rejection};

/// Starts tagged calls.
pub const PYTHON_TAG: &str = "<|python_tag|>";

/// A Llama 3 header template that mentions tools.
pub(crate) fn detects(template: &str) -> bool {
    template.contains("<|start_header_id|>") && template.contains("tools")
}

/// How calls are written for the grammar: an optional `<|python_tag|>`, then calls separated by `; `.
/// `auto` starts at `<|python_tag|>` or at a reply that opens with `{"name"`.
pub(crate) fn call_form() -> CallForm<'static> {
    CallForm {
        before_name: vec![lit("{\"name\": \"")],
        after_name: "\", \"parameters\": ".into(),
        after_arguments: "}".into(),
        prefix: vec![super::grammar::optional(PYTHON_TAG)],
        separator: vec![lit("; ")],
        triggers: vec![
            regex_escape(PYTHON_TAG),
            r#"^\s*(\{"name")[\s\S]*$"#.to_string(),
        ],
        values: &Json,
        wrappers: false,
        call_or_answer: false,
    }
}

/// One call as the grammar writes it.
pub(crate) fn call_text(name: &str, arguments: &Value) -> String {
    format!(
        "{{\"name\": {}, \"parameters\": {arguments}}}",
        quoted(name)
    )
}

/// The Llama 3 syntax for the stream engine.
#[derive(Debug)]
pub(crate) struct Llama3;

/// The syntax instance.
pub(crate) static SYNTAX: Llama3 = Llama3;

impl CallSyntax for Llama3 {
    fn reasoning(&self) -> &'static [(&'static str, &'static str)] {
        &[]
    }

    fn scan(&self, body: &str) -> Scan {
        let text = body.trim_start();
        if text.starts_with('{') {
            return Scan::CallAt(body.len() - text.len());
        }
        if text.is_empty() {
            return Scan::Content(0);
        }
        match body.find(PYTHON_TAG) {
            Some(at) => Scan::CallAt(at),
            None => Scan::Content(body.len() - partial_marker_len(body, PYTHON_TAG)),
        }
    }

    fn parse_body(&self, body: &str, cut_off: bool) -> Body {
        let trimmed = body.trim_start();
        let (before, region, tagged) = if trimmed.starts_with('{') {
            (&body[..body.len() - trimmed.len()], trimmed, false)
        } else if let Some(at) = body.find(PYTHON_TAG) {
            (&body[..at], &body[at + PYTHON_TAG.len()..], true)
        } else {
            let partial = if cut_off {
                partial_marker_len(body, PYTHON_TAG)
            } else {
                0
            };
            let mut out = Body {
                content: body[..body.len() - partial].to_string(),
                ..Body::default()
            };
            if partial > 0 {
                out.rejected.push(rejected(
                    Rejection::Truncated,
                    &body[body.len() - partial..],
                ));
            }
            return out;
        };
        let mut out = Body {
            content: before.to_string(),
            ..Body::default()
        };
        let marker = if tagged { PYTHON_TAG } else { "" };
        let text = format!("{marker}{region}");
        match read_calls(region) {
            Ok(calls) => out.calls = calls,
            Err(JsonError::Eof) if cut_off => {
                out.rejected.push(rejected(Rejection::Truncated, &text))
            }
            Err(JsonError::Eof) if tagged => {
                out.rejected.push(rejected(Rejection::Unclosed, &text))
            }
            Err(JsonError::Eof) => out.content.push_str(&text),
            Err(JsonError::Syntax(reason)) => {
                out.content.push_str(&text);
                if tagged {
                    out.rejected
                        .push(rejected(Rejection::Malformed { reason }, &text));
                }
            }
        }
        out
    }
}

fn rejected(rejection: Rejection, text: &str) -> RejectedCall {
    RejectedCall {
        position: 1,
        rejection,
        text: text.to_string(),
    }
}

/// Calls separated by `;` that make up all of `region`; an empty region is cut.
fn read_calls(region: &str) -> Result<Vec<RawCall>, JsonError> {
    let mut calls = Vec::new();
    let mut rest = region;
    loop {
        if rest.trim().is_empty() {
            return Err(JsonError::Eof);
        }
        let (value, end) = value_at(rest)?;
        calls.push(read_call(value, &["parameters", "arguments"]).map_err(JsonError::Syntax)?);
        let after = rest[end..].trim_start();
        if after.is_empty() {
            return Ok(calls);
        }
        rest = after
            .strip_prefix(';')
            .ok_or_else(|| JsonError::Syntax("text after a call".into()))?;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Family;
    use serde_json::json;

    #[test]
    fn reads_bare_and_tagged_calls_and_leaves_json_answers_as_content() {
        let f = Family::Llama3;
        let bare = f
            .parse_reply("{\"name\": \"f\", \"parameters\": {\"x\": 1}}")
            .unwrap();
        assert_eq!(
            bare.calls,
            vec![RawCall {
                name: "f".into(),
                arguments: json!({"x": 1})
            }]
        );
        let tagged = f
            .parse_reply(
                "Sure. <|python_tag|>{\"name\": \"f\", \"arguments\": {}}; {\"name\": \"g\"}",
            )
            .unwrap();
        assert_eq!(tagged.content.as_deref(), Some("Sure."));
        assert_eq!(tagged.calls.len(), 2);
        let answer = f.parse_reply("{\"capital\": \"Paris\"}").unwrap();
        assert_eq!(answer.content.as_deref(), Some("{\"capital\": \"Paris\"}"));
        assert!(answer.calls.is_empty());
        assert_eq!(
            f.parse_reply_checked("{\"name\": \"f\", \"parameters\": {", true, false),
            Err(crate::hermes::ParseError::Truncated)
        );
        let written = call_text("f", &json!({"x": 1}));
        assert_eq!(f.parse_reply(&written).unwrap().calls.len(), 1);
    }
}
