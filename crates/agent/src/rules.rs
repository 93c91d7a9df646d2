//! The registry of the loop's rules (`full`): every hold of an answer, refusal of a
//! call, note added to a result and retry shape has a name, a line saying what
//! triggers it and how often it may fire, and a switch (`--set rule.NAME=off`, or
//! `--set rules=off` for all of them). A rule that fires says so in the trace and is
//! counted in the run's result, so `rein eval` can report how often each fired and
//! what the runs it fired in scored.

use std::collections::{BTreeMap, BTreeSet};

use rein_protocol::{EventSink, RunEvent};

/// What kind of step a rule takes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RuleKind {
    /// Holds the model's answer back once (or a few times) with a note.
    Hold,
    /// Does not run a call; its result says why.
    Refusal,
    /// Adds a note to a tool's result.
    Note,
    /// Shapes the next request (what it is decoded as, what it is shown).
    Retry,
}

impl RuleKind {
    /// The kind's name.
    pub fn as_str(self) -> &'static str {
        match self {
            RuleKind::Hold => "hold",
            RuleKind::Refusal => "refusal",
            RuleKind::Note => "note",
            RuleKind::Retry => "retry",
        }
    }
}

macro_rules! rules {
    ($($variant:ident = $name:literal, $kind:ident, $about:literal;)*) => {
        /// One rule of the loop.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
        pub enum Rule {
            $(
                #[doc = $about]
                $variant,
            )*
        }

        impl Rule {
            /// Every rule, in the registry's order.
            pub const ALL: &'static [Rule] = &[$(Rule::$variant),*];

            /// The rule's name (`--set rule.NAME=off`).
            pub fn name(self) -> &'static str {
                match self { $(Rule::$variant => $name),* }
            }

            /// What the rule does.
            pub fn kind(self) -> RuleKind {
                match self { $(Rule::$variant => RuleKind::$kind),* }
            }

            /// What triggers it, and its cap.
            pub fn about(self) -> &'static str {
                match self { $(Rule::$variant => $about),* }
            }
        }
    };
}

rules! {
    CallShaped = "call_shaped", Hold,
        "An answer that is a call written as text, a broken call, or a result the model wrote itself; 3 holds of not-an-answer per run.";
    NotAnAnswer = "not_an_answer", Hold,
        "An answer that narrates a tool, announces or explains steps, claims the task done, gives the task back, copies a read or writes a placeholder; 3 per run.";
    MissingOutput = "missing_output", Hold,
        "An answer while the file the task asks to write does not exist; once for an answer that claims to be done (the retry is the write when a result is in hand), and within not_an_answer's 3 per run for a plan of another step (the retry is any call).";
    DescribedEdit = "described_edit", Hold,
        "An answer describing a one-line change of the task's file, which is unchanged; the note holds the edit call; once.";
    UnchangedFile = "unchanged_file", Hold,
        "An answer while the file the task asks to change is as it was; once.";
    NothingWritten = "nothing_written", Hold,
        "An answer while the task asks for a new file and no call wrote anything; once.";
    NotLooked = "not_looked", Hold,
        "An answer before any call looked at the workspace, while the task names a path in it; once.";
    NothingChanged = "nothing_changed", Hold,
        "An answer while the task asks to change a path it names and nothing changed, unless it states a value the latest result computed; once.";
    WrongPick = "wrong_pick", Hold,
        "An answer naming another item of a compared list than the task's superlative picks; once.";
    PlannedCalls = "planned_calls", Hold,
        "An answer while calls the model planned (deferred for an earlier result) never ran; once.";
    StoredInstead = "stored_instead", Hold,
        "An answer that points to a file the run wrote instead of telling what was asked; once.";
    UnsupportedValue = "unsupported_value", Hold,
        "An answer stating an identifier or quoted number no request or result showed; once.";
    NoPath = "no_path", Hold,
        "An answer to a which-file question naming no file, while a result names one; once.";
    NearMissPath = "near_miss_path", Hold,
        "An answer to a which-file question naming a path that misses one file only by case or a leading dot; once.";
    TalksAboutTools = "talks_about_tools", Hold,
        "An answer from knowledge (no tool fits) that talks about the tools or copies the note; 3 per run.";
    Unverified = "unverified_edits", Hold,
        "An answer after source edits no test or build checked (also the verification_guard setting); twice.";
    GuessedIdentifier = "guessed_identifier", Refusal,
        "A call passing an identifier no request, result or tool schema showed.";
    CopiedRequest = "copied_request", Refusal,
        "A write whose content is the request itself (or the loop's note) over an existing file.";
    ToolAsCommand = "tool_as_command", Refusal,
        "A shell command that is one of the run's tool names.";
    WrongPickCall = "wrong_pick_call", Refusal,
        "A call for another item of a compared list than the task's plain superlative picks; once a run, run when made again.";
    UnreadOverwrite = "unread_overwrite", Refusal,
        "A whole-file write over a file the run never looked at; run after a look.";
    UngroundedFirstCall = "ungrounded_first_call", Refusal,
        "The run's first calls, when none takes a value from the request (also grounding_check); once, twice in a lookup run.";
    CopiedResult = "copied_result", Refusal,
        "A call whose arguments copy an earlier tool result instead of a value from it.";
    BatchDependency = "batch_dependency", Note,
        "A failed call made in the same reply as another tool's success: may need its result.";
    RequestQuotes = "request_quotes", Note,
        "A string argument that copies the request's text with its quotes changed runs with the request's text.";
    RepeatLedAnswer = "repeat_led_answer", Retry,
        "A lookup run's reply opening with a call it already made: not run, the retry is the answer.";
    MeantFile = "meant_file", Note,
        "A failed read of a bare name a result named by its longer path: the note names that path.";
    ServerRoute = "server_route", Note,
        "A path outside the workspace refused while an MCP server's tool does that job: the note names it.";
    InsidePath = "inside_path", Note,
        "A path outside the workspace taken for its root: the note holds the call with the path inside.";
    TaskCommand = "task_command", Note,
        "A failed reply while the command the task says to run never ran: the note holds its call.";
    NotFound = "not_found", Note,
        "A value not found while an earlier result gave another under the argument's name.";
    AnswerFromResults = "answer_from_results", Note,
        "A lookup run whose next reply answers: the last result is followed by every result so far.";
    OutputFileLook = "output_file_look", Note,
        "A look at the task's missing output file: the note shows the workspace lines with the task's word.";
    KeyPath = "key_path", Note,
        "A key path used as a file path: the note says what the key holds in the file read.";
    TaskNeedles = "task_needles", Note,
        "A partial read of a file holding values the task names: the result opens with those lines.";
    UnopenedFiles = "unopened_files", Note,
        "The same read again: the note offers the files its result named that no call read.";
    AnswerForm = "answer_form", Retry,
        "A final answer that says more than the bare value the task asks for (just the number, the id only): asked once more for the value alone, decoded as one of the values the answer states; once.";
    LoopAnswer = "loop_answer", Retry,
        "A reply cut for looping after a step that worked: the retry shows the latest result and is decoded as the answer.";
    LastTurnAnswer = "last_turn_answer", Retry,
        "The last turn the budget allows, with results in hand: decoded as the answer.";
    UnknownToolLook = "unknown_tool_look", Retry,
        "A call to no tool before any call ran, in a task naming a workspace path: the retry is the look at it.";
    NoToolFits = "no_tool_fits", Retry,
        "A second call to no tool (or ungrounded call) in a lookup run before anything ran: the retry is an answer from knowledge.";
}

impl Rule {
    /// The rule named `name`.
    pub fn named(name: &str) -> Option<Rule> {
        Rule::ALL.iter().copied().find(|rule| rule.name() == name)
    }
}

/// Which rules are switched off.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RuleSwitches {
    off: BTreeSet<Rule>,
}

impl RuleSwitches {
    /// Whether `rule` may fire.
    pub fn on(&self, rule: Rule) -> bool {
        !self.off.contains(&rule)
    }

    /// Switches `rule` on or off.
    pub fn set(&mut self, rule: Rule, on: bool) {
        match on {
            true => self.off.remove(&rule),
            false => self.off.insert(rule),
        };
    }

    /// Switches every rule on or off.
    pub fn set_all(&mut self, on: bool) {
        for rule in Rule::ALL {
            self.set(*rule, on);
        }
    }

    /// The names of the rules switched off.
    pub fn off_names(&self) -> Vec<&'static str> {
        self.off.iter().map(|rule| rule.name()).collect()
    }
}

/// How often each rule fired in one run, by name.
pub(crate) type Fired = BTreeMap<&'static str, u32>;

/// Records that `rule` fired at `turn` (`detail`: what it fired on), in the run's
/// counts and as a trace event.
pub(crate) fn fired(
    counts: &mut Fired,
    events: &mut dyn EventSink,
    turn: u32,
    rule: Rule,
    detail: &str,
) {
    *counts.entry(rule.name()).or_default() += 1;
    let detail: String = detail.chars().take(200).collect();
    events.emit(&RunEvent::RuleFired {
        turn,
        rule: rule.name().to_string(),
        kind: rule.kind().as_str().to_string(),
        detail,
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_rule_has_its_own_name_and_a_description() {
        let names: BTreeSet<&str> = Rule::ALL.iter().map(|rule| rule.name()).collect();
        assert_eq!(names.len(), Rule::ALL.len());
        for rule in Rule::ALL {
            assert_eq!(Rule::named(rule.name()), Some(*rule));
            assert!(rule.about().len() > 20, "{}", rule.name());
            assert!(rule
                .name()
                .chars()
                .all(|c| c.is_ascii_lowercase() || c == '_'));
        }
        assert_eq!(Rule::named("no_such_rule"), None);
    }

    #[test]
    fn the_profiles_doc_lists_every_rule() {
        let doc = std::fs::read_to_string(
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/profiles.md"),
        )
        .unwrap();
        for rule in Rule::ALL {
            let row = format!(
                "| `{}` | {} | {} |",
                rule.name(),
                rule.kind().as_str(),
                rule.about()
            );
            assert!(doc.contains(&row), "docs/profiles.md lacks the row {row}");
        }
    }

    #[test]
    fn switches_turn_one_rule_or_all_off_and_on() {
        let mut switches = RuleSwitches::default();
        assert!(Rule::ALL.iter().all(|rule| switches.on(*rule)));
        switches.set(Rule::WrongPick, false);
        assert!(!switches.on(Rule::WrongPick));
        assert!(switches.on(Rule::NoPath));
        assert_eq!(switches.off_names(), vec!["wrong_pick"]);
        switches.set_all(false);
        assert!(Rule::ALL.iter().all(|rule| !switches.on(*rule)));
        switches.set_all(true);
        assert!(switches.off_names().is_empty());
    }

    #[test]
    fn a_rule_that_fires_is_counted_and_traced() {
        struct Collect(Vec<RunEvent>);
        impl EventSink for Collect {
            fn emit(&mut self, event: &RunEvent) {
                self.0.push(event.clone());
            }
        }
        let mut counts = Fired::new();
        let mut events = Collect(Vec::new());
        fired(
            &mut counts,
            &mut events,
            3,
            Rule::NoPath,
            "answer: it is there",
        );
        fired(&mut counts, &mut events, 4, Rule::NoPath, "again");
        assert_eq!(counts.get("no_path"), Some(&2));
        assert!(matches!(
            &events.0[0],
            RunEvent::RuleFired { turn: 3, rule, kind, .. } if rule == "no_path" && kind == "hold"
        ));
    }
}
