//! Question families over source trees: which file defines a function, which function
//! raises an error.

use std::collections::BTreeMap;

use crate::generate::words::{self, answer_word, Lang};
use crate::generate::{GenTask, Outcome, Rng};
use crate::grade::GraderSpec;

/// The answer is `path` alone (a leading `./`, quotes, backticks allowed).
fn answer_is_path(path: &str) -> GraderSpec {
    GraderSpec::AnswerMatches {
        regex: format!(
            r#"(?i)^[\s`"'*]*(?:\./)?{}[\s`"'*.]*$"#,
            regex::escape(path)
        ),
    }
}

/// The answer is the function's name alone (`()` after it allowed).
fn answer_is_name(name: &str) -> GraderSpec {
    GraderSpec::AnswerMatches {
        regex: format!(r#"^[\s`"'*]*{}(?:\(\))?[\s`"'*.]*$"#, regex::escape(name)),
    }
}

/// A directory for a source file of `lang`.
fn source_dir(rng: &mut Rng, lang: &Lang) -> String {
    let roots: &[&str] = match lang.ext {
        "py" => &["", "app/", "src/app/", "lib/"],
        "js" | "ts" => &["src/", "lib/", "src/server/", "packages/core/src/"],
        "rs" => &["src/", "crates/core/src/", "src/bin/"],
        "go" => &["", "internal/", "pkg/", "cmd/tool/"],
        "rb" => &["lib/", "app/models/", ""],
        _ => &["bin/", "scripts/", ""],
    };
    rng.pick(roots).to_string()
}

/// A header line a file of `lang` starts with.
fn header(lang: &Lang, module: &str) -> String {
    match lang.ext {
        "go" => format!("package {module}\n\nimport \"errors\"\n\n"),
        "sh" => "#!/bin/sh\n\n".to_string(),
        "rs" => format!("//! The {module} module.\n\n"),
        _ => format!("{}\n\n", lang.comment(&format!("The {module} module."))),
    }
}

pub(super) fn which_file_defines(rng: &mut Rng, phrasing: usize) -> GenTask {
    let lang = *rng.pick(words::CODE_LANGS);
    let nouns = rng.distinct(words::NOUNS, 5);
    let verbs = rng.distinct(words::VERBS, 3);
    let target = words::snake(verbs[0], nouns[0]);
    let longer = format!(
        "{target}_{}",
        rng.pick(&["batch", "all", "cached", "async", "list"])
    );
    let ext = lang.ext;
    let mut files = BTreeMap::new();
    let path = |rng: &mut Rng, noun: &str| format!("{}{noun}.{ext}", source_dir(rng, &lang));
    let defining = path(rng, nouns[1]);
    let longer_file = path(rng, nouns[2]);
    let caller = path(rng, nouns[3]);
    let helper = words::snake(verbs[1], nouns[1]);
    files.insert(
        defining.clone(),
        format!(
            "{}{}\n{}",
            header(&lang, nouns[1]),
            lang.function(&helper, ""),
            lang.function(&target, &lang.guarded_raise(&format!("empty {}", nouns[0]))),
        ),
    );
    files.insert(
        longer_file.clone(),
        format!(
            "{}{}",
            header(&lang, nouns[2]),
            lang.function(&longer, &format!("    {}\n", lang.call(&target, "value")))
        ),
    );
    files.insert(
        caller.clone(),
        format!(
            "{}{}\n{}\n",
            header(&lang, nouns[3]),
            lang.comment(&format!("Uses {target} on every record.")),
            lang.call(&target, "record")
        ),
    );
    let test = format!("tests/test_{}.{ext}", nouns[4]);
    files.insert(
        test.clone(),
        format!(
            "{}{}\n",
            header(&lang, &format!("test_{}", nouns[4])),
            lang.call(&longer, "sample")
        ),
    );
    let base = |p: &str| p.rsplit('/').next().unwrap_or(p).to_string();
    let bare = matches!(phrasing, 2 | 5);
    let prompt = match phrasing {
        0 => format!("Where is `{target}` defined?"),
        1 => format!(
            "I keep seeing calls to {target} in this codebase but I can't find where the \
             function itself is written. Which file defines it? Please tell me the file."
        ),
        2 => format!("Which file defines the function {target}? Reply with the file's path only."),
        3 => format!(
            "Find the file that contains the definition of `{target}` and tell me its path."
        ),
        4 => format!(
            "Hello! Quick question about the .{ext} sources: in which file is the function \
             {target} implemented (not just used)? Thank you!"
        ),
        _ => format!("Path of the file defining {target}() — just the path, please."),
    };
    let grade = if bare {
        answer_is_path(&defining)
    } else {
        answer_word(&base(&defining))
    };
    GenTask {
        prompt,
        files,
        grade: vec![grade],
        solution: Outcome::answer(if bare {
            defining.clone()
        } else {
            format!("`{target}` is defined in {defining}.")
        }),
        mistake: Outcome::answer(if rng.chance(50) {
            format!("It is defined in {longer_file}.")
        } else {
            caller.clone()
        }),
        ..GenTask::default()
    }
}

pub(super) fn which_function_raises(rng: &mut Rng, phrasing: usize) -> GenTask {
    let lang = *rng.pick(words::CODE_LANGS);
    let nouns = rng.distinct(words::NOUNS, 4);
    let verbs = rng.distinct(words::VERBS, 5);
    let ext = lang.ext;
    let adjective = rng.pick(&["invalid", "unknown", "missing", "malformed", "expired"]);
    let message = format!("{adjective} {} id", nouns[0]);
    // The near miss: the same words about another thing, or the same thing in other words.
    let near = if rng.chance(50) {
        format!("{adjective} {} id", nouns[1])
    } else {
        format!("{} id is {adjective}", nouns[0])
    };
    let names: Vec<String> = verbs.iter().map(|v| words::snake(v, nouns[0])).collect();
    let (raiser, near_raiser) = (&names[0], &names[1]);
    let mut functions = vec![
        lang.function(raiser, &lang.guarded_raise(&message)),
        lang.function(near_raiser, &lang.guarded_raise(&near)),
        lang.function(&names[2], ""),
        lang.function(&names[3], &format!("    {}\n", lang.call(raiser, "value"))),
    ];
    rng.shuffle(&mut functions);
    let dir = source_dir(rng, &lang);
    let path = format!("{dir}{}.{ext}", nouns[0]);
    let other = format!("{dir}{}.{ext}", nouns[2]);
    let mut files = BTreeMap::new();
    files.insert(
        path.clone(),
        format!("{}{}", header(&lang, nouns[0]), functions.join("\n")),
    );
    files.insert(
        other,
        format!(
            "{}{}",
            header(&lang, nouns[2]),
            lang.function(
                &names[4],
                &lang.guarded_raise(&format!("{adjective} {} name", nouns[2]))
            )
        ),
    );
    let bare = matches!(phrasing, 1 | 4);
    let prompt = match phrasing {
        0 => format!("Which function raises \"{message}\"?"),
        1 => format!(
            "A user reported the error message `{message}`. Reply with only the name of the \
             function that produces it."
        ),
        2 => format!(
            "Somewhere in {path} there is a function that fails with the message \"{message}\". \
             I'd like to know which function that is, so I can add logging to it. Can you find it?"
        ),
        3 => format!("Find the function that throws the error '{message}' and tell me its name."),
        4 => format!("Name of the function emitting \"{message}\"? Name only."),
        _ => format!(
            "Please, when you have a moment: look through the code and tell me what function \
             the \"{message}\" error comes from. Thanks!"
        ),
    };
    GenTask {
        prompt,
        files,
        grade: vec![if bare {
            answer_is_name(raiser)
        } else {
            answer_word(raiser)
        }],
        solution: Outcome::answer(if bare {
            raiser.clone()
        } else {
            format!("`{raiser}` in {path} raises \"{message}\".")
        }),
        mistake: Outcome::answer(if bare {
            near_raiser.clone()
        } else {
            format!("The error comes from `{near_raiser}`.")
        }),
        ..GenTask::default()
    }
}
