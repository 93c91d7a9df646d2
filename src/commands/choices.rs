//! The values of rein's enum-like flags, so `--help` lists them and clap refuses any
//! other with the list; each is parsed into its type where the flag is used.

use std::str::FromStr;

use clap::builder::{PossibleValuesParser, TypedValueParser};

/// `--profile` (docs/profiles.md).
pub const PROFILES: [&str; 4] = ["naive", "react", "structured", "full"];
/// `--tool-format`.
pub const TOOL_FORMATS: [&str; 2] = ["native", "emulated"];
/// `--sandbox`.
pub const SANDBOX_MODES: [&str; 3] = ["workspace", "strict", "off"];
/// `--kv` of a loaded model.
pub const KV_TYPES: [&str; 3] = ["f16", "q8_0", "q4_0"];
/// `--kv` of `rein models inspect`, which also plans an f32 cache.
pub const KV_TYPES_PLANNED: [&str; 4] = ["f16", "q8_0", "q4_0", "f32"];
/// `--grammar-engine`.
pub const GRAMMAR_ENGINES: [&str; 2] = ["gbnf", "llguidance"];
/// `--describe`.
pub const DESCRIPTIONS: [&str; 2] = ["full", "compact"];
/// `rein run --approve`.
pub const APPROVALS: [&str; 4] = ["never", "writes", "shell", "always"];
/// `rein run --backend`.
pub const BACKENDS: [&str; 2] = ["local", "openai"];

/// A parser that accepts `names` only and gives the value as `T`.
pub fn typed<T>(names: &'static [&'static str]) -> impl TypedValueParser<Value = T>
where
    T: FromStr + Clone + Send + Sync + 'static,
    T::Err: Into<Box<dyn std::error::Error + Send + Sync + 'static>>,
{
    PossibleValuesParser::new(names).try_map(|name| name.parse::<T>())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse_all<T: FromStr>(names: &[&str]) {
        for name in names {
            assert!(name.parse::<T>().is_ok(), "{name} does not parse");
        }
    }

    #[test]
    fn every_listed_value_parses_into_its_type() {
        parse_all::<rein_agent::Profile>(&PROFILES);
        parse_all::<rein_format::ToolFormat>(&TOOL_FORMATS);
        parse_all::<rein_tools::SandboxMode>(&SANDBOX_MODES);
        parse_all::<rein_agent::ApprovalPolicy>(&APPROVALS);
        parse_all::<rein_models::KvCacheType>(&KV_TYPES_PLANNED);
        parse_all::<rein_llama::GrammarEngine>(&GRAMMAR_ENGINES);
        for kv in KV_TYPES {
            assert!(KV_TYPES_PLANNED.contains(&kv));
        }
    }
}
