//! `shell`: run a command with `/bin/sh` in a working directory that persists
//! between calls and stays inside the workspace.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::{json, Value};

use super::binary::{looks_binary, SAMPLE_BYTES};
use super::failure_source::failure_source;
use super::missing_paths::missing_paths;
use super::shell_env::{shell_env, toolchain_dirs};
use super::shell_output::{bound_output, save_output};
use super::shell_process::{run_script, Confined, Finished};
use super::spec::function_spec;
use super::verification::looks_like_verification;
use crate::args::{optional_count, required_string, ArgError};
use crate::outcome::{Access, ToolOutcome};
use crate::sandbox::PreparedSandbox;
use crate::tool::Tool;
use crate::workspace::Workspace;
use crate::SandboxMode;

/// Runs a shell command in the persistent working directory, with a time limit
/// that kills the command and everything it started.
#[derive(Debug, Default, Clone, Copy)]
pub struct Shell;

const NAME: &str = "shell";
const SHELL: &str = "/bin/sh";
/// How much longer than the configured limit a call may ask to run.
const MAX_TIMEOUT_FACTOR: u32 = 4;

impl Tool for Shell {
    fn name(&self) -> &str {
        NAME
    }

    fn spec(&self) -> rein_protocol::ToolSpec {
        function_spec(
            NAME,
            "Run a shell command with /bin/sh and get its exit code and output (stdout and stderr together). The working directory persists between calls, so `cd` carries over. Use it to build, test and run programs.",
            json!({
                "type": "object",
                "properties": {
                    "command": {"type": "string", "description": "The command line to run."},
                    "timeout_s": {"type": "integer", "minimum": 1, "description": "Time limit in seconds (default: the configured limit)."}
                },
                "required": ["command"],
                "additionalProperties": false
            }),
        )
    }

    fn available(&self, workspace: &Workspace) -> Result<(), String> {
        if let Some(reason) = workspace.limits().sandbox.unavailable() {
            return Err(reason);
        }
        match std::fs::metadata(SHELL) {
            Ok(metadata) if metadata.is_file() && metadata.permissions().mode() & 0o111 != 0 => {
                Ok(())
            }
            Ok(_) => Err(format!("{SHELL} is not an executable file")),
            Err(error) => Err(format!("{SHELL} is not available: {error}")),
        }
    }

    fn access(&self, _args: &Value, _workspace: &Workspace) -> Access {
        Access::Barrier
    }

    fn call(&self, args: &Value, workspace: &Workspace) -> ToolOutcome {
        match parse(args, workspace) {
            Ok((command, timeout, note)) => run(workspace, command, timeout, note),
            Err(error) => error.into_outcome(NAME),
        }
    }

    fn is_verification(&self, args: &Value) -> bool {
        required_string(args, "command").is_ok_and(looks_like_verification)
    }

    fn untrusted_output(&self) -> bool {
        true
    }
}

/// The command, the time limit, and a note when the requested limit was lowered.
fn parse<'a>(
    args: &'a Value,
    workspace: &Workspace,
) -> Result<(&'a str, Duration, Option<String>), ArgError> {
    let command = required_string(args, "command")?;
    let default = workspace.limits().shell_timeout;
    let most = default.saturating_mul(MAX_TIMEOUT_FACTOR);
    let (timeout, note) = match optional_count(args, "timeout_s")? {
        None | Some(0) => (default, None),
        Some(seconds) if Duration::from_secs(seconds) > most => (
            most,
            Some(format!(
                "timeout_s={seconds} is above the maximum; used {}.",
                seconds_text(most)
            )),
        ),
        Some(seconds) => (Duration::from_secs(seconds), None),
    };
    Ok((command, timeout, note))
}

fn run(
    workspace: &Workspace,
    command: &str,
    timeout: Duration,
    timeout_note: Option<String>,
) -> ToolOutcome {
    if command.trim().is_empty() {
        return ToolOutcome::failure(
            "the command is empty; give a command line to run, e.g. `ls`.",
        );
    }
    let mut notes: Vec<String> = timeout_note.into_iter().collect();
    let mut cwd = workspace.shell_cwd();
    if !cwd.is_dir() {
        notes.push(format!(
            "the previous working directory `{}` no longer exists; started from the workspace root.",
            workspace.relative(&cwd)
        ));
        cwd = workspace.root().to_path_buf();
    }
    let confined = match confine_command(workspace) {
        Ok(confined) => confined,
        Err(reason) => return ToolOutcome::failure(format!("{reason}.")),
    };
    let pwd_file = match workspace
        .shell_temp()
        .and_then(tempfile::NamedTempFile::new_in)
    {
        Ok(file) => file,
        Err(error) => {
            return ToolOutcome::failure(format!(
                "cannot create a temporary file for the shell: {error}."
            ))
        }
    };
    let script = format!(
        "exec 2>&1; trap 'pwd -P > {}' EXIT\n{command}",
        shell_quote(&pwd_file.path().to_string_lossy())
    );
    let finished = match run_script(&script, &cwd, timeout, confined) {
        Ok(finished) => finished,
        Err(error) => return ToolOutcome::failure(format!("cannot run {SHELL}: {error}.")),
    };
    let new_cwd = next_cwd(workspace, &cwd, pwd_file.path(), &mut notes);
    workspace.with_state(|state| state.shell_cwd = new_cwd.clone());
    report(workspace, &finished, &cwd, &new_cwd, timeout, notes)
}

/// The environment and sandbox a command of `workspace` runs in.
fn confine_command(workspace: &Workspace) -> Result<Confined, String> {
    let temp = workspace
        .shell_temp()
        .map_err(|e| format!("cannot create the shell's temporary directory: {e}"))?;
    let env = shell_env(std::env::vars_os(), temp);
    let mode = workspace.limits().sandbox;
    // Only `strict` limits reads, to these.
    let toolchains = match mode {
        SandboxMode::Strict => toolchain_dirs(&env),
        _ => Vec::new(),
    };
    let sandbox = PreparedSandbox::new(mode, workspace.root(), temp, &toolchains)?;
    Ok(Confined { env, sandbox })
}

/// The working directory the command left behind, if it wrote one and it lies
/// inside the workspace; the root if it lies outside; `cwd` otherwise.
fn next_cwd(
    workspace: &Workspace,
    cwd: &Path,
    pwd_file: &Path,
    notes: &mut Vec<String>,
) -> PathBuf {
    let written = std::fs::read_to_string(pwd_file).unwrap_or_default();
    let written = written.trim_end_matches('\n');
    if written.is_empty() {
        return cwd.to_path_buf();
    }
    match std::fs::canonicalize(written) {
        Ok(next) if next.starts_with(workspace.root()) => next,
        _ => {
            notes.push(format!(
                "the command moved to {written}, outside the workspace; the working directory was reset to the workspace root."
            ));
            workspace.root().to_path_buf()
        }
    }
}

fn report(
    workspace: &Workspace,
    finished: &Finished,
    before: &Path,
    after: &Path,
    timeout: Duration,
    notes: Vec<String>,
) -> ToolOutcome {
    let mut text = String::new();
    if finished.timed_out {
        text.push_str(&format!(
            "the command timed out after {} and was killed (with its children); run it in the background or with a smaller input\n",
            seconds_text(timeout)
        ));
    } else {
        match (
            finished.status.code(),
            std::os::unix::process::ExitStatusExt::signal(&finished.status),
        ) {
            (Some(code), _) => text.push_str(&format!("exit code: {code}\n")),
            (None, Some(signal)) => text.push_str(&format!("killed by signal {signal}\n")),
            (None, None) => text.push_str("exit status unknown\n"),
        }
    }
    let moved = if after == before {
        String::new()
    } else {
        format!(" (changed from {})", workspace.relative(before))
    };
    text.push_str(&format!("cwd: {}{moved}\n", workspace.relative(after)));
    for note in &notes {
        text.push_str(&format!("note: {note}\n"));
    }
    if finished.output_left_open {
        text.push_str("note: processes it started in the background still hold the output; their later output is not shown. Redirect it to a file (e.g. `cmd > log.txt 2>&1 &`).\n");
    }
    let output = String::from_utf8_lossy(&finished.output);
    let label = if finished.timed_out {
        "output so far"
    } else {
        "output"
    };
    let sample = &finished.output[..finished.output.len().min(SAMPLE_BYTES)];
    if looks_binary(sample, finished.output.len() > SAMPLE_BYTES) {
        // Raw bytes read as text cost several tokens each and say nothing.
        text.push_str(&format!(
            "{label}: binary data, {} bytes, not shown; pipe it through `xxd | head`, `od -c | head` or `wc -c` to see it as text.\n",
            finished.output.len()
        ));
        text.push_str(&saved_note(
            workspace,
            &finished.output,
            finished.dropped_bytes,
        ));
    } else if output.is_empty() {
        text.push_str(&format!("{label}: (none)"));
    } else {
        let bounded = bound_output(&output, workspace.limits().output_chars);
        text.push_str(&format!("{label}:\n{}", bounded.text));
        if bounded.cut || finished.dropped_bytes > 0 {
            if !text.ends_with('\n') {
                text.push('\n');
            }
            text.push_str(&saved_note(
                workspace,
                &finished.output,
                finished.dropped_bytes,
            ));
        }
    }
    let failed = !finished.timed_out && !finished.status.success();
    if failed && workspace.limits().result_context {
        text.push_str(&failure_source(workspace, after, &output));
        text.push_str(&missing_paths(workspace, after, &output));
    }
    ToolOutcome {
        ok: !finished.timed_out && finished.status.success(),
        text: text.trim_end().to_string(),
        timed_out: finished.timed_out,
        ..ToolOutcome::success(String::new())
    }
}

fn saved_note(workspace: &Workspace, output: &[u8], dropped_bytes: u64) -> String {
    let dropped = if dropped_bytes > 0 {
        format!(" ({dropped_bytes} bytes beyond the capture limit were dropped)")
    } else {
        String::new()
    };
    let saved = workspace.with_state(|state| {
        save_output(&workspace.outputs_dir(), &mut state.saved_outputs, output)
    });
    match saved {
        Ok(path) => format!(
            "full output: {}{dropped} (read it with read_file or search it)",
            workspace.relative(&path)
        ),
        Err(error) => format!("the full output could not be saved: {error}{dropped}"),
    }
}

/// `1 s`, `2.5 s`.
fn seconds_text(duration: Duration) -> String {
    let seconds = duration.as_secs_f64();
    if seconds.fract() == 0.0 {
        format!("{} s", duration.as_secs())
    } else {
        format!("{seconds:.1} s")
    }
}

/// `text` as one single-quoted shell word.
fn shell_quote(text: &str) -> String {
    format!("'{}'", text.replace('\'', "'\\''"))
}
