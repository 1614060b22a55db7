//! [`IndexedStore`]: the indexed store an informer keeps its objects in
//! (client-go's `cache` struct from `NewIndexer`, in `store.go`).

use std::sync::Arc;

use kube_core::Resource;

use crate::delta::{DeletedFinalStateUnknown, DeltaObject};
use crate::error::{Error, Result};
use crate::index::{Indexer, Indexers, NAMESPACE_INDEX, meta_namespace_index_func};
use crate::key::{KeyBuffer, KeyFunc, ObjectKey, Objects, meta_namespace_key_func};
use crate::store::Store;
use crate::thread_safe_store::{KeyIn, ThreadSafeStore, TransactionResults, TransactionType};

/// What [`IndexedStore::replace_with_changes`] changed: the deletions it detected
/// and, per listed key in list order, the object it replaced.
pub struct ReplaceChanges<K> {
    /// A tombstone for every key the list lacked.
    pub deleted: Vec<DeletedFinalStateUnknown<K>>,
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

/// One write of an [`IndexedStore::transaction`] (client-go's `Transaction`): the
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
/// there by `NewStore` / `NewIndexer`, which implements [`Store`] and
/// [`Indexer`]. The informer keeps its objects in one.
///
/// Not called `Cache`: that word already names this crate (client-go's
/// `tools/cache`), and, in kcr-controller-manager, the manager's informers.
///
/// Objects are held as `Arc<K>`: adding, indexing and listing never clone a
/// `K`.
pub struct IndexedStore<K> {
    store: ThreadSafeStore<K>,
    key_func: KeyFunc<K>,
    /// `key_func` is [`meta_namespace_key_func`]: keys are built in a
    /// reused buffer and allocated only for objects new to the store.
    meta_namespace_keys: bool,
    size_gauge: crate::metrics::Gauge,
}

impl<K> std::fmt::Debug for IndexedStore<K> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("IndexedStore")
            .field("store", &self.store)
            .finish_non_exhaustive()
    }
}

impl<K: Resource + Send + Sync + 'static> Default for IndexedStore<K> {
    fn default() -> Self {
        Self::new(meta_namespace_key_func::<K>, Indexers::default())
    }
}

impl<K: Resource + Send + Sync + 'static> IndexedStore<K> {
    /// A cache keyed by `key_func` with the given indexers (client-go's
    /// `NewIndexer`; `NewStore` is `IndexedStore::new(key_func, Indexers::default())`).
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
    /// use kcr_cache::{IndexedStore, Indexer, NAMESPACE_INDEX, Store};
    ///
    /// let cache = IndexedStore::<ConfigMap>::namespace_indexed().compact();
    /// let mut cm = ConfigMap::default();
    /// cm.metadata.namespace = Some("ns".into());
    /// cm.metadata.name = Some("a".into());
    /// cache.add(Arc::new(cm.clone())).unwrap();
    /// assert_eq!(*cache.get_by_key("ns/a").unwrap(), cm);
    /// assert_eq!(cache.by_index(NAMESPACE_INDEX, "ns").unwrap().len(), 1);
    /// ```
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

    /// A store keyed by [`meta_namespace_key_func`] with the `"namespace"`
    /// index ([`meta_namespace_index_func`]), what informers use by default.
    pub fn namespace_indexed() -> Self {
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

    /// Updates an object under its key (the same as [`IndexedStore::add`]).
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

    /// Deletes the object under its key; deleting an absent key is not an
    /// error. A [`DeletedFinalStateUnknown`] tombstone is deleted by its key
    /// ([`delete_by_key`](Self::delete_by_key)).
    pub fn delete(&self, obj: Arc<K>) -> Result<()> {
        let key = self.stored_key(&obj)?;
        self.store.delete_with_object(key.as_str(), obj);
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
    /// [`DeletedFinalStateUnknown`](DeletedFinalStateUnknown)
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
                    .map(|key| DeletedFinalStateUnknown {
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

    /// Deletes the object under `key`, if any: how a
    /// [`DeletedFinalStateUnknown`] tombstone (or an
    /// [`ExplicitKey`](crate::ExplicitKey)) is deleted.
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

impl<K: Resource + Send + Sync + 'static> Store<K> for IndexedStore<K> {
    type Item = Arc<K>;

    fn add(&self, obj: Arc<K>) -> Result<()> {
        IndexedStore::add(self, obj)
    }
    fn update(&self, obj: Arc<K>) -> Result<()> {
        IndexedStore::update(self, obj)
    }
    fn delete(&self, obj: Arc<K>) -> Result<()> {
        IndexedStore::delete(self, obj)
    }
    fn list(&self) -> Objects<K> {
        IndexedStore::list(self)
    }
    fn list_keys(&self) -> Vec<ObjectKey> {
        IndexedStore::list_keys(self)
    }
    fn get(&self, obj: &K) -> Result<Option<Arc<K>>> {
        IndexedStore::get(self, obj)
    }
    fn get_by_key(&self, key: &str) -> Option<Arc<K>> {
        IndexedStore::get_by_key(self, key)
    }
    fn replace(&self, list: Vec<Arc<K>>, resource_version: &str) -> Result<()> {
        IndexedStore::replace(self, list, resource_version)
    }
    fn resync(&self) -> Result<()> {
        Ok(())
    }
}

impl<K: Resource + Send + Sync + 'static> Indexer<K> for IndexedStore<K> {
    fn index(&self, index_name: &str, obj: &K) -> Result<Objects<K>> {
        IndexedStore::index(self, index_name, obj)
    }
    fn index_keys(&self, index_name: &str, indexed_value: &str) -> Result<Vec<ObjectKey>> {
        IndexedStore::index_keys(self, index_name, indexed_value)
    }
    fn list_index_func_values(&self, index_name: &str) -> Vec<Arc<str>> {
        IndexedStore::list_index_func_values(self, index_name)
    }
    fn by_index(&self, index_name: &str, indexed_value: &str) -> Result<Objects<K>> {
        IndexedStore::by_index(self, index_name, indexed_value)
    }
    fn get_indexers(&self) -> Indexers<K> {
        IndexedStore::get_indexers(self)
    }
    fn add_indexers(&self, indexers: Indexers<K>) -> Result<()> {
        IndexedStore::add_indexers(self, indexers)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::key::ExplicitKey;
    use crate::store::KeyListerGetter;
    use crate::test_util::{cm, version};
    use crate::test_util::{in_mode, store_contract};
    use k8s_openapi::api::core::v1::ConfigMap;

    store_contract! {
        fn upsert_should_return_the_object_it_replaced() {
            let cache = in_mode(IndexedStore::<ConfigMap>::namespace_indexed());
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
            let cache = in_mode(IndexedStore::new(
                |cm: &ConfigMap| Ok(ObjectKey::from(cm.metadata.name.as_deref().unwrap_or(""))),
                Indexers::default(),
            ));
            cache.add(cm("ns1", "a", 1)).unwrap();
            cache.update(cm("ns2", "a", 2)).unwrap();
            assert_eq!(cache.len(), 1);
            assert_eq!(cache.list_keys(), vec![ObjectKey::from("a")]);
            assert_eq!(version(&cache.get_by_key("a").unwrap()), 2);
            assert!(cache.get(&*cm("ns3", "a", 0)).unwrap().is_some());
            cache.delete(cm("ns9", "a", 0)).unwrap();
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
            let cache = in_mode(IndexedStore::new(meta_namespace_key_func::<ConfigMap>, indexers));
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
            cache.delete(cm("ns", "a", 0)).unwrap();
            assert!(cache.get_by_key("ns/a").is_none());
            assert!(cache.by_index("key", "ns/a").unwrap().is_empty());
        }
    }

    store_contract! {
        fn cache_should_delete_a_tombstone_by_its_key() {
            let cache = in_mode(IndexedStore::<ConfigMap>::namespace_indexed());
            cache.add(cm("ns", "a", 1)).unwrap();
            let tombstone = DeletedFinalStateUnknown::<ConfigMap> {
                key: Arc::from("ns/a"),
                obj: None,
            };
            cache.delete_by_key(&tombstone.key).unwrap();
            assert!(cache.is_empty());
            assert!(cache.list_index_func_values(NAMESPACE_INDEX).is_empty());
        }
    }

    store_contract! {
        fn cache_should_add_update_get_and_list_by_key() {
            let cache = in_mode(IndexedStore::<ConfigMap>::default());
            cache.add(cm("ns", "a", 1)).unwrap();
            cache.update(cm("ns", "a", 2)).unwrap();
            cache.add(cm("", "b", 1)).unwrap();
            assert_eq!(version(&cache.get_by_key("ns/a").unwrap()), 2);
            assert_eq!(version(&cache.get(&cm("ns", "a", 0)).unwrap().unwrap()), 2);
            let mut keys: Vec<String> = cache.list_keys().iter().map(|k| k.to_string()).collect();
            keys.sort();
            assert_eq!(keys, ["b", "ns/a"]);
            assert_eq!(cache.list().len(), 2);
            cache.delete(cm("ns", "a", 0)).unwrap();
            assert!(cache.get_by_key("ns/a").is_none());
        }
    }

    store_contract! {
        fn cache_replace_should_rebuild_items_and_indices() {
            let cache = in_mode(IndexedStore::<ConfigMap>::namespace_indexed());
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
            let cache = in_mode(IndexedStore::<ConfigMap>::default());
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
        let cache = in_mode(IndexedStore::<ConfigMap>::default()).named("kcr-cache-test-size");
        cache.add(cm("ns", "a", 1)).unwrap();
        cache.add(cm("ns", "b", 1)).unwrap();
        cache.delete(cm("ns", "a", 1)).unwrap();
        let text = kcr_metrics::encode_text(kcr_metrics::registry()).unwrap();
        assert!(
            text.contains(r#"cache_store_objects{name="kcr-cache-test-size"} 1"#),
            "{text}"
        );
    }

    store_contract! {
        fn an_arc_of_a_dyn_indexer_should_serve_as_known_objects() {
            let cache: Arc<dyn Indexer<ConfigMap>> = Arc::new(in_mode(IndexedStore::namespace_indexed()));
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
            let cache = in_mode(IndexedStore::<ConfigMap>::namespace_indexed());
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
            let cache = in_mode(IndexedStore::<ConfigMap>::namespace_indexed());
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
            let cache = in_mode(IndexedStore::<ConfigMap>::namespace_indexed());
            assert_eq!(cache.last_store_sync_resource_version(), "");
            cache
                .replace(vec![with_rv("ns", "a", 1, "5")], "100")
                .unwrap();
            assert_eq!(cache.last_store_sync_resource_version(), "100");
            cache.update(with_rv("ns", "a", 2, "101")).unwrap();
            assert_eq!(cache.last_store_sync_resource_version(), "101");
            cache.delete(with_rv("ns", "a", 2, "102")).unwrap();
            assert_eq!(cache.last_store_sync_resource_version(), "102");
            cache.delete_by_key(ExplicitKey::new("ns/x").key()).unwrap();
            assert_eq!(cache.last_store_sync_resource_version(), "102");
            cache.bookmark("150");
            assert_eq!(cache.last_store_sync_resource_version(), "150");
        }
    }

    store_contract! {
        fn replace_with_changes_should_report_deletions_and_the_objects_replaced() {
            let cache = in_mode(IndexedStore::<ConfigMap>::namespace_indexed());
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
            let cache = in_mode(IndexedStore::<ConfigMap>::namespace_indexed());
            cache.add(cm("ns", "a", 1)).unwrap();
            cache.delete_by_key(ExplicitKey::new("ns/a").key()).unwrap();
            assert!(cache.is_empty());
            assert_eq!(ExplicitKey::new("ns/a").to_string(), "ns/a");
        }
    }
}
