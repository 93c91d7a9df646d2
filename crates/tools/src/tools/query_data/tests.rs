//! query_data on real files: counts, sums, picks, conditions read, results that say
//! what to fix.

use super::*;
use crate::tools::test_files::workspace;

fn query(workspace: &Workspace, args: Value) -> ToolOutcome {
    QueryData.call(&args, workspace)
}

#[test]
fn a_sum_over_the_rows_that_match_states_the_total() {
    let (_dir, ws) = workspace(&[(
        "data/orders.csv",
        "id,channel,orders\n1,phone,59\n2,web,80\n3,phone,28\n4,Phone,10\n",
    )]);
    let out = query(
        &ws,
        json!({"path": "data/orders.csv", "where": ["channel=phone"], "op": "sum", "field": "orders"}),
    );
    assert!(out.ok, "{}", out.text);
    assert!(
        out.text
            .contains("Result: 97 (sum of orders over 3 records)"),
        "{}",
        out.text
    );
    assert!(
        out.text.contains("3 of 4 match: channel = phone."),
        "{}",
        out.text
    );
    assert!(out.text.contains("    2| 1,phone,59"), "{}", out.text);
}

#[test]
fn a_count_on_plain_log_lines_matches_fields_it_lacks_as_words() {
    let (_dir, ws) = workspace(&[(
        "var/log/app.log",
        "t1 ERROR [gateway] request failed\nt2 ERROR [inventory] retrying\nt3 WARN [gateway] slow\nt4 ERROR [gateway] reset\n",
    )]);
    let out = query(
        &ws,
        json!({"path": "var/log/app.log", "where": ["level=ERROR", "component=gateway"], "op": "count"}),
    );
    assert!(out.text.contains("Result: 2"), "{}", out.text);
    assert!(
        out.text
            .contains("contains the word `gateway` (no field is named `component`)"),
        "{}",
        out.text
    );
}

#[test]
fn the_last_matching_event_and_the_highest_value_are_picked() {
    let events = "{\"id\":\"e1\",\"time\":\"2026-03-09T08:00:00Z\",\"user\":\"Ana\",\"event\":\"buy\"}\n\
                  {\"id\":\"e2\",\"time\":\"2026-03-09T09:00:00Z\",\"user\":\"Bo\",\"event\":\"buy\"}\n\
                  {\"id\":\"e3\",\"time\":\"2026-03-09T10:00:00Z\",\"user\":\"Ana\",\"event\":\"buy\"}\n";
    let products = r#"[{"name":"lamp","price":12},{"name":"scanner","price":989},{"name":"desk","price":250}]"#;
    let (_dir, ws) = workspace(&[("events.jsonl", events), ("products.json", products)]);
    let out = query(
        &ws,
        json!({"path": "events.jsonl", "where": {"user": "ana", "event": "buy"}, "op": "last"}),
    );
    assert!(
        out.text
            .contains("the last of 2 matching records (in file order) is at line 3"),
        "{}",
        out.text
    );
    assert!(out.text.contains("\"id\":\"e3\""), "{}", out.text);
    let out = query(
        &ws,
        json!({"path": "products.json", "op": "max", "field": "price"}),
    );
    assert!(
        out.text
            .contains("Result: 989 (highest of price among 3 records)"),
        "{}",
        out.text
    );
    assert!(out.text.contains("scanner"), "{}", out.text);
}

#[test]
fn a_field_that_is_not_there_gets_the_fields_that_are() {
    let (_dir, ws) = workspace(&[("s.csv", "id,units\n1,4\n2,5\n")]);
    let out = query(
        &ws,
        json!({"path": "s.csv", "op": "sum", "field": "quantity"}),
    );
    assert!(!out.ok);
    assert!(
        out.text.contains("the fields are: id (`1`), units (`4`)"),
        "{}",
        out.text
    );
    let out = query(&ws, json!({"path": "s.csv", "op": "average"}));
    assert!(
        !out.ok && out.text.contains("must be one of count, sum"),
        "{}",
        out.text
    );
    let out = query(&ws, json!({"path": "missing.csv", "op": "count"}));
    assert!(
        !out.ok && out.text.contains("does not exist"),
        "{}",
        out.text
    );
}

#[test]
fn an_order_by_a_field_that_is_not_there_is_file_order() {
    let log = "t1 evt-A user=Chen event=refund\nt2 evt-B user=Ana event=refund\nt3 evt-C user=Chen event=refund\n";
    let (_dir, ws) = workspace(&[("audit/events.log", log)]);
    let out = query(
        &ws,
        json!({"path": "audit/events.log", "where": ["event=refund", "user=Chen"], "op": "first", "field": "evt-id"}),
    );
    assert!(out.ok, "{}", out.text);
    assert!(
        out.text
            .contains("is at line 1 (no field is named `evt-id`, so it was not used)"),
        "{}",
        out.text
    );
    assert!(out.text.contains("t1 evt-A user=Chen"), "{}", out.text);
}

#[test]
fn a_look_at_a_data_file_points_to_this_tool_when_the_hint_is_on() {
    let (_dir, mut ws) = workspace(&[
        ("s.csv", "id,units\n1,9\n2,10\n3,100\n"),
        ("notes.md", "# Notes\nsome prose\nmore prose\nand more\n"),
        (
            "config.json",
            "{\n  \"db\": {\n    \"port\": 5432,\n    \"host\": \"x\"\n  }\n}\n",
        ),
    ]);
    let search = |ws: &Workspace, path: &str| {
        crate::Search
            .call(&json!({"pattern": "1", "path": path}), ws)
            .text
    };
    let read = |ws: &Workspace, path: &str| crate::ReadFile.call(&json!({"path": path}), ws).text;
    let hint = "(`s.csv` is a data file of 3 CSV rows; fields: id, units. query_data counts";
    assert!(!search(&ws, "s.csv").contains("query_data"));
    ws.set_data_hint(true);
    assert!(
        search(&ws, "s.csv").contains(hint),
        "{}",
        search(&ws, "s.csv")
    );
    assert!(read(&ws, "s.csv").contains(hint), "{}", read(&ws, "s.csv"));
    assert!(!read(&ws, "notes.md").contains("query_data"));
    assert!(!read(&ws, "config.json").contains("query_data"));
    assert!(!search(&ws, ".").contains("query_data"));
}

#[test]
fn a_comparison_of_numbers_is_numeric() {
    let (_dir, ws) = workspace(&[("s.csv", "id,units\n1,9\n2,10\n3,100\n")]);
    let out = query(
        &ws,
        json!({"path": "s.csv", "where": ["units>9"], "op": "count"}),
    );
    assert!(out.text.contains("Result: 2"), "{}", out.text);
}

#[test]
fn a_condition_of_several_words_needs_each_of_them_in_any_form() {
    let log = "t1 WARN [cache] slow\nt2 INFO [cache] cold start\nt3 WARN [gateway] slow\nt4 WARN [cache] evicted\n";
    let (_dir, ws) = workspace(&[("logs/service.log", log)]);
    let out = query(
        &ws,
        json!({"path": "logs/service.log", "where": ["warns cache"], "op": "count"}),
    );
    assert!(out.text.contains("Result: 2"), "{}", out.text);
    assert!(
        out.text
            .contains("contains each of the words `warns`, `cache` (any order, any case)"),
        "{}",
        out.text
    );
    // A word is not a part of a longer one.
    let out = query(
        &ws,
        json!({"path": "logs/service.log", "where": ["cach"], "op": "count"}),
    );
    assert!(out.text.contains("Result: 0"), "{}", out.text);
}

#[test]
fn no_match_shows_what_each_condition_meets_and_the_values_there_are() {
    let csv = "id,category,quantity\n1,garden,5\n2,books,7\n3,garden,11\n4,tools,2\n";
    let (_dir, ws) = workspace(&[("report.csv", csv)]);
    let out = query(
        &ws,
        json!({"path": "report.csv", "where": ["category=Garden items", "quantity>3"], "op": "sum", "field": "quantity"}),
    );
    assert!(out.ok, "{}", out.text);
    assert!(out.text.contains("0 of 4 match"), "{}", out.text);
    assert!(
        out.text.contains(
            "Records each condition meets alone: category = Garden items: 0; quantity > 3: 3."
        ),
        "{}",
        out.text
    );
    assert!(
        out.text
            .contains("Values of `category` here: `garden`, `books`, `tools`."),
        "{}",
        out.text
    );
    let out = query(
        &ws,
        json!({"path": "report.csv", "where": ["quantity=100"], "op": "count"}),
    );
    assert!(
        out.text
            .contains("`quantity` ranges from 2 to 11 in these records."),
        "{}",
        out.text
    );
    // A pick tried through a condition on the field it picks by: no pick over all.
    assert!(!out.text.contains("over all"), "{}", out.text);
}

#[test]
fn a_pick_whose_conditions_were_on_its_own_field_is_also_made_over_all_records() {
    let products = r#"[{"name":"lamp","rating":4.1},{"name":"backpack","rating":1.3},{"name":"desk","rating":3.0}]"#;
    let (_dir, ws) = workspace(&[("data/products.json", products)]);
    let out = query(
        &ws,
        json!({"path": "data/products.json", "where": ["rating=1"], "op": "min", "field": "rating"}),
    );
    assert!(
        out.text.contains("Result: none (no record matches)"),
        "{}",
        out.text
    );
    assert!(
        out.text.contains(
            "Every condition was on `rating`, the field this picks by; over all 3 records instead: 1.3 (lowest of rating among 3 records)"
        ),
        "{}",
        out.text
    );
    assert!(out.text.contains("backpack"), "{}", out.text);
    // A condition on another field that meets nothing gets no pick over all.
    let out = query(
        &ws,
        json!({"path": "data/products.json", "where": ["name=chair"], "op": "min", "field": "rating"}),
    );
    assert!(!out.text.contains("over all"), "{}", out.text);
    assert!(out.text.contains("Values of `name` here"), "{}", out.text);
}

#[test]
fn a_count_with_a_number_field_states_its_total_too() {
    let csv = "id,category,quantity\n1,garden,5\n2,books,7\n3,garden,11\n";
    let (_dir, ws) = workspace(&[("report.csv", csv)]);
    let out = query(
        &ws,
        json!({"path": "report.csv", "where": ["category=garden"], "op": "count", "field": "quantity"}),
    );
    assert!(
        out.text
            .contains("Result: 2 records; the sum of their quantity is 16"),
        "{}",
        out.text
    );
    let out = query(
        &ws,
        json!({"path": "report.csv", "where": ["category=garden"], "op": "count", "field": "category"}),
    );
    assert!(out.text.contains("Result: 2\n"), "{}", out.text);
}

#[test]
fn first_and_last_by_an_id_field_are_in_file_order_and_state_the_id() {
    let events = "{\"id\":\"evt-Z1\",\"time\":\"2026-03-09T08:00:00Z\",\"user\":\"Rosa\"}\n\
                  {\"id\":\"evt-A2\",\"time\":\"2026-03-09T09:00:00Z\",\"user\":\"Rosa\"}\n\
                  {\"id\":\"evt-M3\",\"time\":\"2026-03-09T10:00:00Z\",\"user\":\"Ana\"}\n";
    let (_dir, ws) = workspace(&[("events.jsonl", events)]);
    let out = query(
        &ws,
        json!({"path": "events.jsonl", "where": ["user=Rosa"], "op": "last", "field": "id"}),
    );
    assert!(
        out.text.contains(
            "Result: the last of 2 matching records (in file order: `id` holds no numbers or times to order by) is at line 2; its id is `evt-A2`"
        ),
        "{}",
        out.text
    );
    let out = query(
        &ws,
        json!({"path": "events.jsonl", "where": ["user=Rosa"], "op": "first", "field": "time"}),
    );
    assert!(
        out.text.contains(
            "the first of 2 matching records (by time) is at line 1; its time is `2026-03-09T08:00:00Z`"
        ),
        "{}",
        out.text
    );
}

#[test]
fn a_directory_gets_the_data_files_inside_it() {
    let (_dir, ws) = workspace(&[
        ("logs/events.jsonl", "{\"id\":1}\n"),
        ("logs/notes.md", "# notes\n"),
    ]);
    let out = query(&ws, json!({"path": "logs", "op": "count"}));
    assert!(!out.ok);
    assert!(
        out.text.contains(
            "`logs` is a directory; query_data reads one data file. Its data files: `logs/events.jsonl`."
        ),
        "{}",
        out.text
    );
}

#[test]
fn words_that_are_values_of_other_fields_are_named_as_conditions() {
    let log = "{\"ts\":\"t1\",\"level\":\"WARN\",\"component\":\"uploads\",\"msg\":\"slow\"}\n\
               {\"ts\":\"t2\",\"level\":\"INFO\",\"component\":\"uploads\",\"msg\":\"cold start\"}\n\
               {\"ts\":\"t3\",\"level\":\"WARN\",\"component\":\"cache\",\"msg\":\"slow\"}\n";
    let (_dir, ws) = workspace(&[("worker.log", log)]);
    let out = query(
        &ws,
        json!({"path": "worker.log", "where": ["msg=warns uploads"], "op": "count"}),
    );
    assert!(
        out.text.contains(
            "The words of `warns uploads` are values of fields: `level=WARN`, `component=uploads`."
        ),
        "{}",
        out.text
    );
    // The same words as a condition of words match where the fields hold them.
    let out = query(
        &ws,
        json!({"path": "worker.log", "where": ["warns uploads"], "op": "count"}),
    );
    assert!(out.text.contains("Result: 1"), "{}", out.text);
}

#[test]
fn the_lowest_or_highest_of_a_text_field_is_refused_with_the_fields_that_order() {
    let (_dir, ws) = workspace(&[(
        "shop/products.csv",
        "name,price,rating\nmonitor,279,1.0\nspeaker,494,3.3\nstapler,765,2.2\n",
    )]);
    let out = query(
        &ws,
        json!({"path": "shop/products.csv", "op": "max", "field": "name"}),
    );
    assert!(!out.ok, "{}", out.text);
    assert!(
        out.text.contains(
            "`name` holds no numbers or times, so no record has its highest `name`. max picks the record with the highest value of a field of numbers or times — here price (`279`), rating (`1.0`) — and shows that whole record"
        ),
        "{}",
        out.text
    );
    // A field the call's conditions compare is offered first.
    let out = query(
        &ws,
        json!({"path": "shop/products.csv", "where": ["rating > 2"], "op": "min", "field": "name"}),
    );
    assert!(
        out.text
            .contains("here rating (`3.3`), price (`494`) — and shows"),
        "{}",
        out.text
    );
    let out = query(
        &ws,
        json!({"path": "shop/products.csv", "op": "max", "field": "rating"}),
    );
    assert!(out.ok && out.text.contains("Result: 3.3"), "{}", out.text);
    assert!(out.text.contains("speaker,494,3.3"), "{}", out.text);
}

#[test]
fn plain_log_lines_are_picked_by_the_time_that_opens_them() {
    let log = "2026-03-09T09:39:33Z evt-R89MY user=Emeka event=refund\n\
               2026-03-09T08:44:08Z evt-5RVJ7 user=Farah event=refund\n\
               2026-03-09T11:29:23Z evt-5QDZ4 user=Farah event=refund\n\
               2026-03-09T07:00:00Z evt-ZZZZZ user=Farah event=login\n";
    let (_dir, ws) = workspace(&[("events.log", log)]);
    let out = query(
        &ws,
        json!({"path": "events.log", "where": ["user=Farah", "event=refund"], "op": "min", "field": "time"}),
    );
    assert!(out.ok, "{}", out.text);
    assert!(
        out.text.contains("fields: time, user, event."),
        "{}",
        out.text
    );
    assert!(out.text.contains("evt-5RVJ7"), "{}", out.text);
    let out = query(
        &ws,
        json!({"path": "events.log", "where": ["user=Farah", "event=refund"], "op": "first", "field": "time"}),
    );
    assert!(out.text.contains("is at line 2"), "{}", out.text);
    // A field the lines lack names the ones they have, each with a value.
    let out = query(
        &ws,
        json!({"path": "events.log", "where": ["user=Farah"], "op": "min", "field": "timestamp"}),
    );
    assert!(!out.ok);
    assert!(
        out.text.contains(
            "the fields are: time (`2026-03-09T08:44:08Z`), user (`Farah`), event (`refund`)"
        ),
        "{}",
        out.text
    );
}
