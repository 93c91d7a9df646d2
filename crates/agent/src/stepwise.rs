//! Which calls of a reply run now (`full`, stepwise): the calls of its leading tool,
//! while the other tools' calls wait for that result (a chain's later steps need it),
//! and none of a spray of other tools after a call that already answered.

use crate::validate::ReadyCall;

/// Keeps the calls of `ready`'s leading tool and removes the rest, returning the
/// names of the tools whose new calls were removed (in order, once each). A small
/// model writes a chain's later calls before the result they need exists
/// (`get_office` with an office id it made up next to the `find_employee` that gives
/// it), so those wait for the next turn. The leading tool is that of the first call
/// that is not a `repeat` of an earlier one (a reply that opens with the listing it
/// already has, or the read that failed, and goes on to a new call runs that call).
/// A call that is `settled` (its values copied from what the run has already seen)
/// needs no pending result and stays.
pub(crate) fn defer_other_tools(
    ready: &mut Vec<ReadyCall>,
    repeat: impl Fn(&ReadyCall) -> bool,
    settled: impl Fn(&ReadyCall) -> bool,
) -> Vec<String> {
    let lead = ready
        .iter()
        .find(|call| !repeat(call))
        .or(ready.first())
        .map(|call| call.name.clone());
    let Some(lead) = lead else {
        return Vec::new();
    };
    let mut deferred: Vec<String> = Vec::new();
    ready.retain(|call| {
        if call.name == lead || (!repeat(call) && settled(call)) {
            return true;
        }
        if !repeat(call) && !deferred.contains(&call.name) {
            deferred.push(call.name.clone());
        }
        false
    });
    deferred
}

/// Whether every string value of `call` was already there before the reply: given in
/// the request (see `given_in_request`), in a tool result of `results`, or a path of
/// the workspace under `root` — and at least one comes from a result. Such a call (`write_file` of the `PG-4471` a
/// search showed, into the `incident.txt` the task names) waits for nothing.
pub(crate) fn copied_from_results(
    call: &ReadyCall,
    request: &str,
    results: &[&str],
    root: &std::path::Path,
) -> bool {
    let mut values = Vec::new();
    crate::grounding::strings(&call.arguments, &mut values);
    let values: Vec<&str> = values
        .into_iter()
        .map(str::trim)
        .filter(|v| v.chars().count() > 1)
        .collect();
    let in_results = |v: &str| results.iter().any(|r| r.contains(v));
    !values.is_empty()
        && values.iter().any(|v| in_results(v))
        && values.iter().all(|v| {
            in_results(v)
                || given_in_request(request, v)
                || crate::grounding::names_existing_path(v, root)
        })
}

/// Whether `request` gives `value` as a value: quoted there (`"main"`, `` `main` ``),
/// or written there and more than lowercase words of its prose. "latest" from "the
/// sha of its latest commit" is no sha, and a call that sends it waits for the
/// result that has one.
fn given_in_request(request: &str, value: &str) -> bool {
    if !request.contains(value) {
        return false;
    }
    let prose = value.chars().all(|c| c.is_lowercase() || c == ' ');
    !prose
        || ['"', '\'', '`']
            .iter()
            .any(|q| request.contains(&format!("{q}{value}{q}")))
}

/// Other tools a reply sprays at once after a call that already succeeded, at least.
const SPRAY_TOOLS: usize = 3;

/// A reply that opens with a call that already succeeded (nothing changed since) and
/// goes on to call [`SPRAY_TOOLS`] or more other tools: a small model, its answer in
/// hand, calling every tool of the catalog (`send_email` and `forward_email` after
/// the draft the task asked for was saved). Only the repeats are kept (they are
/// answered from memory); the names of the other tools are returned, and those calls
/// are neither run nor planned. Empty when the reply is not such a spray.
pub(crate) fn spray_after_success(
    ready: &mut Vec<ReadyCall>,
    succeeded: impl Fn(&ReadyCall) -> bool,
) -> Vec<String> {
    if !ready.first().is_some_and(&succeeded) {
        return Vec::new();
    }
    let mut others: Vec<String> = Vec::new();
    for call in ready.iter().filter(|call| !succeeded(call)) {
        if !others.contains(&call.name) {
            others.push(call.name.clone());
        }
    }
    if others.len() < SPRAY_TOOLS {
        return Vec::new();
    }
    ready.retain(|call| succeeded(call));
    others
}

/// What the last result says about the calls a spray made.
pub(crate) fn sprayed_note(tools: &[String]) -> String {
    format!(
        "\n(Your reply also called {} at once, after a call that had already given its result; those calls were not run. If the result above answers the task, reply with the answer; otherwise call only the one tool the task still needs.)",
        crate::guards::backticked_list(tools)
    )
}

/// What the last result says about the calls that waited.
pub(crate) fn deferred_note(tools: &[String]) -> String {
    format!(
        "\n(Your reply also called {}; {} not run, because {} came before this result existed and may need it. Make the next call now, with values from this result, or answer if the task is done.)",
        crate::guards::backticked_list(tools),
        if tools.len() == 1 { "that call was" } else { "those calls were" },
        if tools.len() == 1 { "it" } else { "they" },
    )
}

#[cfg(test)]
mod tests {
    use super::given_in_request;

    #[test]
    fn a_value_of_the_request_is_quoted_or_more_than_its_prose_words() {
        let request = "Get the branch \"main\" of acme/ledger to find the sha of its latest commit (see CI.md).";
        for value in ["main", "acme/ledger", "CI.md"] {
            assert!(given_in_request(request, value), "{value}");
        }
        for value in ["latest", "latest commit", "sha", "9f3c2e1"] {
            assert!(!given_in_request(request, value), "{value}");
        }
    }
}
