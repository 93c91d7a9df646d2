//! GBNF for integers within bounds: digit-range expressions, so a model cannot write
//! 1 where the schema says `minimum: 6`.

use super::expr::{alt, chars, group, lit, one_of, range, seq, Production, Repeat};
use crate::canonical::NumberBounds;

/// A GBNF expression for the integers `bounds` allow, written as JSON digits (also
/// the digits of other notations); `None` when the bounds are too wide to matter or
/// contradict each other (any integer then; validation enforces the bounds).
pub fn integer_expression(bounds: &NumberBounds) -> Option<Production> {
    let (lo, hi) = integer_bounds(bounds);
    integer_range(lo, hi)
}

/// Inclusive integer bounds from JSON-Schema bounds.
fn integer_bounds(b: &NumberBounds) -> (Option<i64>, Option<i64>) {
    let to_int = |f: f64| (f.is_finite() && f.abs() < 9.0e15).then_some(f as i64);
    let lo = [
        b.minimum.map(f64::ceil),
        b.exclusive_minimum.map(|m| m.floor() + 1.0),
    ]
    .into_iter()
    .flatten()
    .filter_map(to_int)
    .max();
    let hi = [
        b.maximum.map(f64::floor),
        b.exclusive_maximum.map(|m| m.ceil() - 1.0),
    ]
    .into_iter()
    .flatten()
    .filter_map(to_int)
    .min();
    (lo, hi)
}

/// Largest magnitude handled exactly; wider bounds are left to validation.
const MAX_BOUND: i64 = 100_000_000_000_000_000; // 10^17

/// A GBNF expression for the integers in `[lo, hi]` (either side open), written
/// without leading zeros; `None` when the bounds are too wide to matter.
pub(crate) fn integer_range(lo: Option<i64>, hi: Option<i64>) -> Option<Production> {
    let lo = lo.filter(|v| v.unsigned_abs() < MAX_BOUND as u64);
    let hi = hi.filter(|v| v.unsigned_abs() < MAX_BOUND as u64);
    if lo.is_none() && hi.is_none() {
        return None;
    }
    if let (Some(l), Some(h)) = (lo, hi) {
        if l > h {
            return None;
        }
    }
    let mut parts = Vec::new();
    // Negative part: values in [lo, min(hi, -1)], written "-" + magnitude.
    let largest_negative = hi.map_or(-1, |h| h.min(-1));
    if lo.is_none_or(|l| l <= largest_negative) {
        let magnitudes = positive_range((-largest_negative) as u64, lo.map(|l| (-l) as u64));
        parts.push(seq([lit("-"), group(magnitudes, Repeat::One)]));
    }
    // Non-negative part: values in [max(lo, 0), hi].
    if hi.is_none_or(|h| h >= 0) {
        parts.push(positive_range(
            lo.map_or(0, |l| l.max(0)) as u64,
            hi.map(|h| h as u64),
        ));
    }
    Some(one_of(
        parts.into_iter().map(|p| seq([group(p, Repeat::One)])),
    ))
}

/// `[0-9]` repeated `n` times.
fn any_digits(n: usize) -> super::expr::Item {
    chars(vec![range('0', '9')], false, Repeat::Exact(n))
}

/// Non-negative integers in `[lo, hi]` (`hi = None`: unbounded, up to 18 digits).
fn positive_range(lo: u64, hi: Option<u64>) -> Production {
    let lo_len = digits(lo);
    let mut alternatives = Vec::new();
    match hi {
        Some(hi) => {
            for len in lo_len..=digits(hi) {
                let from = lo.max(if len == 1 {
                    0
                } else {
                    10u64.pow(len as u32 - 1)
                });
                let to = hi.min(10u64.pow(len as u32) - 1);
                if from <= to {
                    alternatives.push(same_length(&from.to_string(), &to.to_string()));
                }
            }
        }
        None => {
            let to = 10u64.pow(lo_len as u32) - 1;
            alternatives.push(same_length(&lo.to_string(), &to.to_string()));
            if lo_len < 18 {
                alternatives.push(seq([
                    chars(vec![range('1', '9')], false, Repeat::One),
                    chars(vec![range('0', '9')], false, Repeat::Between((lo_len, 17))),
                ]));
            }
        }
    }
    one_of(alternatives)
}

fn digits(n: u64) -> usize {
    n.to_string().len()
}

/// The digit as a character.
fn digit(d: u8) -> char {
    char::from(b'0' + d)
}

/// Numbers of one length between `x` and `y` (equal length, `x <= y`).
fn same_length(x: &str, y: &str) -> Production {
    if x.is_empty() {
        return seq([]);
    }
    if x == y {
        return seq([lit(x)]);
    }
    if x.bytes().all(|b| b == b'0') && y.bytes().all(|b| b == b'9') {
        return seq([any_digits(x.len())]);
    }
    let (a, b) = (x.as_bytes()[0] - b'0', y.as_bytes()[0] - b'0');
    let rest = x.len() - 1;
    if a == b {
        return seq([lit(&a.to_string()), alt([same_length(&x[1..], &y[1..])])]);
    }
    if rest == 0 {
        return seq([chars(vec![range(digit(a), digit(b))], false, Repeat::One)]);
    }
    let mut parts = vec![seq([
        lit(&a.to_string()),
        alt([same_length(&x[1..], &"9".repeat(rest))]),
    ])];
    if b > a + 1 {
        parts.push(seq([
            chars(vec![range(digit(a + 1), digit(b - 1))], false, Repeat::One),
            any_digits(rest),
        ]));
    }
    parts.push(seq([
        lit(&b.to_string()),
        alt([same_length(&"0".repeat(rest), &y[1..])]),
    ]));
    one_of(parts)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The expression as a regular expression (it only uses literals, classes,
    /// counted repetition, groups and alternation).
    fn to_regex(expr: &str) -> regex::Regex {
        let re = expr.replace(['"', ' '], "");
        regex::Regex::new(&format!("^(?:{re})$")).unwrap()
    }

    fn check(lo: Option<i64>, hi: Option<i64>) {
        let expr = integer_range(lo, hi).unwrap().to_string();
        let re = to_regex(&expr);
        for n in -1200i64..=1200 {
            let inside = lo.is_none_or(|l| n >= l) && hi.is_none_or(|h| n <= h);
            assert_eq!(
                re.is_match(&n.to_string()),
                inside,
                "{n} in [{lo:?}, {hi:?}] via {expr}"
            );
        }
        // No leading zeros, no "-0".
        for bad in ["007", "-0", "00", "-007"] {
            assert!(!re.is_match(bad), "{bad} matched {expr}");
        }
    }

    #[test]
    fn ranges_match_exactly_the_integers_inside() {
        for (lo, hi) in [
            (Some(6), None),
            (Some(0), None),
            (None, Some(7)),
            (Some(1), Some(7)),
            (Some(-7), Some(7)),
            (Some(-300), Some(-12)),
            (Some(-5), None),
            (None, Some(-3)),
            (Some(13), Some(997)),
            (Some(0), Some(0)),
            (Some(100), Some(100)),
            (None, Some(0)),
            (Some(-1000), Some(1000)),
        ] {
            check(lo, hi);
        }
    }

    #[test]
    fn unbounded_or_huge_bounds_are_left_open() {
        assert!(integer_range(None, None).is_none());
        assert!(integer_range(Some(i64::MIN), Some(i64::MAX)).is_none());
        // Expressions stay small even for wide ranges.
        let wide = integer_range(Some(-99_999_999_999), Some(12_345_678_901_234))
            .unwrap()
            .to_string();
        assert!(wide.len() < 2_000, "{} bytes", wide.len());
        assert!(integer_range(Some(5), Some(1)).is_none());
    }
}
