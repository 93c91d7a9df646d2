//! Simple `pattern`s (ECMA-262 regular expressions) as string bodies: literals, `.`,
//! `\d \w \s` and their negations, bracketed classes of characters and ranges,
//! groups, alternation and bounded repetition, anchored with `^`/`$` or not.
//! Anything else (flags, lookaround, back-references, Unicode classes, class
//! arithmetic, assertions inside the pattern, large repetitions) is not translated:
//! the string is then written plainly and validation enforces the pattern.
//!
//! The body only ever writes text the pattern matches: a character the value syntax
//! cannot write (a control character, or `<` in Gemma's notation) is left out of
//! classes, and a literal one makes the pattern untranslatable.

use regex_syntax::ast::{
    self, Ast, ClassPerlKind, ClassSet, ClassSetItem, GroupKind, RepetitionKind, RepetitionRange,
};

use super::expr::{alt, chars, group, lit, seq, CharacterSetItem, Item, Repeat};
use super::{InString, ValueSyntax};

/// The most a single repetition may count, and the most characters one pattern may
/// expand to in the grammar (llama.cpp expands counted repetitions into rules).
const MAX_COUNT: u32 = 64;
const MAX_EXPANSION: u64 = 4096;

/// Whether the grammar can write `pattern`; the reason when it cannot.
pub fn pattern_support(pattern: &str) -> Result<(), String> {
    parse(pattern).and_then(|ast| {
        let mut check = Translator { syntax: None };
        check.top(&ast).map(|_| ())
    })
}

/// The string body for `pattern` in `syntax`, or why there is none.
pub fn pattern_body(pattern: &str, syntax: &dyn ValueSyntax) -> Result<Vec<Item>, String> {
    let ast = parse(pattern)?;
    Translator {
        syntax: Some(syntax),
    }
    .top(&ast)
}

fn parse(pattern: &str) -> Result<Ast, String> {
    // Where ECMA-262 and this parser read the same text differently.
    if pattern.contains("[]") || pattern.contains("[^]") {
        return Err("an empty class".to_string());
    }
    let ast = ast::parse::Parser::new()
        .parse(pattern)
        .map_err(|e| format!("not a pattern the grammar can write ({})", e.kind()))?;
    if expansion(&ast) > MAX_EXPANSION {
        return Err(format!("expands to more than {MAX_EXPANSION} characters"));
    }
    Ok(ast)
}

/// How many characters the pattern can write at most, counting open repetitions once.
fn expansion(ast: &Ast) -> u64 {
    match ast {
        Ast::Repetition(r) => {
            let count = match &r.op.kind {
                RepetitionKind::ZeroOrOne | RepetitionKind::ZeroOrMore => 1,
                RepetitionKind::OneOrMore => 1,
                RepetitionKind::Range(RepetitionRange::Exactly(n))
                | RepetitionKind::Range(RepetitionRange::AtLeast(n)) => u64::from(*n).max(1),
                RepetitionKind::Range(RepetitionRange::Bounded(_, n)) => u64::from(*n).max(1),
            };
            count.saturating_mul(expansion(&r.ast))
        }
        Ast::Group(g) => expansion(&g.ast),
        Ast::Alternation(a) => a.asts.iter().map(expansion).max().unwrap_or(0),
        Ast::Concat(c) => c.asts.iter().map(expansion).fold(0, u64::saturating_add),
        _ => 1,
    }
}

/// Inclusive ranges of code points, sorted and disjoint.
type Ranges = Vec<(u32, u32)>;

/// Every code point that is a `char`.
fn universe() -> Ranges {
    vec![(0, 0xD7FF), (0xE000, 0x10FFFF)]
}

fn normalize(mut ranges: Ranges) -> Ranges {
    ranges.sort_unstable();
    let mut out: Ranges = Vec::new();
    for (lo, hi) in ranges {
        match out.last_mut() {
            Some(last) if lo <= last.1.saturating_add(1) => last.1 = last.1.max(hi),
            _ => out.push((lo, hi)),
        }
    }
    out
}

fn complement(ranges: &Ranges) -> Ranges {
    let mut out = Vec::new();
    for (lo, hi) in universe() {
        let mut next = lo;
        for &(a, b) in ranges.iter().filter(|(a, b)| *b >= lo && *a <= hi) {
            if a > next {
                out.push((next, a - 1));
            }
            next = next.max(b.saturating_add(1));
        }
        if next <= hi {
            out.push((next, hi));
        }
    }
    out
}

/// ECMA-262's white space and line terminators.
fn space_ranges() -> Ranges {
    normalize(vec![
        (0x09, 0x0D),
        (0x20, 0x20),
        (0xA0, 0xA0),
        (0x1680, 0x1680),
        (0x2000, 0x200A),
        (0x2028, 0x2029),
        (0x202F, 0x202F),
        (0x205F, 0x205F),
        (0x3000, 0x3000),
        (0xFEFF, 0xFEFF),
    ])
}

fn perl_ranges(kind: &ClassPerlKind, negated: bool) -> Ranges {
    let ranges = match kind {
        ClassPerlKind::Digit => vec![(0x30, 0x39)],
        ClassPerlKind::Word => {
            normalize(vec![(0x30, 0x39), (0x41, 0x5A), (0x5F, 0x5F), (0x61, 0x7A)])
        }
        ClassPerlKind::Space => space_ranges(),
    };
    if negated {
        complement(&ranges)
    } else {
        ranges
    }
}

struct Translator<'a> {
    /// `None` only checks that the pattern is translatable.
    syntax: Option<&'a dyn ValueSyntax>,
}

impl Translator<'_> {
    fn in_string(&self, c: char) -> InString {
        match self.syntax {
            Some(syntax) => syntax.in_string(c),
            // Without a syntax, only what every syntax writes as it is.
            None if c.is_control() => InString::Impossible,
            None => InString::Plain,
        }
    }

    fn any_char(&self) -> Item {
        match self.syntax {
            Some(syntax) => syntax.string_char(Repeat::ZeroOrMore),
            None => lit(""),
        }
    }

    /// The whole pattern: alternatives each with their own anchors.
    fn top(&mut self, ast: &Ast) -> Result<Vec<Item>, String> {
        if let Ast::Alternation(a) = ast {
            let branches = a
                .asts
                .iter()
                .map(|b| self.anchored(b).map(seq))
                .collect::<Result<Vec<_>, _>>()?;
            return Ok(vec![alt(branches)]);
        }
        self.anchored(ast)
    }

    /// A branch: `^` at its start and `$` at its end, or any text on that side.
    fn anchored(&mut self, ast: &Ast) -> Result<Vec<Item>, String> {
        let parts: Vec<&Ast> = match ast {
            Ast::Concat(c) => c.asts.iter().collect(),
            other => vec![other],
        };
        let is = |a: Option<&&Ast>, start: bool| {
            matches!(a, Some(Ast::Assertion(x)) if match x.kind {
                ast::AssertionKind::StartLine | ast::AssertionKind::StartText => start,
                ast::AssertionKind::EndLine | ast::AssertionKind::EndText => !start,
                _ => false,
            })
        };
        let starts = is(parts.first(), true);
        let ends = parts.len() > usize::from(starts) && is(parts.last(), false);
        let inner = &parts[usize::from(starts)..parts.len() - usize::from(ends)];
        let mut items = Vec::new();
        if !starts {
            items.push(self.any_char());
        }
        for part in inner {
            items.extend(self.node(part)?);
        }
        if !ends {
            items.push(self.any_char());
        }
        Ok(items)
    }

    fn node(&mut self, ast: &Ast) -> Result<Vec<Item>, String> {
        match ast {
            Ast::Empty(_) => Ok(Vec::new()),
            Ast::Literal(l) => Ok(vec![self.literal(l.c)?]),
            Ast::Dot(_) => {
                let ranges = complement(&vec![(0x0A, 0x0A), (0x0D, 0x0D), (0x2028, 0x2029)]);
                Ok(vec![self.class(&ranges)?])
            }
            Ast::ClassPerl(p) => Ok(vec![self.class(&perl_ranges(&p.kind, p.negated))?]),
            Ast::ClassBracketed(b) => Ok(vec![self.class(&bracketed(b)?)?]),
            Ast::Repetition(r) => {
                let count = match &r.op.kind {
                    RepetitionKind::ZeroOrOne => Repeat::ZeroOrOne,
                    RepetitionKind::ZeroOrMore => Repeat::ZeroOrMore,
                    RepetitionKind::OneOrMore => Repeat::OneOrMore,
                    RepetitionKind::Range(range) => counted(range)?,
                };
                Ok(vec![repeated(self.node(&r.ast)?, count)])
            }
            Ast::Group(g) => {
                if let GroupKind::NonCapturing(flags) = &g.kind {
                    if !flags.items.is_empty() {
                        return Err("flags".to_string());
                    }
                }
                Ok(vec![group(seq(self.node(&g.ast)?), Repeat::One)])
            }
            Ast::Concat(c) => {
                let mut items = Vec::new();
                for part in &c.asts {
                    items.extend(self.node(part)?);
                }
                Ok(items)
            }
            Ast::Alternation(a) => {
                let branches = a
                    .asts
                    .iter()
                    .map(|b| self.node(b).map(seq))
                    .collect::<Result<Vec<_>, _>>()?;
                Ok(vec![alt(branches)])
            }
            Ast::Assertion(_) => Err("an assertion inside the pattern".to_string()),
            Ast::Flags(_) => Err("flags".to_string()),
            Ast::ClassUnicode(_) => Err("a Unicode class".to_string()),
        }
    }

    fn literal(&self, c: char) -> Result<Item, String> {
        match self.in_string(c) {
            InString::Plain => Ok(lit(&c.to_string())),
            InString::Escaped(text) => Ok(lit(text)),
            InString::Impossible => Err(format!("the character {c:?}")),
        }
    }

    /// One character of `ranges`, leaving out those the syntax cannot write.
    fn class(&self, ranges: &Ranges) -> Result<Item, String> {
        let mut plain: Ranges = Vec::new();
        let mut escaped: Vec<&'static str> = Vec::new();
        for &(lo, hi) in ranges {
            let mut start: Option<u32> = None;
            // Walk the range, splitting it around characters that are not plain.
            let mut code = lo;
            while code <= hi {
                let kind = char::from_u32(code).map(|c| self.in_string(c));
                let is_plain = matches!(kind, Some(InString::Plain));
                if is_plain {
                    start.get_or_insert(code);
                } else {
                    if let Some(s) = start.take() {
                        plain.push((s, code - 1));
                    }
                    if let Some(InString::Escaped(text)) = kind {
                        escaped.push(text);
                    }
                }
                // From U+0080 up every syntax writes characters as they are, so the
                // rest of the range is one plain run.
                if is_plain && code >= 0x80 {
                    code = hi;
                }
                code += 1;
            }
            if let Some(s) = start {
                plain.push((s, hi));
            }
        }
        let mut options = Vec::new();
        if !plain.is_empty() {
            options.push(seq([chars(set_items(&plain), false, Repeat::One)]));
        }
        for text in escaped {
            options.push(seq([lit(text)]));
        }
        match options.len() {
            0 => Err("a class of characters the string cannot hold".to_string()),
            1 => Ok(repeated(options.remove(0).items, Repeat::One)),
            _ => Ok(alt(options)),
        }
    }
}

/// `items` repeated `count` times: a lone character set or literal takes the count
/// itself, anything else is grouped.
fn repeated(mut items: Vec<Item>, count: Repeat) -> Item {
    if items.len() == 1 {
        match items.remove(0) {
            Item::CharacterSet(set, Repeat::One) => return Item::CharacterSet(set, count),
            Item::Group(inner, Repeat::One) => return Item::Group(inner, count),
            Item::Terminal(text, Repeat::One) => return Item::Terminal(text, count),
            other => items.push(other),
        }
    }
    group(seq(items), count)
}

fn counted(range: &RepetitionRange) -> Result<Repeat, String> {
    let size = |n: u32| usize::try_from(n).unwrap_or(usize::MAX);
    let check = |n: u32| {
        if n > MAX_COUNT {
            Err(format!("a repetition above {MAX_COUNT}"))
        } else {
            Ok(size(n))
        }
    };
    Ok(match range {
        RepetitionRange::Exactly(n) => Repeat::Exact(check(*n)?),
        RepetitionRange::AtLeast(n) => Repeat::AtLeast(check(*n)?),
        RepetitionRange::Bounded(a, b) if a <= b => Repeat::Between((check(*a)?, check(*b)?)),
        RepetitionRange::Bounded(..) => return Err("a repetition with min above max".into()),
    })
}

/// The characters of a bracketed class.
fn bracketed(class: &ast::ClassBracketed) -> Result<Ranges, String> {
    let ranges = match &class.kind {
        ClassSet::Item(item) => set_item(item)?,
        ClassSet::BinaryOp(_) => return Err("class arithmetic".to_string()),
    };
    let ranges = normalize(ranges);
    Ok(if class.negated {
        complement(&ranges)
    } else {
        ranges
    })
}

fn set_item(item: &ClassSetItem) -> Result<Ranges, String> {
    Ok(match item {
        ClassSetItem::Empty(_) => Vec::new(),
        ClassSetItem::Literal(l) => vec![(u32::from(l.c), u32::from(l.c))],
        ClassSetItem::Range(r) => vec![(u32::from(r.start.c), u32::from(r.end.c))],
        ClassSetItem::Perl(p) => perl_ranges(&p.kind, p.negated),
        ClassSetItem::Bracketed(b) => bracketed(b)?,
        ClassSetItem::Union(u) => {
            let mut all = Vec::new();
            for item in &u.items {
                all.extend(set_item(item)?);
            }
            all
        }
        ClassSetItem::Ascii(_) => return Err("a POSIX class".to_string()),
        ClassSetItem::Unicode(_) => return Err("a Unicode class".to_string()),
    })
}

/// Set items for `ranges`, every character that GBNF reads specially inside a set
/// (`- [ \ ] ^` and controls) written as an escape.
fn set_items(ranges: &Ranges) -> Vec<CharacterSetItem> {
    let special = |code: u32| code < 0x20 || code == 0x7F || matches!(code, 0x2D | 0x5B..=0x5E);
    let one = |code: u32| match char::from_u32(code) {
        Some(c) if !special(code) => CharacterSetItem::Character(c),
        _ => CharacterSetItem::Unicode(format!("{code:04X}")),
    };
    let mut items = Vec::new();
    for &(lo, hi) in ranges {
        let (mut lo, mut hi) = (lo, hi);
        // Special endpoints are written alone, so every range written has plain ends.
        while lo <= hi && special(lo) {
            items.push(one(lo));
            lo += 1;
        }
        let mut tail = Vec::new();
        while hi >= lo && special(hi) {
            tail.push(one(hi));
            hi -= 1;
        }
        if lo < hi {
            if let (Some(a), Some(b)) = (char::from_u32(lo), char::from_u32(hi)) {
                items.push(CharacterSetItem::CharacterRange(a, b));
            }
        } else if lo == hi {
            items.push(one(lo));
        }
        items.extend(tail.into_iter().rev());
    }
    items
}
