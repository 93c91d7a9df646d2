//! GBNF for integers within bounds: digit-range expressions, so a model cannot write
//! 1 where the schema says `minimum: 6`.

use crate::canonical::NumberBounds;

/// A GBNF expression for the integers `bounds` allow, written as JSON digits (also
/// the digits of other notations); `None` when the bounds are too wide to matter or
/// contradict each other (any integer then; validation enforces the bounds).
pub fn integer_expression(bounds: &NumberBounds) -> Option<String> {
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
pub(crate) fn integer_range(lo: Option<i64>, hi: Option<i64>) -> Option<String> {
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
        parts.push(format!("\"-\" ( {magnitudes} )"));
    }
    // Non-negative part: values in [max(lo, 0), hi].
    if hi.is_none_or(|h| h >= 0) {
        parts.push(positive_range(
            lo.map_or(0, |l| l.max(0)) as u64,
            hi.map(|h| h as u64),
        ));
    }
    Some(
        parts
            .into_iter()
            .map(|p| format!("( {p} )"))
            .collect::<Vec<_>>()
            .join(" | "),
    )
}

/// Non-negative integers in `[lo, hi]` (`hi = None`: unbounded, up to 18 digits).
fn positive_range(lo: u64, hi: Option<u64>) -> String {
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
                alternatives.push(format!("[1-9] [0-9]{{{},{}}}", lo_len, 17));
            }
        }
    }
    alternatives.join(" | ")
}

fn digits(n: u64) -> usize {
    n.to_string().len()
}

/// Numbers of one length between `x` and `y` (equal length, `x <= y`).
fn same_length(x: &str, y: &str) -> String {
    if x.is_empty() {
        return String::new();
    }
    if x == y {
        return format!("\"{x}\"");
    }
    if x.bytes().all(|b| b == b'0') && y.bytes().all(|b| b == b'9') {
        return format!("[0-9]{{{}}}", x.len());
    }
    let (a, b) = (x.as_bytes()[0] - b'0', y.as_bytes()[0] - b'0');
    let rest = x.len() - 1;
    if a == b {
        return format!("\"{a}\" ({})", same_length(&x[1..], &y[1..]));
    }
    let any = |n: usize| {
        if n == 0 {
            String::new()
        } else {
            format!(" [0-9]{{{n}}}")
        }
    };
    let mut parts = Vec::new();
    if rest == 0 {
        return format!("[{a}-{b}]");
    }
    parts.push(format!(
        "\"{a}\" ({})",
        same_length(&x[1..], &"9".repeat(rest))
    ));
    if b > a + 1 {
        parts.push(format!("[{}-{}]{}", a + 1, b - 1, any(rest)));
    }
    parts.push(format!(
        "\"{b}\" ({})",
        same_length(&"0".repeat(rest), &y[1..])
    ));
    parts.join(" | ")
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
        let expr = integer_range(lo, hi).unwrap();
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
        assert_eq!(integer_range(None, None), None);
        assert_eq!(integer_range(Some(i64::MIN), Some(i64::MAX)), None);
        // Expressions stay small even for wide ranges.
        let wide = integer_range(Some(-99_999_999_999), Some(12_345_678_901_234)).unwrap();
        assert!(wide.len() < 2_000, "{} bytes", wide.len());
        assert_eq!(integer_range(Some(5), Some(1)), None);
    }
}
