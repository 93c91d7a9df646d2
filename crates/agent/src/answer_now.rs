//! Lookup runs that have what they need (`full`): a task that names nothing in the
//! workspace and asks for no file is answered from tool results, so a reply of
//! lookups (calls that read nothing of the workspace) that opens with one it already
//! made (a small model, its answer in hand, writing that call again and then every
//! other tool) runs nothing and is decoded again as the answer, with every result so
//! far in front of it; and a second call that takes no value from the request, after
//! the first was held, is a request no tool fits.

use std::collections::HashSet;

use crate::grounding::words;
use crate::memory::Memory;
use crate::validate::ReadyCall;

/// Results a note shows at most, the latest ones.
const RESULTS_SHOWN: usize = 4;

/// Characters of one result a note shows at most.
const RESULT_CHARS: usize = 300;

/// Whether the run is a lookup: the task names no existing workspace path, asks for
/// no file to write or change, and nothing has been changed.
pub(crate) fn lookup_run(memory: &Memory) -> bool {
    memory.task_paths.is_empty() && !memory.task_asks_for_a_file() && memory.changes == 0
}

/// The call `ready` opens with, when it is one that already succeeded with nothing
/// changed since and its result found something, and the reply goes on to other
/// calls, none of which takes a value of the `request` that no call took before (a
/// lone repeat gets the earlier result as its own, see `execute`; `AAPL` again with
/// the `MSFT` and `GOOGL` the request also asks for is a plan that goes on).
pub(crate) fn opening_repeat<'a>(
    ready: &'a [ReadyCall],
    memory: &Memory,
    request: &str,
) -> Option<&'a ReadyCall> {
    let first = ready.first()?;
    if ready.len() < 2 {
        return None;
    }
    let request = words(request);
    let taken: HashSet<String> = memory
        .succeeded_calls
        .keys()
        .chain(memory.failed_calls.keys())
        .flat_map(|key| words(key))
        .collect();
    if ready[1..]
        .iter()
        .any(|call| asks_anew(call, &request, &taken))
    {
        return None;
    }
    let (_, changes) = memory.succeeded_calls.get(&first.key())?;
    let found_something = memory
        .succeeded_order
        .iter()
        .any(|(key, found_nothing)| *key == first.key() && !found_nothing);
    (*changes == memory.changes && found_something).then_some(first)
}

/// Whether `call` takes a word of the `request` that no earlier call took (`taken`).
fn asks_anew(call: &ReadyCall, request: &HashSet<String>, taken: &HashSet<String>) -> bool {
    let mut values = Vec::new();
    crate::grounding::strings(&call.arguments, &mut values);
    values
        .iter()
        .flat_map(|value| words(value))
        .any(|word| request.contains(&word) && !taken.contains(&word))
}

/// The latest results that found something, one line per call (`tool` with its
/// arguments, then its result, shortened), oldest first.
pub(crate) fn results_so_far(memory: &Memory) -> Vec<String> {
    let mut lines: Vec<String> = memory
        .succeeded_order
        .iter()
        .rev()
        .filter(|(_, found_nothing)| !found_nothing)
        .filter_map(|(key, _)| {
            let (result, _) = memory.succeeded_calls.get(key)?;
            let (name, arguments) = crate::validate::call_key_parts(key)?;
            let result = crate::result_text::excerpt(result.trim(), RESULT_CHARS);
            Some(format!("- `{name}` {arguments}:\n{result}"))
        })
        .take(RESULTS_SHOWN)
        .collect();
    lines.reverse();
    lines
}

/// The note for a reply that opened with `repeat`, a call already made. The results
/// come last: a small model's answer-only reply copies what it read last, and those
/// hold the answer (the request, put last, came back as the reply).
pub(crate) fn repeat_led_note(repeat: &ReadyCall, task: &str, results: &[String]) -> String {
    format!(
        "Your reply began with `{}` again, a call you already made; nothing was run. {}",
        repeat.name,
        answer_from_results(task, results),
    )
}

/// The note when a second call took no value from the request either.
pub(crate) fn no_tool_fits_note(tool: &str, task: &str) -> String {
    format!("`{tool}` was not run: no tool fits. {}", no_tool_fits(task))
}

/// What a request no tool fits asks for: an answer from what the model knows. Short,
/// and the request last: a small model copied the longer note's first sentence as
/// its answer.
pub(crate) fn no_tool_fits(task: &str) -> String {
    format!(
        "Answer it yourself, from what you know: {}",
        crate::result_text::excerpt(task.trim(), 600),
    )
}

/// The note that asks a lookup run for its answer from the `results` so far.
pub(crate) fn answer_from_results(task: &str, results: &[String]) -> String {
    format!(
        "Answer the request ({}) now in plain words, with the values these results give:\n{}",
        crate::result_text::excerpt(task.trim(), 600),
        results.join("\n"),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn call(name: &str, arguments: serde_json::Value) -> ReadyCall {
        ReadyCall {
            id: "c".into(),
            name: name.into(),
            arguments,
        }
    }

    fn remember(memory: &mut Memory, call: &ReadyCall, result: &str, found_nothing: bool) {
        memory
            .succeeded_calls
            .insert(call.key(), (result.into(), memory.changes));
        memory.succeeded_order.push((call.key(), found_nothing));
    }

    #[test]
    fn a_reply_led_by_a_repeat_with_more_calls_is_one() {
        let mut memory = Memory::default();
        let btc = call("get_crypto_price", json!({"symbol": "BTC"}));
        let usd = call("get_crypto_price", json!({"symbol": "USD"}));
        remember(&mut memory, &btc, "BTC/USD: 67412.50", false);
        let reply = [btc.clone(), usd.clone()];
        let request = "What is the price of BTC?";
        assert_eq!(
            opening_repeat(&reply, &memory, request).map(|c| &c.name),
            Some(&btc.name)
        );
        // Alone, or led by a new call, or after a change: not one.
        assert!(opening_repeat(std::slice::from_ref(&btc), &memory, request).is_none());
        assert!(opening_repeat(&[usd.clone(), btc.clone()], &memory, request).is_none());
        // A call with a value the request asks for that no call took goes on.
        let eth = call("get_crypto_price", json!({"symbol": "ETH"}));
        let both = "What are the prices of BTC and ETH?";
        assert!(opening_repeat(&[btc.clone(), eth], &memory, both).is_none());
        memory.changes += 1;
        assert!(opening_repeat(&reply, &memory, request).is_none());
    }

    #[test]
    fn a_repeat_of_a_call_that_found_nothing_leads_nothing() {
        let mut memory = Memory::default();
        let search = call("search", json!({"pattern": "x"}));
        remember(&mut memory, &search, "no matches", true);
        let other = call("search", json!({"pattern": "y"}));
        assert!(opening_repeat(&[search, other], &memory, "Find x").is_none());
    }

    #[test]
    fn results_list_the_latest_that_found_something_in_order() {
        let mut memory = Memory::default();
        for (index, city) in ["Oslo", "Madrid", "Rome", "Paris", "Lima"]
            .iter()
            .enumerate()
        {
            let weather = call("get_weather", json!({ "city": city }));
            remember(&mut memory, &weather, &format!("{city}: {index} °C"), false);
        }
        remember(&mut memory, &call("search", json!({})), "nothing", true);
        let lines = results_so_far(&memory);
        assert_eq!(lines.len(), RESULTS_SHOWN);
        assert!(lines[0].starts_with("- `get_weather` {\"city\":\"Madrid\"}:\nMadrid: 1 °C"));
        assert!(lines[3].contains("Lima: 4 °C"));
        assert!(!lines.iter().any(|line| line.contains("nothing")));
    }

    #[test]
    fn a_run_that_must_change_the_workspace_is_no_lookup() {
        let mut memory = Memory::default();
        assert!(lookup_run(&memory));
        memory.expects_write = true;
        assert!(!lookup_run(&memory));
        let mut memory = Memory {
            output_file: Some("TODO.md".into()),
            ..Memory::default()
        };
        assert!(!lookup_run(&memory));
        memory.output_file = None;
        memory.changes = 1;
        assert!(!lookup_run(&memory));
    }
}
