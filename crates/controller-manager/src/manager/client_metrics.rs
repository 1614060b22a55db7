//! The client request metrics of the manager's client (controller-runtime records client-go's
//! REST client metrics for every request its clients send): a tower layer that counts each
//! request of a `kube::Client` in `rest_client_requests_total` and, when asked, times it in
//! `rest_client_request_duration_seconds` (see [`kcr_metrics::client`]).

use std::fmt;
use std::sync::Arc;
use std::task::{Context, Poll};

use futures::future::BoxFuture;
use http::{Request, Response, Uri};
use kcr_metrics::client::ClientMetrics;
use tokio::time::Instant;
use tower::{Layer, Service};

/// A tower layer recording every request of a client in kcr-metrics' client families: its
/// status code (or `<error>` when no response came), method and the API server's host, and
/// the time until the response's headers came. [`Manager::from_config`](crate::Manager::from_config)
/// puts it on the client it builds; put it on a client of your own with
/// `kube::client::ClientBuilder::with_layer`:
///
/// ```no_run
/// # async fn doc() -> Result<(), Box<dyn std::error::Error>> {
/// use kcr_controller_manager::manager::ClientMetricsLayer;
/// use kcr_metrics::client::ClientMetrics;
///
/// let config = kube::Config::infer().await?;
/// let layer = ClientMetricsLayer::new(ClientMetrics::global().clone(), &config.cluster_url);
/// let client = kube::client::ClientBuilder::try_from(config)?.with_layer(&layer).build();
/// # let _ = client;
/// # Ok(())
/// # }
/// ```
///
/// The time is read from Tokio's clock, so a test under a paused clock sees the server's
/// injected latency exactly.
#[derive(Clone)]
pub struct ClientMetricsLayer {
    metrics: ClientMetrics,
    host: Arc<str>,
}

impl fmt::Debug for ClientMetricsLayer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ClientMetricsLayer")
            .field("host", &self.host)
            .finish_non_exhaustive()
    }
}

impl ClientMetricsLayer {
    /// Records into `metrics` the requests sent to the API server at `cluster_url` (its
    /// `host:port` is the `host` label, as client-go's).
    pub fn new(metrics: ClientMetrics, cluster_url: &Uri) -> Self {
        let host = match (cluster_url.host(), cluster_url.port_u16()) {
            (Some(host), Some(port)) => format!("{host}:{port}"),
            (Some(host), None) => host.to_owned(),
            // client-go's label for a client without a base URL.
            (None, _) => "none".to_owned(),
        };
        Self {
            metrics,
            host: Arc::from(host),
        }
    }

    /// The `host` label of the requests.
    pub fn host(&self) -> &str {
        &self.host
    }
}

impl<S> Layer<S> for ClientMetricsLayer {
    type Service = ClientMetricsService<S>;

    fn layer(&self, inner: S) -> Self::Service {
        ClientMetricsService {
            inner,
            metrics: self.metrics.clone(),
            host: self.host.clone(),
        }
    }
}

/// The service [`ClientMetricsLayer`] wraps a client's stack in.
#[derive(Clone)]
pub struct ClientMetricsService<S> {
    inner: S,
    metrics: ClientMetrics,
    host: Arc<str>,
}

impl<S> fmt::Debug for ClientMetricsService<S> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ClientMetricsService")
            .field("host", &self.host)
            .finish_non_exhaustive()
    }
}

impl<S, ReqBody, ResBody> Service<Request<ReqBody>> for ClientMetricsService<S>
where
    S: Service<Request<ReqBody>, Response = Response<ResBody>>,
    S::Future: Send + 'static,
    S::Error: 'static,
    ResBody: 'static,
{
    type Response = S::Response;
    type Error = S::Error;
    type Future = BoxFuture<'static, Result<S::Response, S::Error>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, req: Request<ReqBody>) -> Self::Future {
        let method = req.method().clone();
        let started = Instant::now();
        let response = self.inner.call(req);
        let metrics = self.metrics.clone();
        let host = self.host.clone();
        Box::pin(async move {
            let result = response.await;
            let code = result.as_ref().ok().map(|r| r.status().as_u16());
            metrics.observe(method.as_str(), &host, code, started.elapsed());
            result
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_host_label_should_be_the_servers_host_and_port() -> Result<(), http::uri::InvalidUri> {
        let metrics = ClientMetrics::global().clone();
        let layer = ClientMetricsLayer::new(metrics.clone(), &"https://10.0.0.1:6443".parse()?);
        assert_eq!(layer.host(), "10.0.0.1:6443");
        let layer = ClientMetricsLayer::new(metrics.clone(), &"https://api.example.com".parse()?);
        assert_eq!(layer.host(), "api.example.com");
        let layer = ClientMetricsLayer::new(metrics, &"/".parse()?);
        assert_eq!(layer.host(), "none");
        Ok(())
    }
}
