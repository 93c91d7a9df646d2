//! Replacing an old URL, host or email address in files of every type, while a
//! look-alike value stays.

use std::collections::BTreeMap;

use serde_json::{json, Map};

use super::{render, Format};
use crate::generate::words::{self, file_has, file_lacks};
use crate::generate::{GenTask, Outcome, Rng};

/// What kind of value is replaced.
#[derive(Clone, Copy, PartialEq)]
enum Address {
    /// An https URL.
    Url,
    /// A host name.
    Host,
    /// A host and a port.
    HostPort,
    /// An email address.
    Email,
}

/// Organisations in domain names.
const ORGS: &[&str] = &[
    "acme",
    "globex",
    "initech",
    "umbrella",
    "hooli",
    "vandelay",
    "wonka",
    "tyrell",
    "soylent",
    "cyberdyne",
    "dunder",
    "stark",
];

/// Top-level domains.
const TLDS: &[&str] = &["com", "io", "net", "dev", "org"];

/// Subdomains that make a look-alike host.
const REGIONS: &[&str] = &["eu", "staging", "internal", "sandbox", "west", "beta"];

/// The values of one task and how they are named.
struct Values {
    /// The value to replace.
    old: String,
    /// What replaces it.
    new: String,
    /// The look-alike that stays.
    look: String,
    /// The setting's name (snake_case).
    key: String,
    /// The look-alike setting's name.
    look_key: String,
    /// The value in words.
    what: String,
}

/// The values of a task of `kind`.
fn addresses(rng: &mut Rng, kind: Address) -> Values {
    let orgs = rng.distinct(ORGS, 2);
    let (tld, tld2) = (*rng.pick(TLDS), *rng.pick(TLDS));
    let region = *rng.pick(REGIONS);
    let moved_org = rng.chance(60);
    match kind {
        Address::Url => {
            let subs = rng.distinct(&["api", "files", "auth", "hooks", "cdn", "status"], 2);
            let new = if moved_org {
                format!("https://{}.{}.{tld2}", subs[0], orgs[1])
            } else {
                format!("https://{}.{}.{tld}", subs[1], orgs[0])
            };
            Values {
                old: format!("https://{}.{}.{tld}", subs[0], orgs[0]),
                new,
                look: format!("https://{}.{region}.{}.{tld}", subs[0], orgs[0]),
                key: format!("{}_url", subs[0]),
                look_key: format!("{}_url_{region}", subs[0]),
                what: format!("{} base URL", subs[0]),
            }
        }
        Address::Host | Address::HostPort => {
            let sub = *rng.pick(&["db", "cache", "queue", "search", "ldap", "broker"]);
            let zone = if kind == Address::Host {
                *rng.pick(&["internal", "lan", "corp"])
            } else {
                tld
            };
            let host = format!("{sub}.{}.{zone}", orgs[0]);
            let new_host = if moved_org {
                format!("{sub}.{}.{zone}", orgs[1])
            } else {
                format!("{sub}2.{}.{zone}", orgs[0])
            };
            if kind == Address::Host {
                Values {
                    old: host,
                    new: new_host,
                    look: format!("{sub}.{region}.{}.{zone}", orgs[0]),
                    key: format!("{sub}_host"),
                    look_key: format!("{sub}_host_{region}"),
                    what: format!("{sub} host"),
                }
            } else {
                let ports = super::distinct_numbers(rng, 2, 1_000, 9_999);
                Values {
                    old: format!("{host}:{}", ports[0]),
                    new: format!("{new_host}:{}", ports[0]),
                    look: format!("{host}:{}", ports[1]),
                    key: format!("{sub}_addr"),
                    look_key: format!("{sub}_addr_{}", rng.pick(&["replica", "admin", "metrics"])),
                    what: format!("{sub} address"),
                }
            }
        }
        Address::Email => {
            let boxes = rng.distinct(
                &["ops", "alerts", "oncall", "support", "security", "admin"],
                2,
            );
            let new = if moved_org {
                format!("{}@{}.{tld2}", boxes[0], orgs[1])
            } else {
                format!("{}@{}.{tld}", boxes[1], orgs[0])
            };
            Values {
                old: format!("{}@{}.{tld}", boxes[0], orgs[0]),
                new,
                look: format!("{}@{region}.{}.{tld}", boxes[0], orgs[0]),
                key: format!("{}_email", boxes[0]),
                look_key: format!("{}_email_{region}", boxes[0]),
                what: format!("{} email address", boxes[0]),
            }
        }
    }
}

/// The kinds of file an address is written in (and `other`: .env and JSON).
const KINDS: &[&str] = &["code", "yaml", "markdown", "shell"];

/// A file of `category` holding `entries` (setting name, value): its path and text.
fn address_file(
    rng: &mut Rng,
    (category, variant): (&str, usize),
    service: &str,
    kind: Address,
    entries: &[(String, String)],
) -> (String, String) {
    let n = rng.range(2, 90);
    let each =
        |f: &dyn Fn(&str, &str) -> String| entries.iter().map(|(k, v)| f(k, v)).collect::<String>();
    let upper = |k: &str| k.to_uppercase();
    match (category, variant) {
        ("code", 0) => (
            rng.pick(&["settings.py".to_string(), "app/settings.py".into(), format!("{service}/config.py")]).clone(),
            format!("\"\"\"Settings of the {service} service.\"\"\"\n\nDEBUG = False\n{}TIMEOUT_S = {n}\n", each(&|k, v| format!("{} = \"{v}\"\n", upper(k)))),
        ),
        ("code", 1) => (
            rng.pick(&["src/config.js".to_string(), "config.js".into(), format!("lib/{service}.js")]).clone(),
            format!("// {service} client settings\nmodule.exports = {{\n{}  retries: {n},\n}};\n", each(&|k, v| format!("  {}: \"{v}\",\n", words::camel(k)))),
        ),
        ("code", _) => (
            format!("internal/{service}/client.go"),
            format!("package {service}\n\nconst (\n{})\n", each(&|k, v| format!("\t{} = \"{v}\"\n", words::camel(k)))),
        ),
        ("yaml", 0) => (
            rng.pick(&["deploy/values.yaml".to_string(), format!("k8s/{service}.yaml"), "config.yml".into()]).clone(),
            format!("{service}:\n  replicas: {}\n{}", n % 5 + 1, each(&|k, v| format!("  {k}: {v}\n"))),
        ),
        ("yaml", _) => (
            rng.pick(&["docker-compose.yml", "deploy/compose.yaml"]).to_string(),
            format!("services:\n  {service}:\n    image: {service}:latest\n    environment:\n{}", each(&|k, v| format!("      {}: \"{v}\"\n", upper(k)))),
        ),
        ("markdown", _) => (
            rng.pick(&["README.md".to_string(), "docs/setup.md".into(), format!("docs/{service}.md")]).clone(),
            format!(
                "# {service}\n\nHow to run the {service} service.\n\n## Configuration\n\n{}\nAsk in #{service} when something is unclear.\n",
                each(&|k, v| format!("- {}: `{v}`\n", k.replace('_', " ")))
            ),
        ),
        ("shell", _) => {
            let line = |k: &str, v: &str| match kind {
                Address::Url => format!("curl -fsS \"{v}/health\"\n"),
                Address::Email => format!("printf 'deploy finished\\n' | mail -s \"{service} deploy\" {v}\n"),
                _ => format!("export {}=\"{v}\"\n", upper(k)),
            };
            (
                rng.pick(&["scripts/deploy.sh", "bin/healthcheck.sh", "deploy.sh"]).to_string(),
                format!("#!/bin/sh\nset -eu\n\n{}echo \"{service}: ok\"\n", each(&line)),
            )
        }
        (_, 0) => (
            rng.pick(&[".env", ".env.example"]).to_string(),
            format!("LOG_LEVEL=info\n{}", each(&|k, v| format!("{}={v}\n", upper(k)))),
        ),
        _ => {
            let mut map = Map::new();
            map.insert("service".into(), json!(service));
            for (k, v) in entries {
                map.insert(k.clone(), json!(v));
            }
            map.insert("workers".into(), json!(n));
            (format!("config/{service}.json"), render(Format::Json, &map, 2))
        }
    }
}

/// Builds a `replace-everywhere` task.
pub(super) fn replace_everywhere(rng: &mut Rng, phrasing: usize) -> GenTask {
    let kind = *rng.pick(&[
        Address::Url,
        Address::Host,
        Address::HostPort,
        Address::Email,
    ]);
    let mut values = addresses(rng, kind);
    for _ in 0..20 {
        let all = [&values.old, &values.new, &values.look];
        if all
            .iter()
            .all(|a| all.iter().all(|b| a == b || !a.contains(b.as_str())))
        {
            break;
        }
        values = addresses(rng, kind);
    }
    let Values {
        old,
        new,
        look,
        key,
        look_key,
        what,
    } = values;
    let service = *rng.pick(words::NOUNS);
    let count = rng.range(3, 6) as usize;
    let mut categories: Vec<(&str, usize)> = rng
        .distinct(KINDS, count.min(4))
        .into_iter()
        .map(|c| (c, rng.below(3)))
        .collect();
    categories.extend(
        [("other", 0), ("other", 1)]
            .into_iter()
            .take(count.saturating_sub(4)),
    );
    let look_apart = rng.chance(50);
    let mut files: BTreeMap<String, String> = BTreeMap::new();
    let mut used = Vec::new();
    for (i, (category, variant)) in categories.iter().enumerate() {
        let mut entries = vec![(key.clone(), old.clone())];
        if i == 0 && !look_apart {
            entries.push((look_key.clone(), look.clone()));
            if rng.chance(50) {
                entries.reverse();
            }
        }
        let (path, text) = address_file(rng, (category, *variant), service, kind, &entries);
        if files.contains_key(&path) {
            continue;
        }
        files.insert(path.clone(), text);
        used.push((path, *category));
    }
    let look_path = if look_apart {
        let path = format!(
            "deploy/{}.yaml",
            rng.pick(&["regions", "fallback", "replicas"])
        );
        files.insert(path.clone(), format!("{service}:\n  {look_key}: {look}\n"));
        path
    } else {
        used.first().map(|(p, _)| p.clone()).unwrap_or_default()
    };
    let mut grade = Vec::new();
    for (path, _) in &used {
        grade.push(file_lacks(path, &old));
        grade.push(file_has(path, &new));
    }
    grade.push(file_has(&look_path, &look));
    let replaced: Vec<(String, String)> = used
        .iter()
        .filter_map(|(p, _)| files.get(p).map(|t| (p.clone(), t.replace(&old, &new))))
        .collect();
    let mistake_writes = if rng.chance(65) {
        // Misses one file, a kind easily passed over when there is one.
        let missed = used
            .iter()
            .find(|(_, c)| matches!(*c, "markdown" | "shell" | "yaml"))
            .or(used.last())
            .map(|(p, _)| p.clone())
            .unwrap_or_default();
        replaced
            .iter()
            .filter(|(p, _)| *p != missed)
            .cloned()
            .collect()
    } else {
        files
            .iter()
            .map(|(p, t)| (p.clone(), t.replace(&old, &new).replace(&look, &new)))
            .collect()
    };
    let prompt = match phrasing {
        0 => format!("Replace {old} with {new} everywhere in the project."),
        1 => format!(
            "We are moving the {what} from {old} to {new}. Please update every reference to \
             {old} in this repository (source code, configuration, documentation and scripts \
             alike) so that nothing points at the old one any more. Other addresses stay as \
             they are."
        ),
        2 => format!("Can you find every place that still uses {old} and switch it to {new}?"),
        3 => format!(
            "Change all occurrences of `{old}` to `{new}`. Only that exact value: similar \
             ones, with another subdomain or port, are different and must stay."
        ),
        4 => format!(
            "Hello! Our {what} has changed to {new}. Could you please go through the files and \
             update wherever the old one ({old}) still appears? Thanks a bunch!"
        ),
        _ => format!("{old} -> {new} in every file of the repo: code, config, docs and scripts"),
    };
    GenTask {
        prompt,
        files,
        grade,
        solution: Outcome {
            writes: replaced,
            answer: Some("Replaced.".into()),
            ..Outcome::default()
        },
        mistake: Outcome {
            writes: mistake_writes,
            answer: Some("Replaced.".into()),
            ..Outcome::default()
        },
        ..GenTask::default()
    }
}
