//! client-go's Reflector for Rust: List & Watch into a store.
//!
//! A [`Reflector`] keeps a [`ReflectorStore`] (kcr-cache's `DeltaFifo` or
//! `IndexedStore`) consistent with the API server, exactly as client-go's does:
//!
//! - each cycle ([`Reflector::list_and_watch`]) gets the whole state with a
//!   **streaming list** (a watch with `sendInitialEvents=true`, whose state
//!   ends at the `k8s.io/initial-events-end` bookmark; on by default, as in
//!   client-go 1.36, and held in a temporary store transformed as the real
//!   store would; its wait for that bookmark is bounded, a minute by default,
//!   after which the reflector lists instead, from then on), or, when that is
//!   off, refused, given up on, or the source cannot stream, with a **list** at `resourceVersion="0"` in pages of 500
//!   (client-go's pager rules: an explicit page size pages every list, a
//!   list at `"0"` that came back paged makes later lists page, an expired
//!   continue token redoes the list whole at the same version), and hands
//!   the store **one `replace`**;
//! - it then **watches** from that version with `allowWatchBookmarks=true`
//!   and a random `timeoutSeconds` in `[300, 600)`; every event goes to the
//!   store and moves [`Reflector::last_sync_resource_version`] (the
//!   synthetic `ADDED` events of a watch from `""` do not); a watch that
//!   ends normally is re-opened from the last version **without relisting**;
//! - a watch that ends with an error (`410 Gone`, a very short watch, an
//!   event that does not decode, a failed resync) ends the cycle; an
//!   expired or too large version makes the next list start from `""`;
//!   objects missing from the new list reach the store as deletions
//!   (`DeltaFifo` turns them into `DeletedFinalStateUnknown` tombstones);
//! - between cycles it **backs off** (800 ms doubling to 30 s, jittered,
//!   reset after 2 min of health); `429` waits the server's `Retry-After`,
//!   capped at the maximum backoff; a watch refused with `429` or an
//!   unreachable server is retried without relisting;
//! - malformed events, objects that do not decode, unknown event types and
//!   watch lines over a size limit never panic: they are logged (kind and
//!   name of the raw object), counted (`reflector_decode_errors_total`) and
//!   answered with a relist that keeps the store's content until the new
//!   list replaces it;
//! - only the error that ends a cycle (a failed list, a refused watch)
//!   reaches the watch error handler, as in client-go;
//! - Kubernetes' protobuf wire format by default, as client-go, for the
//!   built-in kinds whose decoding kcr-protobuf proves against a real
//!   kube-apiserver's bytes, JSON for every other kind
//!   ([`WireFormat`]; [`ApiListerWatcher::wire_format`] switches back to JSON);
//! - lists and streaming lists ask for gzip (`Accept-Encoding: gzip`, as
//!   client-go) and decompress what the server compressed as it streams in
//!   ([`ApiListerWatcher::gzip`]);
//! - optional: periodic `resync`, `MaxInternalErrorRetryDuration`, decoding
//!   without `managedFields` ([`ApiListerWatcher::drop_managed_fields`]);
//!   `tracing` spans per list and watch; metrics in `kcr_metrics::reflector`.
//!
//! The source is a [`ListerWatcher`], implemented for [`kube::Api`] (typed
//! objects, custom resources, `DynamicObject`).
//!
//! # Example
//!
//! A reflector filling an `IndexedStore` of ConfigMaps from an API server (here
//! kcr-testenv's embedded one):
//!
//! ```
//! use std::sync::Arc;
//! use std::time::Duration;
//! use k8s_openapi::api::core::v1::ConfigMap;
//! use kcr_cache::IndexedStore;
//! use kcr_reflector::Reflector;
//! use kube::api::{Api, ObjectMeta, PostParams};
//! use tokio_util::sync::CancellationToken;
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> Result<(), Box<dyn std::error::Error>> {
//! # let env = kcr_testenv::TestEnv::start().await?;
//! # let client = env.client();
//! let api: Api<ConfigMap> = Api::namespaced(client, "default");
//! let settings = ConfigMap {
//!     metadata: ObjectMeta { name: Some("settings".into()), ..ObjectMeta::default() },
//!     ..ConfigMap::default()
//! };
//! api.create(&PostParams::default(), &settings).await?;
//!
//! let cache = Arc::new(IndexedStore::<ConfigMap>::default());
//! let reflector = Arc::new(Reflector::new(api, cache.clone()).name("configmaps"));
//! let cancel = CancellationToken::new();
//! let task = tokio::spawn({
//!     let (reflector, cancel) = (reflector.clone(), cancel.clone());
//!     async move { reflector.run(cancel).await }
//! });
//!
//! // The cache follows the server: first the list, then every watch event.
//! while cache.get_by_key("default/settings").is_none() {
//!     tokio::time::sleep(Duration::from_millis(5)).await;
//! }
//! assert!(!reflector.last_sync_resource_version().is_empty());
//!
//! cancel.cancel(); // stops promptly; the cache keeps what it has
//! task.await?;
//! # Ok(())
//! # }
//! ```

mod api;
mod backoff;
mod error;
mod gzip;
mod listwatch;
mod protobuf;
mod reflector;
mod retry_with_deadline;
mod shard_selector;
mod store;
mod temporary_store;
mod without_managed_fields;

pub use api::{ApiListerWatcher, DEFAULT_MAX_EVENT_BYTES, WireFormat};
pub use backoff::BackoffConfig;
pub use error::{Error, Result};
pub use listwatch::{
    Bookmark, INITIAL_EVENTS_END_ANNOTATION, ListOptions, ListerWatcher, ObjectList, VersionMatch,
    WatchEvent, WatchOptions, WatchStream,
};
pub use reflector::{
    DEFAULT_INITIAL_EVENTS_END_TIMEOUT, DEFAULT_MIN_WATCH_TIMEOUT, DEFAULT_PAGE_SIZE, Reflector,
};
pub use shard_selector::ShardSelector;
pub use store::ReflectorStore;
