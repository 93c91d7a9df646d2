//! Replies that are not answers yet: a call written as text, a reply that narrates
//! tool use ("you can use the `search` function…"), explains steps, or announces a
//! step instead of taking it — each told apart from a real answer or a question back
//! to the user.

use regex::Regex;

/// Why a reply is not an answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum NotAnswer {
    /// The whole reply is a call written as text.
    CallAsText,
    /// A call of an offered tool sits inside other text.
    HoldsCall,
    /// It is written as a tool result.
    FakeResult,
    /// It says what it will do (the words kept here), then writes that step's result
    /// itself instead of calling the tool.
    PlanThenMadeUpResult(String),
    /// It opens a call wrapper the reader could not take.
    BrokenCall,
    /// It describes using the tool instead of calling it.
    Narrates(String),
    /// It announces a step and stops.
    Announces,
    /// It lists steps for someone else to take.
    ExplainsSteps,
    /// It copies the note of the retry instead of answering.
    EchoesNote,
    /// It says the task is done and gives nothing the task asks for.
    ClaimsDone,
    /// It gives the task's own words back.
    EchoesTask,
    /// It only names a call ("tool_call").
    NamesACall,
    /// It is a file's text as the read showed it, line numbers and all.
    CopiesRead,
    /// It writes this placeholder where a value goes (`<confirm_code>`).
    Placeholder(String),
}

impl NotAnswer {
    /// A call written as text, a broken one, or a result the model wrote itself: the
    /// reply is a step, not words about one.
    pub(crate) fn is_call_shaped(&self) -> bool {
        matches!(
            self,
            NotAnswer::CallAsText
                | NotAnswer::HoldsCall
                | NotAnswer::FakeResult
                | NotAnswer::PlanThenMadeUpResult(_)
                | NotAnswer::BrokenCall
        )
    }
}

impl std::fmt::Display for NotAnswer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            NotAnswer::CallAsText => f.write_str("it is a call written as text, not an answer"),
            NotAnswer::HoldsCall => f.write_str("it holds a call written as text, not an answer"),
            NotAnswer::FakeResult => f.write_str(
                "it is written as a tool result, and results come only from the tools you call",
            ),
            NotAnswer::PlanThenMadeUpResult(plan) => write!(
                f,
                "it writes a tool result itself, and results come only from the tools you call. Your reply said: \"{plan}\" Take that step now by calling its tool, with the values your reply chose"
            ),
            NotAnswer::BrokenCall => {
                f.write_str("it is a broken call written as text, not an answer")
            }
            NotAnswer::Narrates(tool) => {
                write!(f, "it describes using `{tool}` instead of calling it")
            }
            NotAnswer::Announces => f.write_str("it announces a step and stops before taking it"),
            NotAnswer::ExplainsSteps => f.write_str("it explains steps instead of taking them"),
            NotAnswer::EchoesNote => f.write_str("it repeats the instruction instead of answering"),
            NotAnswer::ClaimsDone => {
                f.write_str("it says the task is done but does not give what the task asks for")
            }
            NotAnswer::EchoesTask => f.write_str("it repeats the task instead of answering it"),
            NotAnswer::NamesACall => f.write_str("it names a call instead of making one or answering"),
            NotAnswer::Placeholder(slot) => write!(
                f,
                "it writes `{slot}` where a value goes, and no result gave that value yet"
            ),
            NotAnswer::CopiesRead => f.write_str(
                "it copies a file's text as the read showed it instead of giving what the task asks for",
            ),
        }
    }
}

/// Why `answer` is not an answer: it narrates the use of one of `tools` (names it and
/// says a step would use it), or only announces what it is about to do.
pub(crate) fn not_an_answer(answer: &str, tools: &[String]) -> Option<NotAnswer> {
    let text = answer.trim();
    if rein_format::read::bare_calls(text).is_some() {
        return Some(NotAnswer::CallAsText);
    }
    // A call of an offered tool inside other text (`({"name": "read_file", …}`).
    if rein_format::read::loose_calls(text)
        .iter()
        .any(|call| tools.contains(&call.name))
    {
        return Some(NotAnswer::HoldsCall);
    }
    if after_result_marker(text).is_some() {
        return Some(NotAnswer::FakeResult);
    }
    let lower = text.to_lowercase();
    if let Some(plan) = plan_before_made_up_result(text) {
        return Some(NotAnswer::PlanThenMadeUpResult(plan));
    }
    if opens_a_call(&lower, tools) {
        return Some(NotAnswer::BrokenCall);
    }
    // A question back to the user ("Which file do you mean?", "Let me know which
    // region to use?") is theirs to answer: no step is forced on it.
    if asks_the_user(text) {
        return None;
    }
    if let Some(tool) = named_tool(text, tools) {
        if narrates(&lower) {
            return Some(NotAnswer::Narrates(tool.clone()));
        }
    }
    if announces(&lower) {
        return Some(NotAnswer::Announces);
    }
    if explains_steps(&lower) {
        return Some(NotAnswer::ExplainsSteps);
    }
    None
}

/// Whether `text` ends by asking its reader something: its last line ends with a
/// question mark.
fn asks_the_user(text: &str) -> bool {
    text.trim()
        .lines()
        .last()
        .is_some_and(|line| line.trim_end().ends_with('?'))
}

/// The most characters of a plan quoted back in a note.
const PLAN_QUOTED: usize = 400;
/// The fewest words before the tag that make a plan.
const PLAN_WORDS: usize = 4;

/// What follows when `text` opens (after white space) with the marker tool results come
/// back in (`<tool_response>`, in any case): a result the model writes itself.
pub(crate) fn after_result_marker(text: &str) -> Option<&str> {
    let text = text.trim_start();
    let marker = rein_format::hermes::RESPONSE_OPEN;
    let head = text.get(..marker.len())?;
    head.eq_ignore_ascii_case(marker)
        .then(|| &text[marker.len()..])
}

/// The words before a `<tool_response>` that `text` writes after prose ("The
/// cheapest flight is WN-2240 … Now, I will book this flight." and then a booking
/// result no tool gave): the step the model chose, with its values, which the retry
/// is asked to take. The last [`PLAN_QUOTED`] characters of it, from a sentence's
/// start where one lies within them. `None` without prose before the tag.
fn plan_before_made_up_result(text: &str) -> Option<String> {
    let before = &text[..text.find(rein_format::hermes::RESPONSE_OPEN)?];
    let plan: String = before.split_whitespace().collect::<Vec<_>>().join(" ");
    // Prose: a few words, not a call written as code around the tag
    // (`write_file("notes.txt", "<tool_response>…`).
    let words = plan
        .split(' ')
        .filter(|word| word.chars().any(char::is_alphabetic))
        .count();
    if words < PLAN_WORDS {
        return None;
    }
    let skip = plan.chars().count().saturating_sub(PLAN_QUOTED);
    let tail: String = plan.chars().skip(skip).collect();
    if skip == 0 {
        return Some(tail);
    }
    // From the first sentence that starts inside the kept tail.
    let start = tail.find(". ").map(|i| i + 2).unwrap_or(0);
    Some(tail[start..].to_string())
}

/// Whether `lower` opens with a call wrapper (`<tools>`, `<tool_call>`, `<function…`,
/// a fence; `<tool_response>` is refused before this) that names one of `tools`, or is
/// a call object (`{"name": …, "arguments": …`) the reader could not take: never an
/// answer.
fn opens_a_call(lower: &str, tools: &[String]) -> bool {
    // A call object cut short or unbalanced (`{"name":"sort_numbers","arguments":{…}`)
    // is a call whatever it names.
    let compact: String = lower.chars().filter(|c| !c.is_whitespace()).collect();
    let call_object = ["{\"name\":", "[{\"name\":"]
        .iter()
        .any(|o| compact.starts_with(o))
        && (compact.contains("\"arguments\":") || compact.contains("\"parameters\":"));
    if call_object {
        return true;
    }
    // A tag named after an offered tool (`<tool_search>`, `<get_weather city="Oslo"/>`),
    // or a call object whose opening became one (`<tool_search", "arguments": {…}}`).
    let tag_of_a_tool = tools.iter().any(|tool| {
        lower
            .strip_prefix('<')
            .and_then(|rest| rest.strip_prefix(tool.to_lowercase().as_str()))
            .is_some_and(|rest| rest.is_empty() || rest.starts_with(['>', ' ', '/', '\n', '"']))
    });
    if tag_of_a_tool {
        return true;
    }
    let opens = ["<tools>", "<tool_call>", "<function", "```json"]
        .iter()
        .any(|o| lower.starts_with(o));
    opens
        && tools.iter().any(|tool| {
            let tool = tool.to_lowercase();
            ["\"", "=", "<", ">"]
                .iter()
                .any(|before| lower.contains(&format!("{before}{tool}")))
        })
}

/// The tool `answer` names as a tool, if any.
pub(crate) fn named_tool<'a>(answer: &str, tools: &'a [String]) -> Option<&'a String> {
    let lower = answer.to_lowercase();
    tools.iter().find(|tool| mentions_tool(&lower, tool))
}

/// The note for a reply that talks about `tool` after it already ran: its result is
/// shown again, and the model is asked for the answer it gives.
pub(crate) fn already_ran_note(why: &NotAnswer, tool: &str, result: &str) -> String {
    format!(
        "That was not an answer: {why}. `{tool}` already ran, and its result was:\n{result}\nReply to the task now with what this result says (the id, value or fact itself), in one or two sentences. Call a tool only if a different step is still needed."
    )
}

/// The note for steps explained to the user after `tool` ran with success: its
/// result, and either the answer or the first step, taken.
pub(crate) fn explained_steps_note(tool: &str, result: &str) -> String {
    format!(
        "That was not an answer: {}. The latest result (of `{tool}`) was:\n{result}\nIf that finishes the task, reply with the answer itself in one or two sentences. If the steps you listed are still needed, take the first one now: call its tool.",
        NotAnswer::ExplainsSteps
    )
}

/// Whether `lower` is instructions for someone else (a list of steps), or ends
/// introducing something that never comes.
fn explains_steps(lower: &str) -> bool {
    static PHRASES: [&str; 6] = [
        "follow these steps",
        "the following steps",
        "here are the steps",
        "here is the step-by-step",
        "here's the step-by-step",
        "you can follow",
    ];
    // A colon before closing emphasis ("… from the file `OWNERS`:**") ends it too.
    let end = lower.trim_end_matches(|c: char| c.is_whitespace() || c == '*' || c == '_');
    end.ends_with(':') || PHRASES.iter().any(|p| lower.contains(p))
}

/// Whether `lower` names `tool` as a tool (in backticks, or next to "function"/"tool").
pub(crate) fn mentions_tool(lower: &str, tool: &str) -> bool {
    let tool = tool.to_lowercase();
    if lower.contains(&format!("`{tool}`")) || lower.contains(&format!("{tool}(")) {
        return true;
    }
    let words = ["function", "tool", "command"];
    words
        .iter()
        .any(|w| lower.contains(&format!("{tool} {w}")) || lower.contains(&format!("{w} {tool}")))
}

/// Whether `lower` talks about using a tool rather than reporting what it found
/// (also in the past: "I used the search function … it returned the line").
fn narrates(lower: &str) -> bool {
    static PHRASES: [&str; 24] = [
        "i would call",
        "i would use",
        "i would need to",
        "i need to call",
        "i need to use",
        "we need to use",
        "i used the",
        "we used the",
        "i called the",
        "by calling the",
        "you can use",
        "you could use",
        "you can call",
        "we can use",
        "i can use",
        "i will use",
        "i'll use",
        "let me use",
        "i will call",
        "i'll call",
        "to continue",
        "next step",
        "you would",
        "can be used to",
    ];
    PHRASES.iter().any(|p| lower.contains(p))
}

/// Whether `lower` only announces a step: it opens with an intention and ends with a
/// colon or is short and says nothing found.
fn announces(lower: &str) -> bool {
    let opens = [
        "let me ",
        "i will ",
        "i'll ",
        "now i will",
        "now, i will",
        "next, i",
        "first, i",
        "i am going to",
        "i'm going to",
    ]
    .iter()
    .any(|o| lower.starts_with(o));
    // "… did not create the event as expected. Let's try again." tries nothing.
    let retries = [
        "let's try again",
        "let me try again",
        "let's try that again",
    ]
    .iter()
    .any(|p| lower.trim_end_matches(['.', '!']).ends_with(p));
    // A short reply whose last sentence announces the step ("I apologize for the empty
    // response. I will now proceed to the next tool call.").
    let last = lower
        .trim_end()
        .rsplit(['\n', '.', '!'])
        .find(|sentence| !sentence.trim().is_empty())
        .unwrap_or_default()
        .trim();
    let ends_announcing = lower.len() < 160
        && [
            "i will now",
            "i'll now",
            "now i will",
            "now, i will",
            "next, i will",
            "next, i'll",
            "i will proceed",
            "i'll proceed",
            "i will call",
            "i'll call",
            "i will use",
            "i'll use",
            "let me now",
            "let me call",
            "let me use",
        ]
        .iter()
        .any(|o| last.starts_with(o));
    (opens && (lower.ends_with(':') || lower.len() < 160))
        || ends_announcing
        || retries
        || announces_purpose(lower)
}

/// Whether `lower` opens with a purpose and what it is about to do for it ("To find
/// the failing test, I'll search the log…", "To get the weather, I need to first
/// find…"): a plan, however long, not a result.
fn announces_purpose(lower: &str) -> bool {
    static INTENT: std::sync::LazyLock<Option<Regex>> = std::sync::LazyLock::new(|| {
        Regex::new(
            r"^to [^.\n]{0,200}?, (?:first,? )?(?:i'll|i will|i would need to|i would call|i would use|i would first|i need to|i have to|i must|i should|we need to|we will|we'll|let me|let's|i'm going to|i am going to|you need to|you'll need to|you will need to)\b",
        )
        .ok()
    });
    let concludes = [
        "therefore",
        "thus,",
        "so the ",
        "so, the ",
        "in summary",
        "the answer is",
    ]
    .iter()
    .any(|c| lower.contains(c));
    !concludes && INTENT.as_ref().is_some_and(|re| re.is_match(lower))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tools() -> Vec<String> {
        ["read_file", "write_file", "search", "list_dir"]
            .map(String::from)
            .to_vec()
    }

    #[test]
    fn a_tag_named_after_a_tool_is_a_broken_call() {
        for text in [
            "<search>",
            "<search query=\"todo\"/>",
            "<READ_FILE path=\"a\">",
            "<search\", \"arguments\": {\"pattern\": \"release\"}}",
        ] {
            assert!(
                matches!(not_an_answer(text, &tools()), Some(NotAnswer::BrokenCall)),
                "{text}"
            );
        }
        // Markup that names no tool, and a tool named inside a sentence, are not.
        assert!(not_an_answer("<b>42</b>", &tools()).is_none());
        assert!(not_an_answer("<searchlight> is the answer", &tools()).is_none());
    }

    #[test]
    fn a_result_written_after_a_plan_is_that_step_not_taken() {
        let reply = "The cheapest flight is WN-2240 with a price of $214.\n\nNow, I will book this flight for the passenger \"Ana Souza\".\n\n<tool_response>\nflight_id: WN-2240\nbooking_confirmation: 1234567890\n</tool_response>";
        let Some(NotAnswer::PlanThenMadeUpResult(plan)) = not_an_answer(reply, &tools()) else {
            panic!("not read as a plan and a made-up result: {reply}");
        };
        assert_eq!(
            plan,
            "The cheapest flight is WN-2240 with a price of $214. Now, I will book this flight for the passenger \"Ana Souza\"."
        );
        assert!(NotAnswer::PlanThenMadeUpResult(plan.clone()).is_call_shaped());
        assert!(NotAnswer::PlanThenMadeUpResult(plan.clone())
            .to_string()
            .contains("WN-2240"));
        // A long plan is quoted from a sentence's start, at most PLAN_QUOTED chars.
        let long = format!(
            "{} Book WN-2240 now. <tool_response>ok",
            "Words here. ".repeat(60)
        );
        let Some(NotAnswer::PlanThenMadeUpResult(plan)) = not_an_answer(&long, &tools()) else {
            panic!("a long plan");
        };
        assert!(plan.chars().count() <= PLAN_QUOTED, "{plan}");
        assert!(plan.starts_with("Words here.") && plan.ends_with("Book WN-2240 now."));
        // A reply that opens with the tag, or has no words before it, is the plain kind.
        assert_eq!(
            not_an_answer("<tool_response>\nok\n</tool_response>", &tools()),
            Some(NotAnswer::FakeResult)
        );
        assert_eq!(plan_before_made_up_result("- 1. <tool_response>x"), None);
        // A call written as code around the tag is no plan.
        assert_eq!(
            plan_before_made_up_result(
                "write_file(\"ephemeral.txt\", \"<tool_response>\nephemeral (adjective)\n</tool_response>\")"
            ),
            None
        );
    }

    #[test]
    fn narration_and_announcements_are_not_answers() {
        for text in [
            "To continue the search, you can use the `search` function with the `mode` set to \"content\".",
            "I will use the read_file tool to open src/main.py.",
            "To find the event, I used the search function with the pattern \"EVT-1\". The search function returned the line 31234, which contains the event and its status.",
            "Let me list the files first:",
            "I'll check the directory.",
            "I apologize for the empty response. I will now proceed to the next tool call.",
            "To find every TODO comment, you can follow these steps:\n\n1. **List all files in the workspace**:",
            "Here is what the file will contain:",
            "2. **Read the release owner's handle from the file `OWNERS`:**\n",
            "<tools>\n  <function name=\"read_file\" arguments={\"path\": \"a\"}}\n</tools>",
            "```json\n{{\"name\": \"search\", \"arguments\": {\"query\": \"x\"}}}\n```",
            "<tools>\n  <function>\n    <name>read_file</name>\n    <arguments>\n      <path>a.txt</path>\n    </arguments>\n  </function>\n</tools>",
            "({\"name\": \"list_dir\", \"arguments\": {\"path\": \"TODO.md\"}}",
            "{\"name\":\"sort_numbers\",\"arguments\":{\"query\":\"[9, 2, 7]\"}",
            "To get the weather for Priya Nair's office, I need to first find the office id and then get the weather for that office. The office id is `OFF-07`, but the city name is not provided in the request.",
            "To find the name of the failing test and read why it fails, I'll search the log file for the pattern \"test failed\". The log file is named `test_output.log`.",
            "To reserve 10 units of product LMP-0042 at a warehouse that has at least 10 units in stock, you need to first get the product to see the stock of each warehouse.",
            "To create an order for customer \"C-1042\" with 2 units of SKU \"A-100\", and tell me the order id, I would call the `create_order` function with the provided arguments. The function would return a JSON object with the order id.",
            "I apologize, but it seems like the previous call did not create the event as expected. Let's try again.",
            "To find the latest published version of the npm package \"left-pad\", I would need to call the `get_latest_version` function with the package name \"left-pad\".",
        ] {
            assert!(not_an_answer(text, &tools()).is_some(), "{text}");
        }
        for text in [
            "TODO.md now lists the 4 TODO comments.",
            "The function `parse` in src/lib.rs returns the count; I changed it to 3.",
            "The secret is 42.",
            "I searched the files: there are 4 TODOs, written to TODO.md.",
            "```json\n{\"count\": 4}\n```",
            "{\"name\": \"Alice\", \"age\": 31}",
            "To fix the failing test, I changed BULK_DISCOUNT_RATE to 0.15 in pricing.py.",
            "To answer: the weather in Trondheim is 7.2 °C.",
            "TODO.md lists the 4 TODOs. Let me know if you need anything else.",
            "TODO.md lists the 4 TODOs. I'll be happy to help with anything else.",
            "To sort the numbers 9, 2, and 7, you can use the `sort` function in Python.\n\nSo, the sorted numbers from smallest to largest are 2, 7, and 9.",
            "To confirm the change, you can read `config/server.yaml` again.",
            "To find the customer's id and plan, I'll extract the relevant information from the matching line:\n- id: C-90412\n- plan: enterprise\nTherefore, the customer's id is C-90412 and their plan is enterprise.",
        ] {
            assert_eq!(not_an_answer(text, &tools()), None, "{text}");
        }
    }

    #[test]
    fn a_question_back_to_the_user_is_not_a_step_announced() {
        let tools = vec!["read_file".to_string(), "shell".to_string()];
        for reply in [
            "Let me know which environment you mean: staging or production?",
            "I will need the name of the branch. Which branch should I use?",
            "Let me check first: do you want the tests run with `shell` too?",
        ] {
            assert_eq!(not_an_answer(reply, &tools), None, "{reply}");
        }
        // An announcement that asks nothing is still held.
        assert_eq!(
            not_an_answer("Let me read the file.", &tools),
            Some(NotAnswer::Announces)
        );
    }
}
