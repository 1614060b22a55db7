//! Controller metrics, named, labelled and bucketed as controller-runtime
//! registers them (`pkg/internal/controller/metrics`), plus
//! `controller_runtime_reconcile_timeouts_total`.
//!
//! | family | type | labels |
//! | --- | --- | --- |
//! | `controller_runtime_reconcile_total` | counter | `controller`, `result` (`success`, `error`, `requeue`, `requeue_after`) |
//! | `controller_runtime_reconcile_errors_total` | counter | `controller` |
//! | `controller_runtime_terminal_reconcile_errors_total` | counter | `controller` |
//! | `controller_runtime_reconcile_panics_total` | counter | `controller` |
//! | `controller_runtime_reconcile_timeouts_total` | counter | `controller` |
//! | `controller_runtime_reconcile_time_seconds` | histogram ([`RECONCILE_TIME_BUCKETS`]) | `controller` |
//! | `controller_runtime_max_concurrent_reconciles` | gauge | `controller` |
//! | `controller_runtime_active_workers` | gauge | `controller` |
//!
//! A controller resolves its label values once
//! ([`ControllerMetrics::controller`]) and then records through the returned
//! [`ControllerRecorder`], whose handles are plain atomics. As in
//! controller-runtime, resolving a controller sets every one of its series to
//! zero, so the families show up on `/metrics` before the first reconcile.
//!
//! ```
//! use kcr_metrics::controller::{ControllerMetrics, ReconcileResult};
//!
//! # fn main() -> kcr_metrics::Result<()> {
//! let registry = prometheus::Registry::new();
//! let recorder = ControllerMetrics::register(&registry)?.controller("foo");
//! recorder.set_max_concurrent_reconciles(2);
//! recorder.reconciled(ReconcileResult::Error, 0.012);
//! recorder.error();
//! let text = kcr_metrics::encode_text(&registry)?;
//! assert!(text.contains(r#"controller_runtime_reconcile_total{controller="foo",result="error"} 1"#));
//! assert!(text.contains(r#"controller_runtime_reconcile_total{controller="foo",result="success"} 0"#));
//! assert!(text.contains(r#"controller_runtime_reconcile_errors_total{controller="foo"} 1"#));
//! assert!(text.contains(r#"controller_runtime_max_concurrent_reconciles{controller="foo"} 2"#));
//! # Ok(())
//! # }
//! ```

use std::sync::OnceLock;

use prometheus::{
    Histogram, HistogramOpts, HistogramVec, IntCounter, IntCounterVec, IntGauge, IntGaugeVec, Opts,
    Registry,
};

use crate::Result;

/// The buckets of `controller_runtime_reconcile_time_seconds` (controller-runtime's).
pub const RECONCILE_TIME_BUCKETS: [f64; 40] = [
    0.005, 0.01, 0.025, 0.05, 0.1, 0.15, 0.2, 0.25, 0.3, 0.35, 0.4, 0.45, 0.5, 0.6, 0.7, 0.8, 0.9,
    1.0, 1.25, 1.5, 1.75, 2.0, 2.5, 3.0, 3.5, 4.0, 4.5, 5.0, 6.0, 7.0, 8.0, 9.0, 10.0, 15.0, 20.0,
    25.0, 30.0, 40.0, 50.0, 60.0,
];

/// The outcome of one reconcile: the `result` label of
/// `controller_runtime_reconcile_total`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ReconcileResult {
    /// The reconcile succeeded and asked for nothing more.
    Success,
    /// The reconcile failed (an error, a panic or a timeout).
    Error,
    /// The reconcile asked to be retried through the rate limiter.
    Requeue,
    /// The reconcile asked to be retried after a delay.
    RequeueAfter,
}

impl ReconcileResult {
    /// Every result, in label order.
    pub const ALL: [ReconcileResult; 4] = [
        ReconcileResult::Success,
        ReconcileResult::Error,
        ReconcileResult::Requeue,
        ReconcileResult::RequeueAfter,
    ];

    /// The label value (`success`, `error`, `requeue`, `requeue_after`).
    pub fn label(self) -> &'static str {
        match self {
            ReconcileResult::Success => "success",
            ReconcileResult::Error => "error",
            ReconcileResult::Requeue => "requeue",
            ReconcileResult::RequeueAfter => "requeue_after",
        }
    }
}

/// The controller families, registered against one registry.
///
/// Cheap to clone: clones share the same families.
#[derive(Debug, Clone)]
pub struct ControllerMetrics {
    reconcile_total: IntCounterVec,
    reconcile_errors: IntCounterVec,
    terminal_reconcile_errors: IntCounterVec,
    reconcile_panics: IntCounterVec,
    reconcile_timeouts: IntCounterVec,
    reconcile_time: HistogramVec,
    max_concurrent_reconciles: IntGaugeVec,
    active_workers: IntGaugeVec,
}

fn counter(name: &str, help: &str) -> Result<IntCounterVec> {
    Ok(IntCounterVec::new(Opts::new(name, help), &["controller"])?)
}

fn gauge(name: &str, help: &str) -> Result<IntGaugeVec> {
    Ok(IntGaugeVec::new(Opts::new(name, help), &["controller"])?)
}

impl ControllerMetrics {
    /// Builds the families and registers them against `registry`.
    ///
    /// Registering twice against one registry fails with
    /// [`Error::Prometheus`](crate::Error::Prometheus) (`AlreadyReg`).
    pub fn register(registry: &Registry) -> Result<Self> {
        let metrics = Self {
            reconcile_total: IntCounterVec::new(
                Opts::new(
                    "controller_runtime_reconcile_total",
                    "Total number of reconciliations per controller",
                ),
                &["controller", "result"],
            )?,
            reconcile_errors: counter(
                "controller_runtime_reconcile_errors_total",
                "Total number of reconciliation errors per controller",
            )?,
            terminal_reconcile_errors: counter(
                "controller_runtime_terminal_reconcile_errors_total",
                "Total number of terminal reconciliation errors per controller",
            )?,
            reconcile_panics: counter(
                "controller_runtime_reconcile_panics_total",
                "Total number of reconciliation panics per controller",
            )?,
            reconcile_timeouts: counter(
                "controller_runtime_reconcile_timeouts_total",
                "Total number of reconciliation timeouts per controller",
            )?,
            reconcile_time: HistogramVec::new(
                HistogramOpts::new(
                    "controller_runtime_reconcile_time_seconds",
                    "Length of time per reconciliation per controller",
                )
                .buckets(RECONCILE_TIME_BUCKETS.to_vec()),
                &["controller"],
            )?,
            max_concurrent_reconciles: gauge(
                "controller_runtime_max_concurrent_reconciles",
                "Maximum number of concurrent reconciles per controller",
            )?,
            active_workers: gauge(
                "controller_runtime_active_workers",
                "Number of currently used workers per controller",
            )?,
        };
        crate::registration::register!(
            registry,
            metrics.reconcile_total,
            metrics.reconcile_errors,
            metrics.terminal_reconcile_errors,
            metrics.reconcile_panics,
            metrics.reconcile_timeouts,
            metrics.reconcile_time,
            metrics.max_concurrent_reconciles,
            metrics.active_workers
        )?;
        Ok(metrics)
    }

    /// The families registered once, lazily, against the default
    /// [`registry()`](crate::registry).
    ///
    /// If that registration fails (some other code registered families with
    /// these names first), the families still work but are not exported.
    pub fn global() -> &'static Self {
        static GLOBAL: OnceLock<ControllerMetrics> = OnceLock::new();
        crate::registration::global(&GLOBAL, Self::register, "controller")
    }

    /// The series of the controller `name`, every one set to zero if new
    /// (controller-runtime's `initMetrics`).
    pub fn controller(&self, name: &str) -> ControllerRecorder {
        let total = |result: ReconcileResult| {
            self.reconcile_total
                .with_label_values(&[name, result.label()])
        };
        ControllerRecorder {
            success: total(ReconcileResult::Success),
            error: total(ReconcileResult::Error),
            requeue: total(ReconcileResult::Requeue),
            requeue_after: total(ReconcileResult::RequeueAfter),
            errors: self.reconcile_errors.with_label_values(&[name]),
            terminal_errors: self.terminal_reconcile_errors.with_label_values(&[name]),
            panics: self.reconcile_panics.with_label_values(&[name]),
            timeouts: self.reconcile_timeouts.with_label_values(&[name]),
            time: self.reconcile_time.with_label_values(&[name]),
            max_concurrent_reconciles: self.max_concurrent_reconciles.with_label_values(&[name]),
            // `with_label_values` creates each series at zero.
            active_workers: self.active_workers.with_label_values(&[name]),
        }
    }

    /// The `controller_runtime_reconcile_total` counter vector.
    pub fn reconcile_total(&self) -> &IntCounterVec {
        &self.reconcile_total
    }

    /// The `controller_runtime_reconcile_errors_total` counter vector.
    pub fn reconcile_errors(&self) -> &IntCounterVec {
        &self.reconcile_errors
    }

    /// The `controller_runtime_terminal_reconcile_errors_total` counter vector.
    pub fn terminal_reconcile_errors(&self) -> &IntCounterVec {
        &self.terminal_reconcile_errors
    }

    /// The `controller_runtime_reconcile_panics_total` counter vector.
    pub fn reconcile_panics(&self) -> &IntCounterVec {
        &self.reconcile_panics
    }

    /// The `controller_runtime_reconcile_timeouts_total` counter vector.
    pub fn reconcile_timeouts(&self) -> &IntCounterVec {
        &self.reconcile_timeouts
    }

    /// The `controller_runtime_reconcile_time_seconds` histogram vector.
    pub fn reconcile_time(&self) -> &HistogramVec {
        &self.reconcile_time
    }

    /// The `controller_runtime_max_concurrent_reconciles` gauge vector.
    pub fn max_concurrent_reconciles(&self) -> &IntGaugeVec {
        &self.max_concurrent_reconciles
    }

    /// The `controller_runtime_active_workers` gauge vector.
    pub fn active_workers(&self) -> &IntGaugeVec {
        &self.active_workers
    }
}

/// The series of one controller, resolved once; recording is a few atomic
/// operations. Cheap to clone.
#[derive(Debug, Clone)]
pub struct ControllerRecorder {
    success: IntCounter,
    error: IntCounter,
    requeue: IntCounter,
    requeue_after: IntCounter,
    errors: IntCounter,
    terminal_errors: IntCounter,
    panics: IntCounter,
    timeouts: IntCounter,
    time: Histogram,
    max_concurrent_reconciles: IntGauge,
    active_workers: IntGauge,
}

impl ControllerRecorder {
    /// One reconcile ended with `result` after `seconds`.
    pub fn reconciled(&self, result: ReconcileResult, seconds: f64) {
        match result {
            ReconcileResult::Success => self.success.inc(),
            ReconcileResult::Error => self.error.inc(),
            ReconcileResult::Requeue => self.requeue.inc(),
            ReconcileResult::RequeueAfter => self.requeue_after.inc(),
        }
        self.time.observe(seconds);
    }

    /// A reconcile failed (any failure: error, terminal error, panic, timeout).
    pub fn error(&self) {
        self.errors.inc();
    }

    /// A reconcile failed with a terminal error (not retried).
    pub fn terminal_error(&self) {
        self.terminal_errors.inc();
    }

    /// A reconcile panicked.
    pub fn panic(&self) {
        self.panics.inc();
    }

    /// A reconcile ran past its timeout and was cancelled.
    pub fn timeout(&self) {
        self.timeouts.inc();
    }

    /// Sets `controller_runtime_max_concurrent_reconciles`.
    pub fn set_max_concurrent_reconciles(&self, n: i64) {
        self.max_concurrent_reconciles.set(n);
    }

    /// A worker began a reconcile.
    pub fn worker_busy(&self) {
        self.active_workers.inc();
    }

    /// A worker ended a reconcile.
    pub fn worker_idle(&self) {
        self.active_workers.dec();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_new_controller_should_show_every_series_at_zero() -> Result<()> {
        let registry = Registry::new();
        let _recorder = ControllerMetrics::register(&registry)?.controller("c");
        let text = crate::encode_text(&registry)?;
        for result in ReconcileResult::ALL {
            let line = format!(
                r#"controller_runtime_reconcile_total{{controller="c",result="{}"}} 0"#,
                result.label()
            );
            assert!(text.contains(&line), "{line} missing from\n{text}");
        }
        for family in [
            "controller_runtime_reconcile_errors_total",
            "controller_runtime_terminal_reconcile_errors_total",
            "controller_runtime_reconcile_panics_total",
            "controller_runtime_reconcile_timeouts_total",
            "controller_runtime_max_concurrent_reconciles",
            "controller_runtime_active_workers",
        ] {
            let line = format!(r#"{family}{{controller="c"}} 0"#);
            assert!(text.contains(&line), "{line} missing from\n{text}");
        }
        assert!(text.contains(
            r#"controller_runtime_reconcile_time_seconds_bucket{controller="c",le="0.005"} 0"#
        ));
        assert!(text.contains(
            r#"controller_runtime_reconcile_time_seconds_bucket{controller="c",le="60"} 0"#
        ));
        Ok(())
    }

    #[test]
    fn recording_should_move_the_matching_series() -> Result<()> {
        let registry = Registry::new();
        let recorder = ControllerMetrics::register(&registry)?.controller("c");
        recorder.reconciled(ReconcileResult::RequeueAfter, 0.2);
        recorder.reconciled(ReconcileResult::Requeue, 0.2);
        recorder.error();
        recorder.terminal_error();
        recorder.panic();
        recorder.timeout();
        recorder.worker_busy();
        recorder.worker_busy();
        recorder.worker_idle();
        let text = crate::encode_text(&registry)?;
        for line in [
            r#"controller_runtime_reconcile_total{controller="c",result="requeue_after"} 1"#,
            r#"controller_runtime_reconcile_total{controller="c",result="requeue"} 1"#,
            r#"controller_runtime_reconcile_errors_total{controller="c"} 1"#,
            r#"controller_runtime_terminal_reconcile_errors_total{controller="c"} 1"#,
            r#"controller_runtime_reconcile_panics_total{controller="c"} 1"#,
            r#"controller_runtime_reconcile_timeouts_total{controller="c"} 1"#,
            r#"controller_runtime_active_workers{controller="c"} 1"#,
            r#"controller_runtime_reconcile_time_seconds_count{controller="c"} 2"#,
            r#"controller_runtime_reconcile_time_seconds_bucket{controller="c",le="0.15"} 0"#,
            r#"controller_runtime_reconcile_time_seconds_bucket{controller="c",le="0.2"} 2"#,
        ] {
            assert!(text.contains(line), "{line} missing from\n{text}");
        }
        Ok(())
    }

    #[test]
    fn registering_twice_against_one_registry_should_fail() -> Result<()> {
        let registry = Registry::new();
        let _first = ControllerMetrics::register(&registry)?;
        assert!(ControllerMetrics::register(&registry).is_err());
        Ok(())
    }
}
