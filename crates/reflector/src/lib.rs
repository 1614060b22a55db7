//! client-go's Reflector for Rust: List & Watch into a store.
//!
//! A [`Reflector`] keeps a [`ReflectorStore`] (kcr-cache's `DeltaFifo` or
//! `Cache`) consistent with the API server, exactly as client-go's does:
//!
//! - it **lists** with `resourceVersion="0"` (served from the server's
//!   cache), in pages of 500 when the server pages, redoing the list with
//!   `resourceVersion=""` if a continue token expires, and hands the store
//!   **one `replace`** with every item and the list's version;
//! - it **watches** from that version with `allowWatchBookmarks=true` and a
//!   random `timeoutSeconds` in `[300, 600)`; every event goes to the store
//!   and moves [`Reflector::last_sync_resource_version`]; a bookmark only
//!   moves the version; a watch that ends normally is re-opened from the last
//!   version **without relisting**;
//! - `410 Gone` / `Expired` (an error status or an `ERROR` event) makes it
//!   **relist**; objects missing from the new list reach the store as
//!   deletions (`DeltaFifo` turns them into `DeletedFinalStateUnknown`
//!   tombstones);
//! - other errors **back off** (800 ms doubling to 30 s, jittered, reset after
//!   2 min of health); `429` waits the server's `Retry-After`; a refused
//!   connection on a watch retries the watch without relisting;
//! - malformed events, objects that do not decode and unknown event types
//!   never panic: they are reported (kind and name of the raw object), counted
//!   (`reflector_decode_errors_total`) and answered with a relist that keeps
//!   the store's content until the new list replaces it;
//! - optional: periodic `resync`, streaming lists (WatchList) with fallback,
//!   a watch error handler; `tracing` spans per list and watch; metrics in
//!   `kcr_metrics::reflector`.
//!
//! The source is a [`ListerWatcher`], implemented for [`kube::Api`] (typed
//! objects, custom resources, `DynamicObject`).
//!
//! # Example
//!
//! A reflector filling a `Cache` of ConfigMaps from an API server (here
//! kcr-testenv's embedded one):
//!
//! ```
//! use std::sync::Arc;
//! use std::time::Duration;
//! use k8s_openapi::api::core::v1::ConfigMap;
//! use kcr_cache::Cache;
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
//! let cache = Arc::new(Cache::<ConfigMap>::default());
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
mod listwatch;
mod reflector;
mod retry_with_deadline;
mod store;
mod without_managed_fields;

pub use api::{ApiListerWatcher, DEFAULT_MAX_EVENT_BYTES};
pub use backoff::BackoffConfig;
pub use error::{Error, Result};
pub use listwatch::{
    Bookmark, INITIAL_EVENTS_END_ANNOTATION, ListOptions, ListerWatcher, ObjectList, VersionMatch,
    WatchEvent, WatchOptions, WatchStream,
};
pub use reflector::{DEFAULT_MIN_WATCH_TIMEOUT, DEFAULT_PAGE_SIZE, Reflector};
pub use store::{BoxError, ReflectorStore};
