//! Answers from the evidence (`full`): when the next reply to a question is decoded as
//! the answer, it is asked on a short context of its own — the question and the lines
//! of the results that bear on it — instead of after the whole conversation, whose
//! tool block, failed calls and notes a small model copies back instead of answering.

use std::collections::{HashMap, HashSet};

use rein_protocol::Message;

use crate::memory::Memory;

/// Result lines shown at most.
const LINES_SHOWN: usize = 12;

/// Characters of one line shown at most (a long line around its best word).
const LINE_CHARS: usize = 240;

/// A line is shown only if it scores at least this share of the best line: filler
/// that shares one common word with the task ("test", "file") does not ride along
/// with the line that answers, for a small model to pick instead.
const SCORE_FRACTION: f64 = 0.34;

/// Whether `task` asks to be answered (a question, "tell me", "answer with …"), not
/// only for something to be done.
pub(crate) fn asks_for_an_answer(task: &str) -> bool {
    let lower = task.to_lowercase();
    crate::stored_answer::asks_to_be_told(task)
        || ["answer with", "reply with", "respond with"]
            .iter()
            .any(|phrase| lower.contains(phrase))
}

/// The words of `text` a line may share with the task: three or more letters or
/// digits, lowercase, neither function words nor words that say nothing of where an
/// answer is ("file", "find", "answer").
fn terms(text: &str) -> HashSet<String> {
    crate::grounding::words(text)
        .into_iter()
        .filter(|word| !crate::task_words::PLAIN_WORDS.contains(&word.as_str()))
        .filter(|word| !["answer", "reply", "respond", "tool", "tools"].contains(&word.as_str()))
        .collect()
}

/// One candidate line: which result it came from, its place there, its text.
struct Line<'a> {
    source: usize,
    place: usize,
    text: &'a str,
}

/// The lines of the run's results that bear on `task`, grouped under the call that
/// gave them (in the order the calls ran), or `None` when no line shares a word
/// with the task. A line scores each task word it holds by how rare that word is
/// among all the lines (a failing test's line beats the hundred passing ones that
/// also say "test"), and a value the task names (`needles`) outweighs any word.
pub(crate) fn evidence(task: &str, memory: &Memory) -> Option<String> {
    let heading = |key: &str| {
        crate::validate::call_key_parts(key)
            .map(|(name, arguments)| format!("`{name}` {arguments}"))
    };
    // The results that found something, then the first line of each failed call's
    // reply: a refusal may hold the fact ("`firmware.bin` is a binary file (6144
    // bytes)"); what follows it is the loop's advice.
    let succeeded = memory
        .succeeded_order
        .iter()
        .filter(|(_, found_nothing)| !found_nothing)
        .filter_map(|(key, _)| {
            let (result, _) = memory.succeeded_calls.get(key)?;
            Some((heading(key)?, result.as_str()))
        });
    let failed = memory.failed_order.iter().filter_map(|key| {
        let (reply, _) = memory.failed_calls.get(key)?;
        Some((heading(key)?, reply.lines().next()?))
    });
    let sources: Vec<(String, &str)> = succeeded.chain(failed).collect();
    // Each line once: the same note or line in three reads of one file is one line.
    let mut seen = HashSet::new();
    let lines: Vec<Line> = sources
        .iter()
        .enumerate()
        .flat_map(|(source, (_, result))| {
            result
                .lines()
                .enumerate()
                .filter(|(_, text)| !text.trim().is_empty())
                // The harness's own sentence on where a value is: the line under it
                // is the evidence. Nor a call the loop shows to make next.
                .filter(|(_, text)| !crate::task_needles::is_lead_sentence(text))
                .filter(|(_, text)| !is_call_line(text))
                .map(move |(place, text)| Line {
                    source,
                    place,
                    text,
                })
        })
        .filter(|line| seen.insert(line.text.trim()))
        .collect();
    let task_terms = terms(task);
    let line_terms: Vec<HashSet<String>> = lines
        .iter()
        .map(|line| {
            terms(line.text)
                .intersection(&task_terms)
                .cloned()
                .collect()
        })
        .collect();
    let mut counts: HashMap<&str, usize> = HashMap::new();
    for shared in &line_terms {
        for term in shared {
            *counts.entry(term.as_str()).or_default() += 1;
        }
    }
    let needles: Vec<String> = memory
        .task_needles
        .iter()
        .map(|needle| needle.to_lowercase())
        .collect();
    let total = lines.len() as f64;
    let mut scored: Vec<(f64, usize)> = lines
        .iter()
        .zip(&line_terms)
        .enumerate()
        .map(|(index, (line, shared))| {
            let rarity: f64 = shared
                .iter()
                .map(|term| (1.0 + total / counts[term.as_str()] as f64).ln())
                .sum();
            let lower = line.text.to_lowercase();
            let named = needles
                .iter()
                .filter(|n| lower.contains(n.as_str()))
                .count();
            (rarity + 10.0 * named as f64, index)
        })
        .filter(|(score, _)| *score > 0.0)
        .collect();
    if scored.is_empty() {
        return None;
    }
    // Best first; a tie goes to the later result, then the earlier line.
    scored.sort_by(|a, b| {
        b.0.total_cmp(&a.0).then_with(|| {
            let (la, lb) = (&lines[a.1], &lines[b.1]);
            lb.source.cmp(&la.source).then(la.place.cmp(&lb.place))
        })
    });
    let floor = scored[0].0 * SCORE_FRACTION;
    let mut chosen: Vec<usize> = scored
        .iter()
        .take(LINES_SHOWN)
        .filter(|(score, _)| *score >= floor)
        .map(|(_, i)| *i)
        .collect();
    chosen.sort_unstable();
    let mut out = String::new();
    let mut current = None;
    for index in chosen {
        let line = &lines[index];
        if current != Some(line.source) {
            current = Some(line.source);
            out.push_str(&format!("From {}:\n", sources[line.source].0));
        }
        out.push_str(&shown(line.text, &line_terms[index], &needles));
        out.push('\n');
    }
    Some(out.trim_end().to_string())
}

/// Whether `line` is part of a call the loop shows (`<tool_call>`, `{"name": …}`).
fn is_call_line(line: &str) -> bool {
    let line = line.trim_start();
    line.starts_with("<tool_call>")
        || line.starts_with("</tool_call>")
        || line.starts_with("{\"name\"")
}

/// `text`, or the part of a long line around the first task word or value it holds.
fn shown(text: &str, shared: &HashSet<String>, needles: &[String]) -> String {
    let text = text.trim_end();
    if text.chars().count() <= LINE_CHARS {
        return text.to_string();
    }
    let lower = text.to_lowercase();
    let at = needles
        .iter()
        .chain(shared.iter())
        .filter_map(|word| lower.find(word.as_str()))
        .min()
        .unwrap_or(0);
    // The lowercase copy has the same byte offsets for ASCII; `window_around` finds
    // the nearest character boundary for the rest.
    rein_tools::window_around(text, at, LINE_CHARS)
}

/// The focused turn's conversation: one user message, the `evidence` and then the
/// question. No instruction of the harness's own on a first try: the 0.5B model gave
/// back the sentence that asked it to answer ("The value, name or path the question
/// asks for, copied exactly from the lines given.") as its answer. The retry of a held
/// answer has the hold's `note` between the lines and the question (without it, the
/// retry is the same prompt, hotter); the question comes last, where a small model
/// answers from.
pub(crate) fn messages(task: &str, evidence: &str, note: Option<&str>) -> Vec<Message> {
    let note = note
        .map(|n| format!("{}\n\n", n.trim()))
        .unwrap_or_default();
    vec![Message::user(format!(
        "{evidence}\n\n{note}{}",
        task.trim()
    ))]
}

#[cfg(test)]
mod tests {
    use super::*;

    fn remember(memory: &mut Memory, name: &str, arguments: &str, result: &str) {
        let key = format!("{name}\u{0}{arguments}");
        memory
            .succeeded_calls
            .insert(key.clone(), (result.into(), memory.changes));
        memory.succeeded_order.push((key, false));
    }

    #[test]
    fn questions_ask_for_answers_and_orders_do_not() {
        assert!(asks_for_an_answer("How many bytes is firmware.bin?"));
        assert!(asks_for_an_answer(
            "data/events.log is very large. Find the event with id EVT-77812 and answer with its status."
        ));
        assert!(asks_for_an_answer(
            "Run `sh run_tests.sh` and tell me the name of the test that failed."
        ));
        assert!(!asks_for_an_answer(
            "In app.py, rename the function `calc` to `calculate_total` and update its call."
        ));
    }

    #[test]
    fn the_rare_line_beats_the_many_that_share_a_common_word() {
        let mut memory = Memory::default();
        let mut output: String = (0..200)
            .map(|n| format!("tests/test_orders.py::test_case_{n} PASSED\n"))
            .collect();
        output.push_str("tests/test_refund.py::test_refund_rounding FAILED\n");
        remember(
            &mut memory,
            "shell",
            r#"{"command":"sh run_tests.sh"}"#,
            &output,
        );
        let task = "Run `sh run_tests.sh` and tell me the name of the test that failed.";
        let evidence = evidence(task, &memory).unwrap();
        assert!(evidence.starts_with("From `shell` {\"command\":\"sh run_tests.sh\"}:\n"));
        let lines: Vec<&str> = evidence.lines().skip(1).collect();
        assert!(lines.len() <= LINES_SHOWN, "{evidence}");
        assert!(
            lines.contains(&"tests/test_refund.py::test_refund_rounding FAILED"),
            "{evidence}"
        );
    }

    #[test]
    fn a_value_the_task_names_is_shown_around_it_on_a_long_line() {
        let mut memory = Memory {
            task_needles: vec!["maxRetries".into()],
            ..Memory::default()
        };
        let line = format!(
            "{{{} \"maxRetries\": 17, {}}}",
            "\"a\": 1, ".repeat(3000),
            "\"b\": 2, ".repeat(3000)
        );
        remember(
            &mut memory,
            "read_file",
            r#"{"path":"config.min.json"}"#,
            &format!("1| {line}"),
        );
        remember(
            &mut memory,
            "list_dir",
            r#"{"path":"."}"#,
            "config.min.json (48 KiB)",
        );
        let task = "config.min.json is minified onto one very long line. What is the value of maxRetries in it?";
        let evidence = evidence(task, &memory).unwrap();
        assert!(evidence.contains("\"maxRetries\": 17"), "{evidence}");
        assert!(evidence.chars().count() < 1000, "{evidence}");
        // The listing shares the file's name and not the value: far weaker, left out.
        assert!(!evidence.contains("From `list_dir`"), "{evidence}");
    }

    #[test]
    fn results_that_share_no_word_with_the_task_give_none() {
        let mut memory = Memory::default();
        remember(
            &mut memory,
            "list_dir",
            r#"{"path":"."}"#,
            "src/\nREADME.md",
        );
        assert!(evidence("How many bytes is firmware.bin?", &memory).is_none());
        remember(
            &mut memory,
            "list_dir",
            r#"{"path":"firmware.bin"}"#,
            "`firmware.bin` is a file (6.0 KiB), not a directory.\nA binary file (6144 bytes).",
        );
        let evidence = evidence("How many bytes is firmware.bin?", &memory).unwrap();
        assert!(evidence.contains("(6144 bytes)"), "{evidence}");
        assert!(!evidence.contains("README"), "{evidence}");
    }

    #[test]
    fn a_refusal_s_first_line_is_evidence_and_shown_calls_are_not() {
        let mut memory = Memory::default();
        let key = "read_file\u{0}{\"path\":\"firmware.bin\"}".to_string();
        memory.failed_calls.insert(
            key.clone(),
            (
                "`firmware.bin` is a binary file (6144 bytes); use shell instead.\nThe same call:\n<tool_call>\n{\"name\":\"read_file\",\"arguments\":{\"path\":\"firmware.bin\"}}\n</tool_call>".into(),
                0,
            ),
        );
        memory.failed_order.push(key);
        remember(
            &mut memory,
            "shell",
            r#"{"command":"file firmware.bin"}"#,
            "firmware.bin: data\n{\"name\":\"shell\",\"arguments\":{\"command\":\"wc -c firmware.bin\"}}",
        );
        let evidence = evidence("How many bytes is firmware.bin?", &memory).unwrap();
        assert!(
            evidence.contains(
                "From `read_file` {\"path\":\"firmware.bin\"}:\n`firmware.bin` is a binary file (6144 bytes); use shell instead."
            ),
            "{evidence}"
        );
        assert!(!evidence.contains("\"name\""), "{evidence}");
    }

    #[test]
    fn the_focused_conversation_is_the_lines_then_the_question() {
        let first = messages(" What is x? ", "From `search` {}:\nx = 1", None);
        assert_eq!(first.len(), 1);
        assert_eq!(
            first[0].content.as_deref(),
            Some("From `search` {}:\nx = 1\n\nWhat is x?")
        );
        let retry = messages(
            "What is x?",
            "From `search` {}:\nx = 1",
            Some("Not quite: `y` is not it.\n"),
        );
        assert_eq!(
            retry[0].content.as_deref(),
            Some("From `search` {}:\nx = 1\n\nNot quite: `y` is not it.\n\nWhat is x?")
        );
    }

    #[test]
    fn a_line_given_by_several_results_is_shown_once() {
        let mut memory = Memory {
            task_needles: vec!["EVT-77812".into()],
            ..Memory::default()
        };
        let found = "31234| 2026-10-01T07:12:44Z id=EVT-77812 status=REFUNDED";
        for offset in ["", r#","offset":133"#] {
            let arguments = format!(r#"{{"path":"data/events.log"{offset}}}"#);
            remember(
                &mut memory,
                "read_file",
                &arguments,
                &format!("{found}\n   1| id=EVT-1 status=DELIVERED"),
            );
        }
        let task = "data/events.log is very large. Find the event with id EVT-77812 and answer with its status.";
        let evidence = evidence(task, &memory).unwrap();
        assert_eq!(evidence.matches("EVT-77812").count(), 1, "{evidence}");
    }

    #[test]
    fn the_lead_sentence_and_weak_lines_are_left_out() {
        let mut memory = Memory {
            task_needles: vec!["EVT-77812".into()],
            ..Memory::default()
        };
        remember(
            &mut memory,
            "read_file",
            r#"{"path":"data/events.log"}"#,
            "`EVT-77812`, which the task names, is on line 31234 of `data/events.log`, not in the part this read shows:\n\
             31234| 2026-10-01T07:12:44Z id=EVT-77812 status=REFUNDED\n\
             The part read:\n\
             1| 2026-09-01T00:00:00Z id=EVT-1 status=DELIVERED\n\
             2| an event log, one event per line",
        );
        remember(
            &mut memory,
            "search",
            r#"{"pattern":"EVT-77812"}"#,
            "data/events.log:31234: 2026-10-01T07:12:44Z id=EVT-77812 status=REFUNDED",
        );
        let task = "data/events.log is very large. Find the event with id EVT-77812 and answer with its status.";
        let evidence = evidence(task, &memory).unwrap();
        // The calls come in the order they ran, each with the lines it gave.
        let (read, search) = evidence.split_once("From `search`").unwrap();
        assert!(search.contains("data/events.log:31234:"), "{evidence}");
        let lines: Vec<&str> = read.lines().skip(1).collect();
        // The file's line holds the value; the line that shares only "event" is
        // far weaker and is dropped with the harness's sentence.
        assert_eq!(
            lines,
            ["31234| 2026-10-01T07:12:44Z id=EVT-77812 status=REFUNDED"],
            "{evidence}"
        );
    }
}
