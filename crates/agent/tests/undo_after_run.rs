//! A run's record puts the workspace back: an agent (scripted replies, real tools, a
//! real shell) creates, changes and deletes files, and the undo of the record made
//! around the run restores every one of them.

use std::time::Duration;

use rein_agent::{Agent, Profile, RunConfig};
use rein_test_support::ScriptedBackend;
use rein_tools::{Registry, RunRecorder, ToolLimits, Workspace};

fn call(name: &str, arguments: serde_json::Value) -> String {
    format!(
        "<tool_call>\n{}\n</tool_call>",
        serde_json::json!({"name": name, "arguments": arguments})
    )
}

#[test]
fn undo_restores_what_a_run_created_changed_and_deleted() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    std::fs::write(root.join("keep.txt"), "original\n").unwrap();
    std::fs::write(root.join("old.txt"), "to be deleted\n").unwrap();
    std::fs::create_dir(root.join("src")).unwrap();
    std::fs::write(root.join("src/lib.py"), "x = 1\n").unwrap();
    let replies = vec![
        call(
            "shell",
            serde_json::json!({"command": "echo changed > keep.txt && rm old.txt && sed -i 's/1/2/' src/lib.py"}),
        ),
        call(
            "write_file",
            serde_json::json!({"path": "reports/summary.md", "content": "# Summary\n"}),
        ),
        "Done: keep.txt and src/lib.py changed, old.txt deleted, reports/summary.md written."
            .to_string(),
    ];
    let workspace = Workspace::new(
        root,
        ToolLimits {
            shell_timeout: Duration::from_secs(10),
            ..ToolLimits::default()
        },
    )
    .unwrap();
    let mut config = RunConfig::new(Profile::Full);
    config.grounding_check = false;
    let mut agent = Agent::new(
        ScriptedBackend::new(replies, true),
        workspace,
        &Registry::builtin(),
        config,
    )
    .unwrap();
    let records = tempfile::tempdir().unwrap();
    let recorder = RunRecorder::start(root, records.path()).unwrap();
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let result = runtime.block_on(agent.run("Tidy the workspace.", None));
    assert_eq!(result.tool_errors, 0, "{result:?}");
    assert_eq!(
        std::fs::read_to_string(root.join("keep.txt")).unwrap(),
        "changed\n"
    );
    assert!(root.join("reports/summary.md").is_file());
    let record = recorder.finish().unwrap();
    let changed: Vec<&str> = record.changes.iter().map(|c| c.path.as_str()).collect();
    assert_eq!(
        changed,
        ["keep.txt", "old.txt", "reports/summary.md", "src/lib.py"]
    );

    let report = rein_tools::undo(records.path()).unwrap();
    assert!(report.refused.is_empty(), "{report:?}");
    assert_eq!(
        std::fs::read_to_string(root.join("keep.txt")).unwrap(),
        "original\n"
    );
    assert_eq!(
        std::fs::read_to_string(root.join("old.txt")).unwrap(),
        "to be deleted\n"
    );
    assert_eq!(
        std::fs::read_to_string(root.join("src/lib.py")).unwrap(),
        "x = 1\n"
    );
    assert!(!root.join("reports").exists());
}
