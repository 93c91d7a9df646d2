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
    /// Run settings every arm takes (`--set parallel_calls=off`), as `(key, value)`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub settings: Vec<(String, String)>,
}

/// The variables an experiment may change, besides the run settings of
/// [`rein_agent::RunConfig::SETTINGS`] (`describe`, `temperature`, `call_example`, …).
pub const VARIABLES: [&str; 5] = ["profile", "model", "kv", "quant", "tool_format"];

/// Every key `--ab` takes.
fn keys() -> String {
    VARIABLES
        .iter()
        .chain(rein_agent::RunConfig::SETTINGS.iter())
        .chain(["rule.NAME"].iter())
        .copied()
        .collect::<Vec<_>>()
        .join(", ")
}

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
    /// Run settings every arm of the experiment takes (`--set`), applied first.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub fixed: Vec<(String, String)>,
    /// A run setting this arm changes (`call_example`, `off`), applied over the task's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub setting: Option<(String, String)>,
}

impl Arm {
    /// Applies the experiment's fixed settings, then the arm's own, if it has one.
    pub fn apply(&self, config: &mut rein_agent::RunConfig) -> Result<(), EvalError> {
        for (key, value) in &self.fixed {
            config
                .set(key, value)
                .map_err(|e| EvalError::Setting(format!("--set {key}: {e}")))?;
        }
        match &self.setting {
            Some((key, value)) => config
                .set(key, value)
                .map_err(|e| EvalError::Setting(format!("--ab {key}: {e}"))),
            None => Ok(()),
        }
    }

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
        fixed: base.settings.clone(),
        setting: None,
    };
    let Some(ab) = ab else {
        check(&baseline)?;
        return Ok(vec![baseline]);
    };
    let (key, values) = ab.split_once('=').ok_or_else(|| {
        EvalError::Setting(format!(
            "--ab `{ab}`: write key=value1,value2 (keys: {})",
            keys()
        ))
    })?;
    let key = key.trim();
    if base.settings.iter().any(|(fixed, _)| fixed == key) {
        return Err(EvalError::Setting(format!(
            "--ab {key}: the experiment also fixes it with --set; vary it or fix it, not both"
        )));
    }
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
            setting if rein_agent::RunConfig::takes(setting) => {
                arm.setting = Some((setting.to_string(), value.to_string()));
            }
            other => {
                return Err(EvalError::Setting(format!(
                    "--ab: `{other}` cannot be varied (keys: {})",
                    keys()
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
    let mut config = rein_agent::RunConfig::new(arm.profile()?);
    arm.kv()?;
    arm.tool_format()?;
    arm.apply(&mut config)
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
            settings: Vec::new(),
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
        let setting = super::arms(&base(), Some("call_example=on,off")).unwrap();
        assert_eq!(
            setting[1].setting,
            Some(("call_example".into(), "off".into()))
        );
        let mut config = rein_agent::RunConfig::new(rein_agent::Profile::Full);
        setting[1].apply(&mut config).unwrap();
        assert!(!config.call_example);
    }

    #[test]
    fn bad_experiments_are_refused_before_running() {
        for ab in [
            "profile=naive",
            "profile=naive,clever",
            "temperature=0,hot",
            "colour=red,blue",
            "kv=f16,q9",
            "profile",
        ] {
            assert!(arms(&base(), Some(ab)).is_err(), "{ab}");
        }
        assert!(arms(&base(), Some("profile=full,full")).is_err());
    }

    #[test]
    fn fixed_settings_reach_every_arm_and_cannot_also_vary() {
        let mut base = base();
        base.settings = vec![("parallel_calls".into(), "off".into())];
        let arms = arms(&base, Some("temperature=0,0.2")).unwrap();
        for arm in &arms {
            let mut config = rein_agent::RunConfig::new(rein_agent::Profile::Full);
            arm.apply(&mut config).unwrap();
            assert!(!config.parallel_calls, "{}", arm.name);
        }
        let mut config = rein_agent::RunConfig::new(rein_agent::Profile::Full);
        arms[0].apply(&mut config).unwrap();
        assert_eq!(config.temperature, 0.0);
        assert!(super::arms(&base, Some("parallel_calls=on,off")).is_err());
        base.settings = vec![("parallel_calls".into(), "sometimes".into())];
        assert!(super::arms(&base, None).is_err());
    }
}
