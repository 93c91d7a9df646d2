//! JSON written the way Python's `json.dumps(..., ensure_ascii=False)` writes it, which
//! is what chat templates' `tojson` produces in the reference rendering.

use std::io;

use serde::Serialize;
use serde_json::ser::{Formatter, PrettyFormatter, Serializer};

/// Python's default separators: `", "` between items and `": "` after keys.
struct PythonCompact;

impl Formatter for PythonCompact {
    fn begin_array_value<W: ?Sized + io::Write>(
        &mut self,
        w: &mut W,
        first: bool,
    ) -> io::Result<()> {
        item_separator(w, first)
    }

    fn begin_object_key<W: ?Sized + io::Write>(
        &mut self,
        w: &mut W,
        first: bool,
    ) -> io::Result<()> {
        item_separator(w, first)
    }

    fn begin_object_value<W: ?Sized + io::Write>(&mut self, w: &mut W) -> io::Result<()> {
        w.write_all(b": ")
    }
}

fn item_separator<W: ?Sized + io::Write>(w: &mut W, first: bool) -> io::Result<()> {
    if first {
        Ok(())
    } else {
        w.write_all(b", ")
    }
}

/// Serializes `value` like `json.dumps(value, ensure_ascii=False, indent=indent)`.
pub fn dumps<T: Serialize + ?Sized>(
    value: &T,
    indent: Option<usize>,
) -> Result<String, serde_json::Error> {
    let mut out = Vec::new();
    match indent {
        None => value.serialize(&mut Serializer::with_formatter(&mut out, PythonCompact))?,
        Some(n) => {
            let pad = vec![b' '; n];
            value.serialize(&mut Serializer::with_formatter(
                &mut out,
                PrettyFormatter::with_indent(&pad),
            ))?
        }
    }
    // serde_json only writes valid UTF-8.
    Ok(String::from_utf8_lossy(&out).into_owned())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn matches_python_separators_and_unicode() {
        let v = json!({"a": [1, 2.5, "é\n"], "b": {}, "c": null});
        assert_eq!(
            dumps(&v, None).unwrap(),
            r#"{"a": [1, 2.5, "é\n"], "b": {}, "c": null}"#
        );
        assert_eq!(
            dumps(&json!({"a": [1]}), Some(2)).unwrap(),
            "{\n  \"a\": [\n    1\n  ]\n}"
        );
    }
}
