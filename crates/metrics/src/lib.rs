//! kcr-metrics.
