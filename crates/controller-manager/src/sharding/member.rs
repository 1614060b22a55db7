//! [`ShardMember`]: one replica's membership of a sharded group, running the hand-off protocol
//! over its Lease.

use std::collections::BTreeMap;
use std::fmt;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use async_trait::async_trait;
use kcr_informer::ShardSelector;
use kcr_metrics::sharding::ShardMetrics;
use parking_lot::Mutex;
use tokio::sync::{Notify, broadcast};
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

use super::hash::ShardField;
use super::membership::Membership;
use super::options::{Config, Mode};
use super::protocol::{LeaseView, Protocol};
use super::range::{HashRange, RangeSet};
use crate::Runnable;
use crate::{BoxError, Error, Result};

/// One replica's member of a sharded group (see the [module documentation](super) for the
/// protocol and its guarantees).
///
/// Add it to a [`Manager`](crate::Manager) through
/// [`Builder::sharded`](crate::controller::Builder::sharded) (or run it yourself with
/// [`run`](Self::run)): it renews its Lease every retry period, computes its share from the live
/// members, gives up and takes over ranges safely, and tells the controllers sharing it which
/// keys they may reconcile. It runs on every replica, without leader election.
///
/// The handle is cheap to clone.
#[derive(Clone)]
pub struct ShardMember {
    inner: Arc<Inner>,
}

struct Inner {
    config: Config,
    membership: Membership,
    // Held only for short, synchronous updates, never across an `.await`.
    state: Mutex<State>,
    /// Woken when a reconcile ends or the renew deadline moves.
    changed: Notify,
    selector: ShardSelector,
    activations: broadcast::Sender<RangeSet>,
    metrics: ShardMetrics,
    pub(crate) registered: AtomicBool,
    running: AtomicBool,
}

struct State {
    protocol: Protocol,
    /// Reconciles in flight, by the hash of their key.
    in_flight: BTreeMap<u64, usize>,
    /// Cancelled when the member loses its ranges at once (renew deadline passed): every
    /// reconcile in flight is aborted.
    epoch: CancellationToken,
    /// The live members seen last.
    members: Vec<String>,
    /// When each draining range was released, for the hand-off duration.
    released_at: Vec<(RangeSet, Instant)>,
}

impl fmt::Debug for ShardMember {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let state = self.inner.state.lock();
        f.debug_struct("ShardMember")
            .field("group", &self.inner.config.group)
            .field("identity", &self.inner.config.identity)
            .field("members", &state.members)
            .field("share", &state.protocol.active().share())
            .finish_non_exhaustive()
    }
}

/// A reconcile admitted by [`ShardMember::begin`]: counted as in flight until dropped.
pub(crate) struct Reconciling {
    member: ShardMember,
    hash: u64,
    epoch: CancellationToken,
}

impl Reconciling {
    /// Fires if the member loses its ranges at once: the reconcile must stop.
    pub(crate) fn revoked(&self) -> tokio_util::sync::WaitForCancellationFuture<'_> {
        self.epoch.cancelled()
    }
}

impl Drop for Reconciling {
    fn drop(&mut self) {
        {
            let mut state = self.member.inner.state.lock();
            if let Some(n) = state.in_flight.get_mut(&self.hash) {
                *n -= 1;
                if *n == 0 {
                    state.in_flight.remove(&self.hash);
                }
            }
        }
        self.member.inner.changed.notify_waiters();
    }
}

/// The selector that selects (practically) nothing: a member that holds no range yet must not
/// list everything.
fn nothing(field: ShardField) -> String {
    HashRange::new(0, 1).map_or_else(String::new, |r| r.selector(field))
}

impl ShardMember {
    /// A member of `config`'s group that reads and writes Leases through `client`. Fails on
    /// invalid timing (leader election's rules: `lease_duration > renew_deadline >
    /// retry_period × 1.2`), an empty group or identity.
    pub fn new(client: kube::Client, config: Config) -> Result<Self> {
        config
            .timing
            .validate()
            .map_err(Error::InvalidShardingConfig)?;
        if config.group.is_empty() || config.identity.is_empty() {
            return Err(Error::InvalidShardingConfig(
                "the group and the identity must not be empty".into(),
            ));
        }
        let selector = ShardSelector::new();
        selector.set(Some(nothing(config.field)));
        let metrics = ShardMetrics::global().clone();
        metrics
            .member_info()
            .with_label_values(&[config.group.as_str(), config.identity.as_str()])
            .set(1);
        let (activations, _) = broadcast::channel(64);
        Ok(Self {
            inner: Arc::new(Inner {
                membership: Membership::new(client, &config),
                state: Mutex::new(State {
                    protocol: Protocol::new(config.identity.clone(), config.timing, config.points),
                    in_flight: BTreeMap::new(),
                    epoch: CancellationToken::new(),
                    members: Vec::new(),
                    released_at: Vec::new(),
                }),
                config,
                changed: Notify::new(),
                selector,
                activations,
                metrics,
                registered: AtomicBool::new(false),
                running: AtomicBool::new(false),
            }),
        })
    }

    /// The member's identity.
    pub fn identity(&self) -> &str {
        &self.inner.config.identity
    }

    /// The group.
    pub fn group(&self) -> &str {
        &self.inner.config.group
    }

    /// The field keys are hashed by.
    pub fn field(&self) -> ShardField {
        self.inner.config.field
    }

    /// Server-side or client-side filtering.
    pub fn mode(&self) -> Mode {
        self.inner.config.mode
    }

    /// The ranges whose keys this member may reconcile now.
    pub fn owned(&self) -> RangeSet {
        self.inner.state.lock().protocol.active().clone()
    }

    /// The share of the hash space this member reconciles now, in `[0, 1]`.
    pub fn share(&self) -> f64 {
        self.inner.state.lock().protocol.active().share()
    }

    /// Whether a key with `hash` is this member's to reconcile now.
    pub fn owns(&self, hash: u64) -> bool {
        self.inner.state.lock().protocol.active().contains(hash)
    }

    /// The live members this one saw at its last round (itself included), sorted.
    pub fn members(&self) -> Vec<String> {
        self.inner.state.lock().members.clone()
    }

    /// The `shardSelector` of the ranges this member's Lease holds (a server-side sharded
    /// informer lists and watches with it).
    pub fn selector(&self) -> ShardSelector {
        self.inner.selector.clone()
    }

    /// Ranges as they become this member's: a controller enqueues the cached objects in them.
    pub fn subscribe(&self) -> broadcast::Receiver<RangeSet> {
        self.inner.activations.subscribe()
    }

    /// Admits a reconcile of a key with `hash` if the member owns it now; the key then counts
    /// as in flight (its range cannot be handed over) until the guard drops.
    pub(crate) fn begin(&self, hash: u64) -> Option<Reconciling> {
        let mut state = self.inner.state.lock();
        if !state.protocol.active().contains(hash) {
            return None;
        }
        *state.in_flight.entry(hash).or_default() += 1;
        Some(Reconciling {
            member: self.clone(),
            hash,
            epoch: state.epoch.clone(),
        })
    }

    pub(crate) fn mark_registered(&self) -> bool {
        !self.inner.registered.swap(true, Ordering::SeqCst)
    }

    /// Runs the member until `ctx` is cancelled: a round every retry period, and a watchdog
    /// that drops every range the moment the renew deadline passes. On cancellation it stops
    /// admitting reconciles, waits for those in flight, and deletes its Lease. One `run` at a
    /// time: a second concurrent call returns at once.
    pub async fn run(&self, ctx: CancellationToken) {
        if self.inner.running.swap(true, Ordering::SeqCst) {
            tracing::warn!(group = %self.group(), "ShardMember::run is already running");
            return;
        }
        let watchdog = tokio::spawn(self.clone().watchdog(ctx.child_token()));
        let retry = self.inner.config.timing.retry_period;
        loop {
            tokio::select! {
                biased;
                () = ctx.cancelled() => break,
                () = self.round() => {}
            }
            // The next round: a retry period on, or as soon as a peer's Lease expires.
            let next = {
                let state = self.inner.state.lock();
                let now = Instant::now();
                let by_retry = now + retry;
                state.protocol.next_expiry(now).map_or(by_retry, |e| {
                    by_retry.min(e + std::time::Duration::from_millis(1))
                })
            };
            tokio::select! {
                () = ctx.cancelled() => break,
                () = tokio::time::sleep_until(next) => {}
            }
        }
        watchdog.abort();
        self.leave().await;
        self.inner.running.store(false, Ordering::SeqCst);
    }

    async fn leave(&self) {
        let before = {
            let mut state = self.inner.state.lock();
            let before = state.protocol.active().clone();
            state.protocol.leave();
            before
        };
        self.report_change(&before, "left the group");
        // The reconciles in flight finish; nothing new is admitted.
        loop {
            let notified = self.inner.changed.notified();
            let mut notified = std::pin::pin!(notified);
            notified.as_mut().enable();
            if self.inner.state.lock().in_flight.is_empty() {
                break;
            }
            notified.await;
        }
        let timeout = self.inner.config.timing.renew_deadline;
        match tokio::time::timeout(timeout, self.inner.membership.delete()).await {
            Ok(Ok(())) => {
                tracing::info!(group = %self.group(), identity = %self.identity(), "left the sharded group: lease deleted")
            }
            Ok(Err(e)) => {
                tracing::warn!(group = %self.group(), error = %e, "could not delete the member lease; it expires")
            }
            Err(_) => {
                tracing::warn!(group = %self.group(), "timed out deleting the member lease; it expires")
            }
        }
    }

    /// Drops every range at the renew deadline, even while a round waits on the server.
    async fn watchdog(self, ctx: CancellationToken) {
        loop {
            let notified = self.inner.changed.notified();
            let mut notified = std::pin::pin!(notified);
            notified.as_mut().enable();
            // A deadline already passed has been acted on: wait for the next renewal.
            let until = self
                .inner
                .state
                .lock()
                .protocol
                .valid_until()
                .filter(|until| *until > Instant::now());
            let sleep = async {
                match until {
                    Some(until) => tokio::time::sleep_until(until).await,
                    None => std::future::pending().await,
                }
            };
            tokio::select! {
                () = ctx.cancelled() => return,
                () = sleep => self.expire(),
                () = notified => {}
            }
        }
    }

    /// Drops everything if the renew deadline has passed, aborting the reconciles in flight.
    fn expire(&self) {
        let before = {
            let mut state = self.inner.state.lock();
            let before = state.protocol.active().union(state.protocol.draining());
            if !state.protocol.expire(Instant::now()) {
                return;
            }
            state.epoch.cancel();
            state.epoch = CancellationToken::new();
            state.released_at.clear();
            before
        };
        if self.inner.config.mode == Mode::ServerSide {
            self.inner.selector.set(Some(nothing(self.field())));
        }
        tracing::warn!(group = %self.group(), identity = %self.identity(), "renew deadline passed: every range dropped, reconciles in flight aborted");
        self.report_change(&before, "renew deadline passed");
    }

    /// One round: observe the group, hand off and claim, renew, verify the claims.
    async fn round(&self) {
        let timing = self.inner.config.timing;
        let timeout = timing.request_timeout();
        let listed = tokio::time::timeout(timeout, self.inner.membership.list()).await;
        // Past the renew deadline, the watchdog's work is done here first (the reconciles in
        // flight are aborted), so planning never drops a range silently.
        self.expire();
        let held = {
            let mut state = self.inner.state.lock();
            let now = Instant::now();
            match listed {
                Ok(Ok(leases)) => {
                    state.protocol.observe(now, leases);
                    self.drain(&mut state, now);
                    let before = state.protocol.active().clone();
                    let held = state.protocol.plan(now);
                    let released = before.difference(state.protocol.active());
                    if !released.is_empty() {
                        self.inner
                            .metrics
                            .handoffs_total()
                            .with_label_values(&[self.group(), "released"])
                            .inc_by(released.ranges().len() as u64);
                        state.released_at.push((released.clone(), now));
                        drop(state);
                        self.report_change(&before, "released ranges to other members");
                    }
                    held
                }
                Ok(Err(e)) => {
                    tracing::debug!(group = %self.group(), error = %e, "could not list the group's leases");
                    state.protocol.held()
                }
                Err(_) => {
                    tracing::debug!(group = %self.group(), "listing the group's leases timed out");
                    state.protocol.held()
                }
            }
        };
        if self.inner.config.mode == Mode::ServerSide {
            let selector = held
                .selector(self.field())
                .unwrap_or_else(|| nothing(self.field()));
            self.inner.selector.set(Some(selector));
        }
        let sent = Instant::now();
        let written = tokio::time::timeout(timeout, self.inner.membership.write(&held)).await;
        let verify = {
            let mut state = self.inner.state.lock();
            let renewed = match written {
                Ok(Ok(())) => state.protocol.renewed(sent, Instant::now()),
                Ok(Err(e)) => {
                    tracing::debug!(group = %self.group(), error = %e, "could not renew the member lease");
                    false
                }
                Err(_) => false,
            };
            if !renewed {
                state.protocol.write_failed();
            }
            renewed
                && state.protocol.held() != state.protocol.active().union(state.protocol.draining())
        };
        self.inner.changed.notify_waiters();
        if !verify {
            self.update_gauges();
            return;
        }
        let claimed_at = sent;
        let listed = tokio::time::timeout(timeout, self.inner.membership.list()).await;
        let leases: Option<Vec<LeaseView>> = match listed {
            Ok(Ok(leases)) => Some(leases),
            _ => None,
        };
        let (before, won) = {
            let mut state = self.inner.state.lock();
            let now = Instant::now();
            let before = state.protocol.active().clone();
            let Some(leases) = leases else {
                state.protocol.write_failed();
                drop(state);
                self.update_gauges();
                return;
            };
            state.protocol.observe(now, leases);
            let won = state.protocol.verify(now, rand::random::<f64>());
            (before, won)
        };
        if !won.is_empty() {
            let group = self.group();
            self.inner
                .metrics
                .handoffs_total()
                .with_label_values(&[group, "acquired"])
                .inc_by(won.ranges().len() as u64);
            self.inner
                .metrics
                .handoff_duration_seconds()
                .with_label_values(&[group, "acquired"])
                .observe(claimed_at.elapsed().as_secs_f64());
            let _ = self.inner.activations.send(won);
            self.report_change(&before, "acquired ranges");
        }
        self.update_gauges();
    }

    /// Draining ranges without a reconcile in flight are done.
    fn drain(&self, state: &mut State, now: Instant) {
        let draining = state.protocol.draining().clone();
        if draining.is_empty() {
            return;
        }
        let busy: Vec<HashRange> = draining
            .ranges()
            .iter()
            .filter(|r| state.in_flight.keys().any(|h| r.contains(*h)))
            .copied()
            .collect();
        let drained = draining.difference(&RangeSet::from_ranges(busy));
        if drained.is_empty() {
            return;
        }
        state.protocol.drained(&drained);
        let group = self.group();
        state.released_at.retain(|(ranges, at)| {
            if drained.intersection(ranges) == *ranges {
                self.inner
                    .metrics
                    .handoff_duration_seconds()
                    .with_label_values(&[group, "released"])
                    .observe(now.saturating_duration_since(*at).as_secs_f64());
                false
            } else {
                true
            }
        });
    }

    fn update_gauges(&self) {
        let (members, share) = {
            let mut state = self.inner.state.lock();
            let members = state.protocol.members(Instant::now());
            state.members = members.clone();
            (members.len(), state.protocol.active().share())
        };
        let group = self.group();
        self.inner
            .metrics
            .members()
            .with_label_values(&[group])
            .set(i64::try_from(members).unwrap_or(i64::MAX));
        self.inner
            .metrics
            .owned_ratio()
            .with_label_values(&[group])
            .set(share);
    }

    /// The `tracing` event of an assignment change.
    fn report_change(&self, before: &RangeSet, why: &str) {
        let (after, members) = {
            let state = self.inner.state.lock();
            (
                state.protocol.active().clone(),
                state.protocol.members(Instant::now()),
            )
        };
        tracing::info!(
            group = %self.group(),
            identity = %self.identity(),
            members = ?members,
            share_before = before.share(),
            share = after.share(),
            ranges = after.ranges().len(),
            "shard assignment changed: {why}"
        );
        self.update_gauges();
    }
}

#[async_trait]
impl Runnable for ShardMember {
    async fn start(&self, ctx: CancellationToken) -> std::result::Result<(), BoxError> {
        self.run(ctx).await;
        Ok(())
    }

    fn need_leader_election(&self) -> bool {
        false
    }
}
