//! Building blocks of the families kcr's own collectors expose (the
//! histograms, the work queue depth).

use prometheus::core::Desc;
use prometheus::proto::{LabelPair, Metric, MetricFamily, MetricType};

/// One label of a metric.
pub(crate) fn label_pair(name: &str, value: &str) -> LabelPair {
    let mut pair = LabelPair::default();
    pair.set_name(name.to_owned());
    pair.set_value(value.to_owned());
    pair
}

/// Sorts metrics by their label values, as prometheus' own families list them.
pub(crate) fn sort_by_labels(metrics: &mut [Metric]) {
    fn values(metric: &Metric) -> impl Iterator<Item = &str> {
        metric.get_label().iter().map(LabelPair::value)
    }
    metrics.sort_by(|a, b| values(a).cmp(values(b)));
}

/// The family `desc` describes, of type `kind`, holding `metrics`.
pub(crate) fn metric_family(desc: &Desc, kind: MetricType, metrics: Vec<Metric>) -> MetricFamily {
    let mut family = MetricFamily::default();
    family.set_name(desc.fq_name.clone());
    family.set_help(desc.help.clone());
    family.set_field_type(kind);
    family.set_metric(metrics);
    family
}
