//! The Hermes / Qwen2.5 tool-call format: calls written as
//! `<tool_call>\n{"name": ..., "arguments": {...}}\n</tool_call>`. Its grammar (one
//! branch per tool, so only existing tools can be named and each tool's arguments
//! follow its schema) and its strict parser. Models without a tool template (SmolLM2)
//! are taught the same format in the system prompt (emulated calling).

use rein_protocol::{Grammar, Message, Role, ToolCall};
use rein_schema::gbnf::lit;
use rein_schema::Json;
use serde_json::Value;

use crate::family::grammar::{optional, CallForm};
use crate::family::marker_stream::{scan_for, Body, CallSyntax, Scan};
use crate::stream::{THINK_CLOSE, THINK_OPEN};
use crate::{ToolChoice, ToolSet};

/// Opens a call.
pub const CALL_OPEN: &str = "<tool_call>";
/// Closes a call.
pub const CALL_CLOSE: &str = "</tool_call>";

/// Whether a template is taken for this family: it renders tools (any template that
/// reads `tools` and matched no family before this one in the registry).
pub(crate) fn detects(template: &str) -> bool {
    template.contains("tools")
}

/// One call as the format writes it.
pub(crate) fn call_text(name: &str, arguments: &Value) -> String {
    let body = serde_json::json!({"name": name, "arguments": arguments});
    format!("{CALL_OPEN}\n{body}\n{CALL_CLOSE}")
}

/// The Hermes syntax for the stream engine: a `<think>` block may open the reply;
/// calls start at `<tool_call>`.
#[derive(Debug)]
pub(crate) struct Hermes;

/// The syntax instance.
pub(crate) static SYNTAX: Hermes = Hermes;

impl CallSyntax for Hermes {
    fn reasoning(&self) -> &'static [(&'static str, &'static str)] {
        &[(THINK_OPEN, THINK_CLOSE)]
    }

    fn scan(&self, body: &str) -> Scan {
        scan_for(body, CALL_OPEN)
    }

    fn parse_body(&self, body: &str, cut_off: bool) -> Body {
        super::hermes_body::parse_body(body, cut_off)
    }
}

/// The most calls one reply may hold: small models otherwise repeat a call until the
/// token limit.
pub const MAX_PARALLEL_CALLS: usize = 8;

/// The grammar for `choice` over `tools`; `None` when the turn is unconstrained
/// (`none`, or no tools).
pub fn call_grammar(tools: &ToolSet, choice: &ToolChoice, parallel: bool) -> Option<Grammar> {
    crate::Family::Hermes.call_grammar(tools, choice, parallel)
}

/// How calls are written for the grammar.
pub(crate) fn call_form() -> CallForm<'static> {
    CallForm {
        // The newline after the opener is optional: a lazy grammar starts on the
        // token that completes the opener, and that token may carry the `{`.
        before_name: vec![lit(CALL_OPEN), optional("\n"), lit("{\"name\": \"")],
        after_name: "\", \"arguments\": ".into(),
        after_arguments: format!("}}\n{CALL_CLOSE}"),
        prefix: Vec::new(),
        separator: vec![lit("\n")],
        triggers: vec![regex_escape(CALL_OPEN)],
        values: &Json,
        wrappers: true,
        call_or_answer: false,
    }
}

pub(crate) fn regex_escape(text: &str) -> String {
    text.chars()
        .flat_map(|c| {
            let special = "\\.+*?()|[]{}^$".contains(c);
            special
                .then_some('\\')
                .into_iter()
                .chain(std::iter::once(c))
        })
        .collect()
}

/// A call as the model wrote it (names as the model sees them).
#[derive(Debug, Clone, PartialEq)]
pub struct RawCall {
    /// The tool's name.
    pub name: String,
    /// The arguments, unparsed.
    pub arguments: Value,
}

/// A reply split into text and calls.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ParsedReply {
    /// Text outside the calls (trimmed), if any.
    pub content: Option<String>,
    /// The calls, in order.
    pub calls: Vec<RawCall>,
}

/// Why a reply's calls could not be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ParseError {
    /// The token limit ended the reply inside a call.
    #[error("the reply reached the token limit before its tool calls were complete")]
    Truncated,
    /// A call was opened and never closed (the output was cut).
    #[error("a tool call was opened but not closed (the reply was cut off)")]
    Unclosed,
    /// A call's body is not the expected JSON object.
    #[error("tool call {index} is not a JSON object with `name` and `arguments`: {reason}")]
    BadCall {
        /// Which call (from 1).
        index: usize,
        /// What is wrong.
        reason: String,
    },
}

/// Splits `text` into content and calls, strictly: each call body must be a JSON
/// object with a string `name` and an object `arguments`. The body is read as JSON,
/// so a `</tool_call>` inside a string argument is data, not the end of the call.
pub fn parse_reply(text: &str) -> Result<ParsedReply, ParseError> {
    let mut content = String::new();
    let mut calls = Vec::new();
    let mut rest = text;
    while let Some(open) = rest.find(CALL_OPEN) {
        content.push_str(&rest[..open]);
        let after = &rest[open + CALL_OPEN.len()..];
        let index = calls.len() + 1;
        let bad = |reason: String| ParseError::BadCall { index, reason };
        let mut values = serde_json::Deserializer::from_str(after).into_iter::<Value>();
        let body = match values.next() {
            Some(Ok(body)) => body,
            Some(Err(e)) if e.is_eof() => return Err(ParseError::Unclosed),
            Some(Err(e)) => return Err(bad(e.to_string())),
            None => return Err(ParseError::Unclosed),
        };
        let tail = after[values.byte_offset()..].trim_start();
        rest = match tail.strip_prefix(CALL_CLOSE) {
            Some(rest) => rest,
            None if tail.is_empty() || CALL_CLOSE.starts_with(tail) => {
                return Err(ParseError::Unclosed)
            }
            None => {
                return Err(bad(format!(
                    "text after the call body where {CALL_CLOSE} belongs"
                )))
            }
        };
        let Value::Object(mut map) = body else {
            return Err(bad("not an object".into()));
        };
        let name = match map.remove("name") {
            Some(Value::String(name)) => name,
            _ => return Err(bad("no string `name`".into())),
        };
        let arguments = match map.remove("arguments") {
            Some(args @ Value::Object(_)) => args,
            None => Value::Object(Default::default()),
            Some(other) => return Err(bad(format!("`arguments` is {other}, not an object"))),
        };
        calls.push(RawCall { name, arguments });
    }
    content.push_str(rest);
    let content = content.trim();
    Ok(ParsedReply {
        content: (!content.is_empty()).then(|| content.to_string()),
        calls,
    })
}

/// The system-prompt text that teaches the format to a model whose template has no
/// tool support, listing `definitions` one per line.
pub fn emulated_instructions(definitions: &[Value]) -> String {
    let mut out = String::from(
        "You can call tools. To call one, reply with exactly:\n<tool_call>\n{\"name\": \"TOOL NAME\", \"arguments\": {ARGUMENTS AS JSON}}\n</tool_call>\nEach result comes back inside <tool_response></tool_response>.\nThe tools:\n",
    );
    for d in definitions {
        out.push_str(&d.to_string());
        out.push('\n');
    }
    out
}

/// The start of a tool result shown to a model with emulated calling.
pub const RESPONSE_OPEN: &str = "<tool_response>";
/// The end of such a result.
pub const RESPONSE_CLOSE: &str = "</tool_response>";

/// Rewrites a conversation for a template without tool support: an assistant's calls
/// become the call text the model was taught to write, and tool results become user
/// turns wrapped in `<tool_response>` (consecutive results share one turn).
pub fn emulate_history(messages: &[Message]) -> Vec<Message> {
    emulate_history_with(messages, |content, calls| {
        let mut text = content.to_string();
        for call in calls {
            if !text.is_empty() {
                text.push('\n');
            }
            text.push_str(&call_text(&call.function.name, &call.function.arguments));
        }
        text
    })
}

/// [`emulate_history`] with an assistant turn's content and calls written by
/// `turn_text`.
pub(crate) fn emulate_history_with(
    messages: &[Message],
    turn_text: impl Fn(&str, &[ToolCall]) -> String,
) -> Vec<Message> {
    let mut out: Vec<Message> = Vec::with_capacity(messages.len());
    for message in messages {
        match message.role {
            Role::Assistant if !message.tool_calls.is_empty() => {
                let content = message.content.as_deref().unwrap_or_default();
                out.push(Message::assistant(turn_text(content, &message.tool_calls)));
            }
            Role::Tool => {
                let block = format!(
                    "{RESPONSE_OPEN}\n{}\n{RESPONSE_CLOSE}",
                    message.content.as_deref().unwrap_or_default()
                );
                match out.last_mut() {
                    Some(last)
                        if last.role == Role::User
                            && last
                                .content
                                .as_deref()
                                .is_some_and(|c| c.ends_with(RESPONSE_CLOSE)) =>
                    {
                        if let Some(content) = &mut last.content {
                            content.push('\n');
                            content.push_str(&block);
                        }
                    }
                    _ => out.push(Message::user(block)),
                }
            }
            _ => out.push(message.clone()),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use rein_protocol::ToolSpec;
    use serde_json::json;

    fn tools() -> ToolSet {
        let specs: Vec<ToolSpec> = serde_json::from_value(json!([
            {"type": "function", "function": {"name": "get_weather", "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}},
            {"type": "function", "function": {"name": "list_files"}}
        ]))
        .unwrap();
        ToolSet::prepare(&specs).unwrap()
    }

    #[test]
    fn grammar_has_one_branch_per_tool_and_honours_the_choice() {
        let t = tools();
        let all = call_grammar(&t, &ToolChoice::Required, true).unwrap();
        assert!(all.gbnf.contains("tool-get-weather"), "{}", all.gbnf);
        assert!(all.gbnf.contains("tool-list-files"));
        assert!(all.lazy_triggers.is_empty());
        let named = call_grammar(&t, &ToolChoice::Named("list_files".into()), false).unwrap();
        assert!(!named.gbnf.contains("tool-get-weather"));
        let auto = call_grammar(&t, &ToolChoice::Auto, true).unwrap();
        // The marker, then the wrappers whose opening names an offered tool.
        assert_eq!(auto.lazy_triggers[0], "<tool_call>");
        assert_eq!(auto.lazy_triggers.len(), 4);
        assert!(auto.lazy_triggers[1..]
            .iter()
            .all(|t| t.contains("get_weather|list_files")));
        assert!(auto.gbnf.contains("wrapped ::= "));
        assert!(call_grammar(&t, &ToolChoice::None, true).is_none());
    }

    #[test]
    fn call_or_answer_constrains_from_the_first_token() {
        let t = tools();
        let grammar = crate::Family::Hermes
            .call_grammar_with(
                &t,
                &ToolChoice::Auto,
                true,
                crate::AutoGrammar::CallOrAnswer,
            )
            .unwrap();
        // No trigger: the grammar holds from the first token, calls or an answer.
        assert!(grammar.lazy_triggers.is_empty());
        assert!(
            grammar.gbnf.contains("root ::= (calls | answer)"),
            "{}",
            grammar.gbnf
        );
        assert!(grammar.gbnf.contains("tool-get-weather"));
        // No wrapper of the model's own: a call has one spelling, the template's.
        assert!(!grammar.gbnf.contains("wrapped ::= "), "{}", grammar.gbnf);
        // Under a forced choice nothing changes: calls only.
        let required = crate::Family::Hermes
            .call_grammar_with(
                &t,
                &ToolChoice::Required,
                true,
                crate::AutoGrammar::CallOrAnswer,
            )
            .unwrap();
        assert!(!required.gbnf.contains("answer"), "{}", required.gbnf);
    }

    #[test]
    fn parses_text_and_calls_strictly() {
        let reply = "Let me check.\n<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Oslo\"}}\n</tool_call>\n<tool_call>\n{\"name\": \"list_files\", \"arguments\": {}}\n</tool_call>";
        let parsed = parse_reply(reply).unwrap();
        assert_eq!(parsed.content.as_deref(), Some("Let me check."));
        assert_eq!(parsed.calls.len(), 2);
        assert_eq!(parsed.calls[0].arguments, json!({"city": "Oslo"}));
        assert_eq!(
            parse_reply("just text").unwrap(),
            ParsedReply {
                content: Some("just text".into()),
                calls: vec![]
            }
        );
        assert_eq!(
            parse_reply("<tool_call>\n{\"name\": \"x\"").unwrap_err(),
            ParseError::Unclosed
        );
        assert_eq!(
            parse_reply("<tool_call>\n{\"name\": \"x\"}\n</tool").unwrap_err(),
            ParseError::Unclosed
        );
        // A closing marker inside a string argument is data.
        let tricky = "<tool_call>\n{\"name\": \"x\", \"arguments\": {\"s\": \"}}</tool_call> {\"}}\n</tool_call>";
        let parsed = parse_reply(tricky).unwrap();
        assert_eq!(parsed.calls[0].arguments, json!({"s": "}}</tool_call> {"}));
        assert_eq!(parsed.content, None);
        assert!(matches!(
            parse_reply("<tool_call>{\"name\": 1}</tool_call>"),
            Err(ParseError::BadCall { index: 1, .. })
        ));
        assert!(matches!(
            parse_reply("<tool_call>{\"name\": \"x\", \"arguments\": \"{}\"}</tool_call>"),
            Err(ParseError::BadCall { .. })
        ));
        let call = "<tool_call>\n{\"name\": \"list_files\", \"arguments\": {}}\n</tool_call>";
        let hermes = crate::Family::Hermes;
        assert_eq!(
            hermes.parse_reply_checked(&format!("{call}\n<"), true, true),
            Err(ParseError::Truncated)
        );
        assert_eq!(
            hermes
                .parse_reply_checked(call, true, true)
                .unwrap()
                .calls
                .len(),
            1
        );
        assert_eq!(
            hermes
                .parse_reply_checked("long text", true, false)
                .unwrap()
                .content
                .as_deref(),
            Some("long text")
        );
    }

    #[test]
    fn emulated_history_writes_calls_as_text_and_results_as_user_turns() {
        let messages: Vec<Message> = serde_json::from_value(json!([
            {"role": "user", "content": "go"},
            {"role": "assistant", "content": null, "tool_calls": [
                {"type": "function", "function": {"name": "a", "arguments": {"x": 1}}},
                {"type": "function", "function": {"name": "b", "arguments": {}}}
            ]},
            {"role": "tool", "content": "one", "name": "a"},
            {"role": "tool", "content": "two", "name": "b"},
            {"role": "assistant", "content": "done"}
        ]))
        .unwrap();
        let out = emulate_history(&messages);
        assert_eq!(out.len(), 4);
        assert_eq!(
            out[1].content.as_deref(),
            Some("<tool_call>\n{\"name\":\"a\",\"arguments\":{\"x\":1}}\n</tool_call>\n<tool_call>\n{\"name\":\"b\",\"arguments\":{}}\n</tool_call>")
        );
        assert!(out[1].tool_calls.is_empty());
        assert_eq!(out[2].role, Role::User);
        assert_eq!(
            out[2].content.as_deref(),
            Some("<tool_response>\none\n</tool_response>\n<tool_response>\ntwo\n</tool_response>")
        );
        let reparsed = parse_reply(out[1].content.as_deref().unwrap()).unwrap();
        assert_eq!(reparsed.calls.len(), 2);
    }
}
