//! The grammar of a reply that must be prose: it opens with a letter or a digit (any
//! script), or `*`, `#` or `-` as lists and headings do — never with `{`, `[`, `(`,
//! `<`, a fence, a quote or a space, which is how calls begin (the 0.5B model wrote
//! `({"name": …` when `(` was allowed); after that, anything.
//! An answer-only turn decodes under it, so a small model that would write its last
//! call again as bare JSON writes the answer instead.

use rein_protocol::Grammar;
use rein_schema::gbnf::{ch, chars, group, range, seq, CharacterSetItem, Item, Repeat};
use rein_schema::{GrammarBuilder, Json};

/// The prose grammar.
pub fn prose_grammar() -> Grammar {
    Grammar::strict(GrammarBuilder::new().build(prose_item(), &Json))
}

/// Prose as one grammar item: a first character that opens no call, then anything.
pub(crate) fn prose_item() -> Item {
    let mut openers = vec![
        range('A', 'Z'),
        range('a', 'z'),
        range('0', '9'),
        // Letters of other scripts (and other non-ASCII text).
        range('\u{80}', '\u{10FFFF}'),
    ];
    openers.extend(['*', '#', '-'].into_iter().map(ch));
    let first = chars(openers, false, Repeat::One);
    let rest = chars(
        vec![CharacterSetItem::Hex("00".into())],
        true,
        Repeat::ZeroOrMore,
    );
    group(seq([first, rest]), Repeat::One)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_first_character_may_not_open_a_call() {
        let grammar = prose_grammar();
        assert!(grammar.lazy_triggers.is_empty());
        assert_eq!(
            grammar.gbnf.trim(),
            "root ::= ([A-Za-z0-9\u{80}-\u{10FFFF}*#-] [^\\x00]*)",
            "{}",
            grammar.gbnf
        );
    }
}
