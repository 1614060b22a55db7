//! Leader-election metrics, named as client-go's `tools/leaderelection`
//! (`metrics.go`) and controller-runtime register them.
//!
//! - `leader_election_master_status{name}`: gauge, `1` while this replica
//!   leads the lease `name`, `0` otherwise;
//! - `leader_election_slowpath_total{name}`: counter, renewals that had to
//!   read the lease first because the optimistic update failed.
//!
//! ```
//! use kcr_metrics::leader_election::{LeaderElectionMetrics, MetricsProvider, PrometheusProvider};
//!
//! # fn main() -> kcr_metrics::Result<()> {
//! let registry = prometheus::Registry::new();
//! let provider = PrometheusProvider::new(LeaderElectionMetrics::register(&registry)?);
//! provider.leader_on("my-operator");
//! let text = kcr_metrics::encode_text(&registry)?;
//! assert!(text.contains(r#"leader_election_master_status{name="my-operator"} 1"#));
//! provider.leader_off("my-operator");
//! let text = kcr_metrics::encode_text(&registry)?;
//! assert!(text.contains(r#"leader_election_master_status{name="my-operator"} 0"#));
//! # Ok(())
//! # }
//! ```

use std::sync::OnceLock;

use prometheus::{IntCounterVec, IntGaugeVec, Opts, Registry};

use crate::Result;

/// The leader-election families, registered against one registry.
///
/// Cheap to clone: clones share the same families.
#[derive(Debug, Clone)]
pub struct LeaderElectionMetrics {
    master_status: IntGaugeVec,
    slowpath_total: IntCounterVec,
}

impl LeaderElectionMetrics {
    /// Builds the families and registers them against `registry`.
    ///
    /// Registering twice against one registry fails with
    /// [`Error::Prometheus`](crate::Error::Prometheus) (`AlreadyReg`).
    pub fn register(registry: &Registry) -> Result<Self> {
        let master_status = IntGaugeVec::new(
            Opts::new(
                "leader_election_master_status",
                "1 while this replica leads the lease identified by 'name', 0 while it stands by; aggregate by name",
            ),
            &["name"],
        )?;
        let slowpath_total = IntCounterVec::new(
            Opts::new(
                "leader_election_slowpath_total",
                "Renewals of the lease identified by 'name' that had to read the lease first because the optimistic update failed",
            ),
            &["name"],
        )?;
        crate::registration::register!(registry, master_status, slowpath_total)?;
        Ok(Self {
            master_status,
            slowpath_total,
        })
    }

    /// The families registered once, lazily, against the default
    /// [`registry()`](crate::registry).
    ///
    /// If that registration fails (some other code registered families with
    /// these names first), the families still work but are not exported.
    pub fn global() -> &'static Self {
        static GLOBAL: OnceLock<LeaderElectionMetrics> = OnceLock::new();
        crate::registration::global(&GLOBAL, Self::register, "leader election")
    }

    /// The `leader_election_master_status` gauge vector.
    pub fn master_status(&self) -> &IntGaugeVec {
        &self.master_status
    }

    /// The `leader_election_slowpath_total` counter vector.
    pub fn slowpath_total(&self) -> &IntCounterVec {
        &self.slowpath_total
    }
}

/// What a leader elector reports (client-go's `leaderMetricsAdapter`).
pub trait MetricsProvider: Send + Sync {
    /// This replica became the leader of the lease `name`.
    fn leader_on(&self, name: &str);
    /// This replica stopped leading (or does not lead) the lease `name`.
    fn leader_off(&self, name: &str);
    /// A renewal of `name` took the slow path (read the lease first).
    fn slowpath_exercised(&self, name: &str);
}

/// A [`MetricsProvider`] that records nothing.
#[derive(Debug, Clone, Copy, Default)]
pub struct NoopProvider;

impl MetricsProvider for NoopProvider {
    fn leader_on(&self, _name: &str) {}
    fn leader_off(&self, _name: &str) {}
    fn slowpath_exercised(&self, _name: &str) {}
}

/// The prometheus implementation of [`MetricsProvider`].
#[derive(Debug, Clone)]
pub struct PrometheusProvider {
    metrics: LeaderElectionMetrics,
}

impl PrometheusProvider {
    /// A provider writing to `metrics`.
    pub fn new(metrics: LeaderElectionMetrics) -> Self {
        Self { metrics }
    }

    /// A provider writing to the families of the default registry.
    pub fn global() -> Self {
        Self::new(LeaderElectionMetrics::global().clone())
    }
}

impl MetricsProvider for PrometheusProvider {
    fn leader_on(&self, name: &str) {
        self.metrics.master_status.with_label_values(&[name]).set(1);
    }

    fn leader_off(&self, name: &str) {
        self.metrics.master_status.with_label_values(&[name]).set(0);
    }

    fn slowpath_exercised(&self, name: &str) {
        self.metrics.slowpath_total.with_label_values(&[name]).inc();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn master_status_should_follow_leader_on_and_off() -> Result<()> {
        let registry = Registry::new();
        let provider = PrometheusProvider::new(LeaderElectionMetrics::register(&registry)?);
        provider.leader_off("a");
        provider.leader_on("b");
        provider.slowpath_exercised("b");
        let text = crate::encode_text(&registry)?;
        assert!(
            text.contains(r#"leader_election_master_status{name="a"} 0"#),
            "{text}"
        );
        assert!(
            text.contains(r#"leader_election_master_status{name="b"} 1"#),
            "{text}"
        );
        assert!(
            text.contains(r#"leader_election_slowpath_total{name="b"} 1"#),
            "{text}"
        );
        Ok(())
    }

    #[test]
    fn registering_twice_against_one_registry_should_fail() -> Result<()> {
        let registry = Registry::new();
        let _first = LeaderElectionMetrics::register(&registry)?;
        assert!(LeaderElectionMetrics::register(&registry).is_err());
        Ok(())
    }

    #[test]
    fn global_families_should_be_exported_by_the_default_registry() -> Result<()> {
        PrometheusProvider::global().leader_on("global-test-lease");
        let text = crate::encode_text(crate::registry())?;
        assert!(text.contains(r#"leader_election_master_status{name="global-test-lease"} 1"#));
        Ok(())
    }
}
