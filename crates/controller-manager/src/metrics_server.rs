//! The `/metrics` endpoint (controller-runtime `pkg/metrics/server`): the
//! kcr-metrics registry in the Prometheus text exposition format.

use std::sync::Arc;

use bytes::Bytes;
use http::{Request, Response, StatusCode, header};
use http_body_util::Full;
use kcr_metrics::Registry;

use crate::server::{Handler, not_found, text};

/// The content type of the Prometheus text format.
pub const TEXT_FORMAT: &str = "text/plain; version=0.0.4; charset=utf-8";

/// Renders `registry` as the answer to `GET /metrics`.
pub(crate) fn metrics_response(registry: &Registry) -> Response<Full<Bytes>> {
    match kcr_metrics::encode_text(registry) {
        Ok(body) => {
            let mut response = text(StatusCode::OK, body);
            response.headers_mut().insert(
                header::CONTENT_TYPE,
                header::HeaderValue::from_static(TEXT_FORMAT),
            );
            response
        }
        Err(e) => text(
            StatusCode::INTERNAL_SERVER_ERROR,
            format!("error gathering metrics: {e}\n"),
        ),
    }
}

/// The handler of the metrics server: `/metrics` and nothing else.
pub(crate) fn metrics_handler(registry: Registry) -> Handler {
    Arc::new(move |request: &Request<_>| {
        if request.uri().path() == "/metrics" {
            metrics_response(&registry)
        } else {
            not_found()
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use http_body_util::BodyExt;

    #[tokio::test]
    async fn metrics_should_be_rendered_in_the_text_format()
    -> Result<(), Box<dyn std::error::Error>> {
        let registry = Registry::new();
        let counter = kcr_metrics::prometheus::IntCounter::new("kcr_test_total", "a test counter")?;
        registry.register(Box::new(counter.clone()))?;
        counter.inc();
        let response = metrics_response(&registry);
        assert_eq!(response.status(), StatusCode::OK);
        assert_eq!(response.headers()[header::CONTENT_TYPE], TEXT_FORMAT);
        let body = response.into_body().collect().await?.to_bytes();
        assert!(std::str::from_utf8(&body)?.contains("kcr_test_total 1"));
        Ok(())
    }
}
