//! The manager and its runnables (controller-runtime `pkg/manager`).

mod cache;
mod controller_manager;
mod options;
mod runnable;

pub use cache::{ByObject, CacheOptions, CacheReader, CacheScope, Informers};
pub use controller_manager::{CACHE_SYNC_CHECK, Manager};
pub use options::{DEFAULT_GRACEFUL_SHUTDOWN_TIMEOUT, DEFAULT_SYNC_PERIOD, Options};
pub use runnable::{Runnable, RunnableFn, runnable_fn};
