//! Sharded-controller metrics (kcr's own; client-go and controller-runtime have no sharding).
//!
//! Every family is labelled by `group` (the sharded controller group) and describes this
//! replica's member of it:
//!
//! - `kcr_shard_member_info{group, identity}`: gauge, `1` for the member's identity;
//! - `kcr_shard_members{group}`: gauge, the live members this one sees (itself included);
//! - `kcr_shard_owned_ratio{group}`: gauge, the share of the 64-bit hash space whose keys this
//!   member reconciles, in `[0, 1]`;
//! - `kcr_shard_owned_objects{group, controller}`: gauge, the objects of a controller's
//!   primary type in the member's share, as of the last assignment change;
//! - `kcr_shard_handoffs_total{group, direction}`: counter, ranges `acquired` and `released`;
//! - `kcr_shard_handoff_duration_seconds{group, direction}`: histogram, from a range leaving the
//!   target to its last reconcile ending (`released`), or from its claim to its start
//!   (`acquired`).
//!
//! ```
//! use kcr_metrics::sharding::ShardMetrics;
//!
//! # fn main() -> kcr_metrics::Result<()> {
//! let registry = prometheus::Registry::new();
//! let metrics = ShardMetrics::register(&registry)?;
//! metrics.owned_ratio().with_label_values(&["workers"]).set(0.25);
//! let text = kcr_metrics::encode_text(&registry)?;
//! assert!(text.contains(r#"kcr_shard_owned_ratio{group="workers"} 0.25"#));
//! # Ok(())
//! # }
//! ```

use std::sync::OnceLock;

use prometheus::{
    GaugeVec, HistogramOpts, HistogramVec, IntCounterVec, IntGaugeVec, Opts, Registry,
};

use crate::Result;

/// The sharding families, registered against one registry. Cheap to clone.
#[derive(Debug, Clone)]
pub struct ShardMetrics {
    member_info: IntGaugeVec,
    members: IntGaugeVec,
    owned_ratio: GaugeVec,
    owned_objects: IntGaugeVec,
    handoffs_total: IntCounterVec,
    handoff_duration_seconds: HistogramVec,
}

impl ShardMetrics {
    /// Builds the families and registers them against `registry` (twice fails with
    /// `AlreadyReg`).
    pub fn register(registry: &Registry) -> Result<Self> {
        let member_info = IntGaugeVec::new(
            Opts::new(
                "kcr_shard_member_info",
                "1 for the identity of this replica's member of the sharded group",
            ),
            &["group", "identity"],
        )?;
        let members = IntGaugeVec::new(
            Opts::new(
                "kcr_shard_members",
                "Live members of the sharded group that this member sees, itself included",
            ),
            &["group"],
        )?;
        let owned_ratio = GaugeVec::new(
            Opts::new(
                "kcr_shard_owned_ratio",
                "Share of the 64-bit hash space whose keys this member reconciles",
            ),
            &["group"],
        )?;
        let owned_objects = IntGaugeVec::new(
            Opts::new(
                "kcr_shard_owned_objects",
                "Objects of the controller's primary type in this member's share, as of the last assignment change",
            ),
            &["group", "controller"],
        )?;
        let handoffs_total = IntCounterVec::new(
            Opts::new(
                "kcr_shard_handoffs_total",
                "Hash ranges this member acquired or released",
            ),
            &["group", "direction"],
        )?;
        let handoff_duration_seconds = HistogramVec::new(
            HistogramOpts::new(
                "kcr_shard_handoff_duration_seconds",
                "Time from a range's release to its last reconcile's end (released), or from its claim to its start (acquired)",
            )
            .buckets(prometheus::exponential_buckets(0.001, 2.0, 18)?),
            &["group", "direction"],
        )?;
        registry.register(Box::new(member_info.clone()))?;
        registry.register(Box::new(members.clone()))?;
        registry.register(Box::new(owned_ratio.clone()))?;
        registry.register(Box::new(owned_objects.clone()))?;
        registry.register(Box::new(handoffs_total.clone()))?;
        registry.register(Box::new(handoff_duration_seconds.clone()))?;
        Ok(Self {
            member_info,
            members,
            owned_ratio,
            owned_objects,
            handoffs_total,
            handoff_duration_seconds,
        })
    }

    /// The families registered once, lazily, against the default [`registry()`](crate::registry)
    /// (unexported if something else registered these names there first).
    pub fn global() -> &'static Self {
        static GLOBAL: OnceLock<ShardMetrics> = OnceLock::new();
        GLOBAL.get_or_init(|| match Self::register(crate::registry()) {
            Ok(metrics) => metrics,
            Err(_) => match Self::register(&Registry::new()) {
                Ok(metrics) => metrics,
                Err(e) => unreachable!("constant shard families are valid: {e}"),
            },
        })
    }

    /// `kcr_shard_member_info`.
    pub fn member_info(&self) -> &IntGaugeVec {
        &self.member_info
    }

    /// `kcr_shard_members`.
    pub fn members(&self) -> &IntGaugeVec {
        &self.members
    }

    /// `kcr_shard_owned_ratio`.
    pub fn owned_ratio(&self) -> &GaugeVec {
        &self.owned_ratio
    }

    /// `kcr_shard_owned_objects`.
    pub fn owned_objects(&self) -> &IntGaugeVec {
        &self.owned_objects
    }

    /// `kcr_shard_handoffs_total`.
    pub fn handoffs_total(&self) -> &IntCounterVec {
        &self.handoffs_total
    }

    /// `kcr_shard_handoff_duration_seconds`.
    pub fn handoff_duration_seconds(&self) -> &HistogramVec {
        &self.handoff_duration_seconds
    }
}
