//! Call grammars shared by the families: one branch per offered tool (so only
//! existing names can be written), each tool's arguments from its canonical schema in
//! the family's value syntax, calls repeated up to [`MAX_PARALLEL_CALLS`] when parallel
//! calls are allowed.

use rein_protocol::Grammar;
use rein_schema::gbnf::{group, lit, repeat, rule_name, seq, Item, Repeat};
use rein_schema::{GrammarBuilder, ValueSyntax};

use crate::hermes::MAX_PARALLEL_CALLS;
use crate::{ToolChoice, ToolSet};

/// How one family writes calls.
pub(crate) struct CallForm<'a> {
    /// What comes before the tool's name.
    pub before_name: Vec<Item>,
    /// The text between the name and the arguments.
    pub after_name: String,
    /// The text after the arguments.
    pub after_arguments: String,
    /// What comes before the first call.
    pub prefix: Vec<Item>,
    /// What comes between calls.
    pub separator: Vec<Item>,
    /// Regular expressions that switch an `auto` grammar on.
    pub triggers: Vec<String>,
    /// How argument values are written.
    pub values: &'a dyn ValueSyntax,
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
    let branches: Vec<_> = offered
        .iter()
        .map(|tool| {
            let args = builder.schema(
                &tool.sanitized.schema,
                &format!("args-{}", rule_name(&tool.name)),
                form.values,
            );
            let mut body = vec![lit(&format!("{}{}", tool.name, form.after_name)), args];
            if !form.after_arguments.is_empty() {
                body.push(lit(&form.after_arguments));
            }
            let branch = builder.rule(&format!("tool-{}", rule_name(&tool.name)), seq(body));
            seq([branch])
        })
        .collect();
    let body = builder.rule("call-body", rein_schema::gbnf::one_of(branches));
    let mut call = form.before_name.clone();
    call.push(body);
    let call = builder.rule("call", seq(call));
    let mut calls = form.prefix.clone();
    calls.push(call.clone());
    if parallel {
        let mut next = form.separator.clone();
        next.push(call);
        let more = repeat(0, Some(MAX_PARALLEL_CALLS as u64 - 1));
        calls.push(group(seq(next), more));
    }
    let calls = builder.rule("calls", seq(calls));
    Some(Grammar {
        gbnf: builder.build(calls, form.values),
        root: "root".into(),
        lazy_triggers: match choice {
            ToolChoice::Auto => form.triggers.clone(),
            _ => Vec::new(),
        },
    })
}

/// An optional literal.
pub(crate) fn optional(text: &str) -> Item {
    rein_schema::gbnf::lit_rep(text, Repeat::ZeroOrOne)
}
