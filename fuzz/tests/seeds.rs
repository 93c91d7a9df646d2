//! Every seed input and every saved crash reproduction (`regressions/<target>/`) runs
//! through its target's body as an ordinary test, on the stable toolchain.

use std::path::Path;

fn run_all(target: &str, body: fn(&[u8])) {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut count = 0;
    for folder in ["seeds", "regressions"] {
        let Ok(entries) = std::fs::read_dir(root.join(folder).join(target)) else {
            continue;
        };
        for entry in entries {
            let path = entry.unwrap().path();
            let data = std::fs::read(&path).unwrap();
            eprintln!("{}", path.display());
            body(&data);
            count += 1;
        }
    }
    assert!(count > 0, "no inputs for {target}");
}

#[test]
fn sanitizer_inputs() {
    run_all("sanitizer", rein_fuzz::sanitizer);
}

#[test]
fn parser_inputs() {
    run_all("parser", rein_fuzz::parser);
}

#[test]
fn request_inputs() {
    run_all("request", rein_fuzz::request);
}

#[test]
fn coercer_inputs() {
    run_all("coercer", rein_fuzz::coercer);
}
