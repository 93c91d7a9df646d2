//! String formats and patterns in the grammar: every value the grammar can write for
//! a format or a pattern it claims to enforce validates (a sampler walks the typed
//! grammar), what it cannot enforce is reported and left to validation.

use std::collections::HashMap;

use proptest::prelude::*;
use rein_schema::gbnf::{format_body, pattern_body, pattern_support, CharacterSetItem, Item};
use rein_schema::gbnf::{Production, Repeat};
use rein_schema::{
    sanitize, ArgumentValidator, ChangeKind, GrammarBuilder, Json, Limits, SchemaKind,
    StringFormat, StringShape, ValueSyntax,
};
use serde_json::{json, Value};

/// A small deterministic generator (xorshift), seeded by proptest.
struct Dice(u64);

impl Dice {
    fn below(&mut self, n: usize) -> usize {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        (self.0 % n.max(1) as u64) as usize
    }
}

/// Writes one random text the grammar accepts.
struct Sampler<'a> {
    rules: &'a HashMap<String, Production>,
    dice: Dice,
    depth: usize,
}

impl Sampler<'_> {
    fn count(&mut self, repeat: &Repeat) -> usize {
        match repeat {
            Repeat::One => 1,
            Repeat::ZeroOrOne => self.dice.below(2),
            Repeat::ZeroOrMore => self.dice.below(4),
            Repeat::OneOrMore => 1 + self.dice.below(3),
            Repeat::Exact(n) => *n,
            Repeat::AtLeast(n) => n + self.dice.below(3),
            Repeat::Between((a, b)) => a + self.dice.below(b - a + 1),
            Repeat::AtMost(n) => self.dice.below(n + 1),
        }
    }

    fn production(&mut self, production: &Production, out: &mut String) {
        for item in &production.items {
            self.item(item, out);
        }
    }

    fn item(&mut self, item: &Item, out: &mut String) {
        match item {
            Item::Terminal(symbol, repeat) => {
                let text = unescape(&symbol.value);
                for _ in 0..self.count(repeat) {
                    out.push_str(&text);
                }
            }
            Item::NonTerminal(symbol, repeat) => {
                let body = self.rules[&symbol.name].clone();
                for _ in 0..self.count(repeat) {
                    self.depth += 1;
                    assert!(self.depth < 64, "runaway recursion");
                    self.production(&body, out);
                    self.depth -= 1;
                }
            }
            Item::Group(inner, repeat) => {
                for _ in 0..self.count(repeat) {
                    self.production(inner, out);
                }
            }
            Item::OneOf(options) => {
                let pick = self.dice.below(options.len());
                self.production(&options[pick], out);
            }
            Item::CharacterSet(set, repeat) => {
                for _ in 0..self.count(repeat) {
                    let c = if set.is_complement {
                        let pool = ['a', 'Z', ' ', '7', 'é', '€', '"', '\\', '<', '\n', '-'];
                        let allowed: Vec<char> = pool
                            .into_iter()
                            .filter(|c| !set.items.iter().any(|i| contains(i, *c)))
                            .collect();
                        allowed[self.dice.below(allowed.len())]
                    } else {
                        let one = &set.items[self.dice.below(set.items.len())];
                        pick(one, &mut self.dice)
                    };
                    out.push(c);
                }
            }
            other => panic!("unexpected grammar item {other:?}"),
        }
    }
}

fn hex_char(hex: &str) -> char {
    char::from_u32(u32::from_str_radix(hex, 16).unwrap()).unwrap()
}

fn bounds(item: &CharacterSetItem) -> (char, char) {
    match item {
        CharacterSetItem::Character(c) => (*c, *c),
        CharacterSetItem::CharacterRange(a, b) => (*a, *b),
        CharacterSetItem::Unicode(h) | CharacterSetItem::Hex(h) => (hex_char(h), hex_char(h)),
        CharacterSetItem::CharacterHexRange(a, b) => (hex_char(a), hex_char(b)),
        CharacterSetItem::Backslash => ('\\', '\\'),
        CharacterSetItem::NewLine => ('\n', '\n'),
        CharacterSetItem::Tab => ('\t', '\t'),
        CharacterSetItem::Return => ('\r', '\r'),
    }
}

fn contains(item: &CharacterSetItem, c: char) -> bool {
    let (a, b) = bounds(item);
    a <= c && c <= b
}

fn pick(item: &CharacterSetItem, dice: &mut Dice) -> char {
    let (a, b) = bounds(item);
    // Mostly the ends and their neighbours, where off-by-one mistakes live.
    let span = b as u32 - a as u32;
    let offset = match dice.below(4) {
        0 => 0,
        1 => span,
        _ => dice.below(span.min(5000) as usize + 1) as u32,
    };
    (a as u32..=b as u32)
        .map(|c| c + offset.min(b as u32 - c))
        .find_map(char::from_u32)
        .unwrap_or(a)
}

/// The text of a GBNF literal (the reverse of the grammar's escaping).
fn unescape(text: &str) -> String {
    let mut out = String::new();
    let mut chars = text.chars();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some('n') => out.push('\n'),
            Some('r') => out.push('\r'),
            Some('t') => out.push('\t'),
            Some('x') => {
                let hex: String = chars.by_ref().take(2).collect();
                out.push(hex_char(&hex));
            }
            Some(other) => out.push(other),
            None => {}
        }
    }
    out
}

fn json_rules() -> HashMap<String, Production> {
    Json.shared_rules()
        .into_iter()
        .map(|(name, body)| (name.to_string(), body))
        .collect()
}

/// One JSON string the grammar writes for a string with this inside, decoded.
fn sample(body: Vec<Item>, seed: u64) -> String {
    let rules = json_rules();
    let mut sampler = Sampler {
        rules: &rules,
        dice: Dice(seed | 1),
        depth: 0,
    };
    let mut text = String::new();
    sampler.production(&Json.shaped_string(body), &mut text);
    serde_json::from_str::<String>(&text)
        .unwrap_or_else(|e| panic!("the grammar wrote {text:?}, which is not a JSON string: {e}"))
}

fn validator_for(property: Value) -> ArgumentValidator {
    let schema = json!({"type": "object", "properties": {"v": property}, "required": ["v"]});
    let (validator, degraded) =
        ArgumentValidator::new(&sanitize(&schema, Limits::default()).unwrap());
    assert!(!degraded);
    validator
}

/// Patterns the grammar writes, with text each must match and text it must not.
const PATTERNS: &[&str] = &[
    r"^[A-Z]{3}-\d{4}$",
    r"^v\d+\.\d+\.\d+(-[a-z0-9]+)?$",
    r"^[a-z][a-z0-9_]{0,15}$",
    r"^(red|green|blue)$",
    r"^\+?[0-9 ]{7,15}$",
    r"^[^@\s]+@[^@\s]+$",
    r#"^say "hi" \\ bye$"#,
    r"^[\w.-]+\.(txt|md)$",
    r"ab+c",
    r"^#[0-9a-fA-F]{6}$",
    r"^[^\]\[^-]{2}x$",
    r"^.{1,3}$",
    r"^\S+ \S+$",
    r"^[-+]?\d*\.?\d+$",
    r"^ID|^NO$",
];

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn every_format_the_grammar_writes_validates(seed in any::<u64>()) {
        for format in StringFormat::ALL {
            let value = sample(format_body(format), seed);
            let validator = validator_for(json!({"type": "string", "format": format.name()}));
            prop_assert!(
                validator.check_value(json!({"v": value})).is_ok(),
                "format {}: the grammar wrote {value:?}, which does not validate",
                format.name()
            );
        }
    }

    #[test]
    fn every_pattern_the_grammar_writes_validates(seed in any::<u64>()) {
        for pattern in PATTERNS {
            prop_assert!(pattern_support(pattern).is_ok(), "{pattern}: {:?}", pattern_support(pattern));
            let value = sample(pattern_body(pattern, &Json).unwrap(), seed);
            let validator = validator_for(json!({"type": "string", "pattern": pattern}));
            prop_assert!(
                validator.check_value(json!({"v": value})).is_ok(),
                "pattern {pattern}: the grammar wrote {value:?}, which does not match"
            );
        }
    }
}

#[test]
fn invalid_format_values_are_refused_by_validation() {
    for (format, bad) in [
        ("email", "example.com"),
        ("date", "2023-02-29"),
        ("date-time", "2024-01-01 10:00"),
        ("uuid", "1234"),
        ("ipv4", "256.1.1.1"),
        ("uri", "not a uri"),
    ] {
        let validator = validator_for(json!({"type": "string", "format": format}));
        assert!(
            validator.check_value(json!({"v": bad})).is_err(),
            "{format}: {bad:?} passed"
        );
    }
}

#[test]
fn patterns_the_grammar_cannot_write_are_named() {
    for pattern in [
        r"^(?=.*\d).+$",
        r"^(a)\1$",
        r"^\p{L}+$",
        r"(?i)^abc$",
        r"^a\bb$",
        r"^x{100}$",
        r"^[[:alpha:]]+$",
        r"^[]$",
        "^a\u{1}$",
    ] {
        assert!(
            pattern_support(pattern).is_err(),
            "{pattern:?} was accepted"
        );
    }
}

fn string_of(schema: Value) -> (SchemaKind, rein_schema::Report) {
    let sanitized = sanitize(
        &json!({"type": "object", "properties": {"v": schema}}),
        Limits::default(),
    )
    .unwrap();
    let SchemaKind::Object { properties, .. } = sanitized.schema.kind else {
        panic!("not an object");
    };
    (properties[0].schema.kind.clone(), sanitized.report)
}

#[test]
fn the_sanitizer_keeps_shapes_it_enforces_and_reports_the_rest() {
    let (kind, report) = string_of(json!({"type": "string", "format": "email"}));
    assert!(matches!(
        kind,
        SchemaKind::String {
            shape: Some(StringShape::Format(StringFormat::Email)),
            ..
        }
    ));
    assert!(report.of_kind(ChangeKind::KeywordDropped).next().is_none());

    let (kind, _) = string_of(json!({"type": "string", "pattern": "^[a-z]+$", "format": "email"}));
    assert!(matches!(
        kind,
        SchemaKind::String {
            shape: Some(StringShape::Pattern(_)),
            ..
        }
    ));

    let (kind, report) = string_of(json!({"type": "string", "pattern": r"^(?=x).*$"}));
    assert!(matches!(kind, SchemaKind::String { shape: None, .. }));
    assert!(report.of_kind(ChangeKind::KeywordDropped).any(|c| c
        .detail
        .starts_with("pattern: not enforced by the grammar (")));

    let (kind, report) = string_of(json!({"type": "string", "format": "hostname"}));
    assert!(matches!(kind, SchemaKind::String { shape: None, .. }));
    assert!(report.changes.iter().any(|c| c.detail.contains("format")));
}

#[test]
fn a_format_rule_is_written_once_and_shared() {
    let sanitized = sanitize(
        &json!({"type": "object", "properties": {
            "from": {"type": "string", "format": "date"},
            "to": {"type": "string", "format": "date"},
            "code": {"type": "string", "pattern": "^[A-Z]{2}$"}
        }, "required": ["from", "to", "code"]}),
        Limits::default(),
    )
    .unwrap();
    let mut builder = GrammarBuilder::new();
    let root = builder.schema(&sanitized.schema, "args", &Json);
    let grammar = builder.build(root, &Json);
    assert_eq!(grammar.matches("format-date ::=").count(), 1, "{grammar}");
    assert!(grammar.contains("[A-Z]{2}"), "{grammar}");
}
