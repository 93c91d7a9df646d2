//! Recognizing shell commands that build or test a project.

use std::path::Path;

/// Programs that only build or test, whatever their arguments.
const BUILD_OR_TEST_PROGRAMS: &[&str] = &[
    "pytest", "py.test", "tox", "nox", "jest", "vitest", "mocha", "ctest", "tsc", "rspec",
    "phpunit", "make", "gmake", "ninja", "mvn", "gcc", "g++", "cc", "c++", "clang", "clang++",
    "rustc", "javac",
];

/// Wrappers that run the command after them.
const WRAPPERS: &[&str] = &[
    "time", "env", "nice", "nohup", "command", "exec", "sudo", "xvfb-run",
];

/// Whether `command` looks like a build or test run (`cargo test`, `pytest`,
/// `npm test`, `make`, `go test`, `python -m pytest`, ...) in any of its pipeline or
/// list segments.
pub(crate) fn looks_like_verification(command: &str) -> bool {
    command
        .split(['&', '|', ';', '\n', '(', ')', '{', '}', '`'])
        .any(|segment| segment_is_verification(segment.split_whitespace().collect()))
}

fn segment_is_verification(words: Vec<&str>) -> bool {
    let mut words = words.into_iter().peekable();
    while let Some(&word) = words.peek() {
        if is_assignment(word) || WRAPPERS.contains(&word) || word.starts_with('-') {
            words.next();
        } else if word == "timeout" {
            words.next();
            while let Some(option) = words.next_if(|next| next.starts_with('-')) {
                if ["-s", "-k", "--signal", "--kill-after"].contains(&option) {
                    words.next();
                }
            }
            words.next();
        } else {
            break;
        }
    }
    let Some(program) = words.next() else {
        return false;
    };
    let program = Path::new(program)
        .file_name()
        .map_or(program.to_string(), |name| {
            name.to_string_lossy().into_owned()
        });
    let arguments: Vec<&str> = words.collect();
    let subcommand = arguments
        .iter()
        .copied()
        .find(|argument| !argument.starts_with('-') && !argument.starts_with('+'))
        .unwrap_or("");
    match program.as_str() {
        "cargo" => [
            "test", "t", "build", "b", "check", "c", "clippy", "nextest", "bench",
        ]
        .contains(&subcommand),
        "go" => ["test", "build", "vet"].contains(&subcommand),
        "npm" | "pnpm" | "yarn" | "bun" => {
            ["test", "t", "build"].contains(&subcommand)
                || (subcommand == "run"
                    && arguments.iter().any(|argument| {
                        argument.starts_with("test") || argument.starts_with("build")
                    }))
        }
        "gradle" | "gradlew" | "bazel" | "bazelisk" | "dotnet" | "swift" | "mix" | "deno" => {
            ["test", "build", "check"].contains(&subcommand)
        }
        "cmake" => arguments.contains(&"--build"),
        name if name.starts_with("python") => arguments
            .windows(2)
            .any(|pair| pair[0] == "-m" && ["pytest", "unittest", "tox"].contains(&pair[1])),
        name => BUILD_OR_TEST_PROGRAMS.contains(&name) || is_test_script(name),
    }
}

fn is_assignment(word: &str) -> bool {
    word.split_once('=').is_some_and(|(name, _)| {
        !name.is_empty()
            && name
                .chars()
                .all(|character| character.is_ascii_alphanumeric() || character == '_')
    })
}

fn is_test_script(name: &str) -> bool {
    let stem = name.strip_suffix(".sh").unwrap_or(name);
    matches!(
        stem,
        "test" | "tests" | "run_tests" | "run-tests" | "runtests" | "check"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn build_and_test_commands_are_recognized() {
        for command in [
            "cargo test",
            "cargo +nightly build --release",
            "cargo clippy --all-targets -- -D warnings",
            "cd crate && cargo check",
            "pytest -q tests/",
            "python -m pytest",
            "python3 -m unittest discover",
            "npm test",
            "npm run test:unit",
            "yarn build",
            "make",
            "make -j4 all",
            "go test ./...",
            "RUST_LOG=debug cargo test 2>&1 | tail -20",
            "timeout 60 pytest",
            "timeout -s KILL 60 go build",
            ".venv/bin/pytest",
            "./gradlew test",
            "cmake --build build",
            "scripts/test.sh",
            "gcc -o main main.c && ./main",
        ] {
            assert!(looks_like_verification(command), "{command}");
        }
    }

    #[test]
    fn other_commands_are_not() {
        for command in [
            "ls -la",
            "cat Cargo.toml",
            "cargo run",
            "cargo add serde",
            "git status",
            "python script.py",
            "npm install",
            "echo make",
            "grep -r test src",
            "",
        ] {
            assert!(!looks_like_verification(command), "{command}");
        }
    }
}
