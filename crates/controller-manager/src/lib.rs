//! controller-runtime's manager for kcr: runnables, leader election
//! (client-go `tools/leaderelection`), health probes, a metrics server and an
//! event recorder (client-go `tools/record`).
//!
//! - [`Manager`]: starts the HTTP servers, then the runnables that need no
//!   leader election, then, once this replica holds the lease, the
//!   leader-election runnables; stops everything on a shutdown signal, a
//!   runnable's failure or a lost lease, within a graceful timeout.
//! - [`Runnable`]: anything that runs until a `CancellationToken` fires;
//!   closures adapt with [`runnable_fn`].
//! - Controllers in [`controller`]: [`Controller::builder`] watches objects
//!   through the manager's shared informers, queues their requests in a
//!   priority queue and calls a [`Reconciler`] from its workers, with
//!   controller-runtime's retry rules and metrics.
//! - Leader election in [`leaderelection`]:
//!   [`LeaderElector`](leaderelection::LeaderElector) on a `Lease`, usable
//!   on its own.
//! - Probes in [`healthz`] (`/healthz` and `/readyz` with named checks) and
//!   metrics in [`metrics_server`] (`/metrics` from the kcr-metrics registry).
//!   [`metrics_auth`] serves it over HTTPS behind `TokenReview` and
//!   `SubjectAccessReview`, as controller-runtime's metrics filter.
//! - Events in [`record`]: [`EventRecorder`](record::EventRecorder).
//!
//! ```
//! use std::time::Duration;
//! use kcr_controller_manager::{BoxError, Manager, Options, runnable_fn};
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> Result<(), Box<dyn std::error::Error>> {
//! # let env = kcr_testenv::TestEnv::start().await?;
//! # let client = env.client();
//! let manager = Manager::new(
//!     client,
//!     Options::default()
//!         .with_leader_election("my-operator-lock")
//!         .with_leader_election_release_on_cancel(true)
//!         .with_metrics_bind_address("127.0.0.1:0")
//!         .with_health_probe_bind_address("127.0.0.1:0"),
//! )?;
//! manager.add_readyz_check("ping", kcr_controller_manager::healthz::ping);
//!
//! // Runs only on the elected leader, until the manager stops.
//! let (done_tx, done_rx) = tokio::sync::oneshot::channel::<()>();
//! let done_tx = std::sync::Mutex::new(Some(done_tx));
//! manager.add(runnable_fn(move |ctx| {
//!     let done = done_tx.lock().ok().and_then(|mut d| d.take());
//!     async move {
//!         // ... leader-only work ...
//!         if let Some(done) = done {
//!             let _ = done.send(());
//!         }
//!         ctx.cancelled().await;
//!         Ok::<(), BoxError>(())
//!     }
//! }))?;
//!
//! // Stop once the leader's work has run (a real operator waits for SIGTERM).
//! manager.start(async { let _ = done_rx.await; }).await?;
//! # Ok(())
//! # }
//! ```

pub mod controller;
pub mod healthz;
pub mod leaderelection;
pub mod manager;
pub mod metrics_auth;
pub mod metrics_server;
pub mod record;

mod error;
mod server;

pub use controller::{Action, Controller, Reconciler, Request};
pub use error::{BoxError, Error, Result};
pub use manager::{Manager, Options, Runnable, runnable_fn};
