//! Object keys and key functions (client-go's `MetaNamespaceKeyFunc`,
//! `SplitMetaNamespaceKey`, `ExplicitKey`): what every store, index and FIFO
//! files an object under.

use std::sync::Arc;

use kube_core::Resource;

use crate::error::{Error, Result};

/// The key of a cached object: `namespace/name`, or `name` for a
/// cluster-scoped object. Shared, so the same key allocation serves the item
/// map and every index.
pub type ObjectKey = Arc<str>;

/// A shared, immutable list of objects: what `list`, `by_index` and listers
/// return. Cloning it is one reference-count increment; an unchanged store
/// (or index value) hands out the same snapshot again without copying.
pub type Objects<K> = Arc<[Arc<K>]>;

/// A function that computes an object's key (client-go's `KeyFunc`).
pub type KeyFunc<K> = Arc<dyn Fn(&K) -> Result<ObjectKey> + Send + Sync>;

/// The default key function: `namespace/name`, or `name` when the object has
/// no namespace (client-go's `MetaNamespaceKeyFunc`).
///
/// Fails with [`Error::ObjectHasNoName`] when `metadata.name` is missing or
/// empty.
pub fn meta_namespace_key_func<K: Resource>(obj: &K) -> Result<ObjectKey> {
    Ok(Arc::from(&*KeyBuffer::meta_namespace_key(obj)?))
}

/// An object's `namespace/name` key written into a per-thread buffer, so a
/// key that is only looked up (an update, a delete, a get) allocates
/// nothing. Dereferences to the key; gives the buffer back when dropped.
pub(crate) struct KeyBuffer(String);

thread_local! {
    static KEY_BUFFER: std::cell::Cell<String> = const { std::cell::Cell::new(String::new()) };
}

impl KeyBuffer {
    /// [`meta_namespace_key_func`]'s key, without the allocation. The buffer
    /// is taken out of the thread-local while in use, so a nested call (an
    /// index function computing a key) just allocates its own.
    pub(crate) fn meta_namespace_key<K: Resource>(obj: &K) -> Result<Self> {
        let meta = obj.meta();
        let name = match meta.name.as_deref() {
            Some(name) if !name.is_empty() => name,
            _ => return Err(Error::ObjectHasNoName),
        };
        let mut key = KEY_BUFFER.take();
        key.clear();
        if let Some(ns) = meta.namespace.as_deref().filter(|ns| !ns.is_empty()) {
            key.push_str(ns);
            key.push('/');
        }
        key.push_str(name);
        Ok(Self(key))
    }
}

impl std::ops::Deref for KeyBuffer {
    type Target = str;
    fn deref(&self) -> &str {
        &self.0
    }
}

impl Drop for KeyBuffer {
    fn drop(&mut self) {
        KEY_BUFFER.set(std::mem::take(&mut self.0));
    }
}

/// Splits a key made by [`meta_namespace_key_func`] into
/// `(namespace, name)` as client-go's `SplitMetaNamespaceKey` does: a key
/// without `/` is a name alone; a key with one `/` is `namespace/name`,
/// either part possibly empty (`"/b"` is the name `b` with the empty
/// namespace, `"a/"` the empty name in `a`, `""` the empty name). The
/// namespace is `None` when it is absent or empty (client-go's `""`: a
/// cluster-scoped key).
///
/// Fails with [`Error::InvalidKey`] only for more than one `/` (`a/b/c`),
/// as client-go.
pub fn split_meta_namespace_key(key: &str) -> Result<(Option<&str>, &str)> {
    let mut parts = key.split('/');
    let first = parts.next().unwrap_or_default();
    match (parts.next(), parts.next()) {
        (None, _) => Ok((None, first)),
        (Some(name), None) => Ok(((!first.is_empty()).then_some(first), name)),
        (Some(_), Some(_)) => Err(Error::InvalidKey {
            key: key.to_owned(),
            reason: "a key has at most one '/'",
        }),
    }
}

/// A key given as is, for a store operation that has the key but not the
/// object (client-go's `ExplicitKey`, which `MetaNamespaceKeyFunc` passes
/// through). Converted into a [`DeltaObject`](crate::DeltaObject) it is a
/// [`DeletedFinalStateUnknown`](crate::DeletedFinalStateUnknown) with no
/// object, so `fifo.delete(ExplicitKey::new("ns/a").into())` queues the
/// deletion of that key.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ExplicitKey(pub ObjectKey);

impl ExplicitKey {
    /// The key `key`.
    pub fn new(key: impl Into<ObjectKey>) -> Self {
        Self(key.into())
    }

    /// The key.
    pub fn key(&self) -> &ObjectKey {
        &self.0
    }
}

impl std::fmt::Display for ExplicitKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_util::cm;
    use k8s_openapi::api::core::v1::ConfigMap;

    #[test]
    fn meta_namespace_key_func_should_join_namespace_and_name() {
        assert_eq!(
            &*meta_namespace_key_func(&*cm("ns", "a", 0)).unwrap(),
            "ns/a"
        );
    }

    #[test]
    fn meta_namespace_key_func_should_use_the_name_alone_for_a_cluster_scoped_object() {
        assert_eq!(
            &*meta_namespace_key_func(&*cm("", "node-1", 0)).unwrap(),
            "node-1"
        );
    }

    #[test]
    fn meta_namespace_key_func_should_refuse_an_object_without_a_name() {
        let nameless = ConfigMap::default();
        assert!(matches!(
            meta_namespace_key_func(&nameless),
            Err(Error::ObjectHasNoName)
        ));
        let mut empty = ConfigMap::default();
        empty.metadata.name = Some(String::new());
        assert!(matches!(
            meta_namespace_key_func(&empty),
            Err(Error::ObjectHasNoName)
        ));
    }

    #[test]
    fn split_meta_namespace_key_should_split_namespaced_and_cluster_keys() {
        assert_eq!(split_meta_namespace_key("ns/a").unwrap(), (Some("ns"), "a"));
        assert_eq!(split_meta_namespace_key("a").unwrap(), (None, "a"));
    }

    #[test]
    fn split_meta_namespace_key_should_accept_every_form_client_go_accepts() {
        assert_eq!(split_meta_namespace_key("/b").unwrap(), (None, "b"));
        assert_eq!(split_meta_namespace_key("a/").unwrap(), (Some("a"), ""));
        assert_eq!(split_meta_namespace_key("").unwrap(), (None, ""));
        assert_eq!(split_meta_namespace_key("/").unwrap(), (None, ""));
    }

    #[test]
    fn split_meta_namespace_key_should_reject_malformed_keys() {
        for key in ["a/b/c", "//"] {
            let err = split_meta_namespace_key(key).unwrap_err();
            assert!(
                matches!(err, Error::InvalidKey { .. }),
                "{key:?} gave {err:?}"
            );
            assert!(err.to_string().contains(&format!("{key:?}")));
        }
    }
}
