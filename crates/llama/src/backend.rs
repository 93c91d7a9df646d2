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

/// This machine as the memory planner sees it: free RAM, the free memory of each GPU
/// llama.cpp can offload to (none on CPU builds, nor when the backend cannot start),
/// and the weight types the CPU backend repacks.
pub fn machine() -> rein_models::Machine {
    rein_models::Machine {
        ram: rein_models::available_memory(),
        gpus: gpu_memory().unwrap_or_default(),
        repacked_types: rein_models::cpu_repacked_types(),
    }
}

fn gpu_memory() -> Result<Vec<rein_models::GpuMemory>, EngineError> {
    backend()?;
    Ok(llama_cpp_2::list_llama_ggml_backend_devices()
        .into_iter()
        .filter(|d| d.device_type == llama_cpp_2::LlamaBackendDeviceType::Gpu)
        .map(|d| rein_models::GpuMemory {
            name: format!("{} ({})", d.name, d.description),
            free: d.memory_free as u64,
            total: d.memory_total as u64,
        })
        .collect())
}
