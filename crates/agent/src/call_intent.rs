//! Which shape a reply takes, read from its opening: the first few tokens decoded
//! without a grammar show whether the model is writing calls (in the family's markers,
//! in other markup, or as JSON naming a tool) or prose. A reply that opens calls is then
//! decoded under the family's call grammar from its first token, so it is written in
//! the template's format whatever wrapper the model was about to use; a prose reply is
//! decoded as it would have been (setting `call_intent`, decision 0048).

use rein_engine::TurnRequest;
use rein_format::Family;
use rein_protocol::ToolChoice;

/// Tokens of the opening: enough for a wrapper or a fence, then `{"name"`.
pub const OPENING_TOKENS: u32 = 12;

/// What a reply's opening shows the model is about to write.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Opening {
    /// Calls, in any wrapper: the reply is decoded as the family's calls.
    Calls,
    /// No call: a tool result written out again (`<tool_response>ok`). The reply is
    /// decoded as prose, so it says the answer in words.
    Answer,
    /// Prose or anything else: the reply is decoded as it would have been.
    Free,
}

/// Whether `request` is a reply whose shape the model chooses: calls or prose under
/// `auto`, decoded under the call grammar, not held to prose.
pub fn chooses_shape(request: &TurnRequest) -> bool {
    request.choice == ToolChoice::Auto
        && request.constrained
        && !request.prose
        && request.response.is_none()
        && request
            .tools
            .as_ref()
            .is_some_and(|tools| !tools.is_empty())
}

/// The request for `request`'s opening: the same prompt (so the reply reuses its
/// cache), a few tokens, no grammar.
pub fn opening_request(request: &TurnRequest) -> TurnRequest {
    let mut opening = request.clone();
    opening.constrained = false;
    opening.call_or_answer = false;
    opening.max_tokens = Some(OPENING_TOKENS);
    opening
}

/// Reads `opening` (a reply's first tokens, decoded without a grammar): the family's
/// call marker, other markup (`<tools>`, `<function …>`) that is not empty, or a JSON
/// object (in a fence or a list, braces doubled or not) whose first key is `name` start
/// calls; the marker results come back in (`<tool_response>`) before anything but a
/// call starts no call;
/// an empty wrapper (`<tools></tools>`, which the small models write both before a
/// call and instead of an answer), a call naming a tool that is not in `tools`, prose,
/// code fences of another language and JSON of other keys are free.
pub fn read_opening(opening: &str, family: Family, tools: &[String]) -> Opening {
    match read_shape(opening, family) {
        Opening::Calls if names_another_tool(opening, tools) => Opening::Free,
        shape => shape,
    }
}

/// The shape `opening` shows, whatever tool it names.
fn read_shape(opening: &str, family: Family) -> Opening {
    let text = opening.trim_start();
    if text.starts_with(family.call_opener()) {
        return Opening::Calls;
    }
    // The marker results come back in, written by the model: a result echoed (an
    // answer's material), unless a call follows it.
    if let Some(inside) = crate::not_an_answer::after_result_marker(text) {
        return match inside.trim_start() {
            empty if empty.starts_with("</") => Opening::Free,
            inside if names_a_tool(inside) => Opening::Calls,
            _ => Opening::Answer,
        };
    }
    if let Some(tag) = text.strip_prefix('<') {
        if !tag.starts_with(|c: char| c.is_ascii_alphabetic() || c == '|') {
            return Opening::Free;
        }
        // A tag still open when the opening ends (`<function name="x"`) is a call's.
        let Some(close) = tag.find('>') else {
            return Opening::Calls;
        };
        return match tag[close + 1..].trim_start().starts_with("</") {
            true => Opening::Free,
            false => Opening::Calls,
        };
    }
    match names_a_tool(text) {
        true => Opening::Calls,
        false => Opening::Free,
    }
}

/// Whether `text` opens a JSON object (optionally fenced as `json`, in a list, braces
/// doubled) whose first key is `name`, or could still become one.
fn names_a_tool(text: &str) -> bool {
    let text = text.trim_start();
    let unfenced = match text.strip_prefix("```") {
        Some(rest) => {
            let rest = rest
                .strip_prefix("json")
                .or_else(|| rest.strip_prefix("JSON"))
                .unwrap_or(rest);
            // A fence of another language is code, not a call.
            if rest.starts_with(|c: char| c.is_alphanumeric()) {
                return false;
            }
            rest.trim_start()
        }
        None => text,
    };
    if !unfenced.starts_with('{') && !unfenced.starts_with("[{") {
        return false;
    }
    let key = unfenced.trim_start_matches(|c: char| c == '{' || c == '[' || c.is_whitespace());
    // The opening may end inside the key: `{"na` is as good as `{"name"`.
    const KEY: &str = "\"name\"";
    key.starts_with(KEY) || KEY.starts_with(key)
}

/// The tool an opening's call names, when the name can be read: the value of its first
/// `"name"` key or `name=` attribute, whole (`Some((name, true))`) or cut by the end of
/// the opening (`Some((prefix, false))`).
fn named_tool(opening: &str) -> Option<(&str, bool)> {
    let at = opening.find("\"name\"").map(|i| i + "\"name\"".len());
    let at = at.or_else(|| opening.find("name=").map(|i| i + "name=".len()))?;
    let rest = opening[at..].trim_start();
    let rest = rest.strip_prefix(':').unwrap_or(rest).trim_start();
    let rest = rest.strip_prefix('"')?;
    match rest.find('"') {
        Some(end) => Some((&rest[..end], true)),
        None => Some((rest, false)),
    }
}

/// Whether the call `opening` begins names no offered tool (nor a spelling of one that
/// rein repairs): such an opening is left free, so the unknown-tool retry answers it as
/// it would without `call_intent`, instead of the call grammar making the model pick an
/// offered tool that does not fit.
fn names_another_tool(opening: &str, tools: &[String]) -> bool {
    let Some((name, whole)) = named_tool(opening) else {
        return false;
    };
    let offered: Vec<&str> = tools.iter().map(String::as_str).collect();
    match whole {
        true => {
            !offered.contains(&name)
                && rein_format::read::repair_tool_name(name, &offered).is_none()
        }
        false => !name.is_empty() && !offered.iter().any(|tool| tool.starts_with(name)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tools() -> Vec<String> {
        ["search", "read_file", "query_data", "get_employee"]
            .map(String::from)
            .to_vec()
    }

    #[test]
    fn a_call_of_a_tool_that_is_not_offered_is_free() {
        for opening in [
            "{\"name\": \"FindRestaurant\", \"arguments\": {\"query",
            "<tools>\n{{\"name\": \"rotate_photo\"",
            "```json\n{\"name\": \"web_sea",
            "<tools>\n<function name=\"convert_currency\"",
        ] {
            assert_eq!(
                read_opening(opening, Family::Hermes, &tools()),
                Opening::Free,
                "{opening:?}"
            );
        }
        // Offered names, whole, cut short or in a spelling rein repairs, are calls.
        for opening in [
            "{\"name\": \"search\", \"arg",
            "{\"name\": \"query_da",
            "{\"name\": \"ReadFile\"",
            "<tools>\n<function name=\"search\"",
        ] {
            assert_eq!(
                read_opening(opening, Family::Hermes, &tools()),
                Opening::Calls,
                "{opening:?}"
            );
        }
    }

    #[test]
    fn openings_the_small_models_write_for_calls_are_calls() {
        for opening in [
            "<tool_call>\n{\"name\"",
            "<tools>\n{{\"name\": \"search\"",
            "<tools>\n<function name=\"query_data\"",
            "<tools>\n  <get_employee employee",
            "<function name=\"search\"",
            "```json\n{\"name\": \"search\"",
            "```\n[{\"name\": ",
            "{\"name\": \"read_file\"",
            "  {{\"na",
            "[{\"name\"",
            "{\n  \"",
        ] {
            assert_eq!(
                read_opening(opening, Family::Hermes, &tools()),
                Opening::Calls,
                "{opening:?}"
            );
        }
    }

    #[test]
    fn prose_code_and_other_json_are_not_calls() {
        for opening in [
            "The total is 429.",
            "To find the file, I will",
            "```python\ndef main():",
            "{\"total\": 429}",
            "- a.txt\n- b.txt",
            "42",
            "",
            "< 5 items",
            "<tools></tools>",
            "<tools>\n</tools>",
            "<tool_response></tool_response>",
        ] {
            assert_eq!(
                read_opening(opening, Family::Hermes, &tools()),
                Opening::Free,
                "{opening:?}"
            );
        }
    }

    #[test]
    fn each_family_s_own_marker_opens_calls() {
        assert_eq!(
            read_opening("<|python_tag|>", Family::Llama3, &tools()),
            Opening::Calls
        );
        let mistral = read_opening("[TOOL_CALLS]search[ARGS]", Family::Mistral, &tools());
        assert_eq!(mistral, Opening::Calls);
        let gemma = read_opening("<|tool_call>call:search{", Family::Gemma, &tools());
        assert_eq!(gemma, Opening::Calls);
    }

    #[test]
    fn a_result_written_out_is_no_call() {
        for opening in [
            "<tool_response>\nok\n</tool",
            "<tool_response>\nDraft saved.",
            "  <TOOL_RESPONSE>42",
        ] {
            assert_eq!(
                read_opening(opening, Family::Hermes, &tools()),
                Opening::Answer,
                "{opening:?}"
            );
        }
        // A call inside a result tag is still a call.
        let wrapped = read_opening("<tool_response>\n{\"name\": \"", Family::Hermes, &tools());
        assert_eq!(wrapped, Opening::Calls);
    }
}
