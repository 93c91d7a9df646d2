//! Answers that are not answers, held back with one specific note (the `full`
//! profile): a reply that narrates tool use ("you can use the `search` function…")
//! or announces a step instead of taking it; an answer while the output file the task
//! names does not exist, while the file it asks to change is unchanged, before any
//! look at a path it names, or before anything changed when it asks for a change; and
//! an answer after source edits that were never checked (the verification guard).
//! Each hold is bounded, so a run always ends.

use std::path::Path;

use regex::Regex;

use crate::prompt::verification_note;

/// Why an answer is held.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Held {
    /// Source files were edited and nothing checked them since.
    Unverified(Vec<String>),
    /// The reply talks about a step instead of taking it.
    NotAnAnswer(NotAnswer),
    /// The task's output file does not exist.
    MissingOutput(String),
    /// The file the task asks to change is as it was.
    Unchanged(String),
    /// Calls the model planned (deferred for an earlier result) never ran.
    PlannedCalls(Vec<String>),
    /// The answer states a value no result shows (and the longer path a result
    /// writes that ends with it).
    Unsupported(String, Option<String>),
    /// The task asks for a new file and no call has written anything.
    NothingWritten,
    /// The task asks for a change and no call that may change something succeeded.
    NothingChanged,
    /// The file the task asks to change is as it was, and the answer describes the
    /// change of one of its lines.
    DescribedEdit(String, crate::described_edit::LineEdit),
    /// Nothing was looked at, and the task names this path of the workspace (or, with
    /// none, the answer names a file that is not in it).
    NotLooked(Option<crate::task_paths::TaskPath>),
    /// The answer names a file this run wrote (path, content) instead of telling what
    /// the task asked, and the task asked for no file.
    StoredInstead(String, String),
    /// The answer names another item of a compared list than the task's superlative
    /// picks.
    WrongPick(crate::extreme_pick::WrongPick),
    /// The task asks for a file's path and the answer names none, while this tool's
    /// result (tool, result) names a file of the workspace.
    NoPath(String, String),
    /// The task asks for a file's path and the answer writes one (said) that misses
    /// exactly one file of the workspace (path) only by case or a leading dot.
    NearMissPath(String, String),
}

impl Held {
    /// The note the model gets.
    pub(crate) fn note(&self) -> String {
        match self {
            Held::Unverified(files) => verification_note(files),
            Held::NotAnAnswer(why) => format!(
                "That was not an answer: {why}. Tools run only when you call them. Make the call now, or, if the task is done, reply with the final result itself."
            ),
            Held::MissingOutput(file) => format!(
                "The task asks for `{file}`, and it does not exist yet. If you have not found what goes in it, find it first (search, read_file); then write it with write_file, the whole content, and reply with a short final answer."
            ),
            Held::Unchanged(file) => format!(
                "The task asks you to change `{file}`, and it is still unchanged. Make that change now with edit_file (read or search the part to change first if you have not seen it), then reply with a short final answer."
            ),
            Held::Unsupported(value, meant) => {
                crate::supported::unsupported_note(value, meant.as_deref())
            }
            Held::DescribedEdit(file, edit) => format!(
                "Not done yet: `{file}` is still unchanged. Your answer describes changing the line `{}` to `{}`: make that change now with edit_file, then reply with a short final answer.",
                edit.old, edit.new
            ),
            Held::NotLooked(Some(named)) => format!(
                "Not answered yet: no call has looked at the workspace, and the task names `{}`, which is there. Look at it first ({}), then answer from what it shows.",
                named.path,
                if named.dir { "list_dir" } else { "read_file" }
            ),
            Held::NotLooked(None) => "Not answered yet: no call has looked at the workspace, and the file your answer names is not in it. Look first: search the workspace for what the task names (search), or list it (list_dir); then answer from what you find.".to_string(),
            Held::NothingChanged => "Not done yet: the task asks for a change, and no call of this run has changed anything. If the files already are as the task asks, reply that no change was needed and why; otherwise make the change now (edit_file for part of a file, write_file for a whole new one), then reply with a short final answer.".to_string(),
            Held::NothingWritten => "Not done yet: the task asks for a file to be written, and no call has written anything. Write it now with write_file (the path and the content the task asks for, from the results above), then reply with a short final answer.".to_string(),
            Held::StoredInstead(path, content) => {
                crate::stored_answer::stored_note(path, content)
            }
            Held::WrongPick(pick) => crate::extreme_pick::wrong_pick_note(pick),
            Held::NoPath(tool, result) => crate::path_answer::no_path_note(tool, result),
            Held::NearMissPath(said, path) => crate::path_answer::near_miss_note(said, path),
            Held::PlannedCalls(tools) => format!(
                "Not done yet: your earlier reply also called {}, and that call has not run (it waited for a result that is here now). Make it now, with values from the results above; if it is not needed after all, reply with the final answer.",
                backticked_list(tools)
            ),
        }
    }

    /// The rule that holds an answer so (see `rules`).
    pub(crate) fn rule(&self) -> crate::rules::Rule {
        use crate::rules::Rule;
        match self {
            Held::Unverified(_) => Rule::Unverified,
            Held::NotAnAnswer(why) if why.is_call_shaped() => Rule::CallShaped,
            Held::NotAnAnswer(_) => Rule::NotAnAnswer,
            Held::MissingOutput(_) => Rule::MissingOutput,
            Held::Unchanged(_) => Rule::UnchangedFile,
            Held::PlannedCalls(_) => Rule::PlannedCalls,
            Held::Unsupported(..) => Rule::UnsupportedValue,
            Held::NothingWritten => Rule::NothingWritten,
            Held::NothingChanged => Rule::NothingChanged,
            Held::NotLooked(_) => Rule::NotLooked,
            Held::DescribedEdit(..) => Rule::DescribedEdit,
            Held::StoredInstead(..) => Rule::StoredInstead,
            Held::WrongPick(_) => Rule::WrongPick,
            Held::NoPath(..) => Rule::NoPath,
            Held::NearMissPath(..) => Rule::NearMissPath,
        }
    }

    /// The kind, for the trace.
    pub(crate) fn kind(&self) -> &'static str {
        match self {
            Held::Unverified(_) => "unverified_edits",
            Held::NotAnAnswer(_) => "not_an_answer",
            Held::MissingOutput(_) => "missing_output",
            Held::Unchanged(_) => "unchanged_file",
            Held::PlannedCalls(_) => "planned_calls",
            Held::Unsupported(..) => "unsupported_value",
            Held::NothingWritten => "nothing_written",
            Held::NothingChanged => "nothing_changed",
            Held::NotLooked(_) => "not_looked",
            Held::DescribedEdit(..) => "described_edit",
            Held::StoredInstead(..) => "stored_instead",
            Held::WrongPick(_) => "wrong_pick",
            Held::NoPath(..) => "no_path",
            Held::NearMissPath(..) => "near_miss_path",
        }
    }
}

/// `names` (tools, paths) as the notes write them: `` `a`, `b` ``.
pub(crate) fn backticked_list(names: &[String]) -> String {
    let names: Vec<String> = names.iter().map(|t| format!("`{t}`")).collect();
    names.join(", ")
}

/// How often each hold may happen in one run.
#[derive(Debug, Default, Clone)]
pub(crate) struct HoldCounts {
    /// Verification holds.
    pub unverified: u32,
    /// Non-answer holds.
    pub not_an_answer: u32,
    /// Missing-output holds.
    pub missing_output: u32,
    /// Unchanged-file holds.
    pub unchanged: u32,
    /// Planned-call holds.
    pub planned: u32,
    /// Unsupported-value holds.
    pub unsupported: u32,
    /// Nothing-written holds.
    pub nothing_written: u32,
    /// Nothing-changed holds.
    pub nothing_changed: u32,
    /// Not-looked holds.
    pub not_looked: u32,
    /// Described-edit holds.
    pub described_edit: u32,
    /// Stored-instead holds.
    pub stored_instead: u32,
    /// Wrong-pick holds.
    pub wrong_pick: u32,
    /// No-path holds.
    pub no_path: u32,
    /// Near-miss-path holds.
    pub near_miss_path: u32,
}

impl HoldCounts {
    /// Whether `held` may still happen (without counting it).
    pub(crate) fn has_room(&self, held: &Held) -> bool {
        self.clone().allow(held)
    }

    /// Whether `held` may still happen, counting it when it may.
    pub(crate) fn allow(&mut self, held: &Held) -> bool {
        let (count, cap) = match held {
            Held::Unverified(_) => (&mut self.unverified, 2),
            Held::NotAnAnswer(_) => (&mut self.not_an_answer, 3),
            Held::MissingOutput(_) => (&mut self.missing_output, 1),
            Held::Unchanged(_) => (&mut self.unchanged, 1),
            Held::PlannedCalls(_) => (&mut self.planned, 1),
            Held::Unsupported(..) => (&mut self.unsupported, 1),
            Held::NothingWritten => (&mut self.nothing_written, 1),
            Held::NothingChanged => (&mut self.nothing_changed, 1),
            Held::NotLooked(_) => (&mut self.not_looked, 1),
            Held::DescribedEdit(..) => (&mut self.described_edit, 1),
            Held::StoredInstead(..) => (&mut self.stored_instead, 1),
            Held::WrongPick(_) => (&mut self.wrong_pick, 1),
            Held::NoPath(..) => (&mut self.no_path, 1),
            Held::NearMissPath(..) => (&mut self.near_miss_path, 1),
        };
        if *count >= cap {
            return false;
        }
        *count += 1;
        true
    }
}

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
    let lower = text.to_lowercase();
    if lower.starts_with("<tool_response>") {
        return Some(NotAnswer::FakeResult);
    }
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

/// The words before a `<tool_response>` that `text` writes after prose ("The
/// cheapest flight is WN-2240 … Now, I will book this flight." and then a booking
/// result no tool gave): the step the model chose, with its values, which the retry
/// is asked to take. The last [`PLAN_QUOTED`] characters of it, from a sentence's
/// start where one lies within them. `None` without prose before the tag.
fn plan_before_made_up_result(text: &str) -> Option<String> {
    let before = &text[..text.find("<tool_response>")?];
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

/// The file the task asks to be written (`… into a new file TODO.md`, `save it as
/// out.json`), when it names one.
pub(crate) fn output_file(task: &str) -> Option<String> {
    let pattern = Regex::new(
        r#"(?i)\b(?:write|writes|save|saves|create|creates|produce|generate|put|store)\b[^.!?\n]{0,80}?\b(?:in|into|to|as|named|called|file)\s+(?:a\s+)?(?:new\s+)?(?:file\s+)?[`'"]?([A-Za-z0-9_][A-Za-z0-9_./-]*\.[A-Za-z0-9]{1,8})\b"#,
    )
    .ok()?;
    // A name with no extension only right after the word "file", and quoted
    // (`Makefile`) or in capitals (VERSION): "write it to a file VERSION", not
    // "write it to disk" or "save a file for me".
    let bare = Regex::new(
        r#"(?i:\b(?:write|writes|save|saves|create|creates|produce|generate|put|store)\b[^.!?\n]{0,80}?\bfile\s+(?:named\s+|called\s+)?)(?:[`'"]([A-Za-z0-9_][A-Za-z0-9_-]*)[`'"]|\b([A-Z][A-Z0-9_-]+)\b)"#,
    )
    .ok()?;
    let found = match pattern.captures(task) {
        Some(caps) => caps.get(1)?.as_str(),
        None => {
            let caps = bare.captures(task)?;
            caps.get(1).or_else(|| caps.get(2))?.as_str()
        }
    };
    let file = found.trim_end_matches(['.', ',']).to_string();
    (!file.contains("..") && !file.starts_with('/')).then_some(file)
}

/// The sentence of `task` that names `file` (at most 300 characters): what the task
/// says goes in it ("… and write just that code into a new file named incident.txt.").
pub(crate) fn sentence_naming<'a>(task: &'a str, file: &str) -> Option<&'a str> {
    let mut start = 0;
    let mut sentences = Vec::new();
    let chars: Vec<(usize, char)> = task.char_indices().collect();
    for (index, &(at, c)) in chars.iter().enumerate() {
        let next = chars.get(index + 1).map(|&(_, c)| c);
        if matches!(c, '.' | '!' | '?') && next.is_none_or(char::is_whitespace) {
            sentences.push(&task[start..at + c.len_utf8()]);
            start = at + c.len_utf8();
        }
    }
    sentences.push(&task[start..]);
    sentences
        .into_iter()
        .map(str::trim)
        .find(|sentence| sentence.contains(file) && sentence.chars().count() <= 300)
}

/// The existing file the task asks to be changed (`change one constant in
/// pricing.py`, `fix the bug in src/main.py`), when it names one and does not say not
/// to (`do not change anything in README.md`).
pub(crate) fn file_to_change(task: &str) -> Option<String> {
    let pattern = Regex::new(
        r#"(?i)\b(?:change|changes|fix|edit|update|modify|bump|correct|replace|set)\b[^.!?\n]{0,80}?\b(?:in|of)\s+(?:the\s+)?(?:file\s+)?[`'"]?([A-Za-z0-9_][A-Za-z0-9_./-]*\.[A-Za-z0-9]{1,8})\b"#,
    )
    .ok()?;
    let found = pattern
        .captures_iter(task)
        .find(|caps| !negated_at(task, caps.get(0).map_or(0, |m| m.start())))?;
    let file = found
        .get(1)?
        .as_str()
        .trim_end_matches(['.', ','])
        .to_string();
    (!file.contains("..") && !file.starts_with('/')).then_some(file)
}

/// Whether the task asks for a new file it does not name in a way
/// [`output_file`] reads (`create the next migration: … its file name is
/// <number>_add_orders_note.sql`), and does not say not to.
pub(crate) fn asks_to_create(task: &str) -> bool {
    let Ok(pattern) =
        Regex::new(r"(?i)\b(?:create|creates|add|write|save)\b[^.!?\n]{0,120}?\bfile\b")
    else {
        return false;
    };
    let asks = pattern
        .find_iter(task)
        .any(|found| !negated_at(task, found.start()));
    asks
}

/// Whether `task` asks for a change in so many words: a sentence (or a clause after a
/// comma) that opens with a verb of change (`Set the version of each one…`, `In app.py,
/// rename the function…`), not negated.
pub(crate) fn asks_to_change(task: &str) -> bool {
    let Ok(pattern) = Regex::new(
        r"(?i)(?:^|[.!?:;]\s+|,\s*|\n\s*)(?:please\s+|now\s+|then\s+)?(?:change|set|update|rename|replace|fix|edit|bump|add|remove|delete|modify|correct|move|insert)\b",
    ) else {
        return false;
    };
    let asks = pattern
        .find_iter(task)
        .any(|found| !negated_at(task, found.start()));
    asks
}

/// Whether the words of `task` just before byte `start` say not to ("do not",
/// "don't", "never").
fn negated_at(task: &str, start: usize) -> bool {
    let before = task[..start].to_lowercase();
    let before = before.trim_end();
    before.ends_with("not") || before.ends_with("n't") || before.ends_with("never")
}

/// A hash of `file`'s bytes in `workspace` (inside it only), or `None` when it cannot
/// be read.
pub(crate) fn content_hash(workspace: &rein_tools::Workspace, file: &str) -> Option<u64> {
    use std::hash::{Hash, Hasher};
    let path = workspace.resolve(file).ok()?;
    let bytes = std::fs::read(path).ok()?;
    let mut hasher = std::collections::hash_map::DefaultHasher::new();
    bytes.hash(&mut hasher);
    Some(hasher.finish())
}

/// Whether the task's output file is missing from `root` (and was missing at the start,
/// so the task is to create it).
pub(crate) fn missing_output(root: &Path, file: &str) -> bool {
    !root.join(file).exists()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_sentence_that_names_the_file_is_what_goes_in_it() {
        let task = "server.log is a long application log. Find that line, take the code from it (it looks like PG-0000), and write just that code into a new file named incident.txt. Then tell me the code.";
        assert_eq!(
            sentence_naming(task, "incident.txt"),
            Some("Find that line, take the code from it (it looks like PG-0000), and write just that code into a new file named incident.txt.")
        );
        assert_eq!(
            sentence_naming("Write the list to TODO.md", "TODO.md"),
            Some("Write the list to TODO.md")
        );
        assert_eq!(sentence_naming("Nothing here.", "TODO.md"), None);
    }

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
    fn the_output_file_is_found_in_the_task() {
        for (task, file) in [
            (
                "Find every TODO comment and write them all into a new file TODO.md, one per line.",
                "TODO.md",
            ),
            ("Summarize the log and save it as report.txt.", "report.txt"),
            (
                "Create a file named out/result.json with the totals.",
                "out/result.json",
            ),
            (
                "Write just that version number into a new file VERSION in this workspace.",
                "VERSION",
            ),
            ("Save the rules to a file called `Makefile`.", "Makefile"),
        ] {
            assert_eq!(output_file(task).as_deref(), Some(file), "{task}");
        }
        for task in [
            "Which file defines UserRepository?",
            "Fix the bug in src/main.py.",
            "Read notes.txt and tell me the secret.",
            "Write the totals to a file with one line per region.",
            "Save a file For me.",
        ] {
            assert_eq!(output_file(task), None, "{task}");
        }
    }

    #[test]
    fn the_file_to_change_is_found_in_the_task() {
        for (task, file) in [
            (
                "The fix is to change one constant in pricing.py to the value the test expects.",
                "pricing.py",
            ),
            (
                "Then change the chart-lib version of the api package in deps.json to that same version.",
                "deps.json",
            ),
            ("Fix the bug in `src/main.py`.", "src/main.py"),
        ] {
            assert_eq!(file_to_change(task).as_deref(), Some(file), "{task}");
        }
        for task in [
            "Do not change anything in README.md.",
            "Which file defines UserRepository?",
            "Change the port from 8080 to 9090 in it.",
            "Write the code into a new file named incident.txt.",
        ] {
            assert_eq!(file_to_change(task), None, "{task}");
        }
    }

    #[test]
    fn a_task_that_asks_for_a_new_file_is_found() {
        assert!(asks_to_create("List the folder to find the highest number in use. Then create the next migration: its number is one higher, written with 4 digits like the others, and its file name is <number>_add_orders_note.sql inside migrations/."));
        assert!(asks_to_create("Add a file with the license text."));
        for task in [
            "Which file defines UserRepository?",
            "Do not create any file; tell me the port.",
            "Create a summary of the log. Then read the file notes.txt.",
        ] {
            assert!(!asks_to_create(task), "{task}");
        }
    }

    #[test]
    fn a_task_that_asks_for_a_change_is_found() {
        for task in [
            "Every service under services/ has a VERSION file. Set the version of each one to 1.1.0.",
            "In app.py, rename the function `calc` to `calculate_total` and update its call.",
            "Fix the spelling mistake 'recieve' in docs/guide.md.",
            "Read the log. Then change the constant.",
        ] {
            assert!(asks_to_change(task), "{task}");
        }
        for task in [
            "Which file defines UserRepository?",
            "How many bytes is firmware.bin? Answer with the number.",
            "Do not change anything; tell me the port.",
            "The settings changed yesterday: what is the timeout?",
        ] {
            assert!(!asks_to_change(task), "{task}");
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

    #[test]
    fn each_hold_is_bounded() {
        let mut counts = HoldCounts::default();
        let missing = Held::MissingOutput("a.md".into());
        assert!(counts.allow(&missing));
        assert!(!counts.allow(&missing));
        let not = Held::NotAnAnswer(NotAnswer::Announces);
        assert!(counts.allow(&not) && counts.allow(&not) && counts.allow(&not));
        assert!(!counts.allow(&not));
    }
}
