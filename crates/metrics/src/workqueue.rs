//! The work queue families, as controller-runtime registers client-go's
//! workqueue metrics, and the [`MetricsProvider`] that kcr-workqueue records
//! through.
//!
//! | family | type | labels |
//! | --- | --- | --- |
//! | `workqueue_depth` | gauge | `name`, `controller`, `priority` |
//! | `workqueue_adds_total` | counter | `name`, `controller` |
//! | `workqueue_queue_duration_seconds` | histogram | `name`, `controller` |
//! | `workqueue_work_duration_seconds` | histogram | `name`, `controller` |
//! | `workqueue_unfinished_work_seconds` | gauge | `name`, `controller` |
//! | `workqueue_longest_running_processor_seconds` | gauge | `name`, `controller` |
//! | `workqueue_retries_total` | counter | `name`, `controller` |
//!
//! `name` and `controller` both carry the queue's name; `priority` is empty for
//! queues without priorities. The prometheus provider reads the depth of such
//! a queue when the families are gathered ([`DepthSource`]); a priority queue
//! raises and lowers a gauge per priority. The histograms have the buckets
//! 1e-8 s × 10^k for k = 0..12 (10 ns up to 1000 s).

use std::sync::{Arc, OnceLock, PoisonError, RwLock, Weak};

use prometheus::core::{Collector, Desc};
use prometheus::proto::{self, Metric, MetricFamily, MetricType};
use prometheus::{
    Gauge, GaugeVec, IntCounter, IntCounterVec, IntGauge, IntGaugeVec, Opts, Registry,
};

use crate::Result;
use crate::exposition::{label_pair, metric_family, sort_by_labels};
use crate::histogram::HistogramVec;

/// The subsystem (name prefix) of every work queue family.
pub const SUBSYSTEM: &str = "workqueue";

/// Buckets of the two duration histograms: 1e-8 s × 10^k, 12 buckets up to 1e3 s.
pub const DURATION_BUCKETS: [f64; 12] = [
    1e-8, 1e-7, 1e-6, 1e-5, 1e-4, 1e-3, 1e-2, 1e-1, 1e0, 1e1, 1e2, 1e3,
];

/// A gauge that goes up and down by one (the queue depth).
pub trait GaugeMetric: Send + Sync {
    /// Adds one.
    fn inc(&self);
    /// Subtracts one.
    fn dec(&self);
}

/// A gauge that is set to a value (unfinished work, longest running processor).
pub trait SettableGaugeMetric: Send + Sync {
    /// Sets the value.
    fn set(&self, value: f64);
}

/// A counter (adds, retries).
pub trait CounterMetric: Send + Sync {
    /// Adds one.
    fn inc(&self);
}

/// A histogram (queue duration, work duration), observed in seconds.
pub trait HistogramMetric: Send + Sync {
    /// Records one observation.
    fn observe(&self, value: f64);

    /// Records a duration of `nanos` whole nanoseconds (the work queue
    /// times with an integer clock). The default observes it in seconds; a
    /// histogram may count it without floating point.
    fn observe_nanos(&self, nanos: u64) {
        // Exact below 2^53 ns (104 days).
        self.observe(nanos as f64 / 1e9);
    }
}

/// A depth gauge split by item priority (controller-runtime's priority queue).
pub trait DepthMetricWithPriority: Send + Sync {
    /// Adds one to the depth of `priority`.
    fn inc(&self, priority: i32);
    /// Subtracts one from the depth of `priority`.
    fn dec(&self, priority: i32);
}

/// A queue whose depth can be read when the metrics are gathered.
pub trait DepthSource: Send + Sync {
    /// How many items wait in the queue now.
    fn depth(&self) -> i64;
}

/// Makes the metrics of one named queue (client-go's `MetricsProvider`, plus
/// controller-runtime's `NewDepthMetricWithPriority`).
///
/// kcr-workqueue calls it once per named queue, then only the returned
/// metrics on its hot paths.
pub trait MetricsProvider: Send + Sync {
    /// The depth gauge of a queue without priorities.
    fn new_depth_metric(&self, name: &str) -> Box<dyn GaugeMetric>;
    /// The depth gauge of a priority queue.
    fn new_depth_metric_with_priority(&self, name: &str) -> Box<dyn DepthMetricWithPriority>;
    /// The adds counter.
    fn new_adds_metric(&self, name: &str) -> Box<dyn CounterMetric>;
    /// How long an item waits in the queue before a worker gets it.
    fn new_latency_metric(&self, name: &str) -> Box<dyn HistogramMetric>;
    /// How long a worker holds an item (from `get` to `done`).
    fn new_work_duration_metric(&self, name: &str) -> Box<dyn HistogramMetric>;
    /// Seconds of work in progress not yet observed by the work duration.
    fn new_unfinished_work_seconds_metric(&self, name: &str) -> Box<dyn SettableGaugeMetric>;
    /// Seconds the longest running processor has been running.
    fn new_longest_running_processor_seconds_metric(
        &self,
        name: &str,
    ) -> Box<dyn SettableGaugeMetric>;
    /// The retries counter: every delayed or rate-limited add before shut
    /// down (the priority queue counts only those with a non-zero delay).
    fn new_retries_metric(&self, name: &str) -> Box<dyn CounterMetric>;
    /// Reads the depth of the queue `name` (one without priorities) from
    /// `source` whenever the metrics are gathered, instead of a gauge that
    /// the queue raises on every add and lowers on every get (two atomic
    /// writes that producers and workers on different cores contend for).
    /// Returns false if the provider cannot; the queue then records into
    /// [`MetricsProvider::new_depth_metric`]. The default cannot.
    fn new_depth_source(&self, name: &str, source: Weak<dyn DepthSource>) -> bool {
        let _ = (name, source);
        false
    }
}

/// The work queue families, registered against one registry. Cheap to clone.
#[derive(Clone, Debug)]
pub struct WorkqueueMetrics {
    depth: DepthFamily,
    adds: IntCounterVec,
    latency: HistogramVec,
    work_duration: HistogramVec,
    unfinished: GaugeVec,
    longest_running: GaugeVec,
    retries: IntCounterVec,
}

fn opts(name: &str, help: &str) -> Opts {
    Opts::new(name, help).subsystem(SUBSYSTEM)
}

/// A duration histogram: observed on every `get` and `done`, so it is
/// kcr-metrics' own lighter histogram (see `histogram.rs`).
fn duration_histogram(name: &str, help: &str) -> Result<HistogramVec> {
    HistogramVec::new(
        &format!("{SUBSYSTEM}_{name}"),
        help,
        &["name", "controller"],
        &DURATION_BUCKETS,
    )
}

impl WorkqueueMetrics {
    /// Builds the families and registers them against `registry`.
    ///
    /// Fails if they are already registered there: register once per
    /// registry and keep (clone) the handle.
    pub fn register(registry: &Registry) -> Result<Self> {
        const NAME: &[&str] = &["name", "controller"];
        let metrics = Self {
            depth: DepthFamily {
                gauges: IntGaugeVec::new(
                    opts(
                        "depth",
                        "Current depth of the work queue, by queue and priority",
                    ),
                    &["name", "controller", "priority"],
                )?,
                sources: Arc::default(),
            },
            adds: IntCounterVec::new(
                opts(
                    "adds_total",
                    "Total number of adds handled by the work queue",
                ),
                NAME,
            )?,
            latency: duration_histogram(
                "queue_duration_seconds",
                "How long in seconds an item stays in the work queue before a worker requests it",
            )?,
            work_duration: duration_histogram(
                "work_duration_seconds",
                "How long in seconds processing an item from the work queue takes",
            )?,
            unfinished: GaugeVec::new(
                opts(
                    "unfinished_work_seconds",
                    "How many seconds of work are in progress and not yet observed by work_duration; \
                     large values indicate stuck workers, and the rate at which it grows tells how many",
                ),
                NAME,
            )?,
            longest_running: GaugeVec::new(
                opts(
                    "longest_running_processor_seconds",
                    "How many seconds the longest running processor of the work queue has been running",
                ),
                NAME,
            )?,
            retries: IntCounterVec::new(
                opts(
                    "retries_total",
                    "Total number of retries handled by the work queue",
                ),
                NAME,
            )?,
        };
        crate::registration::register!(
            registry,
            metrics.depth,
            metrics.adds,
            metrics.latency,
            metrics.work_duration,
            metrics.unfinished,
            metrics.longest_running,
            metrics.retries
        )?;
        Ok(metrics)
    }

    /// The families registered (once, lazily) against the default [`crate::registry()`].
    pub fn global() -> &'static Self {
        static GLOBAL: OnceLock<WorkqueueMetrics> = OnceLock::new();
        crate::registration::global(&GLOBAL, Self::register, "work queue")
    }
}

impl GaugeMetric for IntGauge {
    fn inc(&self) {
        IntGauge::inc(self);
    }
    fn dec(&self) {
        IntGauge::dec(self);
    }
}

impl SettableGaugeMetric for Gauge {
    fn set(&self, value: f64) {
        Gauge::set(self, value);
    }
}

impl CounterMetric for IntCounter {
    fn inc(&self) {
        IntCounter::inc(self);
    }
}

impl HistogramMetric for prometheus::Histogram {
    fn observe(&self, value: f64) {
        prometheus::Histogram::observe(self, value);
    }
}

/// The `workqueue_depth` family: gauges that queues raise and lower, and
/// queues read when the family is gathered ([`DepthSource`]).
#[derive(Clone)]
struct DepthFamily {
    gauges: IntGaugeVec,
    sources: Arc<RwLock<Vec<Sampled>>>,
}

/// The queues of one name whose depth is read at gathering. A dropped queue
/// holds no items: it counts nothing, and goes at the next registration.
struct Sampled {
    name: String,
    queues: Vec<Weak<dyn DepthSource>>,
}

impl std::fmt::Debug for DepthFamily {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DepthFamily").finish_non_exhaustive()
    }
}

impl Collector for DepthFamily {
    fn desc(&self) -> Vec<&Desc> {
        self.gauges.desc()
    }

    fn collect(&self) -> Vec<MetricFamily> {
        let mut families = self.gauges.collect();
        let sources = self.sources.read().unwrap_or_else(PoisonError::into_inner);
        if sources.is_empty() {
            return families;
        }
        // One value per queue name: queues that share a name add up, as
        // they would in one gauge.
        let depths = sources.iter().map(|sampled| {
            let depth: i64 = sampled
                .queues
                .iter()
                .filter_map(Weak::upgrade)
                .map(|queue| queue.depth())
                .sum();
            (sampled.name.as_str(), depth)
        });
        if families.is_empty()
            && let Some(desc) = self.gauges.desc().first()
        {
            families.push(metric_family(desc, MetricType::GAUGE, Vec::new()));
        }
        let Some(family) = families.first_mut() else {
            return families;
        };
        let metrics = family.mut_metric();
        for (name, depth) in depths {
            // Labels in name order, as prometheus exposes them.
            let labels = [
                label_pair("controller", name),
                label_pair("name", name),
                label_pair("priority", ""),
            ];
            // Added to a gauge with the same labels, if a queue records
            // into one.
            let at = match metrics.iter().position(|m| m.get_label() == labels) {
                Some(at) => at,
                None => {
                    let mut metric = Metric::default();
                    metric.set_label(labels.to_vec());
                    metrics.push(metric);
                    metrics.len() - 1
                }
            };
            if let Some(metric) = metrics.get_mut(at) {
                let mut gauge = proto::Gauge::default();
                gauge.set_value(metric.get_gauge().get_value() + depth as f64);
                metric.set_gauge(gauge);
            }
        }
        sort_by_labels(metrics);
        families
    }
}

/// How many priorities a priority depth gauge keeps at hand.
const PRIORITY_CACHE_LEN: usize = 32;

struct PriorityDepth {
    vec: IntGaugeVec,
    name: Arc<str>,
    /// The gauge of each priority seen so far: formatting the priority and
    /// looking up the label set on every add and get cost more than the
    /// queue's own work. Few distinct priorities are used, so a short vector
    /// searched linearly under a read lock is enough; past
    /// [`PRIORITY_CACHE_LEN`] priorities, the others are looked up each time.
    cache: RwLock<Vec<(i32, IntGauge)>>,
}

impl PriorityDepth {
    fn new(vec: IntGaugeVec, name: &str) -> Self {
        Self {
            vec,
            name: name.into(),
            cache: RwLock::new(Vec::new()),
        }
    }

    fn with_gauge(&self, priority: i32, f: impl FnOnce(&IntGauge)) {
        {
            let cache = self.cache.read().unwrap_or_else(PoisonError::into_inner);
            if let Some((_, gauge)) = cache.iter().find(|(p, _)| *p == priority) {
                f(gauge);
                return;
            }
        }
        let label = priority.to_string();
        let gauge = self
            .vec
            .with_label_values(&[&*self.name, &*self.name, label.as_str()]);
        f(&gauge);
        let mut cache = self.cache.write().unwrap_or_else(PoisonError::into_inner);
        if cache.len() < PRIORITY_CACHE_LEN && !cache.iter().any(|(p, _)| *p == priority) {
            cache.push((priority, gauge));
        }
    }
}

impl DepthMetricWithPriority for PriorityDepth {
    fn inc(&self, priority: i32) {
        self.with_gauge(priority, IntGauge::inc);
    }
    fn dec(&self, priority: i32) {
        self.with_gauge(priority, IntGauge::dec);
    }
}

/// The prometheus [`MetricsProvider`]: every queue named `n` records into the
/// families with labels `name="n"`, `controller="n"`.
#[derive(Clone, Debug)]
pub struct PrometheusProvider {
    metrics: WorkqueueMetrics,
}

impl PrometheusProvider {
    /// A provider recording into `metrics` (see [`WorkqueueMetrics::register`]
    /// for a registry of your own).
    pub fn new(metrics: WorkqueueMetrics) -> Self {
        Self { metrics }
    }

    /// The provider of the default registry, shared by the whole process.
    pub fn global() -> Arc<PrometheusProvider> {
        static GLOBAL: OnceLock<Arc<PrometheusProvider>> = OnceLock::new();
        GLOBAL
            .get_or_init(|| Arc::new(PrometheusProvider::new(WorkqueueMetrics::global().clone())))
            .clone()
    }
}

impl MetricsProvider for PrometheusProvider {
    fn new_depth_metric(&self, name: &str) -> Box<dyn GaugeMetric> {
        // No priority: the label is empty, as controller-runtime does.
        Box::new(
            self.metrics
                .depth
                .gauges
                .with_label_values(&[name, name, ""]),
        )
    }

    fn new_depth_metric_with_priority(&self, name: &str) -> Box<dyn DepthMetricWithPriority> {
        Box::new(PriorityDepth::new(self.metrics.depth.gauges.clone(), name))
    }

    fn new_adds_metric(&self, name: &str) -> Box<dyn CounterMetric> {
        Box::new(self.metrics.adds.with_label_values(&[name, name]))
    }

    fn new_latency_metric(&self, name: &str) -> Box<dyn HistogramMetric> {
        Box::new(self.metrics.latency.with_label_values(&[name, name]))
    }

    fn new_work_duration_metric(&self, name: &str) -> Box<dyn HistogramMetric> {
        Box::new(self.metrics.work_duration.with_label_values(&[name, name]))
    }

    fn new_unfinished_work_seconds_metric(&self, name: &str) -> Box<dyn SettableGaugeMetric> {
        Box::new(self.metrics.unfinished.with_label_values(&[name, name]))
    }

    fn new_longest_running_processor_seconds_metric(
        &self,
        name: &str,
    ) -> Box<dyn SettableGaugeMetric> {
        Box::new(
            self.metrics
                .longest_running
                .with_label_values(&[name, name]),
        )
    }

    fn new_retries_metric(&self, name: &str) -> Box<dyn CounterMetric> {
        Box::new(self.metrics.retries.with_label_values(&[name, name]))
    }

    fn new_depth_source(&self, name: &str, source: Weak<dyn DepthSource>) -> bool {
        let mut sources = self
            .metrics
            .depth
            .sources
            .write()
            .unwrap_or_else(PoisonError::into_inner);
        match sources.iter_mut().find(|sampled| sampled.name == name) {
            Some(sampled) => {
                sampled.queues.retain(|queue| queue.strong_count() > 0);
                sampled.queues.push(source);
            }
            None => sources.push(Sampled {
                name: name.to_owned(),
                queues: vec![source],
            }),
        }
        true
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicI64, Ordering::Relaxed};

    use super::*;

    fn text(registry: &Registry) -> String {
        crate::encode_text(registry).unwrap_or_default()
    }

    #[test]
    fn families_should_carry_controller_runtime_names_labels_and_buckets() -> Result<()> {
        let registry = Registry::new();
        let provider = PrometheusProvider::new(WorkqueueMetrics::register(&registry)?);
        provider.new_depth_metric("q").inc();
        provider.new_depth_metric_with_priority("p").inc(10);
        provider.new_adds_metric("q").inc();
        provider.new_latency_metric("q").observe(0.5);
        provider.new_work_duration_metric("q").observe(2e-9);
        provider.new_unfinished_work_seconds_metric("q").set(1.5);
        provider
            .new_longest_running_processor_seconds_metric("q")
            .set(0.25);
        provider.new_retries_metric("q").inc();
        let text = text(&registry);
        for line in [
            r#"workqueue_depth{controller="q",name="q",priority=""} 1"#,
            r#"workqueue_depth{controller="p",name="p",priority="10"} 1"#,
            r#"workqueue_adds_total{controller="q",name="q"} 1"#,
            r#"workqueue_queue_duration_seconds_bucket{controller="q",name="q",le="0.1"} 0"#,
            r#"workqueue_queue_duration_seconds_bucket{controller="q",name="q",le="1"} 1"#,
            r#"workqueue_queue_duration_seconds_count{controller="q",name="q"} 1"#,
            r#"workqueue_work_duration_seconds_bucket{controller="q",name="q",le="0.00000001"} 1"#,
            r#"workqueue_work_duration_seconds_bucket{controller="q",name="q",le="1000"} 1"#,
            r#"workqueue_unfinished_work_seconds{controller="q",name="q"} 1.5"#,
            r#"workqueue_longest_running_processor_seconds{controller="q",name="q"} 0.25"#,
            r#"workqueue_retries_total{controller="q",name="q"} 1"#,
            "# TYPE workqueue_depth gauge",
            "# TYPE workqueue_adds_total counter",
            "# TYPE workqueue_queue_duration_seconds histogram",
            "# TYPE workqueue_work_duration_seconds histogram",
            "# TYPE workqueue_unfinished_work_seconds gauge",
            "# TYPE workqueue_longest_running_processor_seconds gauge",
            "# TYPE workqueue_retries_total counter",
        ] {
            assert!(text.contains(line), "missing {line:?} in\n{text}");
        }
        let buckets = text
            .lines()
            .filter(|l| l.starts_with(r#"workqueue_work_duration_seconds_bucket{controller="q""#))
            .count();
        assert_eq!(buckets, 13, "12 buckets plus +Inf");
        Ok(())
    }

    #[test]
    fn a_priority_depth_should_keep_each_priority_in_its_own_label_set() -> Result<()> {
        let registry = Registry::new();
        let provider = PrometheusProvider::new(WorkqueueMetrics::register(&registry)?);
        let depth = provider.new_depth_metric_with_priority("p");
        // More priorities than the gauge keeps at hand: the others still count.
        let many = i32::try_from(PRIORITY_CACHE_LEN).unwrap_or(i32::MAX) + 8;
        for priority in -many..many {
            depth.inc(priority);
            depth.inc(priority);
        }
        for priority in -many..many {
            depth.dec(priority);
        }
        depth.dec(7);
        let text = text(&registry);
        assert!(text.contains(r#"workqueue_depth{controller="p",name="p",priority="7"} 0"#));
        assert!(text.contains(r#"workqueue_depth{controller="p",name="p",priority="0"} 1"#));
        assert!(text.contains(&format!(
            r#"workqueue_depth{{controller="p",name="p",priority="{}"}} 1"#,
            many - 1
        )));
        assert!(text.contains(&format!(
            r#"workqueue_depth{{controller="p",name="p",priority="{}"}} 1"#,
            -many
        )));
        Ok(())
    }

    struct Depth(AtomicI64);

    impl DepthSource for Depth {
        fn depth(&self) -> i64 {
            self.0.load(Relaxed)
        }
    }

    fn depth_lines(registry: &Registry, name: &str) -> Vec<String> {
        let prefix = format!(r#"workqueue_depth{{controller="{name}""#);
        text(registry)
            .lines()
            .filter(|l| l.starts_with(&prefix))
            .map(str::to_owned)
            .collect()
    }

    #[test]
    fn a_depth_source_should_be_read_at_each_gathering() -> Result<()> {
        let registry = Registry::new();
        let provider = PrometheusProvider::new(WorkqueueMetrics::register(&registry)?);
        let line = |depth: i64| {
            format!(r#"workqueue_depth{{controller="s",name="s",priority=""}} {depth}"#)
        };
        let a = Arc::new(Depth(AtomicI64::new(3)));
        let source: Weak<dyn DepthSource> = Arc::downgrade(&a) as Weak<dyn DepthSource>;
        assert!(provider.new_depth_source("s", source));
        assert_eq!(depth_lines(&registry, "s"), [line(3)]);
        a.0.store(5, Relaxed);
        assert_eq!(depth_lines(&registry, "s"), [line(5)]);
        // Another queue of the same name, and a gauge with the same labels,
        // add up into one line.
        let b = Arc::new(Depth(AtomicI64::new(2)));
        let source: Weak<dyn DepthSource> = Arc::downgrade(&b) as Weak<dyn DepthSource>;
        assert!(provider.new_depth_source("s", source));
        provider.new_depth_metric("s").inc();
        assert_eq!(depth_lines(&registry, "s"), [line(8)]);
        // A dropped queue holds nothing.
        drop(a);
        b.0.store(0, Relaxed);
        assert_eq!(depth_lines(&registry, "s"), [line(1)]);
        // Other queues keep their own lines, in label order.
        let c = Arc::new(Depth(AtomicI64::new(4)));
        let source: Weak<dyn DepthSource> = Arc::downgrade(&c) as Weak<dyn DepthSource>;
        assert!(provider.new_depth_source("a", source));
        let all: Vec<String> = text(&registry)
            .lines()
            .filter(|l| l.starts_with("workqueue_depth{"))
            .map(str::to_owned)
            .collect();
        assert_eq!(
            all,
            [
                r#"workqueue_depth{controller="a",name="a",priority=""} 4"#.to_owned(),
                line(1)
            ]
        );
        Ok(())
    }

    #[test]
    fn registering_twice_against_one_registry_should_fail() -> Result<()> {
        let registry = Registry::new();
        WorkqueueMetrics::register(&registry)?;
        assert!(WorkqueueMetrics::register(&registry).is_err());
        Ok(())
    }

    #[test]
    fn global_families_should_live_in_the_default_registry() {
        PrometheusProvider::global()
            .new_adds_metric("global-test")
            .inc();
        assert!(
            text(crate::registry())
                .contains(r#"workqueue_adds_total{controller="global-test",name="global-test"} 1"#)
        );
    }
}
