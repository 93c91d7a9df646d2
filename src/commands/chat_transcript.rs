//! The conversation of a `rein chat` session: its system message, messages and tools,
//! and how `/save` writes it to a JSON file and `/load` reads it back.

use std::path::Path;

use anyhow::Context;
use rein_protocol::{Message, Role, ToolSpec};
use serde::{Deserialize, Serialize};

/// What a session remembers and `/save` writes.
#[derive(Debug, Default, Clone, PartialEq, Serialize, Deserialize)]
pub struct Conversation {
    /// The system message, when one is set.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub system: Option<String>,
    /// The user's and the model's messages, oldest first (no system message).
    #[serde(default)]
    pub messages: Vec<Message>,
    /// The tools offered, as OpenAI-style specs.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tools: Vec<ToolSpec>,
}

impl Conversation {
    /// The messages a turn sends: the system message first, then the conversation.
    pub fn request_messages(&self) -> Vec<Message> {
        let mut messages = Vec::with_capacity(self.messages.len() + 1);
        if let Some(system) = &self.system {
            messages.push(Message::system(system.clone()));
        }
        messages.extend(self.messages.iter().cloned());
        messages
    }

    /// Removes the oldest exchange (a user message and every reply up to the next user
    /// message); false when only the latest message is left.
    pub fn drop_oldest_exchange(&mut self) -> bool {
        if self.messages.len() <= 1 {
            return false;
        }
        let next_user = self
            .messages
            .iter()
            .skip(1)
            .position(|m| m.role == Role::User)
            .map(|i| i + 1);
        match next_user {
            Some(end) if end < self.messages.len() => {
                self.messages.drain(..end);
                true
            }
            _ => false,
        }
    }

    /// Writes the conversation to `path` as pretty JSON, atomically.
    pub fn save(&self, path: &Path) -> anyhow::Result<()> {
        let text = serde_json::to_string_pretty(self)?;
        rein_tools::write_atomically(path, text.as_bytes())
            .with_context(|| format!("cannot write {}", path.display()))
    }

    /// Reads a conversation `save` wrote; a file of another shape is an error that says
    /// which shape is wanted.
    pub fn load(path: &Path) -> anyhow::Result<Self> {
        let text = std::fs::read_to_string(path)
            .with_context(|| format!("cannot read {}", path.display()))?;
        let conversation: Conversation = serde_json::from_str(&text).with_context(|| {
            format!(
                "{} is not a saved conversation (a JSON object with `messages`, and optionally `system` and `tools`)",
                path.display()
            )
        })?;
        if conversation.messages.iter().any(|m| m.role == Role::System) {
            anyhow::bail!(
                "{}: a system message belongs in `system`, not among `messages`",
                path.display()
            );
        }
        Ok(conversation)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn exchange(question: &str, answer: &str) -> [Message; 2] {
        [Message::user(question), Message::assistant(answer)]
    }

    #[test]
    fn saved_conversations_load_back_whole() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("conversation.json");
        let conversation = Conversation {
            system: Some("Be brief.".into()),
            messages: exchange("Hi", "Hello!").to_vec(),
            tools: Vec::new(),
        };
        conversation.save(&path).unwrap();
        assert_eq!(Conversation::load(&path).unwrap(), conversation);
        let messages = conversation.request_messages();
        assert_eq!(messages.len(), 3);
        assert_eq!(messages[0].role, Role::System);
    }

    #[test]
    fn other_files_are_refused_with_the_shape_wanted() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("other.json");
        std::fs::write(&path, "[1, 2]").unwrap();
        let error = format!("{:#}", Conversation::load(&path).unwrap_err());
        assert!(error.contains("not a saved conversation"), "{error}");
        std::fs::write(
            &path,
            r#"{"messages": [{"role": "system", "content": "x"}]}"#,
        )
        .unwrap();
        let error = format!("{:#}", Conversation::load(&path).unwrap_err());
        assert!(error.contains("belongs in `system`"), "{error}");
        let missing = format!(
            "{:#}",
            Conversation::load(&dir.path().join("no.json")).unwrap_err()
        );
        assert!(missing.contains("cannot read"), "{missing}");
    }

    #[test]
    fn the_oldest_exchange_goes_first_and_the_latest_message_stays() {
        let mut conversation = Conversation::default();
        conversation.messages.extend(exchange("one", "1"));
        conversation.messages.extend(exchange("two", "2"));
        conversation.messages.push(Message::user("three"));
        assert!(conversation.drop_oldest_exchange());
        assert_eq!(conversation.messages[0].content.as_deref(), Some("two"));
        assert!(conversation.drop_oldest_exchange());
        assert_eq!(conversation.messages.len(), 1);
        assert!(!conversation.drop_oldest_exchange());
    }
}
