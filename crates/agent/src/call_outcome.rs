//! A tool's result as the loop keeps it, and whether a result holds anything to use.

/// A tool's result as the loop keeps it.
#[derive(Debug, Clone)]
pub(crate) struct CallOutcome {
    /// It succeeded.
    pub ok: bool,
    /// It ran out of time.
    pub timed_out: bool,
    /// Not run: the same call failed before.
    pub repeated: bool,
    /// Not run: the same call succeeded before and nothing has changed since.
    pub repeated_success: bool,
    /// What the model sees.
    pub text: String,
    /// It worked and found nothing at all.
    pub found_nothing: bool,
    /// Not run: an argument was an identifier nothing showed (see `guesses`).
    pub guessed: bool,
    /// Not run until a step the run has not taken yet (a write over a file before
    /// its read): not remembered as a failure, so the same call runs once the step
    /// is taken.
    pub until_step: bool,
    /// Tools this result makes callable from the next turn (`tool_search`).
    pub reveals: Vec<String>,
}

impl CallOutcome {
    /// A call that failed with `text` as its result.
    pub(crate) fn failed(text: String) -> Self {
        Self {
            ok: false,
            timed_out: false,
            repeated: false,
            repeated_success: false,
            text,
            found_nothing: false,
            guessed: false,
            until_step: false,
            reveals: Vec::new(),
        }
    }

    /// A call not run until a step the run has not taken, with `note` as its result.
    pub(crate) fn until_step(note: String) -> Self {
        Self {
            until_step: true,
            ..Self::failed(note)
        }
    }

    /// A call not run for a guessed identifier, with `note` as its result.
    pub(crate) fn guessed(note: String) -> Self {
        Self {
            guessed: true,
            ..Self::failed(note)
        }
    }
}

/// The harness's own words for a command that reached nothing: a shell result whose
/// every output line says one of these holds no content to use.
const REACHED_NOTHING: [&str; 4] = [
    "Permission denied",
    "Operation not permitted",
    "No such file or directory",
    "not found",
];

/// Whether a successful result holds something to use: not a search that found
/// nothing, and not a shell command whose output is only errors or empty (`cat` of a
/// file the sandbox denies, piped on, exits 0).
pub(crate) fn holds_content(result: &str, found_nothing: bool) -> bool {
    if found_nothing {
        return false;
    }
    let text = crate::result_text::result_excerpt(result, usize::MAX);
    let Some((_, output)) = text.split_once("\noutput:") else {
        return true;
    };
    output
        .lines()
        .map(str::trim)
        .filter(|line| !line.is_empty() && *line != "(none)" && !line.starts_with('['))
        .any(|line| !REACHED_NOTHING.iter().any(|error| line.contains(error)))
}

#[cfg(test)]
mod tests {
    use super::holds_content;
    use crate::result_text::wrap_untrusted;

    #[test]
    fn a_shell_output_of_only_errors_holds_nothing_to_use() {
        let shell =
            |output: &str| wrap_untrusted(&format!("exit code: 0\ncwd: .\noutput:\n{output}"));
        assert!(!holds_content(
            &shell("cat: /srv/a.md: Permission denied"),
            false
        ));
        assert!(!holds_content(&shell("/bin/sh: 2: fs:: not found"), false));
        assert!(!holds_content(
            &wrap_untrusted("exit code: 0\ncwd: .\noutput: (none)"),
            false
        ));
        assert!(holds_content(&shell("version 0.4.2"), false));
        assert!(holds_content(
            &shell("grep: x: No such file or directory\n0.4.2"),
            false
        ));
        assert!(holds_content("   1| ## 0.4.2", false));
        assert!(!holds_content("no matches for `x`", true));
    }
}
