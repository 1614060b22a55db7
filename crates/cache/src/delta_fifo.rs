//! [`DeltaFifo`]: a queue of per-key deltas between the reflector and the
//! informer (client-go's `delta_fifo.go`).

use std::collections::{HashMap, HashSet, VecDeque};
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::Arc;

use kube_core::Resource;
use parking_lot::Mutex;
use tokio::sync::Notify;

use crate::delta::{
    DeletedFinalStateUnknown, Delta, DeltaObject, DeltaType, Deltas, Keyed, dedup_deltas,
};
use crate::error::{Error, Result, panic_message};
use crate::fifo::{ProcessError, TransformFunc, process_popped};
use crate::key::{KeyFunc, ObjectKey, meta_namespace_key_func};
use crate::store::KeyListerGetter;

type Hasher = foldhash::fast::RandomState;

/// Options for [`DeltaFifo::new`](crate::DeltaFifo::new) (client-go's
/// `DeltaFIFOOptions`; [`RealFifo`](crate::RealFifo) has its own
/// [`RealFifoOptions`](crate::RealFifoOptions)).
pub struct DeltaFifoOptions<K> {
    pub(crate) key_function: Option<KeyFunc<K>>,
    pub(crate) known_objects: Option<Arc<dyn KeyListerGetter<K>>>,
    pub(crate) emit_delta_type_replaced: bool,
    pub(crate) transformer: Option<TransformFunc<K>>,
    pub(crate) name: Option<String>,
}

impl<K> Default for DeltaFifoOptions<K> {
    fn default() -> Self {
        Self {
            key_function: None,
            known_objects: None,
            emit_delta_type_replaced: false,
            transformer: None,
            name: None,
        }
    }
}

impl<K> std::fmt::Debug for DeltaFifoOptions<K> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DeltaFifoOptions")
            .field("key_function", &self.key_function.is_some())
            .field("known_objects", &self.known_objects.is_some())
            .field("emit_delta_type_replaced", &self.emit_delta_type_replaced)
            .field("transformer", &self.transformer.is_some())
            .field("name", &self.name)
            .finish()
    }
}

impl<K> DeltaFifoOptions<K> {
    /// Default options: [`meta_namespace_key_func`](crate::meta_namespace_key_func),
    /// no known objects, `Sync` deltas on `replace`, no transform.
    pub fn new() -> Self {
        Self::default()
    }

    /// The key function (default: `namespace/name`).
    #[must_use]
    pub fn key_function<F>(mut self, f: F) -> Self
    where
        F: Fn(&K) -> Result<crate::ObjectKey> + Send + Sync + 'static,
    {
        self.key_function = Some(Arc::new(f));
        self
    }

    /// The objects the consumer already knows: the informer's indexer (a
    /// `Arc<IndexedStore<K>>` coerces). `replace` detects deletions against them,
    /// `resync` replays them, `delete` of a key neither queued nor known is
    /// ignored.
    #[must_use]
    pub fn known_objects(mut self, known: Arc<dyn KeyListerGetter<K>>) -> Self {
        self.known_objects = Some(known);
        self
    }

    /// Emit `Replaced` instead of `Sync` for the objects `replace` lists.
    #[must_use]
    pub fn emit_delta_type_replaced(mut self, emit: bool) -> Self {
        self.emit_delta_type_replaced = emit;
        self
    }

    /// A name for the FIFO: the `name` label of its `cache_fifo_queued`
    /// gauge with the `metrics` feature (unnamed FIFOs record nothing).
    #[must_use]
    pub fn name(mut self, name: impl Into<String>) -> Self {
        self.name = Some(name.into());
        self
    }

    /// A transform applied to each object before it is queued (client-go's
    /// `Transformer` option); [`DeltaFifo::transformer`](crate::DeltaFifo::transformer)
    /// hands it back.
    #[must_use]
    pub fn transformer(mut self, transform: TransformFunc<K>) -> Self {
        self.transformer = Some(transform);
        self
    }
}

/// Key function and transform shared by both FIFOs.
pub(crate) struct FifoConfig<K> {
    pub(crate) key_func: KeyFunc<K>,
    pub(crate) known_objects: Option<Arc<dyn KeyListerGetter<K>>>,
    pub(crate) emit_delta_type_replaced: bool,
    pub(crate) transformer: Option<TransformFunc<K>>,
}

impl<K: Resource + Send + Sync + 'static> FifoConfig<K> {
    pub(crate) fn new(options: DeltaFifoOptions<K>) -> Self {
        Self {
            key_func: options
                .key_function
                .unwrap_or_else(|| Arc::new(meta_namespace_key_func::<K>)),
            known_objects: options.known_objects,
            emit_delta_type_replaced: options.emit_delta_type_replaced,
            transformer: options.transformer,
        }
    }
}

impl<K> FifoConfig<K> {
    pub(crate) fn key_of(&self, obj: &DeltaObject<K>) -> Result<ObjectKey> {
        match obj {
            DeltaObject::Object(obj) => (self.key_func)(obj),
            DeltaObject::DeletedFinalStateUnknown(t) => Ok(t.key.clone()),
            DeltaObject::ReplacedAll(_) | DeltaObject::SyncAll | DeltaObject::Bookmark(_) => {
                Err(Error::NoKey)
            }
        }
    }

    pub(crate) fn key_of_deltas(&self, deltas: &Deltas<K>) -> Result<ObjectKey> {
        let newest = deltas.newest().ok_or(Error::ZeroLengthDeltas)?;
        self.key_of(&newest.object)
    }

    /// Applies the transform (catching a panic) to a non-tombstone object.
    pub(crate) fn transform(&self, obj: DeltaObject<K>) -> Result<DeltaObject<K>> {
        match (&self.transformer, obj) {
            (Some(t), DeltaObject::Object(obj)) => {
                match catch_unwind(AssertUnwindSafe(|| t(obj))) {
                    Ok(Ok(obj)) => Ok(DeltaObject::Object(obj)),
                    Ok(Err(source)) => Err(Error::Transform { source }),
                    Err(panic) => Err(Error::Transform {
                        source: format!("transform panicked: {}", panic_message(panic.as_ref()))
                            .into(),
                    }),
                }
            }
            (_, obj) => Ok(obj),
        }
    }

    /// Computes `(key, transformed object)` for every listed object (the
    /// transform skipped when the objects are `transformed` already), and
    /// the delta type `replace` emits.
    pub(crate) fn prepare_replace(
        &self,
        list: Vec<Arc<K>>,
        transformed: bool,
    ) -> Result<(DeltaType, Vec<Keyed<K>>)> {
        let action = if self.emit_delta_type_replaced {
            DeltaType::Replaced
        } else {
            DeltaType::Sync
        };
        let prepared = list
            .into_iter()
            .map(|obj| {
                let key = (self.key_func)(&obj)?;
                let obj = DeltaObject::Object(obj);
                Ok((
                    key,
                    if transformed {
                        obj
                    } else {
                        self.transform(obj)?
                    },
                ))
            })
            .collect::<Result<Vec<_>>>()?;
        Ok((action, prepared))
    }

    /// Applies the transform to every listed object, in place.
    pub(crate) fn transform_list(&self, list: Vec<Arc<K>>) -> Result<Vec<Arc<K>>> {
        if self.transformer.is_none() {
            return Ok(list);
        }
        list.into_iter()
            .map(|obj| match self.transform(DeltaObject::Object(obj))? {
                DeltaObject::Object(obj) => Ok(obj),
                _ => Err(Error::NoKey),
            })
            .collect()
    }

    /// `replace`'s deletions detected against the known objects: a
    /// `Deleted` tombstone, with the last known state, for every known key
    /// that `covered` does not claim (listed, or already tombstoned from the
    /// queue).
    pub(crate) fn known_tombstones(
        &self,
        covered: impl Fn(&ObjectKey) -> bool,
    ) -> Vec<(ObjectKey, Delta<K>)> {
        self.known_tombstones_of(self.known_keys(), covered)
    }

    /// Every key of the known objects (none without them).
    pub(crate) fn known_keys(&self) -> Vec<ObjectKey> {
        self.known_objects
            .as_ref()
            .map(|known| known.list_keys())
            .unwrap_or_default()
    }

    /// [`known_tombstones`](Self::known_tombstones) over `known_keys`, the
    /// keys the known objects listed.
    pub(crate) fn known_tombstones_of(
        &self,
        known_keys: Vec<ObjectKey>,
        covered: impl Fn(&ObjectKey) -> bool,
    ) -> Vec<(ObjectKey, Delta<K>)> {
        let Some(known) = &self.known_objects else {
            return Vec::new();
        };
        known_keys
            .into_iter()
            .filter(|key| !covered(key))
            .map(|key| {
                let obj = known.get_by_key(&key);
                if obj.is_none() {
                    tracing::debug!(%key, "key vanished from the known objects; tombstone without object");
                }
                let tombstone = DeletedFinalStateUnknown {
                    key: key.clone(),
                    obj,
                };
                (key, Delta::new(DeltaType::Deleted, tombstone))
            })
            .collect()
    }
}

struct State<K> {
    /// Key → its deltas (never empty). A key is in `items` iff it is in
    /// `queue`.
    items: HashMap<ObjectKey, Deltas<K>, Hasher>,
    /// Keys in order of first arrival, no duplicates.
    queue: VecDeque<ObjectKey>,
    /// Set by the first `replace`, `add`, `update`, `delete` or
    /// `add_if_not_present`.
    populated: bool,
    /// How many entries of the first `replace` are still queued.
    initial_population_count: usize,
    closed: bool,
}

impl<K> State<K> {
    fn push(&mut self, key: ObjectKey, delta: Delta<K>) {
        match self.items.get_mut(&*key) {
            Some(deltas) => {
                deltas.0.push(delta);
                dedup_deltas(&mut deltas.0);
            }
            None => {
                self.items.insert(key.clone(), Deltas(vec![delta]));
                self.queue.push_back(key);
            }
        }
    }

    fn has_synced(&self) -> bool {
        self.populated && self.initial_population_count == 0
    }
}

/// A producer/consumer queue of deltas, one entry per object key (client-go's
/// `DeltaFIFO`).
///
/// * The reflector produces: [`add`](Self::add), [`update`](Self::update),
///   [`delete`](Self::delete), [`replace`](Self::replace) (after a list),
///   [`resync`](Self::resync).
/// * The informer consumes with [`pop`](Self::pop): each entry is all the
///   deltas of one key since it was last popped, oldest first; keys come out
///   in order of first arrival.
/// * *Known objects* (the informer's indexer) let `replace` emit a
///   [`DeletedFinalStateUnknown`] tombstone for objects deleted while the
///   watch was down.
///
/// ```
/// use std::sync::Arc;
/// use k8s_openapi::api::core::v1::ConfigMap;
/// use kcr_cache::{IndexedStore, DeltaFifo, DeltaFifoOptions, DeltaType};
///
/// # #[tokio::main(flavor = "current_thread")] async fn main() -> kcr_cache::Result<()> {
/// let indexer = Arc::new(IndexedStore::<ConfigMap>::namespace_indexed());
/// let fifo = DeltaFifo::new(DeltaFifoOptions::new().known_objects(indexer.clone()));
///
/// let mut cm = ConfigMap::default();
/// cm.metadata.name = Some("a".into());
/// cm.metadata.namespace = Some("default".into());
/// fifo.replace(vec![Arc::new(cm)], "1")?;
///
/// let deltas = fifo
///     .pop(|deltas, _in_initial_list| {
///         for delta in deltas {
///             if let Some(obj) = delta.object.object() {
///                 indexer.add(obj.clone()).map_err(kcr_cache::ProcessError::failed)?;
///             }
///         }
///         Ok(())
///     })
///     .await?;
/// assert_eq!(deltas.newest().map(|d| d.type_), Some(DeltaType::Sync));
/// assert!(fifo.has_synced());
/// assert_eq!(indexer.by_index("namespace", "default")?.len(), 1);
/// # Ok(()) }
/// ```
pub struct DeltaFifo<K> {
    // A parking_lot mutex: never held across an `.await` (`pop` releases it
    // before waiting; the `process` callback is synchronous).
    state: Mutex<State<K>>,
    notify: Notify,
    config: FifoConfig<K>,
    queued_gauge: crate::metrics::Gauge,
}

impl<K> std::fmt::Debug for DeltaFifo<K> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let state = self.state.lock();
        f.debug_struct("DeltaFifo")
            .field("queued", &state.queue.len())
            .field("populated", &state.populated)
            .field("initial_population_count", &state.initial_population_count)
            .field("closed", &state.closed)
            .finish_non_exhaustive()
    }
}

impl<K: Resource + Send + Sync + 'static> DeltaFifo<K> {
    /// A new, empty FIFO (client-go's `NewDeltaFIFOWithOptions`).
    pub fn new(options: DeltaFifoOptions<K>) -> Self {
        Self {
            state: Mutex::new(State {
                items: HashMap::default(),
                queue: VecDeque::new(),
                populated: false,
                initial_population_count: 0,
                closed: false,
            }),
            notify: Notify::new(),
            queued_gauge: crate::metrics::Gauge::fifo_queued(options.name.as_deref()),
            config: FifoConfig::new(options),
        }
    }
}

impl<K: Send + Sync + 'static> DeltaFifo<K> {
    fn changed(&self, state: &State<K>) {
        self.queued_gauge.set(state.queue.len());
    }

    fn queue_action(
        &self,
        state: &mut State<K>,
        type_: DeltaType,
        obj: DeltaObject<K>,
    ) -> Result<()> {
        let key = self.config.key_of(&obj)?;
        let object = self.config.transform(obj)?;
        state.push(key, Delta { type_, object });
        Ok(())
    }

    /// Queues an `Added` delta.
    pub fn add(&self, obj: Arc<K>) -> Result<()> {
        {
            let mut state = self.state.lock();
            state.populated = true;
            self.queue_action(&mut state, DeltaType::Added, DeltaObject::Object(obj))?;
            self.changed(&state);
        }
        self.notify.notify_waiters();
        Ok(())
    }

    /// Queues an `Updated` delta.
    pub fn update(&self, obj: Arc<K>) -> Result<()> {
        {
            let mut state = self.state.lock();
            state.populated = true;
            self.queue_action(&mut state, DeltaType::Updated, DeltaObject::Object(obj))?;
            self.changed(&state);
        }
        self.notify.notify_waiters();
        Ok(())
    }

    /// Queues a `Deleted` delta, unless the key is neither queued nor in the
    /// known objects (then the deletion was already reported, by a
    /// relist's tombstone, and is ignored).
    pub fn delete(&self, obj: DeltaObject<K>) -> Result<()> {
        let key = self.config.key_of(&obj)?;
        {
            let mut state = self.state.lock();
            state.populated = true;
            let queued = state.items.contains_key(&*key);
            let known = match &self.config.known_objects {
                Some(known) => known.get_by_key(&key).is_some(),
                None => false,
            };
            if !queued && !known {
                return Ok(());
            }
            let object = self.config.transform(obj)?;
            state.push(
                key,
                Delta {
                    type_: DeltaType::Deleted,
                    object,
                },
            );
            self.changed(&state);
        }
        self.notify.notify_waiters();
        Ok(())
    }

    /// Queues `deltas` (typically popped earlier) unless deltas for the key
    /// are already queued: newer deltas are never overtaken.
    pub fn add_if_not_present(&self, deltas: Deltas<K>) -> Result<()> {
        let key = self.config.key_of_deltas(&deltas)?;
        {
            let mut state = self.state.lock();
            state.populated = true;
            add_if_not_present_locked(&mut state, key, deltas);
            self.changed(&state);
        }
        self.notify.notify_waiters();
        Ok(())
    }

    /// After a list: queues a `Sync` (or `Replaced`) delta for every listed
    /// object, then a `Deleted` [`DeletedFinalStateUnknown`] tombstone for
    /// every key that is queued or in the known objects but not listed,
    /// carrying its last known state (the newest queued one, else the known
    /// object). The first call sets the initial population count that
    /// [`has_synced`](Self::has_synced) waits on. On a key or transform error
    /// nothing is queued.
    pub fn replace(&self, list: Vec<Arc<K>>, resource_version: &str) -> Result<()> {
        self.replace_listed(list, resource_version, false)
    }

    /// [`replace`](Self::replace) with objects that have been through this
    /// FIFO's [`transformer`](Self::transformer) already (as a reflector
    /// transforms each object as it arrives): they are not transformed again.
    pub fn replace_transformed(&self, list: Vec<Arc<K>>, resource_version: &str) -> Result<()> {
        self.replace_listed(list, resource_version, true)
    }

    fn replace_listed(
        &self,
        list: Vec<Arc<K>>,
        _resource_version: &str,
        transformed: bool,
    ) -> Result<()> {
        let (action, prepared) = self.config.prepare_replace(list, transformed)?;
        {
            let mut state = self.state.lock();
            let mut listed: HashSet<ObjectKey, Hasher> =
                HashSet::with_capacity_and_hasher(prepared.len(), Hasher::default());
            // Grow once rather than rehashing all along the list.
            state.items.reserve(prepared.len());
            state.queue.reserve(prepared.len());
            for (key, object) in prepared {
                listed.insert(key.clone());
                state.push(
                    key,
                    Delta {
                        type_: action,
                        object,
                    },
                );
            }
            let mut queued_deletions = 0;
            // Deletions detected against the queue: objects queued (not yet
            // known to the consumer) that the list no longer has.
            let missing: Vec<(ObjectKey, Option<Arc<K>>)> = state
                .items
                .iter()
                .filter(|(key, _)| !listed.contains(*key))
                .map(|(key, deltas)| {
                    (
                        key.clone(),
                        deltas.newest().and_then(|d| d.object.object().cloned()),
                    )
                })
                .collect();
            for (key, obj) in missing {
                queued_deletions += 1;
                let tombstone = DeletedFinalStateUnknown {
                    key: key.clone(),
                    obj,
                };
                state.push(key, Delta::new(DeltaType::Deleted, tombstone));
            }
            // Deletions detected against the known objects.
            let known = self
                .config
                .known_tombstones(|key| listed.contains(key) || state.items.contains_key(&**key));
            for (key, delta) in known {
                queued_deletions += 1;
                state.push(key, delta);
            }
            if !state.populated {
                state.populated = true;
                state.initial_population_count = listed.len() + queued_deletions;
            }
            self.changed(&state);
        }
        self.notify.notify_waiters();
        Ok(())
    }

    /// Queues a `Sync` delta for every known object whose key is not queued
    /// (a periodic resync). Without known objects it does nothing.
    pub fn resync(&self) -> Result<()> {
        let Some(known) = &self.config.known_objects else {
            return Ok(());
        };
        {
            let mut state = self.state.lock();
            for key in known.list_keys() {
                if state.items.contains_key(&*key) {
                    continue;
                }
                let Some(obj) = known.get_by_key(&key) else {
                    continue;
                };
                let key = (self.config.key_func)(&obj)?;
                if state.items.contains_key(&*key) {
                    continue;
                }
                // Known objects were transformed on their way in.
                state.push(key, Delta::new(DeltaType::Sync, obj));
            }
            self.changed(&state);
        }
        self.notify.notify_waiters();
        Ok(())
    }

    /// Waits until an entry is queued (or the FIFO is closed and empty),
    /// removes the oldest key's deltas and hands them to `process` together
    /// with whether they belong to the initial list.
    ///
    /// `process` runs with the FIFO locked (as in client-go, so that a
    /// concurrent `replace` sees the deltas either queued or applied, never
    /// neither); it must not call this FIFO. If it returns
    /// [`ProcessError::Requeue`] the deltas are put back with
    /// [`add_if_not_present`](Self::add_if_not_present) semantics. A panic
    /// in `process` is caught and returned as
    /// [`Error::ProcessPanicked`] (the deltas are dropped).
    ///
    /// Returns the popped deltas, or [`Error::Closed`] once closed and empty.
    pub async fn pop<F>(&self, process: F) -> Result<Deltas<K>>
    where
        F: FnOnce(&Deltas<K>, bool) -> Result<(), ProcessError>,
    {
        loop {
            let notified = self.notify.notified();
            tokio::pin!(notified);
            {
                let mut state = self.state.lock();
                if let Some(key) = state.queue.pop_front() {
                    let in_initial_list = !state.has_synced();
                    if state.initial_population_count > 0 {
                        state.initial_population_count -= 1;
                    }
                    let Some(deltas) = state.items.remove(&*key) else {
                        tracing::error!(%key, "key queued without deltas; skipped");
                        continue;
                    };
                    self.changed(&state);
                    let (requeued, result) =
                        process_popped(&key, deltas, in_initial_list, process, |deltas| {
                            add_if_not_present_locked(&mut state, key.clone(), deltas.clone());
                            self.changed(&state);
                        });
                    drop(state);
                    if requeued {
                        // Another popper may be waiting for what was requeued.
                        self.notify.notify_waiters();
                    }
                    return result;
                }
                if state.closed {
                    return Err(Error::Closed);
                }
                // Registered before the lock is released, so a producer that
                // queues after this point wakes us.
                notified.as_mut().enable();
            }
            notified.await;
        }
    }

    /// Whether the first `replace`'s entries (client-go's initial population
    /// count: listed keys plus queued deletions) have all been popped; also
    /// true if an `add`/`update`/`delete`/`add_if_not_present` came before
    /// any `replace`.
    pub fn has_synced(&self) -> bool {
        self.state.lock().has_synced()
    }

    /// Closes the FIFO: waiting and future `pop`s drain what is queued, then
    /// return [`Error::Closed`].
    pub fn close(&self) {
        self.state.lock().closed = true;
        self.notify.notify_waiters();
    }

    /// Whether [`close`](Self::close) was called.
    pub fn is_closed(&self) -> bool {
        self.state.lock().closed
    }

    /// The queued deltas of every key, in queue order.
    pub fn list(&self) -> Vec<Deltas<K>> {
        let state = self.state.lock();
        state
            .queue
            .iter()
            .filter_map(|k| state.items.get(&**k).cloned())
            .collect()
    }

    /// The queued keys, in queue order.
    pub fn list_keys(&self) -> Vec<ObjectKey> {
        self.state.lock().queue.iter().cloned().collect()
    }

    /// The number of queued keys.
    pub fn len(&self) -> usize {
        self.state.lock().queue.len()
    }

    /// Whether nothing is queued.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The queued deltas for `obj`'s key.
    pub fn get(&self, obj: &K) -> Result<Option<Deltas<K>>> {
        let key = (self.config.key_func)(obj)?;
        Ok(self.get_by_key(&key))
    }

    /// The queued deltas for `key`.
    pub fn get_by_key(&self, key: &str) -> Option<Deltas<K>> {
        self.state.lock().items.get(key).cloned()
    }

    /// The key of an object or tombstone, as this FIFO computes it
    /// (client-go's `KeyOf`).
    pub fn key_of(&self, obj: &DeltaObject<K>) -> Result<ObjectKey> {
        self.config.key_of(obj)
    }

    /// The key of a `Deltas` (that of its newest delta); fails for an empty
    /// one.
    pub fn key_of_deltas(&self, deltas: &Deltas<K>) -> Result<ObjectKey> {
        self.config.key_of_deltas(deltas)
    }

    /// The transform this FIFO applies to what it queues (client-go's
    /// `Transformer()`, which makes the FIFO a `TransformingStore`: a
    /// reflector applies it to a streaming list's objects as they arrive).
    pub fn transformer(&self) -> Option<TransformFunc<K>> {
        self.config.transformer.clone()
    }
}

fn add_if_not_present_locked<K>(state: &mut State<K>, key: ObjectKey, deltas: Deltas<K>) {
    if deltas.is_empty() || state.items.contains_key(&*key) {
        return;
    }
    state.items.insert(key.clone(), deltas);
    state.queue.push_back(key);
}

crate::fifo::impl_fifo_traits!(DeltaFifo);

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fifo::FifoQueue;
    use crate::indexed_store::IndexedStore;
    use crate::test_util::{cm, known, set_version, summary, version};
    use k8s_openapi::api::core::v1::ConfigMap;

    type Fifo = DeltaFifo<ConfigMap>;

    fn with_known(cache: &Arc<IndexedStore<ConfigMap>>) -> Fifo {
        DeltaFifo::new(DeltaFifoOptions::new().known_objects(cache.clone()))
    }

    /// Pops one entry without processing it.
    async fn pop(fifo: &Fifo) -> Result<Deltas<ConfigMap>> {
        fifo.pop(|_, _| Ok(())).await
    }

    #[tokio::test]
    async fn pop_should_hand_out_keys_in_order_of_first_arrival_with_all_their_deltas() {
        let fifo = Fifo::new(DeltaFifoOptions::new());
        fifo.add(cm("ns", "a", 1)).unwrap();
        fifo.add(cm("ns", "b", 1)).unwrap();
        fifo.update(cm("ns", "a", 2)).unwrap();
        assert_eq!(fifo.len(), 2);
        let first = pop(&fifo).await.unwrap();
        assert_eq!(&*fifo.key_of_deltas(&first).unwrap(), "ns/a");
        assert_eq!(
            summary(&first),
            [(DeltaType::Added, false, 1), (DeltaType::Updated, false, 2)]
        );
        assert_eq!(first.oldest().map(|d| d.type_), Some(DeltaType::Added));
        assert_eq!(first.newest().map(|d| d.type_), Some(DeltaType::Updated));
        let second = pop(&fifo).await.unwrap();
        assert_eq!(&*fifo.key_of_deltas(&second).unwrap(), "ns/b");
        assert!(fifo.is_empty());
    }

    #[tokio::test]
    async fn delete_should_be_ignored_when_the_key_is_neither_queued_nor_known() {
        let cache = known(&[cm("ns", "known", 1)]);
        let fifo = with_known(&cache);
        fifo.delete(cm("ns", "stranger", 1).into()).unwrap();
        assert!(fifo.is_empty());
        fifo.delete(cm("ns", "known", 1).into()).unwrap();
        assert_eq!(fifo.list_keys(), vec![Arc::<str>::from("ns/known")]);

        let without_known = Fifo::new(DeltaFifoOptions::new());
        without_known.delete(cm("ns", "a", 1).into()).unwrap();
        assert!(without_known.is_empty());
        without_known.add(cm("ns", "a", 1)).unwrap();
        without_known.delete(cm("ns", "a", 1).into()).unwrap();
        let deltas = without_known.get_by_key("ns/a").unwrap();
        assert_eq!(
            summary(&deltas),
            [(DeltaType::Added, false, 1), (DeltaType::Deleted, false, 1)]
        );
    }

    /// Seed 004's worked example: known {obj1, obj2, obj3}, queue
    /// {obj2, obj3, obj4}, replace with {obj2, obj3, obj4}.
    #[tokio::test]
    async fn replace_should_tombstone_a_known_object_missing_from_the_list_with_its_last_state() {
        let cache = known(&[
            cm("ns", "obj1", 7),
            cm("ns", "obj2", 1),
            cm("ns", "obj3", 1),
        ]);
        let fifo = with_known(&cache);
        for name in ["obj2", "obj3", "obj4"] {
            fifo.update(cm("ns", name, 2)).unwrap();
        }
        fifo.replace(
            vec![
                cm("ns", "obj2", 3),
                cm("ns", "obj3", 3),
                cm("ns", "obj4", 3),
            ],
            "10",
        )
        .unwrap();
        let keys: Vec<String> = fifo.list_keys().iter().map(|k| k.to_string()).collect();
        assert_eq!(keys, ["ns/obj2", "ns/obj3", "ns/obj4", "ns/obj1"]);
        let obj1 = fifo.get_by_key("ns/obj1").unwrap();
        assert_eq!(obj1.len(), 1);
        let delta = &obj1[0];
        assert_eq!(delta.type_, DeltaType::Deleted);
        match &delta.object {
            DeltaObject::DeletedFinalStateUnknown(t) => {
                assert_eq!(&*t.key, "ns/obj1");
                assert_eq!(t.obj.as_deref().map(version), Some(7));
            }
            other => panic!("expected a tombstone, got {other:?}"),
        }
        let obj2 = fifo.get_by_key("ns/obj2").unwrap();
        assert_eq!(
            summary(&obj2),
            [(DeltaType::Updated, false, 2), (DeltaType::Sync, false, 3)]
        );
    }

    #[tokio::test]
    async fn replace_without_known_objects_should_tombstone_queued_keys_missing_from_the_list() {
        let fifo = Fifo::new(DeltaFifoOptions::new());
        for name in ["obj1", "obj2", "obj3"] {
            fifo.add(cm("ns", name, 5)).unwrap();
        }
        fifo.replace(vec![cm("ns", "obj2", 6), cm("ns", "obj3", 6)], "10")
            .unwrap();
        let obj1 = fifo.get_by_key("ns/obj1").unwrap();
        assert_eq!(
            summary(&obj1),
            [(DeltaType::Added, false, 5), (DeltaType::Deleted, true, 5)]
        );
        assert_eq!(summary(&fifo.get_by_key("ns/obj2").unwrap()).len(), 2);
    }

    #[tokio::test]
    async fn replace_with_known_objects_should_also_tombstone_queued_keys_missing_from_the_list() {
        // An object added and deleted while the watch was down must not
        // survive into the cache (current client-go checks the queue too).
        let cache = known(&[]);
        let fifo = with_known(&cache);
        fifo.add(cm("ns", "ghost", 1)).unwrap();
        fifo.replace(vec![], "10").unwrap();
        let ghost = fifo.get_by_key("ns/ghost").unwrap();
        assert_eq!(
            summary(&ghost),
            [(DeltaType::Added, false, 1), (DeltaType::Deleted, true, 1)]
        );
    }

    #[tokio::test]
    async fn replace_should_emit_replaced_when_the_option_is_set() {
        let fifo = Fifo::new(DeltaFifoOptions::new().emit_delta_type_replaced(true));
        fifo.replace(vec![cm("ns", "a", 1)], "1").unwrap();
        assert_eq!(
            summary(&pop(&fifo).await.unwrap()),
            [(DeltaType::Replaced, false, 1)]
        );
        let plain = Fifo::new(DeltaFifoOptions::new());
        plain.replace(vec![cm("ns", "a", 1)], "1").unwrap();
        assert_eq!(
            summary(&pop(&plain).await.unwrap()),
            [(DeltaType::Sync, false, 1)]
        );
    }

    #[test]
    fn dedup_of_two_deletions_should_keep_the_one_that_is_not_a_tombstone() {
        let real = || Delta::new(DeltaType::Deleted, cm("ns", "a", 1));
        let tomb = || {
            Delta::new(
                DeltaType::Deleted,
                DeletedFinalStateUnknown {
                    key: Arc::from("ns/a"),
                    obj: Some(cm("ns", "a", 2)),
                },
            )
        };
        for mut deltas in [vec![real(), tomb()], vec![tomb(), real()]] {
            dedup_deltas(&mut deltas);
            assert_eq!(deltas.len(), 1);
            assert!(!deltas[0].object.is_tombstone());
        }
        let mut two_tombs = vec![tomb(), tomb()];
        dedup_deltas(&mut two_tombs);
        assert_eq!(two_tombs.len(), 1);
        let mut not_dups = vec![Delta::new(DeltaType::Added, cm("ns", "a", 1)), real()];
        dedup_deltas(&mut not_dups);
        assert_eq!(not_dups.len(), 2);
    }

    #[tokio::test]
    async fn a_deletion_after_a_tombstone_should_replace_it_in_the_queue() {
        let cache = known(&[cm("ns", "a", 1)]);
        let fifo = with_known(&cache);
        fifo.replace(vec![], "1").unwrap();
        fifo.delete(cm("ns", "a", 2).into()).unwrap();
        assert_eq!(
            summary(&fifo.get_by_key("ns/a").unwrap()),
            [(DeltaType::Deleted, false, 2)]
        );
    }

    #[tokio::test]
    async fn has_synced_should_flip_only_after_the_last_initial_item_is_popped() {
        let cache = known(&[cm("ns", "gone", 1)]);
        let fifo = with_known(&cache);
        assert!(!fifo.has_synced());
        fifo.replace(vec![cm("ns", "a", 1), cm("ns", "b", 1)], "1")
            .unwrap();
        // Initial population: 2 listed + 1 tombstone.
        fifo.add(cm("ns", "c", 1)).unwrap();
        let mut initial_flags = Vec::new();
        for _ in 0..3 {
            assert!(!fifo.has_synced());
            fifo.pop(|_, initial| {
                initial_flags.push(initial);
                Ok(())
            })
            .await
            .unwrap();
        }
        assert!(fifo.has_synced());
        fifo.pop(|_, initial| {
            initial_flags.push(initial);
            Ok(())
        })
        .await
        .unwrap();
        assert_eq!(initial_flags, [true, true, true, false]);
        // A later replace does not reset it.
        fifo.replace(vec![cm("ns", "a", 2)], "2").unwrap();
        assert!(fifo.has_synced());
    }

    #[tokio::test]
    async fn has_synced_should_be_true_when_a_write_came_before_any_replace() {
        let fifo = Fifo::new(DeltaFifoOptions::new());
        fifo.add(cm("ns", "a", 1)).unwrap();
        assert!(fifo.has_synced());
    }

    #[tokio::test]
    async fn pop_after_close_should_return_the_closed_error() {
        let fifo = Fifo::new(DeltaFifoOptions::new());
        fifo.add(cm("ns", "a", 1)).unwrap();
        fifo.close();
        assert!(fifo.is_closed());
        // What was queued is still drained...
        assert!(pop(&fifo).await.is_ok());
        // ...then pop fails.
        assert!(matches!(pop(&fifo).await, Err(Error::Closed)));
    }

    #[tokio::test(start_paused = true)]
    async fn pop_should_wait_for_an_item_and_close_should_wake_it() {
        let fifo = Arc::new(Fifo::new(DeltaFifoOptions::new()));
        let waiting = tokio::spawn({
            let fifo = fifo.clone();
            async move {
                pop(&fifo)
                    .await
                    .map(|d| fifo.key_of_deltas(&d).unwrap().to_string())
            }
        });
        tokio::time::sleep(std::time::Duration::from_secs(1)).await;
        assert!(!waiting.is_finished());
        fifo.add(cm("ns", "a", 1)).unwrap();
        assert_eq!(waiting.await.unwrap().unwrap(), "ns/a");

        let waiting = tokio::spawn({
            let fifo = fifo.clone();
            async move { pop(&fifo).await.map(|_| ()) }
        });
        tokio::time::sleep(std::time::Duration::from_secs(1)).await;
        assert!(!waiting.is_finished());
        fifo.close();
        assert!(matches!(waiting.await.unwrap(), Err(Error::Closed)));
    }

    #[tokio::test]
    async fn a_requeue_should_put_the_deltas_back_keeping_their_order() {
        let fifo = Fifo::new(DeltaFifoOptions::new());
        fifo.add(cm("ns", "a", 1)).unwrap();
        fifo.update(cm("ns", "a", 2)).unwrap();
        fifo.add(cm("ns", "b", 1)).unwrap();
        let popped = fifo.pop(|_, _| Err(ProcessError::requeue())).await.unwrap();
        assert_eq!(
            summary(&popped),
            [(DeltaType::Added, false, 1), (DeltaType::Updated, false, 2)]
        );
        // Back in the queue, behind b (as client-go's addIfNotPresent), intact.
        let keys: Vec<String> = fifo.list_keys().iter().map(|k| k.to_string()).collect();
        assert_eq!(keys, ["ns/b", "ns/a"]);
        assert_eq!(summary(&fifo.get_by_key("ns/a").unwrap()), summary(&popped));
        // A requeue carrying an error reports it and still requeues.
        let err = fifo
            .pop(|_, _| Err(ProcessError::requeue_with("retry later")))
            .await
            .unwrap_err();
        assert!(matches!(err, Error::Process { .. }));
        assert_eq!(fifo.len(), 2);
    }

    #[tokio::test]
    async fn add_if_not_present_should_not_overtake_newer_deltas() {
        let fifo = Fifo::new(DeltaFifoOptions::new());
        fifo.add(cm("ns", "a", 1)).unwrap();
        let old = pop(&fifo).await.unwrap();
        fifo.update(cm("ns", "a", 2)).unwrap();
        fifo.add_if_not_present(old.clone()).unwrap();
        assert_eq!(
            summary(&fifo.get_by_key("ns/a").unwrap()),
            [(DeltaType::Updated, false, 2)]
        );
        pop(&fifo).await.unwrap();
        fifo.add_if_not_present(old).unwrap();
        assert_eq!(
            summary(&fifo.get_by_key("ns/a").unwrap()),
            [(DeltaType::Added, false, 1)]
        );
        assert!(matches!(
            fifo.add_if_not_present(Deltas::new(vec![])),
            Err(Error::ZeroLengthDeltas)
        ));
    }

    #[tokio::test]
    async fn a_failed_or_panicking_process_should_be_reported_and_drop_the_deltas() {
        let fifo = Fifo::new(DeltaFifoOptions::new());
        fifo.add(cm("ns", "a", 1)).unwrap();
        fifo.add(cm("ns", "b", 1)).unwrap();
        let err = fifo
            .pop(|_, _| Err(ProcessError::failed("nope")))
            .await
            .unwrap_err();
        assert!(matches!(err, Error::Process { ref key, .. } if key == "ns/a"));
        let err = fifo
            .pop(|_, _| -> Result<(), ProcessError> { panic!("handler bug") })
            .await
            .unwrap_err();
        assert!(
            matches!(err, Error::ProcessPanicked { ref message, .. } if message == "handler bug")
        );
        assert!(fifo.is_empty());
        // The FIFO still works.
        fifo.add(cm("ns", "c", 1)).unwrap();
        assert!(pop(&fifo).await.is_ok());
    }

    #[tokio::test]
    async fn resync_should_queue_sync_for_known_objects_that_are_not_queued() {
        let cache = known(&[cm("ns", "a", 1), cm("ns", "b", 1)]);
        let fifo = with_known(&cache);
        fifo.update(cm("ns", "a", 2)).unwrap();
        fifo.resync().unwrap();
        assert_eq!(
            summary(&fifo.get_by_key("ns/a").unwrap()),
            [(DeltaType::Updated, false, 2)]
        );
        assert_eq!(
            summary(&fifo.get_by_key("ns/b").unwrap()),
            [(DeltaType::Sync, false, 1)]
        );
        let without_known = Fifo::new(DeltaFifoOptions::new());
        without_known.resync().unwrap();
        assert!(without_known.is_empty());
    }

    #[tokio::test]
    async fn the_transform_should_apply_to_each_object_before_it_is_queued_but_not_to_tombstones() {
        let cache = known(&[cm("ns", "gone", 1)]);
        let fifo = DeltaFifo::new(
            DeltaFifoOptions::new()
                .known_objects(cache.clone())
                .transformer(set_version(100)),
        );
        assert!(fifo.transformer().is_some());
        fifo.add(cm("ns", "a", 1)).unwrap();
        fifo.replace(vec![cm("ns", "b", 1)], "1").unwrap();
        assert_eq!(summary(&fifo.get_by_key("ns/a").unwrap())[0].2, 100);
        assert_eq!(summary(&fifo.get_by_key("ns/b").unwrap())[0].2, 100);
        // The tombstone carries the known object untouched.
        assert_eq!(
            summary(&fifo.get_by_key("ns/gone").unwrap()),
            [(DeltaType::Deleted, true, 1)]
        );

        let failing =
            Fifo::new(DeltaFifoOptions::new().transformer(Arc::new(|_| Err("bad".into()))));
        assert!(matches!(
            failing.add(cm("ns", "a", 1)),
            Err(Error::Transform { .. })
        ));
        assert!(failing.is_empty());
    }

    #[tokio::test]
    async fn store_accessors_should_expose_the_queued_deltas() {
        let fifo = Fifo::new(DeltaFifoOptions::new());
        fifo.add(cm("ns", "a", 1)).unwrap();
        fifo.add(cm("", "b", 1)).unwrap();
        assert_eq!(fifo.list().len(), 2);
        assert!(fifo.get(&cm("ns", "a", 0)).unwrap().is_some());
        let tombstone: DeltaObject<ConfigMap> = DeletedFinalStateUnknown {
            key: Arc::from("x/y"),
            obj: None,
        }
        .into();
        assert_eq!(&*fifo.key_of(&tombstone).unwrap(), "x/y");
        assert!(matches!(
            fifo.add(Arc::new(ConfigMap::default())),
            Err(Error::ObjectHasNoName)
        ));
    }

    #[cfg(feature = "metrics")]
    #[tokio::test]
    async fn a_named_fifo_should_record_how_many_entries_are_queued() {
        let fifo = Fifo::new(DeltaFifoOptions::new().name("kcr-cache-test-fifo"));
        fifo.add(cm("ns", "a", 1)).unwrap();
        fifo.add(cm("ns", "b", 1)).unwrap();
        fifo.update(cm("ns", "a", 2)).unwrap();
        pop(&fifo).await.unwrap();
        let text = kcr_metrics::encode_text(kcr_metrics::registry()).unwrap();
        assert!(
            text.contains(r#"cache_fifo_queued{name="kcr-cache-test-fifo"} 1"#),
            "{text}"
        );
    }

    #[tokio::test]
    async fn the_queue_trait_should_drive_the_fifo_through_a_trait_object() {
        let fifo: Box<dyn FifoQueue<ConfigMap>> = Box::new(Fifo::new(DeltaFifoOptions::new()));
        fifo.add(cm("ns", "a", 1)).unwrap();
        let mut seen = 0;
        let deltas = fifo
            .pop(Box::new(|d: &Deltas<ConfigMap>, _| {
                seen = d.len();
                Ok(())
            }))
            .await
            .unwrap();
        assert_eq!((seen, deltas.len()), (1, 1));
        assert!(fifo.has_synced());
        fifo.close();
        assert!(fifo.is_closed());
    }
}
