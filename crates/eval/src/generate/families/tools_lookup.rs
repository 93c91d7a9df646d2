//! Families of tool choice over generated APIs besides the typed call: two to four
//! independent lookups in one reply, a request no offered tool can do, and an answer
//! read from a lookup's result without calling again. The tools are declared by the task
//! with canned results; no built-in tool is offered.

use serde_json::{json, Map, Value};

use super::tools::{
    and_list, article, called, capital, declared, fillers, not_called, object_schema,
    simple_schema, Args, BUDGET,
};
use crate::generate::words::{self, answer_has, answer_is, answer_number, distinct_numbers};
use crate::generate::{Family, GenTask, Outcome, Rng};
use crate::grade::GraderSpec;
use crate::task::{DeclaredToolSpec, ResultCase};

/// The families of this file.
pub(super) const FAMILIES: &[Family] = &[
    Family {
        name: "parallel-calls",
        kind: "tools",
        about: "two to four independent lookups of one or two tools that belong in one reply, one call per item",
        phrasings: 6,
        build: parallel_calls,
    },
    Family {
        name: "no-tool-fits",
        kind: "tools",
        about: "a request none of the offered tools can do, one of them sharing a word with it: answer without calling",
        phrasings: 6,
        build: no_tool_fits,
    },
    Family {
        name: "answer-after-result",
        kind: "tools",
        about: "one lookup whose canned record holds the asked field among others: call once, then answer with the value",
        phrasings: 6,
        build: answer_after_result,
    },
];

/// A lookup of one item: its tool's verb and noun, what it does, its string argument
/// (name, description) and values, how the prompt asks for items (`{}`), its result
/// (`{}` the item, `{n}` a number in `range`) and maybe an argument shared by every
/// call (name, members, how the prompt says one).
#[derive(Clone, Copy)]
struct Lookup {
    verb: &'static str,
    noun: &'static str,
    does: &'static str,
    key: (&'static str, &'static str),
    values: &'static [&'static str],
    ask: &'static str,
    result: &'static str,
    range: (i64, i64),
    shared: Option<(&'static str, &'static [&'static str], &'static str)>,
}

/// The lookups of parallel calls.
#[rustfmt::skip]
const LOOKUPS: &[Lookup] = &[
    Lookup { verb: "get", noun: "weather", does: "Current weather of one city.", key: ("city", "One city."), values: words::CITIES,
        ask: "the weather in {}", result: "{}: {n} degrees, cloudy", range: (2, 33), shared: Some(("units", &["celsius", "fahrenheit"], "in {}")) },
    Lookup { verb: "check", noun: "stock", does: "Units in stock of one product.", key: ("product", "One product."), values: words::PRODUCTS,
        ask: "the stock of {}", result: "{}: {n} in stock", range: (3, 400), shared: Some(("warehouse", &["north", "south", "east", "west"], "in the {} warehouse")) },
    Lookup { verb: "get", noun: "population", does: "Population of one city.", key: ("city", "One city."), values: words::CITIES,
        ask: "the population of {}", result: "{}: about {n} thousand people", range: (90, 3000), shared: None },
    Lookup { verb: "get", noun: "price", does: "Current price of one product.", key: ("product", "One product."), values: words::PRODUCTS,
        ask: "the price of {}", result: "{}: {n}.99", range: (9, 400), shared: Some(("currency", &["EUR", "USD", "GBP"], "in {}")) },
    Lookup { verb: "get", noun: "status", does: "Health of one service.", key: ("service", "One service name."), values: words::NOUNS,
        ask: "the status of the service {}", result: "{}: up, {n} ms latency", range: (12, 900), shared: None },
    Lookup { verb: "count", noun: "visits", does: "Visits to one page of the website.", key: ("page", "One page."), values: &["home", "pricing", "blog", "docs", "about", "careers", "contact"],
        ask: "the visits to the {} page", result: "{}: {n} visits", range: (40, 9000), shared: Some(("period", &["day", "week", "month"], "over the last {}")) },
    Lookup { verb: "lookup", noun: "extension", does: "Phone extension of one colleague.", key: ("person", "One colleague's first name."), values: words::PEOPLE,
        ask: "the phone extension of {}", result: "{}: extension {n}", range: (100, 999), shared: None },
    Lookup { verb: "get", noun: "timezone", does: "Time zone of one city.", key: ("city", "One city."), values: words::CITIES,
        ask: "the time zone of {}", result: "{}: UTC+{n}", range: (0, 12), shared: None },
];

/// Builds a `parallel-calls` task.
fn parallel_calls(rng: &mut Rng, phrasing: usize) -> GenTask {
    let two = rng.chance(50);
    let lookups = rng.distinct(LOOKUPS, if two { 2 } else { 1 });
    let counts: Vec<usize> = if two {
        vec![2, rng.range(1, 2) as usize]
    } else {
        vec![rng.range(2, 4) as usize]
    };
    let mut used: Vec<&str> = Vec::new();
    let mut tools = Vec::new();
    let mut groups = Vec::new();
    for (lookup, &count) in lookups.iter().zip(&counts) {
        let pool: Vec<&str> = lookup
            .values
            .iter()
            .copied()
            .filter(|v| !used.contains(v))
            .collect();
        let items = rng.distinct(&pool, count);
        used.extend(&items);
        let name = format!("{}_{}", lookup.verb, lookup.noun);
        let (key, key_about) = lookup.key;
        let shared = if rng.chance(60) {
            lookup.shared.map(|(arg, members, say)| {
                let member = *rng.pick(members);
                (arg, members, member, say.replace("{}", member))
            })
        } else {
            None
        };
        let mut properties = vec![(
            key.to_string(),
            json!({"type": "string", "description": key_about}),
        )];
        if let Some((arg, members, _, _)) = &shared {
            properties.push((arg.to_string(), json!({"type": "string", "enum": members})));
        }
        let cases = items
            .iter()
            .map(|item| ResultCase {
                when: json!({ key: item }),
                result: lookup.result.replace("{}", item).replace(
                    "{n}",
                    &rng.range(lookup.range.0, lookup.range.1).to_string(),
                ),
            })
            .collect();
        tools.push(declared(
            &name,
            lookup.does,
            &object_schema(properties),
            &format!("No data for that {key}."),
            cases,
        ));
        // A decoy with the same noun.
        let &(pattern, about) = rng.pick(&[
            (
                "{noun}_history",
                "Past {noun} of one {key} over a date range (not the current value).",
            ),
            ("update_{noun}", "Correct the recorded {noun} of one {key}."),
            (
                "watch_{noun}",
                "Alert me later when the {noun} of one {key} changes.",
            ),
        ]);
        let fill = |text: &str| text.replace("{noun}", lookup.noun).replace("{key}", key);
        tools.push(declared(
            &fill(pattern),
            &fill(about),
            &simple_schema(&[(key, "string")]),
            "ok",
            Vec::new(),
        ));
        groups.push((name, key, items, shared, lookup.ask));
    }
    let taken: Vec<String> = tools.iter().map(|t| t.name.clone()).collect();
    let k = rng.below(3);
    tools.extend(fillers(rng, k, &taken));
    rng.shuffle(&mut tools);

    let total: usize = counts.iter().sum();
    let mut grade = Vec::new();
    let mut solution = Vec::new();
    let mut mistake = Vec::new();
    let mut asks = Vec::new();
    let mut bullets = Vec::new();
    for (name, key, items, shared, ask) in &groups {
        let arguments = |value: &str| {
            let mut args = json!({ *key: value });
            if let Some((arg, _, member, _)) = shared {
                args[*arg] = Value::from(*member);
            }
            args
        };
        let said = shared
            .as_ref()
            .map(|s| format!(", {}", s.3))
            .unwrap_or_default();
        for item in items {
            grade.push(called(name, arguments(item), None));
            solution.push((name.clone(), arguments(item)));
            bullets.push(format!("- {}{said}\n", ask.replace("{}", item)));
        }
        let names: Vec<String> = items.iter().map(|i| i.to_string()).collect();
        mistake.push((name.clone(), arguments(&names.join(", "))));
        asks.push(format!("{}{said}", ask.replace("{}", &and_list(&names))));
    }
    grade.push(GraderSpec::ParallelCalls { min: total as u32 });
    let asked = asks.join(", and ");
    let prompt = match phrasing {
        0 => format!("{}?", capital(&asked)),
        1 => format!(
            "I'm putting together a short status note and I need {asked}. None of these depends on another, \
             so there's no reason to wait between them. Once you have the figures, list them for me."
        ),
        2 => format!("Can you tell me {asked}?"),
        3 => format!("Look up {asked}."),
        4 => format!("Hi! Could you please check {asked} for me? Thanks a lot!"),
        _ => format!("I need these {total} figures:\n{}", bullets.concat()),
    };
    GenTask {
        prompt,
        declared: tools,
        no_builtin: true,
        grade,
        budget: Some(BUDGET),
        solution: Outcome {
            calls: vec![solution],
            answer: Some(format!("Here they are: {asked}.")),
            ..Outcome::default()
        },
        mistake: Outcome {
            calls: vec![mistake],
            answer: Some("Here you go.".into()),
            ..Outcome::default()
        },
        ..GenTask::default()
    }
}

/// A domain's tools: name, description, arguments (name, JSON type).
type Api = &'static [(&'static str, &'static str, Args)];

/// Billing tools.
#[rustfmt::skip]
const BILLING: Api = &[
    ("create_invoice", "Create an invoice for a customer.", &[("customer", "string"), ("amount", "number")]),
    ("send_invoice", "Email an existing invoice to its customer.", &[("invoice_id", "string"), ("email", "string")]),
    ("refund_payment", "Refund a card payment, fully or in part.", &[("payment_id", "string"), ("amount", "number")]),
    ("convert_currency", "Convert an amount of money from one currency to another.", &[("amount", "number"), ("from", "string"), ("to", "string")]),
    ("list_invoices", "List the invoices of a customer.", &[("customer", "string")]),
    ("apply_discount", "Apply a discount code to an invoice.", &[("invoice_id", "string"), ("code", "string")]),
];
/// Warehouse tools.
#[rustfmt::skip]
const WAREHOUSE: Api = &[
    ("check_stock", "Units of a product in stock in a warehouse.", &[("product", "string"), ("warehouse", "string")]),
    ("order_supplies", "Order office or warehouse supplies from the usual vendor.", &[("item", "string"), ("quantity", "integer")]),
    ("count_pallets", "Count the pallets stored in a warehouse.", &[("warehouse", "string")]),
    ("track_parcel", "Where an outgoing parcel is, by its tracking number.", &[("tracking_number", "string")]),
    ("move_stock", "Move a product from one bin to another.", &[("product", "string"), ("from_bin", "string"), ("to_bin", "string")]),
    ("print_label", "Print a shelf label for a product.", &[("product", "string")]),
];
/// Operations tools.
#[rustfmt::skip]
const DEVOPS: Api = &[
    ("restart_service", "Restart one of our backend services.", &[("service", "string")]),
    ("schedule_backup", "Schedule a database backup of a service.", &[("service", "string"), ("time", "string")]),
    ("read_logs", "The last lines of a service's log.", &[("service", "string"), ("lines", "integer")]),
    ("scale_service", "Set how many replicas of a service run.", &[("service", "string"), ("replicas", "integer")]),
    ("rotate_key", "Rotate the API key of a service.", &[("service", "string")]),
    ("check_health", "Health check of a service.", &[("service", "string")]),
];
/// People tools.
#[rustfmt::skip]
const HR: Api = &[
    ("book_leave", "Book days of leave for an employee.", &[("employee", "string"), ("from_date", "string"), ("days", "integer")]),
    ("find_employee", "Find an employee of the company by name.", &[("name", "string")]),
    ("list_team", "List the members of a team.", &[("team", "string")]),
    ("schedule_review", "Schedule a performance review for an employee.", &[("employee", "string"), ("date", "string")]),
    ("update_title", "Change an employee's job title.", &[("employee", "string"), ("title", "string")]),
    ("count_headcount", "Count the employees of a department.", &[("department", "string")]),
];
/// Customer tools.
#[rustfmt::skip]
const CRM: Api = &[
    ("find_customer", "Find a customer record by email.", &[("email", "string")]),
    ("merge_customers", "Merge two duplicate customer records.", &[("first_id", "string"), ("second_id", "string")]),
    ("tag_customer", "Add a tag to a customer record.", &[("customer_id", "string"), ("tag", "string")]),
    ("translate_ticket", "Translate a support ticket into another language.", &[("ticket_id", "string"), ("language", "string")]),
    ("log_call", "Log a phone call with a customer.", &[("customer_id", "string"), ("notes", "string")]),
    ("export_contacts", "Export all customer contacts.", &[("format", "string")]),
];

/// Requests no offered tool can do: the request (placeholders in braces), the domain
/// offered and its tool that shares a word with the request.
#[rustfmt::skip]
const MISFITS: &[(&str, Api, &str)] = &[
    ("convert {n} miles to kilometres", BILLING, "convert_currency"),
    ("book a train ticket to {city} for {day}", HR, "book_leave"),
    ("schedule a dentist appointment for {day} morning", DEVOPS, "schedule_backup"),
    ("check the weather forecast for {city} this weekend", WAREHOUSE, "check_stock"),
    ("send a birthday card to my friend {person}", BILLING, "send_invoice"),
    ("track flight {code} and tell me when it lands", WAREHOUSE, "track_parcel"),
    ("find a good vegetarian restaurant in {city}", HR, "find_employee"),
    ("count the vowels in the word \"{word}\"", WAREHOUSE, "count_pallets"),
    ("order a pizza for {n} people tonight", WAREHOUSE, "order_supplies"),
    ("rotate the photo holiday_{n}.jpg by 90 degrees", DEVOPS, "rotate_key"),
    ("scale my pancake recipe up to {n} servings", DEVOPS, "scale_service"),
    ("merge the spreadsheets q1_{city}.xlsx and q2_{city}.xlsx into one", CRM, "merge_customers"),
    ("create a workout plan for the next {n} weeks", BILLING, "create_invoice"),
    ("tag {person} in the photos from our trip to {city}", CRM, "tag_customer"),
    ("read me a short poem about {city}", DEVOPS, "read_logs"),
    ("list the planets of the solar system, nearest to the sun first", HR, "list_team"),
    ("translate \"good morning, {person}\" into {language}", CRM, "translate_ticket"),
];

/// Builds a `no-tool-fits` task.
fn no_tool_fits(rng: &mut Rng, phrasing: usize) -> GenTask {
    let &(request, api, near) = rng.pick(MISFITS);
    let cities = rng.distinct(words::CITIES, 2);
    let n = rng.range(3, 30);
    let person = *rng.pick(words::PEOPLE);
    let word = *rng.pick(&[
        "banana",
        "strawberry",
        "elephant",
        "umbrella",
        "calendar",
        "harmony",
    ]);
    let day = *rng.pick(&[
        "Monday",
        "Tuesday",
        "Wednesday",
        "Thursday",
        "Friday",
        "Saturday",
    ]);
    let flight = format!(
        "{}{}",
        rng.pick(&["LX", "TP", "KL", "SK", "AY"]),
        rng.range(100, 9999)
    );
    let language = *rng.pick(&["French", "Spanish", "German", "Japanese", "Swahili"]);
    let clause = request
        .replace("{n}", &n.to_string())
        .replace("{city}", cities[0])
        .replace("{person}", person)
        .replace("{word}", word)
        .replace("{day}", day)
        .replace("{code}", &flight)
        .replace("{language}", language);
    // The near miss, and two to five other tools of its domain.
    let mut offered: Vec<_> = api.iter().filter(|t| t.0 != near).collect();
    rng.shuffle(&mut offered);
    offered.truncate(rng.range(2, 5) as usize);
    offered.extend(api.iter().filter(|t| t.0 == near));
    rng.shuffle(&mut offered);
    let tools: Vec<DeclaredToolSpec> = offered
        .iter()
        .map(|(name, about, args)| declared(name, about, &simple_schema(args), "ok", Vec::new()))
        .collect();
    // The near miss called with the request's values.
    let main = [cities[0], person, word, flight.as_str()]
        .into_iter()
        .find(|v| clause.contains(*v));
    let mut wrong = Map::new();
    for (arg, kind) in api
        .iter()
        .find(|t| t.0 == near)
        .map(|t| t.2)
        .unwrap_or_default()
    {
        let value = if *kind == "string" {
            Value::from(main.unwrap_or(clause.as_str()))
        } else {
            Value::from(n)
        };
        wrong.insert(arg.to_string(), value);
    }
    let prompt = match phrasing {
        0 => format!("{}.", capital(&clause)),
        1 => format!("I have something a bit different for you today. I would like you to {clause}. Do whatever you can with what you have."),
        2 => format!("Can you {clause}?"),
        3 => format!("Please {clause}, using the tools you've got."),
        4 => format!("Hey! Hope you're well. Would you mind helping me out with this: {clause}? Thanks!"),
        _ => format!("Task: {clause}. Let me know when it's done."),
    };
    GenTask {
        prompt,
        declared: tools,
        no_builtin: true,
        grade: vec![
            not_called("*"),
            GraderSpec::AnswerMatches {
                regex: r"\S".into(),
            },
        ],
        budget: Some(BUDGET),
        solution: Outcome::answer(
            "None of the tools I have here can do that; they are for other jobs.",
        ),
        mistake: Outcome {
            calls: vec![vec![(near.to_string(), Value::Object(wrong))]],
            answer: Some("Done.".into()),
            ..Outcome::default()
        },
        ..GenTask::default()
    }
}

/// A record's key: name, description, prefix of its values.
type RecordKey = (&'static str, &'static str, &'static str);

/// A record's field: label, whether a code rather than a number.
type RecordField = (&'static str, bool);

/// A record a lookup returns: its noun, its key (name, description, prefix of values)
/// and its fields (label, whether a code rather than a number).
#[rustfmt::skip]
const RECORDS: &[(&str, RecordKey, [RecordField; 4])] = &[
    ("order", ("order_id", "The order's id, like ORD-1234.", "ORD-"), [("tracking code", true), ("invoice number", true), ("total in euros", false), ("item count", false)]),
    ("employee", ("employee_id", "The employee's id, like EMP-1234.", "EMP-"), [("badge code", true), ("desk code", true), ("phone extension", false), ("vacation days left", false)]),
    ("host", ("hostname", "The host's name, like srv-1234.", "srv-"), [("build id", true), ("rack code", true), ("open port", false), ("uptime in days", false)]),
    ("flight", ("flight_number", "The flight's number, like LX1234.", "LX"), [("gate code", true), ("aircraft code", true), ("check-in desk", false), ("baggage belt", false)]),
    ("parcel", ("tracking_number", "The parcel's tracking number, like TRK-1234.", "TRK-"), [("pickup code", true), ("locker code", true), ("weight in grams", false), ("days in transit", false)]),
    ("account", ("account_number", "The account's number, like ACC-1234.", "ACC-"), [("customer code", true), ("branch code", true), ("balance in euros", false), ("open invoices", false)]),
];

/// Builds an `answer-after-result` task.
fn answer_after_result(rng: &mut Rng, phrasing: usize) -> GenTask {
    let picked = rng.distinct(RECORDS, 2);
    let (noun, (key, key_about, prefix), fields) = picked[0];
    let other = picked[1];
    let id = format!("{prefix}{}", rng.range(1000, 9999));
    let verb = *rng.pick(&["get", "lookup", "fetch", "show"]);
    let name = format!("{verb}_{noun}");
    let shown = rng.distinct(&fields, 3);
    // Three digits at most: never the id's four digits, nor inside them as a number.
    let numbers = distinct_numbers(rng, 3, 12, 999);
    let mut codes: Vec<String> = Vec::new();
    while codes.len() < 3 {
        let code = words::code(rng, 6);
        if !codes.contains(&code) {
            codes.push(code);
        }
    }
    let values: Vec<String> = shown
        .iter()
        .enumerate()
        .map(|(i, (_, is_code))| {
            if *is_code {
                codes[i].clone()
            } else {
                numbers[i].to_string()
            }
        })
        .collect();
    let asked = rng.below(3);
    let (field, is_code) = shown[asked];
    let value = values[asked].clone();
    let record: Vec<String> = shown
        .iter()
        .zip(&values)
        .map(|((label, _), v)| format!("{label}: {v}"))
        .collect();
    let result = format!("{} {id}: {}.", capital(noun), record.join("; "));

    let schema = object_schema(vec![(
        key.to_string(),
        json!({"type": "string", "description": key_about}),
    )]);
    let mut tools = vec![declared(
        &name,
        &format!(
            "Look up one {noun} by its {}: returns its details.",
            key.replace('_', " ")
        ),
        &schema,
        &format!("No {noun} with that {}.", key.replace('_', " ")),
        vec![ResultCase {
            when: json!({ key: id }),
            result,
        }],
    )];
    // Decoys: the same noun with another verb, the same verb with another noun.
    let mut decoys = vec![
        (
            format!("update_{noun}"),
            format!("Change one field of {}.", article(noun)),
            "Updated.",
            key,
            key_about,
        ),
        (
            format!("delete_{noun}"),
            format!("Delete {} for good.", article(noun)),
            "Deleted.",
            key,
            key_about,
        ),
        (
            format!("list_{noun}s"),
            format!("List recent {noun}s, newest first (ids only)."),
            "No recent items.",
            key,
            key_about,
        ),
    ];
    rng.shuffle(&mut decoys);
    decoys.truncate(rng.range(1, 3) as usize);
    let (other_noun, (other_key, other_about, _), _) = other;
    let other_about_tool = format!(
        "Look up one {other_noun} by its {}.",
        other_key.replace('_', " ")
    );
    decoys.push((
        format!("{verb}_{other_noun}"),
        other_about_tool,
        "Not found.",
        other_key,
        other_about,
    ));
    for (decoy, about, reply, key, key_about) in &decoys {
        let schema = object_schema(vec![(
            key.to_string(),
            json!({"type": "string", "description": key_about}),
        )]);
        tools.push(declared(decoy, about, &schema, reply, Vec::new()));
    }
    let taken: Vec<String> = tools.iter().map(|t| t.name.clone()).collect();
    let k = rng.below(2);
    tools.extend(fillers(rng, k, &taken));
    rng.shuffle(&mut tools);

    let bare = matches!(phrasing, 3 | 5);
    let prompt = match phrasing {
        0 => format!("{} of {noun} {id}?", capital(field)),
        1 => format!(
            "A colleague is asking about {noun} {id} and needs its {field}. Could you look it up in the system \
             and tell me what it is?"
        ),
        2 => format!("What is the {field} for {noun} {id}?"),
        3 => format!("Reply with only the {field} of {noun} {id}."),
        4 => format!(
            "Hi, sorry to bother you! When you get a chance, could you find the {field} of {noun} {id} for me? \
             Much appreciated."
        ),
        _ => format!("{} {id}: I need the {field}. Just the value, please.", capital(noun)),
    };
    let answer_grade = if bare {
        answer_is(&value)
    } else if is_code {
        answer_has(&value)
    } else {
        answer_number(value.parse().unwrap_or_default())
    };
    let answer = if bare {
        value.clone()
    } else {
        format!("The {field} of {noun} {id} is {value}.")
    };
    let call = vec![(name.clone(), json!({ key: id }))];
    GenTask {
        prompt,
        declared: tools,
        no_builtin: true,
        grade: vec![called(&name, json!({ key: id }), Some(1)), answer_grade],
        budget: Some(BUDGET),
        solution: Outcome {
            calls: vec![call.clone()],
            answer: Some(answer.clone()),
            ..Outcome::default()
        },
        mistake: Outcome {
            calls: vec![call.clone(), call],
            answer: Some(answer),
            ..Outcome::default()
        },
        ..GenTask::default()
    }
}
