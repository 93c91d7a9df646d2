//! Reading tool arguments defensively: a missing or mistyped argument becomes a
//! message naming the parameter.

use serde_json::Value;

use crate::outcome::{Access, ToolOutcome};
use crate::workspace::Workspace;

/// A problem with one argument.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(crate) enum ArgError {
    /// The arguments are not a JSON object.
    #[error("the arguments must be a JSON object of named parameters; got {got}")]
    NotAnObject {
        /// A short rendering of what came.
        got: String,
    },
    /// A required parameter is absent.
    #[error("missing required parameter `{name}` ({expected})")]
    Missing {
        /// The parameter.
        name: &'static str,
        /// Its type, in words.
        expected: &'static str,
    },
    /// A parameter has the wrong type.
    #[error("parameter `{name}` must be {expected}; got {got}")]
    Mistyped {
        /// The parameter.
        name: &'static str,
        /// Its type, in words.
        expected: &'static str,
        /// A short rendering of what came.
        got: String,
    },
}

impl ArgError {
    /// The failed outcome for `tool`, saying to call it again with the fix.
    pub fn into_outcome(self, tool: &str) -> ToolOutcome {
        ToolOutcome::failure(format!(
            "{tool}: {self}. Call {tool} again with it corrected."
        ))
    }
}

const STRING: &str = "a string";
const COUNT: &str = "a non-negative integer";

/// A required string parameter.
pub(crate) fn required_string<'a>(
    args: &'a Value,
    name: &'static str,
) -> Result<&'a str, ArgError> {
    optional_string(args, name)?.ok_or(ArgError::Missing {
        name,
        expected: STRING,
    })
}

/// An optional string parameter; `null` counts as absent.
pub(crate) fn optional_string<'a>(
    args: &'a Value,
    name: &'static str,
) -> Result<Option<&'a str>, ArgError> {
    match parameter(args, name)? {
        None => Ok(None),
        Some(Value::String(text)) => Ok(Some(text)),
        Some(other) => Err(mistyped(name, STRING, other)),
    }
}

/// What a call reads: the `path` parameter resolved in the workspace, `default` when
/// it is absent (`None`: the parameter is required). Nothing when it cannot be
/// resolved: the call then fails on its own.
pub(crate) fn read_access(args: &Value, workspace: &Workspace, default: Option<&str>) -> Access {
    Access::Read(
        resolved_path(args, workspace, default)
            .into_iter()
            .collect(),
    )
}

/// What a call writes: the required `path` parameter resolved in the workspace.
pub(crate) fn write_access(args: &Value, workspace: &Workspace) -> Access {
    match resolved_path(args, workspace, None) {
        Some(path) => Access::Write(vec![path]),
        None => Access::Read(Vec::new()),
    }
}

fn resolved_path(
    args: &Value,
    workspace: &Workspace,
    default: Option<&str>,
) -> Option<std::path::PathBuf> {
    let path = optional_string(args, "path").ok().flatten().or(default)?;
    workspace.resolve(path).ok()
}

/// An optional non-negative integer; integral floats and digit strings are accepted.
pub(crate) fn optional_count(args: &Value, name: &'static str) -> Result<Option<u64>, ArgError> {
    let Some(value) = parameter(args, name)? else {
        return Ok(None);
    };
    let count = match value {
        Value::Number(number) => number.as_u64().or_else(|| {
            number
                .as_f64()
                .filter(|float| float.fract() == 0.0 && *float >= 0.0 && *float <= u64::MAX as f64)
                .map(|float| float as u64)
        }),
        Value::String(text) => text.trim().parse::<u64>().ok(),
        _ => None,
    };
    count.map(Some).ok_or_else(|| mistyped(name, COUNT, value))
}

/// An optional count as `usize`, saturating on 32-bit targets.
pub(crate) fn optional_usize(args: &Value, name: &'static str) -> Result<Option<usize>, ArgError> {
    Ok(optional_count(args, name)?.map(|count| usize::try_from(count).unwrap_or(usize::MAX)))
}

fn parameter<'a>(args: &'a Value, name: &'static str) -> Result<Option<&'a Value>, ArgError> {
    let Value::Object(map) = args else {
        return Err(ArgError::NotAnObject { got: brief(args) });
    };
    Ok(map.get(name).filter(|value| !value.is_null()))
}

fn mistyped(name: &'static str, expected: &'static str, got: &Value) -> ArgError {
    ArgError::Mistyped {
        name,
        expected,
        got: brief(got),
    }
}

fn brief(value: &Value) -> String {
    let rendered = value.to_string();
    match rendered.char_indices().nth(60) {
        Some((cut, _)) => format!("{}…", &rendered[..cut]),
        None => rendered,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn strings_are_read_and_missing_or_mistyped_ones_are_named() {
        let args = json!({"path": "a.txt", "limit": 5, "bad": 3});
        assert_eq!(required_string(&args, "path").unwrap(), "a.txt");
        assert_eq!(
            required_string(&args, "content").unwrap_err().to_string(),
            "missing required parameter `content` (a string)"
        );
        assert_eq!(
            required_string(&args, "bad").unwrap_err().to_string(),
            "parameter `bad` must be a string; got 3"
        );
        assert_eq!(
            optional_string(&json!({"glob": null}), "glob").unwrap(),
            None
        );
    }

    #[test]
    fn counts_accept_integral_numbers_and_digit_strings() {
        let args = json!({"a": 3, "b": 4.0, "c": "12", "d": -1, "e": 1.5, "f": "x"});
        assert_eq!(optional_count(&args, "a").unwrap(), Some(3));
        assert_eq!(optional_count(&args, "b").unwrap(), Some(4));
        assert_eq!(optional_count(&args, "c").unwrap(), Some(12));
        assert_eq!(optional_count(&args, "missing").unwrap(), None);
        for name in ["d", "e", "f"] {
            let error = optional_count(&args, name).unwrap_err().to_string();
            assert!(
                error.contains(&format!("`{name}` must be a non-negative integer")),
                "{error}"
            );
        }
    }

    #[test]
    fn arguments_that_are_not_an_object_are_refused() {
        let outcome = required_string(&json!(["a"]), "path")
            .unwrap_err()
            .into_outcome("read_file");
        assert!(!outcome.ok);
        assert!(
            outcome.text.contains("must be a JSON object"),
            "{}",
            outcome.text
        );
        assert!(
            outcome.text.contains("Call read_file again"),
            "{}",
            outcome.text
        );
    }
}
