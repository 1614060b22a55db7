//! The [`FifoQueue`] trait both FIFOs implement, and what a `pop` callback
//! returns (client-go's `fifo.go`: `Queue`, `PopProcessFunc`, `ErrRequeue`).

use std::sync::Arc;

use async_trait::async_trait;

use crate::delta::Deltas;
use crate::error::{BoxError, Error, Result, panic_message};
use crate::key::{KeyFunc, ObjectKey};
use crate::store::Store;

/// A transform applied to every object before it is queued (client-go's
/// `TransformFunc`), for instance to drop `metadata.managedFields`. It is not
/// applied to tombstones nor to objects a resync takes from the known
/// objects (they were transformed on the way in).
pub type TransformFunc<K> = Arc<dyn Fn(Arc<K>) -> Result<Arc<K>, BoxError> + Send + Sync>;

/// What a `pop` callback reports when it did not process the deltas.
#[derive(Debug)]
pub enum ProcessError {
    /// Put the deltas back (client-go's `ErrRequeue`): they are queued again
    /// unless newer deltas for the key are already queued, so a requeue
    /// never overtakes them. `pop` returns the popped deltas when `source` is
    /// `None`, else an [`Error::Process`](crate::Error::Process) with it.
    Requeue {
        /// Why, if the caller wants `pop` to report an error.
        source: Option<BoxError>,
    },
    /// Processing failed; the deltas are dropped and `pop` returns an
    /// [`Error::Process`](crate::Error::Process).
    Failed(BoxError),
}

impl ProcessError {
    /// A requeue that `pop` does not report as an error.
    pub fn requeue() -> Self {
        Self::Requeue { source: None }
    }

    /// A requeue that `pop` reports as an error.
    pub fn requeue_with(source: impl Into<BoxError>) -> Self {
        Self::Requeue {
            source: Some(source.into()),
        }
    }

    /// A failure.
    pub fn failed(source: impl Into<BoxError>) -> Self {
        Self::Failed(source.into())
    }
}

/// A `pop`'s common step, for both FIFOs: runs `process` on the popped
/// `deltas` of `key` (catching a panic), calls `requeue` when it asks for a
/// requeue, and maps the outcome to what `pop` returns. The flag says
/// whether the deltas were requeued (other poppers may need waking).
pub(crate) fn process_popped<K, F>(
    key: &ObjectKey,
    deltas: Deltas<K>,
    in_initial_list: bool,
    process: F,
    requeue: impl FnOnce(&Deltas<K>),
) -> (bool, Result<Deltas<K>>)
where
    F: FnOnce(&Deltas<K>, bool) -> Result<(), ProcessError>,
{
    let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        process(&deltas, in_initial_list)
    }));
    match outcome {
        Ok(Ok(())) => (false, Ok(deltas)),
        Ok(Err(ProcessError::Requeue { source })) => {
            requeue(&deltas);
            let result = match source {
                None => Ok(deltas),
                Some(source) => Err(Error::Process {
                    key: key.to_string(),
                    source,
                }),
            };
            (true, result)
        }
        Ok(Err(ProcessError::Failed(source))) => (
            false,
            Err(Error::Process {
                key: key.to_string(),
                source,
            }),
        ),
        Err(panic) => (
            false,
            Err(Error::ProcessPanicked {
                key: key.to_string(),
                message: panic_message(panic.as_ref()),
            }),
        ),
    }
}

/// The callback [`FifoQueue::pop`] hands the popped deltas to, with whether they
/// belong to the initial list (client-go's `PopProcessFunc`). It runs while
/// the queue is locked (as in client-go, so a concurrent `replace` never sees
/// deltas that are neither queued nor applied): it must not call back into
/// the same queue.
pub type PopProcessFn<'a, K> =
    Box<dyn FnOnce(&Deltas<K>, bool) -> Result<(), ProcessError> + Send + 'a>;

/// A FIFO of deltas (client-go's `Queue`): a [`Store`] of queued deltas plus
/// `pop`. Implemented by [`DeltaFifo`](crate::DeltaFifo) (one entry per key,
/// deltas merged) and [`RealFifo`](crate::RealFifo) (one entry per event), so
/// an informer can run on either.
///
/// Named `FifoQueue`, not `Queue`: it is the contract of the FIFOs between a
/// reflector and an informer, and `Queue` is kcr-workqueue's work queue of
/// keys, a different thing.
#[async_trait]
pub trait FifoQueue<K: Send + Sync + 'static>: Store<K, Item = Deltas<K>> {
    /// Waits for an entry (or for close), removes it, and runs `process` on
    /// it; returns the deltas, [`Error::Closed`](crate::Error::Closed) once
    /// closed and empty, or the callback's error.
    async fn pop(&self, process: PopProcessFn<'_, K>) -> Result<Deltas<K>>;
    /// Queues `deltas` unless deltas for the same key are already queued.
    fn add_if_not_present(&self, deltas: Deltas<K>) -> Result<()>;
    /// True once the first `replace`'s items (or, if something else came
    /// first, right away) have all been popped.
    fn has_synced(&self) -> bool;
    /// Closes the queue: `pop` drains what is queued, then fails with
    /// [`Error::Closed`](crate::Error::Closed).
    fn close(&self);
    /// Whether [`close`](FifoQueue::close) was called.
    fn is_closed(&self) -> bool;
}

/// Implements [`Store`] and [`FifoQueue`] for a FIFO type by forwarding to its
/// inherent methods of the same names (both FIFOs share the signatures).
macro_rules! impl_fifo_traits {
    ($fifo:ident) => {
        impl<K: Send + Sync + 'static> $crate::store::Store<K> for $fifo<K> {
            type Item = $crate::delta::Deltas<K>;

            fn add(&self, obj: std::sync::Arc<K>) -> $crate::error::Result<()> {
                $fifo::add(self, obj)
            }
            fn update(&self, obj: std::sync::Arc<K>) -> $crate::error::Result<()> {
                $fifo::update(self, obj)
            }
            fn delete(&self, obj: std::sync::Arc<K>) -> $crate::error::Result<()> {
                $fifo::delete(self, obj.into())
            }
            fn list(&self) -> std::sync::Arc<[$crate::delta::Deltas<K>]> {
                $fifo::list(self).into()
            }
            fn list_keys(&self) -> Vec<$crate::key::ObjectKey> {
                $fifo::list_keys(self)
            }
            fn get(&self, obj: &K) -> $crate::error::Result<Option<$crate::delta::Deltas<K>>> {
                $fifo::get(self, obj)
            }
            fn get_by_key(&self, key: &str) -> Option<$crate::delta::Deltas<K>> {
                $fifo::get_by_key(self, key)
            }
            fn replace(
                &self,
                list: Vec<std::sync::Arc<K>>,
                resource_version: &str,
            ) -> $crate::error::Result<()> {
                $fifo::replace(self, list, resource_version)
            }
            fn resync(&self) -> $crate::error::Result<()> {
                $fifo::resync(self)
            }
        }

        #[async_trait::async_trait]
        impl<K: Send + Sync + 'static> $crate::fifo::FifoQueue<K> for $fifo<K> {
            async fn pop(
                &self,
                process: $crate::fifo::PopProcessFn<'_, K>,
            ) -> $crate::error::Result<$crate::delta::Deltas<K>> {
                $fifo::pop(self, process).await
            }
            fn add_if_not_present(
                &self,
                deltas: $crate::delta::Deltas<K>,
            ) -> $crate::error::Result<()> {
                $fifo::add_if_not_present(self, deltas)
            }
            fn has_synced(&self) -> bool {
                $fifo::has_synced(self)
            }
            fn close(&self) {
                $fifo::close(self)
            }
            fn is_closed(&self) -> bool {
                $fifo::is_closed(self)
            }
        }
    };
}
pub(crate) use impl_fifo_traits;

/// A producer/consumer queue of objects, one latest object per key
/// (client-go's `FIFO`, from `NewFIFO`): adding an object whose key is
/// queued replaces the queued object without moving it; `pop` hands out
/// objects in order of first arrival. Unlike the delta FIFOs it keeps no
/// history: a deleted key is skipped when its turn comes.
pub struct Fifo<K> {
    // A parking_lot mutex: never held across an `.await`.
    state: parking_lot::Mutex<KeyedState<K>>,
    notify: tokio::sync::Notify,
    key_func: KeyFunc<K>,
}

struct KeyedState<K> {
    items: std::collections::HashMap<ObjectKey, Arc<K>, foldhash::fast::RandomState>,
    queue: std::collections::VecDeque<ObjectKey>,
    populated: bool,
    initial_population_count: usize,
    synced: bool,
    closed: bool,
}

impl<K> KeyedState<K> {
    fn check_synced(&mut self) {
        if self.populated && self.initial_population_count == 0 {
            self.synced = true;
        }
    }

    fn add_if_not_present(&mut self, key: ObjectKey, obj: Arc<K>) {
        if self.items.contains_key(&key) {
            return;
        }
        self.queue.push_back(key.clone());
        self.items.insert(key, obj);
    }
}

impl<K> std::fmt::Debug for Fifo<K> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let state = self.state.lock();
        f.debug_struct("Fifo")
            .field("queued", &state.queue.len())
            .field("synced", &state.synced)
            .field("closed", &state.closed)
            .finish_non_exhaustive()
    }
}

impl<K: Send + Sync + 'static> Fifo<K> {
    /// An empty FIFO keyed by `key_func` (client-go's `NewFIFO`).
    pub fn new<F>(key_func: F) -> Self
    where
        F: Fn(&K) -> Result<ObjectKey> + Send + Sync + 'static,
    {
        Self {
            state: parking_lot::Mutex::new(KeyedState {
                items: Default::default(),
                queue: Default::default(),
                populated: false,
                initial_population_count: 0,
                synced: false,
                closed: false,
            }),
            notify: tokio::sync::Notify::new(),
            key_func: Arc::new(key_func),
        }
    }

    /// Queues `obj`; if its key is queued, replaces the queued object in
    /// place.
    pub fn add(&self, obj: Arc<K>) -> Result<()> {
        let key = (self.key_func)(&obj)?;
        {
            let mut state = self.state.lock();
            state.populated = true;
            state.check_synced();
            if !state.items.contains_key(&key) {
                state.queue.push_back(key.clone());
            }
            state.items.insert(key, obj);
        }
        self.notify.notify_waiters();
        Ok(())
    }

    /// The same as [`add`](Self::add).
    pub fn update(&self, obj: Arc<K>) -> Result<()> {
        self.add(obj)
    }

    /// Forgets the object of `obj`'s key; its queue slot is skipped.
    pub fn delete(&self, obj: &K) -> Result<()> {
        let key = (self.key_func)(obj)?;
        let mut state = self.state.lock();
        state.populated = true;
        state.check_synced();
        state.items.remove(&key);
        Ok(())
    }

    /// Queues `obj` only if its key holds nothing (so a newer object is
    /// never overwritten by an older one).
    pub fn add_if_not_present(&self, obj: Arc<K>) -> Result<()> {
        let key = (self.key_func)(&obj)?;
        {
            let mut state = self.state.lock();
            state.populated = true;
            state.check_synced();
            state.add_if_not_present(key, obj);
        }
        self.notify.notify_waiters();
        Ok(())
    }

    /// Replaces the whole content with `list`, queued in list order. The
    /// first call sets the initial population count that
    /// [`has_synced`](Self::has_synced) waits on.
    pub fn replace(&self, list: Vec<Arc<K>>, _resource_version: &str) -> Result<()> {
        let mut items: std::collections::HashMap<ObjectKey, Arc<K>, foldhash::fast::RandomState> =
            Default::default();
        let mut queue = std::collections::VecDeque::with_capacity(list.len());
        for obj in list {
            let key = (self.key_func)(&obj)?;
            if items.insert(key.clone(), obj).is_none() {
                queue.push_back(key);
            }
        }
        {
            let mut state = self.state.lock();
            if !state.populated {
                state.populated = true;
                state.initial_population_count = items.len();
                state.check_synced();
            }
            state.items = items;
            state.queue = queue;
        }
        self.notify.notify_waiters();
        Ok(())
    }

    /// Queues every held key that is not queued (a no-op while the
    /// invariants hold; client-go's `Resync`).
    pub fn resync(&self) -> Result<()> {
        {
            let mut state = self.state.lock();
            let queued: std::collections::HashSet<ObjectKey> =
                state.queue.iter().cloned().collect();
            let missing: Vec<ObjectKey> = state
                .items
                .keys()
                .filter(|k| !queued.contains(*k))
                .cloned()
                .collect();
            state.queue.extend(missing);
        }
        self.notify.notify_waiters();
        Ok(())
    }

    /// Waits for an object (or close), removes it and hands it to
    /// `process` with whether it belongs to the initial list. A deleted
    /// key's slot is skipped. On [`ProcessError::Requeue`] the object is
    /// queued again unless its key holds a newer one.
    pub async fn pop<F>(&self, process: F) -> Result<Arc<K>>
    where
        F: FnOnce(&Arc<K>, bool) -> Result<(), ProcessError>,
    {
        loop {
            let notified = self.notify.notified();
            tokio::pin!(notified);
            {
                let mut state = self.state.lock();
                let mut counted = false;
                while let Some(key) = state.queue.pop_front() {
                    let in_initial_list = !state.synced;
                    if state.initial_population_count > 0 {
                        state.initial_population_count -= 1;
                        counted = true;
                    }
                    let Some(obj) = state.items.remove(&key) else {
                        continue;
                    };
                    let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                        process(&obj, in_initial_list)
                    }));
                    state.check_synced();
                    let result = match outcome {
                        Ok(Ok(())) => Ok(obj),
                        Ok(Err(ProcessError::Requeue { source })) => {
                            state.add_if_not_present(key.clone(), obj.clone());
                            match source {
                                None => Ok(obj),
                                Some(source) => Err(Error::Process {
                                    key: key.to_string(),
                                    source,
                                }),
                            }
                        }
                        Ok(Err(ProcessError::Failed(source))) => Err(Error::Process {
                            key: key.to_string(),
                            source,
                        }),
                        Err(panic) => Err(Error::ProcessPanicked {
                            key: key.to_string(),
                            message: panic_message(panic.as_ref()),
                        }),
                    };
                    return result;
                }
                if counted {
                    state.check_synced();
                }
                if state.closed {
                    return Err(Error::Closed);
                }
                notified.as_mut().enable();
            }
            notified.await;
        }
    }

    /// Whether the first `replace`'s objects have all been popped (true
    /// right away if another write came first).
    pub fn has_synced(&self) -> bool {
        self.state.lock().synced
    }

    /// Closes the FIFO: `pop` drains what is queued, then fails with
    /// [`Error::Closed`].
    pub fn close(&self) {
        self.state.lock().closed = true;
        self.notify.notify_waiters();
    }

    /// Whether [`close`](Self::close) was called.
    pub fn is_closed(&self) -> bool {
        self.state.lock().closed
    }

    /// Every held object, in queue order.
    pub fn list(&self) -> Vec<Arc<K>> {
        let state = self.state.lock();
        state
            .queue
            .iter()
            .filter_map(|k| state.items.get(k).cloned())
            .collect()
    }

    /// Every held key, in queue order.
    pub fn list_keys(&self) -> Vec<ObjectKey> {
        let state = self.state.lock();
        state
            .queue
            .iter()
            .filter(|k| state.items.contains_key(*k))
            .cloned()
            .collect()
    }

    /// The object held under `key`.
    pub fn get_by_key(&self, key: &str) -> Option<Arc<K>> {
        self.state.lock().items.get(key).cloned()
    }

    /// How many objects are held.
    pub fn len(&self) -> usize {
        self.state.lock().items.len()
    }

    /// Whether nothing is held.
    pub fn is_empty(&self) -> bool {
        self.state.lock().items.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::key::meta_namespace_key_func;
    use crate::test_util::{cm, version};
    use k8s_openapi::api::core::v1::ConfigMap;

    fn fifo() -> Fifo<ConfigMap> {
        Fifo::new(meta_namespace_key_func::<ConfigMap>)
    }

    async fn pop(f: &Fifo<ConfigMap>) -> (String, u32, bool) {
        let mut initial = false;
        let obj = f
            .pop(|_, i| {
                initial = i;
                Ok(())
            })
            .await
            .unwrap();
        (
            obj.metadata.name.clone().unwrap_or_default(),
            version(&obj),
            initial,
        )
    }

    #[tokio::test]
    async fn a_fifo_should_keep_the_latest_object_per_key_in_first_arrival_order() {
        let f = fifo();
        f.add(cm("ns", "a", 1)).unwrap();
        f.add(cm("ns", "b", 1)).unwrap();
        f.update(cm("ns", "a", 2)).unwrap();
        assert_eq!(f.len(), 2);
        assert_eq!(pop(&f).await, ("a".to_owned(), 2, false));
        assert_eq!(pop(&f).await, ("b".to_owned(), 1, false));
        assert!(f.is_empty());
    }

    #[tokio::test]
    async fn add_if_not_present_should_not_overwrite_a_queued_object() {
        let f = fifo();
        f.add(cm("ns", "a", 2)).unwrap();
        f.add_if_not_present(cm("ns", "a", 1)).unwrap();
        assert_eq!(version(&f.get_by_key("ns/a").unwrap()), 2);
        pop(&f).await;
        f.add_if_not_present(cm("ns", "a", 1)).unwrap();
        assert_eq!(version(&f.get_by_key("ns/a").unwrap()), 1);
    }

    #[tokio::test]
    async fn a_deleted_key_should_be_skipped_and_replace_should_count_the_initial_list() {
        let f = fifo();
        f.replace(vec![cm("ns", "a", 1), cm("ns", "b", 1)], "1")
            .unwrap();
        assert!(!f.has_synced());
        f.delete(&cm("ns", "a", 1)).unwrap();
        assert_eq!(pop(&f).await, ("b".to_owned(), 1, true));
        assert!(f.has_synced());
        f.close();
        assert!(matches!(f.pop(|_, _| Ok(())).await, Err(Error::Closed)));
    }

    #[tokio::test]
    async fn resync_should_queue_held_keys_that_are_not_queued() {
        let f = fifo();
        f.add(cm("ns", "a", 1)).unwrap();
        f.resync().unwrap();
        assert_eq!(f.list_keys(), vec![ObjectKey::from("ns/a")]);
        assert_eq!(f.list().len(), 1);
    }
}
