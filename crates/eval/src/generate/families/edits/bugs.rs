//! Fixing the one bug a test script exposes, in Python or JavaScript, without touching
//! the test.

use std::collections::BTreeMap;

use crate::generate::words::{self, command, unchanged};
use crate::generate::{GenTask, Outcome, Rng};

/// The kind of bug a `fix-by-test` module has.
#[derive(Clone, Copy)]
enum Bug {
    /// Off by one: an inclusive upper bound checked as exclusive.
    Between,
    /// Off by one: pages numbered from 1 sliced as if from 0.
    Page,
    /// A wrong comparison: `>=` where `>` is meant.
    Overdue,
    /// A wrong operator: a discount added instead of taken off.
    Net,
    /// A wrong default: one decimal too few.
    Decimals,
}

/// One function of the module under test: its code in Python and JavaScript (correct
/// and as shipped) and its test lines, each marked when it exposes the bug.
struct Unit {
    /// The function's name in Python and in JavaScript.
    name: (String, String),
    /// Python: fixed, shipped.
    py: (String, String),
    /// JavaScript: fixed, shipped.
    js: (String, String),
    /// Test lines: Python, JavaScript, whether it exposes the bug.
    tests: Vec<(String, String, bool)>,
}

/// A tested function with a name in both styles.
fn names(rng: &mut Rng, pool: &[&str]) -> (String, String) {
    let name = rng.pick(pool).to_string();
    let camel = words::camel(&name);
    (name, camel)
}

/// `f(args) == want` as a Python assert and a Node assert.
fn equal(
    py_name: &str,
    js_name: &str,
    args: &str,
    want: &str,
    exposes: bool,
) -> (String, String, bool) {
    (
        format!("assert {py_name}({args}) == {want}\n"),
        format!("assert.deepStrictEqual({js_name}({args}), {want});\n"),
        exposes,
    )
}

/// The function with the bug, its tests among them ones that expose it.
fn buggy_unit(rng: &mut Rng, bug: Bug) -> Unit {
    match bug {
        Bug::Between => {
            let (py, js) = names(rng, &["count_between", "count_in_range", "count_within"]);
            let low = rng.range(2, 20);
            let high = low + rng.range(5, 30);
            let mut values: Vec<i64> = (0..5)
                .map(|_| rng.range(low - 10, high + 10))
                .filter(|v| *v != high)
                .collect();
            values.push(high);
            rng.shuffle(&mut values);
            let quiet: Vec<i64> = values
                .iter()
                .map(|v| if *v == high { high + 3 } else { *v })
                .collect();
            let count = |vs: &[i64]| {
                vs.iter()
                    .filter(|v| low <= **v && **v <= high)
                    .count()
                    .to_string()
            };
            let doc = "Counts the values from low to high, both ends included.";
            Unit {
                name: (py.clone(), js.clone()),
                py: (
                    format!("def {py}(values, low, high):\n    \"\"\"{doc}\"\"\"\n    return sum(1 for v in values if low <= v <= high)\n"),
                    format!("def {py}(values, low, high):\n    \"\"\"{doc}\"\"\"\n    return sum(1 for v in values if low <= v < high)\n"),
                ),
                js: (
                    format!("// {doc}\nfunction {js}(values, low, high) {{\n  return values.filter((v) => low <= v && v <= high).length;\n}}\n"),
                    format!("// {doc}\nfunction {js}(values, low, high) {{\n  return values.filter((v) => low <= v && v < high).length;\n}}\n"),
                ),
                tests: vec![
                    equal(&py, &js, &format!("{quiet:?}, {low}, {high}"), &count(&quiet), false),
                    equal(&py, &js, &format!("{values:?}, {low}, {high}"), &count(&values), true),
                ],
            }
        }
        Bug::Page => {
            let (py, js) = names(rng, &["page_items", "get_page", "page_slice"]);
            let size = rng.range(3, 6);
            let total = rng.range(3 * size, 5 * size - 1);
            let page =
                |p: i64| -> Vec<i64> { ((p - 1) * size + 1..=(p * size).min(total)).collect() };
            let items = format!("list(range(1, {}))", total + 1);
            let js_items = format!("Array.from({{ length: {total} }}, (_, i) => i + 1)");
            let doc = "The items of one page; pages are numbered from 1.";
            let test = |p: i64, exposes: bool| {
                let want = format!("{:?}", page(p));
                (
                    format!("assert {py}({items}, {p}, {size}) == {want}\n"),
                    format!("assert.deepStrictEqual({js}({js_items}, {p}, {size}), {want});\n"),
                    exposes,
                )
            };
            Unit {
                name: (py.clone(), js.clone()),
                py: (
                    format!("def {py}(items, page, size):\n    \"\"\"{doc}\"\"\"\n    start = (page - 1) * size\n    return items[start:start + size]\n"),
                    format!("def {py}(items, page, size):\n    \"\"\"{doc}\"\"\"\n    start = page * size\n    return items[start:start + size]\n"),
                ),
                js: (
                    format!("// {doc}\nfunction {js}(items, page, size) {{\n  const start = (page - 1) * size;\n  return items.slice(start, start + size);\n}}\n"),
                    format!("// {doc}\nfunction {js}(items, page, size) {{\n  const start = page * size;\n  return items.slice(start, start + size);\n}}\n"),
                ),
                tests: vec![test(1, true), test(2, true), test(7, false)],
            }
        }
        Bug::Overdue => {
            let (py, js) = names(rng, &["is_overdue", "is_expired", "past_limit"]);
            let limit = rng.range(5, 60);
            let (more, less) = (limit + rng.range(1, 9), limit - rng.range(1, 4));
            let doc = "True once days is strictly more than limit.";
            let truth = |py_args: String, want: bool, exposes: bool| {
                (
                    format!("assert {}{py}({py_args})\n", if want { "" } else { "not " }),
                    format!("assert.strictEqual({js}({py_args}), {want});\n"),
                    exposes,
                )
            };
            Unit {
                name: (py.clone(), js.clone()),
                py: (
                    format!(
                        "def {py}(days, limit):\n    \"\"\"{doc}\"\"\"\n    return days > limit\n"
                    ),
                    format!(
                        "def {py}(days, limit):\n    \"\"\"{doc}\"\"\"\n    return days >= limit\n"
                    ),
                ),
                js: (
                    format!(
                        "// {doc}\nfunction {js}(days, limit) {{\n  return days > limit;\n}}\n"
                    ),
                    format!(
                        "// {doc}\nfunction {js}(days, limit) {{\n  return days >= limit;\n}}\n"
                    ),
                ),
                tests: vec![
                    truth(format!("{more}, {limit}"), true, false),
                    truth(format!("{less}, {limit}"), false, false),
                    truth(format!("{limit}, {limit}"), false, true),
                ],
            }
        }
        Bug::Net => {
            let (py, js) = names(rng, &["net_total", "order_total", "amount_due"]);
            let prices: Vec<i64> = (0..rng.range(2, 4)).map(|_| rng.range(5, 200)).collect();
            let sum: i64 = prices.iter().sum();
            let discount = rng.range(1, 40);
            let doc = "The sum of the prices less the discount.";
            Unit {
                name: (py.clone(), js.clone()),
                py: (
                    format!("def {py}(prices, discount):\n    \"\"\"{doc}\"\"\"\n    return sum(prices) - discount\n"),
                    format!("def {py}(prices, discount):\n    \"\"\"{doc}\"\"\"\n    return sum(prices) + discount\n"),
                ),
                js: (
                    format!("// {doc}\nfunction {js}(prices, discount) {{\n  return prices.reduce((a, b) => a + b, 0) - discount;\n}}\n"),
                    format!("// {doc}\nfunction {js}(prices, discount) {{\n  return prices.reduce((a, b) => a + b, 0) + discount;\n}}\n"),
                ),
                tests: vec![
                    equal(&py, &js, &format!("{prices:?}, 0"), &sum.to_string(), false),
                    equal(&py, &js, &format!("{prices:?}, {discount}"), &(sum - discount).to_string(), true),
                ],
            }
        }
        Bug::Decimals => {
            let (py, js) = names(rng, &["format_amount", "show_price", "money_text"]);
            let places = rng.range(2, 3) as usize;
            let shipped = places - 1;
            let amount = rng.range(1, 900) as f64 + *rng.pick(&[0.25, 0.75]);
            let half = rng.range(1, 900) as f64 + 0.5;
            let doc = "An amount as text, with a fixed number of decimals.";
            let py_fn = |d: usize| {
                format!("def {py}(value, decimals={d}):\n    \"\"\"{doc}\"\"\"\n    return f\"{{value:.{{decimals}}f}}\"\n")
            };
            let js_fn = |d: usize| {
                format!("// {doc}\nfunction {js}(value, decimals = {d}) {{\n  return value.toFixed(decimals);\n}}\n")
            };
            Unit {
                name: (py.clone(), js.clone()),
                py: (py_fn(places), py_fn(shipped)),
                js: (js_fn(places), js_fn(shipped)),
                tests: vec![
                    equal(
                        &py,
                        &js,
                        &format!("{half}, 1"),
                        &format!("\"{half:.1}\""),
                        false,
                    ),
                    equal(
                        &py,
                        &js,
                        &amount.to_string(),
                        &format!("\"{amount:.places$}\""),
                        true,
                    ),
                ],
            }
        }
    }
}

/// A correct helper beside the buggy function, with its tests.
fn helper_unit(rng: &mut Rng, which: usize) -> Unit {
    match which {
        0 => {
            let words = [
                rng.pick(words::PRODUCTS).to_string(),
                rng.pick(words::CITIES).to_string(),
                "Sale".into(),
            ];
            let text = words.join(" ");
            let want = format!("\"{}\"", words.join("-").to_lowercase());
            let py =
                "def slugify(text):\n    return \"-\".join(text.lower().split())\n".to_string();
            let js = "function slugify(text) {\n  return text.toLowerCase().split(/\\s+/).filter(Boolean).join(\"-\");\n}\n".to_string();
            Unit {
                name: ("slugify".into(), "slugify".into()),
                py: (py.clone(), py),
                js: (js.clone(), js),
                tests: vec![equal(
                    "slugify",
                    "slugify",
                    &format!("\"{text}\""),
                    &want,
                    false,
                )],
            }
        }
        1 => {
            let (low, high) = (rng.range(0, 10), rng.range(20, 40));
            let py =
                "def clamp(value, low, high):\n    return max(low, min(value, high))\n".to_string();
            let js = "function clamp(value, low, high) {\n  return Math.min(Math.max(value, low), high);\n}\n".to_string();
            let above = high + rng.range(1, 50);
            Unit {
                name: ("clamp".into(), "clamp".into()),
                py: (py.clone(), py),
                js: (js.clone(), js),
                tests: vec![
                    equal(
                        "clamp",
                        "clamp",
                        &format!("{above}, {low}, {high}"),
                        &high.to_string(),
                        false,
                    ),
                    equal(
                        "clamp",
                        "clamp",
                        &format!("{}, {low}, {high}", low + 3),
                        &(low + 3).to_string(),
                        false,
                    ),
                ],
            }
        }
        _ => {
            let (first, city) = (
                rng.pick(words::PEOPLE).to_string(),
                rng.pick(words::CITIES).to_string(),
            );
            let want = format!("\"{}{}\"", &first[..1], &city[..1]);
            let py =
                "def initials(name):\n    return \"\".join(p[0].upper() for p in name.split())\n"
                    .to_string();
            let js = "function initials(name) {\n  return name.split(/\\s+/).filter(Boolean).map((p) => p[0].toUpperCase()).join(\"\");\n}\n".to_string();
            Unit {
                name: ("initials".into(), "initials".into()),
                py: (py.clone(), py),
                js: (js.clone(), js),
                tests: vec![equal(
                    "initials",
                    "initials",
                    &format!("\"{first} {city}\""),
                    &want,
                    false,
                )],
            }
        }
    }
}

/// Builds a `fix-by-test` task.
pub(super) fn fix_by_test(rng: &mut Rng, phrasing: usize) -> GenTask {
    let node = rng.chance(50);
    let bug = *rng.pick(&[
        Bug::Between,
        Bug::Page,
        Bug::Overdue,
        Bug::Net,
        Bug::Decimals,
    ]);
    let mut units = vec![buggy_unit(rng, bug)];
    let helper_count = 1 + rng.below(2);
    let helpers = rng.distinct(&[0, 1, 2], helper_count);
    for which in helpers {
        units.push(helper_unit(rng, which));
    }
    rng.shuffle(&mut units);
    let module = *rng.pick(&[
        "utils", "helpers", "calc", "billing", "pager", "stats", "core",
    ]);
    let (ext, run) = if node {
        ("js", "node")
    } else {
        ("py", "python3")
    };
    let layout = rng.below(3);
    let (module_path, test_path) = match layout {
        0 => (format!("{module}.{ext}"), format!("test_{module}.{ext}")),
        1 => (
            format!("src/{module}.{ext}"),
            format!("tests/test_{module}.{ext}"),
        ),
        _ => (
            format!("tools/{module}.{ext}"),
            format!("tools/test_{module}.{ext}"),
        ),
    };
    let exported: Vec<&str> = units
        .iter()
        .map(|u| {
            if node {
                u.name.1.as_str()
            } else {
                u.name.0.as_str()
            }
        })
        .collect();
    let list = exported.join(", ");
    let module_text = |fixed: bool| {
        let parts: Vec<&String> = units
            .iter()
            .map(|u| match (node, fixed) {
                (true, true) => &u.js.0,
                (true, false) => &u.js.1,
                (false, true) => &u.py.0,
                (false, false) => &u.py.1,
            })
            .collect();
        if node {
            let body: Vec<&str> = parts.iter().map(|s| s.as_str()).collect();
            format!("{}\nmodule.exports = {{ {list} }};\n", body.join("\n"))
        } else {
            let body: Vec<&str> = parts.iter().map(|s| s.as_str()).collect();
            body.join("\n\n")
        }
    };
    let head = match (node, layout) {
        (true, 1) => format!("const assert = require(\"assert\");\nconst {{ {list} }} = require(\"../src/{module}\");\n\n"),
        (true, _) => format!("const assert = require(\"assert\");\nconst {{ {list} }} = require(\"./{module}\");\n\n"),
        (false, 1) => format!(
            "import os\nimport sys\n\nsys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), \"..\", \"src\"))\n\nfrom {module} import {list}\n\n"
        ),
        (false, _) => format!("from {module} import {list}\n\n"),
    };
    let done = if node {
        "console.log(\"all tests passed\");\n"
    } else {
        "print(\"all tests passed\")\n"
    };
    let test_text = |keep_exposing: bool| {
        let mut text = head.clone();
        for unit in &units {
            for (py, js, exposes) in &unit.tests {
                if keep_exposing || !exposes {
                    text.push_str(if node { js } else { py });
                }
            }
        }
        text.push_str(done);
        text
    };
    let test_cmd = format!("{run} {test_path}");
    let mut files = BTreeMap::new();
    files.insert(module_path.clone(), module_text(false));
    files.insert(test_path.clone(), test_text(true));
    let prompt = match phrasing {
        0 => "The test fails. Fix the bug in the code.".to_string(),
        1 => format!(
            "Running `{test_cmd}` fails. Please find the bug in the code under test and fix it \
             so that the test passes. The test itself is correct, so don't change it."
        ),
        2 => format!("Why does `{test_cmd}` fail? Fix the code so that it passes."),
        3 => format!("Make `{test_cmd}` pass by fixing {module_path}. Leave {test_path} as it is."),
        4 => format!(
            "Hi! The little test script for our {module} module is failing at the moment. Would \
             you be able to track down the bug and fix it? The test is right, it's the code \
             that's wrong. Thanks!"
        ),
        _ => format!("fix the failing test {test_path} (the bug is in the code, not the test)"),
    };
    let mistake = if rng.chance(60) {
        Outcome::write(test_path.clone(), test_text(false))
    } else {
        let note = if node { "// checked\n" } else { "# checked\n" };
        Outcome::write(module_path.clone(), format!("{note}{}", module_text(false)))
    };
    GenTask {
        prompt,
        files,
        grade: vec![command(test_cmd), unchanged(&test_path)],
        solution: Outcome::write(module_path, module_text(true)),
        mistake,
        ..GenTask::default()
    }
}
