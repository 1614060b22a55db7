//! [`Builder`]: a controller's watches and settings (controller-runtime
//! `pkg/builder`).

use std::any::TypeId;
use std::collections::HashSet;
use std::fmt;
use std::fmt::Debug;
use std::sync::atomic::AtomicBool;
use std::sync::{Arc, LazyLock, OnceLock};
use std::time::Duration;

use k8s_openapi::ClusterResourceScope;
use kcr_metrics::controller::ControllerMetrics;
use kcr_metrics::workqueue::{MetricsProvider, PrometheusProvider, WorkqueueMetrics};
use kcr_workqueue::{Config, ItemExponentialFailureRateLimiter, PriorityQueue, RateLimiter};
use kube::Resource;
use kube::core::PartialObjectMeta;
use parking_lot::Mutex;
use serde::de::DeserializeOwned;

use super::cache_sync::{CacheSyncWaits, DEFAULT_CACHE_SYNC_TIMEOUT};
use super::controller::{Controller, Core, Running, SourcesState};
use super::handler::{MapFn, Mapper, OwnerKind};
use super::predicate::Predicate;
use super::reconciler::{Reconciler, Request};
use super::source::{InformerSource, Source};
use crate::manager::InformerScope;

use crate::sharding::{Mode, ShardField, ShardGate, ShardMember};
use crate::{Error, Manager, Result};
use kcr_informer::SharedInformerFactory;

/// Controller names in use in this process: their metrics share labels
/// (controller-runtime keeps the same process-wide set). Held only for a
/// set operation.
static NAMES: LazyLock<Mutex<HashSet<String>>> = LazyLock::new(|| Mutex::new(HashSet::new()));

/// The families a manager's controllers record to, registered on the
/// manager's registry on first use.
#[derive(Default)]
pub(crate) struct Shared {
    metrics: OnceLock<SharedMetrics>,
    pub(crate) cache_sync: CacheSyncWaits,
}

#[derive(Clone)]
struct SharedMetrics {
    controller: ControllerMetrics,
    /// `None`: kcr-workqueue's default (the default registry).
    workqueue: Option<Arc<dyn MetricsProvider>>,
}

impl Shared {
    fn metrics(&self, registry: Option<&kcr_metrics::Registry>) -> SharedMetrics {
        self.metrics
            .get_or_init(|| {
                let global = SharedMetrics {
                    controller: ControllerMetrics::global().clone(),
                    workqueue: None,
                };
                let Some(registry) = registry else {
                    return global;
                };
                let registered = ControllerMetrics::register(registry).and_then(|controller| {
                    WorkqueueMetrics::register(registry).map(|workqueue| SharedMetrics {
                        controller,
                        workqueue: Some(Arc::new(PrometheusProvider::new(workqueue))),
                    })
                });
                match registered {
                    Ok(metrics) => metrics,
                    Err(e) => {
                        tracing::warn!(error = %e, "controller metrics not registered on the manager's registry; using the default registry");
                        global
                    }
                }
            })
            .clone()
    }
}

/// Where a controller's informers come from: the manager's cache (scoped by
/// its informer options) or, for a controller without a manager, its own factory.
pub(crate) enum InformerSupply<'a> {
    /// The manager's cache: one informer per cached namespace, or one.
    Manager(&'a Manager),
    /// An unmanaged controller's own factory: one cluster-wide informer.
    Factory(&'a SharedInformerFactory),
}

/// A watch made when the controller is built: one source per informer the manager's cache
/// options call for (one per cached namespace, or one).
type Deferred =
    Box<dyn FnOnce(&InformerSupply<'_>, Option<&OwnerKind>) -> Result<Vec<Box<dyn Source>>> + Send>;

/// The sources of one watch of `K`: one per informer of `K` that `supply` has.
fn sources<K>(supply: &InformerSupply<'_>, mapper: Mapper<K>) -> Vec<Box<dyn Source>>
where
    K: Resource<DynamicType = ()> + Clone + DeserializeOwned + Debug + Send + Sync + 'static,
    K::Scope: InformerScope,
{
    let informers = match supply {
        InformerSupply::Manager(manager) => manager.informers::<K>(),
        InformerSupply::Factory(factory) => vec![factory.informer::<K>()],
    };
    informers
        .into_iter()
        .map(|informer| {
            Box::new(InformerSource {
                informer,
                mapper: mapper.clone(),
            }) as Box<dyn Source>
        })
        .collect()
}

/// Sets the shard selector on the informers of one watched type: true if it took.
type SelectorSetter = Box<dyn Fn(&Manager, kcr_informer::ShardSelector) -> bool + Send>;

/// Builds a [`Controller`] and adds it to a manager (controller-runtime
/// `builder.ControllerManagedBy`). Made by [`Controller::builder`].
///
/// ```
/// use std::time::Duration;
/// use k8s_openapi::api::apps::v1::{Deployment, ReplicaSet};
/// use k8s_openapi::api::core::v1::ConfigMap;
/// use kcr_controller_manager::controller::{predicate, reconciler_fn};
/// use kcr_controller_manager::{Action, Controller, Request};
/// use kcr_controller_manager::{BoxError, Manager, Options};
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
/// # let env = kcr_testenv::TestEnv::start().await?;
/// let manager = Manager::new(env.client(), Options::default().metrics_bind_address("0"))?;
/// let controller = Controller::builder(&manager, "deployments")
///     .for_::<Deployment>()
///     .owns::<ReplicaSet>()
///     .watches::<ConfigMap>(|cm| {
///         // Every deployment named in the config map's "deployment" key.
///         let ns = cm.metadata.namespace.clone().unwrap_or_default();
///         cm.data.iter().flatten()
///             .filter(|(k, _)| k.as_str() == "deployment")
///             .map(|(_, name)| Request::namespaced(ns.clone(), name.clone()))
///             .collect()
///     })
///     .event_filter(predicate::generation_changed())
///     .max_concurrent_reconciles(4)
///     .reconcile_timeout(Duration::from_secs(60))
///     .build(reconciler_fn(|req: Request| async move {
///         tracing::info!(%req, "reconciling");
///         Ok::<_, BoxError>(Action::done())
///     }))?;
/// assert_eq!(controller.name(), "deployments");
/// # Ok(())
/// # }
/// ```
#[must_use]
pub struct Builder {
    /// `None`: an unmanaged controller, started with
    /// [`Controller::start`].
    manager: Option<Manager>,
    /// The manager's factory, or the unmanaged controller's own.
    factory: SharedInformerFactory,
    name: String,
    owner: Option<OwnerKind>,
    sources: Vec<Deferred>,
    predicates: Vec<Box<dyn Predicate>>,
    max_concurrent_reconciles: usize,
    rate_limiter: Option<Box<dyn RateLimiter<Request>>>,
    reconcile_timeout: Option<Duration>,
    cache_sync_timeout: Duration,
    need_leader_election: bool,
    warmup: bool,
    skip_name_validation: bool,
    errors: Vec<String>,
    shard: Option<ShardMember>,
    /// Per watched type: whether it is the primary type, its name, and how to shard its
    /// informers on the server.
    selector_setters: Vec<(bool, String, SelectorSetter)>,
}

impl fmt::Debug for Builder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Builder")
            .field("name", &self.name)
            .field("watches", &self.sources.len())
            .field("predicates", &self.predicates.len())
            .field("max_concurrent_reconciles", &self.max_concurrent_reconciles)
            .field("reconcile_timeout", &self.reconcile_timeout)
            .field("need_leader_election", &self.need_leader_election)
            .field("warmup", &self.warmup)
            .finish_non_exhaustive()
    }
}

impl Controller {
    /// A builder for a controller named `name` (unique in the process: it
    /// labels the controller's metrics and logs) managed by `manager`.
    pub fn builder(manager: &Manager, name: impl Into<String>) -> Builder {
        Builder::new(
            Some(manager.clone()),
            manager.default_factory().clone(),
            name,
        )
    }

    /// A builder for a controller that runs without a manager, on informers
    /// of its own (controller-runtime's `controller.NewUnmanaged`): build it,
    /// then run it with [`Controller::start`], which starts its informers,
    /// waits for them to sync (see
    /// [`cache_sync_timeout`](Builder::cache_sync_timeout)), runs the
    /// workers until the token is cancelled, and stops the informers. Its
    /// metrics go to the default registry; it does not wait for leader
    /// election.
    ///
    /// ```
    /// use k8s_openapi::api::core::v1::ConfigMap;
    /// use kcr_controller_manager::BoxError;
    /// use kcr_controller_manager::controller::reconciler_fn;
    /// use kcr_controller_manager::{Action, Controller, Request};
    /// use tokio_util::sync::CancellationToken;
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// # let env = kcr_testenv::TestEnv::start().await?;
    /// let controller = Controller::unmanaged(env.client(), "config-maps-alone")
    ///     .for_::<ConfigMap>()
    ///     .build(reconciler_fn(|_req: Request| async { Ok::<_, BoxError>(Action::done()) }))?;
    /// let stop = CancellationToken::new();
    /// let running = tokio::spawn({
    ///     let (controller, stop) = (controller.clone(), stop.clone());
    ///     async move { controller.start(stop).await }
    /// });
    /// stop.cancel(); // a real operator waits for SIGTERM
    /// running.await??;
    /// # Ok(())
    /// # }
    /// ```
    pub fn unmanaged(client: kube::Client, name: impl Into<String>) -> Builder {
        let factory = SharedInformerFactory::new(client, crate::manager::DEFAULT_SYNC_PERIOD);
        Builder::new(None, factory, name)
    }
}

impl Builder {
    fn new(
        manager: Option<Manager>,
        factory: SharedInformerFactory,
        name: impl Into<String>,
    ) -> Self {
        Self {
            manager,
            factory,
            name: name.into(),
            owner: None,
            sources: Vec::new(),
            predicates: Vec::new(),
            max_concurrent_reconciles: 1,
            rate_limiter: None,
            reconcile_timeout: None,
            cache_sync_timeout: DEFAULT_CACHE_SYNC_TIMEOUT,
            need_leader_election: true,
            warmup: false,
            skip_name_validation: false,
            errors: Vec::new(),
            shard: None,
            selector_setters: Vec::new(),
        }
    }

    fn selector_setter<K>(&mut self, primary: bool)
    where
        K: Resource<DynamicType = ()> + Clone + DeserializeOwned + Debug + Send + Sync + 'static,
        K::Scope: InformerScope,
    {
        self.selector_setters.push((
            primary,
            K::kind(&()).into_owned(),
            Box::new(|manager: &Manager, selector| manager.set_shard_selector_for::<K>(selector)),
        ));
    }

    /// Shards the controller across the replicas that run it with members of the same group:
    /// this replica reconciles only the keys `member` owns (see [`sharding`](crate::sharding)
    /// for the protocol and its guarantees). The controller then runs on every replica, not
    /// only on the leader, and `member` is added to the manager (once, whichever controller
    /// adds it first).
    ///
    /// With [`Mode::ServerSide`], the informers of the `for_` type list and watch with the
    /// member's ranges as `shardSelector` (so do those of the `owns`/`watches` types when
    /// sharding by [`ShardField::Namespace`], where an owner and what it owns share a
    /// namespace); a type whose informers were made before (by another controller) stays
    /// unsharded on the server. Either way, events are filtered before the queue: a request
    /// is queued, and reconciled, only while the member owns it. An object reached through
    /// [`owns`](Self::owns) is routed by its controlling owner's uid (or namespace), one
    /// reached through [`watches`](Self::watches) by the cached `for_` object the request
    /// names (or its namespace).
    ///
    /// Needs a manager: an unmanaged controller cannot be sharded.
    pub fn sharded(mut self, member: &ShardMember) -> Self {
        self.shard = Some(member.clone());
        self.need_leader_election = false;
        self
    }

    /// Reconciles objects of `K`: each change of a `K` queues its own
    /// request (controller-runtime `For`). At most once per controller.
    ///
    /// Every watch reads the manager's cache as
    /// [`Options::informers`](crate::Options::informers) scopes it: in the cached
    /// namespaces, with the selectors and transform of `K`.
    pub fn for_<K>(mut self) -> Self
    where
        K: Resource<DynamicType = ()> + Clone + DeserializeOwned + Debug + Send + Sync + 'static,
        K::Scope: InformerScope,
    {
        if self.owner.is_some() {
            self.errors.push("for_ may only be called once".into());
            return self;
        }
        self.owner = Some(OwnerKind {
            group: K::group(&()).into_owned(),
            kind: K::kind(&()).into_owned(),
            cluster_scoped: TypeId::of::<K::Scope>() == TypeId::of::<ClusterResourceScope>(),
        });
        self.selector_setter::<K>(true);
        self.sources.push(Box::new(|manager, _| {
            Ok(sources(manager, Mapper::<K>::Object))
        }));
        self
    }

    /// Watches objects of `O` controlled by a `for_` object: a change of an
    /// `O` queues the request of the owner named in its `ownerReferences`
    /// entry with `controller: true`, if that owner is of the `for_` type
    /// (controller-runtime `Owns`). Needs [`for_`](Self::for_).
    pub fn owns<O>(mut self) -> Self
    where
        O: Resource<DynamicType = ()> + Clone + DeserializeOwned + Debug + Send + Sync + 'static,
        O::Scope: InformerScope,
    {
        self.selector_setter::<O>(false);
        self.sources.push(Box::new(|manager, owner| {
            let Some(owner) = owner else {
                return Err(Error::InvalidController {
                    name: String::new(),
                    reason: "owns needs for_".into(),
                });
            };
            Ok(sources(manager, Mapper::<O>::Owner(owner.clone())))
        }));
        self
    }

    /// Watches objects of `W`: a change of a `W` queues the requests
    /// `mapper` returns for it (for an update, for the old and the new
    /// object) (controller-runtime `Watches` with
    /// `EnqueueRequestsFromMapFunc`).
    pub fn watches<W>(mut self, mapper: impl Fn(&W) -> Vec<Request> + Send + Sync + 'static) -> Self
    where
        W: Resource<DynamicType = ()> + Clone + DeserializeOwned + Debug + Send + Sync + 'static,
        W::Scope: InformerScope,
    {
        self.selector_setter::<W>(false);
        let mapper: MapFn<W> = Arc::new(mapper);
        self.sources.push(Box::new(move |manager, _| {
            Ok(sources(manager, Mapper::Map(mapper)))
        }));
        self
    }

    /// Reconciles objects of `K`, watching only their metadata (controller-runtime `For` with
    /// `OnlyMetadata`): the cache holds `PartialObjectMeta<K>` (see
    /// [`Manager::metadata_reader`](crate::Manager::metadata_reader)), which the reconciler
    /// reads for labels, annotations and owner references; the same as
    /// `for_::<PartialObjectMeta<K>>()`.
    pub fn for_metadata<K>(self) -> Self
    where
        K: Resource<DynamicType = ()> + Clone + Debug + Send + Sync + 'static,
        K::Scope: InformerScope,
    {
        self.for_::<PartialObjectMeta<K>>()
    }

    /// [`owns`](Self::owns) through a metadata-only cache of `O` (controller-runtime `Owns` with
    /// `OnlyMetadata`): a change of an `O` queues its controlling owner's request, and the cache
    /// holds only the metadata of the `O`s, a fraction of their memory (a controller that owns
    /// Secrets or Pods and reads nothing but their owner references and labels). The same as
    /// `owns::<PartialObjectMeta<O>>()`.
    pub fn owns_metadata<O>(self) -> Self
    where
        O: Resource<DynamicType = ()> + Clone + Debug + Send + Sync + 'static,
        O::Scope: InformerScope,
    {
        self.owns::<PartialObjectMeta<O>>()
    }

    /// [`watches`](Self::watches) through a metadata-only cache of `W` (controller-runtime
    /// `WatchesMetadata`): `mapper` gets each `W`'s metadata. The same as
    /// `watches::<PartialObjectMeta<W>>(mapper)`.
    pub fn watches_metadata<W>(
        self,
        mapper: impl Fn(&PartialObjectMeta<W>) -> Vec<Request> + Send + Sync + 'static,
    ) -> Self
    where
        W: Resource<DynamicType = ()> + Clone + Debug + Send + Sync + 'static,
        W::Scope: InformerScope,
    {
        self.watches::<PartialObjectMeta<W>>(mapper)
    }

    /// Filters the events of every watch: an event is queued only if every
    /// filter passes it (controller-runtime `WithEventFilter`). See
    /// [`predicate`](super::predicate) for ready-made ones.
    pub fn event_filter(mut self, predicate: impl Predicate) -> Self {
        self.predicates.push(Box::new(predicate));
        self
    }

    /// How many requests are reconciled at once (default 1; 0 means the
    /// default, as controller-runtime's `MaxConcurrentReconciles <= 0`).
    pub fn max_concurrent_reconciles(mut self, n: usize) -> Self {
        self.max_concurrent_reconciles = n.max(1);
        self
    }

    /// The rate limiter of retries (default, as controller-runtime's with
    /// its priority queue: [`ItemExponentialFailureRateLimiter`] alone, 5 ms
    /// doubling up to 1000 s per request; client-go's
    /// [`default_controller_rate_limiter`](kcr_workqueue::default_controller_rate_limiter),
    /// which adds an overall 10 per second with a burst of 100, stays
    /// available here).
    pub fn rate_limiter(mut self, limiter: impl RateLimiter<Request> + 'static) -> Self {
        self.rate_limiter = Some(Box::new(limiter));
        self
    }

    /// Cancels a reconcile that runs longer than `timeout` and treats it as
    /// an error (default, and `Duration::ZERO`: no limit, as
    /// controller-runtime's `ReconciliationTimeout`). The reconcile sees its
    /// deadline through [`ReconcileContext`](super::ReconcileContext).
    pub fn reconcile_timeout(mut self, timeout: Duration) -> Self {
        self.reconcile_timeout = (!timeout.is_zero()).then_some(timeout);
        self
    }

    /// How long the controller waits for the informers it watches to sync
    /// before its start fails with
    /// [`Error::CacheSyncTimeout`](crate::Error::CacheSyncTimeout) (default,
    /// and `Duration::ZERO`: 2 minutes, as controller-runtime's
    /// `CacheSyncTimeout`).
    pub fn cache_sync_timeout(mut self, timeout: Duration) -> Self {
        self.cache_sync_timeout = if timeout.is_zero() {
            DEFAULT_CACHE_SYNC_TIMEOUT
        } else {
            timeout
        };
        self
    }

    /// Whether the controller runs only on the elected leader (default
    /// true).
    pub fn need_leader_election(mut self, need: bool) -> Self {
        self.need_leader_election = need;
        self
    }

    /// Starts the controller's sources before this replica leads
    /// (controller-runtime's `EnableWarmup`; off by default, as there): while
    /// another replica holds the lease, the controller registers its event
    /// handlers, starts the informers it watches and waits for the handlers
    /// to sync, so its queue holds the requests of every cached object; once
    /// this replica wins the lease its workers start at once, without a new
    /// list or a replay of the cache. A controller that needs no leader
    /// election starts its sources at once anyway, so there it changes
    /// nothing.
    pub fn enable_warmup(mut self, warmup: bool) -> Self {
        self.warmup = warmup;
        self
    }

    /// Allows a name another controller of this process already has
    /// (controller-runtime `SkipNameValidation`); their metrics then mix.
    pub fn skip_name_validation(mut self, skip: bool) -> Self {
        self.skip_name_validation = skip;
        self
    }

    /// Builds the controller and adds it to the manager as a runnable.
    ///
    /// Fails on an empty or taken name, a repeated `for_`, an
    /// `owns` without `for_`, or a manager that is stopping. A controller
    /// without watches reconciles only what is added to its
    /// [`queue`](Controller::queue).
    pub fn build<R: Reconciler>(self, reconciler: R) -> Result<Controller> {
        let invalid = |reason: String| Error::InvalidController {
            name: self.name.clone(),
            reason,
        };
        if self.name.is_empty() {
            return Err(invalid("the name must not be empty".into()));
        }
        if let Some(reason) = self.errors.first() {
            return Err(invalid(reason.clone()));
        }
        if !self.skip_name_validation && !NAMES.lock().insert(self.name.clone()) {
            return Err(Error::ControllerNameTaken(self.name));
        }
        let release_name = |name: &str, skip: bool| {
            if !skip {
                NAMES.lock().remove(name);
            }
        };

        let shard = match (&self.shard, &self.manager) {
            (None, _) => None,
            (Some(_), None) => {
                release_name(&self.name, self.skip_name_validation);
                return Err(invalid(
                    "a sharded controller needs a manager (Controller::builder)".into(),
                ));
            }
            (Some(member), Some(manager)) => {
                if member.mode() == Mode::ServerSide {
                    for (primary, kind, set) in &self.selector_setters {
                        if !*primary && member.field() != ShardField::Namespace {
                            continue;
                        }
                        if !set(manager, member.selector()) {
                            tracing::info!(controller = %self.name, kind = %kind, "informers of this kind existed before: sharded on the client only");
                        }
                    }
                }
                Some(Arc::new(ShardGate::new(member.clone())))
            }
        };

        let factory = self.factory.clone();
        let mut sources = Vec::with_capacity(self.sources.len());
        let supply = match &self.manager {
            Some(manager) => InformerSupply::Manager(manager),
            None => InformerSupply::Factory(&factory),
        };
        for deferred in self.sources {
            match deferred(&supply, self.owner.as_ref()) {
                Ok(made) => sources.extend(made),
                Err(Error::InvalidController { reason, .. }) => {
                    release_name(&self.name, self.skip_name_validation);
                    return Err(Error::InvalidController {
                        name: self.name,
                        reason,
                    });
                }
                Err(e) => {
                    release_name(&self.name, self.skip_name_validation);
                    return Err(e);
                }
            }
        }

        let metrics = match &self.manager {
            Some(manager) => manager
                .controller_shared()
                .metrics(manager.custom_metrics_registry()),
            None => Shared::default().metrics(None),
        };
        let mut config = Config::default().name(self.name.as_str());
        if let Some(provider) = metrics.workqueue {
            config = config.metrics_provider(provider);
        }
        let queue = match self.rate_limiter {
            Some(limiter) => PriorityQueue::with_config(limiter, config),
            None => PriorityQueue::with_config(default_rate_limiter(), config),
        };
        let name: Arc<str> = Arc::from(self.name.as_str());
        let core = Arc::new(Core {
            metrics: metrics.controller.controller(&name),
            name,
            queue,
            max_concurrent_reconciles: self.max_concurrent_reconciles,
            reconcile_timeout: self.reconcile_timeout,
            cache_sync_timeout: self.cache_sync_timeout,
            sources,
            source_state: tokio::sync::Mutex::new(SourcesState::Idle),
            warmup: self.warmup,
            predicates: Arc::from(self.predicates),
            factory,
            need_leader_election: self.need_leader_election,
            started: AtomicBool::new(false),
            stopping: AtomicBool::new(false),
            shard,
        });
        let running = Running {
            core: core.clone(),
            reconciler: Arc::new(reconciler),
        };
        let Some(manager) = &self.manager else {
            return Ok(Controller {
                core,
                unmanaged: Some(Arc::new(running)),
            });
        };
        if let Err(e) = manager.add(running) {
            release_name(&self.name, self.skip_name_validation);
            return Err(e);
        }
        if let Some(member) = &self.shard
            && member.mark_registered()
        {
            manager.add(member.clone())?;
        }
        manager.controller_shared().cache_sync.register(&core);
        Ok(Controller {
            core,
            unmanaged: None,
        })
    }
}

/// controller-runtime's default rate limiter with its priority queue: per
/// request, 5 ms doubling up to 1000 s, and nothing overall.
fn default_rate_limiter() -> ItemExponentialFailureRateLimiter<Request> {
    ItemExponentialFailureRateLimiter::new(Duration::from_millis(5), Duration::from_secs(1000))
}
