//! The shell's sandbox on this kernel (Landlock): escapes through `shell` are refused
//! — each attempt is judged by the file system (or the listening socket) afterwards,
//! not by the command's message — while building and testing inside the workspace
//! still works. `strict` also keeps the home directory unreadable; `off` confines
//! nothing.

use std::fs;
use std::io::Write;
use std::net::TcpListener;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::Path;
use std::process::Command;
use std::time::Duration;

use rein_tools::{landlock_abi, SandboxMode, Shell, ToolLimits, Workspace};
use serde_json::json;

use crate::support::call;

/// A sandboxed workspace, a directory outside it with a file `victim`, and both paths.
struct Escape {
    _root: tempfile::TempDir,
    _outside: tempfile::TempDir,
    workspace: Workspace,
    out: String,
}

impl Escape {
    fn new(mode: SandboxMode) -> Self {
        let root = tempfile::tempdir().unwrap();
        let outside = tempfile::tempdir().unwrap();
        fs::write(outside.path().join("victim"), "original\n").unwrap();
        fs::set_permissions(
            outside.path().join("victim"),
            fs::Permissions::from_mode(0o644),
        )
        .unwrap();
        fs::write(root.path().join("inside.txt"), "inside\n").unwrap();
        let limits = ToolLimits {
            sandbox: mode,
            shell_timeout: Duration::from_secs(20),
            ..ToolLimits::default()
        };
        let workspace = Workspace::new(root.path(), limits).unwrap();
        let out = outside.path().to_string_lossy().into_owned();
        Self {
            _root: root,
            _outside: outside,
            workspace,
            out,
        }
    }

    fn run(&self, command: &str) -> String {
        call(&Shell, &self.workspace, json!({"command": command})).text
    }

    fn outside(&self, name: &str) -> std::path::PathBuf {
        Path::new(&self.out).join(name)
    }

    fn victim_untouched(&self) -> bool {
        let victim = self.outside("victim");
        let meta = fs::metadata(&victim).unwrap();
        fs::read_to_string(&victim).unwrap() == "original\n"
            && meta.permissions().mode() & 0o777 == 0o644
            && meta.nlink() == 1
    }
}

fn landlock_here() -> bool {
    landlock_abi() >= 4
}

/// Writes a tar and a zip whose entries climb out with `../`.
fn plant_archives(root: &Path, out: &str) {
    let script = format!(
        "import tarfile, zipfile, io\n\
         data = b'escaped'\n\
         with tarfile.open('evil.tar', 'w') as t:\n\
         \tinfo = tarfile.TarInfo('../../../../../..{out}/from_tar'); info.size = len(data)\n\
         \tt.addfile(info, io.BytesIO(data))\n\
         with zipfile.ZipFile('evil.zip', 'w') as z:\n\
         \tz.writestr('../../../../../..{out}/from_zip', data)\n"
    );
    let status = Command::new("python3")
        .arg("-c")
        .arg(script)
        .current_dir(root)
        .status()
        .unwrap();
    assert!(status.success());
}

/// Commands that create something in `out` (outside the workspace, a sibling of
/// it), and the name each creates there.
fn creations(out: &str) -> Vec<(String, String)> {
    let parent_name = Path::new(out).file_name().unwrap().to_string_lossy();
    vec![
        (format!("echo x > {out}/redirect"), "redirect".into()),
        (format!("cp inside.txt {out}/cp"), "cp".into()),
        (
            format!("cp inside.txt mv.txt; mv mv.txt {out}/mv"),
            "mv".into(),
        ),
        (format!("echo x | tee {out}/tee"), "tee".into()),
        (
            format!("python3 -c \"open('{out}/python', 'w').write('x')\""),
            "python".into(),
        ),
        (
            format!("dd if=/dev/zero of={out}/dd bs=1 count=1"),
            "dd".into(),
        ),
        (
            format!("ln -s {out} link; echo x > link/symlink"),
            "symlink".into(),
        ),
        (format!("echo x > ../{parent_name}/dotdot"), "dotdot".into()),
        (format!("touch {out}/touch"), "touch".into()),
        (
            format!("echo x > /proc/self/root{out}/procroot"),
            "procroot".into(),
        ),
        ("tar -xPf evil.tar".to_string(), "from_tar".into()),
        (
            "unzip -o evil.zip; unzip -o -: evil.zip".to_string(),
            "from_zip".into(),
        ),
        (format!("mkdir {out}/mkdir"), "mkdir".into()),
        (format!("ln -s /etc/passwd {out}/planted"), "planted".into()),
        (format!("cp -r . {out}/copy"), "copy".into()),
        (
            format!("install -D inside.txt {out}/install/f"),
            "install".into(),
        ),
        (
            format!("sh -c 'sh -c \"echo x > {out}/nested\"'"),
            "nested".into(),
        ),
        (
            format!("perl -e 'open(my $f, \">\", \"{out}/perl\") or exit 1; print $f 1'"),
            "perl".into(),
        ),
        (
            format!("(sleep 0.3; echo x > {out}/background) & sleep 1"),
            "background".into(),
        ),
        (format!("ln {out}/victim {out}/hardlink"), "hardlink".into()),
    ]
}

#[test]
fn twenty_five_escapes_are_refused_by_the_file_system() {
    if !landlock_here() {
        panic!("this kernel has no Landlock ABI 4; the sandbox cannot be tested here");
    }
    let e = Escape::new(SandboxMode::Workspace);
    let out = e.out.clone();
    let root = e.workspace.root().to_path_buf();
    plant_archives(&root, &out);
    let home = std::env::var("HOME").unwrap();
    let home_probe = format!("{home}/rein-sandbox-probe-{}", std::process::id());
    let _ = fs::remove_file(&home_probe);

    let creations = creations(&out);
    let mut attempts = 0;
    for (command, created) in &creations {
        let text = e.run(command);
        attempts += 1;
        assert!(!e.outside(created).exists(), "`{command}` escaped:\n{text}");
    }
    // `~` is outside too.
    e.run(&format!("echo x > {home_probe}"));
    attempts += 1;
    assert!(
        !Path::new(&home_probe).exists(),
        "wrote in the home directory"
    );

    // Changing what exists outside.
    let changes = [
        format!("echo x >> {out}/victim"),
        format!("chmod 777 {out}/victim"),
        format!("touch -d 2000-01-01 {out}/victim"),
        format!("truncate -s 0 {out}/victim"),
        format!("sed -i s/original/changed/ {out}/victim"),
        format!("rm -f {out}/victim"),
        // A hard link planted in the workspace reaches the same file.
        format!("ln {out}/victim planted_hardlink; echo x >> planted_hardlink"),
    ];
    let mtime = fs::metadata(e.outside("victim")).unwrap().mtime();
    for command in &changes {
        let text = e.run(command);
        attempts += 1;
        assert!(
            e.victim_untouched(),
            "`{command}` changed the victim:\n{text}"
        );
        assert_eq!(
            fs::metadata(e.outside("victim")).unwrap().mtime(),
            mtime,
            "`{command}`"
        );
    }

    // A connection to a loopback server started here.
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    listener.set_nonblocking(true).unwrap();
    let port = listener.local_addr().unwrap().port();
    for command in [
        format!("python3 -c \"import socket; socket.create_connection(('127.0.0.1', {port}), 2)\""),
        format!("curl -s -m 2 http://127.0.0.1:{port}/"),
    ] {
        let text = e.run(&command);
        attempts += 1;
        std::thread::sleep(Duration::from_millis(100));
        assert!(listener.accept().is_err(), "`{command}` connected:\n{text}");
    }
    assert!(attempts >= 25, "{attempts} attempts");

    // Meanwhile the workspace and the private temporary directory are writable.
    let text = e.run("echo ok > made.txt && t=$(mktemp) && echo ok > \"$t\" && cat \"$t\"");
    assert!(text.contains("exit code: 0"), "{text}");
    assert_eq!(fs::read_to_string(root.join("made.txt")).unwrap(), "ok\n");
}

#[test]
fn builds_and_tests_inside_the_workspace_still_work() {
    if !landlock_here() {
        panic!("this kernel has no Landlock ABI 4; the sandbox cannot be tested here");
    }
    let e = Escape::new(SandboxMode::Workspace);
    let root = e.workspace.root().to_path_buf();
    fs::write(
        root.join("hello.c"),
        "#include <stdio.h>\nint main(void) { puts(\"hello\"); return 0; }\n",
    )
    .unwrap();
    fs::write(
        root.join("Makefile"),
        "hello: hello.c\n\tcc -o hello hello.c\n",
    )
    .unwrap();
    let text = e.run("make && ./hello");
    assert!(
        text.contains("exit code: 0") && text.contains("hello"),
        "{text}"
    );

    fs::write(
        root.join("test_calc.py"),
        "import unittest\n\nclass T(unittest.TestCase):\n    def test_add(self):\n        self.assertEqual(1 + 1, 2)\n",
    )
    .unwrap();
    let runner = if Command::new("python3")
        .args(["-m", "pytest", "--version"])
        .output()
        .is_ok_and(|o| o.status.success())
    {
        "python3 -m pytest -q"
    } else {
        "python3 -m unittest -v"
    };
    let text = e.run(runner);
    assert!(text.contains("exit code: 0"), "{runner}: {text}");

    if Command::new("cargo").arg("--version").output().is_ok() {
        fs::create_dir_all(root.join("calc/src")).unwrap();
        fs::write(
            root.join("calc/Cargo.toml"),
            "[package]\nname = \"calc\"\nversion = \"0.1.0\"\nedition = \"2021\"\n",
        )
        .unwrap();
        fs::write(
            root.join("calc/src/lib.rs"),
            "pub fn add(a: i32, b: i32) -> i32 { a + b }\n#[test]\nfn adds() { assert_eq!(add(1, 2), 3); }\n",
        )
        .unwrap();
        let text = e.run("cd calc && cargo test --offline -q 2>&1");
        assert!(text.contains("exit code: 0"), "{text}");
        assert!(root.join("calc/target").is_dir());
    }
}

#[test]
fn strict_keeps_the_home_directory_unreadable() {
    if !landlock_here() {
        panic!("this kernel has no Landlock ABI 4; the sandbox cannot be tested here");
    }
    let home = std::env::var("HOME").unwrap();
    let secret_dir = tempfile::Builder::new()
        .prefix(".rein-secret-")
        .tempdir_in(&home)
        .unwrap();
    let secret = secret_dir.path().join("key");
    fs::File::create(&secret)
        .unwrap()
        .write_all(b"hunter2\n")
        .unwrap();
    let probe = format!("cat {}", secret.display());

    let workspace = Escape::new(SandboxMode::Workspace);
    assert!(
        workspace.run(&probe).contains("hunter2"),
        "workspace mode reads"
    );
    let strict = Escape::new(SandboxMode::Strict);
    let text = strict.run(&probe);
    assert!(!text.contains("hunter2"), "{text}");
    // Programs still run, the workspace is still theirs.
    let text = strict.run("cat inside.txt && python3 -c 'print(6*7)' && echo ok > w.txt");
    assert!(text.contains("inside") && text.contains("42"), "{text}");
    assert!(strict.workspace.root().join("w.txt").exists());
}

#[test]
fn with_the_sandbox_off_the_same_commands_reach_outside() {
    let e = Escape::new(SandboxMode::Off);
    plant_archives(e.workspace.root(), &e.out);
    for (command, created) in creations(&e.out) {
        let text = e.run(&command);
        assert!(
            e.outside(&created).exists(),
            "`{command}` did nothing:\n{text}"
        );
    }
    e.run(&format!("chmod 777 {}/victim", e.out));
    assert!(!e.victim_untouched());
}
