//! The official `openai` Python client completes a tool-call round trip (plain and
//! streamed) against the `rein serve` binary on loopback, with the tiny model.

use std::path::PathBuf;
use std::process::Command;

use crate::support::{serve, tiny_model};

/// The Python with `openai` installed by scripts/setup-python.sh.
fn python() -> PathBuf {
    let env = std::env::var_os("REIN_PYTHON_ENV")
        .map(PathBuf::from)
        .or_else(|| {
            std::env::var_os("XDG_CACHE_HOME")
                .map(PathBuf::from)
                .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache")))
                .map(|cache| cache.join("rein/venv"))
        })
        .expect("no HOME");
    let python = env.join("bin/python");
    assert!(
        python.exists(),
        "{} is missing; run scripts/setup-python.sh (the README's test command does)",
        python.display()
    );
    python
}

#[test]
fn the_openai_python_client_completes_a_tool_call_round_trip() {
    // Loads a model: one model test at a time.
    let _model = rein_test_support::model_lock();
    tiny_model();
    let python = python();
    let (_server, url) = serve(&["--sessions", "2", "--ctx", "2048"]);
    let script = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/scripts/openai_client_check.py"
    );
    let out = Command::new(python)
        .args([script, &url])
        .output()
        .expect("run python");
    assert!(
        out.status.success(),
        "stdout: {}\nstderr: {}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    let result: serde_json::Value =
        serde_json::from_slice(&out.stdout).expect("the script prints JSON");
    assert_eq!(result["call"]["name"], "get_weather");
}
