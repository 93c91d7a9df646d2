//! Schemas the sanitizer cannot turn into anything useful.

/// Why a schema was refused; `path` is a JSON pointer into the original schema.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SchemaError {
    /// A node is not a schema (not an object or boolean).
    #[error("at {path}: expected a schema object, found {found}")]
    NotASchema {
        /// Where.
        path: String,
        /// What was there.
        found: String,
    },
    /// A type name nobody knows.
    #[error("at {path}: unknown type `{name}`")]
    UnknownType {
        /// Where.
        path: String,
        /// The type name.
        name: String,
    },
    /// A `$ref` that does not point inside the schema.
    #[error("at {path}: cannot resolve $ref `{reference}` (only local references like #/$defs/Name are supported)")]
    UnknownRef {
        /// Where.
        path: String,
        /// The reference.
        reference: String,
    },
    /// A schema no value satisfies (`false`, an empty `enum`, contradictory types).
    #[error("at {path}: no value satisfies this schema ({why})")]
    Unsatisfiable {
        /// Where.
        path: String,
        /// Why.
        why: String,
    },
    /// The top level does not describe an object of arguments.
    #[error("the parameters schema must describe an object, found {found}")]
    NotAnObject {
        /// What it describes.
        found: String,
    },
    /// Nesting deeper than the limit.
    #[error("at {path}: schema nested deeper than {limit} levels")]
    TooDeep {
        /// Where.
        path: String,
        /// The limit.
        limit: usize,
    },
}
