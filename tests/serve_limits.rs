//! `rein serve` under hostile clients, over real TCP on loopback with the tiny model:
//! a client that trickles its headers or its body holds nothing, connections beyond
//! the cap wait until one closes, and a reply never exceeds the configured cap.

use std::io::{ErrorKind, Read, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};

use rein_serve::ServerLimits;
use serde_json::json;

use crate::serve::TestServer;

fn address(server: &TestServer) -> String {
    server.url.trim_start_matches("http://").to_string()
}

/// Whether the server closed `stream` (a read returns end of file or a reset) within
/// `limit`, while the client keeps sending one byte of `drip` every 200 ms.
fn closed_while_dripping(stream: &mut TcpStream, drip: &[u8], limit: Duration) -> bool {
    stream
        .set_read_timeout(Some(Duration::from_millis(200)))
        .unwrap();
    let started = Instant::now();
    let mut sent = 0;
    let mut buffer = [0u8; 4096];
    while started.elapsed() < limit {
        if sent < drip.len() {
            if stream.write_all(&drip[sent..=sent]).is_err() {
                return true;
            }
            sent += 1;
        }
        match stream.read(&mut buffer) {
            Ok(0) => return true,
            // A response (408) is followed by the close; keep reading.
            Ok(_) => continue,
            Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) => {}
            Err(_) => return true,
        }
    }
    false
}

#[test]
fn a_client_trickling_its_headers_is_cut_off() {
    let _model = rein_test_support::model_lock();
    let server = TestServer::start_limited(ServerLimits {
        header_timeout: Duration::from_secs(2),
        ..ServerLimits::default()
    });
    let mut stream = TcpStream::connect(address(&server)).unwrap();
    let drip = b"POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nX-Padding: aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\r\n";
    assert!(
        closed_while_dripping(&mut stream, drip, Duration::from_secs(12)),
        "a client sending one header byte every 200 ms kept its connection"
    );
}

#[test]
fn a_client_trickling_its_body_gets_408_and_the_server_goes_on() {
    let _model = rein_test_support::model_lock();
    let server = TestServer::start_limited(ServerLimits {
        body_timeout: Duration::from_secs(2),
        ..ServerLimits::default()
    });
    let mut stream = TcpStream::connect(address(&server)).unwrap();
    stream
        .write_all(
            b"POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 200\r\n\r\n",
        )
        .unwrap();
    stream
        .set_read_timeout(Some(Duration::from_millis(200)))
        .unwrap();
    let started = Instant::now();
    let mut response = Vec::new();
    let mut buffer = [0u8; 4096];
    while started.elapsed() < Duration::from_secs(12) && !response.ends_with(b"}") {
        let _ = stream.write_all(b" ");
        match stream.read(&mut buffer) {
            Ok(0) => break,
            Ok(n) => response.extend_from_slice(&buffer[..n]),
            Err(_) => {}
        }
    }
    let text = String::from_utf8_lossy(&response);
    assert!(text.starts_with("HTTP/1.1 408"), "{text}");
    assert!(text.contains("did not arrive within"), "{text}");
    // Another client is served.
    let (status, body, _) = server.post(&json!({
        "messages": [{"role": "user", "content": "Hi"}],
        "max_tokens": 2
    }));
    assert_eq!(status, 200, "{body}");
}

#[test]
fn connections_beyond_the_cap_wait_for_one_to_close() {
    let _model = rein_test_support::model_lock();
    let server = TestServer::start_limited(ServerLimits {
        max_connections: 2,
        header_timeout: Duration::from_secs(30),
        ..ServerLimits::default()
    });
    let idle: Vec<TcpStream> = (0..2)
        .map(|_| TcpStream::connect(address(&server)).unwrap())
        .collect();
    std::thread::sleep(Duration::from_millis(300));
    let mut third = TcpStream::connect(address(&server)).unwrap();
    third
        .write_all(b"GET /health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        .unwrap();
    third
        .set_read_timeout(Some(Duration::from_millis(1500)))
        .unwrap();
    let mut buffer = [0u8; 4096];
    assert!(
        third.read(&mut buffer).is_err(),
        "a third connection was served while two were open"
    );
    drop(idle);
    third
        .set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    let n = third.read(&mut buffer).unwrap();
    assert!(
        String::from_utf8_lossy(&buffer[..n]).starts_with("HTTP/1.1 200"),
        "{}",
        String::from_utf8_lossy(&buffer[..n])
    );
}

#[test]
fn max_tokens_is_capped_by_the_configuration() {
    let _model = rein_test_support::model_lock();
    let server = TestServer::start_limited(ServerLimits {
        max_reply_tokens: 5,
        ..ServerLimits::default()
    });
    let (status, body, _) = server.post(&json!({
        "messages": [{"role": "user", "content": "Write a long story about the sea."}],
        "max_tokens": 500,
        "temperature": 0
    }));
    assert_eq!(status, 200, "{body}");
    let completion = body["usage"]["completion_tokens"].as_u64().unwrap();
    assert!(completion <= 5, "{completion} tokens: {body}");
    assert_eq!(body["choices"][0]["finish_reason"], "length", "{body}");
}
