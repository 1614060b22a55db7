//! The manager's options (controller-runtime `manager.Options`).

use std::time::Duration;

use kcr_metrics::Registry;

use crate::leaderelection::{DEFAULT_LEASE_DURATION, DEFAULT_RENEW_DEADLINE, DEFAULT_RETRY_PERIOD};

/// The default graceful shutdown timeout (controller-runtime's).
pub const DEFAULT_GRACEFUL_SHUTDOWN_TIMEOUT: Duration = Duration::from_secs(30);

/// The default resync period of the manager's informers (controller-runtime's
/// `SyncPeriod`: 10 hours).
pub const DEFAULT_SYNC_PERIOD: Duration = Duration::from_secs(10 * 60 * 60);

/// How a [`Manager`](crate::Manager) runs.
///
/// ```
/// use std::time::Duration;
/// use kcr_controller_manager::Options;
///
/// let options = Options::default()
///     .leader_election("my-operator-lock")
///     .leader_election_namespace("operators")
///     .leader_election_release_on_cancel(true)
///     .metrics_bind_address("0") // disabled
///     .health_probe_bind_address(":8081")
///     .graceful_shutdown_timeout(Some(Duration::from_secs(10)));
/// # let _ = options;
/// ```
#[derive(Clone, Debug)]
#[must_use]
pub struct Options {
    pub(crate) leader_election: bool,
    pub(crate) leader_election_id: String,
    pub(crate) leader_election_namespace: Option<String>,
    pub(crate) leader_election_identity: Option<String>,
    pub(crate) lease_duration: Duration,
    pub(crate) renew_deadline: Duration,
    pub(crate) retry_period: Duration,
    pub(crate) release_on_cancel: bool,
    pub(crate) metrics_bind_address: String,
    pub(crate) health_probe_bind_address: String,
    pub(crate) graceful_shutdown_timeout: Option<Duration>,
    pub(crate) sync_period: Duration,
    /// `None`: the kcr-metrics default registry.
    pub(crate) registry: Option<Registry>,
    /// `Some`: `/metrics` over HTTPS behind TokenReview / SubjectAccessReview.
    pub(crate) secure_metrics: Option<crate::metrics_auth::SecureServing>,
    /// What the informers cache (namespaces, selectors, transforms).
    pub(crate) cache: super::InformerOptions,
    /// Whether the client [`Manager::from_config`](crate::Manager::from_config) builds times
    /// its requests (`rest_client_request_duration_seconds`).
    pub(crate) client_latency_metrics: bool,
    /// Whether [`CachedClient`](crate::client::CachedClient) reads wait for their own writes.
    pub(crate) read_your_own_writes: bool,
}

impl Default for Options {
    /// Leader election off; when turned on: lease 15 s, renew deadline 10 s,
    /// retry period 2 s, the client's default namespace, identity
    /// `hostname_<random>`, no release on cancel. Metrics on `:8080`, probes
    /// off, graceful shutdown timeout 30 s, informers resynced every 10 hours,
    /// the kcr-metrics default registry, read-your-own-writes on.
    fn default() -> Self {
        Self {
            leader_election: false,
            leader_election_id: String::new(),
            leader_election_namespace: None,
            leader_election_identity: None,
            lease_duration: DEFAULT_LEASE_DURATION,
            renew_deadline: DEFAULT_RENEW_DEADLINE,
            retry_period: DEFAULT_RETRY_PERIOD,
            release_on_cancel: false,
            metrics_bind_address: ":8080".into(),
            health_probe_bind_address: "0".into(),
            graceful_shutdown_timeout: Some(DEFAULT_GRACEFUL_SHUTDOWN_TIMEOUT),
            sync_period: DEFAULT_SYNC_PERIOD,
            registry: None,
            secure_metrics: None,
            cache: super::InformerOptions::default(),
            client_latency_metrics: false,
            read_your_own_writes: true,
        }
    }
}

impl Options {
    /// The registry `/metrics` serves.
    pub(crate) fn registry(&self) -> Registry {
        self.registry
            .clone()
            .unwrap_or_else(|| kcr_metrics::registry().clone())
    }

    /// Turns leader election on, on the `Lease` named `lease_name`
    /// (controller-runtime `LeaderElectionID`).
    pub fn leader_election(mut self, lease_name: impl Into<String>) -> Self {
        self.leader_election = true;
        self.leader_election_id = lease_name.into();
        self
    }

    /// The namespace of the lease (default: the client's default namespace).
    pub fn leader_election_namespace(mut self, namespace: impl Into<String>) -> Self {
        self.leader_election_namespace = Some(namespace.into());
        self
    }

    /// This replica's identity in the lease (default: `hostname_<random>`).
    pub fn leader_election_identity(mut self, identity: impl Into<String>) -> Self {
        self.leader_election_identity = Some(identity.into());
        self
    }

    /// See [`LeaderElectionConfig::lease_duration`](crate::leaderelection::LeaderElectionConfig::lease_duration).
    pub fn lease_duration(mut self, d: Duration) -> Self {
        self.lease_duration = d;
        self
    }

    /// See [`LeaderElectionConfig::renew_deadline`](crate::leaderelection::LeaderElectionConfig::renew_deadline).
    pub fn renew_deadline(mut self, d: Duration) -> Self {
        self.renew_deadline = d;
        self
    }

    /// See [`LeaderElectionConfig::retry_period`](crate::leaderelection::LeaderElectionConfig::retry_period).
    pub fn retry_period(mut self, d: Duration) -> Self {
        self.retry_period = d;
        self
    }

    /// Release the lease when the manager stops, after every leader
    /// runnable has returned (controller-runtime
    /// `LeaderElectionReleaseOnCancel`).
    pub fn leader_election_release_on_cancel(mut self, release: bool) -> Self {
        self.release_on_cancel = release;
        self
    }

    /// What the manager's informers cache (controller-runtime `Options.Cache`): the
    /// namespaces they watch, their selectors and transforms, by default and per type. The
    /// default caches every namespace and every object.
    pub fn informers(mut self, cache: super::InformerOptions) -> Self {
        self.cache = cache;
        self
    }

    /// Whether the manager's [`CachedClient`](crate::client::CachedClient)s read their own
    /// writes: a read from the cache waits (bounded by its deadline) until the cache shows the
    /// writes this process made through them (controller-runtime v0.25's experimental
    /// read-your-own-write client). On by default (controller-runtime's is off): a read with
    /// nothing pending costs one atomic load (see [`client`](crate::client)). Off, reads
    /// return the cache as it is.
    pub fn read_your_own_writes(mut self, on: bool) -> Self {
        self.read_your_own_writes = on;
        self
    }

    /// Where `/metrics` is served (`"0"` disables; `":8080"` by default).
    pub fn metrics_bind_address(mut self, address: impl Into<String>) -> Self {
        self.metrics_bind_address = address.into();
        self
    }

    /// Where `/healthz` and `/readyz` are served (`"0"`, the default,
    /// disables).
    pub fn health_probe_bind_address(mut self, address: impl Into<String>) -> Self {
        self.health_probe_bind_address = address.into();
        self
    }

    /// How long runnables get to stop (`None` waits for ever; `Some(ZERO)`
    /// does not wait). Default 30 s.
    pub fn graceful_shutdown_timeout(mut self, timeout: Option<Duration>) -> Self {
        self.graceful_shutdown_timeout = timeout;
        self
    }

    /// How often the manager's informers replay their caches to the
    /// controllers' handlers (zero: never; default 10 hours, as
    /// controller-runtime's `SyncPeriod`). Replayed objects are queued at low
    /// priority.
    pub fn sync_period(mut self, period: Duration) -> Self {
        self.sync_period = period;
        self
    }

    /// The registry `/metrics` serves (default: the kcr-metrics default
    /// registry, where every kcr crate registers). The manager registers its
    /// leader-election families there.
    pub fn metrics_registry(mut self, registry: Registry) -> Self {
        self.registry = Some(registry);
        self
    }

    /// Times the requests of the client [`Manager::from_config`](crate::Manager::from_config)
    /// builds in `rest_client_request_duration_seconds` (by `verb` and `host`), registered on
    /// the manager's registry (off by default: controller-runtime registers it only when asked
    /// with `RegisterRESTClientMetrics`). `rest_client_requests_total` is always recorded.
    pub fn client_latency_metrics(mut self, on: bool) -> Self {
        self.client_latency_metrics = on;
        self
    }

    /// Serves `/metrics` over HTTPS, each request authenticated with a `TokenReview` of its
    /// bearer token and authorized with a `SubjectAccessReview` (`get` on `/metrics`), as
    /// controller-runtime's `filters.WithAuthenticationAndAuthorization` (off by default). See
    /// [`metrics_auth`](crate::metrics_auth).
    pub fn secure_metrics(mut self, secure: crate::metrics_auth::SecureServing) -> Self {
        self.secure_metrics = Some(secure);
        self
    }
}

/// `hostname_<random uuid-like suffix>`, as controller-runtime builds it.
pub(crate) fn default_identity() -> String {
    let host = std::fs::read_to_string("/proc/sys/kernel/hostname")
        .ok()
        .map(|h| h.trim().to_owned())
        .filter(|h| !h.is_empty())
        .or_else(|| std::env::var("HOSTNAME").ok().filter(|h| !h.is_empty()))
        .or_else(|| std::env::var("COMPUTERNAME").ok().filter(|h| !h.is_empty()))
        .unwrap_or_else(|| "localhost".to_owned());
    let r: u128 = rand::random();
    let hex = format!("{r:032x}");
    format!(
        "{host}_{}-{}-{}-{}-{}",
        &hex[0..8],
        &hex[8..12],
        &hex[12..16],
        &hex[16..20],
        &hex[20..32]
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_default_identity_should_be_hostname_and_a_random_suffix() {
        let a = default_identity();
        let b = default_identity();
        assert_ne!(a, b);
        let (host, suffix) = a.rsplit_once('_').unwrap_or_default();
        assert!(!host.is_empty());
        assert_eq!(suffix.len(), 36);
    }

    #[test]
    fn defaults_should_match_controller_runtime() {
        let o = Options::default();
        assert!(!o.leader_election);
        assert_eq!(o.graceful_shutdown_timeout, Some(Duration::from_secs(30)));
        assert_eq!(o.metrics_bind_address, ":8080");
        assert_eq!(o.health_probe_bind_address, "0");
        assert!(
            o.read_your_own_writes,
            "kcr's own default, measured as free when idle"
        );
        assert_eq!(
            (o.lease_duration, o.renew_deadline, o.retry_period),
            (
                Duration::from_secs(15),
                Duration::from_secs(10),
                Duration::from_secs(2)
            )
        );
    }
}
