//! Generated task families: everyday jobs of a local coding and file agent, made from a
//! seed, so a score can come from tasks nobody read before the run. A seed picks the
//! family (seed mod the number of families), the phrasing (the next digit in that base)
//! and everything else: names, values, languages, layout, distractors. Each task's
//! graders are computed from the state it generated; each family carries its known
//! solution and a typical mistake, which the self-check grades.

mod check;
mod families;
mod rng;
mod words;

use std::collections::BTreeMap;
use std::ops::Range;
use std::path::{Path, PathBuf};

use serde_json::Value;

pub use check::{self_check, CheckReport};
pub use families::{todo_workspace, TodoWorkspace};
pub use rng::Rng;

use crate::grade::GraderSpec;
use crate::task::{load_suite, Budget, DeclaredToolSpec, Task, TaskSpec, ToolsSpec};
use crate::EvalError;

/// The suite name of generated tasks.
pub const SUITE: &str = "gen";

/// The first seed of the range kept for reported figures; seeds below it are for
/// development.
pub const FIRST_TEST_SEED: u64 = 10_000;

/// One family of generated tasks.
#[derive(Clone, Copy)]
pub struct Family {
    /// Its name (a task's id ends with it).
    pub name: &'static str,
    /// The kind of job: question, edit, made, housekeeping, shell, mcp, restraint, tools.
    pub kind: &'static str,
    /// What the family's tasks ask for, in one line (docs/EVALUATION.md).
    pub about: &'static str,
    /// How many phrasings [`Family::build`] knows (at least six).
    pub phrasings: usize,
    /// Builds the task of one phrasing from a random source.
    pub build: fn(&mut Rng, usize) -> GenTask,
}

/// A generated task before it is written out.
#[derive(Debug, Clone, Default)]
pub struct GenTask {
    /// What the agent is asked.
    pub prompt: String,
    /// The workspace's files: relative path → content.
    pub files: BTreeMap<String, String>,
    /// Tools declared for the task (the built-in tools are offered unless `no_builtin`).
    pub declared: Vec<DeclaredToolSpec>,
    /// Offer no built-in tools (tool-choice families).
    pub no_builtin: bool,
    /// An MCP server made from this API (served by `tests/mcp-servers/generated.mjs`).
    pub mcp_api: Option<Value>,
    /// The graders; all must pass.
    pub grade: Vec<GraderSpec>,
    /// Budget overrides (the default budget otherwise).
    pub budget: Option<Budget>,
    /// What a correct run does.
    pub solution: Outcome,
    /// What a typical wrong run does.
    pub mistake: Outcome,
}

/// What a run did, for the self-check: files written and removed, calls, the answer.
#[derive(Debug, Clone, Default)]
pub struct Outcome {
    /// Files written: relative path → new content.
    pub writes: Vec<(String, String)>,
    /// Files removed.
    pub removes: Vec<String>,
    /// Files moved: from → to.
    pub moves: Vec<(String, String)>,
    /// Shell commands run in the workspace (`sh -c`), after the writes.
    pub commands: Vec<String>,
    /// Replies of tool calls, each a list of (tool, arguments).
    pub calls: Vec<Vec<(String, Value)>>,
    /// The final answer.
    pub answer: Option<String>,
}

impl Outcome {
    /// An outcome that only answers.
    pub fn answer(text: impl Into<String>) -> Self {
        Outcome {
            answer: Some(text.into()),
            ..Outcome::default()
        }
    }

    /// An outcome that writes one file and answers briefly.
    pub fn write(path: impl Into<String>, content: impl Into<String>) -> Self {
        Outcome {
            writes: vec![(path.into(), content.into())],
            answer: Some("Done.".into()),
            ..Outcome::default()
        }
    }
}

/// Where generated tasks find what lives in the checkout.
#[derive(Debug, Clone)]
pub struct GenEnv {
    /// `tests/mcp-servers/generated.mjs`: serves a task's generated MCP API.
    pub mcp_server: PathBuf,
}

/// Every family, in a fixed order (a seed's family is its index).
pub fn families() -> Vec<Family> {
    families::all()
}

/// The family and phrasing a seed picks, and the task it generates.
pub fn generate(seed: u64) -> (&'static str, usize, GenTask) {
    let all = families();
    let count = all.len() as u64;
    let family = &all[(seed % count) as usize];
    let phrasing = ((seed / count) % family.phrasings as u64) as usize;
    let mut rng = Rng::new(seed, 0x6e65);
    (family.name, phrasing, (family.build)(&mut rng, phrasing))
}

/// The id of seed's task: the seed, zero-padded so ids sort by seed, and the family.
pub fn task_id(seed: u64, family: &str) -> String {
    format!("{seed:05}-{family}")
}

/// Parses `A..B` (B excluded) or `A..=B`.
pub fn parse_seeds(text: &str) -> Result<Range<u64>, String> {
    let bad = || format!("--seeds: `{text}` is not a range like 10000..10240");
    let (low, high, inclusive) = match text.split_once("..=") {
        Some((low, high)) => (low, high, true),
        None => {
            let (low, high) = text.split_once("..").ok_or_else(bad)?;
            (low, high, false)
        }
    };
    let low: u64 = low.trim().parse().map_err(|_| bad())?;
    let high: u64 = high.trim().parse().map_err(|_| bad())?;
    let end = if inclusive {
        high.checked_add(1).ok_or_else(bad)?
    } else {
        high
    };
    if end <= low {
        return Err(format!("--seeds: `{text}` is empty"));
    }
    Ok(low..end)
}

/// Writes the tasks of `seeds` under `root/gen/` (task.toml and input/ each) and reads
/// them back as a suite, checked as every suite is.
pub fn write_suite(root: &Path, seeds: Range<u64>, env: &GenEnv) -> Result<Vec<Task>, EvalError> {
    let suite_dir = root.join(SUITE);
    for seed in seeds {
        let (family, _, task) = generate(seed);
        write_task(&suite_dir.join(task_id(seed, family)), family, &task, env)?;
    }
    load_suite(root, SUITE)
}

/// Writes one task's directory.
pub fn write_task(dir: &Path, family: &str, task: &GenTask, env: &GenEnv) -> Result<(), EvalError> {
    let io = |path: &Path| {
        let path = path.to_path_buf();
        move |source| EvalError::Io { path, source }
    };
    if dir.exists() {
        std::fs::remove_dir_all(dir).map_err(io(dir))?;
    }
    let input = dir.join("input");
    std::fs::create_dir_all(&input).map_err(io(&input))?;
    for (path, content) in &task.files {
        let file = input.join(path);
        if let Some(parent) = file.parent() {
            std::fs::create_dir_all(parent).map_err(io(parent))?;
        }
        std::fs::write(&file, content).map_err(io(&file))?;
    }
    let mut mcp = Vec::new();
    if let Some(api) = &task.mcp_api {
        let file = dir.join("api.json");
        let text = serde_json::to_string_pretty(api).map_err(|e| EvalError::Task {
            path: file.clone(),
            reason: e.to_string(),
        })?;
        std::fs::write(&file, text).map_err(io(&file))?;
        let id = dir
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        mcp.push(format!(
            "api=node {} {{evals}}/{SUITE}/{id}/api.json",
            env.mcp_server.display()
        ));
    }
    let spec = TaskSpec {
        prompt: task.prompt.clone(),
        tags: vec![family.to_string(), kind_of(family).to_string()],
        budget: task.budget.unwrap_or_default(),
        tools: ToolsSpec {
            builtin: !task.no_builtin,
            declared: task.declared.clone(),
            mcp,
        },
        setup: Vec::new(),
        grade: task.grade.clone(),
    };
    let file = dir.join("task.toml");
    let text = toml::to_string(&spec).map_err(|e| EvalError::Task {
        path: file.clone(),
        reason: e.to_string(),
    })?;
    std::fs::write(&file, text).map_err(io(&file))
}

/// The kind of a family by name ("" when there is none of that name).
pub fn kind_of(family: &str) -> &'static str {
    families()
        .iter()
        .find(|f| f.name == family)
        .map(|f| f.kind)
        .unwrap_or("")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env() -> GenEnv {
        GenEnv {
            mcp_server: Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("../../tests/mcp-servers/generated.mjs"),
        }
    }

    /// Seeds per phrasing in the self-check: with six phrasings, 18 tasks a family.
    const SEEDS_PER_PHRASING: u64 = 3;

    #[test]
    fn every_family_passes_its_self_check_in_every_phrasing() {
        let scratch = tempfile::tempdir().unwrap();
        let mut problems = Vec::new();
        for family in families() {
            for phrasing in 0..family.phrasings {
                for seed in 0..SEEDS_PER_PHRASING {
                    let mut rng = Rng::new(seed * 7919 + phrasing as u64, 0x6e65);
                    let task = (family.build)(&mut rng, phrasing);
                    let report = self_check(scratch.path(), family.name, &task, &env());
                    match report {
                        Ok(report) => {
                            if let Some(problem) = report.problem() {
                                problems.push(format!(
                                    "{} phrasing {phrasing} seed {seed}: {problem}\n  prompt: {}",
                                    family.name, task.prompt
                                ));
                            }
                        }
                        Err(error) => problems.push(format!(
                            "{} phrasing {phrasing} seed {seed}: {error}",
                            family.name
                        )),
                    }
                }
            }
        }
        assert!(problems.is_empty(), "{}", problems.join("\n"));
    }

    #[test]
    fn families_have_unique_names_and_six_phrasings_written_differently() {
        let all = families();
        let mut names: Vec<&str> = all.iter().map(|f| f.name).collect();
        names.sort();
        names.dedup();
        assert_eq!(names.len(), all.len(), "family names repeat");
        for family in &all {
            assert!(
                family.phrasings >= 6,
                "{} has {} phrasings",
                family.name,
                family.phrasings
            );
            let mut prompts: Vec<String> = (0..family.phrasings)
                .map(|p| (family.build)(&mut Rng::new(1, 0x6e65), p).prompt)
                .collect();
            prompts.sort();
            prompts.dedup();
            assert_eq!(
                prompts.len(),
                family.phrasings,
                "{}: phrasings repeat",
                family.name
            );
        }
    }

    #[test]
    fn a_seed_gives_the_same_task_and_seeds_cycle_through_families_and_phrasings() {
        let (family, phrasing, task) = generate(10_007);
        let (again, phrasing_again, task_again) = generate(10_007);
        assert_eq!((family, phrasing), (again, phrasing_again));
        assert_eq!(task.prompt, task_again.prompt);
        assert_eq!(task.files, task_again.files);
        let count = families().len() as u64;
        let seen: std::collections::BTreeSet<&str> = (0..count).map(|s| generate(s).0).collect();
        assert_eq!(seen.len() as u64, count);
        assert_eq!(generate(0).1, 0);
        assert_eq!(generate(count).1, 1);
    }

    #[test]
    fn seed_ranges_parse_with_or_without_the_end() {
        assert_eq!(parse_seeds("10000..10240"), Ok(10_000..10_240));
        assert_eq!(parse_seeds("5..=7"), Ok(5..8));
        assert!(parse_seeds("7..7").is_err());
        assert!(parse_seeds("ten..20").is_err());
        assert!(parse_seeds("10").is_err());
    }

    #[test]
    fn a_written_suite_loads_as_a_suite_with_its_tags() {
        let root = tempfile::tempdir().unwrap();
        let tasks = write_suite(root.path(), 3..6, &env()).unwrap();
        assert_eq!(tasks.len(), 3);
        for (task, seed) in tasks.iter().zip(3..) {
            let (family, _, generated) = generate(seed);
            assert_eq!(task.id, task_id(seed, family));
            assert_eq!(task.spec.prompt, generated.prompt);
            assert_eq!(task.spec.tags[0], family);
            for path in generated.files.keys() {
                assert!(task.input_dir().join(path).is_file(), "{path}");
            }
        }
    }
}
