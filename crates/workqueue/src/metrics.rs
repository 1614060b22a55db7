//! The metrics a queue records, or nothing at all.
//!
//! With the `metrics` feature, a queue built with a name records client-go's
//! workqueue metrics through a [`kcr_metrics::workqueue::MetricsProvider`];
//! without the feature every call here is an empty inline function and the
//! timestamps are zero-sized, so a queue pays nothing.

#[cfg(feature = "metrics")]
mod enabled {
    use std::sync::Weak;

    use kcr_metrics::workqueue::{
        CounterMetric, DepthMetricWithPriority, DepthSource, GaugeMetric, HistogramMetric,
        MetricsProvider, SettableGaugeMetric,
    };
    use tokio::time::Instant;

    /// When an item entered a state (queued, processing), if metrics are recorded.
    pub(crate) type Stamp = Option<Instant>;

    enum Depth {
        Plain(Box<dyn GaugeMetric>),
        Priority(Box<dyn DepthMetricWithPriority>),
        /// Read from the queue when the metrics are gathered: nothing to
        /// record on adds and gets.
        Sampled,
    }

    struct Recorders {
        depth: Depth,
        adds: Box<dyn CounterMetric>,
        latency: Box<dyn HistogramMetric>,
        work_duration: Box<dyn HistogramMetric>,
        unfinished: Box<dyn SettableGaugeMetric>,
        longest_running: Box<dyn SettableGaugeMetric>,
        retries: Box<dyn CounterMetric>,
    }

    /// The metrics of one queue; `None` inside when the queue has no name.
    pub(crate) struct Metrics(Option<Box<Recorders>>);

    impl Metrics {
        /// The metrics of the queue `name`; a priority queue records its
        /// depth per priority, another queue gives `depth` to read it from
        /// (or records it if the provider cannot read it).
        pub(crate) fn new(
            name: Option<&str>,
            provider: Option<&dyn MetricsProvider>,
            with_priority: bool,
            depth: Option<Weak<dyn DepthSource>>,
        ) -> Self {
            let Some(name) = name else {
                return Metrics(None);
            };
            let global;
            let provider = match provider {
                Some(provider) => provider,
                None => {
                    global = kcr_metrics::workqueue::PrometheusProvider::global();
                    &*global as &dyn MetricsProvider
                }
            };
            let depth = if with_priority {
                Depth::Priority(provider.new_depth_metric_with_priority(name))
            } else if depth.is_some_and(|source| provider.new_depth_source(name, source)) {
                Depth::Sampled
            } else {
                Depth::Plain(provider.new_depth_metric(name))
            };
            Metrics(Some(Box::new(Recorders {
                depth,
                adds: provider.new_adds_metric(name),
                latency: provider.new_latency_metric(name),
                work_duration: provider.new_work_duration_metric(name),
                unfinished: provider.new_unfinished_work_seconds_metric(name),
                longest_running: provider.new_longest_running_processor_seconds_metric(name),
                retries: provider.new_retries_metric(name),
            })))
        }

        #[inline]
        pub(crate) fn enabled(&self) -> bool {
            self.0.is_some()
        }

        /// Now, if the queue records metrics.
        #[inline]
        pub(crate) fn now(&self) -> Stamp {
            self.0.as_ref().map(|_| Instant::now())
        }

        /// An item became queued (`priority` for a priority queue).
        #[inline]
        pub(crate) fn add(&self, priority: i32) {
            if let Some(r) = &self.0 {
                r.adds.inc();
                match &r.depth {
                    Depth::Plain(d) => d.inc(),
                    Depth::Priority(d) => d.inc(priority),
                    Depth::Sampled => {}
                }
            }
        }

        /// The plain queue's depth, raised before its lock is taken for an
        /// add (so a worker taking the item at once never sees it below
        /// zero) and lowered again if the add queued nothing.
        #[inline]
        pub(crate) fn depth_inc(&self) {
            if let Some(r) = &self.0 {
                match &r.depth {
                    Depth::Plain(d) => d.inc(),
                    Depth::Priority(d) => d.inc(0),
                    Depth::Sampled => {}
                }
            }
        }

        /// See [`Metrics::depth_inc`].
        #[inline]
        pub(crate) fn depth_dec(&self) {
            if let Some(r) = &self.0 {
                match &r.depth {
                    Depth::Plain(d) => d.dec(),
                    Depth::Priority(d) => d.dec(0),
                    Depth::Sampled => {}
                }
            }
        }

        /// An add queued an item (the adds counter alone; see
        /// [`Metrics::depth_inc`]).
        #[inline]
        pub(crate) fn added(&self) {
            if let Some(r) = &self.0 {
                r.adds.inc();
            }
        }

        /// A queued item changed priority.
        #[inline]
        pub(crate) fn reprioritize(&self, from: i32, to: i32) {
            if let Some(r) = &self.0
                && let Depth::Priority(d) = &r.depth
            {
                d.dec(from);
                d.inc(to);
            }
        }

        /// A worker got, at `now` (from [`Metrics::now`]), an item queued
        /// since `added`. One clock read serves both the queue latency and
        /// the work duration's start; called after the queue's lock is
        /// released, so the histogram stays out of the critical section.
        #[inline]
        pub(crate) fn get(&self, priority: i32, added: Stamp, now: Stamp) {
            if let Some(r) = &self.0 {
                match &r.depth {
                    Depth::Plain(d) => d.dec(),
                    Depth::Priority(d) => d.dec(priority),
                    Depth::Sampled => {}
                }
                if let (Some(added), Some(now)) = (added, now) {
                    r.latency
                        .observe(now.saturating_duration_since(added).as_secs_f64());
                }
            }
        }

        /// A worker is done with an item it got at `started` (called after
        /// the queue's lock is released).
        #[inline]
        pub(crate) fn done(&self, started: Stamp) {
            if let (Some(r), Some(started)) = (&self.0, started) {
                r.work_duration.observe(started.elapsed().as_secs_f64());
            }
        }

        /// An add with a non-zero delay.
        #[inline]
        pub(crate) fn retry(&self) {
            if let Some(r) = &self.0 {
                r.retries.inc();
            }
        }

        /// Sets the unfinished-work and longest-running gauges from the start
        /// times of the items being processed.
        pub(crate) fn update_unfinished(&self, started: impl Iterator<Item = Stamp>) {
            if let Some(r) = &self.0 {
                let now = Instant::now();
                let (mut total, mut longest) = (0.0_f64, 0.0_f64);
                for started in started.flatten() {
                    let secs = now.saturating_duration_since(started).as_secs_f64();
                    total += secs;
                    longest = longest.max(secs);
                }
                r.unfinished.set(total);
                r.longest_running.set(longest);
            }
        }
    }
}

#[cfg(not(feature = "metrics"))]
mod disabled {
    /// Zero-sized: no timestamps without metrics.
    #[derive(Clone, Copy, Default)]
    pub(crate) struct Stamp;

    /// No metrics: every call is empty.
    pub(crate) struct Metrics;

    impl Metrics {
        #[inline(always)]
        pub(crate) fn enabled(&self) -> bool {
            false
        }
        #[inline(always)]
        pub(crate) fn now(&self) -> Stamp {
            Stamp
        }
        #[inline(always)]
        pub(crate) fn add(&self, _priority: i32) {}
        #[inline(always)]
        pub(crate) fn depth_inc(&self) {}
        #[inline(always)]
        pub(crate) fn depth_dec(&self) {}
        #[inline(always)]
        pub(crate) fn added(&self) {}
        #[inline(always)]
        pub(crate) fn reprioritize(&self, _from: i32, _to: i32) {}
        #[inline(always)]
        pub(crate) fn get(&self, _priority: i32, _added: Stamp, _now: Stamp) {}
        #[inline(always)]
        pub(crate) fn done(&self, _started: Stamp) {}
        #[inline(always)]
        pub(crate) fn retry(&self) {}
        #[inline(always)]
        pub(crate) fn update_unfinished(&self, _started: impl Iterator<Item = Stamp>) {}
    }
}

#[cfg(not(feature = "metrics"))]
pub(crate) use disabled::{Metrics, Stamp};
#[cfg(feature = "metrics")]
pub(crate) use enabled::{Metrics, Stamp};
