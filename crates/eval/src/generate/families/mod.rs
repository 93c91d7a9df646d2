//! The families, one file per kind of job; each file lists its families.

mod chores;
mod edits;
mod made;
mod mcp;
mod mcp_chain;
mod questions;
mod questions_code;
mod questions_data;
mod restraint;
mod tools;
mod tools_lookup;

pub use made::{todo_workspace, TodoWorkspace};

use super::Family;

/// Every family, in a fixed order: a seed's family is its index.
pub fn all() -> Vec<Family> {
    [
        questions::FAMILIES,
        edits::FAMILIES,
        made::FAMILIES,
        chores::FAMILIES,
        restraint::FAMILIES,
        tools::FAMILIES,
        tools_lookup::FAMILIES,
        mcp::FAMILIES,
        mcp_chain::FAMILIES,
    ]
    .concat()
}
