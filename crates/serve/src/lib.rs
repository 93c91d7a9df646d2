//! rein's OpenAI-compatible chat server: `POST /v1/chat/completions` with tools whose
//! calls come from grammar-constrained decoding and the model family's parser, plain
//! or streamed as server-sent events; requests share the engine's sessions (a fair
//! queue, then 503), and a client that goes away frees its session.
#![deny(missing_docs)]

mod chat;
mod error;
mod model;
mod reply;
mod request;
mod server;
mod state;

pub use error::ApiError;
pub use model::ServedModel;
pub use request::DEFAULT_TEMPERATURE;
pub use server::{router, serve};
pub use state::AppState;
