//! The record of every change the sanitizer made.

use std::fmt;

use serde::Serialize;

/// What kind of change was made.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ChangeKind {
    /// A Python-style or alias type name was replaced (`dict` → `object`).
    TypeRenamed,
    /// A missing `type` was inferred.
    TypeInferred,
    /// A `$ref` was inlined.
    RefInlined,
    /// A recursive `$ref` was cut and replaced by "any value".
    RecursionCut,
    /// `allOf` members were merged into one schema.
    AllOfMerged,
    /// `oneOf` was treated as `anyOf` (exclusivity is checked by validation only).
    OneOfAsAnyOf,
    /// `type: [A, B]` or `nullable` became `anyOf`.
    UnionExpanded,
    /// `const` became a one-value `enum`.
    ConstAsEnum,
    /// A keyword the grammar does not enforce was removed from the canonical schema
    /// (validation against the original still enforces it).
    KeywordDropped,
    /// An annotation (`title`, `examples`, ...) was removed; it constrains nothing.
    AnnotationDropped,
    /// A keyword nobody knows was removed.
    UnknownKeywordDropped,
    /// A bound too large for a grammar was removed or capped.
    BoundCapped,
    /// A lower bound above its upper bound (`minLength` > `maxLength`, `minItems` >
    /// `maxItems`): no value satisfies both, so both were removed from the grammar
    /// (validation against the original still refuses every value).
    BoundsContradict,
    /// A property name was renamed to one every provider accepts.
    PropertyRenamed,
    /// `required` named a property that does not exist.
    RequiredDropped,
    /// An object that allowed undeclared properties was closed.
    ObjectClosed,
    /// Enum values that contradict the declared type were removed.
    EnumFiltered,
    /// The top level had no `type: object` and got one.
    TopLevelObjectAdded,
}

/// One change, at a JSON pointer into the original schema.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Change {
    /// Where (`""` is the root, `/properties/path` a property).
    pub path: String,
    /// What kind of change.
    pub kind: ChangeKind,
    /// A sentence saying exactly what changed.
    pub detail: String,
}

impl fmt::Display for Change {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let path = if self.path.is_empty() {
            "/"
        } else {
            &self.path
        };
        write!(f, "{path}: {}", self.detail)
    }
}

/// All changes made to one schema, in the order they were made.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Report {
    /// The changes.
    pub changes: Vec<Change>,
}

impl Report {
    pub(crate) fn add(&mut self, path: &str, kind: ChangeKind, detail: impl Into<String>) {
        self.changes.push(Change {
            path: path.to_string(),
            kind,
            detail: detail.into(),
        });
    }

    /// Whether nothing was changed.
    pub fn is_empty(&self) -> bool {
        self.changes.is_empty()
    }

    /// The changes of one kind.
    pub fn of_kind(&self, kind: ChangeKind) -> impl Iterator<Item = &Change> {
        self.changes.iter().filter(move |c| c.kind == kind)
    }
}
