//! What the run remembers across turns of its calls and its task: calls that
//! failed and succeeded, files written and seen, what the task asks for.

use std::collections::{BTreeSet, HashMap};

use crate::call_outcome::holds_content;

/// What execution remembers across turns.
#[derive(Debug, Default)]
pub(crate) struct Memory {
    /// How often each rule fired (see `rules`).
    pub fired: crate::rules::Fired,
    /// Calls that failed, by [`ReadyCall::key`], with their error and the
    /// [`Memory::changes`] count when they ran.
    pub failed_calls: HashMap<String, (String, u64)>,
    /// The keys of [`Memory::failed_calls`] in the order they first failed.
    pub failed_order: Vec<String>,
    /// Calls that succeeded, by [`ReadyCall::key`], with their result and the
    /// [`Memory::changes`] count when they ran.
    pub succeeded_calls: HashMap<String, (String, u64)>,
    /// The keys of [`Memory::succeeded_calls`] in the order they first succeeded,
    /// each with whether its result found nothing.
    pub succeeded_order: Vec<(String, bool)>,
    /// The files `write_file` wrote in this run (as the call named them) with their
    /// content, in order.
    pub written_files: Vec<(String, String)>,
    /// Calls run so far that may have changed something (writes, the shell).
    pub changes: u64,
    /// Calls that may have changed something and succeeded.
    pub changes_made: u64,
    /// The task asks for a change in the workspace (`full`): an answer before any
    /// call that may change something succeeded is held once.
    pub expects_change: bool,
    /// Source files edited since the last test or build.
    pub unverified_edits: BTreeSet<String>,
    /// The file the task asks for, when it did not exist at the start (`full`): the
    /// output-file guard holds answers without it, and a failed look at it says that
    /// it is to be written.
    pub output_file: Option<String>,
    /// The task's words to look for when a model looks for the missing output file
    /// (see `task_words`).
    pub search_words: Vec<String>,
    /// The lines that note showed for one of those words.
    pub word_lines: Vec<String>,
    /// The task asks for a new file that `output_file` could not name (`full`): an
    /// answer before any call wrote anything is held once.
    pub expects_write: bool,
    /// The existing file the task asks to change, with a hash of its bytes at the
    /// start (`full`): an answer while it is unchanged is held once.
    pub file_to_change: Option<(String, u64)>,
    /// The workspace paths the task names that exist at the start (`full`): an answer
    /// or a call to no tool before any call ran is sent to the first of them.
    pub task_paths: Vec<crate::task_paths::TaskPath>,
    /// The files (resolved) a successful call of this run read, searched, edited or
    /// wrote: a write over any other existing file is not run (`full`).
    pub seen_files: std::collections::HashSet<std::path::PathBuf>,
    /// A call for another item than the task's superlative picks was not run once
    /// (see `extreme_pick`).
    pub pick_refused: bool,
    /// Tools whose calls were deferred for an earlier result and have not run since.
    pub planned: Vec<String>,
    /// Steps with calls since the latest step that deferred some.
    pub steps_since_plan: u32,
    /// Values the task names, shown where a read missed them (see `task_needles`).
    pub task_needles: Vec<String>,
    /// The command the task says to run, until a call ran it (see `task_command`).
    pub task_command: Option<String>,
}

impl Memory {
    /// Whether some successful result holds content the run could use (see
    /// [`holds_content`]).
    pub(crate) fn results_in_hand(&self) -> bool {
        self.succeeded_order.iter().any(|(key, found_nothing)| {
            self.succeeded_calls
                .get(key)
                .is_some_and(|(result, _)| holds_content(result, *found_nothing))
        })
    }

    /// Whether the task asks for a file to be written or changed.
    pub(crate) fn task_asks_for_a_file(&self) -> bool {
        self.output_file.is_some()
            || self.expects_write
            || self.expects_change
            || self.file_to_change.is_some()
    }
}
