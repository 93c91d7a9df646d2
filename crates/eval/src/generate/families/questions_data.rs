//! Question families over data files: counts over logs, sums over tables, the first
//! or last event, the extreme item of a list.

use std::collections::BTreeMap;

use serde_json::json;

use crate::generate::words::distinct_numbers;
use crate::generate::words::{self, answer_has, answer_is, answer_number, answer_word};
use crate::generate::{GenTask, Outcome, Rng};

const LEVELS: &[&str] = &["DEBUG", "INFO", "WARN", "ERROR"];

/// A timestamp `minutes` after a day's start.
fn stamp(day: u32, minutes: u32) -> String {
    format!(
        "2026-03-{day:02}T{:02}:{:02}:{:02}Z",
        minutes / 60 % 24,
        minutes % 60,
        (minutes * 7) % 60
    )
}

/// One log line in the chosen style (0: plain, 1: logfmt, 2: JSON).
fn log_line(style: usize, time: &str, level: &str, component: &str, message: &str) -> String {
    match style {
        0 => format!("{time} {level} [{component}] {message}"),
        1 => format!(
            "time={time} level={} component={component} msg=\"{message}\"",
            level.to_lowercase()
        ),
        _ => {
            json!({"ts": time, "level": level, "component": component, "msg": message}).to_string()
        }
    }
}

pub(super) fn count_log_lines(rng: &mut Rng, phrasing: usize) -> GenTask {
    let components = rng.distinct(words::NOUNS, 3);
    let level = *rng.pick(&["WARN", "ERROR"]);
    let component = &components[0];
    let style = rng.below(3);
    let messages = [
        "request failed",
        "retrying",
        "slow response",
        "connection reset",
        "cold start",
        "job done",
    ];
    // Lines until the wanted count differs from the level's and the component's totals.
    let (lines, wanted, level_total) = loop {
        let total = rng.range(25, 60) as u32;
        let mut lines = Vec::new();
        let (mut wanted, mut level_total, mut component_total) = (0, 0, 0);
        for i in 0..total {
            let c = &components[rng.below(3)];
            let l = *rng.pick(LEVELS);
            wanted += u32::from(c == component && l == level);
            level_total += u32::from(l == level);
            component_total += u32::from(c == component);
            let message = *rng.pick(&messages);
            lines.push(log_line(style, &stamp(4, 600 + i * 3), l, c, message));
        }
        if wanted >= 2 && wanted != level_total && wanted != component_total {
            break (lines, wanted, level_total);
        }
    };
    let dir = *rng.pick(&["logs/", "var/log/", "", "data/logs/"]);
    let name = format!(
        "{dir}{}.log",
        rng.pick(&["app", "server", "service", "worker"])
    );
    let mut files = BTreeMap::new();
    files.insert(name.clone(), lines.join("\n") + "\n");
    let rotated: Vec<String> = (0..rng.range(8, 20) as u32)
        .map(|i| {
            log_line(
                style,
                &stamp(3, 900 + i * 5),
                level,
                component,
                "request failed",
            )
        })
        .collect();
    files.insert(format!("{name}.1"), rotated.join("\n") + "\n");
    let lower = level.to_lowercase();
    let bare = matches!(phrasing, 1 | 5);
    let prompt = match phrasing {
        0 => format!("How many {level} lines from {component} are in {name}?"),
        1 => format!("Count the {level} entries of the {component} component in {name}. Reply with the number only."),
        2 => format!(
            "Our {component} component has been noisy. In the current log (not the rotated \
             .1 file), how many times did it log at {lower} level?"
        ),
        3 => format!(
            "I'd like a count: in {name}, take the lines whose level is {level} and whose \
             component is {component}, and tell me how many there are."
        ),
        4 => format!("Could you please tell me how many {lower}s {component} logged in {name}? Thanks!"),
        _ => format!("Number of {level} log lines for {component} in {name}? Just the number."),
    };
    let answer = wanted.to_string();
    GenTask {
        prompt,
        files,
        grade: vec![if bare {
            answer_is(&answer)
        } else {
            answer_number(i64::from(wanted))
        }],
        solution: Outcome::answer(if bare {
            answer.clone()
        } else {
            format!("{component} logged {wanted} {level} lines in {name}.")
        }),
        mistake: Outcome::answer(if bare {
            level_total.to_string()
        } else {
            format!("There are {level_total} {level} lines.")
        }),
        ..GenTask::default()
    }
}

pub(super) fn column_sum(rng: &mut Rng, phrasing: usize) -> GenTask {
    let (categories, column, key): (&[&str], &str, &str) = *rng.pick(&[
        (&["north", "south", "east", "west"][..], "units", "region"),
        (
            &["books", "games", "tools", "garden"][..],
            "quantity",
            "category",
        ),
        (
            &["web", "mobile", "store", "phone"][..],
            "orders",
            "channel",
        ),
        (&["alpha", "beta", "gamma", "delta"][..], "hours", "team"),
    ]);
    let tab = rng.chance(35);
    let sep = if tab { "\t" } else { "," };
    let wanted_category = *rng.pick(categories);
    let (rows, wanted, total) = loop {
        let count = rng.range(10, 24);
        let mut rows = Vec::new();
        let (mut wanted, mut total) = (0i64, 0i64);
        for i in 0..count {
            let category = *rng.pick(categories);
            let value = rng.range(1, 99);
            let price = rng.range(100, 999);
            total += value;
            if category == wanted_category {
                wanted += value;
            }
            rows.push(format!(
                "{}{sep}{category}{sep}{value}{sep}{price}",
                1000 + i
            ));
        }
        if wanted > 0 && wanted != total {
            break (rows, wanted, total);
        }
    };
    let ext = if tab { "tsv" } else { "csv" };
    let dir = *rng.pick(&["", "data/", "reports/2026/", "exports/"]);
    let path = format!(
        "{dir}{}.{ext}",
        rng.pick(&["sales", "ledger", "report", "orders"])
    );
    let mut files = BTreeMap::new();
    files.insert(
        path.clone(),
        format!("id{sep}{key}{sep}{column}{sep}price\n{}\n", rows.join("\n")),
    );
    let bare = matches!(phrasing, 2 | 4);
    let prompt = match phrasing {
        0 => format!("Sum of {column} for {key} {wanted_category} in {path}?"),
        1 => format!(
            "Add up the `{column}` column of {path}, counting only the rows whose `{key}` is \
             `{wanted_category}`, and tell me the total."
        ),
        2 => format!("What is the total {column} where {key} = {wanted_category}? Reply with the number only."),
        3 => format!(
            "I'm preparing a summary and need one figure: the total number of {column} for \
             the {wanted_category} {key}, from the table in this workspace."
        ),
        4 => format!("Total {column}, {key} {wanted_category}, from {path}. Just the number."),
        _ => format!("Hi, could you kindly compute how many {column} the {wanted_category} rows of {path} add up to?"),
    };
    GenTask {
        prompt,
        files,
        grade: vec![if bare {
            answer_is(&wanted.to_string())
        } else {
            answer_number(wanted)
        }],
        solution: Outcome::answer(if bare {
            wanted.to_string()
        } else {
            format!("The total is {wanted}.")
        }),
        mistake: Outcome::answer(if bare {
            total.to_string()
        } else {
            format!("The total is {total}.")
        }),
        ..GenTask::default()
    }
}

pub(super) fn first_last_event(rng: &mut Rng, phrasing: usize) -> GenTask {
    let kinds = ["login", "upload", "purchase", "refund", "logout", "export"];
    let people = rng.distinct(words::PEOPLE, 3);
    let user = &people[0];
    let kind = *rng.pick(&kinds);
    let jsonl = rng.chance(50);
    let last = rng.chance(50);
    let (events, wanted, other_end) = loop {
        let mut events = Vec::new();
        let mut matching = Vec::new();
        for i in 0..rng.range(16, 32) as u32 {
            let id = format!("evt-{}", words::code(rng, 5));
            let who = &people[rng.below(3)];
            let what = *rng.pick(&kinds);
            if who == user && what == kind {
                matching.push(id.clone());
            }
            events.push((stamp(9, 480 + i * 11), id, who.to_string(), what));
        }
        if matching.len() >= 3 {
            let (first, end) = (matching[0].clone(), matching[matching.len() - 1].clone());
            break if last {
                (events, end, first)
            } else {
                (events, first, end)
            };
        }
    };
    let text: String = events
        .iter()
        .map(|(time, id, who, what)| {
            if jsonl {
                format!(
                    "{}\n",
                    json!({"id": id, "time": time, "user": who, "event": what})
                )
            } else {
                format!("{time} {id} user={who} event={what}\n")
            }
        })
        .collect();
    let path = format!(
        "{}{}",
        rng.pick(&["", "audit/", "logs/events/"]),
        if jsonl { "events.jsonl" } else { "events.log" }
    );
    let mut files = BTreeMap::new();
    files.insert(path.clone(), text);
    let end = if last { "last" } else { "first" };
    let time_word = if last { "most recent" } else { "earliest" };
    let bare = matches!(phrasing, 3 | 5);
    let prompt = match phrasing {
        0 => format!("Id of {user}'s {end} {kind} event in {path}?"),
        1 => format!(
            "Look through the event log {path} and find the {time_word} `{kind}` event by the \
             user {user}. What is its event id?"
        ),
        2 => format!("Which event id belongs to the {end} {kind} that {user} did, according to the audit events?"),
        3 => format!("Find the {end} {kind} by {user} in {path} and reply with its id only."),
        4 => format!(
            "Sorry to bother you — I need the id of the {time_word} {kind} event of user {user}. \
             Could you look it up?"
        ),
        _ => format!("{end} {kind} event of {user}: id only, please."),
    };
    GenTask {
        prompt,
        files,
        grade: vec![if bare {
            answer_is(&wanted)
        } else {
            answer_has(&wanted)
        }],
        solution: Outcome::answer(if bare {
            wanted.clone()
        } else {
            format!("{user}'s {end} {kind} is {wanted}.")
        }),
        mistake: Outcome::answer(if bare {
            other_end.clone()
        } else {
            format!("It is {other_end}.")
        }),
        ..GenTask::default()
    }
}

pub(super) fn extreme_item(rng: &mut Rng, phrasing: usize) -> GenTask {
    let count = rng.range(5, 9) as usize;
    let items = rng.distinct(words::PRODUCTS, count);
    let fields = ["price", "stock", "weight_g", "rating"];
    let field = *rng.pick(&fields);
    let highest = rng.chance(50);
    let prices = distinct_numbers(rng, items.len(), 5, 900);
    let stocks = distinct_numbers(rng, items.len(), 0, 500);
    let weights = distinct_numbers(rng, items.len(), 50, 5000);
    let ratings = distinct_numbers(rng, items.len(), 10, 50);
    let value_of = |i: usize, f: &str| match f {
        "price" => prices[i],
        "stock" => stocks[i],
        "weight_g" => weights[i],
        _ => ratings[i],
    };
    let pick_index = |f: &str, high: bool| {
        let mut best = 0;
        for i in 1..items.len() {
            let better = if high {
                value_of(i, f) > value_of(best, f)
            } else {
                value_of(i, f) < value_of(best, f)
            };
            if better {
                best = i;
            }
        }
        best
    };
    let wanted = pick_index(field, highest);
    let opposite = pick_index(field, !highest);
    let json_file = rng.chance(50);
    let path = format!(
        "{}{}",
        rng.pick(&["", "data/", "catalog/", "shop/data/"]),
        if json_file {
            "products.json"
        } else {
            "products.csv"
        }
    );
    let text = if json_file {
        let list: Vec<_> = items
            .iter()
            .enumerate()
            .map(|(i, name)| {
                json!({"name": name, "price": value_of(i, "price"), "stock": value_of(i, "stock"),
                       "weight_g": value_of(i, "weight_g"), "rating": value_of(i, "rating") as f64 / 10.0})
            })
            .collect();
        serde_json::to_string_pretty(&list).unwrap_or_default() + "\n"
    } else {
        let mut text = "name,price,stock,weight_g,rating\n".to_string();
        for (i, name) in items.iter().enumerate() {
            text.push_str(&format!(
                "{name},{},{},{},{:.1}\n",
                value_of(i, "price"),
                value_of(i, "stock"),
                value_of(i, "weight_g"),
                value_of(i, "rating") as f64 / 10.0
            ));
        }
        text
    };
    let mut files = BTreeMap::new();
    files.insert(path.clone(), text);
    let (most, adjective) = match (field, highest) {
        ("price", true) => ("highest price", "most expensive"),
        ("price", false) => ("lowest price", "cheapest"),
        ("stock", true) => ("largest stock", "best stocked"),
        ("stock", false) => ("smallest stock", "least stocked"),
        ("weight_g", true) => ("highest weight", "heaviest"),
        ("weight_g", false) => ("lowest weight", "lightest"),
        (_, true) => ("highest rating", "best rated"),
        (_, false) => ("lowest rating", "worst rated"),
    };
    let bare = matches!(phrasing, 0 | 4);
    let prompt = match phrasing {
        0 => format!("{adjective} product in {path}? Name only."),
        1 => format!("Which product in {path} has the {most}?"),
        2 => format!(
            "I'm looking at our product list and want to know which item is the {adjective}. \
             Can you check the `{field}` values and tell me?"
        ),
        3 => format!("Go through {path}, compare the {field} field of every product and tell me which one has the {most}."),
        4 => format!("Reply with just the name of the product with the {most} ({field}) in {path}."),
        _ => format!("Hey, quick favour: which of our products is the {adjective}? The data is in {path}. Thanks!"),
    };
    let name = items[wanted].to_string();
    GenTask {
        prompt,
        files,
        grade: vec![if bare {
            answer_is(&name)
        } else {
            answer_word(&name)
        }],
        solution: Outcome::answer(if bare {
            name.clone()
        } else {
            format!("The {name} has the {most}.")
        }),
        mistake: Outcome::answer(if bare {
            items[opposite].to_string()
        } else {
            format!("The {} has the {most}.", items[opposite])
        }),
        ..GenTask::default()
    }
}
