//! client-go's `tools/cache` for Rust: the cache an informer keeps, and the
//! queue between the reflector and the informer.
//!
//! Modules, leaves first (each imports only modules before it, which
//! `tests/module_order.rs` checks): `error`, `metrics`, `selector`,
//! `synctrack`, `key` (key functions), `delta` (the delta types), `store`
//! (the [`Store`] trait), `index`, `thread_safe_store`, `indexed_store`,
//! `listers`, `object_names`, `fifo` (the [`FifoQueue`] trait, [`Fifo`]),
//! `delta_fifo`, `real_fifo`, `mutation_cache`.
//!
//! * Key functions: [`meta_namespace_key_func`] (`namespace/name`),
//!   [`split_meta_namespace_key`], [`deletion_handling_meta_namespace_key_func`],
//!   [`ExplicitKey`] and the structured [`ObjectName`].
//! * [`ThreadSafeStore`]: objects by key plus [`Indexers`] / indices under
//!   one lock; [`IndexedStore`] adds a key function and implements [`Store`] and
//!   [`Indexer`] (and [`KeyListerGetter`], so it can be a FIFO's *known
//!   objects*).
//!   [`IndexedStore::transaction`] applies several writes under one lock; the
//!   store remembers its [last synced resource version](IndexedStore::last_store_sync_resource_version).
//! * [`RealFifo`] (client-go 1.36's informer queue: one entry per event,
//!   optionally atomic `ReplacedAll`/`SyncAll` events and batch pops) and
//!   [`DeltaFifo`] (per-key merged deltas, the older order), both behind the
//!   [`FifoQueue`] trait, with [`Delta`], [`Deltas`], [`DeltaType`] and
//!   [`DeletedFinalStateUnknown`] tombstones; the plain keyed [`Fifo`].
//! * [`MutationCache`]: the results of one's own writes, read together with
//!   an informer's cache until the informer has caught up (TTL, size limit,
//!   include-adds, UID-aware delete tombstones; client-go 1.37).
//! * [`synctrack`]: whether a consumer has processed the whole initial list.
//! * [`Lister`] / [`NamespaceLister`] with label [`Selector`]s.
//! * With the `metrics` feature, named stores ([`IndexedStore::named`]) and FIFOs
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
//! use kcr_cache::{DeltaFifo, DeltaFifoOptions, DeltaObject, DeltaType, IndexedStore, Lister, Selector};
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
//! let indexer = Arc::new(IndexedStore::<ConfigMap>::namespace_indexed());
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
//!             let applied = match (delta.type_, &delta.object) {
//!                 (DeltaType::Deleted, DeltaObject::Object(obj)) => indexer.delete(obj.clone()),
//!                 (DeltaType::Deleted, DeltaObject::DeletedFinalStateUnknown(tombstone)) => {
//!                     indexer.delete_by_key(&tombstone.key)
//!                 }
//!                 (_, DeltaObject::Object(obj)) => indexer.add(obj.clone()),
//!                 _ => Ok(()),
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
mod delta;
mod delta_fifo;
mod error;
mod fifo;
mod index;
mod indexed_store;
mod key;
mod listers;
mod metrics;
mod mutation_cache;
mod object_names;
mod real_fifo;
mod selector;
mod store;
pub mod synctrack;
#[cfg(test)]
mod test_util;
mod thread_safe_store;

pub use compact::DEFAULT_DECODED_OBJECTS;
pub use delta::{
    BookmarkInfo, DeletedFinalStateUnknown, Delta, DeltaObject, DeltaType, Deltas, ReplacedAllInfo,
    deletion_handling_meta_namespace_key_func,
};
pub use delta_fifo::{DeltaFifo, DeltaFifoOptions};
pub use error::{BoxError, Error, Result, panic_message};
pub use fifo::{Fifo, FifoQueue, PopProcessFn, ProcessError, TransformFunc};
pub use index::{
    IndexFunc, IndexValues, Indexer, Indexers, NAMESPACE_INDEX, index_func,
    meta_namespace_index_func, try_index_func,
};
pub use indexed_store::{IndexedStore, ReplaceChanges, Transaction};
pub use key::{
    ExplicitKey, KeyFunc, ObjectKey, Objects, meta_namespace_key_func, split_meta_namespace_key,
};
pub use listers::{Lister, NamespaceLister};
pub use mutation_cache::{
    DEFAULT_MUTATION_CACHE_SIZE, DEFAULT_MUTATION_CACHE_TTL, MutationCache, MutationCacheOptions,
    compare_resource_versions,
};
pub use object_names::{
    ObjectName, deletion_handling_object_to_name, meta_object_to_name, object_to_name,
};
pub use real_fifo::{DEFAULT_BATCH_SIZE, RealFifo, RealFifoOptions};
pub use selector::{Operator, Requirement, Selector};
pub use store::{KeyGetter, KeyLister, KeyListerGetter, Store};
pub use thread_safe_store::{
    ThreadSafeStore, ThreadSafeStoreTransaction, TransactionResults, TransactionType,
};
