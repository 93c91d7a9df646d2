//! Every path parameter is confined to the workspace: escapes through `..`,
//! absolute paths, symbolic links, `~` and NUL bytes are refused, and nothing
//! outside is read or written.

use std::fs;
use std::os::unix::fs::symlink;
use std::path::{Path, PathBuf};

use rein_tools::{EditFile, ListDir, ReadFile, Search, Tool, ToolLimits, Workspace};
use serde_json::{json, Value};

const SECRET: &str = "TOP SECRET outside the workspace\n";

struct Setup {
    _dir: tempfile::TempDir,
    workspace: Workspace,
    outside: PathBuf,
}

/// `<tmp>/ws` is the workspace; `<tmp>/outside` holds a secret. Inside the
/// workspace: links to the outside directory (relative and absolute), to the secret
/// file, and a link to an inside file.
fn setup() -> Setup {
    let dir = tempfile::tempdir().unwrap();
    let base = fs::canonicalize(dir.path()).unwrap();
    let root = base.join("ws");
    let outside = base.join("outside");
    fs::create_dir_all(root.join("sub")).unwrap();
    fs::create_dir_all(&outside).unwrap();
    fs::write(outside.join("secret.txt"), SECRET).unwrap();
    fs::write(root.join("inside.txt"), "inside\n").unwrap();
    symlink("../outside", root.join("out_link")).unwrap();
    symlink(&outside, root.join("sub/abs_link")).unwrap();
    symlink("../outside/secret.txt", root.join("secret_link")).unwrap();
    symlink("inside.txt", root.join("inside_link")).unwrap();
    let workspace = Workspace::new(&root, ToolLimits::default()).unwrap();
    Setup {
        _dir: dir,
        workspace,
        outside,
    }
}

fn listing(directory: &Path) -> Vec<String> {
    let mut names: Vec<String> = fs::read_dir(directory)
        .unwrap()
        .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

fn assert_refused(tool: &dyn Tool, workspace: &Workspace, args: Value) {
    let outcome = tool.call(&args, workspace);
    assert!(
        !outcome.ok,
        "{} {args} was allowed: {}",
        tool.name(),
        outcome.text
    );
    let explained = ["is outside the workspace", "starts with `~`", "NUL byte"]
        .iter()
        .any(|reason| outcome.text.contains(reason));
    assert!(explained, "{} {args}: {}", tool.name(), outcome.text);
    assert!(
        !outcome.text.contains("TOP SECRET"),
        "{} {args} leaked: {}",
        tool.name(),
        outcome.text
    );
    assert!(outcome.changed_files.is_empty());
}

#[test]
fn escapes_are_refused_and_nothing_outside_is_touched() {
    let setup = setup();
    let workspace = &setup.workspace;
    let outside = setup.outside.display().to_string();
    let write_file = rein_tools::WriteFile;

    let reads = [
        "../outside/secret.txt".to_string(),
        format!("{outside}/secret.txt"),
        "secret_link".to_string(),
        "out_link/secret.txt".to_string(),
        "sub/abs_link/secret.txt".to_string(),
        "sub/../../outside/secret.txt".to_string(),
        "./../outside/secret.txt".to_string(),
        "~/.bashrc".to_string(),
        "/etc/passwd".to_string(),
        "/dev/null".to_string(),
        "inside.txt\0/../../outside".to_string(),
    ];
    for path in &reads {
        assert_refused(&ReadFile, workspace, json!({"path": path}));
    }

    let writes = [
        "../outside/new.txt".to_string(),
        format!("{outside}/new.txt"),
        "out_link/new.txt".to_string(),
        "sub/abs_link/new.txt".to_string(),
        "secret_link".to_string(),
        "newdir/../../outside/new.txt".to_string(),
        "~/new.txt".to_string(),
        "../ws_sibling.txt".to_string(),
    ];
    for path in &writes {
        assert_refused(
            &write_file,
            workspace,
            json!({"path": path, "content": "pwned"}),
        );
    }

    for path in [
        "secret_link",
        "../outside/secret.txt",
        "out_link/secret.txt",
    ] {
        assert_refused(
            &EditFile,
            workspace,
            json!({"path": path, "old_string": "TOP", "new_string": "pwned"}),
        );
    }

    for path in ["..", "out_link", "/", "sub/abs_link", "~"] {
        assert_refused(&ListDir, workspace, json!({"path": path}));
    }

    for path in ["..", "out_link", "secret_link", &outside] {
        assert_refused(
            &Search,
            workspace,
            json!({"pattern": "SECRET", "path": path}),
        );
    }

    assert_eq!(listing(&setup.outside), ["secret.txt"]);
    assert_eq!(
        fs::read_to_string(setup.outside.join("secret.txt")).unwrap(),
        SECRET
    );
    let base = setup.outside.parent().unwrap();
    assert_eq!(listing(base), ["outside", "ws"]);
    assert!(!workspace.root().join("newdir").exists());
}

#[test]
fn search_from_the_root_does_not_follow_links_outside() {
    let setup = setup();
    let outcome = Search.call(&json!({"pattern": "TOP SECRET"}), &setup.workspace);
    assert!(outcome.ok);
    assert!(
        outcome
            .text
            .starts_with("No matches for `TOP SECRET` in `.`"),
        "{}",
        outcome.text
    );
    assert!(!outcome.text.contains("secret_link:"), "{}", outcome.text);
}

#[test]
fn paths_inside_are_accepted_absolute_or_through_inside_links() {
    let setup = setup();
    let workspace = &setup.workspace;
    let absolute = workspace.root().join("inside.txt").display().to_string();
    let by_absolute = ReadFile.call(&json!({"path": absolute}), workspace);
    assert!(by_absolute.ok, "{}", by_absolute.text);
    let by_link = ReadFile.call(&json!({"path": "inside_link", "limit": 5}), workspace);
    assert!(by_link.text.contains("   1| inside"), "{}", by_link.text);
    assert_eq!(
        workspace.resolve("sub/../inside.txt").unwrap(),
        workspace.root().join("inside.txt")
    );
}

#[test]
fn the_refusal_names_the_path_and_the_root() {
    let setup = setup();
    let refusal = setup.workspace.resolve("../x").unwrap_err().to_string();
    assert_eq!(
        refusal,
        format!(
            "`../x` is outside the workspace ({}); use a path inside it",
            setup.workspace.root().display()
        )
    );
    let through_link = setup
        .workspace
        .resolve("out_link/secret.txt")
        .unwrap_err()
        .to_string();
    assert!(
        through_link.contains("resolves through a symbolic link to"),
        "{through_link}"
    );
    assert!(
        through_link.contains("which is outside the workspace"),
        "{through_link}"
    );
}
