//! The cost the client request metrics add to a request: one call through a service that
//! answers at once, bare (the baseline) and wrapped in `ClientMetricsLayer`, with
//! `rest_client_requests_total` only and with the latency histogram too, in the same run.
//! A real request to an API server takes from a few hundred microseconds (loopback) to
//! milliseconds, so what matters is the difference against that.

use std::convert::Infallible;
use std::future::{Ready, ready};
use std::hint::black_box;
use std::task::{Context, Poll};

use criterion::{Criterion, criterion_group, criterion_main};
use http::{Request, Response};
use kcr_controller_manager::manager::ClientMetricsLayer;
use kcr_metrics::client::ClientMetrics;
use tower::{Layer, Service};

/// Answers `200 OK` at once.
#[derive(Clone, Copy)]
struct Ok200;

impl Service<Request<()>> for Ok200 {
    type Response = Response<()>;
    type Error = Infallible;
    type Future = Ready<Result<Response<()>, Infallible>>;

    fn poll_ready(&mut self, _cx: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, _req: Request<()>) -> Self::Future {
        ready(Ok(Response::new(())))
    }
}

fn request() -> Request<()> {
    let mut req = Request::new(());
    *req.uri_mut() = http::Uri::from_static("/api/v1/namespaces/default/configmaps/settings");
    req
}

fn client_metrics(c: &mut Criterion) {
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(e) => panic!("no runtime: {e}"),
    };
    let url = http::Uri::from_static("https://10.0.0.1:6443");
    let layer = |latency: bool| {
        let registry = kcr_metrics::Registry::new();
        let metrics = match ClientMetrics::register(&registry) {
            Ok(metrics) => metrics,
            Err(e) => panic!("families not registered: {e}"),
        };
        if latency && let Err(e) = metrics.register_latency(&registry) {
            panic!("latency not registered: {e}");
        }
        ClientMetricsLayer::new(metrics, &url)
    };
    let mut group = c.benchmark_group("client_request");
    // Each call is made outside the timed future's borrow: every future here is 'static.
    let mut bare = Ok200;
    group.bench_function("bare", |b| {
        b.to_async(&runtime).iter(|| {
            let response = bare.call(request());
            async move { black_box(response.await.map(|r| r.status().as_u16())) }
        });
    });
    let mut counted = layer(false).layer(Ok200);
    group.bench_function("requests_total", |b| {
        b.to_async(&runtime).iter(|| {
            let response = counted.call(request());
            async move { black_box(response.await.map(|r| r.status().as_u16())) }
        });
    });
    let mut timed = layer(true).layer(Ok200);
    group.bench_function("requests_total_and_latency", |b| {
        b.to_async(&runtime).iter(|| {
            let response = timed.call(request());
            async move { black_box(response.await.map(|r| r.status().as_u16())) }
        });
    });
    group.finish();
}

criterion_group!(benches, client_metrics);
criterion_main!(benches);
