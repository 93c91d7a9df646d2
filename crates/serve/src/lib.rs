//! rein's OpenAI-compatible chat server: `POST /v1/chat/completions` with tools whose
//! calls come from grammar-constrained decoding and the one reply reader (calls in the
//! model's own wrappers included), plain or streamed as server-sent events; requests
//! share a source of sessions (a fair queue, then 503), and a client that goes away
//! frees its session. It serves any `rein-engine` session source; it links no model
//! runtime.
#![deny(missing_docs)]

mod chat;
mod error;
mod limits;
mod listener;
mod model;
mod reply;
mod request;
mod server;
mod state;

pub use error::ApiError;
pub use limits::ServerLimits;
pub use listener::serve_with_limits;
pub use model::ServedModel;
pub use request::DEFAULT_TEMPERATURE;
pub use server::{router, serve};
pub use state::AppState;

/// Parses and checks a chat request body exactly as `POST /v1/chat/completions` does
/// and builds the engine request it would run, without running it; a refusal is the
/// error the endpoint would answer with. The request fuzz target's entry point.
pub fn check_request(body: &[u8]) -> Result<rein_engine::TurnRequest, ApiError> {
    let turn = request::prepare(request::parse(body)?)?;
    Ok(turn.request(rein_format::ToolFormat::Native, true, Some(16)))
}
