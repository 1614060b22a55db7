//! Key functions, the [`Store`] trait, the key lister/getter traits and
//! [`Cache`], the indexed store an informer keeps its objects in
//! (client-go's `store.go`).

use std::sync::Arc;

use kube_core::Resource;

use crate::delta_fifo::DeltaObject;
use crate::error::{Error, Result};
use crate::index::{Indexer, Indexers, NAMESPACE_INDEX, meta_namespace_index_func};
use crate::thread_safe_store::{KeyIn, ThreadSafeStore, TransactionResults, TransactionType};

/// The key of a cached object: `namespace/name`, or `name` for a
/// cluster-scoped object. Shared, so the same key allocation serves the item
/// map and every index.
pub type ObjectKey = Arc<str>;

/// A shared, immutable list of objects: what `list`, `by_index` and listers
/// return. Cloning it is one reference-count increment; an unchanged store
/// (or index value) hands out the same snapshot again without copying.
pub type Objects<K> = Arc<[Arc<K>]>;

/// A function that computes an object's key (client-go's `KeyFunc`).
pub type KeyFunc<K> = Arc<dyn Fn(&K) -> Result<ObjectKey> + Send + Sync>;

/// The default key function: `namespace/name`, or `name` when the object has
/// no namespace (client-go's `MetaNamespaceKeyFunc`).
///
/// Fails with [`Error::ObjectHasNoName`] when `metadata.name` is missing or
/// empty.
pub fn meta_namespace_key_func<K: Resource>(obj: &K) -> Result<ObjectKey> {
    Ok(Arc::from(&*KeyBuffer::meta_namespace_key(obj)?))
}

/// An object's `namespace/name` key written into a per-thread buffer, so a
/// key that is only looked up (an update, a delete, a get) allocates
/// nothing. Dereferences to the key; gives the buffer back when dropped.
pub(crate) struct KeyBuffer(String);

thread_local! {
    static KEY_BUFFER: std::cell::Cell<String> = const { std::cell::Cell::new(String::new()) };
}

impl KeyBuffer {
    /// [`meta_namespace_key_func`]'s key, without the allocation. The buffer
    /// is taken out of the thread-local while in use, so a nested call (an
    /// index function computing a key) just allocates its own.
    pub(crate) fn meta_namespace_key<K: Resource>(obj: &K) -> Result<Self> {
        let meta = obj.meta();
        let name = match meta.name.as_deref() {
            Some(name) if !name.is_empty() => name,
            _ => return Err(Error::ObjectHasNoName),
        };
        let mut key = KEY_BUFFER.take();
        key.clear();
        if let Some(ns) = meta.namespace.as_deref().filter(|ns| !ns.is_empty()) {
            key.push_str(ns);
            key.push('/');
        }
        key.push_str(name);
        Ok(Self(key))
    }
}

impl std::ops::Deref for KeyBuffer {
    type Target = str;
    fn deref(&self) -> &str {
        &self.0
    }
}

impl Drop for KeyBuffer {
    fn drop(&mut self) {
        KEY_BUFFER.set(std::mem::take(&mut self.0));
    }
}

/// The key of a delta's object: a [`DeletedFinalStateUnknown`]
/// tombstone's own key, otherwise [`meta_namespace_key_func`]
/// (client-go's `DeletionHandlingMetaNamespaceKeyFunc`).
///
/// [`DeletedFinalStateUnknown`]: crate::DeletedFinalStateUnknown
pub fn deletion_handling_meta_namespace_key_func<K: Resource>(
    obj: &DeltaObject<K>,
) -> Result<ObjectKey> {
    match obj {
        DeltaObject::Object(obj) => meta_namespace_key_func(obj.as_ref()),
        DeltaObject::DeletedFinalStateUnknown(tombstone) => Ok(tombstone.key.clone()),
        DeltaObject::ReplacedAll(_) | DeltaObject::SyncAll | DeltaObject::Bookmark(_) => {
            Err(Error::NoKey)
        }
    }
}

/// Splits a key made by [`meta_namespace_key_func`] into
/// `(namespace, name)` as client-go's `SplitMetaNamespaceKey` does: a key
/// without `/` is a name alone; a key with one `/` is `namespace/name`,
/// either part possibly empty (`"/b"` is the name `b` with the empty
/// namespace, `"a/"` the empty name in `a`, `""` the empty name). The
/// namespace is `None` when it is absent or empty (client-go's `""`: a
/// cluster-scoped key).
///
/// Fails with [`Error::InvalidKey`] only for more than one `/` (`a/b/c`),
/// as client-go.
pub fn split_meta_namespace_key(key: &str) -> Result<(Option<&str>, &str)> {
    let mut parts = key.split('/');
    let first = parts.next().unwrap_or_default();
    match (parts.next(), parts.next()) {
        (None, _) => Ok((None, first)),
        (Some(name), None) => Ok(((!first.is_empty()).then_some(first), name)),
        (Some(_), Some(_)) => Err(Error::InvalidKey {
            key: key.to_owned(),
            reason: "a key has at most one '/'",
        }),
    }
}

/// A key given as is, for a store operation that has the key but not the
/// object (client-go's `ExplicitKey`, which `MetaNamespaceKeyFunc` passes
/// through). Converted into a [`DeltaObject`] it is a
/// [`DeletedFinalStateUnknown`](crate::DeletedFinalStateUnknown) with no
/// object, so `store.delete(ExplicitKey::new("ns/a").into())` deletes by key.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ExplicitKey(pub ObjectKey);

impl ExplicitKey {
    /// The key `key`.
    pub fn new(key: impl Into<ObjectKey>) -> Self {
        Self(key.into())
    }

    /// The key.
    pub fn key(&self) -> &ObjectKey {
        &self.0
    }
}

impl std::fmt::Display for ExplicitKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl<K> From<ExplicitKey> for DeltaObject<K> {
    fn from(key: ExplicitKey) -> Self {
        DeltaObject::DeletedFinalStateUnknown(crate::DeletedFinalStateUnknown {
            key: key.0,
            obj: None,
        })
    }
}

/// Lists the keys of a store (client-go's `KeyLister`). Implemented by every
/// [`Store`] of `Arc<K>` (such as [`Cache`]).
pub trait KeyLister<K>: Send + Sync {
    /// Every key the store holds, in no particular order.
    fn list_keys(&self) -> Vec<ObjectKey>;
}

/// Looks objects up by key (client-go's `KeyGetter`). Implemented by every
/// [`Store`] of `Arc<K>` (such as [`Cache`]).
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
/// informer's indexer. An `Arc<Cache<K>>` coerces to
/// `Arc<dyn KeyListerGetter<K>>`; so does an `Arc<Arc<dyn Indexer<K>>>`.
///
/// [`Indexer`]: crate::Indexer
pub trait KeyListerGetter<K>: KeyLister<K> + KeyGetter<K> {}

impl<K, T: KeyLister<K> + KeyGetter<K> + ?Sized> KeyListerGetter<K> for T {}

/// A generic object store (client-go's `Store`).
///
/// [`Cache`] implements it with `Item = Arc<K>`; the FIFOs implement it with
/// `Item = Deltas<K>` (their `get`/`list` hand out the queued deltas).
pub trait Store<K>: Send + Sync {
    /// What `get`, `get_by_key` and `list` return.
    type Item;

    /// Adds an object.
    fn add(&self, obj: Arc<K>) -> Result<()>;
    /// Updates an object.
    fn update(&self, obj: Arc<K>) -> Result<()>;
    /// Deletes an object; a [`DeletedFinalStateUnknown`] tombstone is deleted
    /// by its key.
    ///
    /// [`DeletedFinalStateUnknown`]: crate::DeletedFinalStateUnknown
    fn delete(&self, obj: DeltaObject<K>) -> Result<()>;
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
    /// Resynchronises (meaningful for the FIFOs; a no-op for [`Cache`]).
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
    fn delete(&self, obj: DeltaObject<K>) -> Result<()> {
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

/// What [`Cache::replace_with_changes`] changed: the deletions it detected
/// and, per listed key in list order, the object it replaced.
pub struct ReplaceChanges<K> {
    /// A tombstone for every key the list lacked.
    pub deleted: Vec<crate::DeletedFinalStateUnknown<K>>,
    /// `(old, new)` for every listed key (`old` is `None` for a new key; a
    /// key listed twice appears once, with the last object listed).
    pub replaced: Vec<(Option<Arc<K>>, Arc<K>)>,
}

impl<K> std::fmt::Debug for ReplaceChanges<K> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ReplaceChanges")
            .field("deleted", &self.deleted.len())
            .field("replaced", &self.replaced.len())
            .finish()
    }
}

/// One write of a [`Cache::transaction`] (client-go's `Transaction`): the
/// key is computed from the object (a tombstone's own key).
pub struct Transaction<K> {
    /// What to do.
    pub type_: TransactionType,
    /// The object written, or the object (or tombstone) deleted.
    pub object: DeltaObject<K>,
}

impl<K> Transaction<K> {
    /// A transaction of `type_` on `object`.
    pub fn new(type_: TransactionType, object: impl Into<DeltaObject<K>>) -> Self {
        Self {
            type_,
            object: object.into(),
        }
    }
}

impl<K> std::fmt::Debug for Transaction<K> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Transaction")
            .field("type_", &self.type_)
            .finish_non_exhaustive()
    }
}

/// A [`ThreadSafeStore`] plus a key function: client-go's `cache`, returned
/// there by `NewStore` / `NewIndexer`. The informer's local cache.
///
/// Objects are held as `Arc<K>`: adding, indexing and listing never clone a
/// `K`.
pub struct Cache<K> {
    store: ThreadSafeStore<K>,
    key_func: KeyFunc<K>,
    /// `key_func` is [`meta_namespace_key_func`]: keys are built in a
    /// reused buffer and allocated only for objects new to the store.
    meta_namespace_keys: bool,
    size_gauge: crate::metrics::Gauge,
}

impl<K> std::fmt::Debug for Cache<K> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Cache")
            .field("store", &self.store)
            .finish_non_exhaustive()
    }
}

impl<K: Resource + Send + Sync + 'static> Default for Cache<K> {
    fn default() -> Self {
        Self::new(meta_namespace_key_func::<K>, Indexers::default())
    }
}

impl<K: Resource + Send + Sync + 'static> Cache<K> {
    /// A cache keyed by `key_func` with the given indexers (client-go's
    /// `NewIndexer`; `NewStore` is `Cache::new(key_func, Indexers::default())`).
    pub fn new<F>(key_func: F, indexers: Indexers<K>) -> Self
    where
        F: Fn(&K) -> Result<ObjectKey> + Send + Sync + 'static,
    {
        fn type_id_of<T: 'static>(_: &T) -> std::any::TypeId {
            std::any::TypeId::of::<T>()
        }
        Self {
            store: ThreadSafeStore::new(indexers),
            meta_namespace_keys: std::any::TypeId::of::<F>()
                == type_id_of(&meta_namespace_key_func::<K>),
            key_func: Arc::new(key_func),
            size_gauge: crate::metrics::Gauge::default(),
        }
    }

    /// Names the cache: with the `metrics` feature its size is recorded as
    /// `cache_store_objects{name}` (unnamed caches record nothing).
    #[must_use]
    pub fn named(mut self, name: &str) -> Self {
        self.size_gauge = crate::metrics::Gauge::store_objects(Some(name));
        self.record_size();
        self
    }

    fn record_size(&self) {
        if self.size_gauge.is_active() {
            self.size_gauge.set(self.store.len());
        }
    }

    /// This cache in compact mode, keeping up to
    /// [`DEFAULT_DECODED_OBJECTS`](crate::DEFAULT_DECODED_OBJECTS) decoded:
    /// see [`compact_with`](Self::compact_with).
    #[must_use]
    pub fn compact(self) -> Self
    where
        K: serde::Serialize + serde::de::DeserializeOwned,
    {
        self.compact_with(crate::DEFAULT_DECODED_OBJECTS)
    }

    /// This cache in compact mode ([`ThreadSafeStore::compact`]): each
    /// object kept as its JSON and decoded when read, up to `decoded`
    /// decoded objects cached (the last written or got). A fraction of the
    /// memory per object of a default cache, for a decode on every read
    /// the decoded cache misses: `list`, `by_index` and `index` decode every
    /// object they return. Read through the same [`Store`], [`Indexer`]
    /// and [`Lister`](crate::Lister) API; objects already stored are
    /// encoded now.
    ///
    /// ```
    /// use std::sync::Arc;
    /// use k8s_openapi::api::core::v1::ConfigMap;
    /// use kcr_cache::{Cache, Indexer, NAMESPACE_INDEX, Store};
    ///
    /// let cache = Cache::<ConfigMap>::with_namespace_index().compact();
    /// let mut cm = ConfigMap::default();
    /// cm.metadata.namespace = Some("ns".into());
    /// cm.metadata.name = Some("a".into());
    /// cache.add(Arc::new(cm.clone())).unwrap();
    /// assert_eq!(*cache.get_by_key("ns/a").unwrap(), cm);
    /// assert_eq!(cache.by_index(NAMESPACE_INDEX, "ns").unwrap().len(), 1);
    /// ```
    ///
    /// [`Indexer`]: crate::Indexer
    #[must_use]
    pub fn compact_with(mut self, decoded: usize) -> Self
    where
        K: serde::Serialize + serde::de::DeserializeOwned,
    {
        self.store = self.store.compact(decoded);
        self
    }

    /// Whether this cache keeps its objects encoded ([`compact`](Self::compact)).
    pub fn is_compact(&self) -> bool {
        self.store.is_compact()
    }

    /// A cache keyed by [`meta_namespace_key_func`] with the `"namespace"`
    /// index ([`meta_namespace_index_func`]), what informers use by default.
    pub fn with_namespace_index() -> Self {
        let mut indexers = Indexers::default();
        indexers.insert(NAMESPACE_INDEX.to_owned(), meta_namespace_index_func());
        Self::new(meta_namespace_key_func::<K>, indexers)
    }

    /// The key of `obj` under this cache's key function.
    pub fn key_of(&self, obj: &K) -> Result<ObjectKey> {
        (self.key_func)(obj)
    }

    /// `obj`'s key: written in the per-thread buffer when the key function
    /// is [`meta_namespace_key_func`], computed by the key function otherwise.
    fn stored_key(&self, obj: &K) -> Result<KeyIn> {
        if self.meta_namespace_keys {
            KeyBuffer::meta_namespace_key(obj).map(KeyIn::Buffer)
        } else {
            (self.key_func)(obj).map(KeyIn::Owned)
        }
    }

    /// The underlying thread-safe store.
    pub fn thread_safe_store(&self) -> &ThreadSafeStore<K> {
        &self.store
    }

    /// Adds (or replaces) an object under its key.
    pub fn add(&self, obj: Arc<K>) -> Result<()> {
        let key = self.stored_key(&obj)?;
        if self.store.put_new(key, obj)? {
            self.record_size();
        }
        Ok(())
    }

    /// Updates an object under its key (the same as [`Cache::add`]).
    pub fn update(&self, obj: Arc<K>) -> Result<()> {
        self.add(obj)
    }

    /// Adds or updates an object under its key and returns the object it
    /// replaced, in one step: what an informer needs to tell an add from an
    /// update without a `get` first.
    pub fn upsert(&self, obj: Arc<K>) -> Result<Option<Arc<K>>> {
        let old = self.put(obj)?;
        if old.is_none() {
            self.record_size();
        }
        Ok(old)
    }

    fn put(&self, obj: Arc<K>) -> Result<Option<Arc<K>>> {
        self.store.put(self.stored_key(&obj)?, obj)
    }

    /// Deletes the object (or tombstone) under its key; deleting an absent
    /// key is not an error.
    pub fn delete(&self, obj: DeltaObject<K>) -> Result<()> {
        match &obj {
            DeltaObject::Object(o) => {
                let key = self.stored_key(o)?;
                self.store.delete_with_object(key.as_str(), o.clone());
            }
            DeltaObject::DeletedFinalStateUnknown(tombstone) => {
                self.store.delete(&tombstone.key)?;
            }
            DeltaObject::ReplacedAll(_) | DeltaObject::SyncAll | DeltaObject::Bookmark(_) => {
                return Err(Error::NoKey);
            }
        }
        self.record_size();
        Ok(())
    }

    /// Applies several adds, updates and deletes under one lock (client-go's
    /// `cache.Transaction`): readers see all of them or none, and each
    /// index is updated once per write. Returns each write's outcome in
    /// order: the object it replaced or removed, or its error (a key or
    /// index function failing; that write changes nothing, the others
    /// still apply). The last write's object, if it has one (not a
    /// tombstone), sets [`last_store_sync_resource_version`](Self::last_store_sync_resource_version).
    pub fn transaction(&self, txns: Vec<Transaction<K>>) -> TransactionResults<K> {
        let keyed = txns.into_iter().map(|txn| {
            let key = match &txn.object {
                DeltaObject::Object(o) => self.stored_key(o)?,
                DeltaObject::DeletedFinalStateUnknown(t) => KeyIn::Owned(t.key.clone()),
                DeltaObject::ReplacedAll(_) | DeltaObject::SyncAll | DeltaObject::Bookmark(_) => {
                    return Err(Error::NoKey);
                }
            };
            let object = match txn.object {
                DeltaObject::Object(o) => Some(o),
                _ => None,
            };
            Ok((txn.type_, key, object))
        });
        let results = self.store.transaction_with(keyed);
        self.record_size();
        results
    }

    /// The resource version of the cache's last replace, transaction, write
    /// or bookmark (client-go 1.36's `LastStoreSyncResourceVersion`); see
    /// [`ThreadSafeStore::last_store_sync_resource_version`].
    pub fn last_store_sync_resource_version(&self) -> String {
        self.store.last_store_sync_resource_version()
    }

    /// Replaces the whole content with `list` like [`replace`](Self::replace)
    /// and reports what changed, as client-go's `processReplacedAllInfo`
    /// reconciles a `ReplacedAll` event against the store: a
    /// [`DeletedFinalStateUnknown`](crate::DeletedFinalStateUnknown)
    /// tombstone (with the last stored state) for every stored key the list
    /// lacks, and for every listed object the object it replaces, if any.
    /// On a key or index error the cache is unchanged.
    ///
    /// The objects are taken as `list` yields them (a borrowed list can be
    /// passed as `list.iter().cloned()`): no second list is built, and the
    /// deletions are found by looking the old keys up in the new content.
    pub fn replace_with_changes<I>(
        &self,
        list: I,
        resource_version: &str,
    ) -> Result<ReplaceChanges<K>>
    where
        I: IntoIterator<Item = Arc<K>>,
        I::IntoIter: ExactSizeIterator,
    {
        let items = list
            .into_iter()
            .map(|obj| Ok((self.stored_key(&obj)?, obj)));
        let changes = self
            .store
            .replace_with(items, resource_version, |old, new| {
                let deleted = old
                    .keys()
                    .filter(|key| !new.contains(key))
                    .map(|key| crate::DeletedFinalStateUnknown {
                        key: key.clone(),
                        obj: old.get(key),
                    })
                    .collect();
                let replaced = new.iter().map(|(key, obj)| (old.get(key), obj)).collect();
                ReplaceChanges { deleted, replaced }
            })?;
        self.record_size();
        Ok(changes)
    }

    /// Records a bookmark's resource version as the cache's last synced one
    /// (client-go's `Bookmark`).
    pub fn bookmark(&self, resource_version: &str) {
        self.store.bookmark(resource_version);
    }

    /// Deletes the object under `key`, if any.
    pub fn delete_by_key(&self, key: &str) -> Result<()> {
        self.store.delete(key)?;
        self.record_size();
        Ok(())
    }

    /// The object stored under `obj`'s key.
    pub fn get(&self, obj: &K) -> Result<Option<Arc<K>>> {
        Ok(self.store.get(self.stored_key(obj)?.as_str()))
    }

    /// The object stored under `key`.
    pub fn get_by_key(&self, key: &str) -> Option<Arc<K>> {
        self.store.get(key)
    }

    /// Every object, as a shared snapshot (see [`Objects`]).
    pub fn list(&self) -> Objects<K> {
        self.store.list()
    }

    /// Every key.
    pub fn list_keys(&self) -> Vec<ObjectKey> {
        self.store.list_keys()
    }

    /// The number of objects.
    pub fn len(&self) -> usize {
        self.store.len()
    }

    /// Whether the cache is empty.
    pub fn is_empty(&self) -> bool {
        self.store.len() == 0
    }

    /// Replaces the whole content with `list` (indices are rebuilt). On
    /// error (a key or index function failing) the cache is unchanged.
    pub fn replace(&self, list: Vec<Arc<K>>, resource_version: &str) -> Result<()> {
        let items = list
            .into_iter()
            .map(|obj| Ok((self.stored_key(&obj)?, obj)));
        self.store
            .replace_with(items, resource_version, |_, _| ())?;
        self.record_size();
        Ok(())
    }

    /// See [`Indexer::index`].
    pub fn index(&self, index_name: &str, obj: &K) -> Result<Objects<K>> {
        self.store.index(index_name, obj)
    }

    /// See [`Indexer::index_keys`].
    pub fn index_keys(&self, index_name: &str, indexed_value: &str) -> Result<Vec<ObjectKey>> {
        self.store.index_keys(index_name, indexed_value)
    }

    /// See [`Indexer::list_index_func_values`].
    pub fn list_index_func_values(&self, index_name: &str) -> Vec<Arc<str>> {
        self.store.list_index_func_values(index_name)
    }

    /// See [`Indexer::by_index`].
    pub fn by_index(&self, index_name: &str, indexed_value: &str) -> Result<Objects<K>> {
        self.store.by_index(index_name, indexed_value)
    }

    /// See [`Indexer::get_indexers`].
    pub fn get_indexers(&self) -> Indexers<K> {
        self.store.get_indexers()
    }

    /// See [`Indexer::add_indexers`].
    pub fn add_indexers(&self, indexers: Indexers<K>) -> Result<()> {
        self.store.add_indexers(indexers)
    }
}

impl<K: Resource + Send + Sync + 'static> Store<K> for Cache<K> {
    type Item = Arc<K>;

    fn add(&self, obj: Arc<K>) -> Result<()> {
        Cache::add(self, obj)
    }
    fn update(&self, obj: Arc<K>) -> Result<()> {
        Cache::update(self, obj)
    }
    fn delete(&self, obj: DeltaObject<K>) -> Result<()> {
        Cache::delete(self, obj)
    }
    fn list(&self) -> Objects<K> {
        Cache::list(self)
    }
    fn list_keys(&self) -> Vec<ObjectKey> {
        Cache::list_keys(self)
    }
    fn get(&self, obj: &K) -> Result<Option<Arc<K>>> {
        Cache::get(self, obj)
    }
    fn get_by_key(&self, key: &str) -> Option<Arc<K>> {
        Cache::get_by_key(self, key)
    }
    fn replace(&self, list: Vec<Arc<K>>, resource_version: &str) -> Result<()> {
        Cache::replace(self, list, resource_version)
    }
    fn resync(&self) -> Result<()> {
        Ok(())
    }
}

impl<K: Resource + Send + Sync + 'static> Indexer<K> for Cache<K> {
    fn index(&self, index_name: &str, obj: &K) -> Result<Objects<K>> {
        Cache::index(self, index_name, obj)
    }
    fn index_keys(&self, index_name: &str, indexed_value: &str) -> Result<Vec<ObjectKey>> {
        Cache::index_keys(self, index_name, indexed_value)
    }
    fn list_index_func_values(&self, index_name: &str) -> Vec<Arc<str>> {
        Cache::list_index_func_values(self, index_name)
    }
    fn by_index(&self, index_name: &str, indexed_value: &str) -> Result<Objects<K>> {
        Cache::by_index(self, index_name, indexed_value)
    }
    fn get_indexers(&self) -> Indexers<K> {
        Cache::get_indexers(self)
    }
    fn add_indexers(&self, indexers: Indexers<K>) -> Result<()> {
        Cache::add_indexers(self, indexers)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::delta_fifo::DeletedFinalStateUnknown;
    use crate::test_util::{cm, version};
    use crate::test_util::{in_mode, store_contract};
    use k8s_openapi::api::core::v1::ConfigMap;

    #[test]
    fn meta_namespace_key_func_should_join_namespace_and_name() {
        assert_eq!(
            &*meta_namespace_key_func(&*cm("ns", "a", 0)).unwrap(),
            "ns/a"
        );
    }

    #[test]
    fn meta_namespace_key_func_should_use_the_name_alone_for_a_cluster_scoped_object() {
        assert_eq!(
            &*meta_namespace_key_func(&*cm("", "node-1", 0)).unwrap(),
            "node-1"
        );
    }

    store_contract! {
        fn upsert_should_return_the_object_it_replaced() {
            let cache = in_mode(Cache::<ConfigMap>::with_namespace_index());
            assert!(cache.upsert(cm("ns", "a", 1)).unwrap().is_none());
            let old = cache.upsert(cm("ns", "a", 2)).unwrap().expect("replaced");
            assert_eq!(version(&old), 1);
            assert_eq!(version(&cache.get_by_key("ns/a").unwrap()), 2);
            assert_eq!(cache.by_index(NAMESPACE_INDEX, "ns").unwrap().len(), 1);
            assert_eq!(cache.len(), 1);
        }
    }

    store_contract! {
        fn a_cache_should_use_its_own_key_function() {
            // Keyed by name alone: the same name in two namespaces is one object.
            let cache = in_mode(Cache::new(
                |cm: &ConfigMap| Ok(ObjectKey::from(cm.metadata.name.as_deref().unwrap_or(""))),
                Indexers::default(),
            ));
            cache.add(cm("ns1", "a", 1)).unwrap();
            cache.update(cm("ns2", "a", 2)).unwrap();
            assert_eq!(cache.len(), 1);
            assert_eq!(cache.list_keys(), vec![ObjectKey::from("a")]);
            assert_eq!(version(&cache.get_by_key("a").unwrap()), 2);
            assert!(cache.get(&*cm("ns3", "a", 0)).unwrap().is_some());
            cache
                .delete(DeltaObject::Object(cm("ns9", "a", 0)))
                .unwrap();
            assert!(cache.is_empty());
        }
    }

    store_contract! {
        fn an_index_function_may_compute_keys_while_the_cache_stores_one() {
            // The cache builds its key in a per-thread buffer; a key function
            // called from inside an index function must not disturb it.
            let mut indexers = Indexers::default();
            indexers.insert(
                "key".to_owned(),
                crate::index::index_func(|cm: &ConfigMap| {
                    vec![
                        meta_namespace_key_func(cm)
                            .map(|k| k.to_string())
                            .unwrap_or_default(),
                    ]
                }),
            );
            let cache = in_mode(Cache::new(meta_namespace_key_func::<ConfigMap>, indexers));
            cache.add(cm("ns", "a", 1)).unwrap();
            cache.update(cm("ns", "a", 2)).unwrap();
            cache.add(cm("", "cluster-wide", 1)).unwrap();
            let mut keys = cache.list_keys();
            keys.sort();
            assert_eq!(
                keys,
                vec![ObjectKey::from("cluster-wide"), ObjectKey::from("ns/a")]
            );
            assert_eq!(version(&cache.by_index("key", "ns/a").unwrap()[0]), 2);
            assert_eq!(cache.by_index("key", "cluster-wide").unwrap().len(), 1);
            cache.delete(DeltaObject::Object(cm("ns", "a", 0))).unwrap();
            assert!(cache.get_by_key("ns/a").is_none());
            assert!(cache.by_index("key", "ns/a").unwrap().is_empty());
        }
    }

    #[test]
    fn meta_namespace_key_func_should_refuse_an_object_without_a_name() {
        let nameless = ConfigMap::default();
        assert!(matches!(
            meta_namespace_key_func(&nameless),
            Err(Error::ObjectHasNoName)
        ));
        let mut empty = ConfigMap::default();
        empty.metadata.name = Some(String::new());
        assert!(matches!(
            meta_namespace_key_func(&empty),
            Err(Error::ObjectHasNoName)
        ));
    }

    #[test]
    fn split_meta_namespace_key_should_split_namespaced_and_cluster_keys() {
        assert_eq!(split_meta_namespace_key("ns/a").unwrap(), (Some("ns"), "a"));
        assert_eq!(split_meta_namespace_key("a").unwrap(), (None, "a"));
    }

    #[test]
    fn split_meta_namespace_key_should_accept_every_form_client_go_accepts() {
        assert_eq!(split_meta_namespace_key("/b").unwrap(), (None, "b"));
        assert_eq!(split_meta_namespace_key("a/").unwrap(), (Some("a"), ""));
        assert_eq!(split_meta_namespace_key("").unwrap(), (None, ""));
        assert_eq!(split_meta_namespace_key("/").unwrap(), (None, ""));
    }

    #[test]
    fn split_meta_namespace_key_should_reject_malformed_keys() {
        for key in ["a/b/c", "//"] {
            let err = split_meta_namespace_key(key).unwrap_err();
            assert!(
                matches!(err, Error::InvalidKey { .. }),
                "{key:?} gave {err:?}"
            );
            assert!(err.to_string().contains(&format!("{key:?}")));
        }
    }

    #[test]
    fn deletion_handling_key_func_should_use_the_tombstone_key() {
        let tombstone: DeltaObject<ConfigMap> = DeletedFinalStateUnknown {
            key: Arc::from("ns/gone"),
            obj: None,
        }
        .into();
        assert_eq!(
            &*deletion_handling_meta_namespace_key_func(&tombstone).unwrap(),
            "ns/gone"
        );
        let obj: DeltaObject<ConfigMap> = cm("ns", "a", 0).into();
        assert_eq!(
            &*deletion_handling_meta_namespace_key_func(&obj).unwrap(),
            "ns/a"
        );
    }

    store_contract! {
        fn cache_should_delete_a_tombstone_by_its_key() {
            let cache = in_mode(Cache::<ConfigMap>::with_namespace_index());
            cache.add(cm("ns", "a", 1)).unwrap();
            cache
                .delete(
                    DeletedFinalStateUnknown {
                        key: Arc::from("ns/a"),
                        obj: None,
                    }
                    .into(),
                )
                .unwrap();
            assert!(cache.is_empty());
            assert!(cache.list_index_func_values(NAMESPACE_INDEX).is_empty());
        }
    }

    store_contract! {
        fn cache_should_add_update_get_and_list_by_key() {
            let cache = in_mode(Cache::<ConfigMap>::default());
            cache.add(cm("ns", "a", 1)).unwrap();
            cache.update(cm("ns", "a", 2)).unwrap();
            cache.add(cm("", "b", 1)).unwrap();
            assert_eq!(version(&cache.get_by_key("ns/a").unwrap()), 2);
            assert_eq!(version(&cache.get(&cm("ns", "a", 0)).unwrap().unwrap()), 2);
            let mut keys: Vec<String> = cache.list_keys().iter().map(|k| k.to_string()).collect();
            keys.sort();
            assert_eq!(keys, ["b", "ns/a"]);
            assert_eq!(cache.list().len(), 2);
            cache.delete(cm("ns", "a", 0).into()).unwrap();
            assert!(cache.get_by_key("ns/a").is_none());
        }
    }

    store_contract! {
        fn cache_replace_should_rebuild_items_and_indices() {
            let cache = in_mode(Cache::<ConfigMap>::with_namespace_index());
            cache.add(cm("old", "a", 1)).unwrap();
            cache
                .replace(vec![cm("new", "b", 1), cm("new", "c", 1)], "7")
                .unwrap();
            assert!(cache.get_by_key("old/a").is_none());
            assert_eq!(cache.by_index(NAMESPACE_INDEX, "new").unwrap().len(), 2);
            assert!(cache.by_index(NAMESPACE_INDEX, "old").unwrap().is_empty());
            assert_eq!(
                cache.list_index_func_values(NAMESPACE_INDEX),
                vec![Arc::<str>::from("new")]
            );
        }
    }

    store_contract! {
        fn cache_should_refuse_an_object_without_a_name_and_stay_unchanged() {
            let cache = in_mode(Cache::<ConfigMap>::default());
            assert!(matches!(
                cache.add(Arc::new(ConfigMap::default())),
                Err(Error::ObjectHasNoName)
            ));
            cache.add(cm("ns", "a", 1)).unwrap();
            let err = cache.replace(vec![cm("ns", "b", 1), Arc::new(ConfigMap::default())], "1");
            assert!(err.is_err());
            assert!(cache.get_by_key("ns/a").is_some());
        }
    }

    #[cfg(feature = "metrics")]
    #[test]
    fn a_named_cache_should_record_its_size() {
        let cache = in_mode(Cache::<ConfigMap>::default()).named("kcr-cache-test-size");
        cache.add(cm("ns", "a", 1)).unwrap();
        cache.add(cm("ns", "b", 1)).unwrap();
        cache.delete(cm("ns", "a", 1).into()).unwrap();
        let text = kcr_metrics::encode_text(kcr_metrics::registry()).unwrap();
        assert!(
            text.contains(r#"cache_store_objects{name="kcr-cache-test-size"} 1"#),
            "{text}"
        );
    }

    store_contract! {
        fn an_arc_of_a_dyn_indexer_should_serve_as_known_objects() {
            let cache: Arc<dyn Indexer<ConfigMap>> = Arc::new(in_mode(Cache::with_namespace_index()));
            cache.add(cm("ns", "a", 1)).unwrap();
            let known: Arc<dyn KeyListerGetter<ConfigMap>> = Arc::new(cache.clone());
            assert_eq!(known.list_keys(), vec![Arc::<str>::from("ns/a")]);
            assert!(known.get_by_key("ns/a").is_some());
        }
    }

    fn with_rv(ns: &str, name: &str, v: u32, rv: &str) -> Arc<ConfigMap> {
        let mut obj = Arc::unwrap_or_clone(cm(ns, name, v));
        obj.metadata.resource_version = Some(rv.to_owned());
        Arc::new(obj)
    }

    store_contract! {
        fn a_transaction_should_apply_every_write_and_report_what_each_replaced() {
            let cache = in_mode(Cache::<ConfigMap>::with_namespace_index());
            cache.add(with_rv("ns", "a", 1, "10")).unwrap();
            cache.add(with_rv("ns", "gone", 1, "11")).unwrap();
            let results = cache.transaction(vec![
                Transaction::new(TransactionType::Update, with_rv("ns", "a", 2, "12")),
                Transaction::new(TransactionType::Add, with_rv("other", "b", 1, "13")),
                Transaction::new(TransactionType::Delete, ExplicitKey::new("ns/gone")),
                Transaction::new(TransactionType::Add, Arc::new(ConfigMap::default())),
                Transaction::new(TransactionType::Add, with_rv("ns", "c", 1, "14")),
            ]);
            assert_eq!(results.len(), 5);
            assert_eq!(
                results[0].as_ref().unwrap().as_deref().map(version),
                Some(1)
            );
            assert!(results[1].as_ref().unwrap().is_none());
            assert_eq!(
                results[2].as_ref().unwrap().as_deref().map(version),
                Some(1)
            );
            assert!(matches!(results[3], Err(Error::ObjectHasNoName)));
            assert!(results[4].as_ref().unwrap().is_none());
            let mut keys: Vec<String> = cache.list_keys().iter().map(|k| k.to_string()).collect();
            keys.sort();
            assert_eq!(keys, ["ns/a", "ns/c", "other/b"]);
            assert_eq!(cache.by_index(NAMESPACE_INDEX, "ns").unwrap().len(), 2);
            assert_eq!(cache.by_index(NAMESPACE_INDEX, "other").unwrap().len(), 1);
            assert_eq!(cache.len(), 3);
            cache.thread_safe_store().check_indices().unwrap();
            // The last write's object sets the resource version.
            assert_eq!(cache.last_store_sync_resource_version(), "14");
        }
    }

    store_contract! {
        fn a_transaction_ending_in_a_tombstone_should_keep_the_resource_version() {
            let cache = in_mode(Cache::<ConfigMap>::with_namespace_index());
            cache
                .replace(vec![with_rv("ns", "a", 1, "5")], "20")
                .unwrap();
            let _ = cache.transaction(vec![
                Transaction::new(TransactionType::Add, with_rv("ns", "b", 1, "21")),
                Transaction::new(TransactionType::Delete, ExplicitKey::new("ns/a")),
            ]);
            assert_eq!(cache.last_store_sync_resource_version(), "20");
            assert!(cache.get_by_key("ns/a").is_none());
        }
    }

    store_contract! {
        fn the_store_should_remember_the_resource_version_of_its_last_sync() {
            let cache = in_mode(Cache::<ConfigMap>::with_namespace_index());
            assert_eq!(cache.last_store_sync_resource_version(), "");
            cache
                .replace(vec![with_rv("ns", "a", 1, "5")], "100")
                .unwrap();
            assert_eq!(cache.last_store_sync_resource_version(), "100");
            cache.update(with_rv("ns", "a", 2, "101")).unwrap();
            assert_eq!(cache.last_store_sync_resource_version(), "101");
            cache.delete(with_rv("ns", "a", 2, "102").into()).unwrap();
            assert_eq!(cache.last_store_sync_resource_version(), "102");
            cache.delete(ExplicitKey::new("ns/x").into()).unwrap();
            assert_eq!(cache.last_store_sync_resource_version(), "102");
            cache.bookmark("150");
            assert_eq!(cache.last_store_sync_resource_version(), "150");
        }
    }

    store_contract! {
        fn replace_with_changes_should_report_deletions_and_the_objects_replaced() {
            let cache = in_mode(Cache::<ConfigMap>::with_namespace_index());
            cache.add(cm("ns", "kept", 1)).unwrap();
            cache.add(cm("ns", "gone", 1)).unwrap();
            let changes = cache
                .replace_with_changes(vec![cm("ns", "kept", 2), cm("ns", "new", 1)], "9")
                .unwrap();
            assert_eq!(changes.deleted.len(), 1);
            assert_eq!(&*changes.deleted[0].key, "ns/gone");
            assert_eq!(changes.deleted[0].obj.as_deref().map(version), Some(1));
            let replaced: Vec<(Option<u32>, u32)> = changes
                .replaced
                .iter()
                .map(|(old, new)| (old.as_deref().map(version), version(new)))
                .collect();
            assert_eq!(replaced, [(Some(1), 2), (None, 1)]);
            assert_eq!(cache.len(), 2);
            assert_eq!(cache.last_store_sync_resource_version(), "9");
        }
    }

    store_contract! {
        fn an_explicit_key_should_delete_by_key() {
            let cache = in_mode(Cache::<ConfigMap>::with_namespace_index());
            cache.add(cm("ns", "a", 1)).unwrap();
            cache.delete(ExplicitKey::new("ns/a").into()).unwrap();
            assert!(cache.is_empty());
            assert_eq!(ExplicitKey::new("ns/a").to_string(), "ns/a");
        }
    }
}
