//! Mistral: calls start at `[TOOL_CALLS]`. v11 and later write
//! `[TOOL_CALLS]name[ARGS]{json}` per call (`[CALL_ID]id` may sit before `[ARGS]`);
//! v3 writes one JSON array `[TOOL_CALLS] [{"name": ..., "arguments": {...}}, ...]`.
//! Reasoning is `[THINK]...[/THINK]` (or `<think>...</think>`) at the reply's start.

use serde_json::Value;

use rein_schema::gbnf::lit;
use rein_schema::Json;

use super::grammar::CallForm;
use super::json_call::{read_call, value_at, JsonError};
use super::marker_stream::{partial_marker_len, scan_for, Body, CallSyntax, Scan};
use crate::hermes::{regex_escape, RawCall};
use crate::stream::{RejectedCall, Rejection};

/// Starts each call.
pub const TOOL_CALLS: &str = "[TOOL_CALLS]";
/// Separates a call's name from its arguments.
pub const ARGS: &str = "[ARGS]";
/// Precedes a call id.
pub const CALL_ID: &str = "[CALL_ID]";

/// A Mistral template: it knows `[TOOL_CALLS]` or the `[INST]` turn markers.
pub(crate) fn detects(template: &str) -> bool {
    template.contains(TOOL_CALLS) || template.contains("[INST]")
}

/// How calls are written for the grammar in the v11 form: `[TOOL_CALLS]name[ARGS]{...}` per call.
pub(crate) fn call_form() -> CallForm<'static> {
    CallForm {
        before_name: vec![lit(TOOL_CALLS)],
        after_name: ARGS.into(),
        after_arguments: "".into(),
        prefix: Vec::new(),
        separator: Vec::new(),
        triggers: vec![regex_escape(TOOL_CALLS)],
        values: &Json,
        wrappers: false,
        call_or_answer: false,
    }
}

/// One call in the v11 form.
pub(crate) fn call_text(name: &str, arguments: &Value) -> String {
    format!("{TOOL_CALLS}{name}{ARGS}{arguments}")
}

/// The Mistral syntax for the stream engine.
#[derive(Debug)]
pub(crate) struct Mistral;

/// The syntax instance.
pub(crate) static SYNTAX: Mistral = Mistral;

impl CallSyntax for Mistral {
    fn reasoning(&self) -> &'static [(&'static str, &'static str)] {
        &[("[THINK]", "[/THINK]"), ("<think>", "</think>")]
    }

    fn scan(&self, body: &str) -> Scan {
        scan_for(body, TOOL_CALLS)
    }

    fn parse_body(&self, body: &str, cut_off: bool) -> Body {
        let Some(at) = body.find(TOOL_CALLS) else {
            let partial = if cut_off {
                partial_marker_len(body, TOOL_CALLS)
            } else {
                0
            };
            let mut out = Body {
                content: body[..body.len() - partial].to_string(),
                ..Body::default()
            };
            if partial > 0 {
                out.rejected.push(RejectedCall {
                    position: 1,
                    rejection: Rejection::Truncated,
                    text: body[body.len() - partial..].to_string(),
                });
            }
            return out;
        };
        let mut out = Body {
            content: body[..at].to_string(),
            ..Body::default()
        };
        let region = &body[at..];
        match read_calls(region) {
            Ok(calls) => out.calls = calls,
            Err(error) => {
                let rejection = match error {
                    JsonError::Eof if cut_off => Rejection::Truncated,
                    JsonError::Eof => Rejection::Unclosed,
                    JsonError::Syntax(reason) => {
                        out.content.push_str(region);
                        Rejection::Malformed { reason }
                    }
                };
                out.rejected.push(RejectedCall {
                    position: 1,
                    rejection,
                    text: region.to_string(),
                });
            }
        }
        out
    }
}

/// Every call in `region` (which starts with `[TOOL_CALLS]`); the region must hold
/// nothing else.
fn read_calls(region: &str) -> Result<Vec<RawCall>, JsonError> {
    let mut calls = Vec::new();
    let mut rest = region;
    while let Some(after) = rest.trim_start().strip_prefix(TOOL_CALLS) {
        let trimmed = after.trim_start();
        if trimmed.is_empty() {
            return Err(JsonError::Eof);
        }
        if trimmed.starts_with('[') {
            let (value, end) = value_at(trimmed)?;
            let Value::Array(items) = value else {
                return Err(JsonError::Syntax("not an array".into()));
            };
            for item in items {
                calls.push(read_call(item, &["arguments"]).map_err(JsonError::Syntax)?);
            }
            rest = &trimmed[end..];
            continue;
        }
        let Some(args_at) = after.find(ARGS) else {
            let head = &after[..after.len() - partial_marker_len(after, ARGS)];
            let name = head.split(CALL_ID).next().unwrap_or_default();
            return Err(if name.is_empty() || valid_name(name) {
                JsonError::Eof
            } else {
                JsonError::Syntax(format!("no {ARGS} after the name"))
            });
        };
        let head = &after[..args_at];
        let name = head.split(CALL_ID).next().unwrap_or_default();
        if !valid_name(name) {
            return Err(JsonError::Syntax(format!("`{name}` is not a tool name")));
        }
        let args_text = &after[args_at + ARGS.len()..];
        let (arguments, end) = value_at(args_text)?;
        if !arguments.is_object() {
            return Err(JsonError::Syntax("the arguments are not an object".into()));
        }
        calls.push(RawCall {
            name: name.to_string(),
            arguments,
        });
        rest = &args_text[end..];
    }
    if rest.trim().is_empty() {
        Ok(calls)
    } else {
        Err(JsonError::Syntax("text after the calls".into()))
    }
}

fn valid_name(name: &str) -> bool {
    !name.is_empty()
        && name
            .chars()
            .all(|c| c.is_alphanumeric() || matches!(c, '_' | '-' | '.'))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Family;
    use serde_json::json;

    #[test]
    fn reads_v11_v3_and_reasoning() {
        let f = Family::Mistral;
        let v11 = f
            .parse_reply("Hi[TOOL_CALLS]a[ARGS]{\"x\": 1}[TOOL_CALLS]b[CALL_ID]7[ARGS]{}")
            .unwrap();
        assert_eq!(v11.content.as_deref(), Some("Hi"));
        assert_eq!(
            v11.calls[1],
            RawCall {
                name: "b".into(),
                arguments: json!({})
            }
        );
        let v3 = f
            .parse_reply("[TOOL_CALLS] [{\"arguments\": {\"y\": 2}, \"name\": \"c\"}]")
            .unwrap();
        assert_eq!(v3.calls[0].arguments, json!({"y": 2}));
        let thought = f.parse_complete("[THINK]hmm[/THINK]ok", false, false);
        assert_eq!(thought.reasoning.as_deref(), Some("hmm"));
        assert_eq!(thought.content.as_deref(), Some("ok"));
        assert!(f.parse_reply("[TOOL_CALLS] not json").is_err());
        let written = call_text("f", &json!({"x": 1}));
        assert_eq!(f.parse_reply(&written).unwrap().calls.len(), 1);
    }
}
