//! Gemma 4's object notation as a value syntax for the shared grammar walker:
//! properties by name (`key:value`) in declared order, strings in `<|"|>` quotes with
//! their length bounds, enums, arrays with item bounds, integers within their bounds,
//! numbers with a sign only when the minimum allows one. Number ranges beyond the sign
//! are left to validation.

use rein_schema::gbnf::{
    ch, chars, group, lit, lit_rep, one_of, range, rule, rule_rep, seq, InString, Item, Leaf,
    Production, Repeat,
};
use rein_schema::ValueSyntax;
use serde_json::Value;

use super::object_notation::{self, QUOTE};

/// Values in object notation.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct ObjectNotation;

/// `[0-9]`, repeated.
fn digits(repeat: Repeat) -> Item {
    chars(vec![range('0', '9')], false, repeat)
}

impl ValueSyntax for ObjectNotation {
    fn shared_rules(&self) -> Vec<(&'static str, Production)> {
        let pair = || vec![rule("on-key"), lit(":"), rule("on-value")];
        let mut more_pairs = vec![lit(",")];
        more_pairs.extend(pair());
        let mut pairs = pair();
        pairs.push(group(seq(more_pairs), Repeat::ZeroOrMore));
        vec![
            // Any text without `<|`, so a string ends only at its closing quote.
            (
                "on-char",
                one_of([
                    seq([chars(vec![ch('<')], true, Repeat::One)]),
                    seq([lit("<"), chars(vec![ch('|')], true, Repeat::One)]),
                ]),
            ),
            (
                "on-string",
                seq([
                    lit(QUOTE),
                    rule_rep("on-char", Repeat::ZeroOrMore),
                    lit(QUOTE),
                ]),
            ),
            (
                "on-number",
                seq([lit_rep("-", Repeat::ZeroOrOne), rule("on-unsigned")]),
            ),
            ("on-unsigned", rein_schema::gbnf::unsigned_number()),
            (
                "on-integer",
                seq([lit_rep("-", Repeat::ZeroOrOne), rule("on-natural")]),
            ),
            (
                "on-natural",
                one_of([
                    seq([lit("0")]),
                    seq([
                        chars(vec![range('1', '9')], false, Repeat::One),
                        digits(Repeat::Between((0, 17))),
                    ]),
                ]),
            ),
            (
                "on-key",
                seq([
                    chars(
                        vec![range('a', 'z'), range('A', 'Z'), ch('_')],
                        false,
                        Repeat::One,
                    ),
                    chars(
                        vec![
                            range('a', 'z'),
                            range('A', 'Z'),
                            range('0', '9'),
                            ch('_'),
                            ch(' '),
                        ],
                        false,
                        Repeat::ZeroOrMore,
                    ),
                ]),
            ),
            (
                "on-value",
                one_of([
                    seq([rule("on-string")]),
                    seq([rule("on-number")]),
                    seq([rule("on-object")]),
                    seq([rule("on-array")]),
                    seq([lit("true")]),
                    seq([lit("false")]),
                    seq([lit("null")]),
                ]),
            ),
            (
                "on-object",
                seq([lit("{"), group(seq(pairs), Repeat::ZeroOrOne), lit("}")]),
            ),
            (
                "on-array",
                seq([
                    lit("["),
                    group(
                        seq([
                            rule("on-value"),
                            group(seq([lit(","), rule("on-value")]), Repeat::ZeroOrMore),
                        ]),
                        Repeat::ZeroOrOne,
                    ),
                    lit("]"),
                ]),
            ),
        ]
    }

    fn space(&self) -> Vec<Item> {
        Vec::new()
    }

    fn any(&self) -> Leaf {
        Leaf::Shared("on-value")
    }

    fn null(&self) -> Leaf {
        Leaf::Inline(lit("null"))
    }

    fn boolean(&self) -> Leaf {
        Leaf::Rule(one_of([seq([lit("true")]), seq([lit("false")])]))
    }

    fn integer(&self, non_negative: bool) -> Leaf {
        Leaf::Shared(if non_negative {
            "on-natural"
        } else {
            "on-integer"
        })
    }

    fn number(&self, non_negative: bool) -> Leaf {
        Leaf::Shared(if non_negative {
            "on-unsigned"
        } else {
            "on-number"
        })
    }

    fn string(&self) -> Leaf {
        Leaf::Shared("on-string")
    }

    fn bounded_string(&self, count: Repeat) -> Production {
        seq([lit(QUOTE), rule_rep("on-char", count), lit(QUOTE)])
    }

    fn shaped_string(&self, body: Vec<Item>) -> Production {
        let mut items = vec![lit(QUOTE)];
        items.extend(body);
        items.push(lit(QUOTE));
        seq(items)
    }

    fn string_char(&self, repeat: Repeat) -> Item {
        rule_rep("on-char", repeat)
    }

    fn in_string(&self, c: char) -> InString {
        // `<` may begin the closing quote; a string has no escapes.
        if c == '<' || c.is_ascii_control() {
            InString::Impossible
        } else {
            InString::Plain
        }
    }

    fn value(&self, value: &Value) -> Item {
        lit(&object_notation::write(value))
    }

    fn key(&self, name: &str) -> Vec<Item> {
        vec![lit(&format!("{name}:"))]
    }

    fn any_key(&self) -> Vec<Item> {
        vec![rule("on-key"), lit(":")]
    }
}
