//! [`ThreadSafeStore`]: objects by key plus their indices, under one lock
//! (client-go's `thread_safe_store.go`).

use std::collections::HashMap;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::{Arc, OnceLock};

use parking_lot::RwLock;

use crate::error::{Error, Result};
use crate::index::{IndexFunc, IndexValues, Indexers};
use crate::store::{ObjectKey, Objects};

type Hasher = foldhash::fast::RandomState;
type Map<Key, V> = HashMap<Key, V, Hasher>;

/// One index: value → bucket of (key → object).
type IndexMap<K> = Map<Arc<str>, Bucket<K>>;

/// The keys (with their objects) under one index value. Keeping the object
/// beside its key makes `by_index` need no lookup in the item map; the
/// snapshot makes repeated `by_index` calls on an unchanged value O(1).
struct Bucket<K> {
    members: Map<ObjectKey, Arc<K>>,
    /// What `by_index` last handed out; reset by every change to `members`.
    snapshot: OnceLock<Objects<K>>,
}

impl<K> Bucket<K> {
    fn new() -> Self {
        Self {
            members: Map::default(),
            snapshot: OnceLock::new(),
        }
    }

    fn changed(&mut self) {
        self.snapshot.take();
    }

    fn snapshot(&self) -> Objects<K> {
        self.snapshot
            .get_or_init(|| self.members.values().cloned().collect())
            .clone()
    }
}

/// A registered index function and the index it maintains.
struct IndexEntry<K> {
    name: String,
    func: IndexFunc<K>,
    index: IndexMap<K>,
}

struct Inner<K> {
    items: Map<ObjectKey, Arc<K>>,
    /// What `list` last handed out; reset by every change to `items`.
    list_snapshot: OnceLock<Objects<K>>,
    /// Few entries (one per index name): a vector beats a map here.
    indices: Vec<IndexEntry<K>>,
}

/// Objects by key plus their indices, under one lock (client-go's
/// `ThreadSafeStore` / `threadSafeMap`).
///
/// * `Indexers`: index name → [`IndexFunc`] returning zero or more values.
/// * `Indices`: index name → value → set of keys (here each key carries its
///   object, so [`by_index`](Self::by_index) needs no second lookup).
///
/// Invariants: after every operation each index holds exactly the values its
/// function computes for the stored objects (an update removes the old
/// object's entries before adding the new ones), and no index value maps to
/// an empty set. If an index function fails (or panics) the operation
/// returns an error and the store is unchanged.
pub struct ThreadSafeStore<K> {
    // A parking_lot lock: every method is synchronous and short, and none is
    // held across an `.await`, so it is safe to use from async code.
    inner: RwLock<Inner<K>>,
}

impl<K> std::fmt::Debug for ThreadSafeStore<K> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let inner = self.inner.read();
        f.debug_struct("ThreadSafeStore")
            .field("len", &inner.items.len())
            .field(
                "indices",
                &inner
                    .indices
                    .iter()
                    .map(|e| e.name.as_str())
                    .collect::<Vec<_>>(),
            )
            .finish()
    }
}

fn call_index_func<'a, K>(
    name: &str,
    func: &IndexFunc<K>,
    obj: &'a K,
    key: &str,
) -> Result<IndexValues<'a>> {
    match catch_unwind(AssertUnwindSafe(|| func(obj))) {
        Ok(Ok(values)) => Ok(values),
        Ok(Err(source)) => Err(Error::IndexFunc {
            name: name.to_owned(),
            key: key.to_owned(),
            source,
        }),
        Err(panic) => Err(Error::IndexFunc {
            name: name.to_owned(),
            key: key.to_owned(),
            source: format!("index function panicked: {}", panic_message(panic.as_ref())).into(),
        }),
    }
}

pub(crate) fn panic_message(panic: &(dyn std::any::Any + Send)) -> String {
    if let Some(s) = panic.downcast_ref::<&str>() {
        (*s).to_owned()
    } else if let Some(s) = panic.downcast_ref::<String>() {
        s.clone()
    } else {
        "non-string panic payload".to_owned()
    }
}

fn remove_from_index<K>(index: &mut IndexMap<K>, value: &str, key: &str) {
    if let Some(bucket) = index.get_mut(value) {
        bucket.members.remove(key);
        bucket.changed();
        if bucket.members.is_empty() {
            index.remove(value);
        }
    }
}

/// Moves `key` from the `old_values` entries to the `new_values` ones: old
/// entries are removed first (dropping emptied values), then the new object
/// is stored under every new value.
fn update_index<K>(
    index: &mut IndexMap<K>,
    key: &ObjectKey,
    obj: &Arc<K>,
    old_values: &[std::borrow::Cow<'_, str>],
    new_values: &[std::borrow::Cow<'_, str>],
) {
    for value in old_values {
        if !new_values.contains(value) {
            remove_from_index(index, value, key);
        }
    }
    for value in new_values {
        insert_into_index(index, value, key, obj);
    }
}

fn insert_into_index<K>(index: &mut IndexMap<K>, value: &str, key: &ObjectKey, obj: &Arc<K>) {
    if let Some(bucket) = index.get_mut(value) {
        match bucket.members.get_mut(&**key) {
            Some(slot) => *slot = obj.clone(),
            None => {
                bucket.members.insert(key.clone(), obj.clone());
            }
        }
        bucket.changed();
    } else {
        let mut bucket = Bucket::new();
        bucket.members.insert(key.clone(), obj.clone());
        index.insert(Arc::from(value), bucket);
    }
}

impl<K> Inner<K> {
    fn put(&mut self, key: ObjectKey, obj: Arc<K>) -> Result<()> {
        self.list_snapshot.take();
        if self.indices.is_empty() {
            self.items.insert(key, obj);
            return Ok(());
        }
        // Reuse the key allocation already shared by the item map and indices.
        let (key, old) = match self.items.get_key_value(&*key) {
            Some((k, old)) => (k.clone(), Some(old.clone())),
            None => (key, None),
        };
        // Compute every value first, so a failing index function leaves the
        // store untouched.
        if let [entry] = self.indices.as_mut_slice() {
            // The common case (one index, usually by namespace): no buffer.
            let new_values = call_index_func(&entry.name, &entry.func, &*obj, &key)?;
            let old_values = match &old {
                Some(old) => call_index_func(&entry.name, &entry.func, &**old, &key)?,
                None => IndexValues::new(),
            };
            update_index(&mut entry.index, &key, &obj, &old_values, &new_values);
        } else {
            let mut computed: Vec<(IndexValues<'_>, IndexValues<'_>)> =
                Vec::with_capacity(self.indices.len());
            for entry in &self.indices {
                let new_values = call_index_func(&entry.name, &entry.func, &*obj, &key)?;
                let old_values = match &old {
                    Some(old) => call_index_func(&entry.name, &entry.func, &**old, &key)?,
                    None => IndexValues::new(),
                };
                computed.push((old_values, new_values));
            }
            for (entry, (old_values, new_values)) in self.indices.iter_mut().zip(&computed) {
                update_index(&mut entry.index, &key, &obj, old_values, new_values);
            }
        }
        match self.items.get_mut(&*key) {
            Some(slot) => *slot = obj,
            None => {
                self.items.insert(key, obj);
            }
        }
        Ok(())
    }

    fn remove(&mut self, key: &str) {
        let Some((key, old)) = self.items.remove_entry(key) else {
            return;
        };
        self.list_snapshot.take();
        for IndexEntry { name, func, index } in &mut self.indices {
            match call_index_func(name, func, &*old, &key) {
                Ok(values) => {
                    for value in &values {
                        remove_from_index(index, value, &key);
                    }
                }
                // The function cannot say where the object was indexed:
                // sweep the whole index so nothing stale is left behind.
                Err(_) => index.retain(|_, bucket| {
                    if bucket.members.remove(&*key).is_some() {
                        bucket.changed();
                    }
                    !bucket.members.is_empty()
                }),
            }
        }
    }

    fn build_index(&self, name: &str, func: &IndexFunc<K>) -> Result<IndexMap<K>> {
        let mut index = IndexMap::default();
        for (key, obj) in &self.items {
            for value in &call_index_func(name, func, &**obj, key)? {
                insert_into_index(&mut index, value, key, obj);
            }
        }
        Ok(index)
    }

    fn entry(&self, index_name: &str) -> Result<&IndexEntry<K>> {
        self.indices
            .iter()
            .find(|e| e.name == index_name)
            .ok_or_else(|| Error::IndexNotFound {
                name: index_name.to_owned(),
            })
    }
}

impl<K> ThreadSafeStore<K> {
    /// An empty store with the given indexers.
    pub fn new(indexers: Indexers<K>) -> Self {
        let mut indices: Vec<IndexEntry<K>> = indexers
            .into_iter()
            .map(|(name, func)| IndexEntry {
                name,
                func,
                index: IndexMap::default(),
            })
            .collect();
        indices.sort_by(|a, b| a.name.cmp(&b.name));
        Self {
            inner: RwLock::new(Inner {
                items: Map::default(),
                list_snapshot: OnceLock::new(),
                indices,
            }),
        }
    }

    /// Adds `obj` under `key`, replacing what was there (and its index
    /// entries).
    pub fn add(&self, key: ObjectKey, obj: Arc<K>) -> Result<()> {
        self.inner.write().put(key, obj)
    }

    /// Updates the object under `key`: the old object's index entries are
    /// removed before the new object's are added.
    pub fn update(&self, key: ObjectKey, obj: Arc<K>) -> Result<()> {
        self.inner.write().put(key, obj)
    }

    /// Deletes the object under `key` and its index entries; an index value
    /// left with no key is removed. Deleting an absent key does nothing.
    pub fn delete(&self, key: &str) -> Result<()> {
        self.inner.write().remove(key);
        Ok(())
    }

    /// The object under `key`.
    pub fn get(&self, key: &str) -> Option<Arc<K>> {
        self.inner.read().items.get(key).cloned()
    }

    /// Every object, in no particular order, as a shared snapshot: until
    /// the store changes, further calls return the same snapshot without
    /// copying.
    pub fn list(&self) -> Objects<K> {
        let inner = self.inner.read();
        inner
            .list_snapshot
            .get_or_init(|| inner.items.values().cloned().collect())
            .clone()
    }

    /// Every key, in no particular order.
    pub fn list_keys(&self) -> Vec<ObjectKey> {
        self.inner.read().items.keys().cloned().collect()
    }

    /// The number of objects.
    pub fn len(&self) -> usize {
        self.inner.read().items.len()
    }

    /// Whether the store is empty.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Replaces every object with `items` and rebuilds the indices. On error
    /// the store is unchanged. The resource version is accepted for
    /// client-go parity and not used.
    pub fn replace(&self, items: Vec<(ObjectKey, Arc<K>)>, _resource_version: &str) -> Result<()> {
        let mut fresh = {
            let inner = self.inner.read();
            Inner {
                items: Map::with_capacity_and_hasher(items.len(), Hasher::default()),
                list_snapshot: OnceLock::new(),
                indices: inner
                    .indices
                    .iter()
                    .map(|e| IndexEntry {
                        name: e.name.clone(),
                        func: e.func.clone(),
                        index: IndexMap::default(),
                    })
                    .collect(),
            }
        };
        for (key, obj) in items {
            fresh.put(key, obj)?;
        }
        let mut inner = self.inner.write();
        // Indexers added between the read above and now are indexed here.
        for entry in &inner.indices {
            if !fresh.indices.iter().any(|e| e.name == entry.name) {
                let index = fresh.build_index(&entry.name, &entry.func)?;
                fresh.indices.push(IndexEntry {
                    name: entry.name.clone(),
                    func: entry.func.clone(),
                    index,
                });
            }
        }
        *inner = fresh;
        Ok(())
    }

    /// The objects that share at least one `index_name` value with `obj`.
    pub fn index(&self, index_name: &str, obj: &K) -> Result<Objects<K>> {
        let inner = self.inner.read();
        let entry = inner.entry(index_name)?;
        let values = call_index_func(&entry.name, &entry.func, obj, "")?;
        match values.as_slice() {
            [] => Ok(Objects::from([])),
            [one] => Ok(entry
                .index
                .get(&**one)
                .map(Bucket::snapshot)
                .unwrap_or_else(|| Objects::from([]))),
            many => {
                let mut union: Map<&ObjectKey, &Arc<K>> = Map::default();
                for value in many {
                    if let Some(bucket) = entry.index.get(&**value) {
                        union.extend(bucket.members.iter());
                    }
                }
                Ok(union.into_values().cloned().collect())
            }
        }
    }

    /// The keys of the objects whose `index_name` values include
    /// `indexed_value`.
    pub fn index_keys(&self, index_name: &str, indexed_value: &str) -> Result<Vec<ObjectKey>> {
        let inner = self.inner.read();
        let entry = inner.entry(index_name)?;
        Ok(entry
            .index
            .get(indexed_value)
            .map(|b| b.members.keys().cloned().collect())
            .unwrap_or_default())
    }

    /// Every value present in index `index_name` (empty if there is no such
    /// index).
    pub fn list_index_func_values(&self, index_name: &str) -> Vec<Arc<str>> {
        let inner = self.inner.read();
        inner
            .entry(index_name)
            .map(|e| e.index.keys().cloned().collect())
            .unwrap_or_default()
    }

    /// The objects whose `index_name` values include `indexed_value`, as a
    /// shared snapshot: until that value's set changes, further calls
    /// return the same snapshot without copying.
    pub fn by_index(&self, index_name: &str, indexed_value: &str) -> Result<Objects<K>> {
        let inner = self.inner.read();
        let entry = inner.entry(index_name)?;
        Ok(entry
            .index
            .get(indexed_value)
            .map(Bucket::snapshot)
            .unwrap_or_else(|| Objects::from([])))
    }

    /// The registered index functions.
    pub fn get_indexers(&self) -> Indexers<K> {
        self.inner
            .read()
            .indices
            .iter()
            .map(|e| (e.name.clone(), e.func.clone()))
            .collect()
    }

    /// Registers more index functions and indexes the objects already
    /// stored. Refuses with [`Error::IndexerConflict`] (changing nothing) if
    /// a name is already registered; on an index function error nothing
    /// changes either.
    pub fn add_indexers(&self, indexers: Indexers<K>) -> Result<()> {
        let mut inner = self.inner.write();
        if let Some(name) = indexers
            .keys()
            .find(|n| inner.indices.iter().any(|e| &e.name == *n))
        {
            return Err(Error::IndexerConflict { name: name.clone() });
        }
        let mut built = Vec::with_capacity(indexers.len());
        for (name, func) in indexers {
            let index = inner.build_index(&name, &func)?;
            built.push(IndexEntry { name, func, index });
        }
        inner.indices.extend(built);
        inner.indices.sort_by(|a, b| a.name.cmp(&b.name));
        Ok(())
    }

    /// Resync is a no-op for a store (kept for client-go parity).
    pub fn resync(&self) {}

    /// Test helper: rebuilds every index from the items, from scratch, and
    /// compares it with the maintained one under a single read lock.
    #[cfg(test)]
    pub(crate) fn check_indices(&self) -> std::result::Result<(), String> {
        use std::collections::{BTreeMap, BTreeSet};
        let inner = self.inner.read();
        for entry in &inner.indices {
            let mut expected: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
            for (key, obj) in &inner.items {
                let values = call_index_func(&entry.name, &entry.func, &**obj, key)
                    .map_err(|e| e.to_string())?;
                for value in &values {
                    expected
                        .entry(value.to_string())
                        .or_default()
                        .insert(key.to_string());
                }
            }
            let mut actual: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
            for (value, bucket) in &entry.index {
                if bucket.members.is_empty() {
                    return Err(format!(
                        "index {}: value {value} has an empty set",
                        entry.name
                    ));
                }
                if let Some(snapshot) = bucket.snapshot.get() {
                    let mut fresh: Vec<*const K> =
                        bucket.members.values().map(Arc::as_ptr).collect();
                    let mut cached: Vec<*const K> = snapshot.iter().map(Arc::as_ptr).collect();
                    fresh.sort();
                    cached.sort();
                    if fresh != cached {
                        return Err(format!(
                            "index {}: value {value} has a stale snapshot",
                            entry.name
                        ));
                    }
                }
                for (key, obj) in &bucket.members {
                    match inner.items.get(key) {
                        Some(item) if Arc::ptr_eq(item, obj) => {}
                        _ => {
                            return Err(format!(
                                "index {}: {key} holds a stale object",
                                entry.name
                            ));
                        }
                    }
                    actual
                        .entry(value.to_string())
                        .or_default()
                        .insert(key.to_string());
                }
            }
            if expected != actual {
                return Err(format!(
                    "index {} disagrees with the items:\nexpected {expected:?}\nactual   {actual:?}",
                    entry.name
                ));
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::index::{NAMESPACE_INDEX, index_func, meta_namespace_index_func, try_index_func};
    use crate::test_util::{cm, cm_labels};
    use k8s_openapi::api::core::v1::ConfigMap;
    use std::collections::BTreeSet;

    fn label_index(label: &'static str) -> IndexFunc<ConfigMap> {
        index_func(move |cm: &ConfigMap| {
            cm.metadata
                .labels
                .as_ref()
                .and_then(|l| l.get(label))
                .cloned()
                .into_iter()
                .collect()
        })
    }

    fn store() -> ThreadSafeStore<ConfigMap> {
        let mut indexers = Indexers::default();
        indexers.insert(NAMESPACE_INDEX.to_owned(), meta_namespace_index_func());
        indexers.insert("app".to_owned(), label_index("app"));
        ThreadSafeStore::new(indexers)
    }

    fn keys(v: Vec<ObjectKey>) -> BTreeSet<String> {
        v.iter().map(|k| k.to_string()).collect()
    }

    #[test]
    fn update_should_remove_the_old_index_entries_before_adding_the_new_ones() {
        let s = store();
        s.add("ns/a".into(), cm_labels("ns", "a", &[("app", "web")]))
            .unwrap();
        s.update("ns/a".into(), cm_labels("ns", "a", &[("app", "db")]))
            .unwrap();
        assert!(s.by_index("app", "web").unwrap().is_empty());
        assert_eq!(
            keys(s.index_keys("app", "db").unwrap()),
            BTreeSet::from(["ns/a".to_owned()])
        );
        s.check_indices().unwrap();
    }

    #[test]
    fn update_with_unchanged_values_should_serve_the_new_object_from_the_index() {
        let s = store();
        s.add("ns/a".into(), cm("ns", "a", 1)).unwrap();
        let newer = cm("ns", "a", 2);
        s.update("ns/a".into(), newer.clone()).unwrap();
        let found = s.by_index(NAMESPACE_INDEX, "ns").unwrap();
        assert!(Arc::ptr_eq(&found[0], &newer));
    }

    #[test]
    fn an_index_value_whose_set_becomes_empty_should_be_removed() {
        let s = store();
        s.add("ns/a".into(), cm_labels("ns", "a", &[("app", "web")]))
            .unwrap();
        s.add("ns/b".into(), cm_labels("ns", "b", &[("app", "web")]))
            .unwrap();
        s.delete("ns/a").unwrap();
        assert_eq!(
            s.list_index_func_values("app"),
            vec![Arc::<str>::from("web")]
        );
        s.delete("ns/b").unwrap();
        assert!(s.list_index_func_values("app").is_empty());
        s.add("ns/c".into(), cm_labels("ns", "c", &[("app", "web")]))
            .unwrap();
        s.update("ns/c".into(), cm_labels("ns", "c", &[("app", "db")]))
            .unwrap();
        assert_eq!(
            s.list_index_func_values("app"),
            vec![Arc::<str>::from("db")]
        );
        s.check_indices().unwrap();
    }

    #[test]
    fn add_indexers_should_index_the_items_already_stored() {
        let s = ThreadSafeStore::new(Indexers::default());
        s.add("ns/a".into(), cm_labels("ns", "a", &[("app", "web")]))
            .unwrap();
        s.add("other/b".into(), cm("other", "b", 0)).unwrap();
        let mut more = Indexers::default();
        more.insert("app".to_owned(), label_index("app"));
        more.insert(NAMESPACE_INDEX.to_owned(), meta_namespace_index_func());
        s.add_indexers(more).unwrap();
        assert_eq!(
            keys(s.index_keys("app", "web").unwrap()),
            BTreeSet::from(["ns/a".to_owned()])
        );
        assert_eq!(s.by_index(NAMESPACE_INDEX, "other").unwrap().len(), 1);
        let mut names: Vec<String> = s.get_indexers().into_keys().collect();
        names.sort();
        assert_eq!(names, ["app", "namespace"]);
        s.check_indices().unwrap();
    }

    #[test]
    fn add_indexers_should_refuse_a_name_that_exists_and_change_nothing() {
        let s = store();
        let mut more = Indexers::default();
        more.insert("app".to_owned(), label_index("tier"));
        more.insert("tier".to_owned(), label_index("tier"));
        let err = s.add_indexers(more).unwrap_err();
        assert!(matches!(err, Error::IndexerConflict { ref name } if name == "app"));
        assert_eq!(s.get_indexers().len(), 2);
    }

    #[test]
    fn an_index_function_may_return_several_values() {
        let mut indexers = Indexers::default();
        indexers.insert(
            "labels".to_owned(),
            try_index_func(|cm: &ConfigMap| {
                Ok(cm
                    .metadata
                    .labels
                    .iter()
                    .flatten()
                    .map(|(k, v)| std::borrow::Cow::Owned(format!("{k}={v}")))
                    .collect())
            }),
        );
        let s = ThreadSafeStore::new(indexers);
        s.add(
            "ns/a".into(),
            cm_labels("ns", "a", &[("app", "web"), ("tier", "front")]),
        )
        .unwrap();
        s.add("ns/b".into(), cm_labels("ns", "b", &[("tier", "front")]))
            .unwrap();
        assert_eq!(s.by_index("labels", "app=web").unwrap().len(), 1);
        assert_eq!(s.by_index("labels", "tier=front").unwrap().len(), 2);
        // `index` unions every value of the probe object, without duplicates.
        let probe = cm_labels("x", "probe", &[("app", "web"), ("tier", "front")]);
        assert_eq!(s.index("labels", &probe).unwrap().len(), 2);
        s.check_indices().unwrap();
    }

    #[test]
    fn by_index_of_an_unknown_index_should_fail() {
        let s = store();
        assert!(matches!(
            s.by_index("nope", "x"),
            Err(Error::IndexNotFound { .. })
        ));
        assert!(matches!(
            s.index_keys("nope", "x"),
            Err(Error::IndexNotFound { .. })
        ));
        assert!(s.list_index_func_values("nope").is_empty());
    }

    #[test]
    fn a_failing_index_function_should_leave_the_store_unchanged() {
        let mut indexers = Indexers::default();
        indexers.insert(
            "picky".to_owned(),
            try_index_func(|cm: &ConfigMap| {
                if cm.metadata.name.as_deref() == Some("bad") {
                    Err("no".into())
                } else {
                    Ok(IndexValues::one("ok"))
                }
            }),
        );
        let s = ThreadSafeStore::new(indexers);
        s.add("ns/a".into(), cm("ns", "a", 1)).unwrap();
        let err = s.add("ns/bad".into(), cm("ns", "bad", 1)).unwrap_err();
        assert!(matches!(err, Error::IndexFunc { .. }));
        assert!(s.get("ns/bad").is_none());
        assert!(
            s.replace(vec![("ns/bad".into(), cm("ns", "bad", 1))], "1")
                .is_err()
        );
        assert!(s.get("ns/a").is_some());
        s.check_indices().unwrap();
    }

    #[test]
    fn a_panicking_index_function_should_be_caught() {
        let mut indexers = Indexers::default();
        indexers.insert(
            "boom".to_owned(),
            index_func(|_: &ConfigMap| -> Vec<String> { panic!("index function exploded") }),
        );
        let s = ThreadSafeStore::new(indexers);
        let err = s.add("ns/a".into(), cm("ns", "a", 1)).unwrap_err();
        assert!(format!("{:?}", err).contains("exploded"));
        assert!(s.is_empty());
    }

    /// Writers on several tasks and concurrent `by_index` readers; a checker
    /// rebuilds the indices from scratch and compares, while writes go on.
    #[tokio::test(flavor = "multi_thread", worker_threads = 4)]
    async fn indices_should_always_agree_with_the_items_under_concurrent_writers_and_readers() {
        let s = Arc::new(store());
        let mut writers = Vec::new();
        for w in 0..4u32 {
            let s = s.clone();
            writers.push(tokio::spawn(async move {
                let mut seed = w.wrapping_mul(2_654_435_761).wrapping_add(1);
                for i in 0..3_000u32 {
                    seed ^= seed << 13;
                    seed ^= seed >> 17;
                    seed ^= seed << 5;
                    let name = format!("o{}", seed % 64);
                    let ns = format!("ns{}", (seed >> 8) % 4);
                    let app = ["web", "db", "cache"][(seed as usize >> 12) % 3];
                    let key: ObjectKey = format!("{ns}/{name}").into();
                    match seed % 5 {
                        0 => s.delete(&key).unwrap(),
                        1 | 2 => s.add(key, cm_labels(&ns, &name, &[("app", app)])).unwrap(),
                        _ => s
                            .update(key, cm_labels(&ns, &name, &[("app", app)]))
                            .unwrap(),
                    }
                    if i % 64 == 0 {
                        tokio::task::yield_now().await;
                    }
                }
            }));
        }
        let mut readers = Vec::new();
        for r in 0..2usize {
            let s = s.clone();
            readers.push(tokio::spawn(async move {
                let mut reads = 0usize;
                for i in 0..2_000usize {
                    let app = ["web", "db", "cache"][(i + r) % 3];
                    for obj in s.by_index("app", app).unwrap().iter() {
                        let labels = obj.metadata.labels.as_ref().unwrap();
                        assert_eq!(labels.get("app").map(String::as_str), Some(app));
                        reads += 1;
                    }
                    let ns = format!("ns{}", i % 4);
                    for obj in s.by_index(NAMESPACE_INDEX, &ns).unwrap().iter() {
                        assert_eq!(obj.metadata.namespace.as_deref(), Some(ns.as_str()));
                    }
                    if i % 16 == 0 {
                        tokio::task::yield_now().await;
                    }
                }
                reads
            }));
        }
        let checker = {
            let s = s.clone();
            tokio::spawn(async move {
                for _ in 0..200 {
                    s.check_indices().unwrap();
                    tokio::task::yield_now().await;
                }
            })
        };
        for w in writers {
            w.await.unwrap();
        }
        let mut reads = 0;
        for r in readers {
            reads += r.await.unwrap();
        }
        checker.await.unwrap();
        s.check_indices().unwrap();
        assert!(reads > 0);
    }

    #[test]
    fn by_index_and_list_should_share_a_snapshot_until_something_changes() {
        let s = store();
        s.add("ns/a".into(), cm("ns", "a", 1)).unwrap();
        let first = s.by_index(NAMESPACE_INDEX, "ns").unwrap();
        assert!(Arc::ptr_eq(
            &first,
            &s.by_index(NAMESPACE_INDEX, "ns").unwrap()
        ));
        let listed = s.list();
        assert!(Arc::ptr_eq(&listed, &s.list()));
        // An update with an unchanged namespace must still refresh both.
        let newer = cm("ns", "a", 2);
        s.update("ns/a".into(), newer.clone()).unwrap();
        let second = s.by_index(NAMESPACE_INDEX, "ns").unwrap();
        assert!(Arc::ptr_eq(&second[0], &newer));
        assert!(Arc::ptr_eq(&s.list()[0], &newer));
        s.add("ns/b".into(), cm("ns", "b", 1)).unwrap();
        assert_eq!(s.by_index(NAMESPACE_INDEX, "ns").unwrap().len(), 2);
        assert_eq!(s.list().len(), 2);
        s.delete("ns/a").unwrap();
        assert_eq!(s.by_index(NAMESPACE_INDEX, "ns").unwrap().len(), 1);
        assert_eq!(s.list().len(), 1);
        s.replace(vec![], "1").unwrap();
        assert!(s.list().is_empty());
        s.check_indices().unwrap();
    }

    #[test]
    fn the_checker_should_notice_a_stale_index_entry() {
        // Guards the concurrency test: a store whose index misses an update
        // must fail the check.
        let s = store();
        s.add("ns/a".into(), cm_labels("ns", "a", &[("app", "web")]))
            .unwrap();
        {
            let mut inner = s.inner.write();
            let new = cm_labels("ns", "a", &[("app", "db")]);
            inner.items.insert("ns/a".into(), new);
        }
        assert!(s.check_indices().is_err());
    }
}
