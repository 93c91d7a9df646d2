//! A shell command cannot see rein's API keys: variables outside the allowlist and
//! any whose name says it holds a secret are not passed, however the command asks.
//! (Its own test binary: it sets variables in its process before any command runs.)

use rein_tools::{Shell, Tool, ToolLimits, Workspace};
use serde_json::json;

#[test]
fn no_command_prints_a_key() {
    const KEY: &str = "sk-rein-test-5f1c2a9e";
    for name in [
        "OPENAI_API_KEY",
        "REIN_REMOTE_KEY",
        "MY_BACKEND",
        "HF_TOKEN",
        "LC_SECRET_TOKEN",
    ] {
        std::env::set_var(name, KEY);
    }
    let dir = tempfile::tempdir().unwrap();
    let workspace = Workspace::new(dir.path(), ToolLimits::default()).unwrap();
    for command in [
        "env",
        "set",
        "echo \"$OPENAI_API_KEY $REIN_REMOTE_KEY $MY_BACKEND $HF_TOKEN $LC_SECRET_TOKEN\"",
        "cat /proc/self/environ | tr '\\0' '\\n'",
        "python3 -c 'import os; print(dict(os.environ))'",
        "cat /proc/$PPID/environ | tr '\\0' '\\n'",
    ] {
        let outcome = Shell.call(&json!({"command": command}), &workspace);
        assert!(
            outcome.text.contains("exit code"),
            "{command}: {}",
            outcome.text
        );
        assert!(!outcome.text.contains(KEY), "`{command}` printed the key");
    }
    // The environment still has what programs need.
    let outcome = Shell.call(
        &json!({"command": "echo \"$PATH|$HOME|$TMPDIR\""}),
        &workspace,
    );
    let line = outcome.text.lines().last().unwrap_or_default().to_string();
    let parts: Vec<&str> = line.split('|').collect();
    assert!(
        parts.len() == 3 && parts.iter().all(|p| !p.is_empty()),
        "{line}"
    );
}
