//! The no-tool-needed family: a question the prompt or general knowledge answers,
//! asked in a workspace of unrelated files.

use std::collections::BTreeMap;

use serde_json::json;

use super::filler;
use crate::generate::words::{self, answer_is, answer_number, answer_word};
use crate::generate::{GenTask, Outcome, Rng};
use crate::grade::GraderSpec;

/// A question whose answer needs no file.
struct Question {
    /// The question.
    ask: String,
    /// Its answer.
    value: String,
    /// Whether the answer is a number (else a word).
    number: bool,
}

/// A question of a random kind.
fn question(rng: &mut Rng) -> Question {
    let num = |ask: String, n: i64| Question {
        ask,
        value: n.to_string(),
        number: true,
    };
    let word = |ask: &str, w: &str| Question {
        ask: ask.to_string(),
        value: w.to_string(),
        number: false,
    };
    match rng.below(6) {
        0 => {
            let (a, b) = (rng.range(3, 40), rng.range(3, 60));
            let (unit, what) = *rng.pick(&[
                ("servers", "workers"),
                ("racks", "disks"),
                ("teams", "people"),
                ("crates", "boxes"),
            ]);
            num(
                format!(
                    "We have {a} {unit} with {b} {what} each. How many {what} is that in total?"
                ),
                a * b,
            )
        }
        1 => {
            let (open, closed) = (rng.range(30, 90), rng.range(5, 29));
            let new = rng.range(2, 40);
            num(
                format!("I had {open} tickets open this morning, closed {closed} of them and {new} new ones came in. How many are open now?"),
                open - closed + new,
            )
        }
        2 => {
            let (per, shards) = (rng.range(12, 300), rng.range(3, 12));
            num(format!("If {} items are split evenly across {shards} shards, how many items does each shard get?", per * shards), per)
        }
        3 => {
            let n = rng.range(2, 48);
            let (from, to, factor) = *rng.pick(&[
                ("minutes", "seconds", 60),
                ("hours", "minutes", 60),
                ("days", "hours", 24),
                ("KiB", "bytes", 1024),
                ("kilometres", "metres", 1000),
                ("weeks", "days", 7),
            ]);
            num(
                format!("How many {to} are there in {n} {from}?"),
                n * factor,
            )
        }
        4 => {
            let (ask, n) = *rng.pick(&[
                ("Which HTTP status code means \"Not Found\"?", 404),
                ("Which HTTP status code means \"Service Unavailable\"?", 503),
                ("Which HTTP status code means \"Created\"?", 201),
                ("Which HTTP status code means \"Forbidden\"?", 403),
                ("What is the default port of SSH?", 22),
                ("What is the default port of HTTPS?", 443),
                ("What is the default port of PostgreSQL?", 5432),
                ("What is the default port of Redis?", 6379),
            ]);
            num(ask.to_string(), n)
        }
        _ => {
            let (ask, w) = *rng.pick(&[
                ("Which keyword starts a function definition in Python?", "def"),
                ("Which Unix command prints the current working directory?", "pwd"),
                ("Which git subcommand makes a local copy of a remote repository for the first time?", "clone"),
                ("What does the J in JSON stand for?", "JavaScript"),
                ("Which file extension, without the dot, is conventional for Markdown files?", "md"),
                ("Which keyword declares a constant binding in JavaScript?", "const"),
            ]);
            word(ask, w)
        }
    }
}

/// Builds a no-tool-needed task.
pub(super) fn no_tool_needed(rng: &mut Rng, phrasing: usize) -> GenTask {
    let mut files = BTreeMap::new();
    let noun = *rng.pick(words::NOUNS);
    filler(rng, &mut files, noun);
    if rng.chance(60) {
        let setting = *rng.pick(words::SETTINGS);
        files.insert(
            format!("config/{noun}.toml"),
            format!("{setting} = {}\n", rng.range(2, 900)),
        );
    }
    if rng.chance(50) {
        files.insert(
            "notes/todo.md".into(),
            format!("- tidy up the {noun} module\n- write tests\n"),
        );
    }
    let q = question(rng);
    let kind = if q.number { "number" } else { "word" };
    let bare = phrasing == 3;
    let prompt = match phrasing {
        0 => q.ask.clone(),
        1 => format!("Quick one, unrelated to the files here: {}", q.ask),
        2 => format!(
            "I'm drafting a message to the team and want to double-check one detail before I send \
             it. {} I'd appreciate a short answer.",
            q.ask
        ),
        3 => format!("{} Reply with just the {kind}, nothing else.", q.ask),
        4 => format!(
            "Before we start on anything in this repository, a small side question. {}",
            q.ask
        ),
        _ => format!(
            "Hey! Hope your day's going well. Can you help me with this? {} Cheers!",
            q.ask
        ),
    };
    let value_grader = if bare {
        answer_is(&q.value)
    } else if q.number {
        answer_number(q.value.parse().unwrap_or(0))
    } else {
        answer_word(&q.value)
    };
    let answer = if bare {
        q.value.clone()
    } else {
        format!("The answer is {}.", q.value)
    };
    GenTask {
        prompt,
        files,
        grade: vec![GraderSpec::ToolNotCalled { name: "*".into() }, value_grader],
        solution: Outcome::answer(answer.clone()),
        mistake: Outcome {
            calls: vec![vec![("list_dir".into(), json!({"path": "."}))]],
            answer: Some(answer),
            ..Outcome::default()
        },
        ..GenTask::default()
    }
}
