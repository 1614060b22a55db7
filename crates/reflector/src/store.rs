//! [`ReflectorStore`]: what a reflector writes to.

use std::sync::Arc;

use kcr_cache::{BoxError, TransformFunc};

/// What a [`Reflector`](crate::Reflector) writes to (the `Store` part of
/// client-go's reflector contract).
///
/// Implemented for kcr-cache's [`RealFifo`](kcr_cache::RealFifo) (which
/// takes bookmarks too) and [`DeltaFifo`](kcr_cache::DeltaFifo) (whose
/// `replace` turns objects missing from a relist into
/// `DeletedFinalStateUnknown` tombstones), both naming their transform, and
/// for [`IndexedStore`](kcr_cache::IndexedStore). The methods are synchronous: a store is an
/// in-memory structure behind a short lock.
pub trait ReflectorStore<K>: Send + Sync {
    /// An object was created.
    fn add(&self, obj: Arc<K>) -> Result<(), BoxError>;
    /// An object changed.
    fn update(&self, obj: Arc<K>) -> Result<(), BoxError>;
    /// An object was deleted (`obj` is its last state).
    fn delete(&self, obj: Arc<K>) -> Result<(), BoxError>;
    /// The whole content, as listed at `resource_version`. Keys absent from
    /// `list` are deletions.
    ///
    /// The reflector has already applied [`transformer`](Self::transformer)
    /// to every listed object, as each arrived: a store must not apply it
    /// again (each object is transformed once, and the list is handed over
    /// without a copy).
    fn replace(&self, list: Vec<Arc<K>>, resource_version: &str) -> Result<(), BoxError>;
    /// A periodic resync (see [`Reflector::resync_period`](crate::Reflector::resync_period)).
    fn resync(&self) -> Result<(), BoxError>;

    /// A watch bookmark reached `resource_version` (client-go's optional
    /// `ReflectorBookmarkStore`): a store that queues events can pass it on.
    /// An error is logged. Default: nothing.
    fn bookmark(&self, resource_version: &str) -> Result<(), BoxError> {
        let _ = resource_version;
        Ok(())
    }

    /// Called each time the reflector's last-sync resource version moves
    /// while it watches (client-go's optional `ResourceVersionUpdater`), so
    /// a store can track the version it is at. Default: nothing.
    fn update_resource_version(&self, resource_version: &str) {
        let _ = resource_version;
    }

    /// The transform this store applies to each object it takes in
    /// (client-go's optional `TransformingStore`). A reflector applies it
    /// to every listed object as it arrives (a page, a streaming list's
    /// event), so that a list is held transformed (without `managedFields`,
    /// say), and hands [`replace`](Self::replace) the transformed objects.
    /// Default: none.
    fn transformer(&self) -> Option<TransformFunc<K>> {
        None
    }
}

/// Implements [`ReflectorStore`] for a kcr-cache store by forwarding to its
/// [`Store`](kcr_cache::Store) methods; its `replace` (a FIFO's takes the
/// objects transformed) follows the type, then the extra trait items (a FIFO's `transformer`, `bookmark`).
macro_rules! impl_for_cache_store {
    ($ty:ident, $replace:item $(, $extra:item)*) => {
        impl<K> ReflectorStore<K> for kcr_cache::$ty<K>
        where
            K: kube::Resource + Send + Sync + 'static,
        {
            fn add(&self, obj: Arc<K>) -> Result<(), BoxError> {
                kcr_cache::Store::add(self, obj).map_err(Into::into)
            }

            fn update(&self, obj: Arc<K>) -> Result<(), BoxError> {
                kcr_cache::Store::update(self, obj).map_err(Into::into)
            }

            fn delete(&self, obj: Arc<K>) -> Result<(), BoxError> {
                kcr_cache::Store::delete(self, obj)
                    .map_err(Into::into)
            }

            $replace

            fn resync(&self) -> Result<(), BoxError> {
                kcr_cache::Store::resync(self).map_err(Into::into)
            }

            $($extra)*
        }
    };
}

impl_for_cache_store!(
    IndexedStore,
    fn replace(&self, list: Vec<Arc<K>>, resource_version: &str) -> Result<(), BoxError> {
        kcr_cache::IndexedStore::replace(self, list, resource_version).map_err(Into::into)
    }
);
impl_for_cache_store!(
    DeltaFifo,
    fn replace(&self, list: Vec<Arc<K>>, resource_version: &str) -> Result<(), BoxError> {
        kcr_cache::DeltaFifo::replace_transformed(self, list, resource_version).map_err(Into::into)
    },
    fn transformer(&self) -> Option<TransformFunc<K>> {
        kcr_cache::DeltaFifo::transformer(self)
    }
);
impl_for_cache_store!(
    RealFifo,
    fn replace(&self, list: Vec<Arc<K>>, resource_version: &str) -> Result<(), BoxError> {
        kcr_cache::RealFifo::replace_transformed(self, list, resource_version).map_err(Into::into)
    },
    fn transformer(&self) -> Option<TransformFunc<K>> {
        kcr_cache::RealFifo::transformer(self)
    },
    fn bookmark(&self, resource_version: &str) -> Result<(), BoxError> {
        kcr_cache::RealFifo::bookmark(self, resource_version).map_err(Into::into)
    }
);
