//! Leader election (client-go `tools/leaderelection`), usable on its own.
//!
//! A [`LeaderElector`] runs against a [`ResourceLock`]; [`LeaseLock`] is the
//! lock on a `coordination.k8s.io/v1` `Lease`. See [`LeaderElector`] for the
//! guarantees and an example.

mod leader_elector;
mod leaselock;
mod resourcelock;

pub use leader_elector::{
    DEFAULT_LEASE_DURATION, DEFAULT_RENEW_DEADLINE, DEFAULT_RETRY_PERIOD, JITTER_FACTOR,
    LeaderElectionConfig, LeaderElector,
};
pub use leaselock::LeaseLock;
pub use resourcelock::{LeaderElectionRecord, ResourceLock};
