//! Running one `/bin/sh` script in its own process group: output is read as it
//! comes (so a chatty command never blocks on a full pipe), and on timeout the whole
//! group — the shell and everything it started — is killed.

use std::ffi::OsString;
use std::io::{self, Read};
use std::os::fd::AsRawFd;
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Child, Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

use crate::sandbox::PreparedSandbox;

/// Output bytes kept in memory; the rest is counted and dropped.
const MAX_CAPTURED_BYTES: usize = 32 * 1024 * 1024;
/// How long one wait for output lasts before the exit and the deadline are checked.
const POLL_INTERVAL: Duration = Duration::from_millis(20);
/// How long output is still collected after the shell exited, for processes it left
/// running that hold the output pipe.
const DRAIN_GRACE: Duration = Duration::from_millis(250);

/// How the command ended.
#[derive(Debug)]
pub(crate) struct Finished {
    /// Standard output and standard error, as they arrived.
    pub output: Vec<u8>,
    /// Output bytes beyond the in-memory cap.
    pub dropped_bytes: u64,
    /// The shell's exit status.
    pub status: ExitStatus,
    /// Whether the deadline passed and the group was killed.
    pub timed_out: bool,
    /// Whether processes left behind still held the output when collection stopped.
    pub output_left_open: bool,
}

/// Where a command runs: its environment and, unless the sandbox is off, the
/// ruleset that confines it and everything it starts.
#[derive(Debug)]
pub(crate) struct Confined {
    pub env: Vec<(OsString, OsString)>,
    pub sandbox: Option<PreparedSandbox>,
}

/// Runs `/bin/sh -c script` in `cwd` with stdin from `/dev/null`, in a new process
/// group, confined by `confined`, for at most `timeout`.
pub(crate) fn run_script(
    script: &str,
    cwd: &Path,
    timeout: Duration,
    confined: Confined,
) -> io::Result<Finished> {
    let mut command = Command::new("/bin/sh");
    command
        .arg("-c")
        .arg(script)
        .current_dir(cwd)
        .env_clear()
        .envs(confined.env)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0);
    if let Some(sandbox) = confined.sandbox {
        // SAFETY: the hook runs between fork and exec and only makes system calls on
        // what `sandbox` prepared (no allocation, no lock); the command owns it, so
        // the ruleset fd stays open until the spawn is done.
        unsafe {
            command.pre_exec(move || sandbox.apply_in_child());
        }
    }
    let mut child = command.spawn()?;
    let Ok(group) = libc::pid_t::try_from(child.id()) else {
        let _ = child.kill();
        let _ = child.wait();
        return Err(io::Error::other("the process id does not fit a pid_t"));
    };
    let collected = collect(&mut child, group, timeout);
    if collected.is_err() {
        kill_group(group);
        let _ = child.wait();
    }
    collected
}

/// Reads the child's output until it exits (or the deadline kills its group) and
/// its pipes close or the drain grace passes.
fn collect(child: &mut Child, group: libc::pid_t, timeout: Duration) -> io::Result<Finished> {
    let mut streams: Vec<Box<dyn ReadableFd>> = Vec::new();
    if let Some(stdout) = child.stdout.take() {
        streams.push(Box::new(stdout));
    }
    if let Some(stderr) = child.stderr.take() {
        streams.push(Box::new(stderr));
    }
    let deadline = Instant::now() + timeout;
    let mut capture = Capture::default();
    let mut timed_out = false;
    let mut ended: Option<(ExitStatus, Instant)> = None;
    loop {
        if ended.is_none() {
            if let Some(status) = child.try_wait()? {
                ended = Some((status, Instant::now()));
            } else if Instant::now() >= deadline {
                kill_group(group);
                timed_out = true;
                ended = Some((child.wait()?, Instant::now()));
            }
        }
        if let Some((status, at)) = ended {
            if streams.is_empty() || at.elapsed() >= DRAIN_GRACE {
                return Ok(Finished {
                    output: capture.kept,
                    dropped_bytes: capture.dropped,
                    status,
                    timed_out,
                    output_left_open: !streams.is_empty(),
                });
            }
        }
        let wait = match ended {
            Some(_) => POLL_INTERVAL,
            None => POLL_INTERVAL.min(deadline.saturating_duration_since(Instant::now())),
        };
        if streams.is_empty() {
            std::thread::sleep(wait);
        } else {
            read_ready(&mut streams, wait, &mut capture)?;
        }
    }
}

/// A pipe end that can be polled and read.
trait ReadableFd: Read + AsRawFd {}

impl<T: Read + AsRawFd> ReadableFd for T {}

#[derive(Default)]
struct Capture {
    kept: Vec<u8>,
    dropped: u64,
}

impl Capture {
    fn push(&mut self, bytes: &[u8]) {
        let room = MAX_CAPTURED_BYTES.saturating_sub(self.kept.len());
        let kept = bytes.len().min(room);
        self.kept.extend_from_slice(&bytes[..kept]);
        self.dropped += (bytes.len() - kept) as u64;
    }
}

/// Waits up to `wait` for output on any stream, reads what is ready, and drops the
/// streams that reached end of file.
fn read_ready(
    streams: &mut Vec<Box<dyn ReadableFd>>,
    wait: Duration,
    capture: &mut Capture,
) -> io::Result<()> {
    let mut polled: Vec<libc::pollfd> = streams
        .iter()
        .map(|stream| libc::pollfd {
            fd: stream.as_raw_fd(),
            events: libc::POLLIN,
            revents: 0,
        })
        .collect();
    let millis = libc::c_int::try_from(wait.as_millis()).unwrap_or(libc::c_int::MAX);
    // SAFETY: `polled` is a valid, exclusively borrowed array of `polled.len()`
    // pollfd structs whose descriptors stay open for the duration of the call.
    let ready = unsafe { libc::poll(polled.as_mut_ptr(), polled.len() as libc::nfds_t, millis) };
    if ready < 0 {
        let error = io::Error::last_os_error();
        return if error.kind() == io::ErrorKind::Interrupted {
            Ok(())
        } else {
            Err(error)
        };
    }
    let mut buffer = [0u8; 64 * 1024];
    let mut finished = Vec::new();
    for (index, entry) in polled.iter().enumerate() {
        if entry.revents == 0 {
            continue;
        }
        match streams[index].read(&mut buffer) {
            Ok(0) => finished.push(index),
            Ok(count) => capture.push(&buffer[..count]),
            Err(error) if error.kind() == io::ErrorKind::Interrupted => {}
            Err(_) => finished.push(index),
        }
    }
    for index in finished.into_iter().rev() {
        streams.remove(index);
    }
    Ok(())
}

/// Sends SIGKILL to every process in the group.
fn kill_group(group: libc::pid_t) {
    // SAFETY: kill(2) with a negative pid signals the process group; it has no
    // memory-safety preconditions.
    unsafe {
        libc::kill(-group, libc::SIGKILL);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plain() -> Confined {
        Confined {
            env: std::env::vars_os().collect(),
            sandbox: None,
        }
    }

    #[test]
    fn output_of_both_streams_and_the_status_are_collected() {
        let dir = tempfile::tempdir().unwrap();
        let finished = run_script(
            "echo out; echo err >&2; exit 3",
            dir.path(),
            Duration::from_secs(5),
            plain(),
        )
        .unwrap();
        let output = String::from_utf8(finished.output).unwrap();
        assert!(output.contains("out") && output.contains("err"), "{output}");
        assert_eq!(finished.status.code(), Some(3));
        assert!(!finished.timed_out);
    }

    #[test]
    fn large_output_does_not_deadlock() {
        let dir = tempfile::tempdir().unwrap();
        let script = "i=0; while [ $i -lt 20000 ]; do echo line-$i-xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx; i=$((i+1)); done";
        let finished = run_script(script, dir.path(), Duration::from_secs(20), plain()).unwrap();
        assert!(finished.status.success());
        assert_eq!(
            finished
                .output
                .iter()
                .filter(|&&byte| byte == b'\n')
                .count(),
            20000
        );
    }

    #[test]
    fn the_shell_returns_when_a_background_process_keeps_the_pipe() {
        let dir = tempfile::tempdir().unwrap();
        let started = Instant::now();
        let finished = run_script(
            "sleep 3 & echo started",
            dir.path(),
            Duration::from_secs(10),
            plain(),
        )
        .unwrap();
        assert!(
            started.elapsed() < Duration::from_secs(2),
            "{:?}",
            started.elapsed()
        );
        assert!(finished.output_left_open);
        assert!(String::from_utf8_lossy(&finished.output).contains("started"));
    }
}
