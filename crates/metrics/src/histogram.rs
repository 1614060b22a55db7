//! A histogram family built for hot paths (the work queue's two duration
//! histograms, observed on every `get` and `done`).
//!
//! An observation is two additions, its bucket and the sum (kept in
//! nanoseconds), to the observing thread's own stripe of counters: a plain
//! load and store, no atomic read-modify-write (see [`crate::stripes`]).
//! prometheus' own histogram makes four atomic additions, two of them
//! ordered, so that a scrape never sees an observation half recorded; here a
//! scrape running at that very moment may count an observation in its
//! bucket before its duration is in the sum. The exposition is the same:
//! cumulative buckets, `_sum` and `_count` (the buckets' total).

use std::collections::HashMap;
use std::sync::{Arc, PoisonError, RwLock};

use prometheus::core::{Collector, Desc};
use prometheus::proto::{self, LabelPair, MetricFamily, MetricType};

use crate::Result;
use crate::exposition::{label_pair, metric_family, sort_by_labels};
use crate::stripes::Stripes;
use crate::workqueue::HistogramMetric;

/// A histogram family with variable labels; register it with
/// `registry.register(Box::new(vec.clone()))`.
#[derive(Clone)]
pub(crate) struct HistogramVec(Arc<Family>);

struct Family {
    desc: Desc,
    bounds: Arc<Bounds>,
    children: RwLock<HashMap<Vec<String>, Arc<Child>>>,
}

/// One labelled histogram.
struct Child {
    labels: Vec<LabelPair>,
    bounds: Arc<Bounds>,
    /// One count per bound, one for observations above every bound, and
    /// the sum in nanoseconds (at [`Child::sum`]).
    counters: Stripes,
}

impl Child {
    /// The cell of the sum: past the counts.
    fn sum(&self) -> usize {
        self.bounds.seconds.len() + 1
    }
}

/// A family's bucket upper bounds, in seconds and in whole nanoseconds.
struct Bounds {
    seconds: Box<[f64]>,
    nanos: NanoBounds,
}

impl Bounds {
    fn new(seconds: &[f64]) -> Self {
        Self {
            seconds: seconds.into(),
            nanos: NanoBounds::new(seconds),
        }
    }

    /// The bucket of `value` seconds (the bounds' count past the last
    /// bound, and for NaN).
    fn bucket(&self, value: f64) -> usize {
        self.seconds
            .iter()
            .position(|bound| value <= *bound)
            .unwrap_or(self.seconds.len())
    }
}

/// The bounds as whole nanoseconds, for observations made in nanoseconds:
/// `n` ns is at most a bound `b` s when `n <= floor(b · 1e9)`.
struct NanoBounds {
    /// How many bounds are negative (no duration is at most one of them).
    negative: usize,
    /// The others, floored to whole nanoseconds.
    nanos: Box<[u64]>,
}

impl NanoBounds {
    fn new(bounds: &[f64]) -> Self {
        let negative = bounds.iter().take_while(|b| **b < 0.0).count();
        let nanos = bounds
            .iter()
            .skip(negative)
            // The product may land a hair below a whole number (1e-5 · 1e9):
            // a few units in the last place up before flooring. `as`
            // saturates past u64.
            .map(|b| (b * 1e9 * (1.0 + 4.0 * f64::EPSILON)).floor() as u64)
            .collect();
        Self { negative, nanos }
    }

    /// The bucket of `nanos` (the bounds' count past the last bound).
    #[inline]
    fn bucket(&self, nanos: u64) -> usize {
        self.negative
            + self
                .nanos
                .iter()
                .position(|bound| nanos <= *bound)
                .unwrap_or(self.nanos.len())
    }
}

impl std::fmt::Debug for HistogramVec {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HistogramVec")
            .field("name", &self.0.desc.fq_name)
            .finish_non_exhaustive()
    }
}

impl HistogramVec {
    /// A family named `name` (the full name) with the given labels and
    /// bucket upper bounds (ascending).
    pub(crate) fn new(name: &str, help: &str, labels: &[&str], bounds: &[f64]) -> Result<Self> {
        let desc = Desc::new(
            name.to_owned(),
            help.to_owned(),
            labels.iter().map(|l| (*l).to_owned()).collect(),
            HashMap::new(),
        )?;
        Ok(Self(Arc::new(Family {
            desc,
            bounds: Arc::new(Bounds::new(bounds)),
            children: RwLock::new(HashMap::new()),
        })))
    }

    /// The histogram with these label values (in the order of the labels
    /// given to [`HistogramVec::new`]), created at first use.
    pub(crate) fn with_label_values(&self, values: &[&str]) -> Histogram {
        let family = &self.0;
        let key: Vec<String> = values.iter().map(|v| (*v).to_owned()).collect();
        if let Some(child) = family
            .children
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .get(&key)
        {
            return Histogram(child.clone());
        }
        let mut children = family
            .children
            .write()
            .unwrap_or_else(PoisonError::into_inner);
        let child = children.entry(key).or_insert_with_key(|key| {
            // Sorted by label name, as prometheus' own families expose them.
            let mut labels: Vec<LabelPair> = family
                .desc
                .variable_labels
                .iter()
                .zip(key)
                .map(|(name, value)| label_pair(name, value))
                .collect();
            labels.sort_by(|a, b| a.name().cmp(b.name()));
            Arc::new(Child {
                labels,
                bounds: family.bounds.clone(),
                counters: Stripes::new(family.bounds.seconds.len() + 2),
            })
        });
        Histogram(child.clone())
    }
}

/// One histogram of a [`HistogramVec`].
pub(crate) struct Histogram(Arc<Child>);

impl HistogramMetric for Histogram {
    /// Records `value` seconds. The sum keeps whole nanoseconds (a negative
    /// or NaN value adds nothing to it); NaN counts above every bound.
    fn observe(&self, value: f64) {
        let child = &*self.0;
        child.counters.add(child.bounds.bucket(value), 1);
        let nanos = (value * 1e9).round();
        if nanos >= 1.0 {
            // `as` saturates: a value past u64 adds u64::MAX.
            child.counters.add(child.sum(), nanos as u64);
        }
    }

    /// Records `nanos` nanoseconds: the same bucket and sum as `observe` of
    /// the same duration in seconds, without floating point.
    fn observe_nanos(&self, nanos: u64) {
        let child = &*self.0;
        child.counters.add(child.bounds.nanos.bucket(nanos), 1);
        if nanos > 0 {
            child.counters.add(child.sum(), nanos);
        }
    }
}

impl Collector for HistogramVec {
    fn desc(&self) -> Vec<&Desc> {
        vec![&self.0.desc]
    }

    fn collect(&self) -> Vec<MetricFamily> {
        let family = &self.0;
        let children = family
            .children
            .read()
            .unwrap_or_else(PoisonError::into_inner);
        if children.is_empty() {
            return Vec::new();
        }
        let mut metrics: Vec<proto::Metric> = children
            .values()
            .map(|child| {
                let mut cumulative = 0;
                let buckets = child
                    .bounds
                    .seconds
                    .iter()
                    .enumerate()
                    .map(|(cell, bound)| {
                        cumulative += child.counters.total(cell);
                        let mut bucket = proto::Bucket::default();
                        bucket.set_upper_bound(*bound);
                        bucket.set_cumulative_count(cumulative);
                        bucket
                    })
                    .collect();
                let above = child.counters.total(child.bounds.seconds.len());
                let mut histogram = proto::Histogram::default();
                histogram.set_bucket(buckets);
                histogram.set_sample_count(cumulative + above);
                histogram.set_sample_sum(child.counters.total(child.sum()) as f64 / 1e9);
                let mut metric = proto::Metric::default();
                metric.set_label(child.labels.clone());
                metric.set_histogram(histogram);
                metric
            })
            .collect();
        sort_by_labels(&mut metrics);
        vec![metric_family(&family.desc, MetricType::HISTOGRAM, metrics)]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use prometheus::Registry;

    #[test]
    fn observations_should_be_exposed_as_cumulative_buckets_sum_and_count() {
        let vec = HistogramVec::new("t_seconds", "help", &["name", "controller"], &[0.1, 1.0])
            .expect("valid family");
        let registry = Registry::new();
        registry
            .register(Box::new(vec.clone()))
            .expect("registered");
        assert_eq!(crate::encode_text(&registry).expect("text"), "");
        let h = vec.with_label_values(&["q", "c"]);
        for v in [0.05, 0.1, 0.5, 2.0, f64::NAN, -1.0] {
            h.observe(v);
        }
        vec.with_label_values(&["a", "c"]).observe(1.0);
        let text = crate::encode_text(&registry).expect("text");
        let expected = [
            "# HELP t_seconds help",
            "# TYPE t_seconds histogram",
            r#"t_seconds_bucket{controller="c",name="a",le="0.1"} 0"#,
            r#"t_seconds_bucket{controller="c",name="a",le="1"} 1"#,
            r#"t_seconds_bucket{controller="c",name="a",le="+Inf"} 1"#,
            r#"t_seconds_sum{controller="c",name="a"} 1"#,
            r#"t_seconds_count{controller="c",name="a"} 1"#,
            r#"t_seconds_bucket{controller="c",name="q",le="0.1"} 3"#,
            r#"t_seconds_bucket{controller="c",name="q",le="1"} 4"#,
            r#"t_seconds_bucket{controller="c",name="q",le="+Inf"} 6"#,
            r#"t_seconds_sum{controller="c",name="q"} 2.65"#,
            r#"t_seconds_count{controller="c",name="q"} 6"#,
        ];
        assert_eq!(text.lines().collect::<Vec<_>>(), expected);
    }

    #[test]
    fn the_same_labels_should_give_the_same_histogram() {
        let vec = HistogramVec::new("u_seconds", "help", &["name"], &[1.0]).expect("valid");
        vec.with_label_values(&["x"]).observe(0.5);
        vec.with_label_values(&["x"]).observe(0.5);
        let families = vec.collect();
        assert_eq!(families.len(), 1);
        let metric = &families[0].get_metric()[0];
        assert_eq!(metric.get_histogram().get_sample_count(), 2);
        assert_eq!(metric.get_histogram().get_sample_sum(), 1.0);
    }

    #[test]
    fn nanosecond_observations_should_land_where_second_ones_do() {
        let bounds = crate::workqueue::DURATION_BUCKETS;
        let vec = HistogramVec::new("t_seconds", "help", &["name"], &bounds).expect("valid family");
        let registry = Registry::new();
        registry
            .register(Box::new(vec.clone()))
            .expect("registered");
        let (seconds, nanos) = (vec.with_label_values(&["s"]), vec.with_label_values(&["n"]));
        // Every bound, one below and one above it, zero, and far past the last.
        let mut values = vec![0_u64, 1, 5_000_000_000_000];
        for bound in bounds {
            let n = (bound * 1e9).round() as u64;
            values.extend([n - 1, n, n + 1]);
        }
        for n in values {
            seconds.observe(n as f64 / 1e9);
            nanos.observe_nanos(n);
        }
        let text = crate::encode_text(&registry).expect("text");
        let lines = |name: &str| -> Vec<String> {
            text.lines()
                .filter(|line| line.contains(&format!("name=\"{name}\"")))
                .map(|line| line.replace(&format!("name=\"{name}\""), "name=\"x\""))
                .collect()
        };
        assert_eq!(lines("n"), lines("s"));
        assert!(
            text.contains(r#"t_seconds_bucket{name="n",le="0.00001"} 13"#),
            "{text}"
        );
        assert!(text.contains(r#"t_seconds_count{name="n"} 39"#), "{text}");
    }

    #[test]
    fn nanosecond_bounds_should_floor_and_skip_negative_bounds() {
        // 1.5e-8 · 1e9 is 14.999999999999998 in floating point.
        let bounds = NanoBounds::new(&[-1.0, 2.5e-9, 1.5e-8, 1e-5, 1e30]);
        assert_eq!(bounds.negative, 1);
        assert_eq!(&*bounds.nanos, &[2, 15, 10_000, u64::MAX]);
        assert_eq!(bounds.bucket(0), 1);
        assert_eq!(bounds.bucket(2), 1);
        assert_eq!(bounds.bucket(3), 2);
        assert_eq!(bounds.bucket(15), 2);
        assert_eq!(bounds.bucket(16), 3);
        assert_eq!(bounds.bucket(10_000), 3);
        assert_eq!(bounds.bucket(10_001), 4);
        assert_eq!(bounds.bucket(u64::MAX), 4);
    }
}
