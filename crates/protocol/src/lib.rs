//! rein's shared data types: chat messages, tool calls and tool specs in the shape
//! chat templates and OpenAI-compatible clients expect; the OpenAI wire format; and
//! the run's event stream (events, sinks, JSONL traces, the run's result).
#![deny(missing_docs)]

mod choice;
mod event;
mod grammar;
mod message;
pub mod openai;
mod result;
mod sink;
mod tool;
mod trace;

pub use choice::ToolChoice;
pub use event::{recorded_history, RecordedPrompt, RunEvent};
pub use grammar::Grammar;
pub use message::{FunctionCall, Message, Role, ToolCall};
pub use result::{RunResult, StopReason};
pub use sink::{EventSink, NoSink, Sinks};
pub use tool::{FunctionSpec, ToolSpec};
pub use trace::{read_trace, TraceError, TraceWriter};
