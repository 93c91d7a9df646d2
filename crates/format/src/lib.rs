//! rein's chat formats: prompts rendered with the model's own Jinja chat template
//! (from the GGUF's `tokenizer.chat_template`) exactly as Hugging Face's Python
//! rendering does, so the model sees the text it was trained on; the tool-call
//! families; and the one turn preparer ([`ModelFormat::prepare`]) and reply reader
//! ([`ModelFormat::reader`]) every front end uses.
#![deny(missing_docs)]

pub mod family;
mod literal;
mod model_format;
mod prepare;
mod prose;
mod pyjson;
pub mod read;
mod signature;
pub mod stream;
mod template;
mod tools;

pub use family::hermes;
pub use family::{
    AutoGrammar, Family, FamilyStream, ToolFormat, UnknownFamily, UnknownToolFormat, REGISTRY,
};
pub use literal::Literals;
pub use model_format::ModelFormat;
pub use prepare::{plan_turn, taught_tools, PreparedTurn, TurnSpec};
pub use prose::prose_grammar;
pub use read::{
    CallCheck, ReadCall, ReadMode, ReadOutcome, Reply, ReplyEvent, ReplyProblem, ReplyReader,
};
pub use rein_protocol::ToolChoice;
pub use signature::signature;
pub use template::{ChatTemplate, RenderContext, TemplateError, CHATML_TEMPLATE};
pub use tools::{DescriptionStyle, PreparedTool, ToolSet, ToolSetError};
