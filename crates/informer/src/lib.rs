//! client-go's shared informer for Rust: one List & Watch per resource, an
//! indexed cache, and any number of event handlers.
//!
//! * [`SharedIndexInformer`]: a [`Reflector`](kcr_reflector::Reflector)
//!   feeds a [`RealFifo`](kcr_cache::RealFifo) with atomic events, as
//!   client-go 1.36 does; each popped event (or batch, applied as one
//!   transaction) updates the [`IndexedStore`](kcr_cache::IndexedStore) first, then
//!   reaches every handler in the order it happened. A relist reaches the
//!   handlers as its deletions first, then the listed objects;
//!   [`InformerQueue::DeltaFifo`] keeps the older order. Read the cache through
//!   [`lister`](SharedIndexInformer::lister) or
//!   [`get_indexer`](SharedIndexInformer::get_indexer).
//! * [`ResourceEventHandler`] (`on_add(obj, is_in_initial_list)`,
//!   `on_update(old, new)`, `on_delete(deleted)`; a [`DeletedObject`] always
//!   gives the key and name, tombstones included, and whether the final
//!   state is unknown),
//!   [`ResourceEventHandlerFuncs`] from closures,
//!   [`FilteringResourceEventHandler`], and [`is_resync`] to tell a resync
//!   from a live update.
//! * Each handler has its own unbounded buffer and task (client-go's
//!   `processorListener`): a slow handler never holds up the informer or the
//!   other handlers; a handler added after start first gets the cache as
//!   adds; each handler may have its own resync period; a panicking handler
//!   is caught, logged, counted and keeps receiving events. Its
//!   [`Registration`] tells when it has seen the whole initial list.
//!   [`remove_event_handler`](SharedIndexInformer::remove_event_handler)
//!   is asynchronous;
//!   [`shut_down_event_handler`](SharedIndexInformer::shut_down_event_handler)
//!   waits until none of the handler's calls runs (and refuses, with a
//!   typed error, to wait from inside that handler).
//! * [`SharedInformerFactory`]: one informer per resource and namespace,
//!   typed ([`informer::<K>()`](SharedInformerFactory::informer)) or dynamic
//!   ([`dynamic_informer`](SharedInformerFactory::dynamic_informer)), started,
//!   synced and shut down together; [`wait_for_cache_sync`] for any set of
//!   informers and registrations.
//! * [`SyncedVersion`]: the resource version an informer's cache has reached (one atomic load)
//!   and a wait for it to move, for read-your-own-writes.
//!
//! Caches are lean by default: `metadata.managedFields` are dropped before
//! anything is stored, and objects are shared as `Arc<K>` between the cache
//! and the handlers, never cloned per consumer.
//!
//! ```
//! use std::sync::{Arc, Mutex};
//! use std::time::Duration;
//! use k8s_openapi::api::core::v1::ConfigMap;
//! use kcr_informer::{ResourceEventHandlerFuncs, SharedInformerFactory};
//! use kube::api::{Api, PostParams};
//! use tokio_util::sync::CancellationToken;
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let env = kcr_testenv::TestEnv::start().await?;
//! let api: Api<ConfigMap> = Api::namespaced(env.client(), "default");
//! let mut cm = ConfigMap::default();
//! cm.metadata.name = Some("settings".into());
//! api.create(&PostParams::default(), &cm).await?;
//!
//! let factory = SharedInformerFactory::new(env.client(), Duration::ZERO);
//! let informer = factory.informer::<ConfigMap>();
//! let seen = Arc::new(Mutex::new(Vec::new()));
//! let registration = informer.add_event_handler(ResourceEventHandlerFuncs::new().add_func({
//!     let seen = seen.clone();
//!     move |cm: &Arc<ConfigMap>, initial| {
//!         seen.lock().unwrap().push((cm.metadata.name.clone().unwrap_or_default(), initial));
//!     }
//! }))?;
//! factory.start();
//!
//! let cancel = CancellationToken::new();
//! assert!(kcr_informer::wait_for_cache_sync(&cancel, &[&informer, &registration]).await);
//! assert_eq!(*seen.lock().unwrap(), [("settings".to_owned(), true)]);
//! let lister = informer.lister();
//! assert!(lister.namespaced("default").get("settings").is_some());
//!
//! factory.shutdown().await;
//! assert!(informer.is_stopped());
//! # Ok(())
//! # }
//! ```

mod error;
mod event_handler;
mod factory;
mod processor_listener;
mod shared_informer;
mod synced_version;
mod wait;

pub use error::{Error, Result};
pub use event_handler::{
    DeletedObject, FilteringResourceEventHandler, ResourceEventHandler, ResourceEventHandlerFuncs,
    is_resync,
};
pub use factory::{InformerKey, SharedInformerFactory};
pub use kcr_reflector::{ShardSelector, WireFormat};
pub use shared_informer::{
    InformerQueue, MINIMUM_RESYNC_PERIOD, Registration, SharedIndexInformer,
};
pub use synced_version::{SyncedVersion, parse_resource_version};
pub use wait::{HasSynced, SYNCED_POLL_PERIOD, wait_for_cache_sync};
