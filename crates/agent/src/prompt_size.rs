//! How big the next request will be, learned from the backend's real token counts of
//! the previous prompts: a fixed part the messages do not show and a rate per
//! character of message text.

use rein_protocol::Message;

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

    /// Tokens of the prompt outside the message text.
    pub(crate) fn fixed_tokens(&self) -> f64 {
        self.fixed_tokens
    }

    /// Tokens per character of message text.
    pub(crate) fn tokens_per_char(&self) -> f64 {
        self.tokens_per_char
    }

    /// The estimated tokens of `message`.
    pub(crate) fn message_tokens(&self, message: &Message) -> usize {
        (message_chars(message) as f64 * self.tokens_per_char).ceil() as usize
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
}
