//! The command grader: a shell command run in the workspace must exit with a code.

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// Runs `run` with `sh -c` in `workspace`; passes when it exits with `want` before
/// `timeout_s` seconds.
pub fn exit_code(workspace: &Path, run: &str, want: i32, timeout_s: u64) -> Result<String, String> {
    let mut child = Command::new("sh")
        .arg("-c")
        .arg(run)
        .current_dir(workspace)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .map_err(|e| format!("`{run}` did not start: {e}"))?;
    let deadline = Instant::now() + Duration::from_secs(timeout_s.max(1));
    loop {
        match child.try_wait() {
            Ok(Some(status)) => {
                let code = status.code().unwrap_or(-1);
                return if code == want {
                    Ok(format!("`{run}` exited {code}"))
                } else {
                    Err(format!("`{run}` exited {code}, wanted {want}"))
                };
            }
            Ok(None) if Instant::now() >= deadline => {
                let _ = child.kill();
                let _ = child.wait();
                return Err(format!("`{run}` still running after {timeout_s} s"));
            }
            Ok(None) => std::thread::sleep(Duration::from_millis(20)),
            Err(e) => return Err(format!("`{run}`: {e}")),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exit_codes_are_compared_and_hangs_time_out() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("ok.txt"), "x").unwrap();
        assert!(exit_code(dir.path(), "test -f ok.txt", 0, 5).is_ok());
        assert!(exit_code(dir.path(), "test -f missing.txt", 0, 5).is_err());
        assert!(exit_code(dir.path(), "exit 3", 3, 5).is_ok());
        assert!(exit_code(dir.path(), "sleep 5", 0, 1)
            .unwrap_err()
            .contains("still running"));
    }
}
