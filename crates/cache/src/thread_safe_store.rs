//! [`ThreadSafeStore`]: objects by key plus their indices, under one lock
//! (client-go's `thread_safe_store.go`).

use std::collections::HashMap;
use std::hash::BuildHasher;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::{Arc, OnceLock};

use parking_lot::RwLock;

use crate::compact::{Compact, Stored, Taken};
use crate::error::{Error, Result, panic_message};
use crate::index::{IndexFunc, IndexValues, Indexers};
use crate::key::{KeyBuffer, ObjectKey, Objects};

type Hasher = foldhash::fast::RandomState;
type Map<Key, V> = HashMap<Key, V, Hasher>;

/// One index: value → bucket of the objects under it.
type IndexMap<K> = Map<Arc<str>, Bucket<K>>;

/// One stored object, its key and where it sits in every index.
///
/// Objects live in a dense table (`Inner::slots`); the key map and the
/// index buckets hold positions in it. Listing walks the table in order,
/// and an update whose index values did not change touches no bucket
/// beyond dropping its cached snapshot.
struct Slot<K> {
    key: ObjectKey,
    obj: Stored<K>,
    memberships: Memberships,
}

/// Where an object sits under one index value: the index, the value (the
/// same `Arc` as the index's map key) and the object's position in that
/// value's member list. Remembering it means an update or delete never
/// calls an index function on the old object.
struct Membership {
    index: usize,
    value: Arc<str>,
    pos: usize,
}

/// An object's memberships: usually one (one index, one value), kept
/// inline.
#[derive(Default)]
enum Memberships {
    #[default]
    None,
    One(Membership),
    Many(Vec<Membership>),
}

impl Memberships {
    fn as_slice(&self) -> &[Membership] {
        match self {
            Self::None => &[],
            Self::One(m) => std::slice::from_ref(m),
            Self::Many(all) => all,
        }
    }

    fn push(&mut self, membership: Membership) {
        *self = match std::mem::take(self) {
            Self::None => Self::One(membership),
            Self::One(first) => Self::Many(vec![first, membership]),
            Self::Many(mut all) => {
                all.push(membership);
                Self::Many(all)
            }
        };
    }

    /// Removes and returns membership `i` (the last one takes its place).
    fn swap_remove(&mut self, i: usize) -> Option<Membership> {
        match std::mem::take(self) {
            Self::None => None,
            Self::One(m) if i == 0 => Some(m),
            Self::One(m) => {
                *self = Self::One(m);
                None
            }
            Self::Many(mut all) if i < all.len() => {
                let removed = all.swap_remove(i);
                *self = Self::Many(all);
                Some(removed)
            }
            Self::Many(all) => {
                *self = Self::Many(all);
                None
            }
        }
    }

    fn find_mut(&mut self, index: usize, value: &Arc<str>) -> Option<&mut Membership> {
        let all = match self {
            Self::None => return None,
            Self::One(m) => std::slice::from_mut(m),
            Self::Many(all) => all.as_mut_slice(),
        };
        all.iter_mut()
            .find(|m| m.index == index && (Arc::ptr_eq(&m.value, value) || m.value == *value))
    }

    fn into_vec(self) -> Vec<Membership> {
        match self {
            Self::None => Vec::new(),
            Self::One(m) => vec![m],
            Self::Many(all) => all,
        }
    }
}

/// The objects under one index value. The snapshot makes repeated
/// `by_index` calls on an unchanged value O(1).
struct Bucket<K> {
    /// The value, shared with the index map's key and the memberships.
    value: Arc<str>,
    /// Positions in the slot table.
    members: Vec<usize>,
    /// What `by_index` last handed out; reset by every change to a member.
    snapshot: OnceLock<Objects<K>>,
}

impl<K> Bucket<K> {
    fn new(value: Arc<str>) -> Self {
        Self {
            value,
            members: Vec::new(),
            snapshot: OnceLock::new(),
        }
    }

    fn changed(&mut self) {
        self.snapshot.take();
    }

    /// The members, as a snapshot kept until a member changes (a store
    /// holding its objects decoded) or decoded afresh (a compact store,
    /// which keeps no decoded copy of its content).
    fn snapshot(&self, inner: &Inner<K>) -> Objects<K> {
        if inner.compact.is_some() {
            return self
                .members
                .iter()
                .filter_map(|&id| inner.load(id, false))
                .collect();
        }
        self.snapshot
            .get_or_init(|| {
                self.members
                    .iter()
                    .filter_map(|&id| inner.slots.get(id).and_then(|s| s.obj.object().cloned()))
                    .collect()
            })
            .clone()
    }
}

/// Memberships to record once a new index is complete: (slot, membership).
type Joined = Vec<(usize, Membership)>;

/// A registered index function and the index it maintains.
struct IndexEntry<K> {
    name: String,
    func: IndexFunc<K>,
    index: IndexMap<K>,
}

struct Inner<K> {
    /// Positions in `slots`, found by the hash of their key (the key itself
    /// lives in the slot): a small table that stays in cache.
    keys: hashbrown::HashTable<usize>,
    hasher: Hasher,
    /// Every object, densely.
    slots: Vec<Slot<K>>,
    /// What `list` last handed out, in slot order; reset when an object
    /// comes or goes. An update writes the new object into it in place
    /// when no caller holds it any more, so list after update stays O(1).
    list_snapshot: OnceLock<Objects<K>>,
    /// Few entries (one per index name): a vector beats a map here. Only
    /// ever appended to, so a position names an index for good.
    indices: Vec<IndexEntry<K>>,
    /// Where the last synced resource version comes from (client-go's
    /// `threadSafeMap.rv`): the last object written (read lazily, so a
    /// write copies no string), or the version a replace or bookmark gave.
    rv: LastRv<K>,
    /// Compact storage: objects kept encoded, decoded on read.
    compact: Option<Compact<K>>,
}

/// The source of [`ThreadSafeStore::last_store_sync_resource_version`].
enum LastRv<K> {
    Explicit(Arc<str>),
    Object(Arc<K>),
}

impl<K> Clone for LastRv<K> {
    fn clone(&self) -> Self {
        match self {
            Self::Explicit(rv) => Self::Explicit(rv.clone()),
            Self::Object(obj) => Self::Object(obj.clone()),
        }
    }
}

/// What one write of a [`ThreadSafeStore::transaction`] does (client-go's
/// `TransactionType`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum TransactionType {
    /// Adds the object (replacing what the key held).
    Add,
    /// Updates the object (the same as `Add` in a store).
    Update,
    /// Deletes the key.
    Delete,
}

/// One write of a [`ThreadSafeStore::transaction`], with its key (client-go's
/// `ThreadSafeStoreTransaction`).
pub struct ThreadSafeStoreTransaction<K> {
    /// What to do.
    pub type_: TransactionType,
    /// The key written.
    pub key: ObjectKey,
    /// The object (for a deletion: its last state, if known, which sets the
    /// store's resource version when it is the transaction's last write).
    pub object: Option<Arc<K>>,
}

impl<K> std::fmt::Debug for ThreadSafeStoreTransaction<K> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ThreadSafeStoreTransaction")
            .field("type_", &self.type_)
            .field("key", &self.key)
            .finish_non_exhaustive()
    }
}

/// The outcome of each write of a transaction, in order: the object the
/// write replaced or removed, or why it failed.
pub type TransactionResults<K> = Vec<Result<Option<Arc<K>>>>;

/// The key an object is stored under: owned, or written in the per-thread
/// key buffer (allocated only when the key is new to the store).
pub(crate) enum KeyIn {
    Owned(ObjectKey),
    Buffer(KeyBuffer),
}

impl KeyIn {
    pub(crate) fn as_str(&self) -> &str {
        match self {
            Self::Owned(key) => key,
            Self::Buffer(key) => key,
        }
    }

    fn into_owned(self) -> ObjectKey {
        match self {
            Self::Owned(key) => key,
            Self::Buffer(key) => Arc::from(&*key),
        }
    }
}

/// A store's content as [`ThreadSafeStore::replace_with`] hands it over:
/// the objects in table order, and lookups by key.
///
/// A compact store's objects are decoded as they are asked for, except the
/// new content's, which the replace hands over as it took them.
pub(crate) struct ReplacedContent<'a, K> {
    inner: &'a Inner<K>,
    /// The objects by slot, when the slots hold them encoded.
    objects: Option<&'a [Arc<K>]>,
}

impl<'a, K> ReplacedContent<'a, K> {
    fn object(&self, id: usize) -> Option<Arc<K>> {
        match self.objects {
            Some(objects) => objects.get(id).cloned(),
            None => self.inner.load(id, false),
        }
    }

    /// Whether the content holds `key`.
    pub(crate) fn contains(&self, key: &str) -> bool {
        self.inner.find(key).is_some()
    }

    /// Every key, in table order (insertion order after a replace).
    pub(crate) fn keys(&self) -> impl Iterator<Item = &'a ObjectKey> + use<'a, K> {
        self.inner.slots.iter().map(|s| &s.key)
    }

    /// Every `(key, object)`, in table order (insertion order after a
    /// replace).
    pub(crate) fn iter(&self) -> impl Iterator<Item = (&'a ObjectKey, Arc<K>)> + use<'_, 'a, K> {
        self.inner
            .slots
            .iter()
            .enumerate()
            .filter_map(|(id, s)| Some((&s.key, self.object(id)?)))
    }

    /// The object stored under `key`.
    pub(crate) fn get(&self, key: &str) -> Option<Arc<K>> {
        self.object(self.inner.find(key)?)
    }
}

/// Objects by key plus their indices, under one lock (client-go's
/// `ThreadSafeStore` / `threadSafeMap`).
///
/// * `Indexers`: index name → [`IndexFunc`] returning zero or more values.
/// * `Indices`: index name → value → set of objects (each member is a
///   position in the object table, so [`by_index`](Self::by_index) needs no
///   key lookup).
///
/// Invariants: after every operation each index holds exactly the values its
/// function computes for the stored objects (an update removes the old
/// object's entries before adding the new ones), and no index value maps to
/// an empty set. If an index function fails (or panics) the operation
/// returns an error and the store is unchanged. The values an object was
/// indexed under are remembered, so updates and deletes never call an index
/// function on the old object.
pub struct ThreadSafeStore<K> {
    // A parking_lot lock: every method is synchronous and short, and none is
    // held across an `.await`, so it is safe to use from async code.
    inner: RwLock<Inner<K>>,
}

impl<K> std::fmt::Debug for ThreadSafeStore<K> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let inner = self.inner.read();
        f.debug_struct("ThreadSafeStore")
            .field("len", &inner.slots.len())
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

/// Puts slot `id` under `value` of index `ix` and records the membership.
fn join<K>(
    index: &mut IndexMap<K>,
    ix: usize,
    value: &str,
    id: usize,
    memberships: &mut Memberships,
) {
    if let Some(bucket) = index.get_mut(value) {
        memberships.push(Membership {
            index: ix,
            value: bucket.value.clone(),
            pos: bucket.members.len(),
        });
        bucket.members.push(id);
        bucket.changed();
        return;
    }
    let value: Arc<str> = Arc::from(value);
    let mut bucket = Bucket::new(value.clone());
    bucket.members.push(id);
    memberships.push(Membership {
        index: ix,
        value: value.clone(),
        pos: 0,
    });
    index.insert(value, bucket);
}

/// Takes a member out of its bucket (the bucket's last member takes its
/// place, and that member's recorded position follows); a bucket left
/// empty is removed.
fn leave<K>(index: &mut IndexMap<K>, slots: &mut [Slot<K>], membership: Membership) {
    let Membership {
        index: ix,
        value,
        pos,
    } = membership;
    let Some(bucket) = index.get_mut(&*value) else {
        return;
    };
    if pos < bucket.members.len() {
        bucket.members.swap_remove(pos);
        if let Some(&moved) = bucket.members.get(pos)
            && let Some(m) = slots
                .get_mut(moved)
                .and_then(|s| s.memberships.find_mut(ix, &value))
        {
            m.pos = pos;
        }
    }
    bucket.changed();
    if bucket.members.is_empty() {
        index.remove(&*value);
    }
}

/// Brings slot `id`'s memberships in index `ix` to `values`: the values it
/// no longer has are left first, then the new ones are joined; the buckets
/// of unchanged values drop their snapshots (they hold the old object).
fn reindex<K>(
    index: &mut IndexMap<K>,
    slots: &mut [Slot<K>],
    ix: usize,
    id: usize,
    memberships: &mut Memberships,
    values: &[std::borrow::Cow<'_, str>],
) {
    let mut i = 0;
    while let Some(m) = memberships.as_slice().get(i) {
        if m.index == ix && !values.iter().any(|v| **v == *m.value) {
            if let Some(m) = memberships.swap_remove(i) {
                leave(index, slots, m);
            }
        } else {
            i += 1;
        }
    }
    for (n, value) in values.iter().enumerate() {
        if values[..n].contains(value) {
            continue; // an index function may repeat a value: a set, as in client-go
        }
        let kept = memberships
            .as_slice()
            .iter()
            .find(|m| m.index == ix && *m.value == **value);
        match kept {
            Some(m) => {
                if let Some(bucket) = index.get_mut(&*m.value) {
                    bucket.changed();
                }
            }
            None => join(index, ix, value, id, memberships),
        }
    }
}

impl<K> Inner<K> {
    /// The object in slot `id`, decoded if the slot holds it encoded (and
    /// then kept in the decoded cache if `remember`).
    fn load(&self, id: usize, remember: bool) -> Option<Arc<K>> {
        let slot = self.slots.get(id)?;
        match (&slot.obj, &self.compact) {
            (Stored::Object(obj), _) => Some(obj.clone()),
            (stored, Some(compact)) => compact.load(&slot.key, stored, remember),
            (Stored::Encoded(_), None) => None,
        }
    }

    /// A slot's object taken out (replaced or removed), as the store hands
    /// it back: decoded.
    /// The object a [`put`](Self::put) replaced: as it was held, or decoded from the replaced
    /// bytes (under the slot's key, which the put kept).
    fn replaced(&self, old: Option<(usize, Taken<K>)>) -> Option<Arc<K>> {
        let (id, old) = old?;
        match old.stored {
            Stored::Object(obj) => Some(obj),
            _ => {
                let key = self.slots.get(id)?.key.clone();
                self.unstore(&key, old)
            }
        }
    }

    fn unstore(&self, key: &str, taken: Taken<K>) -> Option<Arc<K>> {
        if let Some(obj) = taken.decoded {
            return Some(obj);
        }
        match (taken.stored, &self.compact) {
            (Stored::Object(obj), _) => Some(obj),
            (stored, Some(compact)) => compact.decode(key, stored),
            (Stored::Encoded(_), None) => None,
        }
    }

    /// `obj` as a slot of this store holds it, under `key`, and the key's
    /// decoded object the decoded cache held (the object it replaces).
    fn stored(&self, key: &ObjectKey, obj: &Arc<K>) -> (Stored<K>, Option<Arc<K>>) {
        match &self.compact {
            Some(compact) => compact.store(key, obj),
            None => (Stored::Object(obj.clone()), None),
        }
    }

    fn empty_like(&self, capacity: usize) -> Self {
        Inner {
            keys: hashbrown::HashTable::with_capacity(capacity),
            hasher: Hasher::default(),
            slots: Vec::with_capacity(capacity),
            list_snapshot: OnceLock::new(),
            indices: self
                .indices
                .iter()
                .map(|e| IndexEntry {
                    name: e.name.clone(),
                    func: e.func.clone(),
                    index: IndexMap::default(),
                })
                .collect(),
            rv: LastRv::Explicit(Arc::from("")),
            compact: self.compact.as_ref().map(Compact::empty_like),
        }
    }

    /// Applies the writes in order (one lock for all of them); returns
    /// each write's outcome. A failing write (its key or index function)
    /// changes nothing and the others still apply. The store's resource
    /// version becomes the last write's object's, when it has an object
    /// (client-go's `Transaction`).
    fn transaction<I>(&mut self, txns: I) -> TransactionResults<K>
    where
        I: ExactSizeIterator<Item = Result<(TransactionType, KeyIn, Option<Arc<K>>)>>,
    {
        let before = self.rv.clone();
        let mut last = None;
        let mut results = Vec::with_capacity(txns.len());
        for txn in txns {
            let result = match txn {
                Err(e) => {
                    last = None;
                    Err(e)
                }
                Ok((TransactionType::Add | TransactionType::Update, key, Some(obj))) => {
                    last = Some(obj.clone());
                    self.put(key, obj).map(|old| self.replaced(old))
                }
                Ok((TransactionType::Add | TransactionType::Update, key, None)) => {
                    last = None;
                    Err(Error::InvalidKey {
                        key: key.as_str().to_owned(),
                        reason: "an add or update needs an object",
                    })
                }
                Ok((TransactionType::Delete, key, obj)) => {
                    last = obj;
                    Ok(self
                        .remove(key.as_str())
                        .and_then(|old| self.unstore(key.as_str(), old)))
                }
            };
            results.push(result);
        }
        self.rv = match last {
            Some(obj) => LastRv::Object(obj),
            None => before,
        };
        results
    }

    /// The position of the object stored under `key`.
    fn find(&self, key: &str) -> Option<usize> {
        self.find_hashed(self.hasher.hash_one(key), key)
    }

    /// [`Inner::find`] with the key's hash already computed.
    fn find_hashed(&self, hash: u64, key: &str) -> Option<usize> {
        let slots = &self.slots;
        self.keys
            .find(hash, |&id| slots.get(id).is_some_and(|s| *s.key == *key))
            .copied()
    }

    /// Stores `obj` under `key`; returns its slot and the object it
    /// replaced, as the slot held it.
    fn put(&mut self, key: KeyIn, obj: Arc<K>) -> Result<Option<(usize, Taken<K>)>> {
        let hash = self.hasher.hash_one(key.as_str());
        let found = self.find_hashed(hash, key.as_str());
        let id = found.unwrap_or(self.slots.len());
        let mut memberships = match found.and_then(|id| self.slots.get_mut(id)) {
            Some(slot) => std::mem::take(&mut slot.memberships),
            None => Memberships::None,
        };
        // Every value is computed before anything changes, so a failing
        // index function leaves the store untouched.
        let indexed = match self.indices.as_mut_slice() {
            [] => Ok(()),
            // The common case (one index, usually by namespace): no buffer.
            [entry] => {
                call_index_func(&entry.name, &entry.func, &*obj, key.as_str()).map(|values| {
                    reindex(
                        &mut entry.index,
                        &mut self.slots,
                        0,
                        id,
                        &mut memberships,
                        &values,
                    )
                })
            }
            entries => entries
                .iter()
                .map(|e| call_index_func(&e.name, &e.func, &*obj, key.as_str()))
                .collect::<Result<Vec<_>>>()
                .map(|computed| {
                    for (ix, (entry, values)) in entries.iter_mut().zip(&computed).enumerate() {
                        reindex(
                            &mut entry.index,
                            &mut self.slots,
                            ix,
                            id,
                            &mut memberships,
                            values,
                        );
                    }
                }),
        };
        if let Err(e) = indexed {
            if let Some(slot) = found.and_then(|id| self.slots.get_mut(id)) {
                slot.memberships = memberships;
            }
            return Err(e);
        }
        match found.and_then(|id| self.slots.get_mut(id)) {
            Some(slot) => {
                let listed = self
                    .list_snapshot
                    .get_mut()
                    .and_then(Arc::get_mut)
                    .and_then(|listed| listed.get_mut(id));
                match listed {
                    Some(listed) => *listed = obj.clone(),
                    None => drop(self.list_snapshot.take()),
                }
                slot.memberships = memberships;
                self.rv = LastRv::Object(obj.clone());
                let (stored, decoded) = match &self.compact {
                    Some(compact) => compact.store(&slot.key, &obj),
                    None => (Stored::Object(obj), None),
                };
                let stored = std::mem::replace(&mut slot.obj, stored);
                Ok(Some((id, Taken { stored, decoded })))
            }
            None => {
                self.list_snapshot.take();
                self.rv = LastRv::Object(obj.clone());
                let key = key.into_owned();
                let (obj, _) = self.stored(&key, &obj);
                self.slots.push(Slot {
                    key,
                    obj,
                    memberships,
                });
                let (slots, hasher) = (&self.slots, &self.hasher);
                self.keys.insert_unique(hash, id, |&i| {
                    slots.get(i).map_or(0, |s| hasher.hash_one(&*s.key))
                });
                Ok(None)
            }
        }
    }

    fn remove(&mut self, key: &str) -> Option<Taken<K>> {
        let slots = &self.slots;
        let (id, _) = self
            .keys
            .find_entry(self.hasher.hash_one(key), |&id| {
                slots.get(id).is_some_and(|s| *s.key == *key)
            })
            .ok()?
            .remove();
        let memberships = std::mem::take(&mut self.slots.get_mut(id)?.memberships);
        for m in memberships.into_vec() {
            if let Some(entry) = self.indices.get_mut(m.index) {
                leave(&mut entry.index, &mut self.slots, m);
            }
        }
        self.list_snapshot.take();
        let decoded = self.compact.as_ref().and_then(|c| c.forget(key));
        let removed = self.slots.swap_remove(id);
        // The last slot moved into `id`: point its key and buckets there.
        let was = self.slots.len();
        if let Some(moved) = self.slots.get(id) {
            if let Some(at) = self
                .keys
                .find_mut(self.hasher.hash_one(&*moved.key), |&i| i == was)
            {
                *at = id;
            }
            for m in moved.memberships.as_slice() {
                if let Some(at) = self
                    .indices
                    .get_mut(m.index)
                    .and_then(|e| e.index.get_mut(&*m.value))
                    .and_then(|b| b.members.get_mut(m.pos))
                {
                    *at = id;
                }
            }
        }
        Some(Taken {
            stored: removed.obj,
            decoded,
        })
    }

    /// Indexes every stored object with a new index function that will sit
    /// at position `ix`; returns the index and the memberships to record,
    /// changing nothing (so a failing function leaves the store as it was).
    fn build_index(
        &self,
        ix: usize,
        name: &str,
        func: &IndexFunc<K>,
    ) -> Result<(IndexMap<K>, Joined)> {
        let mut index = IndexMap::default();
        let mut joined = Vec::with_capacity(self.slots.len());
        for (id, slot) in self.slots.iter().enumerate() {
            let Some(obj) = self.load(id, false) else {
                continue;
            };
            let values = call_index_func(name, func, &*obj, &slot.key)?;
            let mut memberships = Memberships::None;
            for (n, value) in values.iter().enumerate() {
                if !values[..n].contains(value) {
                    join(&mut index, ix, value, id, &mut memberships);
                }
            }
            joined.extend(memberships.into_vec().into_iter().map(|m| (id, m)));
        }
        Ok((index, joined))
    }

    /// Builds every index named in `indexers` first, then registers them
    /// all: on an error nothing changes.
    fn add_indices(&mut self, indexers: Vec<(String, IndexFunc<K>)>) -> Result<()> {
        let mut built = Vec::with_capacity(indexers.len());
        for (n, (name, func)) in indexers.into_iter().enumerate() {
            let (index, joined) = self.build_index(self.indices.len() + n, &name, &func)?;
            built.push((IndexEntry { name, func, index }, joined));
        }
        for (entry, joined) in built {
            for (id, m) in joined {
                if let Some(slot) = self.slots.get_mut(id) {
                    slot.memberships.push(m);
                }
            }
            self.indices.push(entry);
        }
        Ok(())
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

impl<K: kube_core::Resource> ThreadSafeStore<K> {
    /// The resource version of the store's last write, replace, transaction
    /// or bookmark (client-go 1.36's `LastStoreSyncResourceVersion`, which
    /// answers with the `AtomicFIFO` gate on, its default): a replace or
    /// bookmark sets the version it was given, an add or update the
    /// object's, a transaction its last write's object's. Empty at first.
    pub fn last_store_sync_resource_version(&self) -> String {
        match &self.inner.read().rv {
            LastRv::Explicit(rv) => rv.to_string(),
            LastRv::Object(obj) => obj.meta().resource_version.clone().unwrap_or_default(),
        }
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
                keys: hashbrown::HashTable::new(),
                hasher: Hasher::default(),
                slots: Vec::new(),
                list_snapshot: OnceLock::new(),
                indices,
                rv: LastRv::Explicit(Arc::from("")),
                compact: None,
            }),
        }
    }

    /// This store in compact mode: objects kept encoded (their JSON) and
    /// decoded when read, with up to `decoded` decoded objects cached (the
    /// last written or got, one per place of a table indexed by key hash).
    /// Objects already stored are encoded now.
    ///
    /// A compact store holds a fraction of the memory per object (see the
    /// README's cache rows), and reads pay for it: a `get` that misses the
    /// decoded cache decodes the object, and `list`, `by_index` and `index`
    /// decode every object they return, every time (they keep no shared
    /// snapshot). The objects handed out are `Arc<K>` as in a default
    /// store, but two reads of an object not in the decoded cache give two
    /// copies. An object `K`'s `Serialize` cannot write is kept decoded.
    #[must_use]
    pub fn compact(self, decoded: usize) -> Self
    where
        K: serde::Serialize + serde::de::DeserializeOwned,
    {
        let mut inner = self.inner.into_inner();
        let compact = Compact::new(decoded);
        for slot in &mut inner.slots {
            if let Stored::Object(obj) = &slot.obj {
                slot.obj = compact.store(&slot.key, &obj.clone()).0;
            }
        }
        inner.list_snapshot.take();
        for entry in &mut inner.indices {
            for bucket in entry.index.values_mut() {
                bucket.changed();
            }
        }
        inner.compact = Some(compact);
        Self {
            inner: RwLock::new(inner),
        }
    }

    /// Whether this store keeps its objects encoded ([`compact`](Self::compact)).
    pub fn is_compact(&self) -> bool {
        self.inner.read().compact.is_some()
    }

    /// Adds `obj` under `key`, replacing what was there (and its index
    /// entries).
    pub fn add(&self, key: ObjectKey, obj: Arc<K>) -> Result<()> {
        // The object replaced is dropped once the lock is released.
        let replaced = self.inner.write().put(KeyIn::Owned(key), obj);
        replaced.map(drop)
    }

    /// [`add`](Self::add) with a key that is copied only if it is new to
    /// the store; true if it was. The object replaced, if any, is dropped
    /// once the lock is released (and not decoded, in a compact store).
    pub(crate) fn put_new(&self, key: KeyIn, obj: Arc<K>) -> Result<bool> {
        let replaced = self.inner.write().put(key, obj)?;
        Ok(replaced.is_none())
    }

    /// Updates the object under `key`: the old object's index entries are
    /// removed before the new object's are added.
    pub fn update(&self, key: ObjectKey, obj: Arc<K>) -> Result<()> {
        self.add(key, obj)
    }

    /// [`add`](Self::add) / [`update`](Self::update) with a key that is
    /// copied only if it is new to the store; returns the object replaced
    /// (dropped by the caller, after the lock is released).
    pub(crate) fn put(&self, key: KeyIn, obj: Arc<K>) -> Result<Option<Arc<K>>> {
        let mut inner = self.inner.write();
        let old = inner.put(key, obj)?;
        Ok(inner.replaced(old))
    }

    /// Deletes the object under `key` and its index entries; an index value
    /// left with no key is removed. Deleting an absent key does nothing.
    pub fn delete(&self, key: &str) -> Result<()> {
        // The old object is dropped once the lock is released.
        let removed = self.inner.write().remove(key);
        drop(removed);
        Ok(())
    }

    /// The object under `key`.
    pub fn get(&self, key: &str) -> Option<Arc<K>> {
        let inner = self.inner.read();
        let id = inner.find(key)?;
        inner.load(id, true)
    }

    /// Every object, in no particular order, as a shared snapshot: until
    /// the store changes, further calls return the same snapshot without
    /// copying. A compact store decodes every object at each call instead
    /// (keeping a snapshot would keep the whole content decoded).
    pub fn list(&self) -> Objects<K> {
        let inner = self.inner.read();
        if inner.compact.is_some() {
            return (0..inner.slots.len())
                .filter_map(|id| inner.load(id, false))
                .collect();
        }
        inner
            .list_snapshot
            .get_or_init(|| {
                inner
                    .slots
                    .iter()
                    .filter_map(|s| s.obj.object().cloned())
                    .collect()
            })
            .clone()
    }

    /// Every key, in no particular order.
    pub fn list_keys(&self) -> Vec<ObjectKey> {
        self.inner
            .read()
            .slots
            .iter()
            .map(|s| s.key.clone())
            .collect()
    }

    /// The number of objects.
    pub fn len(&self) -> usize {
        self.inner.read().slots.len()
    }

    /// Whether the store is empty.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Applies several writes under one lock (client-go's `Transaction`):
    /// each index is updated once per write, readers see all of them or
    /// none. Returns each write's outcome, in order (the object it replaced
    /// or removed); a failing write (an index function) changes nothing and
    /// the others still apply. The store's resource version becomes the
    /// last write's object's, if it has one.
    pub fn transaction(&self, txns: Vec<ThreadSafeStoreTransaction<K>>) -> TransactionResults<K> {
        self.inner.write().transaction(
            txns.into_iter()
                .map(|t| Ok((t.type_, KeyIn::Owned(t.key), t.object))),
        )
    }

    /// [`transaction`](Self::transaction) with keys computed under the
    /// lock, one at a time (so a per-thread key buffer serves them all).
    pub(crate) fn transaction_with<I>(&self, txns: I) -> TransactionResults<K>
    where
        I: ExactSizeIterator<Item = Result<(TransactionType, KeyIn, Option<Arc<K>>)>>,
    {
        self.inner.write().transaction(txns)
    }

    /// Records `resource_version` as the store's last synced resource
    /// version (client-go's `Bookmark`).
    pub fn bookmark(&self, resource_version: &str) {
        self.inner.write().rv = LastRv::Explicit(Arc::from(resource_version));
    }

    /// Deletes the object under `key`, recording `obj`'s resource version
    /// as the store's (client-go's `DeleteWithObject`).
    pub(crate) fn delete_with_object(&self, key: &str, obj: Arc<K>) {
        let removed = {
            let mut inner = self.inner.write();
            let removed = inner.remove(key);
            inner.rv = LastRv::Object(obj);
            removed
        };
        drop(removed);
    }

    /// Replaces every object with `items` and rebuilds the indices; the
    /// store's last synced resource version becomes `resource_version`. On
    /// error the store is unchanged.
    pub fn replace(&self, items: Vec<(ObjectKey, Arc<K>)>, resource_version: &str) -> Result<()> {
        let items = items
            .into_iter()
            .map(|(key, obj)| Ok((KeyIn::Owned(key), obj)));
        self.replace_with(items, resource_version, |_, _| ())
    }

    /// [`replace`](Self::replace) taking the objects as `items` yields them
    /// (keys computed one at a time, so a per-thread key buffer serves them
    /// all and no second list is built); `changes` sees the content replaced
    /// and the new one, under the lock, before the old content is dropped.
    pub(crate) fn replace_with<I, R>(
        &self,
        items: I,
        resource_version: &str,
        changes: impl FnOnce(ReplacedContent<'_, K>, ReplacedContent<'_, K>) -> R,
    ) -> Result<R>
    where
        I: ExactSizeIterator<Item = Result<(KeyIn, Arc<K>)>>,
    {
        // Built outside the lock, so readers are not held up meanwhile.
        let mut fresh = self.inner.read().empty_like(items.len());
        // A compact store keeps the objects it encodes for `changes`, by slot.
        let mut objects = Vec::new();
        let compact = fresh.compact.is_some();
        for item in items {
            let (key, obj) = item?;
            let kept = compact.then(|| obj.clone());
            let id = match fresh.put(key, obj)? {
                Some((id, _)) => id,
                None => fresh.slots.len() - 1,
            };
            if let Some(obj) = kept {
                match objects.get_mut(id) {
                    Some(at) => *at = obj,
                    None => objects.push(obj),
                }
            }
        }
        let mut inner = self.inner.write();
        // Indexers added between the read above and now (they are only
        // ever appended) are indexed here.
        let added: Vec<_> = inner
            .indices
            .iter()
            .skip(fresh.indices.len())
            .map(|e| (e.name.clone(), e.func.clone()))
            .collect();
        fresh.add_indices(added)?;
        fresh.rv = LastRv::Explicit(Arc::from(resource_version));
        let old = std::mem::replace(&mut *inner, fresh);
        let result = changes(
            ReplacedContent {
                inner: &old,
                objects: None,
            },
            ReplacedContent {
                inner: &inner,
                objects: compact.then_some(&objects[..]),
            },
        );
        drop(inner);
        drop(old);
        Ok(result)
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
                .map(|b| b.snapshot(&inner))
                .unwrap_or_else(|| Objects::from([]))),
            many => {
                let mut ids: Vec<usize> = many
                    .iter()
                    .filter_map(|value| entry.index.get(&**value))
                    .flat_map(|bucket| bucket.members.iter().copied())
                    .collect();
                ids.sort_unstable();
                ids.dedup();
                Ok(ids
                    .into_iter()
                    .filter_map(|id| inner.load(id, false))
                    .collect())
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
            .map(|b| {
                b.members
                    .iter()
                    .filter_map(|&id| inner.slots.get(id).map(|s| s.key.clone()))
                    .collect()
            })
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
            .map(|b| b.snapshot(&inner))
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
        let mut indexers: Vec<_> = indexers.into_iter().collect();
        indexers.sort_by(|a, b| a.0.cmp(&b.0));
        inner.add_indices(indexers)
    }

    /// Resync is a no-op for a store (kept for client-go parity).
    pub fn resync(&self) {}

    /// Test helper: rebuilds every index from the objects, from scratch, and
    /// compares it with the maintained one (values, members, recorded
    /// positions, snapshots) under a single read lock.
    #[cfg(test)]
    pub(crate) fn check_indices(&self) -> std::result::Result<(), String> {
        use std::collections::{BTreeMap, BTreeSet};
        let inner = self.inner.read();
        if inner.keys.len() != inner.slots.len() {
            return Err("key map and object table differ in length".to_owned());
        }
        for (id, slot) in inner.slots.iter().enumerate() {
            if inner.find(&slot.key) != Some(id) {
                return Err(format!("{} is not mapped to its slot", slot.key));
            }
        }
        if let Some(listed) = inner.list_snapshot.get() {
            let fresh = inner
                .slots
                .iter()
                .map(|s| s.obj.object().map_or(std::ptr::null(), Arc::as_ptr));
            if !listed.iter().map(Arc::as_ptr).eq(fresh) {
                return Err("the list snapshot is stale".to_owned());
            }
        }
        for (ix, entry) in inner.indices.iter().enumerate() {
            let mut expected: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
            for (id, slot) in inner.slots.iter().enumerate() {
                let obj = inner
                    .load(id, false)
                    .ok_or_else(|| format!("{} does not decode", slot.key))?;
                let values = call_index_func(&entry.name, &entry.func, &*obj, &slot.key)
                    .map_err(|e| e.to_string())?;
                for value in &values {
                    expected
                        .entry(value.to_string())
                        .or_default()
                        .insert(slot.key.to_string());
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
                    let mut fresh: Vec<*const K> = bucket
                        .members
                        .iter()
                        .map(|&id| {
                            inner.slots[id]
                                .obj
                                .object()
                                .map_or(std::ptr::null(), Arc::as_ptr)
                        })
                        .collect();
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
                for (pos, &id) in bucket.members.iter().enumerate() {
                    let slot = inner
                        .slots
                        .get(id)
                        .ok_or_else(|| format!("index {}: {value} names no object", entry.name))?;
                    let recorded = slot.memberships.as_slice().iter().any(|m| {
                        m.index == ix && Arc::ptr_eq(&m.value, &bucket.value) && m.pos == pos
                    });
                    if !recorded {
                        return Err(format!(
                            "index {}: {} does not record its place under {value}",
                            entry.name, slot.key
                        ));
                    }
                    let set = actual.entry(value.to_string()).or_default();
                    if !set.insert(slot.key.to_string()) {
                        return Err(format!(
                            "index {}: {} is twice under {value}",
                            entry.name, slot.key
                        ));
                    }
                }
            }
            let recorded: usize = inner
                .slots
                .iter()
                .map(|s| {
                    s.memberships
                        .as_slice()
                        .iter()
                        .filter(|m| m.index == ix)
                        .count()
                })
                .sum();
            let members: usize = entry.index.values().map(|b| b.members.len()).sum();
            if recorded != members {
                return Err(format!(
                    "index {}: {recorded} recorded memberships for {members} members",
                    entry.name
                ));
            }
            if expected != actual {
                return Err(format!(
                    "index {} disagrees with the objects:\nexpected {expected:?}\nactual   {actual:?}",
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
    use crate::test_util::{cm, cm_labels, version};
    use crate::test_util::{compact_mode, store_contract};
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
        store_with([
            (NAMESPACE_INDEX, meta_namespace_index_func()),
            ("app", label_index("app")),
        ])
    }

    /// A store with these named index functions.
    fn store_with<const N: usize>(
        indexes: [(&str, IndexFunc<ConfigMap>); N],
    ) -> ThreadSafeStore<ConfigMap> {
        let store = ThreadSafeStore::new(
            indexes
                .into_iter()
                .map(|(name, func)| (name.to_owned(), func))
                .collect(),
        );
        // Compact stores keep few decoded objects, so reads decode.
        if compact_mode() {
            store.compact(2)
        } else {
            store
        }
    }

    fn keys(v: Vec<ObjectKey>) -> BTreeSet<String> {
        v.iter().map(|k| k.to_string()).collect()
    }

    store_contract! {
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
    }

    store_contract! {
        fn update_with_unchanged_values_should_serve_the_new_object_from_the_index() {
            let s = store();
            s.add("ns/a".into(), cm("ns", "a", 1)).unwrap();
            let newer = cm("ns", "a", 2);
            s.update("ns/a".into(), newer.clone()).unwrap();
            let found = s.by_index(NAMESPACE_INDEX, "ns").unwrap();
            assert!(Arc::ptr_eq(&found[0], &newer));
        }
    }

    store_contract! {
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
    }

    store_contract! {
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
    }

    store_contract! {
        fn add_indexers_should_refuse_a_name_that_exists_and_change_nothing() {
            let s = store();
            let mut more = Indexers::default();
            more.insert("app".to_owned(), label_index("tier"));
            more.insert("tier".to_owned(), label_index("tier"));
            let err = s.add_indexers(more).unwrap_err();
            assert!(matches!(err, Error::IndexerConflict { ref name } if name == "app"));
            assert_eq!(s.get_indexers().len(), 2);
        }
    }

    store_contract! {
        fn an_index_function_may_return_several_values() {
            let s = store_with([(
                "labels",
                try_index_func(|cm: &ConfigMap| {
                    Ok(cm
                        .metadata
                        .labels
                        .iter()
                        .flatten()
                        .map(|(k, v)| std::borrow::Cow::Owned(format!("{k}={v}")))
                        .collect())
                }),
            )]);
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
    }

    store_contract! {
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
    }

    store_contract! {
        fn a_failing_index_function_should_leave_the_store_unchanged() {
            let s = store_with([(
                "picky",
                try_index_func(|cm: &ConfigMap| {
                    if cm.metadata.name.as_deref() == Some("bad") {
                        Err("no".into())
                    } else {
                        Ok(IndexValues::one("ok"))
                    }
                }),
            )]);
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
    }

    store_contract! {
        fn a_panicking_index_function_should_be_caught() {
            let s = store_with([(
                "boom",
                index_func(|_: &ConfigMap| -> Vec<String> { panic!("index function exploded") }),
            )]);
            let err = s.add("ns/a".into(), cm("ns", "a", 1)).unwrap_err();
            assert!(format!("{:?}", err).contains("exploded"));
            assert!(s.is_empty());
        }
    }

    /// Writers on several tasks and concurrent `by_index` readers; a checker
    /// rebuilds the indices from scratch and compares, while writes go on.
    #[tokio::test(flavor = "multi_thread", worker_threads = 4)]
    async fn indices_should_always_agree_with_the_items_under_concurrent_writers_and_readers() {
        concurrent_writers_and_readers(store()).await;
    }

    /// The same against a compact store (whose readers decode, and share
    /// its cache of decoded objects).
    #[tokio::test(flavor = "multi_thread", worker_threads = 4)]
    async fn a_compact_store_should_keep_its_indices_right_under_concurrent_writers_and_readers() {
        concurrent_writers_and_readers(store().compact(8)).await;
    }

    async fn concurrent_writers_and_readers(s: ThreadSafeStore<ConfigMap>) {
        let s = Arc::new(s);
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
                    let name = format!("o{}", i % 64);
                    if let Some(obj) = s.get(&format!("{ns}/{name}")) {
                        assert_eq!(obj.metadata.name.as_deref(), Some(name.as_str()));
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

    store_contract! {
        fn list_after_an_update_should_serve_the_new_object_and_never_change_a_held_snapshot() {
            let s = store();
            for name in ["a", "b", "c"] {
                s.add(format!("ns/{name}").into(), cm("ns", name, 1))
                    .unwrap();
            }
            // Nobody holds the snapshot: the update is written into it.
            drop(s.list());
            let newer = cm("ns", "b", 2);
            s.update("ns/b".into(), newer.clone()).unwrap();
            let listed = s.list();
            assert_eq!(listed.len(), 3);
            assert!(listed.iter().any(|o| Arc::ptr_eq(o, &newer)));
            assert!(
                listed
                    .iter()
                    .all(|o| o.metadata.name.as_deref() != Some("b") || version(o) == 2)
            );
            // A held snapshot is left as it was; the next list sees the change.
            let newest = cm("ns", "b", 3);
            s.update("ns/b".into(), newest.clone()).unwrap();
            assert!(listed.iter().any(|o| Arc::ptr_eq(o, &newer)));
            assert!(s.list().iter().any(|o| Arc::ptr_eq(o, &newest)));
            // Objects coming and going are seen too.
            drop(listed);
            s.delete("ns/a").unwrap();
            s.add("ns/d".into(), cm("ns", "d", 1)).unwrap();
            let mut names: Vec<_> = s
                .list()
                .iter()
                .map(|o| o.metadata.name.clone().unwrap())
                .collect();
            names.sort();
            assert_eq!(names, ["b", "c", "d"]);
            s.check_indices().unwrap();
        }
    }

    store_contract! {
        fn an_index_function_repeating_a_value_should_index_the_object_once() {
            let s = store_with([(
                "twice",
                index_func(|cm: &ConfigMap| {
                    let ns = cm.metadata.namespace.clone().unwrap_or_default();
                    vec![ns.clone(), ns]
                }),
            )]);
            s.add("ns/a".into(), cm("ns", "a", 1)).unwrap();
            s.update("ns/a".into(), cm("ns", "a", 2)).unwrap();
            assert_eq!(s.by_index("twice", "ns").unwrap().len(), 1);
            assert_eq!(s.index_keys("twice", "ns").unwrap().len(), 1);
            s.check_indices().unwrap();
            s.delete("ns/a").unwrap();
            assert!(s.list_index_func_values("twice").is_empty());
        }
    }

    store_contract! {
        fn deleting_and_updating_among_many_should_keep_every_position_right() {
            // Objects indexed under several values each; deletes from the middle
            // move other objects in the table and in the buckets.
            let s = store_with([
                (
                    "letters",
                    index_func(|cm: &ConfigMap| {
                        let name = cm.metadata.name.clone().unwrap_or_default();
                        let mut values: Vec<String> = name.chars().map(String::from).collect();
                        values.push(format!("v{}", version(cm)));
                        values
                    }),
                ),
                (NAMESPACE_INDEX, meta_namespace_index_func()),
            ]);
            let names = ["ab", "bc", "cd", "da", "abcd", "b"];
            for (i, name) in names.iter().enumerate() {
                let ns = if i % 2 == 0 { "even" } else { "odd" };
                s.add(format!("{ns}/{name}").into(), cm(ns, name, 1))
                    .unwrap();
                s.check_indices().unwrap();
            }
            s.delete("even/ab").unwrap();
            s.check_indices().unwrap();
            s.update("odd/bc".into(), cm("odd", "bc", 2)).unwrap();
            s.check_indices().unwrap();
            s.delete("even/abcd").unwrap();
            s.check_indices().unwrap();
            s.add("even/ab".into(), cm("even", "ab", 3)).unwrap();
            s.check_indices().unwrap();
            s.delete("odd/b").unwrap();
            s.check_indices().unwrap();
            assert_eq!(
                keys(s.index_keys("letters", "b").unwrap()),
                BTreeSet::from(["even/ab".to_owned(), "odd/bc".to_owned()])
            );
            assert_eq!(
                keys(s.index_keys("letters", "v1").unwrap()),
                BTreeSet::from(["even/cd".to_owned(), "odd/da".to_owned()])
            );
            assert_eq!(s.by_index(NAMESPACE_INDEX, "odd").unwrap().len(), 2);
            assert_eq!(s.len(), 4);
        }
    }

    store_contract! {
        fn updates_and_deletes_should_not_call_the_index_function_on_the_old_object() {
            // Where an object was indexed is remembered: an update computes the
            // new object's values only, a delete computes none.
            use std::sync::atomic::{AtomicUsize, Ordering};
            let calls = Arc::new(AtomicUsize::new(0));
            let counted = calls.clone();
            let s = store_with([(
                "counted",
                index_func(move |cm: &ConfigMap| {
                    counted.fetch_add(1, Ordering::SeqCst);
                    cm.metadata.namespace.clone().into_iter().collect()
                }),
            )]);
            s.add("ns/a".into(), cm("ns", "a", 1)).unwrap();
            s.update("ns/a".into(), cm("ns", "a", 2)).unwrap();
            assert_eq!(calls.load(Ordering::SeqCst), 2);
            s.delete("ns/a").unwrap();
            assert_eq!(calls.load(Ordering::SeqCst), 2);
            assert!(s.list_index_func_values("counted").is_empty());
        }
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
            inner.slots[0].obj = Stored::Object(new);
        }
        assert!(s.check_indices().is_err());
    }
}
