//! rein's shared data types: chat messages, tool calls and tool specs, in the shape
//! chat templates and OpenAI-compatible clients expect. Serde only, no behaviour.
#![deny(missing_docs)]

mod grammar;
mod message;
mod tool;

pub use grammar::Grammar;
pub use message::{FunctionCall, Message, Role, ToolCall};
pub use tool::{FunctionSpec, ToolSpec};
