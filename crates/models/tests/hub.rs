//! `hf:` sources through the hf-hub crate against a hub look-alike on loopback: a
//! download, a cached re-use, and `HF_HUB_OFFLINE` with and without the file cached.

use std::io::{BufRead, BufReader, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use rein_models::{HubSettings, HubSource, ModelError, SilentProgress};

const REPO: &str = "rein-test/tiny-repo";
const FILE: &str = "weights/model.gguf";

/// Serves `body` at `/{REPO}/resolve/main/{FILE}` the way the hub does (ETag,
/// X-Repo-Commit, byte ranges); counts the requests it answers.
fn serve(body: Vec<u8>) -> (String, Arc<AtomicUsize>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let address = format!("http://{}", listener.local_addr().unwrap());
    let hits = Arc::new(AtomicUsize::new(0));
    let counter = hits.clone();
    std::thread::spawn(move || {
        for stream in listener.incoming().take(16) {
            let Ok(stream) = stream else { continue };
            counter.fetch_add(1, Ordering::SeqCst);
            answer(stream, &body);
        }
    });
    (address, hits)
}

fn answer(mut stream: TcpStream, body: &[u8]) {
    let mut reader = BufReader::new(stream.try_clone().unwrap());
    let mut request_line = String::new();
    reader.read_line(&mut request_line).unwrap();
    let mut range_start = None;
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line).unwrap() == 0 || line == "\r\n" {
            break;
        }
        let lower = line.to_ascii_lowercase();
        if let Some(value) = lower.strip_prefix("range: bytes=") {
            range_start = value
                .trim()
                .split('-')
                .next()
                .and_then(|s| s.parse::<usize>().ok());
        }
    }
    let path = request_line.split_whitespace().nth(1).unwrap_or("");
    if path != format!("/{REPO}/resolve/main/{FILE}") {
        let _ = stream
            .write_all(b"HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n");
        return;
    }
    let start = range_start.unwrap_or(0).min(body.len());
    let end = if request_line.contains("bytes=0-0") {
        1
    } else {
        body.len()
    };
    let part = &body[start..end.max(start)];
    let head = format!(
        "HTTP/1.1 206 Partial Content\r\nContent-Length: {}\r\nContent-Range: bytes {}-{}/{}\r\nETag: \"abc123\"\r\nX-Repo-Commit: 0123456789abcdef0123456789abcdef01234567\r\nConnection: close\r\n\r\n",
        part.len(),
        start,
        start + part.len().saturating_sub(1),
        body.len()
    );
    let _ = stream.write_all(head.as_bytes());
    let _ = stream.write_all(part);
}

fn settings(endpoint: &str, cache: &std::path::Path, offline: bool) -> HubSettings {
    HubSettings {
        endpoint: Some(endpoint.to_string()),
        cache_dir: Some(cache.to_path_buf()),
        offline,
    }
}

#[test]
fn downloads_from_a_custom_endpoint_then_reuses_the_cache() {
    let body: Vec<u8> = (0..50_000u32).map(|i| (i % 251) as u8).collect();
    let (endpoint, hits) = serve(body.clone());
    let cache = tempfile::tempdir().unwrap();
    let source = HubSource::parse(&format!("hf:{REPO}/{FILE}")).unwrap();

    let path = settings(&endpoint, cache.path(), false)
        .fetch(&source, &SilentProgress)
        .unwrap();
    assert_eq!(std::fs::read(&path).unwrap(), body);
    let after_download = hits.load(Ordering::SeqCst);
    assert!(after_download >= 1);

    // Offline, the cached copy is found without a request.
    let again = settings(&endpoint, cache.path(), true)
        .fetch(&source, &SilentProgress)
        .unwrap();
    assert_eq!(again, path);
    assert_eq!(hits.load(Ordering::SeqCst), after_download);
}

#[test]
fn offline_without_a_cached_copy_says_so() {
    let cache = tempfile::tempdir().unwrap();
    let source = HubSource::parse(&format!("hf:{REPO}/{FILE}")).unwrap();
    let err = settings("http://127.0.0.1:9", cache.path(), true)
        .fetch(&source, &SilentProgress)
        .unwrap_err();
    assert!(matches!(err, ModelError::HubOffline(_)), "{err}");
    assert!(err.to_string().contains("HF_HUB_OFFLINE"), "{err}");
}

#[test]
fn a_missing_file_on_the_hub_is_an_error_not_a_panic() {
    let (endpoint, _) = serve(b"GGUF".to_vec());
    let cache = tempfile::tempdir().unwrap();
    let source = HubSource::parse(&format!("hf:{REPO}/other.gguf")).unwrap();
    let err = settings(&endpoint, cache.path(), false)
        .fetch(&source, &SilentProgress)
        .unwrap_err();
    assert!(matches!(err, ModelError::Hub { .. }), "{err}");
}
