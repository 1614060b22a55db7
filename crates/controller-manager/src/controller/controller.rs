//! [`Controller`]: the queue, the watches and the workers that call a
//! [`Reconciler`] (controller-runtime `pkg/internal/controller`).

use std::any::Any;
use std::fmt;
use std::panic::AssertUnwindSafe;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use async_trait::async_trait;
use futures::FutureExt;
use kcr_informer::{SYNCED_POLL_PERIOD, SharedInformerFactory};
use kcr_metrics::controller::{ControllerRecorder, ReconcileResult};
use kcr_workqueue::{AddOpts, PriorityQueue};
use tokio::task::JoinSet;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;
use tracing::Instrument;

use super::predicate::Predicate;
use super::reconcile_context::ReconcileContext;
use super::reconciler::{Action, Next, Reconciler, Request, is_terminal, retry_priority};
use super::source::{Source, StartedSource};
use crate::Runnable;

use crate::sharding::{PrimaryLookup, RangeSet, ShardGate};
use crate::{BoxError, Error};

/// A controller added to a [`Manager`](crate::Manager) by
/// [`Controller::builder`]: it watches objects through the manager's shared
/// informers, queues the requests their changes map to, and calls its
/// reconciler from `max_concurrent_reconciles` workers (controller-runtime's
/// controller).
///
/// - The queue is kcr-workqueue's [`PriorityQueue`]: objects of an initial
///   list and resyncs go in at [`LOW_PRIORITY`](super::LOW_PRIORITY), live
///   changes at 0. A request is never handed to two workers at once, and a
///   request added while it is reconciled is reconciled again afterwards.
/// - Outcomes (see [`Reconciler`]): an error or [`Action::requeue`] adds the
///   request back through the rate limiter; [`Action::requeue_after`] forgets
///   its failures and adds it back after the delay; success forgets its
///   failures; a terminal error is counted and dropped (its failure count
///   stays, as controller-runtime does not forget it). A worker goes
///   straight on to the next request: the retry schedule is the rate
///   limiter's alone.
/// - A panicking reconcile is caught, logged, counted and treated as an
///   error; one running past the reconcile timeout is cancelled (its
///   [`ReconcileContext`] token first, then its future is dropped) and
///   treated as an error. The reconcile sees its deadline in its
///   [`ReconcileContext`] from the start.
/// - Start (as a leader-election runnable unless told otherwise): register
///   the watches, wait until each watch's handler has seen its informer's
///   initial list (not only the informer), start the workers. With
///   [`enable_warmup`](super::Builder::enable_warmup) the watches are
///   registered and synced before the replica leads, and leading starts the
///   workers at once. If the lists are not seen within the cache-sync
///   timeout (2 minutes by default), the start fails with
///   [`Error::CacheSyncTimeout`] naming the informers; the manager's caches
///   step applies the same timeout to the controllers built before it
///   started, and its [`start`](crate::Manager::start) returns the error.
///   Stop: workers take no new request, reconciles in flight finish (the
///   manager bounds this by its graceful shutdown timeout), then the queue
///   shuts down.
/// - A reconcile can set the priority its request is queued back with
///   ([`Action::with_priority`], or an error wrapped in
///   [`RetryPriority`](super::RetryPriority)); otherwise it goes back at the
///   priority it was taken with.
///
/// The handle is cheap to clone.
#[derive(Clone)]
pub struct Controller {
    pub(crate) core: Arc<Core>,
    /// The controller's run, for an unmanaged controller
    /// ([`Controller::unmanaged`]); `None` when a manager runs it.
    pub(crate) unmanaged: Option<Arc<dyn Runnable>>,
}

impl fmt::Debug for Controller {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Controller")
            .field("name", &self.core.name)
            .field(
                "max_concurrent_reconciles",
                &self.core.max_concurrent_reconciles,
            )
            .field("reconcile_timeout", &self.core.reconcile_timeout)
            .finish_non_exhaustive()
    }
}

impl Controller {
    /// The controller's name (the `controller` label of its metrics).
    pub fn name(&self) -> &str {
        &self.core.name
    }

    /// The controller's queue. Adding a [`Request`] here reconciles it as if
    /// a watched object had changed (controller-runtime's channel source).
    pub fn queue(&self) -> &PriorityQueue<Request> {
        &self.core.queue
    }

    /// Runs an unmanaged controller (built from [`Controller::unmanaged`])
    /// until `ctx` is cancelled, as controller-runtime's `Start`: starts its
    /// informers, waits for them to sync, runs the workers; once `ctx` is
    /// cancelled, lets the reconciles in flight finish and stops the
    /// informers.
    ///
    /// Fails with [`Error::CacheSyncTimeout`] when the informers do not sync
    /// within the cache-sync timeout, with
    /// [`Error::ControllerAlreadyStarted`] on a second call, and with
    /// [`Error::InvalidController`] for a controller a manager runs (it
    /// starts with the manager).
    pub async fn start(&self, ctx: CancellationToken) -> Result<(), Error> {
        let Some(running) = &self.unmanaged else {
            return Err(Error::InvalidController {
                name: self.core.name.to_string(),
                reason: "it belongs to a manager, which starts it".into(),
            });
        };
        let result = running.start(ctx).await;
        if !matches!(
            result
                .as_ref()
                .err()
                .and_then(|e| e.downcast_ref::<Error>()),
            Some(Error::ControllerAlreadyStarted(_))
        ) {
            self.core.factory.shutdown().await;
        }
        result.map_err(|e| match e.downcast::<Error>() {
            Ok(e) => *e,
            Err(e) => Error::Runnable(e),
        })
    }
}

/// What the handle and the running controller share.
pub(crate) struct Core {
    pub(crate) name: Arc<str>,
    pub(crate) queue: PriorityQueue<Request>,
    pub(crate) metrics: ControllerRecorder,
    pub(crate) max_concurrent_reconciles: usize,
    pub(crate) reconcile_timeout: Option<Duration>,
    pub(crate) cache_sync_timeout: Duration,
    pub(crate) sources: Vec<Box<dyn Source>>,
    /// The sources' handlers once registered (see [`Core::start_sources`]).
    pub(crate) source_state: tokio::sync::Mutex<SourcesState>,
    /// Start the sources before the replica leads ([`Builder::enable_warmup`](super::Builder::enable_warmup)).
    pub(crate) warmup: bool,
    pub(crate) predicates: Arc<[Box<dyn Predicate>]>,
    pub(crate) factory: SharedInformerFactory,
    pub(crate) need_leader_election: bool,
    pub(crate) started: AtomicBool,
    /// Set when the controller stops: workers take no new request.
    pub(crate) stopping: AtomicBool,
    /// A sharded controller's filter (see [`Builder::sharded`](super::Builder::sharded)).
    pub(crate) shard: Option<Arc<ShardGate>>,
}

/// The runnable the manager runs: the core and its reconciler.
pub(crate) struct Running<R> {
    pub(crate) core: Arc<Core>,
    pub(crate) reconciler: Arc<R>,
}

#[async_trait]
impl<R: Reconciler> Runnable for Running<R> {
    async fn start(&self, ctx: CancellationToken) -> Result<(), BoxError> {
        let core = &self.core;
        if core.started.swap(true, Ordering::SeqCst) {
            return Err(Error::ControllerAlreadyStarted(core.name.to_string()).into());
        }
        // A sharded controller hears of newly acquired ranges from here on, before its
        // handlers see anything, so no object falls between the two.
        let mut activations = core.shard.as_ref().map(|gate| {
            let lookups: Vec<PrimaryLookup> = core
                .sources
                .iter()
                .filter_map(|s| s.primary_lookup())
                .collect();
            gate.set_primary(Arc::new(move |req| lookups.iter().find_map(|l| l(req))));
            gate.member.subscribe()
        });
        tracing::info!(controller = %core.name, "Starting Controller");
        // Started here, or already by the warmup.
        if !core.start_sources(&ctx).await? {
            // Cancelled first: the sources may still run from a warmup, which leaves them to
            // the start once it has begun.
            core.stop_sources().await;
            return Ok(());
        }

        let workers = core.max_concurrent_reconciles;
        tracing::info!(controller = %core.name, worker_count = workers, "Starting workers");
        core.metrics.set_max_concurrent_reconciles(workers as i64);
        let mut tasks = JoinSet::new();
        for _ in 0..workers {
            tasks.spawn(worker(core.clone(), self.reconciler.clone(), ctx.clone()));
        }
        if let Some(activations) = activations.take() {
            tasks.spawn(resync_acquired(core.clone(), activations, ctx.clone()));
        }

        ctx.cancelled().await;
        tracing::info!(controller = %core.name, "Shutdown signal received, waiting for all workers to finish");
        core.stopping.store(true, Ordering::SeqCst);
        // Also wakes idle workers; busy ones finish their reconcile, then stop.
        core.stop_sources().await;
        while let Some(joined) = tasks.join_next().await {
            if let Err(e) = joined {
                tracing::error!(controller = %core.name, error = %e, "worker ended abnormally");
            }
        }
        tracing::info!(controller = %core.name, "All workers finished");
        Ok(())
    }

    fn need_leader_election(&self) -> bool {
        self.core.need_leader_election
    }

    fn needs_warmup(&self) -> bool {
        self.core.warmup && self.core.need_leader_election
    }

    /// Starts the sources and waits for their handlers to sync while the replica waits for
    /// the lease (controller-runtime's `Warmup`): their requests queue up, and once it leads
    /// the workers start at once. Stops the sources when the manager stops before this
    /// replica led.
    async fn warmup(&self, ctx: CancellationToken) -> Result<(), BoxError> {
        let core = &self.core;
        if !self.needs_warmup() {
            return Ok(());
        }
        tracing::info!(controller = %core.name, "Warming up: starting event sources before leader election");
        if !core.start_sources(&ctx).await? {
            return Ok(());
        }
        ctx.cancelled().await;
        if !core.started.load(Ordering::SeqCst) {
            // Never led: nothing else stops them.
            core.stop_sources().await;
        }
        Ok(())
    }
}

/// Where a controller's sources are: started once, by the warmup or the start, whichever
/// comes first (the other finds them started), and stopped once.
pub(crate) enum SourcesState {
    /// Not started yet.
    Idle,
    /// Registered, and their handlers have synced.
    Running(Vec<Box<dyn StartedSource>>),
    /// Stopped, or failed to start or sync: they never run again.
    Done,
}

impl Core {
    /// Registers the sources' handlers, starts informers asked for late, and waits until every
    /// handler has seen its informer's initial list (controller-runtime waits for each
    /// handler registration's `HasSynced`, not only for the informer's), at most the
    /// cache-sync timeout. Once per controller: true when the sources run and have synced;
    /// false when `ctx` was cancelled first or they were already stopped; an error when they
    /// failed to start or sync (they are stopped and the queue is shut down).
    ///
    /// Invariant: the sources are registered at most once and stopped at most once (the state
    /// moves Idle → Running → Done or Idle → Done, under the lock).
    async fn start_sources(&self, ctx: &CancellationToken) -> Result<bool, Error> {
        let mut state = tokio::select! {
            state = self.source_state.lock() => state,
            () = ctx.cancelled() => return Ok(false),
        };
        match &*state {
            SourcesState::Running(_) => return Ok(true),
            SourcesState::Done => return Ok(false),
            SourcesState::Idle => {}
        }
        let mut started: Vec<Box<dyn StartedSource>> = Vec::with_capacity(self.sources.len());
        for source in &self.sources {
            tracing::info!(controller = %self.name, source = %source.name(), "Starting EventSource");
            match source.start(&self.queue, &self.predicates, self.shard.as_ref()) {
                Ok(s) => started.push(s),
                Err(e) => {
                    *state = SourcesState::Done;
                    stop_sources(&started);
                    self.queue.shut_down();
                    return Err(e);
                }
            }
        }
        // Informers asked for after the manager's caches step start here.
        self.factory.start();

        let sync_deadline = Instant::now() + self.cache_sync_timeout;
        while !started.iter().all(|s| s.has_synced()) {
            if Instant::now() >= sync_deadline {
                let resources = self
                    .sources
                    .iter()
                    .zip(&started)
                    .filter(|(_, s)| !s.has_synced())
                    .map(|(source, _)| source.name())
                    .collect();
                *state = SourcesState::Done;
                stop_sources(&started);
                self.queue.shut_down();
                let error = self.cache_sync_error(resources);
                tracing::error!(controller = %self.name, error = %error, "Could not wait for Cache to sync");
                return Err(error);
            }
            tokio::select! {
                () = ctx.cancelled() => {
                    *state = SourcesState::Done;
                    stop_sources(&started);
                    self.queue.shut_down();
                    return Ok(false);
                }
                () = tokio::time::sleep(SYNCED_POLL_PERIOD.min(sync_deadline - Instant::now())) => {}
            }
        }
        *state = SourcesState::Running(started);
        Ok(true)
    }

    /// Unregisters the sources' handlers (if they run) and shuts the queue down.
    async fn stop_sources(&self) {
        let mut state = self.source_state.lock().await;
        if let SourcesState::Running(started) = std::mem::replace(&mut *state, SourcesState::Done) {
            stop_sources(&started);
        }
        *state = SourcesState::Done;
        self.queue.shut_down();
    }
}

fn stop_sources(started: &[Box<dyn StartedSource>]) {
    for source in started {
        source.stop();
    }
}

/// Queues the cached primary objects of each range the controller's member acquires (their
/// events were filtered out while another member owned them).
async fn resync_acquired(
    core: Arc<Core>,
    mut activations: tokio::sync::broadcast::Receiver<RangeSet>,
    ctx: CancellationToken,
) {
    let Some(gate) = core.shard.clone() else {
        return;
    };
    let metrics = kcr_metrics::sharding::ShardMetrics::global();
    loop {
        let ranges = tokio::select! {
            () = ctx.cancelled() => return,
            received = activations.recv() => match received {
                Ok(ranges) => ranges,
                // Missed some: everything owned now.
                Err(tokio::sync::broadcast::error::RecvError::Lagged(_)) => gate.member.owned(),
                Err(tokio::sync::broadcast::error::RecvError::Closed) => return,
            },
        };
        let queued: usize = core
            .sources
            .iter()
            .map(|s| s.resync(&core.queue, &gate, &ranges))
            .sum();
        tracing::debug!(controller = %core.name, queued, "queued the cached objects of acquired ranges");
        let owned = gate.member.owned();
        let owned_now: usize = core.sources.iter().map(|s| s.count_in(&gate, &owned)).sum();
        metrics
            .owned_objects()
            .with_label_values(&[gate.member.group(), &*core.name])
            .set(i64::try_from(owned_now).unwrap_or(i64::MAX));
    }
}

/// Marks the request done and the worker idle, even if the worker is
/// aborted mid-reconcile.
struct InFlight<'a> {
    core: &'a Core,
    req: Request,
}

impl Drop for InFlight<'_> {
    fn drop(&mut self) {
        self.core.metrics.worker_idle();
        self.core.queue.done(&self.req);
    }
}

/// One worker: get, reconcile, done, until the controller stops (seed 000's
/// `runWorker` / `processNextWorkItem`).
async fn worker<R: Reconciler>(core: Arc<Core>, reconciler: Arc<R>, ctx: CancellationToken) {
    while let Some((req, priority)) = core.queue.get_with_priority().await {
        if core.stopping.load(Ordering::SeqCst) {
            core.queue.done(&req);
            break;
        }
        // A sharded controller reconciles only what its member owns now; the rest is dropped
        // (another member reconciles it).
        let reconciling = match &core.shard {
            None => None,
            Some(gate) => match gate.begin(&req) {
                Some(admitted) => Some(admitted),
                None => {
                    core.queue.forget(&req);
                    core.queue.done(&req);
                    continue;
                }
            },
        };
        core.metrics.worker_busy();
        let in_flight = InFlight { core: &core, req };
        match &reconciling {
            None => {
                core.reconcile_handler(&*reconciler, &in_flight.req, priority, &ctx)
                    .await;
            }
            Some(admitted) => {
                tokio::select! {
                    biased;
                    () = admitted.revoked() => {
                        // The member passed its renew deadline: another may own the key soon.
                        tracing::warn!(controller = %core.name, request = %in_flight.req, "shard lost: reconcile aborted");
                    }
                    () = core.reconcile_handler(&*reconciler, &in_flight.req, priority, &ctx) => {}
                }
            }
        }
        // The reconcile's future is gone before its key stops counting as in flight.
        drop(reconciling);
        drop(in_flight);
    }
}

/// How a reconcile ended.
enum Outcome {
    Ok(Action),
    Err(BoxError),
    Panic(String),
    Timeout(Duration),
}

/// A reconcile's id in logs (random, formatted as a UUID).
struct ReconcileId(u128);

impl fmt::Display for ReconcileId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let hex = format!("{:032x}", self.0);
        write!(
            f,
            "{}-{}-{}-{}-{}",
            &hex[0..8],
            &hex[8..12],
            &hex[12..16],
            &hex[16..20],
            &hex[20..32]
        )
    }
}

impl Core {
    /// Reconciles one request and applies the outcome rules
    /// (controller-runtime `reconcileHandler`).
    async fn reconcile_handler<R: Reconciler>(
        &self,
        reconciler: &R,
        req: &Request,
        priority: i32,
        ctx: &CancellationToken,
    ) {
        let started = Instant::now();
        let span = tracing::info_span!(
            "reconcile",
            controller = %self.name,
            namespace = req.namespace.as_deref().unwrap_or(""),
            name = %req.name,
            reconcile_id = %ReconcileId(rand::random()),
        );
        let deadline = self.reconcile_timeout.map(|limit| started + limit);
        let token = ctx.child_token();
        let context = ReconcileContext::new(deadline, token.clone());
        let call = AssertUnwindSafe(context.scope(reconciler.reconcile(req.clone())))
            .catch_unwind()
            .instrument(span.clone());
        let mut call = std::pin::pin!(call);
        let outcome = match (deadline, self.reconcile_timeout) {
            (Some(deadline), Some(limit)) => tokio::select! {
                result = &mut call => Self::outcome(result),
                () = tokio::time::sleep_until(deadline) => {
                    // The reconcile learns it is cut off before its future
                    // is dropped (at the end of this function).
                    token.cancel();
                    Outcome::Timeout(limit)
                }
            },
            _ => Self::outcome(call.await),
        };
        token.cancel();
        let elapsed = started.elapsed().as_secs_f64();

        // A priority the reconcile asks for replaces the one the request was taken with
        // (controller-runtime's `Result.Priority`, honoured also with an error).
        let priority = match &outcome {
            Outcome::Ok(action) => action.priority(),
            Outcome::Err(error) => retry_priority(&**error),
            Outcome::Panic(_) | Outcome::Timeout(_) => None,
        }
        .unwrap_or(priority);
        let result = match outcome {
            Outcome::Ok(Action {
                next: Next::Done, ..
            }) => {
                span.in_scope(|| tracing::debug!("Reconcile successful"));
                self.queue.forget(req);
                ReconcileResult::Success
            }
            Outcome::Ok(Action {
                next: Next::Requeue,
                ..
            }) => {
                span.in_scope(|| tracing::debug!("Reconcile done, requeueing"));
                self.queue.add_with_opts(
                    req.clone(),
                    AddOpts::default().priority(priority).rate_limited(),
                );
                ReconcileResult::Requeue
            }
            Outcome::Ok(Action {
                next: Next::RequeueAfter(delay),
                ..
            }) => {
                span.in_scope(|| tracing::debug!(?delay, "Reconcile done, requeueing after"));
                self.queue.forget(req);
                self.queue.add_with_opts(
                    req.clone(),
                    AddOpts::default().priority(priority).after(delay),
                );
                ReconcileResult::RequeueAfter
            }
            Outcome::Err(error) => {
                self.metrics.error();
                if is_terminal(&*error) {
                    // Not forgotten (controller-runtime): the request's
                    // failure history stays until it succeeds.
                    self.metrics.terminal_error();
                    span.in_scope(|| {
                        tracing::error!(error = %error, "Reconciler error (terminal, not retried)");
                    });
                } else {
                    self.retry(req, priority);
                    span.in_scope(|| tracing::error!(error = %error, "Reconciler error"));
                }
                ReconcileResult::Error
            }
            Outcome::Panic(message) => {
                self.metrics.panic();
                self.metrics.error();
                self.retry(req, priority);
                span.in_scope(
                    || tracing::error!(panic = %message, "Observed a panic in reconciler"),
                );
                ReconcileResult::Error
            }
            Outcome::Timeout(limit) => {
                self.metrics.timeout();
                self.metrics.error();
                self.retry(req, priority);
                span.in_scope(|| {
                    tracing::error!(timeout = ?limit, "Reconciler timed out and was cancelled");
                });
                ReconcileResult::Error
            }
        };
        self.metrics.reconciled(result, elapsed);
    }

    fn outcome<E: Into<BoxError>>(
        result: Result<Result<Action, E>, Box<dyn Any + Send>>,
    ) -> Outcome {
        match result {
            Ok(Ok(action)) => Outcome::Ok(action),
            Ok(Err(e)) => Outcome::Err(e.into()),
            Err(panic) => Outcome::Panic(kcr_cache::panic_message(panic.as_ref())),
        }
    }

    /// The watched informers that have not synced yet.
    pub(crate) fn unsynced_informers(&self) -> Vec<String> {
        self.sources
            .iter()
            .filter(|s| !s.cache_synced())
            .map(|s| s.name())
            .collect()
    }

    pub(crate) fn cache_sync_error(&self, resources: Vec<String>) -> Error {
        Error::CacheSyncTimeout {
            controller: self.name.to_string(),
            timeout: self.cache_sync_timeout,
            resources,
        }
    }

    fn retry(&self, req: &Request, priority: i32) {
        self.queue.add_with_opts(
            req.clone(),
            AddOpts::default().priority(priority).rate_limited(),
        );
    }
}
