//! Families of housekeeping and shell chores: moving and deleting files by a rule
//! (here), writing and running a small script (`shell`) and fixing a broken build
//! (`build`).

mod build;
mod shell;

use std::collections::BTreeMap;

use crate::generate::words::{self, absent, file_has, unchanged};
use crate::generate::{Family, GenTask, Outcome, Rng};

/// The families of this file.
pub(super) const FAMILIES: &[Family] = &[
    Family {
        name: "move-by-rule",
        kind: "housekeeping",
        about: "move every file matching a rule (an extension, a name prefix, a date in the name before a cutoff) from one or two folders and their subfolders into a target folder, keeping names, while look-alike names and matching files outside those folders stay",
        phrasings: 6,
        build: move_by_rule,
    },
    Family {
        name: "delete-by-rule",
        kind: "housekeeping",
        about: "delete temporary or backup files of one or two kinds (*.tmp, *~, *.bak, *.orig, .DS_Store, __pycache__) at several depths, keeping look-alikes such as template.txt, tmp_notes.md or backup.py",
        phrasings: 6,
        build: delete_by_rule,
    },
    Family {
        name: "script-and-run",
        kind: "shell",
        about: "write a named sh or Python script that computes a line count, a column's sum or largest value, or a count of files of a type, run it and save what it prints into a named file",
        phrasings: 6,
        build: shell::script_and_run,
    },
    Family {
        name: "fix-build",
        kind: "shell",
        about: "make a failing `sh build.sh` or `make` succeed by fixing its one broken reference (a misspelled file, a wrong Python or Node module name, a missing output folder) without dropping a step",
        phrasings: 6,
        build: build::fix_build,
    },
];

/// `dir/name`, or `name` at the root.
fn join(dir: &str, name: &str) -> String {
    if dir.is_empty() {
        name.to_string()
    } else {
        format!("{dir}/{name}")
    }
}

/// The last part of a path.
fn base(path: &str) -> &str {
    path.rsplit('/').next().unwrap_or(path)
}

/// `a`, `a and b`, `a, b and c`.
fn listing(items: &[String]) -> String {
    match items {
        [] => String::new(),
        [one] => one.clone(),
        [rest @ .., last] => format!("{} and {last}", rest.join(", ")),
    }
}

/// Which files a move-by-rule task moves.
#[derive(Clone, Copy)]
enum MoveRule {
    /// Names ending in `.ext`.
    Ext(&'static str),
    /// Names starting with a prefix.
    Prefix(&'static str),
    /// Names holding a YYYY-MM-DD date before the first of (year, month).
    Before(i64, i64),
}

impl MoveRule {
    /// A name the rule matches, made from `noun`.
    fn matching(self, rng: &mut Rng, noun: &str) -> String {
        match self {
            MoveRule::Ext(ext) => format!("{noun}.{ext}"),
            MoveRule::Prefix(prefix) => {
                format!("{prefix}{noun}.{}", rng.pick(&["txt", "md", "json", "csv"]))
            }
            MoveRule::Before(year, month) => {
                let (y, m) = if month == 1 || rng.chance(50) {
                    (year - 1, rng.range(1, 12))
                } else {
                    (year, rng.range(1, month - 1))
                };
                let day = rng.range(1, 28);
                format!(
                    "{noun}-{y}-{m:02}-{day:02}.{}",
                    rng.pick(&["csv", "txt", "log", "json"])
                )
            }
        }
    }

    /// A name that looks like a match but is not one.
    fn lookalike(self, rng: &mut Rng, noun: &str) -> String {
        match self {
            MoveRule::Ext(ext) => {
                let special = match ext {
                    "log" => "catalog.txt",
                    "csv" => "csv_tools.py",
                    "bak" => "bakery.md",
                    "out" => "outline.md",
                    _ => "dumpling.txt",
                };
                match rng.below(4) {
                    0 => format!("{noun}_{ext}.txt"),
                    1 => format!("{ext}s.md"),
                    2 => format!("{noun}.{ext}.md"),
                    _ => special.to_string(),
                }
            }
            MoveRule::Prefix(prefix) => {
                let stem = prefix.trim_end_matches(['_', '-']);
                match rng.below(3) {
                    0 => format!("{stem}s.md"),
                    1 => format!("{noun}_{prefix}copy.txt"),
                    _ => format!("{noun}-{stem}.txt"),
                }
            }
            MoveRule::Before(year, month) => {
                let (y, m, d) = if rng.chance(50) {
                    (year, rng.range(month, 12), rng.range(2, 28))
                } else {
                    (year + 1, rng.range(1, 12), rng.range(1, 28))
                };
                if rng.chance(25) {
                    format!("{noun}-latest.{}", rng.pick(&["csv", "txt"]))
                } else {
                    format!(
                        "{noun}-{y}-{m:02}-{d:02}.{}",
                        rng.pick(&["csv", "txt", "log"])
                    )
                }
            }
        }
    }

    /// The files it moves, as a noun phrase.
    fn short(self) -> String {
        match self {
            MoveRule::Ext(ext) => format!("the `.{ext}` files"),
            MoveRule::Prefix(prefix) => format!("the files whose names start with `{prefix}`"),
            MoveRule::Before(y, m) => format!(
                "the files dated before {y}-{m:02}-01 (by the YYYY-MM-DD date in their names)"
            ),
        }
    }

    /// The rule as a clause after "files whose".
    fn clause(self) -> String {
        match self {
            MoveRule::Ext(ext) => format!("name ends in `.{ext}`"),
            MoveRule::Prefix(prefix) => format!("name starts with `{prefix}`"),
            MoveRule::Before(y, m) => {
                format!("name carries a YYYY-MM-DD date earlier than {y}-{m:02}-01")
            }
        }
    }
}

/// Builds a move-by-rule task.
fn move_by_rule(rng: &mut Rng, phrasing: usize) -> GenTask {
    let ext = *rng.pick(&["log", "csv", "bak", "out", "dump"]);
    let prefix = *rng.pick(&["draft_", "old_", "scratch-", "wip_"]);
    let rule = match rng.below(3) {
        0 => MoveRule::Ext(ext),
        1 => MoveRule::Prefix(prefix),
        _ => MoveRule::Before(rng.range(2022, 2024), rng.range(2, 12)),
    };
    let pool = [
        "server",
        "jobs",
        "runs",
        "app",
        "services/web",
        "data/raw",
        "tools",
    ];
    let count = 1 + rng.below(2);
    let sources = rng.distinct(&pool, count);
    let (parent, sub) = (
        *rng.pick(&sources),
        *rng.pick(&["old", "2023", "nightly", "deep/er", "batch"]),
    );
    let nested = join(parent, sub);
    let outside = *rng.pick(&[
        "vendor",
        "fixtures",
        "docs/examples",
        "third_party",
        "samples",
    ]);
    let target = *rng.pick(&["archive", "collected", "attic", "moved", "stash/old"]);
    let nouns = rng.distinct(words::NOUNS, 16);
    let mut noun_at = 0;
    let mut noun = || {
        noun_at += 1;
        nouns.get(noun_at - 1).copied().unwrap_or("extra")
    };
    let mut files = BTreeMap::new();
    let add = |rng: &mut Rng, files: &mut BTreeMap<String, String>, path: String| {
        let content = format!("{} {}\n", base(&path), words::code(rng, 6));
        files.insert(path.clone(), content.clone());
        (path, content)
    };
    // The files to move: one at the top of each source, one nested, maybe one more.
    let mut movers = Vec::new();
    for source in &sources {
        let name = rule.matching(rng, noun());
        movers.push(add(rng, &mut files, join(source, &name)));
    }
    let name = rule.matching(rng, noun());
    let nested_mover = add(rng, &mut files, join(&nested, &name));
    movers.push(nested_mover.clone());
    if rng.chance(50) {
        let name = rule.matching(rng, noun());
        let dir = rng.pick(&sources).to_string();
        movers.push(add(rng, &mut files, join(&dir, &name)));
    }
    // What stays: look-alikes, a match outside the sources, ordinary files.
    let mut stays = Vec::new();
    let mut places: Vec<String> = sources.iter().map(|s| s.to_string()).collect();
    places.push(nested.clone());
    places.push(String::new());
    for _ in 0..3 {
        let name = rule.lookalike(rng, noun());
        let dir = rng.pick(&places).clone();
        stays.push(add(rng, &mut files, join(&dir, &name)).0);
    }
    let name = rule.matching(rng, noun());
    let outsider = add(rng, &mut files, join(outside, &name)).0;
    stays.push(outsider.clone());
    for source in &sources {
        let name = format!("{}.{}", noun(), rng.pick(&["py", "json", "md", "sh"]));
        stays.push(add(rng, &mut files, join(source, &name)).0);
    }
    files.insert(
        "README.md".into(),
        "# Workspace\n\nServices, jobs and their outputs.\n".into(),
    );
    stays.push("README.md".into());
    if rng.chance(50) {
        files.insert(
            join(target, "README.md"),
            "Files moved here are kept for reference.\n".into(),
        );
        stays.push(join(target, "README.md"));
    }
    stays.sort();
    stays.dedup();
    let mut grade = Vec::new();
    let mut moves = Vec::new();
    for (path, content) in &movers {
        let to = join(target, base(path));
        grade.push(file_has(&to, content.trim_end()));
        grade.push(absent(path));
        moves.push((path.clone(), to));
    }
    grade.extend(stays.iter().map(|p| unchanged(p)));
    let mistake_moves = if rng.chance(50) {
        let near: Vec<&String> = stays.iter().filter(|p| !p.ends_with("README.md")).collect();
        let extra = if rng.chance(50) {
            outsider.clone()
        } else {
            rng.pick(&near).to_string()
        };
        let mut all = moves.clone();
        all.push((extra.clone(), join(target, base(&extra))));
        all
    } else {
        moves
            .iter()
            .filter(|(from, _)| *from != nested_mover.0)
            .cloned()
            .collect()
    };
    let scope = listing(
        &sources
            .iter()
            .map(|s| format!("`{s}/`"))
            .collect::<Vec<_>>(),
    );
    let (short, clause) = (rule.short(), rule.clause());
    let them = if sources.len() == 1 { "it" } else { "them" };
    let prompt = match phrasing {
        0 => format!("Move {short} from {scope} (subfolders too) into `{target}/`, keeping the names."),
        1 => format!(
            "We're tidying up this workspace. Please look through {scope}, including every folder \
             nested below {them}, and move each file whose {clause} into a single top-level folder \
             `{target}/`. The files should keep their names exactly. Matching files elsewhere in \
             the workspace stay where they are, and so does everything that doesn't match."
        ),
        2 => format!(
            "Can you move {short} out of {scope} and {}subdirectories into `{target}/`? Each file \
             should keep its name.",
            if sources.len() == 1 { "its " } else { "their " }
        ),
        3 => format!(
            "Collect files into `{target}/`:\n- from: {scope} and everything below\n- which: files \
             whose {clause}\n- names: unchanged, all directly in `{target}/`\n- everything else: \
             leave it where it is"
        ),
        4 => format!(
            "Hi! Could you do me a favour and gather {short} that sit anywhere inside {scope} into \
             a folder called `{target}` at the root of the workspace? Same file names, please. \
             Thanks so much!"
        ),
        _ => format!(
            "When you're done, `{target}/` should hold every file from {scope} (at any depth) whose \
             {clause}, under its original name, and none of them should be left where it was. \
             Nothing else moves."
        ),
    };
    GenTask {
        prompt,
        files,
        grade,
        solution: Outcome {
            moves,
            answer: Some(format!("Moved {} files into {target}/.", movers.len())),
            ..Outcome::default()
        },
        mistake: Outcome {
            moves: mistake_moves,
            answer: Some("Done.".into()),
            ..Outcome::default()
        },
        ..GenTask::default()
    }
}

/// A kind of leftover file a delete-by-rule task removes.
#[derive(Clone, Copy, PartialEq)]
enum Junk {
    /// `*.tmp` files.
    Tmp,
    /// Editor backups ending in `~`.
    Tilde,
    /// `*.bak` files.
    Bak,
    /// `*.orig` merge leftovers.
    Orig,
    /// `.DS_Store` files.
    DsStore,
    /// `__pycache__` directories.
    Pycache,
}

impl Junk {
    /// The kind, as the prompt names it.
    fn describe(self) -> &'static str {
        match self {
            Junk::Tmp => "`*.tmp` files",
            Junk::Tilde => "editor backup files (names ending in `~`)",
            Junk::Bak => "`*.bak` files",
            Junk::Orig => "`*.orig` files left over from merges",
            Junk::DsStore => "`.DS_Store` files",
            Junk::Pycache => "`__pycache__` directories",
        }
    }

    /// The name of one such leftover (a directory for `__pycache__`).
    fn name(self, rng: &mut Rng, noun: &str) -> String {
        match self {
            Junk::Tmp => format!("{noun}{}.tmp", rng.pick(&["", ".json", ".txt", "_upload"])),
            Junk::Tilde => format!("{noun}.{}~", rng.pick(&["py", "md", "txt", "rs"])),
            Junk::Bak => format!("{noun}{}.bak", rng.pick(&["", ".yaml", ".sql", ".conf"])),
            Junk::Orig => format!("{noun}.{}.orig", rng.pick(&["py", "js", "go", "toml"])),
            Junk::DsStore => ".DS_Store".into(),
            Junk::Pycache => "__pycache__".into(),
        }
    }

    /// Names that look like the kind but are not of it.
    fn lookalikes(self) -> &'static [&'static str] {
        match self {
            Junk::Tmp => &[
                "template.txt",
                "tmp_notes.md",
                "temp.md",
                "tmp/readme.txt",
                "notes.tmpl",
                "attempt.txt",
            ],
            Junk::Tilde => &[
                "notes~old.md",
                "~readme.txt",
                "tilde_notes.md",
                "wave~.txt.md",
            ],
            Junk::Bak => &[
                "backup.py",
                "bakery.md",
                "config.bak.example",
                "backups/list.json",
                "notes_bak.txt",
            ],
            Junk::Orig => &["origin.txt", "original.md", "orig_data.csv", "origami.py"],
            Junk::DsStore => &[
                "DS_Store.md",
                "store.py",
                "ds_store_notes.md",
                ".DS_Store.md",
                "datastore.json",
            ],
            Junk::Pycache => &[
                "cache.py",
                "pycache_notes.md",
                "cache/index.json",
                "pycache.txt",
            ],
        }
    }
}

/// Builds a delete-by-rule task.
fn delete_by_rule(rng: &mut Rng, phrasing: usize) -> GenTask {
    let all = [
        Junk::Tmp,
        Junk::Tilde,
        Junk::Bak,
        Junk::Orig,
        Junk::DsStore,
        Junk::Pycache,
    ];
    let count = if rng.chance(40) { 2 } else { 1 };
    let kinds = rng.distinct(&all, count);
    let pool = [
        "",
        "src",
        "src/lib",
        "docs",
        "app/models/v2",
        "scripts",
        "tests/unit",
        "assets/img",
    ];
    let mut dirs = rng.distinct(&pool, 3);
    if !dirs.contains(&"") && rng.chance(50) {
        dirs[0] = "";
    }
    let nouns = rng.distinct(words::NOUNS, 20);
    let mut noun_at = 0;
    let mut noun = || {
        noun_at += 1;
        nouns.get(noun_at - 1).copied().unwrap_or("extra")
    };
    let mut files = BTreeMap::new();
    let mut keep = Vec::new();
    let mut targets = Vec::new();
    let mut lookalikes = Vec::new();
    // Ordinary files in every folder: Python modules beside any __pycache__.
    for dir in &dirs {
        let ext = if kinds.contains(&Junk::Pycache) {
            "py"
        } else {
            *rng.pick(&["py", "md", "json", "ts"])
        };
        let path = join(dir, &format!("{}.{ext}", noun()));
        files.insert(
            path.clone(),
            format!("{} {}\n", base(&path), words::code(rng, 6)),
        );
        keep.push(path);
    }
    for &kind in &kinds {
        for dir in &dirs {
            let path = join(dir, &kind.name(rng, noun()));
            if kind == Junk::Pycache {
                let module = format!("{}.cpython-311.pyc", noun());
                files.insert(
                    join(&path, &module),
                    format!("compiled {}\n", words::code(rng, 8)),
                );
            } else {
                files.insert(path.clone(), format!("leftover {}\n", words::code(rng, 8)));
            }
            targets.push((path, kind == Junk::Pycache));
        }
        let count = 2 + rng.below(2);
        for name in rng.distinct(kind.lookalikes(), count) {
            let dir = *rng.pick(&dirs);
            let path = join(dir, name);
            files.insert(path.clone(), format!("{name} {}\n", words::code(rng, 6)));
            keep.push(path.clone());
            lookalikes.push(path);
        }
    }
    keep.sort();
    keep.dedup();
    let mut grade: Vec<_> = targets.iter().map(|(p, _)| absent(p)).collect();
    grade.extend(keep.iter().map(|p| unchanged(p)));
    let removes: Vec<String> = targets
        .iter()
        .filter(|(_, d)| !d)
        .map(|(p, _)| p.clone())
        .collect();
    let commands: Vec<String> = targets
        .iter()
        .filter(|(_, d)| *d)
        .map(|(p, _)| format!("rm -rf {}", words::shell_quote(p)))
        .collect();
    let wrongly = rng.pick(&lookalikes).clone();
    let mut mistake_removes = removes.clone();
    mistake_removes.push(wrongly);
    let desc = listing(
        &kinds
            .iter()
            .map(|k| k.describe().to_string())
            .collect::<Vec<_>>(),
    );
    let prompt = match phrasing {
        0 => format!("Delete all {desc} in the workspace, at any depth."),
        1 => format!(
            "This repository has accumulated junk. Please remove every one of the {desc} wherever \
             it sits in the tree, nested folders included. Everything else must stay exactly as it \
             is, even files whose names look similar."
        ),
        2 => format!("Could you get rid of the {desc} scattered around this project? Some are a few folders deep."),
        3 => format!("Cleanup. Remove: {desc}. Scope: the whole workspace, recursively. Keep: everything else."),
        4 => format!(
            "Hello! If it's not too much trouble, would you please clear the {desc} out of this \
             workspace, subdirectories included? Please leave all the other files alone. Thank you!"
        ),
        _ => format!(
            "I'm about to commit and don't want any {desc} in the repository. Find them in every \
             directory and delete them, and only them."
        ),
    };
    GenTask {
        prompt,
        files,
        grade,
        solution: Outcome {
            removes: removes.clone(),
            commands: commands.clone(),
            answer: Some(format!("Deleted {} leftovers.", targets.len())),
            ..Outcome::default()
        },
        mistake: Outcome {
            removes: mistake_removes,
            commands,
            answer: Some("Cleaned up.".into()),
            ..Outcome::default()
        },
        ..GenTask::default()
    }
}
