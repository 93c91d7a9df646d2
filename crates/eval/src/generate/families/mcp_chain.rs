//! The MCP family of two steps: a tool finds an id from a name, a second tool acts on
//! that id and returns a confirmation code, among 30 to 80 decoys of the catalogue in
//! `mcp` (served by `tests/mcp-servers/generated.mjs` as `api__<tool>`).

use serde_json::{json, Value};

use super::mcp::{
    api_of, catalogue_tool, code_grade, fresh_code, key_about, offered, ApiTool, Key, BUDGET,
    THINGS, VERBS,
};
use super::tools::{called, capital, plain};
use crate::generate::{Family, GenTask, Outcome, Rng};

/// The families of this file.
pub(super) const FAMILIES: &[Family] = &[
    Family {
        name: "mcp-chain",
        kind: "mcp",
        about: "two MCP calls among 30 to 80 decoys: find an id from a name, then act on that id and report the confirmation code",
        phrasings: 6,
        build: chain,
    },
];

/// A two-step job: the noun the prompt names, its key (name, values), the id the
/// first tool finds (name, prefix); the second tool's verbs and object, what it does,
/// how the prompt asks for it (`{who}`, `{n}`), its integer argument (name, range)
/// if any, what it replies, and near misses that take the same id.
struct Chain {
    noun: &'static str,
    key: (&'static str, Key),
    id: (&'static str, &'static str),
    verbs: &'static [&'static str],
    object: &'static str,
    does: &'static str,
    ask: &'static str,
    count: Option<(&'static str, i64, i64)>,
    done: &'static str,
    near: &'static [(&'static str, &'static str)],
}

/// The two-step jobs.
#[rustfmt::skip]
const CHAINS: &[Chain] = &[
    Chain { noun: "customer", key: ("email", Key::Email), id: ("customer_id", "CUS"), verbs: &["refund", "reimburse"], object: "last_order",
        does: "Refund the most recent order of a customer, by customer id.", ask: "refund the most recent order of the customer whose email is {who}",
        count: None, done: "Refund issued",
        near: &[("cancel_last_order", "Cancel the most recent order of a customer, by customer id."), ("list_orders", "List the orders of a customer, by customer id.")] },
    Chain { noun: "employee", key: ("full_name", Key::Person), id: ("employee_id", "EMP"), verbs: &["approve", "grant"], object: "leave",
        does: "Approve days of leave for an employee, by employee id.", ask: "approve {n} days of leave for {who}",
        count: Some(("days", 2, 15)), done: "Leave approved",
        near: &[("reject_leave", "Reject a leave request, by employee id."), ("show_leave_balance", "Days of leave an employee has left, by employee id.")] },
    Chain { noun: "product", key: ("product_name", Key::Product), id: ("sku", "SKU"), verbs: &["reorder", "restock"], object: "product",
        does: "Order more units of a product from its supplier, by SKU.", ask: "reorder {n} units of the {who}",
        count: Some(("quantity", 5, 200)), done: "Purchase order sent",
        near: &[("discontinue_product", "Stop selling a product, by SKU."), ("show_stock", "Units in stock of a product, by SKU.")] },
    Chain { noun: "device", key: ("hostname", Key::Host), id: ("device_id", "DEV"), verbs: &["reboot", "restart"], object: "device",
        does: "Reboot a device, by device id.", ask: "reboot the machine with the hostname {who}",
        count: None, done: "Reboot scheduled",
        near: &[("wipe_device", "Erase a device back to factory settings, by device id."), ("ping_device", "Check that a device answers, by device id.")] },
    Chain { noun: "account", key: ("username", Key::Username), id: ("account_id", "ACC"), verbs: &["reset", "expire"], object: "password",
        does: "Reset the password of an account and email a reset link, by account id.", ask: "reset the password of the user {who}",
        count: None, done: "Reset link sent",
        near: &[("lock_account", "Lock an account, by account id."), ("delete_account", "Delete an account for good, by account id.")] },
    Chain { noun: "vendor", key: ("company_name", Key::Company), id: ("vendor_id", "VEN"), verbs: &["pay", "settle"], object: "vendor_balance",
        does: "Pay what we owe a vendor, by vendor id.", ask: "pay what we owe {who}",
        count: None, done: "Payment sent",
        near: &[("block_vendor", "Block a vendor from new orders, by vendor id."), ("show_vendor_balance", "What we owe a vendor, by vendor id.")] },
    Chain { noun: "project", key: ("project_name", Key::Project), id: ("project_id", "PRJ"), verbs: &["archive", "close"], object: "project",
        does: "Archive a finished project, by project id.", ask: "archive the project called \"{who}\"",
        count: None, done: "Project archived",
        near: &[("delete_project", "Delete a project for good, by project id."), ("duplicate_project", "Copy a project, by project id.")] },
];

/// The first step's tool of `chain`: finds the id from the key.
fn finder(rng: &mut Rng, chain: &Chain) -> ApiTool {
    let (key, kind) = chain.key;
    let verb = *rng.pick(&["find", "lookup", "search", "resolve"]);
    let name = if rng.chance(50) {
        format!("{verb}_{}", chain.noun)
    } else {
        format!("{verb}_{}_by_{key}", chain.noun)
    };
    let spoken = key.replace('_', " ");
    let description = format!(
        "Find a {} by {spoken} and return its {}.",
        chain.noun,
        chain.id.0.replace('_', " ")
    );
    let schema = json!({"type": kind.json_type(), "description": key_about(chain.noun, key)});
    let result = format!("No {} found with that {spoken}.", chain.noun);
    ApiTool {
        read_only: true,
        ..ApiTool::keyed(name, description, key, schema, result)
    }
}

/// Builds an `mcp-chain` task.
fn chain(rng: &mut Rng, phrasing: usize) -> GenTask {
    let picked = rng.distinct(&(0..CHAINS.len()).collect::<Vec<_>>(), 2);
    let (chain, other) = (&CHAINS[picked[0]], &CHAINS[picked[1]]);
    let (key, kind) = chain.key;
    let (id_name, prefix) = chain.id;
    let who = kind.value(rng);
    let id = format!("{prefix}-{}", rng.range(10_000, 99_999));
    let n = chain
        .count
        .map(|(arg, low, high)| (arg, rng.range(low, high)));
    let mut used = Vec::new();
    let confirmation = fresh_code(rng, &mut used);

    let mut find = finder(rng, chain);
    find.cases.push((
        json!({ key: who }),
        format!(
            "Found {} {}. {id_name}: {id}. Status: active.",
            chain.noun,
            plain(&who)
        ),
    ));
    let act_name = format!("{}_{}", rng.pick(chain.verbs), chain.object);
    let id_schema = json!({"type": "string", "description": format!("The {} ({prefix}-…).", id_name.replace('_', " "))});
    let mut properties = vec![(id_name.to_string(), id_schema.clone())];
    let mut want = json!({ id_name: id });
    if let Some((arg, value)) = n {
        properties.push((
            arg.to_string(),
            json!({"type": "integer", "description": format!("How many {arg}.")}),
        ));
        want[arg] = Value::from(value);
    }
    let required: Vec<String> = properties.iter().map(|(k, _)| k.clone()).collect();
    let act = ApiTool {
        name: act_name.clone(),
        description: chain.does.to_string(),
        properties,
        required,
        cases: vec![(
            want.clone(),
            format!("{}. Confirmation code {confirmation}.", chain.done),
        )],
        result: format!(
            "Error: no {} with that {}.",
            chain.noun,
            id_name.replace('_', " ")
        ),
        read_only: false,
    };
    let find_name = find.name.clone();
    let mut tools = vec![find, act];
    for (near, about) in chain.near {
        let code = fresh_code(rng, &mut used);
        let result = format!("Done. Reference {code}.");
        let mut tool = ApiTool::keyed(
            near.to_string(),
            about.to_string(),
            id_name,
            id_schema.clone(),
            result,
        );
        tool.read_only = ["show", "list", "ping"].iter().any(|v| near.starts_with(v));
        tools.push(tool);
    }
    tools.push(finder(rng, other));
    // Decoys from the catalogue, none named like the chain's tools.
    let style = rng.below(3);
    let count = rng.range(30, 80) as usize;
    let mut pairs: Vec<(usize, usize)> = (0..THINGS.len())
        .flat_map(|t| (0..VERBS.len()).map(move |v| (t, v)))
        .collect();
    rng.shuffle(&mut pairs);
    for (t, v) in pairs {
        if tools.len() >= count + 2 {
            break;
        }
        let tool = catalogue_tool(rng, style, t, v, &mut used);
        if tools.iter().all(|o| o.name != tool.name) {
            tools.push(tool);
        }
    }
    rng.shuffle(&mut tools);

    let mut ask = chain.ask.replace("{who}", &plain(&who));
    if let Some((_, value)) = n {
        ask = ask.replace("{n}", &value.to_string());
    }
    let bare = phrasing == 3;
    let prompt = match phrasing {
        0 => format!("{}, and tell me the confirmation code.", capital(&ask)),
        1 => format!(
            "Here's what I need today: {ask}. When it's done, please pass on the confirmation code the system \
             gives you, because I have to note it in our log."
        ),
        2 => format!("Could you {ask}? What confirmation code comes back?"),
        3 => format!("{}. Reply with only the confirmation code.", capital(&ask)),
        4 => format!(
            "Hi there! Sorry for the trouble, but would you please {ask}? Let me know the confirmation code once \
             it's through. Thanks!"
        ),
        _ => format!("Next on my list, and it can't wait: {ask}. Report the confirmation code when you're done."),
    };
    let mut by_name = want.clone();
    by_name[id_name] = who.clone();
    let find_args = json!({ key: who });
    GenTask {
        prompt,
        no_builtin: true,
        mcp_api: Some(api_of(&tools)),
        grade: vec![
            called(&offered(&find_name), find_args.clone(), None),
            called(&offered(&act_name), want.clone(), None),
            code_grade(bare, &confirmation),
        ],
        budget: Some(BUDGET),
        solution: Outcome {
            calls: vec![
                vec![(offered(&find_name), find_args)],
                vec![(offered(&act_name), want)],
            ],
            answer: Some(if bare {
                confirmation.clone()
            } else {
                format!("Done. Confirmation code {confirmation}.")
            }),
            ..Outcome::default()
        },
        mistake: Outcome {
            calls: vec![vec![(offered(&act_name), by_name)]],
            answer: Some(format!(
                "I tried, but got: Error: no {} with that {}.",
                chain.noun,
                id_name.replace('_', " ")
            )),
            ..Outcome::default()
        },
        ..GenTask::default()
    }
}
