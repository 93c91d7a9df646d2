//! One model test at a time in a test binary: llama.cpp uses every core, so two model
//! tests at once run several times slower than one after the other; tests that need
//! no model are not held back.

use std::sync::{Mutex, MutexGuard};

static MODEL: Mutex<()> = Mutex::new(());

/// Held while a test uses a model (in process or through a spawned `rein`).
pub type ModelGuard = MutexGuard<'static, ()>;

/// Waits until no other model test of this binary runs. A test that panicked while
/// holding it does not block the others.
pub fn model_lock() -> ModelGuard {
    MODEL
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}
