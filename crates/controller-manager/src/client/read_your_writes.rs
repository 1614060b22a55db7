//! The bookkeeping of read-your-own-writes for one informer: which of this process's writes
//! its cache has not shown yet. The protocol and its invariants are described in the
//! [module documentation](super).

use std::collections::HashMap;
use std::collections::hash_map::Entry;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};

use parking_lot::Mutex;

/// The writes of one informer's objects that its cache may not show yet.
#[derive(Default)]
pub(crate) struct WriteTracker {
    /// The highest resource version ever recorded (0: none). Only grows. A cache at this
    /// version or later shows every recorded write but the deletes known only by UID.
    max_version: AtomicU64,
    /// How many entries wait for a delete known only by UID.
    uid_deletes: AtomicUsize,
    /// How many entries there are (0: nothing recorded that the cache may not show; a read
    /// then costs this one load).
    len: AtomicUsize,
    // A parking_lot lock, never held across `.await`.
    pending: Mutex<Pending>,
}

#[derive(Default)]
struct Pending {
    by_key: HashMap<String, Write>,
    /// Past this many entries, a `record` drops the ones the cache has passed.
    prune_at: usize,
}

/// What the cache must show of one object.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
struct Write {
    /// The highest resource version a write of the object returned (0: none known).
    version: u64,
    /// A delete that returned no version: the cache must no longer hold this UID at the key.
    deleted_uid: Option<String>,
}

/// The fewest entries a prune leaves room for.
const MIN_PRUNE_AT: usize = 64;

impl Write {
    fn seen(&self, key: &str, current: u64, uid_at: &dyn Fn(&str) -> Option<String>) -> bool {
        self.version <= current
            && self
                .deleted_uid
                .as_deref()
                .is_none_or(|uid| uid_at(key).as_deref() != Some(uid))
    }
}

impl WriteTracker {
    /// Whether nothing recorded can be missing from a cache at the version `current` gives:
    /// the fast path of every read. With no entry it is one atomic load; with entries but
    /// none the cache can lack (no UID delete, the cache at or past the highest version) four,
    /// and the first such call drops the entries under the lock, so the next reads are back
    /// to one load.
    #[inline]
    pub(crate) fn all_seen_at(&self, current: impl FnOnce() -> u64) -> bool {
        if self.len.load(Ordering::SeqCst) == 0 {
            return true;
        }
        let current = current();
        if !self.passed_all(current) {
            return false;
        }
        let mut pending = self.pending.lock();
        // Checked again under the lock: a write recorded meanwhile is kept.
        if self.passed_all(current) {
            pending.by_key.clear();
            self.len.store(0, Ordering::SeqCst);
        }
        true
    }

    fn passed_all(&self, current: u64) -> bool {
        self.uid_deletes.load(Ordering::SeqCst) == 0
            && current >= self.max_version.load(Ordering::SeqCst)
    }

    /// Records a successful write of the object at `key`: the resource version it returned
    /// (`None`: no comparable one) and, for a delete that returned no version, the UID the
    /// cache must stop holding there. `current` and `uid_at` describe the cache now, to drop
    /// what it has passed once the entries pile up.
    pub(crate) fn record(
        &self,
        key: &str,
        version: Option<u64>,
        deleted_uid: Option<String>,
        current: u64,
        uid_at: &dyn Fn(&str) -> Option<String>,
    ) {
        if version.is_none() && deleted_uid.is_none() {
            return;
        }
        let mut pending = self.pending.lock();
        let write = match pending.by_key.entry(key.to_owned()) {
            Entry::Occupied(e) => e.into_mut(),
            Entry::Vacant(e) => e.insert(Write::default()),
        };
        if let Some(v) = version {
            write.version = write.version.max(v);
        }
        if let Some(uid) = deleted_uid {
            if write.deleted_uid.is_none() {
                self.uid_deletes.fetch_add(1, Ordering::SeqCst);
            }
            write.deleted_uid = Some(uid);
        }
        // Published under the lock, after the entry: a reader whose fast path sees the new
        // maximum finds the entry when it takes the lock.
        if let Some(v) = version {
            self.max_version.fetch_max(v, Ordering::SeqCst);
        }
        self.len.store(pending.by_key.len(), Ordering::SeqCst);
        if pending.by_key.len() >= pending.prune_at {
            self.prune(&mut pending, current, uid_at);
            pending.prune_at = (pending.by_key.len() * 2).max(MIN_PRUNE_AT);
        }
    }

    /// Whether a cache at `current` shows this process's writes of the object at `key`
    /// (`uid_at` reads the UID the cache holds at a key). Drops the object's entry once it
    /// does.
    pub(crate) fn key_seen_at(
        &self,
        key: &str,
        current: u64,
        uid_at: &dyn Fn(&str) -> Option<String>,
    ) -> bool {
        if self.all_seen_at(|| current) {
            return true;
        }
        let mut pending = self.pending.lock();
        let Some(write) = pending.by_key.get(key) else {
            return true;
        };
        if !write.seen(key, current, uid_at) {
            return false;
        }
        if let Some(write) = pending.by_key.remove(key)
            && write.deleted_uid.is_some()
        {
            self.uid_deletes.fetch_sub(1, Ordering::SeqCst);
        }
        self.len.store(pending.by_key.len(), Ordering::SeqCst);
        true
    }

    /// Whether a cache at `current` shows every write this process recorded (what a list
    /// waits for). Drops the entries it shows.
    pub(crate) fn all_seen(&self, current: u64, uid_at: &dyn Fn(&str) -> Option<String>) -> bool {
        if self.all_seen_at(|| current) {
            return true;
        }
        let mut pending = self.pending.lock();
        self.prune(&mut pending, current, uid_at);
        pending.by_key.is_empty()
    }

    /// The resource version a cache must reach for the object at `key` (`None`: nothing
    /// recorded), for error messages.
    pub(crate) fn wanted_for(&self, key: &str) -> Option<u64> {
        self.pending.lock().by_key.get(key).map(|w| w.version)
    }

    /// Whether a write of the object at `key` is recorded and not yet known to be shown.
    pub(crate) fn has(&self, key: &str) -> bool {
        self.len.load(Ordering::SeqCst) > 0 && self.pending.lock().by_key.contains_key(key)
    }

    /// The highest resource version recorded.
    pub(crate) fn max_version(&self) -> u64 {
        self.max_version.load(Ordering::SeqCst)
    }

    /// How many objects have writes the cache may not show yet.
    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.pending.lock().by_key.len()
    }

    fn prune(&self, pending: &mut Pending, current: u64, uid_at: &dyn Fn(&str) -> Option<String>) {
        let mut uid_deletes_dropped = 0;
        pending.by_key.retain(|key, write| {
            let seen = write.seen(key, current, uid_at);
            if seen && write.deleted_uid.is_some() {
                uid_deletes_dropped += 1;
            }
            !seen
        });
        if uid_deletes_dropped > 0 {
            self.uid_deletes
                .fetch_sub(uid_deletes_dropped, Ordering::SeqCst);
        }
        self.len.store(pending.by_key.len(), Ordering::SeqCst);
    }
}

#[cfg(test)]
mod tests {
    //! The protocol against a model of an informer: a server that numbers writes, a watch that
    //! delivers them in order but late, a cache, and readers.

    use super::*;
    use kcr_informer::SyncedVersion;
    use proptest::prelude::*;
    use std::collections::BTreeMap;

    const NOBODY: &dyn Fn(&str) -> Option<String> = &|_| None;

    #[test]
    fn a_fresh_tracker_should_block_nothing() {
        let t = WriteTracker::default();
        assert!(t.all_seen_at(|| 0));
        assert!(t.key_seen_at("a", 0, NOBODY));
        assert!(t.all_seen(0, NOBODY));
    }

    #[test]
    fn a_get_should_wait_only_for_its_own_object_and_a_list_for_the_highest() {
        let t = WriteTracker::default();
        t.record("a", Some(10), None, 5, NOBODY);
        t.record("b", Some(20), None, 5, NOBODY);
        assert!(!t.key_seen_at("a", 9, NOBODY));
        assert!(t.key_seen_at("a", 10, NOBODY));
        assert!(t.key_seen_at("c", 9, NOBODY), "no write of c: no wait");
        assert!(!t.all_seen(19, NOBODY));
        assert!(t.all_seen(20, NOBODY));
        assert_eq!(t.len(), 0, "entries are dropped once the cache passed them");
    }

    #[test]
    fn a_delete_known_by_uid_should_wait_until_the_cache_drops_that_uid() {
        let t = WriteTracker::default();
        let holds_u1: &dyn Fn(&str) -> Option<String> = &|_| Some("u1".to_owned());
        let holds_u2: &dyn Fn(&str) -> Option<String> = &|_| Some("u2".to_owned());
        t.record("a", None, Some("u1".into()), 5, holds_u1);
        assert!(
            !t.all_seen_at(|| u64::MAX),
            "the fast path never skips a UID delete"
        );
        assert!(!t.key_seen_at("a", 100, holds_u1));
        assert!(!t.all_seen(100, holds_u1));
        assert!(t.key_seen_at("a", 100, holds_u2), "recreated: another UID");
        assert!(t.all_seen_at(|| 100), "the fast path is back");
        assert_eq!(t.len(), 0);
    }

    #[test]
    fn a_read_past_every_entry_should_drop_them_all_and_go_back_to_one_load() {
        let t = WriteTracker::default();
        for (i, key) in ["a", "b", "c"].iter().enumerate() {
            t.record(key, Some(10 + i as u64), None, 0, NOBODY);
        }
        assert!(!t.all_seen_at(|| 11));
        assert_eq!(t.len(), 3);
        assert!(t.all_seen_at(|| 12));
        assert_eq!(t.len(), 0);
        assert!(
            t.all_seen_at(|| panic!("the version is not read when nothing is recorded")),
            "one load"
        );
    }

    #[test]
    fn entries_should_not_pile_up_once_the_cache_passed_them() {
        let t = WriteTracker::default();
        for i in 1..=10_000u64 {
            // The cache trails the writes by ten versions; nobody reads.
            t.record(
                &format!("o{}", i % 500),
                Some(i),
                None,
                i.saturating_sub(10),
                NOBODY,
            );
        }
        assert!(
            t.len() <= 2 * 10 + MIN_PRUNE_AT,
            "{} entries kept for 10 unseen writes",
            t.len()
        );
    }

    /// One step of a run.
    #[derive(Debug, Clone)]
    enum Step {
        /// This process writes object `o` (deletes it when `delete`; the server answers a
        /// delete with a status, no version, when `status_only`).
        Write {
            o: u8,
            delete: bool,
            status_only: bool,
        },
        /// Someone else writes object `o` (deletes it when `delete`).
        Foreign { o: u8, delete: bool },
        /// The watch delivers `n` more events to the cache.
        Deliver { n: u8 },
        /// A bookmark: once everything is delivered, the cache's version becomes the server's.
        Bookmark,
        /// A get of object `o`, and a list.
        Read { o: u8 },
    }

    fn step() -> impl Strategy<Value = Step> {
        prop_oneof![
            3 => (0..4u8, any::<bool>(), any::<bool>())
                .prop_map(|(o, delete, status_only)| Step::Write { o, delete, status_only }),
            1 => (0..4u8, any::<bool>()).prop_map(|(o, delete)| Step::Foreign { o, delete }),
            3 => (0..3u8).prop_map(|n| Step::Deliver { n }),
            1 => Just(Step::Bookmark),
            3 => (0..4u8).prop_map(|o| Step::Read { o }),
        ]
    }

    /// One of this process's writes, as the cache must show it.
    #[derive(Debug, Clone)]
    enum Own {
        /// Shown once the cache has every event up to this version.
        At(u64),
        /// Shown once the cache no longer holds this UID at the key.
        Deleted(String),
    }

    /// A committed change: the key, its new state (uid, version) or `None` (deleted), its version.
    type Change = (String, Option<(String, u64)>, u64);

    type Cache = std::sync::Arc<parking_lot::Mutex<BTreeMap<String, (String, u64)>>>;

    #[derive(Default)]
    struct World {
        version: u64,
        uids: u64,
        /// key -> (uid, version).
        server: BTreeMap<String, (String, u64)>,
        /// Committed changes not delivered yet: (key, new state or deleted, version).
        in_flight: std::collections::VecDeque<Change>,
        cache: Cache,
        /// Every version up to this one is in the cache.
        delivered: u64,
        own: BTreeMap<String, Vec<Own>>,
    }

    impl World {
        /// A write on the server; `None` for the delete of a missing object (a 404). Returns
        /// the version and the UID of the object before the write.
        fn commit(&mut self, key: &str, delete: bool) -> Option<(u64, Option<String>)> {
            let before = self.server.get(key).map(|(uid, _)| uid.clone());
            if delete && before.is_none() {
                return None;
            }
            self.version += 1;
            let state = if delete {
                self.server.remove(key);
                None
            } else {
                let uid = before.clone().unwrap_or_else(|| {
                    self.uids += 1;
                    format!("uid{}", self.uids)
                });
                self.server
                    .insert(key.to_owned(), (uid.clone(), self.version));
                Some((uid, self.version))
            };
            self.in_flight
                .push_back((key.to_owned(), state, self.version));
            Some((self.version, before))
        }

        fn deliver_one(&mut self, synced: &SyncedVersion) -> bool {
            let Some((key, state, version)) = self.in_flight.pop_front() else {
                return false;
            };
            match state {
                Some(obj) => self.cache.lock().insert(key, obj),
                None => self.cache.lock().remove(&key),
            };
            self.delivered = version;
            synced.set_number(version);
            true
        }

        fn shows(&self, key: &str, write: &Own) -> bool {
            match write {
                Own::At(v) => self.delivered >= *v,
                Own::Deleted(uid) => self.cache.lock().get(key).map(|(u, _)| u) != Some(uid),
            }
        }

        fn shows_own_writes_of(&self, key: &str) -> bool {
            self.own
                .get(key)
                .is_none_or(|writes| writes.iter().all(|w| self.shows(key, w)))
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 1024, ..ProptestConfig::default() })]

        /// Over any interleaving of own and foreign writes, watch deliveries, bookmarks and
        /// reads: a get is ready exactly when the cache shows every own write of its object
        /// (so it never returns a state older than this process's last write, and it waits no
        /// longer than the cache needs to catch up), a list exactly when the cache shows every
        /// own write of the kind; and once everything is delivered nothing is kept.
        #[test]
        fn reads_should_be_ready_exactly_when_the_cache_shows_every_own_write(
            steps in proptest::collection::vec(step(), 1..80)
        ) {
            let mut w = World::default();
            let t = WriteTracker::default();
            let synced = SyncedVersion::new();
            let cache = w.cache.clone();
            let uid_at = move |k: &str| cache.lock().get(k).map(|(uid, _)| uid.clone());
            for s in steps {
                match s {
                    Step::Write { o, delete, status_only } => {
                        let key = format!("o{o}");
                        let Some((version, before)) = w.commit(&key, delete) else { continue };
                        let write = match (delete, status_only, before) {
                            // A delete answered with a status, of an object the cache
                            // shows (a controller deletes what it read).
                            (true, true, Some(uid)) if uid_at(&key).as_deref() == Some(uid.as_str()) => {
                                t.record(&key, None, Some(uid.clone()), synced.current(), &uid_at);
                                Own::Deleted(uid)
                            }
                            _ => {
                                t.record(&key, Some(version), None, synced.current(), &uid_at);
                                Own::At(version)
                            }
                        };
                        w.own.entry(key).or_default().push(write);
                    }
                    Step::Foreign { o, delete } => {
                        let _ = w.commit(&format!("o{o}"), delete);
                    }
                    Step::Deliver { n } => {
                        for _ in 0..n {
                            w.deliver_one(&synced);
                        }
                    }
                    Step::Bookmark => {
                        if w.in_flight.is_empty() {
                            w.delivered = w.version;
                            synced.set_number(w.version);
                        }
                    }
                    Step::Read { o } => {
                        let key = format!("o{o}");
                        let current = synced.current();
                        prop_assert_eq!(
                            t.key_seen_at(&key, current, &uid_at),
                            w.shows_own_writes_of(&key),
                            "get of {} at {}", key, current
                        );
                        let all = w.own.keys().all(|k| w.shows_own_writes_of(k));
                        prop_assert_eq!(t.all_seen(current, &uid_at), all, "list at {}", current);
                    }
                }
            }
            while w.deliver_one(&synced) {}
            for o in 0..4u8 {
                let key = format!("o{o}");
                prop_assert!(t.key_seen_at(&key, synced.current(), &uid_at));
            }
            prop_assert!(t.all_seen(synced.current(), &uid_at));
            prop_assert_eq!(t.len(), 0);
            prop_assert!(t.all_seen_at(|| synced.current()));
        }
    }
}
