//! Repairing a tool name the model wrote: an obvious variant of an offered name, or
//! the only tool whose schema the arguments satisfy.

use serde_json::Value;

use crate::ToolSet;

/// Maps a name the model wrote to a tool that exists when the intent is obvious:
/// case, hyphens vs underscores, a `_tool` / `tool_` affix, or one small typo.
pub fn repair_tool_name(name: &str, valid: &[&str]) -> Option<String> {
    let normalize = |s: &str| {
        let lower = s.trim().to_ascii_lowercase().replace(['-', ' ', '.'], "_");
        let lower = lower
            .strip_prefix("functions_")
            .unwrap_or(&lower)
            .to_string();
        let lower = lower.strip_suffix("_tool").unwrap_or(&lower).to_string();
        lower.strip_prefix("tool_").unwrap_or(&lower).to_string()
    };
    let wanted = normalize(name);
    if wanted.is_empty() {
        return None;
    }
    if let Some(hit) = valid.iter().find(|v| normalize(v) == wanted) {
        return Some(hit.to_string());
    }
    let mut scored: Vec<(f64, &str)> = valid
        .iter()
        .map(|v| (strsim::jaro_winkler(&wanted, &normalize(v)), *v))
        .collect();
    scored.sort_by(|a, b| b.0.total_cmp(&a.0));
    match scored.as_slice() {
        [(best, name), rest @ ..]
            if *best >= 0.92 && rest.first().is_none_or(|(second, _)| best - second > 0.05) =>
        {
            Some(name.to_string())
        }
        _ => None,
    }
}

/// The tool an unknown name means: an obvious variant of a tool's name, else the only
/// tool whose schema the arguments satisfy (`{"command": ..}` is the shell whatever the
/// model called it). `None` when that is ambiguous.
pub fn repaired_name(tools: &ToolSet, name: &str, arguments: &Value) -> Option<String> {
    let names: Vec<&str> = tools.tools().iter().map(|t| t.name.as_str()).collect();
    if let Some(repaired) = repair_tool_name(name, &names) {
        return Some(repaired);
    }
    if arguments.as_object().is_none_or(|args| args.is_empty()) {
        return None;
    }
    let mut fitting = tools
        .tools()
        .iter()
        .filter(|tool| tool.validator.check_value(arguments.clone()).is_ok());
    match (fitting.next(), fitting.next()) {
        (Some(only), None) => Some(only.name.clone()),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const TOOLS: [&str; 4] = ["read_file", "write_file", "list_dir", "shell"];

    #[test]
    fn obvious_name_variants_are_repaired() {
        for (wrong, right) in [
            ("READ_FILE", "read_file"),
            ("read-file", "read_file"),
            ("read_file_tool", "read_file"),
            ("tool_shell", "shell"),
            ("functions.list_dir", "list_dir"),
            ("raed_file", "read_file"),
            ("list_dirr", "list_dir"),
        ] {
            assert_eq!(
                repair_tool_name(wrong, &TOOLS).as_deref(),
                Some(right),
                "{wrong}"
            );
        }
        for hopeless in ["", "  ", "delete_everything", "python", "file"] {
            assert_eq!(repair_tool_name(hopeless, &TOOLS), None, "{hopeless}");
        }
    }
}
