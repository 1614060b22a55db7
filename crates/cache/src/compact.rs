//! The compact storage of a [`IndexedStore`](crate::IndexedStore) or
//! [`ThreadSafeStore`](crate::ThreadSafeStore): objects kept encoded (their
//! JSON, as `serde_json` writes it) and decoded when they are read, with a
//! small cache of decoded objects.
//!
//! A decoded `k8s-openapi` object costs several times its encoding: every
//! string is its own allocation and every map (labels, annotations, data)
//! has a `BTreeMap` node of 544 bytes however few entries it holds. Kept as
//! one byte buffer, a ConfigMap of a real server (labels, data, the
//! last-applied annotation) takes about a third of it. Reads pay for it: a
//! `get` that misses the decoded cache, and every object of a `list` or
//! `by_index`, is decoded again (the README's cache rows give the figures).

use std::hash::BuildHasher;
use std::sync::Arc;

use parking_lot::Mutex;

use crate::key::ObjectKey;

/// How many decoded objects a compact store keeps by default: see
/// [`IndexedStore::compact`](crate::IndexedStore::compact).
pub const DEFAULT_DECODED_OBJECTS: usize = 256;

/// An object taken out of a store slot (replaced or removed), with its
/// decoded form if the decoded cache had it.
pub(crate) struct Taken<K> {
    pub(crate) stored: Stored<K>,
    pub(crate) decoded: Option<Arc<K>>,
}

/// An object as a store slot holds it.
pub(crate) enum Stored<K> {
    /// Decoded (every object of a default store; in a compact store, an
    /// object its codec could not encode).
    Object(Arc<K>),
    /// Encoded by the store's [`Compact`] codec.
    Encoded(Box<[u8]>),
}

impl<K> Stored<K> {
    /// The object, when it is held decoded.
    pub(crate) fn object(&self) -> Option<&Arc<K>> {
        match self {
            Self::Object(obj) => Some(obj),
            Self::Encoded(_) => None,
        }
    }
}

/// Encodes and decodes `K` (monomorphised where `K`'s serde bounds are
/// known, so the store itself needs none).
struct Codec<K> {
    encode: fn(&K) -> serde_json::Result<Vec<u8>>,
    decode: fn(&[u8]) -> serde_json::Result<K>,
}

impl<K> Clone for Codec<K> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<K> Copy for Codec<K> {}

fn encode<K: serde::Serialize>(obj: &K) -> serde_json::Result<Vec<u8>> {
    serde_json::to_vec(obj)
}

fn decode<K: serde::de::DeserializeOwned>(bytes: &[u8]) -> serde_json::Result<K> {
    serde_json::from_slice(bytes)
}

/// One entry of the decoded cache.
type Recent<K> = Mutex<Option<(ObjectKey, Arc<K>)>>;

/// The compact mode of a store's content: its codec and its decoded
/// cache.
///
/// The decoded cache is direct-mapped by key hash: each key has one place,
/// which a write of the key fills with the object written and a `get` that
/// decoded it fills with the result. Invariant: an entry holding a key holds
/// that key's current object (every write of a key goes through its place,
/// a delete clears it, and a replace starts a new cache).
pub(crate) struct Compact<K> {
    codec: Codec<K>,
    recent: Box<[Recent<K>]>,
    hasher: foldhash::fast::FixedState,
}

impl<K> Compact<K> {
    /// A compact mode keeping up to `decoded` decoded objects.
    pub(crate) fn new(decoded: usize) -> Self
    where
        K: serde::Serialize + serde::de::DeserializeOwned,
    {
        Self::with_codec(
            Codec {
                encode: encode::<K>,
                decode: decode::<K>,
            },
            decoded,
        )
    }

    fn with_codec(codec: Codec<K>, decoded: usize) -> Self {
        Self {
            codec,
            recent: (0..decoded).map(|_| Mutex::new(None)).collect(),
            hasher: foldhash::fast::FixedState::default(),
        }
    }

    /// The same codec and capacity, with an empty decoded cache.
    pub(crate) fn empty_like(&self) -> Self {
        Self::with_codec(self.codec, self.recent.len())
    }

    fn place(&self, key: &str) -> Option<&Recent<K>> {
        if self.recent.is_empty() {
            return None;
        }
        let n = self.recent.len() as u64;
        self.recent.get((self.hasher.hash_one(key) % n) as usize)
    }

    /// Encodes `obj` to be stored under `key` (kept decoded if it cannot be
    /// encoded) and remembers it as the key's decoded object; returns the
    /// key's decoded object it replaces there, if the cache held it.
    pub(crate) fn store(&self, key: &ObjectKey, obj: &Arc<K>) -> (Stored<K>, Option<Arc<K>>) {
        let stored = match (self.codec.encode)(obj) {
            Ok(bytes) => Stored::Encoded(bytes.into_boxed_slice()),
            Err(error) => {
                tracing::warn!(%key, %error, "compact cache: object kept decoded, it cannot be encoded");
                return (Stored::Object(obj.clone()), self.forget(key));
            }
        };
        let replaced = self.place(key).and_then(|place| {
            let old = place.lock().replace((key.clone(), obj.clone()));
            old.filter(|(k, _)| **k == **key).map(|(_, obj)| obj)
        });
        (stored, replaced)
    }

    /// The object `stored` (a slot taken out of the store), decoded without
    /// looking at the decoded cache.
    pub(crate) fn decode(&self, key: &str, stored: Stored<K>) -> Option<Arc<K>> {
        match stored {
            Stored::Object(obj) => Some(obj),
            Stored::Encoded(bytes) => match (self.codec.decode)(&bytes) {
                Ok(obj) => Some(Arc::new(obj)),
                Err(error) => {
                    tracing::error!(%key, %error, "compact cache: a stored object does not decode");
                    None
                }
            },
        }
    }

    /// The object `stored` under `key`: from the decoded cache, or decoded
    /// (and, if `remember`, put in the cache). `None` only if the bytes do
    /// not decode, which is logged: `K`'s `Deserialize` does not read what
    /// its `Serialize` wrote.
    pub(crate) fn load(&self, key: &str, stored: &Stored<K>, remember: bool) -> Option<Arc<K>> {
        let bytes = match stored {
            Stored::Object(obj) => return Some(obj.clone()),
            Stored::Encoded(bytes) => bytes,
        };
        let place = self.place(key);
        if let Some(place) = place
            && let Some((cached_key, obj)) = &*place.lock()
            && **cached_key == *key
        {
            return Some(obj.clone());
        }
        match (self.codec.decode)(bytes) {
            Ok(obj) => {
                let obj = Arc::new(obj);
                if remember && let Some(place) = place {
                    *place.lock() = Some((ObjectKey::from(key), obj.clone()));
                }
                Some(obj)
            }
            Err(error) => {
                tracing::error!(%key, %error, "compact cache: a stored object does not decode");
                None
            }
        }
    }

    /// Forgets the decoded object of `key` (deleted); returns it, if the
    /// cache held it.
    pub(crate) fn forget(&self, key: &str) -> Option<Arc<K>> {
        let place = self.place(key)?;
        let mut entry = place.lock();
        if entry.as_ref().is_some_and(|(k, _)| **k == *key) {
            return entry.take().map(|(_, obj)| obj);
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use std::borrow::Cow;
    use std::collections::BTreeMap;

    use k8s_openapi::api::core::v1::ConfigMap;
    use kube_core::{ObjectMeta, Resource};

    use crate::index::{IndexValues, Indexers, NAMESPACE_INDEX, try_index_func};
    use crate::indexed_store::IndexedStore;
    use crate::key::meta_namespace_key_func;
    use crate::test_util::{cm, version};

    use super::*;

    #[test]
    fn a_compact_cache_should_hand_out_objects_equal_to_those_written() {
        let cache = IndexedStore::<ConfigMap>::namespace_indexed().compact_with(0);
        assert!(cache.is_compact());
        let mut rich = Arc::unwrap_or_clone(cm("ns", "a", 1));
        rich.metadata.labels = Some(BTreeMap::from([("app".into(), "web".into())]));
        rich.metadata.uid = Some("0f7c".into());
        let rich = Arc::new(rich);
        cache.add(rich.clone()).unwrap();
        cache.add(cm("ns", "b", 2)).unwrap();
        let got = cache.get_by_key("ns/a").unwrap();
        assert_eq!(*got, *rich);
        assert!(!Arc::ptr_eq(&got, &rich), "decoded: no cache to serve it");
        assert_eq!(cache.list().len(), 2);
        assert_eq!(cache.by_index(NAMESPACE_INDEX, "ns").unwrap().len(), 2);
        assert_eq!(version(&cache.get(&cm("ns", "b", 0)).unwrap().unwrap()), 2);
    }

    #[test]
    fn get_should_serve_the_object_last_written_from_the_decoded_cache() {
        let cache = IndexedStore::<ConfigMap>::namespace_indexed().compact();
        let obj = cm("ns", "a", 1);
        cache.add(obj.clone()).unwrap();
        assert!(Arc::ptr_eq(&cache.get_by_key("ns/a").unwrap(), &obj));
        let newer = cm("ns", "a", 2);
        cache.update(newer.clone()).unwrap();
        assert!(Arc::ptr_eq(&cache.get_by_key("ns/a").unwrap(), &newer));
        cache.delete_by_key("ns/a").unwrap();
        assert!(cache.get_by_key("ns/a").is_none());
    }

    #[test]
    fn a_get_that_decodes_should_keep_the_decoded_object_for_the_next_get() {
        let cache = IndexedStore::<ConfigMap>::namespace_indexed().compact_with(1);
        cache.add(cm("ns", "a", 1)).unwrap();
        // One place: writing b takes a's.
        cache.add(cm("ns", "b", 1)).unwrap();
        let first = cache.get_by_key("ns/a").unwrap();
        let second = cache.get_by_key("ns/a").unwrap();
        assert!(Arc::ptr_eq(&first, &second));
    }

    #[test]
    fn the_object_an_upsert_replaces_should_be_the_old_one_whether_cached_or_not() {
        for decoded in [0, 1, 64] {
            let cache = IndexedStore::<ConfigMap>::namespace_indexed().compact_with(decoded);
            cache.add(cm("ns", "a", 1)).unwrap();
            let old = cache.upsert(cm("ns", "a", 2)).unwrap().expect("replaced");
            assert_eq!(version(&old), 1, "decoded cache of {decoded}");
            assert_eq!(version(&cache.get_by_key("ns/a").unwrap()), 2);
        }
    }

    #[test]
    fn a_failed_replace_should_leave_the_decoded_cache_serving_the_old_objects() {
        let refuse_bad: Indexers<ConfigMap> = [(
            "refuse".to_owned(),
            try_index_func(|cm: &ConfigMap| {
                if cm.metadata.name.as_deref() == Some("bad") {
                    Err("refused".into())
                } else {
                    Ok(IndexValues::one(Cow::Borrowed("ok")))
                }
            }),
        )]
        .into();
        let cache = IndexedStore::new(meta_namespace_key_func::<ConfigMap>, refuse_bad).compact();
        cache.add(cm("ns", "a", 1)).unwrap();
        assert!(
            cache
                .replace(vec![cm("ns", "a", 2), cm("ns", "bad", 2)], "9")
                .is_err()
        );
        assert_eq!(version(&cache.get_by_key("ns/a").unwrap()), 1);
        assert_eq!(cache.len(), 1);
    }

    #[test]
    fn replace_with_changes_should_hand_over_the_listed_objects_themselves() {
        let cache = IndexedStore::<ConfigMap>::namespace_indexed().compact_with(0);
        cache.add(cm("ns", "a", 1)).unwrap();
        cache.add(cm("ns", "gone", 1)).unwrap();
        let listed = vec![cm("ns", "a", 2), cm("ns", "b", 1)];
        let changes = cache
            .replace_with_changes(listed.iter().cloned(), "5")
            .unwrap();
        assert_eq!(changes.deleted.len(), 1);
        assert_eq!(changes.deleted[0].key.as_ref(), "ns/gone");
        assert_eq!(changes.deleted[0].obj.as_deref().map(version), Some(1));
        assert_eq!(changes.replaced.len(), 2);
        for ((old, new), listed) in changes.replaced.iter().zip(&listed) {
            assert!(Arc::ptr_eq(new, listed));
            if new.metadata.name.as_deref() == Some("a") {
                assert_eq!(old.as_deref().map(version), Some(1));
            } else {
                assert!(old.is_none());
            }
        }
    }

    #[test]
    fn making_a_filled_cache_compact_should_keep_its_objects_and_indices() {
        let cache = IndexedStore::<ConfigMap>::namespace_indexed();
        cache.add(cm("ns", "a", 1)).unwrap();
        let held = cache.by_index(NAMESPACE_INDEX, "ns").unwrap();
        let cache = cache.compact_with(0);
        let again = cache.by_index(NAMESPACE_INDEX, "ns").unwrap();
        assert!(
            !Arc::ptr_eq(&held, &again),
            "no snapshot of decoded objects kept"
        );
        assert_eq!(*again[0], *held[0]);
        cache.thread_safe_store().check_indices().unwrap();
    }

    /// An object its `Serialize` refuses to write.
    #[derive(Clone, Debug, Default, PartialEq, serde::Deserialize)]
    struct Unwritable {
        metadata: ObjectMeta,
    }

    impl serde::Serialize for Unwritable {
        fn serialize<S: serde::Serializer>(&self, _: S) -> Result<S::Ok, S::Error> {
            Err(serde::ser::Error::custom("cannot be written"))
        }
    }

    impl Resource for Unwritable {
        type DynamicType = ();
        type Scope = kube_core::NamespaceResourceScope;

        fn kind(_: &()) -> Cow<'_, str> {
            "Unwritable".into()
        }
        fn group(_: &()) -> Cow<'_, str> {
            "".into()
        }
        fn version(_: &()) -> Cow<'_, str> {
            "v1".into()
        }
        fn plural(_: &()) -> Cow<'_, str> {
            "unwritables".into()
        }
        fn meta(&self) -> &ObjectMeta {
            &self.metadata
        }
        fn meta_mut(&mut self) -> &mut ObjectMeta {
            &mut self.metadata
        }
    }

    #[test]
    fn an_object_that_cannot_be_encoded_should_be_kept_decoded() {
        let cache = IndexedStore::<Unwritable>::namespace_indexed().compact_with(0);
        let mut obj = Unwritable::default();
        obj.metadata.namespace = Some("ns".into());
        obj.metadata.name = Some("a".into());
        let obj = Arc::new(obj);
        cache.add(obj.clone()).unwrap();
        assert!(Arc::ptr_eq(&cache.get_by_key("ns/a").unwrap(), &obj));
        assert_eq!(cache.list().len(), 1);
        assert_eq!(cache.by_index(NAMESPACE_INDEX, "ns").unwrap().len(), 1);
    }
}
