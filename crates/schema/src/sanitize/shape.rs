//! The shape of a string schema: a `format` or `pattern` the grammar can write.

use super::*;
use crate::gbnf::pattern_support;
use crate::{StringFormat, StringShape};

impl Walker<'_> {
    /// Takes `format` and `pattern` out of `map` when the grammar enforces them (a
    /// pattern before a format); what it cannot enforce stays, to be reported.
    pub(super) fn string_shape(
        &mut self,
        map: &mut Map<String, Value>,
        path: &str,
        has_lengths: bool,
    ) -> Option<StringShape> {
        let pattern = match map.get("pattern") {
            Some(Value::String(p)) => {
                match pattern_support(p) {
                    Ok(()) => Some(p.clone()),
                    Err(why) => {
                        self.report.add(
                        path,
                        ChangeKind::KeywordDropped,
                        format!("pattern: not enforced by the grammar ({why}); validation enforces it"),
                    );
                        map.remove("pattern");
                        None
                    }
                }
            }
            _ => None,
        };
        let format = match map.get("format") {
            Some(Value::String(name)) => StringFormat::parse(name),
            _ => None,
        };
        let shape = match (pattern, format) {
            (Some(p), format) => {
                map.remove("pattern");
                if let Some(f) = format {
                    map.remove("format");
                    self.report.add(
                        path,
                        ChangeKind::KeywordDropped,
                        format!(
                            "format {}: the grammar writes the pattern instead; validation enforces both",
                            f.name()
                        ),
                    );
                }
                StringShape::Pattern(p)
            }
            (None, Some(f)) => {
                map.remove("format");
                StringShape::Format(f)
            }
            (None, None) => return None,
        };
        if has_lengths {
            self.report.add(
                path,
                ChangeKind::KeywordDropped,
                "minLength/maxLength: the grammar writes the string's shape, validation enforces its length",
            );
        }
        Some(shape)
    }
}
