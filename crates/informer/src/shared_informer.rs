//! [`SharedIndexInformer`]: a reflector, a [`RealFifo`] (or a
//! [`DeltaFifo`]), an indexed cache and any number of event handlers
//! (client-go's `shared_informer.go`).

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use kcr_cache::{
    BoxError, Delta, DeltaFifo, DeltaFifoOptions, DeltaObject, DeltaType, Deltas, IndexedStore,
    Indexers, Lister, ProcessError, RealFifo, RealFifoOptions, Store, Transaction, TransactionType,
    TransformFunc, meta_namespace_key_func,
};
use kcr_metrics::informer::InformerMetrics;
use kcr_reflector::{ListerWatcher, Reflector, ReflectorStore};
use kube::Resource;
use parking_lot::Mutex;
use tokio_util::sync::CancellationToken;

use crate::error::{Error, Result};
use crate::event_handler::{DeletedObject, ResourceEventHandler};
use crate::processor_listener::{Listener, Notification, Processor};
use crate::synced_version::SyncedVersion;

/// client-go's `minimumResyncPeriod`: a handler's resync period is at least this.
pub const MINIMUM_RESYNC_PERIOD: Duration = Duration::from_secs(1);

static NEXT_INFORMER_ID: AtomicU64 = AtomicU64::new(1);

type WatchErrorHandler = Arc<dyn Fn(&kcr_reflector::Error) + Send + Sync>;
type ReflectorTweak<K> = Box<dyn FnOnce(Reflector<K>) -> Reflector<K> + Send>;

/// Which queue an informer runs on, as client-go's feature gates choose it.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum InformerQueue {
    /// client-go 1.36's default: a [`RealFifo`] with atomic events
    /// (`AtomicFIFO`), unlocked while processing
    /// (`UnlockWhileProcessingFIFO`) and bookmark events. Events reach the
    /// handlers in the order they happened; a relist reaches them as its
    /// deletions first, then the listed objects.
    #[default]
    RealFifo,
    /// A [`RealFifo`] with the cache as its known objects (client-go with
    /// `AtomicFIFO` off): a relist's tombstones and `Replaced` events are
    /// queued one by one, deletions first.
    RealFifoWithKnownObjects,
    /// The [`DeltaFifo`] (client-go with `InOrderInformers` off, before
    /// 1.33): deltas merged per key, keys in order of first arrival, a
    /// relist's listed objects before its deletions.
    DeltaFifo,
}

/// The queue a running informer pops.
enum InformerFifo<K> {
    Real(Arc<RealFifo<K>>),
    Delta(Arc<DeltaFifo<K>>),
}

impl<K: Send + Sync + 'static> InformerFifo<K> {
    fn has_synced(&self) -> bool {
        match self {
            Self::Real(f) => f.has_synced(),
            Self::Delta(f) => f.has_synced(),
        }
    }

    fn close(&self) {
        match self {
            Self::Real(f) => f.close(),
            Self::Delta(f) => f.close(),
        }
    }
}

/// What may change until the informer starts (client-go's `startedLock`
/// guards the same).
struct Config<K> {
    name: String,
    label_selector: Option<String>,
    field_selector: Option<String>,
    keep_managed_fields: bool,
    transform: Option<TransformFunc<K>>,
    watch_error_handler: Option<WatchErrorHandler>,
    reflector_tweak: Option<ReflectorTweak<K>>,
    resync_check_period: Duration,
    queue: InformerQueue,
    batch_process: bool,
    started: bool,
    stopped: bool,
}

struct Inner<K> {
    id: u64,
    lister_watcher: Arc<dyn ListerWatcher<K>>,
    indexer: Arc<IndexedStore<K>>,
    processor: Arc<Processor<K>>,
    default_event_handler_resync_period: Duration,
    // parking_lot locks, never held across `.await`.
    config: Mutex<Config<K>>,
    /// Held while deltas are applied and while a handler is added after
    /// start, so a late handler sees the cache exactly once (client-go's
    /// `blockDeltas`).
    block_deltas: Mutex<()>,
    /// Filled by `run`.
    fifo: OnceLock<InformerFifo<K>>,
    /// Set once the queue has synced and every listener was told.
    synced: AtomicBool,
    reflector: OnceLock<Arc<Reflector<K>>>,
    next_listener_id: AtomicU64,
    /// The families to count handler panics in (`None`: the default registry's).
    metrics: Mutex<Option<InformerMetrics>>,
    /// The cache's resource version, once someone asked for it (`synced_version`).
    synced_version: OnceLock<SyncedVersion>,
}

/// A shared, indexed informer (client-go's `sharedIndexInformer`).
///
/// [`run`](Self::run) lists and watches through a [`Reflector`] into a
/// [`RealFifo`] with atomic events (or the queue chosen with
/// [`queue`](Self::queue)) and pops it, in batches: for each event the
/// indexer is updated first (a batch in one transaction), then every
/// handler is notified:
///
/// * a relist (`ReplacedAll`): the cache takes the list, then `on_delete`
///   with a tombstone for every object it lost, then an add or update per
///   listed object;
/// * a periodic resync (`SyncAll`): `on_update(obj, obj)` per cached
///   object, for the handlers due for one;
///
/// * `Added` / `Updated` / `Sync` / `Replaced` of an object not in the cache:
///   `on_add(obj, is_in_initial_list)`;
/// * the same for an object already cached: `on_update(old, new)`; when the
///   resource version did not change (a periodic resync, or a relist that
///   found the object unchanged) only the handlers due for a resync get it;
/// * `Deleted`: `on_delete` with the last state or the
///   [`DeletedFinalStateUnknown`](kcr_cache::DeletedFinalStateUnknown)
///   tombstone a relist produced.
///
/// Every handler has its own unbounded buffer and task: a slow or stuck
/// handler delays nobody else; a handler added after start first gets an
/// `on_add` (with `is_in_initial_list = true`) for everything cached; each
/// handler may ask for its own resync period (none if the informer was made
/// with a zero period); a panicking handler is caught, logged, counted
/// (`informer_event_handler_panics_total`) and keeps receiving events after
/// a one-second pause, as client-go's.
///
/// `metadata.managedFields` are dropped before anything is stored (see
/// [`keep_managed_fields`](Self::keep_managed_fields)); objects are shared as
/// `Arc<K>` between the cache and every handler.
///
/// The informer is a cheap handle: clones share the same cache and handlers.
pub struct SharedIndexInformer<K> {
    inner: Arc<Inner<K>>,
}

impl<K> Clone for SharedIndexInformer<K> {
    fn clone(&self) -> Self {
        Self {
            inner: self.inner.clone(),
        }
    }
}

impl<K> std::fmt::Debug for SharedIndexInformer<K> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let config = self.inner.config.lock();
        f.debug_struct("SharedIndexInformer")
            .field("name", &config.name)
            .field("started", &config.started)
            .field("stopped", &config.stopped)
            .field("resync_check_period", &config.resync_check_period)
            .finish_non_exhaustive()
    }
}

/// A handler's registration on an informer (client-go's
/// `ResourceEventHandlerRegistration`): pass it to
/// [`SharedIndexInformer::remove_event_handler`], or ask whether the handler
/// has received the whole initial list.
#[derive(Clone)]
pub struct Registration {
    informer_id: u64,
    listener_id: u64,
    state: Arc<dyn RegistrationState>,
}

impl std::fmt::Debug for Registration {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Registration")
            .field("informer_id", &self.informer_id)
            .field("listener_id", &self.listener_id)
            .field("has_synced", &self.has_synced())
            .finish()
    }
}

trait RegistrationState: Send + Sync {
    fn has_synced(&self) -> bool;
    fn panics(&self) -> u64;
    fn pending(&self) -> usize;
    fn stopped(&self) -> CancellationToken;
    fn address(&self) -> usize;
}

struct ListenerState<K> {
    listener: Arc<Listener<K>>,
}

impl<K: Send + Sync + 'static> RegistrationState for ListenerState<K> {
    fn has_synced(&self) -> bool {
        self.listener.has_synced()
    }
    fn panics(&self) -> u64 {
        self.listener.panics()
    }
    fn pending(&self) -> usize {
        self.listener.pending()
    }
    fn stopped(&self) -> CancellationToken {
        self.listener.stopped().clone()
    }
    fn address(&self) -> usize {
        self.listener.address()
    }
}

impl Registration {
    /// True once the informer has synced and this handler has been called
    /// for every item of the initial list (for a handler added after start:
    /// for everything that was cached when it was added).
    pub fn has_synced(&self) -> bool {
        self.state.has_synced()
    }

    /// How many calls to this handler panicked (each was caught).
    pub fn panics(&self) -> u64 {
        self.state.panics()
    }

    /// How many notifications wait in this handler's buffer.
    pub fn pending(&self) -> usize {
        self.state.pending()
    }

    /// True once the handler was removed and none of its calls runs or
    /// will run (what
    /// [`shut_down_event_handler`](SharedIndexInformer::shut_down_event_handler)
    /// waits for).
    pub fn is_stopped(&self) -> bool {
        self.state.stopped().is_cancelled()
    }
}

/// Drops `metadata.managedFields`: in place when the object is not shared
/// (as it comes from the decoder: the same `Arc` goes on), else from a copy.
/// Objects without `managedFields` are kept as they are.
fn strip_managed_fields<K: Resource + Clone>(mut obj: Arc<K>) -> Arc<K> {
    if obj.meta().managed_fields.is_none() {
        return obj;
    }
    Arc::make_mut(&mut obj).meta_mut().managed_fields = None;
    obj
}

impl<K> SharedIndexInformer<K>
where
    K: Resource + Clone + Send + Sync + 'static,
{
    /// An informer over `lister_watcher` whose handlers resync every
    /// `default_event_handler_resync_period` (zero: never), with `indexers`
    /// on its cache (client-go's `NewSharedIndexInformer`).
    pub fn new<L>(
        lister_watcher: L,
        default_event_handler_resync_period: Duration,
        indexers: Indexers<K>,
    ) -> Self
    where
        L: ListerWatcher<K> + 'static,
    {
        Self::from_parts(
            Arc::new(lister_watcher),
            default_event_handler_resync_period,
            indexers,
        )
    }

    /// [`new`](Self::new) over an already shared lister-watcher.
    pub fn from_parts(
        lister_watcher: Arc<dyn ListerWatcher<K>>,
        default_event_handler_resync_period: Duration,
        indexers: Indexers<K>,
    ) -> Self {
        let name = "informer".to_owned();
        Self {
            inner: Arc::new(Inner {
                id: NEXT_INFORMER_ID.fetch_add(1, Ordering::Relaxed),
                lister_watcher,
                indexer: Arc::new(IndexedStore::new(meta_namespace_key_func::<K>, indexers)),
                processor: Arc::new(Processor::new()),
                default_event_handler_resync_period,
                metrics: Mutex::new(None),
                config: Mutex::new(Config {
                    name,
                    label_selector: None,
                    field_selector: None,
                    keep_managed_fields: false,
                    transform: None,
                    watch_error_handler: None,
                    reflector_tweak: None,
                    resync_check_period: default_event_handler_resync_period,
                    queue: InformerQueue::default(),
                    batch_process: true,
                    started: false,
                    stopped: false,
                }),
                block_deltas: Mutex::new(()),
                fifo: OnceLock::new(),
                synced: AtomicBool::new(false),
                reflector: OnceLock::new(),
                next_listener_id: AtomicU64::new(1),
                synced_version: OnceLock::new(),
            }),
        }
    }

    /// Names the informer (its reflector, logs and the metrics' `name` label).
    #[must_use]
    pub fn name(self, name: impl Into<String>) -> Self {
        let name = name.into();
        self.inner.config.lock().name = name;
        self
    }

    /// Records the handler-panic counter into `metrics` (families
    /// registered against a registry of the caller's own).
    #[must_use]
    pub fn metrics(self, metrics: &InformerMetrics) -> Self {
        *self.inner.metrics.lock() = Some(metrics.clone());
        self
    }

    /// Lists and watches only objects matching this label selector.
    #[must_use]
    pub fn label_selector(self, selector: impl Into<String>) -> Self {
        self.inner.config.lock().label_selector = Some(selector.into());
        self
    }

    /// Lists and watches only objects matching this field selector.
    #[must_use]
    pub fn field_selector(self, selector: impl Into<String>) -> Self {
        self.inner.config.lock().field_selector = Some(selector.into());
        self
    }

    /// Keeps `metadata.managedFields` in the cache (by default they are
    /// dropped before anything is stored: they are rarely read and often
    /// half of an object's size).
    #[must_use]
    pub fn keep_managed_fields(self, keep: bool) -> Self {
        self.inner.config.lock().keep_managed_fields = keep;
        self
    }

    /// Keeps the cache compact ([`IndexedStore::compact`]): each object held as
    /// its JSON and decoded when read (a few hundred recently written or
    /// read objects are kept decoded), for a fraction of the memory per
    /// object; `list`, `by_index` and the listers decode every object they
    /// return. Handlers still receive the decoded objects. To be called on a
    /// new informer, before it is cloned or started (a warning is logged and
    /// nothing changes otherwise).
    #[must_use]
    pub fn compact_cache(mut self) -> Self
    where
        K: serde::Serialize + serde::de::DeserializeOwned,
    {
        match Arc::get_mut(&mut self.inner).and_then(|inner| Arc::get_mut(&mut inner.indexer)) {
            Some(cache) => *cache = std::mem::take(cache).compact(),
            None => tracing::warn!(
                "compact_cache: the informer is already shared; its cache stays as it is"
            ),
        }
        self
    }

    /// The queue between the reflector and the cache (default:
    /// [`InformerQueue::RealFifo`], as client-go 1.36);
    /// [`InformerQueue::DeltaFifo`] gives the older order.
    #[must_use]
    pub fn queue(self, queue: InformerQueue) -> Self {
        self.inner.config.lock().queue = queue;
        self
    }

    /// Whether runs of consecutive events of distinct objects are popped
    /// and applied to the cache as one transaction (client-go's
    /// `InOrderInformersBatchProcess`, on by default; only with a
    /// [`RealFifo`] queue).
    #[must_use]
    pub fn batch_process(self, batch: bool) -> Self {
        self.inner.config.lock().batch_process = batch;
        self
    }

    /// The informer's resync check period: the reflector asks the handlers
    /// whether one is due this often (zero: never).
    pub fn resync_check_period(&self) -> Duration {
        self.inner.config.lock().resync_check_period
    }

    /// How many handlers are registered.
    pub fn listener_count(&self) -> usize {
        self.inner.processor.listener_count()
    }

    /// Adjusts the reflector when the informer starts (page size, backoff,
    /// streaming lists, its metrics...).
    #[must_use]
    pub fn reflector_options(
        self,
        f: impl FnOnce(Reflector<K>) -> Reflector<K> + Send + 'static,
    ) -> Self {
        self.inner.config.lock().reflector_tweak = Some(Box::new(f));
        self
    }

    /// The informer's name.
    pub fn informer_name(&self) -> String {
        self.inner.config.lock().name.clone()
    }

    /// Sets a transform applied to every object before it is stored or
    /// handed to a handler (client-go's `SetTransform`), after
    /// `managedFields` are dropped. Fails once started.
    pub fn set_transform<F>(&self, f: F) -> Result<()>
    where
        F: Fn(Arc<K>) -> Result<Arc<K>, BoxError> + Send + Sync + 'static,
    {
        let mut config = self.inner.config.lock();
        if config.started {
            return Err(Error::AlreadyStarted);
        }
        config.transform = Some(Arc::new(f));
        Ok(())
    }

    /// Sets the handler called with every list and watch error (client-go's
    /// `SetWatchErrorHandler`). Fails once started.
    pub fn set_watch_error_handler<F>(&self, f: F) -> Result<()>
    where
        F: Fn(&kcr_reflector::Error) + Send + Sync + 'static,
    {
        let mut config = self.inner.config.lock();
        if config.started {
            return Err(Error::AlreadyStarted);
        }
        config.watch_error_handler = Some(Arc::new(f));
        Ok(())
    }

    /// Adds indexers to the cache, indexing what it holds (client-go allows
    /// this while running). Fails once stopped or on a name conflict.
    pub fn add_indexers(&self, indexers: Indexers<K>) -> Result<()> {
        let config = self.inner.config.lock();
        if config.stopped {
            return Err(Error::Stopped);
        }
        let _block = self.inner.block_deltas.lock();
        self.inner.indexer.add_indexers(indexers)?;
        Ok(())
    }

    /// The cache as a [`Store`].
    pub fn get_store(&self) -> Arc<dyn Store<K, Item = Arc<K>>> {
        self.inner.indexer.clone()
    }

    /// The cache, with its indices.
    pub fn get_indexer(&self) -> Arc<IndexedStore<K>> {
        self.inner.indexer.clone()
    }

    /// A [`Lister`] over the cache.
    pub fn lister(&self) -> Lister<K> {
        Lister::new(self.inner.indexer.clone())
    }

    /// True once the first list has been stored and every item of it
    /// handed to the handlers' buffers (client-go's `HasSynced`).
    pub fn has_synced(&self) -> bool {
        self.inner.fifo.get().is_some_and(|f| f.has_synced())
    }

    /// The resource version of the last list or event the reflector
    /// received (client-go's `LastSyncResourceVersion`); empty before
    /// start.
    pub fn last_sync_resource_version(&self) -> String {
        self.inner
            .reflector
            .get()
            .map(|r| r.last_sync_resource_version())
            .unwrap_or_default()
    }

    /// The resource version this informer's cache has reached, as a number that one atomic
    /// load reads, and a wait for it to move (see [`SyncedVersion`]). Tracked from the first
    /// call on (an informer nobody asks pays nothing).
    pub fn synced_version(&self) -> SyncedVersion {
        let inner = &self.inner;
        inner
            .synced_version
            .get_or_init(|| {
                // Seeded with no delta applied meanwhile: a change made before this is in
                // the seed, one made after is `set` by the pop loop.
                let _block = inner.block_deltas.lock();
                let version = SyncedVersion::new();
                version.set(&inner.indexer.last_store_sync_resource_version());
                version
            })
            .clone()
    }

    /// Whether [`run`](Self::run) has begun.
    pub fn is_started(&self) -> bool {
        self.inner.config.lock().started
    }

    /// Whether [`run`](Self::run) has returned.
    pub fn is_stopped(&self) -> bool {
        self.inner.config.lock().stopped
    }

    /// Registers a handler with the informer's default resync period.
    pub fn add_event_handler(&self, handler: impl ResourceEventHandler<K>) -> Result<Registration> {
        self.add_event_handler_with_resync_period(
            handler,
            self.inner.default_event_handler_resync_period,
        )
    }

    /// Registers a handler that wants a resync every `resync_period` (zero:
    /// never). As in client-go the period is at least one second; before
    /// start a shorter period than the informer's lowers the informer's
    /// check period, after start it is raised to the check period. Added
    /// after start, the handler first gets an `on_add` for every cached
    /// object. Fails once the informer has stopped.
    pub fn add_event_handler_with_resync_period(
        &self,
        handler: impl ResourceEventHandler<K>,
        resync_period: Duration,
    ) -> Result<Registration> {
        let inner = &self.inner;
        let mut config = inner.config.lock();
        if config.stopped {
            return Err(Error::Stopped);
        }
        let mut resync_period = resync_period;
        if !resync_period.is_zero() {
            if resync_period < MINIMUM_RESYNC_PERIOD {
                tracing::warn!(informer = %config.name, ?resync_period, "resync period too small; raised to 1s");
                resync_period = MINIMUM_RESYNC_PERIOD;
            }
            // An informer made with no resync (a zero check period) never
            // resyncs, whatever a handler asks (client-go).
            if resync_period < config.resync_check_period {
                if config.started {
                    tracing::warn!(
                        informer = %config.name,
                        ?resync_period,
                        check_period = ?config.resync_check_period,
                        "the informer has started; the handler's resync period is raised to its check period"
                    );
                    resync_period = config.resync_check_period;
                } else {
                    config.resync_check_period = resync_period;
                    inner.processor.resync_check_period_changed(resync_period);
                }
            }
        }
        let listener = Arc::new(Listener::new(
            inner.next_listener_id.fetch_add(1, Ordering::Relaxed),
            Arc::new(handler),
            resync_period,
            config.resync_check_period,
            self.panic_counter(&config.name),
            Arc::from(config.name.as_str()),
        ));
        let registration = Registration {
            informer_id: inner.id,
            listener_id: listener.id,
            state: Arc::new(ListenerState {
                listener: listener.clone(),
            }),
        };
        if !config.started {
            inner.processor.add_listener(listener);
            return Ok(registration);
        }
        // Started: replay the cache to the new handler, with no delta
        // applied in between.
        let _block = inner.block_deltas.lock();
        inner.processor.add_listener(listener.clone());
        for obj in inner.indexer.list().iter() {
            listener.add(Notification::Add {
                obj: obj.clone(),
                is_in_initial_list: true,
            });
        }
        if inner.synced.load(Ordering::SeqCst) {
            listener.upstream_has_synced();
        }
        Ok(registration)
    }

    fn panic_counter(&self, name: &str) -> kcr_metrics::prometheus::IntCounter {
        match &*self.inner.metrics.lock() {
            Some(families) => families.for_informer(name).handler_panics,
            None => InformerMetrics::global().for_informer(name).handler_panics,
        }
    }

    /// Unregisters a handler: it gets nothing more (what is buffered for it
    /// is dropped; a call in progress finishes). Removing a handler twice,
    /// or a registration of another informer, does nothing (client-go).
    ///
    /// The removal is asynchronous: a call of the handler that had begun
    /// may still be running when this returns. To wait until it has ended,
    /// use [`shut_down_event_handler`](Self::shut_down_event_handler).
    /// Safe to call from inside the handler itself.
    pub fn remove_event_handler(&self, registration: &Registration) -> Result<()> {
        if registration.informer_id != self.inner.id {
            return Ok(());
        }
        let _config = self.inner.config.lock();
        let _block = self.inner.block_deltas.lock();
        self.inner
            .processor
            .remove_listener(registration.listener_id);
        Ok(())
    }

    /// Removes a handler and waits until it has stopped: when this returns
    /// `Ok`, no call of the handler is running and none will start
    /// (client-go 1.37's `ShutDownEventHandler`). What was buffered for the
    /// handler is dropped, as with
    /// [`remove_event_handler`](Self::remove_event_handler); a call in
    /// progress is waited for. Idempotent: shutting a handler down again
    /// returns at once.
    ///
    /// Called from inside one of this handler's own calls it would wait for
    /// itself: it fails with [`Error::ShutDownFromOwnHandler`] and changes
    /// nothing (use `remove_event_handler` there). This is detected when the
    /// wait runs on the handler's own thread (for instance through
    /// `Handle::block_on` in the callback); a callback that blocks on
    /// another task which waits for the same handler, or two handlers that
    /// shut each other down from their callbacks, still deadlock. A
    /// registration of another informer fails with
    /// [`Error::ForeignRegistration`].
    ///
    /// The protocol and its invariants are described in the crate's
    /// `processor_listener` module and checked by a model test.
    pub async fn shut_down_event_handler(&self, registration: &Registration) -> Result<()> {
        if registration.informer_id != self.inner.id {
            return Err(Error::ForeignRegistration);
        }
        if crate::processor_listener::current_listener() == Some(registration.state.address()) {
            return Err(Error::ShutDownFromOwnHandler);
        }
        self.remove_event_handler(registration)?;
        registration.state.stopped().cancelled().await;
        Ok(())
    }

    /// Runs the informer until `cancel` fires: the reflector lists and
    /// watches, deltas are applied to the cache and handed to the handlers.
    /// On cancellation the handlers are stopped (a call in progress
    /// finishes) and this returns. Fails if the informer was already
    /// started (an informer runs once).
    pub async fn run(&self, cancel: CancellationToken) -> Result<()> {
        let inner = &self.inner;
        let (reflector, batch_process, name) = {
            let mut config = inner.config.lock();
            if config.stopped {
                return Err(Error::Stopped);
            }
            if config.started {
                return Err(Error::AlreadyStarted);
            }
            config.started = true;
            let keep = config.keep_managed_fields;
            let user = config.transform.clone();
            let strip_and_transform = move |obj: Arc<K>| {
                let obj = if keep { obj } else { strip_managed_fields(obj) };
                match &user {
                    Some(f) => f(obj),
                    None => Ok(obj),
                }
            };
            let transform: Option<TransformFunc<K>> = (!keep || config.transform.is_some())
                .then(|| Arc::new(strip_and_transform) as TransformFunc<K>);
            // The reflector writes to the FIFO itself: it takes the FIFO's
            // transform for a streaming list's objects and (RealFifo) passes
            // bookmarks on.
            let (fifo, store): (InformerFifo<K>, Arc<dyn ReflectorStore<K>>) = match config.queue {
                InformerQueue::DeltaFifo => {
                    let mut options = DeltaFifoOptions::new()
                        .known_objects(inner.indexer.clone())
                        .emit_delta_type_replaced(true);
                    if let Some(t) = transform {
                        options = options.transformer(t);
                    }
                    let fifo = Arc::new(DeltaFifo::new(options));
                    (InformerFifo::Delta(fifo.clone()), fifo)
                }
                queue => {
                    let mut options = if queue == InformerQueue::RealFifo {
                        RealFifoOptions::new()
                            .atomic_events(true)
                            .unlock_while_processing(true)
                            .emit_delta_type_bookmark(true)
                    } else {
                        RealFifoOptions::new().known_objects(inner.indexer.clone())
                    };
                    if let Some(t) = transform {
                        options = options.transformer(t);
                    }
                    let fifo = Arc::new(RealFifo::new(options)?);
                    (InformerFifo::Real(fifo.clone()), fifo)
                }
            };
            let batch_process = config.batch_process;
            let processor = inner.processor.clone();
            let mut reflector = Reflector::from_parts(inner.lister_watcher.clone(), store)
                .name(config.name.clone())
                .resync_period(config.resync_check_period)
                .should_resync(move || processor.should_resync());
            if let Some(s) = &config.label_selector {
                reflector = reflector.label_selector(s.clone());
            }
            if let Some(s) = &config.field_selector {
                reflector = reflector.field_selector(s.clone());
            }
            if let Some(h) = config.watch_error_handler.clone() {
                reflector = reflector.watch_error_handler(move |e| h(e));
            }
            if let Some(tweak) = config.reflector_tweak.take() {
                reflector = tweak(reflector);
            }
            let reflector = Arc::new(reflector);
            let _ = inner.fifo.set(fifo);
            let _ = inner.reflector.set(reflector.clone());
            (reflector, batch_process, config.name.clone())
        };
        let Some(fifo) = inner.fifo.get() else {
            return Err(Error::Stopped);
        };
        inner.processor.run(tokio::runtime::Handle::current());
        // If this future is dropped instead of cancelled, the handlers stop too.
        let guard = CloseOnDrop(&inner.processor);
        tracing::debug!(informer = %name, "informer started");

        let pop_loop = async {
            loop {
                let popped = tokio::select! {
                    biased;
                    () = cancel.cancelled() => return,
                    popped = inner.pop_once(fifo, batch_process) => popped,
                };
                if let Some(version) = inner.synced_version.get() {
                    version.set(&inner.indexer.last_store_sync_resource_version());
                }
                match popped {
                    Ok(()) => {}
                    Err(kcr_cache::Error::Closed) => return,
                    Err(e) => {
                        tracing::warn!(informer = %name, error = %e, "processing deltas failed")
                    }
                }
                if !inner.synced.load(Ordering::SeqCst) && fifo.has_synced() {
                    // client-go's `watchSynced`: each registration learns
                    // that the informer has synced.
                    inner.synced.store(true, Ordering::SeqCst);
                    inner.processor.upstream_has_synced();
                }
            }
        };
        tokio::join!(reflector.run(cancel.clone()), pop_loop);
        fifo.close();
        inner.processor.stop().await;
        drop(guard);
        inner.config.lock().stopped = true;
        tracing::debug!(informer = %name, "informer stopped");
        Ok(())
    }
}

/// Closes every listener when dropped.
struct CloseOnDrop<'a, K: Send + Sync + 'static>(&'a Processor<K>);

impl<K: Send + Sync + 'static> Drop for CloseOnDrop<'_, K> {
    fn drop(&mut self) {
        self.0.close_all();
    }
}

impl<K> Inner<K>
where
    K: Resource + Send + Sync + 'static,
{
    /// One pop of the queue (client-go's `processLoop` step): a batch pop
    /// when the queue is a [`RealFifo`] and batches are on, else a pop.
    async fn pop_once(&self, fifo: &InformerFifo<K>, batch_process: bool) -> kcr_cache::Result<()> {
        let single = |deltas: &Deltas<K>, initial: bool| {
            self.handle_deltas(deltas, initial);
            Ok::<(), ProcessError>(())
        };
        match fifo {
            InformerFifo::Real(f) if batch_process => {
                f.pop_batch(
                    |batch, initial| {
                        self.handle_batch(batch, initial);
                        Ok(())
                    },
                    single,
                )
                .await
            }
            InformerFifo::Real(f) => f.pop(single).await.map(drop),
            InformerFifo::Delta(f) => f.pop(single).await.map(drop),
        }
    }

    /// An add or update of `obj` (which replaced `old`), as the handlers
    /// see it: an unchanged resource version is a resync, for the handlers
    /// due for one.
    fn distribute_upsert(&self, old: Option<Arc<K>>, obj: &Arc<K>, is_in_initial_list: bool) {
        match old {
            Some(old) => {
                let is_sync = old.meta().resource_version == obj.meta().resource_version;
                self.processor.distribute(
                    Notification::Update {
                        old,
                        new: obj.clone(),
                    },
                    is_sync,
                );
            }
            None => self.processor.distribute(
                Notification::Add {
                    obj: obj.clone(),
                    is_in_initial_list,
                },
                false,
            ),
        }
    }

    /// client-go's `processDeltasInBatch`: the batch (distinct keys) is
    /// applied to the cache in one transaction, then every write that
    /// succeeded reaches the handlers, in order.
    fn handle_batch(&self, batch: &[Delta<K>], is_in_initial_list: bool) {
        let _block = self.block_deltas.lock();
        let txns = batch
            .iter()
            .map(|delta| {
                let type_ = if delta.type_ == DeltaType::Deleted {
                    TransactionType::Delete
                } else {
                    TransactionType::Update
                };
                Transaction::new(type_, delta.object.clone())
            })
            .collect();
        let results = self.indexer.transaction(txns);
        for (delta, result) in batch.iter().zip(results) {
            let old = match result {
                Ok(old) => old,
                Err(e) => {
                    tracing::warn!(error = %e, "could not apply a delta to the cache");
                    continue;
                }
            };
            match (&delta.type_, &delta.object) {
                (DeltaType::Deleted, obj) => {
                    if let Some(obj) = DeletedObject::from_delta_object(obj) {
                        self.processor
                            .distribute(Notification::Delete { obj }, false);
                    }
                }
                (_, DeltaObject::Object(obj)) => {
                    self.distribute_upsert(old, obj, is_in_initial_list);
                }
                _ => {}
            }
        }
    }

    /// client-go's `processReplacedAllInfo`: the cache takes the list, then
    /// the handlers get the deletions first (tombstones with the last
    /// cached state), then an add or update per listed object.
    fn handle_replaced_all(&self, info: &kcr_cache::ReplacedAllInfo<K>, is_in_initial_list: bool) {
        let changes = match self
            .indexer
            .replace_with_changes(info.objects.iter().cloned(), &info.resource_version)
        {
            Ok(changes) => changes,
            Err(e) => {
                tracing::warn!(error = %e, "could not replace the cache's content");
                return;
            }
        };
        for tombstone in changes.deleted {
            self.processor.distribute(
                Notification::Delete {
                    obj: tombstone.into(),
                },
                false,
            );
        }
        for (old, obj) in changes.replaced {
            self.distribute_upsert(old, &obj, is_in_initial_list);
        }
    }

    /// client-go's `HandleDeltas` / `processDeltas`: the cache first, then
    /// the handlers. Runs inside `pop`: synchronous and short, handlers are
    /// only buffered to.
    fn handle_deltas(&self, deltas: &Deltas<K>, is_in_initial_list: bool) {
        let _block = self.block_deltas.lock();
        for delta in deltas {
            match delta.type_ {
                DeltaType::ReplacedAll => {
                    if let DeltaObject::ReplacedAll(info) = &delta.object {
                        self.handle_replaced_all(info, is_in_initial_list);
                    }
                }
                DeltaType::SyncAll => {
                    // Every cached object, old and new the same: a resync
                    // for the handlers due for one.
                    for obj in self.indexer.list().iter() {
                        self.processor.distribute(
                            Notification::Update {
                                old: obj.clone(),
                                new: obj.clone(),
                            },
                            true,
                        );
                    }
                }
                DeltaType::Bookmark => {
                    if let DeltaObject::Bookmark(info) = &delta.object {
                        self.indexer.bookmark(&info.resource_version);
                    }
                }
                DeltaType::Deleted => {
                    let deleted = match &delta.object {
                        DeltaObject::Object(obj) => self.indexer.delete(obj.clone()),
                        DeltaObject::DeletedFinalStateUnknown(tombstone) => {
                            self.indexer.delete_by_key(&tombstone.key)
                        }
                        _ => Err(kcr_cache::Error::NoKey),
                    };
                    if let Err(e) = deleted {
                        tracing::warn!(error = %e, "could not delete from the cache");
                        continue;
                    }
                    if let Some(obj) = DeletedObject::from_delta_object(&delta.object) {
                        self.processor
                            .distribute(Notification::Delete { obj }, false);
                    }
                }
                DeltaType::Added | DeltaType::Updated | DeltaType::Sync | DeltaType::Replaced => {
                    let DeltaObject::Object(obj) = &delta.object else {
                        tracing::warn!(?delta.type_, "a tombstone in a non-delete delta; skipped");
                        continue;
                    };
                    let old = match self.indexer.upsert(obj.clone()) {
                        Ok(old) => old,
                        Err(e) => {
                            tracing::warn!(error = %e, "could not store the object in the cache");
                            continue;
                        }
                    };
                    self.distribute_upsert(old, obj, is_in_initial_list);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use k8s_openapi::api::core::v1::ConfigMap;

    struct NoServer;

    #[async_trait::async_trait]
    impl ListerWatcher<ConfigMap> for NoServer {
        async fn list(
            &self,
            _: &kcr_reflector::ListOptions,
        ) -> kcr_reflector::Result<kcr_reflector::ObjectList<ConfigMap>> {
            Err(kcr_reflector::Error::VeryShortWatch)
        }
        async fn watch(
            &self,
            _: &kcr_reflector::WatchOptions,
        ) -> kcr_reflector::Result<kcr_reflector::WatchStream<ConfigMap>> {
            Err(kcr_reflector::Error::VeryShortWatch)
        }
    }

    fn check_period(informer: &SharedIndexInformer<ConfigMap>) -> Duration {
        informer.resync_check_period()
    }

    #[test]
    fn a_handler_added_before_start_should_lower_the_check_period_and_never_below_a_second() {
        let informer =
            SharedIndexInformer::new(NoServer, Duration::from_secs(60), Indexers::default());
        assert_eq!(check_period(&informer), Duration::from_secs(60));
        informer
            .add_event_handler_with_resync_period(
                crate::ResourceEventHandlerFuncs::new(),
                Duration::from_secs(20),
            )
            .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(check_period(&informer), Duration::from_secs(20));
        informer
            .add_event_handler_with_resync_period(
                crate::ResourceEventHandlerFuncs::new(),
                Duration::from_millis(10),
            )
            .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(check_period(&informer), MINIMUM_RESYNC_PERIOD);
        // A zero period asks for no resync and changes nothing.
        informer
            .add_event_handler_with_resync_period(
                crate::ResourceEventHandlerFuncs::new(),
                Duration::ZERO,
            )
            .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(check_period(&informer), MINIMUM_RESYNC_PERIOD);
    }

    #[test]
    fn managed_fields_should_be_dropped_and_an_object_without_them_kept_as_it_is() {
        let mut cm = ConfigMap::default();
        cm.metadata.name = Some("a".into());
        cm.metadata.managed_fields = Some(vec![Default::default()]);
        let shared = Arc::new(cm);
        let stripped = strip_managed_fields(shared.clone());
        assert!(stripped.metadata.managed_fields.is_none());
        assert!(
            shared.metadata.managed_fields.is_some(),
            "a shared object is copied, not changed"
        );
        let stripped_again = strip_managed_fields(Arc::new((*shared).clone()));
        assert_eq!(stripped_again.metadata.name.as_deref(), Some("a"));
        assert!(stripped_again.metadata.managed_fields.is_none());
        let plain = Arc::new(ConfigMap::default());
        assert!(Arc::ptr_eq(&strip_managed_fields(plain.clone()), &plain));
    }
}
