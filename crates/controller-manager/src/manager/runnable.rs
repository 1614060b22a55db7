//! Runnables (controller-runtime `manager.Runnable` and
//! `LeaderElectionRunnable`).

use std::fmt;
use std::sync::Arc;

use async_trait::async_trait;
use tokio_util::sync::CancellationToken;

use crate::BoxError;

/// A piece of work the [`Manager`](crate::Manager) starts and stops.
///
/// `start` runs until `ctx` is cancelled (then returns `Ok(())` promptly) or
/// it fails (then returns the error, which stops the manager).
#[async_trait]
pub trait Runnable: Send + Sync + 'static {
    /// Runs until `ctx` is cancelled or the work fails.
    async fn start(&self, ctx: CancellationToken) -> Result<(), BoxError>;

    /// Whether this runnable may only run on the elected leader (default
    /// `true`, as in controller-runtime).
    fn need_leader_election(&self) -> bool {
        true
    }

    /// Whether the manager calls [`warmup`](Self::warmup) before this
    /// replica leads (default `false`; controller-runtime's
    /// `WarmupRunnable`). Only a runnable that needs leader election is
    /// warmed up, and only while the manager elects a leader.
    fn needs_warmup(&self) -> bool {
        false
    }

    /// Prepares the runnable while the replica waits for leadership, so that
    /// [`start`](Self::start) has less to do once it leads: the manager calls
    /// it after the runnables without leader election have started, beside
    /// the election, with a token cancelled when the manager stops. It may
    /// return once prepared or run until `ctx` is cancelled; an error stops
    /// the manager as a failed runnable does. `start` may be called while
    /// `warmup` still runs.
    async fn warmup(&self, ctx: CancellationToken) -> Result<(), BoxError> {
        let _ = ctx;
        Ok(())
    }
}

#[async_trait]
impl<R: Runnable + ?Sized> Runnable for Arc<R> {
    async fn start(&self, ctx: CancellationToken) -> Result<(), BoxError> {
        (**self).start(ctx).await
    }

    fn need_leader_election(&self) -> bool {
        (**self).need_leader_election()
    }

    fn needs_warmup(&self) -> bool {
        (**self).needs_warmup()
    }

    async fn warmup(&self, ctx: CancellationToken) -> Result<(), BoxError> {
        (**self).warmup(ctx).await
    }
}

#[async_trait]
impl<R: Runnable + ?Sized> Runnable for Box<R> {
    async fn start(&self, ctx: CancellationToken) -> Result<(), BoxError> {
        (**self).start(ctx).await
    }

    fn need_leader_election(&self) -> bool {
        (**self).need_leader_election()
    }

    fn needs_warmup(&self) -> bool {
        (**self).needs_warmup()
    }

    async fn warmup(&self, ctx: CancellationToken) -> Result<(), BoxError> {
        (**self).warmup(ctx).await
    }
}

/// A closure adapted to [`Runnable`] (controller-runtime `RunnableFunc`);
/// built by [`runnable_fn`].
#[must_use]
pub struct RunnableFn<F> {
    f: F,
    need_leader_election: bool,
}

impl<F> fmt::Debug for RunnableFn<F> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RunnableFn")
            .field("need_leader_election", &self.need_leader_election)
            .finish_non_exhaustive()
    }
}

/// Adapts `f` to a [`Runnable`] that needs leader election; chain
/// [`RunnableFn::without_leader_election`] for one that runs on every replica.
///
/// ```
/// use kcr_controller_manager::{BoxError, runnable_fn};
///
/// let heartbeat = runnable_fn(|ctx| async move {
///     ctx.cancelled().await;
///     Ok::<(), BoxError>(())
/// })
/// .without_leader_election();
/// # let _ = heartbeat;
/// ```
pub fn runnable_fn<F, Fut>(f: F) -> RunnableFn<F>
where
    F: Fn(CancellationToken) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<(), BoxError>> + Send + 'static,
{
    RunnableFn {
        f,
        need_leader_election: true,
    }
}

impl<F> RunnableFn<F> {
    /// Runs on every replica, leader or not.
    pub fn without_leader_election(mut self) -> Self {
        self.need_leader_election = false;
        self
    }
}

#[async_trait]
impl<F, Fut> Runnable for RunnableFn<F>
where
    F: Fn(CancellationToken) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<(), BoxError>> + Send + 'static,
{
    async fn start(&self, ctx: CancellationToken) -> Result<(), BoxError> {
        (self.f)(ctx).await
    }

    fn need_leader_election(&self) -> bool {
        self.need_leader_election
    }
}

/// The warmup of a runnable, run as a runnable of the manager's warmup group.
pub(crate) struct Warmup(pub(crate) Arc<dyn Runnable>);

#[async_trait]
impl Runnable for Warmup {
    async fn start(&self, ctx: CancellationToken) -> Result<(), BoxError> {
        self.0.warmup(ctx).await
    }
}
