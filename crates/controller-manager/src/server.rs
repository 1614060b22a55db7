//! A small HTTP/1.1 server on hyper 1 for the probe and metrics endpoints.

use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use http::{Request, Response, StatusCode, header};
use http_body_util::Full;
use hyper::body::Incoming;
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper_util::rt::{TokioIo, TokioTimer};
use tokio::net::{TcpListener, TcpStream};
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

use crate::{Error, Result};

/// Answers one request. Probe and metrics handlers are cheap and
/// synchronous, so the handler is a plain function.
pub(crate) type Handler = Arc<dyn Fn(&Request<Incoming>) -> Response<Full<Bytes>> + Send + Sync>;

/// How long a client may take to send its request headers.
const HEADER_READ_TIMEOUT: Duration = Duration::from_secs(30);

/// A plain-text response.
pub(crate) fn text(status: StatusCode, body: impl Into<Bytes>) -> Response<Full<Bytes>> {
    let mut response = Response::new(Full::new(body.into()));
    *response.status_mut() = status;
    let headers = response.headers_mut();
    headers.insert(
        header::CONTENT_TYPE,
        header::HeaderValue::from_static("text/plain; charset=utf-8"),
    );
    headers.insert(
        "x-content-type-options",
        header::HeaderValue::from_static("nosniff"),
    );
    response
}

/// The `404 page not found` answer.
pub(crate) fn not_found() -> Response<Full<Bytes>> {
    text(StatusCode::NOT_FOUND, "404 page not found\n")
}

/// Parses a bind address as controller-runtime does: `"0"` or `""` means
/// disabled (`None`), `":8080"` means every interface, anything else is
/// `host:port`.
pub(crate) fn parse_bind_address(address: &str) -> Result<Option<String>> {
    let address = address.trim();
    if address.is_empty() || address == "0" {
        return Ok(None);
    }
    let full = match address.strip_prefix(':') {
        Some(port) => format!("0.0.0.0:{port}"),
        None => address.to_owned(),
    };
    match full.rsplit_once(':') {
        Some((host, port)) if !host.is_empty() && port.parse::<u16>().is_ok() => Ok(Some(full)),
        _ => Err(Error::InvalidBindAddress(address.to_owned())),
    }
}

/// Binds `address` (see [`parse_bind_address`]); `None` when disabled.
pub(crate) async fn bind(address: &str) -> Result<Option<TcpListener>> {
    let Some(full) = parse_bind_address(address)? else {
        return Ok(None);
    };
    TcpListener::bind(&full)
        .await
        .map(Some)
        .map_err(|source| Error::Bind {
            address: address.to_owned(),
            source,
        })
}

/// Serves `handler` on `listener` until `stop` is cancelled, then lets open
/// connections finish their request in flight and returns.
pub(crate) async fn serve(listener: TcpListener, handler: Handler, stop: CancellationToken) {
    accept_loop(listener, stop, move |stream, stop| {
        let handler = handler.clone();
        async move {
            let service = service_fn(move |request: Request<Incoming>| {
                let response = handler(&request);
                async move { Ok::<_, Infallible>(response) }
            });
            serve_connection(TokioIo::new(stream), service, HEADER_READ_TIMEOUT, stop).await;
        }
    })
    .await;
}

/// Accepts connections on `listener` until `stop` is cancelled, runs
/// `connect` for each on its own task, then waits for those tasks to end.
pub(crate) async fn accept_loop<F, Fut>(
    listener: TcpListener,
    stop: CancellationToken,
    mut connect: F,
) where
    F: FnMut(TcpStream, CancellationToken) -> Fut,
    Fut: Future<Output = ()> + Send + 'static,
{
    let local: Option<SocketAddr> = listener.local_addr().ok();
    let connections = TaskTracker::new();
    loop {
        let stream = tokio::select! {
            () = stop.cancelled() => break,
            accepted = listener.accept() => match accepted {
                Ok((stream, _)) => stream,
                Err(e) => {
                    // Out of file descriptors and the like: back off a little
                    // instead of spinning.
                    tracing::warn!(address = ?local, error = %e, "accept failed");
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    continue;
                }
            },
        };
        connections.spawn(connect(stream, stop.clone()));
    }
    connections.close();
    connections.wait().await;
}

/// Serves one HTTP/1.1 connection; a client that does not finish its headers
/// within `header_timeout` is dropped, and on `stop` the request in flight is
/// finished before the connection closes.
pub(crate) async fn serve_connection<I, S, B>(
    io: TokioIo<I>,
    service: S,
    header_timeout: Duration,
    stop: CancellationToken,
) where
    I: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin + Send + 'static,
    S: hyper::service::Service<Request<Incoming>, Response = Response<B>> + Send,
    S::Future: Send + 'static,
    S::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
    B: hyper::body::Body + Send + 'static,
    B::Data: Send,
    B::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
{
    let connection = http1::Builder::new()
        .timer(TokioTimer::new())
        .header_read_timeout(header_timeout)
        .serve_connection(io, service);
    tokio::pin!(connection);
    let result = tokio::select! {
        r = connection.as_mut() => r,
        () = stop.cancelled() => {
            connection.as_mut().graceful_shutdown();
            connection.await
        }
    };
    if let Err(e) = result {
        tracing::debug!(error = %e, "connection ended with an error");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bind_addresses_should_follow_controller_runtime() {
        assert_eq!(parse_bind_address("0").ok(), Some(None));
        assert_eq!(parse_bind_address("").ok(), Some(None));
        assert_eq!(
            parse_bind_address(":8080").ok(),
            Some(Some("0.0.0.0:8080".to_owned()))
        );
        assert_eq!(
            parse_bind_address("127.0.0.1:0").ok(),
            Some(Some("127.0.0.1:0".to_owned()))
        );
        assert_eq!(
            parse_bind_address("localhost:9090").ok(),
            Some(Some("localhost:9090".to_owned()))
        );
        assert!(matches!(
            parse_bind_address("8080"),
            Err(Error::InvalidBindAddress(_))
        ));
        assert!(matches!(
            parse_bind_address("host:port"),
            Err(Error::InvalidBindAddress(_))
        ));
    }
}
