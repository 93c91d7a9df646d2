//! Families of tool choice over generated APIs: the task declares its own tools, with
//! canned results, and offers no built-in ones (`typed-call` here; the helpers of
//! every declared-tools family too, used by `tools_lookup`). Names, schemas and values
//! are generated; near-miss decoys share a noun or a verb with the right tool.

use serde_json::{json, Map, Value};

use crate::generate::words;
use crate::generate::{Family, GenTask, Outcome, Rng};
use crate::grade::GraderSpec;
use crate::task::{Budget, DeclaredToolSpec, ResultCase};

/// The families of this file.
pub(super) const FAMILIES: &[Family] = &[
    Family {
        name: "typed-call",
        kind: "tools",
        about: "one call with an integer, a boolean, an enum member, a nested object and maybe an array, all said in words, beside decoys with the same noun or the same verb",
        phrasings: 6,
        build: typed_call,
    },
];

/// The budget of a declared-tools task: a few turns are plenty.
pub(super) const BUDGET: Budget = Budget {
    max_turns: 6,
    max_tokens: 3000,
    timeout_s: 180,
    reply_tokens: 512,
};

/// A declared tool whose schema is written as JSON text.
pub(super) fn declared(
    name: &str,
    description: &str,
    schema: &Value,
    result: &str,
    cases: Vec<ResultCase>,
) -> DeclaredToolSpec {
    DeclaredToolSpec {
        name: name.to_string(),
        description: description.to_string(),
        parameters: Value::String(serde_json::to_string_pretty(schema).unwrap_or_default()),
        result: result.to_string(),
        cases,
    }
}

/// An object schema of `properties`, every one required.
pub(super) fn object_schema(properties: Vec<(String, Value)>) -> Value {
    let required: Vec<Value> = properties
        .iter()
        .map(|(k, _)| Value::from(k.as_str()))
        .collect();
    json!({"type": "object", "properties": Map::from_iter(properties), "required": required})
}

/// A schema of simple arguments (name, JSON type), all required.
pub(super) fn simple_schema(args: &[(&str, &str)]) -> Value {
    object_schema(
        args.iter()
            .map(|(k, t)| (k.to_string(), json!({ "type": t })))
            .collect(),
    )
}

/// `name` ran with arguments containing `arguments` (at most `max` calls of it in all).
pub(super) fn called(name: &str, arguments: Value, max: Option<u32>) -> GraderSpec {
    GraderSpec::ToolCalled {
        name: name.to_string(),
        arguments: Some(arguments),
        min: 1,
        max,
    }
}

/// `name` never ran.
pub(super) fn not_called(name: &str) -> GraderSpec {
    GraderSpec::ToolNotCalled {
        name: name.to_string(),
    }
}

/// The text with its first letter in capitals.
pub(super) fn capital(text: &str) -> String {
    let mut chars = text.chars();
    chars
        .next()
        .map(|c| c.to_uppercase().chain(chars).collect())
        .unwrap_or_default()
}

/// `a, b and c`.
pub(super) fn and_list<S: AsRef<str>>(items: &[S]) -> String {
    let items: Vec<&str> = items.iter().map(AsRef::as_ref).collect();
    match items.as_slice() {
        [] => String::new(),
        [one] => one.to_string(),
        [rest @ .., last] => format!("{} and {last}", rest.join(", ")),
    }
}

/// The noun with `a` or `an`.
pub(super) fn article(noun: &str) -> String {
    if noun.starts_with(['a', 'e', 'i', 'o', 'u']) {
        format!("an {noun}")
    } else {
        format!("a {noun}")
    }
}

/// `n` in English words below a hundred, in digits above.
pub(super) fn in_words(n: i64) -> String {
    const ONES: [&str; 20] = [
        "zero",
        "one",
        "two",
        "three",
        "four",
        "five",
        "six",
        "seven",
        "eight",
        "nine",
        "ten",
        "eleven",
        "twelve",
        "thirteen",
        "fourteen",
        "fifteen",
        "sixteen",
        "seventeen",
        "eighteen",
        "nineteen",
    ];
    const TENS: [&str; 10] = [
        "", "", "twenty", "thirty", "forty", "fifty", "sixty", "seventy", "eighty", "ninety",
    ];
    match n {
        0..=19 => ONES[n as usize].to_string(),
        20..=99 if n % 10 == 0 => TENS[(n / 10) as usize].to_string(),
        20..=99 => format!("{}-{}", TENS[(n / 10) as usize], ONES[(n % 10) as usize]),
        _ => n.to_string(),
    }
}

/// A JSON value as the prompt says it: strings without quotes.
pub(super) fn plain(value: &Value) -> String {
    match value {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// A field of a nested object argument.
#[derive(Clone, Copy)]
enum Field {
    Name,
    Email,
    Phone,
    City,
    Hour,
}

impl Field {
    /// Its argument name.
    fn key(self) -> &'static str {
        match self {
            Field::Name => "name",
            Field::Email => "email",
            Field::Phone => "phone",
            Field::City => "city",
            Field::Hour => "hour",
        }
    }

    /// Its schema.
    fn schema(self) -> Value {
        match self {
            Field::Hour => json!({"type": "integer", "description": "Hour of the day, 0 to 23."}),
            other => json!({"type": "string", "description": format!("The {}.", other.key())}),
        }
    }

    /// A value of it, for `person`.
    fn value(self, rng: &mut Rng, person: &str) -> Value {
        match self {
            Field::Name => Value::from(person),
            Field::Email => Value::from(format!(
                "{}.{}@example.com",
                person.to_lowercase(),
                words::code(rng, 3).to_lowercase()
            )),
            Field::Phone => Value::from(format!("555-{:04}", rng.range(100, 9999))),
            Field::City => Value::from(rng.pick(words::CITIES).to_string()),
            Field::Hour => Value::from(rng.range(8, 20)),
        }
    }
}

/// An action a typed call asks for and the arguments its tool may take.
struct Action {
    /// Verbs of the tool's name.
    verbs: &'static [&'static str],
    /// Nouns of the tool's name.
    nouns: &'static [&'static str],
    /// What the tool does (`{noun}` replaced).
    does: &'static str,
    /// Nouns of decoys with the same verb.
    others: &'static [&'static str],
    /// The string argument: name, description, values, how the prompt says one (`{}`).
    key: (
        &'static str,
        &'static str,
        &'static [&'static str],
        &'static str,
    ),
    /// Integer arguments: name, unit, units, lowest, highest.
    ints: &'static [(&'static str, &'static str, &'static str, i64, i64)],
    /// Boolean arguments: name, description, said when true, said when false.
    flags: &'static [(&'static str, &'static str, &'static str, &'static str)],
    /// Enum arguments: name, members, how the prompt says one (`{}`).
    choices: &'static [(&'static str, &'static [&'static str], &'static str)],
    /// Object arguments: name, description, two fields.
    objects: &'static [(&'static str, &'static str, [Field; 2])],
    /// Arrays of strings: name, description, values.
    lists: &'static [(&'static str, &'static str, &'static [&'static str])],
}

/// The actions of typed calls.
#[rustfmt::skip]
const ACTIONS: &[Action] = &[
    Action {
        verbs: &["book", "reserve"], nouns: &["room", "stay"], others: &["table", "flight", "taxi"],
        does: "Reserve a hotel {noun} for the given nights and guests; the booking is placed at once.",
        key: ("city", "City of the hotel.", words::CITIES, "in {}"),
        ints: &[("nights", "night", "nights", 1, 14), ("guests", "guest", "guests", 1, 6)],
        flags: &[("breakfast", "Include breakfast.", "with breakfast", "without breakfast"),
            ("late_checkout", "Check out at 2 pm instead of 11 am.", "with late checkout", "with the normal checkout"),
            ("parking", "Reserve a parking space.", "with a parking space", "without parking")],
        choices: &[("room_type", &["single", "double", "twin", "family"], "a {} room"),
            ("view", &["sea", "garden", "city", "courtyard"], "facing the {} side")],
        objects: &[("guest", "The main guest.", [Field::Name, Field::Email]),
            ("contact", "Who the hotel calls about the booking.", [Field::Name, Field::Phone])],
        lists: &[("requests", "Special requests, most important first.", &["quiet room", "extra pillows", "baby cot", "high floor", "airport shuttle"])],
    },
    Action {
        verbs: &["ship", "send"], nouns: &["parcel", "package"], others: &["letter", "pallet", "invoice"],
        does: "Send a {noun} by courier; the shipment is booked at once.",
        key: ("destination", "City it goes to.", words::CITIES, "to {}"),
        ints: &[("boxes", "box", "boxes", 1, 9), ("weight_kg", "kilogram", "kilograms", 1, 40)],
        flags: &[("express", "Next-day delivery.", "by express", "by standard delivery"),
            ("signature", "The recipient must sign.", "with a signature on delivery", "with no signature needed"),
            ("fragile", "Handle as fragile.", "marked fragile", "not marked fragile")],
        choices: &[("service", &["economy", "standard", "priority"], "on the {} service"),
            ("packaging", &["box", "tube", "crate", "pouch"], "packed in a {}")],
        objects: &[("recipient", "Who receives it.", [Field::Name, Field::Phone]),
            ("pickup", "Where and when the courier collects it.", [Field::City, Field::Hour])],
        lists: &[("labels", "Handling labels to print, in order.", &["keep dry", "this side up", "heavy", "perishable"])],
    },
    Action {
        verbs: &["open", "file"], nouns: &["ticket", "incident"], others: &["invoice", "order", "request"],
        does: "Create a support {noun} about a product; it goes to the support team at once.",
        key: ("product", "The product it is about.", words::PRODUCTS, "about the {}"),
        ints: &[("affected_users", "user", "users", 2, 90), ("hours_down", "hour", "hours", 1, 12)],
        flags: &[("notify_customer", "Email the customer about it.", "with the customer notified", "without notifying the customer"),
            ("public", "Show it on the status page.", "shown on the status page", "kept off the status page")],
        choices: &[("priority", &["low", "normal", "high", "urgent"], "{} priority"),
            ("category", &["hardware", "software", "billing", "delivery"], "in the {} category")],
        objects: &[("reporter", "Who reported it.", [Field::Name, Field::Email]),
            ("callback", "Which number to call back, and when.", [Field::Phone, Field::Hour])],
        lists: &[("tags", "Tags, in order.", words::NOUNS)],
    },
    Action {
        verbs: &["rent", "hire"], nouns: &["car", "van"], others: &["bike", "boat", "scooter"],
        does: "Rent a {noun} from a rental station; the rental is booked at once.",
        key: ("pickup_city", "City of the rental station.", words::CITIES, "from the {} station"),
        ints: &[("days", "day", "days", 1, 21), ("drivers", "driver", "drivers", 1, 3)],
        flags: &[("full_insurance", "Full insurance instead of the basic cover.", "with full insurance", "with basic insurance only"),
            ("child_seat", "Add a child seat.", "with a child seat", "without a child seat")],
        choices: &[("transmission", &["manual", "automatic"], "{} transmission"),
            ("fuel", &["petrol", "diesel", "hybrid"], "a {} model")],
        objects: &[("driver", "The main driver.", [Field::Name, Field::Phone]),
            ("return_to", "Where and when it is brought back.", [Field::City, Field::Hour])],
        lists: &[("extras", "Extras, in order.", &["gps", "roof box", "snow chains", "wifi hotspot"])],
    },
    Action {
        verbs: &["book", "reserve"], nouns: &["table"], others: &["room", "taxi", "court"],
        does: "Reserve a {noun} at a restaurant; the reservation is made at once.",
        key: ("restaurant", "The restaurant's name.", &["Olive Tree", "Blue Anchor", "Golden Fork", "Green Lantern", "Old Mill", "Red Door", "Salt House"], "at the {}"),
        ints: &[("party_size", "person", "people", 2, 12), ("high_chairs", "high chair", "high chairs", 1, 3)],
        flags: &[("terrace", "Seat outside on the terrace.", "outside on the terrace", "inside, not on the terrace"),
            ("birthday", "Bring a cake with candles.", "with a birthday cake", "with no birthday cake")],
        choices: &[("menu", &["vegan", "vegetarian", "standard", "tasting"], "the {} menu"),
            ("seating", &["window", "bar", "booth", "corner"], "a {} seat")],
        objects: &[("contact", "Who made the booking.", [Field::Name, Field::Phone]),
            ("arrival", "When they arrive and whom to ask for.", [Field::Hour, Field::Name])],
        lists: &[("allergies", "Allergies to tell the kitchen.", &["nuts", "gluten", "shellfish", "dairy", "eggs"])],
    },
    Action {
        verbs: &["print", "order"], nouns: &["poster", "flyer", "booklet"], others: &["label", "banner", "photo"],
        does: "Print copies of a {noun} at the print shop; the job is placed at once.",
        key: ("file", "The file to print.", &["launch.pdf", "summer_menu.pdf", "open_day.pdf", "price_list.pdf", "team_photo.pdf", "concert.pdf"], "from {}"),
        ints: &[("copies", "copy", "copies", 5, 95), ("pages", "page", "pages", 2, 24)],
        flags: &[("double_sided", "Print on both sides.", "double-sided", "single-sided"),
            ("color", "Colour instead of black and white.", "in colour", "in black and white")],
        choices: &[("paper", &["matte", "glossy", "recycled"], "on {} paper"),
            ("size", &["A3", "A4", "A5"], "in {} size")],
        objects: &[("delivery", "Where the prints go.", [Field::Name, Field::City]),
            ("proof", "Who approves a proof, and by what hour.", [Field::Email, Field::Hour])],
        lists: &[("finishing", "Finishing steps, in order.", &["stapled", "folded", "laminated", "trimmed"])],
    },
];

/// A tool's arguments: name, JSON type.
pub(super) type Args = &'static [(&'static str, &'static str)];

/// Tools of no particular task: name, description, arguments (name, JSON type).
#[rustfmt::skip]
const FILLERS: &[(&str, &str, Args)] = &[
    ("get_weather", "Current weather in a city.", &[("city", "string")]),
    ("convert_currency", "Convert an amount between currencies.", &[("amount", "number"), ("from", "string"), ("to", "string")]),
    ("send_email", "Send an email.", &[("to", "string"), ("subject", "string"), ("body", "string")]),
    ("get_time", "The current time in a time zone.", &[("timezone", "string")]),
    ("search_web", "Search the web.", &[("query", "string")]),
    ("create_note", "Save a note.", &[("title", "string"), ("text", "string")]),
];

/// Up to `k` filler tools whose names are not in `taken`.
pub(super) fn fillers(rng: &mut Rng, k: usize, taken: &[String]) -> Vec<DeclaredToolSpec> {
    let mut pool: Vec<_> = FILLERS
        .iter()
        .filter(|f| !taken.iter().any(|t| t == f.0))
        .collect();
    rng.shuffle(&mut pool);
    pool.into_iter()
        .take(k)
        .map(|(name, about, args)| declared(name, about, &simple_schema(args), "ok", Vec::new()))
        .collect()
}

/// Builds a `typed-call` task.
fn typed_call(rng: &mut Rng, phrasing: usize) -> GenTask {
    let action = rng.pick(ACTIONS);
    let (verb, noun) = (*rng.pick(action.verbs), *rng.pick(action.nouns));
    let name = format!("{verb}_{noun}");
    let (key_name, key_about, key_values, key_say) = action.key;
    let key_value = *rng.pick(key_values);
    let &(int_name, unit, units, low, high) = rng.pick(action.ints);
    let n = rng.range(low, high);
    let &(flag_name, flag_about, yes, no) = rng.pick(action.flags);
    let flag = rng.chance(50);
    let &(choice_name, members, choice_say) = rng.pick(action.choices);
    let member = *rng.pick(members);
    let &(object_name, object_about, fields) = rng.pick(action.objects);
    let person = *rng.pick(words::PEOPLE);
    let values: Vec<Value> = fields.iter().map(|f| f.value(rng, person)).collect();
    let list = if rng.chance(50) {
        let &(list_name, list_about, pool) = rng.pick(action.lists);
        let k = rng.range(2, 3) as usize;
        Some((list_name, list_about, rng.distinct(pool, k)))
    } else {
        None
    };

    let inner: Map<String, Value> = fields
        .iter()
        .zip(&values)
        .map(|(f, v)| (f.key().to_string(), v.clone()))
        .collect();
    let mut properties = vec![
        (
            key_name.to_string(),
            json!({"type": "string", "description": key_about}),
        ),
        (
            int_name.to_string(),
            json!({"type": "integer", "description": format!("Number of {units}.")}),
        ),
        (
            flag_name.to_string(),
            json!({"type": "boolean", "description": flag_about}),
        ),
        (
            choice_name.to_string(),
            json!({"type": "string", "enum": members}),
        ),
        (object_name.to_string(), {
            let mut schema = object_schema(
                fields
                    .iter()
                    .map(|f| (f.key().to_string(), f.schema()))
                    .collect(),
            );
            schema["description"] = Value::from(object_about);
            schema
        }),
    ];
    let mut args = json!({
        key_name: key_value, int_name: n, flag_name: flag, choice_name: member, object_name: Value::Object(inner),
    });
    if let Some((list_name, list_about, items)) = &list {
        properties.push((
            list_name.to_string(),
            json!({"type": "array", "items": {"type": "string"}, "description": list_about}),
        ));
        args[*list_name] = json!(items);
    }
    rng.shuffle(&mut properties);
    let schema = object_schema(properties);

    // The prompt's words for each value.
    let count = if matches!(phrasing, 0 | 3) {
        n.to_string()
    } else {
        in_words(n)
    };
    let int_say = format!("{count} {}", if n == 1 { unit } else { units });
    let key_say = key_say.replace("{}", key_value);
    let flag_say = if flag { yes } else { no };
    let choice_say = choice_say.replace("{}", member);
    let label = object_name.replace('_', " ");
    let pairs: Vec<String> = fields
        .iter()
        .zip(&values)
        .map(|(f, v)| format!("{} {}", f.key(), plain(v)))
        .collect();
    let object_say = format!("{label}: {}", pairs.join(", "));
    let list_say = list.as_ref().map(|(list_name, _, items)| {
        format!("{}: {}", list_name.replace('_', " "), and_list(items))
    });
    let list_tail = list_say
        .as_ref()
        .map(|l| format!(" {}.", capital(l)))
        .unwrap_or_default();
    let a_noun = article(noun);
    let prompt = match phrasing {
        0 => format!(
            "{} {a_noun} {key_say}: {int_say}, {choice_say}, {flag_say}; {object_say}{}.",
            capital(verb),
            list_say.as_ref().map(|l| format!("; {l}")).unwrap_or_default()
        ),
        1 => format!(
            "I'd like you to {verb} {a_noun} {key_say}. It is for {int_say}, and it should be {choice_say}, \
             {flag_say}. For the {label}, use {}.{list_tail} Please place it with the tool meant for that.",
            pairs.join(" and ")
        ),
        2 => format!(
            "Could you {verb} {a_noun} {key_say} — {int_say}, {choice_say}, {flag_say}? The {label} is {}.{list_tail}",
            pairs.join(", ")
        ),
        3 => format!(
            "Use the tool to {verb} {a_noun}. Details:\n- {key_say}\n- {int_say}\n- {choice_say}\n- {flag_say}\n- {object_say}\n{}",
            list_say.as_ref().map(|l| format!("- {l}\n")).unwrap_or_default()
        ),
        4 => format!(
            "Hello! If it's no trouble, please {verb} {a_noun} for me {key_say}, {flag_say}, {choice_say}, \
             for {int_say}. {}.{list_tail} Thank you so much!",
            capital(&object_say)
        ),
        _ => format!(
            "{}. Now {verb} {a_noun} {key_say} with these: {int_say}; {choice_say}; {flag_say}.{list_tail}",
            capital(&object_say)
        ),
    };

    // The tools: the right one, a look-alike with the same schema, maybe one by code,
    // one with the same verb and another noun, and fillers.
    let code = words::code(rng, 6);
    let target = declared(
        &name,
        &action.does.replace("{noun}", noun),
        &schema,
        "Placed.",
        vec![ResultCase {
            when: args.clone(),
            result: format!("Confirmed: {noun} placed, reference {code}."),
        }],
    );
    let &(look_verb, look_does, look_result) = rng.pick(&[
        (
            "quote",
            "Get a price for a {noun} with these details; nothing is placed.",
            "Price: 240.00 EUR. Nothing was placed.",
        ),
        (
            "check",
            "Check that a {noun} with these details is possible; nothing is placed.",
            "Possible. Nothing was placed.",
        ),
        (
            "draft",
            "Save a {noun} with these details as a draft; nothing is placed.",
            "Draft saved. Nothing was placed.",
        ),
    ]);
    let look_alike = format!("{look_verb}_{noun}");
    let mut tools = vec![
        target,
        declared(
            &look_alike,
            &look_does.replace("a {noun}", &article(noun)),
            &schema,
            look_result,
            Vec::new(),
        ),
    ];
    if rng.chance(60) {
        let &(by_verb, by_does) = rng.pick(&[
            ("cancel", "Cancel a placed {noun} by its confirmation code."),
            (
                "change",
                "Change a placed {noun}; needs its confirmation code.",
            ),
        ]);
        let schema = simple_schema(&[("confirmation", "string")]);
        tools.push(declared(
            &format!("{by_verb}_{noun}"),
            &by_does.replace("{noun}", noun),
            &schema,
            "Unknown confirmation code.",
            Vec::new(),
        ));
    }
    let other = *rng.pick(action.others);
    let schema = simple_schema(&[(key_name, "string"), ("details", "string")]);
    tools.push(declared(
        &format!("{verb}_{other}"),
        &format!("{} {}.", capital(verb), article(other)),
        &schema,
        "Done.",
        Vec::new(),
    ));
    let taken: Vec<String> = tools.iter().map(|t| t.name.clone()).collect();
    let k = rng.below(4);
    tools.extend(fillers(rng, k, &taken));
    rng.shuffle(&mut tools);

    let mut grade = vec![called(&name, args.clone(), None)];
    grade.extend(
        tools
            .iter()
            .filter(|t| t.name != name)
            .map(|t| not_called(&t.name)),
    );
    let mistake = if rng.chance(50) {
        let mut wrong = args.clone();
        wrong[int_name] = Value::from(n.to_string());
        (name.clone(), wrong)
    } else {
        (look_alike, args.clone())
    };
    GenTask {
        prompt,
        declared: tools,
        no_builtin: true,
        grade,
        budget: Some(BUDGET),
        solution: Outcome {
            calls: vec![vec![(name, args)]],
            answer: Some(format!("Done: the {noun} is placed, reference {code}.")),
            ..Outcome::default()
        },
        mistake: Outcome {
            calls: vec![vec![mistake]],
            answer: Some("Done.".into()),
            ..Outcome::default()
        },
        ..GenTask::default()
    }
}
