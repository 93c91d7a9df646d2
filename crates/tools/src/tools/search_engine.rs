//! Walking the workspace and matching file contents or file paths: the machinery
//! behind `search` and its zero-match probes.

use std::path::{Path, PathBuf};

use grep_matcher::Matcher;
use grep_regex::{RegexMatcher, RegexMatcherBuilder};
use grep_searcher::{sinks::Lossy, BinaryDetection, SearcherBuilder};
use ignore::overrides::{Override, OverrideBuilder};
use ignore::WalkBuilder;

/// Which files a search visits.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Scope<'a> {
    /// The directory or file searched.
    pub path: &'a Path,
    /// The workspace root, for relative paths.
    pub root: &'a Path,
    /// Only files whose names match this glob.
    pub glob: Option<&'a str>,
    /// Also hidden files and files that `.gitignore` excludes (`.git` itself never).
    pub everything: bool,
    /// Files visited at most.
    pub max_files: usize,
}

/// One matching line, or one matching file (line 0).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Hit {
    /// The file.
    pub path: PathBuf,
    /// The line number, 1-based; 0 for a file-name match.
    pub line: u64,
    /// The line's text; empty for a file-name match.
    pub text: String,
    /// Where in `text` the match starts (a byte offset; 0 for a file-name match).
    pub at: usize,
}

/// What a search found.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Tally {
    /// Matches counted (lines, or files for a name search).
    pub count: usize,
    /// Files with at least one match.
    pub files: usize,
    /// The first matches, in walk order.
    pub hits: Vec<Hit>,
    /// Whether counting stopped at the cap or the file budget.
    pub incomplete: bool,
}

/// How file paths are matched in a name search.
#[derive(Debug, Clone)]
pub(crate) enum NameMatcher {
    /// A regular expression over the path relative to the root.
    Regex(regex::Regex),
    /// A glob (gitignore syntax) over the path.
    Glob(Override),
}

impl NameMatcher {
    fn matches(&self, relative: &str, absolute: &Path) -> bool {
        match self {
            Self::Regex(regex) => regex.is_match(relative),
            Self::Glob(glob) => glob.matched(absolute, false).is_whitelist(),
        }
    }
}

/// A regex for `word` not inside a longer word: a boundary at each end that is a word
/// character (`\bcalc\b`; `--max` gets none before its dashes).
pub(crate) fn whole_word_regex(word: &str) -> String {
    let wordy = |c: Option<char>| c.is_some_and(|c| c.is_alphanumeric() || c == '_');
    let start = if wordy(word.chars().next()) {
        r"\b"
    } else {
        ""
    };
    let end = if wordy(word.chars().next_back()) {
        r"\b"
    } else {
        ""
    };
    format!("{start}{}{end}", regex::escape(word))
}

/// A line matcher for `pattern`; matches never span lines.
pub(crate) fn content_matcher(
    pattern: &str,
    case_insensitive: bool,
) -> Result<RegexMatcher, String> {
    RegexMatcherBuilder::new()
        .case_insensitive(case_insensitive)
        .line_terminator(Some(b'\n'))
        .build(pattern)
        .map_err(|error| error.to_string())
}

/// A file-path pattern: a regular expression, or a glob when the model wrote one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum NamePattern {
    /// A regular expression over the path relative to the root.
    Regex(String),
    /// A glob in gitignore syntax.
    Glob(String),
}

impl NamePattern {
    /// The matcher for this pattern; globs are rooted at `root`.
    pub fn matcher(&self, root: &Path, case_insensitive: bool) -> Result<NameMatcher, String> {
        match self {
            Self::Regex(pattern) => name_regex(pattern, case_insensitive),
            Self::Glob(pattern) => name_glob(root, pattern, case_insensitive),
        }
    }
}

/// A name matcher for `pattern` as a regular expression.
fn name_regex(pattern: &str, case_insensitive: bool) -> Result<NameMatcher, String> {
    regex::RegexBuilder::new(pattern)
        .case_insensitive(case_insensitive)
        .build()
        .map(NameMatcher::Regex)
        .map_err(|error| error.to_string())
}

/// A name matcher for `pattern` as a glob rooted at `root`.
fn name_glob(root: &Path, pattern: &str, case_insensitive: bool) -> Result<NameMatcher, String> {
    let mut builder = OverrideBuilder::new(root);
    builder
        .case_insensitive(case_insensitive)
        .map_err(|error| error.to_string())?;
    builder.add(pattern).map_err(|error| error.to_string())?;
    builder
        .build()
        .map(NameMatcher::Glob)
        .map_err(|error| error.to_string())
}

/// The regular files in scope, sorted by path; symbolic links are never followed.
fn files(scope: Scope<'_>) -> Result<impl Iterator<Item = PathBuf>, String> {
    let mut builder = WalkBuilder::new(scope.path);
    builder
        .require_git(false)
        .sort_by_file_name(|a, b| a.cmp(b));
    if scope.everything {
        builder
            .standard_filters(false)
            .filter_entry(|entry| entry.file_name() != ".git");
    }
    if let Some(glob) = scope.glob {
        let base = if scope.path.is_dir() {
            scope.path
        } else {
            scope.root
        };
        let mut overrides = OverrideBuilder::new(base);
        overrides.add(glob).map_err(|error| error.to_string())?;
        builder.overrides(overrides.build().map_err(|error| error.to_string())?);
    }
    Ok(builder
        .build()
        .filter_map(Result::ok)
        .filter(|entry| entry.file_type().is_some_and(|kind| kind.is_file()))
        .map(ignore::DirEntry::into_path)
        .take(scope.max_files))
}

/// Whether any file is in `scope` (a glob may leave none).
pub(crate) fn has_files(scope: Scope<'_>) -> Result<bool, String> {
    Ok(files(scope)?.next().is_some())
}

/// The files of `scope` that its glob leaves out: how many files the glob kept, how
/// many the scope holds without it, and the left-out ones counted by extension (`""`
/// for none), most first. `None` without a glob.
pub(crate) fn left_out_by_glob(scope: Scope<'_>) -> Result<Option<LeftOut>, String> {
    if scope.glob.is_none() {
        return Ok(None);
    }
    let kept: std::collections::BTreeSet<PathBuf> = files(scope)?.collect();
    let mut by_extension: std::collections::BTreeMap<String, usize> = Default::default();
    let mut total = 0;
    for path in files(Scope {
        glob: None,
        ..scope
    })? {
        total += 1;
        if !kept.contains(&path) {
            let extension = path
                .extension()
                .map(|e| e.to_string_lossy().into_owned())
                .unwrap_or_default();
            *by_extension.entry(extension).or_default() += 1;
        }
    }
    let mut left_out: Vec<(String, usize)> = by_extension.into_iter().collect();
    left_out.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    Ok(Some(LeftOut {
        kept: kept.len(),
        total,
        by_extension: left_out,
    }))
}

/// What a glob left out of a search.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct LeftOut {
    /// Files the glob kept.
    pub kept: usize,
    /// Files in scope without the glob.
    pub total: usize,
    /// The files it left out, by extension, most first.
    pub by_extension: Vec<(String, usize)>,
}

/// Counts lines matching `matcher` up to `max_count`, keeping the first `keep`.
pub(crate) fn search_contents(
    scope: Scope<'_>,
    matcher: &RegexMatcher,
    keep: usize,
    max_count: usize,
) -> Result<Tally, String> {
    let mut searcher = SearcherBuilder::new()
        .binary_detection(BinaryDetection::quit(0))
        .line_number(true)
        .build();
    let mut tally = Tally::default();
    let mut visited = 0;
    for path in files(scope)? {
        visited += 1;
        let before = tally.count;
        let sink = Lossy(|line, text: &str| {
            tally.count += 1;
            if tally.hits.len() < keep {
                let text = text.trim_end_matches(['\n', '\r']);
                let at = matcher
                    .find(text.as_bytes())
                    .ok()
                    .flatten()
                    .map_or(0, |found| found.start());
                tally.hits.push(Hit {
                    path: path.clone(),
                    line,
                    text: text.to_string(),
                    at,
                });
            }
            Ok(tally.count < max_count)
        });
        if searcher.search_path(matcher, &path, sink).is_err() {
            continue;
        }
        if tally.count > before {
            tally.files += 1;
        }
        if tally.count >= max_count {
            tally.incomplete = true;
            break;
        }
    }
    tally.incomplete |= visited >= scope.max_files;
    Ok(tally)
}

/// Counts files whose paths (relative to the root) match `matcher`, up to
/// `max_count`, keeping the first `keep`.
pub(crate) fn search_names(
    scope: Scope<'_>,
    matcher: &NameMatcher,
    keep: usize,
    max_count: usize,
) -> Result<Tally, String> {
    let mut tally = Tally::default();
    let mut visited = 0;
    for path in files(scope)? {
        visited += 1;
        let relative = path
            .strip_prefix(scope.root)
            .unwrap_or(&path)
            .to_string_lossy()
            .into_owned();
        if !matcher.matches(&relative, &path) {
            continue;
        }
        tally.count += 1;
        tally.files += 1;
        if tally.hits.len() < keep {
            tally.hits.push(Hit {
                path: path.clone(),
                line: 0,
                text: String::new(),
                at: 0,
            });
        }
        if tally.count >= max_count {
            tally.incomplete = true;
            break;
        }
    }
    tally.incomplete |= visited >= scope.max_files;
    Ok(tally)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs;

    fn scope<'a>(root: &'a Path, everything: bool) -> Scope<'a> {
        Scope {
            path: root,
            root,
            glob: None,
            everything,
            max_files: 1000,
        }
    }

    #[test]
    fn contents_are_matched_per_line_in_sorted_order_and_binaries_skipped() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        fs::write(root.join("b.txt"), "needle two\n").unwrap();
        fs::write(root.join("a.txt"), "hay\nneedle one\n").unwrap();
        fs::write(root.join("c.bin"), b"needle\0binary").unwrap();
        let matcher = content_matcher("needle", false).unwrap();
        let tally = search_contents(scope(root, false), &matcher, 10, 100).unwrap();
        assert_eq!(tally.count, 2);
        assert_eq!(tally.files, 2);
        assert_eq!(tally.hits[0].path, root.join("a.txt"));
        assert_eq!(
            (tally.hits[0].line, tally.hits[0].text.as_str()),
            (2, "needle one")
        );
    }

    #[test]
    fn counting_stops_at_the_cap() {
        let dir = tempfile::tempdir().unwrap();
        fs::write(dir.path().join("a.txt"), "x\n".repeat(50)).unwrap();
        let matcher = content_matcher("x", false).unwrap();
        let tally = search_contents(scope(dir.path(), false), &matcher, 3, 10).unwrap();
        assert_eq!(
            (tally.count, tally.hits.len(), tally.incomplete),
            (10, 3, true)
        );
    }

    #[test]
    fn hidden_files_are_visited_only_when_asked() {
        let dir = tempfile::tempdir().unwrap();
        fs::write(dir.path().join(".hidden"), "secret\n").unwrap();
        let matcher = content_matcher("secret", false).unwrap();
        assert_eq!(
            search_contents(scope(dir.path(), false), &matcher, 1, 10)
                .unwrap()
                .count,
            0
        );
        assert_eq!(
            search_contents(scope(dir.path(), true), &matcher, 1, 10)
                .unwrap()
                .count,
            1
        );
    }

    #[test]
    fn names_match_by_regex_or_glob() {
        let dir = tempfile::tempdir().unwrap();
        fs::create_dir(dir.path().join("src")).unwrap();
        fs::write(dir.path().join("src/lib.rs"), "").unwrap();
        fs::write(dir.path().join("README.md"), "").unwrap();
        let regex = name_regex(r"src/.*\.rs$", false).unwrap();
        let by_regex = search_names(scope(dir.path(), false), &regex, 10, 10).unwrap();
        assert_eq!(by_regex.hits[0].path, dir.path().join("src/lib.rs"));
        let glob = name_glob(dir.path(), "*.md", false).unwrap();
        let by_glob = search_names(scope(dir.path(), false), &glob, 10, 10).unwrap();
        assert_eq!(by_glob.count, 1);
        assert_eq!(by_glob.hits[0].path, dir.path().join("README.md"));
    }

    #[test]
    fn a_pattern_spanning_lines_is_refused() {
        assert!(content_matcher("a\\nb", false).is_err());
    }
}
