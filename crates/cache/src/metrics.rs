//! Optional Prometheus metrics (the `metrics` feature) through kcr-metrics'
//! `cache` families; without the feature every gauge is a no-op.

/// A gauge that a named store or FIFO keeps up to date.
#[derive(Debug, Clone, Default)]
pub(crate) struct Gauge {
    #[cfg(feature = "metrics")]
    inner: Option<kcr_metrics::prometheus::IntGauge>,
}

impl Gauge {
    /// `cache_store_objects{name}` (no-op without a name).
    #[cfg_attr(not(feature = "metrics"), allow(unused_variables))]
    pub(crate) fn store_objects(name: Option<&str>) -> Self {
        Self {
            #[cfg(feature = "metrics")]
            inner: name.map(|n| kcr_metrics::cache::CacheMetrics::global().store_objects(n)),
        }
    }

    /// `cache_fifo_queued{name}` (no-op without a name).
    #[cfg_attr(not(feature = "metrics"), allow(unused_variables))]
    pub(crate) fn fifo_queued(name: Option<&str>) -> Self {
        Self {
            #[cfg(feature = "metrics")]
            inner: name.map(|n| kcr_metrics::cache::CacheMetrics::global().fifo_queued(n)),
        }
    }

    /// Whether anything is recorded.
    pub(crate) fn is_active(&self) -> bool {
        #[cfg(feature = "metrics")]
        return self.inner.is_some();
        #[cfg(not(feature = "metrics"))]
        false
    }

    /// Sets the gauge.
    #[cfg_attr(not(feature = "metrics"), allow(unused_variables))]
    pub(crate) fn set(&self, value: usize) {
        #[cfg(feature = "metrics")]
        if let Some(gauge) = &self.inner {
            gauge.set(i64::try_from(value).unwrap_or(i64::MAX));
        }
    }
}
