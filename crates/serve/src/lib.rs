//! rein's OpenAI-compatible chat server: `POST /v1/chat/completions` with tools whose
//! calls come from grammar-constrained decoding and the one reply reader (calls in the
//! model's own wrappers included), plain or streamed as server-sent events; requests
//! share a source of sessions (a fair queue, then 503), and a client that goes away
//! frees its session. It serves any `rein-engine` session source; it links no model
//! runtime.
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
