//! From a proposed call to one ready to run: an id, and — for the profiles that
//! validate — the reader's verdict turned into a repair event, a coercion event, or a
//! rejection with the note that says what to fix. Profiles that do not validate run
//! every call as written and let the tool report what is wrong.

use rein_format::hermes::RawCall;
use rein_format::{CallCheck, ReadCall};
use rein_protocol::{EventSink, RunEvent};
use serde_json::Value;

use crate::recovery::{self, FailureClass};

/// A call as the profile read it.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct ProposedCall {
    /// The tool (repaired by the reader when the written name was an obvious variant).
    pub name: String,
    /// The arguments to run with.
    pub arguments: Value,
    /// The name as written.
    pub written_name: String,
    /// The arguments as written.
    pub written_arguments: Value,
    /// The reader's verdict; `None` for profiles that run calls as written.
    pub check: Option<CallCheck>,
}

impl ProposedCall {
    /// A call the reader checked against its tool.
    pub(crate) fn checked(call: ReadCall) -> Self {
        ProposedCall {
            name: call.name,
            arguments: call.arguments,
            written_name: call.written_name,
            written_arguments: call.written_arguments,
            check: Some(call.check),
        }
    }

    /// A call to run as written.
    pub(crate) fn loose(call: RawCall) -> Self {
        ProposedCall {
            name: call.name.clone(),
            arguments: call.arguments.clone(),
            written_name: call.name,
            written_arguments: call.arguments,
            check: None,
        }
    }
}

/// A call that passed validation, ready to run.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct ReadyCall {
    /// Its id in the history.
    pub id: String,
    /// The tool.
    pub name: String,
    /// The arguments.
    pub arguments: Value,
}

impl ReadyCall {
    /// The trace event of `calls` proposed at `turn`, about to run.
    pub(crate) fn event(turn: u32, calls: &[ReadyCall]) -> rein_protocol::RunEvent {
        rein_protocol::RunEvent::Calls {
            turn,
            calls: calls
                .iter()
                .map(|c| serde_json::json!({"id": c.id, "name": c.name, "arguments": c.arguments}))
                .collect(),
        }
    }

    /// The identity of a call for repetition checks: name and canonical arguments.
    pub(crate) fn key(&self) -> String {
        call_key(&self.name, &self.arguments)
    }
}

/// What tells one call from another: its name and arguments.
pub(crate) fn call_key(name: &str, arguments: &Value) -> String {
    format!("{name}\u{0}{arguments}")
}

/// The tool name and the arguments' JSON of a [`call_key`].
pub(crate) fn call_key_parts(key: &str) -> Option<(&str, &str)> {
    key.split_once('\u{0}')
}

/// A call the loop refuses to run: its class, the detail for the trace, the note.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Rejection {
    /// The failure class.
    pub class: FailureClass,
    /// What exactly, for the trace.
    pub detail: String,
    /// What the model is told (if the profile explains rejections).
    pub note: String,
    /// The note should show the latest tool result (an argument stood for it).
    pub shows_result: bool,
    /// The call copies an earlier result (the `copied_result` rule refused it).
    pub copies_result: bool,
}

/// Validates one call as call number `number` of the run, reporting repairs and
/// coercions to `events`.
pub(crate) fn validate(
    call: ProposedCall,
    number: u32,
    turn: u32,
    tool_names: &[String],
    events: &mut dyn EventSink,
) -> Result<ReadyCall, Rejection> {
    let id = format!("call_{number}");
    let names: Vec<&str> = tool_names.iter().map(String::as_str).collect();
    match call.check.clone() {
        None => Ok(ReadyCall {
            id,
            name: call.name,
            arguments: call.arguments,
        }),
        Some(CallCheck::UnknownTool) => Err(Rejection {
            class: FailureClass::UnknownTool,
            detail: format!("unknown tool `{}`", call.written_name),
            note: recovery::unknown_tool_note(&call.written_name, &names),
            shows_result: false,
            copies_result: false,
        }),
        Some(CallCheck::Invalid(error)) => {
            report_repair(&call, turn, events);
            Err(Rejection {
                class: FailureClass::Schema,
                detail: format!("{}: {error}", call.name),
                note: recovery::schema_note(&call.name, &error),
                shows_result: false,
                copies_result: false,
            })
        }
        Some(CallCheck::Valid) => {
            if let Some(rejection) = marker_rejection(&call) {
                return Err(rejection);
            }
            report_repair(&call, turn, events);
            if call.arguments != call.written_arguments {
                events.emit(&RunEvent::Coerced {
                    turn,
                    tool: call.name.clone(),
                    from: call.written_arguments,
                    to: call.arguments.clone(),
                });
            }
            Ok(ReadyCall {
                id,
                name: call.name,
                arguments: call.arguments,
            })
        }
    }
}

/// The refusal of a valid call whose string argument is a conversation marker where
/// text belongs: the marker alone (or a template variable), or a result copied with
/// its marker.
fn marker_rejection(call: &ProposedCall) -> Option<Rejection> {
    let (key, marker, note) = if let Some((key, marker)) = placeholder(&call.arguments) {
        let note = format!(
            "Your call of `{}` was not run: `{key}` holds `{marker}`, which marks where tool results are shown to you; no tool can read it. Put the text itself in `{key}` and call it again.",
            call.name
        );
        (key, format!("is the placeholder `{marker}`"), note)
    } else {
        let (key, marker) = marked_copy(&call.arguments)?;
        let note = format!(
            "Your call of `{}` was not run: `{key}` opens with `{marker}`, the marker of tool results, copied with the text after it; it would end up in the file. Call it again with only the text itself in `{key}`, without the marker.",
            call.name
        );
        (key, format!("opens with `{marker}`"), note)
    };
    Some(Rejection {
        class: FailureClass::Schema,
        detail: format!("{}: `{key}` {marker}", call.name),
        note,
        shows_result: true,
        copies_result: false,
    })
}

/// The markers of calls and results in the prompt.
const MARKERS: [&str; 4] = [
    "<tool_response>",
    "</tool_response>",
    "<tool_call>",
    "</tool_call>",
];

/// The key and marker of a string argument that opens with a call or result marker
/// followed by text (`<tool_response>4 matching lines…`): a result copied with its
/// marker, which would end up in the file it is written to.
fn marked_copy(arguments: &Value) -> Option<(String, String)> {
    arguments.as_object()?.iter().find_map(|(key, value)| {
        let text = value.as_str()?.trim_start();
        let marker = MARKERS.iter().find(|m| text.starts_with(**m))?;
        Some((key.clone(), marker.to_string()))
    })
}

/// A string argument that is only a conversation marker (`<tool_response>`), which a
/// small model writes for "the result above": its key and the marker.
fn placeholder(arguments: &Value) -> Option<(String, String)> {
    arguments.as_object()?.iter().find_map(|(key, value)| {
        let text = value.as_str()?.trim();
        // `{{search_result}}`: a template variable standing for a result.
        let variable = text
            .strip_prefix("{{")
            .and_then(|t| t.strip_suffix("}}"))
            .is_some_and(|name| {
                let name = name.trim();
                !name.is_empty()
                    && name
                        .chars()
                        .all(|c| c.is_alphanumeric() || c == '_' || c == '.')
            });
        if variable {
            return Some((key.clone(), text.to_string()));
        }
        let marker = MARKERS
            .iter()
            .find(|m| text == **m || (text.starts_with(**m) && text.len() < 40))?;
        Some((key.clone(), marker.to_string()))
    })
}

fn report_repair(call: &ProposedCall, turn: u32, events: &mut dyn EventSink) {
    if call.name != call.written_name {
        events.emit(&RunEvent::NameRepaired {
            turn,
            from: call.written_name.clone(),
            to: call.name.clone(),
        });
    }
}
