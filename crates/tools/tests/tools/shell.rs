//! `shell`: exit codes, the persistent working directory, time limits that kill the
//! whole process group, and bounded output.

use std::fs;
use std::path::Path;
use std::time::{Duration, Instant};

use rein_tools::{Access, Shell, Tool, ToolLimits};
use serde_json::json;

use crate::support::{call, workspace, workspace_with};

fn short_limits() -> ToolLimits {
    ToolLimits {
        shell_timeout: Duration::from_secs(1),
        output_chars: 200,
        ..ToolLimits::default()
    }
}

#[test]
fn reports_exit_code_cwd_and_combined_output() {
    let (_dir, workspace) = workspace();
    let outcome = call(
        &Shell,
        &workspace,
        json!({"command": "echo out; echo err >&2; cat; exit 3"}),
    );
    assert!(!outcome.ok);
    assert!(!outcome.timed_out);
    assert_eq!(outcome.text, "exit code: 3\ncwd: .\noutput:\nout\nerr");

    let success = call(&Shell, &workspace, json!({"command": "true"}));
    assert!(success.ok);
    assert_eq!(success.text, "exit code: 0\ncwd: .\noutput: (none)");
}

#[test]
fn binary_output_is_described_and_saved_not_shown() {
    let (_dir, workspace) = workspace();
    let bytes: Vec<u8> = (0..6144u32).map(|i| (i * 37 % 256) as u8).collect();
    fs::write(workspace.root().join("firmware.bin"), &bytes).unwrap();
    let outcome = call(&Shell, &workspace, json!({"command": "cat firmware.bin"}));
    assert!(outcome.ok);
    assert!(
        outcome
            .text
            .contains("output: binary data, 6144 bytes, not shown; pipe it through `xxd | head`"),
        "{}",
        outcome.text
    );
    let saved = outcome
        .text
        .split("full output: ")
        .nth(1)
        .and_then(|rest| rest.split(' ').next())
        .unwrap();
    assert_eq!(fs::read(workspace.root().join(saved)).unwrap(), bytes);
    // Text with a few odd bytes is still text.
    let text = call(
        &Shell,
        &workspace,
        json!({"command": "printf 'caf\\351 ok, and the rest is plain text\\n'"}),
    );
    assert!(
        text.text
            .ends_with("output:\ncaf\u{fffd} ok, and the rest is plain text"),
        "{}",
        text.text
    );
}

#[test]
fn syntax_errors_are_shown() {
    let (_dir, workspace) = workspace();
    let outcome = call(&Shell, &workspace, json!({"command": "if then"}));
    assert!(!outcome.ok);
    assert!(
        outcome.text.starts_with("exit code: 2\n"),
        "{}",
        outcome.text
    );
    assert!(
        outcome.text.contains("Syntax error") || outcome.text.contains("syntax error"),
        "{}",
        outcome.text
    );
}

#[test]
fn cd_persists_between_calls() {
    let (_dir, workspace) = workspace();
    fs::create_dir_all(workspace.root().join("sub/inner")).unwrap();
    let moved = call(&Shell, &workspace, json!({"command": "cd sub/inner"}));
    assert!(
        moved.text.contains("cwd: sub/inner (changed from .)"),
        "{}",
        moved.text
    );
    assert_eq!(workspace.shell_cwd(), workspace.root().join("sub/inner"));
    let next = call(&Shell, &workspace, json!({"command": "pwd; cd .."}));
    assert!(
        next.text.contains(&format!(
            "output:\n{}",
            workspace.root().join("sub/inner").display()
        )),
        "{}",
        next.text
    );
    assert_eq!(workspace.shell_cwd(), workspace.root().join("sub"));
    assert_eq!(
        workspace.resolve_in_shell_cwd("x.txt").unwrap(),
        workspace.root().join("sub/x.txt")
    );
}

#[test]
fn a_cwd_outside_the_workspace_is_reset_to_the_root() {
    let (_dir, workspace) = workspace();
    let escaped = call(&Shell, &workspace, json!({"command": "cd /"}));
    assert!(escaped.text.contains("note: the command moved to /, outside the workspace; the working directory was reset to the workspace root."), "{}", escaped.text);
    assert_eq!(workspace.shell_cwd(), workspace.root());
    let next = call(&Shell, &workspace, json!({"command": "pwd -P"}));
    assert!(
        next.text
            .ends_with(&format!("output:\n{}", workspace.root().display())),
        "{}",
        next.text
    );
}

#[test]
fn a_deleted_cwd_falls_back_to_the_root() {
    let (_dir, workspace) = workspace();
    fs::create_dir(workspace.root().join("gone")).unwrap();
    call(&Shell, &workspace, json!({"command": "cd gone"}));
    fs::remove_dir(workspace.root().join("gone")).unwrap();
    let outcome = call(&Shell, &workspace, json!({"command": "pwd -P"}));
    assert!(
        outcome
            .text
            .contains("no longer exists; started from the workspace root"),
        "{}",
        outcome.text
    );
    assert!(outcome.ok);
}

fn is_dead(pid: i32) -> bool {
    if unsafe { libc::kill(pid, 0) } != 0 {
        return true;
    }
    let stat = fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    let state = stat
        .rsplit_once(')')
        .map(|(_, rest)| rest.trim_start().chars().next());
    matches!(state, Some(Some('Z' | 'X')) | None)
}

#[test]
fn a_timeout_kills_the_command_and_its_children() {
    let (_dir, workspace) = workspace_with(short_limits());
    let started = Instant::now();
    let outcome = call(
        &Shell,
        &workspace,
        json!({"command": "sleep 100 & echo $! > grandchild.pid; echo waiting; sleep 50"}),
    );
    let elapsed = started.elapsed();
    assert!(elapsed < Duration::from_secs(3), "took {elapsed:?}");
    assert!(outcome.timed_out);
    assert!(!outcome.ok);
    assert!(outcome.text.starts_with(
        "the command timed out after 1 s and was killed (with its children); run it in the background or with a smaller input\n"
    ), "{}", outcome.text);
    assert!(
        outcome.text.ends_with("output so far:\nwaiting"),
        "{}",
        outcome.text
    );

    let pid: i32 = fs::read_to_string(workspace.root().join("grandchild.pid"))
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(2);
    while !is_dead(pid) && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(
        is_dead(pid),
        "the background sleep {pid} survived the timeout"
    );
}

#[test]
fn timeout_s_is_honoured_up_to_four_times_the_limit() {
    let (_dir, workspace) = workspace_with(short_limits());
    let started = Instant::now();
    let outcome = call(
        &Shell,
        &workspace,
        json!({"command": "sleep 1.5; echo done", "timeout_s": 2}),
    );
    assert!(outcome.ok, "{}", outcome.text);
    assert!(started.elapsed() >= Duration::from_millis(1500));
    let clamped = call(
        &Shell,
        &workspace,
        json!({"command": "true", "timeout_s": 100}),
    );
    assert!(
        clamped
            .text
            .contains("note: timeout_s=100 is above the maximum; used 4 s."),
        "{}",
        clamped.text
    );
}

#[test]
fn long_output_keeps_head_and_tail_and_is_saved_in_full() {
    let (_dir, workspace) = workspace_with(short_limits());
    let outcome = call(&Shell, &workspace, json!({"command": "seq 1 5000"}));
    assert!(outcome.ok);
    assert!(
        outcome.text.contains("output:\n1\n2\n3\n"),
        "{}",
        outcome.text
    );
    assert!(outcome.text.contains("lines / "), "{}", outcome.text);
    assert!(
        outcome.text.contains("chars omitted ...]\n"),
        "{}",
        outcome.text
    );
    assert!(outcome.text.contains("4999\n5000\n"), "{}", outcome.text);
    assert!(
        outcome.text.ends_with(
            "full output: .rein/outputs/shell-1.txt (read it with read_file or search it)"
        ),
        "{}",
        outcome.text
    );
    let saved = fs::read_to_string(workspace.root().join(".rein/outputs/shell-1.txt")).unwrap();
    assert_eq!(saved.lines().count(), 5000);
    let found = rein_tools::Search.call(
        &json!({"pattern": "^2500$", "path": ".rein/outputs/shell-1.txt"}),
        &workspace,
    );
    assert_eq!(
        found.text,
        "1 matching line in 1 file:\n.rein/outputs/shell-1.txt:2500: 2500"
    );
    let read = rein_tools::ReadFile.call(
        &json!({"path": ".rein/outputs/shell-1.txt", "offset": 2500, "limit": 1}),
        &workspace,
    );
    assert!(read.text.starts_with("2500| 2500\n"), "{}", read.text);

    let second = call(&Shell, &workspace, json!({"command": "seq 1 3000"}));
    assert!(second
        .text
        .ends_with("full output: .rein/outputs/shell-2.txt (read it with read_file or search it)"));
}

#[test]
fn a_configured_outputs_dir_is_used() {
    let outputs = tempfile::tempdir().unwrap();
    let limits = ToolLimits {
        outputs_dir: Some(outputs.path().to_path_buf()),
        ..short_limits()
    };
    let (_dir, workspace) = workspace_with(limits);
    let outcome = call(&Shell, &workspace, json!({"command": "seq 1 2000"}));
    assert!(outcome.text.contains("full output: "), "{}", outcome.text);
    assert!(Path::new(&outputs.path().join("shell-1.txt")).is_file());
}

#[test]
fn verification_commands_and_access() {
    let (_dir, workspace) = workspace();
    assert!(Shell.is_verification(&json!({"command": "cargo test --release"})));
    assert!(Shell.is_verification(&json!({"command": "python -m pytest -x"})));
    assert!(!Shell.is_verification(&json!({"command": "ls"})));
    assert!(!Shell.is_verification(&json!({})));
    assert_eq!(
        Shell.access(&json!({"command": "ls"}), &workspace),
        Access::Barrier
    );
    assert!(Shell.available(&workspace).is_ok());
    let empty = call(&Shell, &workspace, json!({"command": "  "}));
    assert!(!empty.ok);
    let missing = call(&Shell, &workspace, json!({"timeout_s": 3}));
    assert!(
        missing
            .text
            .contains("missing required parameter `command`"),
        "{}",
        missing.text
    );
}

#[test]
fn a_failing_test_run_shows_the_definition_its_failing_line_calls() {
    let (dir, workspace) = workspace();
    fs::create_dir(dir.path().join("tools")).unwrap();
    fs::write(
        dir.path().join("tools/stats.py"),
        "def is_overdue(days, limit):\n    \"\"\"Past the limit, not on it.\"\"\"\n    return days >= limit\n",
    )
    .unwrap();
    fs::write(
        dir.path().join("tools/test_stats.py"),
        "from stats import is_overdue\n\nassert is_overdue(43, 39)\nassert not is_overdue(39, 39)\nprint(\"ok\")\n",
    )
    .unwrap();
    fs::write(
        dir.path().join("helpers.js"),
        "// Values from low to high, both included.\nfunction countIn(values, low, high) {\n  return values.filter((v) => low <= v && v < high).length;\n}\nmodule.exports = { countIn };\n",
    )
    .unwrap();
    fs::write(
        dir.path().join("test_helpers.js"),
        "const assert = require('assert');\nconst { countIn } = require('./helpers');\nassert.strictEqual(countIn([1, 5], 1, 5), 2);\n",
    )
    .unwrap();
    let python = call(
        &Shell,
        &workspace,
        json!({"command": "python3 tools/test_stats.py"}),
    );
    assert!(!python.ok);
    assert!(
        python.text.contains(
            "note: `tools/test_stats.py:4` calls `is_overdue`, defined in `tools/stats.py`:\n    1| def is_overdue(days, limit):\n    2|     \"\"\"Past the limit, not on it.\"\"\"\n    3|     return days >= limit"
        ),
        "{}",
        python.text
    );
    let node = call(
        &Shell,
        &workspace,
        json!({"command": "node test_helpers.js"}),
    );
    assert!(!node.ok);
    assert!(
        node.text.contains(
            "`test_helpers.js:3` calls `countIn`, defined in `helpers.js`:\n    1| // Values from low to high, both included.\n    2| function countIn(values, low, high) {"
        ),
        "{}",
        node.text
    );
    // A passing run gets no note.
    let passing = call(
        &Shell,
        &workspace,
        json!({"command": "python3 -c 'print(1)'"}),
    );
    assert!(
        passing.ok && !passing.text.contains("note:"),
        "{}",
        passing.text
    );
}

#[test]
fn a_command_that_cannot_find_a_file_or_module_shows_the_closest_names_and_where_they_are_written()
{
    let (dir, workspace) = workspace();
    fs::create_dir_all(dir.path().join("pages")).unwrap();
    fs::create_dir_all(dir.path().join("tools")).unwrap();
    fs::write(dir.path().join("pages/summary.txt"), "summary\n").unwrap();
    fs::write(dir.path().join("pages/body.txt"), "body\n").unwrap();
    fs::write(
        dir.path().join("build.sh"),
        "#!/bin/sh\nset -e\ncat pages/body.txt pages/smumary.txt > bundle.txt\n",
    )
    .unwrap();
    fs::write(
        dir.path().join("tools/strutil.py"),
        "def bullet(x):\n    return '- ' + x\n",
    )
    .unwrap();
    fs::write(
        dir.path().join("tools/generate.py"),
        "from str_util import bullet\n\nprint(bullet('a'))\n",
    )
    .unwrap();
    let sh = call(&Shell, &workspace, json!({"command": "sh build.sh"}));
    assert!(!sh.ok);
    assert!(
        sh.text.contains(
            "note: `pages/smumary.txt` does not exist; closest files: `pages/summary.txt`; the name is written at `build.sh:3`: cat pages/body.txt pages/smumary.txt > bundle.txt."
        ),
        "{}",
        sh.text
    );
    let python = call(
        &Shell,
        &workspace,
        json!({"command": "python3 tools/generate.py"}),
    );
    assert!(!python.ok);
    assert!(
        python.text.contains(
            "note: no module `str_util` is in the workspace; closest files: `tools/strutil.py`; the name is written at `tools/generate.py:1`: from str_util import bullet."
        ),
        "{}",
        python.text
    );
}
