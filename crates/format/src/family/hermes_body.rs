//! The text of a Hermes reply after its reasoning, read whole: content, then each
//! `<tool_call>` body up to its closing marker outside JSON strings (a `</tool_call>`
//! inside a string argument is data), validated the way [`crate::hermes::parse_reply`]
//! does. A closed call whose body is not a valid call is passed through as content; an
//! open one at the end is dropped (cut off or unclosed); a partial opening marker at
//! the end of a cut reply is dropped.

use serde_json::Value;

use super::marker_stream::{partial_marker_len, Body};
use crate::hermes::{RawCall, CALL_CLOSE, CALL_OPEN};
use crate::stream::{RejectedCall, Rejection};

/// Reads the text after reasoning (`cut_off`: the token limit ended it).
pub(crate) fn parse_body(text: &str, cut_off: bool) -> Body {
    let mut body = Body::default();
    let reject = |body: &mut Body, rejection: Rejection, text: String| {
        let position = body.calls.len() + body.rejected.len() + 1;
        body.rejected.push(RejectedCall {
            position,
            rejection,
            text,
        });
    };
    let mut rest = text;
    loop {
        let Some(at) = rest.find(CALL_OPEN) else {
            let partial = partial_marker_len(rest, CALL_OPEN);
            if cut_off && partial > 0 {
                let (kept, dropped) = rest.split_at(rest.len() - partial);
                body.content.push_str(kept);
                reject(&mut body, Rejection::Truncated, dropped.to_string());
            } else {
                body.content.push_str(rest);
            }
            return body;
        };
        body.content.push_str(&rest[..at]);
        let after = &rest[at + CALL_OPEN.len()..];
        let mut call = CallBody::default();
        match call.push(after) {
            Scan::Open => {
                let why = if cut_off {
                    Rejection::Truncated
                } else {
                    Rejection::Unclosed
                };
                reject(&mut body, why, format!("{CALL_OPEN}{after}"));
                return body;
            }
            Scan::Closed {
                body: inner,
                rest: tail,
            } => {
                match read_call(&inner) {
                    Ok(call) => body.calls.push(call),
                    Err(reason) => {
                        let text = format!("{CALL_OPEN}{inner}{CALL_CLOSE}");
                        body.content.push_str(&text);
                        reject(&mut body, Rejection::Malformed { reason }, text);
                    }
                }
                rest = &text[text.len() - tail.len()..];
            }
        }
    }
}

/// The text of an open call and how far it has been scanned.
#[derive(Debug, Default)]
pub(crate) struct CallBody {
    text: String,
    scanned: usize,
    in_string: bool,
    escaped: bool,
}

/// What scanning found.
#[derive(Debug, PartialEq)]
pub(crate) enum Scan {
    /// The call is still open; everything given is part of it.
    Open,
    /// The call closed: its body, and the text after the closing marker.
    Closed { body: String, rest: String },
}

impl CallBody {
    /// Appends `delta` and scans it.
    pub(crate) fn push(&mut self, delta: &str) -> Scan {
        self.text.push_str(delta);
        while let Some(c) = self.text[self.scanned..].chars().next() {
            if self.in_string {
                if self.escaped {
                    self.escaped = false;
                } else if c == '\\' {
                    self.escaped = true;
                } else if c == '"' {
                    self.in_string = false;
                }
            } else if c == '"' {
                self.in_string = true;
            } else if c == '<' {
                let tail = &self.text[self.scanned..];
                if let Some(rest) = tail.strip_prefix(CALL_CLOSE) {
                    let rest = rest.to_string();
                    self.text.truncate(self.scanned);
                    return Scan::Closed {
                        body: std::mem::take(&mut self.text),
                        rest,
                    };
                }
                if CALL_CLOSE.starts_with(tail) {
                    // A partial closing marker: wait for more text.
                    return Scan::Open;
                }
            }
            self.scanned += c.len_utf8();
        }
        Scan::Open
    }
}

/// Reads a closed call's body: a JSON object with a string `name` and an object
/// `arguments` (absent means `{}`), as [`crate::hermes::parse_reply`] requires.
pub(crate) fn read_call(body: &str) -> Result<RawCall, String> {
    let value: Value = serde_json::from_str(body).map_err(|e| e.to_string())?;
    let Value::Object(mut map) = value else {
        return Err("not an object".into());
    };
    let name = match map.remove("name") {
        Some(Value::String(name)) => name,
        _ => return Err("no string `name`".into()),
    };
    let arguments = match map.remove("arguments") {
        Some(args @ Value::Object(_)) => args,
        None => Value::Object(Default::default()),
        Some(other) => return Err(format!("`arguments` is {other}, not an object")),
    };
    Ok(RawCall { name, arguments })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn closes_only_outside_strings_and_across_deltas() {
        let mut call = CallBody::default();
        assert_eq!(call.push("{\"a\": \"</tool_call> \\\""), Scan::Open);
        assert_eq!(call.push("\"}</tool"), Scan::Open);
        assert_eq!(
            call.push("_call>after"),
            Scan::Closed {
                body: "{\"a\": \"</tool_call> \\\"\"}".into(),
                rest: "after".into()
            }
        );
    }

    #[test]
    fn reads_calls_strictly() {
        let call = read_call(" {\"name\": \"f\", \"arguments\": {\"x\": 1}} ").unwrap();
        assert_eq!(call.name, "f");
        assert_eq!(call.arguments, serde_json::json!({"x": 1}));
        assert_eq!(
            read_call("{\"name\": \"f\"}").unwrap().arguments,
            serde_json::json!({})
        );
        assert!(read_call("not json").is_err());
        assert!(read_call("{\"name\": 1}").is_err());
        assert!(read_call("{\"name\": \"f\", \"arguments\": \"{}\"}").is_err());
    }
}
