//! `search`: regular-expression search over file contents or file paths.

use grep_regex::RegexMatcher;
use serde_json::{json, Value};

use super::enclosing::{FileLines, SHOWN_CHARS as ENCLOSING_CHARS};
use super::search_engine::{
    content_matcher, has_files, left_out_by_glob, search_contents, search_names, Hit, LeftOut,
    NamePattern, Scope, Tally,
};
use super::search_probes::{probe_contents, probe_names, ProbeQuery};
use super::spec::function_spec;
use crate::args::{optional_string, read_access, required_string, ArgError};
use crate::file_kind::{read_refusal, with_regular_siblings, FileKind};
use crate::outcome::{Access, ToolOutcome};
use crate::text::{plural, snippet, window_around};
use crate::tool::Tool;
use crate::workspace::Workspace;

/// Searches file contents (or file paths) with a regular expression; respects
/// `.gitignore` and skips hidden files. With no match it reports what would have
/// matched.
#[derive(Debug, Default, Clone, Copy)]
pub struct Search;

const NAME: &str = "search";
/// Matches counted at most before the count is reported as a lower bound.
const MAX_COUNTED: usize = 10_000;
/// Files visited at most by one search.
pub(crate) const MAX_FILES: usize = 100_000;
/// Characters of a matching line shown.
const LINE_CHARS: usize = 200;

/// What to match.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Mode {
    /// Lines of file contents.
    Content,
    /// File paths.
    Files,
}

impl Tool for Search {
    fn name(&self) -> &str {
        NAME
    }

    fn spec(&self) -> rein_protocol::ToolSpec {
        function_spec(
            NAME,
            "Search file contents for a regular expression and list matching lines as path:line: text, or with mode \"files\" list the files whose path matches it. Respects .gitignore and skips hidden files.",
            json!({
                "type": "object",
                "properties": {
                    "pattern": {"type": "string", "description": "Regular expression (Rust syntax); matches within one line."},
                    "path": {"type": "string", "description": "Directory or file to search (default: the workspace root)."},
                    "glob": {"type": "string", "description": "Only files whose names match this glob; leave it out to search every file."},
                    "mode": {"type": "string", "enum": ["content", "files"], "description": "\"content\" (default) matches lines; \"files\" matches file paths."}
                },
                "required": ["pattern"],
                "additionalProperties": false
            }),
        )
    }

    fn access(&self, args: &Value, workspace: &Workspace) -> Access {
        read_access(args, workspace, Some("."))
    }

    fn call(&self, args: &Value, workspace: &Workspace) -> ToolOutcome {
        match parse(args) {
            Ok(query) => search(workspace, query),
            Err(error) => error.into_outcome(NAME),
        }
    }
}

struct Query<'a> {
    pattern: &'a str,
    path: &'a str,
    glob: Option<&'a str>,
    mode: Mode,
}

fn parse(args: &Value) -> Result<Query<'_>, ArgError> {
    let mode = match optional_string(args, "mode")? {
        None | Some("content") => Mode::Content,
        Some("files") => Mode::Files,
        Some(other) => {
            return Err(ArgError::Mistyped {
                name: "mode",
                expected: "\"content\" or \"files\"",
                got: format!("\"{other}\""),
            })
        }
    };
    Ok(Query {
        pattern: required_string(args, "pattern")?,
        path: optional_string(args, "path")?.unwrap_or("."),
        glob: optional_string(args, "glob")?.filter(|glob| !glob.trim().is_empty()),
        mode,
    })
}

fn search(workspace: &Workspace, query: Query<'_>) -> ToolOutcome {
    let mut resolved = match workspace.resolve(query.path) {
        Ok(resolved) => resolved,
        Err(refusal) => return ToolOutcome::failure(refusal.to_string()),
    };
    let mut shown = workspace.relative(&resolved);
    // A path that does not exist (a small model's `workspace` for the root) only hides
    // what was asked for: the closest directory that exists is searched instead, and
    // the reply says so, as for a glob no file matches.
    let mut moved_path = String::new();
    if std::fs::symlink_metadata(&resolved).is_err() {
        let nearest = workspace.nearest_directory(&resolved);
        let nearest_shown = workspace.relative(&nearest);
        moved_path = match nearest_shown.as_str() {
            "." => format!("`{shown}` does not exist, so the whole workspace was searched.\n"),
            _ => format!("`{shown}` does not exist, so `{nearest_shown}` was searched.\n"),
        };
        resolved = nearest;
        shown = nearest_shown;
    }
    match std::fs::metadata(&resolved) {
        Err(error) => return ToolOutcome::failure(format!("cannot search `{shown}`: {error}.")),
        Ok(metadata) => {
            let kind = FileKind::of(&metadata.file_type());
            if kind != FileKind::Directory {
                if let Some(refusal) = read_refusal(kind, &shown) {
                    return ToolOutcome::failure(with_regular_siblings(refusal, &resolved, &shown));
                }
            }
        }
    }
    let mut scope = Scope {
        path: &resolved,
        root: workspace.root(),
        glob: query.glob,
        everything: false,
        max_files: MAX_FILES,
    };
    // A glob that no file matches (a small model's `*.rs` in a Python project) only
    // hides what was asked for: it is left out, and the reply says so.
    let mut dropped_glob = String::new();
    if let Some(glob) = query.glob {
        match has_files(scope) {
            Ok(false) => {
                scope.glob = None;
                dropped_glob = format!(
                    "No file in `{shown}` matches the glob `{glob}`, so it was left out.\n"
                );
            }
            Ok(true) => {}
            Err(error) => return ToolOutcome::failure(glob_error(&query, &error)),
        }
    }
    // A glob narrows what was searched: the reply says what it left out, so a search
    // of one file type is not taken for a search of the workspace.
    let context = workspace.limits().result_context;
    let glob_scope = match left_out_by_glob(scope).map(|o| o.filter(|_| context)) {
        Ok(Some(left_out)) => scope_note(scope.glob.unwrap_or_default(), &shown, &left_out),
        Ok(None) => String::new(),
        Err(error) => return ToolOutcome::failure(glob_error(&query, &error)),
    };
    let query = Query {
        glob: scope.glob,
        ..query
    };
    let keep = workspace.limits().search_results.max(1);
    let result = match query.mode {
        Mode::Content => search_content_mode(workspace, scope, &query, &shown, keep, &glob_scope),
        Mode::Files => search_files_mode(workspace, scope, &query, &shown, keep, &glob_scope),
    };
    let notes = format!("{moved_path}{dropped_glob}");
    let hint = match workspace.limits().data_hint && resolved.is_file() {
        true => super::records::data_hint(&resolved, &shown)
            .map(|hint| format!("\n{hint}"))
            .unwrap_or_default(),
        false => String::new(),
    };
    match result {
        Ok((text, false)) => ToolOutcome::success(format!("{notes}{text}{hint}")),
        Ok((text, true)) => ToolOutcome::success(format!("{notes}{text}")).nothing_found(),
        Err(text) => ToolOutcome::failure(text),
    }
}

/// Searches contents; `glob_scope` (what a glob left out) goes before the hits when
/// there are any (with none, the probe searches without the glob).
fn search_content_mode(
    workspace: &Workspace,
    scope: Scope<'_>,
    query: &Query<'_>,
    shown: &str,
    keep: usize,
    glob_scope: &str,
) -> Result<(String, bool), String> {
    let (regex, note) = match content_matcher(query.pattern, false) {
        Ok(_) => (query.pattern.to_string(), String::new()),
        Err(error) if regex::Regex::new(query.pattern).is_ok() => return Err(spans_lines(&error)),
        Err(error) => {
            let literal = regex::escape(query.pattern);
            (literal, format!("`{}` is not a valid regular expression ({}); searched for it as literal text.\n", query.pattern, error_summary(&error)))
        }
    };
    let matcher = content_matcher(&regex, false).map_err(|error| spans_lines(&error))?;
    let tally = search_contents(scope, &matcher, keep, MAX_COUNTED)
        .map_err(|error| glob_error(query, &error))?;
    if tally.count == 0 {
        let probe = ProbeQuery {
            regex: &regex,
            literal_retry: note.is_empty(),
            pattern: query.pattern,
        };
        let probed = probe_contents(workspace, scope, &probe, shown);
        return Ok((format!("{note}{}", probed.text), !probed.found));
    }
    let left_out_matches = match glob_scope.is_empty() {
        true => String::new(),
        false => matches_left_out(scope, &matcher, &tally),
    };
    Ok((
        format!(
            "{note}{glob_scope}{left_out_matches}{}",
            render(workspace, &tally, Mode::Content, keep)
        ),
        false,
    ))
}

/// What the files a glob left out hold of the pattern, so a search of one file type
/// is not taken for all there is: "The pattern also matches 4 lines in 3 files the glob
/// left out; search again without `glob` to see them." or "None of the files the glob
/// left out matches the pattern."
fn matches_left_out(scope: Scope<'_>, matcher: &RegexMatcher, kept: &Tally) -> String {
    let Ok(all) = search_contents(
        Scope {
            glob: None,
            ..scope
        },
        matcher,
        0,
        MAX_COUNTED,
    ) else {
        return String::new();
    };
    let lines = all.count.saturating_sub(kept.count);
    let files = all.files.saturating_sub(kept.files);
    match lines {
        0 => "None of the files the glob left out matches the pattern.\n".to_string(),
        _ => format!(
            "The pattern also matches {}{} in {} the glob left out; search again without `glob` to see them.\n",
            if all.incomplete { "at least " } else { "" },
            plural(lines, "line"),
            plural(files, "file"),
        ),
    }
}

/// Searches file paths; `glob_scope` as for [`search_content_mode`].
fn search_files_mode(
    workspace: &Workspace,
    scope: Scope<'_>,
    query: &Query<'_>,
    shown: &str,
    keep: usize,
    glob_scope: &str,
) -> Result<(String, bool), String> {
    let as_regex = NamePattern::Regex(query.pattern.to_string());
    let (pattern, note) = match as_regex.matcher(workspace.root(), false) {
        Ok(_) => (as_regex, String::new()),
        Err(error) => {
            let as_glob = NamePattern::Glob(query.pattern.to_string());
            let how = if as_glob.matcher(workspace.root(), false).is_ok() {
                "matched it as a glob"
            } else {
                "matched it as literal text"
            };
            let note = format!(
                "`{}` is not a valid regular expression ({}); {how}.\n",
                query.pattern,
                error_summary(&error)
            );
            if how.ends_with("glob") {
                (as_glob, note)
            } else {
                (NamePattern::Regex(regex::escape(query.pattern)), note)
            }
        }
    };
    let matcher = pattern.matcher(workspace.root(), false)?;
    let tally = search_names(scope, &matcher, keep, MAX_COUNTED)
        .map_err(|error| glob_error(query, &error))?;
    if tally.count == 0 {
        let probed = probe_names(workspace, scope, &pattern, query.pattern, shown);
        return Ok((format!("{note}{}", probed.text), !probed.found));
    }
    Ok((
        format!(
            "{note}{glob_scope}{}",
            render(workspace, &tally, Mode::Files, keep)
        ),
        false,
    ))
}

/// The line saying what a glob left out, or nothing when it left nothing out: "Only
/// files matching `*.js` were searched in `.`: 2 of 6 files; not searched: 3 .sh
/// files, 1 .md file."
fn scope_note(glob: &str, shown: &str, left_out: &LeftOut) -> String {
    if left_out.by_extension.is_empty() {
        return String::new();
    }
    const KINDS_SHOWN: usize = 6;
    let mut kinds: Vec<String> = left_out
        .by_extension
        .iter()
        .take(KINDS_SHOWN)
        .map(|(extension, count)| match extension.as_str() {
            "" => format!("{count} {} without an extension", files_word(*count)),
            _ => format!("{count} .{extension} {}", files_word(*count)),
        })
        .collect();
    let more: usize = left_out
        .by_extension
        .iter()
        .skip(KINDS_SHOWN)
        .map(|(_, n)| n)
        .sum();
    if more > 0 {
        kinds.push(plural(more, "other file"));
    }
    format!(
        "Only files matching `{glob}` were searched in `{shown}`: {} of {}; not searched: {}.\n",
        left_out.kept,
        plural(left_out.total, "file"),
        kinds.join(", ")
    )
}

fn files_word(count: usize) -> &'static str {
    if count == 1 {
        "file"
    } else {
        "files"
    }
}

/// The reply for a pattern that could only match across lines.
fn spans_lines(error: &str) -> String {
    format!(
        "the pattern cannot be searched: {}. Patterns match within one line; search for a single line of the text.",
        error_summary(error)
    )
}

fn glob_error(query: &Query<'_>, error: &str) -> String {
    format!(
        "the glob `{}` is not valid ({}); use a pattern like \"*.rs\" or \"src/**/*.py\".",
        query.glob.unwrap_or_default(),
        error_summary(error)
    )
}

/// The last non-blank line of an error message, which says what is wrong.
fn error_summary(text: &str) -> &str {
    text.lines()
        .map(str::trim)
        .rfind(|line| !line.is_empty())
        .unwrap_or(text)
}

/// One hit as `path:line: text`, or the path alone for a file-name hit.
pub(crate) fn render_hit(workspace: &Workspace, hit: &Hit) -> String {
    let path = workspace.relative(&hit.path);
    if hit.line == 0 {
        path
    } else {
        format!("{path}:{}: {}", hit.line, around_match(hit))
    }
}

/// A matching line as shown: whole when short, else [`LINE_CHARS`] characters around
/// the match (a minified file's one line shows the part that matched), `…` where cut.
fn around_match(hit: &Hit) -> String {
    let text = hit.text.trim_end();
    if text.chars().count() <= LINE_CHARS {
        return snippet(text, LINE_CHARS);
    }
    window_around(text, hit.at, LINE_CHARS)
}

/// Hits as a search lists them: a count, then one line per hit (a content hit of code
/// followed by the lines that enclose it, `↳ inside line N: …`, see
/// [`FileLines::enclosing`]), and what was left out.
pub(crate) fn render(workspace: &Workspace, tally: &Tally, mode: Mode, keep: usize) -> String {
    let counted = if tally.incomplete {
        format!("at least {}", tally.count)
    } else {
        tally.count.to_string()
    };
    let mut text = match mode {
        Mode::Content => format!(
            "{counted} matching {} in {}:\n",
            if tally.count == 1 { "line" } else { "lines" },
            plural(tally.files, "file")
        ),
        Mode::Files => format!(
            "{counted} matching {}:\n",
            if tally.count == 1 { "file" } else { "files" }
        ),
    };
    let mut file: Option<FileLines> = None;
    // The enclosing lines shown for the hit before, in the same file.
    let mut shown_context: Vec<(std::path::PathBuf, u64)> = Vec::new();
    for hit in &tally.hits {
        text.push_str(&render_hit(workspace, hit));
        text.push('\n');
        if mode != Mode::Content || !workspace.limits().result_context {
            continue;
        }
        if !file.as_ref().is_some_and(|f| f.is_of(&hit.path)) {
            file = FileLines::read(&hit.path);
        }
        // The lines that enclose the hit follow it on a line of their own that reads
        // as no path (a hit copied from the result stays the file's line), left out
        // when the hit before had the same ones or they are hits themselves.
        let chain: Vec<(u64, String)> = file
            .as_ref()
            .map(|f| f.enclosing_chain(hit.line))
            .unwrap_or_default()
            .into_iter()
            .filter(|(line, _)| {
                !tally
                    .hits
                    .iter()
                    .any(|other| other.path == hit.path && other.line == *line)
            })
            .collect();
        let keys: Vec<(std::path::PathBuf, u64)> = chain
            .iter()
            .map(|(line, _)| (hit.path.clone(), *line))
            .collect();
        if !chain.is_empty() && keys != shown_context {
            let inside: Vec<String> = chain
                .iter()
                .map(|(line, enclosing)| {
                    format!("line {line}: {}", snippet(enclosing, ENCLOSING_CHARS))
                })
                .collect();
            text.push_str(&format!("    ↳ inside {}\n", inside.join(" › ")));
        }
        shown_context = keys;
    }
    let rest = tally.count.saturating_sub(keep);
    if rest > 0 {
        let more = if tally.incomplete { "at least " } else { "" };
        text.push_str(&format!(
            "[{more}{rest} more {} not shown; narrow the pattern or path]",
            if rest == 1 { "match" } else { "matches" }
        ));
    }
    text.trim_end().to_string()
}
