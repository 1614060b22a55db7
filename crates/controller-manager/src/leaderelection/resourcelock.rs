//! The election record and the lock interface (client-go
//! `tools/leaderelection/resourcelock/interface.go`).

use async_trait::async_trait;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::MicroTime;

use crate::Result;

/// The state of an election as stored in the lock object.
///
/// Timestamps are informational: electors never compare them with their own
/// clock. They only notice that the record *changed* (see
/// [`LeaderElector`](super::LeaderElector)).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct LeaderElectionRecord {
    /// The identity of the holder; empty when nobody holds the lock.
    pub holder_identity: String,
    /// How long, in seconds, other candidates wait without seeing the record
    /// change before they may take the lock.
    pub lease_duration_seconds: i32,
    /// When the current holder acquired the lock.
    pub acquire_time: Option<MicroTime>,
    /// When the current holder last renewed the lock.
    pub renew_time: Option<MicroTime>,
    /// How many times the lock changed hands.
    pub leader_transitions: i32,
    /// The strategy of coordinated leader election (`Lease.spec.strategy`,
    /// e.g. `OldestEmulationVersion`); empty when not set.
    pub strategy: String,
    /// The holder coordinated leader election prefers
    /// (`Lease.spec.preferredHolder`); empty when not set. A holder that
    /// sees another preferred holder is at the end of its term.
    pub preferred_holder: String,
}

/// A lock object on the API server (client-go `resourcelock.Interface`).
///
/// Implementations must make [`update`](ResourceLock::update) conditional on
/// the object version last read or written, so that a concurrent writer makes
/// it fail with a `409 Conflict` instead of being overwritten.
#[async_trait]
pub trait ResourceLock: Send + Sync {
    /// Reads the record. A missing lock object is an error for which
    /// [`Error::is_not_found`](crate::Error::is_not_found) is true.
    async fn get(&self) -> Result<LeaderElectionRecord>;

    /// Creates the lock object holding `record`.
    async fn create(&self, record: &LeaderElectionRecord) -> Result<()>;

    /// Replaces the record, conditional on the version last seen.
    async fn update(&self, record: &LeaderElectionRecord) -> Result<()>;

    /// The identity this replica writes as holder.
    fn identity(&self) -> &str;

    /// A human-readable name of the lock (`namespace/name`), for logs.
    fn describe(&self) -> String;

    /// Records an event about the lock object, such as `became leader`
    /// (client-go `RecordEvent`). Must not block; does nothing by default.
    fn record_event(&self, message: &str) {
        let _ = message;
    }
}
