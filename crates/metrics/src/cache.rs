//! The cache families, recorded by kcr-cache (with its `metrics` feature)
//! for stores and FIFOs given a name.
//!
//! | family | type | labels |
//! | --- | --- | --- |
//! | `cache_store_objects` | gauge | `name` |
//! | `cache_fifo_queued` | gauge | `name` |
//!
//! `cache_store_objects` is the number of objects in a named store (an
//! informer's indexer); `cache_fifo_queued` the number of entries waiting in
//! a named FIFO (keys for a `DeltaFifo`, events for a `RealFifo`).

use std::sync::OnceLock;

use prometheus::{IntGauge, IntGaugeVec, Opts, Registry};

use crate::Result;

/// The subsystem (name prefix) of every cache family.
pub const SUBSYSTEM: &str = "cache";

/// The cache families, registered against one registry. Cheap to clone.
#[derive(Clone, Debug)]
pub struct CacheMetrics {
    store_objects: IntGaugeVec,
    fifo_queued: IntGaugeVec,
}

impl CacheMetrics {
    /// Builds the families and registers them against `registry`.
    ///
    /// Fails if they are already registered there: register once per
    /// registry and keep (clone) the handle.
    pub fn register(registry: &Registry) -> Result<Self> {
        let metrics = Self {
            store_objects: IntGaugeVec::new(
                Opts::new("store_objects", "Number of objects in the store").subsystem(SUBSYSTEM),
                &["name"],
            )?,
            fifo_queued: IntGaugeVec::new(
                Opts::new("fifo_queued", "Number of entries queued in the FIFO")
                    .subsystem(SUBSYSTEM),
                &["name"],
            )?,
        };
        crate::registration::register!(registry, metrics.store_objects, metrics.fifo_queued)?;
        Ok(metrics)
    }

    /// The families registered (once, lazily) against the default [`crate::registry()`].
    pub fn global() -> &'static Self {
        static GLOBAL: OnceLock<CacheMetrics> = OnceLock::new();
        crate::registration::global(&GLOBAL, Self::register, "cache")
    }

    /// `cache_store_objects` of the store called `name`.
    pub fn store_objects(&self, name: &str) -> IntGauge {
        self.store_objects.with_label_values(&[name])
    }

    /// `cache_fifo_queued` of the FIFO called `name`.
    pub fn fifo_queued(&self, name: &str) -> IntGauge {
        self.fifo_queued.with_label_values(&[name])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cache_families_should_render_with_their_names() -> Result<()> {
        let registry = Registry::new();
        let metrics = CacheMetrics::register(&registry)?;
        metrics.store_objects("pods").set(3);
        metrics.fifo_queued("pods").set(2);
        let text = crate::encode_text(&registry)?;
        assert!(
            text.contains(r#"cache_store_objects{name="pods"} 3"#),
            "{text}"
        );
        assert!(
            text.contains(r#"cache_fifo_queued{name="pods"} 2"#),
            "{text}"
        );
        assert!(CacheMetrics::register(&registry).is_err());
        Ok(())
    }
}
