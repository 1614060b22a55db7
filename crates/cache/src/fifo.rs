//! The [`Queue`] trait both FIFOs implement, and what a `pop` callback
//! returns (client-go's `fifo.go`: `Queue`, `PopProcessFunc`, `ErrRequeue`).

use std::sync::Arc;

use async_trait::async_trait;

use crate::delta_fifo::Deltas;
use crate::error::{BoxError, Error, Result};
use crate::store::{KeyFunc, KeyListerGetter, ObjectKey, Store};
use crate::thread_safe_store::panic_message;

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

/// The callback [`Queue::pop`] hands the popped deltas to, with whether they
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
#[async_trait]
pub trait Queue<K: Send + Sync + 'static>: Store<K, Item = Deltas<K>> {
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
    /// Whether [`close`](Queue::close) was called.
    fn is_closed(&self) -> bool;
}

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
    /// `Arc<Cache<K>>` coerces). `replace` detects deletions against them,
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

    /// A transform applied to each object before it is queued.
    #[must_use]
    pub fn transformer<F>(mut self, f: F) -> Self
    where
        F: Fn(Arc<K>) -> Result<Arc<K>, BoxError> + Send + Sync + 'static,
    {
        self.transformer = Some(Arc::new(f));
        self
    }
}

/// Implements [`Store`] and [`Queue`] for a FIFO type by forwarding to its
/// inherent methods of the same names (both FIFOs share the signatures).
macro_rules! impl_fifo_traits {
    ($fifo:ident) => {
        impl<K: Send + Sync + 'static> $crate::store::Store<K> for $fifo<K> {
            type Item = $crate::delta_fifo::Deltas<K>;

            fn add(&self, obj: std::sync::Arc<K>) -> $crate::error::Result<()> {
                $fifo::add(self, obj)
            }
            fn update(&self, obj: std::sync::Arc<K>) -> $crate::error::Result<()> {
                $fifo::update(self, obj)
            }
            fn delete(&self, obj: $crate::delta_fifo::DeltaObject<K>) -> $crate::error::Result<()> {
                $fifo::delete(self, obj)
            }
            fn list(&self) -> std::sync::Arc<[$crate::delta_fifo::Deltas<K>]> {
                $fifo::list(self).into()
            }
            fn list_keys(&self) -> Vec<$crate::store::ObjectKey> {
                $fifo::list_keys(self)
            }
            fn get(&self, obj: &K) -> $crate::error::Result<Option<$crate::delta_fifo::Deltas<K>>> {
                $fifo::get(self, obj)
            }
            fn get_by_key(&self, key: &str) -> Option<$crate::delta_fifo::Deltas<K>> {
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
        impl<K: Send + Sync + 'static> $crate::fifo::Queue<K> for $fifo<K> {
            async fn pop(
                &self,
                process: $crate::fifo::PopProcessFn<'_, K>,
            ) -> $crate::error::Result<$crate::delta_fifo::Deltas<K>> {
                $fifo::pop(self, process).await
            }
            fn add_if_not_present(
                &self,
                deltas: $crate::delta_fifo::Deltas<K>,
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
