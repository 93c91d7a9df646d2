//! How a turn's calls and their results enter the conversation: as an assistant
//! message with structured calls and one tool message per result (the chat
//! template's own shape).

use rein_protocol::{Message, ToolCall};

use crate::profile::Exchange;

/// The assistant's calls as one message, then each result as a tool message.
pub(crate) fn record_structured(exchange: Exchange<'_>, history: &mut Vec<Message>) {
    let content = exchange.content.unwrap_or_default();
    history.push(Message {
        tool_calls: exchange
            .calls
            .iter()
            .map(|c| ToolCall::function(c.id.clone(), c.name.clone(), c.arguments.clone()))
            .collect(),
        content: (!content.is_empty()).then(|| content.to_string()),
        ..Message::assistant("")
    });
    for (call, text) in exchange.calls.iter().zip(exchange.results) {
        history.push(Message::tool_result(&call.id, &call.name, text.clone()));
    }
}
