//! The metrics a queue records, or nothing at all.
//!
//! With the `metrics` feature, a queue built with a name records client-go's
//! workqueue metrics through a [`kcr_metrics::workqueue::MetricsProvider`];
//! without the feature every call here is an empty inline function and the
//! timestamps are zero-sized, so a queue pays nothing.

#[cfg(feature = "metrics")]
mod enabled {
    use std::sync::{OnceLock, Weak};

    use kcr_metrics::workqueue::{
        CounterMetric, DepthMetricWithPriority, DepthSource, GaugeMetric, HistogramMetric,
        MetricsProvider, SettableGaugeMetric,
    };
    use tokio::time::Instant;

    /// When an item entered a state (queued, processing), if metrics are
    /// recorded: a reading of the queue's [`Clock`].
    pub(crate) type Stamp = Option<u64>;

    /// What a queue's durations are timed with.
    enum Clock {
        /// The CPU's time-stamp counter through quanta (about 10 ns a read
        /// where the system clock takes about 25: three reads an item), or
        /// the monotonic clock where the CPU has no invariant counter. Its
        /// readings are raw ticks.
        Counter(&'static quanta::Clock),
        /// Tokio's clock, read as nanoseconds since `epoch`: the clock of a
        /// queue built while Tokio's clock is paused (a test), so that its
        /// durations follow `tokio::time::advance`.
        Tokio(Instant),
    }

    /// The counter clock, calibrated once per process (under a millisecond).
    fn counter() -> &'static quanta::Clock {
        static COUNTER: OnceLock<quanta::Clock> = OnceLock::new();
        COUNTER.get_or_init(quanta::Clock::new)
    }

    impl Clock {
        /// Tokio's clock if it is paused now, the counter otherwise. A
        /// running clock never reads the same twice in a row (nanoseconds,
        /// and a read takes longer than one); a paused one always does.
        fn new() -> Self {
            let now = Instant::now();
            if Instant::now() == now {
                Clock::Tokio(now)
            } else {
                Clock::Counter(counter())
            }
        }

        #[inline]
        fn now(&self) -> u64 {
            match self {
                Clock::Counter(clock) => clock.raw(),
                Clock::Tokio(epoch) => {
                    let since = Instant::now().saturating_duration_since(*epoch);
                    u64::try_from(since.as_nanos()).unwrap_or(u64::MAX)
                }
            }
        }

        /// The nanoseconds from `start` to `end` (two readings), 0 if `end`
        /// is not later.
        #[inline]
        fn nanos(&self, start: u64, end: u64) -> u64 {
            match self {
                Clock::Counter(clock) => clock.delta_as_nanos(start, end),
                Clock::Tokio(_) => end.saturating_sub(start),
            }
        }

        /// [`Clock::nanos`] in seconds.
        fn seconds(&self, start: u64, end: u64) -> f64 {
            // Exact below 2^53 ns (104 days), and one correctly rounded
            // division: 2.5 s reads 2.5, as `Duration::as_secs_f64` gives.
            self.nanos(start, end) as f64 / 1e9
        }
    }

    enum Depth {
        Plain(Box<dyn GaugeMetric>),
        Priority(Box<dyn DepthMetricWithPriority>),
        /// Read from the queue when the metrics are gathered: nothing to
        /// record on adds and gets.
        Sampled,
    }

    struct Recorders {
        clock: Clock,
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
                clock: Clock::new(),
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
            self.0.as_ref().map(|r| r.clock.now())
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
                    r.latency.observe_nanos(r.clock.nanos(added, now));
                }
            }
        }

        /// A worker called `done` at `now` (read before the queue's lock is
        /// taken: the work ended when the worker said so, not after a wait
        /// for the lock) for an item it got at `started`. Called after the
        /// lock is released.
        #[inline]
        pub(crate) fn done(&self, started: Stamp, now: Stamp) {
            if let (Some(r), Some(started), Some(now)) = (&self.0, started, now) {
                r.work_duration.observe_nanos(r.clock.nanos(started, now));
            }
        }

        /// A retry: every delayed add of a delaying queue (a zero delay
        /// included), an add with a non-zero delay of a priority queue.
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
                let now = r.clock.now();
                let (mut total, mut longest) = (0.0_f64, 0.0_f64);
                for started in started.flatten() {
                    let secs = r.clock.seconds(started, now);
                    total += secs;
                    longest = longest.max(secs);
                }
                r.unfinished.set(total);
                r.longest_running.set(longest);
            }
        }
    }

    #[cfg(test)]
    mod tests {
        use super::*;

        #[tokio::test(start_paused = true)]
        async fn a_paused_tokio_clock_should_time_the_queue() {
            let clock = Clock::new();
            assert!(matches!(clock, Clock::Tokio(_)));
            let start = clock.now();
            tokio::time::advance(std::time::Duration::from_millis(2500)).await;
            assert_eq!(clock.seconds(start, clock.now()), 2.5);
        }

        #[tokio::test]
        async fn a_running_clock_should_be_read_from_the_counter() {
            assert!(matches!(Clock::new(), Clock::Counter(_)));
        }

        /// The counter's seconds are the system clock's: the same stretch
        /// of work measured by both (the best of five tries, as the thread
        /// may be preempted between the two clocks' reads).
        #[test]
        fn the_counter_should_measure_seconds() {
            let clock = Clock::Counter(counter());
            let closest = (0..5)
                .map(|_| {
                    let system = Instant::now();
                    let start = clock.now();
                    let mut x = 0_u64;
                    for i in 0..2_000_000_u64 {
                        x = std::hint::black_box(x.wrapping_mul(31).wrapping_add(i));
                    }
                    let counted = clock.seconds(start, clock.now());
                    let system = system.elapsed().as_secs_f64();
                    (counted / system - 1.0).abs()
                })
                .fold(f64::INFINITY, f64::min);
            assert!(
                closest < 0.05,
                "counter and system clock differ by {closest}"
            );
            // Readings out of order count nothing.
            let later = clock.now();
            assert_eq!(clock.seconds(later + 1_000, later), 0.0);
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
        pub(crate) fn done(&self, _started: Stamp, _now: Stamp) {}
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
