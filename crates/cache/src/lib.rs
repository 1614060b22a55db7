//! client-go's `tools/cache` for Rust: the cache an informer keeps, and the
//! queue between the reflector and the informer.
//!
//! * Key functions: [`meta_namespace_key_func`] (`namespace/name`),
//!   [`split_meta_namespace_key`], [`deletion_handling_meta_namespace_key_func`],
//!   [`ExplicitKey`] and the structured [`ObjectName`].
//! * [`ThreadSafeStore`]: objects by key plus [`Indexers`] / indices under
//!   one lock; [`Cache`] adds a key function and implements [`Store`] and
//!   [`Indexer`] (and [`KeyListerGetter`], so it can be a FIFO's *known
//!   objects*).
//!   [`Cache::transaction`] applies several writes under one lock; the
//!   store remembers its [last synced resource version](Cache::last_store_sync_resource_version).
//! * [`RealFifo`] (client-go 1.36's informer queue: one entry per event,
//!   optionally atomic `ReplacedAll`/`SyncAll` events and batch pops) and
//!   [`DeltaFifo`] (per-key merged deltas, the older order), both behind the
//!   [`Queue`] trait, with [`Delta`], [`Deltas`], [`DeltaType`] and
//!   [`DeletedFinalStateUnknown`] tombstones; the plain keyed [`Fifo`].
//! * [`synctrack`]: whether a consumer has processed the whole initial list.
//! * [`Lister`] / [`NamespaceLister`] with label [`Selector`]s.
//! * With the `metrics` feature, named stores ([`Cache::named`]) and FIFOs
//!   ([`DeltaFifoOptions::name`]) record `cache_store_objects` and
//!   `cache_fifo_queued` through kcr-metrics.
//!
//! Objects are generic (`K: kube_core::Resource`: typed `k8s-openapi`
//! objects, custom resources, `DynamicObject`) and held as `Arc<K>`, so a
//! cached object is never copied.
//!
//! ```
//! use std::sync::Arc;
//! use k8s_openapi::api::core::v1::ConfigMap;
//! use kcr_cache::{Cache, DeltaFifo, DeltaFifoOptions, DeltaType, Lister, Selector, Store};
//!
//! # #[tokio::main(flavor = "current_thread")] async fn main() -> kcr_cache::Result<()> {
//! fn config_map(ns: &str, name: &str) -> Arc<ConfigMap> {
//!     let mut cm = ConfigMap::default();
//!     cm.metadata.namespace = Some(ns.into());
//!     cm.metadata.name = Some(name.into());
//!     Arc::new(cm)
//! }
//!
//! // The informer's cache, indexed by namespace, is the FIFO's known objects.
//! let indexer = Arc::new(Cache::<ConfigMap>::with_namespace_index());
//! let fifo = DeltaFifo::new(DeltaFifoOptions::new().known_objects(indexer.clone()));
//!
//! // The reflector lists, then watches.
//! fifo.replace(vec![config_map("a", "one"), config_map("b", "two")], "100")?;
//! fifo.delete(config_map("b", "two").into())?;
//!
//! // The informer pops and applies the deltas to the cache.
//! while !fifo.is_empty() {
//!     fifo.pop(|deltas, _initial| {
//!         for delta in deltas {
//!             let applied = match (delta.type_, delta.object.object()) {
//!                 (DeltaType::Deleted, _) => indexer.delete(delta.object.clone()),
//!                 (_, Some(obj)) => indexer.add(obj.clone()),
//!                 (_, None) => Ok(()),
//!             };
//!             applied.map_err(kcr_cache::ProcessError::failed)?;
//!         }
//!         Ok(())
//!     })
//!     .await?;
//! }
//! assert!(fifo.has_synced());
//!
//! // Controllers read through listers.
//! let lister = Lister::new(indexer.clone());
//! assert_eq!(lister.namespaced("a").list(&Selector::everything()).len(), 1);
//! assert!(lister.namespaced("b").get("two").is_none());
//! assert_eq!(indexer.list_keys(), vec![Arc::<str>::from("a/one")]);
//! # Ok(()) }
//! ```

mod compact;
mod delta_fifo;
mod error;
mod fifo;
mod index;
mod listers;
mod metrics;
mod object_names;
mod real_fifo;
mod selector;
mod store;
pub mod synctrack;
#[cfg(test)]
mod test_util;
mod thread_safe_store;

pub use compact::DEFAULT_DECODED_OBJECTS;
pub use delta_fifo::{
    BookmarkInfo, DeletedFinalStateUnknown, Delta, DeltaFifo, DeltaObject, DeltaType, Deltas,
    ReplacedAllInfo,
};
pub use error::{BoxError, Error, Result};
pub use fifo::{DeltaFifoOptions, Fifo, PopProcessFn, ProcessError, Queue, TransformFunc};
pub use index::{
    IndexFunc, IndexValues, Indexer, Indexers, NAMESPACE_INDEX, index_func,
    meta_namespace_index_func, try_index_func,
};
pub use listers::{Lister, NamespaceLister};
pub use object_names::{
    ObjectName, deletion_handling_object_to_name, meta_object_to_name, object_to_name,
};
pub use real_fifo::{DEFAULT_BATCH_SIZE, RealFifo, RealFifoOptions};
pub use selector::{Operator, Requirement, Selector};
pub use store::{
    Cache, ExplicitKey, KeyFunc, KeyGetter, KeyLister, KeyListerGetter, ObjectKey, Objects,
    ReplaceChanges, Store, Transaction, deletion_handling_meta_namespace_key_func,
    meta_namespace_key_func, split_meta_namespace_key,
};
pub use thread_safe_store::{
    ThreadSafeStore, ThreadSafeStoreTransaction, TransactionResults, TransactionType,
};
