//! Compaction of a conversation: what is summarized, cut, stubbed and removed, in
//! which order, and what always stays.

use super::*;
use proptest::prelude::*;

fn by_chars(m: &Message) -> usize {
    m.content.as_deref().map_or(1, |c| c.len() / 4 + 1)
}

fn history_strategy() -> impl Strategy<Value = Vec<Message>> {
    let message = (0..3u8, "[a-z /.]{0,40}", 1..60usize).prop_map(|(kind, line, repeat)| {
        let text = vec![line; repeat].join("\n");
        match kind {
            0 => Message::user(text),
            1 => Message::assistant(text),
            _ => Message::tool_result("call", "read_file", text),
        }
    });
    proptest::collection::vec(message, 0..30).prop_map(|mut rest| {
        let mut history = vec![Message::system("rules"), Message::user("the task")];
        history.append(&mut rest);
        history
    })
}

proptest! {
    #[test]
    fn pinned_messages_and_recent_turns_stay_verbatim(history in history_strategy(), budget in 10usize..2000) {
        let policy = ContextPolicy::new(budget);
        let mut compacted = history.clone();
        let report = compact(&mut compacted, &policy, by_chars);
        let removed = report.as_ref().map_or(0, |r| r.removed);
        prop_assert_eq!(compacted.len() + removed, history.len());
        if removed > 0 {
            // Whole old turns went only after every result was shortened: the
            // pinned messages stay, and so does the newest reply with all after it
            // (its results perhaps shortened).
            for index in pinned(&history) {
                prop_assert!(compacted.contains(&history[index]));
            }
            let newest = history.iter().rposition(|m| m.role == Role::Assistant);
            prop_assert!(newest.is_some());
            let tail = history.len() - newest.unwrap_or(0);
            for (before, after) in history[history.len() - tail..].iter().zip(&compacted[compacted.len() - tail..]) {
                prop_assert_eq!(before.role, after.role);
                if before.role != Role::Tool {
                    prop_assert_eq!(before, after);
                }
            }
            let again = compacted.clone();
            compact(&mut compacted, &policy, by_chars);
            prop_assert_eq!(compacted, again);
            return Ok(());
        }
        for index in pinned(&history) {
            prop_assert_eq!(&compacted[index], &history[index]);
        }
        let recent = history.len().saturating_sub(policy.keep_recent);
        // Recent turns are touched only when summarizing every older tool result
        // was not enough; the last message never is.
        let pins = pinned(&history);
        let old_only: usize = history
            .iter()
            .enumerate()
            .map(|(i, m)| match summary_of(m) {
                Some(summary) if i < recent && !pins.contains(&i) => summary.len() / 4 + 1,
                _ => by_chars(m),
            })
            .sum();
        if old_only as f64 <= policy.budget_tokens as f64 * policy.trigger {
            prop_assert_eq!(&compacted[recent..], &history[recent..]);
        }
        // The last message is shortened only when nothing else was enough.
        let all_but_last: usize = history
            .iter()
            .enumerate()
            .map(|(i, m)| match summary_of(m) {
                Some(summary) if i + 1 < history.len() && !pins.contains(&i) => summary.len() / 4 + 1,
                _ => by_chars(m),
            })
            .sum();
        if all_but_last as f64 <= policy.budget_tokens as f64 * policy.trigger {
            prop_assert_eq!(compacted.last(), history.last());
        }
        for (before, after) in history.iter().zip(&compacted) {
            prop_assert_eq!(before.role, after.role);
            if before.role != Role::Tool {
                prop_assert_eq!(before, after);
            }
        }
        if let Some(report) = report {
            prop_assert!(report.tokens_after <= report.tokens_before);
            // Compacting again changes nothing: summaries are not summarized.
            let again = compacted.clone();
            compact(&mut compacted, &policy, by_chars);
            prop_assert_eq!(compacted, again);
        }
    }
}

#[test]
fn recent_results_are_summarized_when_old_ones_are_not_enough() {
    let big = (0..300)
        .map(|i| format!("test_case_{i} ... ok"))
        .collect::<Vec<_>>()
        .join("\n");
    let mut history = vec![Message::system("rules"), Message::user("the task")];
    for _ in 0..3 {
        history.push(Message::assistant("running the tests"));
        history.push(Message::tool_result("call", "shell", big.clone()));
    }
    let policy = ContextPolicy::new(big.len() / 4 * 2);
    let report = compact(&mut history, &policy, by_chars).expect("compacted");
    assert!(report.tokens_after as f64 <= policy.budget_tokens as f64 * policy.trigger);
    assert!(history[3]
        .content
        .as_deref()
        .unwrap()
        .starts_with(SUMMARY_MARK));
    assert_eq!(
        history.last().unwrap().content.as_deref(),
        Some(big.as_str())
    );
}

#[test]
fn a_newest_result_too_large_for_the_context_is_summarized_last() {
    let log: String = (0..5000)
        .map(|i| match i {
            131 => {
                "2024-06-14T03:00:40Z ERROR [payments] gateway returned code PG-4471".to_string()
            }
            _ => format!(
                "2024-06-14T02:58:{:02}.052Z INFO [db] checkpoint {i}",
                i % 60
            ),
        })
        .collect::<Vec<_>>()
        .join("\n");
    let mut history = vec![
        Message::system("rules"),
        Message::user("find the ERROR line"),
        Message::assistant("reading"),
        Message::tool_result("call", "read_file", log),
    ];
    let policy = ContextPolicy::new(3000);
    compact(&mut history, &policy, by_chars).expect("compacted");
    let last = history.last().unwrap().content.as_deref().unwrap();
    assert!(last.starts_with(SUMMARY_MARK), "{last}");
    assert!(
        last.contains("PG-4471"),
        "the error line is kept first: {last}"
    );
    assert!(last.len() < 3000, "{}", last.len());
}

#[test]
fn results_of_long_lines_are_cut_until_they_fit() {
    let wide = |c: char| {
        (0..30)
            .map(|_| c.to_string().repeat(5000))
            .collect::<Vec<_>>()
            .join("\n")
    };
    let original = vec![
        Message::system("rules"),
        Message::user("what does it say?"),
        Message::assistant("reading"),
        Message::tool_result("call_1", "shell", wide('a')),
        Message::assistant("reading more"),
        Message::tool_result("call_2", "shell", wide('b')),
    ];
    // A summary keeps a few lines, each bounded.
    let mut history = original.clone();
    let policy = ContextPolicy::new(2000);
    compact(&mut history, &policy, by_chars).expect("compacted");
    let total: usize = history.iter().map(by_chars).sum();
    assert!(total as f64 <= 2000.0 * policy.trigger, "{total}");
    let older = history[3].content.as_deref().unwrap();
    assert!(older.starts_with(SUMMARY_MARK), "{older}");
    assert!(older
        .lines()
        .skip(1)
        .all(|line| line.chars().count() <= LINE_CHARS + 24));
    assert!(older.contains("[… 4800 more chars]"), "{older}");
    // Where summaries do not fit either, results are cut to their first lines.
    let mut history = original;
    let policy = ContextPolicy::new(600);
    compact(&mut history, &policy, by_chars).expect("compacted");
    let total: usize = history.iter().map(by_chars).sum();
    assert!(total as f64 <= 600.0 * policy.trigger, "{total}");
    let older = history[3].content.as_deref().unwrap();
    assert!(older.starts_with(CUT_MARK), "{older}");
}

#[test]
fn when_cut_results_are_still_too_many_the_oldest_are_dropped_to_a_stub() {
    // A small model that reads the same huge log twenty times: every result cut
    // to its first lines is still too much together (trace: file-too-large).
    let log = (0..400)
        .map(|i| {
            format!(
                "2024-06-14T02:58:{:02}.052Z INFO [db] checkpoint {i} {}",
                i % 60,
                "x".repeat(150)
            )
        })
        .collect::<Vec<_>>()
        .join("\n");
    let mut history = vec![Message::system("rules"), Message::user("find EVT-77812")];
    for i in 0..20 {
        history.push(Message::assistant(format!("reading at offset {i}")));
        history.push(Message::tool_result(
            format!("call_{i}"),
            "read_file",
            log.clone(),
        ));
    }
    let policy = ContextPolicy::new(1_000);
    let original = history.clone();
    compact(&mut history, &policy, by_chars).expect("compacted");
    let total: usize = history.iter().map(by_chars).sum();
    assert!(total as f64 <= 1_000.0 * policy.trigger, "{total}");
    assert_eq!(history[3].content.as_deref(), Some(DROPPED));
    let newest = history.last().unwrap().content.as_deref().unwrap();
    assert!(!newest.starts_with(DROP_MARK), "{newest}");
    // Every call keeps a result, and nothing but results changed.
    assert_eq!(history.len(), original.len());
    for (before, after) in original.iter().zip(&history) {
        assert_eq!(before.role, after.role);
        assert_eq!(before.tool_call_id, after.tool_call_id);
    }
    // A dropped result is not dropped again.
    let again = history.clone();
    compact(&mut history, &policy, by_chars);
    assert_eq!(history, again);
}

/// A reply calling `read_file` on `path`, with the call's id `id`.
fn read_call(id: &str, path: &str) -> Message {
    Message {
        content: None,
        tool_calls: vec![rein_protocol::ToolCall {
            id: Some(id.to_string()),
            kind: "function".into(),
            function: rein_protocol::FunctionCall {
                name: "read_file".into(),
                arguments: serde_json::json!({ "path": path }),
            },
        }],
        ..Message::assistant("")
    }
}

#[test]
fn when_stubs_are_still_too_many_whole_old_turns_go() {
    // A small model that calls forty times: with every result a stub, its own
    // calls still fill the context (trace: file-too-large, 4,338 tokens for 4,096).
    let mut history = vec![Message::system("rules"), Message::user("find EVT-77812")];
    for i in 0..40 {
        let id = format!("call_{i}");
        history.push(read_call(&id, &format!("logs/part-{i}.log")));
        history.push(Message::tool_result(&id, "read_file", "x".repeat(400)));
        if i == 5 || i == 38 {
            // A held answer's note goes with the turn it answered; the latest
            // stays (it is pinned).
            history.push(Message::assistant("Done."));
            history.push(Message::user(format!("Check the file first ({i}).")));
        }
    }
    let weight = |m: &Message| by_chars(m) + 30 * m.tool_calls.len();
    let policy = ContextPolicy::new(400);
    let original = history.clone();
    let report = compact(&mut history, &policy, weight).expect("compacted");
    assert!(report.removed > 0, "{report:?}");
    let total: usize = history.iter().map(weight).sum();
    assert!(total as f64 <= 400.0 * policy.trigger, "{total}");
    assert_eq!(history.len() + report.removed, original.len());
    // The system prompt and the task stay, the newest call too, and its result is
    // not dropped.
    assert_eq!(history[..2], original[..2]);
    assert_eq!(history[history.len() - 2], original[original.len() - 2]);
    let newest = history[history.len() - 1].content.as_deref().unwrap();
    assert!(!newest.starts_with(DROP_MARK), "{newest}");
    // Every result still follows the call it answers, and the roles alternate.
    for (index, message) in history.iter().enumerate().skip(2) {
        match message.role {
            Role::Tool => {
                let call = &history[index - 1].tool_calls[0];
                assert_eq!(call.id, message.tool_call_id);
            }
            Role::Assistant => assert_ne!(history[index - 1].role, Role::Assistant),
            _ => assert_eq!(
                message.content.as_deref(),
                Some("Check the file first (38).")
            ),
        }
    }
    // Compacting again removes nothing more.
    let again = history.clone();
    compact(&mut history, &policy, weight);
    assert_eq!(history, again);
}

#[test]
fn a_summary_keeps_paths_errors_and_the_ends() {
    let long: String = (0..100)
        .map(|i| match i {
            50 => "error: cannot open src/main.rs".to_string(),
            _ => format!("line {i}"),
        })
        .collect::<Vec<_>>()
        .join("\n");
    let summary = summarize(&long);
    assert!(
        summary.starts_with("[summarized: 95 of 100 lines dropped"),
        "{summary}"
    );
    for kept in [
        "line 0",
        "line 1",
        "error: cannot open src/main.rs",
        "line 98",
        "line 99",
    ] {
        assert!(summary.contains(kept), "{summary}");
    }
    assert!(!summary.contains("line 42"));
}
