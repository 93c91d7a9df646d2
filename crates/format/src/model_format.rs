//! A model's chat format from its GGUF metadata: the chat template (ChatML when the
//! model has none), the tool-call family it implies, and the special tokens the
//! template writes. [`ModelFormat::prepare`] turns a turn into a prompt and a decoding
//! constraint; [`ModelFormat::reader`] reads the reply (see `prepare` and `read`).

use crate::{ChatTemplate, Family, Literals, TemplateError, ToolFormat, CHATML_TEMPLATE};

/// How a model's prompts are written and its calls read.
#[derive(Debug)]
pub struct ModelFormat {
    /// The compiled chat template.
    pub template: ChatTemplate,
    /// The tool-call family.
    pub family: Family,
    /// The BOS token's text, for templates that write it.
    pub bos_token: String,
    /// The EOS token's text.
    pub eos_token: String,
    /// The model's control-token texts: where content holds one, it is tokenized as
    /// plain text (see [`crate::PreparedTurn::literal`]).
    pub literals: Literals,
}

impl ModelFormat {
    /// The format of a model with `chat_template` (`tokenizer.chat_template`) and
    /// `architecture` (`general.architecture`); no special token texts.
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
            bos_token: String::new(),
            eos_token: String::new(),
            literals: Literals::default(),
        })
    }

    /// The same format with the model's BOS and EOS token texts.
    pub fn with_special_tokens(mut self, bos: &str, eos: &str) -> Self {
        self.bos_token = bos.to_string();
        self.eos_token = eos.to_string();
        self
    }

    /// The same format with the model's control-token texts (its control and
    /// user-defined tokens), which content may then hold only as plain text.
    pub fn with_control_texts(mut self, texts: impl IntoIterator<Item = String>) -> Self {
        self.literals = Literals::new(texts);
        self
    }

    /// Whether the template renders the tools itself under `tool_format` (native), or
    /// they are taught in the system prompt (emulated). The one place that decides.
    pub fn native_tools(&self, tool_format: ToolFormat) -> bool {
        self.template.supports_tools() && tool_format == ToolFormat::Native
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
