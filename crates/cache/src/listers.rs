//! [`Lister`] and [`NamespaceLister`]: typed, read-only views of an
//! [`Indexer`] (client-go's `listers.go` and generated listers).

use std::sync::Arc;

use kube_core::Resource;

use crate::index::{Indexer, NAMESPACE_INDEX};
use crate::key::Objects;
use crate::selector::Selector;

/// Lists and gets objects from an [`Indexer`] (usually an informer's
/// [`IndexedStore`](crate::IndexedStore)).
///
/// ```
/// use std::sync::Arc;
/// use k8s_openapi::api::core::v1::ConfigMap;
/// use kcr_cache::{IndexedStore, Lister, Selector};
///
/// let cache = Arc::new(IndexedStore::<ConfigMap>::namespace_indexed());
/// let mut cm = ConfigMap::default();
/// cm.metadata.name = Some("settings".into());
/// cm.metadata.namespace = Some("prod".into());
/// cm.metadata.labels = Some([("app".to_owned(), "web".to_owned())].into());
/// cache.add(Arc::new(cm))?;
///
/// let lister = Lister::new(cache);
/// let web: Selector = "app=web".parse()?;
/// assert_eq!(lister.list(&web).len(), 1);
/// assert!(lister.namespaced("prod").get("settings").is_some());
/// assert!(lister.namespaced("dev").list(&Selector::everything()).is_empty());
/// # Ok::<(), kcr_cache::Error>(())
/// ```
pub struct Lister<K> {
    indexer: Arc<dyn Indexer<K>>,
}

impl<K> Clone for Lister<K> {
    fn clone(&self) -> Self {
        Self {
            indexer: self.indexer.clone(),
        }
    }
}

impl<K> std::fmt::Debug for Lister<K> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Lister").finish_non_exhaustive()
    }
}

fn select<K: Resource>(objects: Objects<K>, selector: &Selector) -> Objects<K> {
    if selector.is_empty() {
        return objects;
    }
    objects
        .iter()
        .filter(|o| selector.matches_labels(o.meta().labels.as_ref()))
        .cloned()
        .collect()
}

impl<K: Resource + 'static> Lister<K> {
    /// A lister over `indexer`.
    pub fn new(indexer: Arc<dyn Indexer<K>>) -> Self {
        Self { indexer }
    }

    /// Every object whose labels match `selector` (the store's shared
    /// snapshot itself for [`Selector::everything`]).
    pub fn list(&self, selector: &Selector) -> Objects<K> {
        select(self.indexer.list(), selector)
    }

    /// The cluster-scoped object called `name` (key `name`).
    pub fn get(&self, name: &str) -> Option<Arc<K>> {
        self.indexer.get_by_key(name)
    }

    /// A lister restricted to namespace `namespace`.
    pub fn namespaced(&self, namespace: &str) -> NamespaceLister<K> {
        NamespaceLister {
            indexer: self.indexer.clone(),
            namespace: namespace.to_owned(),
        }
    }
}

/// Lists and gets the objects of one namespace, served from the
/// [`NAMESPACE_INDEX`] when the indexer has it (else by a scan).
pub struct NamespaceLister<K> {
    indexer: Arc<dyn Indexer<K>>,
    namespace: String,
}

impl<K> std::fmt::Debug for NamespaceLister<K> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("NamespaceLister")
            .field("namespace", &self.namespace)
            .finish_non_exhaustive()
    }
}

impl<K: Resource + 'static> NamespaceLister<K> {
    /// The namespace.
    pub fn namespace(&self) -> &str {
        &self.namespace
    }

    /// Every object of the namespace whose labels match `selector` (the
    /// namespace index's shared snapshot for [`Selector::everything`]).
    pub fn list(&self, selector: &Selector) -> Objects<K> {
        let objects = match self.indexer.by_index(NAMESPACE_INDEX, &self.namespace) {
            Ok(objects) => objects,
            Err(_) => self
                .indexer
                .list()
                .iter()
                .filter(|o| o.meta().namespace.as_deref() == Some(self.namespace.as_str()))
                .cloned()
                .collect(),
        };
        select(objects, selector)
    }

    /// The object `name` of the namespace (key `namespace/name`).
    pub fn get(&self, name: &str) -> Option<Arc<K>> {
        let key = format!("{}/{}", self.namespace, name);
        self.indexer.get_by_key(&key)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::index::Indexers;
    use crate::indexed_store::IndexedStore;
    use crate::key::meta_namespace_key_func;
    use crate::test_util::{cm, cm_labels};
    use crate::test_util::{in_mode, store_contract};
    use k8s_openapi::api::core::v1::ConfigMap;

    fn fill(cache: &IndexedStore<ConfigMap>) {
        cache.add(cm_labels("a", "web", &[("app", "web")])).unwrap();
        cache.add(cm_labels("a", "db", &[("app", "db")])).unwrap();
        cache.add(cm_labels("b", "web", &[("app", "web")])).unwrap();
        cache.add(cm("", "cluster-wide", 1)).unwrap();
    }

    store_contract! {
        fn list_should_filter_by_selector_across_namespaces() {
            let cache = Arc::new(in_mode(IndexedStore::namespace_indexed()));
            fill(&cache);
            let lister = Lister::new(cache);
            assert_eq!(lister.list(&"app=web".parse().unwrap()).len(), 2);
            assert_eq!(lister.list(&Selector::everything()).len(), 4);
            assert_eq!(lister.list(&"app".parse().unwrap()).len(), 3);
            assert!(lister.get("cluster-wide").is_some());
            assert!(lister.get("web").is_none());
        }
    }

    store_contract! {
        fn namespaced_should_list_and_get_within_one_namespace() {
            let cache = Arc::new(in_mode(IndexedStore::namespace_indexed()));
            fill(&cache);
            let lister = Lister::new(cache);
            let a = lister.namespaced("a");
            assert_eq!(a.namespace(), "a");
            assert_eq!(a.list(&Selector::everything()).len(), 2);
            assert_eq!(a.list(&"app=db".parse().unwrap()).len(), 1);
            assert!(a.get("web").is_some());
            assert!(a.get("nope").is_none());
            assert!(
                lister
                    .namespaced("c")
                    .list(&Selector::everything())
                    .is_empty()
            );
        }
    }

    store_contract! {
        fn namespaced_should_fall_back_to_a_scan_without_the_namespace_index() {
            let cache = Arc::new(in_mode(IndexedStore::new(
                meta_namespace_key_func::<ConfigMap>,
                Indexers::default(),
            )));
            fill(&cache);
            let lister = Lister::new(cache);
            assert_eq!(
                lister.namespaced("a").list(&Selector::everything()).len(),
                2
            );
        }
    }
}
