//! The errors of kcr-controller-manager.

use std::time::Duration;

/// A boxed error from user code (a reconciler, a runnable, a health check):
/// kcr-cache's, re-exported so that a controller needs no kcr-cache import.
pub use kcr_cache::BoxError;

/// The errors of kcr-controller-manager.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// A leader-election setting breaks one of client-go's rules.
    #[error("invalid leader election config: {0}")]
    InvalidLeaderElectionConfig(&'static str),

    /// A call to the Kubernetes API failed.
    #[error("kubernetes API: {0}")]
    Kube(#[source] kube::Error),

    /// [`LeaseLock::update`](crate::leaderelection::LeaseLock) was called
    /// before the lease was read or created.
    #[error("lease {0} not initialized: get or create it before updating")]
    LockNotInitialized(String),

    /// A bind address could not be parsed.
    #[error("invalid bind address {0:?}")]
    InvalidBindAddress(String),

    /// A listener could not be bound.
    #[error("cannot listen on {address}: {source}")]
    Bind {
        /// The address asked for.
        address: String,
        /// What the OS said.
        #[source]
        source: std::io::Error,
    },

    /// A runnable returned an error.
    #[error("runnable failed: {0}")]
    Runnable(#[source] BoxError),

    /// A runnable panicked.
    #[error("runnable panicked: {0}")]
    RunnablePanicked(String),

    /// This replica lost the leader-election lease.
    #[error("leader election lost")]
    LeaderElectionLost,

    /// Runnables were still running when the graceful shutdown timeout ran out.
    #[error("runnables did not stop within the graceful shutdown timeout of {0:?}")]
    GracefulShutdownTimeout(Duration),

    /// [`Manager::start`](crate::Manager::start) was called twice.
    #[error("manager already started")]
    AlreadyStarted,

    /// A runnable was added after the manager began to stop.
    #[error("cannot add a runnable: the manager is stopping")]
    Stopping,

    /// A metric family could not be registered or encoded.
    #[error("metrics: {0}")]
    Metrics(#[source] kcr_metrics::Error),

    /// A controller's builder was given an unusable setting.
    #[error("invalid controller {name:?}: {reason}")]
    InvalidController {
        /// The controller's name.
        name: String,
        /// What is wrong.
        reason: String,
    },

    /// Another controller of this process already has this name (its
    /// metrics would mix with this one's); see
    /// [`Builder::skip_name_validation`](crate::controller::Builder::skip_name_validation).
    #[error("a controller named {0:?} already exists")]
    ControllerNameTaken(String),

    /// The informers a controller watches did not sync within its
    /// cache-sync timeout (controller-runtime's `CacheSyncTimeout`, 2
    /// minutes by default): e.g. their lists keep failing, or an object
    /// cannot be decoded.
    #[error(
        "controller {controller:?}: timed out after {timeout:?} waiting for the caches of {} to sync",
        resources.join(", ")
    )]
    CacheSyncTimeout {
        /// The controller's name.
        controller: String,
        /// Its cache-sync timeout.
        timeout: Duration,
        /// The informers (resources) that had not synced.
        resources: Vec<String>,
    },

    /// A controller was started twice.
    #[error("controller {0:?} already started")]
    ControllerAlreadyStarted(String),

    /// An informer refused an event handler (it has stopped).
    #[error("informer: {0}")]
    Informer(#[source] kcr_informer::Error),

    /// The event recorder was created outside a tokio runtime.
    #[error("the event recorder needs a tokio runtime: {0}")]
    NoRuntime(#[source] tokio::runtime::TryCurrentError),

    /// The metrics server's TLS certificate or key is unusable.
    #[error("secure metrics serving: {0}")]
    SecureServing(String),

    /// A read of a [`CachedClient`](crate::client::CachedClient) reached its deadline before
    /// the cache showed this process's own write (read-your-own-writes): the watch is late,
    /// or the informer cannot see the write.
    #[error(
        "the cache of {kind} did not show this process's write{} by the read's deadline: it needs resource version {wanted}, it has reached {reached}",
        object.as_deref().map(|o| format!(" of {o}")).unwrap_or_default()
    )]
    CacheNotCaughtUp {
        /// The kind read.
        kind: String,
        /// The object's key (`namespace/name`), for a get; `None` for a list.
        object: Option<String>,
        /// The resource version the cache had to reach (0 when only a deleted UID was awaited).
        wanted: u64,
        /// The resource version it had reached.
        reached: u64,
    },
    /// A sharding configuration was refused (see
    /// [`ShardMember::new`](crate::sharding::ShardMember::new)).
    #[error("invalid sharding config: {0}")]
    InvalidShardingConfig(String),
}

impl Error {
    /// Whether this is a Kubernetes `404 Not Found`.
    pub fn is_not_found(&self) -> bool {
        matches!(self, Error::Kube(kube::Error::Api(status)) if status.code == 404)
    }

    /// Whether this is a Kubernetes `409 Conflict` (someone else wrote first).
    pub fn is_conflict(&self) -> bool {
        matches!(self, Error::Kube(kube::Error::Api(status)) if status.code == 409)
    }
}

impl From<kube::Error> for Error {
    fn from(e: kube::Error) -> Self {
        Error::Kube(e)
    }
}

impl From<kcr_informer::Error> for Error {
    fn from(e: kcr_informer::Error) -> Self {
        Error::Informer(e)
    }
}

impl From<kcr_metrics::Error> for Error {
    fn from(e: kcr_metrics::Error) -> Self {
        Error::Metrics(e)
    }
}

/// The result type of kcr-controller-manager.
pub type Result<T, E = Error> = std::result::Result<T, E>;
