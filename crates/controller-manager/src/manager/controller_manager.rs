//! The manager (controller-runtime `pkg/manager/internal.go`).

use std::fmt;
use std::net::SocketAddr;
use std::panic::AssertUnwindSafe;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Weak};
use std::time::Duration;

use futures::FutureExt;
use kcr_informer::{SYNCED_POLL_PERIOD, SharedIndexInformer, SharedInformerFactory};
use kcr_metrics::leader_election::{LeaderElectionMetrics, MetricsProvider, PrometheusProvider};
use kube::core::PartialObjectMeta;
use kube::{Client, Resource};
use parking_lot::Mutex;
use serde::de::DeserializeOwned;
use tokio::runtime::Handle;
use tokio::sync::{mpsc, watch};
use tokio::task::AbortHandle;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

use super::informers::{InformerReader, InformerScope, Informers};
use super::options::{Options, default_identity};
use super::runnable::{Runnable, Warmup};
use crate::client::{CachedClient, WriteTrackers};
use crate::controller::Shared as ControllerShared;
use crate::healthz::{Checker, Checks, probes_handler};
use crate::leaderelection::{LeaderElectionConfig, LeaderElector, LeaseLock};
use crate::metrics_server::metrics_handler;
use crate::record::{EventRecorder, Reporter};
use crate::{Error, Result, server};

/// The name of the built-in ready check that fails until the caches synced.
pub const INFORMER_SYNC_CHECK: &str = "informer-sync";

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Phase {
    New,
    Running,
    Stopping,
}

/// One group of runnables (controller-runtime `runnableGroup`): they share a
/// stop token and a task tracker.
struct Group {
    token: CancellationToken,
    tracker: TaskTracker,
    // Pushed to under the state lock; drained once, on a shutdown timeout.
    aborts: Mutex<Vec<AbortHandle>>,
}

impl Group {
    fn new() -> Self {
        Self {
            token: CancellationToken::new(),
            tracker: TaskTracker::new(),
            aborts: Mutex::new(Vec::new()),
        }
    }

    /// Cancels the group, refuses new tasks and waits for the running ones,
    /// at most until `deadline`. Returns false if it timed out.
    async fn stop_and_wait(&self, deadline: Option<Instant>) -> bool {
        self.token.cancel();
        self.tracker.close();
        match deadline {
            None => {
                self.tracker.wait().await;
                true
            }
            Some(deadline) => tokio::time::timeout_at(deadline, self.tracker.wait())
                .await
                .is_ok(),
        }
    }

    fn abort_all(&self) {
        for handle in self.aborts.lock().drain(..) {
            handle.abort();
        }
    }
}

struct State {
    phase: Phase,
    runtime: Option<Handle>,
    pending_others: Vec<Arc<dyn Runnable>>,
    pending_leader: Vec<Arc<dyn Runnable>>,
    /// Leader-election runnables to warm up once the warmup group starts.
    pending_warmup: Vec<Arc<dyn Runnable>>,
    others_started: bool,
    leader_started: bool,
    warmup_started: bool,
}

/// The addresses the HTTP servers listen on, once bound.
#[derive(Debug, Clone, Copy, Default)]
struct Bound {
    metrics: Option<SocketAddr>,
    probes: Option<SocketAddr>,
}

struct Inner {
    client: Client,
    options: Options,
    identity: String,
    healthz: Checks,
    readyz: Checks,
    elector: Option<LeaderElector>,
    /// The elector's lock, to give it an event recorder once a runtime runs.
    lease_lock: Option<Arc<LeaseLock>>,
    // Held for short bookkeeping and synchronous spawns, never across an `.await`.
    state: Mutex<State>,
    errors_tx: mpsc::UnboundedSender<Error>,
    errors_rx: Mutex<Option<mpsc::UnboundedReceiver<Error>>>,
    elected: watch::Sender<bool>,
    bound: watch::Sender<Option<Bound>>,
    caches_synced: AtomicBool,
    /// The informers every controller of this manager shares, as the informer options say.
    cache: Informers,
    /// The metric families of this manager's controllers.
    controllers: ControllerShared,
    /// The writes of `CachedClient`s the caches may not show yet (`None`: read-your-own-writes off).
    write_trackers: Option<Arc<WriteTrackers>>,
    others: Group,
    leader: Group,
    /// The warmups of leader-election runnables (controller-runtime's `Warmup` group).
    warmup: Group,
}

/// Runs runnables, leader election, the health probes and the metrics
/// server, as controller-runtime's manager does.
///
/// Cheap to clone; clones share the manager, so runnables can be added from
/// anywhere, before or after [`start`](Manager::start).
///
/// Start order: HTTP servers (metrics, probes) → caches (see
/// [`start`](Manager::start)) → runnables that need no leader election →
/// the warmups of leader-election runnables that ask for one
/// ([`Runnable::needs_warmup`], e.g. a controller built with
/// [`enable_warmup`](crate::controller::Builder::enable_warmup)), beside the
/// election → once the lease is won (at once without leader election) the
/// leader-election runnables. A runnable added after start starts at once
/// if its group has started (and is warmed up at once while the replica
/// does not lead).
///
/// Stop: on the shutdown signal, the first runnable error, or lost
/// leadership. The manager cancels the leader-election runnables and then
/// the others and the warmups, waits for them up to the graceful shutdown timeout, releases
/// the lease if configured, stops the HTTP servers and returns the first
/// error. Losing the lease cancels the leader-election runnables at the
/// renew deadline, before the lease can expire for another replica; the
/// process is expected to exit then.
#[derive(Clone)]
pub struct Manager {
    inner: Arc<Inner>,
}

impl fmt::Debug for Manager {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Manager")
            .field("identity", &self.inner.identity)
            .field("options", &self.inner.options)
            .finish_non_exhaustive()
    }
}

impl Manager {
    /// A manager using `client` (for the lease) with `options`.
    ///
    /// Fails if leader election is on with an empty lease name or with
    /// durations that break client-go's rules.
    pub fn new(client: Client, options: Options) -> Result<Self> {
        if options.leader_election && options.leader_election_id.is_empty() {
            return Err(Error::InvalidLeaderElectionConfig(
                "LeaderElectionID must be set",
            ));
        }
        let identity = options
            .leader_election_identity
            .clone()
            .unwrap_or_else(default_identity);
        let (errors_tx, errors_rx) = mpsc::unbounded_channel();
        let mut elector_error = None;
        let lease_lock = options.leader_election.then(|| {
            let namespace = options
                .leader_election_namespace
                .clone()
                .unwrap_or_else(|| client.default_namespace().to_owned());
            Arc::new(LeaseLock::new(
                client.clone(),
                namespace,
                options.leader_election_id.clone(),
                identity.clone(),
            ))
        });
        let inner = Arc::new_cyclic(|weak: &Weak<Inner>| {
            let elector = if let Some(lock) = &lease_lock {
                match LeaderElector::new(leader_election_config(weak, lock.clone(), &options)) {
                    Ok(elector) => Some(elector),
                    Err(e) => {
                        elector_error = Some(e);
                        None
                    }
                }
            } else {
                None
            };
            Inner {
                client: client.clone(),
                options: options.clone(),
                identity: identity.clone(),
                healthz: Checks::new("healthz"),
                readyz: Checks::new("readyz"),
                elector,
                lease_lock,
                state: Mutex::new(State {
                    phase: Phase::New,
                    runtime: None,
                    pending_others: Vec::new(),
                    pending_leader: Vec::new(),
                    pending_warmup: Vec::new(),
                    others_started: false,
                    leader_started: false,
                    warmup_started: false,
                }),
                errors_tx,
                errors_rx: Mutex::new(Some(errors_rx)),
                elected: watch::Sender::new(!options.leader_election),
                bound: watch::Sender::new(None),
                caches_synced: AtomicBool::new(false),
                cache: Informers::new(client.clone(), options.sync_period, options.cache.clone()),
                controllers: ControllerShared::default(),
                write_trackers: options
                    .read_your_own_writes
                    .then(|| Arc::new(WriteTrackers::default())),
                others: Group::new(),
                leader: Group::new(),
                warmup: Group::new(),
            }
        });
        if let Some(e) = elector_error {
            return Err(e);
        }
        let weak = Arc::downgrade(&inner);
        inner
            .readyz
            .add(INFORMER_SYNC_CHECK, move || match weak.upgrade() {
                Some(inner) if inner.caches_synced.load(Ordering::SeqCst) => Ok(()),
                _ => Err("caches not synced"),
            });
        Ok(Self { inner })
    }

    /// A manager whose client is built from `config` (controller-runtime's `manager.New` takes
    /// a REST config too), with the request metrics of
    /// [`kcr_metrics::client`]: every request counted in `rest_client_requests_total` by
    /// status code, method and host, and timed in `rest_client_request_duration_seconds` when
    /// [`Options::client_latency_metrics`] asks, both on the manager's registry
    /// ([`Options::metrics_registry`], else the default one). See [`Manager::new`] for the
    /// rest; [`ClientMetricsLayer`](crate::manager::ClientMetricsLayer) puts the same metrics
    /// on a client of your own.
    ///
    /// Fails as [`Manager::new`] does, and when `config` cannot make a client.
    pub fn from_config(config: kube::Config, options: Options) -> Result<Self> {
        let metrics = client_metrics(&options);
        let layer = super::ClientMetricsLayer::new(metrics, &config.cluster_url);
        let client = kube::client::ClientBuilder::try_from(config)?
            .with_layer(&layer)
            .build();
        Self::new(client, options)
    }

    /// The client the manager was built with.
    pub fn client(&self) -> &Client {
        &self.inner.client
    }

    /// The informers every controller of this manager shares, made as the informer options of
    /// [`Options::informers`](crate::Options::informers) say (namespaces, selectors and
    /// transforms by default and per type, as controller-runtime's cache): one List & Watch per
    /// resource type and cached namespace, however many controllers read it. Informers asked
    /// for before [`start`](Manager::start) are started and synced in its caches step; later
    /// ones start at once.
    pub fn informer_factory(&self) -> &Informers {
        &self.inner.cache
    }

    /// The factory of the informers with the default selectors (the one the controllers'
    /// start and shutdown steps drive).
    pub(crate) fn default_factory(&self) -> &SharedInformerFactory {
        self.inner.cache.default_factory()
    }

    /// Reads `K` from the manager's informers: the informers the informer options call for (one per
    /// cached namespace, or one), shared with the controllers that watch `K`. Informers made
    /// before [`start`](Manager::start) start and sync in its caches step; later ones start
    /// at once.
    pub fn informer_reader<K>(&self) -> InformerReader<K>
    where
        K: Resource<DynamicType = ()>
            + Clone
            + DeserializeOwned
            + fmt::Debug
            + Send
            + Sync
            + 'static,
        K::Scope: InformerScope,
    {
        InformerReader::new(self.inner.cache.informers::<K>())
    }

    /// A client for `K` that writes through the API server and reads from the manager's
    /// informers (those of [`informer_reader`](Manager::informer_reader)); with
    /// [`Options::read_your_own_writes`](crate::Options::read_your_own_writes) on (the
    /// default) its reads wait until the cache shows the writes made through any of the
    /// manager's `CachedClient`s of `K`. See [`CachedClient`].
    pub fn cached_client<K>(&self) -> CachedClient<K>
    where
        K: Resource<DynamicType = ()>
            + Clone
            + DeserializeOwned
            + fmt::Debug
            + Send
            + Sync
            + 'static,
        K::Scope: InformerScope,
    {
        let cache = &self.inner.cache;
        CachedClient::new(
            self.inner.client.clone(),
            cache.informers::<K>(),
            &cache.cached_namespaces::<K>(),
            cache.label_selector_of::<K>().as_deref(),
            self.inner.write_trackers.as_deref(),
        )
    }

    /// Reads the metadata of `K` from the manager's metadata-only informers of `K`: a cache of
    /// `PartialObjectMetadata` (names, labels, annotations, owner references, ...; no spec,
    /// status or data), a fraction of the memory of `K`'s own (controller-runtime's
    /// `OnlyMetadata`, client-go's `metadatainformer`). The same as
    /// `informer_reader::<PartialObjectMeta<K>>()`; separate from `informer_reader::<K>()`'s
    /// informers. It takes the namespaces and selectors of `K`'s
    /// [`ByObject`](crate::manager::ByObject) unless `PartialObjectMeta<K>` has its own.
    ///
    /// ```no_run
    /// # fn doc(manager: &kcr_controller_manager::Manager) {
    /// use k8s_openapi::api::core::v1::Secret;
    /// let secrets = manager.metadata_reader::<Secret>();
    /// for secret in secrets.list() {
    ///     println!("{:?} {:?}", secret.metadata.name, secret.metadata.labels);
    /// }
    /// # }
    /// ```
    pub fn metadata_reader<K>(&self) -> InformerReader<PartialObjectMeta<K>>
    where
        K: Resource<DynamicType = ()> + Clone + fmt::Debug + Send + Sync + 'static,
        K::Scope: InformerScope,
    {
        self.informer_reader::<PartialObjectMeta<K>>()
    }

    /// See [`Informers::set_shard_selector_for`].
    pub(crate) fn set_shard_selector_for<K>(&self, selector: kcr_informer::ShardSelector) -> bool
    where
        K: Resource<DynamicType = ()>
            + Clone
            + DeserializeOwned
            + fmt::Debug
            + Send
            + Sync
            + 'static,
        K::Scope: InformerScope,
    {
        self.inner.cache.set_shard_selector_for::<K>(selector)
    }

    /// The informers of `K` the cache options call for (see
    /// [`informer_reader`](Manager::informer_reader)).
    pub(crate) fn informers<K>(&self) -> Vec<SharedIndexInformer<K>>
    where
        K: Resource<DynamicType = ()>
            + Clone
            + DeserializeOwned
            + fmt::Debug
            + Send
            + Sync
            + 'static,
        K::Scope: InformerScope,
    {
        self.inner.cache.informers::<K>()
    }

    pub(crate) fn controller_shared(&self) -> &ControllerShared {
        &self.inner.controllers
    }

    /// The registry given in the options, if any (`None`: the default one).
    pub(crate) fn custom_metrics_registry(&self) -> Option<&kcr_metrics::Registry> {
        self.inner.options.registry.as_ref()
    }

    /// This replica's identity in the lease.
    pub fn identity(&self) -> &str {
        &self.inner.identity
    }

    /// An event recorder reporting as `controller` from this replica
    /// (controller-runtime `GetEventRecorderFor`; the reporting instance is
    /// [`identity`](Manager::identity)). Each call starts a writer task:
    /// keep one recorder per controller. Needs a tokio runtime.
    pub fn event_recorder(&self, controller: &str) -> Result<EventRecorder> {
        EventRecorder::new(
            self.inner.client.clone(),
            Reporter {
                controller: controller.to_owned(),
                instance: Some(self.inner.identity.clone()),
            },
        )
    }

    /// The leader elector, when leader election is on.
    pub fn leader_elector(&self) -> Option<&LeaderElector> {
        self.inner.elector.as_ref()
    }

    /// Adds a runnable. Before start it waits for its group; after start it
    /// starts at once if its group runs (leader-election runnables wait for
    /// the lease). Fails once the manager is stopping.
    pub fn add(&self, runnable: impl Runnable) -> Result<()> {
        let runnable: Arc<dyn Runnable> = Arc::new(runnable);
        let mut state = self.inner.state.lock();
        if state.phase == Phase::Stopping {
            return Err(Error::Stopping);
        }
        let leader = runnable.need_leader_election();
        let (started, group) = if leader {
            (state.leader_started, &self.inner.leader)
        } else {
            (state.others_started, &self.inner.others)
        };
        // Warmed up only while it waits for the lease.
        if leader && !started && runnable.needs_warmup() && self.inner.elector.is_some() {
            match (&state.runtime, state.warmup_started) {
                (Some(runtime), true) => self.inner.spawn(
                    &self.inner.warmup,
                    runtime,
                    Arc::new(Warmup(runnable.clone())),
                ),
                _ => state.pending_warmup.push(runnable.clone()),
            }
        }
        match (&state.runtime, started) {
            (Some(runtime), true) => self.inner.spawn(group, runtime, runnable),
            _ if leader => state.pending_leader.push(runnable),
            _ => state.pending_others.push(runnable),
        }
        Ok(())
    }

    /// Adds (or replaces) a liveness check served at `/healthz`.
    pub fn add_healthz_check(&self, name: impl Into<String>, check: impl Checker) {
        self.inner.healthz.add(name, check);
    }

    /// Adds (or replaces) a readiness check served at `/readyz`.
    pub fn add_readyz_check(&self, name: impl Into<String>, check: impl Checker) {
        self.inner.readyz.add(name, check);
    }

    /// Resolves when this replica leads (at once when leader election is off).
    pub async fn elected(&self) {
        let mut rx = self.inner.elected.subscribe();
        // The sender lives in `inner`, which `self` keeps alive.
        let _ = rx.wait_for(|elected| *elected).await;
    }

    /// The address `/metrics` is served on, once [`start`](Manager::start)
    /// has bound it (`None` when disabled or if binding failed). Waits for
    /// `start` to bind.
    pub async fn metrics_addr(&self) -> Option<SocketAddr> {
        self.bound().await.metrics
    }

    /// The address the probes are served on, once bound (see
    /// [`metrics_addr`](Manager::metrics_addr)).
    pub async fn health_probe_addr(&self) -> Option<SocketAddr> {
        self.bound().await.probes
    }

    async fn bound(&self) -> Bound {
        let mut rx = self.inner.bound.subscribe();
        match rx.wait_for(Option::is_some).await {
            Ok(bound) => bound.unwrap_or_default(),
            Err(_) => Bound::default(),
        }
    }

    /// Runs everything until `shutdown` resolves, a runnable fails, or
    /// leadership is lost; then stops (see [`Manager`]) and returns the first
    /// error.
    ///
    /// Caches: the [`informer_factory`](Manager::informer_factory)'s
    /// informers start between the HTTP servers and the runnables, and the
    /// runnables start only after every one of them has synced; the built-in
    /// `informer-sync` ready check fails until then. A shutdown signal while
    /// the caches sync stops the manager.
    pub async fn start(&self, shutdown: impl Future<Output = ()> + Send) -> Result<()> {
        let mut shutdown = std::pin::pin!(shutdown);
        let mut errors = {
            let mut state = self.inner.state.lock();
            if state.phase != Phase::New {
                return Err(Error::AlreadyStarted);
            }
            let Some(errors) = self.inner.errors_rx.lock().take() else {
                return Err(Error::AlreadyStarted);
            };
            state.phase = Phase::Running;
            state.runtime = Some(Handle::current());
            errors
        };

        // 1. HTTP servers.
        let http_stop = CancellationToken::new();
        let http = TaskTracker::new();
        if let Err(e) = self.start_http_servers(&http, &http_stop).await {
            self.inner.bound.send_replace(Some(Bound::default()));
            self.inner.state.lock().phase = Phase::Stopping;
            http_stop.cancel();
            http.close();
            http.wait().await;
            return Err(e);
        }

        // 2. Caches.
        let interrupted = tokio::select! {
            synced = self.start_caches() => synced.err().map(Some),
            () = &mut shutdown => Some(None),
            e = errors.recv() => Some(e),
        };
        if let Some(trigger) = interrupted {
            tracing::info!("stopped while the caches were syncing");
            return self
                .stop(
                    trigger,
                    errors,
                    http,
                    http_stop,
                    CancellationToken::new(),
                    None,
                )
                .await;
        }

        // 3. Runnables that need no leader election, then the warmups of those that do.
        self.inner.start_group(false);
        self.inner.start_warmups();

        // 4. Leader election, then the leader-election runnables.
        if let Some(lock) = &self.inner.lease_lock {
            // `<identity> became leader` events on the lease, as
            // controller-runtime records them.
            match self.event_recorder(&self.inner.identity) {
                Ok(recorder) => lock.set_event_recorder(recorder),
                Err(e) => tracing::warn!(error = %e, "no leader election events"),
            }
        }
        let elector_stop = CancellationToken::new();
        let elector_task = match &self.inner.elector {
            Some(elector) => {
                let elector = elector.clone();
                let stop = elector_stop.clone();
                Some(tokio::spawn(async move { elector.run(stop).await }))
            }
            None => {
                self.inner.start_group(true);
                None
            }
        };
        tracing::info!(identity = %self.inner.identity, "manager started");

        // 5. Wait for a reason to stop.
        let trigger = tokio::select! {
            () = &mut shutdown => None,
            e = errors.recv() => e,
        };
        match &trigger {
            None => tracing::info!("shutdown signal received, stopping the manager"),
            Some(e) => tracing::error!(error = %e, "stopping the manager"),
        }
        self.stop(trigger, errors, http, http_stop, elector_stop, elector_task)
            .await
    }

    async fn start_http_servers(&self, http: &TaskTracker, stop: &CancellationToken) -> Result<()> {
        let options = &self.inner.options;
        let metrics = server::bind(&options.metrics_bind_address).await?;
        let probes = server::bind(&options.health_probe_bind_address).await?;
        let bound = Bound {
            metrics: metrics.as_ref().and_then(|l| l.local_addr().ok()),
            probes: probes.as_ref().and_then(|l| l.local_addr().ok()),
        };
        // Secure serving (HTTPS behind TokenReview / SubjectAccessReview) takes the listener.
        let metrics = match (metrics, &options.secure_metrics) {
            (Some(listener), Some(secure)) => {
                tracing::info!(address = ?bound.metrics, "serving metrics over HTTPS");
                http.spawn(crate::metrics_auth::serve(
                    listener,
                    secure.clone(),
                    self.inner.client.clone(),
                    options.registry(),
                    stop.clone(),
                ));
                None
            }
            (metrics, _) => metrics,
        };
        if let Some(listener) = metrics {
            tracing::info!(address = ?bound.metrics, "serving metrics");
            http.spawn(server::serve(
                listener,
                metrics_handler(options.registry()),
                stop.clone(),
            ));
        }
        if let Some(listener) = probes {
            tracing::info!(address = ?bound.probes, "serving health probes");
            let handler = probes_handler(self.inner.healthz.clone(), self.inner.readyz.clone());
            http.spawn(server::serve(listener, handler, stop.clone()));
        }
        self.inner.bound.send_replace(Some(bound));
        Ok(())
    }

    /// The caches step (controller-runtime's `Caches` runnable group):
    /// starts the factory's informers and returns once all have synced,
    /// which the `informer-sync` ready check reports from then on. Fails
    /// with [`Error::CacheSyncTimeout`] when a controller's informers have
    /// not synced within its cache-sync timeout (informers no controller
    /// watches are waited for without a limit, as controller-runtime's
    /// cache).
    async fn start_caches(&self) -> Result<()> {
        let factories = self.inner.cache.start();
        let started = Instant::now();
        // Never cancelled: `start` races this step against the shutdown signal.
        let never = CancellationToken::new();
        let mut wait = std::pin::pin!(async {
            let mut synced = 0;
            for factory in &factories {
                synced += factory.wait_for_cache_sync(&never).await.len();
            }
            synced
        });
        let synced = loop {
            tokio::select! {
                synced = &mut wait => break synced,
                () = tokio::time::sleep(SYNCED_POLL_PERIOD) => {
                    if let Some(e) = self.inner.controllers.cache_sync.timed_out(started) {
                        tracing::error!(error = %e, "caches did not sync in time");
                        return Err(e);
                    }
                }
            }
        };
        tracing::info!(informers = synced, "caches synced");
        self.inner.caches_synced.store(true, Ordering::SeqCst);
        Ok(())
    }

    async fn stop(
        &self,
        trigger: Option<Error>,
        mut errors: mpsc::UnboundedReceiver<Error>,
        http: TaskTracker,
        http_stop: CancellationToken,
        elector_stop: CancellationToken,
        elector_task: Option<tokio::task::JoinHandle<()>>,
    ) -> Result<()> {
        self.inner.state.lock().phase = Phase::Stopping;
        let timeout = self.inner.options.graceful_shutdown_timeout;
        let deadline = timeout.map(|t| Instant::now() + t);

        // Leader-election runnables first, then the others and the warmups together (a
        // warmup and a runnable may wait on each other).
        let mut in_time = self.inner.leader.stop_and_wait(deadline).await;
        let (others, warmups) = tokio::join!(
            self.inner.others.stop_and_wait(deadline),
            self.inner.warmup.stop_and_wait(deadline)
        );
        in_time &= others && warmups;
        if !in_time {
            tracing::error!(
                ?timeout,
                "runnables did not stop within the graceful shutdown timeout; aborting them"
            );
            self.inner.leader.abort_all();
            self.inner.others.abort_all();
            self.inner.warmup.abort_all();
        }

        // The elector waits for the leader's work (stopped above), then
        // releases the lease if configured. Its release is bounded by the
        // renew deadline; the margin covers aborted tasks winding down.
        elector_stop.cancel();
        if let Some(task) = elector_task {
            let bound = self.inner.options.renew_deadline + Duration::from_secs(1);
            if tokio::time::timeout(bound, task).await.is_err() {
                tracing::error!("leader elector did not stop in time");
            }
        }

        // The informers, once nothing reads them any more.
        let factories = self.inner.cache.factories();
        let shutdown = futures::future::join_all(factories.iter().map(|f| f.shutdown()));
        if tokio::time::timeout(Duration::from_secs(5), shutdown)
            .await
            .is_err()
        {
            tracing::warn!("informers did not stop in time");
        }

        // HTTP servers last.
        http_stop.cancel();
        http.close();
        if tokio::time::timeout(Duration::from_secs(5), http.wait())
            .await
            .is_err()
        {
            tracing::warn!("HTTP servers did not stop in time");
        }

        let mut first = trigger;
        while let Ok(e) = errors.try_recv() {
            match first {
                None => first = Some(e),
                Some(_) => tracing::warn!(error = %e, "error while stopping"),
            }
        }
        tracing::info!("manager stopped");
        match (first, in_time, timeout) {
            (Some(e), _, _) => Err(e),
            (None, false, Some(t)) => Err(Error::GracefulShutdownTimeout(t)),
            _ => Ok(()),
        }
    }
}

impl Inner {
    /// Starts a group's pending runnables and marks it started.
    fn start_group(&self, leader: bool) {
        let mut state = self.state.lock();
        if state.phase != Phase::Running {
            return;
        }
        let Some(runtime) = state.runtime.clone() else {
            return;
        };
        let (pending, group) = if leader {
            state.leader_started = true;
            (std::mem::take(&mut state.pending_leader), &self.leader)
        } else {
            state.others_started = true;
            (std::mem::take(&mut state.pending_others), &self.others)
        };
        for runnable in pending {
            self.spawn(group, &runtime, runnable);
        }
    }

    /// Starts the warmups of the leader-election runnables that want one
    /// (controller-runtime's warmup group), unless they already lead or no
    /// leader is elected.
    fn start_warmups(&self) {
        let mut state = self.state.lock();
        if state.phase != Phase::Running {
            return;
        }
        let Some(runtime) = state.runtime.clone() else {
            return;
        };
        state.warmup_started = true;
        let pending = std::mem::take(&mut state.pending_warmup);
        if state.leader_started {
            return;
        }
        for runnable in pending {
            self.spawn(&self.warmup, &runtime, Arc::new(Warmup(runnable)));
        }
    }

    /// Spawns one runnable in `group`; its failure or panic is reported on
    /// the error channel. Called under the state lock (spawning never polls
    /// the task inline).
    fn spawn(&self, group: &Group, runtime: &Handle, runnable: Arc<dyn Runnable>) {
        let token = group.token.clone();
        let errors = self.errors_tx.clone();
        let task = async move {
            match AssertUnwindSafe(runnable.start(token)).catch_unwind().await {
                Ok(Ok(())) => {}
                Ok(Err(e)) => {
                    let _ = errors.send(Error::Runnable(e));
                }
                Err(panic) => {
                    let _ = errors.send(Error::RunnablePanicked(kcr_cache::panic_message(
                        panic.as_ref(),
                    )));
                }
            }
        };
        let handle = group.tracker.spawn_on(task, runtime);
        group.aborts.lock().push(handle.abort_handle());
    }
}

/// The client families on the manager's registry (the default one unless the options name
/// one), with the latency histogram if the options ask for it.
fn client_metrics(options: &Options) -> kcr_metrics::client::ClientMetrics {
    use kcr_metrics::client::ClientMetrics;
    let (metrics, registry) = match &options.registry {
        Some(registry) => match ClientMetrics::register(registry) {
            Ok(families) => (families, registry.clone()),
            Err(e) => {
                tracing::warn!(error = %e, "client metrics not registered on the manager's registry; using the default registry");
                (
                    ClientMetrics::global().clone(),
                    kcr_metrics::registry().clone(),
                )
            }
        },
        None => (
            ClientMetrics::global().clone(),
            kcr_metrics::registry().clone(),
        ),
    };
    if options.client_latency_metrics
        && let Err(e) = metrics.register_latency(&registry)
    {
        tracing::warn!(error = %e, "client latency metric not registered");
    }
    metrics
}

/// The elector config of a manager; the callbacks reach the manager through
/// a weak reference (the manager owns the elector).
fn leader_election_config(
    weak: &Weak<Inner>,
    lock: Arc<LeaseLock>,
    options: &Options,
) -> LeaderElectionConfig {
    let started = weak.clone();
    let stopped = weak.clone();
    // The lease metric goes where `/metrics` reads: a registry of the
    // caller's own gets the families (unless already there, then the
    // default registry keeps them).
    let metrics: Arc<dyn MetricsProvider> = match &options.registry {
        Some(registry) => match LeaderElectionMetrics::register(registry) {
            Ok(families) => Arc::new(PrometheusProvider::new(families)),
            Err(e) => {
                tracing::warn!(error = %e, "leader election metrics not registered on the manager's registry");
                Arc::new(PrometheusProvider::global())
            }
        },
        None => Arc::new(PrometheusProvider::global()),
    };
    LeaderElectionConfig::from_arc(lock)
        .metrics(metrics)
        .name(options.leader_election_id.clone())
        .lease_duration(options.lease_duration)
        .renew_deadline(options.renew_deadline)
        .retry_period(options.retry_period)
        .release_on_cancel(options.release_on_cancel)
        .on_started_leading(move |ctx| {
            let inner = started.upgrade();
            async move {
                let Some(inner) = inner else { return };
                tracing::info!(identity = %inner.identity, "elected leader: starting leader-election runnables");
                inner.start_group(true);
                inner.elected.send_replace(true);
                tokio::select! {
                    () = ctx.cancelled() => {}
                    () = inner.leader.token.cancelled() => {}
                }
                // Lost or stopping: cancel the leader's work now and return
                // only once it has stopped, so that a release never lets
                // another replica lead while this one still works.
                inner.elected.send_replace(false);
                inner.leader.token.cancel();
                inner.leader.tracker.close();
                inner.leader.tracker.wait().await;
            }
        })
        .on_stopped_leading(move || {
            if let Some(inner) = stopped.upgrade()
                && inner.state.lock().phase != Phase::Stopping
            {
                let _ = inner.errors_tx.send(Error::LeaderElectionLost);
            }
        })
}
