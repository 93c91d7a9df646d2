//! `rein chat`'s interactive session in a real terminal (tmux, tiny model): a second
//! turn that reuses the first's tokens, Ctrl-C that stops a reply and keeps the
//! session, `/save` then `/load`, Ctrl-D, and the history file.

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use crate::support::{tiny_model, NO_USER_CONFIG};

/// What the pane's shell prints, with the status, when the program has exited.
const EXITED: &str = "program exited with status";

/// How long one step may take before the test fails with the screen.
const STEP: Duration = Duration::from_secs(120);

/// A tmux server of its own with one session running a command.
pub(crate) struct Tmux {
    socket: String,
}

impl Tmux {
    /// Starts `program` with `args` in a pane of its own tmux server (whose environment,
    /// and so the program's, is this process's with `env` set and `RUST_LOG` removed).
    /// A shell runs it, then prints its exit status and waits; the shell catches
    /// SIGINT (so Ctrl-C reaches the program alone), and the program starts with the
    /// default disposition, as from a user's shell.
    pub(crate) fn start(program: &Path, args: &[&str], env: &[(&str, &Path)]) -> Self {
        let version = Command::new("tmux").arg("-V").output();
        assert!(
            version.is_ok_and(|v| v.status.success()),
            "tmux is not installed (scripts/test.sh installs it)"
        );
        let quoted: Vec<String> = std::iter::once(program.display().to_string())
            .chain(args.iter().map(|a| a.to_string()))
            .map(|word| format!("'{}'", word.replace('\'', "'\\''")))
            .collect();
        let script = format!(
            "trap : INT; {}; echo \"{EXITED} $?\"; sleep 600",
            quoted.join(" ")
        );
        // One server per test, tests of one process running at once.
        static SERVERS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
        let n = SERVERS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let socket = format!("rein-chat-test-{}-{n}", std::process::id());
        let mut command = Command::new("tmux");
        command
            .args(["-L", &socket, "-f", "/dev/null", "new-session", "-d"])
            .args(["-s", "chat", "-x", "160", "-y", "50", "sh", "-c", &script])
            .env_remove("RUST_LOG");
        for (name, value) in env {
            command.env(name, value);
        }
        let status = command.status().expect("start tmux");
        assert!(status.success(), "tmux new-session failed");
        Self { socket }
    }

    /// Sends tmux key names (`Enter`, `C-c`) or, with `literal`, text as typed.
    pub(crate) fn keys(&self, keys: &[&str], literal: bool) {
        let mut command = Command::new("tmux");
        command.args(["-L", &self.socket, "send-keys", "-t", "chat"]);
        if literal {
            command.arg("-l");
        }
        let status = command.args(keys).status().expect("tmux send-keys");
        assert!(status.success());
    }

    /// Types `line` and presses Enter.
    pub(crate) fn line(&self, line: &str) {
        self.keys(&[line], true);
        self.keys(&["Enter"], false);
    }

    /// The pane's text with its scrollback, wrapped lines joined.
    pub(crate) fn screen(&self) -> String {
        let out = Command::new("tmux")
            .args(["-L", &self.socket, "capture-pane", "-p", "-J"])
            .args(["-S", "-5000", "-t", "chat"])
            .output()
            .expect("tmux capture-pane");
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    /// Waits until `done` holds for the screen, and returns it; fails with the screen.
    pub(crate) fn wait(&self, what: &str, done: impl Fn(&str) -> bool) -> String {
        let start = Instant::now();
        loop {
            let screen = self.screen();
            if done(&screen) {
                return screen;
            }
            assert!(
                start.elapsed() < STEP,
                "waited {STEP:?} for {what}; the screen:\n{screen}"
            );
            std::thread::sleep(Duration::from_millis(200));
        }
    }

    /// Waits for the session's `n`th prompt.
    fn prompts(&self, n: usize) -> String {
        self.wait(&format!("prompt {n}"), |s| prompt_count(s) >= n)
    }
}

impl Drop for Tmux {
    fn drop(&mut self) {
        let _ = Command::new("tmux")
            .args(["-L", &self.socket, "kill-server"])
            .status();
    }
}

/// Lines that start with the session's prompt.
fn prompt_count(screen: &str) -> usize {
    screen.lines().filter(|l| l.starts_with(">>>")).count()
}

/// The numbers of the last `/stats` line that starts with `last turn:`: (prompt tokens,
/// reused tokens).
fn last_turn(screen: &str) -> (usize, usize) {
    let line = screen
        .lines()
        .rev()
        .find(|l| l.starts_with("last turn: "))
        .unwrap_or_else(|| panic!("no /stats line in\n{screen}"));
    let numbers: Vec<usize> = line
        .split(|c: char| !c.is_ascii_digit())
        .filter_map(|n| n.parse().ok())
        .collect();
    (numbers[0], numbers[1])
}

/// The number of the last `/stats` line's messages in the conversation.
fn messages(screen: &str) -> usize {
    let line = screen
        .lines()
        .rev()
        .find(|l| l.starts_with("session: "))
        .unwrap_or_else(|| panic!("no /stats line in\n{screen}"));
    let before = line
        .split(" message(s) in the conversation")
        .next()
        .unwrap_or_default();
    before
        .rsplit(' ')
        .next()
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no message count in {line:?}"))
}

#[test]
fn a_session_reuses_its_tokens_survives_ctrl_c_and_saves_and_loads() {
    // Loads a model: one model test at a time.
    let _model = rein_test_support::model_lock();
    tiny_model();
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let tmux = Tmux::start(
        Path::new(env!("CARGO_BIN_EXE_rein")),
        &[
            "chat",
            "--model",
            "tiny",
            "--no-pull",
            "--temperature",
            "0",
            "--max-tokens",
            "400",
            "--ctx",
            "2048",
            "--threads",
            "2",
        ],
        &[
            ("REIN_NO_PROMPT_CACHE", Path::new("1")),
            ("REIN_CONFIG_DIR", Path::new(NO_USER_CONFIG)),
            ("XDG_DATA_HOME", &data),
        ],
    );
    tmux.wait("the greeting", |s| s.contains("/help lists the commands"));
    tmux.prompts(1);

    // Two turns: the second evaluates only what the first did not.
    tmux.line("Say hi");
    tmux.prompts(2);
    tmux.line("/stats");
    let screen = tmux.wait("stats of turn 1", |s| s.contains("session: 1 turn(s)"));
    let (first_prompt, _) = last_turn(&screen);
    tmux.prompts(3);
    tmux.line("Say it again");
    tmux.prompts(4);
    tmux.line("/stats");
    let screen = tmux.wait("stats of turn 2", |s| s.contains("session: 2 turn(s)"));
    let (second_prompt, second_reused) = last_turn(&screen);
    assert!(
        second_reused >= first_prompt && second_reused < second_prompt,
        "turn 2 reused {second_reused} of {second_prompt} prompt tokens; turn 1's prompt had {first_prompt}\n{screen}"
    );
    assert_eq!(messages(&screen), 4, "{screen}");
    tmux.prompts(5);

    // Ctrl-C stops a long reply; the session answers the next message.
    tmux.line("Count from 1 to 300, one number per line.");
    tmux.wait("the reply to start", |s| {
        s.lines()
            .skip_while(|l| !l.contains("Count from 1 to 300"))
            .skip(1)
            .any(|l| !l.trim().is_empty())
    });
    tmux.keys(&["C-c"], false);
    let screen = tmux.prompts(6);
    assert!(screen.contains("[stopped]"), "{screen}");
    tmux.line("Say bye");
    tmux.prompts(7);

    // /save, /reset, /load give back the same conversation.
    let saved = dir.path().join("conversation.json");
    tmux.line(&format!("/save {}", saved.display()));
    tmux.wait("the save", |s| s.contains("saved to"));
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&saved).unwrap()).unwrap();
    let saved_messages = json["messages"].as_array().unwrap().len();
    assert!(saved_messages >= 7, "{json}");
    tmux.line("/reset");
    tmux.wait("the reset", |s| {
        s.contains("The conversation is forgotten.")
    });
    tmux.line(&format!("/load {}", saved.display()));
    tmux.wait("the load", |s| s.contains("loaded from"));
    tmux.line("/stats");
    let screen = tmux.wait("stats after the load", |s| s.contains("session: 3 turn(s)"));
    assert_eq!(messages(&screen), saved_messages, "{screen}");

    // Ctrl-D leaves; what was typed is in the history file.
    tmux.keys(&["C-d"], false);
    let screen = tmux.wait("the exit", |s| s.contains(EXITED));
    assert!(screen.contains(&format!("{EXITED} 0")), "{screen}");
    let history = std::fs::read_to_string(data.join("rein").join("chat_history")).unwrap();
    assert!(history.contains("Say it again"), "{history}");
}
