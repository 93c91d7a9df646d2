//! Word pools and small builders the families draw from: names, values, languages and
//! their comment and definition syntax, and the graders families share.

use super::Rng;
use crate::grade::GraderSpec;

/// Short lowercase nouns for services, modules and keys.
pub const NOUNS: &[&str] = &[
    "billing",
    "search",
    "auth",
    "gateway",
    "reports",
    "ledger",
    "mailer",
    "catalog",
    "inventory",
    "metrics",
    "scheduler",
    "storage",
    "uploads",
    "payments",
    "profile",
    "session",
    "cache",
    "queue",
    "router",
    "notifier",
    "archive",
    "pricing",
    "orders",
    "tickets",
    "backup",
    "audit",
    "export",
    "import",
    "sync",
    "webhooks",
];

/// Setting names (snake_case) for configuration files.
pub const SETTINGS: &[&str] = &[
    "timeout_ms",
    "max_retries",
    "port",
    "pool_size",
    "batch_size",
    "log_level",
    "region",
    "cache_ttl",
    "workers",
    "max_connections",
    "retry_delay_ms",
    "page_size",
    "queue_depth",
    "flush_interval",
    "read_timeout",
    "write_timeout",
    "buffer_kb",
    "max_body_kb",
];

/// Section names for nested configuration.
pub const SECTIONS: &[&str] = &[
    "server",
    "database",
    "client",
    "worker",
    "upstream",
    "storage",
    "telemetry",
    "limits",
    "replica",
    "primary",
    "cluster",
    "mailer",
];

/// Person names (first names).
pub const PEOPLE: &[&str] = &[
    "Amara", "Bruno", "Chen", "Dalia", "Emeka", "Farah", "Goran", "Hana", "Ilse", "Jonas", "Kiri",
    "Lena", "Mateo", "Nadia", "Oskar", "Priya", "Quinn", "Rosa", "Sven", "Tariq", "Uma", "Viktor",
    "Wen", "Yara", "Zeno",
];

/// Cities.
pub const CITIES: &[&str] = &[
    "Lisbon", "Nairobi", "Osaka", "Quito", "Tallinn", "Porto", "Accra", "Hobart", "Bergen",
    "Cusco", "Dakar", "Graz", "Kochi", "Leeds", "Malmo", "Perth", "Sapporo", "Turku",
];

/// Product names.
pub const PRODUCTS: &[&str] = &[
    "lamp", "kettle", "backpack", "stapler", "headset", "notebook", "blender", "monitor", "tripod",
    "scanner", "router", "speaker", "drill", "heater", "toaster", "webcam",
];

/// Verbs for function names.
pub const VERBS: &[&str] = &[
    "load", "parse", "render", "fetch", "store", "validate", "compute", "merge", "resolve",
    "encode", "decode", "schedule", "format", "publish", "refresh", "index",
];

/// A programming or markup language a generated file is written in.
#[derive(Debug, Clone, Copy)]
pub struct Lang {
    /// The file extension, without the dot.
    pub ext: &'static str,
    /// How a line comment starts (`<!--` for HTML and Markdown, closed by `-->`).
    pub comment: &'static str,
    /// How a function is defined: `{name}` and `{body}` are replaced.
    pub function: &'static str,
    /// How an error is raised: `{message}` is replaced.
    pub raise: &'static str,
}

/// Languages with functions.
pub const CODE_LANGS: &[Lang] = &[
    Lang {
        ext: "py",
        comment: "#",
        function: "def {name}(value):\n{body}    return value\n",
        raise: "    raise ValueError(\"{message}\")\n",
    },
    Lang {
        ext: "js",
        comment: "//",
        function: "function {name}(value) {\n{body}  return value;\n}\n",
        raise: "  throw new Error(\"{message}\");\n",
    },
    Lang {
        ext: "ts",
        comment: "//",
        function: "export function {name}(value: string): string {\n{body}  return value;\n}\n",
        raise: "  throw new Error(\"{message}\");\n",
    },
    Lang {
        ext: "rs",
        comment: "//",
        function: "pub fn {name}(value: &str) -> Result<&str, String> {\n{body}    Ok(value)\n}\n",
        raise: "    return Err(\"{message}\".to_string());\n",
    },
    Lang {
        ext: "go",
        comment: "//",
        function: "func {name}(value string) (string, error) {\n{body}\treturn value, nil\n}\n",
        raise: "\treturn \"\", errors.New(\"{message}\")\n",
    },
    Lang {
        ext: "rb",
        comment: "#",
        function: "def {name}(value)\n{body}  value\nend\n",
        raise: "  raise ArgumentError, \"{message}\"\n",
    },
    Lang {
        ext: "sh",
        comment: "#",
        function: "{name}() {\n{body}  echo \"$1\"\n}\n",
        raise: "  echo \"{message}\" >&2; return 1\n",
    },
];

impl Lang {
    /// A function `name` whose body holds `body` (already indented, may be empty).
    pub fn function(&self, name: &str, body: &str) -> String {
        self.function
            .replace("{name}", name)
            .replace("{body}", body)
    }

    /// A line raising `message`.
    pub fn raise(&self, message: &str) -> String {
        self.raise.replace("{message}", message)
    }

    /// Lines that raise `message` when the function's argument is empty, indented for
    /// the function's body.
    pub fn guarded_raise(&self, message: &str) -> String {
        match self.ext {
            "py" => format!("    if not value:\n        raise ValueError(\"{message}\")\n"),
            "js" | "ts" => format!("  if (!value) {{\n    throw new Error(\"{message}\");\n  }}\n"),
            "rs" => format!(
                "    if value.is_empty() {{\n        return Err(\"{message}\".to_string());\n    }}\n"
            ),
            "go" => format!("\tif value == \"\" {{\n\t\treturn \"\", errors.New(\"{message}\")\n\t}}\n"),
            "rb" => format!("  raise ArgumentError, \"{message}\" if value.nil?\n"),
            _ => format!("  [ -n \"$1\" ] || {{ echo \"{message}\" >&2; return 1; }}\n"),
        }
    }

    /// A statement calling `name` with `argument`.
    pub fn call(&self, name: &str, argument: &str) -> String {
        match self.ext {
            "py" | "rb" => format!("result = {name}({argument})"),
            "js" | "ts" => format!("const result = {name}({argument});"),
            "rs" => format!("let result = {name}({argument})?;"),
            "go" => format!("result, err := {name}({argument})"),
            _ => format!("result=$({name} \"${argument}\")"),
        }
    }

    /// A comment line holding `text`.
    pub fn comment(&self, text: &str) -> String {
        if self.comment == "<!--" {
            format!("<!-- {text} -->")
        } else {
            format!("{} {text}", self.comment)
        }
    }
}

/// `k` numbers in `low..=high` of which none is written inside another (so a grader
/// looking for one never finds it inside another).
pub fn distinct_numbers(rng: &mut Rng, k: usize, low: i64, high: i64) -> Vec<i64> {
    let mut out: Vec<i64> = Vec::new();
    while out.len() < k {
        let n = rng.range(low, high);
        let text = n.to_string();
        if out
            .iter()
            .all(|o| !o.to_string().contains(&text) && !text.contains(&o.to_string()))
        {
            out.push(n);
        }
    }
    out
}

/// `snake_case` joined from two words.
pub fn snake(a: &str, b: &str) -> String {
    format!("{a}_{b}")
}

/// `camelCase` of a snake_case name.
pub fn camel(name: &str) -> String {
    let mut out = String::new();
    for (i, part) in name.split('_').enumerate() {
        if i == 0 {
            out.push_str(part);
        } else {
            let mut chars = part.chars();
            if let Some(first) = chars.next() {
                out.extend(first.to_uppercase());
                out.push_str(chars.as_str());
            }
        }
    }
    out
}

/// A code of capital letters and digits, e.g. `K7Q-2M`.
pub fn code(rng: &mut Rng, letters: usize) -> String {
    const ALPHABET: &[u8] = b"ABCDEFGHJKLMNPQRSTUVWXYZ23456789";
    (0..letters)
        .map(|_| ALPHABET[rng.below(ALPHABET.len())] as char)
        .collect()
}

/// The answer contains `text` (case-insensitive).
pub fn answer_has(text: &str) -> GraderSpec {
    GraderSpec::AnswerContains {
        text: text.to_string(),
    }
}

/// The answer is `value` alone: nothing but quotes, backticks, asterisks, a final
/// period and spaces around it (case-insensitive).
pub fn answer_is(value: &str) -> GraderSpec {
    GraderSpec::AnswerMatches {
        regex: format!(r#"(?i)^[\s`"'*]*(?:{})[\s`"'*.]*$"#, spellings(value)),
    }
}

/// The answer holds the number `n` as a whole number (not inside another number, not
/// followed by decimals), written plainly or with thousands separators.
pub fn answer_number(n: i64) -> GraderSpec {
    GraderSpec::AnswerMatches {
        regex: format!(
            r"(?:^|[^\d.,\-])(?:{})(?:[^\d.,]|[.,](?:\D|$)|$)",
            spellings(&n.to_string())
        ),
    }
}

/// `value` as a regex; a whole number of four or more digits also with thousands
/// separators (`12,288`, `12 288`).
fn spellings(value: &str) -> String {
    let plain = regex::escape(value);
    let digits = value.trim_start_matches('-');
    if digits.len() < 4 || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return plain;
    }
    let sign = &value[..value.len() - digits.len()];
    let head = digits.len() % 3;
    let mut groups: Vec<&str> = Vec::new();
    if head > 0 {
        groups.push(&digits[..head]);
    }
    groups.extend(
        digits.as_bytes()[head..]
            .chunks(3)
            .filter_map(|chunk| std::str::from_utf8(chunk).ok()),
    );
    format!("{plain}|{}{}", regex::escape(sign), groups.join("[, ]"))
}

/// The answer holds `word` as a whole word (case-insensitive): a name among names.
pub fn answer_word(word: &str) -> GraderSpec {
    GraderSpec::AnswerMatches {
        regex: format!(r"(?i)(?:^|[^\w]){}(?:[^\w]|$)", regex::escape(word)),
    }
}

/// The file contains `text`.
pub fn file_has(path: &str, text: &str) -> GraderSpec {
    GraderSpec::FileContains {
        path: path.to_string(),
        text: text.to_string(),
    }
}

/// The file lacks `text` (and exists).
pub fn file_lacks(path: &str, text: &str) -> GraderSpec {
    GraderSpec::FileLacks {
        path: path.to_string(),
        text: text.to_string(),
    }
}

/// The file is what the input had.
pub fn unchanged(path: &str) -> GraderSpec {
    GraderSpec::FileUnchanged {
        path: path.to_string(),
    }
}

/// Nothing exists at the path.
pub fn absent(path: &str) -> GraderSpec {
    GraderSpec::FileAbsent {
        path: path.to_string(),
    }
}

/// A shell command in the workspace exits 0.
pub fn command(run: impl Into<String>) -> GraderSpec {
    GraderSpec::Command {
        run: run.into(),
        exit_code: 0,
        timeout_s: 30,
    }
}

/// A Python check run in the workspace exits 0 (`python3 -c`, the script quoted for `sh`).
pub fn python_check(script: &str) -> GraderSpec {
    command(format!("python3 -c {}", shell_quote(script)))
}

/// `text` quoted for `sh`.
pub fn shell_quote(text: &str) -> String {
    format!("'{}'", text.replace('\'', r"'\''"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn matches(grader: &GraderSpec, answer: &str) -> bool {
        match grader {
            GraderSpec::AnswerMatches { regex } => {
                regex::Regex::new(regex).unwrap().is_match(answer)
            }
            _ => unreachable!(),
        }
    }

    #[test]
    fn numbers_match_whole_with_or_without_separators() {
        let n = answer_number(12288);
        assert!(matches(&n, "It is 12288 bytes."));
        assert!(matches(&n, "It is 12,288 bytes."));
        assert!(!matches(&n, "It is 112288."));
        assert!(!matches(&n, "It is 12288.5."));
        let small = answer_number(45);
        assert!(matches(&small, "45"));
        assert!(matches(&small, "There are 45."));
        assert!(!matches(&small, "45.5"));
        assert!(!matches(&small, "1,045"));
        let bare = answer_is("2400");
        assert!(matches(&bare, "2,400"));
        assert!(matches(&bare, "`2400`."));
        assert!(!matches(&bare, "The total is 2400."));
    }
}
