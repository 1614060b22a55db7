//! [`RealFifo`]: client-go's in-order FIFO, one entry per event (client-go's
//! `the_real_fifo.go`).

use std::collections::{HashMap, HashSet, VecDeque};
use std::sync::Arc;

use kube_core::Resource;
use parking_lot::Mutex;
use tokio::sync::Notify;

use crate::delta_fifo::{
    DeletedFinalStateUnknown, Delta, DeltaObject, DeltaType, Deltas, FifoConfig,
};
use crate::error::{Error, Result};
use crate::fifo::{DeltaFifoOptions, ProcessError, process_popped};
use crate::store::ObjectKey;

type Hasher = foldhash::fast::RandomState;

/// Options for [`RealFifo::new`]: the same as [`DeltaFifo`](crate::DeltaFifo)'s.
pub type RealFifoOptions<K> = DeltaFifoOptions<K>;

struct State<K> {
    /// Every event in arrival order, with its key.
    items: VecDeque<(ObjectKey, Delta<K>)>,
    populated: bool,
    initial_population_count: usize,
    closed: bool,
}

impl<K> State<K> {
    fn has_synced(&self) -> bool {
        self.populated && self.initial_population_count == 0
    }

    fn contains_key(&self, key: &str) -> bool {
        self.items.iter().any(|(k, _)| &**k == key)
    }
}

/// An in-order FIFO of deltas, one entry per event, never merged per key
/// (client-go's `RealFIFO`, which its informers use by default since the
/// `InOrderInformers` gate went GA). `pop` hands out one delta at a time (as
/// a one-element [`Deltas`]), so events of different objects are seen in the
/// order they happened. `replace` and `resync` emit the same delta types and
/// tombstones as [`DeltaFifo`](crate::DeltaFifo).
pub struct RealFifo<K> {
    // A parking_lot mutex: never held across an `.await`.
    state: Mutex<State<K>>,
    notify: Notify,
    config: FifoConfig<K>,
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
            .finish_non_exhaustive()
    }
}

impl<K: Resource + Send + Sync + 'static> RealFifo<K> {
    /// A new, empty FIFO.
    pub fn new(options: RealFifoOptions<K>) -> Self {
        Self {
            state: Mutex::new(State {
                items: VecDeque::new(),
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
            state.items.push_back((key, Delta { type_, object }));
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
    /// queued (so newer events are never overtaken).
    pub fn add_if_not_present(&self, deltas: Deltas<K>) -> Result<()> {
        let key = self.config.key_of_deltas(&deltas)?;
        {
            let mut state = self.state.lock();
            state.populated = true;
            if !state.contains_key(&key) {
                for delta in deltas {
                    state.items.push_back((key.clone(), delta));
                }
            }
            self.changed(&state);
        }
        self.notify.notify_waiters();
        Ok(())
    }

    /// After a list: a `Sync` (or `Replaced`) event per listed object, then a
    /// `Deleted` [`DeletedFinalStateUnknown`] tombstone for every key that is
    /// queued or known but not listed, with its last known state. The first
    /// call sets the initial population count (every queued event).
    pub fn replace(&self, list: Vec<Arc<K>>, _resource_version: &str) -> Result<()> {
        let (action, prepared) = self.config.prepare_replace(list)?;
        {
            let mut state = self.state.lock();
            let mut listed: HashSet<ObjectKey, Hasher> =
                HashSet::with_capacity_and_hasher(prepared.len(), Hasher::default());
            // Newest queued state of every queued key, before the list lands.
            let mut queued: HashMap<ObjectKey, Option<Arc<K>>, Hasher> = HashMap::default();
            let mut queued_order: Vec<ObjectKey> = Vec::new();
            for (key, delta) in &state.items {
                let newest = delta.object.object().cloned();
                if queued.insert(key.clone(), newest).is_none() {
                    queued_order.push(key.clone());
                }
            }
            state.items.reserve(prepared.len());
            for (key, object) in prepared {
                listed.insert(key.clone());
                state.items.push_back((
                    key,
                    Delta {
                        type_: action,
                        object,
                    },
                ));
            }
            for key in queued_order {
                if listed.contains(&key) {
                    continue;
                }
                let obj = queued.remove(&key).flatten();
                let tombstone = DeletedFinalStateUnknown {
                    key: key.clone(),
                    obj,
                };
                state
                    .items
                    .push_back((key, Delta::new(DeltaType::Deleted, tombstone)));
            }
            let known = self
                .config
                .known_tombstones(|key| listed.contains(key) || queued.contains_key(key));
            state.items.extend(known);
            if !state.populated {
                state.populated = true;
                state.initial_population_count = state.items.len();
            }
            self.changed(&state);
        }
        self.notify.notify_waiters();
        Ok(())
    }

    /// A `Sync` event for every known object with no queued event.
    pub fn resync(&self) -> Result<()> {
        let Some(known) = &self.config.known_objects else {
            return Ok(());
        };
        {
            let mut state = self.state.lock();
            let queued: HashSet<ObjectKey, Hasher> =
                state.items.iter().map(|(k, _)| k.clone()).collect();
            for key in known.list_keys() {
                if queued.contains(&key) {
                    continue;
                }
                let Some(obj) = known.get_by_key(&key) else {
                    continue;
                };
                state
                    .items
                    .push_back((key, Delta::new(DeltaType::Sync, obj)));
            }
            self.changed(&state);
        }
        self.notify.notify_waiters();
        Ok(())
    }

    /// Waits for an event (or close), removes the oldest and hands it to
    /// `process` as a one-element [`Deltas`], with whether it belongs to the
    /// initial list. On [`ProcessError::Requeue`] the event goes back to the
    /// front of the queue, so it is not overtaken by newer events. Same
    /// locking rules as [`DeltaFifo::pop`](crate::DeltaFifo::pop).
    pub async fn pop<F>(&self, process: F) -> Result<Deltas<K>>
    where
        F: FnOnce(&Deltas<K>, bool) -> Result<(), ProcessError>,
    {
        loop {
            let notified = self.notify.notified();
            tokio::pin!(notified);
            {
                let mut state = self.state.lock();
                if let Some((key, delta)) = state.items.pop_front() {
                    let in_initial_list = !state.has_synced();
                    if state.initial_population_count > 0 {
                        state.initial_population_count -= 1;
                    }
                    self.changed(&state);
                    let deltas = Deltas::new(vec![delta]);
                    let (requeued, result) =
                        process_popped(&key, deltas, in_initial_list, process, |deltas| {
                            // Back to the front: not overtaken by newer events.
                            for delta in deltas.iter().rev() {
                                state.items.push_front((key.clone(), delta.clone()));
                            }
                            self.changed(&state);
                        });
                    drop(state);
                    if requeued {
                        self.notify.notify_waiters();
                    }
                    return result;
                }
                if state.closed {
                    return Err(Error::Closed);
                }
                notified.as_mut().enable();
            }
            notified.await;
        }
    }

    /// Whether the first `replace`'s events have all been popped (true
    /// right away if another write came first).
    pub fn has_synced(&self) -> bool {
        self.state.lock().has_synced()
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

    /// The queued events grouped per key, keys in order of first appearance.
    pub fn list(&self) -> Vec<Deltas<K>> {
        let state = self.state.lock();
        let mut order: Vec<ObjectKey> = Vec::new();
        let mut grouped: HashMap<ObjectKey, Vec<Delta<K>>, Hasher> = HashMap::default();
        for (key, delta) in &state.items {
            grouped
                .entry(key.clone())
                .or_insert_with(|| {
                    order.push(key.clone());
                    Vec::new()
                })
                .push(delta.clone());
        }
        order
            .into_iter()
            .filter_map(|k| grouped.remove(&k))
            .map(Deltas::new)
            .collect()
    }

    /// The keys with queued events, in order of first appearance.
    pub fn list_keys(&self) -> Vec<ObjectKey> {
        let state = self.state.lock();
        let mut seen: HashSet<&ObjectKey, Hasher> = HashSet::default();
        state
            .items
            .iter()
            .filter(|(k, _)| seen.insert(k))
            .map(|(k, _)| k.clone())
            .collect()
    }

    /// The number of queued events.
    pub fn len(&self) -> usize {
        self.state.lock().items.len()
    }

    /// Whether nothing is queued.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The queued events for `obj`'s key.
    pub fn get(&self, obj: &K) -> Result<Option<Deltas<K>>> {
        let key = (self.config.key_func)(obj)?;
        Ok(self.get_by_key(&key))
    }

    /// The queued events for `key`, oldest first.
    pub fn get_by_key(&self, key: &str) -> Option<Deltas<K>> {
        let state = self.state.lock();
        let deltas: Vec<Delta<K>> = state
            .items
            .iter()
            .filter(|(k, _)| &**k == key)
            .map(|(_, d)| d.clone())
            .collect();
        (!deltas.is_empty()).then(|| Deltas::new(deltas))
    }

    /// The key of an object or tombstone, as this FIFO computes it.
    pub fn key_of(&self, obj: &DeltaObject<K>) -> Result<ObjectKey> {
        self.config.key_of(obj)
    }
}

crate::fifo::impl_fifo_traits!(RealFifo);

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::Cache;
    use crate::test_util::{cm, version};
    use k8s_openapi::api::core::v1::ConfigMap;

    type Fifo = RealFifo<ConfigMap>;

    fn summary(deltas: &Deltas<ConfigMap>) -> Vec<(DeltaType, bool, u32)> {
        deltas
            .iter()
            .map(|d| {
                (
                    d.type_,
                    d.object.is_tombstone(),
                    d.object.object().map_or(0, |o| version(o)),
                )
            })
            .collect()
    }

    async fn pop_all(fifo: &Fifo) -> Vec<(String, DeltaType, bool, u32)> {
        let mut out = Vec::new();
        while !fifo.is_empty() {
            let deltas = fifo.pop(|_, _| Ok(())).await.unwrap();
            assert_eq!(deltas.len(), 1);
            let key = fifo.key_of(&deltas[0].object).unwrap().to_string();
            let (t, tomb, v) = summary(&deltas)[0];
            out.push((key, t, tomb, v));
        }
        out
    }

    #[tokio::test]
    async fn real_fifo_should_keep_one_entry_per_event_in_arrival_order() {
        let fifo = Fifo::new(RealFifoOptions::new());
        fifo.add(cm("ns", "a", 1)).unwrap();
        fifo.add(cm("ns", "b", 1)).unwrap();
        fifo.update(cm("ns", "a", 2)).unwrap();
        fifo.delete(cm("ns", "a", 2).into()).unwrap();
        assert_eq!(fifo.len(), 4);
        assert_eq!(fifo.list_keys().len(), 2);
        assert_eq!(summary(&fifo.get_by_key("ns/a").unwrap()).len(), 3);
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
    }

    #[tokio::test]
    async fn real_fifo_replace_should_emit_the_same_types_and_tombstones_as_delta_fifo() {
        let cache = Arc::new(Cache::with_namespace_index());
        for name in ["obj1", "obj2", "obj3"] {
            cache.add(cm("ns", name, 7)).unwrap();
        }
        let fifo = Fifo::new(RealFifoOptions::new().known_objects(cache.clone()));
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
        let expected = [
            ("ns/obj2", DeltaType::Updated, false, 8),
            ("ns/obj5", DeltaType::Added, false, 8),
            ("ns/obj2", DeltaType::Sync, false, 9),
            ("ns/obj3", DeltaType::Sync, false, 9),
            ("ns/obj4", DeltaType::Sync, false, 9),
            ("ns/obj5", DeltaType::Deleted, true, 8),
            ("ns/obj1", DeltaType::Deleted, true, 7),
        ];
        let popped: Vec<(&str, DeltaType, bool, u32)> = popped
            .iter()
            .map(|(k, t, b, v)| (k.as_str(), *t, *b, *v))
            .collect();
        assert_eq!(popped, expected);

        let replaced = Fifo::new(RealFifoOptions::new().emit_delta_type_replaced(true));
        replaced.replace(vec![cm("ns", "a", 1)], "1").unwrap();
        assert_eq!(pop_all(&replaced).await[0].1, DeltaType::Replaced);
    }

    #[tokio::test]
    async fn real_fifo_resync_should_sync_known_objects_without_queued_events() {
        let cache = Arc::new(Cache::with_namespace_index());
        cache.add(cm("ns", "a", 1)).unwrap();
        cache.add(cm("ns", "b", 1)).unwrap();
        let fifo = Fifo::new(RealFifoOptions::new().known_objects(cache.clone()));
        fifo.update(cm("ns", "a", 2)).unwrap();
        fifo.resync().unwrap();
        let popped = pop_all(&fifo).await;
        assert_eq!(popped.len(), 2);
        assert_eq!(
            (popped[1].0.as_str(), popped[1].1),
            ("ns/b", DeltaType::Sync)
        );
    }

    #[tokio::test]
    async fn real_fifo_requeue_should_put_the_event_back_before_newer_events() {
        let fifo = Fifo::new(RealFifoOptions::new());
        fifo.add(cm("ns", "a", 1)).unwrap();
        fifo.update(cm("ns", "a", 2)).unwrap();
        fifo.pop(|_, _| Err(ProcessError::requeue())).await.unwrap();
        let popped = pop_all(&fifo).await;
        assert_eq!(popped.iter().map(|p| p.3).collect::<Vec<_>>(), [1, 2]);
    }

    #[tokio::test]
    async fn real_fifo_has_synced_should_count_every_initial_event() {
        let cache = Arc::new(Cache::with_namespace_index());
        cache.add(cm("ns", "gone", 1)).unwrap();
        let fifo = Fifo::new(RealFifoOptions::new().known_objects(cache.clone()));
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
        let fifo = Fifo::new(RealFifoOptions::new());
        fifo.add(cm("ns", "a", 1)).unwrap();
        let old = fifo.pop(|_, _| Ok(())).await.unwrap();
        fifo.update(cm("ns", "a", 2)).unwrap();
        fifo.add_if_not_present(old).unwrap();
        assert_eq!(fifo.len(), 1);
    }
}
