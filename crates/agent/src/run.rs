//! The work loop: propose → validate → schedule → execute → observe, until the model
//! answers without a call (or calls `finish`) or a budget ends the run.

use std::collections::{BTreeSet, HashMap};
use std::sync::Arc;
use std::time::{Duration, Instant};

use rein_format::{Family, ToolChoice, ToolFormat, ToolSet, ToolSetError};
use rein_protocol::{FunctionCall, FunctionSpec, Grammar, Message, ToolCall, ToolSpec};
use rein_tools::{Access, DescriptionStyle, Registry, Tool, ToolOutcome, Workspace};
use serde_json::{json, Value};

use crate::backend::{Backend, Completion, TurnRequest};
use crate::config::RunConfig;
use crate::context::{compact, ContextPolicy};
use crate::profile::Profile;
use crate::prompt::{system_prompt, verification_note, wrap_untrusted};
use crate::recovery::{self, FailureClass, FailureCounts};
use crate::reply::{read_bare_calls, read_loose, read_react, read_strict, ProposedCall, Reading};
use crate::result::{RunResult, StopReason};
use crate::schedule;
use crate::trace::{TraceEvent, TraceWriter};

/// The tool that ends a run with an answer (offered by the `structured` profile).
pub const FINISH_TOOL: &str = "finish";

/// Why an agent could not be set up.
#[derive(Debug, thiserror::Error)]
pub enum AgentError {
    /// The tools' schemas were refused.
    #[error("the tools cannot be offered: {0}")]
    Tools(#[from] ToolSetError),
}

/// An agent: a model, tools in a workspace, and the settings of its runs.
pub struct Agent<B: Backend> {
    backend: B,
    registry: Registry,
    tools: ToolSet,
    workspace: Arc<Workspace>,
    config: RunConfig,
    family: Family,
    native: bool,
    grammar: Option<Grammar>,
    /// For a retry after a call written in the wrong format: calls only.
    forced_grammar: Option<Grammar>,
    tool_text: Option<String>,
}

/// A call that passed validation, ready to run.
#[derive(Debug, Clone)]
struct ReadyCall {
    id: String,
    name: String,
    arguments: Value,
}

/// Counters and memory of one run.
#[derive(Debug, Default)]
struct RunState {
    turns: u32,
    requests: u32,
    tool_calls: u32,
    tool_errors: u32,
    prompt_tokens: u64,
    completion_tokens: u64,
    reused_tokens: u64,
    first_ttft: Option<Duration>,
    model_time: Duration,
    failures: FailureCounts,
    recoveries: HashMap<FailureClass, u32>,
    failed_calls: HashMap<String, String>,
    unverified_edits: BTreeSet<String>,
    guards_used: u32,
    call_ids: u32,
}

/// How a step of the loop ended.
enum Flow {
    /// The step is done; the next turn starts clean.
    Next,
    /// The reply is dropped; the same context is asked again, with a note if any,
    /// and (for a truncated call) a larger allowance.
    Retry {
        note: Option<String>,
        grow: bool,
        force_call: bool,
    },
    /// The run ends.
    Stop(StopReason, Option<String>, Option<String>),
}

/// How a dropped reply is asked again.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum RetryMode {
    /// The same request.
    Same,
    /// Double the reply's token allowance (a call was cut off).
    LargerAllowance,
    /// Decode under the calls-only grammar (a call was written in another format).
    CallsOnly,
}

/// A reply made only of bare JSON calls.
enum BareReply {
    /// Every call names a tool that exists (or one repaired without doubt).
    Calls(Vec<ProposedCall>),
    /// The first name no tool answers to.
    Invented(String),
}

/// A call the loop refuses to run: its class, the detail for the trace, the note.
struct Rejection {
    class: FailureClass,
    detail: String,
    note: String,
}

/// The call example shown in format notes, in `family`'s syntax.
fn call_example(family: Family) -> String {
    match family {
        Family::Hermes | Family::Generic => {
            "<tool_call>\n{\"name\": \"list_dir\", \"arguments\": {\"path\": \".\"}}\n</tool_call>"
                .to_string()
        }
        other => other.call_text("list_dir", &json!({"path": "."})),
    }
}

impl<B: Backend> Agent<B> {
    /// An agent over the tools of `registry` that can run in `workspace`.
    pub fn new(
        backend: B,
        workspace: Workspace,
        registry: &Registry,
        config: RunConfig,
    ) -> Result<Self, AgentError> {
        let registry = registry.available(&workspace);
        let mut specs = registry.specs();
        if config.profile == Profile::Structured {
            specs.push(finish_spec());
        }
        let tools = ToolSet::prepare(&specs)?;
        let family = backend.family();
        let native = backend.native_tools()
            && config.tool_format == ToolFormat::Native
            && matches!(config.profile, Profile::Full | Profile::Structured);
        let grammar = match config.profile {
            Profile::Full => family.call_grammar(&tools, &ToolChoice::Auto, config.parallel_calls),
            Profile::Structured => {
                family.call_grammar(&tools, &ToolChoice::Required, config.parallel_calls)
            }
            Profile::Naive | Profile::React => None,
        };
        let forced_grammar =
            family.call_grammar(&tools, &ToolChoice::Required, config.parallel_calls);
        let tool_text = match config.profile {
            _ if native => None,
            Profile::React => Some(format!(
                "Tools (Action is the name, Action Input the JSON arguments):\n{}",
                registry.describe(config.describe)
            )),
            Profile::Full | Profile::Structured | Profile::Naive => Some(match config.describe {
                DescriptionStyle::Full => family.emulated_instructions(&tools.definitions()),
                DescriptionStyle::Compact => {
                    let mut text = family.emulated_instructions(&[]);
                    text.push_str(&registry.signatures());
                    if config.profile == Profile::Structured {
                        text.push_str(
                            "\nfinish(answer: string) - End the task with the final answer.",
                        );
                    }
                    text
                }
            }),
        };
        Ok(Self {
            backend,
            registry,
            tools,
            workspace: Arc::new(workspace),
            config,
            family,
            native,
            grammar,
            forced_grammar,
            tool_text,
        })
    }

    /// The model backend (tests inspect a scripted one).
    pub fn backend(&self) -> &B {
        &self.backend
    }

    /// The names of the tools offered.
    pub fn tool_names(&self) -> Vec<String> {
        self.tools.tools().iter().map(|t| t.name.clone()).collect()
    }

    /// Runs `task` to the end, writing every event to `trace` when given.
    pub async fn run(&mut self, task: &str, mut trace: Option<TraceWriter>) -> RunResult {
        let started = Instant::now();
        let facts = crate::facts::detect(self.workspace.root());
        let emit = |trace: &mut Option<TraceWriter>, event: TraceEvent| {
            if let Some(t) = trace.as_mut() {
                t.write(&event);
            }
        };
        emit(
            &mut trace,
            TraceEvent::RunStart {
                task: task.to_string(),
                model: self.backend.describe(),
                profile: self.config.profile.as_str().into(),
                version: env!("CARGO_PKG_VERSION").into(),
                settings: self.config.to_json(),
                tools: self.tool_names(),
                facts: facts.clone(),
            },
        );
        let system = system_prompt(self.config.profile, &facts, self.tool_text.as_deref());
        let mut history = vec![Message::system(system), Message::user(task)];
        let mut state = RunState::default();
        let mut note: Option<String> = None;
        let mut reply_tokens = self.config.reply_tokens;
        let mut attempt = 1;
        let mut force_call = false;
        let (stop, answer, detail) = loop {
            if let Some(stop) = self.budget_exhausted(&state, started) {
                break (stop, None, None);
            }
            state.turns += 1;
            state.requests += 1;
            let request = self.request(&history, note.as_deref(), reply_tokens, force_call, &state);
            let remaining = self.config.wall_clock.saturating_sub(started.elapsed());
            let completion =
                match tokio::time::timeout(remaining, self.backend.complete(request)).await {
                    Err(_) => break (StopReason::WallClock, None, None),
                    Ok(Err(e)) => break (StopReason::BackendError, None, Some(e.to_string())),
                    Ok(Ok(completion)) => completion,
                };
            account(&mut state, &completion);
            self.keep_in_context(&mut history, &completion, &mut trace, state.turns);
            emit(
                &mut trace,
                TraceEvent::Turn {
                    turn: state.turns,
                    attempt,
                    prompt_tokens: completion.prompt_tokens,
                    reused_tokens: completion.reused_tokens,
                    completion_tokens: completion.completion_tokens,
                    max_tokens: reply_tokens,
                    ttft_ms: completion.ttft.as_millis() as u64,
                    ms: completion.elapsed.as_millis() as u64,
                    cut_off: completion.cut_off,
                    raw: completion.text.clone(),
                },
            );
            let mut reading = match self.config.profile {
                Profile::Full => {
                    read_strict(self.family, &completion.text, completion.cut_off, false)
                }
                Profile::Structured => {
                    read_strict(self.family, &completion.text, completion.cut_off, true)
                }
                Profile::Naive => read_loose(self.family, &completion.text),
                Profile::React => read_react(&completion.text),
            };
            let profile = self.config.profile;
            // Under `full`, a reply that is wholly bare JSON calls is read as calls when
            // every tool exists (the markers were all that was missing), and as a call
            // to an invented tool otherwise — not as an answer either way.
            let bare = match &reading {
                Reading::Answer(text) if profile == Profile::Full => self.bare_reply(text),
                _ => None,
            };
            let mut invented = None;
            match bare {
                Some(BareReply::Calls(calls)) => {
                    emit(
                        &mut trace,
                        TraceEvent::FormatRepaired {
                            turn: state.turns,
                            detail: format!(
                                "{} call(s) written as bare JSON without the call markers",
                                calls.len()
                            ),
                        },
                    );
                    reading = Reading::Calls {
                        content: None,
                        calls,
                    };
                }
                Some(BareReply::Invented(name)) => invented = Some(name),
                None => {}
            }
            let flow = match reading {
                Reading::Truncated => self.retry(
                    &mut state,
                    &mut trace,
                    FailureClass::Truncated,
                    "the reply hit the token limit inside a call",
                    None,
                    if profile == Profile::Full {
                        RetryMode::LargerAllowance
                    } else {
                        RetryMode::Same
                    },
                ),
                Reading::Unreadable(reason) => {
                    if profile == Profile::React {
                        // ReAct's own convention: the error is the next observation.
                        history.push(Message::assistant(completion.text.trim()));
                        history.push(Message::user(format!("Observation: {reason}")));
                    }
                    let message = (profile == Profile::Full)
                        .then(|| recovery::format_note(&reason, &call_example(self.family)));
                    self.retry(
                        &mut state,
                        &mut trace,
                        FailureClass::Format,
                        &reason,
                        message,
                        RetryMode::Same,
                    )
                }
                Reading::Answer(text) if profile == Profile::Full && text.trim().is_empty() => {
                    let reason = "the reply was empty";
                    let message = "Your last reply was empty. If the task is done, say what you did in one or two sentences; otherwise call the next tool.".to_string();
                    self.retry(
                        &mut state,
                        &mut trace,
                        FailureClass::Format,
                        reason,
                        Some(message),
                        RetryMode::Same,
                    )
                }
                Reading::Answer(_) if invented.is_some() => {
                    // The reply is nothing but a call, to a tool that does not exist:
                    // not an answer. Say which tools there are and decode the retry
                    // under the calls-only grammar.
                    let name = invented.take().unwrap_or_default();
                    let names: Vec<&str> =
                        self.tools.tools().iter().map(|t| t.name.as_str()).collect();
                    self.retry(
                        &mut state,
                        &mut trace,
                        FailureClass::UnknownTool,
                        &format!("the reply is a call to `{name}`, which does not exist"),
                        Some(recovery::unknown_tool_note(&name, &names)),
                        RetryMode::CallsOnly,
                    )
                }
                Reading::Answer(text) => {
                    let misformatted = (profile == Profile::Full)
                        .then(|| self.misformatted_call(&text))
                        .flatten();
                    if let Some(example) = misformatted {
                        // A call in another format (`<tools>`, bare or fenced JSON): the
                        // intent is clear, so the retry shows the call in the right
                        // format and is decoded under the calls-only grammar.
                        let reason =
                            "the reply holds a tool call that is not written in the call format";
                        let message = recovery::format_note(reason, &example);
                        self.retry(
                            &mut state,
                            &mut trace,
                            FailureClass::Format,
                            reason,
                            Some(message),
                            RetryMode::CallsOnly,
                        )
                    } else if self.should_hold_answer(&state) {
                        state.guards_used += 1;
                        let files: Vec<String> = state.unverified_edits.iter().cloned().collect();
                        emit(
                            &mut trace,
                            TraceEvent::VerificationRequested {
                                turn: state.turns,
                                files: files.clone(),
                            },
                        );
                        history.push(Message::assistant(text));
                        history.push(Message::user(verification_note(&files)));
                        Flow::Next
                    } else {
                        Flow::Stop(StopReason::Answered, Some(text), None)
                    }
                }
                Reading::Calls { content, calls } => {
                    self.step(
                        &mut state,
                        &mut trace,
                        &mut history,
                        &completion,
                        content,
                        calls,
                    )
                    .await
                }
            };
            match flow {
                Flow::Next => {
                    note = None;
                    force_call = false;
                    reply_tokens = self.config.reply_tokens;
                    attempt = 1;
                }
                Flow::Retry {
                    note: next,
                    grow,
                    force_call: force,
                } => {
                    force_call = force;
                    // The broken reply is not kept: the retry sees the clean history.
                    note = next;
                    if grow {
                        reply_tokens = reply_tokens
                            .saturating_mul(2)
                            .min(self.config.reply_tokens_cap);
                    }
                    attempt += 1;
                }
                Flow::Stop(stop, answer, detail) => break (stop, answer, detail),
            }
        };
        let result = RunResult {
            answer,
            stop_reason: stop,
            detail,
            turns: state.turns,
            tool_calls: state.tool_calls,
            tool_errors: state.tool_errors,
            recoveries: FailureClass::ALL
                .iter()
                .filter_map(|c| {
                    state
                        .recoveries
                        .get(c)
                        .map(|n| (c.as_str().to_string(), *n))
                })
                .collect(),
            prompt_tokens: state.prompt_tokens,
            completion_tokens: state.completion_tokens,
            evaluated_tokens: state.prompt_tokens - state.reused_tokens,
            reused_tokens: state.reused_tokens,
            first_ttft_ms: state.first_ttft.map(|d| d.as_millis() as u64).unwrap_or(0),
            wall_ms: started.elapsed().as_millis() as u64,
            model_ms: state.model_time.as_millis() as u64,
            trace: trace.as_ref().map(|t| t.path().display().to_string()),
            model: self.backend.describe(),
            profile: self.config.profile.as_str().into(),
        };
        if let Some(t) = trace.as_mut() {
            t.write(&TraceEvent::RunEnd {
                result: serde_json::to_value(&result).unwrap_or(Value::Null),
            });
        }
        result
    }

    /// Summarizes old tool results once the conversation passes 75% of the context
    /// left after the reply allowance. Message sizes are estimated from their
    /// characters, calibrated by the prompt's real token count from the backend.
    fn keep_in_context(
        &self,
        history: &mut [Message],
        completion: &Completion,
        trace: &mut Option<TraceWriter>,
        turn: u32,
    ) {
        let Some(n_ctx) = self.backend.context_tokens() else {
            return;
        };
        // Room for a reply: the largest allowance, but never more than a quarter of
        // the context (a small context would otherwise leave no budget at all).
        let reserve = (self.config.reply_tokens_cap as usize).min(n_ctx / 4);
        let budget = n_ctx.saturating_sub(reserve);
        let chars: usize = history.iter().map(message_chars).sum::<usize>().max(1);
        let tokens_per_char = completion.prompt_tokens as f64 / chars as f64;
        let count = |m: &Message| (message_chars(m) as f64 * tokens_per_char).ceil() as usize;
        if let Some(done) = compact(history, &ContextPolicy::new(budget), count) {
            if let Some(t) = trace.as_mut() {
                t.write(&TraceEvent::Compacted {
                    turn,
                    tokens_before: done.tokens_before,
                    tokens_after: done.tokens_after,
                    summarized: done.summarized,
                });
            }
        }
    }

    fn budget_exhausted(&self, state: &RunState, started: Instant) -> Option<StopReason> {
        if state.turns >= self.config.max_turns {
            Some(StopReason::MaxTurns)
        } else if state.completion_tokens >= self.config.max_tokens {
            Some(StopReason::MaxTokens)
        } else if started.elapsed() >= self.config.wall_clock {
            Some(StopReason::WallClock)
        } else {
            None
        }
    }

    fn request(
        &self,
        history: &[Message],
        note: Option<&str>,
        max_tokens: u32,
        force_call: bool,
        state: &RunState,
    ) -> TurnRequest {
        let emulate = !self.native && self.config.profile != Profile::React;
        let mut messages = if emulate {
            self.family.emulate_history(history)
        } else {
            history.to_vec()
        };
        if let Some(note) = note {
            messages.push(Message::user(note));
        }
        let remaining = self
            .config
            .max_tokens
            .saturating_sub(state.completion_tokens);
        TurnRequest {
            messages,
            tools: self.native.then(|| self.tools.definitions()),
            grammar: if force_call {
                self.forced_grammar.clone()
            } else {
                self.grammar.clone()
            },
            tool_choice: if force_call || self.config.profile == Profile::Structured {
                ToolChoice::Required
            } else {
                ToolChoice::Auto
            },
            parallel_calls: self.config.parallel_calls,
            max_tokens: max_tokens
                .min(u32::try_from(remaining).unwrap_or(u32::MAX))
                .max(1),
            stop: match self.config.profile {
                Profile::React => vec!["\nObservation:".into(), "Observation:".into()],
                _ => Vec::new(),
            },
            temperature: self.config.temperature,
            seed: self.config.seed.wrapping_add(state.requests),
        }
    }

    /// Records a failure of `class`; returns whether the class is over its cap.
    fn fail(
        &self,
        state: &mut RunState,
        trace: &mut Option<TraceWriter>,
        class: FailureClass,
        detail: &str,
        note: Option<String>,
    ) -> bool {
        *state.recoveries.entry(class).or_default() += 1;
        if let Some(t) = trace.as_mut() {
            t.write(&TraceEvent::Recovery {
                turn: state.turns,
                class: class.as_str().into(),
                detail: detail.into(),
                note,
            });
        }
        state.failures.record(class)
    }

    /// A dropped reply: retried with `note` unless `class` is over its cap.
    fn retry(
        &self,
        state: &mut RunState,
        trace: &mut Option<TraceWriter>,
        class: FailureClass,
        detail: &str,
        note: Option<String>,
        mode: RetryMode,
    ) -> Flow {
        if self.fail(state, trace, class, detail, note.clone()) {
            Flow::Stop(
                StopReason::RecoveryExhausted,
                None,
                Some(class.as_str().into()),
            )
        } else {
            Flow::Retry {
                note,
                grow: mode == RetryMode::LargerAllowance,
                force_call: mode == RetryMode::CallsOnly,
            }
        }
    }

    /// When an answer is really a call written in some other format (a JSON object
    /// naming one of the tools, an obvious variant of one, or a tool its arguments
    /// alone identify): that call, written the right way.
    fn misformatted_call(&self, text: &str) -> Option<String> {
        let Reading::Calls { calls, .. } = read_loose(self.family, text) else {
            return None;
        };
        let call = calls.into_iter().find_map(|c| {
            let name = if self.tools.get(&c.name).is_some() {
                Some(c.name.clone())
            } else {
                self.repaired_name(&c.name, &c.arguments)
            }?;
            Some((name, c.arguments))
        })?;
        Some(self.family.call_text(&call.0, &call.1))
    }

    /// What a reply that is wholly bare JSON calls (`{"name": .., "arguments": {..}}`)
    /// amounts to: calls, when every tool exists (or [`Self::repaired_name`] finds it
    /// without doubt), else the first invented name. `None` for any other reply.
    fn bare_reply(&self, text: &str) -> Option<BareReply> {
        let calls = read_bare_calls(text)?;
        let invented = calls.iter().find(|call| {
            self.tools.get(&call.name).is_none()
                && self.repaired_name(&call.name, &call.arguments).is_none()
        });
        Some(match invented {
            Some(call) => BareReply::Invented(call.name.clone()),
            None => BareReply::Calls(calls),
        })
    }

    /// The tool an unknown name means: an obvious variant of a tool's name, else the
    /// only tool whose schema the arguments satisfy (`{"command": ..}` is the shell
    /// whatever the model called it). `None` when that is ambiguous.
    fn repaired_name(&self, name: &str, arguments: &serde_json::Value) -> Option<String> {
        let names: Vec<&str> = self.tools.tools().iter().map(|t| t.name.as_str()).collect();
        if let Some(repaired) = recovery::repair_tool_name(name, &names) {
            return Some(repaired);
        }
        if arguments.as_object().is_none_or(|args| args.is_empty()) {
            return None;
        }
        let mut fitting = self
            .tools
            .tools()
            .iter()
            .filter(|tool| tool.validator.check_value(arguments.clone()).is_ok());
        match (fitting.next(), fitting.next()) {
            (Some(only), None) => Some(only.name.clone()),
            _ => None,
        }
    }

    fn should_hold_answer(&self, state: &RunState) -> bool {
        self.config.verification_guard
            && self.config.profile == Profile::Full
            && !state.unverified_edits.is_empty()
            && state.guards_used < 2
    }

    /// Validates the proposed calls, runs them, and appends the exchange to the history.
    async fn step(
        &mut self,
        state: &mut RunState,
        trace: &mut Option<TraceWriter>,
        history: &mut Vec<Message>,
        completion: &Completion,
        content: Option<String>,
        calls: Vec<ProposedCall>,
    ) -> Flow {
        let profile = self.config.profile;
        let mut ready = Vec::with_capacity(calls.len());
        for call in calls {
            match self.validate(state, trace, call) {
                Ok(call) => ready.push(call),
                Err(rejection) => {
                    // Structured retries blindly; full tells the model what to fix.
                    let note = (profile == Profile::Full).then_some(rejection.note);
                    return self.retry(
                        state,
                        trace,
                        rejection.class,
                        &rejection.detail,
                        note,
                        RetryMode::Same,
                    );
                }
            }
        }
        state.failures.clean_reply();
        if let Some(t) = trace.as_mut() {
            t.write(&TraceEvent::Calls {
                turn: state.turns,
                calls: ready
                    .iter()
                    .map(|c| json!({"id": c.id, "name": c.name, "arguments": c.arguments}))
                    .collect(),
            });
        }
        if let Some(finish) = ready.iter().find(|c| c.name == FINISH_TOOL) {
            let answer = finish.arguments["answer"]
                .as_str()
                .unwrap_or_default()
                .to_string();
            return Flow::Stop(StopReason::Finished, Some(answer), None);
        }
        if profile == Profile::React {
            history.push(Message::assistant(completion.text.trim()));
        } else {
            history.push(Message {
                tool_calls: ready
                    .iter()
                    .map(|c| ToolCall {
                        id: Some(c.id.clone()),
                        kind: "function".into(),
                        function: FunctionCall {
                            name: c.name.clone(),
                            arguments: c.arguments.clone(),
                        },
                    })
                    .collect(),
                ..Message::assistant(content.unwrap_or_default())
            });
            if let Some(last) = history.last_mut() {
                if last.content.as_deref() == Some("") {
                    last.content = None;
                }
            }
        }
        let outcomes = self.execute(state, trace, &ready).await;
        let mut exhausted = None;
        for (call, outcome) in ready.iter().zip(&outcomes) {
            state.tool_calls += 1;
            if outcome.ok {
                state.failures.tool_succeeded();
                continue;
            }
            state.tool_errors += 1;
            let class = if outcome.timed_out {
                FailureClass::ToolTimeout
            } else if outcome.repeated {
                FailureClass::Repetition
            } else {
                FailureClass::ToolFailure
            };
            let first_line = outcome.text.lines().next().unwrap_or_default().to_string();
            if self.fail(
                state,
                trace,
                class,
                &format!("{}: {first_line}", call.name),
                None,
            ) {
                exhausted = Some(class);
            }
            state
                .failed_calls
                .entry(call_key(call))
                .or_insert_with(|| outcome.text.clone());
        }
        if profile == Profile::React {
            let observation = ready
                .iter()
                .zip(&outcomes)
                .map(|(_, o)| format!("Observation: {}", o.text))
                .collect::<Vec<_>>()
                .join("\n");
            history.push(Message::user(observation));
        } else {
            for (call, outcome) in ready.iter().zip(outcomes) {
                history.push(Message::tool_result(&call.id, &call.name, outcome.text));
            }
        }
        match exhausted {
            Some(class) => Flow::Stop(
                StopReason::RecoveryExhausted,
                None,
                Some(class.as_str().into()),
            ),
            None => Flow::Next,
        }
    }

    /// Name repair, coercion and validation of one call. The loose profiles never
    /// reject: what they read is run as written, and the tool reports what is wrong.
    fn validate(
        &self,
        state: &mut RunState,
        trace: &mut Option<TraceWriter>,
        call: ProposedCall,
    ) -> Result<ReadyCall, Rejection> {
        state.call_ids += 1;
        let id = format!("call_{}", state.call_ids);
        let strict = matches!(self.config.profile, Profile::Full | Profile::Structured);
        if !strict {
            return Ok(ReadyCall {
                id,
                name: call.name,
                arguments: call.arguments,
            });
        }
        let names: Vec<&str> = self.tools.tools().iter().map(|t| t.name.as_str()).collect();
        let name = if self.tools.get(&call.name).is_some() {
            call.name.clone()
        } else {
            let repaired = (self.config.profile == Profile::Full)
                .then(|| self.repaired_name(&call.name, &call.arguments))
                .flatten();
            match repaired {
                Some(name) => {
                    if let Some(t) = trace.as_mut() {
                        t.write(&TraceEvent::NameRepaired {
                            turn: state.turns,
                            from: call.name.clone(),
                            to: name.clone(),
                        });
                    }
                    name
                }
                None => {
                    return Err(Rejection {
                        class: FailureClass::UnknownTool,
                        detail: format!("unknown tool `{}`", call.name),
                        note: recovery::unknown_tool_note(&call.name, &names),
                    })
                }
            }
        };
        let Some(tool) = self.tools.get(&name) else {
            return Err(Rejection {
                class: FailureClass::UnknownTool,
                detail: format!("unknown tool `{name}`"),
                note: recovery::unknown_tool_note(&name, &names),
            });
        };
        match tool.validator.check_value(call.arguments.clone()) {
            Ok(arguments) => {
                if arguments != call.arguments {
                    if let Some(t) = trace.as_mut() {
                        t.write(&TraceEvent::Coerced {
                            turn: state.turns,
                            tool: name.clone(),
                            from: call.arguments,
                            to: arguments.clone(),
                        });
                    }
                }
                Ok(ReadyCall {
                    id,
                    name,
                    arguments,
                })
            }
            Err(error) => Err(Rejection {
                class: FailureClass::Schema,
                detail: format!("{name}: {error}"),
                note: recovery::schema_note(&name, &error.to_string()),
            }),
        }
    }

    /// Runs the calls in scheduled groups; a group's calls run at once.
    async fn execute(
        &self,
        state: &mut RunState,
        trace: &mut Option<TraceWriter>,
        calls: &[ReadyCall],
    ) -> Vec<CallOutcome> {
        let accesses: Vec<Access> = calls
            .iter()
            .map(|c| match self.registry.get(&c.name) {
                Some(tool) => tool.access(&c.arguments, &self.workspace),
                None => Access::Read(Vec::new()),
            })
            .collect();
        let mut outcomes: Vec<Option<CallOutcome>> = vec![None; calls.len()];
        for (group_index, group) in schedule::plan(&accesses).into_iter().enumerate() {
            let mut running = Vec::with_capacity(group.len());
            for index in group {
                let call = &calls[index];
                let started = Instant::now();
                if let Some(previous) = state.failed_calls.get(&call_key(call)) {
                    let outcome = CallOutcome {
                        ok: false,
                        timed_out: false,
                        repeated: true,
                        text: recovery::repetition_note(previous),
                        changed_files: Vec::new(),
                    };
                    running.push((index, started, None, Some(outcome)));
                    continue;
                }
                let Some(tool) = self.registry.get(&call.name).cloned() else {
                    let names = self.registry.names().join(", ");
                    let outcome = CallOutcome::failed(format!(
                        "unknown tool `{}`; the tools are: {names}",
                        call.name
                    ));
                    running.push((index, started, None, Some(outcome)));
                    continue;
                };
                let workspace = Arc::clone(&self.workspace);
                let arguments = call.arguments.clone();
                let handle = tokio::task::spawn_blocking(move || {
                    let outcome = tool.call(&arguments, &workspace);
                    (tool, outcome)
                });
                running.push((index, started, Some(handle), None));
            }
            for (index, started, handle, ready) in running {
                let call = &calls[index];
                let outcome = match (handle, ready) {
                    (_, Some(outcome)) => outcome,
                    (Some(handle), None) => {
                        match tokio::time::timeout(self.config.tool_timeout, handle).await {
                            Ok(Ok((tool, outcome))) => {
                                self.observe_effects(state, &*tool, &call.arguments, &outcome);
                                CallOutcome::from_tool(&*tool, outcome)
                            }
                            Ok(Err(join_error)) => {
                                CallOutcome::failed(format!("the tool crashed: {join_error}"))
                            }
                            Err(_) => CallOutcome {
                                timed_out: true,
                                ..CallOutcome::failed(format!(
                                    "`{}` did not finish within {} s; try a smaller request",
                                    call.name,
                                    self.config.tool_timeout.as_secs()
                                ))
                            },
                        }
                    }
                    (None, None) => CallOutcome::failed("internal error: no outcome".into()),
                };
                if let Some(t) = trace.as_mut() {
                    t.write(&TraceEvent::ToolResult {
                        turn: state.turns,
                        id: call.id.clone(),
                        name: call.name.clone(),
                        arguments: call.arguments.clone(),
                        group: group_index,
                        ok: outcome.ok,
                        timed_out: outcome.timed_out,
                        output: outcome.text.clone(),
                        ms: started.elapsed().as_millis() as u64,
                    });
                }
                outcomes[index] = Some(outcome);
            }
        }
        outcomes
            .into_iter()
            .map(|o| o.unwrap_or_else(|| CallOutcome::failed("internal error: not run".into())))
            .collect()
    }

    /// Tracks source edits not yet verified, for the verification guard.
    fn observe_effects(
        &self,
        state: &mut RunState,
        tool: &dyn Tool,
        arguments: &Value,
        outcome: &ToolOutcome,
    ) {
        if outcome.ok && tool.is_source_edit() {
            for file in &outcome.changed_files {
                if is_source_file(file) {
                    state.unverified_edits.insert(self.workspace.relative(file));
                }
            }
        }
        if !outcome.timed_out && tool.is_verification(arguments) {
            state.unverified_edits.clear();
        }
    }
}

/// A tool's result as the loop keeps it.
#[derive(Debug, Clone)]
struct CallOutcome {
    ok: bool,
    timed_out: bool,
    /// Not run: the same call failed before.
    repeated: bool,
    text: String,
    #[allow(dead_code)]
    changed_files: Vec<std::path::PathBuf>,
}

impl CallOutcome {
    fn failed(text: String) -> Self {
        Self {
            ok: false,
            timed_out: false,
            repeated: false,
            text,
            changed_files: Vec::new(),
        }
    }

    fn from_tool(tool: &dyn Tool, outcome: ToolOutcome) -> Self {
        let text = if tool.untrusted_output() {
            wrap_untrusted(&outcome.text)
        } else {
            outcome.text
        };
        Self {
            ok: outcome.ok,
            timed_out: outcome.timed_out,
            repeated: false,
            text,
            changed_files: outcome.changed_files,
        }
    }
}

fn account(state: &mut RunState, completion: &Completion) {
    state.prompt_tokens += completion.prompt_tokens as u64;
    state.reused_tokens += completion.reused_tokens.min(completion.prompt_tokens) as u64;
    state.completion_tokens += completion.completion_tokens as u64;
    state.model_time += completion.elapsed;
    state.first_ttft.get_or_insert(completion.ttft);
}

/// Characters of a message as the model sees it (content and call arguments).
fn message_chars(message: &Message) -> usize {
    message.content.as_deref().map_or(0, str::len)
        + message
            .tool_calls
            .iter()
            .map(|c| c.function.name.len() + c.function.arguments.to_string().len())
            .sum::<usize>()
        + 8
}

/// The identity of a call for repetition checks: name and canonical arguments.
fn call_key(call: &ReadyCall) -> String {
    format!("{}\u{0}{}", call.name, call.arguments)
}

/// The `finish` tool of the structured profile.
fn finish_spec() -> ToolSpec {
    ToolSpec {
        kind: "function".into(),
        function: FunctionSpec {
            name: FINISH_TOOL.into(),
            description: Some("End the task with the final answer.".into()),
            parameters: Some(json!({
                "type": "object",
                "properties": {"answer": {"type": "string", "description": "The final answer."}},
                "required": ["answer"]
            })),
        },
    }
}

/// Whether an edited file is program source (so a build or test should follow).
fn is_source_file(path: &std::path::Path) -> bool {
    const CODE: [&str; 24] = [
        "rs", "py", "js", "mjs", "cjs", "ts", "tsx", "jsx", "go", "c", "h", "cc", "cpp", "hpp",
        "java", "kt", "rb", "php", "cs", "swift", "scala", "sh", "lua", "zig",
    ];
    let by_name = path.file_name().and_then(|n| n.to_str()).is_some_and(|n| {
        matches!(
            n,
            "Makefile"
                | "CMakeLists.txt"
                | "Cargo.toml"
                | "package.json"
                | "pyproject.toml"
                | "go.mod"
        )
    });
    by_name
        || path
            .extension()
            .and_then(|e| e.to_str())
            .is_some_and(|e| CODE.contains(&e))
}
