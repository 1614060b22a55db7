//! The leader elector (client-go `tools/leaderelection/leaderelection.go`).

use std::fmt;
use std::panic::AssertUnwindSafe;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use futures::future::BoxFuture;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::MicroTime;
use k8s_openapi::jiff::Timestamp;
use kcr_metrics::leader_election::{MetricsProvider, PrometheusProvider};
use parking_lot::Mutex;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

use super::resourcelock::{LeaderElectionRecord, ResourceLock};
use crate::{Error, Result};

/// client-go's `JitterFactor`: `renew_deadline` must exceed
/// `retry_period × JITTER_FACTOR`.
pub const JITTER_FACTOR: f64 = 1.2;

/// The default lease duration (client-go's core clients and controller-runtime).
pub const DEFAULT_LEASE_DURATION: Duration = Duration::from_secs(15);
/// The default renew deadline.
pub const DEFAULT_RENEW_DEADLINE: Duration = Duration::from_secs(10);
/// The default retry period.
pub const DEFAULT_RETRY_PERIOD: Duration = Duration::from_secs(2);

type StartedFn = Arc<dyn Fn(CancellationToken) -> BoxFuture<'static, ()> + Send + Sync>;
type StoppedFn = Arc<dyn Fn() + Send + Sync>;
type NewLeaderFn = Arc<dyn Fn(String) + Send + Sync>;

/// The settings of a [`LeaderElector`] (client-go `LeaderElectionConfig`).
///
/// Built with [`LeaderElectionConfig::new`] and the `with_*`/`on_*` methods;
/// checked by [`LeaderElector::new`].
#[must_use]
pub struct LeaderElectionConfig {
    lock: Arc<dyn ResourceLock>,
    lease_duration: Duration,
    renew_deadline: Duration,
    retry_period: Duration,
    release_on_cancel: bool,
    name: Option<String>,
    on_started_leading: StartedFn,
    on_stopped_leading: StoppedFn,
    on_new_leader: Option<NewLeaderFn>,
    metrics: Arc<dyn MetricsProvider>,
}

impl fmt::Debug for LeaderElectionConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("LeaderElectionConfig")
            .field("lock", &self.lock.describe())
            .field("identity", &self.lock.identity())
            .field("lease_duration", &self.lease_duration)
            .field("renew_deadline", &self.renew_deadline)
            .field("retry_period", &self.retry_period)
            .field("release_on_cancel", &self.release_on_cancel)
            .field("name", &self.name)
            .finish_non_exhaustive()
    }
}

impl LeaderElectionConfig {
    /// A config electing on `lock` with the defaults: lease duration 15 s,
    /// renew deadline 10 s, retry period 2 s, no release on cancel, no-op
    /// callbacks, metrics in the default registry, named after the lock.
    pub fn new(lock: impl ResourceLock + 'static) -> Self {
        Self::from_arc(Arc::new(lock))
    }

    /// As [`new`](Self::new), for a lock already shared.
    pub fn from_arc(lock: Arc<dyn ResourceLock>) -> Self {
        Self {
            lock,
            lease_duration: DEFAULT_LEASE_DURATION,
            renew_deadline: DEFAULT_RENEW_DEADLINE,
            retry_period: DEFAULT_RETRY_PERIOD,
            release_on_cancel: false,
            name: None,
            on_started_leading: Arc::new(|_| Box::pin(async {})),
            on_stopped_leading: Arc::new(|| {}),
            on_new_leader: None,
            metrics: Arc::new(PrometheusProvider::global()),
        }
    }

    /// How long candidates wait without seeing the lock change before they
    /// take it. Written to the lease in whole seconds, truncated as client-go
    /// does (15.9 s is written as 15).
    pub fn lease_duration(mut self, d: Duration) -> Self {
        self.lease_duration = d;
        self
    }

    /// How long the leader keeps retrying a failing renewal before it stops
    /// leading, counted from the start of each renewal round (client-go's
    /// `renew` loop).
    pub fn renew_deadline(mut self, d: Duration) -> Self {
        self.renew_deadline = d;
        self
    }

    /// How long to wait between two attempts: a candidate waits a random
    /// time in `[retry_period, retry_period × (1 + 1.2))` between two
    /// attempts to acquire (client-go's `wait.JitterUntil(..., RetryPeriod,
    /// 1.2, ...)`); the leader renews every `retry_period`, without jitter.
    pub fn retry_period(mut self, d: Duration) -> Self {
        self.retry_period = d;
        self
    }

    /// Release the lock when [`run`](LeaderElector::run)'s token is
    /// cancelled: once the leader's work has returned, read the lock again
    /// and write `leaseDurationSeconds: 1` and an empty holder over the
    /// version read, so that another replica takes over at its next attempt
    /// instead of after the lease expires (client-go's `release`: a Get, then
    /// an Update, again on a conflict; nothing is written if the Get fails).
    pub fn release_on_cancel(mut self, release: bool) -> Self {
        self.release_on_cancel = release;
        self
    }

    /// The name used in logs and in the `leader_election_master_status{name}`
    /// metric (default: the lock's `namespace/name`).
    pub fn name(mut self, name: impl Into<String>) -> Self {
        self.name = Some(name.into());
        self
    }

    /// Where the leader-election metrics go (default: the default registry).
    pub fn metrics(mut self, metrics: Arc<dyn MetricsProvider>) -> Self {
        self.metrics = metrics;
        self
    }

    /// Called, in a task of its own, when this replica starts leading. The
    /// token is cancelled when leadership ends; the returned future is the
    /// leader's work, and the elector waits for it to return before it
    /// releases the lock or calls `on_stopped_leading`.
    pub fn on_started_leading<F, Fut>(mut self, f: F) -> Self
    where
        F: Fn(CancellationToken) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = ()> + Send + 'static,
    {
        self.on_started_leading = Arc::new(move |ctx| Box::pin(f(ctx)));
        self
    }

    /// Called when [`run`](LeaderElector::run) ends, after the leader's work
    /// has returned and the lock was released (if configured); as client-go,
    /// also when this replica never led (`run` cancelled while a candidate).
    pub fn on_stopped_leading<F>(mut self, f: F) -> Self
    where
        F: Fn() + Send + Sync + 'static,
    {
        self.on_stopped_leading = Arc::new(f);
        self
    }

    /// Called with the identity of each new leader this replica observes
    /// (including itself, and `""` after a release), on tokio's blocking pool
    /// (`spawn_blocking`): a callback that blocks stalls neither the election
    /// nor the runtime's workers. Like client-go's goroutine per call, two
    /// calls may overlap.
    pub fn on_new_leader<F>(mut self, f: F) -> Self
    where
        F: Fn(String) + Send + Sync + 'static,
    {
        self.on_new_leader = Some(Arc::new(f));
        self
    }

    /// Checks client-go's rules, in client-go's order.
    fn validate(&self) -> Result<()> {
        let invalid = Error::InvalidLeaderElectionConfig;
        if self.lease_duration <= self.renew_deadline {
            return Err(invalid("leaseDuration must be greater than renewDeadline"));
        }
        if self.renew_deadline <= self.retry_period.mul_f64(JITTER_FACTOR) {
            return Err(invalid(
                "renewDeadline must be greater than retryPeriod*JitterFactor",
            ));
        }
        if self.lease_duration.is_zero() {
            return Err(invalid("leaseDuration must be greater than zero"));
        }
        if self.renew_deadline.is_zero() {
            return Err(invalid("renewDeadline must be greater than zero"));
        }
        if self.retry_period.is_zero() {
            return Err(invalid("retryPeriod must be greater than zero"));
        }
        if self.lock.identity().is_empty() {
            return Err(invalid("Lock identity is empty"));
        }
        Ok(())
    }
}

/// What this replica last saw of the lock, and when (by its own clock).
#[derive(Default)]
struct Observed {
    record: LeaderElectionRecord,
    /// The local time at which `record` was last seen to change. Expiry is
    /// judged from this, never from the timestamps inside the record.
    time: Option<Instant>,
    /// The last leader reported to `on_new_leader`.
    reported_leader: String,
}

struct Inner {
    config: LeaderElectionConfig,
    name: String,
    // Held only for short copies, never across an `.await`.
    observed: Mutex<Observed>,
    leading: AtomicBool,
    running: AtomicBool,
}

/// A leader-election client (client-go `LeaderElector`).
///
/// Several replicas run one each against the same lock; at most one of them
/// leads at a time, as long as their clocks advance at roughly the same rate
/// (wall-clock *skew* does not matter: a replica never compares its clock
/// with timestamps another replica wrote, it only notices that the record
/// changed and times the lease from that moment).
///
/// A candidate tries, then waits a random time in `[retry_period,
/// retry_period × 2.2)` and tries again (client-go's jitter upwards). It
/// takes the lock when it is free, when it is its own, or when it has seen
/// the record unchanged for the record's lease duration.
///
/// The leader renews at once, then `retry_period` after each renewal round
/// (client-go's `renew` loop). A round retries a failing renewal every
/// `retry_period`, also when it sees another holder, until `renew_deadline`
/// after the round started; then the leader stops leading: the token given
/// to `on_started_leading` is cancelled at that moment. A round starts at
/// most `retry_period` plus one request after the last successful renewal,
/// so this happens before any other replica can judge the lease expired as
/// long as `lease_duration > renew_deadline + retry_period`.
///
/// ```no_run
/// use kcr_controller_manager::leaderelection::{LeaderElectionConfig, LeaderElector, LeaseLock};
/// use tokio_util::sync::CancellationToken;
///
/// # async fn demo(client: kube::Client) -> kcr_controller_manager::Result<()> {
/// let lock = LeaseLock::new(client, "default", "my-operator", "replica-1");
/// let elector = LeaderElector::new(
///     LeaderElectionConfig::new(lock)
///         .release_on_cancel(true)
///         .on_started_leading(|ctx| async move {
///             // leader-only work, until `ctx` is cancelled
///             ctx.cancelled().await;
///         })
///         .on_new_leader(|id| println!("new leader: {id}")),
/// )?;
/// let stop = CancellationToken::new();
/// elector.run(stop.clone()).await;
/// # Ok(())
/// # }
/// ```
#[derive(Clone)]
pub struct LeaderElector {
    inner: Arc<Inner>,
}

impl fmt::Debug for LeaderElector {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("LeaderElector")
            .field("name", &self.inner.name)
            .field("identity", &self.identity())
            .field("leading", &self.is_leader())
            .field("leader", &self.get_leader())
            .finish_non_exhaustive()
    }
}

/// Why the renew loop ended.
#[derive(Debug, PartialEq, Eq)]
enum RenewEnd {
    Cancelled,
    Lost,
}

impl LeaderElector {
    /// Checks `config` (client-go's rules: `lease_duration > renew_deadline >
    /// retry_period × 1.2`, all non-zero, a non-empty identity) and builds
    /// the elector.
    pub fn new(config: LeaderElectionConfig) -> Result<Self> {
        config.validate()?;
        let name = config
            .name
            .clone()
            .unwrap_or_else(|| config.lock.describe());
        config.metrics.leader_off(&name);
        Ok(Self {
            inner: Arc::new(Inner {
                config,
                name,
                observed: Mutex::new(Observed::default()),
                leading: AtomicBool::new(false),
                running: AtomicBool::new(false),
            }),
        })
    }

    /// This replica's identity.
    pub fn identity(&self) -> &str {
        self.inner.config.lock.identity()
    }

    /// The election's name (logs, metric label).
    pub fn name(&self) -> &str {
        &self.inner.name
    }

    /// Whether this replica leads now: true from the moment it acquired the
    /// lock until it stops leading (cancellation, a failed renewal or another
    /// holder seen).
    pub fn is_leader(&self) -> bool {
        self.inner.leading.load(Ordering::SeqCst)
    }

    /// The holder this replica last observed (`""` if none yet, or if the
    /// lock was released).
    pub fn get_leader(&self) -> String {
        self.inner.observed.lock().record.holder_identity.clone()
    }

    /// A health check for a watchdog (client-go `Check`): fails when this
    /// replica leads but has not renewed for more than `lease_duration +
    /// max_tolerable_expired_lease`, which means its renew loop is stuck.
    pub fn check(&self, max_tolerable_expired_lease: Duration) -> Result<(), String> {
        if !self.is_leader() {
            return Ok(());
        }
        let observed = self.inner.observed.lock().time;
        let limit = self.inner.config.lease_duration + max_tolerable_expired_lease;
        match observed {
            Some(t) if t.elapsed() <= limit => Ok(()),
            _ => Err(format!(
                "failed election to renew leadership on lease {}",
                self.inner.name
            )),
        }
    }

    /// Runs the election until `ctx` is cancelled or this replica stops
    /// leading: acquire, then call `on_started_leading` and renew; at the
    /// end cancel the leader's token, wait for its work to return, release
    /// the lock if configured, and call `on_stopped_leading`.
    ///
    /// One `run` at a time: a second concurrent call returns at once.
    pub async fn run(&self, ctx: CancellationToken) {
        if self.inner.running.swap(true, Ordering::SeqCst) {
            tracing::warn!(lease = %self.inner.name, "LeaderElector::run is already running");
            return;
        }
        self.run_once(ctx).await;
        self.inner.running.store(false, Ordering::SeqCst);
    }

    async fn run_once(&self, ctx: CancellationToken) {
        let config = &self.inner.config;
        let name = self.inner.name.as_str();
        if !self.acquire(&ctx).await {
            Self::stopped_leading(config, name);
            return;
        }
        tracing::info!(
            lease = name,
            identity = self.identity(),
            "successfully acquired lease"
        );
        config.lock.record_event("became leader");
        self.inner.leading.store(true, Ordering::SeqCst);
        config.metrics.leader_on(name);
        let leader_ctx = ctx.child_token();
        let work = tokio::spawn((config.on_started_leading)(leader_ctx.clone()));

        let end = self.renew(&ctx).await;
        config.lock.record_event("stopped leading");

        // Stop leading first: the leader's work is cancelled here, before
        // another replica can consider the lease expired.
        self.inner.leading.store(false, Ordering::SeqCst);
        config.metrics.leader_off(name);
        leader_ctx.cancel();
        if end == RenewEnd::Lost {
            tracing::warn!(
                lease = name,
                identity = self.identity(),
                "lost the lease: stopped leading"
            );
        }
        if let Err(e) = work.await
            && e.is_panic()
        {
            tracing::error!(lease = name, "on_started_leading panicked");
        }
        if config.release_on_cancel {
            self.release().await;
        }
        Self::stopped_leading(config, name);
    }

    fn stopped_leading(config: &LeaderElectionConfig, name: &str) {
        let stopped = config.on_stopped_leading.clone();
        if std::panic::catch_unwind(AssertUnwindSafe(|| stopped())).is_err() {
            tracing::error!(lease = name, "on_stopped_leading panicked");
        }
    }

    /// Tries until the lock is acquired (true) or `ctx` is cancelled
    /// (false), waiting a jittered retry period between two attempts.
    async fn acquire(&self, ctx: &CancellationToken) -> bool {
        let retry = self.inner.config.retry_period;
        tracing::info!(lease = %self.inner.name, "attempting to acquire leader lease");
        loop {
            let acquired = tokio::select! {
                biased;
                () = ctx.cancelled() => return false,
                ok = self.try_acquire_or_renew() => ok,
            };
            self.maybe_report_transition();
            if acquired {
                return true;
            }
            tracing::debug!(lease = %self.inner.name, "failed to acquire lease");
            tokio::select! {
                () = ctx.cancelled() => return false,
                () = tokio::time::sleep(jittered(retry)) => {}
            }
        }
    }

    /// Renewal rounds until `ctx` is cancelled or a round fails (client-go's
    /// `wait.Until(PollUntilContextTimeout(...), RetryPeriod)`): a round
    /// starts at once, then `retry_period` after the previous one ended; it
    /// tries every `retry_period` and fails `renew_deadline` after it
    /// started.
    async fn renew(&self, ctx: &CancellationToken) -> RenewEnd {
        let config = &self.inner.config;
        loop {
            if ctx.is_cancelled() {
                return RenewEnd::Cancelled;
            }
            let renewed = self.renew_round(ctx).await;
            self.maybe_report_transition();
            match renewed {
                Some(true) => tracing::trace!(lease = %self.inner.name, "renewed lease"),
                Some(false) => return RenewEnd::Lost,
                None => return RenewEnd::Cancelled,
            }
            tokio::select! {
                () = ctx.cancelled() => return RenewEnd::Cancelled,
                () = tokio::time::sleep(config.retry_period) => {}
            }
        }
    }

    /// One renewal round: `Some(true)` once renewed, `Some(false)` at the
    /// round's deadline, `None` if `ctx` is cancelled.
    async fn renew_round(&self, ctx: &CancellationToken) -> Option<bool> {
        let config = &self.inner.config;
        let deadline = Instant::now() + config.renew_deadline;
        loop {
            let start = Instant::now();
            // The attempt in flight is cut off at the deadline.
            let attempt = tokio::select! {
                biased;
                () = ctx.cancelled() => return None,
                r = tokio::time::timeout_at(deadline, self.try_acquire_or_renew()) => r,
            };
            match attempt {
                Ok(true) => return Some(true),
                Ok(false) => {}
                Err(_elapsed) => return Some(false),
            }
            let next = start + config.retry_period;
            tokio::select! {
                () = ctx.cancelled() => return None,
                () = tokio::time::sleep_until(next.min(deadline)) => {}
            }
            if next >= deadline {
                return Some(false);
            }
        }
    }

    fn observed_holder_is_me(&self) -> bool {
        self.inner.observed.lock().record.holder_identity == self.identity()
    }

    fn set_observed(&self, record: LeaderElectionRecord) {
        let mut observed = self.inner.observed.lock();
        observed.record = record;
        observed.time = Some(Instant::now());
    }

    fn lease_valid(&self, now: Instant) -> bool {
        let observed = self.inner.observed.lock();
        let secs = u64::try_from(observed.record.lease_duration_seconds).unwrap_or(0);
        observed
            .time
            .is_some_and(|t| t + Duration::from_secs(secs) > now)
    }

    /// The lease duration in whole seconds, truncated (client-go's
    /// `int(LeaseDuration / time.Second)`); beyond `i32::MAX` seconds (68
    /// years) clamped.
    fn lease_duration_seconds(&self) -> i32 {
        i32::try_from(self.inner.config.lease_duration.as_secs()).unwrap_or(i32::MAX)
    }

    /// One attempt (client-go `tryAcquireOrRenew`): true if this replica
    /// holds the lock afterwards.
    async fn try_acquire_or_renew(&self) -> bool {
        let lock = &self.inner.config.lock;
        let now = Instant::now();
        let wall = now_micro();
        let mut desired = LeaderElectionRecord {
            holder_identity: self.identity().to_owned(),
            lease_duration_seconds: self.lease_duration_seconds(),
            acquire_time: Some(wall.clone()),
            renew_time: Some(wall),
            ..LeaderElectionRecord::default()
        };

        // 1. Fast path: the leader updates optimistically from what it last
        // saw; the resourceVersion makes this fail if anyone else wrote.
        if self.observed_holder_is_me() && self.lease_valid(now) {
            {
                let observed = self.inner.observed.lock();
                desired.acquire_time = observed.record.acquire_time.clone();
                desired.leader_transitions = observed.record.leader_transitions;
            }
            match lock.update(&desired).await {
                Ok(()) => {
                    self.set_observed(desired);
                    return true;
                }
                Err(e) => {
                    tracing::info!(lease = %self.inner.name, error = %e, "failed to update lease optimistically, falling back to slow path");
                }
            }
        }

        // 2. Read the lock, or create it.
        let old = match lock.get().await {
            Ok(record) => record,
            Err(e) if e.is_not_found() => {
                return match lock.create(&desired).await {
                    Ok(()) => {
                        self.set_observed(desired);
                        true
                    }
                    Err(e) => {
                        tracing::info!(lease = %self.inner.name, error = %e, "error initially creating leader election record");
                        false
                    }
                };
            }
            Err(e) => {
                tracing::info!(lease = %self.inner.name, error = %e, "error retrieving resource lock");
                return false;
            }
        };

        // 3. Note a change (and restart the local expiry clock), then decide.
        {
            let mut observed = self.inner.observed.lock();
            if observed.time.is_none() || observed.record != old {
                observed.record = old.clone();
                observed.time = Some(Instant::now());
            }
        }
        let is_me = old.holder_identity == self.identity();
        if !old.holder_identity.is_empty() && self.lease_valid(now) && !is_me {
            tracing::debug!(lease = %self.inner.name, holder = %old.holder_identity, "lock is held and has not yet expired");
            return false;
        }

        // 4. Write ourselves in.
        if is_me {
            desired.acquire_time = old.acquire_time;
            desired.leader_transitions = old.leader_transitions;
            self.inner
                .config
                .metrics
                .slowpath_exercised(&self.inner.name);
        } else {
            desired.leader_transitions = old.leader_transitions.saturating_add(1);
        }
        match lock.update(&desired).await {
            Ok(()) => {
                self.set_observed(desired);
                true
            }
            Err(e) => {
                tracing::info!(lease = %self.inner.name, error = %e, "failed to update lease");
                false
            }
        }
    }

    /// Gives the lock up if this replica holds it (client-go `release`):
    /// reads the lock, then writes an empty holder and a one-second lease
    /// over the version read; on a conflict it reads and writes again
    /// (client-go 1.37: the renewal cut off by the cancellation may still
    /// be applied by the server after the read), all bounded by the renew
    /// deadline. Writes nothing if the read fails, or (unlike client-go,
    /// which trusts its last observation) if the read shows another holder.
    async fn release(&self) -> bool {
        let timeout = self.inner.config.renew_deadline;
        match tokio::time::timeout(timeout, self.try_release()).await {
            Ok(released) => released,
            Err(_) => {
                tracing::error!(lease = %self.inner.name, "timed out releasing lock");
                false
            }
        }
    }

    async fn try_release(&self) -> bool {
        let lock = &self.inner.config.lock;
        loop {
            let current = match lock.get().await {
                Ok(record) => record,
                Err(e) if e.is_not_found() => {
                    tracing::info!(lease = %self.inner.name, "lease lock not found");
                    return false;
                }
                Err(e) => {
                    tracing::error!(lease = %self.inner.name, error = %e, "error retrieving resource lock");
                    return false;
                }
            };
            if !self.observed_holder_is_me() {
                return true;
            }
            if current.holder_identity != self.identity() {
                tracing::info!(lease = %self.inner.name, holder = %current.holder_identity, "lease already held by another holder: nothing to release");
                return true;
            }
            let now = now_micro();
            let record = LeaderElectionRecord {
                lease_duration_seconds: 1,
                acquire_time: Some(now.clone()),
                renew_time: Some(now),
                leader_transitions: current.leader_transitions,
                ..LeaderElectionRecord::default()
            };
            match lock.update(&record).await {
                Ok(()) => {
                    tracing::info!(lease = %self.inner.name, "released lease");
                    self.set_observed(record);
                    self.maybe_report_transition();
                    return true;
                }
                Err(e) if e.is_conflict() => {
                    tracing::debug!(lease = %self.inner.name, "conflict when releasing lease, retrying");
                }
                Err(e) => {
                    tracing::error!(lease = %self.inner.name, error = %e, "failed to release lease");
                    return false;
                }
            }
        }
    }

    fn maybe_report_transition(&self) {
        let leader = {
            let mut observed = self.inner.observed.lock();
            if observed.record.holder_identity == observed.reported_leader {
                return;
            }
            observed.reported_leader = observed.record.holder_identity.clone();
            observed.reported_leader.clone()
        };
        tracing::info!(lease = %self.inner.name, leader = %leader, "new leader observed");
        if let Some(cb) = self.inner.config.on_new_leader.clone() {
            // On the blocking pool, as client-go runs it on a goroutine of its
            // own: a slow, blocking or panicking callback can neither stall
            // the election nor hold one of the runtime's workers.
            drop(tokio::task::spawn_blocking(move || cb(leader)));
        }
    }
}

/// The wall-clock time at the precision a `MicroTime` keeps on the server,
/// so that a record read back equals the record written.
fn now_micro() -> MicroTime {
    let now = Timestamp::now();
    MicroTime(Timestamp::from_microsecond(now.as_microsecond()).unwrap_or(now))
}

/// `d` lengthened by a random amount in `[0, d × JITTER_FACTOR)`
/// (client-go's `wait.Jitter(d, JitterFactor)`).
fn jittered(d: Duration) -> Duration {
    d.mul_f64(1.0 + rand::random::<f64>() * JITTER_FACTOR)
}

#[cfg(test)]
mod tests {
    use super::*;
    use async_trait::async_trait;

    type Store = Arc<Mutex<Option<(LeaderElectionRecord, u64)>>>;

    #[derive(Clone, Copy, Debug, PartialEq, Eq)]
    enum Verb {
        Get,
        Create,
        Update,
    }

    /// One call a lock received: the record it returned (get) or was asked
    /// to write (create, update), and whether it failed.
    #[derive(Clone, Debug)]
    struct Call {
        verb: Verb,
        at: Instant,
        record: Option<LeaderElectionRecord>,
        failed: bool,
    }

    /// An in-memory, scripted lock for the pure-logic tests (the HTTP tests
    /// use a real `LeaseLock` against kcr-testenv): it logs every call, and
    /// every call of a verb in `failing` fails with a `500`.
    struct MemoryLock {
        identity: String,
        store: Store,
        seen: Mutex<u64>,
        log: Arc<Mutex<Vec<Call>>>,
        failing: Arc<Mutex<Vec<Verb>>>,
    }

    impl MemoryLock {
        fn new(identity: &str, store: &Store) -> Self {
            Self {
                identity: identity.into(),
                store: store.clone(),
                seen: Mutex::new(0),
                log: Arc::default(),
                failing: Arc::default(),
            }
        }

        /// Logs the call; the error to answer if the verb is failing.
        fn call(&self, verb: Verb, record: Option<&LeaderElectionRecord>) -> Result<()> {
            let failed = self.failing.lock().contains(&verb);
            self.log.lock().push(Call {
                verb,
                at: Instant::now(),
                record: record.cloned(),
                failed,
            });
            if failed {
                return Err(Error::Kube(kube::Error::Api(Box::new(
                    kube::core::Status::failure("scripted failure", "InternalError").with_code(500),
                ))));
            }
            Ok(())
        }
    }

    fn conflict() -> Error {
        Error::Kube(kube::Error::Api(Box::new(
            kube::core::Status::failure("conflict", "Conflict").with_code(409),
        )))
    }

    #[async_trait]
    impl ResourceLock for MemoryLock {
        async fn get(&self) -> Result<LeaderElectionRecord> {
            let current = self.store.lock().clone();
            self.call(Verb::Get, current.as_ref().map(|(r, _)| r))?;
            match current {
                Some((record, version)) => {
                    *self.seen.lock() = version;
                    Ok(record)
                }
                None => Err(Error::Kube(kube::Error::Api(Box::new(
                    kube::core::Status::failure("not found", "NotFound").with_code(404),
                )))),
            }
        }
        async fn create(&self, record: &LeaderElectionRecord) -> Result<()> {
            self.call(Verb::Create, Some(record))?;
            let mut store = self.store.lock();
            if store.is_some() {
                return Err(conflict());
            }
            *store = Some((record.clone(), 1));
            *self.seen.lock() = 1;
            Ok(())
        }
        async fn update(&self, record: &LeaderElectionRecord) -> Result<()> {
            self.call(Verb::Update, Some(record))?;
            let mut store = self.store.lock();
            let mut seen = self.seen.lock();
            match store.as_mut() {
                Some((r, v)) if *v == *seen => {
                    *r = record.clone();
                    *v += 1;
                    *seen = *v;
                    Ok(())
                }
                _ => Err(conflict()),
            }
        }
        fn identity(&self) -> &str {
            &self.identity
        }
        fn describe(&self) -> String {
            "memory/lock".into()
        }
    }

    fn config(identity: &str) -> LeaderElectionConfig {
        let store = Arc::new(Mutex::new(None));
        LeaderElectionConfig::new(MemoryLock::new(identity, &store))
    }

    fn message(config: LeaderElectionConfig) -> String {
        match LeaderElector::new(config) {
            Err(Error::InvalidLeaderElectionConfig(m)) => m.to_owned(),
            other => format!("{other:?}"),
        }
    }

    #[test]
    fn defaults_should_be_client_go_defaults_and_valid() {
        let c = config("a");
        assert_eq!(c.lease_duration, Duration::from_secs(15));
        assert_eq!(c.renew_deadline, Duration::from_secs(10));
        assert_eq!(c.retry_period, Duration::from_secs(2));
        assert!(LeaderElector::new(c).is_ok());
    }

    #[test]
    fn lease_duration_should_exceed_renew_deadline() {
        let c = config("a").lease_duration(Duration::from_secs(10));
        assert_eq!(
            message(c),
            "leaseDuration must be greater than renewDeadline"
        );
    }

    #[test]
    fn renew_deadline_should_exceed_retry_period_times_jitter_factor() {
        // 10 s == 1.2 × 8.333.. s is not enough; 1.2 × 8 s = 9.6 s is.
        let c = config("a").retry_period(Duration::from_millis(8_334));
        assert_eq!(
            message(c),
            "renewDeadline must be greater than retryPeriod*JitterFactor"
        );
        let c = config("a").retry_period(Duration::from_secs(8));
        assert!(LeaderElector::new(c).is_ok());
    }

    #[test]
    fn zero_durations_and_an_empty_identity_should_be_refused() {
        let c = config("a").retry_period(Duration::ZERO);
        assert_eq!(message(c), "retryPeriod must be greater than zero");
        let c = config("");
        assert_eq!(message(c), "Lock identity is empty");
    }

    #[test]
    fn the_lease_duration_should_be_written_in_whole_seconds_truncated() -> Result<()> {
        let e = LeaderElector::new(
            config("a")
                .lease_duration(Duration::from_millis(15_900))
                .renew_deadline(Duration::from_millis(10_000))
                .retry_period(Duration::from_millis(2_000)),
        )?;
        assert_eq!(e.lease_duration_seconds(), 15);
        Ok(())
    }

    #[test]
    fn jitter_should_lengthen_the_period_by_up_to_the_jitter_factor() {
        let d = Duration::from_secs(2);
        for _ in 0..1_000 {
            let j = jittered(d);
            assert!(j >= d && j < d.mul_f64(1.0 + JITTER_FACTOR), "{j:?}");
        }
    }

    /// A lock whose store starts with `record` (version 1).
    fn held(record: LeaderElectionRecord) -> Store {
        Arc::new(Mutex::new(Some((record, 1))))
    }

    fn record(holder: &str, lease_seconds: i32) -> LeaderElectionRecord {
        LeaderElectionRecord {
            holder_identity: holder.into(),
            lease_duration_seconds: lease_seconds,
            ..LeaderElectionRecord::default()
        }
    }

    /// The handles a scripted test keeps: the lock's log and failing verbs,
    /// when the leader's work was cancelled, and whether
    /// `on_stopped_leading` ran.
    struct Scripted {
        elector: LeaderElector,
        log: Arc<Mutex<Vec<Call>>>,
        failing: Arc<Mutex<Vec<Verb>>>,
        work_cancelled: Arc<Mutex<Option<Instant>>>,
        stopped: Arc<AtomicBool>,
        stop: CancellationToken,
        task: tokio::task::JoinHandle<()>,
    }

    impl Scripted {
        fn verbs(&self) -> Vec<Verb> {
            self.log.lock().iter().map(|c| c.verb).collect()
        }

        fn calls_since(&self, t: Instant) -> Vec<Call> {
            self.log
                .lock()
                .iter()
                .filter(|c| c.at >= t)
                .cloned()
                .collect()
        }
    }

    fn run_scripted(identity: &str, store: &Store, release: bool) -> Result<Scripted> {
        let lock = MemoryLock::new(identity, store);
        let (log, failing) = (lock.log.clone(), lock.failing.clone());
        let work_cancelled = Arc::new(Mutex::new(None));
        let stopped = Arc::new(AtomicBool::new(false));
        let (w, st) = (work_cancelled.clone(), stopped.clone());
        let elector = LeaderElector::new(
            LeaderElectionConfig::new(lock)
                .release_on_cancel(release)
                .on_started_leading(move |ctx| {
                    let w = w.clone();
                    async move {
                        ctx.cancelled().await;
                        *w.lock() = Some(Instant::now());
                    }
                })
                .on_stopped_leading(move || st.store(true, Ordering::SeqCst)),
        )?;
        let stop = CancellationToken::new();
        let task = tokio::spawn({
            let (elector, stop) = (elector.clone(), stop.clone());
            async move { elector.run(stop).await }
        });
        Ok(Scripted {
            elector,
            log,
            failing,
            work_cancelled,
            stopped,
            stop,
            task,
        })
    }

    /// client-go's release after a renewal: the acquire (Get, Update), the
    /// immediate first renewal (Update), then the release reads the lock
    /// again and writes over what it read (Get, Update).
    #[tokio::test(start_paused = true)]
    async fn release_should_get_then_update_after_a_renewal() -> Result<()> {
        let mut released = record("", 1);
        released.leader_transitions = 4;
        let store = held(released);
        let mut s = run_scripted("a", &store, true)?;
        tokio::time::sleep(Duration::from_millis(1)).await;
        assert!(s.elector.is_leader());
        s.stop.cancel();
        let _ = (&mut s.task).await;
        use Verb::{Get, Update};
        assert_eq!(s.verbs(), [Get, Update, Update, Get, Update]);
        let log = s.log.lock();
        let last = log
            .last()
            .and_then(|c| c.record.clone())
            .unwrap_or_default();
        assert_eq!(last.holder_identity, "");
        assert_eq!(last.lease_duration_seconds, 1);
        assert_eq!(last.leader_transitions, 5);
        assert_eq!(s.elector.get_leader(), "");
        Ok(())
    }

    #[tokio::test(start_paused = true)]
    async fn release_should_write_nothing_when_its_get_fails() -> Result<()> {
        let store = held(record("", 1));
        let mut s = run_scripted("a", &store, true)?;
        tokio::time::sleep(Duration::from_millis(1)).await;
        assert!(s.elector.is_leader());
        s.failing.lock().push(Verb::Get);
        s.stop.cancel();
        let _ = (&mut s.task).await;
        use Verb::{Get, Update};
        assert_eq!(s.verbs(), [Get, Update, Update, Get]);
        assert!(s.log.lock().last().is_some_and(|c| c.failed));
        let holder = store
            .lock()
            .as_ref()
            .map(|(r, _)| r.holder_identity.clone());
        assert_eq!(holder.as_deref(), Some("a"));
        Ok(())
    }

    #[tokio::test(start_paused = true)]
    async fn on_stopped_leading_should_be_called_when_run_ends_without_leading() -> Result<()> {
        let store = held(record("other", 3_600));
        let mut s = run_scripted("a", &store, true)?;
        tokio::time::sleep(Duration::from_secs(10)).await;
        assert!(!s.elector.is_leader());
        s.stop.cancel();
        let _ = (&mut s.task).await;
        assert!(s.stopped.load(Ordering::SeqCst));
        assert!(s.work_cancelled.lock().is_none());
        // Never led: nothing to release, nothing written.
        assert!(s.verbs().iter().all(|v| *v == Verb::Get));
        Ok(())
    }

    /// client-go's `wait.JitterUntil(..., RetryPeriod, 1.2, sliding)`: each
    /// wait between two attempts is in `[retry, retry × 2.2)`.
    #[tokio::test(start_paused = true)]
    async fn acquire_retries_should_be_jittered_upwards() -> Result<()> {
        let store = held(record("other", 3_600));
        let mut s = run_scripted("a", &store, false)?;
        tokio::time::sleep(Duration::from_secs(600)).await;
        s.stop.cancel();
        let _ = (&mut s.task).await;
        let times: Vec<Instant> = s.log.lock().iter().map(|c| c.at).collect();
        let gaps: Vec<Duration> = times.windows(2).map(|w| w[1] - w[0]).collect();
        assert!(gaps.len() > 100, "{} attempts", times.len());
        let retry = DEFAULT_RETRY_PERIOD;
        // tokio's timer rounds a deadline up to the next millisecond, so a
        // wait just under the bound can be observed at the bound itself.
        let bound = retry.mul_f64(1.0 + JITTER_FACTOR);
        for gap in &gaps {
            assert!(*gap >= retry && *gap <= bound, "{gap:?}");
        }
        // Spread over the range, not stuck at one end.
        assert!(gaps.iter().any(|g| *g > retry.mul_f64(1.6)));
        assert!(gaps.iter().any(|g| *g < retry.mul_f64(1.6)));
        Ok(())
    }

    /// client-go's renew loop: a round at once after acquiring, then one
    /// retry period after each round; within a failing round an attempt
    /// every retry period, without jitter, until the renew deadline counted
    /// from the round's start.
    #[tokio::test(start_paused = true)]
    async fn renewals_should_retry_every_retry_period_until_the_rounds_deadline() -> Result<()> {
        let store = held(record("", 1));
        let mut s = run_scripted("a", &store, false)?;
        tokio::time::sleep(Duration::from_millis(7_001)).await;
        // Acquire at 0, renewals at 0, 2, 4, 6 (each succeeds at once).
        let updates: Vec<Instant> = s
            .log
            .lock()
            .iter()
            .filter(|c| c.verb == Verb::Update)
            .map(|c| c.at)
            .collect();
        assert_eq!(updates.len(), 5);
        assert!(updates[1] == updates[0]);
        assert!(
            updates[1..]
                .windows(2)
                .all(|w| w[1] - w[0] == DEFAULT_RETRY_PERIOD)
        );

        s.failing.lock().extend([Verb::Update, Verb::Get]);
        let round = updates[4] + DEFAULT_RETRY_PERIOD;
        let _ = (&mut s.task).await;
        let failing = s.calls_since(round);
        let attempts: Vec<Instant> = failing
            .iter()
            .filter(|c| c.verb == Verb::Update)
            .map(|c| c.at)
            .collect();
        assert_eq!(attempts.first(), Some(&round));
        assert_eq!(attempts.len(), 5, "{attempts:?}");
        assert!(
            attempts
                .windows(2)
                .all(|w| w[1] - w[0] == DEFAULT_RETRY_PERIOD)
        );
        assert_eq!(
            *s.work_cancelled.lock(),
            Some(round + DEFAULT_RENEW_DEADLINE)
        );
        assert!(!s.elector.is_leader());
        assert!(s.stopped.load(Ordering::SeqCst));
        Ok(())
    }

    /// client-go keeps polling after it saw another holder: the leader stops
    /// at its round's renew deadline, not at once.
    #[tokio::test(start_paused = true)]
    async fn a_leader_that_sees_another_holder_should_retry_until_its_renew_deadline() -> Result<()>
    {
        let store = held(record("", 1));
        let mut s = run_scripted("a", &store, false)?;
        tokio::time::sleep(Duration::from_millis(5_001)).await;
        // Between the rounds at 4 s and 6 s, someone else writes itself in.
        if let Some((r, v)) = store.lock().as_mut() {
            r.holder_identity = "other".into();
            *v += 1;
        }
        let round = Instant::now() + Duration::from_millis(999);
        tokio::time::sleep(Duration::from_secs(3)).await;
        assert!(s.elector.is_leader(), "stopped before the renew deadline");
        let _ = (&mut s.task).await;
        assert_eq!(
            *s.work_cancelled.lock(),
            Some(round + DEFAULT_RENEW_DEADLINE)
        );
        let gets = s
            .calls_since(round)
            .iter()
            .filter(|c| c.verb == Verb::Get)
            .count();
        assert_eq!(gets, 5);
        assert_eq!(s.elector.get_leader(), "other");
        Ok(())
    }

    /// A callback that blocks runs on the blocking pool: on a single-thread
    /// runtime the election and the test's task go on meanwhile.
    #[tokio::test(flavor = "current_thread")]
    async fn a_blocking_on_new_leader_should_not_block_the_runtime() -> Result<()> {
        let (tx, rx) = std::sync::mpsc::channel::<()>();
        let rx = Mutex::new(rx);
        let (done_tx, done_rx) = tokio::sync::oneshot::channel::<bool>();
        let done_tx = Mutex::new(Some(done_tx));
        let store = held(record("", 1));
        let elector = LeaderElector::new(
            LeaderElectionConfig::new(MemoryLock::new("a", &store)).on_new_leader(move |_| {
                // Waits for the test's task, which runs only if this
                // callback does not hold the runtime's one thread.
                let got = rx.lock().recv_timeout(Duration::from_secs(10)).is_ok();
                if let Some(tx) = done_tx.lock().take() {
                    let _ = tx.send(got);
                }
            }),
        )?;
        let stop = CancellationToken::new();
        let task = tokio::spawn({
            let (elector, stop) = (elector.clone(), stop.clone());
            async move { elector.run(stop).await }
        });
        while !elector.is_leader() {
            tokio::task::yield_now().await;
        }
        let _ = tx.send(());
        assert_eq!(done_rx.await.ok(), Some(true));
        stop.cancel();
        let _ = task.await;
        Ok(())
    }

    /// Two electors on one in-memory lock under a paused clock: the second
    /// takes over only after it has seen the record unchanged for the lease
    /// duration, by its own clock.
    #[tokio::test(start_paused = true)]
    async fn a_candidate_should_wait_a_full_lease_duration_from_its_own_observation() -> Result<()>
    {
        let store = Arc::new(Mutex::new(None));
        let a = LeaderElector::new(LeaderElectionConfig::new(MemoryLock::new("a", &store)))?;
        let b = LeaderElector::new(LeaderElectionConfig::new(MemoryLock::new("b", &store)))?;
        let stop_a = CancellationToken::new();
        let run_a = tokio::spawn({
            let a = a.clone();
            let stop = stop_a.clone();
            async move { a.run(stop).await }
        });
        tokio::time::sleep(Duration::from_millis(10)).await;
        assert!(a.is_leader());

        // Freeze the record in the store as `a` left it, with a renewTime
        // far in the future: `b` must ignore that timestamp.
        stop_a.cancel();
        let _ = run_a.await;
        if let Some((record, _)) = store.lock().as_mut() {
            record.renew_time = Some(MicroTime(Timestamp::MAX));
        }
        let started = Instant::now();
        let stop_b = CancellationToken::new();
        let run_b = tokio::spawn({
            let b = b.clone();
            let stop = stop_b.clone();
            async move { b.run(stop).await }
        });
        while !b.is_leader() {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        let waited = started.elapsed();
        assert!(
            waited >= Duration::from_secs(15),
            "took over after {waited:?}"
        );
        // It tries at least every 2 s × 2.2 (the jitter upwards); this loop
        // looks every 10 ms, and tokio rounds deadlines up to the millisecond.
        let slack = Duration::from_millis(20);
        assert!(
            waited
                <= Duration::from_secs(15)
                    + DEFAULT_RETRY_PERIOD.mul_f64(1.0 + JITTER_FACTOR)
                    + slack,
            "took over after {waited:?}"
        );
        assert_eq!(b.get_leader(), "b");
        stop_b.cancel();
        let _ = run_b.await;
        Ok(())
    }
}
