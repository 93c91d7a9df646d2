//! The settings of one run: profile, budgets, sampling, tool description style.

use std::time::Duration;

use rein_format::{DescriptionStyle, ToolFormat};
use serde_json::{json, Value};

use crate::profile::Profile;

/// How a run is driven and bounded.
#[derive(Debug, Clone)]
pub struct RunConfig {
    /// The harness profile.
    pub profile: Profile,
    /// Most model turns (retries count).
    pub max_turns: u32,
    /// Most generated tokens over the run.
    pub max_tokens: u64,
    /// Most wall-clock time for the run.
    pub wall_clock: Duration,
    /// A reply's token allowance; doubled on a truncated call.
    pub reply_tokens: u32,
    /// The most a doubled allowance may reach.
    pub reply_tokens_cap: u32,
    /// Sampling temperature (0 is greedy).
    pub temperature: f32,
    /// The base seed; each model call uses the next one.
    pub seed: u32,
    /// Hold the final answer once (at most twice) when source files were edited and
    /// no test or build ran since.
    pub verification_guard: bool,
    /// Hold an answer that is not one (narration of a step, an announcement) and an
    /// answer while the file the task asks for is missing (`full` only).
    pub answer_guards: bool,
    /// Several calls per reply.
    pub parallel_calls: bool,
    /// How tools are described when the template does not render them.
    pub describe: DescriptionStyle,
    /// The longest any non-shell tool may run.
    pub tool_timeout: Duration,
    /// Native calling when the template supports tools, or emulated (tools taught in
    /// the system prompt in the model's family syntax) for A/B runs.
    pub tool_format: ToolFormat,
}

impl RunConfig {
    /// Defaults for `profile`: 30 turns, 16k generated tokens, 15 minutes, replies of
    /// 1024 tokens (up to 4096), temperature 0.2, verification guard on for `full`.
    pub fn new(profile: Profile) -> Self {
        Self {
            profile,
            max_turns: 30,
            max_tokens: 16_384,
            wall_clock: Duration::from_secs(15 * 60),
            reply_tokens: 1024,
            reply_tokens_cap: 4096,
            temperature: 0.2,
            seed: 0,
            verification_guard: profile == Profile::Full,
            answer_guards: profile == Profile::Full,
            parallel_calls: true,
            describe: DescriptionStyle::Full,
            tool_timeout: Duration::from_secs(300),
            tool_format: ToolFormat::Native,
        }
    }

    /// Every setting, for traces and eval records.
    pub fn to_json(&self) -> Value {
        json!({
            "profile": self.profile.as_str(),
            "max_turns": self.max_turns,
            "max_tokens": self.max_tokens,
            "wall_clock_s": self.wall_clock.as_secs_f64(),
            "reply_tokens": self.reply_tokens,
            "reply_tokens_cap": self.reply_tokens_cap,
            "temperature": self.temperature,
            "seed": self.seed,
            "verification_guard": self.verification_guard,
            "answer_guards": self.answer_guards,
            "parallel_calls": self.parallel_calls,
            "describe": self.describe.as_str(),
            "tool_timeout_s": self.tool_timeout.as_secs_f64(),
            "tool_format": self.tool_format.as_str(),
        })
    }
}
