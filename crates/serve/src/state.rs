//! What every handler shares: the model, limits, and counters for `/health`.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use rein_engine::SessionSource;

use crate::model::ServedModel;
use crate::ServerLimits;

/// The server's shared state.
#[derive(Debug)]
pub struct AppState<S: SessionSource> {
    /// The model.
    pub model: ServedModel<S>,
    /// The bearer key clients must send, if any.
    pub api_key: Option<String>,
    /// Largest request body accepted.
    pub max_body_bytes: usize,
    /// Deadlines, the connection cap and the reply cap.
    pub limits: ServerLimits,
    /// `system_fingerprint` of every response: rein's version and the model file.
    pub fingerprint: String,
    started: u64,
    next_request: AtomicU64,
    busy: Arc<AtomicU64>,
    waiting: Arc<AtomicU64>,
    served: AtomicU64,
    cancelled: AtomicU64,
}

/// Counts one request while it holds a session.
#[derive(Debug)]
pub struct BusyGuard(Arc<AtomicU64>);

impl Drop for BusyGuard {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::Relaxed);
    }
}

impl<S: SessionSource> AppState<S> {
    /// State for `model`.
    pub fn new(model: ServedModel<S>, api_key: Option<String>, max_body_bytes: usize) -> Self {
        let started = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos() as u64)
            .unwrap_or(0);
        let fingerprint = format!("rein-{}", env!("CARGO_PKG_VERSION"));
        Self {
            model,
            api_key,
            max_body_bytes,
            limits: ServerLimits::default(),
            fingerprint,
            started,
            next_request: AtomicU64::new(0),
            busy: Arc::default(),
            waiting: Arc::default(),
            served: AtomicU64::new(0),
            cancelled: AtomicU64::new(0),
        }
    }

    /// The same state with `limits`.
    pub fn with_limits(mut self, limits: ServerLimits) -> Self {
        self.limits = limits;
        self
    }

    /// A new response id, unique for this server's life.
    pub fn next_id(&self) -> String {
        let n = self.next_request.fetch_add(1, Ordering::Relaxed);
        format!("chatcmpl-{:x}{n:06x}", self.started & 0xffff_ffff)
    }

    fn count(counter: &Arc<AtomicU64>) -> BusyGuard {
        counter.fetch_add(1, Ordering::Relaxed);
        BusyGuard(Arc::clone(counter))
    }

    /// Marks a request waiting for a session until the guard drops.
    pub fn waiting(&self) -> BusyGuard {
        Self::count(&self.waiting)
    }

    /// Marks a request generating until the guard drops; counts it served.
    pub fn busy(&self) -> BusyGuard {
        self.served.fetch_add(1, Ordering::Relaxed);
        Self::count(&self.busy)
    }

    /// Counts a stream whose client went away before the end.
    pub fn cancelled(&self) {
        self.cancelled.fetch_add(1, Ordering::Relaxed);
    }

    /// The `/health` body.
    pub fn health(&self) -> serde_json::Value {
        serde_json::json!({
            "status": "ok",
            "model": self.model.id(),
            "sessions": {
                "max": self.model.source().max_sessions(),
                "busy": self.busy.load(Ordering::Relaxed),
                "waiting": self.waiting.load(Ordering::Relaxed),
            },
            "context_per_request": self.model.context_per_request(),
            "requests": {
                "started": self.served.load(Ordering::Relaxed),
                "streams_cancelled": self.cancelled.load(Ordering::Relaxed),
            },
        })
    }
}
