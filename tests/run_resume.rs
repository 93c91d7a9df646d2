//! Ctrl-C in `rein run` and `rein run --resume`, end to end: the real binary, a real
//! signal, real HTTP on loopback to a scripted OpenAI-compatible server (so the run is
//! stopped exactly while the model is thinking), and real files.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::process::Stdio;
use std::sync::mpsc;
use std::time::Duration;

use serde_json::{json, Value};

use crate::support::{rein_command, NO_USER_CONFIG};

/// What the scripted server does with one request.
enum Reply {
    /// Answers with this assistant message.
    Message(Value),
    /// Never answers: holds the connection until the client closes it.
    Hang,
}

/// A scripted `/v1/chat/completions` on loopback: the n-th request gets the n-th
/// reply; every request body is sent on the returned channel.
fn scripted_server(replies: Vec<Reply>) -> (String, mpsc::Receiver<Value>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/v1", listener.local_addr().unwrap());
    let (sender, receiver) = mpsc::channel();
    std::thread::spawn(move || {
        for (reply, stream) in replies.into_iter().zip(listener.incoming()) {
            let mut stream = stream.unwrap();
            let body = read_request(&mut stream);
            let _ = sender.send(body);
            match reply {
                Reply::Message(message) => respond(&mut stream, &message),
                Reply::Hang => {
                    let mut rest = Vec::new();
                    let _ = stream.read_to_end(&mut rest);
                }
            }
        }
    });
    (url, receiver)
}

fn read_request(stream: &mut TcpStream) -> Value {
    let mut reader = BufReader::new(stream.try_clone().unwrap());
    let mut length = 0;
    loop {
        let mut line = String::new();
        reader.read_line(&mut line).unwrap();
        if line.trim().is_empty() {
            break;
        }
        if let Some((name, value)) = line.split_once(':') {
            if name.eq_ignore_ascii_case("content-length") {
                length = value.trim().parse().unwrap();
            }
        }
    }
    let mut body = vec![0; length];
    reader.read_exact(&mut body).unwrap();
    serde_json::from_slice(&body).unwrap()
}

fn respond(stream: &mut TcpStream, message: &Value) {
    let finish = if message.get("tool_calls").is_some() {
        "tool_calls"
    } else {
        "stop"
    };
    let body = json!({
        "id": "chatcmpl-1",
        "object": "chat.completion",
        "choices": [{"index": 0, "message": message, "finish_reason": finish}],
        "usage": {"prompt_tokens": 20, "completion_tokens": 5, "total_tokens": 25}
    })
    .to_string();
    let head = format!(
        "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n",
        body.len()
    );
    stream.write_all(head.as_bytes()).unwrap();
    stream.write_all(body.as_bytes()).unwrap();
}

fn run_against(url: &str, dir: &std::path::Path, extra: &[&str]) -> std::process::Command {
    let mut command = rein_command();
    command
        .env("REIN_CONFIG_DIR", NO_USER_CONFIG)
        .args([
            "run",
            "--backend",
            "openai",
            "--base-url",
            url,
            "--model",
            "scripted",
        ])
        .args([
            "--workdir",
            dir.to_str().unwrap(),
            "--profile",
            "naive",
            "--no-undo",
        ])
        .args(extra)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    command
}

fn events(trace: &std::path::Path) -> Vec<Value> {
    std::fs::read_to_string(trace)
        .unwrap()
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect()
}

/// The rebuilt conversation of a trace: each `history` event's messages from its
/// `from` on.
fn recorded_history(events: &[Value]) -> Vec<Value> {
    let mut history = Vec::new();
    for event in events.iter().filter(|e| e["event"] == "history") {
        history.truncate(event["from"].as_u64().unwrap_or(0) as usize);
        history.extend(event["messages"].as_array().unwrap().iter().cloned());
    }
    history
}

/// A first run in `dir` whose model writes `out.txt` and then thinks until `signal`
/// reaches the process; its exit and standard error.
fn first_run_stopped_by(
    signal: libc::c_int,
    dir: &std::path::Path,
    trace: &std::path::Path,
) -> (Option<i32>, String) {
    let write = json!({"role": "assistant", "content": null, "tool_calls": [
        {"id": "call_1", "type": "function", "function": {"name": "write_file",
         "arguments": "{\"path\": \"out.txt\", \"content\": \"written once\\n\"}"}}
    ]});
    let (url, requests) = scripted_server(vec![Reply::Message(write), Reply::Hang]);
    let child = run_against(&url, dir, &["--trace", trace.to_str().unwrap()])
        .arg("Write out.txt saying written once, then tell me what the workspace holds.")
        .spawn()
        .unwrap();
    requests.recv_timeout(Duration::from_secs(60)).unwrap();
    // The second request is under way: the write has run.
    requests.recv_timeout(Duration::from_secs(60)).unwrap();
    let pid = libc::pid_t::try_from(child.id()).unwrap();
    // SAFETY: `kill` only sends a signal to the child this test started.
    assert_eq!(unsafe { libc::kill(pid, signal) }, 0);
    let out = child.wait_with_output().unwrap();
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn ctrl_c_ends_the_run_cleanly_with_a_complete_trace() {
    let dir = tempfile::tempdir().unwrap();
    let traces = tempfile::tempdir().unwrap();
    let trace = traces.path().join("first.jsonl");
    let (code, stderr) = first_run_stopped_by(libc::SIGINT, dir.path(), &trace);
    assert_eq!(code, Some(130), "{stderr}");
    assert!(
        stderr.contains(&format!("rein run --resume {}", trace.display())),
        "{stderr}"
    );
    let events = events(&trace);
    let end = events.last().unwrap();
    assert_eq!(end["event"], "run_end", "{end}");
    assert_eq!(end["result"]["stop_reason"], "interrupted", "{end}");
    assert_eq!(end["result"]["tool_calls"], 1, "{end}");
    // System, task, the call, its result.
    assert_eq!(recorded_history(&events).len(), 4, "{events:?}");
    assert_eq!(
        std::fs::read_to_string(dir.path().join("out.txt")).unwrap(),
        "written once\n"
    );
}

#[test]
fn a_killed_run_resumes_from_its_trace_without_repeating_its_calls() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("notes.txt"), "remember the milk\n").unwrap();
    let traces = tempfile::tempdir().unwrap();
    let trace = traces.path().join("first.jsonl");
    let (code, stderr) = first_run_stopped_by(libc::SIGKILL, dir.path(), &trace);
    assert_eq!(code, None, "killed by a signal: {stderr}");
    let first = events(&trace);
    assert!(
        first.iter().all(|e| e["event"] != "run_end"),
        "the kill left no end"
    );
    let kept = recorded_history(&first).len();
    assert_eq!(kept, 4, "{first:?}");

    // Resumed: the conversation goes on from the write's result, which is not made
    // again; the file is as the first run wrote it.
    let before = std::fs::metadata(dir.path().join("out.txt"))
        .unwrap()
        .modified()
        .unwrap();
    let answer = json!({"role": "assistant", "content": "out.txt and notes.txt."});
    let (url, requests) = scripted_server(vec![Reply::Message(answer)]);
    let second = traces.path().join("second.jsonl");
    let out = run_against(
        &url,
        dir.path(),
        &["--json", "--trace", second.to_str().unwrap()],
    )
    .args(["--resume", trace.to_str().unwrap()])
    .output()
    .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let result: Value = serde_json::from_str(stdout.lines().last().unwrap()).unwrap();
    assert_eq!(result["stop_reason"], "answered", "{result}");
    assert_eq!(result["answer"], "out.txt and notes.txt.", "{result}");
    assert_eq!(result["tool_calls"], 0, "{result}");
    let after = std::fs::metadata(dir.path().join("out.txt"))
        .unwrap()
        .modified()
        .unwrap();
    assert_eq!(before, after, "out.txt was not written again");
    let request = requests.recv_timeout(Duration::from_secs(10)).unwrap();
    let messages = request["messages"].as_array().unwrap();
    assert_eq!(messages.len(), kept, "{request}");
    assert!(messages[1]["content"]
        .as_str()
        .unwrap()
        .contains("Write out.txt"));
    // The write's result came back in the first run; it is in the conversation sent now.
    assert!(
        messages[2..].iter().any(|m| m["content"]
            .as_str()
            .is_some_and(|c| c.contains("Created `out.txt`"))),
        "{request}"
    );
    let resumed = events(&second);
    let marker = resumed.iter().find(|e| e["event"] == "resumed").unwrap();
    assert_eq!(marker["from"], trace.display().to_string());
    assert!(resumed.iter().all(|e| e["event"] != "tool_result"));
    assert!(recorded_history(&resumed).len() >= kept);

    // A run that answered has nothing to go on with.
    let out = run_against(&url, dir.path(), &["--resume", second.to_str().unwrap()])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("ended with an answer"));
}
