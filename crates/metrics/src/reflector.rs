//! The reflector families (client-go's reflector metrics, plus kcr's error,
//! relist and decode counters), recorded by kcr-reflector.
//!
//! | family | type | labels |
//! | --- | --- | --- |
//! | `reflector_lists_total` | counter | `name` |
//! | `reflector_list_duration_seconds` | histogram | `name` |
//! | `reflector_items_per_list` | histogram | `name` |
//! | `reflector_watches_total` | counter | `name` |
//! | `reflector_short_watches_total` | counter | `name` |
//! | `reflector_watch_duration_seconds` | histogram | `name` |
//! | `reflector_items_per_watch` | histogram | `name` |
//! | `reflector_last_resource_version` | gauge | `name` |
//! | `reflector_watch_errors_total` | counter | `name`, `reason` |
//! | `reflector_relists_expired_total` | counter | `name` |
//! | `reflector_decode_errors_total` | counter | `name` |
//!
//! `name` is the reflector's name. client-go registered the durations and
//! item counts as summaries; the prometheus crate has no summary, so they are
//! histograms here ([`DURATION_BUCKETS`], [`ITEM_BUCKETS`]).
//! `reflector_last_resource_version` holds the last synced resource version
//! when it is a number (etcd's are), and is left alone otherwise.

use std::sync::OnceLock;

use prometheus::{
    Gauge, GaugeVec, Histogram, HistogramOpts, HistogramVec, IntCounter, IntCounterVec, Opts,
    Registry,
};

use crate::Result;

/// The subsystem (name prefix) of every reflector family.
pub const SUBSYSTEM: &str = "reflector";

/// Buckets of the duration histograms, in seconds (5 ms to about 20 min).
pub const DURATION_BUCKETS: [f64; 14] = [
    0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 60.0, 300.0, 1200.0,
];

/// Buckets of the item-count histograms (1 to 1,000,000 items).
pub const ITEM_BUCKETS: [f64; 13] = [
    1.0,
    10.0,
    50.0,
    100.0,
    500.0,
    1_000.0,
    5_000.0,
    10_000.0,
    50_000.0,
    100_000.0,
    250_000.0,
    500_000.0,
    1_000_000.0,
];

/// The reflector families, registered against one registry. Cheap to clone.
#[derive(Clone, Debug)]
pub struct ReflectorMetrics {
    lists: IntCounterVec,
    list_duration: HistogramVec,
    items_per_list: HistogramVec,
    watches: IntCounterVec,
    short_watches: IntCounterVec,
    watch_duration: HistogramVec,
    items_per_watch: HistogramVec,
    last_resource_version: GaugeVec,
    watch_errors: IntCounterVec,
    relists_expired: IntCounterVec,
    decode_errors: IntCounterVec,
}

fn opts(name: &str, help: &str) -> Opts {
    Opts::new(name, help).subsystem(SUBSYSTEM)
}

fn histogram_opts(name: &str, help: &str, buckets: &[f64]) -> HistogramOpts {
    HistogramOpts::new(name, help)
        .subsystem(SUBSYSTEM)
        .buckets(buckets.to_vec())
}

impl ReflectorMetrics {
    /// Builds the families and registers them against `registry`.
    ///
    /// Fails if they are already registered there: register once per
    /// registry and keep (clone) the handle.
    pub fn register(registry: &Registry) -> Result<Self> {
        const NAME: &[&str] = &["name"];
        let metrics = Self {
            lists: IntCounterVec::new(
                opts(
                    "lists_total",
                    "Total number of API lists done by the reflector",
                ),
                NAME,
            )?,
            list_duration: HistogramVec::new(
                histogram_opts(
                    "list_duration_seconds",
                    "How long in seconds an API list takes to return and decode",
                    &DURATION_BUCKETS,
                ),
                NAME,
            )?,
            items_per_list: HistogramVec::new(
                histogram_opts(
                    "items_per_list",
                    "How many items an API list returns to the reflector",
                    &ITEM_BUCKETS,
                ),
                NAME,
            )?,
            watches: IntCounterVec::new(
                opts(
                    "watches_total",
                    "Total number of API watches done by the reflector",
                ),
                NAME,
            )?,
            short_watches: IntCounterVec::new(
                opts(
                    "short_watches_total",
                    "Total number of short API watches done by the reflector",
                ),
                NAME,
            )?,
            watch_duration: HistogramVec::new(
                histogram_opts(
                    "watch_duration_seconds",
                    "How long in seconds an API watch takes to return and decode",
                    &DURATION_BUCKETS,
                ),
                NAME,
            )?,
            items_per_watch: HistogramVec::new(
                histogram_opts(
                    "items_per_watch",
                    "How many items an API watch returns to the reflector",
                    &ITEM_BUCKETS,
                ),
                NAME,
            )?,
            last_resource_version: GaugeVec::new(
                opts(
                    "last_resource_version",
                    "Last resource version seen for the reflector",
                ),
                NAME,
            )?,
            watch_errors: IntCounterVec::new(
                opts(
                    "watch_errors_total",
                    "Total number of list and watch errors seen by the reflector, by reason",
                ),
                &["name", "reason"],
            )?,
            relists_expired: IntCounterVec::new(
                opts(
                    "relists_expired_total",
                    "Total number of relists forced by an expired resource version (410 Gone)",
                ),
                NAME,
            )?,
            decode_errors: IntCounterVec::new(
                opts(
                    "decode_errors_total",
                    "Total number of malformed events, undecodable objects and unknown event types",
                ),
                NAME,
            )?,
        };
        crate::registration::register!(
            registry,
            metrics.lists,
            metrics.list_duration,
            metrics.items_per_list,
            metrics.watches,
            metrics.short_watches,
            metrics.watch_duration,
            metrics.items_per_watch,
            metrics.last_resource_version,
            metrics.watch_errors,
            metrics.relists_expired,
            metrics.decode_errors
        )?;
        Ok(metrics)
    }

    /// The families registered (once, lazily) against the default [`crate::registry()`].
    pub fn global() -> &'static Self {
        static GLOBAL: OnceLock<ReflectorMetrics> = OnceLock::new();
        crate::registration::global(&GLOBAL, Self::register, "reflector")
    }

    /// The metrics of the reflector called `name`. Resolve once, record
    /// through the returned handles.
    pub fn for_reflector(&self, name: &str) -> NamedReflectorMetrics {
        let label = [name];
        NamedReflectorMetrics {
            lists: self.lists.with_label_values(&label),
            list_duration: self.list_duration.with_label_values(&label),
            items_per_list: self.items_per_list.with_label_values(&label),
            watches: self.watches.with_label_values(&label),
            short_watches: self.short_watches.with_label_values(&label),
            watch_duration: self.watch_duration.with_label_values(&label),
            items_per_watch: self.items_per_watch.with_label_values(&label),
            last_resource_version: self.last_resource_version.with_label_values(&label),
            relists_expired: self.relists_expired.with_label_values(&label),
            decode_errors: self.decode_errors.with_label_values(&label),
            watch_errors: self.watch_errors.clone(),
            name: name.to_owned(),
        }
    }
}

/// The metrics of one named reflector. Cheap to clone.
#[derive(Clone, Debug)]
pub struct NamedReflectorMetrics {
    /// `reflector_lists_total`.
    pub lists: IntCounter,
    /// `reflector_list_duration_seconds`.
    pub list_duration: Histogram,
    /// `reflector_items_per_list`.
    pub items_per_list: Histogram,
    /// `reflector_watches_total`.
    pub watches: IntCounter,
    /// `reflector_short_watches_total`.
    pub short_watches: IntCounter,
    /// `reflector_watch_duration_seconds`.
    pub watch_duration: Histogram,
    /// `reflector_items_per_watch`.
    pub items_per_watch: Histogram,
    /// `reflector_last_resource_version`.
    pub last_resource_version: Gauge,
    /// `reflector_relists_expired_total`.
    pub relists_expired: IntCounter,
    /// `reflector_decode_errors_total`.
    pub decode_errors: IntCounter,
    watch_errors: IntCounterVec,
    name: String,
}

impl NamedReflectorMetrics {
    /// Counts one list or watch error of the given reason.
    pub fn watch_error(&self, reason: &str) {
        self.watch_errors
            .with_label_values(&[self.name.as_str(), reason])
            .inc();
    }

    /// Records the last synced resource version, when it is a number.
    pub fn set_last_resource_version(&self, resource_version: &str) {
        if let Ok(v) = resource_version.parse::<f64>() {
            self.last_resource_version.set(v);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reflector_families_should_render_with_their_client_go_names() -> Result<()> {
        let registry = Registry::new();
        let metrics = ReflectorMetrics::register(&registry)?.for_reflector("pods");
        metrics.lists.inc();
        metrics.watch_error("expired");
        metrics.set_last_resource_version("42");
        metrics.set_last_resource_version("not-a-number");
        let text = crate::encode_text(&registry)?;
        assert!(
            text.contains(r#"reflector_lists_total{name="pods"} 1"#),
            "{text}"
        );
        assert!(text.contains(r#"reflector_watch_errors_total{name="pods",reason="expired"} 1"#));
        assert!(text.contains(r#"reflector_last_resource_version{name="pods"} 42"#));
        Ok(())
    }
}
