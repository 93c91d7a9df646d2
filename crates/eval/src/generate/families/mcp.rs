//! Families of MCP tool use over generated servers: an API of many tools is written as
//! the task's `api.json` and served by `tests/mcp-servers/generated.mjs` under the
//! server name `api`, so rein offers each tool as `api__<tool>`. Here one action among
//! up to two hundred decoys, and the catalogue of generated tools `mcp_chain` shares.

use serde_json::{json, Map, Value};

use super::tools::{article, called, capital, plain};
use crate::generate::words::{self, answer_has, answer_is};
use crate::generate::{Family, GenTask, Outcome, Rng};
use crate::task::Budget;

/// The families of this file.
pub(super) const FAMILIES: &[Family] = &[
    Family {
        name: "mcp-lookup-among-decoys",
        kind: "mcp",
        about: "one action among 50 to 200 generated MCP tools of several domains, described in other words than its name; its result holds a reference code",
        phrasings: 6,
        build: lookup_among_decoys,
    },
];

/// The server's name in the task's `--mcp` flag (written by `write_task`).
const SERVER: &str = "api";

/// The budget of an MCP task: a search for the tool, one or two calls, the answer.
pub(super) const BUDGET: Budget = Budget {
    max_turns: 8,
    max_tokens: 4096,
    timeout_s: 300,
    reply_tokens: 512,
};

/// The name rein offers a server tool by.
pub(super) fn offered(tool: &str) -> String {
    format!("{SERVER}__{tool}")
}

/// What the values of a key argument look like.
#[derive(Clone, Copy)]
pub(super) enum Key {
    /// `PREFIX-12345`.
    Code(&'static str),
    /// An integer in the range.
    Number(i64, i64),
    /// An email address.
    Email,
    /// A first and last name.
    Person,
    /// A service name like `billing-api`.
    Service,
    /// A product.
    Product,
    /// A hostname like `ledger-07`.
    Host,
    /// A username like `amara42`.
    Username,
    /// A company name.
    Company,
    /// A project name.
    Project,
}

/// Last names for people.
const SURNAMES: &[&str] = &[
    "Okafor",
    "Lindqvist",
    "Moreau",
    "Tanaka",
    "Silva",
    "Novak",
    "Haddad",
    "Kowalski",
    "Reyes",
    "Brennan",
];

/// First words of project names.
const PROJECTS: &[&str] = &[
    "Apollo",
    "Harbor",
    "Lighthouse",
    "Meadow",
    "Summit",
    "Orbit",
    "Granite",
];

impl Key {
    /// A value.
    pub(super) fn value(self, rng: &mut Rng) -> Value {
        let (first, last) = (*rng.pick(words::PEOPLE), *rng.pick(SURNAMES));
        let (noun, n) = (*rng.pick(words::NOUNS), rng.range(10, 99));
        let text = match self {
            Key::Code(prefix) => format!("{prefix}-{}", rng.range(10_000, 99_999)),
            Key::Number(low, high) => return Value::from(rng.range(low, high)),
            Key::Email => format!(
                "{}.{}@example.com",
                first.to_lowercase(),
                last.to_lowercase()
            ),
            Key::Person => format!("{first} {last}"),
            Key::Service => format!("{noun}-api"),
            Key::Product => rng.pick(words::PRODUCTS).to_string(),
            Key::Host => format!("{noun}-{n}"),
            Key::Username => format!("{}{n}", first.to_lowercase()),
            Key::Company => format!(
                "{last} {}",
                rng.pick(&["Trading", "Supplies", "and Sons", "Logistics"])
            ),
            Key::Project => format!(
                "{} {}",
                rng.pick(PROJECTS),
                rng.pick(&["revamp", "migration", "launch"])
            ),
        };
        Value::from(text)
    }

    /// Its JSON type.
    pub(super) fn json_type(self) -> &'static str {
        match self {
            Key::Number(..) => "integer",
            _ => "string",
        }
    }
}

/// The nouns tools act on: domain, noun, key argument, its values.
#[rustfmt::skip]
pub(super) const THINGS: &[(&str, &str, &str, Key)] = &[
    ("shipping", "shipment", "tracking_number", Key::Code("SHP")), ("shipping", "pickup", "pickup_id", Key::Code("PU")),
    ("shipping", "label", "label_id", Key::Code("LBL")),
    ("billing", "invoice", "invoice_number", Key::Number(10_000, 99_999)), ("billing", "payment", "payment_id", Key::Code("PAY")),
    ("billing", "subscription", "subscription_id", Key::Code("SUB")),
    ("crm", "customer", "email", Key::Email), ("crm", "lead", "lead_id", Key::Code("LD")), ("crm", "deal", "deal_number", Key::Number(100, 9_999)),
    ("hr", "employee", "employee_name", Key::Person), ("hr", "contract", "contract_id", Key::Code("CT")),
    ("hr", "timesheet", "timesheet_number", Key::Number(1_000, 9_999)),
    ("devops", "service", "service_name", Key::Service), ("devops", "deployment", "deployment_number", Key::Number(100, 9_999)),
    ("devops", "alert", "alert_id", Key::Code("AL")),
    ("docs", "page", "page_id", Key::Code("PG")), ("docs", "space", "space_key", Key::Code("SP")), ("docs", "template", "template_id", Key::Code("TPL")),
    ("inventory", "product", "sku", Key::Code("SKU")), ("inventory", "bin", "bin_code", Key::Code("BIN")),
    ("inventory", "supplier", "supplier_id", Key::Code("SUP")),
    ("support", "ticket", "ticket_number", Key::Number(10_000, 99_999)), ("support", "macro", "macro_id", Key::Code("MAC")),
    ("support", "escalation", "escalation_id", Key::Code("ESC")),
    ("calendar", "event", "event_id", Key::Code("EV")), ("calendar", "booking", "booking_code", Key::Code("BK")),
    ("calendar", "reminder", "reminder_number", Key::Number(100, 9_999)),
    ("security", "user", "user_id", Key::Code("USR")), ("security", "certificate", "certificate_id", Key::Code("CRT")),
    ("security", "role", "role_id", Key::Code("ROL")),
    ("analytics", "report", "report_id", Key::Code("RPT")), ("analytics", "dashboard", "dashboard_number", Key::Number(100, 9_999)),
    ("analytics", "campaign", "campaign_code", Key::Code("CMP")),
    ("fleet", "vehicle", "plate", Key::Code("PL")), ("fleet", "driver", "driver_name", Key::Person), ("fleet", "route", "route_number", Key::Number(10, 999)),
];

/// What tools do to a noun: verb, description (`{noun}`), two ways a prompt asks for
/// it (`{thing}`), whether it only reads.
#[rustfmt::skip]
pub(super) const VERBS: &[(&str, &str, [&str; 2], bool)] = &[
    ("show", "Show the details of a {noun}.", ["look up the details of {thing}", "pull up {thing} and read me what it says"], true),
    ("cancel", "Cancel a {noun}. This cannot be undone.", ["cancel {thing}", "call off {thing}"], false),
    ("archive", "Move a {noun} to the archive; it can be restored later.", ["archive {thing}", "put {thing} away in the archive"], false),
    ("restore", "Bring a {noun} back from the archive.", ["restore {thing} from the archive", "bring {thing} back out of the archive"], false),
    ("delete", "Delete a {noun} permanently.", ["delete {thing} permanently", "remove {thing} for good"], false),
    ("export", "Export a {noun} as a CSV file.", ["export {thing} as CSV", "get me a CSV export of {thing}"], true),
    ("approve", "Approve a pending {noun}.", ["approve {thing}", "sign off on {thing}"], false),
    ("reject", "Reject a pending {noun}.", ["reject {thing}", "turn down {thing}"], false),
    ("lock", "Lock a {noun} so nobody can change it.", ["lock {thing} against changes", "freeze {thing} so no one can edit it"], false),
    ("unlock", "Unlock a locked {noun} so it can be changed again.", ["unlock {thing}", "make {thing} editable again"], false),
    ("duplicate", "Make a copy of a {noun}.", ["duplicate {thing}", "make a copy of {thing}"], false),
    ("flag", "Flag a {noun} for a person to review.", ["flag {thing} for review", "mark {thing} so that someone reviews it"], false),
    ("share", "Share a {noun} with the whole team.", ["share {thing} with the team", "give the whole team access to {thing}"], false),
    ("print", "Send a {noun} to the office printer.", ["print {thing}", "send {thing} to the printer"], false),
    ("validate", "Check a {noun} for errors without changing it.", ["check {thing} for errors", "validate {thing}"], true),
    ("close", "Close an open {noun}.", ["close {thing}", "mark {thing} as closed"], false),
    ("reopen", "Reopen a closed {noun}.", ["reopen {thing}", "open {thing} again now that it was closed"], false),
    ("audit", "Show who changed a {noun}, and when.", ["show me who changed {thing} and when", "get the change history of {thing}"], true),
    ("summarize", "Write a short summary of a {noun}.", ["summarize {thing}", "give me a short summary of {thing}"], true),
    ("notify", "Email the owner of a {noun} about it.", ["email the owner of {thing} about it", "let the owner of {thing} know by email"], false),
];

/// A generated tool before it is written to the API file.
pub(super) struct ApiTool {
    /// Its name on the server (rein offers it as `api__<name>`).
    pub(super) name: String,
    /// What it does.
    pub(super) description: String,
    /// Its arguments: name, schema.
    pub(super) properties: Vec<(String, Value)>,
    /// The arguments a call must give.
    pub(super) required: Vec<String>,
    /// Canned replies: a subset of the arguments, the reply.
    pub(super) cases: Vec<(Value, String)>,
    /// The reply when no case matches.
    pub(super) result: String,
    /// Marked read-only for the server's annotations.
    pub(super) read_only: bool,
}

impl ApiTool {
    /// A tool of one required argument, `key` with `schema`, answering `result`.
    pub(super) fn keyed(
        name: String,
        description: String,
        key: &str,
        schema: Value,
        result: String,
    ) -> Self {
        ApiTool {
            name,
            description,
            properties: vec![(key.to_string(), schema)],
            required: vec![key.to_string()],
            cases: Vec::new(),
            result,
            read_only: false,
        }
    }

    /// Its entry of `api.json`.
    fn to_json(&self) -> Value {
        let cases: Vec<Value> = self
            .cases
            .iter()
            .map(|(when, result)| json!({"when": when, "result": result}))
            .collect();
        json!({
            "name": self.name,
            "description": self.description,
            "parameters": {
                "type": "object",
                "properties": Map::from_iter(self.properties.clone()),
                "required": self.required,
            },
            "cases": cases,
            "result": self.result,
            "read_only": self.read_only,
        })
    }
}

/// The API file of `tools`.
pub(super) fn api_of(tools: &[ApiTool]) -> Value {
    json!({"name": SERVER, "tools": tools.iter().map(ApiTool::to_json).collect::<Vec<_>>()})
}

/// The grader of a code in the answer: alone when `bare`, anywhere otherwise.
pub(super) fn code_grade(bare: bool, code: &str) -> crate::grade::GraderSpec {
    if bare {
        answer_is(code)
    } else {
        answer_has(code)
    }
}

/// A code no other tool's reply holds.
pub(super) fn fresh_code(rng: &mut Rng, used: &mut Vec<String>) -> String {
    loop {
        let code = words::code(rng, 7);
        if !used.contains(&code) {
            used.push(code.clone());
            return code;
        }
    }
}

/// How tool names are built in one API: `verb_noun`, `domain_verb_noun` or `noun_verb`.
fn tool_name(style: usize, domain: &str, verb: &str, noun: &str) -> String {
    match style {
        0 => format!("{verb}_{noun}"),
        1 => format!("{domain}_{verb}_{noun}"),
        _ => format!("{noun}_{verb}"),
    }
}

/// The description of a key argument: `The bin code.`, `The shipment's tracking number.`
pub(super) fn key_about(noun: &str, key: &str) -> String {
    let words = key.replace('_', " ");
    if words.starts_with(noun) {
        format!("The {words}.")
    } else {
        format!("The {noun}'s {words}.")
    }
}

/// Optional arguments some tools take besides their key: name, JSON type, description.
const EXTRAS: &[(&str, &str, &str)] = &[
    ("reason", "string", "Why, for the audit log."),
    ("notify_owner", "boolean", "Email the owner afterwards."),
];

/// The tool `verb` of `thing` with a default reply holding its own code; now and then
/// an optional argument besides the key.
pub(super) fn catalogue_tool(
    rng: &mut Rng,
    style: usize,
    thing: usize,
    verb: usize,
    used: &mut Vec<String>,
) -> ApiTool {
    let (domain, noun, key, kind) = THINGS[thing];
    let (verb, about, _, read_only) = VERBS[verb];
    let schema = json!({"type": kind.json_type(), "description": key_about(noun, key)});
    let code = fresh_code(rng, used);
    let description = about
        .replace("a {noun}", &article(noun))
        .replace("{noun}", noun);
    let result = format!("{} {noun}: done. Reference code {code}.", capital(verb));
    let name = tool_name(style, domain, verb, noun);
    let mut tool = ApiTool {
        read_only,
        ..ApiTool::keyed(name, description, key, schema, result)
    };
    if rng.chance(30) {
        let (extra, kind, about) = *rng.pick(EXTRAS);
        tool.properties.push((
            extra.to_string(),
            json!({"type": kind, "description": about}),
        ));
    }
    tool
}

/// Builds an `mcp-lookup-among-decoys` task.
fn lookup_among_decoys(rng: &mut Rng, phrasing: usize) -> GenTask {
    let style = rng.below(3);
    let thing = rng.below(THINGS.len());
    let verb = rng.below(VERBS.len());
    let (domain, noun, key, kind) = THINGS[thing];
    let value = kind.value(rng);
    let count = rng.range(50, 200) as usize;
    // Near misses: the same noun with other verbs, the same verb with the domain's
    // other nouns.
    let mut pairs: Vec<(usize, usize)> = Vec::new();
    let other_verbs: Vec<usize> = (0..VERBS.len()).filter(|v| *v != verb).collect();
    pairs.extend(
        rng.distinct(&other_verbs, 3)
            .into_iter()
            .map(|v| (thing, v)),
    );
    let siblings: Vec<usize> = (0..THINGS.len())
        .filter(|t| *t != thing && THINGS[*t].0 == domain)
        .collect();
    pairs.extend(siblings.iter().map(|t| (*t, verb)));
    // The rest from this domain and others, until there are enough.
    let mut domains: Vec<&str> = THINGS
        .iter()
        .map(|t| t.0)
        .filter(|d| *d != domain)
        .collect();
    domains.dedup();
    rng.shuffle(&mut domains);
    domains.insert(0, domain);
    let mut rest: Vec<(usize, usize)> = Vec::new();
    for d in domains {
        if rest.len() + pairs.len() + 1 >= count + 40 {
            break;
        }
        for t in (0..THINGS.len()).filter(|t| THINGS[*t].0 == d) {
            rest.extend(
                (0..VERBS.len())
                    .map(|v| (t, v))
                    .filter(|p| *p != (thing, verb) && !pairs.contains(p)),
            );
        }
    }
    rng.shuffle(&mut rest);
    rest.truncate(count.saturating_sub(pairs.len() + 1));
    pairs.extend(rest);

    let mut used = Vec::new();
    let code = fresh_code(rng, &mut used);
    let mut target = catalogue_tool(rng, style, thing, verb, &mut used);
    target.cases.push((
        json!({ key: value }),
        format!(
            "{} {noun} {}: done. Reference code {code}.",
            capital(VERBS[verb].0),
            plain(&value)
        ),
    ));
    target.result = format!("No {noun} with that {}.", key.replace('_', " "));
    let name = target.name.clone();
    let mut tools = vec![target];
    for (t, v) in &pairs {
        tools.push(catalogue_tool(rng, style, *t, *v, &mut used));
    }
    // The typical mistake: a decoy of the same noun.
    let decoy = tools[1].name.clone();
    let decoy_code = tools[1].result.clone();
    rng.shuffle(&mut tools);

    let thing_said = format!("{noun} {}", plain(&value));
    let ask = VERBS[verb].2[rng.below(2)].replace("{thing}", &thing_said);
    let bare = phrasing == 3;
    let prompt = match phrasing {
        0 => format!("{}, then give me the reference code.", capital(&ask)),
        1 => format!(
            "We have some housekeeping to do in the {domain} system. I need you to {ask}. The system answers \
             with a reference code; please pass it on to me so I can log it."
        ),
        2 => format!("Could you {ask}? What reference code do you get back?"),
        3 => format!("{}. Reply with only the reference code it returns.", capital(&ask)),
        4 => format!(
            "Hi! Sorry to bother you, but would you please {ask}? I'd be grateful if you told me the reference \
             code afterwards. Thanks!"
        ),
        _ => format!("Ticket from the ops queue: \"{ask}\". Handle it with the tools you have and report back the reference code."),
    };
    let arguments = json!({ key: value });
    GenTask {
        prompt,
        no_builtin: true,
        mcp_api: Some(api_of(&tools)),
        grade: vec![
            called(&offered(&name), arguments.clone(), None),
            code_grade(bare, &code),
        ],
        budget: Some(BUDGET),
        solution: Outcome {
            calls: vec![vec![(offered(&name), arguments.clone())]],
            answer: Some(if bare {
                code.clone()
            } else {
                format!("Done. The reference code is {code}.")
            }),
            ..Outcome::default()
        },
        mistake: Outcome {
            calls: vec![vec![(offered(&decoy), arguments)]],
            answer: Some(format!("Done: {decoy_code}")),
            ..Outcome::default()
        },
        ..GenTask::default()
    }
}
