//! Runs that go on from a conversation: a run resumed from the trace of one that
//! stopped (`rein run --resume`), and a follow-up task after an answer in an agent
//! session (`rein run -i`), where the conversation — and so the model's cached prefix —
//! is kept.

use rein_engine::Backend;
use rein_protocol::{EventSink, Message, RunEvent, RunResult};

use crate::agent::Agent;

impl<B: Backend> Agent<B> {
    /// Goes on with `task` from `history`, the conversation an earlier run of it
    /// recorded when it stopped (`from` names that run's trace): the calls it made are
    /// not made again, and the budgets start afresh.
    pub async fn resume_with(
        &mut self,
        task: &str,
        history: Vec<Message>,
        from: &str,
        events: &mut dyn EventSink,
    ) -> RunResult {
        self.go_on(task, history, Some(from), events).await
    }

    /// Works on the user's next `task` after an earlier one was answered: `history` is
    /// the conversation so far, the new request last. The checks of the loop read
    /// `task`; the budgets start afresh.
    pub async fn follow_up(
        &mut self,
        task: &str,
        history: Vec<Message>,
        events: &mut dyn EventSink,
    ) -> RunResult {
        self.go_on(task, history, None, events).await
    }

    /// A run of `task` that starts from `history` instead of the opening conversation
    /// (the history of the run the trace `resumed` names, when given).
    async fn go_on(
        &mut self,
        task: &str,
        history: Vec<Message>,
        resumed: Option<&str>,
        events: &mut dyn EventSink,
    ) -> RunResult {
        self.forget_revealed();
        let mut run = self.start(task, events);
        if let Some(from) = resumed {
            events.emit(&RunEvent::Resumed {
                from: from.to_string(),
                messages: history.len(),
            });
        }
        // New calls are numbered after the earlier ones.
        run.call_ids = history
            .iter()
            .flat_map(|message| &message.tool_calls)
            .filter_map(|call| call.id.as_deref()?.strip_prefix("call_")?.parse().ok())
            .max()
            .unwrap_or(0);
        run.history = history;
        self.drive(run, events).await
    }
}
