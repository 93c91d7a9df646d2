//! Models whose template has no tool support (SmolLM2 and other ChatML-only
//! templates): rein's own `<tool_call>` JSON format, taught in the system prompt; the
//! grammar and parsers are the Hermes ones.

use rein_protocol::Grammar;

use crate::hermes;
use crate::{ToolChoice, ToolSet};

/// The Hermes grammar: the emulated format is the Hermes syntax.
pub(crate) fn call_grammar(
    tools: &ToolSet,
    choice: &ToolChoice,
    parallel: bool,
) -> Option<Grammar> {
    hermes::call_grammar(tools, choice, parallel)
}
