//! `naive`: the way a bare prompt harness works. The tools are taught in the system
//! prompt in the family's syntax, nothing constrains decoding, and the reply is read
//! loosely: calls in the family's syntax if they parse, else any JSON object in the
//! text that looks like a call; otherwise the text is the answer. Calls run as
//! written (the tool reports what is wrong); nothing is retried.

use rein_engine::{Completion, ReadMode};
use rein_format::read::loose_calls;
use rein_format::ToolFormat;
use rein_protocol::ToolChoice;

use super::{ReadContext, Shape, Step, Strategy};
use crate::validate::ProposedCall;

/// The `naive` profile.
pub(crate) struct Naive;

impl Strategy for Naive {
    fn shape(&self, _tool_format: ToolFormat, _forced: Option<&ToolChoice>) -> Shape {
        Shape {
            tools: true,
            tool_format: ToolFormat::Emulated,
            choice: ToolChoice::Auto,
            constrained: false,
            read: ReadMode::TEXT,
            stop: Vec::new(),
        }
    }

    fn read(&self, completion: &Completion, context: ReadContext<'_>) -> Step {
        let text = &completion.text;
        if let Ok(parsed) = context.family.parse_reply(text) {
            if !parsed.calls.is_empty() {
                return Step::Calls {
                    content: parsed.content,
                    calls: parsed.calls.into_iter().map(ProposedCall::loose).collect(),
                    format_repair: None,
                };
            }
        }
        let calls = loose_calls(text);
        if calls.is_empty() {
            Step::Answer(text.trim().to_string())
        } else {
            Step::Calls {
                content: None,
                calls: calls.into_iter().map(ProposedCall::loose).collect(),
                format_repair: None,
            }
        }
    }
}
