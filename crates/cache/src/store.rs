//! The [`Store`] trait and the key lister/getter traits (client-go's
//! `store.go` interfaces; its `cache` struct is
//! [`IndexedStore`](crate::IndexedStore)).

use std::sync::Arc;

use crate::error::Result;
use crate::key::ObjectKey;

/// Lists the keys of a store (client-go's `KeyLister`). Implemented by every
/// [`Store`] of `Arc<K>` (such as [`IndexedStore`](crate::IndexedStore)).
pub trait KeyLister<K>: Send + Sync {
    /// Every key the store holds, in no particular order.
    fn list_keys(&self) -> Vec<ObjectKey>;
}

/// Looks objects up by key (client-go's `KeyGetter`). Implemented by every
/// [`Store`] of `Arc<K>` (such as [`IndexedStore`](crate::IndexedStore)).
pub trait KeyGetter<K>: Send + Sync {
    /// The object stored under `key`, if any.
    fn get_by_key(&self, key: &str) -> Option<Arc<K>>;
}

impl<K, T: Store<K, Item = Arc<K>> + ?Sized> KeyLister<K> for T {
    fn list_keys(&self) -> Vec<ObjectKey> {
        Store::list_keys(self)
    }
}

impl<K, T: Store<K, Item = Arc<K>> + ?Sized> KeyGetter<K> for T {
    fn get_by_key(&self, key: &str) -> Option<Arc<K>> {
        Store::get_by_key(self, key)
    }
}

/// [`KeyLister`] and [`KeyGetter`] together (client-go's `KeyListerGetter`):
/// what a [`DeltaFifo`](crate::DeltaFifo) needs of its *known objects*, the
/// informer's indexer. An `Arc<IndexedStore<K>>` coerces to
/// `Arc<dyn KeyListerGetter<K>>`; so does an `Arc<Arc<dyn Indexer<K>>>`.
///
/// [`Indexer`]: crate::Indexer
pub trait KeyListerGetter<K>: KeyLister<K> + KeyGetter<K> {}

impl<K, T: KeyLister<K> + KeyGetter<K> + ?Sized> KeyListerGetter<K> for T {}

/// A generic object store (client-go's `Store`).
///
/// [`IndexedStore`](crate::IndexedStore) implements it with `Item = Arc<K>`; the FIFOs implement it with
/// `Item = Deltas<K>` (their `get`/`list` hand out the queued deltas).
pub trait Store<K>: Send + Sync {
    /// What `get`, `get_by_key` and `list` return.
    type Item;

    /// Adds an object.
    fn add(&self, obj: Arc<K>) -> Result<()>;
    /// Updates an object.
    fn update(&self, obj: Arc<K>) -> Result<()>;
    /// Deletes an object (a FIFO queues its deletion).
    ///
    /// Only objects: a FIFO's own `delete` takes the other
    /// [`DeltaObject`](crate::DeltaObject)s, and
    /// [`IndexedStore::delete_by_key`](crate::IndexedStore::delete_by_key)
    /// deletes a tombstone's key. A delta of a whole list is no object:
    ///
    /// ```compile_fail
    /// use kcr_cache::{DeltaObject, IndexedStore, Store};
    /// # use k8s_openapi::api::core::v1::ConfigMap;
    /// let store = IndexedStore::<ConfigMap>::default();
    /// Store::delete(&store, DeltaObject::SyncAll);
    /// ```
    fn delete(&self, obj: Arc<K>) -> Result<()>;
    /// Every item, in no particular order.
    fn list(&self) -> Arc<[Self::Item]>;
    /// Every key, in no particular order.
    fn list_keys(&self) -> Vec<ObjectKey>;
    /// The item stored under `obj`'s key.
    fn get(&self, obj: &K) -> Result<Option<Self::Item>>;
    /// The item stored under `key`.
    fn get_by_key(&self, key: &str) -> Option<Self::Item>;
    /// Replaces the whole content with `list`, listed at `resource_version`.
    fn replace(&self, list: Vec<Arc<K>>, resource_version: &str) -> Result<()>;
    /// Resynchronises (meaningful for the FIFOs; a no-op for [`IndexedStore`](crate::IndexedStore)).
    fn resync(&self) -> Result<()>;
}

impl<K, T: Store<K> + ?Sized> Store<K> for Arc<T> {
    type Item = T::Item;

    fn add(&self, obj: Arc<K>) -> Result<()> {
        (**self).add(obj)
    }
    fn update(&self, obj: Arc<K>) -> Result<()> {
        (**self).update(obj)
    }
    fn delete(&self, obj: Arc<K>) -> Result<()> {
        (**self).delete(obj)
    }
    fn list(&self) -> Arc<[T::Item]> {
        (**self).list()
    }
    fn list_keys(&self) -> Vec<ObjectKey> {
        (**self).list_keys()
    }
    fn get(&self, obj: &K) -> Result<Option<T::Item>> {
        (**self).get(obj)
    }
    fn get_by_key(&self, key: &str) -> Option<T::Item> {
        (**self).get_by_key(key)
    }
    fn replace(&self, list: Vec<Arc<K>>, resource_version: &str) -> Result<()> {
        (**self).replace(list, resource_version)
    }
    fn resync(&self) -> Result<()> {
        (**self).resync()
    }
}
