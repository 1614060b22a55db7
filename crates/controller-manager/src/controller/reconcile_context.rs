//! [`ReconcileContext`]: what a reconcile can know about its own call (the
//! part of controller-runtime's `context.Context` a Rust future needs).

use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

tokio::task_local! {
    static CONTEXT: ReconcileContext;
}

/// The context of the reconcile running on this task: its deadline and a
/// token cancelled when it should stop (controller-runtime hands a reconcile
/// a `context.Context` with the reconcile timeout's deadline; kcr's
/// [`Reconciler::reconcile`](crate::Reconciler::reconcile) takes no context
/// argument, so the controller sets this one around each call).
///
/// Read it with [`ReconcileContext::current`] anywhere inside the
/// reconcile's future (not in tasks it spawns: clone the token into them).
///
/// - [`deadline`](Self::deadline): when the reconcile timeout cuts the
///   reconcile off (`None` without a timeout). A reconcile that needs to
///   clean up stops its own work a little earlier, e.g. with
///   `tokio::time::timeout_at`.
/// - [`cancellation_token`](Self::cancellation_token): cancelled at the
///   deadline, just *before* the reconcile's future is dropped, and when the
///   controller starts to stop (the reconcile may then still finish, within
///   the manager's graceful shutdown timeout).
///
/// ```
/// use std::time::Duration;
/// use kcr_controller_manager::BoxError;
/// use kcr_controller_manager::controller::{ReconcileContext, reconciler_fn};
/// use kcr_controller_manager::Action;
///
/// let reconciler = reconciler_fn(|_req| async move {
///     let deadline = ReconcileContext::current().and_then(|c| c.deadline());
///     let work = async { /* calls to the API server */ };
///     match deadline {
///         // Leave a second to record the failure before being cut off.
///         Some(d) => {
///             if tokio::time::timeout_at(d - Duration::from_secs(1), work).await.is_err() {
///                 return Ok::<_, BoxError>(Action::requeue());
///             }
///         }
///         None => work.await,
///     }
///     Ok(Action::done())
/// });
/// # let _ = reconciler;
/// ```
#[derive(Clone, Debug)]
pub struct ReconcileContext {
    deadline: Option<Instant>,
    token: CancellationToken,
}

impl ReconcileContext {
    pub(crate) fn new(deadline: Option<Instant>, token: CancellationToken) -> Self {
        Self { deadline, token }
    }

    /// The context of the reconcile this future runs in, or `None` outside a
    /// controller's reconcile.
    pub fn current() -> Option<Self> {
        CONTEXT.try_with(Clone::clone).ok()
    }

    /// When the reconcile timeout cuts this reconcile off (`None`: no
    /// timeout).
    pub fn deadline(&self) -> Option<Instant> {
        self.deadline
    }

    /// Cancelled at the deadline (just before the reconcile is dropped) and
    /// when the controller starts to stop.
    pub fn cancellation_token(&self) -> &CancellationToken {
        &self.token
    }

    /// Runs `fut` with `self` as its [`current`](Self::current) context.
    pub(crate) async fn scope<F: Future>(self, fut: F) -> F::Output {
        CONTEXT.scope(self, fut).await
    }
}
