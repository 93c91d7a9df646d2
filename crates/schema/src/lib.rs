//! rein's tool-schema sanitizer. Tool schemas arrive in many dialects (OpenAI
//! `parameters`, Python type names, `$ref`s, `allOf`/`oneOf`, nullable unions, huge
//! bounds, provider-illegal property names); [`sanitize`] turns one into a canonical
//! [`Schema`] that the grammar layer supports fully, records every change in a
//! [`Report`], and keeps a normalized copy of the original for validation. Property
//! names that had to be renamed are mapped back with [`Schema::restore_names`].
#![deny(missing_docs)]

mod canonical;
mod coerce;
mod error;
pub mod gbnf;
mod names;
mod refs;
mod repair;
mod report;
mod sanitize;
mod types;
mod validate;

pub use canonical::{NumberBounds, Property, Schema, SchemaKind, StringFormat, StringShape};
pub use error::SchemaError;
pub use gbnf::{literal, rule_name, schema_grammar, GrammarBuilder, Json, ValueSyntax};
pub use names::sanitize_name;
pub use repair::repair_historical_json;
pub use report::{Change, ChangeKind, Report};
pub use sanitize::{sanitize, Limits, Sanitized};
pub use validate::{ArgumentError, ArgumentValidator};
