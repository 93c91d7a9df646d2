//! Which MCP servers a run talks to: the `[mcp.servers.NAME]` tables of `rein.toml`
//! files and `--mcp 'NAME=COMMAND ARG…'` flags, merged by name (a later source wins).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::Deserialize;

use crate::error::ConfigError;

/// The file name rein reads server declarations from, in the workspace and in the
/// user's configuration directory.
pub const CONFIG_FILE: &str = "rein.toml";

/// Seconds a server has to answer `initialize` and list its tools, unless its
/// declaration says otherwise.
pub const DEFAULT_STARTUP_TIMEOUT_S: u64 = 30;

/// Seconds one tool call may take, unless the server's declaration says otherwise.
pub const DEFAULT_CALL_TIMEOUT_S: u64 = 60;

/// The longest server name: tool names are `NAME__tool`, at most 64 bytes in all.
pub const MAX_SERVER_NAME_LEN: usize = 24;

/// One declared server.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServerConfig {
    /// Its name: the prefix of its tools' names (`NAME__tool`).
    pub name: String,
    /// How to reach it.
    pub launch: Launch,
    /// How long `initialize` and the tool list may take.
    pub startup_timeout: Duration,
    /// How long one call may take before it is cancelled.
    pub call_timeout: Duration,
    /// Where the declaration came from (a file path, or `--mcp`), for messages.
    pub origin: String,
}

/// How a server is reached.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Launch {
    /// A child process speaking MCP on its standard input and output.
    Command {
        /// The program.
        program: String,
        /// Its arguments.
        args: Vec<String>,
        /// Variables set for it on top of the small base environment (see
        /// `environment`); nothing else of rein's environment reaches it.
        env: BTreeMap<String, String>,
    },
    /// A Streamable HTTP endpoint (`http://host:port/mcp`).
    Url {
        /// The endpoint.
        url: String,
    },
}

/// A `[mcp.servers.NAME]` table.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct ServerTable {
    command: Option<String>,
    #[serde(default)]
    args: Vec<String>,
    #[serde(default)]
    env: BTreeMap<String, String>,
    url: Option<String>,
    startup_timeout_s: Option<u64>,
    call_timeout_s: Option<u64>,
}

/// The `[mcp]` table.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct McpTable {
    #[serde(default)]
    servers: BTreeMap<String, ServerTable>,
}

/// A whole `rein.toml`: only `[mcp]` is read here; other tables belong to others.
#[derive(Debug, Default, Deserialize)]
struct ConfigFile {
    #[serde(default)]
    mcp: McpTable,
}

/// Checks a server name: 1–24 letters, digits, `-` or `_`, without `__` (the
/// separator of tool names) and not starting or ending with `_`.
pub fn check_server_name(name: &str) -> Result<(), ConfigError> {
    let legal = !name.is_empty()
        && name.len() <= MAX_SERVER_NAME_LEN
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
        && !name.contains("__")
        && !name.starts_with('_')
        && !name.ends_with('_');
    if legal {
        Ok(())
    } else {
        Err(ConfigError::BadName {
            name: name.to_string(),
        })
    }
}

/// The servers declared in the `rein.toml` at `path`; no file declares none.
pub fn from_file(path: &Path) -> Result<Vec<ServerConfig>, ConfigError> {
    let text = match std::fs::read_to_string(path) {
        Ok(text) => text,
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(error) => {
            return Err(ConfigError::Read {
                path: path.to_path_buf(),
                error,
            })
        }
    };
    from_toml(&text, &path.display().to_string())
}

/// The servers declared in `text`, a `rein.toml`; `origin` names it in messages.
pub fn from_toml(text: &str, origin: &str) -> Result<Vec<ServerConfig>, ConfigError> {
    let file: ConfigFile = toml::from_str(text).map_err(|error| ConfigError::Parse {
        origin: origin.to_string(),
        reason: error.message().to_string(),
    })?;
    file.mcp
        .servers
        .into_iter()
        .map(|(name, table)| server_from_table(name, table, origin))
        .collect()
}

fn server_from_table(
    name: String,
    table: ServerTable,
    origin: &str,
) -> Result<ServerConfig, ConfigError> {
    check_server_name(&name)?;
    let invalid = |reason: &str| ConfigError::Invalid {
        origin: origin.to_string(),
        name: name.clone(),
        reason: reason.to_string(),
    };
    let launch = match (table.command, table.url) {
        (Some(_), Some(_)) => return Err(invalid("give `command` or `url`, not both")),
        (None, None) => return Err(invalid("give `command` (with `args`) or `url`")),
        (Some(program), None) if program.trim().is_empty() => {
            return Err(invalid("`command` is empty"))
        }
        (Some(program), None) => Launch::Command {
            program,
            args: table.args,
            env: table.env,
        },
        (None, Some(url)) => {
            if !table.args.is_empty() || !table.env.is_empty() {
                return Err(invalid("`args` and `env` go with `command`, not `url`"));
            }
            check_url(&url).map_err(|reason| invalid(&reason))?;
            Launch::Url { url }
        }
    };
    let seconds = |value: Option<u64>, default: u64, key: &str| match value {
        Some(0) => Err(invalid(&format!("`{key}` must be at least 1"))),
        Some(s) => Ok(Duration::from_secs(s)),
        None => Ok(Duration::from_secs(default)),
    };
    Ok(ServerConfig {
        startup_timeout: seconds(
            table.startup_timeout_s,
            DEFAULT_STARTUP_TIMEOUT_S,
            "startup_timeout_s",
        )?,
        call_timeout: seconds(
            table.call_timeout_s,
            DEFAULT_CALL_TIMEOUT_S,
            "call_timeout_s",
        )?,
        name,
        launch,
        origin: origin.to_string(),
    })
}

/// Streamable HTTP is spoken over plain `http://` (loopback or a local network):
/// rein is built without a TLS stack.
fn check_url(url: &str) -> Result<(), String> {
    if url.starts_with("https://") {
        return Err(format!(
            "`{url}`: https is not supported (rein has no TLS stack); use http:// on a trusted network or a local command"
        ));
    }
    if !url.starts_with("http://") || url.len() <= "http://".len() {
        return Err(format!("`{url}` is not an http:// URL"));
    }
    Ok(())
}

/// One `--mcp` value: `NAME=COMMAND ARG…` (split like a shell command line) or
/// `NAME=http://host:port/path`.
pub fn from_flag(value: &str) -> Result<ServerConfig, ConfigError> {
    let bad = |reason: &str| ConfigError::BadFlag {
        value: value.to_string(),
        reason: reason.to_string(),
    };
    let (name, rest) = value
        .split_once('=')
        .ok_or_else(|| bad("write NAME=COMMAND ARG… or NAME=http://…"))?;
    let name = name.trim();
    check_server_name(name)?;
    let rest = rest.trim();
    let launch = if rest.starts_with("http://") || rest.starts_with("https://") {
        check_url(rest).map_err(|reason| bad(&reason))?;
        Launch::Url {
            url: rest.to_string(),
        }
    } else {
        let mut words = shlex::split(rest).ok_or_else(|| bad("unbalanced quotes"))?;
        if words.is_empty() {
            return Err(bad("no command after `=`"));
        }
        let program = words.remove(0);
        Launch::Command {
            program,
            args: words,
            env: BTreeMap::new(),
        }
    };
    Ok(ServerConfig {
        name: name.to_string(),
        launch,
        startup_timeout: Duration::from_secs(DEFAULT_STARTUP_TIMEOUT_S),
        call_timeout: Duration::from_secs(DEFAULT_CALL_TIMEOUT_S),
        origin: "--mcp".to_string(),
    })
}

/// The servers of a run: the user's `rein.toml` (in `user_dir`), then the
/// workspace's, then the flags; a later declaration of a name replaces an earlier
/// one. The result is ordered by name.
pub fn gather(
    user_dir: Option<&Path>,
    workspace: Option<&Path>,
    flags: &[String],
) -> Result<Vec<ServerConfig>, ConfigError> {
    let mut servers: BTreeMap<String, ServerConfig> = BTreeMap::new();
    let files: Vec<PathBuf> = [user_dir, workspace]
        .into_iter()
        .flatten()
        .map(|dir| dir.join(CONFIG_FILE))
        .collect();
    for file in files {
        for server in from_file(&file)? {
            servers.insert(server.name.clone(), server);
        }
    }
    for flag in flags {
        let server = from_flag(flag)?;
        servers.insert(server.name.clone(), server);
    }
    Ok(servers.into_values().collect())
}

impl ServerConfig {
    /// The command line or URL, for messages.
    pub fn describe(&self) -> String {
        match &self.launch {
            Launch::Command { program, args, .. } => {
                let mut line = shlex::try_quote(program)
                    .map(|q| q.into_owned())
                    .unwrap_or_else(|_| program.clone());
                for arg in args {
                    line.push(' ');
                    match shlex::try_quote(arg) {
                        Ok(quoted) => line.push_str(&quoted),
                        Err(_) => line.push_str(arg),
                    }
                }
                line
            }
            Launch::Url { url } => url.clone(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_flag_is_split_like_a_shell_command_line() {
        let server = from_flag("files=npx -y '@scope/server one' \"a b\"").unwrap();
        assert_eq!(server.name, "files");
        assert_eq!(
            server.launch,
            Launch::Command {
                program: "npx".into(),
                args: vec!["-y".into(), "@scope/server one".into(), "a b".into()],
                env: BTreeMap::new(),
            }
        );
        assert_eq!(server.describe(), "npx -y '@scope/server one' 'a b'");
        let http = from_flag("web=http://127.0.0.1:3001/mcp").unwrap();
        assert_eq!(
            http.launch,
            Launch::Url {
                url: "http://127.0.0.1:3001/mcp".into()
            }
        );
    }

    #[test]
    fn bad_flags_say_what_is_wrong() {
        for (value, needle) in [
            ("files", "NAME=COMMAND"),
            ("files=", "no command"),
            ("files=npx 'open", "unbalanced"),
            ("a__b=npx x", "server name"),
            ("=npx", "server name"),
            ("web=https://example.org/mcp", "https is not supported"),
        ] {
            let message = from_flag(value).unwrap_err().to_string();
            assert!(message.contains(needle), "{value}: {message}");
        }
    }

    #[test]
    fn a_config_file_declares_commands_and_urls() {
        let text = r#"
[other]
ignored = true

[mcp.servers.files]
command = "npx"
args = ["-y", "@modelcontextprotocol/server-filesystem", "."]
env = { LOG = "1" }
call_timeout_s = 5

[mcp.servers.web]
url = "http://127.0.0.1:9/mcp"
"#;
        let servers = from_toml(text, "rein.toml").unwrap();
        assert_eq!(servers.len(), 2);
        assert_eq!(servers[0].name, "files");
        assert_eq!(servers[0].call_timeout, Duration::from_secs(5));
        assert_eq!(
            servers[0].startup_timeout,
            Duration::from_secs(DEFAULT_STARTUP_TIMEOUT_S)
        );
        match &servers[0].launch {
            Launch::Command { env, args, .. } => {
                assert_eq!(env.get("LOG").map(String::as_str), Some("1"));
                assert_eq!(args.len(), 3);
            }
            other => panic!("{other:?}"),
        }
        assert!(matches!(servers[1].launch, Launch::Url { .. }));
    }

    #[test]
    fn bad_tables_name_the_server_and_the_problem() {
        for (text, needle) in [
            ("[mcp.servers.x]\nargs = [\"a\"]\n", "give `command`"),
            (
                "[mcp.servers.x]\ncommand = \"a\"\nurl = \"http://h/\"\n",
                "not both",
            ),
            ("[mcp.servers.x]\ncommand = \"a\"\ntimeout = 3\n", "timeout"),
            (
                "[mcp.servers.x]\ncommand = \"a\"\ncall_timeout_s = 0\n",
                "at least 1",
            ),
            ("[mcp.servers.\"a b\"]\ncommand = \"a\"\n", "server name"),
            ("[mcp.servers.x]\ncommand = \n", "rein.toml"),
        ] {
            let message = from_toml(text, "rein.toml").unwrap_err().to_string();
            assert!(message.contains(needle), "{text}: {message}");
        }
    }

    #[test]
    fn later_sources_replace_earlier_declarations_of_a_name() {
        let user = tempfile::tempdir().unwrap();
        let workspace = tempfile::tempdir().unwrap();
        std::fs::write(
            user.path().join(CONFIG_FILE),
            "[mcp.servers.a]\ncommand = \"user-a\"\n[mcp.servers.b]\ncommand = \"user-b\"\n",
        )
        .unwrap();
        std::fs::write(
            workspace.path().join(CONFIG_FILE),
            "[mcp.servers.b]\ncommand = \"workspace-b\"\n",
        )
        .unwrap();
        let servers = gather(
            Some(user.path()),
            Some(workspace.path()),
            &["a=flag-a x".to_string()],
        )
        .unwrap();
        let described: Vec<String> = servers.iter().map(ServerConfig::describe).collect();
        assert_eq!(described, ["flag-a x", "workspace-b"]);
        assert_eq!(servers[0].origin, "--mcp");
        assert!(servers[1].origin.ends_with(CONFIG_FILE));
        assert!(gather(None, Some(&workspace.path().join("none")), &[])
            .unwrap()
            .is_empty());
    }
}
