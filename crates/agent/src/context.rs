//! Keeping a run inside its token budget: when the conversation passes a fraction of
//! the budget, older tool results are summarized deterministically (then cut, then
//! dropped to a stub, then whole old turns removed when even that is too much), while
//! the system prompt, the task (first user message), the latest user message and the
//! most recent turns stay verbatim. Compaction is rare and rewrites only old messages, so the
//! cached KV prefix survives most turns.

use rein_engine::Backend;
use rein_protocol::{EventSink, Message, Role, RunEvent};

use crate::agent::Agent;
use crate::prompt_size::PromptSize;

/// When and how much to compact.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ContextPolicy {
    /// The token budget of the conversation.
    pub budget_tokens: usize,
    /// Compact once the conversation passes this fraction of the budget.
    pub trigger: f64,
    /// Messages at the end kept verbatim.
    pub keep_recent: usize,
}

impl ContextPolicy {
    /// A budget of `budget_tokens`, compacting at 75%, keeping the last 6 messages.
    pub fn new(budget_tokens: usize) -> Self {
        Self {
            budget_tokens,
            trigger: 0.75,
            keep_recent: 6,
        }
    }
}

/// What one compaction did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Compaction {
    /// Tokens before (as counted).
    pub tokens_before: usize,
    /// Tokens after.
    pub tokens_after: usize,
    /// Messages summarized.
    pub summarized: usize,
    /// Messages removed with the old turns they belonged to.
    pub removed: usize,
}

/// Compacts `history` in place when `count` says it passed the trigger; `count` gives
/// a message's tokens.
pub fn compact(
    history: &mut Vec<Message>,
    policy: &ContextPolicy,
    count: impl Fn(&Message) -> usize,
) -> Option<Compaction> {
    let total = |h: &[Message]| h.iter().map(&count).sum::<usize>();
    let tokens_before = total(history);
    let over = |h: &[Message]| total(h) as f64 > policy.budget_tokens as f64 * policy.trigger;
    if !over(history) {
        return None;
    }
    let pinned = pinned(history);
    let recent_from = history.len().saturating_sub(policy.keep_recent);
    let mut summarized = 0;
    let mut shorten = |history: &mut [Message], index: usize| {
        if pinned.contains(&index) {
            return;
        }
        if let Some(summary) = summary_of(&history[index]) {
            history[index].content = Some(summary);
            summarized += 1;
        }
    };
    for index in 0..recent_from {
        shorten(history, index);
    }
    // Still over the budget: recent tool results go too, oldest first, and the last
    // message (the result the model has not answered yet) only when nothing else is
    // left to shorten: a summarized result is better than a prompt that cannot fit.
    let last = history.len().saturating_sub(1);
    for index in recent_from..last {
        if !over(history) {
            break;
        }
        shorten(history, index);
    }
    if over(history) && recent_from <= last {
        shorten(history, last);
    }
    // Summaries of long lines can still be too long: then results are cut to their
    // first lines, oldest first, the newest last.
    let mut cut = |history: &mut [Message], index: usize| {
        if pinned.contains(&index) || !over(history) {
            return;
        }
        if let Some(short) = cut_of(&history[index]) {
            history[index].content = Some(short);
            summarized += 1;
        }
    };
    for index in 0..history.len() {
        cut(history, index);
    }
    // Many cut results can still be too many (a model that calls again and again):
    // then results are dropped to a one-line stub, oldest first, never the newest.
    // The calls stay, so every result still answers its call.
    for index in 0..last {
        if pinned.contains(&index) || !over(history) {
            continue;
        }
        if let Some(stub) = stub_of(&history[index]) {
            history[index].content = Some(stub);
            summarized += 1;
        }
    }
    // The model's own replies and calls can fill the context by themselves (a model
    // that calls forty times): then whole old turns go, oldest first, never the
    // newest reply and what follows it.
    let mut removed = 0;
    while over(history) {
        let Some(turn) = oldest_turn(history) else {
            break;
        };
        removed += turn.len();
        history.drain(turn);
    }
    (summarized + removed > 0).then(|| Compaction {
        tokens_before,
        tokens_after: total(history),
        summarized,
        removed,
    })
}

/// The oldest turn that may be removed whole: a reply of the model, the results that
/// answer its calls and the notes that followed them, before the newest reply; never a
/// pinned message, and never a turn between two user messages (the roles would stop
/// alternating).
fn oldest_turn(history: &[Message]) -> Option<std::ops::Range<usize>> {
    let pinned = pinned(history);
    let newest_reply = history.iter().rposition(|m| m.role == Role::Assistant)?;
    (1..newest_reply)
        .filter(|&start| history[start].role == Role::Assistant && !pinned.contains(&start))
        .map(|start| {
            let end = (start + 1..newest_reply)
                .find(|&i| {
                    history[i].role == Role::Assistant
                        || history[i].role == Role::System
                        || pinned.contains(&i)
                })
                .unwrap_or(newest_reply);
            start..end
        })
        .find(|turn| {
            !(history[turn.start - 1].role == Role::User && history[turn.end].role == Role::User)
        })
}

/// The summary that would replace `message`: only for a tool result not summarized
/// yet, and only when it is shorter.
fn summary_of(message: &Message) -> Option<String> {
    let content = message.content.as_deref()?;
    if message.role != Role::Tool
        || content.starts_with(SUMMARY_MARK)
        || content.starts_with(CUT_MARK)
        || content.starts_with(DROP_MARK)
    {
        return None;
    }
    let summary = summarize(content);
    (summary.len() < content.len()).then_some(summary)
}

/// What replaces a tool result (or its summary) when even summaries do not fit: its
/// first [`CUT_LINES`] lines, each at most [`CUT_LINE_CHARS`] characters; `None` when it
/// was cut already or is no shorter.
fn cut_of(message: &Message) -> Option<String> {
    let content = message.content.as_deref()?;
    if message.role != Role::Tool || content.starts_with(CUT_MARK) || content.starts_with(DROP_MARK)
    {
        return None;
    }
    let lines: Vec<&str> = content
        .lines()
        .filter(|line| !line.starts_with(SUMMARY_MARK))
        .collect();
    let shown: Vec<String> = lines
        .iter()
        .take(CUT_LINES)
        .map(|line| bounded_line(line, CUT_LINE_CHARS))
        .collect();
    let short = format!(
        "{CUT_MARK} only the first lines are kept, to fit the context; read a smaller part (offset, limit) or search for what you need]\n{}",
        shown.join("\n")
    );
    (short.len() < content.len()).then_some(short)
}

/// How a result cut to fit starts (so it is never cut twice).
const CUT_MARK: &str = "[cut:";

/// What replaces a tool result when even cut results do not fit; `None` when it was
/// dropped already or is no longer than the stub.
fn stub_of(message: &Message) -> Option<String> {
    let content = message.content.as_deref()?;
    (message.role == Role::Tool && !content.starts_with(DROP_MARK) && content.len() > DROPPED.len())
        .then(|| DROPPED.to_string())
}

/// How a dropped result starts.
const DROP_MARK: &str = "[dropped:";

/// A dropped result, whole.
const DROPPED: &str = "[dropped: removed to fit the context; call again if you still need it]";

/// Lines a cut result keeps.
const CUT_LINES: usize = 3;

/// Characters of one line a summary keeps.
const LINE_CHARS: usize = 200;

/// Characters of one line a cut result keeps.
const CUT_LINE_CHARS: usize = 120;

/// `line`, at most `limit` characters, a cut marked.
fn bounded_line(line: &str, limit: usize) -> String {
    match line.chars().count() > limit {
        true => format!(
            "{}[… {} more chars]",
            line.chars().take(limit).collect::<String>(),
            line.chars().count() - limit
        ),
        false => line.to_string(),
    }
}

/// The messages that never change: the system prompt, the task and the latest user
/// message.
fn pinned(history: &[Message]) -> Vec<usize> {
    let mut pinned = Vec::new();
    if history.first().is_some_and(|m| m.role == Role::System) {
        pinned.push(0);
    }
    if let Some(first) = history.iter().position(|m| m.role == Role::User) {
        pinned.push(first);
    }
    if let Some(last) = history.iter().rposition(|m| m.role == Role::User) {
        pinned.push(last);
    }
    pinned
}

/// How a summarized result starts (so it is never summarized twice).
const SUMMARY_MARK: &str = "[summarized:";

/// The lines of a long tool result worth keeping, at most [`SUMMARY_LINES`]: the
/// first and last two and error lines first, then lines that name paths; in their
/// order, everything else counted and dropped.
fn summarize(content: &str) -> String {
    let lines: Vec<&str> = content.lines().collect();
    let first_choice = |i: usize, line: &str| {
        let lower = line.to_ascii_lowercase();
        i < 2
            || i + 2 >= lines.len()
            || lower.contains("error")
            || lower.contains("failed")
            || lower.contains("warning")
    };
    let second_choice = |line: &str| {
        line.contains('/')
            || line
                .split_whitespace()
                .any(|w| w.contains('.') && w.len() > 3 && !w.ends_with('.'))
    };
    let mut keep = vec![false; lines.len()];
    let mut kept = 0;
    for (i, line) in lines.iter().enumerate() {
        if kept < SUMMARY_LINES && first_choice(i, line) {
            keep[i] = true;
            kept += 1;
        }
    }
    for (i, line) in lines.iter().enumerate() {
        if kept < SUMMARY_LINES && !keep[i] && second_choice(line) {
            keep[i] = true;
            kept += 1;
        }
    }
    let shown: Vec<String> = lines
        .iter()
        .zip(&keep)
        .filter(|(_, keep)| **keep)
        .map(|(line, _)| bounded_line(line, LINE_CHARS))
        .collect();
    format!(
        "{SUMMARY_MARK} {} of {} lines dropped to save context; search or read a smaller part to see them]\n{}",
        lines.len() - kept,
        lines.len(),
        shown.join("\n")
    )
}

/// Lines a summary keeps at most.
const SUMMARY_LINES: usize = 24;

impl<B: Backend> Agent<B> {
    /// Before a request: summarizes tool results once the messages pass 75% of the
    /// context left after the reply allowance, the retry's note and the prompt's fixed
    /// part, the newest result last of all. Sizes come from `size`, measured on the
    /// previous prompts.
    pub(crate) fn keep_in_context(
        &self,
        history: &mut Vec<Message>,
        note: Option<&str>,
        size: PromptSize,
        turn: u32,
        events: &mut dyn EventSink,
    ) {
        let Some(n_ctx) = self.info.context_tokens else {
            return;
        };
        // Room for a reply: the largest allowance, but never more than a quarter of
        // the context (a small context would otherwise leave no budget at all).
        let reserve = (self.config.reply_tokens_cap as usize).min(n_ctx / 4);
        let note_tokens =
            (note.map_or(0, str::len) as f64 * size.tokens_per_char()).ceil() as usize;
        let budget =
            n_ctx.saturating_sub(reserve + note_tokens + size.fixed_tokens().ceil() as usize);
        let count = |m: &Message| size.message_tokens(m);
        if let Some(done) = compact(history, &ContextPolicy::new(budget), count) {
            events.emit(&RunEvent::Compacted {
                turn,
                tokens_before: done.tokens_before,
                tokens_after: done.tokens_after,
                summarized: done.summarized,
                removed: done.removed,
            });
        }
    }
}

#[cfg(test)]
mod tests;
