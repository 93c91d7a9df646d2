//! rein's work loop: a model proposes tool calls, rein validates, schedules and runs
//! them in a confined workspace, and feeds back results that always name a next move;
//! failures are classified and recovered, every step is an event for the run's sinks,
//! and four harness profiles (strategies) make the loop's own contribution
//! measurable. The loop drives any `rein-engine` backend; it links no model runtime.
#![deny(missing_docs)]

mod agent;
mod answer;
mod answer_form;
mod answer_hints;
mod answer_now;
mod answer_text;
mod approval;
mod call_checks;
mod call_intent;
mod call_outcome;
mod calls;
mod config;
mod context;
mod continued;
mod copies;
mod described_edit;
mod empty_answer;
mod execute;
mod extreme_pick;
mod facts;
mod focused_answer;
mod focused_edit;
mod grounding;
mod guards;
mod guesses;
mod inside_path;
mod json_leaves;
mod key_paths;
mod list_extremes;
mod memory;
mod named_files;
mod not_an_answer;
mod not_found;
mod observation;
mod output_file;
mod path_answer;
mod profile;
mod prompt;
mod prompt_size;
mod quoted_copies;
mod recovery;
mod result_text;
mod rules;
mod run;
mod schedule;
mod server_route;
mod state;
mod stepwise;
mod stored_answer;
mod supported;
mod task_asks;
mod task_command;
mod task_needles;
mod task_paths;
mod task_words;
mod tool_commands;
mod tool_names;
mod tool_preview;
mod unread_writes;
mod validate;

pub use agent::{Agent, AgentError};
pub use approval::{
    preview as approval_preview, ApprovalPolicy, ApprovalRequest, Approver, Decision,
};
pub use config::{RunConfig, SettingError};
pub use context::{compact, Compaction, ContextPolicy};
pub use facts::detect as workspace_facts;
pub use profile::{Profile, UnknownProfile};
pub use recovery::{FailureClass, EMPTY_REPLY};
pub use rein_format::read::repair_tool_name;
pub use result_text::{wrap_untrusted, UNTRUSTED_CLOSE, UNTRUSTED_OPEN};
pub use rules::{Rule, RuleKind, RuleSwitches};
pub use tool_names::FINISH_TOOL;
