//! The settings of one run: profile, budgets, sampling, tool description style.

use std::time::Duration;

use rein_format::{DescriptionStyle, ToolFormat};
use serde_json::{json, Value};

use crate::profile::Profile;
use crate::rules::{Rule, RuleSwitches};

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
    /// Tool results that are JSON are shown as `key: value` lines (`full` only).
    pub result_lines: bool,
    /// Several calls per reply.
    pub parallel_calls: bool,
    /// How tools are described when the template does not render them.
    pub describe: DescriptionStyle,
    /// The longest any non-shell tool may run.
    pub tool_timeout: Duration,
    /// Native calling when the template supports tools, or emulated (tools taught in
    /// the system prompt in the model's family syntax) for A/B runs.
    pub tool_format: ToolFormat,
    /// Nucleus sampling mass (1 = off).
    pub top_p: f32,
    /// Penalty for repeating recent tokens (1 = off).
    pub repeat_penalty: f32,
    /// Show an example of several calls in one reply (`full`).
    pub call_example: bool,
    /// Decode calls in the model's own wrappers under the tool grammar (`full`).
    pub wrapper_grammar: bool,
    /// How much hotter each retry of the same context samples (`full`; at most 1.2).
    pub retry_heat: f32,
    /// Hold the run's first calls once when none takes a value from the request, so
    /// a request no tool fits can be answered directly (`full`).
    pub grounding_check: bool,
    /// Run only the calls of a reply's first tool; calls of other tools in the same
    /// reply wait for its result (`full`).
    pub stepwise: bool,
    /// Name the files of a small workspace (or the top level of a larger one) among
    /// the workspace facts (every profile). Off: on `traps` it helped neither the
    /// default nor the small model (docs/BENCHMARKS.md).
    pub workspace_files: bool,
    /// No reply may end blank: the model's end token is masked until it has said
    /// something (every profile; local models only). Off, only the retry after an
    /// empty reply is decoded so (`full`).
    pub no_blank: bool,
    /// A question's reply decoded as the answer is asked on a short context of its
    /// own: the question and the result lines that bear on it (`full`; see
    /// `focused_answer`).
    pub focused_answer: bool,
    /// A failed change of the task's file is followed by the `edit_file` call of the
    /// one line the task's quoted terms pick, changed by the model on a context of its
    /// own (`full`; see `focused_edit`).
    pub focused_edit: bool,
    /// Tool results carry what the next step needs: a search hit's enclosing line,
    /// what a glob left out, the lines a whole-file write removed (`full`; see
    /// `ToolLimits::result_context`).
    pub result_context: bool,
    /// Every reply under `auto` is decoded from its first token as the family's calls
    /// or an answer that opens no call (see `AutoGrammar::CallOrAnswer`).
    pub call_or_answer: bool,
    /// An `auto` reply's opening is decoded first without a grammar; when it opens
    /// calls in any shape, the reply is decoded as the family's calls from its first
    /// token (local models; `full`; see `call_intent`).
    pub call_intent: bool,
    /// Before the first turn, a run whose listed tools include a finder of hidden tools
    /// (`tool_search`) searches them with the task's words, and the conversation opens
    /// with that call and its result (`full`; see `tool_preview`).
    pub tool_preview: bool,
    /// The built-in `query_data` tool is offered (counts, sums, extremes and first or
    /// last records of a data file; see decision 0047).
    pub query_data: bool,
    /// The built-in `replace_in_files` tool is offered (one text replaced in every
    /// file under a path; see decision 0047).
    pub replace_in_files: bool,
    /// Each turn's event in the trace carries the prompt the reply came from (local
    /// models; off by default: a prompt is thousands of tokens). What `rein
    /// quant-diff` replays on other quantizations of the model.
    pub record_prompts: bool,
    /// The loop's rules, each on unless switched off (`rule.NAME=off`, `rules=off`;
    /// see `rules`). They act under `full` only.
    pub rules: RuleSwitches,
}

/// A setting `RunConfig::set` does not know, or a value it cannot take.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct SettingError(String);

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
            result_lines: profile == Profile::Full,
            parallel_calls: true,
            describe: DescriptionStyle::Full,
            tool_timeout: Duration::from_secs(300),
            tool_format: ToolFormat::Native,
            top_p: 0.95,
            repeat_penalty: 1.0,
            call_example: profile == Profile::Full,
            wrapper_grammar: true,
            retry_heat: if profile == Profile::Full { 0.3 } else { 0.0 },
            grounding_check: profile == Profile::Full,
            stepwise: profile == Profile::Full,
            workspace_files: false,
            no_blank: false,
            focused_answer: profile == Profile::Full,
            focused_edit: profile == Profile::Full,
            result_context: profile == Profile::Full,
            call_or_answer: false,
            call_intent: profile == Profile::Full,
            tool_preview: false,
            query_data: true,
            replace_in_files: true,
            record_prompts: false,
            rules: RuleSwitches::default(),
        }
    }

    /// The settings [`Self::set`] takes, for A/B runs.
    pub const SETTINGS: [&'static str; 26] = [
        "describe",
        "temperature",
        "top_p",
        "repeat_penalty",
        "call_example",
        "wrapper_grammar",
        "answer_guards",
        "result_lines",
        "verification_guard",
        "parallel_calls",
        "reply_tokens",
        "retry_heat",
        "grounding_check",
        "stepwise",
        "workspace_files",
        "no_blank",
        "focused_answer",
        "focused_edit",
        "result_context",
        "call_or_answer",
        "call_intent",
        "tool_preview",
        "query_data",
        "replace_in_files",
        "record_prompts",
        "rules",
    ];

    /// Whether `key` names a setting [`Self::set`] takes (`rule.NAME` for any rule).
    pub fn takes(key: &str) -> bool {
        Self::SETTINGS.contains(&key)
            || key
                .strip_prefix("rule.")
                .is_some_and(|name| Rule::named(name).is_some())
    }

    /// Changes one setting by name (`describe=compact`, `temperature=0`,
    /// `call_example=off`, ...).
    pub fn set(&mut self, key: &str, value: &str) -> Result<(), SettingError> {
        let number = |range: std::ops::RangeInclusive<f32>| {
            value
                .parse::<f32>()
                .ok()
                .filter(|v| range.contains(v))
                .ok_or_else(|| {
                    SettingError(format!("{key} takes a number in {range:?}, not `{value}`"))
                })
        };
        let switch = || match value {
            "on" | "true" | "yes" => Ok(true),
            "off" | "false" | "no" => Ok(false),
            _ => Err(SettingError(format!(
                "{key} takes on or off, not `{value}`"
            ))),
        };
        match key {
            "describe" => {
                self.describe = match value {
                    "full" => DescriptionStyle::Full,
                    "compact" => DescriptionStyle::Compact,
                    _ => {
                        return Err(SettingError(format!(
                            "describe takes full or compact, not `{value}`"
                        )))
                    }
                }
            }
            "temperature" => self.temperature = number(0.0..=5.0)?,
            "top_p" => self.top_p = number(0.01..=1.0)?,
            "repeat_penalty" => self.repeat_penalty = number(0.5..=2.0)?,
            "retry_heat" => self.retry_heat = number(0.0..=1.0)?,
            "call_example" => self.call_example = switch()?,
            "wrapper_grammar" => self.wrapper_grammar = switch()?,
            "answer_guards" => self.answer_guards = switch()?,
            "result_lines" => self.result_lines = switch()?,
            "verification_guard" => self.verification_guard = switch()?,
            "parallel_calls" => self.parallel_calls = switch()?,
            "grounding_check" => self.grounding_check = switch()?,
            "stepwise" => self.stepwise = switch()?,
            "workspace_files" => self.workspace_files = switch()?,
            "no_blank" => self.no_blank = switch()?,
            "focused_answer" => self.focused_answer = switch()?,
            "focused_edit" => self.focused_edit = switch()?,
            "result_context" => self.result_context = switch()?,
            "call_or_answer" => self.call_or_answer = switch()?,
            "call_intent" => self.call_intent = switch()?,
            "tool_preview" => self.tool_preview = switch()?,
            "query_data" => self.query_data = switch()?,
            "replace_in_files" => self.replace_in_files = switch()?,
            "record_prompts" => self.record_prompts = switch()?,
            "rules" => self.rules.set_all(switch()?),
            _ if key.starts_with("rule.") => {
                let name = &key["rule.".len()..];
                let rule = Rule::named(name).ok_or_else(|| {
                    let names: Vec<&str> = Rule::ALL.iter().map(|rule| rule.name()).collect();
                    SettingError(format!(
                        "unknown rule `{name}` (rules: {})",
                        names.join(", ")
                    ))
                })?;
                self.rules.set(rule, switch()?);
            }
            "reply_tokens" => {
                self.reply_tokens = value
                    .parse::<u32>()
                    .ok()
                    .filter(|v| (16..=4096).contains(v))
                    .ok_or_else(|| {
                        SettingError(format!("reply_tokens takes 16 to 4096, not `{value}`"))
                    })?
            }
            other => {
                return Err(SettingError(format!(
                    "unknown setting `{other}` (settings: {}, rule.NAME)",
                    Self::SETTINGS.join(", ")
                )))
            }
        }
        Ok(())
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
            "result_lines": self.result_lines,
            "parallel_calls": self.parallel_calls,
            "describe": self.describe.as_str(),
            "tool_timeout_s": self.tool_timeout.as_secs_f64(),
            "tool_format": self.tool_format.as_str(),
            "top_p": self.top_p,
            "repeat_penalty": self.repeat_penalty,
            "call_example": self.call_example,
            "wrapper_grammar": self.wrapper_grammar,
            "retry_heat": self.retry_heat,
            "grounding_check": self.grounding_check,
            "stepwise": self.stepwise,
            "workspace_files": self.workspace_files,
            "no_blank": self.no_blank,
            "focused_answer": self.focused_answer,
            "focused_edit": self.focused_edit,
            "result_context": self.result_context,
            "call_or_answer": self.call_or_answer,
            "call_intent": self.call_intent,
            "tool_preview": self.tool_preview,
            "query_data": self.query_data,
            "replace_in_files": self.replace_in_files,
            "record_prompts": self.record_prompts,
            "rules_off": self.rules.off_names(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn settings_are_set_by_name_and_bad_ones_refused() {
        let mut config = RunConfig::new(Profile::Full);
        config.set("describe", "compact").unwrap();
        config.set("temperature", "0").unwrap();
        config.set("call_example", "off").unwrap();
        config.set("repeat_penalty", "1.1").unwrap();
        assert_eq!(config.describe, DescriptionStyle::Compact);
        assert_eq!(config.temperature, 0.0);
        assert!(!config.call_example);
        assert_eq!(config.repeat_penalty, 1.1);
        assert!(config.set("temperature", "hot").is_err());
        assert!(config.set("call_example", "maybe").is_err());
        let unknown = config.set("colour", "blue").unwrap_err().to_string();
        assert!(unknown.contains("settings: describe"), "{unknown}");
        assert_eq!(config.to_json()["call_example"], false);
    }

    #[test]
    fn rules_are_switched_by_name_or_all_at_once() {
        let mut config = RunConfig::new(Profile::Full);
        config.set("rule.wrong_pick", "off").unwrap();
        assert!(!config.rules.on(Rule::WrongPick));
        assert_eq!(config.to_json()["rules_off"], json!(["wrong_pick"]));
        let unknown = config.set("rule.cheapest", "off").unwrap_err().to_string();
        assert!(unknown.contains("unknown rule `cheapest`"), "{unknown}");
        assert!(unknown.contains("no_path"), "{unknown}");
        assert!(config.set("rule.no_path", "maybe").is_err());
        config.set("rules", "off").unwrap();
        assert!(Rule::ALL.iter().all(|rule| !config.rules.on(*rule)));
        config.set("rules", "on").unwrap();
        assert!(config.rules.on(Rule::WrongPick));
    }
}
