//! The official `openai` Python client completes a tool-call round trip (plain and
//! streamed) against the `rein serve` binary on loopback, with the tiny model.

use std::io::{BufRead, BufReader};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};

use crate::support::tiny_model;

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

/// `rein serve` on a free port; killed when dropped.
struct Served(Child);

impl Drop for Served {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Starts `rein serve` with `args` and returns it with its base URL.
pub fn serve(args: &[&str]) -> (Served, String) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_rein"))
        .args(["serve", "--model", "tiny", "--no-pull", "--port", "0"])
        .args(args)
        .env_remove("RUST_LOG")
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .expect("start rein serve");
    let stdout = child.stdout.take().expect("stdout");
    let served = Served(child);
    let mut line = String::new();
    BufReader::new(stdout).read_line(&mut line).expect("read the address");
    let url = line
        .split_whitespace()
        .find(|w| w.starts_with("http://"))
        .unwrap_or_else(|| panic!("no address in {line:?}"))
        .to_string();
    (served, url)
}

#[test]
fn the_openai_python_client_completes_a_tool_call_round_trip() {
    tiny_model();
    let python = python();
    let (_server, url) = serve(&["--sessions", "2", "--ctx", "2048"]);
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/scripts/openai_client_check.py");
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
