//! A chat-completions server on loopback that answers from a script: each request gets
//! the next scripted message (text, or tool calls), and every request body is kept for
//! the test to read. It reports no token usage.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpListener;
use std::sync::{Arc, Mutex};

use serde_json::{json, Value};

/// The requests a scripted server received, in order.
pub type Received = Arc<Mutex<Vec<Value>>>;

/// An assistant message that says `text`.
pub fn says(text: &str) -> Value {
    json!({"role": "assistant", "content": text})
}

/// An assistant message that calls `name` with `arguments`.
pub fn calls(name: &str, arguments: Value) -> Value {
    json!({"role": "assistant", "content": null, "tool_calls": [{
        "id": format!("call_{name}"), "type": "function",
        "function": {"name": name, "arguments": arguments.to_string()}
    }]})
}

/// Starts a server that answers with `script` in order (then "Done." to every further
/// request); returns its base URL and the requests it receives.
pub fn scripted_server(script: Vec<Value>) -> (String, Received) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/v1", listener.local_addr().unwrap());
    let received: Received = Arc::default();
    let kept = Arc::clone(&received);
    std::thread::spawn(move || {
        let mut script = script.into_iter();
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { continue };
            let Some(body) = read_request(&stream) else {
                continue;
            };
            kept.lock().unwrap().push(body);
            let message = script.next().unwrap_or_else(|| says("Done."));
            let finish = match message.get("tool_calls") {
                Some(_) => "tool_calls",
                None => "stop",
            };
            let reply = json!({
                "id": "c1", "object": "chat.completion", "created": 0, "model": "m",
                "choices": [{"index": 0, "finish_reason": finish, "message": message}]
            })
            .to_string();
            let _ = write!(
                stream,
                "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{reply}",
                reply.len()
            );
        }
    });
    (url, received)
}

/// The JSON body of the HTTP request on `stream`.
fn read_request(stream: &std::net::TcpStream) -> Option<Value> {
    let mut reader = BufReader::new(stream.try_clone().ok()?);
    let mut length = 0usize;
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line).ok()? == 0 {
            return None;
        }
        let line = line.trim_end();
        if line.is_empty() {
            break;
        }
        if let Some((key, value)) = line.split_once(':') {
            if key.eq_ignore_ascii_case("content-length") {
                length = value.trim().parse().unwrap_or(0);
            }
        }
    }
    let mut body = vec![0u8; length];
    reader.read_exact(&mut body).ok()?;
    serde_json::from_slice(&body).ok()
}
