//! Prometheus metrics for kcr, named as client-go and controller-runtime name them.
//!
//! This is the only kcr crate that depends on `prometheus`. It holds:
//!
//! - a process-wide default [`Registry`], returned by [`registry()`];
//! - [`encode_text`], which renders any registry in the Prometheus text
//!   exposition format (what a `/metrics` endpoint serves);
//! - the metric families, one module per group ([`workqueue`], [`cache`],
//!   [`reflector`], [`informer`], [`leader_election`], [`controller`],
//!   [`client`]), each
//!   with the handle or provider trait that the instrumented crate calls and
//!   its prometheus implementation.
//!
//! # A caller's own registry
//!
//! Every family group is a struct of prometheus vectors with two constructors:
//!
//! - `register(&Registry) -> Result<Self>` builds the families and registers
//!   them against the registry the caller chooses (registering the same group
//!   twice against one registry is an [`Error::Prometheus`] `AlreadyReg`, so
//!   keep the returned handle: it is cheap to clone);
//! - `global() -> &'static Self` registers them once, lazily, against the
//!   default [`registry()`]; this is what kcr's crates use unless told otherwise.
//!
//! Both go through one private helper (`registration.rs`): `register` builds
//! the vectors and hands them to its `register!`; `global` is one call to its
//! `global` with the group's `register`. A new family file (say `example.rs`)
//! follows the same shape: a `pub struct ExampleMetrics` with `register` and
//! `global`, its provider trait(s), and one `pub mod example;` line in this
//! file.
//!
//! # Example
//!
//! ```
//! use kcr_metrics::workqueue::{MetricsProvider, PrometheusProvider, WorkqueueMetrics};
//!
//! # fn main() -> kcr_metrics::Result<()> {
//! // The default registry, as kcr's queues use it.
//! let provider = PrometheusProvider::global();
//! provider.new_adds_metric("pods").inc();
//! assert!(kcr_metrics::encode_text(kcr_metrics::registry())?
//!     .contains(r#"workqueue_adds_total{controller="pods",name="pods"} 1"#));
//!
//! // A registry of the caller's own.
//! let mine = prometheus::Registry::new();
//! let provider = PrometheusProvider::new(WorkqueueMetrics::register(&mine)?);
//! provider.new_retries_metric("nodes").inc();
//! let text = kcr_metrics::encode_text(&mine)?;
//! assert!(text.contains(r#"workqueue_retries_total{controller="nodes",name="nodes"} 1"#));
//! # Ok(())
//! # }
//! ```

use std::sync::LazyLock;

pub use prometheus;
pub use prometheus::Registry;

pub mod cache;
pub mod client;
pub mod controller;
mod exposition;
mod histogram;
pub mod informer;
pub mod leader_election;
pub mod reflector;
mod registration;
pub mod sharding;
mod stripes;
pub mod workqueue;

/// The errors of kcr-metrics.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// prometheus refused a family (invalid name or labels, or already registered).
    #[error("prometheus: {0}")]
    Prometheus(#[source] prometheus::Error),
}

impl From<prometheus::Error> for Error {
    fn from(e: prometheus::Error) -> Self {
        Error::Prometheus(e)
    }
}

/// The result type of kcr-metrics.
pub type Result<T, E = Error> = std::result::Result<T, E>;

static REGISTRY: LazyLock<Registry> = LazyLock::new(Registry::new);

/// The process-wide default registry, where kcr registers its families unless
/// a caller passes its own.
pub fn registry() -> &'static Registry {
    &REGISTRY
}

/// Renders every family of `registry` in the Prometheus text exposition format.
pub fn encode_text(registry: &Registry) -> Result<String> {
    let families = registry.gather();
    Ok(prometheus::TextEncoder::new().encode_to_string(&families)?)
}
