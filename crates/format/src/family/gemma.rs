//! Gemma 4: `<|tool_call>call:NAME{key:value,...}<tool_call|>` in object notation,
//! several calls back to back, text allowed around them; reasoning is
//! `<|channel>thought ... <channel|>` at the reply's start.

use rein_schema::gbnf::lit;
use serde_json::Value;

use super::gemma_grammar::ObjectNotation;
use super::grammar::CallForm;
use super::marker_stream::{partial_marker_len, scan_for, Body, CallSyntax, Scan};
use super::object_notation::{self, OnError};
use crate::hermes::{regex_escape, RawCall};
use crate::stream::{RejectedCall, Rejection};

/// Opens a call.
pub const CALL_OPEN: &str = "<|tool_call>";
/// Closes a call.
pub const CALL_CLOSE: &str = "<tool_call|>";

/// Gemma 4's call markers in the template, or a Gemma architecture.
pub(crate) fn detects(template: &str, architecture: &str) -> bool {
    template.contains(CALL_OPEN) || architecture.starts_with("gemma")
}

/// How calls are written for the grammar: one branch per offered tool, arguments in object notation typed
/// by the tool's canonical schema.
pub(crate) fn call_form() -> CallForm<'static> {
    CallForm {
        before_name: vec![lit(&format!("{CALL_OPEN}call:"))],
        after_name: "".into(),
        after_arguments: CALL_CLOSE.into(),
        prefix: Vec::new(),
        separator: Vec::new(),
        triggers: vec![regex_escape(CALL_OPEN)],
        values: &ObjectNotation,
        wrappers: false,
        call_or_answer: false,
    }
}

/// One call as Gemma 4 writes it.
pub(crate) fn call_text(name: &str, arguments: &Value) -> String {
    format!(
        "{CALL_OPEN}call:{name}{}{CALL_CLOSE}",
        object_notation::write(arguments)
    )
}

/// The Gemma 4 syntax for the stream engine.
#[derive(Debug)]
pub(crate) struct Gemma;

/// The syntax instance.
pub(crate) static SYNTAX: Gemma = Gemma;

impl CallSyntax for Gemma {
    fn reasoning(&self) -> &'static [(&'static str, &'static str)] {
        &[("<|channel>thought", "<channel|>")]
    }

    fn scan(&self, body: &str) -> Scan {
        scan_for(body, CALL_OPEN)
    }

    fn parse_body(&self, body: &str, cut_off: bool) -> Body {
        let mut out = Body::default();
        let mut rest = body;
        let mut position = 0;
        while let Some(at) = rest.find(CALL_OPEN) {
            out.content.push_str(&rest[..at]);
            position += 1;
            let after = &rest[at + CALL_OPEN.len()..];
            match read_call(after) {
                Ok((call, used)) => {
                    out.calls.push(call);
                    rest = &after[used..];
                }
                Err(error) => {
                    let end = after.find(CALL_CLOSE).map(|e| e + CALL_CLOSE.len());
                    let (rejection, text_end) = match (error, end) {
                        (OnError::Syntax(reason), Some(end)) => {
                            (Rejection::Malformed { reason }, end)
                        }
                        (_, _) if cut_off => (Rejection::Truncated, after.len()),
                        (OnError::Syntax(reason), None) => {
                            (Rejection::Malformed { reason }, after.len())
                        }
                        (OnError::Eof, _) => (Rejection::Unclosed, after.len()),
                    };
                    let text = format!("{CALL_OPEN}{}", &after[..text_end]);
                    if matches!(rejection, Rejection::Malformed { .. }) {
                        out.content.push_str(&text);
                    }
                    out.rejected.push(RejectedCall {
                        position,
                        rejection,
                        text,
                    });
                    rest = &after[text_end..];
                }
            }
        }
        let partial = if cut_off {
            partial_marker_len(rest, CALL_OPEN)
        } else {
            0
        };
        out.content.push_str(&rest[..rest.len() - partial]);
        if partial > 0 {
            out.rejected.push(RejectedCall {
                position: position + 1,
                rejection: Rejection::Truncated,
                text: rest[rest.len() - partial..].to_string(),
            });
        }
        out
    }
}

/// `call:NAME{...}<tool_call|>` at the start of `text`: the call and the bytes taken.
fn read_call(text: &str) -> Result<(RawCall, usize), OnError> {
    let Some(named) = text.strip_prefix("call:") else {
        return Err(if "call:".starts_with(text) {
            OnError::Eof
        } else {
            OnError::Syntax("no `call:`".into())
        });
    };
    let name_len = named
        .find(|c: char| !(c.is_alphanumeric() || matches!(c, '_' | '-' | '.')))
        .ok_or(OnError::Eof)?;
    let name = &named[..name_len];
    let args_text = &named[name_len..];
    if name.is_empty() || !args_text.starts_with('{') {
        return Err(OnError::Syntax(
            "no `{...}` arguments after the name".into(),
        ));
    }
    let (arguments, used) = object_notation::read(args_text)?;
    let tail = &args_text[used..];
    if !tail.starts_with(CALL_CLOSE) {
        return Err(if CALL_CLOSE.starts_with(tail) {
            OnError::Eof
        } else {
            OnError::Syntax(format!("text where {CALL_CLOSE} belongs"))
        });
    }
    let used = text.len() - tail.len() + CALL_CLOSE.len();
    Ok((
        RawCall {
            name: name.to_string(),
            arguments,
        },
        used,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Family;
    use serde_json::json;

    #[test]
    fn reads_calls_text_around_them_and_reasoning() {
        let f = Family::Gemma;
        let reply = f.parse_complete(
            "<|channel>thought\nhm<channel|>A <|tool_call>call:get{city:<|\"|>Oslo<|\"|>}<tool_call|> B",
            false,
            false,
        );
        assert_eq!(reply.reasoning.as_deref(), Some("hm"));
        assert_eq!(reply.content.as_deref(), Some("A  B"));
        assert_eq!(
            reply.calls,
            vec![RawCall {
                name: "get".into(),
                arguments: json!({"city": "Oslo"})
            }]
        );
        assert!(f
            .parse_reply("<|tool_call>call:bad no brace<tool_call|>")
            .is_err());
        let written = call_text("f", &json!({"x": [1, "a"]}));
        assert_eq!(
            f.parse_reply(&written).unwrap().calls[0].arguments,
            json!({"x": [1, "a"]})
        );
    }
}
