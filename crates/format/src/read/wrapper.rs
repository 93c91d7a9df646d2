//! Calls written outside the family's call markers, in the wrappers small models use
//! instead: a ```` ```json ```` fence, `<tools>`, `<tool_call>`, `<function_call>` or
//! `<tool_response>` tags, bare JSON objects or an array of them (`name`/`function` with
//! `arguments`/`parameters`, arguments as an object or as JSON text),
//! `<function=NAME>{…}</function>`, and `<function><name>…</name><arguments>…` or
//! `<function name="…" arguments='…'>`, or inside `<tools>` a tag named after the tool
//! (`<get_weather arguments={…} />`). A block is read as calls only when all of it
//! is calls; anything else in it makes the block text (prose may follow the last
//! block). Objects written with doubled braces (`{{…}}`) are read. Also the loose scan for
//! anything call-shaped that a harness without a grammar would run.

use serde_json::{Map, Value};

use crate::family::hermes::RawCall;

/// Tags that wrap JSON calls.
const TAGS: [(&str, &str); 5] = [
    ("<tools>", "</tools>"),
    ("<tool_call>", "</tool_call>"),
    // A call written where the template puts results (the model imitating the turn
    // it just read).
    ("<tool_response>", "</tool_response>"),
    ("<function_call>", "</function_call>"),
    ("<functioncall>", "</functioncall>"),
];

/// A text that is nothing but calls in one or more wrappers (whitespace between
/// them), read strictly: every call has a string name and object arguments (or JSON
/// text of one), and no other key but `type: "function"` and an `id`. `None` for
/// anything less clear.
pub fn bare_calls(text: &str) -> Option<Vec<RawCall>> {
    match calls_then_text(text)? {
        (calls, "") => Some(calls),
        _ => None,
    }
}

/// Calls in wrappers as [`bare_calls`] reads them, then plain prose to the end (the
/// model saying what the calls will do): the calls and that prose (trimmed, maybe
/// empty). `None` when what follows the calls could itself hold a call: a line that
/// opens a wrapper, or anything call-shaped.
pub fn calls_then_text(text: &str) -> Option<(Vec<RawCall>, &str)> {
    let mut rest = text.trim();
    let mut calls = Vec::new();
    while !rest.is_empty() {
        let Some((block, after)) = next_block(rest) else {
            let prose = rest
                .lines()
                .all(|line| !may_open_wrapper(line.trim_start()))
                && json_objects(rest).is_empty();
            return (!calls.is_empty() && prose).then_some((calls, rest));
        };
        calls.extend(block);
        // Objects may be separated by a comma, as in a list without its brackets.
        let after = after.trim_start();
        rest = after.strip_prefix(',').unwrap_or(after).trim_start();
        // A closing fence left over after tags (the model opened none).
        if rest == "```" {
            rest = "";
        }
    }
    (!calls.is_empty()).then_some((calls, ""))
}

/// The JSON value at the start of `text` and the text after it. An object written
/// with doubled braces (`{{"name": …}}`, as in a template that escapes them) is read
/// as that object.
fn json_value(text: &str) -> Option<(Value, &str)> {
    let first = |text: &str| -> Option<(Value, usize)> {
        let mut values = serde_json::Deserializer::from_str(text).into_iter::<Value>();
        let value = values.next()?.ok()?;
        Some((value, values.byte_offset()))
    };
    if let Some((value, end)) = first(text) {
        return Some((value, &text[end..]));
    }
    let inner = text.strip_prefix("{{")?;
    let (value, end) = first(&text[1..])?;
    let after = text[1 + end..].trim_start().strip_prefix('}')?;
    (inner.starts_with(|c: char| c == '"' || c.is_whitespace()) && value.is_object())
        .then_some((value, after))
}

/// The calls of the wrapper block at the start of `text`, and the text after it.
fn next_block(text: &str) -> Option<(Vec<RawCall>, &str)> {
    if let Some(inner) = text.strip_prefix("```") {
        let end = inner.find("```")?;
        let body = inner[..end]
            .trim_start_matches(|c: char| c.is_ascii_alphabetic() || c == '_')
            .trim();
        return Some((calls_in(body)?, &inner[end + 3..]));
    }
    for (open, close) in TAGS {
        if let Some(inner) = text.strip_prefix(open) {
            let end = inner.find(close)?;
            let body = inner[..end].trim();
            let calls = calls_in(body)
                .or_else(|| tagged_functions(body))
                .or_else(|| bare_calls(body))
                .or_else(|| tool_named_tags(body))?;
            return Some((calls, &inner[end + close.len()..]));
        }
    }
    if text.starts_with("<function") {
        return function_tag(text);
    }
    if text.starts_with(['{', '[']) {
        let (value, after) = json_value(text)?;
        return Some((calls_of(value)?, after));
    }
    None
}

/// JSON calls: objects one after another, or arrays of them.
fn calls_in(body: &str) -> Option<Vec<RawCall>> {
    if !body.starts_with(['{', '[']) {
        return None;
    }
    let mut calls = Vec::new();
    let mut rest = body;
    while !rest.is_empty() {
        let (value, after) = json_value(rest)?;
        calls.extend(calls_of(value)?);
        let after = after.trim_start();
        rest = after.strip_prefix(',').unwrap_or(after).trim_start();
    }
    (!calls.is_empty()).then_some(calls)
}

/// One call object, or an array of them.
fn calls_of(value: Value) -> Option<Vec<RawCall>> {
    match value {
        Value::Array(items) if !items.is_empty() => items.into_iter().map(strict_call).collect(),
        Value::Object(_) => Some(vec![strict_call(value)?]),
        _ => None,
    }
}

/// A call object whose keys are a name (`name`, or `function` as a name or as an
/// object holding the call), arguments (`arguments` or `parameters`, an object or
/// JSON text of one), and nothing else but `type: "function"` and `id`.
fn strict_call(value: Value) -> Option<RawCall> {
    let Value::Object(mut map) = value else {
        return None;
    };
    if let Some(Value::Object(inner)) = map.get("function") {
        if inner.contains_key("name") {
            let Some(Value::Object(inner)) = map.remove("function") else {
                return None;
            };
            if !map.keys().all(|k| k == "type" || k == "id") {
                return None;
            }
            return strict_call(Value::Object(inner));
        }
    }
    let name = match (map.remove("name"), map.remove("function")) {
        (Some(Value::String(name)), None) | (None, Some(Value::String(name))) => name,
        _ => return None,
    };
    let arguments = match (map.remove("arguments"), map.remove("parameters")) {
        (Some(arguments), None) | (None, Some(arguments)) => arguments_of(arguments)?,
        (None, None) => Value::Object(Map::new()),
        _ => return None,
    };
    match map.remove("type") {
        None => {}
        Some(Value::String(kind)) if kind == "function" => {}
        Some(_) => return None,
    }
    map.remove("id");
    map.is_empty().then_some(RawCall { name, arguments })
}

/// Arguments as an object, or JSON text of an object.
fn arguments_of(value: Value) -> Option<Value> {
    match value {
        Value::Object(_) => Some(value),
        Value::String(text) => match serde_json::from_str::<Value>(&text) {
            Ok(parsed @ Value::Object(_)) => Some(parsed),
            _ => None,
        },
        _ => None,
    }
}

/// `<function=NAME>{…}</function>`, `<function name="NAME">{…}</function>`,
/// `<function name="NAME" arguments='{…}'>` or `arguments={…} />` (closed or not), at the
/// start of `text`.
fn function_tag(text: &str) -> Option<(Vec<RawCall>, &str)> {
    let after = text.strip_prefix("<function")?;
    let (name, inline, after_tag) = if let Some(rest) = after.strip_prefix('=') {
        let end = rest.find('>')?;
        (rest[..end].trim().to_string(), None, &rest[end + 1..])
    } else {
        if !after.starts_with(char::is_whitespace) {
            return None;
        }
        let (attributes, rest) = attributes(after)?;
        let name = match attributes.get("name")? {
            Value::String(name) => name.clone(),
            _ => return None,
        };
        (name, attributes.get("arguments").cloned(), rest)
    };
    if name.is_empty() {
        return None;
    }
    let trimmed = after_tag.trim_start();
    let (arguments, rest) = match inline {
        Some(inline) => {
            let rest = trimmed.strip_prefix("</function>").unwrap_or(trimmed);
            (arguments_of(inline)?, rest)
        }
        None => {
            let end = trimmed.find("</function>")?;
            let body = trimmed[..end].trim();
            let arguments = if body.is_empty() {
                Value::Object(Map::new())
            } else {
                arguments_of(Value::String(body.to_string()))?
            };
            (arguments, &trimmed[end + "</function>".len()..])
        }
    };
    Some((vec![RawCall { name, arguments }], rest))
}

/// A tag's attributes up to its `>` (or `/>`): `key="value"`, `key='value'`, or a
/// JSON object as the value (`arguments={…}`); and the text after the tag.
fn attributes(text: &str) -> Option<(Map<String, Value>, &str)> {
    let mut found = Map::new();
    let mut rest = text;
    loop {
        rest = rest.trim_start();
        if let Some(after) = rest.strip_prefix("/>").or_else(|| rest.strip_prefix('>')) {
            return Some((found, after));
        }
        let equals = rest.find('=')?;
        let key = rest[..equals].trim();
        if key.is_empty() || !key.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
            return None;
        }
        let value = &rest[equals + 1..];
        let (parsed, after) = match value.chars().next()? {
            quote @ ('"' | '\'') => {
                let end = value[1..].find(quote)?;
                (
                    Value::String(value[1..1 + end].to_string()),
                    &value[end + 2..],
                )
            }
            '{' | '[' => {
                let mut values = serde_json::Deserializer::from_str(value).into_iter::<Value>();
                let parsed = values.next()?.ok()?;
                (parsed, &value[values.byte_offset()..])
            }
            _ => return None,
        };
        found.insert(key.to_string(), parsed);
        rest = after;
    }
}

/// `<function><name>NAME</name><arguments>{…}</arguments></function>`, one or more.
fn tagged_functions(body: &str) -> Option<Vec<RawCall>> {
    let mut calls = Vec::new();
    let mut rest = body.trim();
    while !rest.is_empty() {
        let inner_end = rest.find("</function>")?;
        let inner = rest.strip_prefix("<function>")?[..inner_end - "<function>".len()].trim();
        let name = element(inner, "name")?.trim().to_string();
        let arguments = match element(inner, "arguments").or_else(|| element(inner, "parameters")) {
            Some(text) if !text.trim().is_empty() => {
                arguments_of(Value::String(text.trim().to_string()))?
            }
            _ => Value::Object(Map::new()),
        };
        if name.is_empty() {
            return None;
        }
        calls.push(RawCall { name, arguments });
        rest = rest[inner_end + "</function>".len()..].trim_start();
    }
    (!calls.is_empty()).then_some(calls)
}

/// `<NAME arguments={…} />` (or `arguments='{…}'`), one or more, each tag named after
/// the tool it calls; only inside a `<tools>`-like wrapper, and only `arguments` as
/// the attribute.
fn tool_named_tags(body: &str) -> Option<Vec<RawCall>> {
    let mut calls = Vec::new();
    let mut rest = body.trim();
    while !rest.is_empty() {
        let after = rest.strip_prefix('<')?;
        let name_end = after.find(|c: char| !(c.is_ascii_alphanumeric() || "_-.".contains(c)))?;
        let name = &after[..name_end];
        if name.is_empty() || name == "function" {
            return None;
        }
        let (mut attributes, after_tag) = attributes(&after[name_end..])?;
        let arguments = arguments_of(attributes.remove("arguments")?)?;
        if !attributes.is_empty() {
            return None;
        }
        let close = format!("</{name}>");
        let after_tag = after_tag.trim_start();
        rest = after_tag
            .strip_prefix(close.as_str())
            .unwrap_or(after_tag)
            .trim_start();
        calls.push(RawCall {
            name: name.to_string(),
            arguments,
        });
    }
    (!calls.is_empty()).then_some(calls)
}

/// The text of `<tag>…</tag>` in `text`.
fn element<'a>(text: &'a str, tag: &str) -> Option<&'a str> {
    let open = format!("<{tag}>");
    let close = format!("</{tag}>");
    let start = text.find(&open)? + open.len();
    let end = text[start..].find(&close)? + start;
    Some(&text[start..end])
}

/// Where wrapped calls may begin in `text`: the start of the first line (from the line
/// start `from` on) that opens with a wrapper (after spaces), or that is still too
/// short to tell. Text before it is certainly not part of a wrapper.
pub fn wrapper_start(text: &str, from: usize) -> Option<usize> {
    let mut start = from;
    loop {
        let line = text[start..].trim_start_matches([' ', '\t']);
        if line.is_empty() || may_open_wrapper(line) || opening_prefix(line) {
            return Some(start);
        }
        let newline = text[start..].find('\n')?;
        start += newline + 1;
    }
}

/// Whether text that starts with `text` (already trimmed) may be a call written in
/// some wrapper, so a stream must hold it until the reply ends.
pub fn may_open_wrapper(text: &str) -> bool {
    text.starts_with(['{', '[', '`', '<'])
}

/// Whether `line` is all of it a proper prefix of a wrapper opening (more text will
/// tell).
fn opening_prefix(line: &str) -> bool {
    !line.contains('\n') && ["```", "<"].iter().any(|o| o.starts_with(line))
}

/// Every JSON object in `text` that looks like a call (`name` or `function`, with
/// `arguments` or `parameters`, fenced or not), in order: how a harness without a
/// grammar reads output.
pub fn loose_calls(text: &str) -> Vec<RawCall> {
    json_objects(text)
        .into_iter()
        .filter_map(call_shaped)
        .collect()
}

fn call_shaped(value: Value) -> Option<RawCall> {
    let Value::Object(mut map) = value else {
        return None;
    };
    let name = match map.remove("name").or_else(|| map.remove("function")) {
        Some(Value::String(name)) => name,
        Some(Value::Object(mut inner)) => {
            // {"function": {"name": .., "arguments": ..}}
            let name = inner.remove("name")?.as_str()?.to_string();
            map.extend(inner);
            name
        }
        _ => return None,
    };
    let arguments = match map.remove("arguments").or_else(|| map.remove("parameters")) {
        Some(Value::Object(args)) => Value::Object(args),
        Some(Value::String(s)) => serde_json::from_str(&s).unwrap_or(Value::String(s)),
        None => Value::Object(Map::new()),
        Some(other) => other,
    };
    Some(RawCall { name, arguments })
}

/// Every top-level JSON object that parses, scanning from each `{`.
pub fn json_objects(text: &str) -> Vec<Value> {
    let mut found = Vec::new();
    let mut offset = 0;
    while let Some(start) = text[offset..].find('{') {
        let at = offset + start;
        let mut stream = serde_json::Deserializer::from_str(&text[at..]).into_iter::<Value>();
        match stream.next() {
            Some(Ok(value)) => {
                found.push(value);
                offset = at + stream.byte_offset().max(1);
            }
            _ => offset = at + 1,
        }
    }
    found
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn names(text: &str) -> Option<Vec<(String, Value)>> {
        bare_calls(text).map(|calls| calls.into_iter().map(|c| (c.name, c.arguments)).collect())
    }

    #[test]
    fn only_text_that_is_wholly_calls_is_read_as_calls() {
        let one =
            bare_calls("{\"name\": \"list_dir\", \"arguments\": {\"path\": \".\"}}\n").unwrap();
        assert_eq!(one[0].name, "list_dir");
        assert_eq!(one[0].arguments, json!({"path": "."}));
        let two = bare_calls("```json\n{\"name\": \"a\", \"arguments\": {}}\n{\"name\": \"b\", \"arguments\": {}}\n```");
        assert_eq!(two.map(|c| c.len()), Some(2));
        for text in [
            "Sure: {\"name\": \"a\", \"arguments\": {}}",
            "{\"name\": \"a\", \"arguments\": {}} and then",
            "{\"name\": \"a\", \"arguments\": \"not json\"}",
            "{\"name\": \"a\", \"arguments\": {}, \"extra\": 1}",
            "{\"name\": \"a\", \"arguments\": {\"path\": ",
            "{\"name\": \"a\", \"arguments\": [1]}",
            "```json\n{\"title\": \"a config, not a call\"}\n```",
            "<tools>not json</tools>",
            "<tools><get_weather city=\"Paris\" /></tools>",
            "<get_weather arguments={\"city\": \"Paris\"} />",
            "The answer is 42.",
        ] {
            assert_eq!(bare_calls(text), None, "{text}");
        }
    }

    #[test]
    fn the_wrappers_small_models_write_are_read() {
        let expected = Some(vec![("get_weather".to_string(), json!({"city": "Paris"}))]);
        for text in [
            "```json\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}}\n```",
            "```\n{\"name\": \"get_weather\", \"parameters\": {\"city\": \"Paris\"}}\n```",
            "<tools>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}}\n</tools>",
            "<function_call>{\"name\": \"get_weather\", \"arguments\": \"{\\\"city\\\": \\\"Paris\\\"}\"}</function_call>",
            "[{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}}]",
            "{\"type\": \"function\", \"function\": {\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}}}",
            "{\"function\": \"get_weather\", \"parameters\": {\"city\": \"Paris\"}}",
            "<function=get_weather>{\"city\": \"Paris\"}</function>",
            "<function name=\"get_weather\" arguments='{\"city\": \"Paris\"}'>",
            "<function name=\"get_weather\" arguments={\"city\": \"Paris\"} />",
            "<tools><function><name>get_weather</name><arguments>{\"city\": \"Paris\"}</arguments></function></tools>",
            "<tools>\n  <function name=\"get_weather\" arguments={\"city\": \"Paris\"} />\n</tools>\n```",
            "<tool_response>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}}\n</tool_response>",
            "<tools>\n  <get_weather arguments={\"city\": \"Paris\"} />\n</tools>",
        ] {
            assert_eq!(names(text), expected, "{text}");
        }
        let parallel = "```json\n[{\"name\": \"a\", \"arguments\": {}}, {\"name\": \"b\", \"arguments\": {\"x\": 1}}]\n```\n```json\n{\"name\": \"c\"}\n```";
        assert_eq!(names(parallel).map(|c| c.len()), Some(3));
        let tools = "<tools>\n  <function name=\"a\" arguments={\"x\": 1} />\n  <function name=\"b\" arguments={} />\n</tools>";
        assert_eq!(names(tools).map(|c| c.len()), Some(2));
        let listed = "{\"name\": \"a\", \"arguments\": {}}, {\"name\": \"b\", \"arguments\": {}}";
        assert_eq!(names(listed).map(|c| c.len()), Some(2));
    }

    #[test]
    fn a_wrapper_may_begin_at_the_start_of_any_line() {
        let text = "I will check.\n```json\n{}";
        assert_eq!(wrapper_start(text, 0), Some("I will check.\n".len()));
        assert_eq!(wrapper_start("Plain text\nmore text", 0), None);
        assert_eq!(
            wrapper_start("Plain text\n", 0),
            Some(11),
            "a new line may open one"
        );
        assert_eq!(wrapper_start("Plain text\n`", 0), Some(11));
        assert_eq!(wrapper_start("{", 0), Some(0));
    }

    #[test]
    fn loose_reading_finds_call_shaped_json_anywhere() {
        let fenced = "I'll list it.\n```json\n{\"function\": \"list_dir\", \"parameters\": {\"path\": \".\"}}\n```";
        assert_eq!(
            loose_calls(fenced),
            vec![RawCall {
                name: "list_dir".into(),
                arguments: json!({"path": "."})
            }]
        );
        let nested = "{\"type\": \"function\", \"function\": {\"name\": \"shell\", \"arguments\": \"{\\\"command\\\": \\\"ls\\\"}\"}}";
        assert_eq!(
            loose_calls(nested),
            vec![RawCall {
                name: "shell".into(),
                arguments: json!({"command": "ls"})
            }]
        );
        assert!(loose_calls("The answer is {not json}.").is_empty());
    }
}
