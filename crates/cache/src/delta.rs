//! The deltas both FIFOs queue and an informer applies (client-go's
//! `Delta`, `Deltas`, `DeltaType` and `DeletedFinalStateUnknown`), and the
//! key function that handles tombstones.

use std::sync::Arc;

use kube_core::Resource;

use crate::error::{Error, Result};
use crate::key::{ExplicitKey, ObjectKey, meta_namespace_key_func};

/// The kind of change a [`Delta`] records (client-go's `DeltaType`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum DeltaType {
    /// The object was created.
    Added,
    /// The object was modified.
    Updated,
    /// The object was deleted; the delta holds its last state, or a
    /// [`DeletedFinalStateUnknown`] tombstone.
    Deleted,
    /// The object was listed by a relist (with
    /// [`emit_delta_type_replaced`](crate::DeltaFifoOptions::emit_delta_type_replaced));
    /// it may or may not have changed.
    Replaced,
    /// The object was listed by a relist (without `emit_delta_type_replaced`)
    /// or replayed by a periodic resync.
    Sync,
    /// A whole relist as one atomic event (a [`RealFifo`](crate::RealFifo)
    /// with [`atomic_events`](crate::RealFifoOptions::atomic_events)): the
    /// delta carries a [`ReplacedAllInfo`] and the consumer detects the
    /// deletions against its own store.
    ReplacedAll,
    /// A periodic resync as one atomic event (a [`RealFifo`](crate::RealFifo)
    /// with atomic events): the consumer replays everything it holds.
    SyncAll,
    /// A watch bookmark (a [`RealFifo`](crate::RealFifo) with atomic events
    /// and [`emit_delta_type_bookmark`](crate::RealFifoOptions::emit_delta_type_bookmark)):
    /// the delta carries a [`BookmarkInfo`].
    Bookmark,
}

impl DeltaType {
    /// Whether a delta of this type concerns one object (and so has a key),
    /// as opposed to the atomic `ReplacedAll`, `SyncAll` and `Bookmark`.
    /// These are also the types client-go's `PopBatch` puts in a batch.
    pub fn is_per_object(self) -> bool {
        matches!(
            self,
            Self::Added | Self::Updated | Self::Deleted | Self::Replaced | Self::Sync
        )
    }
}

/// What a [`DeltaType::ReplacedAll`] delta carries (client-go's
/// `ReplacedAllInfo`): the relist's resource version and every listed
/// object, already transformed.
#[derive(Debug)]
pub struct ReplacedAllInfo<K> {
    /// The resource version the list was taken at.
    pub resource_version: String,
    /// The listed objects.
    pub objects: Vec<Arc<K>>,
}

/// What a [`DeltaType::Bookmark`] delta carries (client-go's `BookmarkInfo`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BookmarkInfo {
    /// The bookmark's resource version.
    pub resource_version: String,
}

/// An object deleted while the watch was down: its key and the last state the
/// consumer knew, if any (client-go's `DeletedFinalStateUnknown`).
#[derive(Debug)]
pub struct DeletedFinalStateUnknown<K> {
    /// The deleted object's key.
    pub key: ObjectKey,
    /// The last known state, which may be stale (`None` if the known-objects
    /// store no longer had it).
    pub obj: Option<Arc<K>>,
}

impl<K> Clone for DeletedFinalStateUnknown<K> {
    fn clone(&self) -> Self {
        Self {
            key: self.key.clone(),
            obj: self.obj.clone(),
        }
    }
}

/// The object a [`Delta`] carries: the object itself or a tombstone.
#[derive(Debug)]
pub enum DeltaObject<K> {
    /// The object's state after the change.
    Object(Arc<K>),
    /// A deletion missed while the watch was down.
    DeletedFinalStateUnknown(DeletedFinalStateUnknown<K>),
    /// A whole relist ([`DeltaType::ReplacedAll`]); never handed to an
    /// event handler.
    ReplacedAll(Arc<ReplacedAllInfo<K>>),
    /// A whole resync ([`DeltaType::SyncAll`]); never handed to an event
    /// handler.
    SyncAll,
    /// A bookmark ([`DeltaType::Bookmark`]); never handed to an event
    /// handler.
    Bookmark(BookmarkInfo),
}

impl<K> Clone for DeltaObject<K> {
    fn clone(&self) -> Self {
        match self {
            Self::Object(obj) => Self::Object(obj.clone()),
            Self::DeletedFinalStateUnknown(t) => Self::DeletedFinalStateUnknown(t.clone()),
            Self::ReplacedAll(info) => Self::ReplacedAll(info.clone()),
            Self::SyncAll => Self::SyncAll,
            Self::Bookmark(info) => Self::Bookmark(info.clone()),
        }
    }
}

impl<K> From<Arc<K>> for DeltaObject<K> {
    fn from(obj: Arc<K>) -> Self {
        Self::Object(obj)
    }
}

impl<K> From<DeletedFinalStateUnknown<K>> for DeltaObject<K> {
    fn from(tombstone: DeletedFinalStateUnknown<K>) -> Self {
        Self::DeletedFinalStateUnknown(tombstone)
    }
}

impl<K> DeltaObject<K> {
    /// The object: the carried one, or a tombstone's last known state.
    pub fn object(&self) -> Option<&Arc<K>> {
        match self {
            Self::Object(obj) => Some(obj),
            Self::DeletedFinalStateUnknown(t) => t.obj.as_ref(),
            Self::ReplacedAll(_) | Self::SyncAll | Self::Bookmark(_) => None,
        }
    }

    /// Whether this is a [`DeletedFinalStateUnknown`] tombstone.
    pub fn is_tombstone(&self) -> bool {
        matches!(self, Self::DeletedFinalStateUnknown(_))
    }
}

/// One change: what happened and the object after it (client-go's `Delta`).
#[derive(Debug)]
pub struct Delta<K> {
    /// What happened.
    pub type_: DeltaType,
    /// The object after the change (or a tombstone).
    pub object: DeltaObject<K>,
}

impl<K> Clone for Delta<K> {
    fn clone(&self) -> Self {
        Self {
            type_: self.type_,
            object: self.object.clone(),
        }
    }
}

impl<K> Delta<K> {
    /// A delta of `type_` carrying `object`.
    pub fn new(type_: DeltaType, object: impl Into<DeltaObject<K>>) -> Self {
        Self {
            type_,
            object: object.into(),
        }
    }
}

/// The deltas of one key, oldest first (client-go's `Deltas`).
#[derive(Debug)]
pub struct Deltas<K>(pub(crate) Vec<Delta<K>>);

impl<K> Clone for Deltas<K> {
    fn clone(&self) -> Self {
        Self(self.0.clone())
    }
}

impl<K> Deltas<K> {
    /// Deltas from a vector, oldest first.
    pub fn new(deltas: Vec<Delta<K>>) -> Self {
        Self(deltas)
    }

    /// The oldest delta.
    pub fn oldest(&self) -> Option<&Delta<K>> {
        self.0.first()
    }

    /// The newest delta.
    pub fn newest(&self) -> Option<&Delta<K>> {
        self.0.last()
    }

    /// The deltas as a vector, oldest first.
    pub fn into_vec(self) -> Vec<Delta<K>> {
        self.0
    }
}

impl<K> std::ops::Deref for Deltas<K> {
    type Target = [Delta<K>];
    fn deref(&self) -> &[Delta<K>] {
        &self.0
    }
}

impl<K> IntoIterator for Deltas<K> {
    type Item = Delta<K>;
    type IntoIter = std::vec::IntoIter<Delta<K>>;
    fn into_iter(self) -> Self::IntoIter {
        self.0.into_iter()
    }
}

impl<'a, K> IntoIterator for &'a Deltas<K> {
    type Item = &'a Delta<K>;
    type IntoIter = std::slice::Iter<'a, Delta<K>>;
    fn into_iter(self) -> Self::IntoIter {
        self.0.iter()
    }
}

/// Merges the last two deltas when both are deletions, keeping the one that
/// is not a tombstone (or the older one if neither or both are), as
/// client-go's `dedupDeltas` does.
pub(crate) fn dedup_deltas<K>(deltas: &mut Vec<Delta<K>>) {
    let n = deltas.len();
    if n < 2 {
        return;
    }
    let (older, newer) = (&deltas[n - 2], &deltas[n - 1]);
    if older.type_ != DeltaType::Deleted || newer.type_ != DeltaType::Deleted {
        return;
    }
    if older.object.is_tombstone() {
        deltas.remove(n - 2);
    } else {
        deltas.pop();
    }
}

/// An object with its key.
pub(crate) type Keyed<K> = (ObjectKey, DeltaObject<K>);

impl<K> From<ExplicitKey> for DeltaObject<K> {
    fn from(key: ExplicitKey) -> Self {
        DeltaObject::DeletedFinalStateUnknown(DeletedFinalStateUnknown {
            key: key.0,
            obj: None,
        })
    }
}

/// The key of a delta's object: a [`DeletedFinalStateUnknown`]
/// tombstone's own key, otherwise [`meta_namespace_key_func`]
/// (client-go's `DeletionHandlingMetaNamespaceKeyFunc`).
pub fn deletion_handling_meta_namespace_key_func<K: Resource>(
    obj: &DeltaObject<K>,
) -> Result<ObjectKey> {
    match obj {
        DeltaObject::Object(obj) => meta_namespace_key_func(obj.as_ref()),
        DeltaObject::DeletedFinalStateUnknown(tombstone) => Ok(tombstone.key.clone()),
        DeltaObject::ReplacedAll(_) | DeltaObject::SyncAll | DeltaObject::Bookmark(_) => {
            Err(Error::NoKey)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_util::cm;
    use k8s_openapi::api::core::v1::ConfigMap;

    #[test]
    fn deletion_handling_key_func_should_use_the_tombstone_key() {
        let tombstone: DeltaObject<ConfigMap> = DeletedFinalStateUnknown {
            key: Arc::from("ns/gone"),
            obj: None,
        }
        .into();
        assert_eq!(
            &*deletion_handling_meta_namespace_key_func(&tombstone).unwrap(),
            "ns/gone"
        );
        let obj: DeltaObject<ConfigMap> = cm("ns", "a", 0).into();
        assert_eq!(
            &*deletion_handling_meta_namespace_key_func(&obj).unwrap(),
            "ns/a"
        );
    }
}
