//! The HTTP server: accepting connections, authentication, fault hooks, routing.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use http::{HeaderValue, Method, Response, StatusCode, header};
use http_body_util::{BodyExt, Limited};
use hyper::body::Incoming;
use hyper::service::service_fn;
use hyper_util::rt::{TokioIo, TokioTimer};
use parking_lot::Mutex;
use tokio::net::TcpListener;
use tokio::sync::watch;
use tokio::task::{JoinHandle, JoinSet};

use crate::body::Body;
use crate::error::{Error, Result};
use crate::faults::FaultState;
use crate::review::{Policy, UserInfo};
use crate::status::ApiError;
use crate::store::Store;
use crate::tls::Tls;
use crate::{admin, discovery, endpoints, review};

/// Server options (set through [`TestEnvBuilder`](crate::TestEnvBuilder)).
#[derive(Debug, Clone)]
pub(crate) struct Options {
    pub(crate) history_size: usize,
    pub(crate) token: Option<String>,
    pub(crate) body_limit: usize,
    pub(crate) bookmark_interval: Duration,
    pub(crate) admin_endpoint: bool,
    pub(crate) watch_buffer: usize,
    /// Serve HTTPS with a generated certificate.
    pub(crate) tls: bool,
    /// The initial policy of the review APIs.
    pub(crate) reviews: Policy,
    /// Run kcr-testenv's namespace finalizer (the namespace controller's job).
    pub(crate) finalize_namespaces: bool,
    /// Authorize requests with RBAC (see [`crate::rbac`]).
    pub(crate) rbac: bool,
    /// Run kube-controller-manager's ServiceAccounts controller and root CA publisher.
    pub(crate) namespace_controllers: bool,
    /// The `ShardedListAndWatch` feature gate: honour `shardSelector` (see [`crate::sharding`]).
    pub(crate) sharded_list_and_watch: bool,
    /// Run kube-controller-manager's garbage collector.
    pub(crate) garbage_collector: bool,
    /// Run kube-controller-manager's resource quota controller.
    pub(crate) quota_controller: bool,
    /// Run kube-controller-manager's PVC and PV protection controllers.
    pub(crate) storage_protection: bool,
    /// Run kube-controller-manager's Deployment and ReplicaSet controllers.
    pub(crate) workload_controllers: bool,
    /// Run kube-controller-manager's StatefulSet controller.
    pub(crate) stateful_set_controller: bool,
    /// Run kube-controller-manager's Job controller.
    pub(crate) job_controller: bool,
    /// Run kube-controller-manager's clusterrole-aggregation controller.
    pub(crate) cluster_role_aggregation: bool,
    /// The admission plugins switched off (`--disable-admission-plugins`).
    pub(crate) disabled_admission_plugins: std::collections::BTreeSet<String>,
}

/// Everything the request handlers share.
///
/// The `parking_lot` mutexes are never held across an `.await`: each critical section only reads
/// or updates in-memory state.
#[derive(Debug)]
pub(crate) struct Shared {
    pub(crate) options: Options,
    pub(crate) store: Mutex<Store>,
    /// Sends the newest resource version after each commit; watches wait on it.
    pub(crate) changed: watch::Sender<u64>,
    /// Bumped to end every open watch.
    pub(crate) close_watches: watch::Sender<u64>,
    pub(crate) faults: Mutex<FaultState>,
    pub(crate) addr: SocketAddr,
    pub(crate) serving: Mutex<Option<JoinHandle<()>>>,
    /// The TLS identity when serving HTTPS.
    pub(crate) tls: Option<Tls>,
    /// The tokens and rules that `TokenReview` and `SubjectAccessReview` answer from.
    pub(crate) reviews: Mutex<Policy>,
    /// ServiceAccount tokens issued through `serviceaccounts/<name>/token`.
    pub(crate) issued_tokens: Mutex<crate::subresources::token::IssuedTokens>,
    /// What `pods/<name>/log` returns.
    pub(crate) pod_logs: Mutex<crate::subresources::log::PodLogs>,
}

impl Shared {
    pub(crate) fn new(options: Options, addr: SocketAddr, tls: Option<Tls>) -> Arc<Self> {
        let store = Store::new(options.history_size);
        let rv = store.rv();
        let reviews = Mutex::new(options.reviews.clone());
        let shared = Arc::new(Self {
            options,
            tls,
            reviews,
            store: Mutex::new(store),
            changed: watch::channel(rv).0,
            close_watches: watch::channel(0).0,
            faults: Mutex::new(FaultState::default()),
            addr,
            serving: Mutex::new(None),
            issued_tokens: Mutex::default(),
            pod_logs: Mutex::default(),
        });
        crate::bootstrap::namespaces::create_default_namespaces(&shared);
        crate::bootstrap::create_startup_objects(&shared);
        // The watch cache starts from the state at start-up (kube-apiserver initialises it with a
        // list), so a watch from an older version, e.g. `resourceVersion=1`, is too old.
        shared.store.lock().compact();
        shared
    }

    /// Tells watches about a new version. Never blocks, so it may be called under the store lock.
    pub(crate) fn notify(&self, rv: u64) {
        self.changed.send_replace(rv);
    }
}

/// Binds a listener on `addr` (port 0: any free port).
pub(crate) async fn bind(addr: SocketAddr) -> Result<TcpListener> {
    TcpListener::bind(addr)
        .await
        .map_err(|source| Error::Bind { addr, source })
}

/// Serves on `shared.addr` unless already serving.
pub(crate) async fn start(shared: &Arc<Shared>) -> Result<()> {
    if shared
        .serving
        .lock()
        .as_ref()
        .is_some_and(|h| !h.is_finished())
    {
        return Ok(());
    }
    let listener = bind(shared.addr).await?;
    spawn(shared, listener);
    Ok(())
}

/// Starts the accept loop on a bound listener.
pub(crate) fn spawn(shared: &Arc<Shared>, listener: TcpListener) {
    let task = tokio::spawn(accept_loop(listener, shared.clone()));
    if let Some(old) = shared.serving.lock().replace(task) {
        old.abort();
    }
}

/// Stops the accept loop and every connection.
pub(crate) async fn stop(shared: &Arc<Shared>) {
    let task = shared.serving.lock().take();
    if let Some(task) = task {
        task.abort();
        // The task ends as an aborted (cancelled) task; its listener and connections are dropped.
        let _ = task.await;
    }
}

async fn accept_loop(listener: TcpListener, shared: Arc<Shared>) {
    let mut connections = JoinSet::new();
    loop {
        tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok((stream, _peer)) => {
                    let _ = stream.set_nodelay(true);
                    let shared = shared.clone();
                    connections.spawn(async move {
                        let acceptor = shared.tls.as_ref().map(|t| t.acceptor.clone());
                        let service = service_fn(move |req| {
                            let shared = shared.clone();
                            async move { Ok::<_, std::convert::Infallible>(handle(shared, req).await) }
                        });
                        let mut http = hyper::server::conn::http1::Builder::new();
                        http.timer(TokioTimer::new())
                            .header_read_timeout(READ_HEADER_TIMEOUT);
                        match acceptor {
                            None => {
                                let _ = http.serve_connection(TokioIo::new(stream), service).await;
                            }
                            Some(acceptor) => {
                                let handshake =
                                    tokio::time::timeout(READ_HEADER_TIMEOUT, acceptor.accept(stream));
                                match handshake.await {
                                    Ok(Ok(tls)) => {
                                        let _ =
                                            http.serve_connection(TokioIo::new(tls), service).await;
                                    }
                                    // A client that gives up on the handshake (or speaks plain HTTP).
                                    Ok(Err(e)) => {
                                        tracing::debug!(error = %e, "kcr-testenv: TLS handshake failed");
                                    }
                                    Err(_) => tracing::debug!("kcr-testenv: TLS handshake timed out"),
                                }
                            }
                        }
                    });
                }
                Err(e) => {
                    // Out of file descriptors and the like: back off briefly, keep serving.
                    tracing::warn!(error = %e, "kcr-testenv: accept failed");
                    tokio::time::sleep(Duration::from_millis(10)).await;
                }
            },
            Some(_) = connections.join_next(), if !connections.is_empty() => {}
        }
    }
}

/// A response with a JSON body.
pub(crate) fn json_response(code: u16, body: impl Into<Bytes>) -> Response<Body> {
    let mut resp = Response::new(Body::full(body));
    *resp.status_mut() = StatusCode::from_u16(code).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    resp.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    resp
}

/// A `metav1.Status` error response.
pub(crate) fn error_response(e: &ApiError) -> Response<Body> {
    let body = crate::serializer::to_vec(&e.to_status());
    let mut resp = json_response(e.code, body);
    if let Some(secs) = e.retry_after
        && let Ok(v) = HeaderValue::from_str(&secs.to_string())
    {
        resp.headers_mut().insert(header::RETRY_AFTER, v);
    }
    resp
}

/// A parsed request.
#[derive(Debug)]
pub(crate) struct Request {
    pub(crate) method: Method,
    pub(crate) path: String,
    pub(crate) query: Vec<(String, String)>,
    pub(crate) headers: http::HeaderMap,
    pub(crate) body: Bytes,
    /// `Warning` headers for the response (e.g. unknown fields that were dropped).
    pub(crate) warnings: Mutex<Vec<String>>,
    /// Who sent the request.
    pub(crate) user: UserInfo,
}

impl Request {
    /// The last value of a query parameter.
    pub(crate) fn param(&self, name: &str) -> Option<&str> {
        self.query
            .iter()
            .rev()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    }

    pub(crate) fn header(&self, name: &str) -> &str {
        self.headers
            .get(name)
            .and_then(|v| v.to_str().ok())
            .unwrap_or_default()
    }

    pub(crate) fn user_agent(&self) -> &str {
        self.header("user-agent")
    }
}

fn hex(b: u8) -> Option<u8> {
    match b {
        b'0'..=b'9' => Some(b - b'0'),
        b'a'..=b'f' => Some(b - b'a' + 10),
        b'A'..=b'F' => Some(b - b'A' + 10),
        _ => None,
    }
}

/// Decodes `%XX` escapes (and `+` as space when `plus` is set).
pub(crate) fn percent_decode(s: &str, plus: bool) -> String {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'%' if i + 2 < bytes.len() => match (hex(bytes[i + 1]), hex(bytes[i + 2])) {
                (Some(h), Some(l)) => {
                    out.push(h * 16 + l);
                    i += 3;
                    continue;
                }
                _ => out.push(b'%'),
            },
            b'+' if plus => out.push(b' '),
            b => out.push(b),
        }
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// Parses a query string into decoded pairs.
pub(crate) fn parse_query(q: &str) -> Vec<(String, String)> {
    q.split('&')
        .filter(|p| !p.is_empty())
        .map(|p| {
            let (k, v) = p.split_once('=').unwrap_or((p, ""));
            (percent_decode(k, true), percent_decode(v, true))
        })
        .collect()
}

/// How long a client may take to send a request's head, and to complete a TLS handshake, before
/// the connection is closed (kube-apiserver's `ReadHeaderTimeout`, which also bounds the TLS
/// handshake in Go's HTTP server).
pub(crate) const READ_HEADER_TIMEOUT: Duration = Duration::from_secs(32);

/// Serves one request and logs it at debug level (method, path, status, duration), as
/// kube-apiserver's httplog does at verbosity 3.
async fn handle(shared: Arc<Shared>, req: hyper::Request<Incoming>) -> Response<Body> {
    let started = tokio::time::Instant::now();
    let method = req.method().clone();
    let uri = req.uri().clone();
    let gzip = req
        .headers()
        .get(header::ACCEPT_ENCODING)
        .and_then(|v| v.to_str().ok())
        .is_some_and(crate::body::accepts_gzip);
    let resp = serve(shared, req).await;
    let resp = if gzip {
        let query = parse_query(uri.query().unwrap_or_default());
        let param = |name: &str| {
            let value = query.iter().rev().find(|(k, _)| k == name);
            crate::endpoints::handlers::list::query_bool(value.map(|(_, v)| v.as_str()))
                == Some(true)
        };
        crate::body::compress(resp, param("watch") && param("sendInitialEvents"))
    } else {
        resp
    };
    tracing::debug!(
        target: "kcr_testenv::request",
        verb = %method,
        uri = %uri,
        status = resp.status().as_u16(),
        duration_ms = started.elapsed().as_secs_f64() * 1000.0,
        "HTTP"
    );
    resp
}

async fn serve(shared: Arc<Shared>, req: hyper::Request<Incoming>) -> Response<Body> {
    let (parts, body) = req.into_parts();
    let path = percent_decode(parts.uri.path(), false);
    let open = matches!(path.as_str(), "/healthz" | "/livez" | "/readyz");
    let anonymous = shared.options.token.is_some()
        && !open
        && parts.headers.get(header::AUTHORIZATION).is_none();
    let user = if open {
        crate::rbac::authentication::admin()
    } else if anonymous {
        // Anonymous (see `wire::anonymous`): only the public endpoints, read-only.
        let watch = parse_query(parts.uri.query().unwrap_or_default())
            .iter()
            .any(|(k, v)| k == "watch" && matches!(v.as_str(), "true" | "1"));
        match crate::wire::anonymous::forbidden(&parts.method, &path, watch) {
            Some(e) => return error_response(&e),
            None => crate::rbac::authentication::admin(),
        }
    } else {
        match crate::rbac::authenticate(&shared, &parts.headers)
            .and_then(|user| crate::rbac::impersonation::impersonate(&shared, user, &parts.headers))
        {
            Ok(user) => user,
            Err(e) => return error_response(&e),
        }
    };
    let limit = shared.options.body_limit;
    let body = match Limited::new(body, limit).collect().await {
        Ok(b) => b.to_bytes(),
        Err(e) => {
            if e.downcast_ref::<http_body_util::LengthLimitError>()
                .is_some()
            {
                return error_response(&ApiError::entity_too_large(limit));
            }
            return error_response(&ApiError::bad_request(format!("cannot read the body: {e}")));
        }
    };
    let req = Request {
        method: parts.method,
        path,
        query: parse_query(parts.uri.query().unwrap_or_default()),
        headers: parts.headers,
        body,
        warnings: Mutex::new(Vec::new()),
        user,
    };
    if shared.options.rbac && !open {
        let attributes = crate::rbac::request_info::attributes(&req, req.user.clone());
        let decision = crate::rbac::authorize(&shared, &attributes);
        if !decision.allowed() {
            return error_response(&crate::rbac::forbidden(&attributes, decision.reason()));
        }
        if let Err(e) = crate::rbac::escalation::check(&shared, &req) {
            return error_response(&e);
        }
    }
    if shared.options.admin_endpoint && req.path.starts_with(admin::PREFIX) {
        return admin::handle(&shared, &req).await;
    }
    let latency = shared.faults.lock().latency;
    if !latency.is_zero() {
        tokio::time::sleep(latency).await;
    }
    if let Some(resp) = review::handle(&shared, &req) {
        return resp;
    }
    if let Some(resp) = discovery::handle(&shared, &req) {
        return resp;
    }
    endpoints::handle(&shared, req).await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn queries_should_be_percent_decoded() {
        let q = parse_query("labelSelector=app%20in%20(a%2Cb)&x=a+b&flag&bad=%zz%4");
        assert_eq!(q[0], ("labelSelector".into(), "app in (a,b)".into()));
        assert_eq!(q[1], ("x".into(), "a b".into()));
        assert_eq!(q[2], ("flag".into(), String::new()));
        assert_eq!(q[3], ("bad".into(), "%zz%4".into()));
    }
}
