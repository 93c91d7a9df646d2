//! `tool_search`: the one built-in that stands for MCP tools kept out of the prompt.
//! BM25 over each tool's name (split into words), description and parameter names;
//! an exact name (`server__tool` or the server's own `tool`) always comes first. A
//! result gives each tool's signature line and its parameters' schema, and makes
//! those tools callable from the next turn without changing the prompt.

use std::collections::HashSet;

use bm25::{Document, Language, SearchEngine, SearchEngineBuilder};
use rein_protocol::{FunctionSpec, ToolSpec};
use rein_tools::{Access, Tool, ToolOutcome, Workspace};
use serde_json::{json, Value};

use crate::tool::SEPARATOR;

/// The name the model calls it by.
pub const TOOL_SEARCH: &str = "tool_search";

/// Tools a search returns unless the call asks for fewer.
pub const DEFAULT_RESULTS: usize = 5;

/// The fewest tools a search returns when that many match: a small model asks for
/// one and then has no second choice when the best-ranked tool is not the one.
pub const MIN_RESULTS: usize = 3;

/// The most tools one search returns.
pub const MAX_RESULTS: usize = 10;

/// The search over deferred tools.
pub struct ToolSearch {
    catalog: Vec<ToolSpec>,
    engine: SearchEngine<usize>,
}

impl std::fmt::Debug for ToolSearch {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter
            .debug_struct("ToolSearch")
            .field("tools", &self.catalog.len())
            .finish()
    }
}

impl ToolSearch {
    /// A search over `catalog`, the deferred tools' specs.
    pub fn new(catalog: Vec<ToolSpec>) -> Self {
        let documents: Vec<Document<usize>> = catalog
            .iter()
            .enumerate()
            .map(|(index, spec)| Document::new(index, searchable_text(spec)))
            .collect();
        let engine =
            SearchEngineBuilder::<usize>::with_documents(Language::English, documents).build();
        Self { catalog, engine }
    }

    /// The indexes of the tools that best match `query`, best first, at most `limit`.
    pub fn rank(&self, query: &str, limit: usize) -> Vec<usize> {
        let wanted = query.trim();
        let mut ranked: Vec<usize> = self
            .catalog
            .iter()
            .enumerate()
            .filter(|(_, spec)| {
                let name = spec.function.name.as_str();
                name.eq_ignore_ascii_case(wanted)
                    || name
                        .split_once(SEPARATOR)
                        .is_some_and(|(_, tool)| tool.eq_ignore_ascii_case(wanted))
            })
            .map(|(index, _)| index)
            .collect();
        let words = words_of(wanted);
        for result in self.engine.search(&words, limit + ranked.len()) {
            if !ranked.contains(&result.document.id) {
                ranked.push(result.document.id);
            }
        }
        ranked.truncate(limit);
        ranked
    }

    fn result_text(&self, query: &str, found: &[usize]) -> String {
        if found.is_empty() {
            return format!(
                "no tool matches \"{query}\". The tools cover: {}. Search again with what the tool should do (a verb and the thing it works on, e.g. \"check stock level\"), not with the values of the task.",
                self.groups()
            );
        }
        let mut text = format!(
            "{} tool(s) match \"{query}\", best first; each can be called from your next reply like any other tool:",
            found.len()
        );
        for &index in found {
            let spec = &self.catalog[index];
            let mut parameters = spec
                .function
                .parameters
                .clone()
                .unwrap_or_else(|| json!({"type": "object", "properties": {}}));
            if let Some(map) = parameters.as_object_mut() {
                // Noise to the model: which draft the schema follows.
                map.remove("$schema");
            }
            text.push_str(&format!(
                "\n- {}\n  parameters: {}",
                rein_format::signature(spec),
                parameters
            ));
        }
        let best = &self.catalog[found[0]].function.name;
        text.push_str(&format!(
            "\nNext: call `{best}` (or another tool above that fits better) with the values the task gives; its result is the answer to use."
        ));
        text
    }
}

impl ToolSearch {
    /// The servers the catalog's tools come from, each with its count, in catalog
    /// order: `fs: 14 tools` (a task that says "the fs tools" names one).
    fn servers(&self) -> String {
        let mut servers: Vec<(&str, usize)> = Vec::new();
        for spec in &self.catalog {
            let server = spec
                .function
                .name
                .split_once(SEPARATOR)
                .map_or("", |(server, _)| server);
            match servers.iter_mut().find(|(s, _)| *s == server) {
                Some((_, count)) => *count += 1,
                None => servers.push((server, 1)),
            }
        }
        servers
            .iter()
            .map(|(server, count)| match server.is_empty() {
                true => format!("{count} unnamed"),
                false => format!(
                    "{server}: {count} {}",
                    if *count == 1 { "tool" } else { "tools" }
                ),
            })
            .collect::<Vec<_>>()
            .join(", ")
    }

    /// The catalog's groups: the names' first two words (`catalog__weather_…`), each
    /// with its count, in catalog order.
    fn groups(&self) -> String {
        let mut groups: Vec<(String, usize)> = Vec::new();
        for spec in &self.catalog {
            let name = &spec.function.name;
            let (server, tool) = name.split_once(SEPARATOR).unwrap_or(("", name));
            let head = tool.split(['_', '-']).next().unwrap_or(tool);
            let group = if server.is_empty() {
                format!("{head}…")
            } else {
                format!("{server}{SEPARATOR}{head}…")
            };
            match groups.iter_mut().find(|(g, _)| *g == group) {
                Some((_, count)) => *count += 1,
                None => groups.push((group, 1)),
            }
        }
        groups
            .iter()
            .map(|(group, count)| format!("{group} ({count})"))
            .collect::<Vec<_>>()
            .join(", ")
    }
}

/// A tool's name split into words, its description and its parameters' names.
fn searchable_text(spec: &ToolSpec) -> String {
    let mut text = words_of(&spec.function.name);
    if let Some(description) = &spec.function.description {
        text.push(' ');
        text.push_str(description);
    }
    if let Some(Value::Object(properties)) = spec
        .function
        .parameters
        .as_ref()
        .and_then(|p| p.get("properties"))
    {
        for name in properties.keys() {
            text.push(' ');
            text.push_str(&words_of(name));
        }
    }
    text
}

/// `get_forecastDays-v2` → `get forecast Days v2`.
fn words_of(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 8);
    let mut previous_lower = false;
    for c in text.chars() {
        if c == '_' || c == '-' || c == '.' || c == '/' {
            out.push(' ');
            previous_lower = false;
            continue;
        }
        if c.is_uppercase() && previous_lower {
            out.push(' ');
        }
        previous_lower = c.is_lowercase() || c.is_ascii_digit();
        out.push(c);
    }
    out
}

impl Tool for ToolSearch {
    fn name(&self) -> &str {
        TOOL_SEARCH
    }

    fn spec(&self) -> ToolSpec {
        ToolSpec {
            kind: "function".to_string(),
            function: FunctionSpec {
                name: TOOL_SEARCH.to_string(),
                description: Some(format!(
                    "Find tools by what they do among {} more tools that are not listed here, from MCP servers ({}). The tools found can be called from the next reply.",
                    self.catalog.len(),
                    self.servers()
                )),
                parameters: Some(json!({
                    "type": "object",
                    "properties": {
                        "query": {"type": "string", "description": "What the tool should do, in a few words, or its exact name"},
                        "limit": {"type": "integer", "minimum": 1, "maximum": MAX_RESULTS, "description": "How many tools to return (default 5, at least 3)"}
                    },
                    "required": ["query"],
                    "additionalProperties": false
                })),
            },
        }
    }

    fn access(&self, _args: &Value, _workspace: &Workspace) -> Access {
        Access::Read(Vec::new())
    }

    fn finds_tools(&self) -> bool {
        true
    }

    fn call(&self, args: &Value, _workspace: &Workspace) -> ToolOutcome {
        let Some(query) = args
            .get("query")
            .and_then(Value::as_str)
            .filter(|q| !q.trim().is_empty())
        else {
            return ToolOutcome::failure(
                "`tool_search` needs `query`: what the tool should do, in a few words",
            );
        };
        let limit = args
            .get("limit")
            .and_then(Value::as_u64)
            .map_or(DEFAULT_RESULTS, |l| {
                (l as usize).clamp(MIN_RESULTS, MAX_RESULTS)
            });
        let found = self.rank(query, limit);
        let text = self.result_text(query, &found);
        let mut seen = HashSet::new();
        let names: Vec<String> = found
            .iter()
            .map(|&index| self.catalog[index].function.name.clone())
            .filter(|name| seen.insert(name.clone()))
            .collect();
        if names.is_empty() {
            ToolOutcome::success(text).nothing_found()
        } else {
            ToolOutcome::success(text).revealing(names)
        }
    }

    fn untrusted_output(&self) -> bool {
        // Names and descriptions come from the servers.
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(name: &str, description: &str, properties: &[&str]) -> ToolSpec {
        let properties: serde_json::Map<String, Value> = properties
            .iter()
            .map(|p| (p.to_string(), json!({"type": "string"})))
            .collect();
        ToolSpec {
            kind: "function".into(),
            function: FunctionSpec {
                name: name.into(),
                description: Some(description.into()),
                parameters: Some(json!({"type": "object", "properties": properties})),
            },
        }
    }

    fn catalog() -> ToolSearch {
        ToolSearch::new(vec![
            spec(
                "weather__get_forecast",
                "Weather forecast for a city",
                &["city", "days"],
            ),
            spec(
                "crm__find_customer",
                "Look up a customer by email",
                &["email"],
            ),
            spec(
                "crm__forecast_sales",
                "Projected sales for a quarter",
                &["quarter"],
            ),
            spec("files__read_text_file", "Read a text file", &["path"]),
        ])
    }

    #[test]
    fn words_split_names_and_camel_case() {
        assert_eq!(words_of("get_forecastDays-v2"), "get forecast Days v2");
    }

    #[test]
    fn the_best_match_comes_first_and_an_exact_name_before_it() {
        let search = catalog();
        assert_eq!(search.rank("weather in a city", 2)[0], 0);
        assert_eq!(search.rank("customer email", 5)[0], 1);
        assert_eq!(search.rank("forecast_sales", 5)[0], 2);
        assert_eq!(search.rank("crm__forecast_sales", 1), vec![2]);
        assert_eq!(search.rank("read_text_file", 1), vec![3]);
        assert!(search.rank("zzz qqq", 5).is_empty());
    }

    #[test]
    fn a_search_shows_signatures_and_reveals_what_it_found() {
        let search = catalog();
        let workspace_dir = tempfile::tempdir().unwrap();
        let workspace =
            Workspace::new(workspace_dir.path(), rein_tools::ToolLimits::default()).unwrap();
        let outcome = search.call(&json!({"query": "customer", "limit": 1}), &workspace);
        assert!(outcome.ok);
        // At least three when three match: the best first.
        assert_eq!(outcome.reveals[0], "crm__find_customer");
        assert!(outcome.reveals.len() <= MIN_RESULTS);
        assert!(
            outcome.text.contains("Next: call `crm__find_customer`"),
            "{}",
            outcome.text
        );
        assert!(
            outcome
                .text
                .contains("- crm__find_customer(email?: string)"),
            "{}",
            outcome.text
        );
        assert!(
            outcome.text.contains(r#"parameters: {"type":"object""#),
            "{}",
            outcome.text
        );
        let nothing = search.call(&json!({"query": "zzz"}), &workspace);
        assert!(nothing.ok && nothing.found_nothing && nothing.reveals.is_empty());
        assert!(
            nothing
                .text
                .contains("The tools cover: weather__get… (1), crm__find… (1), crm__forecast… (1), files__read… (1)."),
            "{}",
            nothing.text
        );
        assert!(!search.call(&json!({}), &workspace).ok);
    }

    #[test]
    fn the_description_names_the_servers_behind_it() {
        let description = catalog().spec().function.description.unwrap();
        assert!(
            description.contains(
                "among 4 more tools that are not listed here, from MCP servers (weather: 1 tool, crm: 2 tools, files: 1 tool)"
            ),
            "{description}"
        );
    }
}
