//! An answer that names another item of a compared list than the one the task's
//! superlative picks: asked for the order "with the latest placed_at date", the 1.5B
//! model read the list and its line `(by placed_at: earliest ORD-88120 at 2024-01-22,
//! latest ORD-90417 at 2024-06-10)`, fetched every order's status, and answered with
//! ORD-89954. Under `full` such an answer is held once, with that line.

/// Words that ask for the high end of a field, and for the low end.
const HIGH_WORDS: [&str; 9] = [
    "latest",
    "newest",
    "most recent",
    "highest",
    "largest",
    "biggest",
    "most expensive",
    "maximum",
    "greatest",
];
const LOW_WORDS: [&str; 8] = [
    "earliest",
    "oldest",
    "lowest",
    "smallest",
    "cheapest",
    "least expensive",
    "minimum",
    "fewest",
];

/// Superlatives that name no field but mean a price.
const PRICE_WORDS: [&str; 3] = ["cheapest", "most expensive", "least expensive"];
/// Key segments that hold a price.
const PRICE_KEYS: [&str; 5] = ["price", "cost", "fare", "amount", "total"];

/// A pick the answer got wrong.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct WrongPick {
    /// The task's superlative (`latest`).
    pub word: String,
    /// The compared field (`placed_at`).
    pub field: String,
    /// The item(s) the list's line gives for it, and the value.
    pub expected: String,
    /// The value there.
    pub value: String,
    /// The other item the answer names.
    pub named: String,
}

/// One compared line of a result: its field, and both ends (items, value).
struct Compared<'a> {
    field: &'a str,
    low: (&'a str, &'a str),
    high: (&'a str, &'a str),
}

/// Reads `(by KEY: lowest A at V, highest B at W)` (or earliest/latest).
fn compared<'a>(line: &'a str) -> Option<Compared<'a>> {
    let inner = line.trim().strip_prefix("(by ")?.strip_suffix(')')?;
    let (field, rest) = inner.split_once(": ")?;
    let (low_word, high_word) = if rest.starts_with("earliest ") {
        ("earliest ", "latest ")
    } else {
        ("lowest ", "highest ")
    };
    let rest = rest.strip_prefix(low_word)?;
    let (low, high) = rest.split_once(&format!(", {high_word}"))?;
    Some(Compared {
        field,
        low: low.rsplit_once(" at ")?,
        high: high.rsplit_once(" at ")?,
    })
}

/// The superlative of `lower` (the task, lowercased) that asks for `field`'s high end
/// (`true`) or low end (`false`): a word of that end, and the field named (a segment
/// of its key, `_` read as a space) or, for a price word, a price-like key.
fn asked_end(lower: &str, field: &str) -> Option<(String, bool)> {
    let segments: Vec<String> = field
        .split('.')
        .filter(|s| s.len() >= 3)
        .map(|s| s.to_lowercase())
        .collect();
    let names_field = segments
        .iter()
        .any(|s| lower.contains(s.as_str()) || lower.contains(&s.replace('_', " ")));
    let priced = segments.iter().any(|s| PRICE_KEYS.contains(&s.as_str()));
    let find = |words: &[&'static str]| -> Option<&'static str> {
        words
            .iter()
            .copied()
            .find(|w| lower.contains(w) && (names_field || (priced && PRICE_WORDS.contains(w))))
    };
    match (find(&HIGH_WORDS), find(&LOW_WORDS)) {
        (Some(word), None) => Some((word.to_string(), true)),
        (None, Some(word)) => Some((word.to_string(), false)),
        _ => None,
    }
}

/// The labels of a result's list items (`- id: ORD-88120, placed_at: …` gives
/// `ORD-88120`).
fn item_labels(result: &str) -> Vec<&str> {
    result
        .lines()
        .filter_map(|line| line.trim_start().strip_prefix("- "))
        .filter_map(|item| {
            let first = item.split(", ").next()?;
            let (_, value) = first.split_once(": ")?;
            let value = value.trim();
            (value.chars().count() >= 3).then_some(value)
        })
        .collect()
}

/// The wrong pick of `answer`, when a result compares a list by the field the task's
/// one superlative asks about, the superlative is not qualified by a word the list
/// does not compare, the answer names none of the items at that end, and names
/// another item of that list.
pub(crate) fn wrong_pick(task: &str, results: &[&str], answer: &str) -> Option<WrongPick> {
    let lower = task.to_lowercase();
    let mut found = None;
    for result in results {
        for line in result.lines() {
            let Some(line) = compared(line) else { continue };
            let Some((word, high)) = asked_end(&lower, line.field) else {
                continue;
            };
            if found.is_some() {
                // Two lists or two fields the task may mean: no judgement.
                return None;
            }
            let (items, value) = if high { line.high } else { line.low };
            found = Some((word, line.field, items, value, *result));
        }
    }
    let (word, field, items, value, result) = found?;
    let expected: Vec<&str> = items.split(", ").collect();
    let pick = |named: &str| WrongPick {
        word: word.clone(),
        field: field.to_string(),
        expected: items.to_string(),
        value: value.to_string(),
        named: named.to_string(),
    };
    if expected.iter().any(|item| answer.contains(item)) {
        return None;
    }
    let named = item_labels(result)
        .into_iter()
        .find(|label| !expected.contains(label) && answer.contains(label))?;
    // A superlative qualified by a word the list does not compare ("the cheapest
    // nonstop flight") leaves the pick to the model: nothing is judged.
    let pick = pick(named);
    (!qualified(task, &pick, results)).then_some(pick)
}

/// The note for a wrong pick.
pub(crate) fn wrong_pick_note(pick: &WrongPick) -> String {
    format!(
        "Check your pick: the task asks for the {} {}, and the list shows that is {} ({}), not {}. Use the values of {} (call for them if you have not), then answer.",
        pick.word, pick.field, pick.expected, pick.value, pick.named, pick.expected
    )
}

/// A call that names another item of a compared list than the task's superlative
/// picks (`book_flight` with DL-0931 when the cheapest is WN-2240), with its
/// arguments written for the picked item when the list's line gives one item (a
/// qualified superlative judges no call: see [`wrong_pick`]).
pub(crate) fn wrong_pick_in_call(
    task: &str,
    results: &[&str],
    arguments: &serde_json::Value,
) -> Option<(WrongPick, Option<serde_json::Value>)> {
    let pick = wrong_pick(task, results, &arguments.to_string())?;
    let single = !pick.expected.contains(", ");
    let mut fixed = arguments.clone();
    let mut replaced = false;
    if let (true, Some(object)) = (single, fixed.as_object_mut()) {
        for value in object.values_mut() {
            if value.as_str() == Some(pick.named.as_str()) {
                *value = serde_json::Value::String(pick.expected.clone());
                replaced = true;
            }
        }
    }
    Some((pick, replaced.then_some(fixed)))
}

/// Whether the task's superlative is qualified by a word the list does not compare
/// ("the cheapest nonstop flight"): the word after it is not `of`, `one`, the compared
/// field, the list's own name (`flights:` for "cheapest flight") or a word of its
/// items' keys (`flight_id`).
fn qualified(task: &str, pick: &WrongPick, results: &[&str]) -> bool {
    let lower = task.to_lowercase();
    let Some(at) = lower.find(&pick.word) else {
        return true;
    };
    let Some(next) = lower[at + pick.word.len()..]
        .split_whitespace()
        .next()
        .map(|w| w.trim_matches(|c: char| !(c.is_alphanumeric() || c == '_')))
    else {
        return true;
    };
    let field = pick.field.to_lowercase();
    let lists: Vec<String> = results
        .iter()
        .flat_map(|r| r.lines())
        .filter_map(|line| line.trim().strip_suffix(':'))
        .map(str::to_lowercase)
        .collect();
    // The words of the items' keys (`flight` of `flight_id`): "the cheapest flight"
    // names the items themselves.
    let item_words: Vec<String> = results
        .iter()
        .flat_map(|r| r.lines())
        .filter_map(|line| line.trim_start().strip_prefix("- "))
        .flat_map(|item| item.split(", "))
        .filter_map(|pair| pair.split_once(": ").map(|(key, _)| key.to_lowercase()))
        .flat_map(|key| key.split(['_', '.']).map(String::from).collect::<Vec<_>>())
        .collect();
    let singular = next.strip_suffix('s').unwrap_or(next);
    let plain = matches!(next, "of" | "one" | "ones" | "")
        || field.split('.').any(|segment| segment == next)
        || lists
            .iter()
            .any(|list| list == next || list.strip_suffix('s') == Some(next))
        || item_words
            .iter()
            .any(|word| word == next || word == singular);
    !plain
}

/// The result of a call not run for a wrong pick: the list's line, and the call for
/// the picked item when there is one (`fixed_call`, written in the model's syntax).
pub(crate) fn wrong_pick_call_note(pick: &WrongPick, fixed_call: Option<String>) -> String {
    let first = format!(
        "Not run: the task asks for the {} {}, and the list shows that is {} ({}), not {}.",
        pick.word, pick.field, pick.expected, pick.value, pick.named
    );
    let unless = format!(
        " If the task's pick depends on more than {} (a word of the task the list does not compare), your call may be right: make it again.",
        pick.field
    );
    match fixed_call {
        Some(call) => format!(
            "{first} For {}, the call is:\n{call}\n{}",
            pick.expected,
            unless.trim_start()
        ),
        None => format!(
            "{first} If {} is the pick, make the call for it.{unless}",
            pick.expected
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const ORDERS: &str = "user_id: U-7731\norders:\n- id: ORD-88120, placed_at: 2024-01-22, total.amount: 54.1\n- id: ORD-89954, placed_at: 2024-04-05, total.amount: 129.0\n- id: ORD-90417, placed_at: 2024-06-10, total.amount: 18.75\n(by placed_at: earliest ORD-88120 at 2024-01-22, latest ORD-90417 at 2024-06-10)\n(by total.amount: lowest ORD-90417 at 18.75, highest ORD-89954 at 129.0)";
    const TASK: &str = "List that user's orders and pick the one with the latest placed_at date. Then tell me the order id and its status.";

    #[test]
    fn an_answer_naming_another_item_than_the_superlative_picks_is_caught() {
        let pick = wrong_pick(TASK, &[ORDERS], "The order id is ORD-89954, delivered.").unwrap();
        assert_eq!(pick.expected, "ORD-90417");
        assert_eq!(pick.named, "ORD-89954");
        assert_eq!(pick.field, "placed_at");
        assert!(wrong_pick_note(&pick).contains("latest placed_at"));
    }

    #[test]
    fn the_right_item_or_no_item_or_no_superlative_is_left_alone() {
        assert!(wrong_pick(TASK, &[ORDERS], "ORD-90417 is in_transit.").is_none());
        assert!(wrong_pick(TASK, &[ORDERS], "It is in transit.").is_none());
        let plain = "Tell me the status of order ORD-89954.";
        assert!(wrong_pick(plain, &[ORDERS], "ORD-89954 is delivered.").is_none());
    }

    #[test]
    fn a_price_word_picks_the_price_field() {
        let flights = "- flight: UA-1187, price.amount: 289\n- flight: WN-2240, price.amount: 214\n(by price.amount: lowest WN-2240 at 214, highest UA-1187 at 289)";
        let task = "Book the cheapest flight to Denver.";
        let pick = wrong_pick(task, &[flights], "I booked UA-1187.").unwrap();
        assert_eq!(pick.expected, "WN-2240");
        assert!(wrong_pick(task, &[flights], "Booked WN-2240.").is_none());
    }

    #[test]
    fn a_task_whose_words_fit_both_ends_or_two_lists_is_not_judged() {
        let task = "Which order has the latest placed_at and which the earliest placed_at?";
        assert!(wrong_pick(task, &[ORDERS], "ORD-89954").is_none());
        assert!(wrong_pick(TASK, &[ORDERS, ORDERS], "ORD-89954").is_none());
    }

    #[test]
    fn a_call_for_another_item_than_the_pick_is_caught_and_rewritten() {
        let flights = "flights:\n- flight_id: UA-1187, stops: 0, price.amount: 289\n- flight_id: WN-2240, stops: 1, price.amount: 214\n- flight_id: DL-0931, stops: 0, price.amount: 247\n(by price.amount: lowest WN-2240 at 214, highest UA-1187 at 289)";
        let task =
            "Search for flights from BOS to DEN, then book the cheapest of them for Ana Souza.";
        let call = serde_json::json!({"flight_id": "DL-0931", "passenger_name": "Ana Souza"});
        let (pick, fixed) = wrong_pick_in_call(task, &[flights], &call).unwrap();
        assert_eq!(pick.expected, "WN-2240");
        assert_eq!(
            fixed,
            Some(serde_json::json!({"flight_id": "WN-2240", "passenger_name": "Ana Souza"}))
        );
        assert!(wrong_pick_call_note(&pick, Some("CALL".into())).contains("the call is:\nCALL\n"));
        // A pick the list does not decide alone (DL-0931 is the cheapest nonstop
        // flight): the call is the model's, and runs.
        let nonstop =
            "Search for flights from BOS, then book the cheapest nonstop flight for Ana Souza.";
        assert_eq!(wrong_pick_in_call(nonstop, &[flights], &call), None);
        let named = "Search for flights from BOS, then book the cheapest flight for Ana Souza.";
        let (_, fixed) = wrong_pick_in_call(named, &[flights], &call).unwrap();
        assert!(fixed.is_some());
        let right = serde_json::json!({"flight_id": "WN-2240", "passenger_name": "Ana Souza"});
        assert_eq!(wrong_pick_in_call(task, &[flights], &right), None);
        let unrelated = serde_json::json!({"origin": "BOS"});
        assert_eq!(wrong_pick_in_call(task, &[flights], &unrelated), None);
    }
}
