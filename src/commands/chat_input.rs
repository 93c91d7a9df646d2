//! What a line typed into `rein chat`'s session means: a message to the model or a
//! slash command, and the line editor's helper that keeps multi-line input open and
//! completes command names.

use std::path::PathBuf;

use rustyline::completion::Completer;
use rustyline::highlight::Highlighter;
use rustyline::hint::Hinter;
use rustyline::validate::{ValidationContext, ValidationResult, Validator};
use rustyline::Helper;

/// Opens and closes a block of several lines (as Ollama's sessions do).
pub const BLOCK_QUOTE: &str = "\"\"\"";

/// The slash commands, each with its argument and what it does (for `/help` and
/// completion).
pub const COMMANDS: &[(&str, &str, &str)] = &[
    ("/help", "", "this list"),
    ("/tools", "FILE", "offer the tools of a JSON file (an OpenAI-style array); `/tools off` removes them"),
    ("/system", "TEXT", "set the system message (no text: remove it)"),
    ("/reset", "", "forget the conversation (the system message and tools stay)"),
    ("/save", "FILE", "write the conversation to a JSON file"),
    ("/load", "FILE", "replace the conversation with one saved by /save"),
    ("/model", "NAME", "load another model (a name, a .gguf path or hf:…); the conversation stays"),
    ("/stats", "", "tokens of the last turn (reused from the KV cache, evaluated, generated) and of the session"),
    ("/bye", "", "leave (so does Ctrl-D)"),
];

/// One line of input, read.
#[derive(Debug, PartialEq)]
pub enum Input {
    /// Text for the model.
    Message(String),
    /// Nothing to do (a blank line).
    Empty,
    /// A slash command.
    Command(Command),
}

/// A slash command and its argument.
#[derive(Debug, PartialEq)]
pub enum Command {
    Help,
    Tools(Option<PathBuf>),
    System(Option<String>),
    Reset,
    Save(PathBuf),
    Load(PathBuf),
    Model(String),
    Stats,
    Bye,
    /// A command that needs an argument it was not given, or one that does not exist:
    /// what to tell the user.
    Unusable(String),
}

/// Reads one (possibly multi-line) entry of the line editor.
pub fn parse(line: &str) -> Input {
    let trimmed = line.trim();
    if trimmed.is_empty() {
        return Input::Empty;
    }
    if let Some(block) = block_text(trimmed) {
        return if block.trim().is_empty() {
            Input::Empty
        } else {
            Input::Message(block.to_string())
        };
    }
    // A path such as `/etc/hosts is …` is a message: commands are one word of letters.
    let (word, rest) = trimmed
        .split_once(char::is_whitespace)
        .unwrap_or((trimmed, ""));
    let is_command = word.len() > 1
        && word.starts_with('/')
        && word[1..].chars().all(|c| c.is_ascii_alphabetic());
    if !is_command {
        return Input::Message(joined_continuations(trimmed));
    }
    Input::Command(command(word, rest.trim()))
}

/// The slash command `word` with its argument `rest`.
fn command(word: &str, rest: &str) -> Command {
    let needs = |what: &str| Command::Unusable(format!("{word} needs {what}"));
    match word {
        "/help" | "/?" => Command::Help,
        "/tools" if rest == "off" => Command::Tools(None),
        "/tools" if rest.is_empty() => needs("a JSON file of tools (or `off`)"),
        "/tools" => Command::Tools(Some(PathBuf::from(rest))),
        "/system" => Command::System((!rest.is_empty()).then(|| rest.to_string())),
        "/reset" | "/clear" => Command::Reset,
        "/save" if rest.is_empty() => needs("a file to write"),
        "/save" => Command::Save(PathBuf::from(rest)),
        "/load" if rest.is_empty() => needs("a file saved by /save"),
        "/load" => Command::Load(PathBuf::from(rest)),
        "/model" if rest.is_empty() => needs("a model (a name, a .gguf path or hf:…)"),
        "/model" => Command::Model(rest.to_string()),
        "/stats" => Command::Stats,
        "/bye" | "/exit" | "/quit" => Command::Bye,
        _ => Command::Unusable(format!("unknown command {word}; /help lists them")),
    }
}

/// The text of a `"""` block, when `text` is one.
fn block_text(text: &str) -> Option<&str> {
    let inner = text.strip_prefix(BLOCK_QUOTE)?;
    Some(inner.strip_suffix(BLOCK_QUOTE).unwrap_or(inner))
}

/// Lines ended by a backslash joined to the next with a line break.
fn joined_continuations(text: &str) -> String {
    text.replace("\\\n", "\n")
}

/// The input still open: a `"""` block not yet closed, or a line ended by a backslash.
fn incomplete(input: &str) -> bool {
    let trimmed = input.trim_end();
    if let Some(inner) = input.trim_start().strip_prefix(BLOCK_QUOTE) {
        return !inner.trim_end().ends_with(BLOCK_QUOTE);
    }
    trimmed.ends_with('\\') && !trimmed.ends_with("\\\\")
}

/// The line editor's helper: multi-line input and slash-command completion.
#[derive(Default)]
pub struct ChatHelper;

impl Validator for ChatHelper {
    fn validate(&self, ctx: &mut ValidationContext) -> rustyline::Result<ValidationResult> {
        Ok(if incomplete(ctx.input()) {
            ValidationResult::Incomplete
        } else {
            ValidationResult::Valid(None)
        })
    }
}

impl Completer for ChatHelper {
    type Candidate = String;

    fn complete(
        &self,
        line: &str,
        pos: usize,
        _ctx: &rustyline::Context<'_>,
    ) -> rustyline::Result<(usize, Vec<String>)> {
        let typed = &line[..pos];
        if !typed.starts_with('/') || typed.contains(char::is_whitespace) {
            return Ok((0, Vec::new()));
        }
        let names = COMMANDS
            .iter()
            .map(|(name, _, _)| *name)
            .filter(|name| name.starts_with(typed))
            .map(|name| format!("{name} "))
            .collect();
        Ok((0, names))
    }
}

impl Hinter for ChatHelper {
    type Hint = String;
}

impl Highlighter for ChatHelper {}

impl Helper for ChatHelper {}

/// The `/help` text.
pub fn help() -> String {
    let mut text = String::from(
        "Type a message and press Enter. A line ending in \\ continues on the next; text between \"\"\" and \"\"\" may span lines.\nCtrl-C stops a reply (the session stays); Ctrl-D leaves.\n",
    );
    for (name, argument, about) in COMMANDS {
        let usage = if argument.is_empty() {
            name.to_string()
        } else {
            format!("{name} {argument}")
        };
        text.push_str(&format!("  {usage:<14} {about}\n"));
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_blocks_and_commands_are_told_apart() {
        assert_eq!(parse("  "), Input::Empty);
        assert_eq!(parse("Say hi"), Input::Message("Say hi".into()));
        assert_eq!(
            parse("\"\"\"first\nsecond\"\"\""),
            Input::Message("first\nsecond".into())
        );
        assert_eq!(parse("one \\\ntwo"), Input::Message("one \ntwo".into()));
        assert_eq!(
            parse("/etc/hosts holds what?"),
            Input::Message("/etc/hosts holds what?".into())
        );
        assert_eq!(parse("/stats"), Input::Command(Command::Stats));
        assert_eq!(
            parse("/save  conv.json "),
            Input::Command(Command::Save("conv.json".into()))
        );
        assert_eq!(
            parse("/system Be brief."),
            Input::Command(Command::System(Some("Be brief.".into())))
        );
        assert_eq!(parse("/system"), Input::Command(Command::System(None)));
        assert_eq!(parse("/tools off"), Input::Command(Command::Tools(None)));
        assert!(matches!(
            parse("/load"),
            Input::Command(Command::Unusable(why)) if why.contains("needs")
        ));
        assert!(matches!(
            parse("/frobnicate"),
            Input::Command(Command::Unusable(why)) if why.contains("unknown command /frobnicate")
        ));
    }

    #[test]
    fn open_blocks_and_continued_lines_keep_the_input_open() {
        assert!(incomplete("\"\"\"first line"));
        assert!(incomplete("\"\"\"first\nsecond"));
        assert!(!incomplete("\"\"\"first\nsecond\"\"\""));
        assert!(incomplete("a line \\"));
        assert!(!incomplete("a path C:\\\\"));
        assert!(!incomplete("plain"));
    }

    #[test]
    fn help_lists_every_command() {
        let text = help();
        for (name, _, _) in COMMANDS {
            assert!(text.contains(name), "{name} missing from /help");
        }
    }
}
