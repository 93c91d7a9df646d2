//! rein-schema's tests, one binary: argument validation and coercion, the sanitizer's
//! properties (never panics, canonical output is a fixed point, renamed properties map
//! back), string formats and patterns in the grammar, and schemas from the wild.

mod arguments;
mod properties;
mod shapes;
mod wild;
