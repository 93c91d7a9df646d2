//! Trace graders: what the run did, read from its events.

use rein_protocol::RunEvent as TraceEvent;
use serde_json::Value;

/// No executed call failed.
pub fn no_tool_errors(events: &[TraceEvent]) -> Result<String, String> {
    let failed: Vec<&str> = events
        .iter()
        .filter_map(|e| match e {
            TraceEvent::ToolResult {
                name, ok: false, ..
            } => Some(name.as_str()),
            _ => None,
        })
        .collect();
    if failed.is_empty() {
        Ok("no tool errors".into())
    } else {
        Err(format!(
            "{} failed call(s): {}",
            failed.len(),
            failed.join(", ")
        ))
    }
}

/// `name` ran at least `min` times with arguments containing `arguments`, and at most
/// `max` times in all when a most is given.
pub fn tool_called(
    events: &[TraceEvent],
    name: &str,
    arguments: Option<&Value>,
    min: u32,
    max: Option<u32>,
) -> Result<String, String> {
    let calls: Vec<&Value> = events
        .iter()
        .filter_map(|e| match e {
            TraceEvent::ToolResult {
                name: called,
                arguments,
                ..
            } if called == name => Some(arguments),
            _ => None,
        })
        .collect();
    let matching = calls
        .iter()
        .filter(|args| arguments.is_none_or(|want| super::json_subset(want, args)))
        .count() as u32;
    if let Some(max) = max.filter(|max| calls.len() as u32 > *max) {
        return Err(format!(
            "{name} called {} time(s), at most {max} wanted",
            calls.len()
        ));
    }
    if matching >= min {
        return Ok(format!("{name} called {matching} time(s) as wanted"));
    }
    match (calls.first(), arguments) {
        (None, _) => Err(format!("{name} was never called")),
        (Some(first), Some(want)) => Err(format!(
            "{name} called {} time(s), {matching} with {want} (first: {first})",
            calls.len()
        )),
        (Some(_), None) => Err(format!(
            "{name} called {} time(s), wanted {min}",
            calls.len()
        )),
    }
}

/// `name` never ran (`*`: no tool ran).
pub fn tool_not_called(events: &[TraceEvent], name: &str) -> Result<String, String> {
    let ran: Vec<&str> = events
        .iter()
        .filter_map(|e| match e {
            TraceEvent::ToolResult { name: called, .. } if name == "*" || called == name => {
                Some(called.as_str())
            }
            _ => None,
        })
        .collect();
    if ran.is_empty() {
        Ok(format!("{name} never called"))
    } else {
        Err(format!("called: {}", ran.join(", ")))
    }
}

/// One reply held at least `min` calls.
pub fn parallel_calls(events: &[TraceEvent], min: u32) -> Result<String, String> {
    let most = events
        .iter()
        .filter_map(|e| match e {
            TraceEvent::Calls { calls, .. } => Some(calls.len() as u32),
            _ => None,
        })
        .max()
        .unwrap_or(0);
    if most >= min {
        Ok(format!("{most} calls in one reply"))
    } else {
        Err(format!("at most {most} call(s) in one reply, wanted {min}"))
    }
}

/// The run took at most `n` turns.
pub fn max_turns(turns: u32, n: u32) -> Result<String, String> {
    if turns <= n {
        Ok(format!("{turns} turn(s)"))
    } else {
        Err(format!("{turns} turns, at most {n} wanted"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn result(name: &str, arguments: Value, ok: bool) -> TraceEvent {
        TraceEvent::ToolResult {
            turn: 1,
            id: "c1".into(),
            name: name.into(),
            arguments,
            group: 0,
            ok,
            timed_out: false,
            output: String::new(),
            ms: 1,
        }
    }

    #[test]
    fn tool_errors_fail_the_no_errors_grader() {
        assert!(no_tool_errors(&[result("read_file", json!({}), true)]).is_ok());
        assert!(no_tool_errors(&[result("read_file", json!({}), false)]).is_err());
    }

    #[test]
    fn tool_called_checks_name_arguments_and_count() {
        let events = [result(
            "get_weather",
            json!({"city": "Paris", "days": 3}),
            true,
        )];
        assert!(tool_called(&events, "get_weather", Some(&json!({"days": 3})), 1, None).is_ok());
        assert!(tool_called(&events, "get_weather", Some(&json!({"days": "3"})), 1, None).is_err());
        assert!(tool_called(&events, "get_weather", None, 2, None).is_err());
        assert!(tool_called(&events, "search", None, 1, None).is_err());
        assert!(tool_called(&events, "get_weather", None, 1, Some(1)).is_ok());
        assert!(tool_called(&events, "get_weather", None, 1, Some(0))
            .unwrap_err()
            .contains("at most 0"));
    }

    #[test]
    fn tool_not_called_fails_when_it_ran() {
        let events = [result("shell", json!({"command": "ls"}), true)];
        assert!(tool_not_called(&events, "read_file").is_ok());
        assert!(tool_not_called(&events, "shell").is_err());
        assert!(tool_not_called(&events, "*").is_err());
        assert!(tool_not_called(&[], "*").is_ok());
    }

    #[test]
    fn parallel_calls_and_turns_can_fail() {
        let one = TraceEvent::Calls {
            turn: 1,
            calls: vec![json!({"name": "a"})],
        };
        let two = TraceEvent::Calls {
            turn: 2,
            calls: vec![json!({"name": "a"}), json!({"name": "b"})],
        };
        assert!(parallel_calls(std::slice::from_ref(&one), 2).is_err());
        assert!(parallel_calls(&[one, two], 2).is_ok());
        assert!(max_turns(3, 3).is_ok());
        assert!(max_turns(4, 3).is_err());
    }
}
