//! rein's chat formats: prompts rendered with the model's own Jinja chat template
//! (from the GGUF's `tokenizer.chat_template`) exactly as Hugging Face's Python
//! rendering does, so the model sees the text it was trained on.
#![deny(missing_docs)]

pub mod family;
pub mod hermes;
mod model_format;
mod pyjson;
pub mod stream;
mod template;
mod tools;

pub use family::{Family, FamilyStream, ToolFormat, UnknownFamily, UnknownToolFormat, REGISTRY};
pub use model_format::ModelFormat;
pub use template::{ChatTemplate, RenderContext, TemplateError, CHATML_TEMPLATE};
pub use tools::{PreparedTool, ToolChoice, ToolSet, ToolSetError};
