//! Settings from `rein.toml` files: every flag of every command can be given a value in
//! the user's configuration directory and in the current directory's `rein.toml`, under
//! `[defaults]` (every command with that flag) or the command's own table (`[run]`,
//! `[serve]`, `[bench.reuse]`…). They become the flags' defaults, so a flag on the
//! command line, then its environment variable, still win; the current directory's file
//! wins over the user's, a command's table over `[defaults]`. An unknown key is an
//! error naming the key, the file and the nearest valid key.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use anyhow::Context;
use clap::{Arg, ArgAction, Command};

/// Tables of `rein.toml` that are not settings of a command.
const OTHER_TABLES: &[&str] = &["mcp"];

/// The table of settings every command with the flag takes.
const DEFAULTS: &str = "defaults";

/// Where a setting's value came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Origin {
    /// The file.
    pub file: PathBuf,
    /// Its table (`defaults`, `run`, `bench.reuse`).
    pub table: String,
}

/// The settings applied, by command path (`run`, `bench reuse`) and flag id.
pub type Applied = BTreeMap<(String, String), (Vec<String>, Origin)>;

/// The `rein.toml` files read, lowest precedence first: the user's, then the current
/// directory's (when it is another file).
pub fn files(user_dir: Option<&Path>) -> Vec<PathBuf> {
    let mut files = Vec::new();
    if let Some(dir) = user_dir {
        files.push(dir.join("rein.toml"));
    }
    if let Ok(cwd) = std::env::current_dir() {
        let local = cwd.join("rein.toml");
        let same = files
            .first()
            .and_then(|user| user.canonicalize().ok())
            .is_some_and(|user| local.canonicalize().ok() == Some(user));
        if !same {
            files.push(local);
        }
    }
    files
}

/// Reads `files` (missing ones are skipped) and sets each setting as its flag's default
/// in `command`; returns what was set and where it came from.
pub fn apply(command: &mut Command, files: &[PathBuf]) -> anyhow::Result<Applied> {
    let mut applied = Applied::new();
    for file in files {
        let text = match std::fs::read_to_string(file) {
            Ok(text) => text,
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => continue,
            Err(error) => {
                return Err(error).with_context(|| format!("cannot read {}", file.display()))
            }
        };
        let table: toml::Table = toml::from_str(&text)
            .with_context(|| format!("{} is not valid TOML", file.display()))?;
        // `[defaults]` first, so a command's own table overrides it.
        let mut tables: Vec<(String, &toml::Table)> = Vec::new();
        if let Some(defaults) = table.get(DEFAULTS) {
            let defaults = defaults
                .as_table()
                .with_context(|| format!("{}: `{DEFAULTS}` must be a table", file.display()))?;
            tables.push((DEFAULTS.to_string(), defaults));
        }
        for (name, value) in &table {
            if name == DEFAULTS || OTHER_TABLES.contains(&name.as_str()) {
                continue;
            }
            collect_tables(command, file, name, value, &mut tables)?;
        }
        for (table_name, settings) in tables {
            apply_table(command, file, &table_name, settings, &mut applied)?;
        }
    }
    for ((path, id), (values, _)) in &applied {
        set_default(command, path, id, values);
    }
    Ok(applied)
}

/// The settings tables below `name` (a subcommand's table may hold its subcommands'
/// tables: `[bench.reuse]`).
fn collect_tables<'a>(
    root: &Command,
    file: &Path,
    name: &str,
    value: &'a toml::Value,
    out: &mut Vec<(String, &'a toml::Table)>,
) -> anyhow::Result<()> {
    let path: Vec<&str> = name.split('.').collect();
    let Some(command) = find(root, &path) else {
        let names: Vec<String> = root
            .get_subcommands()
            .map(|c| c.get_name().to_string())
            .chain([DEFAULTS.to_string()])
            .chain(OTHER_TABLES.iter().map(|t| t.to_string()))
            .collect();
        anyhow::bail!(
            "{}: unknown table `[{name}]`{}",
            file.display(),
            nearest(name, &names)
        );
    };
    let table = value
        .as_table()
        .with_context(|| format!("{}: `{name}` must be a table of settings", file.display()))?;
    out.push((name.to_string(), table));
    for (key, value) in table {
        if value.is_table() && command.find_subcommand(key).is_some() {
            collect_tables(root, file, &format!("{name}.{key}"), value, out)?;
        }
    }
    Ok(())
}

/// The subcommand at `path` below `root`.
fn find<'a>(root: &'a Command, path: &[&str]) -> Option<&'a Command> {
    let mut command = root;
    for name in path {
        command = command.find_subcommand(name)?;
    }
    Some(command)
}

/// The flags a setting may name in `command`: every argument with a long name but
/// help and version.
fn settable(command: &Command) -> impl Iterator<Item = &Arg> {
    command.get_arguments().filter(|arg| {
        arg.get_long().is_some()
            && !matches!(
                arg.get_action(),
                ArgAction::Help | ArgAction::HelpShort | ArgAction::HelpLong | ArgAction::Version
            )
    })
}

/// The flag a key names (`max-turns` or `max_turns`).
fn flag<'a>(command: &'a Command, key: &str) -> Option<&'a Arg> {
    let long = key.replace('_', "-");
    settable(command).find(|arg| arg.get_long() == Some(long.as_str()))
}

fn apply_table(
    root: &Command,
    file: &Path,
    table_name: &str,
    settings: &toml::Table,
    applied: &mut Applied,
) -> anyhow::Result<()> {
    let commands: Vec<(String, &Command)> = if table_name == DEFAULTS {
        all_commands(root, String::new())
    } else {
        let path: Vec<&str> = table_name.split('.').collect();
        let command = find(root, &path).context("a table without its command")?;
        vec![(path.join(" "), command)]
    };
    for (key, value) in settings {
        if table_name != DEFAULTS && value.is_table() {
            continue;
        }
        let mut known = false;
        for (path, command) in &commands {
            let Some(arg) = flag(command, key) else {
                continue;
            };
            known = true;
            let values = values(file, table_name, key, value, arg)?;
            check(command, arg, &values).map_err(|error| {
                anyhow::anyhow!(
                    "{}: `{key}` in [{table_name}]: {}",
                    file.display(),
                    error.to_string().trim().trim_start_matches("error: ")
                )
            })?;
            let origin = Origin {
                file: file.to_path_buf(),
                table: table_name.to_string(),
            };
            applied.insert((path.clone(), arg.get_id().to_string()), (values, origin));
        }
        if !known {
            let mut names: Vec<String> = commands
                .iter()
                .flat_map(|(_, c)| settable(c).filter_map(|a| a.get_long().map(str::to_string)))
                .collect();
            names.sort();
            names.dedup();
            anyhow::bail!(
                "{}: unknown setting `{key}` in [{table_name}]{}",
                file.display(),
                nearest(key, &names)
            );
        }
    }
    Ok(())
}

/// Every command that takes flags, with its path (`run`, `bench reuse`).
fn all_commands(command: &Command, path: String) -> Vec<(String, &Command)> {
    let mut out = Vec::new();
    for sub in command.get_subcommands() {
        let sub_path = if path.is_empty() {
            sub.get_name().to_string()
        } else {
            format!("{path} {}", sub.get_name())
        };
        out.push((sub_path.clone(), sub));
        out.extend(all_commands(sub, sub_path));
    }
    out
}

/// A setting's value as the flag's text values.
fn values(
    file: &Path,
    table: &str,
    key: &str,
    value: &toml::Value,
    arg: &Arg,
) -> anyhow::Result<Vec<String>> {
    let text = |value: &toml::Value| -> anyhow::Result<String> {
        Ok(match value {
            toml::Value::String(s) => s.clone(),
            toml::Value::Integer(i) => i.to_string(),
            toml::Value::Float(f) => f.to_string(),
            toml::Value::Boolean(b) => b.to_string(),
            _ => anyhow::bail!(
                "{}: `{key}` in [{table}] must be a string, number or boolean",
                file.display()
            ),
        })
    };
    match (value, arg.get_action()) {
        (toml::Value::Array(items), ArgAction::Append) => items.iter().map(text).collect(),
        (toml::Value::Array(_), _) => anyhow::bail!(
            "{}: `{key}` in [{table}] takes one value, not a list",
            file.display()
        ),
        (_, ArgAction::SetTrue | ArgAction::SetFalse) if !value.is_bool() => anyhow::bail!(
            "{}: `{key}` in [{table}] is a switch: true or false",
            file.display()
        ),
        _ => Ok(vec![text(value)?]),
    }
}

/// Parses `values` as the flag would be parsed on the command line.
fn check(command: &Command, arg: &Arg, values: &[String]) -> Result<(), clap::Error> {
    let long = arg.get_long().unwrap_or_default();
    let probe = Command::new(command.get_name().to_string())
        .no_binary_name(true)
        .arg(
            arg.clone()
                .required(false)
                .default_values(Vec::<String>::new()),
        );
    let words: Vec<String> = match arg.get_action() {
        ArgAction::SetTrue | ArgAction::SetFalse | ArgAction::Count => Vec::new(),
        _ => values.iter().map(|v| format!("--{long}={v}")).collect(),
    };
    probe.try_get_matches_from(words).map(|_| ())
}

/// Sets `values` as the default of the flag `id` of the command at `path`.
fn set_default(root: &mut Command, path: &str, id: &str, values: &[String]) {
    let names: Vec<String> = path.split(' ').map(str::to_string).collect();
    set_default_below(root, &names, id, values);
}

fn set_default_below(command: &mut Command, path: &[String], id: &str, values: &[String]) {
    let Some((first, rest)) = path.split_first() else {
        return;
    };
    let id = id.to_string();
    let values = values.to_vec();
    let rest = rest.to_vec();
    *command = std::mem::take(command).mut_subcommand(first.clone(), move |sub| {
        if rest.is_empty() {
            sub.mut_arg(id, |arg| arg.default_values(values))
        } else {
            let mut sub = sub;
            set_default_below(&mut sub, &rest, &id, &values);
            sub
        }
    });
}

/// "; the nearest is `x`" for the name of `names` nearest to `key`, if one is close.
fn nearest(key: &str, names: &[String]) -> String {
    let wanted = key.replace('_', "-");
    names
        .iter()
        .map(|name| (strsim::levenshtein(&wanted, name), name))
        .filter(|(distance, name)| *distance <= (name.len() / 3).max(2))
        .min()
        .map(|(_, name)| format!("; the nearest valid key is `{name}`"))
        .unwrap_or_default()
}

/// A flag's resolved value and where it comes from.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Resolved {
    /// The flag's long name.
    pub flag: String,
    /// Its value (values joined by `, `; `(none)` when it has none).
    pub value: String,
    /// `default`, `environment VAR`, or `FILE [table]`.
    pub source: String,
}

/// What `rein config show COMMAND` prints: each flag's value and where it comes from.
pub fn show(root: &Command, path: &str, applied: &Applied) -> anyhow::Result<Vec<Resolved>> {
    let names: Vec<&str> = path.split_whitespace().collect();
    let command = find(root, &names).with_context(|| format!("no command `rein {path}`"))?;
    let mut lines = Vec::new();
    for arg in settable(command) {
        let long = arg.get_long().unwrap_or_default();
        let id = arg.get_id().to_string();
        let env = arg
            .get_env()
            .and_then(|name| std::env::var_os(name).map(|value| (name, value)));
        let (value, source) = if let Some((name, value)) = env {
            (
                value.to_string_lossy().into_owned(),
                format!("environment {}", name.to_string_lossy()),
            )
        } else if let Some((values, origin)) = applied.get(&(names.join(" "), id)) {
            (
                values.join(", "),
                format!("{} [{}]", origin.file.display(), origin.table),
            )
        } else {
            let defaults: Vec<String> = arg
                .get_default_values()
                .iter()
                .map(|v| v.to_string_lossy().into_owned())
                .collect();
            let value = match arg.get_action() {
                ArgAction::SetTrue if defaults.is_empty() => "false".to_string(),
                _ if defaults.is_empty() => "(none)".to_string(),
                _ => defaults.join(", "),
            };
            (value, "default".to_string())
        };
        lines.push(Resolved {
            flag: long.to_string(),
            value,
            source,
        });
    }
    Ok(lines)
}
