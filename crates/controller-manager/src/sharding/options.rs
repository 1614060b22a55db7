//! [`Config`]: how a replica joins a sharded group.

use std::time::Duration;

use super::assignment::DEFAULT_POINTS_PER_MEMBER;
use super::hash::ShardField;
use super::protocol::Timing;

/// Where a sharded controller's informers filter.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub enum Mode {
    /// The primary type's informer (and, sharding by namespace, every watched type's) lists
    /// and watches with the member's ranges as `shardSelector`, so a server with
    /// `ShardedListAndWatch` sends only the member's share; events are also filtered before
    /// the queue, so a server without the gate (which ignores the parameter) changes nothing
    /// but the cache's size.
    #[default]
    ServerSide,
    /// Informers list and watch everything; events are filtered before the queue.
    ClientSide,
}

/// A replica's membership of a sharded group: which group, where its Leases live, who it is,
/// how its share is computed and its lease timing (leader election's options and defaults).
///
/// ```
/// use std::time::Duration;
/// use kcr_controller_manager::sharding::{Config, Mode, ShardField};
///
/// let config = Config::new("config-map-workers", "default", "replica-0")
///     .with_field(ShardField::Namespace)
///     .with_mode(Mode::ClientSide)
///     .lease_duration(Duration::from_secs(15));
/// assert_eq!(config.lease_name(), "config-map-workers-replica-0");
/// ```
#[derive(Clone, Debug)]
#[must_use]
pub struct Config {
    pub(crate) group: String,
    pub(crate) namespace: String,
    pub(crate) identity: String,
    pub(crate) timing: Timing,
    pub(crate) field: ShardField,
    pub(crate) points: usize,
    pub(crate) mode: Mode,
}

impl Config {
    /// Membership of `group` (the Leases' `kcr.io/shard-group` label) as `identity` (unique in
    /// the group, such as the pod name), with Leases in `namespace`.
    pub fn new(
        group: impl Into<String>,
        namespace: impl Into<String>,
        identity: impl Into<String>,
    ) -> Self {
        Self {
            group: group.into(),
            namespace: namespace.into(),
            identity: identity.into(),
            timing: Timing::default(),
            field: ShardField::default(),
            points: DEFAULT_POINTS_PER_MEMBER,
            mode: Mode::default(),
        }
    }

    /// How long the others wait without seeing this member's Lease change before they take
    /// its ranges (default 15 s).
    pub fn lease_duration(mut self, d: Duration) -> Self {
        self.timing.lease_duration = d;
        self
    }

    /// How long after its last successful renewal began the member keeps its ranges
    /// (default 10 s).
    pub fn renew_deadline(mut self, d: Duration) -> Self {
        self.timing.renew_deadline = d;
        self
    }

    /// The period of the member's rounds (default 2 s).
    pub fn retry_period(mut self, d: Duration) -> Self {
        self.timing.retry_period = d;
        self
    }

    /// The field objects are sharded by (default [`ShardField::Uid`]).
    pub fn with_field(mut self, field: ShardField) -> Self {
        self.field = field;
        self
    }

    /// Points per member on the assignment ring (default
    /// [`DEFAULT_POINTS_PER_MEMBER`](super::DEFAULT_POINTS_PER_MEMBER)); every member of a group
    /// must use the same number.
    pub fn with_points_per_member(mut self, points: usize) -> Self {
        self.points = points.max(1);
        self
    }

    /// Server-side or client-side filtering (default [`Mode::ServerSide`]).
    pub fn with_mode(mut self, mode: Mode) -> Self {
        self.mode = mode;
        self
    }

    /// The member's identity.
    pub fn identity(&self) -> &str {
        &self.identity
    }

    /// The group.
    pub fn group(&self) -> &str {
        &self.group
    }

    /// The name of this member's Lease: `<group>-<identity>`.
    pub fn lease_name(&self) -> String {
        format!("{}-{}", self.group, self.identity)
    }
}
