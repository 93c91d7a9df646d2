//! A grammar that constrains generated text: built by the format layer, applied by
//! the engine.

/// A GBNF grammar that constrains generated text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Grammar {
    /// The grammar text (llama.cpp's GBNF).
    pub gbnf: String,
    /// The start rule.
    pub root: String,
    /// Regular expressions that switch the grammar on when the generated text matches
    /// them (the match is the start of the constrained part); empty = constrained from
    /// the first token.
    pub lazy_triggers: Vec<String>,
}

impl Grammar {
    /// A grammar applied from the first token, starting at `root`.
    pub fn strict(gbnf: impl Into<String>) -> Self {
        Self {
            gbnf: gbnf.into(),
            root: "root".into(),
            lazy_triggers: Vec::new(),
        }
    }
}
