//! Controllers and reconcilers (controller-runtime `pkg/builder`,
//! `pkg/controller`, `pkg/reconcile`, `pkg/handler`, `pkg/predicate`).
//!
//! A [`Controller`] is built on a [`Manager`](crate::Manager) with
//! [`Controller::builder`]: it watches objects through the manager's shared
//! informers ([`for_`](Builder::for_), [`owns`](Builder::owns),
//! [`watches`](Builder::watches)), filters their events
//! ([`predicate`]), queues the [`Request`]s they map to in a priority queue,
//! and calls a [`Reconciler`] from its workers while this replica leads.
//! [`Controller::unmanaged`] builds one that runs without a manager, on
//! informers of its own, with [`Controller::start`]. A reconcile reads its
//! deadline and cancellation token from [`ReconcileContext`], and may set the
//! priority its request is requeued with ([`Action::with_priority`](crate::Action::with_priority),
//! [`RetryPriority`]); a controller whose informers do not sync within its
//! [`cache_sync_timeout`](Builder::cache_sync_timeout) fails to start. With
//! [`enable_warmup`](Builder::enable_warmup) a leader-election controller
//! syncs its handlers before its replica leads.
//!
//! ```
//! use k8s_openapi::api::core::v1::ConfigMap;
//! use kcr_controller_manager::controller::reconciler_fn;
//! use kcr_controller_manager::{Action, Controller, Request};
//! use kcr_controller_manager::{BoxError, Manager, Options};
//! use kube::api::{Api, PostParams};
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> Result<(), Box<dyn std::error::Error>> {
//! # let env = kcr_testenv::TestEnv::start().await?;
//! # let client = env.client();
//! let api: Api<ConfigMap> = Api::namespaced(client.clone(), "default");
//! let mut cm = ConfigMap::default();
//! cm.metadata.name = Some("settings".into());
//! api.create(&PostParams::default(), &cm).await?;
//!
//! let manager = Manager::new(client, Options::default().metrics_bind_address("0"))?;
//! let (seen_tx, mut seen_rx) = tokio::sync::mpsc::unbounded_channel();
//! Controller::builder(&manager, "config-maps")
//!     .for_::<ConfigMap>()
//!     .build(reconciler_fn(move |req: Request| {
//!         let _ = seen_tx.send(req);
//!         async { Ok::<_, BoxError>(Action::done()) }
//!     }))?;
//!
//! // Stop once the config map has been reconciled (a real operator waits
//! // for SIGTERM).
//! let (stop_tx, stop_rx) = tokio::sync::oneshot::channel::<()>();
//! let manager_task = tokio::spawn({
//!     let manager = manager.clone();
//!     async move { manager.start(async { let _ = stop_rx.await; }).await }
//! });
//! assert_eq!(seen_rx.recv().await, Some(Request::namespaced("default", "settings")));
//! let _ = stop_tx.send(());
//! manager_task.await??;
//! # Ok(())
//! # }
//! ```
//!
//! [`Controller`]: crate::Controller
//! [`Controller::builder`]: crate::Controller::builder
//! [`Controller::unmanaged`]: crate::Controller::unmanaged
//! [`Controller::start`]: crate::Controller::start
//! [`Request`]: crate::Request
//! [`Reconciler`]: crate::Reconciler

#[allow(clippy::module_inception)]
pub(crate) mod controller;

mod builder;
mod cache_sync;
mod handler;
pub mod predicate;
mod reconcile_context;
pub(crate) mod reconciler;
mod source;

pub use builder::Builder;
pub(crate) use builder::Shared;
pub use cache_sync::DEFAULT_CACHE_SYNC_TIMEOUT;
pub use handler::LOW_PRIORITY;
pub use reconcile_context::ReconcileContext;
pub use reconciler::{
    ReconcilerFn, RetryPriority, TerminalError, is_terminal, reconciler_fn, retry_priority,
};

#[cfg(test)]
mod sources_model_tests;
