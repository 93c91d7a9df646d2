//! Answers that say nothing the task asks for: a bare claim that the task is done
//! ("The task is done.") to a task that asks to be told something, and the task's own
//! words given back ("The logs/ directory holds the deploy log. Find the version…").
//! The 0.5B model ended `traps` runs with both, and with the bare words "tool_call".

use crate::guards::NotAnswer;
use crate::stored_answer::asks_to_be_told;

/// Claims of completion that carry no content, compared without letter case and
/// end punctuation.
const BARE_CLAIMS: [&str; 10] = [
    "done",
    "all done",
    "completed",
    "task complete",
    "task completed",
    "task done",
    "the task is done",
    "the task is complete",
    "the task has been completed",
    "i have completed the task",
];

/// Replies that only name a call ("tool_call"), compared like [`BARE_CLAIMS`] with
/// `_` and `<>` taken as spaces.
const CALL_WORDS: [&str; 3] = ["tool call", "function call", "call"];

/// The fewest words of the task in a row that make an answer a copy of it.
const ECHOED_WORDS: usize = 6;

/// Why `answer` gives nothing `task` asks for, if it does not.
pub(crate) fn empty_answer(answer: &str, task: &str) -> Option<NotAnswer> {
    let claim = answer
        .trim()
        .trim_end_matches(['.', '!'])
        .trim()
        .to_lowercase();
    if BARE_CLAIMS.contains(&claim.as_str()) && wants_a_reply(task) {
        return Some(NotAnswer::ClaimsDone);
    }
    let named = claim.replace(['_', '<', '>', '/'], " ");
    if CALL_WORDS.contains(
        &named
            .split_whitespace()
            .collect::<Vec<_>>()
            .join(" ")
            .as_str(),
    ) {
        return Some(NotAnswer::NamesACall);
    }
    let said = words(answer);
    let asked = words(task);
    let copied = said.len() >= ECHOED_WORDS
        && asked
            .windows(said.len())
            .any(|window| window == said.as_slice());
    copied.then_some(NotAnswer::EchoesTask)
}

/// Whether `task` wants something told back: a question, "tell me", "answer with".
fn wants_a_reply(task: &str) -> bool {
    asks_to_be_told(task) || task.to_lowercase().contains("answer with")
}

/// The words of `text`, lowercased, punctuation dropped.
pub(crate) fn words(text: &str) -> Vec<String> {
    text.split(|c: char| !c.is_alphanumeric())
        .filter(|word| !word.is_empty())
        .map(str::to_lowercase)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    const QUESTION: &str = "How many bytes is firmware.bin? Answer with the number.";
    const PIPE: &str = "The logs/ directory holds the deploy log. Find the version that was deployed and answer with it.";

    #[test]
    fn a_bare_claim_of_completion_answers_no_question() {
        assert_eq!(
            empty_answer("The task is done.", QUESTION),
            Some(NotAnswer::ClaimsDone)
        );
        assert_eq!(empty_answer(" done! ", PIPE), Some(NotAnswer::ClaimsDone));
        // With the value, it is an answer; and a task that asks for a change only
        // may well be done.
        assert_eq!(
            empty_answer("The task is done: 4096 bytes.", QUESTION),
            None
        );
        assert_eq!(
            empty_answer(
                "The task is done.",
                "Rename the function parse to parse_line."
            ),
            None
        );
    }

    #[test]
    fn the_words_tool_call_are_no_answer() {
        for reply in ["tool_call", "Tool call.", "<tool_call>", "function call"] {
            assert_eq!(
                empty_answer(reply, QUESTION),
                Some(NotAnswer::NamesACall),
                "{reply}"
            );
        }
        assert_eq!(empty_answer("The tool call returned 17.", QUESTION), None);
    }

    #[test]
    fn the_task_given_back_is_no_answer() {
        assert_eq!(
            empty_answer(
                "The logs/ directory holds the deploy log. Find the version that was deployed and answer with it.",
                PIPE
            ),
            Some(NotAnswer::EchoesTask)
        );
        assert_eq!(
            empty_answer("find the version that was deployed", PIPE),
            Some(NotAnswer::EchoesTask)
        );
        // Its words around a value are an answer; so is a short phrase of it.
        assert_eq!(
            empty_answer("The version that was deployed is 2.7.1.", PIPE),
            None
        );
        assert_eq!(empty_answer("The deploy log.", PIPE), None);
    }
}
