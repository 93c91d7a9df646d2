//! Experiments: a baseline and at most one variable (`--ab key=v1,v2,…`) whose
//! values become the arms; everything else stays fixed and is recorded.

use rein_agent::Profile;
use rein_format::ToolFormat;
use rein_models::KvCacheType;
use serde::{Deserialize, Serialize};

use crate::EvalError;

/// The settings every arm shares unless the experiment varies one of them.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Baseline {
    /// The harness profile.
    pub profile: String,
    /// The model (name, path or hf: reference).
    pub model: String,
    /// The KV cache type.
    pub kv: String,
    /// native or emulated tool calling.
    pub tool_format: String,
}

/// The variables an experiment may change.
pub const VARIABLES: [&str; 5] = ["profile", "model", "kv", "quant", "tool_format"];

/// One arm: the baseline with (at most) one setting changed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Arm {
    /// `key=value`, or `base` when nothing varies.
    pub name: String,
    /// The harness profile.
    pub profile: String,
    /// The model reference.
    pub model: String,
    /// The quantization of the model to use instead of the file itself (`--ab quant`).
    pub quant: Option<String>,
    /// The KV cache type.
    pub kv: String,
    /// native or emulated.
    pub tool_format: String,
}

impl Arm {
    /// The profile, parsed.
    pub fn profile(&self) -> Result<Profile, EvalError> {
        self.profile
            .parse()
            .map_err(|e: rein_agent::UnknownProfile| EvalError::Setting(e.to_string()))
    }

    /// The KV cache type, parsed.
    pub fn kv(&self) -> Result<KvCacheType, EvalError> {
        self.kv.parse().map_err(EvalError::Setting)
    }

    /// The tool format, parsed.
    pub fn tool_format(&self) -> Result<ToolFormat, EvalError> {
        self.tool_format
            .parse()
            .map_err(|e: rein_format::UnknownToolFormat| EvalError::Setting(e.to_string()))
    }

    /// The arm's name made safe for a directory name.
    pub fn dir_name(&self) -> String {
        self.name
            .chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() || "._=-".contains(c) {
                    c
                } else {
                    '_'
                }
            })
            .collect()
    }
}

/// The arms of an experiment: one per value of `ab` (`key=v1,v2,…`), or the baseline
/// alone. Every value is checked before anything runs.
pub fn arms(base: &Baseline, ab: Option<&str>) -> Result<Vec<Arm>, EvalError> {
    let baseline = Arm {
        name: "base".into(),
        profile: base.profile.clone(),
        model: base.model.clone(),
        quant: None,
        kv: base.kv.clone(),
        tool_format: base.tool_format.clone(),
    };
    let Some(ab) = ab else {
        check(&baseline)?;
        return Ok(vec![baseline]);
    };
    let (key, values) = ab.split_once('=').ok_or_else(|| {
        EvalError::Setting(format!(
            "--ab `{ab}`: write key=value1,value2 (keys: {})",
            VARIABLES.join(", ")
        ))
    })?;
    let key = key.trim();
    let values: Vec<&str> = values
        .split(',')
        .map(str::trim)
        .filter(|v| !v.is_empty())
        .collect();
    if values.len() < 2 {
        return Err(EvalError::Setting(format!(
            "--ab {key}: give at least two values"
        )));
    }
    let mut arms = Vec::new();
    for value in values {
        let mut arm = baseline.clone();
        arm.name = format!("{key}={value}");
        match key {
            "profile" => arm.profile = value.into(),
            "model" => arm.model = value.into(),
            "kv" => arm.kv = value.into(),
            "tool_format" => arm.tool_format = value.into(),
            "quant" => arm.quant = (value != "source").then(|| value.to_ascii_lowercase()),
            other => {
                return Err(EvalError::Setting(format!(
                    "--ab: `{other}` cannot be varied (keys: {})",
                    VARIABLES.join(", ")
                )))
            }
        }
        if arms.iter().any(|a: &Arm| a.name == arm.name) {
            return Err(EvalError::Setting(format!(
                "--ab: `{value}` is given twice"
            )));
        }
        check(&arm)?;
        arms.push(arm);
    }
    Ok(arms)
}

fn check(arm: &Arm) -> Result<(), EvalError> {
    arm.profile()?;
    arm.kv()?;
    arm.tool_format()?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn base() -> Baseline {
        Baseline {
            profile: "full".into(),
            model: "small".into(),
            kv: "f16".into(),
            tool_format: "native".into(),
        }
    }

    #[test]
    fn one_variable_changes_and_the_rest_stays() {
        let arms = arms(&base(), Some("profile=naive,full")).unwrap();
        assert_eq!(arms.len(), 2);
        assert_eq!(arms[0].name, "profile=naive");
        assert_eq!(arms[0].profile, "naive");
        assert_eq!(arms[1].model, "small");
        let quant = super::arms(&base(), Some("quant=source,q3_k_m")).unwrap();
        assert_eq!(quant[0].quant, None);
        assert_eq!(quant[1].quant.as_deref(), Some("q3_k_m"));
        assert_eq!(super::arms(&base(), None).unwrap()[0].name, "base");
    }

    #[test]
    fn bad_experiments_are_refused_before_running() {
        for ab in [
            "profile=naive",
            "profile=naive,clever",
            "temperature=0,1",
            "kv=f16,q9",
            "profile",
        ] {
            assert!(arms(&base(), Some(ab)).is_err(), "{ab}");
        }
        assert!(arms(&base(), Some("profile=full,full")).is_err());
    }
}
