//! rein's work loop: a model proposes tool calls, rein validates, schedules and runs
//! them in a confined workspace, and feeds back results that always name a next move;
//! failures are classified and recovered, every event is traced, and four harness
//! profiles make the loop's own contribution measurable.
#![deny(missing_docs)]

mod backend;
mod config;
mod context;
mod facts;
mod local;
mod profile;
mod prompt;
mod recovery;
mod remote;
mod reply;
mod result;
mod run;
mod schedule;
mod scripted;
mod trace;

pub use backend::{Backend, BackendError, Completion, TurnRequest};
pub use config::RunConfig;
pub use context::{compact, Compaction, ContextPolicy};
pub use facts::detect as workspace_facts;
pub use local::LocalBackend;
pub use profile::{Profile, UnknownProfile};
pub use prompt::{wrap_untrusted, UNTRUSTED_CLOSE, UNTRUSTED_OPEN};
pub use recovery::{repair_tool_name, FailureClass};
pub use remote::{RemoteBackend, RemoteSettings};
pub use result::{RunResult, StopReason};
pub use run::{Agent, AgentError, FINISH_TOOL};
pub use scripted::{ScriptedBackend, ScriptedReply};
pub use trace::{read_trace, TraceError, TraceEvent, TraceWriter};
