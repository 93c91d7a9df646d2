//! Starting a server process so that none of its processes outlives rein: it leads
//! a process group of its own, which is killed when the connection is dropped, and a
//! watchdog (a shell waiting on a pipe only rein holds) kills the group when rein
//! ends any other way — Ctrl-C, a panic, `kill -9`.

use std::collections::BTreeMap;
use std::io::Write;
use std::path::Path;
use std::process::Stdio;
use std::sync::{Arc, Mutex};

use process_wrap::tokio::{CommandWrap, KillOnDrop, ProcessGroup};
use rmcp::transport::TokioChildProcess;
use tokio::io::AsyncBufReadExt;

use crate::server_log::ServerLog;

/// A started server process and its watchdog.
pub(crate) struct Started {
    /// The MCP transport over its standard input and output.
    pub transport: TokioChildProcess,
    /// Kills the process group when dropped or when rein ends.
    pub watchdog: Watchdog,
    /// The task reading its standard error into the log; it ends when the process
    /// closes it.
    pub stderr_read: Option<tokio::task::JoinHandle<()>>,
}

/// A process that kills a process group as soon as its standard input closes: when
/// this value is dropped, or when rein ends and the kernel closes the pipe.
pub(crate) struct Watchdog {
    child: Option<std::process::Child>,
}

impl Watchdog {
    /// Starts a watchdog for the process group `group`, in a group of its own so a
    /// Ctrl-C at the terminal does not stop it before it has done its work.
    fn start(group: u32) -> std::io::Result<Self> {
        use std::os::unix::process::CommandExt;
        let child = std::process::Command::new("/bin/sh")
            .arg("-c")
            .arg(r#"cat >/dev/null; kill -s KILL -- -"$1" 2>/dev/null; exit 0"#)
            .arg("rein-mcp-watchdog")
            .arg(group.to_string())
            .env_clear()
            .env("PATH", "/usr/bin:/bin")
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .process_group(0)
            .spawn()?;
        Ok(Self { child: Some(child) })
    }

    /// A watchdog with nothing to watch (a server reached over HTTP).
    pub(crate) fn none() -> Self {
        Self { child: None }
    }
}

impl Drop for Watchdog {
    fn drop(&mut self) {
        if let Some(mut child) = self.child.take() {
            if let Some(mut stdin) = child.stdin.take() {
                let _ = stdin.flush();
            }
            let _ = child.wait();
        }
    }
}

/// Starts `program` with `args` in `cwd` with exactly `environment`, its standard
/// error lines going to `log`. The error is one line.
pub(crate) fn start(
    program: &str,
    args: &[String],
    environment: &BTreeMap<String, String>,
    cwd: &Path,
    log: Arc<Mutex<ServerLog>>,
) -> Result<Started, String> {
    let mut command = tokio::process::Command::new(program);
    command
        .args(args)
        .env_clear()
        .envs(environment)
        .current_dir(cwd);
    let mut wrapped = CommandWrap::from(command);
    wrapped.wrap(ProcessGroup::leader());
    wrapped.wrap(KillOnDrop);
    let (transport, stderr) = TokioChildProcess::builder(wrapped)
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|error| format!("cannot start `{program}`: {error}"))?;
    let Some(group) = transport.id() else {
        return Err(format!("`{program}` exited at once"));
    };
    let watchdog = Watchdog::start(group)
        .map_err(|error| format!("cannot start the watchdog of `{program}`: {error}"))?;
    let stderr_read = stderr.map(|stderr| {
        tokio::spawn(async move {
            let mut lines = tokio::io::BufReader::new(stderr).lines();
            while let Ok(Some(line)) = lines.next_line().await {
                if let Ok(mut log) = log.lock() {
                    log.push(line);
                }
            }
        })
    });
    Ok(Started {
        transport,
        watchdog,
        stderr_read,
    })
}
