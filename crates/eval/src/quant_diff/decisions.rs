//! The tokens of a recorded reply that decide what the reply does: its first token
//! (a call or an answer), each call's tool name, each argument's first value token.
//! Found from the reply text and the calls read from it, in whatever syntax the
//! model's family writes calls (JSON, XML-like parameters, Python-like keywords).

use std::fmt;

use rein_protocol::{RecordedPrompt, RunEvent};
use serde_json::Value;

/// What a decision token decides.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum DecisionKind {
    /// The reply's first token: whether it opens a call or an answer.
    CallOrAnswer,
    /// The first token of a call's tool name.
    ToolName,
    /// The first token of an argument's value.
    ArgumentValue,
}

impl DecisionKind {
    /// Every kind, in report order.
    pub const ALL: [DecisionKind; 3] = [
        DecisionKind::CallOrAnswer,
        DecisionKind::ToolName,
        DecisionKind::ArgumentValue,
    ];

    /// The name used in reports.
    pub fn as_str(self) -> &'static str {
        match self {
            DecisionKind::CallOrAnswer => "call_or_answer",
            DecisionKind::ToolName => "tool_name",
            DecisionKind::ArgumentValue => "argument_value",
        }
    }
}

impl fmt::Display for DecisionKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One decision of a reply: its kind and the byte of the reply where the decided
/// text starts (the decision token is the one spelling that byte).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Decision {
    /// What it decides.
    pub kind: DecisionKind,
    /// The byte offset in the reply.
    pub byte: usize,
}

/// A recorded turn to replay: its prompt, the reply the model wrote and the calls
/// read from that reply (empty for an answer).
#[derive(Debug, Clone, PartialEq)]
pub struct ReplayTurn {
    /// The turn's number.
    pub turn: u32,
    /// The attempt within the turn.
    pub attempt: u32,
    /// The prompt the reply came from.
    pub prompt: RecordedPrompt,
    /// The raw reply.
    pub reply: String,
    /// The calls read from the reply: `{"name", "arguments"}` objects.
    pub calls: Vec<Value>,
}

impl ReplayTurn {
    /// The reply's decisions.
    pub fn decisions(&self) -> Vec<Decision> {
        decisions(&self.reply, &self.calls)
    }
}

/// The turns of a trace that recorded their prompts, each with the calls read from
/// its reply (the `calls` event of the same turn before the next reply). Turns asked
/// for one of given values (the answer put in the form the task asks for) decide no
/// call and are left out: marked so in their prompt, or — in traces recorded before
/// that mark — followed by the `answer_form` rule's event.
pub fn replay_turns(events: &[RunEvent]) -> Vec<ReplayTurn> {
    let mut turns: Vec<ReplayTurn> = Vec::new();
    let mut open = false;
    for event in events {
        match event {
            RunEvent::Turn {
                turn,
                attempt,
                raw,
                prompt,
                ..
            } => {
                let prompt = prompt.as_ref().filter(|p| !p.values_only);
                open = prompt.is_some();
                if let Some(prompt) = prompt {
                    turns.push(ReplayTurn {
                        turn: *turn,
                        attempt: *attempt,
                        prompt: prompt.clone(),
                        reply: raw.clone(),
                        calls: Vec::new(),
                    });
                }
            }
            RunEvent::Calls { turn, calls } if open => {
                if let Some(last) = turns.last_mut().filter(|t| t.turn == *turn) {
                    last.calls = calls.clone();
                }
                open = false;
            }
            RunEvent::RuleFired { turn, rule, .. } if open && rule == "answer_form" => {
                if turns.last().is_some_and(|t| t.turn == *turn) {
                    turns.pop();
                }
                open = false;
            }
            _ => {}
        }
    }
    turns
}

/// The decisions of `reply`, whose calls are `calls` (`{"name", "arguments"}`): the
/// first token always; for each call found in the text in order, its name, and the
/// value of each of its arguments written after the name and before the next call.
/// A call whose name the text does not hold (a repaired name) adds nothing.
pub fn decisions(reply: &str, calls: &[Value]) -> Vec<Decision> {
    if reply.is_empty() {
        return Vec::new();
    }
    let mut found = vec![Decision {
        kind: DecisionKind::CallOrAnswer,
        byte: 0,
    }];
    let names: Vec<Option<(usize, &str)>> = {
        let mut cursor = 0;
        calls
            .iter()
            .map(|call| {
                let name = call.get("name")?.as_str().filter(|n| !n.is_empty())?;
                let at = find_call_name(reply, cursor, name)?;
                cursor = at + name.len();
                Some((at, name))
            })
            .collect()
    };
    for (index, call) in calls.iter().enumerate() {
        let Some((at, name)) = names[index] else {
            continue;
        };
        found.push(Decision {
            kind: DecisionKind::ToolName,
            byte: at,
        });
        let end = names[index + 1..]
            .iter()
            .flatten()
            .map(|(next, _)| *next)
            .next()
            .unwrap_or(reply.len());
        let region = at + name.len()..end;
        let Some(arguments) = call.get("arguments").and_then(Value::as_object) else {
            continue;
        };
        let mut values: Vec<usize> = arguments
            .keys()
            .filter_map(|key| value_start(reply, region.clone(), key))
            .collect();
        values.sort_unstable();
        values.dedup();
        found.extend(values.into_iter().map(|byte| Decision {
            kind: DecisionKind::ArgumentValue,
            byte,
        }));
    }
    found
}

/// Where `name` is written as a call's name at or after `from`: the first whole-word
/// occurrence followed (past a closing quote and blanks) by what ends a name in a call
/// — `,` `(` `>` `{` `}` `:` a line break or the end — else the first whole-word one
/// (so a mention in prose before the call is passed over).
fn find_call_name(reply: &str, from: usize, name: &str) -> Option<usize> {
    let first = find_name(reply, from, name)?;
    let mut at = first;
    loop {
        let rest = reply[at + name.len()..].trim_start_matches(['"', '\'']);
        let rest = rest.trim_start_matches([' ', '\t']);
        if rest.is_empty() || rest.starts_with([',', '(', '>', '{', '}', ':', '\n', '\r']) {
            return Some(at);
        }
        match find_name(reply, at + name.len(), name) {
            Some(next) => at = next,
            None => return Some(first),
        }
    }
}

/// Where `name` is written as a whole word at or after `from`.
fn find_name(reply: &str, from: usize, name: &str) -> Option<usize> {
    let mut at = from;
    while let Some(offset) = reply.get(at..)?.find(name) {
        let start = at + offset;
        let end = start + name.len();
        let before = reply[..start].chars().next_back();
        let after = reply[end..].chars().next();
        if !before.is_some_and(is_word) && !after.is_some_and(is_word) {
            return Some(start);
        }
        at = end;
    }
    None
}

fn is_word(c: char) -> bool {
    c.is_alphanumeric() || c == '_' || c == '-'
}

/// The first byte of the value written for `key` in `region`: after the key (as a
/// whole word), a separator (`:`, `=`, `>`), blanks and one opening quote. A key in
/// quotes (`"path":`) wins over a bare one (`path=`, `<parameter=path>`), which text
/// inside a JSON string value can only be.
fn value_start(reply: &str, region: std::ops::Range<usize>, key: &str) -> Option<usize> {
    let text = reply.get(region.clone())?;
    let mut best: Option<(bool, usize)> = None;
    let mut from = 0;
    while let Some(at) = find_name(text, from, key) {
        from = at + key.len();
        let before = text[..at].chars().next_back();
        let quoted = matches!(before, Some('"' | '\'')) && !text[..at - 1].ends_with('\\');
        let mut rest = text[from..].char_indices().peekable();
        let mut skip = |set: &[char], most: usize| {
            let mut taken = 0;
            while taken < most && rest.peek().is_some_and(|(_, c)| set.contains(c)) {
                rest.next();
                taken += 1;
            }
            taken
        };
        let closed = skip(&['"', '\''], 1) == 1;
        skip(&[' ', '\t'], usize::MAX);
        if skip(&[':', '=', '>'], 1) == 0 {
            continue;
        }
        skip(&[' ', '\t', '\n', '\r'], usize::MAX);
        skip(&['"', '\''], 1);
        let Some(offset) = rest.peek().map(|(i, _)| *i) else {
            continue;
        };
        let candidate = (!(quoted && closed), region.start + from + offset);
        if best.is_none_or(|b| candidate < b) {
            best = Some(candidate);
        }
    }
    best.map(|(_, byte)| byte)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn kinds_and_text(reply: &str, calls: &[Value]) -> Vec<(DecisionKind, String)> {
        decisions(reply, calls)
            .into_iter()
            .map(|d| (d.kind, reply[d.byte..].chars().take(6).collect()))
            .collect()
    }

    #[test]
    fn a_json_call_decides_its_opening_name_and_each_value() {
        let reply = "<tool_call>\n{\"name\": \"read_file\", \"arguments\": {\"path\": \"src/a.py\", \"limit\": 20}}\n</tool_call>";
        let calls = [json!({"name": "read_file", "arguments": {"path": "src/a.py", "limit": 20}})];
        assert_eq!(
            kinds_and_text(reply, &calls),
            vec![
                (DecisionKind::CallOrAnswer, "<tool_".into()),
                (DecisionKind::ToolName, "read_f".into()),
                (DecisionKind::ArgumentValue, "src/a.".into()),
                (DecisionKind::ArgumentValue, "20}}\n<".into()),
            ]
        );
    }

    #[test]
    fn parallel_calls_keep_their_arguments_apart() {
        let reply = concat!(
            "<tool_call>\n{\"name\": \"read_file\", \"arguments\": {\"path\": \"a.md\"}}\n</tool_call>\n",
            "<tool_call>\n{\"name\": \"read_file\", \"arguments\": {\"path\": \"b.md\"}}\n</tool_call>"
        );
        let calls = [
            json!({"name": "read_file", "arguments": {"path": "a.md"}}),
            json!({"name": "read_file", "arguments": {"path": "b.md"}}),
        ];
        assert_eq!(
            kinds_and_text(reply, &calls),
            vec![
                (DecisionKind::CallOrAnswer, "<tool_".into()),
                (DecisionKind::ToolName, "read_f".into()),
                (DecisionKind::ArgumentValue, "a.md\"}".into()),
                (DecisionKind::ToolName, "read_f".into()),
                (DecisionKind::ArgumentValue, "b.md\"}".into()),
            ]
        );
    }

    #[test]
    fn a_plain_answer_decides_only_its_opening() {
        assert_eq!(
            kinds_and_text("The file holds 3 lines.", &[]),
            vec![(DecisionKind::CallOrAnswer, "The fi".into())]
        );
        assert!(decisions("", &[]).is_empty());
    }

    #[test]
    fn other_call_syntaxes_are_found_too() {
        // XML-like parameters (Qwen3-Coder) and Python-like keywords (Llama 3).
        let xml = "<tool_call>\n<function=search>\n<parameter=pattern>\nTODO\n</parameter>\n</function>\n</tool_call>";
        let calls = [json!({"name": "search", "arguments": {"pattern": "TODO"}})];
        assert_eq!(
            kinds_and_text(xml, &calls)[1..],
            [
                (DecisionKind::ToolName, "search".into()),
                (DecisionKind::ArgumentValue, "TODO\n<".into()),
            ]
        );
        let python = "[list_dir(path='docs', depth=2)]";
        let calls = [json!({"name": "list_dir", "arguments": {"path": "docs", "depth": 2}})];
        assert_eq!(
            kinds_and_text(python, &calls)[1..],
            [
                (DecisionKind::ToolName, "list_d".into()),
                (DecisionKind::ArgumentValue, "docs',".into()),
                (DecisionKind::ArgumentValue, "2)]".into()),
            ]
        );
    }

    #[test]
    fn names_and_keys_inside_values_are_not_taken_for_them() {
        // The key `path` also appears inside the content, and `read_file` inside a
        // longer word; neither is a decision.
        let reply = "{\"name\": \"write_file\", \"arguments\": {\"content\": \"path: x, reread_file\", \"path\": \"out.txt\"}}";
        let calls = [
            json!({"name": "write_file", "arguments": {"content": "path: x, reread_file", "path": "out.txt"}}),
        ];
        let found = kinds_and_text(reply, &calls);
        assert_eq!(
            found,
            vec![
                (DecisionKind::CallOrAnswer, "{\"name".into()),
                (DecisionKind::ToolName, "write_".into()),
                (DecisionKind::ArgumentValue, "path: ".into()),
                (DecisionKind::ArgumentValue, "out.tx".into()),
            ]
        );
    }

    #[test]
    fn a_name_mentioned_in_prose_before_the_call_is_passed_over() {
        let reply = "I will use read_file to look.\n<tool_call>\n{\"name\": \"read_file\", \"arguments\": {\"path\": \"a\"}}\n</tool_call>";
        let calls = [json!({"name": "read_file", "arguments": {"path": "a"}})];
        assert_eq!(
            kinds_and_text(reply, &calls)[1..],
            [
                (DecisionKind::ToolName, "read_f".into()),
                (DecisionKind::ArgumentValue, "a\"}}\n<".into()),
            ]
        );
        let found = decisions(reply, &calls);
        assert!(found[1].byte > reply.find("<tool_call>").unwrap());
    }

    #[test]
    fn a_repaired_name_adds_no_decision() {
        let reply =
            "<tool_call>\n{\"name\": \"readfile\", \"arguments\": {\"path\": \"a\"}}\n</tool_call>";
        let calls = [json!({"name": "read_file", "arguments": {"path": "a"}})];
        assert_eq!(decisions(reply, &calls).len(), 1);
    }

    #[test]
    fn replayed_turns_pair_each_recorded_reply_with_its_calls() {
        let prompt = RecordedPrompt {
            text: "<|im_start|>user\nhi<|im_end|>\n".into(),
            literal: Vec::new(),
            values_only: false,
        };
        let values = RecordedPrompt {
            values_only: true,
            ..prompt.clone()
        };
        let turn = |turn, raw: &str, prompt: Option<RecordedPrompt>| RunEvent::Turn {
            turn,
            attempt: 1,
            prompt_tokens: 10,
            reused_tokens: 0,
            completion_tokens: 5,
            max_tokens: 512,
            ttft_ms: 1,
            ms: 2,
            cut_off: false,
            raw: raw.into(),
            prompt,
        };
        let events = vec![
            turn(1, "call", Some(prompt.clone())),
            RunEvent::Calls {
                turn: 1,
                calls: vec![json!({"name": "a", "arguments": {}})],
            },
            turn(2, "unrecorded", None),
            RunEvent::Calls {
                turn: 2,
                calls: vec![json!({"name": "b", "arguments": {}})],
            },
            turn(3, "answer", Some(prompt.clone())),
            // The answer asked again as one of given values: marked, or (older traces)
            // followed by the rule's event.
            turn(4, "\"42\"", Some(values)),
            turn(5, "\"42\"", Some(prompt)),
            RunEvent::RuleFired {
                turn: 5,
                rule: "answer_form".into(),
                kind: "retry".into(),
                detail: String::new(),
            },
        ];
        let turns = replay_turns(&events);
        assert_eq!(turns.len(), 2, "{turns:?}");
        assert_eq!(turns[0].calls.len(), 1);
        assert_eq!(turns[1].reply, "answer");
        assert!(turns[1].calls.is_empty());
    }
}
