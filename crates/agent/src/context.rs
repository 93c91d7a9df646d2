//! Keeping a run inside its token budget: when the conversation passes a fraction of
//! the budget, older tool results are summarized deterministically (then cut, then
//! dropped to a stub, then whole old turns removed when even that is too much), while
//! the system prompt, the task (first user message), the latest user message and the
//! most recent turns stay verbatim. Compaction is rare and rewrites only old messages, so the
//! cached KV prefix survives most turns.

use rein_engine::Backend;
use rein_protocol::{EventSink, Message, Role, RunEvent};

use crate::run::Agent;

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

/// Tokens per character of message text before two requests have measured it
/// (Qwen2.5 and SmolLM2 on code, JSON and numbered file lines: 0.3–0.45).
const DEFAULT_TOKENS_PER_CHAR: f64 = 0.45;

/// Fewer characters than this between two requests say too little about the rate.
const MIN_MEASURED_CHARS: usize = 400;

/// How big the next request will be: a fixed part the messages do not show (the tool
/// block the template renders, its markers) and a rate per character of message text.
/// Both come from the backend's real count of the previous prompts, so a long tool
/// block is never mistaken for long messages.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct PromptSize {
    /// Tokens of the prompt outside the message text.
    fixed_tokens: f64,
    /// Tokens per character of message text.
    tokens_per_char: f64,
    /// Characters of message text in the request measured last.
    chars: usize,
    /// Its real token count.
    tokens: usize,
}

impl PromptSize {
    /// The size model after a request of `messages` (and `note`) that the backend
    /// counted as `prompt_tokens`, refining `previous`.
    pub(crate) fn measure(
        previous: Option<PromptSize>,
        messages: &[Message],
        note: Option<&str>,
        prompt_tokens: usize,
    ) -> Self {
        let chars = messages.iter().map(message_chars).sum::<usize>() + note.map_or(0, str::len);
        let rate = previous
            .and_then(|p| {
                let grown = chars.checked_sub(p.chars)?;
                let more = prompt_tokens.checked_sub(p.tokens)?;
                (grown >= MIN_MEASURED_CHARS).then(|| (more as f64 / grown as f64).clamp(0.15, 1.0))
            })
            .or(previous.map(|p| p.tokens_per_char))
            .unwrap_or(DEFAULT_TOKENS_PER_CHAR);
        Self {
            fixed_tokens: (prompt_tokens as f64 - chars as f64 * rate).max(0.0),
            tokens_per_char: rate,
            chars,
            tokens: prompt_tokens,
        }
    }

    /// The estimated tokens of `message`.
    fn message_tokens(&self, message: &Message) -> usize {
        (message_chars(message) as f64 * self.tokens_per_char).ceil() as usize
    }
}

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
        let note_tokens = (note.map_or(0, str::len) as f64 * size.tokens_per_char).ceil() as usize;
        let budget =
            n_ctx.saturating_sub(reserve + note_tokens + size.fixed_tokens.ceil() as usize);
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
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn a_long_tool_block_is_a_fixed_part_not_a_rate() {
        // The first request: 1,508 characters of messages (8 a message for its
        // markers), but 1,300 tokens, most of them the tool block the template renders.
        let system = Message::system("r".repeat(1_300));
        let task = Message::user("t".repeat(192));
        let first = PromptSize::measure(None, &[system.clone(), task.clone()], None, 1_300);
        assert!((first.tokens_per_char - DEFAULT_TOKENS_PER_CHAR).abs() < 1e-9);
        let result = Message::tool_result("call_1", "read_file", "x".repeat(592));
        let history = [system, task, result];
        let estimate = first.fixed_tokens
            + history
                .iter()
                .map(|m| first.message_tokens(m))
                .sum::<usize>() as f64;
        // 1,300 + 600 × 0.45 = 1,570; the old single ratio said 1,300 / 1,508 × 2,108.
        assert!((1_560.0..1_580.0).contains(&estimate), "{estimate}");
        // The next request measures the rate of what was added.
        let second = PromptSize::measure(Some(first), &history, None, 1_480);
        assert!((second.tokens_per_char - 0.3).abs() < 1e-9);
        assert!((second.fixed_tokens - (1_480.0 - 2_108.0 * 0.3)).abs() < 1e-6);
        // Too little growth to measure: the rate stays.
        let third = PromptSize::measure(Some(second), &history, Some("note"), 1_490);
        assert!((third.tokens_per_char - 0.3).abs() < 1e-9);
    }

    fn by_chars(m: &Message) -> usize {
        m.content.as_deref().map_or(1, |c| c.len() / 4 + 1)
    }

    fn history_strategy() -> impl Strategy<Value = Vec<Message>> {
        let message = (0..3u8, "[a-z /.]{0,40}", 1..60usize).prop_map(|(kind, line, repeat)| {
            let text = vec![line; repeat].join("\n");
            match kind {
                0 => Message::user(text),
                1 => Message::assistant(text),
                _ => Message::tool_result("call", "read_file", text),
            }
        });
        proptest::collection::vec(message, 0..30).prop_map(|mut rest| {
            let mut history = vec![Message::system("rules"), Message::user("the task")];
            history.append(&mut rest);
            history
        })
    }

    proptest! {
        #[test]
        fn pinned_messages_and_recent_turns_stay_verbatim(history in history_strategy(), budget in 10usize..2000) {
            let policy = ContextPolicy::new(budget);
            let mut compacted = history.clone();
            let report = compact(&mut compacted, &policy, by_chars);
            let removed = report.as_ref().map_or(0, |r| r.removed);
            prop_assert_eq!(compacted.len() + removed, history.len());
            if removed > 0 {
                // Whole old turns went only after every result was shortened: the
                // pinned messages stay, and so does the newest reply with all after it
                // (its results perhaps shortened).
                for index in pinned(&history) {
                    prop_assert!(compacted.contains(&history[index]));
                }
                let newest = history.iter().rposition(|m| m.role == Role::Assistant);
                prop_assert!(newest.is_some());
                let tail = history.len() - newest.unwrap_or(0);
                for (before, after) in history[history.len() - tail..].iter().zip(&compacted[compacted.len() - tail..]) {
                    prop_assert_eq!(before.role, after.role);
                    if before.role != Role::Tool {
                        prop_assert_eq!(before, after);
                    }
                }
                let again = compacted.clone();
                compact(&mut compacted, &policy, by_chars);
                prop_assert_eq!(compacted, again);
                return Ok(());
            }
            for index in pinned(&history) {
                prop_assert_eq!(&compacted[index], &history[index]);
            }
            let recent = history.len().saturating_sub(policy.keep_recent);
            // Recent turns are touched only when summarizing every older tool result
            // was not enough; the last message never is.
            let pins = pinned(&history);
            let old_only: usize = history
                .iter()
                .enumerate()
                .map(|(i, m)| match summary_of(m) {
                    Some(summary) if i < recent && !pins.contains(&i) => summary.len() / 4 + 1,
                    _ => by_chars(m),
                })
                .sum();
            if old_only as f64 <= policy.budget_tokens as f64 * policy.trigger {
                prop_assert_eq!(&compacted[recent..], &history[recent..]);
            }
            // The last message is shortened only when nothing else was enough.
            let all_but_last: usize = history
                .iter()
                .enumerate()
                .map(|(i, m)| match summary_of(m) {
                    Some(summary) if i + 1 < history.len() && !pins.contains(&i) => summary.len() / 4 + 1,
                    _ => by_chars(m),
                })
                .sum();
            if all_but_last as f64 <= policy.budget_tokens as f64 * policy.trigger {
                prop_assert_eq!(compacted.last(), history.last());
            }
            for (before, after) in history.iter().zip(&compacted) {
                prop_assert_eq!(before.role, after.role);
                if before.role != Role::Tool {
                    prop_assert_eq!(before, after);
                }
            }
            if let Some(report) = report {
                prop_assert!(report.tokens_after <= report.tokens_before);
                // Compacting again changes nothing: summaries are not summarized.
                let again = compacted.clone();
                compact(&mut compacted, &policy, by_chars);
                prop_assert_eq!(compacted, again);
            }
        }
    }

    #[test]
    fn recent_results_are_summarized_when_old_ones_are_not_enough() {
        let big = (0..300)
            .map(|i| format!("test_case_{i} ... ok"))
            .collect::<Vec<_>>()
            .join("\n");
        let mut history = vec![Message::system("rules"), Message::user("the task")];
        for _ in 0..3 {
            history.push(Message::assistant("running the tests"));
            history.push(Message::tool_result("call", "shell", big.clone()));
        }
        let policy = ContextPolicy::new(big.len() / 4 * 2);
        let report = compact(&mut history, &policy, by_chars).expect("compacted");
        assert!(report.tokens_after as f64 <= policy.budget_tokens as f64 * policy.trigger);
        assert!(history[3]
            .content
            .as_deref()
            .unwrap()
            .starts_with(SUMMARY_MARK));
        assert_eq!(
            history.last().unwrap().content.as_deref(),
            Some(big.as_str())
        );
    }

    #[test]
    fn a_newest_result_too_large_for_the_context_is_summarized_last() {
        let log: String = (0..5000)
            .map(|i| match i {
                131 => "2024-06-14T03:00:40Z ERROR [payments] gateway returned code PG-4471"
                    .to_string(),
                _ => format!(
                    "2024-06-14T02:58:{:02}.052Z INFO [db] checkpoint {i}",
                    i % 60
                ),
            })
            .collect::<Vec<_>>()
            .join("\n");
        let mut history = vec![
            Message::system("rules"),
            Message::user("find the ERROR line"),
            Message::assistant("reading"),
            Message::tool_result("call", "read_file", log),
        ];
        let policy = ContextPolicy::new(3000);
        compact(&mut history, &policy, by_chars).expect("compacted");
        let last = history.last().unwrap().content.as_deref().unwrap();
        assert!(last.starts_with(SUMMARY_MARK), "{last}");
        assert!(
            last.contains("PG-4471"),
            "the error line is kept first: {last}"
        );
        assert!(last.len() < 3000, "{}", last.len());
    }

    #[test]
    fn results_of_long_lines_are_cut_until_they_fit() {
        let wide = |c: char| {
            (0..30)
                .map(|_| c.to_string().repeat(5000))
                .collect::<Vec<_>>()
                .join("\n")
        };
        let original = vec![
            Message::system("rules"),
            Message::user("what does it say?"),
            Message::assistant("reading"),
            Message::tool_result("call_1", "shell", wide('a')),
            Message::assistant("reading more"),
            Message::tool_result("call_2", "shell", wide('b')),
        ];
        // A summary keeps a few lines, each bounded.
        let mut history = original.clone();
        let policy = ContextPolicy::new(2000);
        compact(&mut history, &policy, by_chars).expect("compacted");
        let total: usize = history.iter().map(by_chars).sum();
        assert!(total as f64 <= 2000.0 * policy.trigger, "{total}");
        let older = history[3].content.as_deref().unwrap();
        assert!(older.starts_with(SUMMARY_MARK), "{older}");
        assert!(older
            .lines()
            .skip(1)
            .all(|line| line.chars().count() <= LINE_CHARS + 24));
        assert!(older.contains("[… 4800 more chars]"), "{older}");
        // Where summaries do not fit either, results are cut to their first lines.
        let mut history = original;
        let policy = ContextPolicy::new(600);
        compact(&mut history, &policy, by_chars).expect("compacted");
        let total: usize = history.iter().map(by_chars).sum();
        assert!(total as f64 <= 600.0 * policy.trigger, "{total}");
        let older = history[3].content.as_deref().unwrap();
        assert!(older.starts_with(CUT_MARK), "{older}");
    }

    #[test]
    fn when_cut_results_are_still_too_many_the_oldest_are_dropped_to_a_stub() {
        // A small model that reads the same huge log twenty times: every result cut
        // to its first lines is still too much together (trace: file-too-large).
        let log = (0..400)
            .map(|i| {
                format!(
                    "2024-06-14T02:58:{:02}.052Z INFO [db] checkpoint {i} {}",
                    i % 60,
                    "x".repeat(150)
                )
            })
            .collect::<Vec<_>>()
            .join("\n");
        let mut history = vec![Message::system("rules"), Message::user("find EVT-77812")];
        for i in 0..20 {
            history.push(Message::assistant(format!("reading at offset {i}")));
            history.push(Message::tool_result(
                format!("call_{i}"),
                "read_file",
                log.clone(),
            ));
        }
        let policy = ContextPolicy::new(1_000);
        let original = history.clone();
        compact(&mut history, &policy, by_chars).expect("compacted");
        let total: usize = history.iter().map(by_chars).sum();
        assert!(total as f64 <= 1_000.0 * policy.trigger, "{total}");
        assert_eq!(history[3].content.as_deref(), Some(DROPPED));
        let newest = history.last().unwrap().content.as_deref().unwrap();
        assert!(!newest.starts_with(DROP_MARK), "{newest}");
        // Every call keeps a result, and nothing but results changed.
        assert_eq!(history.len(), original.len());
        for (before, after) in original.iter().zip(&history) {
            assert_eq!(before.role, after.role);
            assert_eq!(before.tool_call_id, after.tool_call_id);
        }
        // A dropped result is not dropped again.
        let again = history.clone();
        compact(&mut history, &policy, by_chars);
        assert_eq!(history, again);
    }

    /// A reply calling `read_file` on `path`, with the call's id `id`.
    fn read_call(id: &str, path: &str) -> Message {
        Message {
            content: None,
            tool_calls: vec![rein_protocol::ToolCall {
                id: Some(id.to_string()),
                kind: "function".into(),
                function: rein_protocol::FunctionCall {
                    name: "read_file".into(),
                    arguments: serde_json::json!({ "path": path }),
                },
            }],
            ..Message::assistant("")
        }
    }

    #[test]
    fn when_stubs_are_still_too_many_whole_old_turns_go() {
        // A small model that calls forty times: with every result a stub, its own
        // calls still fill the context (trace: file-too-large, 4,338 tokens for 4,096).
        let mut history = vec![Message::system("rules"), Message::user("find EVT-77812")];
        for i in 0..40 {
            let id = format!("call_{i}");
            history.push(read_call(&id, &format!("logs/part-{i}.log")));
            history.push(Message::tool_result(&id, "read_file", "x".repeat(400)));
            if i == 5 || i == 38 {
                // A held answer's note goes with the turn it answered; the latest
                // stays (it is pinned).
                history.push(Message::assistant("Done."));
                history.push(Message::user(format!("Check the file first ({i}).")));
            }
        }
        let weight = |m: &Message| by_chars(m) + 30 * m.tool_calls.len();
        let policy = ContextPolicy::new(400);
        let original = history.clone();
        let report = compact(&mut history, &policy, weight).expect("compacted");
        assert!(report.removed > 0, "{report:?}");
        let total: usize = history.iter().map(weight).sum();
        assert!(total as f64 <= 400.0 * policy.trigger, "{total}");
        assert_eq!(history.len() + report.removed, original.len());
        // The system prompt and the task stay, the newest call too, and its result is
        // not dropped.
        assert_eq!(history[..2], original[..2]);
        assert_eq!(history[history.len() - 2], original[original.len() - 2]);
        let newest = history[history.len() - 1].content.as_deref().unwrap();
        assert!(!newest.starts_with(DROP_MARK), "{newest}");
        // Every result still follows the call it answers, and the roles alternate.
        for (index, message) in history.iter().enumerate().skip(2) {
            match message.role {
                Role::Tool => {
                    let call = &history[index - 1].tool_calls[0];
                    assert_eq!(call.id, message.tool_call_id);
                }
                Role::Assistant => assert_ne!(history[index - 1].role, Role::Assistant),
                _ => assert_eq!(
                    message.content.as_deref(),
                    Some("Check the file first (38).")
                ),
            }
        }
        // Compacting again removes nothing more.
        let again = history.clone();
        compact(&mut history, &policy, weight);
        assert_eq!(history, again);
    }

    #[test]
    fn a_summary_keeps_paths_errors_and_the_ends() {
        let long: String = (0..100)
            .map(|i| match i {
                50 => "error: cannot open src/main.rs".to_string(),
                _ => format!("line {i}"),
            })
            .collect::<Vec<_>>()
            .join("\n");
        let summary = summarize(&long);
        assert!(
            summary.starts_with("[summarized: 95 of 100 lines dropped"),
            "{summary}"
        );
        for kept in [
            "line 0",
            "line 1",
            "error: cannot open src/main.rs",
            "line 98",
            "line 99",
        ] {
            assert!(summary.contains(kept), "{summary}");
        }
        assert!(!summary.contains("line 42"));
    }
}
