//! The process-wide llama.cpp backend: initialised once, its log routed into tracing.

use std::sync::OnceLock;

use llama_cpp_2::llama_backend::LlamaBackend;
use llama_cpp_2::{send_logs_to_tracing, LogOptions};

use crate::EngineError;

static BACKEND: OnceLock<Result<LlamaBackend, String>> = OnceLock::new();

/// The backend, initialised on first use. llama.cpp allows one initialisation per
/// process, so every engine shares this one.
pub(crate) fn backend() -> Result<&'static LlamaBackend, EngineError> {
    BACKEND
        .get_or_init(|| {
            send_logs_to_tracing(LogOptions::default());
            LlamaBackend::init().map_err(|e| e.to_string())
        })
        .as_ref()
        .map_err(|e| EngineError::Backend(e.clone()))
}
