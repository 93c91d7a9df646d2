//! Hidden tools put in front of the model before it asks (`full`, `tool_preview`): a
//! run whose listed tools include a finder of hidden tools (`tool_search`, standing for
//! an MCP server's many tools) starts with that finder's search for the task's own
//! words, run by the harness. The conversation opens with that call and its result —
//! the tools that best match, with their signatures — and those tools are callable
//! from the first turn. A small model seldom thinks of searching for tools; here the
//! search is a step it finds already taken, in its own template's shape.

use rein_engine::Backend;
use rein_protocol::EventSink;
use serde_json::json;

use crate::agent::Agent;
use crate::profile::Exchange;
use crate::state::RunState;
use crate::validate::ReadyCall;

impl<B: Backend> Agent<B> {
    /// Runs the finder of hidden tools with the task as its query, when one is
    /// listed, and records the exchange as the conversation's first.
    pub(crate) async fn preview_tools(&mut self, run: &mut RunState, events: &mut dyn EventSink) {
        let finder = self
            .executor
            .registry
            .tools()
            .iter()
            .find(|tool| tool.finds_tools() && !tool.deferred())
            .map(|tool| tool.name().to_string());
        let Some(finder) = finder.filter(|name| self.tool_names.contains(name)) else {
            return;
        };
        run.call_ids += 1;
        let call = ReadyCall {
            id: format!("call_{}", run.call_ids),
            name: finder,
            arguments: json!({ "query": run.task() }),
        };
        let calls = [call];
        events.emit(&ReadyCall::event(0, &calls));
        let mut outcomes = self.executor.run(&calls, 0, &mut run.memory, events).await;
        let Some(outcome) = outcomes.first_mut() else {
            return;
        };
        if !outcome.ok || outcome.reveals.is_empty() {
            return;
        }
        let names = std::mem::take(&mut outcome.reveals);
        if self.reveal(&names).is_err() {
            return;
        }
        let results = [outcome.text.clone()];
        run.results_seen.extend(results.iter().cloned());
        self.strategy.record(
            Exchange {
                raw: "",
                content: None,
                calls: &calls,
                results: &results,
            },
            &mut run.history,
        );
    }
}
