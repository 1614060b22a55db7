//! A client that writes through the API server and reads from the manager's cache:
//! [`CachedClient`], with read-your-own-writes (controller-runtime v0.25's experimental
//! read-your-own-write client, kubernetes-sigs/controller-runtime#3472 and its design #3473;
//! kube-controller-manager's use of `LastStoreSyncResourceVersion`, KEP-5647).
//!
//! A reconciler that writes an object and reads it back from the cache before the watch event
//! arrived sees its old state, and acts on it again (a second child, a status fight). With
//! [`Options::read_your_own_writes`](crate::Options::read_your_own_writes) on (the default),
//! a [`CachedClient`] read waits until the cache shows the client's own writes.
//!
//! # Protocol
//!
//! Per informer (a type, and a namespace when the cache is limited to namespaces) the manager
//! keeps a write tracker, shared by every `CachedClient` of that type, and the informer
//! publishes the resource version its cache has reached
//! ([`SyncedVersion`](kcr_informer::SyncedVersion), a number set after each change to the
//! cache, the cache being written first). Resource versions are compared as numbers
//! (Kubernetes 1.35's comparable resource versions, KEP-5504).
//!
//! - **Write.** After a successful create, update, patch, apply, delete, status or scale
//!   write, the client records the object's key with the resource version of the server's
//!   answer (the highest one if the key has several). A delete answered with a `Status` (the
//!   object is gone at once) carries no version: the client records the object's UID, which
//!   the cache must stop holding at that key. An entry is recorded only if the informer can
//!   see the write: no label selector, or the written object matches it, or the cache holds
//!   the key (the object is leaving the selector, which the watch reports as a deletion), or
//!   an earlier write of the object is recorded (a scale, which carries no labels).
//!   The entry count and the tracker's maximum version are published after the entry, under
//!   the tracker's lock.
//! - **Get.** Fast path (no lock): if the tracker has no entry (one atomic load), or no UID
//!   delete is pending and the informer's version is at or past the tracker's maximum (then
//!   every entry is dropped, once, under the lock), read the cache. Else, under the lock: the object's
//!   entry is shown once the informer's version is at or past its version and the cache no
//!   longer holds its deleted UID; shown (or absent), read the cache; not shown, wait for the
//!   informer's version to move and check again, until the read's deadline.
//! - **List.** The same for every entry of each informer: the list waits until each informer
//!   shows every entry recorded for it (the highest version pending for it, and its UID
//!   deletes).
//! - **Dropping.** An entry is dropped when a read finds it shown, and a write drops every
//!   shown entry once the entries have doubled since the last such sweep (at least 64): the
//!   entries are bounded by about twice the writes the cache has not shown yet.
//!
//! Invariants (checked by a property test over interleavings of own and foreign writes, watch
//! deliveries, bookmarks and reads, and over HTTP against kcr-testenv with delayed watch
//! events):
//! - **A read is never older than this process's writes**: a get returns the cache once it
//!   holds every event up to the object's last own write (or no longer holds the UID it
//!   deleted); a list once every informer holds every event up to its last own write.
//!   The cache is written before its version is published, so the version a reader sees is a
//!   floor of what it reads.
//! - **A read waits no longer than the cache needs**: it is ready the moment the informer
//!   applies the event (or bookmark) that shows the write, woken by that change, never on a
//!   timer; writes by anyone else, and own writes of other objects (for a get), never hold it.
//! - **Never a hang**: a wait ends at the read's deadline ([`ReadOptions::deadline`], else
//!   the reconcile's [`deadline`](crate::controller::ReconcileContext::deadline), else
//!   [`DEFAULT_READ_TIMEOUT`]) with [`Error::CacheNotCaughtUp`](crate::Error::CacheNotCaughtUp);
//!   [`ReadOptions::wait`]`(false)` reads the cache as it is.
//! - **Cheap when idle**: with nothing pending, a read costs one atomic load more than a plain
//!   cache read, and no lock (see `benches/read_your_writes.rs`); once the cache has passed
//!   every recorded write, the next read drops them (four loads and the lock, once).
//!
//! Limits: a write answered with a resource version that is not a number (some aggregated API
//! servers) is not tracked. An informer with a field selector, or a sharded one, may never see
//! a write of an object it excludes: a read then waits until a bookmark (about a minute on
//! kube-apiserver) or its deadline. A delete answered with a `Status` of an object the cache
//! never held does not hold reads back (the cache has nothing to drop). Writes through
//! another client (a plain `kube::Api`) are not tracked.

mod cached_client;
pub(crate) mod read_your_writes;

pub(crate) use cached_client::WriteTrackers;
pub use cached_client::{CachedClient, DEFAULT_READ_TIMEOUT, ReadOptions};
