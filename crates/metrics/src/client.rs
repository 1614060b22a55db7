//! Client request metrics, named, labelled and bucketed as controller-runtime
//! registers client-go's REST client metrics (`pkg/metrics/client_go_adapter.go`).
//!
//! | family | type | labels | registered |
//! | --- | --- | --- | --- |
//! | `rest_client_requests_total` | counter | `code`, `method`, `host` | always |
//! | `rest_client_request_duration_seconds` | histogram ([`REQUEST_LATENCY_BUCKETS`]) | `verb`, `host` | on request ([`ClientMetrics::register_latency`]) |
//!
//! As in client-go, `code` is the HTTP status (`"200"`, `"404"`...) or
//! `"<error>"` when no response came (connection refused, timed out...),
//! `method` and `verb` the HTTP method (`GET`, `POST`...), and `host` the
//! API server's `host:port`. controller-runtime registers the latency
//! histogram only when asked (`RegisterRESTClientMetrics`), so does kcr:
//! until [`register_latency`](ClientMetrics::register_latency) is called,
//! [`observe`](ClientMetrics::observe) counts requests only.
//!
//! kcr-controller-manager records them for the requests of the client a
//! manager builds (`Manager::from_config`) through a tower layer.
//!
//! ```
//! use std::time::Duration;
//! use kcr_metrics::client::ClientMetrics;
//!
//! # fn main() -> kcr_metrics::Result<()> {
//! let registry = prometheus::Registry::new();
//! let metrics = ClientMetrics::register(&registry)?;
//! metrics.register_latency(&registry)?;
//! metrics.observe("GET", "10.0.0.1:6443", Some(404), Duration::from_millis(3));
//! metrics.observe("POST", "10.0.0.1:6443", None, Duration::from_secs(2));
//! let text = kcr_metrics::encode_text(&registry)?;
//! assert!(text.contains(r#"rest_client_requests_total{code="404",host="10.0.0.1:6443",method="GET"} 1"#));
//! assert!(text.contains(r#"rest_client_requests_total{code="<error>",host="10.0.0.1:6443",method="POST"} 1"#));
//! assert!(text.contains(r#"rest_client_request_duration_seconds_bucket{host="10.0.0.1:6443",verb="GET",le="0.005"} 1"#));
//! # Ok(())
//! # }
//! ```

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use prometheus::{HistogramOpts, HistogramVec, IntCounterVec, Opts, Registry};

use crate::Result;

/// The buckets of `rest_client_request_duration_seconds` (controller-runtime's).
pub const REQUEST_LATENCY_BUCKETS: [f64; 12] = [
    0.005, 0.025, 0.1, 0.25, 0.5, 1.0, 2.0, 4.0, 8.0, 15.0, 30.0, 60.0,
];

/// The `code` label of a request that got no response (client-go's).
pub const NO_RESPONSE_CODE: &str = "<error>";

/// The client request families.
///
/// Cheap to clone: clones share the same families and the same latency switch.
#[derive(Debug, Clone)]
pub struct ClientMetrics {
    requests: IntCounterVec,
    latency: HistogramVec,
    /// Whether the latency histogram is registered (and observed).
    latency_on: Arc<AtomicBool>,
}

impl ClientMetrics {
    /// Builds the families and registers `rest_client_requests_total` against `registry`
    /// (controller-runtime registers it at start, the latency histogram only when asked).
    ///
    /// Registering twice against one registry fails with
    /// [`Error::Prometheus`](crate::Error::Prometheus) (`AlreadyReg`).
    pub fn register(registry: &Registry) -> Result<Self> {
        let metrics = Self {
            requests: IntCounterVec::new(
                Opts::new(
                    "rest_client_requests_total",
                    "Number of HTTP requests, partitioned by status code, method, and host.",
                ),
                &["code", "method", "host"],
            )?,
            latency: HistogramVec::new(
                HistogramOpts::new(
                    "rest_client_request_duration_seconds",
                    "Request latency in seconds. Broken down by verb and host.",
                )
                .buckets(REQUEST_LATENCY_BUCKETS.to_vec()),
                &["verb", "host"],
            )?,
            latency_on: Arc::new(AtomicBool::new(false)),
        };
        crate::registration::register!(registry, metrics.requests)?;
        Ok(metrics)
    }

    /// The families registered once, lazily, against the default
    /// [`registry()`](crate::registry).
    ///
    /// If that registration fails (some other code registered families with
    /// these names first), the families still work but are not exported.
    pub fn global() -> &'static Self {
        static GLOBAL: OnceLock<ClientMetrics> = OnceLock::new();
        crate::registration::global(&GLOBAL, Self::register, "client")
    }

    /// Registers `rest_client_request_duration_seconds` against `registry` and observes it
    /// from now on (controller-runtime's `RegisterRESTClientMetrics(MetricRequestLatency)`).
    /// Once per family set: a later call does nothing.
    pub fn register_latency(&self, registry: &Registry) -> Result<()> {
        if self.latency_on.swap(true, Ordering::SeqCst) {
            return Ok(());
        }
        let registered = crate::registration::register!(registry, self.latency);
        if registered.is_err() {
            self.latency_on.store(false, Ordering::SeqCst);
        }
        registered
    }

    /// Whether the latency histogram is observed.
    pub fn latency_enabled(&self) -> bool {
        self.latency_on.load(Ordering::Relaxed)
    }

    /// Records one request: its HTTP `method`, the server's `host`, the response's status
    /// (`None`: no response) and how long it took until the response (its headers) came.
    pub fn observe(&self, method: &str, host: &str, code: Option<u16>, elapsed: Duration) {
        let status;
        let code = match code {
            Some(c) => {
                status = c.to_string();
                status.as_str()
            }
            None => NO_RESPONSE_CODE,
        };
        self.requests.with_label_values(&[code, method, host]).inc();
        if self.latency_enabled() {
            self.latency
                .with_label_values(&[method, host])
                .observe(elapsed.as_secs_f64());
        }
    }

    /// `rest_client_requests_total`.
    pub fn requests(&self) -> &IntCounterVec {
        &self.requests
    }

    /// `rest_client_request_duration_seconds` (observed once
    /// [`register_latency`](Self::register_latency) was called).
    pub fn request_duration(&self) -> &HistogramVec {
        &self.latency
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_latency_histogram_should_be_registered_only_when_asked_and_once() -> Result<()> {
        let registry = Registry::new();
        let metrics = ClientMetrics::register(&registry)?;
        metrics.observe("GET", "h:1", Some(200), Duration::from_millis(30));
        let text = crate::encode_text(&registry)?;
        assert!(
            text.contains(r#"rest_client_requests_total{code="200",host="h:1",method="GET"} 1"#)
        );
        assert!(!text.contains("rest_client_request_duration_seconds"));

        metrics.register_latency(&registry)?;
        metrics.register_latency(&registry)?;
        metrics.observe("GET", "h:1", Some(200), Duration::from_millis(30));
        let text = crate::encode_text(&registry)?;
        assert!(text.contains(
            r#"rest_client_request_duration_seconds_bucket{host="h:1",verb="GET",le="0.025"} 0"#
        ));
        assert!(text.contains(
            r#"rest_client_request_duration_seconds_bucket{host="h:1",verb="GET",le="0.1"} 1"#
        ));
        assert!(
            text.contains(r#"rest_client_request_duration_seconds_count{host="h:1",verb="GET"} 1"#)
        );
        Ok(())
    }

    #[test]
    fn registering_twice_against_one_registry_should_fail() -> Result<()> {
        let registry = Registry::new();
        ClientMetrics::register(&registry)?;
        assert!(ClientMetrics::register(&registry).is_err());
        Ok(())
    }
}
