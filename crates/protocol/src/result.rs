//! How a run ended and what it cost: the object `rein run --json` prints.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// Why a run stopped.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum StopReason {
    /// The model answered without a call.
    Answered,
    /// The model called `finish`.
    Finished,
    /// The turn budget ran out.
    MaxTurns,
    /// The generated-token budget ran out.
    MaxTokens,
    /// The wall-clock budget ran out.
    WallClock,
    /// A failure class went over its cap.
    RecoveryExhausted,
    /// The model could not be run.
    BackendError,
    /// The user stopped the run (Ctrl-C); it can be resumed from its trace.
    Interrupted,
}

impl StopReason {
    /// The reason's name.
    pub fn as_str(self) -> &'static str {
        match self {
            StopReason::Answered => "answered",
            StopReason::Finished => "finished",
            StopReason::MaxTurns => "max_turns",
            StopReason::MaxTokens => "max_tokens",
            StopReason::WallClock => "wall_clock",
            StopReason::RecoveryExhausted => "recovery_exhausted",
            StopReason::BackendError => "backend_error",
            StopReason::Interrupted => "interrupted",
        }
    }
}

/// The outcome of one run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunResult {
    /// The final answer, if the model gave one.
    pub answer: Option<String>,
    /// Why the run stopped.
    pub stop_reason: StopReason,
    /// For `recovery_exhausted`, the class; for `backend_error`, the error.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub detail: Option<String>,
    /// Model turns (retries included).
    pub turns: u32,
    /// Tool calls executed (or answered with a repetition nudge).
    pub tool_calls: u32,
    /// Tool calls that failed.
    pub tool_errors: u32,
    /// Recoveries by failure class.
    pub recoveries: BTreeMap<String, u32>,
    /// How often each rule of the loop fired, by name.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub rules: BTreeMap<String, u32>,
    /// Prompt tokens over all turns.
    pub prompt_tokens: u64,
    /// Generated tokens over all turns.
    pub completion_tokens: u64,
    /// Prompt tokens actually run through the model.
    pub evaluated_tokens: u64,
    /// Prompt tokens taken from the KV cache.
    pub reused_tokens: u64,
    /// Time to the first token of the first turn.
    pub first_ttft_ms: u64,
    /// Wall-clock time of the run.
    pub wall_ms: u64,
    /// Model time (all turns).
    pub model_ms: u64,
    /// The JSONL trace.
    pub trace: Option<String>,
    /// The model.
    pub model: String,
    /// The harness profile.
    pub profile: String,
}
