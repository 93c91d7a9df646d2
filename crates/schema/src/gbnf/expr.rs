//! Grammar expressions as the `gbnf` crate's typed values: literals, rule references,
//! character sets, sequences, alternatives and repetitions. The crate renders them;
//! two things it leaves to its caller are handled here: a literal's text is escaped
//! (the crate writes terminals verbatim), and an alternation inside a sequence is put
//! in a group (the crate writes `a | b` without brackets).

use gbnf::{CharacterSet, NonTerminalSymbol, TerminalSymbol};
pub use gbnf::{CharacterSetItem, Production, ProductionItem as Item, RepetitionType as Repeat};

/// A literal: exactly `text`.
pub fn lit(text: &str) -> Item {
    Item::Terminal(
        TerminalSymbol {
            value: escape(text),
        },
        Repeat::One,
    )
}

/// A literal repeated `repeat`.
pub fn lit_rep(text: &str, repeat: Repeat) -> Item {
    Item::Terminal(
        TerminalSymbol {
            value: escape(text),
        },
        repeat,
    )
}

/// A reference to the rule `name`.
pub fn rule(name: &str) -> Item {
    rule_rep(name, Repeat::One)
}

/// A reference to the rule `name`, repeated.
pub fn rule_rep(name: &str, repeat: Repeat) -> Item {
    Item::NonTerminal(
        NonTerminalSymbol {
            name: name.to_string(),
        },
        repeat,
    )
}

/// Characters from `items` (`negated`: any other character), repeated.
pub fn chars(items: Vec<CharacterSetItem>, negated: bool, repeat: Repeat) -> Item {
    Item::CharacterSet(
        CharacterSet {
            is_complement: negated,
            items,
        },
        repeat,
    )
}

/// The characters of a `[a-b]` range.
pub fn range(from: char, to: char) -> CharacterSetItem {
    CharacterSetItem::CharacterRange(from, to)
}

/// One character of a set (`\` is written as the set's escape).
pub fn ch(c: char) -> CharacterSetItem {
    match c {
        '\\' => CharacterSetItem::Backslash,
        '\n' => CharacterSetItem::NewLine,
        '\t' => CharacterSetItem::Tab,
        '\r' => CharacterSetItem::Return,
        c => CharacterSetItem::Character(c),
    }
}

/// Items one after another.
pub fn seq(items: impl IntoIterator<Item = Item>) -> Production {
    Production {
        items: items.into_iter().collect(),
    }
}

/// One of several productions (a rule body); a single option is itself.
pub fn one_of(options: impl IntoIterator<Item = Production>) -> Production {
    let mut options: Vec<Production> = options.into_iter().collect();
    if options.len() == 1 {
        if let Some(only) = options.pop() {
            return only;
        }
    }
    Production {
        items: vec![Item::OneOf(options)],
    }
}

/// `production` as one item, repeated.
pub fn group(production: Production, repeat: Repeat) -> Item {
    Item::Group(Box::new(production), repeat)
}

/// One of several productions, as one item of a sequence.
pub fn alt(options: impl IntoIterator<Item = Production>) -> Item {
    group(one_of(options), Repeat::One)
}

/// A repetition of `min` to `max` occurrences (at least `min` when `max` is open). A
/// minimum above the maximum is lowered to it, so the grammar always compiles
/// (llama.cpp's parser allocates without limit on `{5,2}`).
pub fn repeat(min: u64, max: Option<u64>) -> Repeat {
    let size = |n: u64| usize::try_from(n).unwrap_or(usize::MAX);
    match max {
        Some(max) => Repeat::Between((size(min.min(max)), size(max))),
        None => Repeat::AtLeast(size(min)),
    }
}

/// `production` without the items repeated at most zero times (`x{0,0}` matches only
/// the empty text, and llguidance's Lark reader refuses the repetition).
pub fn without_empty_repeats(production: Production) -> Production {
    let empty = |repeat: &Repeat| {
        matches!(
            repeat,
            Repeat::Between((_, 0)) | Repeat::Exact(0) | Repeat::AtMost(0)
        )
    };
    let items = production
        .items
        .into_iter()
        .filter_map(|item| match item {
            Item::Terminal(_, ref r)
            | Item::NonTerminal(_, ref r)
            | Item::CharacterSet(_, ref r)
                if empty(r) =>
            {
                None
            }
            Item::Group(_, ref r) if empty(r) => None,
            Item::Group(inner, r) => Some(Item::Group(Box::new(without_empty_repeats(*inner)), r)),
            Item::OneOf(options) => Some(Item::OneOf(
                options.into_iter().map(without_empty_repeats).collect(),
            )),
            other => Some(other),
        })
        .collect();
    Production { items }
}

/// Whether a production refers to the rule `name` anywhere.
pub fn refers_to(production: &Production, name: &str) -> bool {
    production.items.iter().any(|item| match item {
        Item::NonTerminal(symbol, _) => symbol.name == name,
        Item::Group(inner, _) => refers_to(inner, name),
        Item::OneOf(options) => options.iter().any(|p| refers_to(p, name)),
        _ => false,
    })
}

/// A GBNF string literal for `text`, quotes included.
pub fn literal(text: &str) -> String {
    format!("\"{}\"", escape(text))
}

/// The inside of a GBNF string literal for `text`.
fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if (c as u32) < 0x20 => out.push_str(&format!("\\x{:02X}", c as u32)),
            c => out.push(c),
        }
    }
    out
}

/// A rule name from any text: lowercase letters, digits and dashes.
pub fn rule_name(text: &str) -> String {
    let mut out: String = text
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() {
                c.to_ascii_lowercase()
            } else {
                '-'
            }
        })
        .collect();
    while out.contains("--") {
        out = out.replace("--", "-");
    }
    let out = out.trim_matches('-').to_string();
    if out.is_empty() {
        "r".to_string()
    } else if out.starts_with(|c: char| c.is_ascii_digit()) {
        format!("r{out}")
    } else {
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn expressions_render_as_gbnf() {
        let body = seq([
            lit("a\"b\n"),
            alt([
                seq([rule("x")]),
                seq([lit("y"), rule_rep("z", Repeat::ZeroOrMore)]),
            ]),
            chars(
                vec![ch('"'), ch('\\'), range('0', '9')],
                true,
                repeat(2, Some(5)),
            ),
            group(seq([lit(","), rule("ws")]), Repeat::ZeroOrOne),
        ]);
        assert_eq!(
            body.to_string(),
            r#""a\"b\n" (x | "y" z*) [^"\\0-9]{2,5} ("," ws)?"#
        );
        assert_eq!(repeat(7, Some(3)).to_string(), "{3,3}");
        assert_eq!(repeat(2, None).to_string(), "{2,}");
        assert!(refers_to(&body, "z") && !refers_to(&body, "q"));
        assert_eq!(one_of([seq([lit("a")])]).to_string(), "\"a\"");
        let emptied = without_empty_repeats(seq([
            lit("["),
            rule("item"),
            group(seq([lit(","), rule("item")]), repeat(0, Some(0))),
            alt([
                seq([lit("x"), rule_rep("c", repeat(3, Some(0)))]),
                seq([lit("y")]),
            ]),
            lit("]"),
        ]));
        assert_eq!(emptied.to_string(), r#""[" item ("x" | "y") "]""#);
    }
}
