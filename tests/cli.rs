//! The `rein` binary: chat, models subcommands, and bad input.

use std::io::Write;

use crate::support::{rein, rein_command, stderr, stdout, tiny_model};

#[test]
fn chat_streams_a_reply_and_is_reproducible_with_a_seed() {
    // Loads a model: one model test at a time.
    let _model = rein_test_support::model_lock();
    tiny_model();
    let args = [
        "chat",
        "--model",
        "tiny",
        "--seed",
        "3",
        "--max-tokens",
        "24",
        "Say hi",
    ];
    let first = rein(&args);
    assert!(first.status.success(), "{}", stderr(&first));
    assert!(!stdout(&first).trim().is_empty());
    assert!(
        stderr(&first).trim().is_empty(),
        "quiet by default: {}",
        stderr(&first)
    );
    let second = rein(&args);
    assert_eq!(stdout(&first), stdout(&second));
}

#[test]
fn chat_accepts_a_path_and_a_system_message() {
    // Loads a model: one model test at a time.
    let _model = rein_test_support::model_lock();
    let path = tiny_model();
    let out = rein(&[
        "chat",
        "--model",
        path.to_str().unwrap(),
        "--system",
        "You answer in one word.",
        "--temperature",
        "0",
        "--max-tokens",
        "8",
        "--ctx",
        "512",
        "--threads",
        "2",
        "Colour of the sky?",
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(!stdout(&out).trim().is_empty());
}

/// Runs `rein chat` on the tiny model with `input` piped to its standard input.
fn chat_with_stdin(input: &str) -> std::process::Output {
    use std::process::Stdio;
    let mut child = rein_command()
        .args(["chat", "--model", "tiny", "--no-pull", "--temperature", "0"])
        .args(["--max-tokens", "8"])
        .env("REIN_NO_PROMPT_CACHE", "1")
        .env("REIN_CONFIG_DIR", crate::support::NO_USER_CONFIG)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run rein chat");
    let mut stdin = child.stdin.take().expect("stdin");
    stdin.write_all(input.as_bytes()).expect("write the prompt");
    drop(stdin);
    child.wait_with_output().expect("wait for rein chat")
}

#[test]
fn chat_takes_a_piped_prompt_and_refuses_an_empty_one() {
    // Loads a model: one model test at a time.
    let _model = rein_test_support::model_lock();
    tiny_model();
    let piped = chat_with_stdin("Say hi\n");
    assert!(piped.status.success(), "{}", stderr(&piped));
    let argument = rein(&[
        "chat",
        "--model",
        "tiny",
        "--no-pull",
        "--temperature",
        "0",
        "--max-tokens",
        "8",
        "Say hi\n",
    ]);
    assert!(argument.status.success(), "{}", stderr(&argument));
    assert!(!stdout(&piped).trim().is_empty());
    assert_eq!(
        stdout(&piped),
        stdout(&argument),
        "a piped prompt is the same prompt"
    );
    let empty = chat_with_stdin("  \n");
    assert!(!empty.status.success());
    assert!(stderr(&empty).contains("no prompt"), "{}", stderr(&empty));
}

#[test]
fn help_lists_the_values_of_enum_flags_and_completions_cover_four_shells() {
    let help = stdout(&rein(&["run", "--help"]));
    for listed in [
        "[possible values: naive, react, structured, full]",
        "[possible values: workspace, strict, off]",
        "[possible values: native, emulated]",
        "[possible values: f16, q8_0, q4_0]",
    ] {
        assert!(help.contains(listed), "missing {listed:?} in\n{help}");
    }
    let wrong = rein(&["run", "--profile", "fancy", "a task"]);
    assert!(!wrong.status.success());
    let error = stderr(&wrong);
    assert!(
        error.contains("invalid value 'fancy'") && error.contains("naive, react, structured, full"),
        "{error}"
    );
    for shell in ["bash", "zsh", "fish", "powershell"] {
        let out = rein(&["completions", shell]);
        assert!(out.status.success(), "{shell}: {}", stderr(&out));
        let script = stdout(&out);
        // Subcommands are completed, and (but for PowerShell's script, which clap
        // writes without them) the values of enum flags.
        let values: &[&str] = if shell == "powershell" {
            &[]
        } else {
            &["structured", "emulated"]
        };
        for word in ["chat", "models", "completions"].iter().chain(values) {
            assert!(script.contains(word), "{shell} completion lacks {word}");
        }
    }
    let unknown = rein(&["completions", "tcsh"]);
    assert!(!unknown.status.success());
}

/// Runs `rein` with `args` on the model cache `models` and the hub cache under `hf_home`.
fn rein_on_caches(
    args: &[&str],
    models: &std::path::Path,
    hf_home: &std::path::Path,
) -> std::process::Output {
    rein_command()
        .args(args)
        .env("REIN_MODELS_DIR", models)
        .env("HF_HOME", hf_home)
        .env("HF_HUB_OFFLINE", "1")
        .output()
        .expect("run rein")
}

#[test]
fn models_list_and_rm_cover_named_hub_and_quantized_files() {
    let tiny = tiny_model();
    let dir = tempfile::tempdir().unwrap();
    let models = dir.path().join("models");
    let hf_home = dir.path().join("hf");
    std::fs::create_dir_all(models.join("quantized")).unwrap();
    // The named model (a link to the real file, or a copy across file systems).
    let named = models.join(tiny.file_name().unwrap());
    if std::fs::hard_link(&tiny, &named).is_err() {
        std::fs::copy(&tiny, &named).unwrap();
    }
    // A quantized copy with its provenance record.
    let copy = models.join("quantized/tiny.q8_0.gguf");
    std::fs::copy(&tiny, &copy).unwrap();
    std::fs::write(
        models.join("quantized/tiny.q8_0.gguf.json"),
        r#"{"source_model": "tiny", "source_type": "Q4_1", "requantized": true}"#,
    )
    .unwrap();
    // A hub file, laid out as the hub cache lays it out (a local file stands in).
    let repo = hf_home.join("hub/models--someone--toy-GGUF");
    std::fs::create_dir_all(repo.join("blobs")).unwrap();
    std::fs::create_dir_all(repo.join("snapshots/0123abc")).unwrap();
    std::fs::create_dir_all(repo.join("refs")).unwrap();
    std::fs::write(repo.join("refs/main"), "0123abc").unwrap();
    std::fs::copy(&tiny, repo.join("blobs/feed")).unwrap();
    std::os::unix::fs::symlink("../../blobs/feed", repo.join("snapshots/0123abc/toy.gguf"))
        .unwrap();

    // Resolving a model records its use.
    let inspect = rein_on_caches(
        &["models", "inspect", "hf:someone/toy-GGUF/toy.gguf"],
        &models,
        &hf_home,
    );
    assert!(inspect.status.success(), "{}", stderr(&inspect));
    let list = rein_on_caches(&["models", "list"], &models, &hf_home);
    assert!(list.status.success(), "{}", stderr(&list));
    let text = stdout(&list);
    let block = |name: &str| {
        let mut lines = text.lines().skip_while(|l| !l.starts_with(name));
        let first = lines
            .next()
            .unwrap_or_else(|| panic!("no {name} in\n{text}"));
        format!("{first} {}", lines.next().unwrap_or_default())
    };
    assert!(block("tiny ").contains("pulled"), "{text}");
    let quantized = block("tiny.q8_0");
    assert!(
        quantized.contains("quantized q8_0 from tiny (Q4_1), requantized")
            && quantized.contains("last used never"),
        "{text}"
    );
    let hub = block("hf:someone/toy-GGUF/toy.gguf");
    assert!(
        hub.contains("from the hub") && hub.contains("UTC"),
        "{text}"
    );
    let json: serde_json::Value = serde_json::from_str(&stdout(&rein_on_caches(
        &["models", "list", "--json"],
        &models,
        &hf_home,
    )))
    .unwrap();
    let kind = |name: &str| {
        json["models"]
            .as_array()
            .unwrap()
            .iter()
            .find(|m| m["name"] == name)
            .map(|m| m["kind"].as_str().unwrap_or_default().to_string())
    };
    assert_eq!(kind("tiny").as_deref(), Some("named"), "{json}");
    assert_eq!(kind("tiny.q8_0").as_deref(), Some("quantized"), "{json}");
    assert_eq!(
        kind("hf:someone/toy-GGUF/toy.gguf").as_deref(),
        Some("hub"),
        "{json}"
    );

    // Removal: a hub file and its blob, a copy and its record, a named model by name.
    let rm = rein_on_caches(
        &["models", "rm", "hf:someone/toy-GGUF/toy.gguf"],
        &models,
        &hf_home,
    );
    assert!(rm.status.success(), "{}", stderr(&rm));
    assert!(!repo.join("blobs/feed").exists());
    let rm = rein_on_caches(&["models", "rm", copy.to_str().unwrap()], &models, &hf_home);
    assert!(rm.status.success(), "{}", stderr(&rm));
    assert!(!models.join("quantized/tiny.q8_0.gguf.json").exists());
    let outside = dir.path().join("mine.gguf");
    std::fs::copy(&tiny, &outside).unwrap();
    let refused = rein_on_caches(
        &["models", "rm", outside.to_str().unwrap()],
        &models,
        &hf_home,
    );
    assert!(!refused.status.success());
    assert!(
        stderr(&refused).contains("not in rein's model caches"),
        "{}",
        stderr(&refused)
    );
    assert!(outside.is_file());
    let rm = rein_on_caches(&["models", "rm", "tiny"], &models, &hf_home);
    assert!(rm.status.success(), "{}", stderr(&rm));
    assert!(
        !named.exists() && tiny.is_file(),
        "the real cache is untouched"
    );
    let text = stdout(&rein_on_caches(&["models", "list"], &models, &hf_home));
    assert!(
        text.lines()
            .any(|l| l.starts_with("tiny ") && l.contains("not pulled")),
        "{text}"
    );
    assert!(
        !text.contains("tiny.q8_0") && !text.contains("hf:"),
        "{text}"
    );
}

/// Runs `rein` with `args` and run records in `runs`.
fn rein_with_runs(args: &[&str], runs: &std::path::Path) -> std::process::Output {
    rein_command()
        .args(args)
        .env("REIN_RUNS_DIR", runs)
        .output()
        .expect("run rein")
}

#[test]
fn undo_restores_a_recorded_run_and_refuses_a_file_changed_since() {
    let workspace = tempfile::tempdir().unwrap();
    let runs = tempfile::tempdir().unwrap();
    let root = workspace.path();
    let none = rein_with_runs(&["undo"], runs.path());
    assert!(!none.status.success());
    assert!(
        stderr(&none).contains("no run left to undo"),
        "{}",
        stderr(&none)
    );

    std::fs::write(root.join("a.txt"), "a before\n").unwrap();
    std::fs::write(root.join("b.txt"), "b before\n").unwrap();
    std::fs::write(root.join("gone.txt"), "deleted by the run\n").unwrap();
    let recorder = rein_tools::RunRecorder::start(root, &runs.path().join("run-1")).unwrap();
    std::fs::write(root.join("a.txt"), "a by the run\n").unwrap();
    std::fs::write(root.join("b.txt"), "b by the run\n").unwrap();
    std::fs::remove_file(root.join("gone.txt")).unwrap();
    std::fs::write(root.join("new.txt"), "made by the run\n").unwrap();
    recorder.finish().unwrap();
    // The user edits one of the files after the run.
    std::fs::write(root.join("b.txt"), "b by the user\n").unwrap();

    let listed: serde_json::Value = serde_json::from_str(&stdout(&rein_with_runs(
        &["undo", "--list", "--json"],
        runs.path(),
    )))
    .unwrap();
    assert_eq!(listed["runs"][0]["run"], "run-1", "{listed}");
    assert_eq!(listed["runs"][0]["files"], 4, "{listed}");
    let list = rein_with_runs(&["undo", "--list"], runs.path());
    assert!(
        stdout(&list).starts_with("run-1  4 file(s)"),
        "{}",
        stdout(&list)
    );
    let undo = rein_with_runs(&["undo"], runs.path());
    assert!(
        !undo.status.success(),
        "a file was left alone: the exit says so"
    );
    let text = stdout(&undo);
    assert!(
        text.contains("restored a.txt") && text.contains("restored gone.txt"),
        "{text}"
    );
    assert!(text.contains("removed  new.txt"), "{text}");
    assert!(
        text.contains("left     b.txt: changed again since the run"),
        "{text}"
    );
    assert!(
        stderr(&undo).contains("1 file(s) were left as they are"),
        "{}",
        stderr(&undo)
    );
    assert_eq!(
        std::fs::read_to_string(root.join("a.txt")).unwrap(),
        "a before\n"
    );
    assert_eq!(
        std::fs::read_to_string(root.join("gone.txt")).unwrap(),
        "deleted by the run\n"
    );
    assert_eq!(
        std::fs::read_to_string(root.join("b.txt")).unwrap(),
        "b by the user\n"
    );
    assert!(!root.join("new.txt").exists());

    let again = rein_with_runs(&["undo", "run-1"], runs.path());
    assert!(!again.status.success());
    assert!(
        stderr(&again).contains("undone already"),
        "{}",
        stderr(&again)
    );
}

/// Runs `rein` with `args` in `cwd`, the user's configuration in `user`.
fn rein_configured(
    args: &[&str],
    cwd: &std::path::Path,
    user: &std::path::Path,
) -> std::process::Output {
    rein_command()
        .args(args)
        .current_dir(cwd)
        .env_remove("REIN_SANDBOX")
        .env("REIN_CONFIG_DIR", user)
        .output()
        .expect("run rein")
}

#[test]
fn rein_toml_settings_are_defaults_that_flags_and_the_environment_override() {
    tiny_model();
    let user = tempfile::tempdir().unwrap();
    let here = tempfile::tempdir().unwrap();
    std::fs::write(
        user.path().join("rein.toml"),
        "[defaults]\nmodel = \"tiny\"\n\n[run]\nmax-turns = 7\nprofile = \"structured\"\n\n[models.inspect]\nctx = 1024\n",
    )
    .unwrap();
    std::fs::write(
        here.path().join("rein.toml"),
        "[run]\nmax_turns = 9\n\n[models.inspect]\nctx = 2048\n\n[mcp.servers.notes]\nurl = \"http://127.0.0.1:9/mcp\"\n",
    )
    .unwrap();
    let show = rein_configured(&["config", "show", "run"], here.path(), user.path());
    assert!(show.status.success(), "{}", stderr(&show));
    let text = stdout(&show);
    let row = |flag: &str| {
        text.lines()
            .find(|l| l.starts_with(&format!("{flag} ")))
            .unwrap_or_else(|| panic!("no {flag} in\n{text}"))
            .to_string()
    };
    // The current directory's file wins over the user's; [defaults] reaches every command.
    assert!(
        row("max-turns").contains(" 9 ") && row("max-turns").contains("[run]"),
        "{text}"
    );
    assert!(
        row("profile").contains("structured")
            && row("profile").contains(&user.path().display().to_string()),
        "{text}"
    );
    assert!(
        row("model").contains("tiny") && row("model").contains("[defaults]"),
        "{text}"
    );
    assert!(row("temperature").ends_with("default"), "{text}");
    let json: serde_json::Value = serde_json::from_str(&stdout(&rein_configured(
        &["config", "show", "run", "--json"],
        here.path(),
        user.path(),
    )))
    .unwrap();
    let max_turns = json["settings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["flag"] == "max-turns")
        .cloned()
        .unwrap();
    assert_eq!(max_turns["value"], "9", "{json}");
    assert_eq!(json["files"][1]["read"], true, "{json}");
    let mut with_env = rein_command();
    with_env
        .args(["config", "show", "run"])
        .current_dir(here.path())
        .env("REIN_CONFIG_DIR", user.path())
        .env("REIN_SANDBOX", "off");
    let text = stdout(&with_env.output().unwrap());
    assert!(text.contains("environment REIN_SANDBOX"), "{text}");

    // A real command takes the file's value, and a flag overrides it.
    let inspect = rein_configured(&["models", "inspect", "tiny"], here.path(), user.path());
    assert!(
        stdout(&inspect).contains("1 sessions of 2048 tokens"),
        "{}",
        stdout(&inspect)
    );
    let flagged = rein_configured(
        &["models", "inspect", "tiny", "--ctx", "512"],
        here.path(),
        user.path(),
    );
    assert!(
        stdout(&flagged).contains("1 sessions of 512 tokens"),
        "{}",
        stdout(&flagged)
    );

    // An unknown key names itself, the file and the nearest valid key; a bad value is
    // refused with the values there are.
    std::fs::write(here.path().join("rein.toml"), "[run]\nmax_turn = 3\n").unwrap();
    let unknown = rein_configured(&["config", "show"], here.path(), user.path());
    assert!(!unknown.status.success());
    let error = stderr(&unknown);
    assert!(
        error.contains("unknown setting `max_turn` in [run]")
            && error.contains(&here.path().join("rein.toml").display().to_string())
            && error.contains("the nearest valid key is `max-turns`"),
        "{error}"
    );
    std::fs::write(
        here.path().join("rein.toml"),
        "[run]\nprofile = \"fancy\"\n",
    )
    .unwrap();
    let bad = rein_configured(&["config", "show"], here.path(), user.path());
    assert!(!bad.status.success());
    assert!(
        stderr(&bad).contains("`profile` in [run]")
            && stderr(&bad).contains("naive, react, structured, full"),
        "{}",
        stderr(&bad)
    );
    std::fs::write(here.path().join("rein.toml"), "[rn]\nprofile = \"full\"\n").unwrap();
    let table = rein_configured(&["config", "show"], here.path(), user.path());
    assert!(
        stderr(&table).contains("unknown table `[rn]`; the nearest valid key is `run`"),
        "{}",
        stderr(&table)
    );
}

#[test]
fn models_path_list_and_inspect() {
    let path = tiny_model();
    let out = rein(&["models", "path", "tiny"]);
    assert!(out.status.success());
    assert_eq!(stdout(&out).trim(), path.to_str().unwrap());

    let list = stdout(&rein(&["models", "list"]));
    assert!(
        list.lines()
            .any(|l| l.starts_with("tiny") && l.contains("pulled")),
        "{list}"
    );
    assert!(list.lines().any(|l| l.starts_with("default")), "{list}");

    let out = rein(&["models", "inspect", "tiny", "--ctx", "4096"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let text = stdout(&out);
    for expected in [
        "architecture     llama",
        "file type        Q4_1",
        "layers           30",
        "kv heads         3",
        "context length   8192",
        "chat template    yes",
        "90.00 MiB for 4096 tokens of f16",
        "vocabulary       49152",
        "plan             1 sessions of 4096 tokens, f16 KV cache",
        "gpu layers       0 of 31",
        "fits             yes",
    ] {
        assert!(text.contains(expected), "missing {expected:?} in\n{text}");
    }
}

#[test]
fn inspect_prints_the_plan_for_several_sessions() {
    tiny_model();
    let row = |text: &str, key: &str| {
        text.lines()
            .find_map(|l| l.strip_prefix(key))
            .map(|v| v.trim().to_string())
            .unwrap_or_else(|| panic!("no {key:?} row in\n{text}"))
    };
    let out = rein(&[
        "models",
        "inspect",
        "tiny",
        "--ctx",
        "2048",
        "--kv",
        "q8_0",
        "--sessions",
        "4",
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    let text = stdout(&out);
    assert_eq!(
        row(&text, "plan"),
        "4 sessions of 2048 tokens, q8_0 KV cache"
    );
    // 4 × 2048 tokens × 23,040 bytes per token at f16, 34/64 of that at q8_0.
    assert!(row(&text, "ram").contains("KV 95.62 MiB"), "{text}");
    assert_eq!(row(&text, "fits"), "yes");

    // A context no machine has the memory for: the plan says so and how many fit.
    let out = rein(&[
        "models",
        "inspect",
        "tiny",
        "--ctx",
        "200000000",
        "--sessions",
        "2",
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    let text = stdout(&out);
    assert_eq!(row(&text, "fits"), "no");
    assert_eq!(row(&text, "sessions fit"), "0");
}

#[test]
fn a_model_that_cannot_fit_is_refused_up_front_with_the_numbers() {
    tiny_model();
    assert_clean_failure(
        &["chat", "--model", "tiny", "--ctx", "200000000", "hi"],
        "1 sessions of 200000000 tokens need about",
    );
    assert_clean_failure(
        &[
            "serve",
            "--model",
            "tiny",
            "--ctx",
            "100000000",
            "--sessions",
            "8",
            "--port",
            "0",
        ],
        "not even one session fits",
    );
}

#[test]
fn pulling_a_present_model_is_a_no_op() {
    let path = tiny_model();
    let before = std::fs::metadata(&path).unwrap().modified().unwrap();
    let out = rein(&["models", "pull", "tiny"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(stderr(&out).contains("already in the cache"));
    assert_eq!(
        std::fs::metadata(&path).unwrap().modified().unwrap(),
        before
    );
}

/// Asserts a failed run with a one-line error containing `needle` and no panic.
fn assert_clean_failure(args: &[&str], needle: &str) {
    let out = rein(args);
    let err = stderr(&out);
    assert!(!out.status.success(), "{args:?} should fail");
    assert!(!err.contains("panicked"), "{err}");
    assert_eq!(err.trim().lines().count(), 1, "one line expected: {err}");
    assert!(
        err.contains(needle),
        "{args:?}: expected {needle:?} in {err}"
    );
}

#[test]
fn bad_input_gets_a_one_line_error() {
    // Loads a model: one model test at a time.
    let _model = rein_test_support::model_lock();
    tiny_model();
    assert_clean_failure(
        &["chat", "--model", "nonesuch", "hi"],
        "unknown model `nonesuch`",
    );
    assert_clean_failure(
        &["chat", "--model", "/nonexistent/m.gguf", "hi"],
        "model file not found",
    );
    assert_clean_failure(
        &["models", "inspect", "/nonexistent/m.gguf"],
        "model file not found",
    );

    let dir = tempfile::tempdir().unwrap();
    let not_gguf = dir.path().join("notes.gguf");
    std::fs::write(&not_gguf, b"just some text, not a model").unwrap();
    assert_clean_failure(
        &["chat", "--model", not_gguf.to_str().unwrap(), "hi"],
        "not a GGUF file",
    );

    // The first megabyte of the real model: a valid header, missing tensors.
    let truncated = dir.path().join("truncated.gguf");
    let bytes = std::fs::read(tiny_model()).unwrap();
    std::fs::File::create(&truncated)
        .unwrap()
        .write_all(&bytes[..1 << 20])
        .unwrap();
    assert_clean_failure(
        &["chat", "--model", truncated.to_str().unwrap(), "hi"],
        "truncated",
    );
    assert_clean_failure(
        &["models", "inspect", truncated.to_str().unwrap()],
        "truncated",
    );

    let long = "word ".repeat(400);
    assert_clean_failure(
        &["chat", "--model", "tiny", "--ctx", "128", &long],
        "shorten the prompt or raise --ctx",
    );
    assert_clean_failure(
        &["chat", "--model", "tiny", "--temperature=-1", "hi"],
        "--temperature must be between 0 and 5",
    );
}

#[test]
fn a_named_model_not_in_the_cache_says_how_to_pull_it() {
    let empty = tempfile::tempdir().unwrap();
    for args in [
        &["models", "path", "small"][..],
        &["chat", "--no-pull", "--model", "small", "hi"][..],
    ] {
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_rein"))
            .args(args)
            .env("REIN_MODELS_DIR", empty.path())
            .output()
            .unwrap();
        assert!(!out.status.success(), "{args:?}");
        assert!(
            stderr(&out).contains("rein models pull small"),
            "{args:?}: {}",
            stderr(&out)
        );
    }
}

#[test]
fn an_offline_hub_source_that_is_not_cached_is_a_clean_error() {
    let hf_home = tempfile::tempdir().unwrap();
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_rein"))
        .args(["chat", "--model", "hf:someone/some-repo/model.gguf", "hi"])
        .env("HF_HUB_OFFLINE", "1")
        .env("HF_HOME", hf_home.path())
        .output()
        .unwrap();
    let err = stderr(&out);
    assert!(!out.status.success());
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    assert!(err.contains("HF_HUB_OFFLINE is set"), "{err}");
}

fn tools_file(dir: &std::path::Path, tools: serde_json::Value) -> String {
    let path = dir.join("tools.json");
    std::fs::write(&path, tools.to_string()).unwrap();
    path.to_str().unwrap().to_string()
}

#[test]
fn chat_with_tools_prints_checked_calls_with_the_tools_own_names() {
    // Loads a model: one model test at a time.
    let _model = rein_test_support::model_lock();
    tiny_model();
    let dir = tempfile::tempdir().unwrap();
    let file = tools_file(
        dir.path(),
        serde_json::json!([{"type": "function", "function": {"name": "list_files", "description": "List the files of a folder",
            "parameters": {"type": "object", "properties": {"dir path": {"type": "str"}, "depth": {"type": "int", "minimum": 1, "maximum": 3}}, "required": ["dir path", "depth"]}}}]),
    );
    let out = rein(&[
        "chat",
        "--model",
        "tiny",
        "--tools",
        &file,
        "--tool-choice",
        "required",
        "--no-parallel-tool-calls",
        "--json",
        "--seed",
        "1",
        "--max-tokens",
        "200",
        "List the files in src",
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    let text = stdout(&out);
    let last: serde_json::Value =
        serde_json::from_str(text.trim().lines().last().unwrap()).unwrap();
    let calls = last["tool_calls"].as_array().unwrap();
    assert_eq!(calls.len(), 1, "{last}");
    assert_eq!(calls[0]["name"], "list_files");
    let depth = calls[0]["arguments"]["depth"].as_i64().unwrap();
    assert!((1..=3).contains(&depth), "{last}");
    assert!(calls[0]["arguments"]["dir path"].is_string(), "{last}");
}

#[test]
fn bad_tool_files_get_a_one_line_error() {
    // Loads a model: one model test at a time.
    let _model = rein_test_support::model_lock();
    tiny_model();
    let dir = tempfile::tempdir().unwrap();
    let tool = |name: &str| serde_json::json!({"type": "function", "function": {"name": name}});
    let cases = [
        (
            serde_json::json!({"not": "a list"}),
            "expected a JSON array",
        ),
        (
            serde_json::json!([tool("a"), tool("a")]),
            "two tools are named `a`",
        ),
        (
            serde_json::json!([tool("bad name!")]),
            "tool name `bad name!` is not allowed",
        ),
        (
            serde_json::json!([{"type": "function", "function": {"name": "t", "parameters": {"type": "object", "properties": {"x": {"$ref": "#/$defs/Nope"}}}}}]),
            "cannot resolve $ref",
        ),
    ];
    for (tools, needle) in cases {
        let file = tools_file(dir.path(), tools);
        assert_clean_failure(&["chat", "--model", "tiny", "--tools", &file, "hi"], needle);
    }
    let file = tools_file(dir.path(), serde_json::json!([tool("a")]));
    assert_clean_failure(
        &[
            "chat",
            "--model",
            "tiny",
            "--tools",
            &file,
            "--tool-choice",
            "b",
            "hi",
        ],
        "tool_choice names `b`",
    );
}
