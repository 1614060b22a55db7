//! [`TemporaryStore`]: where a streaming list's initial state gathers until
//! its initial-events-end bookmark (client-go's `temporaryStore` in
//! `watchList`).

use std::hash::BuildHasher;
use std::sync::Arc;

use kube::Resource;

type Hasher = foldhash::fast::RandomState;

/// The objects of a streaming list as they arrive, one per
/// `namespace/name`: a later event for a name replaces the object, a
/// deletion removes it.
///
/// The objects sit in one vector, in order of arrival, which becomes the
/// store's `replace` list as it is; a table of positions, hashed from each
/// object's own namespace and name, finds an object by name. No key string
/// is built or kept.
pub(crate) struct TemporaryStore<K> {
    objects: Vec<Arc<K>>,
    positions: hashbrown::HashTable<usize>,
    hasher: Hasher,
}

/// An object's name as the table compares it (client-go's
/// `DeletionHandlingMetaNamespaceKeyFunc`: no namespace and an empty one are
/// the same).
fn name_of<K: Resource>(obj: &K) -> (&str, &str) {
    let meta = obj.meta();
    (
        meta.namespace.as_deref().unwrap_or_default(),
        meta.name.as_deref().unwrap_or_default(),
    )
}

impl<K: Resource> TemporaryStore<K> {
    pub(crate) fn new() -> Self {
        Self {
            objects: Vec::new(),
            positions: hashbrown::HashTable::new(),
            hasher: Hasher::default(),
        }
    }

    fn hash(hasher: &Hasher, obj: &K) -> u64 {
        hasher.hash_one(name_of(obj))
    }

    /// Adds `obj`, or replaces the object of the same name in its place.
    pub(crate) fn upsert(&mut self, obj: Arc<K>) {
        let Self {
            objects,
            positions,
            hasher,
        } = self;
        let hash = Self::hash(hasher, &obj);
        let name = name_of(&*obj);
        let found = positions
            .find(hash, |&at| {
                objects.get(at).is_some_and(|o| name_of(&**o) == name)
            })
            .copied();
        match found.and_then(|at| objects.get_mut(at)) {
            Some(slot) => *slot = obj,
            None => {
                positions.insert_unique(hash, objects.len(), |&at| {
                    objects.get(at).map_or(0, |o| Self::hash(hasher, o))
                });
                objects.push(obj);
            }
        }
    }

    /// Removes the object named as `obj` is, if any. The last object takes
    /// its place in the order.
    pub(crate) fn remove(&mut self, obj: &K) {
        let Self {
            objects,
            positions,
            hasher,
        } = self;
        let name = name_of(obj);
        let Ok(entry) = positions.find_entry(Self::hash(hasher, obj), |&at| {
            objects.get(at).is_some_and(|o| name_of(&**o) == name)
        }) else {
            return;
        };
        let (at, _) = entry.remove();
        objects.swap_remove(at);
        let last = objects.len();
        if let Some(moved) = objects.get(at)
            && let Some(position) = positions.find_mut(Self::hash(hasher, moved), |&p| p == last)
        {
            *position = at;
        }
    }

    /// How many objects it holds.
    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.objects.len()
    }

    /// The objects, in the order they stand.
    pub(crate) fn into_objects(self) -> Vec<Arc<K>> {
        self.objects
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use k8s_openapi::api::core::v1::ConfigMap;

    fn cm(ns: Option<&str>, name: &str, rv: u32) -> Arc<ConfigMap> {
        let mut cm = ConfigMap::default();
        cm.metadata.namespace = ns.map(str::to_owned);
        cm.metadata.name = Some(name.to_owned());
        cm.metadata.resource_version = Some(rv.to_string());
        Arc::new(cm)
    }

    fn view(store: TemporaryStore<ConfigMap>) -> Vec<(String, String)> {
        store
            .into_objects()
            .iter()
            .map(|o| {
                (
                    o.metadata.name.clone().unwrap_or_default(),
                    o.metadata.resource_version.clone().unwrap_or_default(),
                )
            })
            .collect()
    }

    fn pairs(v: &[(&str, &str)]) -> Vec<(String, String)> {
        v.iter()
            .map(|(a, b)| ((*a).to_owned(), (*b).to_owned()))
            .collect()
    }

    #[test]
    fn a_later_event_should_replace_the_object_of_the_same_name_in_its_place() {
        let mut store = TemporaryStore::new();
        store.upsert(cm(Some("ns"), "a", 1));
        store.upsert(cm(Some("ns"), "b", 2));
        store.upsert(cm(Some("other"), "a", 3));
        store.upsert(cm(Some("ns"), "a", 4));
        assert_eq!(store.len(), 3);
        assert_eq!(view(store), pairs(&[("a", "4"), ("b", "2"), ("a", "3")]));
    }

    #[test]
    fn no_namespace_and_an_empty_one_should_be_the_same_name() {
        let mut store = TemporaryStore::new();
        store.upsert(cm(None, "a", 1));
        store.upsert(cm(Some(""), "a", 2));
        assert_eq!(view(store), pairs(&[("a", "2")]));
    }

    #[test]
    fn a_removal_should_leave_every_other_object_findable() {
        let mut store = TemporaryStore::new();
        for i in 0..100 {
            store.upsert(cm(Some("ns"), &format!("o{i}"), i));
        }
        // Remove the first, one in the middle, the last and a stranger.
        for name in ["o0", "o50", "o99", "nobody"] {
            store.remove(&cm(Some("ns"), name, 0));
        }
        assert_eq!(store.len(), 97);
        // Every remaining object is still found by name: updating each
        // replaces it rather than adding a second copy.
        for i in (1..99).filter(|i| *i != 50) {
            store.upsert(cm(Some("ns"), &format!("o{i}"), 1000 + i));
        }
        assert_eq!(store.len(), 97);
        let mut names = view(store);
        assert!(
            names
                .iter()
                .all(|(_, rv)| rv.parse::<u32>().unwrap_or(0) >= 1000)
        );
        names.sort();
        names.dedup();
        assert_eq!(names.len(), 97);
    }
}
