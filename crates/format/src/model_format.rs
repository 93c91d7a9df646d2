//! A model's chat format from its GGUF metadata: the chat template (ChatML when the
//! model has none) and the tool-call family it implies.

use crate::{ChatTemplate, Family, TemplateError, ToolFormat, CHATML_TEMPLATE};

/// How a model's prompts are written and its calls read.
#[derive(Debug)]
pub struct ModelFormat {
    /// The compiled chat template.
    pub template: ChatTemplate,
    /// The tool-call family.
    pub family: Family,
}

impl ModelFormat {
    /// The format of a model with `chat_template` (`tokenizer.chat_template`) and
    /// `architecture` (`general.architecture`).
    pub fn detect(chat_template: Option<&str>, architecture: &str) -> Result<Self, TemplateError> {
        let source = chat_template.unwrap_or_else(|| {
            tracing::warn!("the model has no chat template; using ChatML");
            CHATML_TEMPLATE
        });
        let family = Family::detect(source, architecture);
        tracing::debug!(family = family.as_str(), "tool-call family");
        Ok(Self {
            template: ChatTemplate::new(source)?,
            family,
        })
    }

    /// Whether the template renders the tools itself under `tool_format` (native), or
    /// they are taught in the system prompt (emulated); logs the choice.
    pub fn native_tools(&self, tool_format: ToolFormat) -> bool {
        let native = self.template.supports_tools() && tool_format == ToolFormat::Native;
        tracing::info!(
            family = self.family.as_str(),
            tool_format = if native { "native" } else { "emulated" },
            "tool calls"
        );
        native
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_model_without_a_template_gets_chatml_and_the_generic_family() {
        let format = ModelFormat::detect(None, "llama").unwrap();
        assert!(!format.template.supports_tools());
        assert_eq!(format.family, Family::detect(CHATML_TEMPLATE, "llama"));
    }
}
