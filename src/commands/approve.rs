//! The approval prompt of `rein run --approve`: a call the policy asks about is shown
//! (the command, or the write as a diff) and the user answers y (run it), n (refuse
//! it: the model is told, nothing changes) or e (edit the command or the arguments,
//! then run). Answers are read from standard input, so a script can pipe them; end of
//! input refuses.

use std::io::{BufRead, Write};

use indicatif::ProgressBar;
use rein_agent::{ApprovalRequest, Approver, Decision};
use serde_json::Value;

/// Asks on the terminal (standard error for the question, standard input for the
/// answer), with the session's spinner, if any, hidden meanwhile.
pub struct TerminalApprover {
    spinner: Option<ProgressBar>,
}

impl TerminalApprover {
    /// An approver that hides `spinner` while it asks.
    pub fn new(spinner: Option<ProgressBar>) -> Self {
        Self { spinner }
    }

    fn ask(&self, request: &ApprovalRequest) -> Decision {
        let mut err = std::io::stderr();
        let _ = writeln!(
            err,
            "\n{} wants to run:\n{}",
            request.tool,
            indent(&request.preview)
        );
        loop {
            let _ = write!(err, "Run it? [y]es / [n]o / [e]dit: ");
            let _ = err.flush();
            let Some(answer) = read_line() else {
                let _ = writeln!(err, "(no answer: not run)");
                return Decision::Refuse;
            };
            match answer.trim().to_ascii_lowercase().as_str() {
                "y" | "yes" => return Decision::Run,
                "n" | "no" => return Decision::Refuse,
                "e" | "edit" => {
                    if let Some(arguments) = edited(request) {
                        return Decision::Edit(arguments);
                    }
                }
                _ => {}
            }
        }
    }
}

impl Approver for TerminalApprover {
    fn decide(&self, request: &ApprovalRequest) -> Decision {
        match &self.spinner {
            Some(spinner) => spinner.suspend(|| self.ask(request)),
            None => self.ask(request),
        }
    }
}

/// A line of standard input, without its newline; `None` at its end.
fn read_line() -> Option<String> {
    let mut line = String::new();
    match std::io::stdin().lock().read_line(&mut line) {
        Ok(0) | Err(_) => None,
        Ok(_) => Some(line.trim_end_matches(['\r', '\n']).to_string()),
    }
}

/// The arguments the user types instead: a shell call's new command line, or any
/// call's arguments as one line of JSON. `None` (asked again) when the line is empty
/// or not a JSON object.
fn edited(request: &ApprovalRequest) -> Option<Value> {
    let mut err = std::io::stderr();
    let command = request.arguments.get("command").and_then(Value::as_str);
    match command {
        Some(command) if request.arguments.as_object().is_some_and(|o| o.len() == 1) => {
            let _ = write!(err, "command (was `{command}`): ");
            let _ = err.flush();
            let line = read_line()?;
            let line = line.trim();
            (!line.is_empty()).then(|| serde_json::json!({ "command": line }))
        }
        _ => {
            let _ = write!(err, "arguments as JSON (were {}): ", request.arguments);
            let _ = err.flush();
            let line = read_line()?;
            match serde_json::from_str::<Value>(line.trim()) {
                Ok(value) if value.is_object() => Some(value),
                _ => {
                    let _ = writeln!(err, "(not a JSON object; asked again)");
                    None
                }
            }
        }
    }
}

fn indent(text: &str) -> String {
    text.lines()
        .map(|line| format!("    {line}"))
        .collect::<Vec<_>>()
        .join("\n")
}
