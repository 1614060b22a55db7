//! The manager and its runnables (controller-runtime `pkg/manager`).

mod client_metrics;
pub(crate) mod controller_manager;
mod informers;
pub(crate) mod options;
pub(crate) mod runnable;

pub use client_metrics::{ClientMetricsLayer, ClientMetricsService};
pub use controller_manager::INFORMER_SYNC_CHECK;
pub use informers::{ByObject, InformerOptions, InformerReader, InformerScope, Informers};
pub use options::{DEFAULT_GRACEFUL_SHUTDOWN_TIMEOUT, DEFAULT_SYNC_PERIOD};
pub use runnable::RunnableFn;
