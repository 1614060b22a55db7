//! [`MutationCache`]: the results of a controller's own writes, kept beside
//! an informer's cache until the informer has seen them (client-go's
//! `mutation_cache.go`, with the TTL, size limit, include-adds, eviction on
//! catch-up and UID-aware delete tombstones of client-go 1.37).

use std::cmp::Ordering;
use std::collections::{BTreeMap, HashMap, HashSet};
use std::sync::Arc;
use std::time::Duration;

use kube_core::Resource;
use parking_lot::Mutex;
use tokio::time::Instant;

use crate::error::{Error, Result};
use crate::index::Indexer;
use crate::key::{ObjectKey, meta_namespace_key_func};
use crate::store::{KeyGetter, Store};

/// How long an entry stays in a [`MutationCache`] unless told otherwise
/// (client-go's five minutes).
pub const DEFAULT_MUTATION_CACHE_TTL: Duration = Duration::from_secs(5 * 60);

/// How many entries a [`MutationCache`] holds unless told otherwise
/// (client-go's 100); the least recently used goes first.
pub const DEFAULT_MUTATION_CACHE_SIZE: usize = 100;

/// Compares two resource versions as integers (client-go's
/// `etcdObjectVersioner`, which a mutation cache relies on): decimal digits,
/// of any length; the empty string is 0. Anything else is
/// [`Error::InvalidResourceVersion`].
///
/// ```
/// use std::cmp::Ordering;
/// use kcr_cache::compare_resource_versions;
/// assert_eq!(compare_resource_versions("9", "10").ok(), Some(Ordering::Less));
/// assert_eq!(compare_resource_versions("", "0").ok(), Some(Ordering::Equal));
/// assert!(compare_resource_versions("1a", "2").is_err());
/// ```
pub fn compare_resource_versions(a: &str, b: &str) -> Result<Ordering> {
    let a = integer_digits(a)?;
    let b = integer_digits(b)?;
    Ok(a.len().cmp(&b.len()).then_with(|| a.cmp(b)))
}

/// The significant digits of a resource version (empty for 0).
fn integer_digits(rv: &str) -> Result<&str> {
    if !rv.bytes().all(|b| b.is_ascii_digit()) {
        return Err(Error::InvalidResourceVersion {
            resource_version: rv.to_owned(),
        });
    }
    Ok(rv.trim_start_matches('0'))
}

/// How a [`MutationCache`] is set up (client-go's `MutationCacheOptions`).
pub struct MutationCacheOptions<K> {
    indexer: Option<Arc<dyn Indexer<K>>>,
    ttl: Duration,
    include_adds: bool,
    max_cache_size: usize,
}

impl<K> Default for MutationCacheOptions<K> {
    fn default() -> Self {
        Self {
            indexer: None,
            ttl: DEFAULT_MUTATION_CACHE_TTL,
            include_adds: false,
            max_cache_size: DEFAULT_MUTATION_CACHE_SIZE,
        }
    }
}

impl<K> std::fmt::Debug for MutationCacheOptions<K> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MutationCacheOptions")
            .field("indexer", &self.indexer.is_some())
            .field("ttl", &self.ttl)
            .field("include_adds", &self.include_adds)
            .field("max_cache_size", &self.max_cache_size)
            .finish()
    }
}

impl<K> MutationCacheOptions<K> {
    /// The defaults: no indexer, a TTL of [`DEFAULT_MUTATION_CACHE_TTL`],
    /// at most [`DEFAULT_MUTATION_CACHE_SIZE`] entries, no include-adds.
    pub fn new() -> Self {
        Self::default()
    }

    /// The indexer [`MutationCache::by_index`] looks up (usually the
    /// informer's cache, also the backing store).
    #[must_use]
    pub fn indexer(mut self, indexer: Arc<dyn Indexer<K>>) -> Self {
        self.indexer = Some(indexer);
        self
    }

    /// How long an entry is kept (zero: the default, five minutes).
    #[must_use]
    pub fn ttl(mut self, ttl: Duration) -> Self {
        self.ttl = if ttl.is_zero() {
            DEFAULT_MUTATION_CACHE_TTL
        } else {
            ttl
        };
        self
    }

    /// Whether objects the backing store does not hold are returned (one's
    /// own creates, before the informer sees them). Only safe if the caller
    /// can live with an entry outliving its object by up to the TTL when a
    /// write and a deletion come close together: a create quickly followed
    /// by a delete may never reach the informer at all.
    #[must_use]
    pub fn include_adds(mut self, include: bool) -> Self {
        self.include_adds = include;
        self
    }

    /// At most this many entries, the least recently used evicted first
    /// (zero: the default, 100).
    #[must_use]
    pub fn max_cache_size(mut self, size: usize) -> Self {
        self.max_cache_size = if size == 0 {
            DEFAULT_MUTATION_CACHE_SIZE
        } else {
            size
        };
        self
    }
}

/// What a key holds in the mutation cache.
enum Entry<K> {
    /// The result of one's own write.
    Object(Arc<K>),
    /// A deletion the informer saw: a later write of the same object
    /// instance (same UID), or of no newer version, is outdated. Never
    /// returned by reads.
    Tombstone {
        uid: Option<String>,
        resource_version: String,
    },
}

impl<K: Resource> Entry<K> {
    fn resource_version(&self) -> &str {
        match self {
            Self::Object(obj) => obj.meta().resource_version.as_deref().unwrap_or_default(),
            Self::Tombstone {
                resource_version, ..
            } => resource_version,
        }
    }
}

struct Slot<K> {
    entry: Entry<K>,
    expires: Instant,
    /// Position in `Lru::order` (larger: used more recently).
    stamp: u64,
}

/// A size-bounded map whose entries expire (apimachinery's
/// `LRUExpireCache`): reading an entry makes it the most recently used;
/// adding one past the size evicts the least recently used; an expired
/// entry is dropped when met.
struct Lru<K> {
    slots: HashMap<ObjectKey, Slot<K>>,
    order: BTreeMap<u64, ObjectKey>,
    next_stamp: u64,
    max: usize,
}

impl<K> Lru<K> {
    fn new(max: usize) -> Self {
        Self {
            slots: HashMap::new(),
            order: BTreeMap::new(),
            next_stamp: 0,
            max,
        }
    }

    fn stamp(&mut self) -> u64 {
        self.next_stamp += 1;
        self.next_stamp
    }

    fn get(&mut self, key: &str, now: Instant) -> Option<&Entry<K>> {
        let expired = self.slots.get(key)?.expires <= now;
        if expired {
            self.remove(key);
            return None;
        }
        let stamp = self.stamp();
        let slot = self.slots.get_mut(key)?;
        if let Some(k) = self.order.remove(&slot.stamp) {
            self.order.insert(stamp, k);
        }
        slot.stamp = stamp;
        Some(&slot.entry)
    }

    fn add(&mut self, key: ObjectKey, entry: Entry<K>, expires: Instant) {
        let stamp = self.stamp();
        if let Some(slot) = self.slots.get_mut(&key) {
            self.order.remove(&slot.stamp);
            slot.entry = entry;
            slot.expires = expires;
            slot.stamp = stamp;
            self.order.insert(stamp, key);
            return;
        }
        while self.slots.len() >= self.max {
            let Some((_, oldest)) = self.order.pop_first() else {
                break;
            };
            self.slots.remove(&oldest);
        }
        self.order.insert(stamp, key.clone());
        self.slots.insert(
            key,
            Slot {
                entry,
                expires,
                stamp,
            },
        );
    }

    fn remove(&mut self, key: &str) {
        if let Some(slot) = self.slots.remove(key) {
            self.order.remove(&slot.stamp);
        }
    }

    /// The unexpired keys, least recently used first.
    fn keys(&self, now: Instant) -> Vec<ObjectKey> {
        self.order
            .values()
            .filter(|k| self.slots.get(*k).is_some_and(|s| s.expires > now))
            .cloned()
            .collect()
    }
}

/// The results of one's own writes, read together with an informer's cache
/// so that a controller sees its writes before the informer does
/// (client-go's `MutationCache` with integer resource versions).
///
/// * [`mutation`](Self::mutation) records what a write returned;
/// * [`get_by_key`](Self::get_by_key) and [`by_index`](Self::by_index)
///   return, per key, the newer of the backing store's object and the
///   recorded one (by resource version); an object the backing store does
///   not hold is missing unless [`include_adds`](MutationCacheOptions::include_adds)
///   is on;
/// * [`on_add_or_update`](Self::on_add_or_update) and
///   [`on_delete`](Self::on_delete), called from the informer's event
///   handler (kcr-informer implements its `ResourceEventHandler` for
///   `MutationCache`), drop an entry as soon as the informer has caught up
///   with it (a resource version at least as new), and a deletion leaves a
///   tombstone so that a late write result of the deleted object (same UID,
///   or no newer version) is not recorded again;
/// * entries expire after the TTL (five minutes) and at most
///   `max_cache_size` (100) are kept, the least recently used evicted first.
///
/// Resource versions are compared as integers
/// ([`compare_resource_versions`]), as client-go does; when one cannot be
/// read, the backing store's object is preferred and the entry dropped
/// (client-go panics). No guarantee that a recorded write is returned: it
/// may be evicted or expire, or a newer one may win.
///
/// ```
/// use std::sync::Arc;
/// use k8s_openapi::api::core::v1::ConfigMap;
/// use kcr_cache::{IndexedStore, MutationCache, MutationCacheOptions, Store};
///
/// fn cm(rv: &str) -> Arc<ConfigMap> {
///     let mut cm = ConfigMap::default();
///     cm.metadata.namespace = Some("ns".into());
///     cm.metadata.name = Some("a".into());
///     cm.metadata.resource_version = Some(rv.into());
///     Arc::new(cm)
/// }
/// let informer_cache = Arc::new(IndexedStore::<ConfigMap>::namespace_indexed());
/// informer_cache.add(cm("5"))?;
/// let cache = MutationCache::new(informer_cache.clone(), MutationCacheOptions::new());
///
/// cache.mutation(cm("7")); // what an update returned
/// assert_eq!(cache.get_by_key("ns/a").unwrap().metadata.resource_version.as_deref(), Some("7"));
///
/// informer_cache.update(cm("7"))?; // the informer caught up
/// cache.on_add_or_update(&*cm("7"));
/// assert!(cache.is_empty());
/// # Ok::<(), kcr_cache::Error>(())
/// ```
pub struct MutationCache<K> {
    backing: Arc<dyn KeyGetter<K>>,
    indexer: Option<Arc<dyn Indexer<K>>>,
    ttl: Duration,
    include_adds: bool,
    // A parking_lot lock, never held across `.await`.
    lru: Mutex<Lru<K>>,
}

impl<K> std::fmt::Debug for MutationCache<K> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MutationCache")
            .field("entries", &self.lru.lock().slots.len())
            .field("ttl", &self.ttl)
            .field("include_adds", &self.include_adds)
            .finish_non_exhaustive()
    }
}

/// `a` against `b` by resource version; `None` if either cannot be read.
fn compare<K: Resource>(a: &str, b: &Entry<K>) -> Option<Ordering> {
    match compare_resource_versions(a, b.resource_version()) {
        Ok(ordering) => Some(ordering),
        Err(e) => {
            tracing::debug!(error = %e, "mutation cache: resource versions cannot be compared");
            None
        }
    }
}

fn rv_of<K: Resource>(obj: &K) -> &str {
    obj.meta().resource_version.as_deref().unwrap_or_default()
}

impl<K: Resource + Send + Sync + 'static> MutationCache<K> {
    /// A mutation cache in front of `backing` (the informer's cache;
    /// client-go's `NewIntegerResourceVersionMutationCacheWithOptions`).
    pub fn new(backing: Arc<dyn KeyGetter<K>>, options: MutationCacheOptions<K>) -> Self {
        Self {
            backing,
            indexer: options.indexer,
            ttl: options.ttl,
            include_adds: options.include_adds,
            lru: Mutex::new(Lru::new(options.max_cache_size.max(1))),
        }
    }

    /// How many entries (recorded writes and tombstones) are held, expired
    /// ones included until they are met.
    pub fn len(&self) -> usize {
        self.lru.lock().slots.len()
    }

    /// Whether no entry is held.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The newer of `backing` and the entry under `key`; an entry no newer
    /// than the backing store's object is dropped.
    fn newer(&self, lru: &mut Lru<K>, key: &str, backing: Arc<K>, now: Instant) -> Arc<K> {
        let Some(entry) = lru.get(key, now) else {
            return backing;
        };
        match (entry, compare(rv_of(&*backing), entry)) {
            (Entry::Object(recorded), Some(Ordering::Less)) => recorded.clone(),
            // A tombstone is never returned; it goes once the store holds
            // something at least as new.
            (Entry::Tombstone { .. }, Some(Ordering::Less)) => backing,
            _ => {
                lru.remove(key);
                backing
            }
        }
    }

    /// The object under `key`: the newer of the backing store's and the
    /// recorded one (client-go's `GetByKey`). Without include-adds, a key
    /// the backing store lacks is missing (a create not yet seen cannot be
    /// told from a deletion).
    pub fn get_by_key(&self, key: &str) -> Option<Arc<K>> {
        let now = Instant::now();
        let mut lru = self.lru.lock();
        match self.backing.get_by_key(key) {
            Some(backing) => Some(self.newer(&mut lru, key, backing, now)),
            None if self.include_adds => match lru.get(key, now)? {
                Entry::Object(obj) => Some(obj.clone()),
                Entry::Tombstone { .. } => None,
            },
            None => None,
        }
    }

    /// The objects whose `index_name` values include `indexed_value`, each
    /// the newer of the indexer's and the recorded one; with include-adds,
    /// also the recorded objects the indexer lacks whose index values match
    /// (client-go's `ByIndex`). Fails without an indexer
    /// ([`Error::NoIndexer`]) or for an unknown index.
    pub fn by_index(&self, index_name: &str, indexed_value: &str) -> Result<Vec<Arc<K>>> {
        let indexer = self.indexer.as_ref().ok_or(Error::NoIndexer)?;
        let keys = indexer.index_keys(index_name, indexed_value)?;
        let now = Instant::now();
        let mut lru = self.lru.lock();
        let mut items = Vec::with_capacity(keys.len());
        let mut seen = HashSet::with_capacity(keys.len());
        for key in keys {
            if let Some(obj) = Store::get_by_key(&**indexer, &key) {
                items.push(self.newer(&mut lru, &key, obj, now));
            }
            seen.insert(key);
        }
        if self.include_adds {
            let index = indexer
                .get_indexers()
                .get(index_name)
                .cloned()
                .ok_or_else(|| Error::IndexNotFound {
                    name: index_name.to_owned(),
                })?;
            // Least recently used first, so reading them all keeps their order.
            for key in lru.keys(now) {
                if seen.contains(&key) {
                    continue;
                }
                let Some(Entry::Object(obj)) = lru.get(&key, now) else {
                    continue;
                };
                let obj = obj.clone();
                match index(&obj) {
                    Ok(values) => {
                        if values.iter().any(|v| v == indexed_value) {
                            items.push(obj);
                        }
                    }
                    Err(e) => {
                        tracing::debug!(%key, error = %e, "mutation cache: an entry could not be indexed");
                    }
                }
            }
        }
        Ok(items)
    }

    /// Records the result of a write, unless an entry already recorded is
    /// newer, or a tombstone says this object instance was deleted (same
    /// resource version or same UID) (client-go's `Mutation`). An object
    /// without a key is ignored.
    pub fn mutation(&self, obj: Arc<K>) {
        let key = match meta_namespace_key_func(&*obj) {
            Ok(key) => key,
            Err(e) => {
                tracing::debug!(error = %e, "mutation cache: an object without a key is not recorded");
                return;
            }
        };
        let now = Instant::now();
        let mut lru = self.lru.lock();
        if let Some(entry) = lru.get(&key, now) {
            let ordering = compare(rv_of(&*obj), entry);
            if ordering == Some(Ordering::Less) {
                return;
            }
            if let Entry::Tombstone { uid, .. } = entry {
                if ordering == Some(Ordering::Equal) {
                    // Exactly this version is known to be deleted.
                    return;
                }
                if uid.is_some() && *uid == obj.meta().uid {
                    // Another version of the deleted instance.
                    return;
                }
            }
        }
        lru.add(key, Entry::Object(obj), now + self.ttl);
    }

    /// The informer stored `obj` (an add or an update): an entry no newer
    /// than it is dropped, whatever its UID (resource versions are ordered
    /// across instances) (client-go's `OnAddOrUpdate`).
    pub fn on_add_or_update(&self, obj: &K) {
        let Ok(key) = meta_namespace_key_func(obj) else {
            return;
        };
        let now = Instant::now();
        let mut lru = self.lru.lock();
        let Some(entry) = lru.get(&key, now) else {
            return;
        };
        if matches!(entry, Entry::Object(_)) && compare(rv_of(obj), entry) != Some(Ordering::Less) {
            lru.remove(&key);
        }
    }

    /// The informer deleted `obj` (its last known state): a recorded write
    /// of the same instance (same UID) or no newer than it is dropped and a
    /// tombstone recorded instead; a newer write of another instance (the
    /// object was re-created) is kept (client-go's `OnDelete`).
    pub fn on_delete(&self, obj: &K) {
        let Ok(key) = meta_namespace_key_func(obj) else {
            return;
        };
        let meta = obj.meta();
        let now = Instant::now();
        let mut lru = self.lru.lock();
        if let Some(entry) = lru.get(&key, now) {
            let same_instance = match entry {
                Entry::Object(recorded) => meta.uid.is_some() && recorded.meta().uid == meta.uid,
                Entry::Tombstone { uid, .. } => meta.uid.is_some() && *uid == meta.uid,
            };
            let caught_up = compare(rv_of(obj), entry) != Some(Ordering::Less);
            if !(caught_up || same_instance) {
                // Someone wrote a newer instance: it may still exist; the
                // caller checks once the TTL is over.
                return;
            }
        }
        lru.add(
            key,
            Entry::Tombstone {
                uid: meta.uid.clone(),
                resource_version: rv_of(obj).to_owned(),
            },
            now + self.ttl,
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::index::NAMESPACE_INDEX;
    use crate::indexed_store::IndexedStore;
    use crate::store::Store;
    use k8s_openapi::api::core::v1::ConfigMap;

    fn cm(name: &str, uid: &str, rv: &str) -> Arc<ConfigMap> {
        let mut cm = ConfigMap::default();
        cm.metadata.namespace = Some("ns".into());
        cm.metadata.name = Some(name.into());
        cm.metadata.uid = (!uid.is_empty()).then(|| uid.to_owned());
        cm.metadata.resource_version = Some(rv.into());
        Arc::new(cm)
    }

    fn rv(obj: Option<Arc<ConfigMap>>) -> Option<String> {
        obj.and_then(|o| o.metadata.resource_version.clone())
    }

    fn store() -> Arc<IndexedStore<ConfigMap>> {
        Arc::new(IndexedStore::namespace_indexed())
    }

    fn cache(
        store: &Arc<IndexedStore<ConfigMap>>,
        options: MutationCacheOptions<ConfigMap>,
    ) -> MutationCache<ConfigMap> {
        MutationCache::new(store.clone(), options.indexer(store.clone()))
    }

    #[test]
    fn resource_versions_should_compare_as_integers_of_any_length() {
        let cmp = |a, b| compare_resource_versions(a, b).ok();
        assert_eq!(cmp("9", "10"), Some(Ordering::Less));
        assert_eq!(cmp("007", "7"), Some(Ordering::Equal));
        assert_eq!(cmp("", "0"), Some(Ordering::Equal));
        assert_eq!(
            cmp("184467440737095516160", "18446744073709551615"),
            Some(Ordering::Greater)
        );
        for bad in ["-1", "1.5", "abc", " 1"] {
            assert!(
                matches!(
                    compare_resource_versions(bad, "1"),
                    Err(Error::InvalidResourceVersion { .. })
                ),
                "{bad}"
            );
        }
    }

    #[test]
    fn a_write_should_be_read_until_the_informer_has_caught_up_and_an_older_one_never() {
        let store = store();
        store
            .add(cm("a", "u1", "5"))
            .unwrap_or_else(|e| panic!("{e}"));
        let cache = cache(&store, MutationCacheOptions::new());
        cache.mutation(cm("a", "u1", "7"));
        assert_eq!(rv(cache.get_by_key("ns/a")).as_deref(), Some("7"));
        // The informer sees an intermediate version: the write stays.
        cache.on_add_or_update(&*cm("a", "u1", "6"));
        store
            .update(cm("a", "u1", "6"))
            .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(rv(cache.get_by_key("ns/a")).as_deref(), Some("7"));
        // It caught up: the entry goes.
        cache.on_add_or_update(&*cm("a", "u1", "7"));
        assert!(cache.is_empty());

        // An older write never hides the store's object, and is dropped when read.
        cache.mutation(cm("a", "u1", "4"));
        assert_eq!(rv(cache.get_by_key("ns/a")).as_deref(), Some("6"));
        assert!(cache.is_empty());
        // A write older than one recorded is ignored.
        cache.mutation(cm("a", "u1", "9"));
        cache.mutation(cm("a", "u1", "8"));
        assert_eq!(rv(cache.get_by_key("ns/a")).as_deref(), Some("9"));
        // The store catching up without the handler: the read drops the entry.
        store
            .update(cm("a", "u1", "9"))
            .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(rv(cache.get_by_key("ns/a")).as_deref(), Some("9"));
        assert!(cache.is_empty());
    }

    #[test]
    fn a_key_the_store_lacks_should_be_missing_unless_adds_are_included() {
        let store = store();
        let without = cache(&store, MutationCacheOptions::new());
        without.mutation(cm("new", "u1", "3"));
        assert!(without.get_by_key("ns/new").is_none());
        let with = cache(&store, MutationCacheOptions::new().include_adds(true));
        with.mutation(cm("new", "u1", "3"));
        // Read twice: an entry is not consumed by reading it.
        assert_eq!(rv(with.get_by_key("ns/new")).as_deref(), Some("3"));
        assert_eq!(rv(with.get_by_key("ns/new")).as_deref(), Some("3"));
        assert_eq!(with.len(), 1);
    }

    #[tokio::test(start_paused = true)]
    async fn entries_should_expire_after_the_ttl_five_minutes_by_default() {
        let store = store();
        let default = cache(&store, MutationCacheOptions::new().include_adds(true));
        let short = cache(
            &store,
            MutationCacheOptions::new()
                .include_adds(true)
                .ttl(Duration::from_secs(10)),
        );
        default.mutation(cm("a", "u1", "1"));
        short.mutation(cm("a", "u1", "1"));
        tokio::time::advance(Duration::from_secs(10) - Duration::from_millis(1)).await;
        assert!(short.get_by_key("ns/a").is_some());
        tokio::time::advance(Duration::from_millis(1)).await;
        assert!(short.get_by_key("ns/a").is_none());
        assert!(short.is_empty(), "an expired entry is dropped when met");
        tokio::time::advance(
            DEFAULT_MUTATION_CACHE_TTL - Duration::from_secs(10) - Duration::from_millis(1),
        )
        .await;
        assert!(default.get_by_key("ns/a").is_some());
        tokio::time::advance(Duration::from_millis(1)).await;
        assert!(default.get_by_key("ns/a").is_none());
        // A zero TTL means the default.
        assert_eq!(
            MutationCacheOptions::<ConfigMap>::new()
                .ttl(Duration::ZERO)
                .ttl,
            DEFAULT_MUTATION_CACHE_TTL
        );
    }

    #[test]
    fn the_least_recently_used_entry_should_go_first_beyond_the_size_limit() {
        let store = store();
        let small = cache(
            &store,
            MutationCacheOptions::new()
                .include_adds(true)
                .max_cache_size(2),
        );
        small.mutation(cm("a", "ua", "1"));
        small.mutation(cm("b", "ub", "2"));
        assert!(small.get_by_key("ns/a").is_some()); // a is now the most recently used
        small.mutation(cm("c", "uc", "3"));
        assert!(
            small.get_by_key("ns/b").is_none(),
            "b was the least recently used"
        );
        assert!(small.get_by_key("ns/a").is_some());
        assert!(small.get_by_key("ns/c").is_some());
        assert_eq!(small.len(), 2);

        let default = cache(
            &store,
            MutationCacheOptions::new()
                .include_adds(true)
                .max_cache_size(0),
        );
        for i in 0..=DEFAULT_MUTATION_CACHE_SIZE {
            default.mutation(cm(&format!("o{i}"), "u", &i.to_string()));
        }
        assert_eq!(default.len(), DEFAULT_MUTATION_CACHE_SIZE);
        assert!(default.get_by_key("ns/o0").is_none());
        assert!(default.get_by_key("ns/o1").is_some());
    }

    #[test]
    fn a_deletion_should_leave_a_tombstone_that_refuses_late_writes_of_the_same_instance() {
        let store = store();
        let cache = cache(&store, MutationCacheOptions::new().include_adds(true));
        cache.mutation(cm("a", "u1", "5"));
        cache.on_delete(&*cm("a", "u1", "6"));
        assert!(
            cache.get_by_key("ns/a").is_none(),
            "a tombstone is never returned"
        );
        assert_eq!(cache.len(), 1);
        // A late result of a write before the deletion, the deleted version
        // itself, or another version of the same instance: all refused.
        for late in [cm("a", "u1", "5"), cm("a", "", "6"), cm("a", "u1", "7")] {
            cache.mutation(late);
            assert!(cache.get_by_key("ns/a").is_none());
        }
        // The object re-created (another UID, newer): recorded.
        cache.mutation(cm("a", "u2", "8"));
        assert_eq!(rv(cache.get_by_key("ns/a")).as_deref(), Some("8"));
    }

    #[test]
    fn a_deletion_should_drop_a_write_of_the_same_instance_and_keep_a_newer_recreation() {
        let store = store();
        let cache = cache(&store, MutationCacheOptions::new().include_adds(true));
        // Same UID, even if the write looks newer than the deleted state
        // (the informer's last state may be stale): dropped.
        cache.mutation(cm("a", "u1", "9"));
        cache.on_delete(&*cm("a", "u1", "6"));
        assert!(cache.get_by_key("ns/a").is_none());
        // Another instance, newer than the deletion: kept, no tombstone.
        cache.mutation(cm("b", "u2", "9"));
        cache.on_delete(&*cm("b", "u1", "6"));
        assert_eq!(rv(cache.get_by_key("ns/b")).as_deref(), Some("9"));
        // An older one of another instance: the deletion is newer, dropped.
        cache.mutation(cm("c", "u2", "3"));
        cache.on_delete(&*cm("c", "u1", "6"));
        assert!(cache.get_by_key("ns/c").is_none());
    }

    #[test]
    fn by_index_should_give_the_newer_objects_and_with_adds_the_recorded_ones_that_match() {
        let store = store();
        store
            .add(cm("a", "ua", "5"))
            .unwrap_or_else(|e| panic!("{e}"));
        let cache = cache(&store, MutationCacheOptions::new().include_adds(true));
        cache.mutation(cm("a", "ua", "6"));
        cache.mutation(cm("new", "un", "7"));
        let mut elsewhere = (*cm("other", "uo", "8")).clone();
        elsewhere.metadata.namespace = Some("other-ns".into());
        cache.mutation(Arc::new(elsewhere));
        let mut found: Vec<_> = cache
            .by_index(NAMESPACE_INDEX, "ns")
            .unwrap_or_else(|e| panic!("{e}"))
            .iter()
            .map(|o| {
                (
                    o.metadata.name.clone().unwrap_or_default(),
                    rv(Some(o.clone())).unwrap_or_default(),
                )
            })
            .collect();
        found.sort();
        assert_eq!(
            found,
            [
                ("a".to_owned(), "6".to_owned()),
                ("new".to_owned(), "7".to_owned())
            ]
        );
        assert!(matches!(
            cache.by_index("nope", "ns"),
            Err(Error::IndexNotFound { .. })
        ));

        let without_indexer = MutationCache::new(store.clone(), MutationCacheOptions::new());
        assert!(matches!(
            without_indexer.by_index(NAMESPACE_INDEX, "ns"),
            Err(Error::NoIndexer)
        ));
    }

    #[test]
    fn an_unreadable_resource_version_should_prefer_the_store_and_drop_the_entry() {
        let store = store();
        store
            .add(cm("a", "u1", "not-a-number"))
            .unwrap_or_else(|e| panic!("{e}"));
        let cache = cache(&store, MutationCacheOptions::new());
        cache.mutation(cm("a", "u1", "7"));
        assert_eq!(
            rv(cache.get_by_key("ns/a")).as_deref(),
            Some("not-a-number")
        );
        assert!(cache.is_empty());
    }

    mod model {
        use super::*;
        use proptest::prelude::*;

        const KEYS: [&str; 3] = ["a", "b", "c"];

        #[derive(Debug, Clone)]
        enum Op {
            /// Create or update the object on the server; record the result.
            Write(usize),
            /// Delete it on the server.
            Delete(usize),
            /// The informer catches up with the server for this key (the store
            /// changes, then the cache hears of it, as from a handler).
            Sync(usize),
            /// A result of an earlier write of this key arrives late.
            Late(usize, usize),
        }

        fn op() -> impl Strategy<Value = Op> {
            prop_oneof![
                3 => (0..3usize).prop_map(Op::Write),
                1 => (0..3usize).prop_map(Op::Delete),
                3 => (0..3usize).prop_map(Op::Sync),
                1 => (0..3usize, 0..8usize).prop_map(|(k, i)| Op::Late(k, i)),
            ]
        }

        proptest! {
            /// Against a server with one global resource version and an
            /// informer that lags: a read is never older than the informer's
            /// object, and once the informer has seen a deletion, no write
            /// result of the deleted instance, nor an older one, is returned
            /// (a newer write of another instance may be: client-go's
            /// documented "stale added object", for the caller to check
            /// after the TTL).
            #[test]
            fn reads_should_never_go_back_behind_the_informer_or_a_deletion_it_saw(
                ops in proptest::collection::vec(op(), 1..60),
            ) {
                let store = store();
                let cache = cache(&store, MutationCacheOptions::new().include_adds(true));
                let mut rv = 10u64;
                let mut uids = 0u64;
                let mut server: [Option<(String, u64)>; 3] = Default::default();
                let mut results: [Vec<Arc<ConfigMap>>; 3] = Default::default();
                // The deletion the informer saw last (UID, resource version),
                // with nothing written since.
                let mut seen_deletion: [Option<(String, u64)>; 3] = Default::default();
                for op in ops {
                    match op {
                        Op::Write(k) => {
                            rv += 1;
                            let uid = match &server[k] {
                                Some((uid, _)) => uid.clone(),
                                None => {
                                    uids += 1;
                                    format!("u{uids}")
                                }
                            };
                            server[k] = Some((uid.clone(), rv));
                            let written = cm(KEYS[k], &uid, &rv.to_string());
                            results[k].push(written.clone());
                            cache.mutation(written);
                            seen_deletion[k] = None;
                        }
                        Op::Delete(k) => {
                            if server[k].take().is_some() {
                                rv += 1;
                            }
                        }
                        Op::Sync(k) => {
                            let key = format!("ns/{}", KEYS[k]);
                            let stored = Store::get_by_key(&*store, &key);
                            match (&server[k], stored) {
                                (Some((uid, v)), _) => {
                                    let obj = cm(KEYS[k], uid, &v.to_string());
                                    store.update(obj.clone()).map_err(|e| TestCaseError::fail(e.to_string()))?;
                                    cache.on_add_or_update(&*obj);
                                }
                                (None, Some(last)) => {
                                    store.delete(last.clone()).map_err(|e| TestCaseError::fail(e.to_string()))?;
                                    cache.on_delete(&*last);
                                    let uid = last.metadata.uid.clone().unwrap_or_default();
                                    let at = last.metadata.resource_version.as_deref().and_then(|v| v.parse().ok()).unwrap_or(0);
                                    seen_deletion[k] = Some((uid, at));
                                }
                                (None, None) => {}
                            }
                        }
                        Op::Late(k, i) => {
                            if let Some(old) = results[k].get(i) {
                                cache.mutation(old.clone());
                            }
                        }
                    }
                    for k in 0..3 {
                        let key = format!("ns/{}", KEYS[k]);
                        let read = cache.get_by_key(&key);
                        let version = |o: &Arc<ConfigMap>| {
                            o.metadata.resource_version.as_deref().and_then(|v| v.parse::<u64>().ok())
                        };
                        if let Some(stored) = Store::get_by_key(&*store, &key) {
                            let read = read.as_ref().ok_or_else(|| TestCaseError::fail("the store's object hidden"))?;
                            prop_assert!(version(read) >= version(&stored), "{key}: read {:?} behind the store's {:?}", version(read), version(&stored));
                        } else if let (Some((uid, at)), Some(read)) = (&seen_deletion[k], &read) {
                            let newer_instance = read.metadata.uid.as_ref() != Some(uid)
                                && version(read).is_some_and(|v| v > *at);
                            prop_assert!(newer_instance, "{key}: {:?} returned after the deletion of {uid} at {at} was seen", version(read));
                        }
                    }
                    prop_assert!(cache.len() <= DEFAULT_MUTATION_CACHE_SIZE);
                }
            }
        }
    }
}
