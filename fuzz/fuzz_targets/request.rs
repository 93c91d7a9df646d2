//! cargo-fuzz entry point: see [`rein_fuzz::request`].
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| rein_fuzz::request(data));
