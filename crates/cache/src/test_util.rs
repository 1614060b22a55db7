//! Helpers shared by the unit tests.

use std::collections::BTreeMap;
use std::sync::Arc;

use k8s_openapi::api::core::v1::ConfigMap;

use crate::delta::{Delta, DeltaType};
use crate::fifo::TransformFunc;
use crate::indexed_store::IndexedStore;

/// A ConfigMap `ns/name` (cluster-scoped if `ns` is empty) whose data holds
/// `version` under "v".
pub(crate) fn cm(ns: &str, name: &str, version: u32) -> Arc<ConfigMap> {
    let mut cm = ConfigMap::default();
    if !ns.is_empty() {
        cm.metadata.namespace = Some(ns.to_owned());
    }
    cm.metadata.name = Some(name.to_owned());
    cm.data = Some(BTreeMap::from([("v".to_owned(), version.to_string())]));
    Arc::new(cm)
}

/// A ConfigMap with labels.
pub(crate) fn cm_labels(ns: &str, name: &str, labels: &[(&str, &str)]) -> Arc<ConfigMap> {
    let mut obj = Arc::unwrap_or_clone(cm(ns, name, 0));
    obj.metadata.labels = Some(
        labels
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect(),
    );
    Arc::new(obj)
}

/// The "v" data entry of a ConfigMap.
pub(crate) fn version(cm: &ConfigMap) -> u32 {
    cm.data
        .as_ref()
        .and_then(|d| d.get("v"))
        .and_then(|v| v.parse().ok())
        .unwrap_or(u32::MAX)
}

/// A namespace-indexed cache holding `objects`: the known objects of a FIFO.
pub(crate) fn known(objects: &[Arc<ConfigMap>]) -> Arc<IndexedStore<ConfigMap>> {
    let cache = Arc::new(IndexedStore::namespace_indexed());
    for obj in objects {
        cache.add(obj.clone()).unwrap();
    }
    cache
}

/// Each delta as `(type, is a tombstone, version)` (version 0 for objectless
/// deltas).
pub(crate) fn summary(deltas: &[Delta<ConfigMap>]) -> Vec<(DeltaType, bool, u32)> {
    deltas
        .iter()
        .map(|d| {
            (
                d.type_,
                d.object.is_tombstone(),
                d.object.object().map_or(0, |o| version(o)),
            )
        })
        .collect()
}

/// A transform that sets every object's version to `to` (and drops its
/// managedFields), so a test sees which objects went through it.
pub(crate) fn set_version(to: u32) -> TransformFunc<ConfigMap> {
    Arc::new(move |obj: Arc<ConfigMap>| {
        let mut obj = Arc::unwrap_or_clone(obj);
        obj.metadata.managed_fields = None;
        obj.data = Some([("v".to_owned(), to.to_string())].into());
        Ok(Arc::new(obj))
    })
}

thread_local! {
    /// The stores the running contract test builds are compact.
    static COMPACT: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// Runs `test` with the test helpers building compact stores.
pub(crate) fn with_compact(test: impl FnOnce()) {
    struct Reset;
    impl Drop for Reset {
        fn drop(&mut self) {
            COMPACT.with(|c| c.set(false));
        }
    }
    COMPACT.with(|c| c.set(true));
    let _reset = Reset;
    test();
}

/// Whether the running contract test wants compact stores.
pub(crate) fn compact_mode() -> bool {
    COMPACT.with(std::cell::Cell::get)
}

/// `cache`, compact when the running contract test asks for it.
pub(crate) fn in_mode(cache: IndexedStore<ConfigMap>) -> IndexedStore<ConfigMap> {
    if compact_mode() {
        cache.compact()
    } else {
        cache
    }
}

/// Tests of the store contract, each run twice: against a default store
/// (`default_store`) and against a compact one (`compact_store`). Their
/// stores come from helpers that consult [`compact_mode`].
macro_rules! store_contract {
    ($($(#[$attr:meta])* fn $name:ident() $body:block)*) => {$(
        $(#[$attr])*
        mod $name {
            #[allow(unused_imports)]
            use super::*;

            fn body() $body

            #[test]
            fn default_store() {
                body();
            }

            #[test]
            fn compact_store() {
                crate::test_util::with_compact(body);
            }
        }
    )*};
}
pub(crate) use store_contract;
