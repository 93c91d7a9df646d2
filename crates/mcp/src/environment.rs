//! The environment a server process starts with: a few variables every program
//! needs to run (where programs are, whose home, which language), then what its
//! declaration sets. Nothing else of rein's environment (keys, tokens) reaches it.

use std::collections::BTreeMap;

/// The variables passed through from rein's environment when set.
pub const PASSED_THROUGH: &[&str] = &[
    "PATH", "HOME", "USER", "LOGNAME", "SHELL", "LANG", "LC_ALL", "LC_CTYPE", "TERM", "TMPDIR",
    "TZ",
];

/// The environment for a server declared with `declared` variables, taking the
/// passed-through ones from `lookup` (rein's own environment in use).
pub fn server_environment(
    declared: &BTreeMap<String, String>,
    lookup: impl Fn(&str) -> Option<String>,
) -> BTreeMap<String, String> {
    let mut environment: BTreeMap<String, String> = PASSED_THROUGH
        .iter()
        .filter_map(|name| lookup(name).map(|value| (name.to_string(), value)))
        .collect();
    for (name, value) in declared {
        environment.insert(name.clone(), value.clone());
    }
    environment
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_base_and_declared_variables_reach_a_server() {
        let rein_env = |name: &str| match name {
            "PATH" => Some("/usr/bin".to_string()),
            "HOME" => Some("/home/u".to_string()),
            "OPENAI_API_KEY" => Some("secret".to_string()),
            _ => None,
        };
        let declared = BTreeMap::from([
            ("HOME".to_string(), "/srv".to_string()),
            ("TOKEN".to_string(), "t".to_string()),
        ]);
        let environment = server_environment(&declared, rein_env);
        assert_eq!(
            environment,
            BTreeMap::from([
                ("HOME".to_string(), "/srv".to_string()),
                ("PATH".to_string(), "/usr/bin".to_string()),
                ("TOKEN".to_string(), "t".to_string()),
            ])
        );
    }
}
