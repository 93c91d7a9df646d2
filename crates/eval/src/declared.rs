//! Tools declared by a task: a name, a schema and canned replies, so the `calls`
//! suite can test parameter types, tool choice and parallel calls without real
//! side effects. The loop validates arguments against the schema before a call runs.

use rein_protocol::{FunctionSpec, ToolSpec};
use rein_tools::{Access, Tool, ToolOutcome, Workspace};
use serde_json::Value;

use crate::grade::json_subset;
use crate::task::DeclaredToolSpec;

/// A declared tool, ready to be registered.
#[derive(Debug, Clone)]
pub struct DeclaredTool {
    spec: DeclaredToolSpec,
    schema: Value,
}

impl DeclaredTool {
    /// The tool of `spec`; its schema must parse (checked when the task loads).
    pub fn new(spec: DeclaredToolSpec) -> Result<Self, String> {
        let schema = spec.schema()?;
        Ok(Self { spec, schema })
    }

    /// The reply for a call with `args`: the first case whose `when` they contain.
    pub fn reply(&self, args: &Value) -> &str {
        self.spec
            .cases
            .iter()
            .find(|case| json_subset(&case.when, args))
            .map(|case| case.result.as_str())
            .unwrap_or(&self.spec.result)
    }
}

impl Tool for DeclaredTool {
    fn name(&self) -> &str {
        &self.spec.name
    }

    fn spec(&self) -> ToolSpec {
        ToolSpec {
            kind: "function".into(),
            function: FunctionSpec {
                name: self.spec.name.clone(),
                description: Some(self.spec.description.clone()),
                parameters: Some(self.schema.clone()),
            },
        }
    }

    fn access(&self, _args: &Value, _workspace: &Workspace) -> Access {
        Access::Read(Vec::new())
    }

    fn call(&self, args: &Value, _workspace: &Workspace) -> ToolOutcome {
        ToolOutcome::success(self.reply(args))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::task::ResultCase;
    use serde_json::json;

    #[test]
    fn the_first_matching_case_answers_and_the_default_otherwise() {
        let tool = DeclaredTool::new(DeclaredToolSpec {
            name: "get_weather".into(),
            description: "Weather".into(),
            parameters: json!({"type": "object", "properties": {"city": {"type": "string"}}}),
            result: "unknown city".into(),
            cases: vec![ResultCase {
                when: json!({"city": "Paris"}),
                result: "sunny, 21 C".into(),
            }],
        })
        .unwrap();
        assert_eq!(
            tool.reply(&json!({"city": "Paris", "units": "c"})),
            "sunny, 21 C"
        );
        assert_eq!(tool.reply(&json!({"city": "Lyon"})), "unknown city");
        assert_eq!(tool.spec().function.name, "get_weather");
    }
}
