//! The counters and memory of one run, and the result they add up to.

use std::collections::HashMap;
use std::time::{Duration, Instant};

use rein_engine::Completion;
use rein_protocol::{Message, RecordedPrompt, RunEvent, RunResult, StopReason};

use crate::guards::HoldCounts;
use crate::memory::Memory;
use crate::recovery::{FailureClass, FailureCounts};

/// One run in progress.
#[derive(Debug)]
pub(crate) struct RunState {
    /// When it started.
    pub started: Instant,
    /// The conversation so far.
    pub history: Vec<Message>,
    /// Model turns (retries count).
    pub turns: u32,
    /// Requests sent (each uses the next seed).
    pub requests: u32,
    /// Tool calls executed.
    pub tool_calls: u32,
    /// Tool calls that failed.
    pub tool_errors: u32,
    /// Calls given an id so far.
    pub call_ids: u32,
    /// Prompt tokens over all turns.
    pub prompt_tokens: u64,
    /// Generated tokens over all turns.
    pub completion_tokens: u64,
    /// Prompt tokens taken from the KV cache.
    pub reused_tokens: u64,
    /// Time to the first token of the first turn.
    pub first_ttft: Option<Duration>,
    /// Model time over all turns.
    pub model_time: Duration,
    /// Consecutive failures per class.
    pub failures: FailureCounts,
    /// Recoveries per class over the run.
    pub recoveries: HashMap<FailureClass, u32>,
    /// What execution remembers.
    pub memory: Memory,
    /// Answers held so far, by why.
    pub holds: HoldCounts,
    /// The note the next request carries (a retry's).
    pub note: Option<String>,
    /// Every tool result as it came back, in order: what the run has seen, which
    /// compaction may later shorten in `history`.
    pub results_seen: Vec<String>,
    /// The next reply's token allowance.
    pub reply_tokens: u32,
    /// The attempt within the current turn.
    pub attempt: u32,
    /// The next request must be such a call (a retry after a call in the wrong format,
    /// or a step only talked about).
    pub forced: Option<rein_protocol::ToolChoice>,
    /// The retry may hold several calls (the reply it retries wrote several in
    /// another format).
    pub several_calls: bool,
    /// Successful calls made again with nothing changed since.
    pub repeats: u32,
    /// The next reply is decoded as an answer (no calls).
    pub answer_only: bool,
    /// The result lines this turn's answer-only reply is asked from, on a context of
    /// its own (see `focused_answer`); set at the start of each turn, so while the
    /// reply is read it says whether it was asked so.
    pub focused: Option<String>,
    /// The retry's note goes into the focused context (it holds a focused answer's
    /// value, pick or path).
    pub focused_note: bool,
    /// The one-line change asked on a context of its own (see `focused_edit`).
    pub asked_edit: crate::described_edit::AskedEdit,
    /// The next reply may not end blank (it retries an empty one).
    pub no_blank: bool,
    /// No tool fits the request (see `answer_now`): the answer comes from what the
    /// model knows, so only a copy of the note is held.
    pub from_knowledge: bool,
    /// The first line of the latest step's failure, when its last call failed.
    pub latest_failure: Option<String>,
    /// The size model measured on the latest requests (sizes the next one).
    pub(crate) prompt_size: Option<crate::prompt_size::PromptSize>,
    /// The latest step's last call worked and found nothing at all.
    pub latest_found_nothing: bool,
    /// The answer held for the verification guard, and the calls run by then: the
    /// report of a check run after it completes it.
    pub answer_before_check: Option<(String, u32)>,
    /// The workspace facts the opening request showed (see `facts`).
    pub facts: Vec<String>,
    /// The conversation as the trace has it so far (see [`RunState::history_event`]).
    recorded: Vec<Message>,
}

impl RunState {
    /// The task this run was given.
    pub(crate) fn task(&self) -> &str {
        crate::task_words::task_of(&self.history)
    }

    /// Records that `rule` fired this turn (`detail`: what it fired on), in the run's
    /// counts and as a trace event.
    pub(crate) fn fire(
        &mut self,
        events: &mut dyn rein_protocol::EventSink,
        rule: crate::rules::Rule,
        detail: &str,
    ) {
        crate::rules::fired(&mut self.memory.fired, events, self.turns, rule, detail);
    }

    /// The tool results of the history, oldest first.
    pub(crate) fn results(&self) -> Vec<&str> {
        self.history
            .iter()
            .filter(|m| m.role == rein_protocol::Role::Tool)
            .filter_map(|m| m.content.as_deref())
            .collect()
    }

    /// A run that opens with `opening` (the task, after the workspace facts) under
    /// `system`, with replies of `reply_tokens`.
    pub(crate) fn new(system: String, opening: &str, reply_tokens: u32) -> Self {
        RunState {
            started: Instant::now(),
            history: vec![Message::system(system), Message::user(opening)],
            turns: 0,
            requests: 0,
            tool_calls: 0,
            tool_errors: 0,
            call_ids: 0,
            prompt_tokens: 0,
            completion_tokens: 0,
            reused_tokens: 0,
            first_ttft: None,
            model_time: Duration::ZERO,
            failures: FailureCounts::default(),
            recoveries: HashMap::new(),
            memory: Memory::default(),
            holds: HoldCounts::default(),
            note: None,
            results_seen: Vec::new(),
            reply_tokens,
            attempt: 1,
            forced: None,
            several_calls: false,
            repeats: 0,
            answer_only: false,
            focused: None,
            focused_note: false,
            asked_edit: None,
            no_blank: false,
            from_knowledge: false,
            latest_failure: None,
            prompt_size: None,
            latest_found_nothing: false,
            answer_before_check: None,
            facts: Vec::new(),
            recorded: Vec::new(),
        }
    }

    /// The `history` event that brings the trace's record of the conversation up to
    /// date: the messages after the part both share; `None` when nothing changed.
    pub(crate) fn history_event(&mut self) -> Option<RunEvent> {
        let shared = self
            .recorded
            .iter()
            .zip(&self.history)
            .take_while(|(recorded, now)| recorded == now)
            .count();
        if shared == self.recorded.len() && shared == self.history.len() {
            return None;
        }
        self.recorded = self.history.clone();
        Some(RunEvent::History {
            from: shared,
            messages: self.history[shared..].to_vec(),
        })
    }

    /// The event of one model turn, with its prompt when `record_prompt` and the
    /// backend rendered it here.
    pub(crate) fn turn_event(&self, completion: &Completion, record_prompt: bool) -> RunEvent {
        let prompt = completion
            .prepared
            .as_ref()
            .filter(|_| record_prompt)
            .map(|prepared| RecordedPrompt {
                text: prepared.prompt.clone(),
                literal: prepared.literal.iter().map(|r| [r.start, r.end]).collect(),
                values_only: false,
            });
        RunEvent::Turn {
            turn: self.turns,
            attempt: self.attempt,
            prompt_tokens: completion.prompt_tokens,
            reused_tokens: completion.reused_tokens,
            completion_tokens: completion.completion_tokens,
            max_tokens: self.reply_tokens,
            ttft_ms: completion.ttft.as_millis() as u64,
            ms: completion.elapsed.as_millis() as u64,
            cut_off: completion.cut_off,
            raw: completion.text.clone(),
            prompt,
        }
    }

    /// Adds a completion's costs.
    pub(crate) fn account(&mut self, completion: &Completion) {
        self.prompt_tokens += completion.prompt_tokens as u64;
        self.reused_tokens += completion.reused_tokens.min(completion.prompt_tokens) as u64;
        self.completion_tokens += completion.completion_tokens as u64;
        self.model_time += completion.elapsed;
        self.first_ttft.get_or_insert(completion.ttft);
    }

    /// The run's result.
    pub(crate) fn result(
        &self,
        stop: StopReason,
        answer: Option<String>,
        detail: Option<String>,
        model: String,
        profile: &str,
    ) -> RunResult {
        RunResult {
            answer,
            stop_reason: stop,
            detail,
            turns: self.turns,
            tool_calls: self.tool_calls,
            tool_errors: self.tool_errors,
            recoveries: FailureClass::ALL
                .iter()
                .filter_map(|c| self.recoveries.get(c).map(|n| (c.as_str().to_string(), *n)))
                .collect(),
            rules: self
                .memory
                .fired
                .iter()
                .map(|(rule, count)| (rule.to_string(), *count))
                .collect(),
            prompt_tokens: self.prompt_tokens,
            completion_tokens: self.completion_tokens,
            evaluated_tokens: self.prompt_tokens - self.reused_tokens,
            reused_tokens: self.reused_tokens,
            first_ttft_ms: self.first_ttft.map(|d| d.as_millis() as u64).unwrap_or(0),
            wall_ms: self.started.elapsed().as_millis() as u64,
            model_ms: self.model_time.as_millis() as u64,
            trace: None,
            model,
            profile: profile.to_string(),
        }
    }
}
