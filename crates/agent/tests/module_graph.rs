//! The agent crate's structure: its modules form no cycle — counting both the paths
//! they import (`crate::x::…`) and the methods of `Agent` that one module's
//! `impl Agent` block calls in another's — and no source file of the crate is longer
//! than 600 lines.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use regex::Regex;

/// The longest a source file of the crate may be.
const MAX_LINES: usize = 600;

/// Every `.rs` file under `dir`, with its path.
fn rust_files(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                stack.push(path);
            } else if path.extension().is_some_and(|e| e == "rs") {
                out.push(path);
            }
        }
    }
    out.sort();
    out
}

/// The crate's source files as (top-level module, code outside tests and comments).
/// A directory module and its children are one module; `lib.rs` and test files are
/// left out.
fn modules(src: &Path) -> Vec<(String, String)> {
    rust_files(src)
        .into_iter()
        .filter_map(|path| {
            let relative = path.strip_prefix(src).unwrap();
            let first = relative.components().next()?.as_os_str().to_str()?;
            let module = first.trim_end_matches(".rs").to_string();
            let name = path.file_name()?.to_str()?;
            if module == "lib" || name == "tests.rs" {
                return None;
            }
            let text = std::fs::read_to_string(&path).unwrap();
            Some((module, code_of(&text)))
        })
        .collect()
}

/// `text` up to its test module, without comment lines.
fn code_of(text: &str) -> String {
    let code = text.split("#[cfg(test)]").next().unwrap_or_default();
    code.lines()
        .filter(|line| !line.trim_start().starts_with("//"))
        .collect::<Vec<_>>()
        .join("\n")
}

/// The top-level module names a code's `crate::` paths reach, grouped imports
/// (`use crate::{a::X, b}`) included.
fn imported(code: &str) -> BTreeSet<String> {
    let single = Regex::new(r"crate::([a-z_][a-z0-9_]*)").unwrap();
    let mut names: BTreeSet<String> = single
        .captures_iter(code)
        .map(|c| c[1].to_string())
        .collect();
    for (start, _) in code.match_indices("crate::{") {
        let group = &code[start + "crate::{".len()..];
        let mut depth = 0usize;
        let mut item = String::new();
        for ch in group.chars() {
            match ch {
                '{' => depth += 1,
                '}' if depth == 0 => break,
                '}' => depth -= 1,
                ',' if depth == 0 => {
                    names.insert(first_segment(&item));
                    item.clear();
                    continue;
                }
                _ => {}
            }
            item.push(ch);
        }
        names.insert(first_segment(&item));
    }
    names
}

fn first_segment(item: &str) -> String {
    item.trim()
        .split("::")
        .next()
        .unwrap_or_default()
        .to_string()
}

/// The bodies of a code's `impl … Agent<…> {` blocks (rustfmt closes each with a `}`
/// on a line of its own).
fn agent_impls(code: &str) -> Vec<String> {
    let opening = Regex::new(r"^impl\s*<[^>]*>\s*Agent\s*<[^>]*>\s*\{").unwrap();
    let mut blocks = Vec::new();
    let mut current: Option<String> = None;
    for line in code.lines() {
        match current.as_mut() {
            None if opening.is_match(line) => current = Some(String::new()),
            None => {}
            Some(_) if line == "}" => blocks.extend(current.take()),
            Some(block) => {
                block.push_str(line);
                block.push('\n');
            }
        }
    }
    blocks
}

/// The dependency edges between `modules`: imports, and calls of `Agent` methods
/// defined in another module's `impl Agent` block.
fn edges(modules: &[(String, String)]) -> BTreeMap<String, BTreeSet<String>> {
    let names: BTreeSet<&str> = modules.iter().map(|(m, _)| m.as_str()).collect();
    let method =
        Regex::new(r"(?m)^    (?:pub(?:\([a-z]+\))? )?(?:async )?fn ([a-z_0-9]+)").unwrap();
    let call = Regex::new(r"self\s*\.\s*([a-z_0-9]+)\s*\(").unwrap();
    let mut owner: BTreeMap<String, String> = BTreeMap::new();
    for (module, code) in modules {
        for block in agent_impls(code) {
            for c in method.captures_iter(&block) {
                owner.insert(c[1].to_string(), module.clone());
            }
        }
    }
    let mut graph: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for (module, code) in modules {
        let out = graph.entry(module.clone()).or_default();
        for target in imported(code) {
            if names.contains(target.as_str()) && &target != module {
                out.insert(target);
            }
        }
        for block in agent_impls(code) {
            for c in call.captures_iter(&block) {
                if let Some(target) = owner.get(&c[1]).filter(|t| *t != module) {
                    out.insert(target.clone());
                }
            }
        }
    }
    graph
}

/// A cycle of `graph` as the modules along it, if there is one.
fn find_cycle(graph: &BTreeMap<String, BTreeSet<String>>) -> Option<Vec<String>> {
    fn visit(
        node: &str,
        graph: &BTreeMap<String, BTreeSet<String>>,
        path: &mut Vec<String>,
        done: &mut BTreeSet<String>,
    ) -> Option<Vec<String>> {
        if let Some(at) = path.iter().position(|n| n == node) {
            let mut cycle = path[at..].to_vec();
            cycle.push(node.to_string());
            return Some(cycle);
        }
        if done.contains(node) {
            return None;
        }
        path.push(node.to_string());
        for next in graph.get(node).into_iter().flatten() {
            if let Some(cycle) = visit(next, graph, path, done) {
                return Some(cycle);
            }
        }
        path.pop();
        done.insert(node.to_string());
        None
    }
    let mut done = BTreeSet::new();
    graph
        .keys()
        .find_map(|node| visit(node, graph, &mut Vec::new(), &mut done))
}

#[test]
fn the_modules_of_the_agent_crate_form_no_cycle() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let modules = modules(&src);
    let graph = edges(&modules);
    // The graph is the crate's: dozens of modules, most of them importing others.
    assert!(graph.len() > 30, "{} modules", graph.len());
    assert!(graph
        .get("run")
        .is_some_and(|out| out.contains("agent") && out.contains("calls")));
    if let Some(cycle) = find_cycle(&graph) {
        panic!(
            "the agent crate's modules form a cycle: {}",
            cycle.join(" → ")
        );
    }
}

#[test]
fn a_cycle_through_imports_and_agent_methods_is_found() {
    let files = [
        ("loop_step".to_string(), "use crate::retrying::Note;\n".to_string()),
        (
            "retrying".to_string(),
            "pub struct Note;\nimpl<B: Backend> Agent<B> {\n    pub(crate) fn retry(&self) {\n        self.take_step();\n    }\n}\n".to_string(),
        ),
        (
            "stepping".to_string(),
            "use crate::{agent::Agent, loop_step};\nimpl<B: Backend> Agent<B> {\n    fn take_step(&self) {}\n}\n".to_string(),
        ),
        ("agent".to_string(), String::new()),
    ];
    let cycle = find_cycle(&edges(&files)).expect("a cycle");
    assert_eq!(cycle.first(), cycle.last());
    for module in ["loop_step", "retrying", "stepping"] {
        assert!(cycle.iter().any(|m| m == module), "{cycle:?}");
    }
    let acyclic = &files[1..];
    assert_eq!(find_cycle(&edges(acyclic)), None);
}

#[test]
fn no_source_file_of_the_crate_is_over_600_lines() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let long: Vec<String> = ["src", "tests"]
        .iter()
        .flat_map(|dir| rust_files(&root.join(dir)))
        .filter_map(|path| {
            let lines = std::fs::read_to_string(&path).unwrap().lines().count();
            (lines > MAX_LINES).then(|| format!("{} ({lines} lines)", path.display()))
        })
        .collect();
    assert!(long.is_empty(), "over {MAX_LINES} lines: {long:?}");
}
