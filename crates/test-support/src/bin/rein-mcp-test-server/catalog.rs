//! The plain part of the test server's catalog: 10 places × 10 services, each tool
//! answering with a code of its own so a test can tell which one ran.

use std::sync::Arc;

use rmcp::model::{Tool, ToolAnnotations};
use serde_json::{json, Map, Value};

const PLACES: [&str; 10] = [
    "harbor", "garden", "library", "museum", "parking", "pharmacy", "school", "stadium", "theater",
    "zoo",
];

/// (name, what it does, read-only)
const SERVICES: [(&str, &str, bool); 10] = [
    (
        "count_visitors",
        "count the visitors of the {} on a day",
        true,
    ),
    ("list_staff", "list the staff on duty at the {}", true),
    ("opening_hours", "show the opening hours of the {}", true),
    ("book_slot", "book a visiting slot at the {}", false),
    ("cancel_booking", "cancel a booking at the {}", false),
    ("report_issue", "report a broken facility at the {}", false),
    ("show_map", "show the floor map of the {}", true),
    ("find_item", "find a lost item at the {}", true),
    ("rate_service", "rate the service of the {}", false),
    ("send_feedback", "send written feedback to the {}", false),
];

/// Every plain tool: `harbor_count_visitors` … `zoo_send_feedback`.
pub fn tools() -> Vec<Tool> {
    PLACES
        .iter()
        .flat_map(|place| {
            SERVICES.iter().map(move |(service, what, read_only)| {
                let description = what.replace("{}", place);
                let mut schema = Map::new();
                schema.insert("type".into(), json!("object"));
                schema.insert(
                    "properties".into(),
                    json!({"site": {"type": "string", "description": "which site of it"}}),
                );
                schema.insert("required".into(), json!(["site"]));
                Tool::new(
                    format!("{place}_{service}"),
                    capitalized(&description),
                    Arc::new(schema),
                )
                .with_annotations(ToolAnnotations::new().read_only(*read_only))
            })
        })
        .collect()
}

/// The answer of plain tool `name`, or `None` when it is not one.
pub fn answer(name: &str, arguments: &Map<String, Value>) -> Option<String> {
    let known = PLACES.iter().any(|place| {
        SERVICES
            .iter()
            .any(|(service, _, _)| name == format!("{place}_{service}"))
    });
    let site = arguments.get("site").and_then(Value::as_str).unwrap_or("?");
    known.then(|| format!("{name} ({site}): done, code {}", code(name)))
}

/// A short code derived from `name` (FNV-1a), the same in every run.
pub fn code(name: &str) -> String {
    let hash = name.bytes().fold(0x811c_9dc5_u32, |hash, byte| {
        (hash ^ u32::from(byte)).wrapping_mul(0x0100_0193)
    });
    format!("C-{hash:08X}")
}

fn capitalized(text: &str) -> String {
    let mut chars = text.chars();
    match chars.next() {
        Some(first) => format!("{}{}.", first.to_uppercase(), chars.as_str()),
        None => String::new(),
    }
}
