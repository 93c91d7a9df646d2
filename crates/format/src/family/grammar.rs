//! Call grammars shared by the families: one branch per offered tool (so only
//! existing names can be written), each tool's arguments from its canonical schema in
//! the family's value syntax, calls repeated up to [`MAX_PARALLEL_CALLS`] when parallel
//! calls are allowed.

use rein_protocol::Grammar;
use rein_schema::gbnf::{alt, ch, chars, group, lit, repeat, rule_name, seq, Item, Repeat};
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
    /// Under `auto`, also decode calls the model writes as JSON in its own wrappers
    /// (fences, `<tools>`, bare at the reply's start) once their opening names a tool.
    pub wrappers: bool,
    /// Under `auto`, decode the whole reply from its first token as either the
    /// family's calls or prose that opens no call (no lazy triggers, no wrappers): a
    /// call can only be written in the template's format.
    pub call_or_answer: bool,
}

/// The grammar for `choice` over `tools` in `form`; `None` when unconstrained.
pub(crate) fn call_grammar(
    tools: &ToolSet,
    choice: &ToolChoice,
    parallel: bool,
    form: &CallForm<'_>,
) -> Option<Grammar> {
    let call_or_answer = form.call_or_answer && *choice == ToolChoice::Auto;
    let wrappers = form.wrappers && *choice == ToolChoice::Auto && !call_or_answer;
    let offered = tools.offered(choice);
    if offered.is_empty() {
        return None;
    }
    let mut builder = GrammarBuilder::new();
    let arguments: Vec<Item> = offered
        .iter()
        .map(|tool| {
            builder.schema(
                &tool.sanitized.schema,
                &format!("args-{}", rule_name(&tool.name)),
                form.values,
            )
        })
        .collect();
    let branches: Vec<_> = offered
        .iter()
        .zip(&arguments)
        .map(|(tool, args)| {
            let mut body = vec![
                lit(&format!("{}{}", tool.name, form.after_name)),
                args.clone(),
            ];
            if !form.after_arguments.is_empty() {
                body.push(lit(&form.after_arguments));
            }
            let branch = builder.rule(&format!("tool-{}", rule_name(&tool.name)), seq(body));
            seq([branch])
        })
        .collect();
    let body = builder.rule("call-body", rein_schema::gbnf::one_of(branches));
    let wrapped = wrappers.then(|| wrapped_calls(&mut builder, &offered, &arguments, parallel));
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
    let mut triggers = match choice {
        ToolChoice::Auto if !call_or_answer => form.triggers.clone(),
        _ => Vec::new(),
    };
    let root = match wrapped {
        None if call_or_answer => {
            let answer = builder.rule("answer", seq([crate::prose::prose_item()]));
            alt([seq([calls]), seq([answer])])
        }
        Some(wrapped) => {
            let names: Vec<&str> = offered.iter().map(|t| t.name.as_str()).collect();
            triggers.extend(wrapper_triggers(&names));
            alt([seq([calls]), seq([wrapped])])
        }
        None => calls,
    };
    Some(Grammar {
        gbnf: builder.build(root, form.values),
        root: "root".into(),
        lazy_triggers: triggers,
    })
}

/// Calls as JSON objects in the wrappers models write instead of the markers: in a
/// fence, in `<tools>` tags, or bare; an array of them or one after another. The
/// whitespace is free up to the tool's name (the text before a trigger was written
/// unconstrained); the arguments follow the tool's schema.
fn wrapped_calls(
    builder: &mut GrammarBuilder,
    offered: &[&crate::PreparedTool],
    arguments: &[Item],
    parallel: bool,
) -> Item {
    let space = builder.rule(
        "fws",
        seq([chars(
            vec![ch(' '), ch('\t'), ch('\n')],
            false,
            repeat(0, Some(32)),
        )]),
    );
    let branches: Vec<_> = offered
        .iter()
        .zip(arguments)
        .map(|(tool, args)| {
            let body = seq([
                lit(&format!("{}\"", tool.name)),
                space.clone(),
                lit(","),
                space.clone(),
                lit("\"arguments\""),
                space.clone(),
                lit(":"),
                space.clone(),
                args.clone(),
                space.clone(),
                lit("}"),
            ]);
            seq([builder.rule(&format!("wtool-{}", rule_name(&tool.name)), body)])
        })
        .collect();
    let body = builder.rule("wcall-body", rein_schema::gbnf::one_of(branches));
    let call = builder.rule(
        "wcall",
        seq([
            lit("{"),
            space.clone(),
            lit("\"name\""),
            space.clone(),
            lit(":"),
            space.clone(),
            lit("\""),
            body,
        ]),
    );
    let more = |separator: Vec<Item>| {
        let mut next = separator;
        next.push(call.clone());
        group(seq(next), repeat(0, Some(MAX_PARALLEL_CALLS as u64 - 1)))
    };
    let mut listed = vec![call.clone()];
    let mut array = vec![lit("["), space.clone(), call.clone()];
    if parallel {
        listed.push(more(vec![space.clone(), optional(","), space.clone()]));
        array.push(more(vec![space.clone(), lit(","), space.clone()]));
    }
    array.extend([space.clone(), lit("]")]);
    let calls = builder.rule("wcalls", seq([alt([seq(array), seq(listed)])]));
    let fence = seq([
        lit("```"),
        group(
            rein_schema::gbnf::one_of([seq([lit("json")]), seq([lit("JSON")])]),
            Repeat::ZeroOrOne,
        ),
        space.clone(),
        calls.clone(),
        space.clone(),
        lit("```"),
    ]);
    let tagged = seq([
        lit("<tools>"),
        space.clone(),
        calls.clone(),
        space.clone(),
        lit("</tools>"),
    ]);
    builder.rule(
        "wrapped",
        rein_schema::gbnf::one_of([fence, tagged, seq([calls])]),
    )
}

/// What switches the grammar on for wrapped calls: a fence or `<tools>` tag anywhere,
/// or a JSON object at the reply's start, whose `"name"` is an offered tool's.
fn wrapper_triggers(names: &[&str]) -> Vec<String> {
    let names = names
        .iter()
        .map(|n| crate::hermes::regex_escape(n))
        .collect::<Vec<_>>()
        .join("|");
    let call = format!(r#"\[?\s*\{{\s*"name"\s*:\s*"(?:{names})""#);
    vec![
        format!(r#"(```(?:json|JSON)?\s*{call})"#),
        format!(r#"(<tools>\s*{call})"#),
        format!(r#"^\s*({call})[\s\S]*$"#),
    ]
}

/// An optional literal.
pub(crate) fn optional(text: &str) -> Item {
    rein_schema::gbnf::lit_rep(text, Repeat::ZeroOrOne)
}
