//! The per-file-tally family: for each CSV of a directory its data rows, or for each
//! log its lines of one level, written as `name: count`.

use super::file_matches;
use crate::generate::words::{self, file_lacks};
use crate::generate::{GenTask, Outcome, Rng};
use crate::grade::GraderSpec;

/// The "counts" line of one file: `name: count`, a path prefix or a list bullet allowed.
fn count_line(out: &str, name: &str, count: usize) -> GraderSpec {
    file_matches(
        out,
        format!(
            r"(?m)^[ \t]*(?:[-*][ \t]+)?(?:\S*/)?{}[ \t]*:[ \t]*{count}(?:[ \t].*)?$",
            regex::escape(name)
        ),
    )
}

/// A random CSV cell of column `column` for row `row`.
fn csv_value(rng: &mut Rng, column: &str, row: usize, start: i64) -> String {
    match column {
        "id" => (start + row as i64).to_string(),
        "name" => rng.pick(words::PEOPLE).to_string(),
        "city" if rng.chance(25) => {
            format!(
                "\"{}, {}\"",
                rng.pick(words::CITIES),
                rng.pick(super::convert::COUNTRIES)
            )
        }
        "city" => rng.pick(words::CITIES).to_string(),
        "qty" => rng.range(1, 400).to_string(),
        "price" => format!("{}.{:02}", rng.range(1, 300), rng.range(0, 99)),
        "date" => format!("2024-{:02}-{:02}", rng.range(1, 12), rng.range(1, 28)),
        _ => rng.pick(&["open", "paid", "void", "sent"]).to_string(),
    }
}

/// A log line at `level` in the task's `format`.
fn log_line(format: usize, second: usize, level: &str, service: &str, message: &str) -> String {
    let time = format!(
        "{:02}:{:02}:{:02}",
        8 + second / 3600,
        second / 60 % 60,
        second % 60
    );
    match format {
        0 => format!("2024-03-07 {time} {level:<5} {service}: {message}"),
        1 => format!("2024-03-07T{time}Z level={level} service={service} msg=\"{message}\""),
        _ => format!("[2024-03-07 {time}] [{level}] {message}"),
    }
}

/// A log message; `decoy` mentions the level's word in lower case.
fn log_message(rng: &mut Rng, level: &str, decoy: bool) -> String {
    let noun = rng.pick(words::NOUNS);
    let n = rng.range(2, 97);
    let choices: Vec<String> = match (level, decoy) {
        ("ERROR", true) => vec![
            format!("{noun}: 0 errors in last batch"),
            format!("recovered from earlier error in {noun}"),
            format!("error budget for {noun} at {n}%"),
        ],
        (_, true) => vec![
            format!("no warnings from {noun}"),
            format!("warning threshold for {noun} set to {n}%"),
        ],
        ("ERROR", false) => vec![
            format!("request to {noun} failed"),
            format!("could not open the {noun} store"),
            format!("{noun} returned status 500"),
        ],
        ("WARN", false) => vec![
            format!("{noun} queue is {n}% full"),
            format!("slow response from {noun}"),
            format!("{noun} config missing, using defaults"),
        ],
        ("DEBUG", false) => vec![format!("cache hit for {noun}"), format!("tick {n}")],
        _ => vec![
            format!("started {noun} worker"),
            format!("handled {n} requests"),
            format!("{noun} ready"),
        ],
    };
    rng.pick(&choices).clone()
}

/// For each CSV of a directory its data rows, or for each log its lines of one level.
pub(super) fn per_file_tally(rng: &mut Rng, phrasing: usize) -> GenTask {
    let logs = rng.chance(50);
    let count = rng.range(3, 5) as usize;
    let mut nouns = rng.distinct(words::NOUNS, words::NOUNS.len());
    let level = *rng.pick(&["ERROR", "WARN"]);
    let (dir, ext) = if logs {
        (
            *rng.pick(&["logs", "var/log", "logs/services", "ops/logs"]),
            "log",
        )
    } else {
        (
            *rng.pick(&[
                "data",
                "exports",
                "data/exports",
                "reports/monthly",
                "import/batches",
            ]),
            "csv",
        )
    };
    let suffix = if logs {
        ""
    } else {
        *rng.pick(&["", "_2024", "_q3", "-export"])
    };
    let names: Vec<String> = nouns
        .drain(..count)
        .map(|n| format!("{n}{suffix}.{ext}"))
        .collect();
    // The copy outside the directory (or the rotated log): a name no counted name holds.
    let extra = nouns
        .iter()
        .map(|n| format!("{n}{suffix}.{ext}"))
        .find(|e| {
            names
                .iter()
                .all(|n| !n.contains(e.as_str()) && !e.contains(n.as_str()))
        })
        .unwrap_or_else(|| format!("old{suffix}.{ext}"));
    let mut task = GenTask::default();
    // (name, right count, the mistake's count)
    let mut tally: Vec<(String, usize, usize)> = Vec::new();
    let format = rng.below(3);
    let make_file = |rng: &mut Rng, index: usize| -> (String, usize, usize) {
        if logs {
            let lines = rng.range(8, 30) as usize;
            let hits = rng.range(usize::from(index == 0) as i64, (lines / 3) as i64) as usize;
            let decoys = rng.range(usize::from(index == 0) as i64, 2) as usize;
            let mut levels: Vec<(&str, bool)> = vec![(level, false); hits];
            levels.extend(vec![("INFO", true); decoys]);
            let plain = [
                "INFO",
                "DEBUG",
                if level == "ERROR" { "WARN" } else { "ERROR" },
            ];
            while levels.len() < lines {
                levels.push((*rng.pick(&plain), false));
            }
            rng.shuffle(&mut levels);
            let service = rng.pick(words::NOUNS);
            let mut second = rng.range(0, 20_000) as usize;
            let mut text = String::new();
            for (lvl, decoy) in levels {
                second += rng.range(1, 90) as usize;
                let message = log_message(rng, if decoy { level } else { lvl }, decoy);
                text.push_str(&log_line(format, second, lvl, service, &message));
                text.push('\n');
            }
            (text, hits, hits + decoys)
        } else {
            let mut columns = vec!["id"];
            let extra_columns = rng.range(2, 4) as usize;
            columns.extend(rng.distinct(
                &["name", "city", "qty", "price", "date", "status"],
                extra_columns,
            ));
            let rows = rng.range(1, 35) as usize;
            let start = rng.range(1, 900);
            let mut text = columns.join(",");
            for row in 0..rows {
                let cells: Vec<String> = columns
                    .iter()
                    .map(|c| csv_value(rng, c, row, start))
                    .collect();
                text.push('\n');
                text.push_str(&cells.join(","));
            }
            text.push_str(["\n", "", "\n\n", "\n\n\n"][rng.below(4)]);
            (text, rows, rows + 1)
        }
    };
    for (i, name) in names.iter().enumerate() {
        let (text, right, wrong) = make_file(rng, i);
        task.files.insert(format!("{dir}/{name}"), text);
        tally.push((name.clone(), right, wrong));
    }
    let (extra_text, _, _) = make_file(rng, 1);
    if logs {
        task.files
            .insert(format!("{dir}/{}.1", names[0]), extra_text);
    } else {
        task.files
            .insert(format!("archive/{dir}/{extra}"), extra_text);
        task.files.insert(
            format!("{dir}/README.md"),
            format!("# Exports\n\nOne CSV per feed, header on the first line. Old files move to `archive/{dir}/`.\n"),
        );
    }
    let lower = level.to_lowercase();
    let out = if logs {
        rng.pick(&[
            format!("{lower}_counts.txt"),
            "counts.txt".into(),
            format!("reports/{lower}s.txt"),
            "tally.txt".into(),
        ])
        .clone()
    } else {
        rng.pick(&[
            "row_counts.txt".to_string(),
            "counts.txt".into(),
            "reports/rows.txt".into(),
            "tally.txt".into(),
        ])
        .clone()
    };
    for (name, right, _) in &tally {
        task.grade.push(count_line(&out, name, *right));
    }
    task.grade.push(file_lacks(
        &out,
        &if logs {
            format!("{}.1", names[0])
        } else {
            extra.clone()
        },
    ));
    let (item, counted) = if logs {
        (
            "`.log` file",
            format!("the number of its lines whose level is {level}"),
        )
    } else {
        (
            "CSV file",
            "its number of data rows (the header line and blank lines don't count)".to_string(),
        )
    };
    let items = if logs {
        "log files (`*.log`)"
    } else {
        "CSV files"
    };
    task.prompt = match phrasing {
        0 => format!("For each {item} in {dir}/ write `name: count` to {out}, count being {counted}."),
        1 => format!(
            "I'm trying to get a feel for how much is in {dir}/. For every {item} directly in that folder, please work out {counted}, and write the results to {out}: one line per file in the form `name: count`, where name is the file name (like the ones `ls {dir}` prints) and count is a plain whole number."
        ),
        2 => format!(
            "How many {} does each of the {items} in {dir}/ have? Put the answer in {out}, one `name: count` line per file (file name, then the number).",
            if logs { format!("{level} lines") } else { "data rows, not counting the header or blank lines,".to_string() }
        ),
        3 => format!(
            "Tally {dir}/*.{ext}: per file, {counted}. Output file {out}, lines `<file name>: <count>`. One line per file, no total."
        ),
        4 => format!(
            "Hey, quick favour please: could you go through the {items} in {dir}/ and, for each one, note {counted}? Please save it as {out} with a line `name: count` for each file. Thanks a bunch!"
        ),
        _ => format!(
            "Count, separately for each {item} in the {dir} directory, {counted}. Record each as `name: count` (the file's name and the number) in a new file {out}."
        ),
    };
    tally.sort();
    let lines = |wrong: bool| -> String {
        tally
            .iter()
            .map(|(name, right, bad)| format!("{name}: {}\n", if wrong { bad } else { right }))
            .collect()
    };
    task.solution = Outcome::write(out.clone(), lines(false));
    task.mistake = Outcome::write(
        out,
        if rng.chance(50) {
            lines(true)
        } else {
            format!("total: {}\n", tally.iter().map(|t| t.1).sum::<usize>())
        },
    );
    task
}
