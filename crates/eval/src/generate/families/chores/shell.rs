//! The script-and-run chore: write and run a small script that computes a value from
//! the workspace's files.

use std::collections::BTreeMap;

use super::join;
use crate::generate::words::{self, command};
use crate::generate::{GenTask, Outcome, Rng};
use crate::grade::GraderSpec;

/// What a script-and-run task's script computes.
enum Measure {
    /// The number of lines of a file.
    Lines { file: String },
    /// The sum of a CSV column.
    Sum {
        file: String,
        column: String,
        index: usize,
    },
    /// The number of files of an extension under a folder, at any depth.
    Count { dir: String, ext: &'static str },
    /// The largest value of a CSV column.
    Max {
        file: String,
        column: String,
        index: usize,
    },
}

impl Measure {
    /// What the script prints, as a noun phrase.
    fn what(&self) -> String {
        match self {
            Measure::Lines { file } => format!("the number of lines in `{file}`"),
            Measure::Sum { file, column, .. } => {
                format!(
                    "the sum of the `{column}` column in `{file}` (the values are whole numbers)"
                )
            }
            Measure::Count { dir, ext } => {
                format!("how many `.{ext}` files there are under `{dir}/`, subfolders included")
            }
            Measure::Max { file, column, .. } => {
                format!("the largest value in the `{column}` column of `{file}`")
            }
        }
    }

    /// A script in sh (`python` false) or Python that prints the value.
    fn script(&self, python: bool) -> String {
        match (self, python) {
            (Measure::Lines { file }, false) => format!("#!/bin/sh\nwc -l < {file} | tr -d ' '\n"),
            (Measure::Lines { file }, true) => {
                format!("with open({file:?}) as f:\n    print(len(f.read().splitlines()))\n")
            }
            (Measure::Sum { file, index, .. }, false) => {
                format!("#!/bin/sh\nawk -F, 'NR > 1 {{ s += ${index} }} END {{ print s }}' {file}\n")
            }
            (Measure::Sum { file, column, .. }, true) => format!(
                "import csv\n\nwith open({file:?}, newline=\"\") as f:\n    \
                 print(sum(int(row[{column:?}]) for row in csv.DictReader(f)))\n"
            ),
            (Measure::Count { dir, ext }, false) => {
                format!("#!/bin/sh\nfind {dir} -type f -name '*.{ext}' | wc -l | tr -d ' '\n")
            }
            (Measure::Count { dir, ext }, true) => format!(
                "from pathlib import Path\n\nprint(sum(1 for p in Path({dir:?}).rglob(\"*.{ext}\") if p.is_file()))\n"
            ),
            (Measure::Max { file, index, .. }, false) => {
                format!("#!/bin/sh\ntail -n +2 {file} | cut -d, -f{index} | sort -n | tail -n 1\n")
            }
            (Measure::Max { file, column, .. }, true) => format!(
                "import csv\n\nwith open({file:?}, newline=\"\") as f:\n    \
                 print(max(int(row[{column:?}]) for row in csv.DictReader(f)))\n"
            ),
        }
    }
}

/// A CSV of `rows` rows whose columns are `id`, `name` and the numeric `columns` in a
/// random order; returns the text, each numeric column's values and the 1-based
/// index of each numeric column.
fn csv_table(rng: &mut Rng, rows: usize, columns: &[&str]) -> (String, Vec<Vec<i64>>, Vec<usize>) {
    let mut header: Vec<&str> = vec!["id", "name"];
    header.extend(columns);
    rng.shuffle(&mut header);
    let indices = columns
        .iter()
        .map(|c| header.iter().position(|h| h == c).map_or(1, |i| i + 1))
        .collect();
    let mut values = vec![Vec::new(); columns.len()];
    let mut text = header.join(",") + "\n";
    for row in 0..rows {
        let cells: Vec<String> = header
            .iter()
            .map(|h| match *h {
                "id" => (row + 1).to_string(),
                "name" => rng.pick(words::PRODUCTS).to_string(),
                column => {
                    let v = rng.range(1, 999);
                    if let Some(i) = columns.iter().position(|c| *c == column) {
                        values[i].push(v);
                    }
                    v.to_string()
                }
            })
            .collect();
        text.push_str(&cells.join(","));
        text.push('\n');
    }
    (text, values, indices)
}

/// Lines of words with codes, `n` of them.
fn word_lines(rng: &mut Rng, n: usize) -> String {
    (0..n)
        .map(|_| format!("{} {}\n", rng.pick(words::NOUNS), words::code(rng, 4)))
        .collect()
}

/// Builds a script-and-run task.
pub(super) fn script_and_run(rng: &mut Rng, phrasing: usize) -> GenTask {
    let mut files = BTreeMap::new();
    let noun = *rng.pick(words::NOUNS);
    let (measure, value, wrong) = match rng.below(4) {
        0 => {
            let dir = *rng.pick(&["data", "logs", "input", "corpus"]);
            let ext = *rng.pick(&["txt", "log", "lst"]);
            let file = format!("{dir}/{noun}.{ext}");
            let n = rng.range(15, 90);
            let old = n + rng.range(3, 20);
            files.insert(file.clone(), word_lines(rng, n as usize));
            files.insert(
                format!("{dir}/{noun}_old.{ext}"),
                word_lines(rng, old as usize),
            );
            (Measure::Lines { file }, n, old)
        }
        1 | 2 => {
            let sum = rng.chance(50);
            let pool: &[&str] = if sum {
                &["amount", "quantity", "units", "hours", "points", "bytes"]
            } else {
                &[
                    "latency_ms",
                    "price",
                    "score",
                    "size_kb",
                    "duration_s",
                    "weight_g",
                ]
            };
            let columns = rng.distinct(pool, 2);
            let dir = *rng.pick(&["", "data", "reports"]);
            let file = join(dir, &format!("{noun}.csv"));
            let rows = 6 + rng.below(12);
            let (text, values, indices) = csv_table(rng, rows, &columns);
            files.insert(file.clone(), text);
            let (old, old_values, _) = csv_table(rng, rows + 3, &columns);
            files.insert(join("archive", &format!("{noun}_2023.csv")), old);
            let pick = |v: &[i64]| {
                if sum {
                    v.iter().sum()
                } else {
                    v.iter().copied().max().unwrap_or(0)
                }
            };
            let (value, other) = (pick(&values[0]), pick(&values[1]));
            let wrong = if other != value {
                other
            } else {
                pick(&old_values[0]) + 1
            };
            let column = columns[0].to_string();
            let index = indices[0];
            if sum {
                (
                    Measure::Sum {
                        file,
                        column,
                        index,
                    },
                    value,
                    wrong,
                )
            } else {
                (
                    Measure::Max {
                        file,
                        column,
                        index,
                    },
                    value,
                    wrong,
                )
            }
        }
        _ => {
            let dir = rng
                .pick(&["records", "inbox", "data/events", "exports"])
                .to_string();
            let ext = *rng.pick(&["json", "xml", "yaml", "md"]);
            let n = 4 + rng.below(10);
            let subs = ["", "2023", "2024/q1", "failed"];
            for i in 0..n {
                let sub = *rng.pick(&subs);
                let path = join(&join(&dir, sub), &format!("{noun}_{i}.{ext}"));
                files.insert(path, format!("record {}\n", words::code(rng, 6)));
            }
            // Near misses: a longer extension, a backup, the same type outside.
            files.insert(join(&dir, &format!("batch.{ext}l")), "{}\n".into());
            files.insert(join(&dir, &format!("{noun}_0.{ext}.bak")), "old\n".into());
            files.insert(format!("{noun}_sample.{ext}"), "sample\n".into());
            files.insert(
                join(&dir, "README.md"),
                format!("Exported {noun} records.\n"),
            );
            let mut count = n as i64;
            if ext == "md" {
                count += 1;
            }
            (Measure::Count { dir, ext }, count, count + 2)
        }
    };
    files.insert(
        "README.md".into(),
        format!("# {noun}\n\nData and reports of the {noun} team.\n"),
    );
    let python = rng.chance(50);
    let stem = *rng.pick(&["count", "tally", "measure", "scripts/compute", "tools/stat"]);
    let script = format!("{stem}.{}", if python { "py" } else { "sh" });
    let run = format!("{} {script}", if python { "python3" } else { "sh" });
    let out = rng
        .pick(&[
            "result.txt",
            "answer.txt",
            "out/value.txt",
            "reports/result.txt",
        ])
        .to_string();
    let lang = if python { "Python" } else { "shell" };
    let what = measure.what();
    let prompt = match phrasing {
        0 => format!("Write `{script}` to print {what}; run it and save its output in `{out}`."),
        1 => format!(
            "I'd like a small {lang} script for this rather than a one-off answer. Please create \
             `{script}` so that running `{run}` from the workspace root prints {what}, just the \
             number on one line. Then run it and write what it prints into `{out}`."
        ),
        2 => format!(
            "Could you write a {lang} script called `{script}` that works out {what} and prints only \
             that number? Once it works, run it and put its output into `{out}`."
        ),
        3 => format!(
            "1. Create `{script}` ({lang}). It prints {what}, as a bare number.\n2. Run `{run}`.\n\
             3. Save the output to `{out}`."
        ),
        4 => format!(
            "Hi! When you have a moment, could you please put together a little {lang} script, \
             `{script}`, that prints {what}? Then please run it and store the result in `{out}`. \
             Thanks a bunch!"
        ),
        _ => format!(
            "`{out}` should end up containing {what}, as produced by a script: make `{script}` \
             (printing nothing but that number), run it with `{run}` and redirect its output into \
             `{out}`."
        ),
    };
    let redirect = match out.rsplit_once('/') {
        Some((dir, _)) => format!("mkdir -p {dir} && {run} > {out}"),
        None => format!("{run} > {out}"),
    };
    GenTask {
        prompt,
        files,
        grade: vec![
            command(format!("test -f {script}")),
            command(format!(
                "{run} | grep -qxE '[[:space:]]*{value}[[:space:]]*'"
            )),
            GraderSpec::FileMatches {
                path: out.clone(),
                regex: format!(r"^\s*{value}\s*$"),
            },
        ],
        solution: Outcome {
            writes: vec![(script.clone(), measure.script(python))],
            commands: vec![redirect],
            answer: Some(format!(
                "Wrote {script}; it prints {value}, saved in {out}."
            )),
            ..Outcome::default()
        },
        mistake: Outcome {
            writes: vec![(out.clone(), format!("{wrong}\n"))],
            answer: Some(format!("The answer is {wrong}; saved in {out}.")),
            ..Outcome::default()
        },
        ..GenTask::default()
    }
}
