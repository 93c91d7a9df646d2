//! JSON as the walker writes it: compact — at most one space where JSON allows
//! whitespace — because small models that may emit unbounded whitespace spiral into
//! newlines.

use serde_json::Value;

use super::expr::{ch, chars, group, lit, range, rule, rule_rep, seq, Item, Production, Repeat};
use super::{InString, Leaf, ValueSyntax};

/// JSON values.
#[derive(Debug, Clone, Copy, Default)]
pub struct Json;

/// A number without a sign:
/// `("0" | [1-9] [0-9]{0,17}) ("." [0-9]{1,17})? ([eE] [-+]? [0-9]{1,3})?`.
pub fn unsigned_number() -> Production {
    seq([
        natural(),
        group(
            seq([
                lit("."),
                chars(vec![range('0', '9')], false, Repeat::Between((1, 17))),
            ]),
            Repeat::ZeroOrOne,
        ),
        group(
            seq([
                chars(vec![ch('e'), ch('E')], false, Repeat::One),
                chars(vec![ch('-'), ch('+')], false, Repeat::ZeroOrOne),
                chars(vec![range('0', '9')], false, Repeat::Between((1, 3))),
            ]),
            Repeat::ZeroOrOne,
        ),
    ])
}

/// The four hex digits after `\\u`: any code unit but a surrogate, or a surrogate
/// pair (`d800`-`dbff`, then `\\u` and `dc00`-`dfff`), so every escape decodes.
fn unicode_escape() -> Item {
    let hex = |count: usize| {
        chars(
            vec![range('0', '9'), range('a', 'f'), range('A', 'F')],
            false,
            Repeat::Exact(count),
        )
    };
    let one = |items: Vec<gbnf::CharacterSetItem>| chars(items, false, Repeat::One);
    super::alt([
        seq([
            one(vec![range('0', '9'), range('a', 'c'), range('A', 'C')]),
            hex(3),
        ]),
        seq([
            one(vec![ch('d'), ch('D')]),
            one(vec![range('0', '7')]),
            hex(2),
        ]),
        seq([one(vec![ch('e'), ch('f'), ch('E'), ch('F')]), hex(3)]),
        seq([
            one(vec![ch('d'), ch('D')]),
            one(vec![range('8', '9'), range('a', 'b'), range('A', 'B')]),
            hex(2),
            lit("\\u"),
            one(vec![ch('d'), ch('D')]),
            one(vec![range('c', 'f'), range('C', 'F')]),
            hex(2),
        ]),
    ])
}

/// `("0" | [1-9] [0-9]{0,17})`
pub(crate) fn natural() -> Item {
    super::alt([
        seq([lit("0")]),
        seq([
            chars(vec![range('1', '9')], false, Repeat::One),
            chars(vec![range('0', '9')], false, Repeat::Between((0, 17))),
        ]),
    ])
}

impl ValueSyntax for Json {
    fn shared_rules(&self) -> Vec<(&'static str, Production)> {
        let json_char = super::one_of([
            seq([chars(
                vec![
                    ch('"'),
                    ch('\\'),
                    gbnf::CharacterSetItem::Hex("7F".into()),
                    gbnf::CharacterSetItem::CharacterHexRange("00".into(), "1F".into()),
                ],
                true,
                Repeat::One,
            )]),
            seq([
                lit("\\"),
                super::alt([
                    seq([chars(
                        "\"\\/bfnrt".chars().map(ch).collect(),
                        false,
                        Repeat::One,
                    )]),
                    seq([lit("u"), unicode_escape()]),
                ]),
            ]),
        ]);
        let pair = |tail: Vec<Item>| {
            let mut items = vec![
                rule("json-string"),
                rule("ws"),
                lit(":"),
                rule("ws"),
                rule("json-value"),
            ];
            items.extend(tail);
            items
        };
        let mut more_pairs = vec![lit(","), rule("ws")];
        more_pairs.extend(pair(Vec::new()));
        vec![
            ("ws", seq([lit_optional(" ")])),
            ("json-char", json_char),
            (
                "json-string",
                seq([
                    lit("\""),
                    rule_rep("json-char", Repeat::ZeroOrMore),
                    lit("\""),
                ]),
            ),
            (
                "json-integer",
                seq([super::expr::lit_rep("-", Repeat::ZeroOrOne), natural()]),
            ),
            ("json-number", {
                let mut items = vec![super::expr::lit_rep("-", Repeat::ZeroOrOne)];
                items.extend(unsigned_number().items);
                seq(items)
            }),
            (
                "json-boolean",
                super::one_of([seq([lit("true")]), seq([lit("false")])]),
            ),
            ("json-null", seq([lit("null")])),
            (
                "json-value",
                super::one_of(
                    [
                        "json-object",
                        "json-array",
                        "json-string",
                        "json-number",
                        "json-boolean",
                        "json-null",
                    ]
                    .map(|name| seq([rule(name)])),
                ),
            ),
            (
                "json-object",
                seq([
                    lit("{"),
                    rule("ws"),
                    group(
                        seq(pair(vec![group(seq(more_pairs), Repeat::ZeroOrMore)])),
                        Repeat::ZeroOrOne,
                    ),
                    rule("ws"),
                    lit("}"),
                ]),
            ),
            (
                "json-array",
                seq([
                    lit("["),
                    rule("ws"),
                    group(
                        seq([
                            rule("json-value"),
                            group(
                                seq([lit(","), rule("ws"), rule("json-value")]),
                                Repeat::ZeroOrMore,
                            ),
                        ]),
                        Repeat::ZeroOrOne,
                    ),
                    rule("ws"),
                    lit("]"),
                ]),
            ),
        ]
    }

    fn space(&self) -> Vec<Item> {
        vec![rule("ws")]
    }

    fn any(&self) -> Leaf {
        Leaf::Shared("json-value")
    }

    fn null(&self) -> Leaf {
        Leaf::Shared("json-null")
    }

    fn boolean(&self) -> Leaf {
        Leaf::Shared("json-boolean")
    }

    fn integer(&self, _non_negative: bool) -> Leaf {
        Leaf::Shared("json-integer")
    }

    fn number(&self, non_negative: bool) -> Leaf {
        if non_negative {
            Leaf::Rule(unsigned_number())
        } else {
            Leaf::Shared("json-number")
        }
    }

    fn string(&self) -> Leaf {
        Leaf::Shared("json-string")
    }

    fn bounded_string(&self, count: Repeat) -> Production {
        seq([lit("\""), rule_rep("json-char", count), lit("\"")])
    }

    fn shaped_string(&self, body: Vec<Item>) -> Production {
        let mut items = vec![lit("\"")];
        items.extend(body);
        items.push(lit("\""));
        seq(items)
    }

    fn string_char(&self, repeat: Repeat) -> Item {
        rule_rep("json-char", repeat)
    }

    fn in_string(&self, c: char) -> InString {
        match c {
            '"' => InString::Escaped("\\\""),
            '\\' => InString::Escaped("\\\\"),
            // `json-char` leaves DEL out with the controls.
            c if c.is_ascii_control() => InString::Impossible,
            _ => InString::Plain,
        }
    }

    fn value(&self, value: &Value) -> Item {
        lit(&value.to_string())
    }

    fn key(&self, name: &str) -> Vec<Item> {
        vec![
            lit(&Value::String(name.to_string()).to_string()),
            rule("ws"),
            lit(":"),
            rule("ws"),
        ]
    }

    fn any_key(&self) -> Vec<Item> {
        vec![rule("json-string"), rule("ws"), lit(":"), rule("ws")]
    }
}

fn lit_optional(text: &str) -> Item {
    super::expr::lit_rep(text, Repeat::ZeroOrOne)
}
