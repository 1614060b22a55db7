//! Secure serving for `/metrics` (controller-runtime `pkg/metrics/filters`): HTTPS, with every
//! request authenticated by a `TokenReview` of its bearer token and authorized by a
//! `SubjectAccessReview` of `get` (the lower-cased method) on its path as a non-resource URL.
//!
//! As controller-runtime's filter (which delegates to kube-apiserver):
//!
//! - no bearer token, or a token the `TokenReview` does not authenticate: `401 Unauthorized`;
//! - a user the `SubjectAccessReview` does not allow: `403` `Authorization denied for user X`;
//! - a review that fails (API server unreachable, error status): `500`;
//! - token reviews are cached for a minute (whatever their outcome), allowed decisions for five
//!   minutes and denied ones for 30 seconds, so a scrape does not cost two API calls.
//!
//! The manager's client needs `create` on `tokenreviews` (`authentication.k8s.io`) and
//! `subjectaccessreviews` (`authorization.k8s.io`); a scraper needs `get` on the non-resource URL
//! `/metrics`.

use std::collections::HashMap;
use std::convert::Infallible;
use std::hash::Hash;
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use http::{Request, Response, StatusCode, header};
use http_body_util::Full;
use hyper::body::Incoming;
use hyper::service::service_fn;
use hyper_util::rt::TokioIo;
use k8s_openapi::api::authentication::v1::{TokenReview, TokenReviewSpec, UserInfo};
use k8s_openapi::api::authorization::v1::{
    NonResourceAttributes, SubjectAccessReview, SubjectAccessReviewSpec,
};
use kcr_metrics::Registry;
use kube::api::{Api, PostParams};
use parking_lot::Mutex;
use tokio::net::TcpListener;
use tokio::time::Instant;
use tokio_rustls::TlsAcceptor;
use tokio_rustls::rustls::ServerConfig;
use tokio_rustls::rustls::crypto::ring;
use tokio_rustls::rustls::pki_types::pem::PemObject;
use tokio_rustls::rustls::pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer};
use tokio_util::sync::CancellationToken;

use crate::metrics_server::metrics_response;
use crate::server::{accept_loop, not_found, serve_connection, text};
use crate::{Error, Result};

/// How long token reviews are cached (controller-runtime's `CacheTTL`).
pub const DEFAULT_TOKEN_CACHE_TTL: Duration = Duration::from_secs(60);
/// How long allowed decisions are cached (controller-runtime's `AllowCacheTTL`).
pub const DEFAULT_ALLOW_CACHE_TTL: Duration = Duration::from_secs(5 * 60);
/// How long denied decisions are cached (controller-runtime's `DenyCacheTTL`).
pub const DEFAULT_DENY_CACHE_TTL: Duration = Duration::from_secs(30);

/// How long a client may take for the TLS handshake or to send its request headers.
const CLIENT_TIMEOUT: Duration = Duration::from_secs(30);
/// The most entries a review cache holds; past it, expired entries are dropped, then all.
const CACHE_CAPACITY: usize = 4096;

/// HTTPS and authentication/authorization for the metrics server; give it to
/// [`Options::secure_metrics`](crate::Options::secure_metrics).
///
/// ```
/// use kcr_controller_manager::Options;
/// use kcr_controller_manager::metrics_auth::SecureServing;
///
/// # fn main() -> kcr_controller_manager::Result<()> {
/// let secure = SecureServing::self_signed()?;
/// // A scraper trusts this certificate (or, as with controller-runtime's generated one,
/// // skips verification).
/// assert!(secure.certificate_pem().starts_with("-----BEGIN CERTIFICATE-----"));
/// let options = Options::default()
///     .metrics_bind_address(":8443")
///     .secure_metrics(secure);
/// # let _ = options;
/// # Ok(())
/// # }
/// ```
#[derive(Clone)]
#[must_use]
pub struct SecureServing {
    config: Arc<ServerConfig>,
    certificate_pem: String,
    token_cache_ttl: Duration,
    allow_cache_ttl: Duration,
    deny_cache_ttl: Duration,
}

impl std::fmt::Debug for SecureServing {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SecureServing")
            .field("token_cache_ttl", &self.token_cache_ttl)
            .field("allow_cache_ttl", &self.allow_cache_ttl)
            .field("deny_cache_ttl", &self.deny_cache_ttl)
            .finish_non_exhaustive()
    }
}

fn tls_error(e: impl std::fmt::Display) -> Error {
    Error::SecureServing(e.to_string())
}

impl SecureServing {
    /// Serves with a certificate chain and its private key, both PEM (as controller-runtime's
    /// `CertDir` with `tls.crt` and `tls.key`). The key may be PKCS#8, PKCS#1 or SEC1.
    pub fn from_pem(cert_chain_pem: &[u8], key_pem: &[u8]) -> Result<Self> {
        let chain = CertificateDer::pem_slice_iter(cert_chain_pem)
            .collect::<std::result::Result<Vec<_>, _>>()
            .map_err(|e| tls_error(format!("invalid certificate PEM: {e}")))?;
        if chain.is_empty() {
            return Err(tls_error("no certificate in the certificate PEM"));
        }
        let key = PrivateKeyDer::from_pem_slice(key_pem)
            .map_err(|e| tls_error(format!("invalid private key PEM: {e}")))?;
        let text = String::from_utf8_lossy(cert_chain_pem).into_owned();
        Self::new(chain, key, text)
    }

    /// Serves with a freshly generated self-signed certificate (ECDSA P-256) for `localhost`,
    /// `127.0.0.1` and `::1`, as controller-runtime does when no certificate is given. Clients
    /// trust [`certificate_pem`](Self::certificate_pem) or skip verification.
    pub fn self_signed() -> Result<Self> {
        let names = vec![
            "localhost".to_owned(),
            "127.0.0.1".to_owned(),
            "::1".to_owned(),
        ];
        let key = rcgen::KeyPair::generate().map_err(tls_error)?;
        let mut params = rcgen::CertificateParams::new(names).map_err(tls_error)?;
        params
            .distinguished_name
            .push(rcgen::DnType::CommonName, "kcr-controller-manager metrics");
        let cert = params.self_signed(&key).map_err(tls_error)?;
        let private = PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(key.serialize_der()));
        Self::new(vec![cert.der().clone()], private, cert.pem())
    }

    fn new(
        chain: Vec<CertificateDer<'static>>,
        key: PrivateKeyDer<'static>,
        certificate_pem: String,
    ) -> Result<Self> {
        let mut config = ServerConfig::builder_with_provider(Arc::new(ring::default_provider()))
            .with_safe_default_protocol_versions()
            .map_err(tls_error)?
            .with_no_client_auth()
            .with_single_cert(chain, key)
            .map_err(tls_error)?;
        config.alpn_protocols = vec![b"http/1.1".to_vec()];
        Ok(Self {
            config: Arc::new(config),
            certificate_pem,
            token_cache_ttl: DEFAULT_TOKEN_CACHE_TTL,
            allow_cache_ttl: DEFAULT_ALLOW_CACHE_TTL,
            deny_cache_ttl: DEFAULT_DENY_CACHE_TTL,
        })
    }

    /// The serving certificate (chain), PEM.
    pub fn certificate_pem(&self) -> &str {
        &self.certificate_pem
    }

    /// How long a token's review is cached, whatever its outcome (default 1 minute; zero: not
    /// cached).
    pub fn token_cache_ttl(mut self, ttl: Duration) -> Self {
        self.token_cache_ttl = ttl;
        self
    }

    /// How long an allowed decision is cached (default 5 minutes; zero: not cached).
    pub fn allow_cache_ttl(mut self, ttl: Duration) -> Self {
        self.allow_cache_ttl = ttl;
        self
    }

    /// How long a denied decision is cached (default 30 seconds; zero: not cached).
    pub fn deny_cache_ttl(mut self, ttl: Duration) -> Self {
        self.deny_cache_ttl = ttl;
        self
    }
}

/// A map whose entries expire.
#[derive(Debug)]
struct TtlCache<K, V> {
    entries: HashMap<K, (V, Instant)>,
}

impl<K: Hash + Eq, V: Clone> TtlCache<K, V> {
    fn new() -> Self {
        Self {
            entries: HashMap::new(),
        }
    }

    /// The value, unless absent or expired at `now`.
    fn get(&self, key: &K, now: Instant) -> Option<V> {
        self.entries
            .get(key)
            .filter(|(_, expires)| now < *expires)
            .map(|(v, _)| v.clone())
    }

    /// Keeps `value` until `now + ttl` (a zero `ttl` keeps nothing).
    fn insert(&mut self, key: K, value: V, ttl: Duration, now: Instant) {
        if ttl.is_zero() {
            return;
        }
        if self.entries.len() >= CACHE_CAPACITY {
            self.entries.retain(|_, (_, expires)| now < *expires);
            if self.entries.len() >= CACHE_CAPACITY {
                self.entries.clear();
            }
        }
        self.entries.insert(key, (value, now + ttl));
    }
}

/// The authenticated user: what the `SubjectAccessReview` asks about.
#[derive(Debug, Clone)]
struct User(UserInfo);

impl User {
    fn name(&self) -> &str {
        self.0.username.as_deref().unwrap_or_default()
    }

    /// A cache key for a decision about this user.
    fn key(&self, verb: &str, path: &str) -> String {
        let mut groups = self.0.groups.clone().unwrap_or_default();
        groups.sort();
        format!(
            "{}\0{}\0{}\0{verb}\0{path}",
            self.name(),
            self.0.uid.as_deref().unwrap_or_default(),
            groups.join("\u{1}")
        )
    }
}

/// The filter in front of `/metrics`: authentication, authorization, their caches.
struct Filter {
    client: kube::Client,
    registry: Registry,
    token_cache_ttl: Duration,
    allow_cache_ttl: Duration,
    deny_cache_ttl: Duration,
    // Both locks are held only to read or insert an entry, never across an `.await`.
    tokens: Mutex<TtlCache<String, Option<User>>>,
    decisions: Mutex<TtlCache<String, bool>>,
}

/// The bearer token of a request, if it has a non-empty one (scheme case-insensitive).
fn bearer_token<B>(request: &Request<B>) -> Option<&str> {
    let value = request
        .headers()
        .get(header::AUTHORIZATION)?
        .to_str()
        .ok()?;
    let (scheme, token) = value.trim().split_once(' ')?;
    let token = token.trim();
    (scheme.eq_ignore_ascii_case("bearer") && !token.is_empty()).then_some(token)
}

impl Filter {
    async fn authenticate(&self, token: &str) -> std::result::Result<Option<User>, kube::Error> {
        if let Some(cached) = self.tokens.lock().get(&token.to_owned(), Instant::now()) {
            return Ok(cached);
        }
        // `token` is an `Option<String>` before Kubernetes 1.36 and a `String` from 1.36: `into`
        // builds either, and is a no-op (which clippy flags) with the newer versions.
        #[allow(clippy::useless_conversion)]
        let review = TokenReview {
            spec: TokenReviewSpec {
                token: token.to_owned().into(),
                ..Default::default()
            },
            ..Default::default()
        };
        let answer = Api::<TokenReview>::all(self.client.clone())
            .create(&PostParams::default(), &review)
            .await?;
        let user = answer
            .status
            .filter(|s| s.authenticated == Some(true))
            .and_then(|s| s.user)
            .map(User);
        self.tokens.lock().insert(
            token.to_owned(),
            user.clone(),
            self.token_cache_ttl,
            Instant::now(),
        );
        Ok(user)
    }

    async fn authorize(
        &self,
        user: &User,
        verb: &str,
        path: &str,
    ) -> std::result::Result<bool, kube::Error> {
        let key = user.key(verb, path);
        if let Some(cached) = self.decisions.lock().get(&key, Instant::now()) {
            return Ok(cached);
        }
        let review = SubjectAccessReview {
            spec: SubjectAccessReviewSpec {
                user: user.0.username.clone(),
                uid: user.0.uid.clone(),
                groups: user.0.groups.clone(),
                extra: user.0.extra.clone(),
                non_resource_attributes: Some(NonResourceAttributes {
                    path: Some(path.to_owned()),
                    verb: Some(verb.to_owned()),
                }),
                ..Default::default()
            },
            ..Default::default()
        };
        let answer = Api::<SubjectAccessReview>::all(self.client.clone())
            .create(&PostParams::default(), &review)
            .await?;
        let allowed = answer.status.is_some_and(|s| s.allowed);
        let ttl = if allowed {
            self.allow_cache_ttl
        } else {
            self.deny_cache_ttl
        };
        self.decisions
            .lock()
            .insert(key, allowed, ttl, Instant::now());
        Ok(allowed)
    }

    async fn handle(&self, request: Request<Incoming>) -> Response<Full<Bytes>> {
        let Some(token) = bearer_token(&request) else {
            return text(StatusCode::UNAUTHORIZED, "Unauthorized\n");
        };
        let user = match self.authenticate(token).await {
            Ok(Some(user)) => user,
            Ok(None) => return text(StatusCode::UNAUTHORIZED, "Unauthorized\n"),
            Err(e) => {
                tracing::error!(error = %e, "metrics: authentication failed");
                return text(StatusCode::INTERNAL_SERVER_ERROR, "Authentication failed\n");
            }
        };
        let verb = request.method().as_str().to_ascii_lowercase();
        let path = request.uri().path();
        match self.authorize(&user, &verb, path).await {
            Ok(true) => {}
            Ok(false) => {
                tracing::debug!(user = user.name(), path, "metrics: authorization denied");
                return text(
                    StatusCode::FORBIDDEN,
                    format!("Authorization denied for user {}\n", user.name()),
                );
            }
            Err(e) => {
                tracing::error!(error = %e, user = user.name(), "metrics: authorization failed");
                return text(
                    StatusCode::INTERNAL_SERVER_ERROR,
                    format!("Authorization for user {} failed\n", user.name()),
                );
            }
        }
        if path == "/metrics" {
            metrics_response(&self.registry)
        } else {
            not_found()
        }
    }
}

/// Serves `/metrics` from `registry` over HTTPS behind the filter, until `stop` is cancelled;
/// then lets open connections finish their request in flight and returns.
pub(crate) async fn serve(
    listener: TcpListener,
    secure: SecureServing,
    client: kube::Client,
    registry: Registry,
    stop: CancellationToken,
) {
    let filter = Arc::new(Filter {
        client,
        registry,
        token_cache_ttl: secure.token_cache_ttl,
        allow_cache_ttl: secure.allow_cache_ttl,
        deny_cache_ttl: secure.deny_cache_ttl,
        tokens: Mutex::new(TtlCache::new()),
        decisions: Mutex::new(TtlCache::new()),
    });
    let acceptor = TlsAcceptor::from(secure.config.clone());
    accept_loop(listener, stop, move |stream, stop| {
        let filter = filter.clone();
        let acceptor = acceptor.clone();
        async move {
            let tls = match tokio::time::timeout(CLIENT_TIMEOUT, acceptor.accept(stream)).await {
                Ok(Ok(tls)) => tls,
                Ok(Err(e)) => {
                    tracing::debug!(error = %e, "metrics: TLS handshake failed");
                    return;
                }
                Err(_) => {
                    tracing::debug!("metrics: TLS handshake timed out");
                    return;
                }
            };
            let service = service_fn(move |request: Request<Incoming>| {
                let filter = filter.clone();
                async move { Ok::<_, Infallible>(filter.handle(request).await) }
            });
            serve_connection(TokioIo::new(tls), service, CLIENT_TIMEOUT, stop).await;
        }
    })
    .await;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test(start_paused = true)]
    async fn cache_entries_should_expire_after_their_ttl() {
        let mut cache = TtlCache::new();
        let start = Instant::now();
        cache.insert("allowed", true, Duration::from_secs(300), start);
        cache.insert("denied", false, Duration::from_secs(30), start);
        cache.insert("uncached", true, Duration::ZERO, start);
        assert_eq!(cache.get(&"allowed", start), Some(true));
        assert_eq!(cache.get(&"denied", start), Some(false));
        assert_eq!(cache.get(&"uncached", start), None);
        tokio::time::advance(Duration::from_secs(30)).await;
        assert_eq!(cache.get(&"denied", Instant::now()), None);
        assert_eq!(cache.get(&"allowed", Instant::now()), Some(true));
        tokio::time::advance(Duration::from_secs(270)).await;
        assert_eq!(cache.get(&"allowed", Instant::now()), None);
    }

    #[tokio::test(start_paused = true)]
    async fn a_full_cache_should_drop_expired_entries_first() {
        let mut cache = TtlCache::new();
        let start = Instant::now();
        for i in 0..CACHE_CAPACITY - 1 {
            cache.insert(i, i, Duration::from_secs(1), start);
        }
        cache.insert(usize::MAX, 0, Duration::from_secs(60), start);
        let later = start + Duration::from_secs(2);
        cache.insert(usize::MAX - 1, 1, Duration::from_secs(60), later);
        assert_eq!(cache.entries.len(), 2);
        assert_eq!(cache.get(&usize::MAX, later), Some(0));
    }

    #[test]
    fn bearer_tokens_should_be_parsed_as_kube_apiserver_does() {
        let with = |value: &str| {
            Request::builder()
                .header(header::AUTHORIZATION, value)
                .body(())
                .unwrap_or_default()
        };
        assert_eq!(bearer_token(&with("Bearer abc")), Some("abc"));
        assert_eq!(bearer_token(&with("bearer  abc ")), Some("abc"));
        assert_eq!(bearer_token(&with("Bearer ")), None);
        assert_eq!(bearer_token(&with("Basic abc")), None);
        assert_eq!(bearer_token(&Request::new(())), None);
    }

    #[test]
    fn certificates_should_load_from_pem_and_garbage_be_refused() {
        let generated = rcgen::generate_simple_self_signed(vec!["localhost".to_owned()]).unwrap();
        let cert = generated.cert.pem();
        let key = generated.signing_key.serialize_pem();
        let secure = SecureServing::from_pem(cert.as_bytes(), key.as_bytes());
        assert!(secure.is_ok(), "{secure:?}");
        assert!(SecureServing::from_pem(b"not a pem", key.as_bytes()).is_err());
        assert!(SecureServing::from_pem(cert.as_bytes(), b"not a pem").is_err());
        // A key that does not match the certificate.
        let other = rcgen::KeyPair::generate().map(|k| k.serialize_pem());
        assert!(
            matches!(other, Ok(ref k) if SecureServing::from_pem(cert.as_bytes(), k.as_bytes()).is_err())
        );
    }
}
