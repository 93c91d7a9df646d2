//! Harness profiles for A/B runs: the same tools and model, driven four ways. Each is
//! an honest implementation of its style (docs/profiles.md).

use std::str::FromStr;

use serde::{Deserialize, Serialize};

/// How the loop talks to the model.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Profile {
    /// Tools described in the prompt; free text taken as the answer or searched loosely
    /// for calls; no grammar, no retry.
    Naive,
    /// Thought / Action / Action Input / Observation text, parsed by pattern.
    React,
    /// Every reply forced to be a call (a `finish` call carries the answer) by the
    /// grammar; a reply that fails is retried blindly.
    Structured,
    /// Everything rein has: lazy grammar, classified recovery, repetition nudges,
    /// truncation retries, verification guard.
    Full,
}

impl Profile {
    /// The profile's name.
    pub fn as_str(self) -> &'static str {
        match self {
            Profile::Naive => "naive",
            Profile::React => "react",
            Profile::Structured => "structured",
            Profile::Full => "full",
        }
    }

    /// Whether replies are decoded under the call grammar.
    pub fn uses_grammar(self) -> bool {
        matches!(self, Profile::Structured | Profile::Full)
    }
}

impl std::fmt::Display for Profile {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A profile name that is not one of the four.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown profile `{0}`: use naive, react, structured or full")]
pub struct UnknownProfile(pub String);

impl FromStr for Profile {
    type Err = UnknownProfile;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "naive" => Ok(Profile::Naive),
            "react" => Ok(Profile::React),
            "structured" => Ok(Profile::Structured),
            "full" => Ok(Profile::Full),
            other => Err(UnknownProfile(other.to_string())),
        }
    }
}
