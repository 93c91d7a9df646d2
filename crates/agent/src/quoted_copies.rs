//! A string argument that copies the request's text with its quote characters changed
//! (`she said 'ship it' on Friday` for the request's `she said "ship it" on Friday`):
//! run with the request's text (`full`). Only the quotes differ and the request's span
//! is the one place the text occurs, so there is nothing to guess.

use serde_json::Value;

/// The quote characters one is read for another.
const QUOTES: [char; 7] = [
    '"', '\'', '`', '\u{2018}', '\u{2019}', '\u{201c}', '\u{201d}',
];

/// Shorter values are left as written.
const MIN_CHARS: usize = 8;

/// Restores, in `arguments`, every string that is `request`'s text but for its quote
/// characters; whether any was restored.
pub(crate) fn restore_request_quotes(arguments: &mut Value, request: &str) -> bool {
    match arguments {
        Value::String(text) => match request_span(text, request) {
            Some(span) => {
                *text = span;
                true
            }
            None => false,
        },
        Value::Array(items) => items.iter_mut().fold(false, |any, item| {
            restore_request_quotes(item, request) | any
        }),
        Value::Object(map) => map.values_mut().fold(false, |any, item| {
            restore_request_quotes(item, request) | any
        }),
        _ => false,
    }
}

/// The one span of `request` that `value` copies with other quote characters.
fn request_span(value: &str, request: &str) -> Option<String> {
    let chars: Vec<char> = value.chars().collect();
    if chars.len() < MIN_CHARS
        || !chars.iter().any(|c| QUOTES.contains(c))
        || request.contains(value)
    {
        return None;
    }
    let plain = |c: char| if QUOTES.contains(&c) { '"' } else { c };
    let wanted: Vec<char> = chars.iter().map(|c| plain(*c)).collect();
    let original: Vec<char> = request.chars().collect();
    let request_plain: Vec<char> = original.iter().map(|c| plain(*c)).collect();
    let mut found = request_plain
        .windows(wanted.len())
        .enumerate()
        .filter(|(_, window)| *window == wanted.as_slice())
        .map(|(at, _)| at);
    let at = found.next()?;
    if found.next().is_some() {
        return None;
    }
    Some(original[at..at + wanted.len()].iter().collect())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    const REQUEST: &str = "Search my notes using this exact query text, inner double quotes included: she said \"ship it\" on Friday\nThen tell me the title.";

    #[test]
    fn a_copy_with_other_quotes_gets_the_requests_quotes() {
        let mut arguments = json!({"query": "she said 'ship it' on Friday", "limit": 3});
        assert!(restore_request_quotes(&mut arguments, REQUEST));
        assert_eq!(
            arguments,
            json!({"query": "she said \"ship it\" on Friday", "limit": 3})
        );
        // A part of the request's text is restored too.
        let mut part = json!({"query": "she said 'ship it'"});
        assert!(restore_request_quotes(&mut part, REQUEST));
        assert_eq!(part, json!({"query": "she said \"ship it\""}));
        // Already exact, too short, or another text: left as written.
        for value in [
            "she said \"ship it\" on Friday",
            "'ab cd'",
            "he said 'ship it' on Sunday",
            "she said ship it on Friday",
        ] {
            let mut arguments = json!({ "query": value });
            assert!(!restore_request_quotes(&mut arguments, REQUEST), "{value}");
            assert_eq!(arguments, json!({ "query": value }));
        }
        // Twice in the request: which one is meant is not known.
        let twice = "Find 'a b c d' or \"a b c d\".";
        let mut arguments = json!({"q": "`a b c d`"});
        assert!(!restore_request_quotes(&mut arguments, twice));
    }
}
