//! [`SyncedVersion`]: the resource version an informer's cache has reached, readable with one
//! atomic load, and a wait for it to move (the building block of read-your-own-writes; client-go
//! 1.36 exposes the same version as `LastStoreSyncResourceVersion`, KEP-5647). The protocol is
//! on [`SyncedVersion`].

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};

use tokio::sync::Notify;

/// A resource version as a comparable number (KEP-5504): decimal digits without a leading zero
/// that fit in 64 bits. `None` for an empty, malformed or out-of-range version (which cannot be
/// compared with another); `"0"` is `Some(0)`, older than any object.
pub fn parse_resource_version(rv: &str) -> Option<u64> {
    if rv.is_empty() || (rv.len() > 1 && rv.starts_with('0')) {
        return None;
    }
    if !rv.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    rv.parse().ok()
}

struct Shared {
    /// The cache's resource version as a number (0: none yet).
    version: AtomicU64,
    /// Callers inside `wait_until`.
    waiters: AtomicUsize,
    notify: Notify,
}

/// Which resource version an informer's cache has reached, and a way to wait until it moves.
/// Get it from [`SharedIndexInformer::synced_version`](crate::SharedIndexInformer::synced_version);
/// clones share the same number.
///
/// # Protocol
///
/// The informer's pop loop is the only writer: after every pop (an event, a batch, a relist or
/// a bookmark applied to the cache) it [`set`](SyncedVersion::set)s the cache's
/// [`last_store_sync_resource_version`](kcr_cache::IndexedStore::last_store_sync_resource_version),
/// parsed as a number. A reader loads it ([`current`](SyncedVersion::current)); a waiter calls
/// [`wait_until`](SyncedVersion::wait_until) with a condition that is re-checked after each
/// `set`.
///
/// Invariants:
/// - **The cache is ahead of the number.** The cache is written before the number is stored
///   (both by the pop loop, in that order), so a reader that loads version `v` and then reads
///   the cache sees every change up to `v`.
/// - **The number is the cache's, not a maximum.** It follows the cache, also if a relist moves
///   it back: a reader is never told that the cache holds something it does not.
/// - **No lost wake-up.** A waiter registers (a counter, then a `Notified` future, which
///   `notify_waiters` wakes from its creation on) before it checks its condition; the writer stores the number before it reads the counter. Either the
///   writer sees the waiter and wakes it, or the waiter's check runs after the store and sees
///   the new number.
/// - **Free when unused.** An informer tracks the number only once someone asked for it
///   ([`SharedIndexInformer::synced_version`](crate::SharedIndexInformer::synced_version)); a
///   `set` with no waiter stores one atomic and wakes nobody.
///
/// Resource versions are compared as numbers, as Kubernetes 1.35 allows (KEP-5504, comparable
/// resource versions: decimal digits without a leading zero, a longer one is newer). A version
/// that is not such a number ([`parse_resource_version`] gives `None`) cannot be compared: the
/// number stays where it was.
#[derive(Clone)]
pub struct SyncedVersion {
    shared: Arc<Shared>,
}

impl std::fmt::Debug for SyncedVersion {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SyncedVersion")
            .field("version", &self.current())
            .finish()
    }
}

impl Default for SyncedVersion {
    fn default() -> Self {
        Self::new()
    }
}

impl SyncedVersion {
    /// A number at 0 (nothing synced), for an informer or a test to [`set`](Self::set).
    pub fn new() -> Self {
        Self {
            shared: Arc::new(Shared {
                version: AtomicU64::new(0),
                waiters: AtomicUsize::new(0),
                notify: Notify::new(),
            }),
        }
    }

    /// The resource version the cache has reached, as a number (0 before anything comparable
    /// was stored). One atomic load.
    #[inline]
    pub fn current(&self) -> u64 {
        self.shared.version.load(Ordering::SeqCst)
    }

    /// Records that the cache has reached `resource_version` and wakes the waiters (the
    /// informer calls this after each change of its cache). A version that cannot be compared
    /// leaves the number as it is, and still wakes the waiters (the cache changed).
    pub fn set(&self, resource_version: &str) {
        match parse_resource_version(resource_version) {
            Some(v) => self.set_number(v),
            None => {
                if !resource_version.is_empty() {
                    tracing::debug!(
                        resource_version,
                        "not a comparable resource version; the synced version stays"
                    );
                }
                self.wake();
            }
        }
    }

    /// [`set`](Self::set) with a version already parsed.
    pub fn set_number(&self, version: u64) {
        self.shared.version.store(version, Ordering::SeqCst);
        self.wake();
    }

    fn wake(&self) {
        if self.shared.waiters.load(Ordering::SeqCst) > 0 {
            self.shared.notify.notify_waiters();
        }
    }

    /// Returns once `ready(current)` is true, checking it now and again after each
    /// [`set`](Self::set) (never on a timer). Bound it with `tokio::time::timeout` or
    /// `timeout_at`: it waits for ever if the cache never gets there.
    pub async fn wait_until(&self, mut ready: impl FnMut(u64) -> bool) {
        let shared = &*self.shared;
        shared.waiters.fetch_add(1, Ordering::SeqCst);
        let _registered = Registered(&shared.waiters);
        loop {
            // Created before the check: a `notify_waiters` from now on wakes it.
            let notified = shared.notify.notified();
            if ready(shared.version.load(Ordering::SeqCst)) {
                return;
            }
            notified.await;
        }
    }
}

/// Counts a waiter out when its wait ends or is dropped.
struct Registered<'a>(&'a AtomicUsize);

impl Drop for Registered<'_> {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::SeqCst);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn only_comparable_versions_should_parse() {
        assert_eq!(parse_resource_version("0"), Some(0));
        assert_eq!(parse_resource_version("12345"), Some(12345));
        assert_eq!(parse_resource_version(""), None);
        assert_eq!(parse_resource_version("012"), None);
        assert_eq!(parse_resource_version("12a"), None);
        assert_eq!(parse_resource_version("-1"), None);
        assert_eq!(parse_resource_version("+1"), None);
        assert_eq!(parse_resource_version("99999999999999999999999"), None);
    }

    #[test]
    fn an_incomparable_version_should_leave_the_number() {
        let v = SyncedVersion::new();
        v.set("10");
        v.set("abc");
        assert_eq!(v.current(), 10);
        v.set("7");
        assert_eq!(
            v.current(),
            7,
            "the number follows the cache, also backwards"
        );
    }

    #[tokio::test(start_paused = true)]
    async fn a_waiter_should_wake_on_the_set_that_satisfies_it_and_not_before() {
        let v = SyncedVersion::new();
        let waiter = tokio::spawn({
            let v = v.clone();
            async move { v.wait_until(|n| n >= 5).await }
        });
        tokio::task::yield_now().await;
        v.set("3");
        tokio::task::yield_now().await;
        assert!(!waiter.is_finished());
        v.set("5");
        tokio::time::timeout(Duration::from_millis(1), waiter)
            .await
            .unwrap_or_else(|_| panic!("not woken by the set"))
            .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(v.shared.waiters.load(Ordering::SeqCst), 0);
    }

    #[tokio::test]
    async fn a_dropped_wait_should_count_itself_out() {
        let v = SyncedVersion::new();
        let r = tokio::time::timeout(Duration::from_millis(5), v.wait_until(|n| n > 0)).await;
        assert!(r.is_err());
        assert_eq!(v.shared.waiters.load(Ordering::SeqCst), 0);
    }

    #[test]
    fn no_wake_up_should_be_lost_between_threads() {
        // A writer thread sets 1..=N while a waiter waits for each value in turn: a lost
        // wake-up would leave it waiting for ever (bounded here, so it fails instead).
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_time()
            .build()
            .unwrap_or_else(|e| panic!("{e}"));
        rt.block_on(async {
            let v = SyncedVersion::new();
            const N: u64 = 2000;
            let writer = {
                let v = v.clone();
                tokio::task::spawn_blocking(move || {
                    for i in 1..=N {
                        v.set_number(i);
                        std::hint::spin_loop();
                    }
                })
            };
            for target in (1..=N).step_by(7) {
                tokio::time::timeout(Duration::from_secs(10), v.wait_until(|n| n >= target))
                    .await
                    .unwrap_or_else(|_| panic!("lost wake-up waiting for {target}"));
            }
            writer.await.unwrap_or_else(|e| panic!("{e}"));
        });
    }
}
