//! The run's event stream: what the work loop emits, step by step, to its sinks (the
//! trace writer, the CLI's progress, the eval runner).

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// Whether a count is zero (left out of a serialized event).
fn is_zero(count: &usize) -> bool {
    *count == 0
}

/// The conversation the `history` events of a run recorded, in order.
pub fn recorded_history<'a>(events: impl IntoIterator<Item = &'a RunEvent>) -> Vec<crate::Message> {
    let mut history = Vec::new();
    for event in events {
        if let RunEvent::History { from, messages } = event {
            history.truncate(*from);
            history.extend(messages.iter().cloned());
        }
    }
    history
}

/// A turn's prompt as the local model read it: the rendered text, and the byte ranges
/// of it holding control-token texts that came from content, tokenized as plain text.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RecordedPrompt {
    /// The rendered prompt.
    pub text: String,
    /// Byte ranges `[start, end)` of `text` tokenized as plain text.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub literal: Vec<[usize; 2]>,
    /// The reply was asked for as one of given values (the final answer in the form
    /// the task asks for), not as calls or an answer of the model's own.
    #[serde(default, skip_serializing_if = "is_false")]
    pub values_only: bool,
}

/// Whether a flag is off (left out of a serialized event).
fn is_false(flag: &bool) -> bool {
    !flag
}

/// One event of a run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "event", rename_all = "snake_case")]
pub enum RunEvent {
    /// The run starts.
    RunStart {
        /// The task.
        task: String,
        /// The model.
        model: String,
        /// The harness profile.
        profile: String,
        /// rein's version.
        version: String,
        /// Every setting of the run.
        settings: Value,
        /// The tools offered.
        tools: Vec<String>,
        /// Workspace facts found up front.
        facts: Vec<String>,
    },
    /// A model turn.
    Turn {
        /// The turn's number (from 1).
        turn: u32,
        /// The attempt within the turn (from 1; retries add).
        attempt: u32,
        /// Tokens in the prompt.
        prompt_tokens: usize,
        /// Of those, taken from the KV cache.
        reused_tokens: usize,
        /// Tokens generated.
        completion_tokens: usize,
        /// The reply's token allowance.
        max_tokens: u32,
        /// Time to first token.
        ttft_ms: u64,
        /// Time for the turn.
        ms: u64,
        /// The limit cut the reply.
        cut_off: bool,
        /// The raw reply.
        raw: String,
        /// The prompt the reply was generated from, when the run records prompts
        /// (`record_prompts`; a local model only): what `rein quant-diff` replays.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        prompt: Option<RecordedPrompt>,
    },
    /// The next reply answers a question from these result lines alone, on a
    /// context of its own (`full`).
    FocusedAnswer {
        /// The turn.
        turn: u32,
        /// The lines shown, under the calls that gave them.
        evidence: String,
    },
    /// A call to change the task's file failed, and the model was asked for the one
    /// line the task's quoted terms pick, with the change made, on a context of its own.
    FocusedEdit {
        /// The turn.
        turn: u32,
        /// The file the task asks to change.
        path: String,
        /// The line's number, when the task's terms picked one line.
        line: Option<u32>,
        /// The line as the file has it.
        old: Option<String>,
        /// The line as the model changed it, when it changed it.
        new: Option<String>,
    },
    /// Calls read from a reply.
    Calls {
        /// The turn.
        turn: u32,
        /// Each call: `{"id", "name", "arguments"}`.
        calls: Vec<Value>,
    },
    /// Something went wrong and was handled.
    Recovery {
        /// The turn.
        turn: u32,
        /// The failure class.
        class: String,
        /// What exactly.
        detail: String,
        /// What the model is told, if anything.
        note: Option<String>,
    },
    /// A tool name was repaired.
    NameRepaired {
        /// The turn.
        turn: u32,
        /// As written.
        from: String,
        /// As run.
        to: String,
    },
    /// A reply that was wholly calls, written without the family's call markers, was
    /// read as those calls.
    FormatRepaired {
        /// The turn.
        turn: u32,
        /// What was repaired.
        detail: String,
    },
    /// The reply's opening, decoded without a grammar, showed its shape: calls (the
    /// reply was decoded as the family's calls from its first token) or no call (an
    /// empty wrapper, a result written out again: decoded as prose).
    OpeningRead {
        /// The turn.
        turn: u32,
        /// The opening as the model wrote it.
        opening: String,
        /// `calls` or `answer`.
        shape: String,
    },
    /// Arguments were coerced to their declared types.
    Coerced {
        /// The turn.
        turn: u32,
        /// The tool.
        tool: String,
        /// Arguments as written.
        from: Value,
        /// Arguments as run.
        to: Value,
    },
    /// A tool ran.
    ToolResult {
        /// The turn.
        turn: u32,
        /// The call's id.
        id: String,
        /// The tool.
        name: String,
        /// Its arguments.
        arguments: Value,
        /// The scheduling group it ran in (from 0).
        group: usize,
        /// It succeeded.
        ok: bool,
        /// It ran out of time.
        timed_out: bool,
        /// What the model sees.
        output: String,
        /// How long it took.
        ms: u64,
    },
    /// Older traces only (no longer written; decision 0044): a which-file answer's
    /// path that missed a workspace file by case or a leading dot was replaced.
    AnswerPathCorrected {
        /// The turn.
        turn: u32,
        /// The path as the answer wrote it.
        said: String,
        /// The workspace's file it was replaced with.
        path: String,
    },
    /// A rule of the loop fired (see `rein_agent::Rule`): an answer held, a call not
    /// run, a note added to a result, or the next request shaped.
    RuleFired {
        /// The turn.
        turn: u32,
        /// The rule's name.
        rule: String,
        /// What it did: hold, refusal, note or retry.
        kind: String,
        /// What it fired on.
        detail: String,
    },
    /// The loop added a note after a tool's result (a route, a path inside the
    /// workspace, a deferred call…): the model sees the result then this note.
    ResultNote {
        /// The turn.
        turn: u32,
        /// The call's id.
        id: String,
        /// The text added after the result.
        note: String,
    },
    /// The final answer was held back to ask for verification.
    VerificationRequested {
        /// The turn.
        turn: u32,
        /// The edited files not yet verified.
        files: Vec<String>,
    },
    /// Old tool results were summarized to stay inside the context.
    Compacted {
        /// The turn.
        turn: u32,
        /// Estimated tokens before.
        tokens_before: usize,
        /// Estimated tokens after.
        tokens_after: usize,
        /// Messages summarized.
        summarized: usize,
        /// Messages removed with whole old turns (when shortening results was not
        /// enough).
        #[serde(default, skip_serializing_if = "is_zero")]
        removed: usize,
    },
    /// Calls of other tools in a reply were not run: they wait for the result of
    /// the reply's first tool (`full`, stepwise).
    CallsDeferred {
        /// The turn.
        turn: u32,
        /// The tools whose calls waited.
        tools: Vec<String>,
    },
    /// The user was asked about a call before it ran (`--approve`).
    Approval {
        /// The turn.
        turn: u32,
        /// The call's id.
        id: String,
        /// The tool.
        name: String,
        /// `run`, `edit` (it ran with the user's arguments) or `refuse`.
        decision: String,
    },
    /// A tool server (MCP) was started for the run, or could not be.
    ToolServer {
        /// The server's name.
        server: String,
        /// It is running and its tools are offered.
        started: bool,
        /// Tools offered from it.
        tools: usize,
        /// Its command line or URL, or why it is not running; withdrawn tools.
        detail: String,
    },
    /// What a tool server wrote on its standard error during the run.
    ServerLog {
        /// The server's name.
        server: String,
        /// The lines, oldest first.
        lines: Vec<String>,
        /// Older lines dropped for space.
        dropped: usize,
    },
    /// A run goes on from an earlier run's conversation (`rein run --resume`).
    Resumed {
        /// The earlier run's trace.
        from: String,
        /// The messages taken from it.
        messages: usize,
    },
    /// The conversation so far, recorded after each step so that `rein run --resume`
    /// can go on from it even when the process was killed: the messages from index
    /// `from` on replace what the earlier `history` events put there (a compacted
    /// conversation starts again at 0).
    History {
        /// Where these messages start in the conversation.
        #[serde(default, skip_serializing_if = "is_zero")]
        from: usize,
        /// The messages from there on.
        messages: Vec<crate::Message>,
    },
    /// The run ends.
    RunEnd {
        /// The run's result.
        result: Value,
    },
}

impl RunEvent {
    /// A one-line, human-readable rendering for `rein replay`.
    pub fn render(&self) -> String {
        match self {
            RunEvent::RunStart {
                task,
                model,
                profile,
                tools,
                facts,
                ..
            } => {
                let mut out = format!(
                    "== run: {task}\n   model {model}, profile {profile}\n   tools: {}",
                    tools.join(", ")
                );
                for fact in facts {
                    out.push_str(&format!("\n   fact: {fact}"));
                }
                out
            }
            RunEvent::Turn {
                turn,
                attempt,
                prompt_tokens,
                reused_tokens,
                completion_tokens,
                ms,
                cut_off,
                raw,
                ..
            } => format!(
                "-- turn {turn}{} ({prompt_tokens} prompt tokens, {reused_tokens} reused; {completion_tokens} generated{}; {ms} ms)\n{}",
                if *attempt > 1 { format!(", attempt {attempt}") } else { String::new() },
                if *cut_off { ", cut off" } else { "" },
                indent(raw)
            ),
            RunEvent::FocusedAnswer { evidence, .. } => format!(
                "   ~ the answer is asked from these result lines alone:\n{}",
                indent(evidence)
            ),
            RunEvent::FocusedEdit { path, line, old, new, .. } => match (line, old, new) {
                (Some(line), Some(old), Some(new)) => format!(
                    "   ~ line {line} of `{path}` asked on its own: `{old}` -> `{new}`"
                ),
                _ => format!("   ~ no one-line change of `{path}` came from a focused ask"),
            },
            RunEvent::Calls { calls, .. } => calls
                .iter()
                .map(|c| format!("   call {} {}({})", c["id"].as_str().unwrap_or("?"), c["name"].as_str().unwrap_or("?"), c["arguments"]))
                .collect::<Vec<_>>()
                .join("\n"),
            RunEvent::Recovery { class, detail, note, .. } => format!(
                "   ! {class}: {detail}{}",
                note.as_ref().map(|n| format!("\n     note: {}", n.replace('\n', " "))).unwrap_or_default()
            ),
            RunEvent::NameRepaired { from, to, .. } => format!("   ~ tool name `{from}` read as `{to}`"),
            RunEvent::FormatRepaired { detail, .. } => format!("   ~ format repaired: {detail}"),
            RunEvent::OpeningRead { opening, shape, .. } => format!("   ~ opening {opening:?}: decoded as {shape}"),
            RunEvent::Coerced { tool, from, to, .. } => format!("   ~ {tool} arguments coerced: {from} -> {to}"),
            RunEvent::ToolResult { id, name, ok, timed_out, output, ms, group, .. } => format!(
                "   {} {id} {name} [group {group}, {ms} ms{}]\n{}",
                if *ok { "=>" } else { "=> FAILED" },
                if *timed_out { ", timed out" } else { "" },
                indent(output)
            ),
            RunEvent::AnswerPathCorrected { said, path, .. } => {
                format!("   ~ answer's path `{said}` is the workspace's `{path}`")
            }
            RunEvent::RuleFired { rule, kind, detail, .. } => {
                format!("   ~ rule {rule} ({kind}): {detail}")
            }
            RunEvent::ResultNote { id, note, .. } => {
                format!("   + note after {id}:\n{}", indent(note.trim_start()))
            }
            RunEvent::VerificationRequested { files, .. } => format!(
                "   ? answer held: edited {} without a test or build since",
                files.join(", ")
            ),
            RunEvent::Compacted { tokens_before, tokens_after, summarized, removed, .. } => format!(
                "   ~ context compacted: {summarized} old tool results summarized{}, about {tokens_before} -> {tokens_after} tokens",
                match removed {
                    0 => String::new(),
                    n => format!(", {n} messages of old turns removed"),
                }
            ),
            RunEvent::CallsDeferred { tools, .. } => format!(
                "   ~ not run yet, waiting for the first tool's result: {}",
                tools.join(", ")
            ),
            RunEvent::Approval { name, decision, .. } => {
                format!("   ? {name}: the user chose {decision}")
            }
            RunEvent::ToolServer { server, started, tools, detail } => if *started {
                format!("   + MCP server {server}: {tools} tools ({detail})")
            } else {
                format!("   ! MCP server {server} not running: {detail}")
            },
            RunEvent::ServerLog { server, lines, dropped } => format!(
                "   MCP server {server} wrote{}:\n{}",
                if *dropped > 0 { format!(" ({dropped} earlier lines dropped)") } else { String::new() },
                indent(&lines.join("\n"))
            ),
            RunEvent::Resumed { from, messages } => {
                format!("== resumed from {from} ({messages} messages)")
            }
            RunEvent::History { from, messages } => format!(
                "   conversation: messages {}–{} recorded (for --resume)",
                from + 1,
                from + messages.len()
            ),
            RunEvent::RunEnd { result } => format!(
                "== end: {} after {} turns, {} tool calls ({} errors), {} ms\n   answer: {}",
                result["stop_reason"].as_str().unwrap_or("?"),
                result["turns"],
                result["tool_calls"],
                result["tool_errors"],
                result["wall_ms"],
                result["answer"].as_str().unwrap_or("(none)")
            ),
        }
    }
}

fn indent(text: &str) -> String {
    text.lines()
        .map(|l| format!("     | {l}"))
        .collect::<Vec<_>>()
        .join("\n")
}
