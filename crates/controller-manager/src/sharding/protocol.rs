//! One member's side of the hand-off protocol, without I/O: the runtime
//! ([`ShardMember`](super::ShardMember)) and the model test drive the same state machine.

use std::collections::BTreeMap;
use std::time::Duration;

use tokio::time::Instant;

use super::assignment::assign;
use super::range::RangeSet;

/// The lease timing of a sharded member, as leader election's (client-go's defaults: 15 s,
/// 10 s, 2 s).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Timing {
    /// How long the others wait, without seeing a member's Lease change, before they count it
    /// gone and take its ranges.
    pub lease_duration: Duration,
    /// How long after the start of its last successful renewal a member keeps its ranges;
    /// past it, it stops every reconcile at once.
    pub renew_deadline: Duration,
    /// The period of a member's rounds (renew, observe, hand off, claim).
    pub retry_period: Duration,
}

impl Default for Timing {
    fn default() -> Self {
        Self {
            lease_duration: crate::leaderelection::DEFAULT_LEASE_DURATION,
            renew_deadline: crate::leaderelection::DEFAULT_RENEW_DEADLINE,
            retry_period: crate::leaderelection::DEFAULT_RETRY_PERIOD,
        }
    }
}

impl Timing {
    /// A write that answers later than this after it was sent does not count as a renewal:
    /// half the margin between the lease duration and the renew deadline (see the module
    /// documentation for why).
    pub fn request_timeout(&self) -> Duration {
        self.lease_duration.saturating_sub(self.renew_deadline) / 2
    }

    /// Checks leader election's rules: `lease_duration > renew_deadline > retry_period × 1.2`,
    /// none zero.
    pub(crate) fn validate(&self) -> Result<(), String> {
        if self.lease_duration.is_zero()
            || self.renew_deadline.is_zero()
            || self.retry_period.is_zero()
        {
            return Err(
                "the lease duration, renew deadline and retry period must not be zero".into(),
            );
        }
        if self.lease_duration <= self.renew_deadline {
            return Err("the lease duration must be greater than the renew deadline".into());
        }
        if self.renew_deadline
            <= self
                .retry_period
                .mul_f64(crate::leaderelection::JITTER_FACTOR)
        {
            return Err("the renew deadline must be greater than the retry period × 1.2".into());
        }
        Ok(())
    }
}

/// One Lease of the group as a list returned it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct LeaseView {
    /// The member's identity.
    pub(crate) identity: String,
    /// The Lease's `resourceVersion`: any write changes it.
    pub(crate) version: String,
    /// The ranges the Lease says the member holds; a Lease whose ranges do not read counts
    /// as holding everything.
    pub(crate) held: RangeSet,
    /// The Lease's `leaseDurationSeconds`.
    pub(crate) lease_duration: Duration,
}

/// What this member last saw of another one's Lease, and since when (its own clock).
#[derive(Clone, Debug)]
struct Peer {
    version: String,
    held: RangeSet,
    lease_duration: Duration,
    /// When this member first saw `version`: expiry is timed from here, never from a
    /// timestamp another member wrote.
    seen_at: Instant,
}

/// A member's protocol state.
#[derive(Debug)]
pub(crate) struct Protocol {
    identity: String,
    timing: Timing,
    points: usize,
    /// Ranges whose keys this member may start reconciling.
    active: RangeSet,
    /// Ranges given up whose reconciles in flight may still run; still written on the Lease.
    draining: RangeSet,
    /// Ranges written on the Lease as claims, not verified yet.
    claimed: RangeSet,
    /// The end of the member's right to reconcile: the start of its last successful renewal
    /// plus the renew deadline.
    valid_until: Option<Instant>,
    peers: BTreeMap<String, Peer>,
    /// No claim before this (after a claim lost to another member's).
    claim_after: Option<Instant>,
}

impl Protocol {
    pub(crate) fn new(identity: impl Into<String>, timing: Timing, points: usize) -> Self {
        Self {
            identity: identity.into(),
            timing,
            points,
            active: RangeSet::new(),
            draining: RangeSet::new(),
            claimed: RangeSet::new(),
            valid_until: None,
            peers: BTreeMap::new(),
            claim_after: None,
        }
    }

    /// Ranges whose keys may start reconciling now.
    pub(crate) fn active(&self) -> &RangeSet {
        &self.active
    }

    /// Ranges given up, still draining.
    pub(crate) fn draining(&self) -> &RangeSet {
        &self.draining
    }

    /// What the Lease must say this member holds: a superset of every range it may
    /// reconcile in.
    pub(crate) fn held(&self) -> RangeSet {
        self.active.union(&self.draining).union(&self.claimed)
    }

    pub(crate) fn valid_until(&self) -> Option<Instant> {
        self.valid_until
    }

    /// Records a consistent list of the group's Leases (this member's own is skipped): a
    /// Lease whose version changed restarts its expiry clock; a Lease no longer listed is
    /// gone.
    pub(crate) fn observe(&mut self, now: Instant, leases: Vec<LeaseView>) {
        let mut peers = BTreeMap::new();
        for lease in leases {
            if lease.identity == self.identity {
                continue;
            }
            let seen_at = match self.peers.get(&lease.identity) {
                Some(p) if p.version == lease.version => p.seen_at,
                _ => now,
            };
            peers.insert(
                lease.identity,
                Peer {
                    version: lease.version,
                    held: lease.held,
                    lease_duration: lease.lease_duration,
                    seen_at,
                },
            );
        }
        self.peers = peers;
    }

    fn live_peers(&self, now: Instant) -> impl Iterator<Item = (&String, &Peer)> {
        self.peers
            .iter()
            .filter(move |(_, p)| now < p.seen_at + p.lease_duration)
    }

    /// When the next live peer's Lease expires, if none changes before (a member then runs a
    /// round at once, so a dead member's ranges are taken over without waiting for the next
    /// retry period).
    pub(crate) fn next_expiry(&self, now: Instant) -> Option<Instant> {
        self.live_peers(now)
            .map(|(_, p)| p.seen_at + p.lease_duration)
            .min()
    }

    /// The live members: this one and every peer whose Lease changed within its lease
    /// duration.
    pub(crate) fn members(&self, now: Instant) -> Vec<String> {
        let mut members: Vec<String> = self.live_peers(now).map(|(id, _)| id.clone()).collect();
        members.push(self.identity.clone());
        members.sort();
        members
    }

    /// The ranges this member should own, given the live members it sees.
    pub(crate) fn target(&self, now: Instant) -> RangeSet {
        assign(self.members(now), self.points)
            .remove(&self.identity)
            .unwrap_or_default()
    }

    fn others_held(&self, now: Instant) -> RangeSet {
        self.live_peers(now)
            .fold(RangeSet::new(), |acc, (_, p)| acc.union(&p.held))
    }

    /// Whether the member may reconcile at `now`; once the renew deadline has passed, every
    /// range is dropped at once (the caller aborts the reconciles in flight) and the claims
    /// are forgotten. Returns true when this call dropped something.
    pub(crate) fn expire(&mut self, now: Instant) -> bool {
        if self.valid_until.is_some_and(|v| now < v) {
            return false;
        }
        let had = !self.active.is_empty() || !self.draining.is_empty() || !self.claimed.is_empty();
        self.active = RangeSet::new();
        self.draining = RangeSet::new();
        self.claimed = RangeSet::new();
        had
    }

    /// Step 1 of a round, after [`observe`](Self::observe): ranges no longer in the target
    /// start draining, drained ones back in the target come back (the Lease never stopped
    /// saying so), and the target's free ranges become claims. Returns the ranges to write
    /// on the Lease.
    pub(crate) fn plan(&mut self, now: Instant) -> RangeSet {
        self.expire(now);
        let target = self.target(now);
        let released = self.active.difference(&target);
        let valid = self.valid_until.is_some_and(|v| now < v);
        let back = if valid {
            self.draining.intersection(&target)
        } else {
            RangeSet::new()
        };
        self.active = self.active.intersection(&target).union(&back);
        self.draining = self.draining.difference(&back).union(&released);
        self.claimed = if self.claim_after.is_some_and(|t| now < t) {
            RangeSet::new()
        } else {
            target
                .difference(&self.active)
                .difference(&self.draining)
                .difference(&self.others_held(now))
        };
        self.held()
    }

    /// The write of the Lease sent at `sent` succeeded at `now`: the member may reconcile
    /// until `sent` plus the renew deadline, unless the answer came later than the request
    /// timeout (then the write counts for nothing: it may have landed late).
    pub(crate) fn renewed(&mut self, sent: Instant, now: Instant) -> bool {
        if now.saturating_duration_since(sent) >= self.timing.request_timeout() {
            return false;
        }
        let until = sent + self.timing.renew_deadline;
        if self.valid_until.is_none_or(|v| v < until) {
            self.valid_until = Some(until);
        }
        true
    }

    /// Step 2, after a renewal that wrote the claims and a second consistent list
    /// ([`observe`](Self::observe)d): the claims no live peer holds become active; the others
    /// are dropped and claiming waits a random time (`backoff`, up to two retry periods) so
    /// two members do not keep claiming the same range. Returns the ranges activated.
    pub(crate) fn verify(&mut self, now: Instant, backoff: f64) -> RangeSet {
        let valid = self.valid_until.is_some_and(|v| now < v);
        let claimed = std::mem::take(&mut self.claimed);
        if !valid {
            return RangeSet::new();
        }
        let taken = claimed.intersection(&self.others_held(now));
        if !taken.is_empty() {
            self.claim_after = Some(
                now + self
                    .timing
                    .retry_period
                    .mul_f64(2.0 * backoff.clamp(0.0, 1.0)),
            );
        }
        let won = claimed.difference(&taken);
        self.active = self.active.union(&won);
        won
    }

    /// The write of the Lease failed (or its answer was lost): its claims are dropped (the
    /// Lease may show them until the next write, which only makes others wait).
    pub(crate) fn write_failed(&mut self) {
        self.claimed = RangeSet::new();
    }

    /// The ranges in `drained` have no reconcile in flight any more: they leave the Lease at
    /// the next write.
    pub(crate) fn drained(&mut self, drained: &RangeSet) {
        self.draining = self.draining.difference(drained);
    }

    /// Leaves the group: gives up everything (the caller has let the reconciles in flight
    /// finish).
    pub(crate) fn leave(&mut self) {
        self.active = RangeSet::new();
        self.draining = RangeSet::new();
        self.claimed = RangeSet::new();
        self.valid_until = None;
    }
}
