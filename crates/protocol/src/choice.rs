//! Which calls a turn allows: the OpenAI `tool_choice` values.

use std::str::FromStr;

/// Which calls the model may make this turn.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum ToolChoice {
    /// A plain answer or calls.
    #[default]
    Auto,
    /// No calls.
    None,
    /// At least one call.
    Required,
    /// A call of this tool.
    Named(String),
}

impl ToolChoice {
    /// Whether the reply must be calls.
    pub fn requires_call(&self) -> bool {
        matches!(self, ToolChoice::Required | ToolChoice::Named(_))
    }
}

impl FromStr for ToolChoice {
    type Err = std::convert::Infallible;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Ok(match s {
            "auto" => ToolChoice::Auto,
            "none" => ToolChoice::None,
            "required" | "any" => ToolChoice::Required,
            name => ToolChoice::Named(name.to_string()),
        })
    }
}
