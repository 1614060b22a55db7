//! Secure serving of `/metrics` against kcr-testenv's review APIs over real HTTPS: no token and
//! unknown tokens get 401, a user without permission 403, a permitted user the metric families;
//! decisions are cached.

use std::net::SocketAddr;
use std::sync::Arc;

use kcr_controller_manager::metrics_auth::SecureServing;
use kcr_controller_manager::{Manager, Options};
use kcr_metrics::Registry;
use kcr_testenv::{AccessRule, TestEnv, UserInfo};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio::sync::oneshot;
use tokio::task::JoinHandle;
use tokio_rustls::TlsConnector;
use tokio_rustls::rustls::pki_types::pem::PemObject;
use tokio_rustls::rustls::pki_types::{CertificateDer, ServerName};
use tokio_rustls::rustls::{ClientConfig, RootCertStore};

mod common;
use common::start;

type TestResult = Result<(), Box<dyn std::error::Error>>;
type BoxResult<T> = Result<T, Box<dyn std::error::Error>>;

const SCRAPER: &str = "scraper-token";
const STRANGER: &str = "stranger-token";

/// A server that serves HTTPS and knows two users: `prometheus` may `get` `/metrics`,
/// `stranger` may not.
async fn apiserver() -> BoxResult<TestEnv> {
    Ok(TestEnv::builder()
        .tls(true)
        .token("manager-token")
        .user_token(SCRAPER, UserInfo::new("prometheus").groups(["monitoring"]))
        .user_token(STRANGER, UserInfo::new("stranger"))
        .allow(
            AccessRule::user("prometheus")
                .verbs(["get"])
                .non_resource_urls(["/metrics"]),
        )
        .start()
        .await?)
}

struct Running {
    addr: SocketAddr,
    tls: TlsConnector,
    stop: Option<oneshot::Sender<()>>,
    task: JoinHandle<kcr_controller_manager::Result<()>>,
}

impl Running {
    async fn shutdown(mut self) -> TestResult {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        self.task.await??;
        Ok(())
    }

    /// `GET path` over HTTPS with an optional bearer token: (status, body).
    async fn get(&self, path: &str, token: Option<&str>) -> BoxResult<(u16, String)> {
        let tcp = TcpStream::connect(self.addr).await?;
        let mut stream = self
            .tls
            .connect(ServerName::try_from("localhost")?, tcp)
            .await?;
        let auth = token.map_or_else(String::new, |t| format!("Authorization: Bearer {t}\r\n"));
        stream
            .write_all(
                format!(
                    "GET {path} HTTP/1.1\r\nHost: localhost\r\n{auth}Connection: close\r\n\r\n"
                )
                .as_bytes(),
            )
            .await?;
        let mut raw = Vec::new();
        match stream.read_to_end(&mut raw).await {
            Ok(_) => {}
            // A peer that closes without close_notify after a complete response.
            Err(e) if e.kind() == std::io::ErrorKind::UnexpectedEof && !raw.is_empty() => {}
            Err(e) => return Err(e.into()),
        }
        let text = String::from_utf8(raw)?;
        let (head, body) = text.split_once("\r\n\r\n").ok_or("no header end")?;
        let status = head.split_whitespace().nth(1).ok_or("no status")?.parse()?;
        Ok((status, body.to_owned()))
    }
}

async fn start_manager(env: &TestEnv, secure: SecureServing) -> BoxResult<Running> {
    let registry = Registry::new();
    let counter =
        kcr_metrics::prometheus::IntCounter::new("kcr_secure_test_total", "a test counter")?;
    registry.register(Box::new(counter.clone()))?;
    counter.inc();
    let mut roots = RootCertStore::empty();
    for cert in CertificateDer::pem_slice_iter(secure.certificate_pem().as_bytes()) {
        roots.add(cert?)?;
    }
    let provider = Arc::new(tokio_rustls::rustls::crypto::ring::default_provider());
    let config = ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()?
        .with_root_certificates(roots)
        .with_no_client_auth();
    let options = Options::default()
        .metrics_bind_address("127.0.0.1:0")
        .metrics_registry(registry)
        .secure_metrics(secure);
    let manager = Manager::new(env.client(), options)?;
    let (tx, task) = start(&manager);
    let addr = manager.metrics_addr().await.ok_or("metrics not served")?;
    Ok(Running {
        addr,
        tls: TlsConnector::from(Arc::new(config)),
        stop: Some(tx),
        task,
    })
}

#[tokio::test]
async fn secure_metrics_should_answer_401_403_and_200_as_controller_runtime() -> TestResult {
    if kcr_testenv::TestCluster::skip_on_real_cluster(
        "secure_metrics_should_answer_401_403_and_200_as_controller_runtime",
        "kcr-testenv's in-process token and access review rules (users, tokens, their counts)",
    ) {
        return Ok(());
    }
    let env = apiserver().await?;
    let running = start_manager(&env, SecureServing::self_signed()?).await?;

    let (status, body) = running.get("/metrics", None).await?;
    assert_eq!(status, 401, "{body}");
    let (status, body) = running.get("/metrics", Some("nobody-knows-this")).await?;
    assert_eq!(status, 401, "{body}");
    let (status, body) = running.get("/metrics", Some(STRANGER)).await?;
    assert_eq!(status, 403, "{body}");
    assert!(
        body.contains("Authorization denied for user stranger"),
        "{body}"
    );
    let (status, body) = running.get("/metrics", Some(SCRAPER)).await?;
    assert_eq!(status, 200, "{body}");
    assert!(body.contains("kcr_secure_test_total 1"), "{body}");
    // Authorized per path: the scraper may not read anything else.
    let (status, _) = running.get("/debug", Some(SCRAPER)).await?;
    assert_eq!(status, 403);

    running.shutdown().await
}

#[tokio::test]
async fn secure_metrics_should_refuse_plain_http() -> TestResult {
    if kcr_testenv::TestCluster::skip_on_real_cluster(
        "secure_metrics_should_refuse_plain_http",
        "kcr-testenv's in-process token and access review rules (users, tokens, their counts)",
    ) {
        return Ok(());
    }
    let env = apiserver().await?;
    let running = start_manager(&env, SecureServing::self_signed()?).await?;
    let mut tcp = TcpStream::connect(running.addr).await?;
    tcp.write_all(b"GET /metrics HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n")
        .await?;
    let mut raw = Vec::new();
    let _ = tcp.read_to_end(&mut raw).await;
    assert!(!String::from_utf8_lossy(&raw).contains("kcr_secure_test_total"));
    assert!(!raw.starts_with(b"HTTP/1.1 200"));
    running.shutdown().await
}

#[tokio::test]
async fn decisions_should_be_cached_within_their_ttl() -> TestResult {
    if kcr_testenv::TestCluster::skip_on_real_cluster(
        "decisions_should_be_cached_within_their_ttl",
        "kcr-testenv's in-process token and access review rules (users, tokens, their counts)",
    ) {
        return Ok(());
    }
    let env = apiserver().await?;
    let running = start_manager(&env, SecureServing::self_signed()?).await?;
    assert_eq!(running.get("/metrics", Some(SCRAPER)).await?.0, 200);
    assert_eq!(running.get("/metrics", Some("late-token")).await?.0, 401);

    // The API server changes its mind; the cached answers stand (allow for 5 minutes, token
    // reviews for 1 minute).
    env.reviews().clear_rules();
    env.reviews().remove_token(SCRAPER);
    env.reviews()
        .add_token("late-token", UserInfo::new("prometheus"));
    assert_eq!(running.get("/metrics", Some(SCRAPER)).await?.0, 200);
    assert_eq!(running.get("/metrics", Some("late-token")).await?.0, 401);
    running.shutdown().await
}

#[tokio::test]
async fn without_caching_every_request_should_be_reviewed_again() -> TestResult {
    if kcr_testenv::TestCluster::skip_on_real_cluster(
        "without_caching_every_request_should_be_reviewed_again",
        "kcr-testenv's in-process token and access review rules (users, tokens, their counts)",
    ) {
        return Ok(());
    }
    let env = apiserver().await?;
    let secure = SecureServing::self_signed()?
        .token_cache_ttl(std::time::Duration::ZERO)
        .allow_cache_ttl(std::time::Duration::ZERO)
        .deny_cache_ttl(std::time::Duration::ZERO);
    let running = start_manager(&env, secure).await?;
    assert_eq!(running.get("/metrics", Some(SCRAPER)).await?.0, 200);
    assert_eq!(running.get("/metrics", Some(STRANGER)).await?.0, 403);

    env.reviews().clear_rules();
    assert_eq!(running.get("/metrics", Some(SCRAPER)).await?.0, 403);
    env.reviews().allow(
        AccessRule::group("monitoring")
            .verbs(["get"])
            .non_resource_urls(["/metrics"]),
    );
    assert_eq!(running.get("/metrics", Some(SCRAPER)).await?.0, 200);
    env.reviews().remove_token(SCRAPER);
    assert_eq!(running.get("/metrics", Some(SCRAPER)).await?.0, 401);
    running.shutdown().await
}

#[tokio::test]
async fn a_failing_review_should_answer_500() -> TestResult {
    if kcr_testenv::TestCluster::skip_on_real_cluster(
        "a_failing_review_should_answer_500",
        "kcr-testenv's in-process token and access review rules (users, tokens, their counts)",
    ) {
        return Ok(());
    }
    let env = apiserver().await?;
    let running = start_manager(&env, SecureServing::self_signed()?).await?;
    env.faults().fail_next(
        1,
        kcr_testenv::Failure::internal_error().resource("tokenreviews"),
    );
    let (status, body) = running.get("/metrics", Some(SCRAPER)).await?;
    assert_eq!(status, 500, "{body}");
    // Errors are not cached: the next scrape is reviewed again.
    assert_eq!(running.get("/metrics", Some(SCRAPER)).await?.0, 200);
    running.shutdown().await
}
