//! The one turn preparer: a conversation, the offered tools and the turn's shape
//! become the prompt text, the decoding constraint and the stop strings. The local
//! backend, `rein serve`, `rein chat` and the tests all prepare turns here, so native
//! vs emulated tool calling is decided in one place ([`ModelFormat::native_tools`]).

use rein_protocol::{Grammar, Message, Role, ToolChoice};
use rein_schema::Schema;
use serde_json::Value;

use crate::literal::{self, Literals};
use crate::{
    DescriptionStyle, Family, ModelFormat, RenderContext, TemplateError, ToolFormat, ToolSet,
};

/// What one turn asks of the model, before any model-specific text exists.
#[derive(Debug, Clone, Copy)]
pub struct TurnSpec<'a> {
    /// The conversation (tool calls and results as structured messages).
    pub messages: &'a [Message],
    /// The tools the prompt offers; `None` when the caller describes tools itself (or
    /// there are none).
    pub tools: Option<&'a ToolSet>,
    /// Which calls the turn allows (what the grammar enforces).
    pub choice: &'a ToolChoice,
    /// Native calling when the template can render tools, or always emulated.
    pub tool_format: ToolFormat,
    /// How emulated tools are described.
    pub describe: DescriptionStyle,
    /// Decode under the family's call grammar.
    pub constrained: bool,
    /// Several calls in one reply.
    pub parallel: bool,
    /// Without calls, a reply of this schema (decoded under its grammar).
    pub response: Option<&'a Schema>,
    /// Show an example of several calls in one reply (callers set it when parallel
    /// calls are allowed; it does not follow `parallel`, so a single-call retry keeps
    /// the prompt's cached prefix): small models otherwise make one call where several
    /// are needed.
    pub call_example: bool,
    /// Decode calls the model writes in its own wrappers under the tool grammar too.
    pub wrapper_grammar: bool,
    /// Decode an `auto` turn from its first token as calls or an answer
    /// ([`crate::AutoGrammar::CallOrAnswer`]); before `wrapper_grammar`.
    pub call_or_answer: bool,
    /// The reply must be prose: without another grammar, it is decoded under
    /// [`crate::prose_grammar`] (it may not open with a call wrapper).
    pub prose: bool,
    /// Strings that end the reply.
    pub stop: &'a [String],
}

impl<'a> TurnSpec<'a> {
    /// A plain turn: `messages`, no tools, no constraint.
    pub fn plain(messages: &'a [Message]) -> Self {
        const AUTO: &ToolChoice = &ToolChoice::Auto;
        TurnSpec {
            messages,
            tools: None,
            choice: AUTO,
            tool_format: ToolFormat::Native,
            describe: DescriptionStyle::Full,
            constrained: false,
            parallel: true,
            response: None,
            call_example: false,
            wrapper_grammar: true,
            call_or_answer: false,
            prose: false,
            stop: &[],
        }
    }

    /// Whether the model may call tools this turn.
    pub fn offers_tools(&self) -> bool {
        *self.choice != ToolChoice::None && self.tools.is_some_and(|t| !t.is_empty())
    }
}

/// A turn ready for the engine.
#[derive(Debug, Clone, PartialEq)]
pub struct PreparedTurn {
    /// The messages as the template received them (emulated history rewritten, the
    /// taught tool syntax in the system message).
    pub messages: Vec<Message>,
    /// The tool definitions the template rendered itself (native calling).
    pub tools: Option<Vec<Value>>,
    /// The prompt text.
    pub prompt: String,
    /// Byte ranges of `prompt` holding control-token texts that came from content
    /// (messages, calls, tool definitions), not from the template: they are tokenized
    /// as plain text. Empty for ordinary content.
    pub literal: Vec<std::ops::Range<usize>>,
    /// The decoding constraint.
    pub grammar: Option<Grammar>,
    /// Strings that end the reply.
    pub stops: Vec<String>,
    /// Whether the template rendered the tools (native) or they were taught.
    pub native: bool,
}

impl ModelFormat {
    /// Prepares `turn`: native tools rendered by the template, or taught in the system
    /// prompt in the family's syntax with the history rewritten; the call grammar of
    /// the offered tools, else the response schema's, else none.
    pub fn prepare(&self, turn: &TurnSpec<'_>) -> Result<PreparedTurn, TemplateError> {
        let native = self.native_tools(turn.tool_format);
        let marked = plan_marked(self.family, native, turn, &self.literals);
        let rendered = self.template.render(&RenderContext {
            messages: &marked.messages,
            tools: marked.tools.as_deref(),
            add_generation_prompt: true,
            bos_token: &self.bos_token,
            eos_token: &self.eos_token,
        })?;
        let (prompt, literal) = literal::split(&rendered);
        let plan = if self.literals.is_empty() || literal.is_empty() {
            marked
        } else {
            // The messages and definitions as the caller sees them, without marks.
            self.plan(turn)
        };
        Ok(PreparedTurn {
            prompt,
            literal,
            ..plan
        })
    }

    /// [`Self::prepare`] without the rendering (the prompt is empty).
    pub fn plan(&self, turn: &TurnSpec<'_>) -> PreparedTurn {
        plan_turn(self.family, self.native_tools(turn.tool_format), turn)
    }
}

/// The messages, definitions, grammar and stops of `turn` for a model of `family`
/// whose side renders tools itself when `native` (a template that can, or a remote
/// server); the prompt is left empty. Backends that send messages, not text, use this.
pub fn plan_turn(family: Family, native: bool, turn: &TurnSpec<'_>) -> PreparedTurn {
    plan_marked(family, native, turn, &Literals::default())
}

/// [`plan_turn`] with every string from outside (messages, calls, definitions)
/// passed through `literals` (their control-token texts marked).
fn plan_marked(
    family: Family,
    native: bool,
    turn: &TurnSpec<'_>,
    literals: &Literals,
) -> PreparedTurn {
    let native = native && turn.tool_format == ToolFormat::Native;
    let offered = turn.offers_tools().then_some(turn.tools).flatten();
    // Without control texts a mark is a plain copy.
    let given: Vec<Message> = turn
        .messages
        .iter()
        .map(|m| literals.mark_message(m))
        .collect();
    let (mut messages, tools) = match offered {
        Some(set) if native => (given, Some(offered_definitions(set, turn.choice, literals))),
        Some(set) => {
            let mut messages = family.emulate_history(&given);
            teach(
                &mut messages,
                &taught_marked(family, set, turn.choice, turn.describe, literals),
            );
            (messages, None)
        }
        None if native => (given, None),
        None => (family.emulate_history(&given), None),
    };
    if let Some(example) = offered
        .filter(|_| turn.call_example)
        .and_then(|set| parallel_example(family, set, turn.choice, literals))
    {
        teach(&mut messages, &example);
    }
    let grammar = match offered {
        Some(set) if turn.constrained => {
            let auto = if turn.call_or_answer {
                crate::AutoGrammar::CallOrAnswer
            } else if turn.wrapper_grammar {
                crate::AutoGrammar::LazyWithWrappers
            } else {
                crate::AutoGrammar::Lazy
            };
            family.call_grammar_with(set, turn.choice, turn.parallel, auto)
        }
        _ => turn
            .response
            .map(|schema| Grammar::strict(rein_schema::schema_grammar(schema)))
            .or_else(|| turn.prose.then(crate::prose_grammar)),
    };
    PreparedTurn {
        messages,
        tools,
        prompt: String::new(),
        literal: Vec::new(),
        grammar,
        stops: turn.stop.to_vec(),
        native: native && offered.is_some(),
    }
}

/// The system-prompt text that teaches `family`'s call syntax and lists the tools
/// offered under `choice` in `style`.
pub fn taught_tools(
    family: Family,
    tools: &ToolSet,
    choice: &ToolChoice,
    style: DescriptionStyle,
) -> String {
    taught_marked(family, tools, choice, style, &Literals::default())
}

/// [`taught_tools`] with the tools' own text (definitions, signatures) marked.
fn taught_marked(
    family: Family,
    tools: &ToolSet,
    choice: &ToolChoice,
    style: DescriptionStyle,
    literals: &Literals,
) -> String {
    match style {
        DescriptionStyle::Full => {
            family.emulated_instructions(&offered_definitions(tools, choice, literals))
        }
        DescriptionStyle::Compact => {
            let mut text = family.emulated_instructions(&[]);
            let shown = match choice {
                ToolChoice::None => Vec::new(),
                _ => tools.listed().iter().collect::<Vec<_>>(),
            };
            let lines: Vec<String> = shown
                .iter()
                .map(|t| literals.mark(&crate::signature::signature(&t.spec)))
                .collect();
            text.push_str(&lines.join("\n"));
            text
        }
    }
}

/// A line that asks for every needed call in one reply, with two calls of the first
/// offered tool that takes an argument written in the family's syntax (placeholder
/// values), or `None` when no offered tool takes one.
fn parallel_example(
    family: Family,
    tools: &ToolSet,
    choice: &ToolChoice,
    literals: &Literals,
) -> Option<String> {
    let (tool, property, kind) = tools.offered(choice).into_iter().find_map(|tool| {
        let schema = tool.spec.function.parameters.as_ref()?;
        let required = schema.get("required")?.as_array()?;
        let name = required.first()?.as_str()?;
        let kind = schema.pointer(&format!(
            "/properties/{}/type",
            name.replace('~', "~0").replace('/', "~1")
        ))?;
        Some((
            literals.mark(&tool.name),
            literals.mark(name),
            kind.as_str().unwrap_or("string").to_string(),
        ))
    })?;
    let value = |n: u8| match kind.as_str() {
        "integer" | "number" => Value::from(n),
        _ => Value::String(format!("{} item", if n == 1 { "first" } else { "second" })),
    };
    let call = |n| {
        let mut arguments = serde_json::Map::new();
        arguments.insert(property.clone(), value(n));
        Value::Object(arguments)
    };
    let (first, second) = (call(1), call(2));
    let calls = family.calls_text(&[(tool.as_str(), &first), (tool.as_str(), &second)]);
    Some(format!(
        "When a request needs several calls, write them all in one reply, one after another. For example, a request about two items gets:\n{calls}"
    ))
}

/// The sanitized definitions of the tools `choice` offers, their strings marked.
fn offered_definitions(tools: &ToolSet, choice: &ToolChoice, literals: &Literals) -> Vec<Value> {
    let offered: Vec<&str> = tools
        .offered(choice)
        .iter()
        .map(|t| t.name.as_str())
        .collect();
    tools
        .definitions()
        .into_iter()
        .filter(|d| {
            d.pointer("/function/name")
                .and_then(Value::as_str)
                .is_some_and(|name| offered.contains(&name))
        })
        .map(|d| {
            if literals.is_empty() {
                d
            } else {
                literals.mark_value(&d)
            }
        })
        .collect()
}

/// Appends `taught` to the first system message, or starts the conversation with one.
fn teach(messages: &mut Vec<Message>, taught: &str) {
    match messages.first_mut() {
        Some(first) if first.role == Role::System => {
            let text = first.content.get_or_insert_with(String::new);
            text.push_str("\n\n");
            text.push_str(taught);
        }
        _ => messages.insert(0, Message::system(taught)),
    }
}
