//! Whether a consumer has processed everything of an informer's initial
//! list (client-go's `tools/cache/synctrack`): [`SingleFileTracker`] for
//! events processed in order, [`AsyncTracker`] for keys processed by
//! several workers.
//!
//! Both are synced once the upstream (the informer) has synced **and**
//! every initial item started has finished. [`has_synced`](SingleFileTracker::has_synced)
//! answers at once; [`done`](SingleFileTracker::done) waits for it.
//!
//! ```
//! use kcr_cache::synctrack::SingleFileTracker;
//!
//! let tracker = SingleFileTracker::new("informer + handler");
//! tracker.start(); // an initial-list item is handed to the handler
//! tracker.upstream_has_synced(); // the informer has synced
//! assert!(!tracker.has_synced());
//! tracker.finished(); // the handler is done with it
//! assert!(tracker.has_synced());
//! ```

use std::collections::HashSet;
use std::hash::Hash;
use std::sync::atomic::{AtomicBool, AtomicI64, Ordering};

use parking_lot::Mutex;
use tokio::sync::watch;

/// The "synced" signal both trackers share: set once, never cleared.
struct Synced {
    tx: watch::Sender<bool>,
}

impl Synced {
    fn new() -> Self {
        Self {
            tx: watch::Sender::new(false),
        }
    }

    fn mark(&self) {
        self.tx
            .send_if_modified(|synced| !std::mem::replace(synced, true));
    }

    fn get(&self) -> bool {
        *self.tx.borrow()
    }

    async fn done(&self) {
        let mut rx = self.tx.subscribe();
        // The sender lives as long as `self`, so this only ends when synced.
        let _ = rx.wait_for(|synced| *synced).await;
    }
}

/// Tracks the initial items of one in-order consumer (client-go's
/// `SingleFileTracker`): a counter of items started and not yet finished.
pub struct SingleFileTracker {
    name: String,
    count: AtomicI64,
    upstream_has_synced: AtomicBool,
    synced: Synced,
}

impl std::fmt::Debug for SingleFileTracker {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SingleFileTracker")
            .field("name", &self.name)
            .field("count", &self.count.load(Ordering::Acquire))
            .field("has_synced", &self.has_synced())
            .finish()
    }
}

impl SingleFileTracker {
    /// A tracker named `name` (for logs).
    pub fn new(name: impl Into<String>) -> Self {
        Self {
            name: name.into(),
            count: AtomicI64::new(0),
            upstream_has_synced: AtomicBool::new(false),
            synced: Synced::new(),
        }
    }

    /// Call before processing each item of the initial list.
    pub fn start(&self) {
        self.count.fetch_add(1, Ordering::AcqRel);
    }

    /// Call when an item of the initial list has been processed. A
    /// `finished` without its `start` is a logic error (client-go panics):
    /// it is logged and the counter stays at zero.
    pub fn finished(&self) {
        let left = self.count.fetch_sub(1, Ordering::AcqRel) - 1;
        if left < 0 {
            self.count.fetch_add(1, Ordering::AcqRel);
            tracing::error!(tracker = %self.name, "synctrack: finished without start; ignored");
            return;
        }
        if left == 0 && self.upstream_has_synced.load(Ordering::Acquire) {
            self.synced.mark();
        }
    }

    /// Call (at least once) when the upstream has synced, after every
    /// initial item has been `start`ed.
    pub fn upstream_has_synced(&self) {
        self.upstream_has_synced.store(true, Ordering::Release);
        if self.count.load(Ordering::Acquire) == 0 {
            self.synced.mark();
        }
    }

    /// Whether the upstream has synced and every started item finished.
    pub fn has_synced(&self) -> bool {
        self.synced.get()
    }

    /// Waits until [`has_synced`](Self::has_synced) (client-go's `Done`).
    pub async fn done(&self) {
        self.synced.done().await;
    }

    /// The tracker's name.
    pub fn name(&self) -> &str {
        &self.name
    }
}

/// Tracks the initial keys of a consumer with several workers (client-go's
/// `AsyncTracker`): the set of keys started and not yet finished. A
/// `finished` without `start` is harmless.
pub struct AsyncTracker<T> {
    name: String,
    upstream_has_synced: AtomicBool,
    waiting: Mutex<HashSet<T>>,
    synced: Synced,
}

impl<T> std::fmt::Debug for AsyncTracker<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AsyncTracker")
            .field("name", &self.name)
            .field("waiting", &self.waiting.lock().len())
            .field("has_synced", &self.synced.get())
            .finish()
    }
}

impl<T: Eq + Hash> AsyncTracker<T> {
    /// A tracker named `name` (for logs).
    pub fn new(name: impl Into<String>) -> Self {
        Self {
            name: name.into(),
            upstream_has_synced: AtomicBool::new(false),
            waiting: Mutex::new(HashSet::new()),
            synced: Synced::new(),
        }
    }

    /// Call before processing `key`, an item of the initial list.
    pub fn start(&self, key: T) {
        self.waiting.lock().insert(key);
    }

    /// Call when `key` has been processed.
    pub fn finished(&self, key: &T) {
        let mut waiting = self.waiting.lock();
        waiting.remove(key);
        if self.upstream_has_synced.load(Ordering::Acquire) && waiting.is_empty() {
            self.synced.mark();
        }
    }

    /// Call (at least once) when the upstream has synced, after every
    /// initial key has been `start`ed.
    pub fn upstream_has_synced(&self) {
        self.upstream_has_synced.store(true, Ordering::Release);
        if self.waiting.lock().is_empty() {
            self.synced.mark();
        }
    }

    /// Whether the upstream has synced and every started key finished.
    pub fn has_synced(&self) -> bool {
        self.synced.get()
    }

    /// Waits until [`has_synced`](Self::has_synced) (client-go's `Done`).
    pub async fn done(&self) {
        self.synced.done().await;
    }

    /// The tracker's name.
    pub fn name(&self) -> &str {
        &self.name
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn single_file_tracker_should_wait_for_upstream_and_every_started_item() {
        let t = SingleFileTracker::new("t");
        assert!(!t.has_synced());
        t.start();
        t.start();
        t.finished();
        assert!(!t.has_synced(), "upstream not synced");
        t.upstream_has_synced();
        assert!(!t.has_synced(), "one item still in flight");
        t.finished();
        assert!(t.has_synced());
        // Once synced, it stays synced.
        t.start();
        assert!(t.has_synced());
    }

    #[test]
    fn single_file_tracker_should_ignore_a_finished_without_start() {
        let t = SingleFileTracker::new("t");
        t.finished();
        t.start();
        t.upstream_has_synced();
        assert!(!t.has_synced(), "the stray finished must not count");
        t.finished();
        assert!(t.has_synced());
    }

    #[test]
    fn async_tracker_should_track_keys_and_tolerate_unstarted_finishes() {
        let t = AsyncTracker::new("t");
        t.start("a");
        t.start("b");
        t.start("a");
        t.finished(&"x");
        t.upstream_has_synced();
        assert!(!t.has_synced());
        t.finished(&"a");
        assert!(!t.has_synced());
        t.finished(&"b");
        assert!(t.has_synced());
    }

    #[tokio::test(start_paused = true)]
    async fn done_should_wake_once_synced() {
        let t = std::sync::Arc::new(SingleFileTracker::new("t"));
        let waiter = tokio::spawn({
            let t = t.clone();
            async move { t.done().await }
        });
        tokio::task::yield_now().await;
        assert!(!waiter.is_finished());
        t.upstream_has_synced();
        waiter.await.unwrap();
    }
}
