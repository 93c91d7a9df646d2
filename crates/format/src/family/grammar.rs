//! Call grammars shared by the families: one branch per offered tool (so only
//! existing names can be written), each tool's arguments from its canonical schema,
//! calls repeated up to [`MAX_PARALLEL_CALLS`] when parallel calls are allowed.

use rein_protocol::Grammar;
use rein_schema::{literal, rule_name, GrammarBuilder};

use crate::hermes::MAX_PARALLEL_CALLS;
use crate::{ToolChoice, ToolSet};

/// How one family writes calls.
pub(crate) struct CallForm<'a> {
    /// A GBNF expression before the tool's name.
    pub before_name: String,
    /// The text between the name and the arguments.
    pub after_name: &'a str,
    /// The text after the arguments.
    pub after_arguments: &'a str,
    /// A GBNF expression before the first call (empty for none).
    pub prefix: &'a str,
    /// A GBNF expression between calls.
    pub separator: &'a str,
    /// Regular expressions that switch an `auto` grammar on.
    pub triggers: Vec<String>,
}

/// The grammar for `choice` over `tools` in `form`; `None` when unconstrained.
pub(crate) fn call_grammar(
    tools: &ToolSet,
    choice: &ToolChoice,
    parallel: bool,
    form: &CallForm<'_>,
) -> Option<Grammar> {
    let offered = tools.offered(choice);
    if offered.is_empty() {
        return None;
    }
    let mut builder = GrammarBuilder::new();
    let branches: Vec<String> = offered
        .iter()
        .map(|tool| {
            let args = builder.schema(
                &tool.sanitized.schema,
                &format!("args-{}", rule_name(&tool.name)),
            );
            let head = literal(&format!("{}{}", tool.name, form.after_name));
            let tail = match form.after_arguments {
                "" => String::new(),
                text => literal(text),
            };
            builder.rule(
                &format!("tool-{}", rule_name(&tool.name)),
                format!("{head} {args} {tail}").trim_end().to_string(),
            )
        })
        .collect();
    let body = builder.rule("call-body", branches.join(" | "));
    let call = builder.rule("call", format!("{} {body}", form.before_name));
    let repeated = if parallel {
        format!(
            "{call} ( {} {call} ){{0,{}}}",
            form.separator,
            MAX_PARALLEL_CALLS - 1
        )
    } else {
        call
    };
    let root = format!("{} {repeated}", form.prefix)
        .trim_start()
        .to_string();
    let calls = builder.rule("calls", root);
    Some(Grammar {
        gbnf: builder.build(&calls),
        root: "root".into(),
        lazy_triggers: match choice {
            ToolChoice::Auto => form.triggers.clone(),
            _ => Vec::new(),
        },
    })
}
