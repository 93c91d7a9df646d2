//! `search`: content and file-name matches, caps, and the zero-match probes.

use rein_tools::{Access, Search, Tool, ToolLimits};
use serde_json::json;

use crate::support::{call, workspace, workspace_with, write};

fn project() -> (tempfile::TempDir, rein_tools::Workspace) {
    let (dir, workspace) = workspace();
    write(
        &workspace,
        "src/a.rs",
        "fn alpha() {}\nfn Beta() {}\nlet x = a+b;\n",
    );
    write(&workspace, "src/b.rs", "fn alpha_two() {}\n");
    write(&workspace, "README.md", "# Alpha project\n");
    write(&workspace, ".gitignore", "target/\n");
    write(&workspace, "target/out.rs", "fn gamma() {}\n");
    write(&workspace, ".config/settings", "gamma = 1\n");
    (dir, workspace)
}

#[test]
fn content_matches_are_listed_as_path_line_text() {
    let (_dir, workspace) = project();
    let outcome = call(&Search, &workspace, json!({"pattern": "fn alpha"}));
    assert!(outcome.ok);
    assert_eq!(
        outcome.text,
        "2 matching lines in 2 files:\nsrc/a.rs:1: fn alpha() {}\nsrc/b.rs:1: fn alpha_two() {}"
    );
}

#[test]
fn a_long_line_is_shown_around_its_match() {
    let (_dir, workspace) = workspace();
    let filler = "lorem ipsum dolor sit amet ".repeat(200);
    write(
        &workspace,
        "config.min.json",
        &format!("{{\"note\":\"{filler}\",\"maxRetries\":17,\"tail\":\"{filler}\"}}"),
    );
    let outcome = call(&Search, &workspace, json!({"pattern": "maxRetries"}));
    let line = outcome.text.lines().nth(1).unwrap();
    assert!(line.starts_with("config.min.json:1: …"), "{line}");
    assert!(line.contains("\"maxRetries\":17"), "{line}");
    assert!(line.ends_with('…') && line.chars().count() < 260, "{line}");
    // A short line is shown whole.
    write(&workspace, "short.txt", "maxRetries = 3\n");
    let short = call(
        &Search,
        &workspace,
        json!({"pattern": "maxRetries", "path": "short.txt"}),
    );
    assert!(
        short.text.ends_with("short.txt:1: maxRetries = 3"),
        "{}",
        short.text
    );
}

#[test]
fn the_path_and_glob_narrow_the_search() {
    let (_dir, workspace) = project();
    let in_file = call(
        &Search,
        &workspace,
        json!({"pattern": "alpha", "path": "src/b.rs"}),
    );
    assert_eq!(
        in_file.text,
        "1 matching line in 1 file:\nsrc/b.rs:1: fn alpha_two() {}"
    );
    let by_glob = call(
        &Search,
        &workspace,
        json!({"pattern": "(?i)alpha", "glob": "*.md"}),
    );
    assert_eq!(
        by_glob.text,
        "Only files matching `*.md` were searched in `.`: 1 of 3 files; not searched: 2 .rs files.\nThe pattern also matches 2 lines in 2 files the glob left out; search again without `glob` to see them.\n1 matching line in 1 file:\nREADME.md:1: # Alpha project"
    );
    // A glob that leaves nothing out says nothing about scope.
    let all_rust = call(
        &Search,
        &workspace,
        json!({"pattern": "alpha", "path": "src", "glob": "*.rs"}),
    );
    assert!(
        all_rust.text.starts_with("2 matching lines in 2 files:"),
        "{}",
        all_rust.text
    );
}

#[test]
fn results_are_capped_with_a_count_of_the_rest() {
    let limits = ToolLimits {
        search_results: 5,
        ..ToolLimits::default()
    };
    let (_dir, workspace) = workspace_with(limits);
    let long_line = format!("hit {}\n", "x".repeat(500));
    write(&workspace, "many.txt", &long_line.repeat(12));
    let outcome = call(&Search, &workspace, json!({"pattern": "hit"}));
    assert!(
        outcome.text.starts_with("12 matching lines in 1 file:\n"),
        "{}",
        outcome.text
    );
    assert_eq!(
        outcome
            .text
            .lines()
            .filter(|line| line.starts_with("many.txt:"))
            .count(),
        5
    );
    assert!(
        outcome
            .text
            .ends_with("[7 more matches not shown; narrow the pattern or path]"),
        "{}",
        outcome.text
    );
    let first = outcome.text.lines().nth(1).unwrap();
    assert!(
        first.chars().count() < 230 && first.ends_with('…'),
        "{first}"
    );
}

#[test]
fn files_mode_matches_paths_by_regex_or_glob() {
    let (_dir, workspace) = project();
    let by_regex = call(
        &Search,
        &workspace,
        json!({"pattern": r"src/.\.rs$", "mode": "files"}),
    );
    assert_eq!(by_regex.text, "2 matching files:\nsrc/a.rs\nsrc/b.rs");
    let by_glob = call(
        &Search,
        &workspace,
        json!({"pattern": "*.md", "mode": "files"}),
    );
    assert!(
        by_glob.text.contains("matched it as a glob"),
        "{}",
        by_glob.text
    );
    assert!(
        by_glob.text.ends_with("1 matching file:\nREADME.md"),
        "{}",
        by_glob.text
    );
}

#[test]
fn an_invalid_regex_is_retried_as_literal_text() {
    let (_dir, workspace) = project();
    let outcome = call(&Search, &workspace, json!({"pattern": "alpha("}));
    assert!(outcome.ok);
    assert!(
        outcome
            .text
            .starts_with("`alpha(` is not a valid regular expression ("),
        "{}",
        outcome.text
    );
    assert!(outcome.text.contains("searched for it as literal text.\n1 matching line in 1 file:\nsrc/a.rs:1: fn alpha() {}"), "{}", outcome.text);
}

#[test]
fn zero_matches_report_what_would_have_matched() {
    let (_dir, workspace) = project();
    let by_case = call(&Search, &workspace, json!({"pattern": "fn beta"}));
    assert!(by_case.ok);
    // A short finding leads, listed as a search lists hits; the miss comes after.
    assert_eq!(
        by_case.text,
        "Case-insensitive: 1 matching line in 1 file:\nsrc/a.rs:2: fn Beta() {}\n(`fn beta` as written matches nothing in `.`.)"
    );

    let hidden = call(&Search, &workspace, json!({"pattern": "gamma"}));
    assert!(
        hidden
            .text
            .starts_with("In hidden or ignored files: 2 matching lines in "),
        "{}",
        hidden.text
    );
    assert!(
        hidden.text.contains("\n.config/settings:1: gamma = 1\n")
            && hidden
                .text
                .ends_with("(`gamma` as written matches nothing in `.`.)"),
        "{}",
        hidden.text
    );

    // Another case and a hidden file at once: both relaxations together find it.
    let both = call(&Search, &workspace, json!({"pattern": "GAMMA"}));
    assert!(
        both.text
            .starts_with("Case-insensitive, in hidden or ignored files: 2 matching lines in ")
            && both.text.contains("\n.config/settings:1: gamma = 1\n"),
        "{}",
        both.text
    );

    let literal = call(&Search, &workspace, json!({"pattern": "a+b"}));
    assert!(
        literal
            .text
            .contains("As literal text: 1 matching line in 1 file:\nsrc/a.rs:3: let x = a+b;"),
        "{}",
        literal.text
    );

    let name = call(&Search, &workspace, json!({"pattern": "README"}));
    assert!(
        name.text
            .contains("As a file name: 1 matching file:\nREADME.md\n(`README` as written"),
        "{}",
        name.text
    );

    let glob = call(
        &Search,
        &workspace,
        json!({"pattern": "alpha_two", "glob": "*.md"}),
    );
    assert!(
        glob.text.contains(
            "Without the glob: 1 matching line in 1 file:\nsrc/b.rs:1: fn alpha_two() {}"
        ),
        "{}",
        glob.text
    );
}

#[test]
fn zero_matches_with_nothing_close_say_to_try_another_pattern() {
    let (_dir, workspace) = project();
    let outcome = call(&Search, &workspace, json!({"pattern": "zebra"}));
    assert!(outcome.ok);
    assert_eq!(
        outcome.text,
        "No matches for `zebra` in `.`; nothing else matches either (tried case-insensitive, in hidden and ignored files, as a file name): try a different pattern."
    );
    let files = call(
        &Search,
        &workspace,
        json!({"pattern": "readme", "mode": "files"}),
    );
    assert!(
        files
            .text
            .contains("Case-insensitive: 1 matching file:\nREADME.md"),
        "{}",
        files.text
    );
    let contents = call(
        &Search,
        &workspace,
        json!({"pattern": "alpha_two", "mode": "files"}),
    );
    assert!(
        contents.text.contains(
            "In file contents: 1 matching line in 1 file:\nsrc/b.rs:1: fn alpha_two() {}"
        ),
        "{}",
        contents.text
    );
}

#[test]
fn several_words_that_match_nothing_are_probed_one_at_a_time() {
    let (dir, workspace) = workspace();
    let log = "tests/test_a.py::test_one PASSED\ntests/test_p.py::test_bulk FAILED\nFAILED tests/test_p.py::test_bulk - assert 0.1 == 0.15\n";
    std::fs::write(dir.path().join("test_output.log"), log).unwrap();
    let outcome = call(&Search, &workspace, json!({"pattern": "test failed"}));
    assert!(outcome.ok);
    assert!(
        outcome.text.starts_with(
            "As the word `failed` alone (any case): 2 matching lines in 1 file:\ntest_output.log:2: tests/test_p.py::test_bulk FAILED\ntest_output.log:3: FAILED tests/test_p.py::test_bulk - assert 0.1 == 0.15\n(`test failed` as written matches nothing"
        ),
        "{}",
        outcome.text
    );
    // A pattern meant for one line, over JSON written on several, as a file name.
    std::fs::write(
        dir.path().join("deps.json"),
        "{\"web\": {\n  \"chart-lib\": \"3.2.1\"\n}}\n",
    )
    .unwrap();
    let names = call(
        &Search,
        &workspace,
        json!({"pattern": "web.*chart-lib", "mode": "files"}),
    );
    assert!(
        names.text.starts_with(
            "As the word `chart-lib` alone (any case): 1 matching line in 1 file:\ndeps.json:2: \"chart-lib\": \"3.2.1\"\n    ↳ inside line 1: {\"web\": {"
        ),
        "{}",
        names.text
    );
    // One word with more around it: `// TODO` where the comments are `# TODO`.
    std::fs::write(
        dir.path().join("main.py"),
        "x = 1\n# TODO: read the limit from --max\n",
    )
    .unwrap();
    let comment = call(&Search, &workspace, json!({"pattern": "// TODO"}));
    assert!(
        comment.text.starts_with(
            "As the word `TODO` alone (any case): 1 matching line in 1 file:\nmain.py:2: # TODO: read the limit from --max"
        ),
        "{}",
        comment.text
    );
    // A word found only inside longer ones is said to be so: `calc` of `def calc()`
    // after it was renamed to `calculate_total`.
    std::fs::write(
        dir.path().join("app.py"),
        "def calculate_total(prices):\n    return sum(prices)\n",
    )
    .unwrap();
    let renamed = call(&Search, &workspace, json!({"pattern": "def calc\\(\\)"}));
    assert!(
        renamed.text.starts_with(
            "`calc` only inside longer words (any case): 1 matching line in 1 file:\napp.py:1: def calculate_total(prices):"
        ),
        "{}",
        renamed.text
    );
    // A single word that matches nothing is not searched again as itself.
    let word = call(&Search, &workspace, json!({"pattern": "zebra"}));
    assert!(
        !word.text.contains("its longest words alone"),
        "{}",
        word.text
    );
    // Words that match nothing alone either: the reply says what was tried.
    let none = call(&Search, &workspace, json!({"pattern": "zebra crossing"}));
    assert!(
        none.text.contains("its longest words alone")
            && none.text.contains("try a different pattern"),
        "{}",
        none.text
    );
}

#[test]
fn a_missing_path_searches_the_nearest_directory_that_exists() {
    let (_dir, workspace) = project();
    let root = call(
        &Search,
        &workspace,
        json!({"pattern": "fn alpha", "path": "workspace"}),
    );
    assert!(root.ok);
    assert_eq!(
        root.text,
        "`workspace` does not exist, so the whole workspace was searched.\n2 matching lines in 2 files:\nsrc/a.rs:1: fn alpha() {}\nsrc/b.rs:1: fn alpha_two() {}"
    );
    let below = call(
        &Search,
        &workspace,
        json!({"pattern": "alpha", "path": "src/lib", "mode": "files"}),
    );
    assert!(
        below
            .text
            .starts_with("`src/lib` does not exist, so `src` was searched.\n"),
        "{}",
        below.text
    );
    assert!(!below.text.contains("README"), "{}", below.text);
    let escape = call(
        &Search,
        &workspace,
        json!({"pattern": "x", "path": "/etc/nope"}),
    );
    assert!(!escape.ok, "{}", escape.text);
}

#[test]
fn a_bad_mode_or_a_pattern_across_lines_is_explained() {
    let (_dir, workspace) = project();
    let mode = call(
        &Search,
        &workspace,
        json!({"pattern": "x", "mode": "lines"}),
    );
    assert!(!mode.ok);
    assert!(
        mode.text
            .contains("parameter `mode` must be \"content\" or \"files\""),
        "{}",
        mode.text
    );
    let spanning = call(&Search, &workspace, json!({"pattern": "a\\nb"}));
    assert!(!spanning.ok);
    assert!(
        spanning.text.contains("Patterns match within one line"),
        "{}",
        spanning.text
    );
}

#[test]
fn access_is_a_read_of_the_searched_path() {
    let (_dir, workspace) = project();
    assert_eq!(
        Search.access(&json!({"pattern": "x"}), &workspace),
        Access::Read(vec![workspace.root().to_path_buf()])
    );
    assert_eq!(
        Search.access(&json!({"pattern": "x", "path": "src"}), &workspace),
        Access::Read(vec![workspace.root().join("src")])
    );
}

#[test]
fn a_short_finding_that_is_what_was_meant_is_listed_in_full() {
    let (_dir, workspace) = project();
    // A file-name search for text that is in file contents: the lines themselves.
    let by_mode = call(
        &Search,
        &workspace,
        json!({"pattern": "fn alpha", "mode": "files"}),
    );
    assert!(by_mode.ok);
    assert!(
        by_mode.text.starts_with(
            "In file contents: 2 matching lines in 2 files:\nsrc/a.rs:1: fn alpha() {}\nsrc/b.rs:1: fn alpha_two() {}\n(`fn alpha` as written matches nothing in `.`.)"
        ),
        "{}",
        by_mode.text
    );
    assert!(!by_mode.text.contains("use mode"), "{}", by_mode.text);
    // The same in another case: the lines, in any case.
    let any_case = call(
        &Search,
        &workspace,
        json!({"pattern": "FN ALPHA_TWO", "mode": "files"}),
    );
    assert!(
        any_case.text.starts_with(
            "In file contents (any case): 1 matching line in 1 file:\nsrc/b.rs:1: fn alpha_two() {}\n"
        ),
        "{}",
        any_case.text
    );
    // In a hidden file's contents: the lines there.
    write(&workspace, ".config/service.env", "API_TOKEN_TTL=5400\n");
    let hidden = call(
        &Search,
        &workspace,
        json!({"pattern": "API_TOKEN_TTL", "mode": "files", "glob": ".*"}),
    );
    assert!(
        hidden.text.contains(
            "In the contents of hidden or ignored files: 1 matching line in 1 file:\n.config/service.env:1: API_TOKEN_TTL=5400\n"
        ),
        "{}",
        hidden.text
    );
    // A glob that excludes every match: the matches without it.
    write(&workspace, "notes.txt", "nothing here\n");
    let by_glob = call(
        &Search,
        &workspace,
        json!({"pattern": "alpha", "glob": "*.txt"}),
    );
    assert!(
        by_glob.text.starts_with(
            "Without the glob: 2 matching lines in 2 files:\nsrc/a.rs:1: fn alpha() {}\nsrc/b.rs:1: fn alpha_two() {}\n(`alpha` as written matches nothing in `.`.)"
        ),
        "{}",
        by_glob.text
    );
}

#[test]
fn a_glob_no_file_matches_is_left_out_and_said() {
    let (_dir, workspace) = project();
    let outcome = call(
        &Search,
        &workspace,
        json!({"pattern": "fn alpha", "glob": "*.py"}),
    );
    assert!(outcome.ok);
    assert_eq!(
        outcome.text,
        "No file in `.` matches the glob `*.py`, so it was left out.\n2 matching lines in 2 files:\nsrc/a.rs:1: fn alpha() {}\nsrc/b.rs:1: fn alpha_two() {}"
    );
    // Then the probes run without it too: a hidden file is found.
    let hidden = call(
        &Search,
        &workspace,
        json!({"pattern": "gamma =", "glob": "*.py"}),
    );
    assert!(
        hidden.text.contains(
            "In hidden or ignored files: 1 matching line in 1 file:\n.config/settings:1: gamma = 1"
        ),
        "{}",
        hidden.text
    );
}

#[test]
fn a_glob_says_which_file_types_it_left_out() {
    let (_dir, workspace) = workspace();
    write(&workspace, "web/app.js", "// TODO: cache the list\n");
    write(&workspace, "web/util.js", "// TODO: debounce\n");
    write(&workspace, "deploy.sh", "# TODO: check the exit code\n");
    write(&workspace, "tools/run.sh", "# TODO: quote paths\n");
    write(&workspace, "tools/env.sh", "export A=1\n");
    write(
        &workspace,
        "docs/notes.md",
        "<!-- TODO: add a diagram -->\n",
    );
    write(&workspace, "Makefile", "# TODO: a test target\n");
    let outcome = call(
        &Search,
        &workspace,
        json!({"pattern": "TODO", "glob": "*.js"}),
    );
    assert!(
        outcome.text.starts_with(
            "Only files matching `*.js` were searched in `.`: 2 of 7 files; not searched: 3 .sh files, 1 file without an extension, 1 .md file.\nThe pattern also matches 4 lines in 4 files the glob left out; search again without `glob` to see them.\n2 matching lines in 2 files:\n"
        ),
        "{}",
        outcome.text
    );
    // When the files left out hold no match, the search is complete and says so.
    let complete = call(
        &Search,
        &workspace,
        json!({"pattern": "debounce", "glob": "*.js"}),
    );
    assert!(
        complete.text.contains(
            "not searched: 3 .sh files, 1 file without an extension, 1 .md file.\nNone of the files the glob left out matches the pattern.\n1 matching line in 1 file:\n"
        ),
        "{}",
        complete.text
    );
}

#[test]
fn a_code_hit_is_followed_by_its_enclosing_lines_and_a_comment_hit_stands_alone() {
    let (_dir, workspace) = workspace();
    write(
        &workspace,
        "app/users.py",
        "import re\n\n\ndef parse_user(value):\n    # TODO: accept ids with dashes\n    if not value:\n        raise ValueError(\"invalid user id\")\n    return value\n",
    );
    let outcome = call(
        &Search,
        &workspace,
        json!({"pattern": "invalid user id|TODO"}),
    );
    assert_eq!(
        outcome.text,
        "2 matching lines in 1 file:\napp/users.py:5: # TODO: accept ids with dashes\napp/users.py:7: raise ValueError(\"invalid user id\")\n    ↳ inside line 4: def parse_user(value): › line 6: if not value:"
    );
}

#[test]
fn enclosing_lines_are_said_once_for_neighbouring_hits_and_never_when_they_are_hits() {
    let (_dir, workspace) = workspace();
    write(
        &workspace,
        "lib/batch.js",
        "function compute_batch(value) {\n  const a = compute(value);\n  const b = compute(a);\n  return b;\n}\n",
    );
    let outcome = call(&Search, &workspace, json!({"pattern": "compute"}));
    assert_eq!(
        outcome.text,
        "3 matching lines in 1 file:\nlib/batch.js:1: function compute_batch(value) {\nlib/batch.js:2: const a = compute(value);\nlib/batch.js:3: const b = compute(a);"
    );
}
