//! Index functions, [`Indexers`] and the [`Indexer`] trait (client-go's
//! `index.go`).

use std::borrow::Cow;
use std::collections::HashMap;
use std::sync::Arc;

use kube_core::Resource;

use crate::error::{BoxError, Result};
use crate::key::{ObjectKey, Objects};
use crate::store::Store;

/// The name of the namespace index that [`meta_namespace_index_func`] fills
/// and namespaced [listers](crate::Lister) read.
pub const NAMESPACE_INDEX: &str = "namespace";

/// The values an [`IndexFunc`] computes for one object: zero, one (held
/// inline, without allocating) or more. Values may borrow from the object,
/// so indexing by a field the object already holds allocates nothing.
/// Dereferences to a slice; builds from a `Vec` or an iterator of values.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct IndexValues<'a>(Repr<'a>);

#[derive(Debug, Clone, Default, PartialEq, Eq)]
enum Repr<'a> {
    #[default]
    None,
    One(Cow<'a, str>),
    Many(Vec<Cow<'a, str>>),
}

impl<'a> IndexValues<'a> {
    /// No value.
    pub fn new() -> Self {
        Self(Repr::None)
    }

    /// One value.
    pub fn one(value: impl Into<Cow<'a, str>>) -> Self {
        Self(Repr::One(value.into()))
    }

    /// Adds a value.
    pub fn push(&mut self, value: impl Into<Cow<'a, str>>) {
        let value = value.into();
        self.0 = match std::mem::take(&mut self.0) {
            Repr::None => Repr::One(value),
            Repr::One(first) => Repr::Many(vec![first, value]),
            Repr::Many(mut all) => {
                all.push(value);
                Repr::Many(all)
            }
        };
    }

    /// The values as a slice.
    pub fn as_slice(&self) -> &[Cow<'a, str>] {
        match &self.0 {
            Repr::None => &[],
            Repr::One(value) => std::slice::from_ref(value),
            Repr::Many(all) => all,
        }
    }
}

impl<'a> std::ops::Deref for IndexValues<'a> {
    type Target = [Cow<'a, str>];
    fn deref(&self) -> &[Cow<'a, str>] {
        self.as_slice()
    }
}

impl<'a> From<Vec<Cow<'a, str>>> for IndexValues<'a> {
    fn from(values: Vec<Cow<'a, str>>) -> Self {
        Self(Repr::Many(values))
    }
}

impl<'a> FromIterator<Cow<'a, str>> for IndexValues<'a> {
    fn from_iter<I: IntoIterator<Item = Cow<'a, str>>>(iter: I) -> Self {
        let mut values = Self::new();
        for value in iter {
            values.push(value);
        }
        values
    }
}

impl<'s, 'a> IntoIterator for &'s IndexValues<'a> {
    type Item = &'s Cow<'a, str>;
    type IntoIter = std::slice::Iter<'s, Cow<'a, str>>;
    fn into_iter(self) -> Self::IntoIter {
        self.as_slice().iter()
    }
}

/// Computes zero or more index values for an object (client-go's
/// `IndexFunc`). Build one from a closure with [`index_func`] or
/// [`try_index_func`].
pub type IndexFunc<K> =
    Arc<dyn for<'a> Fn(&'a K) -> Result<IndexValues<'a>, BoxError> + Send + Sync>;

/// Index name → index function (client-go's `Indexers`).
pub type Indexers<K> = HashMap<String, IndexFunc<K>>;

/// Builds an [`IndexFunc`] from a closure that returns owned values.
///
/// ```
/// use k8s_openapi::api::core::v1::ConfigMap;
/// use kcr_cache::{index_func, IndexFunc};
///
/// // Index ConfigMaps by their "app" label.
/// let by_app: IndexFunc<ConfigMap> = index_func(|cm: &ConfigMap| {
///     cm.metadata.labels.as_ref().and_then(|l| l.get("app")).cloned().into_iter().collect()
/// });
/// # let _ = by_app;
/// ```
pub fn index_func<K: 'static, F>(f: F) -> IndexFunc<K>
where
    F: Fn(&K) -> Vec<String> + Send + Sync + 'static,
{
    Arc::new(move |obj: &K| Ok(f(obj).into_iter().map(Cow::Owned).collect()))
}

/// Builds an [`IndexFunc`] from a closure that may fail and may borrow its
/// values from the object.
pub fn try_index_func<K: 'static, F>(f: F) -> IndexFunc<K>
where
    F: for<'a> Fn(&'a K) -> Result<IndexValues<'a>, BoxError> + Send + Sync + 'static,
{
    Arc::new(f)
}

fn namespace_values<K: Resource>(obj: &K) -> Result<IndexValues<'_>, BoxError> {
    Ok(match obj.meta().namespace.as_deref() {
        Some(ns) => IndexValues::one(ns),
        None => IndexValues::new(),
    })
}

/// The namespace index function (client-go's `MetaNamespaceIndexFunc`): the
/// object's namespace, borrowed (no allocation), or no value for a
/// cluster-scoped object. Register it under [`NAMESPACE_INDEX`].
pub fn meta_namespace_index_func<K: Resource + 'static>() -> IndexFunc<K> {
    Arc::new(namespace_values::<K>)
}

/// A [`Store`] with indices (client-go's `Indexer`), implemented by
/// [`IndexedStore`](crate::IndexedStore).
pub trait Indexer<K>: Store<K, Item = Arc<K>> {
    /// The objects that share an index value with `obj` under `index_name`.
    fn index(&self, index_name: &str, obj: &K) -> Result<Objects<K>>;
    /// The keys of the objects whose `index_name` values include
    /// `indexed_value`.
    fn index_keys(&self, index_name: &str, indexed_value: &str) -> Result<Vec<ObjectKey>>;
    /// Every value currently present in index `index_name` (empty when the
    /// index does not exist).
    fn list_index_func_values(&self, index_name: &str) -> Vec<Arc<str>>;
    /// The objects whose `index_name` values include `indexed_value`, as a
    /// shared snapshot.
    fn by_index(&self, index_name: &str, indexed_value: &str) -> Result<Objects<K>>;
    /// The registered index functions.
    fn get_indexers(&self) -> Indexers<K>;
    /// Registers more index functions, indexing the objects already stored;
    /// refuses (and changes nothing) if a name is already registered.
    fn add_indexers(&self, indexers: Indexers<K>) -> Result<()>;
}
