//! When a search finds nothing, probes what would have matched: ignoring case, in
//! hidden and ignored files (each alone, then both together), as literal text, as a
//! file name (or as file contents), and without the glob. Each finding is reported
//! with a count and a first example; a finding that is short (at most 20 hits) is
//! listed in full and leads the reply, so the next step can use it instead of
//! repeating the search.

use super::search::{render, render_hit, Mode};
use super::search_engine::{
    content_matcher, search_contents, search_names, whole_word_regex, NamePattern, Scope, Tally,
};
use crate::text::plural;
use crate::workspace::Workspace;

/// Files visited at most by one probe.
const PROBE_MAX_FILES: usize = 20_000;
/// Matches counted at most by one probe.
const PROBE_MAX_COUNT: usize = 1_000;
/// A finding of at most this many hits that is most likely what was meant is listed.
const LISTED: usize = 20;

/// The content search that found nothing.
#[derive(Debug, Clone, Copy)]
pub(crate) struct ProbeQuery<'a> {
    /// The pattern as the model wrote it.
    pub pattern: &'a str,
    /// The regular expression searched (the escaped pattern after a literal retry).
    pub regex: &'a str,
    /// Whether a literal probe makes sense (the pattern was a valid regex).
    pub literal_retry: bool,
}

/// The reply for a content search without matches.
pub(crate) fn probe_contents(
    workspace: &Workspace,
    scope: Scope<'_>,
    query: &ProbeQuery<'_>,
    shown: &str,
) -> Probed {
    let normal = Scope {
        max_files: PROBE_MAX_FILES,
        ..scope
    };
    let everything = Scope {
        everything: true,
        ..normal
    };
    let mut tried = vec!["case-insensitive", "in hidden and ignored files"];
    let mut findings = Vec::new();
    if let Some(tally) = content_tally(normal, query.regex, true) {
        findings.push(listed(
            workspace,
            "case-insensitive, it matches",
            &tally,
            "line",
        ));
    }
    if let Some(tally) = content_tally(everything, query.regex, false) {
        findings.push(listed(
            workspace,
            "in hidden or ignored files, it matches",
            &tally,
            "line",
        ));
    }
    // Both at once: `api_token_ttl` for the `API_TOKEN_TTL` of a hidden `.config/` file.
    if findings.iter().all(Option::is_none) {
        if let Some(tally) = content_tally(everything, query.regex, true) {
            findings.push(listed(
                workspace,
                "case-insensitive, in hidden or ignored files, it matches",
                &tally,
                "line",
            ));
        }
    }
    let literal = regex::escape(query.pattern);
    if query.literal_retry && literal != query.pattern {
        tried.push("as literal text");
        if let Some(tally) = content_tally(normal, &literal, false) {
            findings.push(listed(
                workspace,
                "as literal text, it matches",
                &tally,
                "line",
            ));
        }
    }
    tried.push("as a file name");
    let names = NamePattern::Regex(query.regex.to_string());
    if let Some(tally) = names_tally(workspace, normal, &names, true) {
        findings.push(
            listed(workspace, "as a file name, it matches", &tally, "file")
                .map(|found| found.hint(" (use mode \"files\" to list them)")),
        );
    }
    if scope.glob.is_some() {
        tried.push("without the glob");
        let unglobbed = Scope {
            glob: None,
            ..normal
        };
        if let Some(tally) = content_tally(unglobbed, query.regex, false) {
            findings.push(listed(
                workspace,
                "without the glob, it matches",
                &tally,
                "line",
            ));
        }
    }
    if findings.iter().all(Option::is_none) {
        word_probe(workspace, normal, query.pattern, &mut findings, &mut tried);
    }
    summarize(query.pattern, shown, findings, &tried)
}

/// When nothing else matched a pattern of several words (or of one word with more
/// around it), its longest words alone (in file contents, any case), longest first:
/// the first word found is the finding, as a whole word or else inside longer words,
/// said so (`calc` in `calculate_total` is not `calc`).
fn word_probe(
    workspace: &Workspace,
    scope: Scope<'_>,
    pattern: &str,
    findings: &mut Vec<Option<Finding>>,
    tried: &mut Vec<&str>,
) {
    let words = probe_words(pattern);
    if words.is_empty() {
        return;
    }
    tried.push("its longest words alone");
    let probe = |regex: &str, lead: &str| {
        content_tally(scope, regex, true).and_then(|tally| listed(workspace, lead, &tally, "line"))
    };
    for word in &words {
        let alone = format!("as the word `{word}` alone (any case), it matches");
        let inside = format!("`{word}` only inside longer words (any case), it matches");
        let found =
            probe(&whole_word_regex(word), &alone).or_else(|| probe(&regex::escape(word), &inside));
        if found.is_some() {
            findings.push(found);
            return;
        }
    }
}

/// Words too common to probe alone.
const COMMON_WORDS: [&str; 8] = ["the", "and", "for", "with", "from", "that", "this", "into"];

/// Words probed alone when a pattern of several words matched nothing (`test failed`
/// for a log that says `FAILED tests/…`, `web.*chart-lib` for JSON on several lines,
/// `// TODO` for `# TODO`): the three longest of at least three letters, longest first.
fn probe_words(pattern: &str) -> Vec<String> {
    let mut words: Vec<String> = Vec::new();
    for word in pattern.split(|c: char| !(c.is_alphanumeric() || c == '_' || c == '-')) {
        let common = COMMON_WORDS.iter().any(|w| w.eq_ignore_ascii_case(word));
        if word.chars().count() >= 3
            && !common
            && !words.iter().any(|w| w.eq_ignore_ascii_case(word))
        {
            words.push(word.to_string());
        }
    }
    // One word is worth a probe only when the pattern is more than that word
    // (`// TODO` in a Python project, whose comments are `# TODO`).
    let only_the_word = words.len() == 1 && words[0].eq_ignore_ascii_case(pattern.trim());
    if words.is_empty() || only_the_word {
        return Vec::new();
    }
    // Stable: among equally long words, the pattern's order.
    words.sort_by_key(|w| std::cmp::Reverse(w.chars().count()));
    words.truncate(3);
    words
}

/// The reply for a file-path search without matches.
pub(crate) fn probe_names(
    workspace: &Workspace,
    scope: Scope<'_>,
    pattern: &NamePattern,
    as_written: &str,
    shown: &str,
) -> Probed {
    let normal = Scope {
        max_files: PROBE_MAX_FILES,
        ..scope
    };
    let everything = Scope {
        everything: true,
        ..normal
    };
    let mut tried = vec!["case-insensitive", "in hidden and ignored files"];
    let mut findings = Vec::new();
    if let Some(tally) = names_tally(workspace, normal, pattern, true) {
        findings.push(listed(
            workspace,
            "case-insensitive, it matches",
            &tally,
            "file",
        ));
    }
    if let Some(tally) = names_tally(workspace, everything, pattern, false) {
        findings.push(listed(
            workspace,
            "in hidden or ignored files, it matches",
            &tally,
            "file",
        ));
    }
    if findings.iter().all(Option::is_none) {
        if let Some(tally) = names_tally(workspace, everything, pattern, true) {
            findings.push(listed(
                workspace,
                "case-insensitive, in hidden or ignored files, it matches",
                &tally,
                "file",
            ));
        }
    }
    if let NamePattern::Regex(regex) = pattern {
        tried.push("in file contents");
        // As written, else in any case (`userrepository` for `class UserRepository`),
        // else in hidden and ignored files too (`API_TOKEN_TTL` in `.config/`); in the
        // files the glob names, else in any file (a glob is about names).
        let globs = std::iter::once(scope.glob).chain(scope.glob.map(|_| None));
        let found = globs.into_iter().find_map(|glob| {
            let normal = Scope { glob, ..normal };
            let everything = Scope { glob, ..everything };
            [
                (normal, false, "in file contents, it matches"),
                (normal, true, "in file contents (any case), it matches"),
                (
                    everything,
                    false,
                    "in the contents of hidden or ignored files, it matches",
                ),
                (
                    everything,
                    true,
                    "in the contents of hidden or ignored files (any case), it matches",
                ),
            ]
            .into_iter()
            .find_map(|(scope, any_case, lead)| {
                content_tally(scope, regex, any_case)
                    .filter(|tally| tally.count > 0)
                    .map(|tally| (tally, lead))
            })
        });
        if let Some((tally, lead)) = found {
            findings.push(
                listed(workspace, lead, &tally, "line")
                    .map(|found| found.hint(" (use mode \"content\" to list them)")),
            );
        }
    }
    if scope.glob.is_some() {
        tried.push("without the glob");
        let unglobbed = Scope {
            glob: None,
            ..normal
        };
        if let Some(tally) = names_tally(workspace, unglobbed, pattern, false) {
            findings.push(listed(
                workspace,
                "without the glob, it matches",
                &tally,
                "file",
            ));
        }
    }
    if findings.iter().all(Option::is_none) {
        word_probe(workspace, normal, as_written, &mut findings, &mut tried);
    }
    summarize(as_written, shown, findings, &tried)
}

/// The lines of the files in `scope` that `regex` matches (in any case when
/// `case_insensitive`), or `None` when it is no valid pattern or the walk failed.
fn content_tally(scope: Scope<'_>, regex: &str, case_insensitive: bool) -> Option<Tally> {
    let matcher = content_matcher(regex, case_insensitive).ok()?;
    search_contents(scope, &matcher, LISTED, PROBE_MAX_COUNT).ok()
}

fn names_tally(
    workspace: &Workspace,
    scope: Scope<'_>,
    pattern: &NamePattern,
    case_insensitive: bool,
) -> Option<Tally> {
    let matcher = pattern.matcher(workspace.root(), case_insensitive).ok()?;
    search_names(scope, &matcher, LISTED, PROBE_MAX_COUNT).ok()
}

/// One probe's finding: a sentence, and the hits themselves when they are listed.
struct Finding {
    sentence: String,
    listing: Option<String>,
}

impl Finding {
    /// The sentence with `text` after it, unless the hits are listed.
    fn hint(mut self, text: &str) -> Self {
        if self.listing.is_none() {
            self.sentence.push_str(text);
        }
        self
    }
}

/// `"<lead> 3 lines (e.g. src/a.rs:4: text)"`, or `None` when nothing matched.
fn finding(workspace: &Workspace, lead: &str, tally: &Tally, noun: &str) -> Option<Finding> {
    let example = tally.hits.first()?;
    Some(Finding {
        sentence: format!(
            "{lead} {} (e.g. {})",
            counted(tally, noun),
            render_hit(workspace, example)
        ),
        listing: None,
    })
}

/// Like [`finding`], but up to [`LISTED`] hits are listed in full, as a search that
/// found them lists them.
fn listed(workspace: &Workspace, lead: &str, tally: &Tally, noun: &str) -> Option<Finding> {
    if tally.incomplete
        || tally.count == 0
        || tally.count > LISTED
        || tally.hits.len() < tally.count
    {
        return finding(workspace, lead, tally, noun);
    }
    let mode = if noun == "file" {
        Mode::Files
    } else {
        Mode::Content
    };
    Some(Finding {
        sentence: format!("{lead} {}", counted(tally, noun)),
        listing: Some(render(workspace, tally, mode, LISTED)),
    })
}

fn counted(tally: &Tally, noun: &str) -> String {
    if tally.incomplete {
        format!("at least {}", plural(tally.count, noun))
    } else {
        plural(tally.count, noun)
    }
}

/// The reply for a search without matches, as its probes found them; `found` is
/// false when nothing matched anywhere.
pub(crate) struct Probed {
    /// The reply.
    pub text: String,
    /// Whether any probe found something.
    pub found: bool,
}

fn summarize(pattern: &str, shown: &str, findings: Vec<Option<Finding>>, tried: &[&str]) -> Probed {
    let findings: Vec<Finding> = findings.into_iter().flatten().collect();
    if findings.is_empty() {
        return Probed {
            text: format!(
                "No matches for `{pattern}` in `{shown}`; nothing else matches either (tried {}): try a different pattern.",
                tried.join(", ")
            ),
            found: false,
        };
    }
    Probed {
        text: summarize_findings(pattern, shown, findings),
        found: true,
    }
}

fn summarize_findings(pattern: &str, shown: &str, findings: Vec<Finding>) -> String {
    // A listed finding comes first, as a result the next step can use; the rest
    // follow as sentences.
    let (mut listings, sentences): (Vec<Finding>, Vec<Finding>) =
        findings.into_iter().partition(|f| f.listing.is_some());
    let joined: Vec<String> = sentences
        .into_iter()
        .chain(listings.iter().skip(1).map(|f| Finding {
            sentence: f.sentence.clone(),
            listing: None,
        }))
        .map(|f| f.sentence)
        .collect();
    let others = (!joined.is_empty()).then(|| format!("{}.", capitalized(&joined.join("; "))));
    if !listings.is_empty() {
        let first = listings.swap_remove(0);
        let how = first
            .sentence
            .split(", it matches")
            .next()
            .unwrap_or_default();
        // The finding leads, as the result it is; that the pattern as written
        // matched nothing comes after it.
        let mut out = format!(
            "{}: {}\n(`{pattern}` as written matches nothing in `{shown}`.)",
            capitalized(how),
            first.listing.as_deref().unwrap_or_default()
        );
        if let Some(others) = others {
            out.push('\n');
            out.push_str(&others);
        }
        return out;
    }
    let mut out = format!("No matches for `{pattern}` in `{shown}`.");
    if let Some(others) = others {
        out.push(' ');
        out.push_str(&others);
    }
    out
}

fn capitalized(text: &str) -> String {
    let mut characters = text.chars();
    characters
        .next()
        .map(|first| first.to_uppercase().chain(characters).collect())
        .unwrap_or_default()
}
