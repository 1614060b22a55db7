//! The informer families (kcr's own: client-go has no informer metrics),
//! recorded by kcr-informer.
//!
//! | family | type | labels |
//! | --- | --- | --- |
//! | `informer_event_handler_panics_total` | counter | `name` |
//!
//! `name` is the informer's name. A handler that panics is caught, logged
//! and counted here, and keeps receiving later events.

use std::sync::OnceLock;

use prometheus::{IntCounter, IntCounterVec, Opts, Registry};

use crate::Result;

/// The subsystem (name prefix) of every informer family.
pub const SUBSYSTEM: &str = "informer";

/// The informer families, registered against one registry. Cheap to clone.
#[derive(Clone, Debug)]
pub struct InformerMetrics {
    handler_panics: IntCounterVec,
}

impl InformerMetrics {
    /// Builds the families and registers them against `registry`.
    ///
    /// Fails if they are already registered there: register once per
    /// registry and keep (clone) the handle.
    pub fn register(registry: &Registry) -> Result<Self> {
        let metrics = Self {
            handler_panics: IntCounterVec::new(
                Opts::new(
                    "event_handler_panics_total",
                    "Total number of event handler calls that panicked (the panic was caught)",
                )
                .subsystem(SUBSYSTEM),
                &["name"],
            )?,
        };
        crate::registration::register!(registry, metrics.handler_panics)?;
        Ok(metrics)
    }

    /// The families registered (once, lazily) against the default [`crate::registry()`].
    pub fn global() -> &'static Self {
        static GLOBAL: OnceLock<InformerMetrics> = OnceLock::new();
        crate::registration::global(&GLOBAL, Self::register, "informer")
    }

    /// The metrics of the informer called `name`. Resolve once, record
    /// through the returned handles.
    pub fn for_informer(&self, name: &str) -> NamedInformerMetrics {
        NamedInformerMetrics {
            handler_panics: self.handler_panics.with_label_values(&[name]),
        }
    }
}

/// The metrics of one named informer. Cheap to clone.
#[derive(Clone, Debug)]
pub struct NamedInformerMetrics {
    /// `informer_event_handler_panics_total`.
    pub handler_panics: IntCounter,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn informer_families_should_render_with_their_names() -> Result<()> {
        let registry = Registry::new();
        let metrics = InformerMetrics::register(&registry)?.for_informer("pods");
        metrics.handler_panics.inc();
        let text = crate::encode_text(&registry)?;
        assert!(
            text.contains(r#"informer_event_handler_panics_total{name="pods"} 1"#),
            "{text}"
        );
        assert!(InformerMetrics::register(&registry).is_err());
        Ok(())
    }
}
