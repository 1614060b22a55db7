//! The object store: every object as JSON behind one global, monotonically increasing resource
//! version (as etcd's revision), with a bounded history of changes that watches replay from.

use std::collections::{BTreeMap, HashMap, VecDeque};
use std::ops::Bound;
use std::sync::{Arc, OnceLock};

use bytes::Bytes;
use serde_json::Value;

use crate::registry::{self, ResourceDef};

/// One stored object version: the JSON value and its serialization (made once, sent many times),
/// and its protobuf message, made when a protobuf client first asks for it (as kube-apiserver's
/// watch cache keeps the encodings it sends).
#[derive(Debug, Clone)]
pub(crate) struct Stored {
    pub(crate) value: Arc<Value>,
    pub(crate) json: Bytes,
    protobuf: Arc<OnceLock<Option<Bytes>>>,
}

impl Stored {
    pub(crate) fn new(value: Value) -> Self {
        let json = Bytes::from(crate::serializer::to_vec(&value));
        Self {
            value: Arc::new(value),
            json,
            protobuf: Arc::default(),
        }
    }

    /// The object's protobuf message (without envelope) through its kind's table, `None` when
    /// a field of it does not encode.
    pub(crate) fn protobuf(&self, schema: &kcr_protobuf::Schema) -> Option<&Bytes> {
        self.protobuf
            .get_or_init(|| {
                let object = self.value.as_object()?;
                kcr_protobuf::encode_message(object, schema)
                    .ok()
                    .map(Bytes::from)
            })
            .as_ref()
    }
}

/// The type of a change.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum EventType {
    Added,
    Modified,
    Deleted,
}

impl EventType {
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            EventType::Added => "ADDED",
            EventType::Modified => "MODIFIED",
            EventType::Deleted => "DELETED",
        }
    }
}

/// One change in the history.
#[derive(Debug)]
pub(crate) struct Event {
    pub(crate) rv: u64,
    pub(crate) storage: Arc<str>,
    pub(crate) namespace: Option<String>,
    pub(crate) key: String,
    pub(crate) kind: EventType,
    /// The object after the change (for `Deleted`: its final state, at the deletion's version).
    pub(crate) object: Stored,
    /// The object before the change (`None` for `Added`).
    pub(crate) prev: Option<Stored>,
}

/// Why a version cannot be served.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum VersionError {
    /// Older than the oldest retained history (`compacted` is the newest lost version).
    TooOld { compacted: u64 },
    /// Newer than the current version.
    TooNew { current: u64 },
}

/// One page of a list.
#[derive(Debug)]
pub(crate) struct Page {
    pub(crate) items: Vec<Stored>,
    pub(crate) rv: u64,
    /// The key of the last item returned when more items follow.
    pub(crate) last_key: Option<String>,
    pub(crate) remaining: Option<u64>,
}

/// What to list: see [`Store::list`].
pub(crate) struct ListQuery<'a> {
    /// Only this namespace.
    pub(crate) namespace: Option<&'a str>,
    /// As of this version (`None`: now).
    pub(crate) at: Option<u64>,
    /// Start after this key.
    pub(crate) after: Option<&'a str>,
    /// At most this many items (0: all).
    pub(crate) limit: usize,
    /// Only items this accepts.
    pub(crate) keep: &'a dyn Fn(&Value) -> bool,
    /// Count the items after the page (`remainingItemCount`).
    pub(crate) count_remaining: bool,
}

/// The store key of an object.
pub(crate) fn object_key(namespace: Option<&str>, name: &str) -> String {
    match namespace {
        Some(ns) => format!("{ns}/{name}"),
        None => name.to_owned(),
    }
}

/// All server state that a single lock protects.
#[derive(Debug)]
pub(crate) struct Store {
    rv: u64,
    objects: HashMap<Arc<str>, BTreeMap<String, Stored>>,
    history: VecDeque<Arc<Event>>,
    /// Events with `rv <= compacted` are no longer in the history (the watch cache window).
    compacted: u64,
    /// The revision of the last compaction of the storage underneath (`etcdctl compact`).
    storage_compacted: u64,
    history_limit: usize,
    defs: Vec<Arc<ResourceDef>>,
}

impl Store {
    pub(crate) fn new(history_limit: usize) -> Self {
        Self {
            rv: 1,
            objects: HashMap::new(),
            history: VecDeque::new(),
            compacted: 1,
            storage_compacted: 0,
            history_limit: history_limit.max(1),
            defs: registry::builtins().into_iter().map(Arc::new).collect(),
        }
    }

    /// The current (newest) resource version.
    pub(crate) fn rv(&self) -> u64 {
        self.rv
    }

    /// Every served resource.
    pub(crate) fn defs(&self) -> &[Arc<ResourceDef>] {
        &self.defs
    }

    /// Looks up a served resource.
    pub(crate) fn def(
        &self,
        group: &str,
        version: &str,
        plural: &str,
    ) -> Option<&Arc<ResourceDef>> {
        self.defs
            .iter()
            .find(|d| d.group == group && d.version == version && d.plural == plural)
    }

    /// Serves the resources of a CRD (replacing what it served before).
    pub(crate) fn register(&mut self, storage: &str, defs: Vec<ResourceDef>) {
        self.defs.retain(|d| !(d.custom && &*d.storage == storage));
        self.defs.extend(defs.into_iter().map(Arc::new));
    }

    /// Stops serving a CRD's resources.
    pub(crate) fn unregister(&mut self, storage: &str) {
        self.defs.retain(|d| !(d.custom && &*d.storage == storage));
    }

    /// The current object at `key`.
    pub(crate) fn get(&self, storage: &str, key: &str) -> Option<&Stored> {
        self.objects.get(storage)?.get(key)
    }

    /// Keys of every object of `storage` (optionally in one namespace).
    pub(crate) fn keys(&self, storage: &str, namespace: Option<&str>) -> Vec<String> {
        let Some(map) = self.objects.get(storage) else {
            return Vec::new();
        };
        match namespace {
            Some(ns) => {
                let prefix = format!("{ns}/");
                map.range::<str, _>((Bound::Included(prefix.as_str()), Bound::Unbounded))
                    .take_while(|(k, _)| k.starts_with(&prefix))
                    .map(|(k, _)| k.clone())
                    .collect()
            }
            None => map.keys().cloned().collect(),
        }
    }

    /// Every storage that holds objects.
    pub(crate) fn storages(&self) -> Vec<Arc<str>> {
        self.objects.keys().cloned().collect()
    }

    /// Records a change at the next resource version. `value` must already carry that version
    /// (see [`Store::next_rv`]); for a deletion it is the object's final state.
    pub(crate) fn commit(
        &mut self,
        storage: &Arc<str>,
        namespace: Option<&str>,
        key: &str,
        kind: EventType,
        value: Value,
    ) -> Stored {
        self.rv += 1;
        let stored = Stored::new(value);
        let map = self.objects.entry(storage.clone()).or_default();
        let prev = match kind {
            EventType::Deleted => map.remove(key),
            EventType::Added | EventType::Modified => map.insert(key.to_owned(), stored.clone()),
        };
        if map.is_empty() {
            self.objects.remove(storage);
        }
        self.history.push_back(Arc::new(Event {
            rv: self.rv,
            storage: storage.clone(),
            namespace: namespace.map(str::to_owned),
            key: key.to_owned(),
            kind,
            object: stored.clone(),
            prev,
        }));
        while self.history.len() > self.history_limit {
            if let Some(e) = self.history.pop_front() {
                self.compacted = e.rv;
            }
        }
        stored
    }

    /// The version the next commit gets.
    pub(crate) fn next_rv(&self) -> u64 {
        self.rv + 1
    }

    /// Drops the whole history: every version before the current one becomes too old.
    pub(crate) fn compact(&mut self) {
        self.history.clear();
        self.compacted = self.rv;
        self.compact_storage();
    }

    /// Compacts the storage underneath the watch cache at the current revision: the window of
    /// recent history stays (see [`crate::watch_cache`]).
    pub(crate) fn compact_storage(&mut self) {
        self.storage_compacted = self.rv;
    }

    /// The revision of the last storage compaction.
    pub(crate) fn storage_compacted(&self) -> u64 {
        self.storage_compacted
    }

    /// The newest version no longer in the window: watches and exact lists need a newer one.
    pub(crate) fn window_start(&self) -> u64 {
        self.compacted
    }

    /// Events after `rv` (of `storage` when given, else of every resource), at most `max`.
    /// Also returns the version up to which the history was read.
    pub(crate) fn events_after(
        &self,
        rv: u64,
        storage: &str,
        max: usize,
    ) -> Result<(Vec<Arc<Event>>, u64), VersionError> {
        if rv < self.compacted {
            return Err(VersionError::TooOld {
                compacted: self.compacted,
            });
        }
        let start = (rv - self.compacted) as usize;
        let mut out = Vec::new();
        let mut read_to = rv.max(self.compacted);
        for e in self.history.iter().skip(start) {
            if out.len() >= max {
                break;
            }
            read_to = e.rv;
            if &*e.storage == storage {
                out.push(e.clone());
            }
        }
        if out.len() < max {
            read_to = read_to.max(self.rv);
        }
        Ok((out, read_to))
    }

    /// One page of `storage` as the query asks, in key order.
    pub(crate) fn list(&self, storage: &str, q: &ListQuery<'_>) -> Result<Page, VersionError> {
        let ListQuery {
            namespace,
            at,
            after,
            limit,
            keep,
            count_remaining,
        } = *q;
        let at_rv = at.unwrap_or(self.rv);
        if at_rv > self.rv {
            return Err(VersionError::TooNew { current: self.rv });
        }
        // Keys changed after `at_rv`, mapped to their state at `at_rv`.
        let mut overlay: BTreeMap<&str, Option<&Stored>> = BTreeMap::new();
        if at_rv < self.rv {
            if at_rv < self.compacted {
                return Err(VersionError::TooOld {
                    compacted: self.compacted,
                });
            }
            let start = (at_rv - self.compacted) as usize;
            for e in self.history.iter().skip(start) {
                if &*e.storage == storage {
                    overlay.entry(e.key.as_str()).or_insert(e.prev.as_ref());
                }
            }
        }
        let empty = BTreeMap::new();
        let map = self.objects.get(storage).unwrap_or(&empty);
        let prefix = namespace.map(|ns| format!("{ns}/"));
        let lower: Bound<&str> = match (after, prefix.as_deref()) {
            (Some(a), _) => Bound::Excluded(a),
            (None, Some(p)) => Bound::Included(p),
            (None, None) => Bound::Unbounded,
        };
        let states = || StatesAt {
            current: map.range::<str, _>((lower, Bound::Unbounded)).peekable(),
            changed: overlay
                .range::<&str, _>((lower, Bound::Unbounded))
                .peekable(),
            prefix: prefix.as_deref(),
        };
        let matching =
            states().filter_map(|(key, value)| value.filter(|v| keep(&v.value)).map(|v| (key, v)));
        let mut items = Vec::new();
        let mut last_key = None;
        let mut more = false;
        for (key, value) in matching {
            if limit > 0 && items.len() == limit {
                more = true;
                break;
            }
            last_key = Some(key.to_owned());
            items.push(value.clone());
        }
        // As etcd counts it: every object of the range from the page's start, less the page
        // (the objects `keep` drops count too: only a shard selector may drop any here).
        let remaining = (more && count_remaining).then(|| {
            let total = states().filter(|(_, value)| value.is_some()).count();
            total.saturating_sub(items.len()) as u64
        });
        Ok(Page {
            items,
            rv: at_rv,
            last_key: if more { last_key } else { None },
            remaining,
        })
    }
}

/// The objects of a key range as of a past version, in key order: the current objects merged
/// with an overlay of the keys changed since (their state at that version, `None`: absent).
struct StatesAt<'a, C, O>
where
    C: Iterator<Item = (&'a String, &'a Stored)>,
    O: Iterator<Item = (&'a &'a str, &'a Option<&'a Stored>)>,
{
    current: std::iter::Peekable<C>,
    changed: std::iter::Peekable<O>,
    /// Only keys with this prefix (a namespace); the range starts inside it.
    prefix: Option<&'a str>,
}

impl<'a, C, O> Iterator for StatesAt<'a, C, O>
where
    C: Iterator<Item = (&'a String, &'a Stored)>,
    O: Iterator<Item = (&'a &'a str, &'a Option<&'a Stored>)>,
{
    type Item = (&'a str, Option<&'a Stored>);

    fn next(&mut self) -> Option<Self::Item> {
        loop {
            let (key, value) = match (self.current.peek(), self.changed.peek()) {
                (None, None) => return None,
                (Some((ck, _)), Some((ok, _))) if ck.as_str() == **ok => {
                    self.current.next();
                    self.changed.next().map(|(k, v)| (*k, *v))?
                }
                (Some((ck, _)), Some((ok, _))) if ck.as_str() > **ok => {
                    self.changed.next().map(|(k, v)| (*k, *v))?
                }
                (Some(_), _) => self.current.next().map(|(k, v)| (k.as_str(), Some(v)))?,
                (None, Some(_)) => self.changed.next().map(|(k, v)| (*k, *v))?,
            };
            match self.prefix {
                Some(p) if !key.starts_with(p) => {
                    if key > p {
                        return None;
                    }
                }
                _ => return Some((key, value)),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn put(store: &mut Store, s: &Arc<str>, name: &str, kind: EventType) {
        let rv = store.next_rv();
        store.commit(
            s,
            Some("ns"),
            &object_key(Some("ns"), name),
            kind,
            json!({"metadata": {"name": name, "namespace": "ns", "resourceVersion": rv.to_string()}}),
        );
    }

    fn q<'a>(
        namespace: Option<&'a str>,
        at: Option<u64>,
        after: Option<&'a str>,
        limit: usize,
    ) -> ListQuery<'a> {
        ListQuery {
            namespace,
            at,
            after,
            limit,
            keep: &|_| true,
            count_remaining: true,
        }
    }

    fn names(page: &Page) -> Vec<String> {
        page.items
            .iter()
            .map(|s| {
                s.value["metadata"]["name"]
                    .as_str()
                    .unwrap_or_default()
                    .to_owned()
            })
            .collect()
    }

    #[test]
    fn list_should_reconstruct_an_older_version_from_the_history() {
        let mut store = Store::new(100);
        let s: Arc<str> = "/configmaps".into();
        put(&mut store, &s, "a", EventType::Added);
        put(&mut store, &s, "b", EventType::Added);
        let at = store.rv();
        put(&mut store, &s, "c", EventType::Added);
        put(&mut store, &s, "a", EventType::Deleted);
        let then = store.list(&s, &q(None, Some(at), None, 0)).unwrap();
        assert_eq!(names(&then), ["a", "b"]);
        let now = store.list(&s, &q(None, None, None, 0)).unwrap();
        assert_eq!(names(&now), ["b", "c"]);
    }

    #[test]
    fn list_should_page_in_key_order_and_count_what_remains() {
        let mut store = Store::new(100);
        let s: Arc<str> = "/configmaps".into();
        for n in ["d", "b", "a", "c"] {
            put(&mut store, &s, n, EventType::Added);
        }
        let p1 = store.list(&s, &q(Some("ns"), None, None, 3)).unwrap();
        assert_eq!(names(&p1), ["a", "b", "c"]);
        assert_eq!(p1.remaining, Some(1));
        let p2 = store
            .list(&s, &q(Some("ns"), None, p1.last_key.as_deref(), 3))
            .unwrap();
        assert_eq!(names(&p2), ["d"]);
        assert_eq!(p2.last_key, None);
    }

    #[test]
    fn history_should_be_bounded_and_report_compacted_versions_as_too_old() {
        let mut store = Store::new(2);
        let s: Arc<str> = "/configmaps".into();
        let start = store.rv();
        for n in ["a", "b", "c"] {
            put(&mut store, &s, n, EventType::Added);
        }
        assert!(matches!(
            store.events_after(start, &s, 10),
            Err(VersionError::TooOld { .. })
        ));
        let (events, to) = store.events_after(start + 1, &s, 10).unwrap();
        assert_eq!(events.len(), 2);
        assert_eq!(to, store.rv());
        store.compact();
        assert!(store.events_after(store.rv() - 1, &s, 10).is_err());
        assert!(store.events_after(store.rv(), &s, 10).unwrap().0.is_empty());
    }
}
