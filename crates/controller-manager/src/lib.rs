//! controller-runtime's manager for kcr: runnables, leader election
//! (client-go `tools/leaderelection`), health probes, a metrics server and an
//! event recorder (client-go `tools/record`).
//!
//! - [`Manager`]: starts the HTTP servers, then the runnables that need no
//!   leader election (and the warmups of those that need it), then, once
//!   this replica holds the lease, the leader-election runnables; stops everything on a shutdown signal, a
//!   runnable's failure or a lost lease, within a graceful timeout.
//! - [`Runnable`]: anything that runs until a `CancellationToken` fires;
//!   closures adapt with [`runnable_fn`].
//! - Controllers in [`controller`]: [`Controller::builder`] watches objects
//!   through the manager's shared informers, queues their requests in a
//!   priority queue and calls a [`Reconciler`] from its workers, with
//!   controller-runtime's retry rules and metrics.
//! - A client in [`client`]: [`CachedClient`](client::CachedClient)
//!   ([`Manager::cached_client`]) writes through the API server and reads from
//!   the manager's cache, never older than its own writes (read-your-own-writes,
//!   on by default: [`Options::read_your_own_writes`]).
//! - Leader election in [`leaderelection`]:
//!   [`LeaderElector`](leaderelection::LeaderElector) on a `Lease`, usable
//!   on its own.
//! - Probes in [`healthz`] (`/healthz` and `/readyz` with named checks) and
//!   metrics in [`metrics_server`] (`/metrics` from the kcr-metrics registry).
//!   [`metrics_auth`] serves it over HTTPS behind `TokenReview` and
//!   `SubjectAccessReview`, as controller-runtime's metrics filter.
//! - Events in [`record`]: [`EventRecorder`](record::EventRecorder).
//!
//! Every public type has one path. The ones every controller names are at the
//! root and only there ([`Manager`], [`Options`], [`Runnable`],
//! [`runnable_fn`], [`Controller`], [`Reconciler`], [`Request`], [`Action`],
//! [`BoxError`], [`Error`]); each module holds the rest of its layer
//! (`controller::Builder`, `manager::InformerOptions`, ...).
//!
//! # Intended differences from client-go and controller-runtime
//!
//! The rules of client-go v1.37 (`tools/leaderelection`) and
//! controller-runtime v0.25 (`pkg/internal/controller`,
//! `pkg/controller`) hold unless listed here.
//!
//! Leader election ([`leaderelection`]):
//! - The elector waits for the leader's work (the future `on_started_leading`
//!   returns) to finish before it releases the lease and calls
//!   `on_stopped_leading`; client-go does not wait for its goroutine.
//! - The release reads the lease first, as client-go, and also writes
//!   nothing when that read shows another holder (client-go writes over it if
//!   its own last observation still names itself).
//! - [`LeaderElector::is_leader`](leaderelection::LeaderElector::is_leader)
//!   is true from the acquisition until the elector stops leading, also
//!   while a renewal round that saw another holder runs to its renew
//!   deadline (client-go's `IsLeader` turns false when it sees the other
//!   holder, although its leader callback still runs).
//! - Coordinated leader election (`tryCoordinatedRenew`, `LeaseCandidate`)
//!   is not implemented; `strategy` and `preferredHolder` are read into the
//!   record and written from it, and, as in client-go, a plain elector's
//!   write leaves them out.
//! - An empty holder is written as an absent `holderIdentity` (client-go
//!   writes `""`); both read back as no holder.
//! - `on_new_leader` runs on tokio's blocking pool (client-go: a goroutine).
//!
//! Controllers ([`controller`]):
//! - [`Reconciler::reconcile`] takes no context argument: the reconcile's
//!   deadline and a cancellation token are in
//!   [`ReconcileContext`](controller::ReconcileContext).
//! - A reconcile past its timeout is dropped (Go can only cancel its
//!   context); its token is cancelled first. A panicking reconcile is always
//!   recovered (controller-runtime's default `RecoverPanic`).
//! - The informers of a controller built before [`Manager::start`] are
//!   registered at build time and started in the manager's caches step, so
//!   that step applies each such controller's cache-sync timeout
//!   (controller-runtime creates them when the controller starts, and waits
//!   there); the error and the default timeout are the same.
//! - An unmanaged controller ([`Controller::unmanaged`]) records its metrics
//!   in the default registry and runs informers of its own, which
//!   [`Controller::start`] stops when it returns.
//! - Warmup ([`enable_warmup`](controller::Builder::enable_warmup)) registers
//!   and syncs the controller's handlers before the replica leads; the
//!   informers of controllers built before the start are listed in the caches
//!   step whether warmed up or not.
//! - A failed reconcile sets its retry's priority with an error wrapped in
//!   [`RetryPriority`](controller::RetryPriority) (a `Result` cannot carry an
//!   [`Action`] beside the error).
//! - The client request metrics ([`manager::ClientMetricsLayer`]) are
//!   recorded for the client [`Manager::from_config`] builds (or any client
//!   given the layer), not for every client of the process; their latency
//!   runs until the response's headers arrive.
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
//!         .leader_election("my-operator-lock")
//!         .leader_election_release_on_cancel(true)
//!         .metrics_bind_address("127.0.0.1:0")
//!         .health_probe_bind_address("127.0.0.1:0"),
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

pub mod client;
pub mod controller;
pub mod healthz;
pub mod leaderelection;
pub mod manager;
pub mod metrics_auth;
pub mod metrics_server;
pub mod record;
pub mod sharding;

mod error;
mod server;

// One public path per type: the types every controller names are here, at the
// root (the `controller` and `manager` modules hold the rest and do not
// re-export these).
pub use controller::controller::Controller;
pub use controller::reconciler::{Action, Reconciler, Request};
pub use error::{BoxError, Error, Result};
pub use manager::controller_manager::Manager;
pub use manager::options::Options;
pub use manager::runnable::{Runnable, runnable_fn};
