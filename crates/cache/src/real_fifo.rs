//! [`RealFifo`]: client-go's in-order FIFO, one entry per event (client-go's
//! `the_real_fifo.go`).

use std::collections::{HashSet, VecDeque};
use std::sync::Arc;

use hashbrown::{HashMap, hash_map};
use kube_core::Resource;
use parking_lot::{Mutex, MutexGuard};
use tokio::sync::Notify;

use crate::delta::{
    BookmarkInfo, DeletedFinalStateUnknown, Delta, DeltaObject, DeltaType, Deltas, ReplacedAllInfo,
};
use crate::delta_fifo::FifoConfig;
use crate::error::{Error, Result};
use crate::fifo::{ProcessError, TransformFunc, process_popped};
use crate::key::{KeyFunc, ObjectKey, meta_namespace_key_func};
use crate::store::KeyListerGetter;

type Hasher = foldhash::fast::RandomState;

/// How many events [`RealFifo::pop_batch`] hands over at most in one batch
/// (client-go's `defaultBatchSize`).
pub const DEFAULT_BATCH_SIZE: usize = 1000;

/// Options for [`RealFifo::new`] (client-go's `RealFIFOOptions`).
///
/// Two valid shapes, as in client-go:
///
/// * **known objects** (the informer's indexer), without atomic events:
///   `replace` queues a `Deleted` tombstone per vanished key, then a
///   `Replaced` event per listed object; `resync` queues a `Sync` event per
///   known object with no queued event;
/// * **atomic events**, without known objects: `replace` queues one
///   [`DeltaType::ReplacedAll`] event and `resync` one
///   [`DeltaType::SyncAll`] event; the consumer detects deletions against
///   its own store. Only this shape may
///   [`unlock_while_processing`](Self::unlock_while_processing) and
///   [`emit_delta_type_bookmark`](Self::emit_delta_type_bookmark).
///
/// [`RealFifo::new`] refuses any other combination with
/// [`Error::InvalidOptions`] (client-go panics).
pub struct RealFifoOptions<K> {
    key_function: Option<KeyFunc<K>>,
    known_objects: Option<Arc<dyn KeyListerGetter<K>>>,
    transformer: Option<TransformFunc<K>>,
    atomic_events: bool,
    unlock_while_processing: bool,
    emit_delta_type_bookmark: bool,
    name: Option<String>,
}

impl<K> Default for RealFifoOptions<K> {
    fn default() -> Self {
        Self {
            key_function: None,
            known_objects: None,
            transformer: None,
            atomic_events: false,
            unlock_while_processing: false,
            emit_delta_type_bookmark: false,
            name: None,
        }
    }
}

impl<K> std::fmt::Debug for RealFifoOptions<K> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RealFifoOptions")
            .field("key_function", &self.key_function.is_some())
            .field("known_objects", &self.known_objects.is_some())
            .field("transformer", &self.transformer.is_some())
            .field("atomic_events", &self.atomic_events)
            .field("unlock_while_processing", &self.unlock_while_processing)
            .field("emit_delta_type_bookmark", &self.emit_delta_type_bookmark)
            .field("name", &self.name)
            .finish()
    }
}

impl<K> RealFifoOptions<K> {
    /// Default options: [`meta_namespace_key_func`], nothing else set (add
    /// known objects or atomic events before [`RealFifo::new`]).
    pub fn new() -> Self {
        Self::default()
    }

    /// The key function (default: `namespace/name`).
    #[must_use]
    pub fn key_function<F>(mut self, f: F) -> Self
    where
        F: Fn(&K) -> Result<ObjectKey> + Send + Sync + 'static,
    {
        self.key_function = Some(Arc::new(f));
        self
    }

    /// The objects the consumer already knows (the informer's indexer):
    /// required without atomic events, refused with them.
    #[must_use]
    pub fn known_objects(mut self, known: Arc<dyn KeyListerGetter<K>>) -> Self {
        self.known_objects = Some(known);
        self
    }

    /// A transform applied to each object before it is queued (to the
    /// listed objects of a `ReplacedAll` too; never to tombstones);
    /// [`RealFifo::transformer`] hands it back.
    #[must_use]
    pub fn transformer(mut self, transform: TransformFunc<K>) -> Self {
        self.transformer = Some(transform);
        self
    }

    /// A `replace` or `resync` is one atomic event (`ReplacedAll`,
    /// `SyncAll`) instead of one event per object (client-go's
    /// `AtomicEvents`, on in informers since the `AtomicFIFO` gate).
    #[must_use]
    pub fn atomic_events(mut self, atomic: bool) -> Self {
        self.atomic_events = atomic;
        self
    }

    /// `pop` and `pop_batch` release the lock while the callback runs, so
    /// producers are not held up by a slow consumer (client-go's
    /// `UnlockWhileProcessing`; needs atomic events). The lock stays held
    /// while two full batches or more are queued, so the queue cannot grow
    /// without bound. Only one consumer may pop at a time.
    #[must_use]
    pub fn unlock_while_processing(mut self, unlock: bool) -> Self {
        self.unlock_while_processing = unlock;
        self
    }

    /// [`RealFifo::bookmark`] queues a [`DeltaType::Bookmark`] event (needs
    /// atomic events; otherwise bookmarks are ignored).
    #[must_use]
    pub fn emit_delta_type_bookmark(mut self, emit: bool) -> Self {
        self.emit_delta_type_bookmark = emit;
        self
    }

    /// A name for the FIFO: the `name` label of its `cache_fifo_queued`
    /// gauge with the `metrics` feature (unnamed FIFOs record nothing).
    #[must_use]
    pub fn name(mut self, name: impl Into<String>) -> Self {
        self.name = Some(name.into());
        self
    }
}

/// Marks the end of a per-key chain.
const NONE: u64 = u64::MAX;

/// One queued event.
struct Entry<K> {
    /// `None` for the atomic events, which concern no single object.
    key: Option<ObjectKey>,
    delta: Delta<K>,
    /// Sequence number of the next queued event of the same key.
    next: u64,
}

/// Where a key's events sit: a chain through the queue (sequence numbers).
struct Links {
    first: u64,
    last: u64,
    count: usize,
}

struct State<K> {
    /// Every event in arrival order. `items[i]` has sequence number
    /// `head + i`.
    items: VecDeque<Entry<K>>,
    head: u64,
    /// Per key, its chain of queued events: `contains_key`, `get_by_key`,
    /// `add_if_not_present` and `replace` never scan the whole queue.
    ///
    /// The last `unindexed` events (a list's `Replaced` events) are not in
    /// it yet: they are indexed the first time the index is needed, each at
    /// most once, so a list popped before anything else reaches the queue
    /// (an informer's initial list) never pays for the index.
    keys: HashMap<ObjectKey, Links, Hasher>,
    unindexed: usize,
    populated: bool,
    initial_population_count: usize,
    synced: bool,
    closed: bool,
}

/// Adds the event `seq` (at `items[seq - head]`) of `key` to `key`'s chain.
fn link<K>(
    keys: &mut HashMap<ObjectKey, Links, Hasher>,
    items: &mut VecDeque<Entry<K>>,
    head: u64,
    seq: u64,
    key: ObjectKey,
) {
    // One hash lookup, whether the key is new or not.
    match keys.entry(key) {
        hash_map::Entry::Occupied(mut occupied) => {
            let links = occupied.get_mut();
            let last = links.last;
            links.last = seq;
            links.count += 1;
            if let Some(prev) = usize::try_from(last.wrapping_sub(head))
                .ok()
                .and_then(|i| items.get_mut(i))
            {
                prev.next = seq;
            }
        }
        hash_map::Entry::Vacant(vacant) => {
            vacant.insert(Links {
                first: seq,
                last: seq,
                count: 1,
            });
        }
    }
}

impl<K> State<K> {
    fn check_synced(&mut self) {
        if self.populated && self.initial_population_count == 0 {
            self.synced = true;
        }
    }

    fn entry(&self, seq: u64) -> Option<&Entry<K>> {
        usize::try_from(seq.wrapping_sub(self.head))
            .ok()
            .and_then(|i| self.items.get(i))
    }

    /// Indexes the events not indexed yet, oldest first.
    fn ensure_indexed(&mut self) {
        if self.unindexed == 0 {
            return;
        }
        let start = self.items.len() - self.unindexed;
        self.keys.reserve(self.unindexed);
        for i in start..self.items.len() {
            let Some(key) = self.items[i].key.clone() else {
                continue;
            };
            let seq = self.head.wrapping_add(i as u64);
            link(&mut self.keys, &mut self.items, self.head, seq, key);
        }
        self.unindexed = 0;
    }

    /// The per-key index, complete.
    fn index(&mut self) -> &HashMap<ObjectKey, Links, Hasher> {
        self.ensure_indexed();
        &self.keys
    }

    /// Whether an event of `key` is queued.
    fn contains_key(&mut self, key: &str) -> bool {
        self.index().contains_key(key)
    }

    fn push_back(&mut self, key: Option<ObjectKey>, delta: Delta<K>) {
        self.ensure_indexed();
        let seq = self.head.wrapping_add(self.items.len() as u64);
        if let Some(key) = &key {
            link(&mut self.keys, &mut self.items, self.head, seq, key.clone());
        }
        self.items.push_back(Entry {
            key,
            delta,
            next: NONE,
        });
    }

    /// Queues an event without indexing it yet (see `unindexed`).
    fn push_back_unindexed(&mut self, key: ObjectKey, delta: Delta<K>) {
        self.items.push_back(Entry {
            key: Some(key),
            delta,
            next: NONE,
        });
        self.unindexed += 1;
    }

    fn push_front(&mut self, key: Option<ObjectKey>, delta: Delta<K>) {
        self.ensure_indexed();
        self.head = self.head.wrapping_sub(1);
        let seq = self.head;
        let mut next = NONE;
        if let Some(key) = &key {
            match self.keys.entry(key.clone()) {
                hash_map::Entry::Occupied(mut occupied) => {
                    let links = occupied.get_mut();
                    next = links.first;
                    links.first = seq;
                    links.count += 1;
                }
                hash_map::Entry::Vacant(vacant) => {
                    vacant.insert(Links {
                        first: seq,
                        last: seq,
                        count: 1,
                    });
                }
            }
        }
        self.items.push_front(Entry { key, delta, next });
    }

    fn pop_front(&mut self) -> Option<Entry<K>> {
        let front_unindexed = self.unindexed == self.items.len();
        let entry = self.items.pop_front()?;
        self.head = self.head.wrapping_add(1);
        if front_unindexed {
            // Not in the index: nothing to unlink.
            self.unindexed -= 1;
        } else if let Some(key) = &entry.key
            && let hash_map::EntryRef::Occupied(mut occupied) = self.keys.entry_ref(&**key)
        {
            let links = occupied.get_mut();
            links.count -= 1;
            if links.count == 0 {
                occupied.remove();
            } else {
                links.first = entry.next;
            }
        }
        Some(entry)
    }

    /// The newest queued event of `key`.
    fn last_of(&mut self, key: &str) -> Option<&Entry<K>> {
        let last = self.index().get(key).map(|l| l.last)?;
        self.entry(last)
    }

    /// The queued events of `key`, oldest first.
    fn events_of(&mut self, key: &str) -> Vec<Delta<K>> {
        let mut out = Vec::new();
        let mut seq = self.index().get(key).map_or(NONE, |l| l.first);
        while seq != NONE {
            let Some(entry) = self.entry(seq) else { break };
            out.push(entry.delta.clone());
            seq = entry.next;
        }
        out
    }

    /// Queued keys in order of their first queued event.
    fn keys_in_order(&mut self) -> Vec<ObjectKey> {
        let head = self.head;
        let mut keys: Vec<(u64, &ObjectKey)> = self
            .index()
            .iter()
            .map(|(k, l)| (l.first.wrapping_sub(head), k))
            .collect();
        keys.sort_unstable_by_key(|(at, _)| *at);
        keys.into_iter().map(|(_, k)| k.clone()).collect()
    }
}

/// An in-order FIFO of deltas, one entry per event, never merged per key
/// (client-go's `RealFIFO`, which client-go 1.36 informers use: the
/// `InOrderInformers` gate is GA, `AtomicFIFO` and
/// `UnlockWhileProcessingFIFO` are on by default).
///
/// * `add`, `update`, `delete` queue one event each; `delete` is always
///   queued (the consumer ignores a deletion of an object it does not know).
/// * `replace` with known objects queues, **before** the listed objects, a
///   `Deleted` [`DeletedFinalStateUnknown`] tombstone for every key that is
///   queued or known but not listed (a key whose newest queued event is a
///   deletion gets none; a key both queued and known gets one, carrying its
///   newest queued state), then a `Replaced` event per listed object (never
///   `Sync`). With [`atomic_events`](RealFifoOptions::atomic_events) it
///   queues one `ReplacedAll` event instead.
/// * [`pop`](Self::pop) hands out one event at a time;
///   [`pop_batch`](Self::pop_batch) hands out a run of consecutive events of
///   distinct keys (client-go's `PopBatch`).
///
/// `len` counts queued events, as client-go's `len(f.items)`: several per
/// key. [`list_keys`](Self::list_keys) and [`list`](Self::list) give each
/// queued key once, in order of its first queued event.
pub struct RealFifo<K> {
    // A parking_lot mutex: never held across an `.await`.
    state: Mutex<State<K>>,
    notify: Notify,
    config: FifoConfig<K>,
    atomic_events: bool,
    unlock_while_processing: bool,
    emit_delta_type_bookmark: bool,
    batch_size: usize,
    queued_gauge: crate::metrics::Gauge,
}

impl<K> std::fmt::Debug for RealFifo<K> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let state = self.state.lock();
        f.debug_struct("RealFifo")
            .field("queued", &state.items.len())
            .field("populated", &state.populated)
            .field("initial_population_count", &state.initial_population_count)
            .field("closed", &state.closed)
            .field("atomic_events", &self.atomic_events)
            .field("unlock_while_processing", &self.unlock_while_processing)
            .finish_non_exhaustive()
    }
}

impl<K: Resource + Send + Sync + 'static> RealFifo<K> {
    /// A new, empty FIFO (client-go's `NewRealFIFOWithOptions`). Fails with
    /// [`Error::InvalidOptions`] where client-go panics: known objects with
    /// atomic events, or without atomic events no known objects,
    /// `unlock_while_processing` or `emit_delta_type_bookmark`.
    pub fn new(options: RealFifoOptions<K>) -> Result<Self> {
        if options.atomic_events {
            if options.known_objects.is_some() {
                return Err(Error::InvalidOptions(
                    "known objects must not be given with atomic events",
                ));
            }
        } else {
            if options.unlock_while_processing {
                return Err(Error::InvalidOptions(
                    "unlock_while_processing needs atomic events",
                ));
            }
            if options.known_objects.is_none() {
                return Err(Error::InvalidOptions(
                    "known objects are required without atomic events",
                ));
            }
            if options.emit_delta_type_bookmark {
                return Err(Error::InvalidOptions(
                    "emit_delta_type_bookmark needs atomic events",
                ));
            }
        }
        Ok(Self {
            state: Mutex::new(State {
                items: VecDeque::new(),
                // Room below for events put back at the front.
                head: 1 << 62,
                keys: HashMap::default(),
                unindexed: 0,
                populated: false,
                initial_population_count: 0,
                synced: false,
                closed: false,
            }),
            notify: Notify::new(),
            queued_gauge: crate::metrics::Gauge::fifo_queued(options.name.as_deref()),
            atomic_events: options.atomic_events,
            unlock_while_processing: options.unlock_while_processing,
            emit_delta_type_bookmark: options.emit_delta_type_bookmark,
            batch_size: DEFAULT_BATCH_SIZE,
            config: FifoConfig {
                key_func: options
                    .key_function
                    .unwrap_or_else(|| Arc::new(meta_namespace_key_func::<K>)),
                known_objects: options.known_objects,
                emit_delta_type_replaced: true,
                transformer: options.transformer,
            },
        })
    }
}

/// What `pop_batch` hands over.
enum Popped<K> {
    Single(Option<ObjectKey>, Delta<K>),
    Batch(Vec<Entry<K>>),
}

impl<K: Send + Sync + 'static> RealFifo<K> {
    fn changed(&self, state: &State<K>) {
        self.queued_gauge.set(state.items.len());
    }

    fn push_event(&self, type_: DeltaType, obj: DeltaObject<K>) -> Result<()> {
        let key = self.config.key_of(&obj)?;
        let object = self.config.transform(obj)?;
        {
            let mut state = self.state.lock();
            state.populated = true;
            state.check_synced();
            state.push_back(Some(key), Delta { type_, object });
            self.changed(&state);
        }
        self.notify.notify_waiters();
        Ok(())
    }

    /// Queues an `Added` event.
    pub fn add(&self, obj: Arc<K>) -> Result<()> {
        self.push_event(DeltaType::Added, DeltaObject::Object(obj))
    }

    /// Queues an `Updated` event.
    pub fn update(&self, obj: Arc<K>) -> Result<()> {
        self.push_event(DeltaType::Updated, DeltaObject::Object(obj))
    }

    /// Queues a `Deleted` event (as client-go's `RealFIFO`, always: the
    /// consumer ignores a deletion of an object it does not know).
    pub fn delete(&self, obj: DeltaObject<K>) -> Result<()> {
        self.push_event(DeltaType::Deleted, obj)
    }

    /// Queues every delta of `deltas` unless an event for the key is already
    /// queued (so newer events are never overtaken). Looks the key up in
    /// the per-key index, never scanning the queue.
    pub fn add_if_not_present(&self, deltas: Deltas<K>) -> Result<()> {
        let key = self.config.key_of_deltas(&deltas)?;
        {
            let mut state = self.state.lock();
            state.populated = true;
            state.check_synced();
            if !state.contains_key(&key) {
                for delta in deltas {
                    state.push_back(Some(key.clone()), delta);
                }
            }
            self.changed(&state);
        }
        self.notify.notify_waiters();
        Ok(())
    }

    /// Queues a `Bookmark` event at `resource_version` when the FIFO emits
    /// bookmarks ([`emit_delta_type_bookmark`](RealFifoOptions::emit_delta_type_bookmark)),
    /// else does nothing (client-go's `Bookmark`).
    pub fn bookmark(&self, resource_version: &str) -> Result<()> {
        if !self.emit_delta_type_bookmark {
            return Ok(());
        }
        {
            let mut state = self.state.lock();
            state.push_back(
                None,
                Delta::new(
                    DeltaType::Bookmark,
                    DeltaObject::Bookmark(BookmarkInfo {
                        resource_version: resource_version.to_owned(),
                    }),
                ),
            );
            self.changed(&state);
        }
        self.notify.notify_waiters();
        Ok(())
    }

    /// After a list (client-go's `Replace`).
    ///
    /// With atomic events: one `ReplacedAll` event carrying the listed
    /// objects (transformed) and `resource_version`.
    ///
    /// Otherwise, in this order: a `Deleted` [`DeletedFinalStateUnknown`]
    /// tombstone for every queued key the list lacks, unless its newest
    /// queued event is already a deletion (in order of first queued event,
    /// carrying the newest queued state); a tombstone for every known key
    /// the list lacks that has no queued event (carrying the known state);
    /// then a `Replaced` event per listed object.
    ///
    /// The first call sets the initial population count (every queued
    /// event) that [`has_synced`](Self::has_synced) waits on. On a key or
    /// transform error nothing is queued.
    pub fn replace(&self, list: Vec<Arc<K>>, resource_version: &str) -> Result<()> {
        let list = self.config.transform_list(list)?;
        self.replace_transformed(list, resource_version)
    }

    /// [`replace`](Self::replace) with objects that have been through this
    /// FIFO's [`transformer`](Self::transformer) already (as a reflector
    /// transforms each object as it arrives): they are not transformed
    /// again, and with atomic events the list itself becomes the
    /// `ReplacedAll` event, without a copy.
    pub fn replace_transformed(&self, list: Vec<Arc<K>>, resource_version: &str) -> Result<()> {
        if self.atomic_events {
            let info = ReplacedAllInfo {
                resource_version: resource_version.to_owned(),
                objects: list,
            };
            let mut state = self.state.lock();
            state.push_back(
                None,
                Delta::new(
                    DeltaType::ReplacedAll,
                    DeltaObject::ReplacedAll(Arc::new(info)),
                ),
            );
            self.replaced(state);
            return Ok(());
        }
        let (_, prepared) = self.config.prepare_replace(list, true)?;
        let mut state = self.state.lock();
        let known_keys = self.config.known_keys();
        // Nothing queued and nothing known (a first list): no deletion to
        // detect, and no need for the set of listed keys.
        if !state.items.is_empty() || !known_keys.is_empty() {
            // The deletion passes need only the listed keys.
            let listed: HashSet<&str, Hasher> = prepared.iter().map(|(k, _)| &**k).collect();
            // Deletions detected against the queue.
            let queued = state.keys_in_order();
            for key in &queued {
                if listed.contains(&**key) {
                    continue;
                }
                let Some(last) = state.last_of(key) else {
                    continue;
                };
                if last.delta.type_ == DeltaType::Deleted {
                    continue;
                }
                let tombstone = DeletedFinalStateUnknown {
                    key: key.clone(),
                    obj: last.delta.object.object().cloned(),
                };
                state.push_back(Some(key.clone()), Delta::new(DeltaType::Deleted, tombstone));
            }
            // Deletions detected against the known objects, for keys not queued.
            let known = self.config.known_tombstones_of(known_keys, |key| {
                listed.contains(&**key) || state.keys.contains_key(&**key)
            });
            drop(listed);
            for (key, delta) in known {
                state.push_back(Some(key), delta);
            }
        }
        // Indexed when the index is next needed.
        state.items.reserve(prepared.len());
        for (key, object) in prepared {
            state.push_back_unindexed(
                key,
                Delta {
                    type_: DeltaType::Replaced,
                    object,
                },
            );
        }
        self.replaced(state);
        Ok(())
    }

    fn replaced(&self, mut state: MutexGuard<'_, State<K>>) {
        if !state.populated {
            state.populated = true;
            state.initial_population_count = state.items.len();
            state.check_synced();
        }
        self.changed(&state);
        drop(state);
        self.notify.notify_waiters();
    }

    /// A periodic resync (client-go's `Resync`): with atomic events one
    /// `SyncAll` event; otherwise a `Sync` event for every known object with
    /// no queued event.
    pub fn resync(&self) -> Result<()> {
        if self.atomic_events {
            {
                let mut state = self.state.lock();
                state.push_back(None, Delta::new(DeltaType::SyncAll, DeltaObject::SyncAll));
                self.changed(&state);
            }
            self.notify.notify_waiters();
            return Ok(());
        }
        let Some(known) = &self.config.known_objects else {
            return Ok(());
        };
        {
            let mut state = self.state.lock();
            for key in known.list_keys() {
                if state.contains_key(&key) {
                    continue;
                }
                let Some(obj) = known.get_by_key(&key) else {
                    continue;
                };
                state.push_back(Some(key), Delta::new(DeltaType::Sync, obj));
            }
            self.changed(&state);
        }
        self.notify.notify_waiters();
        Ok(())
    }

    /// Waits until an event is queued (returns the lock) or the FIFO is
    /// closed and empty.
    async fn wait_for_item(&self) -> Result<MutexGuard<'_, State<K>>> {
        loop {
            let notified = self.notify.notified();
            tokio::pin!(notified);
            {
                let state = self.state.lock();
                if !state.items.is_empty() {
                    return Ok(state);
                }
                if state.closed {
                    return Err(Error::Closed);
                }
                notified.as_mut().enable();
            }
            notified.await;
        }
    }

    /// Runs `f` with the lock released when the FIFO unlocks while
    /// processing and fewer than two batches are queued (client-go's
    /// `whileProcessing_locked`); returns the lock again.
    fn while_processing<'a, R>(
        &'a self,
        state: MutexGuard<'a, State<K>>,
        f: impl FnOnce() -> R,
    ) -> (MutexGuard<'a, State<K>>, R) {
        if self.unlock_while_processing && state.items.len() < self.batch_size * 2 {
            drop(state);
            let r = f();
            (self.state.lock(), r)
        } else {
            let r = f();
            (state, r)
        }
    }

    /// After processing `n` popped events: they count off the initial
    /// population (only now, so `has_synced` never turns true while the
    /// last initial event is being processed).
    fn processed(&self, state: &mut State<K>, n: usize) {
        if state.initial_population_count > 0 {
            state.initial_population_count = state.initial_population_count.saturating_sub(n);
            state.check_synced();
        }
    }

    /// Waits for an event (or close), removes the oldest and hands it to
    /// `process` as a one-element [`Deltas`], with whether it belongs to the
    /// initial list (client-go's `Pop`). On [`ProcessError::Requeue`] the
    /// event goes back to the front of the queue, so it is not overtaken by
    /// newer events. The callback runs under the FIFO's lock unless the FIFO
    /// [unlocks while processing](RealFifoOptions::unlock_while_processing).
    pub async fn pop<F>(&self, process: F) -> Result<Deltas<K>>
    where
        F: FnOnce(&Deltas<K>, bool) -> Result<(), ProcessError>,
    {
        let mut state = self.wait_for_item().await?;
        let in_initial_list = !state.synced;
        let Some(Entry { key, delta, .. }) = state.pop_front() else {
            return Err(Error::Closed);
        };
        self.changed(&state);
        let shown: ObjectKey = key.clone().unwrap_or_else(|| Arc::from(""));
        let deltas = Deltas::new(vec![delta]);
        let mut requeue = None;
        let (mut state, (requeued, result)) = self.while_processing(state, || {
            process_popped(&shown, deltas, in_initial_list, process, |d| {
                requeue = Some(d.clone());
            })
        });
        if let Some(deltas) = requeue {
            for delta in deltas.into_vec().into_iter().rev() {
                state.push_front(key.clone(), delta);
            }
            self.changed(&state);
        } else {
            self.processed(&mut state, 1);
        }
        drop(state);
        if requeued {
            self.notify.notify_waiters();
        }
        result
    }

    /// Pops a batch (client-go's `PopBatch`): waits for an event, then takes
    /// the longest run of consecutive events from the front that are all
    /// per-object (`Added`, `Updated`, `Deleted`, `Replaced`, `Sync`), of
    /// distinct keys, at most [`DEFAULT_BATCH_SIZE`] and not reaching past
    /// the initial list. Two events or more go to `process_batch`; a single
    /// one (including an atomic `ReplacedAll`, `SyncAll` or `Bookmark`
    /// event, which is always popped alone) goes to `process_single`, as
    /// `pop` would hand it. The flag says whether the events belong to the
    /// initial list.
    ///
    /// A failure is returned as `pop`'s; on [`ProcessError::Requeue`] every
    /// event goes back to the front, in order.
    pub async fn pop_batch<B, S>(&self, process_batch: B, process_single: S) -> Result<()>
    where
        B: FnOnce(&[Delta<K>], bool) -> Result<(), ProcessError>,
        S: FnOnce(&Deltas<K>, bool) -> Result<(), ProcessError>,
    {
        let mut state = self.wait_for_item().await?;
        let in_initial_list = !state.synced;
        let popped = self.take_batch(&mut state);
        self.changed(&state);
        match popped {
            Popped::Single(key, delta) => {
                let shown: ObjectKey = key.clone().unwrap_or_else(|| Arc::from(""));
                let mut requeue = None;
                let (mut state, (requeued, result)) = self.while_processing(state, || {
                    process_popped(
                        &shown,
                        Deltas::new(vec![delta]),
                        in_initial_list,
                        process_single,
                        |d| requeue = Some(d.clone()),
                    )
                });
                if let Some(deltas) = requeue {
                    for delta in deltas.into_vec().into_iter().rev() {
                        state.push_front(key.clone(), delta);
                    }
                    self.changed(&state);
                } else {
                    self.processed(&mut state, 1);
                }
                drop(state);
                if requeued {
                    self.notify.notify_waiters();
                }
                result.map(drop)
            }
            Popped::Batch(entries) => {
                let n = entries.len();
                let (keys, deltas): (Vec<Option<ObjectKey>>, Vec<Delta<K>>) =
                    entries.into_iter().map(|e| (e.key, e.delta)).unzip();
                let shown: ObjectKey = keys
                    .first()
                    .cloned()
                    .flatten()
                    .unwrap_or_else(|| Arc::from(""));
                let (mut state, outcome) = self.while_processing(state, || {
                    std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                        process_batch(&deltas, in_initial_list)
                    }))
                });
                let (requeue, result) = match outcome {
                    Ok(Ok(())) => (false, Ok(())),
                    Ok(Err(ProcessError::Requeue { source })) => (
                        true,
                        match source {
                            None => Ok(()),
                            Some(source) => Err(Error::Process {
                                key: shown.to_string(),
                                source,
                            }),
                        },
                    ),
                    Ok(Err(ProcessError::Failed(source))) => (
                        false,
                        Err(Error::Process {
                            key: shown.to_string(),
                            source,
                        }),
                    ),
                    Err(panic) => (
                        false,
                        Err(Error::ProcessPanicked {
                            key: shown.to_string(),
                            message: crate::error::panic_message(panic.as_ref()),
                        }),
                    ),
                };
                if requeue {
                    for (key, delta) in keys.into_iter().zip(deltas).rev() {
                        state.push_front(key, delta);
                    }
                    self.changed(&state);
                } else {
                    self.processed(&mut state, n);
                }
                drop(state);
                if requeue {
                    self.notify.notify_waiters();
                }
                result
            }
        }
    }

    /// Takes `pop_batch`'s events off the front (the queue is not empty).
    fn take_batch(&self, state: &mut State<K>) -> Popped<K> {
        let mut limit = self.batch_size.min(state.items.len());
        if state.initial_population_count > 0 {
            limit = limit.min(state.initial_population_count);
        }
        let mut seen: HashSet<&str, Hasher> = HashSet::default();
        let mut n = 0;
        for entry in state.items.iter().take(limit) {
            if !entry.delta.type_.is_per_object() {
                if n == 0 {
                    n = 1; // alone
                }
                break;
            }
            let Some(key) = &entry.key else {
                n += 1;
                break;
            };
            if !seen.insert(&**key) {
                break;
            }
            n += 1;
        }
        let n = n.max(1);
        drop(seen);
        if n == 1 {
            let Some(Entry { key, delta, .. }) = state.pop_front() else {
                return Popped::Batch(Vec::new());
            };
            return Popped::Single(key, delta);
        }
        let mut entries = Vec::with_capacity(n);
        for _ in 0..n {
            if let Some(entry) = state.pop_front() {
                entries.push(entry);
            }
        }
        Popped::Batch(entries)
    }

    /// Whether the first `replace`'s events have all been popped and
    /// processed (true right away if another write came first).
    pub fn has_synced(&self) -> bool {
        self.state.lock().synced
    }

    /// Closes the FIFO: `pop` drains what is queued, then returns
    /// [`Error::Closed`].
    pub fn close(&self) {
        self.state.lock().closed = true;
        self.notify.notify_waiters();
    }

    /// Whether [`close`](Self::close) was called.
    pub fn is_closed(&self) -> bool {
        self.state.lock().closed
    }

    /// The queued events grouped per key, keys in order of their first
    /// queued event (atomic events, which have no key, are left out).
    pub fn list(&self) -> Vec<Deltas<K>> {
        let mut state = self.state.lock();
        let keys = state.keys_in_order();
        keys.iter()
            .map(|k| Deltas::new(state.events_of(k)))
            .collect()
    }

    /// Each queued key once, in order of its first queued event. client-go
    /// 1.36's `RealFIFO` has no `ListKeys`; this is the set of keys its
    /// queue holds events for.
    pub fn list_keys(&self) -> Vec<ObjectKey> {
        self.state.lock().keys_in_order()
    }

    /// How many events are queued (client-go's `len(f.items)`: one per
    /// event, so a key may count several times; atomic events count one).
    pub fn len(&self) -> usize {
        self.state.lock().items.len()
    }

    /// Whether nothing is queued.
    pub fn is_empty(&self) -> bool {
        self.state.lock().items.is_empty()
    }

    /// Whether an event of `key` is queued (a per-key index lookup).
    pub fn contains_key(&self, key: &str) -> bool {
        self.state.lock().contains_key(key)
    }

    /// The queued events of `obj`'s key, oldest first.
    pub fn get(&self, obj: &K) -> Result<Option<Deltas<K>>> {
        let key = (self.config.key_func)(obj)?;
        Ok(self.get_by_key(&key))
    }

    /// The queued events for `key`, oldest first (follows the key's chain
    /// through the queue; never scans the rest).
    pub fn get_by_key(&self, key: &str) -> Option<Deltas<K>> {
        let deltas = self.state.lock().events_of(key);
        (!deltas.is_empty()).then(|| Deltas::new(deltas))
    }

    /// The key of an object or tombstone, as this FIFO computes it.
    pub fn key_of(&self, obj: &DeltaObject<K>) -> Result<ObjectKey> {
        self.config.key_of(obj)
    }

    /// Whether `replace` and `resync` are atomic events.
    pub fn atomic_events(&self) -> bool {
        self.atomic_events
    }

    /// The transform this FIFO applies to what it queues (client-go's
    /// `Transformer()`, which makes the FIFO a `TransformingStore`: a
    /// reflector applies it to a streaming list's objects as they arrive).
    pub fn transformer(&self) -> Option<TransformFunc<K>> {
        self.config.transformer.clone()
    }
}

crate::fifo::impl_fifo_traits!(RealFifo);

#[cfg(test)]
mod tests {
    use super::*;
    use crate::indexed_store::IndexedStore;
    use crate::test_util::{cm, known, set_version, summary, version};
    use k8s_openapi::api::core::v1::ConfigMap;

    type Fifo = RealFifo<ConfigMap>;
    type Popped = Vec<(String, DeltaType, bool, u32)>;

    fn with_known(cache: &Arc<IndexedStore<ConfigMap>>) -> Fifo {
        Fifo::new(RealFifoOptions::new().known_objects(cache.clone())).unwrap()
    }

    fn atomic() -> Fifo {
        Fifo::new(RealFifoOptions::new().atomic_events(true)).unwrap()
    }

    fn key(fifo: &Fifo, delta: &Delta<ConfigMap>) -> String {
        fifo.key_of(&delta.object)
            .map(|k| k.to_string())
            .unwrap_or_default()
    }

    async fn pop_all(fifo: &Fifo) -> Popped {
        let mut out = Vec::new();
        while !fifo.is_empty() {
            let deltas = fifo.pop(|_, _| Ok(())).await.unwrap();
            assert_eq!(deltas.len(), 1);
            let (t, tomb, v) = summary(&deltas)[0];
            out.push((key(fifo, &deltas[0]), t, tomb, v));
        }
        out
    }

    fn view(popped: &Popped) -> Vec<(&str, DeltaType, bool, u32)> {
        popped
            .iter()
            .map(|(k, t, b, v)| (k.as_str(), *t, *b, *v))
            .collect()
    }

    #[test]
    fn new_should_refuse_the_option_combinations_client_go_panics_on() {
        let cache = known(&[]);
        let bad = [
            RealFifoOptions::new(),
            RealFifoOptions::new()
                .known_objects(cache.clone())
                .unlock_while_processing(true),
            RealFifoOptions::new()
                .known_objects(cache.clone())
                .emit_delta_type_bookmark(true),
            RealFifoOptions::new()
                .atomic_events(true)
                .known_objects(cache.clone()),
        ];
        for options in bad {
            let shown = format!("{options:?}");
            assert!(
                matches!(Fifo::new(options), Err(Error::InvalidOptions(_))),
                "{shown}"
            );
        }
        assert!(
            Fifo::new(
                RealFifoOptions::new()
                    .atomic_events(true)
                    .unlock_while_processing(true)
                    .emit_delta_type_bookmark(true)
            )
            .is_ok()
        );
    }

    #[tokio::test]
    async fn real_fifo_should_keep_one_entry_per_event_in_arrival_order() {
        let fifo = with_known(&known(&[]));
        fifo.add(cm("ns", "a", 1)).unwrap();
        fifo.add(cm("ns", "b", 1)).unwrap();
        fifo.update(cm("ns", "a", 2)).unwrap();
        fifo.delete(cm("ns", "a", 2).into()).unwrap();
        assert_eq!(fifo.len(), 4, "len counts events");
        assert_eq!(
            fifo.list_keys(),
            vec![ObjectKey::from("ns/a"), ObjectKey::from("ns/b")]
        );
        assert!(fifo.contains_key("ns/a") && !fifo.contains_key("ns/c"));
        assert_eq!(
            summary(&fifo.get_by_key("ns/a").unwrap()),
            [
                (DeltaType::Added, false, 1),
                (DeltaType::Updated, false, 2),
                (DeltaType::Deleted, false, 2)
            ]
        );
        let popped = pop_all(&fifo).await;
        let order: Vec<(&str, DeltaType)> =
            popped.iter().map(|(k, t, _, _)| (k.as_str(), *t)).collect();
        assert_eq!(
            order,
            [
                ("ns/a", DeltaType::Added),
                ("ns/b", DeltaType::Added),
                ("ns/a", DeltaType::Updated),
                ("ns/a", DeltaType::Deleted)
            ]
        );
        assert!(!fifo.contains_key("ns/a"));
        assert!(fifo.get_by_key("ns/a").is_none());
    }

    #[tokio::test]
    async fn replace_should_queue_every_deletion_before_the_listed_objects_as_replaced() {
        let cache = known(&[
            cm("ns", "obj1", 7),
            cm("ns", "obj2", 7),
            cm("ns", "obj3", 7),
        ]);
        let fifo = with_known(&cache);
        fifo.update(cm("ns", "obj2", 8)).unwrap();
        fifo.add(cm("ns", "obj5", 8)).unwrap();
        fifo.replace(
            vec![
                cm("ns", "obj2", 9),
                cm("ns", "obj3", 9),
                cm("ns", "obj4", 9),
            ],
            "1",
        )
        .unwrap();
        let popped = pop_all(&fifo).await;
        assert_eq!(
            view(&popped),
            [
                ("ns/obj2", DeltaType::Updated, false, 8),
                ("ns/obj5", DeltaType::Added, false, 8),
                ("ns/obj5", DeltaType::Deleted, true, 8),
                ("ns/obj1", DeltaType::Deleted, true, 7),
                ("ns/obj2", DeltaType::Replaced, false, 9),
                ("ns/obj3", DeltaType::Replaced, false, 9),
                ("ns/obj4", DeltaType::Replaced, false, 9),
            ]
        );
        assert!(
            popped.iter().all(|(_, t, _, _)| *t != DeltaType::Sync),
            "never Sync"
        );
    }

    #[tokio::test]
    async fn a_lists_events_should_be_found_by_key_whatever_comes_after_them() {
        let fifo = with_known(&known(&[]));
        fifo.replace(
            vec![cm("ns", "a", 1), cm("ns", "b", 1), cm("ns", "c", 1)],
            "1",
        )
        .unwrap();
        assert!(fifo.contains_key("ns/b"));
        assert!(!fifo.contains_key("ns/z"));
        // Popped before anything else came: gone from the index too.
        fifo.pop(|_, _| Ok(())).await.unwrap();
        assert!(!fifo.contains_key("ns/a"));
        assert_eq!(
            summary(&fifo.get_by_key("ns/b").unwrap()),
            [(DeltaType::Replaced, false, 1)]
        );
        // A watch event after the list joins its key's events.
        fifo.update(cm("ns", "c", 2)).unwrap();
        assert_eq!(
            summary(&fifo.get_by_key("ns/c").unwrap()),
            [
                (DeltaType::Replaced, false, 1),
                (DeltaType::Updated, false, 2)
            ]
        );
        // A second list while the first is queued: tombstones from the
        // queue's newest states, then the listed objects.
        fifo.replace(vec![cm("ns", "d", 3)], "3").unwrap();
        fifo.add_if_not_present(Deltas::new(vec![Delta::new(
            DeltaType::Added,
            cm("ns", "b", 0),
        )]))
        .unwrap();
        fifo.pop(|_, _| Err(ProcessError::requeue())).await.unwrap();
        assert_eq!(fifo.list_keys().len(), 3);
        assert_eq!(
            view(&pop_all(&fifo).await),
            [
                ("ns/b", DeltaType::Replaced, false, 1),
                ("ns/c", DeltaType::Replaced, false, 1),
                ("ns/c", DeltaType::Updated, false, 2),
                ("ns/b", DeltaType::Deleted, true, 1),
                ("ns/c", DeltaType::Deleted, true, 2),
                ("ns/d", DeltaType::Replaced, false, 3),
            ]
        );
        assert!(fifo.list_keys().is_empty());
    }

    #[tokio::test]
    async fn replace_should_not_tombstone_a_key_whose_last_queued_event_is_a_deletion() {
        let cache = known(&[cm("ns", "a", 1)]);
        let fifo = with_known(&cache);
        fifo.update(cm("ns", "a", 2)).unwrap();
        fifo.delete(cm("ns", "a", 2).into()).unwrap();
        fifo.replace(vec![], "5").unwrap();
        let popped = pop_all(&fifo).await;
        assert_eq!(
            view(&popped),
            [
                ("ns/a", DeltaType::Updated, false, 2),
                ("ns/a", DeltaType::Deleted, false, 2)
            ]
        );
    }

    #[tokio::test]
    async fn replace_should_give_a_key_both_queued_and_known_exactly_one_tombstone() {
        let cache = known(&[cm("ns", "a", 1)]);
        let fifo = with_known(&cache);
        fifo.update(cm("ns", "a", 2)).unwrap();
        fifo.replace(vec![], "5").unwrap();
        let popped = pop_all(&fifo).await;
        assert_eq!(
            view(&popped),
            [
                ("ns/a", DeltaType::Updated, false, 2),
                ("ns/a", DeltaType::Deleted, true, 2)
            ]
        );
    }

    #[tokio::test]
    async fn atomic_replace_and_resync_should_each_be_one_event() {
        let fifo = Fifo::new(
            RealFifoOptions::new()
                .atomic_events(true)
                .transformer(set_version(100)),
        )
        .unwrap();
        assert!(fifo.transformer().is_some());
        assert!(atomic().transformer().is_none());
        fifo.add(cm("ns", "a", 1)).unwrap();
        fifo.replace(vec![cm("ns", "b", 1), cm("ns", "c", 1)], "42")
            .unwrap();
        fifo.resync().unwrap();
        assert_eq!(fifo.len(), 3);
        let mut seen = Vec::new();
        for _ in 0..3 {
            let deltas = fifo.pop(|_, _| Ok(())).await.unwrap();
            seen.push(deltas[0].clone());
        }
        assert_eq!(seen[0].type_, DeltaType::Added);
        assert_eq!(seen[1].type_, DeltaType::ReplacedAll);
        let DeltaObject::ReplacedAll(info) = &seen[1].object else {
            panic!("expected ReplacedAllInfo, got {:?}", seen[1].object);
        };
        assert_eq!(info.resource_version, "42");
        let versions: Vec<u32> = info.objects.iter().map(|o| version(o)).collect();
        assert_eq!(versions, [100, 100], "the listed objects are transformed");
        assert_eq!(seen[2].type_, DeltaType::SyncAll);
        assert!(matches!(seen[2].object, DeltaObject::SyncAll));
    }

    #[tokio::test]
    async fn replace_transformed_should_queue_the_objects_as_given_without_transforming_them() {
        let calls = Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let counting: TransformFunc<ConfigMap> = {
            let calls = calls.clone();
            Arc::new(move |obj| {
                calls.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                Ok(obj)
            })
        };
        let cache = known(&[cm("ns", "gone", 1)]);
        for fifo in [
            Fifo::new(
                RealFifoOptions::new()
                    .atomic_events(true)
                    .transformer(counting.clone()),
            )
            .unwrap(),
            Fifo::new(
                RealFifoOptions::new()
                    .known_objects(cache.clone())
                    .transformer(counting.clone()),
            )
            .unwrap(),
        ] {
            let listed = [cm("ns", "a", 1), cm("ns", "b", 1)];
            fifo.replace_transformed(listed.to_vec(), "5").unwrap();
            let mut queued = Vec::new();
            while !fifo.is_empty() {
                for delta in fifo.pop(|_, _| Ok(())).await.unwrap() {
                    match &delta.object {
                        DeltaObject::ReplacedAll(info) => queued.extend(info.objects.clone()),
                        DeltaObject::Object(obj) => queued.push(obj.clone()),
                        _ => {}
                    }
                }
            }
            assert_eq!(queued.len(), 2);
            assert!(
                queued.iter().zip(&listed).all(|(q, l)| Arc::ptr_eq(q, l)),
                "the listed objects themselves are queued"
            );
        }
        assert_eq!(calls.load(std::sync::atomic::Ordering::Relaxed), 0);
    }

    #[tokio::test]
    async fn bookmark_should_be_queued_only_when_bookmarks_are_emitted() {
        let quiet = atomic();
        quiet.bookmark("7").unwrap();
        assert!(quiet.is_empty());
        let fifo = Fifo::new(
            RealFifoOptions::new()
                .atomic_events(true)
                .emit_delta_type_bookmark(true),
        )
        .unwrap();
        fifo.bookmark("7").unwrap();
        let deltas = fifo.pop(|_, _| Ok(())).await.unwrap();
        assert_eq!(deltas[0].type_, DeltaType::Bookmark);
        assert!(matches!(
            &deltas[0].object,
            DeltaObject::Bookmark(BookmarkInfo { resource_version }) if resource_version == "7"
        ));
    }

    /// `pop_batch` until empty: (batch sizes, `true` for a batch call).
    async fn pop_batches(fifo: &Fifo) -> Vec<(usize, bool)> {
        let mut calls = Vec::new();
        while !fifo.is_empty() {
            let call = std::cell::Cell::new((0, false));
            fifo.pop_batch(
                |batch, _| {
                    call.set((batch.len(), true));
                    Ok(())
                },
                |single, _| {
                    call.set((single.len(), false));
                    Ok(())
                },
            )
            .await
            .unwrap();
            calls.push(call.get());
        }
        calls
    }

    #[tokio::test]
    async fn pop_batch_should_batch_consecutive_events_of_distinct_keys() {
        let fifo = atomic();
        for name in ["a", "b", "c"] {
            fifo.add(cm("ns", name, 1)).unwrap();
        }
        fifo.update(cm("ns", "b", 2)).unwrap(); // duplicate key closes the batch
        fifo.delete(cm("ns", "d", 1).into()).unwrap();
        fifo.resync().unwrap(); // atomic: alone
        fifo.add(cm("ns", "e", 1)).unwrap(); // single left: process_single
        assert_eq!(
            pop_batches(&fifo).await,
            [(3, true), (2, true), (1, false), (1, false)]
        );
    }

    #[tokio::test]
    async fn pop_batch_should_stop_at_the_batch_size_and_at_the_initial_list() {
        let fifo = atomic();
        for i in 0..(DEFAULT_BATCH_SIZE + 5) {
            fifo.add(cm("ns", &format!("o{i}"), 1)).unwrap();
        }
        assert_eq!(
            pop_batches(&fifo).await,
            [(DEFAULT_BATCH_SIZE, true), (5, true)]
        );

        // Known objects: the initial list ends a batch.
        let fifo = with_known(&known(&[]));
        fifo.replace(vec![cm("ns", "a", 1), cm("ns", "b", 1)], "1")
            .unwrap();
        fifo.add(cm("ns", "c", 1)).unwrap();
        let flags = std::cell::RefCell::new(Vec::new());
        while !fifo.is_empty() {
            fifo.pop_batch(
                |b, initial| {
                    flags.borrow_mut().push((b.len(), initial));
                    Ok(())
                },
                |s, initial| {
                    flags.borrow_mut().push((s.len(), initial));
                    Ok(())
                },
            )
            .await
            .unwrap();
        }
        assert_eq!(*flags.borrow(), [(2, true), (1, false)]);
        assert!(fifo.has_synced());
    }

    #[tokio::test]
    async fn pop_batch_errors_and_requeues_should_be_reported_like_pop() {
        let fifo = atomic();
        fifo.add(cm("ns", "a", 1)).unwrap();
        fifo.add(cm("ns", "b", 1)).unwrap();
        fifo.pop_batch(|_, _| Err(ProcessError::requeue()), |_, _| Ok(()))
            .await
            .unwrap();
        assert_eq!(fifo.list_keys().len(), 2, "requeued in order");
        assert_eq!(&*fifo.list_keys()[0], "ns/a");
        let err = fifo
            .pop_batch(
                |_, _| -> Result<(), ProcessError> { panic!("batch bug") },
                |_, _| Ok(()),
            )
            .await
            .unwrap_err();
        assert!(
            matches!(err, Error::ProcessPanicked { ref message, .. } if message == "batch bug")
        );
        assert!(fifo.is_empty());
    }

    #[tokio::test]
    async fn has_synced_should_turn_true_only_after_the_last_initial_event_is_processed() {
        let unlocking = Arc::new(
            Fifo::new(
                RealFifoOptions::new()
                    .atomic_events(true)
                    .unlock_while_processing(true),
            )
            .unwrap(),
        );
        unlocking.replace(vec![cm("ns", "a", 1)], "1").unwrap();
        let inner = unlocking.clone();
        unlocking
            .pop(move |_, initial| {
                assert!(initial);
                assert!(
                    !inner.has_synced(),
                    "not synced while the last initial event is processed"
                );
                Ok(())
            })
            .await
            .unwrap();
        assert!(unlocking.has_synced());
    }

    #[tokio::test]
    async fn unlock_while_processing_should_let_a_producer_queue_during_processing() {
        let fifo = Arc::new(
            Fifo::new(
                RealFifoOptions::new()
                    .atomic_events(true)
                    .unlock_while_processing(true),
            )
            .unwrap(),
        );
        fifo.add(cm("ns", "a", 1)).unwrap();
        let producer = fifo.clone();
        // With the lock held this `add` would deadlock (parking_lot mutexes
        // are not reentrant).
        fifo.pop(move |_, _| producer.add(cm("ns", "b", 1)).map_err(ProcessError::failed))
            .await
            .unwrap();
        assert_eq!(fifo.list_keys(), vec![ObjectKey::from("ns/b")]);
    }

    #[tokio::test]
    async fn real_fifo_resync_should_sync_known_objects_without_queued_events() {
        let cache = known(&[cm("ns", "a", 1), cm("ns", "b", 1)]);
        let fifo = with_known(&cache);
        fifo.update(cm("ns", "a", 2)).unwrap();
        fifo.resync().unwrap();
        let popped = pop_all(&fifo).await;
        assert_eq!(
            view(&popped),
            [
                ("ns/a", DeltaType::Updated, false, 2),
                ("ns/b", DeltaType::Sync, false, 1)
            ]
        );
    }

    #[tokio::test]
    async fn real_fifo_requeue_should_put_the_event_back_before_newer_events() {
        let fifo = atomic();
        fifo.add(cm("ns", "a", 1)).unwrap();
        fifo.update(cm("ns", "a", 2)).unwrap();
        fifo.pop(|_, _| Err(ProcessError::requeue())).await.unwrap();
        assert_eq!(summary(&fifo.get_by_key("ns/a").unwrap()).len(), 2);
        let popped = pop_all(&fifo).await;
        assert_eq!(popped.iter().map(|p| p.3).collect::<Vec<_>>(), [1, 2]);
    }

    #[tokio::test]
    async fn real_fifo_has_synced_should_count_every_initial_event() {
        let cache = known(&[cm("ns", "gone", 1)]);
        let fifo = with_known(&cache);
        fifo.replace(vec![cm("ns", "a", 1)], "1").unwrap();
        assert!(!fifo.has_synced());
        fifo.pop(|_, initial| {
            if initial {
                Ok(())
            } else {
                Err(ProcessError::failed("x"))
            }
        })
        .await
        .unwrap();
        assert!(!fifo.has_synced());
        fifo.pop(|_, _| Ok(())).await.unwrap();
        assert!(fifo.has_synced());
        fifo.close();
        assert!(matches!(fifo.pop(|_, _| Ok(())).await, Err(Error::Closed)));
    }

    #[tokio::test]
    async fn real_fifo_add_if_not_present_should_not_overtake_newer_events() {
        let fifo = atomic();
        fifo.add(cm("ns", "a", 1)).unwrap();
        let old = fifo.pop(|_, _| Ok(())).await.unwrap();
        fifo.update(cm("ns", "a", 2)).unwrap();
        fifo.add_if_not_present(old.clone()).unwrap();
        assert_eq!(fifo.len(), 1);
        fifo.pop(|_, _| Ok(())).await.unwrap();
        fifo.add_if_not_present(old).unwrap();
        assert_eq!(
            summary(&fifo.get_by_key("ns/a").unwrap()),
            [(DeltaType::Added, false, 1)]
        );
    }
}
