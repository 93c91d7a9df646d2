//! What becomes of an answer: the final one, or held back once more when it is not an
//! answer yet (see `guards`). Holds are bounded per run, so a run always ends.

use rein_engine::Backend;
use rein_protocol::{EventSink, Message, RunEvent, StopReason};

use crate::guards::{missing_output, not_an_answer, Held};
use crate::profile::RetryMode;
use crate::recovery::FailureClass;
use crate::run::{Agent, Flow};
use crate::state::RunState;

impl<B: Backend> Agent<B> {
    /// The flow after the model answered `text`.
    pub(crate) fn on_answer(
        &self,
        run: &mut RunState,
        text: String,
        events: &mut dyn EventSink,
    ) -> Flow {
        let Some(held) = self.held(run, &text) else {
            return Flow::Stop((StopReason::Answered, Some(text), None));
        };
        if !run.holds.allow(&held) {
            return Flow::Stop((StopReason::Answered, Some(text), None));
        }
        match held {
            Held::Unverified(files) => {
                // The answer stays: the check it asks for completes it.
                events.emit(&RunEvent::VerificationRequested {
                    turn: run.turns,
                    files: files.clone(),
                });
                run.history.push(Message::assistant(text));
                run.history
                    .push(Message::user(Held::Unverified(files).note()));
                Flow::Next
            }
            other => {
                // Not kept: the retry sees the clean history and the note, and it is
                // decoded as a call (the step it talked about, or the one before it).
                let (class, mode) = match other {
                    Held::MissingOutput(_) => (FailureClass::MissingOutput, RetryMode::CallsOnly),
                    // A call written as plain text (an answer-only turn): asked again.
                    _ if rein_format::read::bare_calls(&text).is_some() => {
                        (FailureClass::NotAnAnswer, RetryMode::Same)
                    }
                    _ => (FailureClass::NotAnAnswer, RetryMode::CallsOnly),
                };
                let detail = format!("{}: {}", other.kind(), first_line(&text));
                self.retry(run, class, &detail, Some(other.note()), mode, events)
            }
        }
    }

    /// Why `text` is not the final answer yet, if it is not.
    fn held(&self, run: &RunState, text: &str) -> Option<Held> {
        if !self.strategy.guards_answers() {
            return None;
        }
        if self.config.answer_guards {
            if let Some(why) = not_an_answer(text, &self.tool_names) {
                return Some(Held::NotAnAnswer(why));
            }
            if let Some(file) = &run.output_file {
                if missing_output(self.executor.workspace.root(), file) {
                    return Some(Held::MissingOutput(file.clone()));
                }
            }
        }
        let unverified = &run.memory.unverified_edits;
        (self.config.verification_guard && !unverified.is_empty())
            .then(|| Held::Unverified(unverified.iter().cloned().collect()))
    }
}

fn first_line(text: &str) -> String {
    let line = text.lines().next().unwrap_or_default();
    line.chars().take(120).collect()
}
