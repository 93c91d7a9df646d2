//! Where the MCP test servers are (tests/mcp-servers, installed by scripts/setup.sh)
//! and which processes still run, for the tests of server start, shutdown and kill.

use std::path::PathBuf;

/// `tests/mcp-servers`; fails with instructions when the servers are not installed.
pub fn mcp_servers_dir() -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests/mcp-servers");
    assert!(
        dir.join("node_modules/@modelcontextprotocol/server-everything")
            .is_dir(),
        "the MCP test servers are not installed: run scripts/setup.sh"
    );
    dir
}

/// A server script under `tests/mcp-servers`, as a string for a command line.
pub fn mcp_server_script(relative: &str) -> String {
    mcp_servers_dir().join(relative).display().to_string()
}

/// The ids of the processes (other than this one) whose command line contains
/// `marker` (arguments are separated by NUL bytes).
pub fn processes_with(marker: &str) -> Vec<u32> {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    entries
        .flatten()
        .filter_map(|entry| {
            let pid: u32 = entry.file_name().to_string_lossy().parse().ok()?;
            let cmdline = std::fs::read(entry.path().join("cmdline")).ok()?;
            (pid != std::process::id() && String::from_utf8_lossy(&cmdline).contains(marker))
                .then_some(pid)
        })
        .collect()
}
