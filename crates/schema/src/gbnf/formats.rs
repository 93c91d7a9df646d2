//! The string `format`s the grammar enforces, as string bodies (ASCII only, nothing a
//! value syntax must escape). Each accepts only text the validator accepts: dates
//! know month lengths and leap years, times carry seconds and an offset, host labels
//! have no leading, trailing or doubled hyphen and bounded lengths.

use super::expr::{alt, ch, chars, group, lit, range, seq, CharacterSetItem, Item, Repeat};
use crate::StringFormat;

/// The body of a string in `format`.
pub fn format_body(format: StringFormat) -> Vec<Item> {
    match format {
        StringFormat::Date => vec![date()],
        StringFormat::Time => vec![time()],
        StringFormat::DateTime => vec![date(), lit("T"), time()],
        StringFormat::Email => email(),
        StringFormat::Uuid => uuid(),
        StringFormat::Uri => uri(),
        StringFormat::Ipv4 => ipv4(),
        StringFormat::Ipv6 => vec![ipv6()],
    }
}

fn set(items: Vec<CharacterSetItem>, repeat: Repeat) -> Item {
    chars(items, false, repeat)
}

fn digit(repeat: Repeat) -> Item {
    set(vec![range('0', '9')], repeat)
}

fn one_of_chars(text: &str) -> Item {
    set(text.chars().map(ch).collect(), Repeat::One)
}

fn either(options: Vec<Vec<Item>>) -> Item {
    alt(options.into_iter().map(seq))
}

/// `YYYY-MM-DD`, every month its own length, February 29 only in leap years.
fn date() -> Item {
    let day_to_28 = || {
        either(vec![
            vec![lit("0"), set(vec![range('1', '9')], Repeat::One)],
            vec![lit("1"), digit(Repeat::One)],
            vec![lit("2"), set(vec![range('0', '8')], Repeat::One)],
        ])
    };
    let day_to_30 = || either(vec![vec![day_to_28()], vec![lit("29")], vec![lit("30")]]);
    let months = |names: &[&str]| either(names.iter().map(|m| vec![lit(m)]).collect());
    let month_day = either(vec![
        vec![
            months(&["01", "03", "05", "07", "08", "10", "12"]),
            lit("-"),
            either(vec![vec![day_to_30()], vec![lit("31")]]),
        ],
        vec![months(&["04", "06", "09", "11"]), lit("-"), day_to_30()],
        vec![lit("02-"), day_to_28()],
    ]);
    // Years divisible by 4, except centuries not divisible by 400.
    let leap_in_century = || {
        either(vec![
            vec![lit("0"), one_of_chars("48")],
            vec![one_of_chars("2468"), one_of_chars("048")],
            vec![one_of_chars("13579"), one_of_chars("26")],
        ])
    };
    let leap_year = either(vec![
        vec![digit(Repeat::Exact(2)), leap_in_century()],
        vec![leap_in_century(), lit("00")],
    ]);
    either(vec![
        vec![digit(Repeat::Exact(4)), lit("-"), month_day],
        vec![leap_year, lit("-02-29")],
    ])
}

/// `HH:MM:SS`, optional fraction, `Z` or `±HH:MM`.
fn time() -> Item {
    let hour = || {
        either(vec![
            vec![one_of_chars("01"), digit(Repeat::One)],
            vec![lit("2"), set(vec![range('0', '3')], Repeat::One)],
        ])
    };
    let sixty = || {
        group(
            seq([set(vec![range('0', '5')], Repeat::One), digit(Repeat::One)]),
            Repeat::One,
        )
    };
    group(
        seq([
            hour(),
            lit(":"),
            sixty(),
            lit(":"),
            sixty(),
            group(
                seq([lit("."), digit(Repeat::Between((1, 6)))]),
                Repeat::ZeroOrOne,
            ),
            either(vec![
                vec![lit("Z")],
                vec![one_of_chars("+-"), hour(), lit(":"), sixty()],
            ]),
        ]),
        Repeat::One,
    )
}

fn alnum() -> Vec<CharacterSetItem> {
    vec![range('a', 'z'), range('A', 'Z'), range('0', '9')]
}

/// A host name: one to four labels of letters and digits, hyphens only inside.
fn host(labels: Repeat) -> Vec<Item> {
    let label = || {
        group(
            seq([
                set(alnum(), Repeat::Between((1, 20))),
                group(
                    seq([lit("-"), set(alnum(), Repeat::Between((1, 20)))]),
                    Repeat::Between((0, 2)),
                ),
            ]),
            Repeat::One,
        )
    };
    vec![label(), group(seq([lit("."), label()]), labels)]
}

/// `local@host.tld`.
fn email() -> Vec<Item> {
    let mut local_chars = alnum();
    local_chars.extend("_%+-".chars().map(ch));
    let atom = || set(local_chars.clone(), Repeat::Between((1, 20)));
    let mut items = vec![
        atom(),
        group(seq([lit("."), atom()]), Repeat::Between((0, 2))),
        lit("@"),
    ];
    items.extend(host(Repeat::Between((1, 3))));
    items
}

fn hex(count: usize) -> Item {
    set(
        vec![range('0', '9'), range('a', 'f'), range('A', 'F')],
        Repeat::Exact(count),
    )
}

/// `8-4-4-4-12` hexadecimal digits.
fn uuid() -> Vec<Item> {
    vec![
        hex(8),
        lit("-"),
        hex(4),
        lit("-"),
        hex(4),
        lit("-"),
        hex(4),
        lit("-"),
        hex(12),
    ]
}

/// `scheme://host(:port)?(/path)*(?query)?(#fragment)?` with RFC 3986 characters.
fn uri() -> Vec<Item> {
    let mut scheme_rest = alnum();
    scheme_rest.extend("+.-".chars().map(ch));
    // Unreserved characters and sub-delimiters, and what each part adds.
    let mut path_chars = alnum();
    path_chars.extend("-._~!$&'()*+,;=:@".chars().map(ch));
    let mut query_chars = path_chars.clone();
    query_chars.extend("/?".chars().map(ch));
    let mut items = vec![
        set(vec![range('a', 'z'), range('A', 'Z')], Repeat::One),
        set(scheme_rest, Repeat::Between((0, 15))),
        lit("://"),
    ];
    items.extend(host(Repeat::Between((0, 3))));
    items.push(group(
        seq([lit(":"), digit(Repeat::Between((1, 5)))]),
        Repeat::ZeroOrOne,
    ));
    items.push(group(
        seq([lit("/"), set(path_chars, Repeat::ZeroOrMore)]),
        Repeat::ZeroOrMore,
    ));
    items.push(group(
        seq([lit("?"), set(query_chars.clone(), Repeat::ZeroOrMore)]),
        Repeat::ZeroOrOne,
    ));
    items.push(group(
        seq([lit("#"), set(query_chars, Repeat::ZeroOrMore)]),
        Repeat::ZeroOrOne,
    ));
    items
}

/// `0` to `255`, without leading zeros.
fn octet() -> Item {
    either(vec![
        vec![lit("25"), set(vec![range('0', '5')], Repeat::One)],
        vec![
            lit("2"),
            set(vec![range('0', '4')], Repeat::One),
            digit(Repeat::One),
        ],
        vec![lit("1"), digit(Repeat::Exact(2))],
        vec![set(vec![range('1', '9')], Repeat::One), digit(Repeat::One)],
        vec![digit(Repeat::One)],
    ])
}

fn ipv4() -> Vec<Item> {
    vec![
        octet(),
        lit("."),
        octet(),
        lit("."),
        octet(),
        lit("."),
        octet(),
    ]
}

/// RFC 3986's `IPv6address`: eight groups, or fewer around one `::`.
fn ipv6() -> Item {
    let h16 = || {
        set(
            vec![range('0', '9'), range('a', 'f'), range('A', 'F')],
            Repeat::Between((1, 4)),
        )
    };
    let h16_colon = |count: Repeat| group(seq([h16(), lit(":")]), count);
    let ls32 = || {
        either(vec![
            vec![h16(), lit(":"), h16()],
            vec![group(seq(ipv4()), Repeat::One)],
        ])
    };
    // Up to `n` groups before `::`, written `(h16 ":"){0,n-1} h16`, optional.
    let head = |n: usize| match n {
        0 => Vec::new(),
        1 => vec![group(seq([h16()]), Repeat::ZeroOrOne)],
        n => vec![group(
            seq([h16_colon(Repeat::Between((0, n - 1))), h16()]),
            Repeat::ZeroOrOne,
        )],
    };
    let compressed = |before: usize, after: Vec<Item>| {
        let mut items = head(before);
        items.push(lit("::"));
        items.extend(after);
        items
    };
    either(vec![
        vec![h16_colon(Repeat::Exact(6)), ls32()],
        compressed(0, vec![h16_colon(Repeat::Exact(5)), ls32()]),
        compressed(1, vec![h16_colon(Repeat::Exact(4)), ls32()]),
        compressed(2, vec![h16_colon(Repeat::Exact(3)), ls32()]),
        compressed(3, vec![h16_colon(Repeat::Exact(2)), ls32()]),
        compressed(4, vec![h16_colon(Repeat::One), ls32()]),
        compressed(5, vec![ls32()]),
        compressed(6, vec![h16()]),
        compressed(7, Vec::new()),
    ])
}
