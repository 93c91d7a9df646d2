//! rein's model interface, the small trait crate under the heavy implementations: a
//! [`Backend`] answers one [`TurnRequest`] (a conversation, the offered tools and the
//! turn's shape) with a [`Completion`] (the raw text and the reply read from it),
//! streaming [`ReplyEvent`]s as it goes; a [`SessionSource`] opens backends on one
//! loaded model for front ends that serve many conversations. The llama.cpp backend
//! lives in `rein-llama`, the OpenAI-compatible remote one in `rein-remote`; the agent,
//! the server and the eval runner depend on this crate only.
#![deny(missing_docs)]

mod backend;
mod request;

pub use backend::{
    Backend, BackendError, BackendInfo, Completion, NoEvents, ReplySink, SessionSource,
};
pub use rein_format::{ReadMode, Reply, ReplyEvent};
pub use request::{Sampling, TurnRequest};
