//! [`ResourceEventHandler`], what a delete hands it ([`DeletedObject`]),
//! and its two ready-made implementations, [`ResourceEventHandlerFuncs`] and
//! [`FilteringResourceEventHandler`] (client-go's `controller.go`).

use std::borrow::Cow;
use std::sync::Arc;

use kcr_cache::{DeletedFinalStateUnknown, DeltaObject, ObjectName};
use kube::Resource;

/// What a handler's [`on_delete`](ResourceEventHandler::on_delete) gets
/// (client-go 1.37's `DeletedObject`): the deleted object's key, name and
/// namespace, always, and its last state when one is known.
///
/// * A deletion the watch saw: [`object`](Self::object) is the object as
///   it was deleted, [`is_final_state_unknown`](Self::is_final_state_unknown)
///   is false.
/// * A deletion a relist found (the watch was down when it happened): a
///   [`DeletedFinalStateUnknown`] tombstone. [`object`](Self::object) is
///   the last state the cache held, which may be stale, or `None` when no
///   copy was left; [`final_state_unknown`](Self::final_state_unknown)
///   gives the tombstone.
///
/// [`key`](Self::key), [`object_name`](Self::object_name),
/// [`name`](Self::name) and [`namespace`](Self::namespace) work in both
/// cases: for a tombstone they are read from its key (split at the first
/// `/`, as client-go does, never failing), otherwise from the object's
/// metadata, so they are what the informer's cache used as the key.
///
/// ```
/// use std::sync::Arc;
/// use k8s_openapi::api::core::v1::ConfigMap;
/// use kcr_cache::DeletedFinalStateUnknown;
/// use kcr_informer::DeletedObject;
///
/// let mut cm = ConfigMap::default();
/// cm.metadata.namespace = Some("default".into());
/// cm.metadata.name = Some("settings".into());
/// let seen = DeletedObject::new(Arc::new(cm));
/// assert_eq!(seen.key(), "default/settings");
/// assert!(!seen.is_final_state_unknown());
///
/// let missed: DeletedObject<ConfigMap> =
///     DeletedFinalStateUnknown { key: "default/gone".into(), obj: None }.into();
/// assert_eq!((missed.namespace(), missed.name()), (Some("default"), "gone"));
/// assert!(missed.is_final_state_unknown() && missed.object().is_none());
/// ```
pub struct DeletedObject<K> {
    inner: Deleted<K>,
}

enum Deleted<K> {
    Final(Arc<K>),
    Unknown(DeletedFinalStateUnknown<K>),
}

impl<K> Clone for DeletedObject<K> {
    fn clone(&self) -> Self {
        Self {
            inner: match &self.inner {
                Deleted::Final(obj) => Deleted::Final(obj.clone()),
                Deleted::Unknown(t) => Deleted::Unknown(t.clone()),
            },
        }
    }
}

impl<K> std::fmt::Debug for DeletedObject<K> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DeletedObject")
            .field("has_object", &self.object().is_some())
            .field(
                "final_state_unknown",
                &self.final_state_unknown().map(|t| &t.key),
            )
            .finish()
    }
}

impl<K> From<Arc<K>> for DeletedObject<K> {
    fn from(obj: Arc<K>) -> Self {
        Self::new(obj)
    }
}

impl<K> From<DeletedFinalStateUnknown<K>> for DeletedObject<K> {
    fn from(tombstone: DeletedFinalStateUnknown<K>) -> Self {
        Self {
            inner: Deleted::Unknown(tombstone),
        }
    }
}

impl<K> DeletedObject<K> {
    /// A deletion seen with the object's final state.
    pub fn new(obj: Arc<K>) -> Self {
        Self {
            inner: Deleted::Final(obj),
        }
    }

    /// The deletion a delta carries: an object or a tombstone; `None` for
    /// the deltas that are no object (a relist, a resync, a bookmark).
    pub fn from_delta_object(obj: &DeltaObject<K>) -> Option<Self> {
        match obj {
            DeltaObject::Object(obj) => Some(Self::new(obj.clone())),
            DeltaObject::DeletedFinalStateUnknown(t) => Some(t.clone().into()),
            _ => None,
        }
    }

    /// The deleted object: its final state, or for a tombstone the last
    /// state known (possibly stale), or `None` if no copy was left.
    pub fn object(&self) -> Option<&Arc<K>> {
        match &self.inner {
            Deleted::Final(obj) => Some(obj),
            Deleted::Unknown(t) => t.obj.as_ref(),
        }
    }

    /// The tombstone, when the deletion was found by a relist and the final
    /// state is unknown.
    pub fn final_state_unknown(&self) -> Option<&DeletedFinalStateUnknown<K>> {
        match &self.inner {
            Deleted::Final(_) => None,
            Deleted::Unknown(t) => Some(t),
        }
    }

    /// Whether the final state is unknown (a tombstone).
    pub fn is_final_state_unknown(&self) -> bool {
        matches!(self.inner, Deleted::Unknown(_))
    }

    /// This deletion as the informer's delta object (an object or a
    /// tombstone).
    pub fn to_delta_object(&self) -> DeltaObject<K> {
        match &self.inner {
            Deleted::Final(obj) => DeltaObject::Object(obj.clone()),
            Deleted::Unknown(t) => DeltaObject::DeletedFinalStateUnknown(t.clone()),
        }
    }
}

impl<K: Resource> DeletedObject<K> {
    /// `(namespace, name)`: from the tombstone's key (split at the first
    /// `/`; no `/` means no namespace) or the object's metadata.
    fn parts(&self) -> (Option<&str>, &str) {
        match &self.inner {
            Deleted::Unknown(t) => match t.key.split_once('/') {
                Some((namespace, name)) => (Some(namespace).filter(|ns| !ns.is_empty()), name),
                None => (None, &t.key),
            },
            Deleted::Final(obj) => {
                let meta = obj.meta();
                (
                    meta.namespace.as_deref().filter(|ns| !ns.is_empty()),
                    meta.name.as_deref().unwrap_or_default(),
                )
            }
        }
    }

    /// The name, without the namespace (client-go's `GetName`).
    pub fn name(&self) -> &str {
        self.parts().1
    }

    /// The namespace; `None` for a cluster-scoped object (client-go's
    /// `GetNamespace`, which gives `""`).
    pub fn namespace(&self) -> Option<&str> {
        self.parts().0
    }

    /// Namespace and name as an [`ObjectName`] (client-go's `GetObjectName`).
    pub fn object_name(&self) -> ObjectName {
        let (namespace, name) = self.parts();
        ObjectName::new(namespace.unwrap_or_default(), name)
    }

    /// The key the informer's cache held the object under: `namespace/name`
    /// or `name` (client-go's `GetKey`; a tombstone's key as it is).
    pub fn key(&self) -> Cow<'_, str> {
        if let Deleted::Unknown(t) = &self.inner {
            return Cow::Borrowed(&t.key);
        }
        match self.parts() {
            (Some(namespace), name) => Cow::Owned(format!("{namespace}/{name}")),
            (None, name) => Cow::Borrowed(name),
        }
    }
}

/// Receives the changes an informer sees (client-go's
/// `ResourceEventHandler`).
///
/// Each handler registered on a
/// [`SharedIndexInformer`](crate::SharedIndexInformer) has its own unbounded
/// buffer and task: calls to one handler are made one at a time, in the
/// order the informer saw the changes, and a slow handler never delays the
/// informer or the other handlers. The calls are synchronous and run on
/// tokio's blocking pool (inside the runtime, so `tokio::spawn` works);
/// keep them short, typically putting a key into a work queue.
///
/// * `on_add(obj, is_in_initial_list)`: an object appeared. `is_in_initial_list`
///   is true for the objects of the first list (and for the cache replayed to
///   a handler added after start), so a controller can queue them at low
///   priority.
/// * `on_update(old, new)`: an object changed, or (with `old` and `new`
///   carrying the same resource version, see [`is_resync`]) was replayed by
///   a periodic resync or found unchanged by a relist.
/// * `on_delete(obj)`: an object is gone; `obj` is a [`DeletedObject`]
///   whose key, name and namespace can always be read, with the final state,
///   or (a [`DeletedFinalStateUnknown`] tombstone, the deletion missed while
///   the watch was down) the last known state if any.
///
/// Every method defaults to doing nothing. A panic in a handler is caught,
/// logged and counted; the handler keeps receiving later events.
pub trait ResourceEventHandler<K>: Send + Sync + 'static {
    /// An object was added (or listed).
    fn on_add(&self, obj: &Arc<K>, is_in_initial_list: bool) {
        let _ = (obj, is_in_initial_list);
    }

    /// An object was updated (or resynced: see [`is_resync`]).
    fn on_update(&self, old: &Arc<K>, new: &Arc<K>) {
        let _ = (old, new);
    }

    /// An object was deleted; its final state may be unknown (see
    /// [`DeletedObject`]).
    fn on_delete(&self, obj: &DeletedObject<K>) {
        let _ = obj;
    }
}

impl<K, H: ResourceEventHandler<K> + ?Sized> ResourceEventHandler<K> for Arc<H> {
    fn on_add(&self, obj: &Arc<K>, is_in_initial_list: bool) {
        (**self).on_add(obj, is_in_initial_list);
    }
    fn on_update(&self, old: &Arc<K>, new: &Arc<K>) {
        (**self).on_update(old, new);
    }
    fn on_delete(&self, obj: &DeletedObject<K>) {
        (**self).on_delete(obj);
    }
}

/// A [`MutationCache`](kcr_cache::MutationCache) registered as a handler on
/// the informer whose cache backs it learns what the informer stored, so an
/// entry goes as soon as the informer has caught up with it (client-go's
/// callers call `OnAddOrUpdate` / `OnDelete` from their handlers): adds
/// and updates go to `on_add_or_update`, deletions with a known last state
/// to `on_delete` (a tombstone without one changes nothing: the backing
/// store no longer holds the key, so reads without include-adds miss it
/// anyway).
///
/// ```
/// use std::sync::Arc;
/// use k8s_openapi::api::core::v1::ConfigMap;
/// use kcr_cache::{Indexers, MutationCache, MutationCacheOptions};
/// use kcr_informer::SharedIndexInformer;
/// # fn demo(informer: SharedIndexInformer<ConfigMap>) -> kcr_informer::Result<()> {
/// let writes = Arc::new(MutationCache::new(informer.get_indexer(), MutationCacheOptions::new()));
/// informer.add_event_handler(writes.clone())?;
/// # Ok(()) }
/// ```
impl<K> ResourceEventHandler<K> for kcr_cache::MutationCache<K>
where
    K: Resource + Send + Sync + 'static,
{
    fn on_add(&self, obj: &Arc<K>, _is_in_initial_list: bool) {
        self.on_add_or_update(obj);
    }
    fn on_update(&self, _old: &Arc<K>, new: &Arc<K>) {
        self.on_add_or_update(new);
    }
    fn on_delete(&self, obj: &DeletedObject<K>) {
        if let Some(last) = obj.object() {
            kcr_cache::MutationCache::on_delete(self, last);
        }
    }
}

/// Whether an `on_update` call is a resync rather than a live change: the
/// same object (a periodic resync replays the cached `Arc`) or the same
/// non-empty resource version (a relist that found the object unchanged).
/// client-go's informer makes the same test to decide which handlers get it.
pub fn is_resync<K: Resource>(old: &Arc<K>, new: &Arc<K>) -> bool {
    if Arc::ptr_eq(old, new) {
        return true;
    }
    match (
        old.meta().resource_version.as_deref(),
        new.meta().resource_version.as_deref(),
    ) {
        (Some(a), Some(b)) => !a.is_empty() && a == b,
        _ => false,
    }
}

type AddFn<K> = Box<dyn Fn(&Arc<K>, bool) + Send + Sync>;
type UpdateFn<K> = Box<dyn Fn(&Arc<K>, &Arc<K>) + Send + Sync>;
type DeleteFn<K> = Box<dyn Fn(&DeletedObject<K>) + Send + Sync>;

/// A [`ResourceEventHandler`] made of closures, any of them optional
/// (client-go's `ResourceEventHandlerFuncs`).
///
/// ```
/// use std::sync::Arc;
/// use k8s_openapi::api::core::v1::ConfigMap;
/// use kcr_informer::{ResourceEventHandler, ResourceEventHandlerFuncs};
///
/// let handler = ResourceEventHandlerFuncs::<ConfigMap>::new()
///     .add_func(|cm, initial| println!("added {:?} (initial list: {initial})", cm.metadata.name))
///     .delete_func(|obj| println!("deleted {:?}", obj.object().map(|cm| &cm.metadata.name)));
/// handler.on_add(&Arc::new(ConfigMap::default()), true);
/// // No update_func: updates are ignored.
/// handler.on_update(&Arc::new(ConfigMap::default()), &Arc::new(ConfigMap::default()));
/// ```
pub struct ResourceEventHandlerFuncs<K> {
    add: Option<AddFn<K>>,
    update: Option<UpdateFn<K>>,
    delete: Option<DeleteFn<K>>,
}

impl<K> Default for ResourceEventHandlerFuncs<K> {
    fn default() -> Self {
        Self {
            add: None,
            update: None,
            delete: None,
        }
    }
}

impl<K> std::fmt::Debug for ResourceEventHandlerFuncs<K> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ResourceEventHandlerFuncs")
            .field("add", &self.add.is_some())
            .field("update", &self.update.is_some())
            .field("delete", &self.delete.is_some())
            .finish()
    }
}

impl<K> ResourceEventHandlerFuncs<K> {
    /// A handler that ignores everything until closures are set.
    pub fn new() -> Self {
        Self::default()
    }

    /// Called by `on_add` with the object and whether it is in the initial list.
    #[must_use]
    pub fn add_func(mut self, f: impl Fn(&Arc<K>, bool) + Send + Sync + 'static) -> Self {
        self.add = Some(Box::new(f));
        self
    }

    /// Called by `on_update` with the old and the new object.
    #[must_use]
    pub fn update_func(mut self, f: impl Fn(&Arc<K>, &Arc<K>) + Send + Sync + 'static) -> Self {
        self.update = Some(Box::new(f));
        self
    }

    /// Called by `on_delete` with the deleted object (see [`DeletedObject`]).
    #[must_use]
    pub fn delete_func(mut self, f: impl Fn(&DeletedObject<K>) + Send + Sync + 'static) -> Self {
        self.delete = Some(Box::new(f));
        self
    }
}

impl<K: Send + Sync + 'static> ResourceEventHandler<K> for ResourceEventHandlerFuncs<K> {
    fn on_add(&self, obj: &Arc<K>, is_in_initial_list: bool) {
        if let Some(f) = &self.add {
            f(obj, is_in_initial_list);
        }
    }
    fn on_update(&self, old: &Arc<K>, new: &Arc<K>) {
        if let Some(f) = &self.update {
            f(old, new);
        }
    }
    fn on_delete(&self, obj: &DeletedObject<K>) {
        if let Some(f) = &self.delete {
            f(obj);
        }
    }
}

/// Passes to an inner handler only the objects a filter accepts
/// (client-go's `FilteringResourceEventHandler`).
///
/// An update whose old object passed and whose new one does not is
/// delivered as `on_delete(old)`; one whose old object did not pass and whose
/// new one does as `on_add(new, false)`. A tombstone without a last known
/// state cannot be filtered and is passed on (a spurious delete is harmless,
/// a lost one is not).
///
/// ```
/// use std::sync::{Arc, Mutex};
/// use k8s_openapi::api::core::v1::ConfigMap;
/// use kcr_informer::{FilteringResourceEventHandler, ResourceEventHandler, ResourceEventHandlerFuncs};
///
/// let seen = Arc::new(Mutex::new(Vec::new()));
/// let log = seen.clone();
/// let handler = FilteringResourceEventHandler::new(
///     |cm: &ConfigMap| cm.data.as_ref().is_some_and(|d| d.contains_key("enabled")),
///     ResourceEventHandlerFuncs::new()
///         .add_func({ let log = log.clone(); move |_, _| log.lock().unwrap().push("add") })
///         .delete_func(move |_| log.lock().unwrap().push("delete")),
/// );
/// let off = Arc::new(ConfigMap::default());
/// let on = Arc::new(ConfigMap { data: Some([("enabled".into(), "1".into())].into()), ..ConfigMap::default() });
/// handler.on_update(&off, &on); // starts passing: an add
/// handler.on_update(&on, &off); // stops passing: a delete
/// handler.on_add(&off, false); // never passes: nothing
/// assert_eq!(*seen.lock().unwrap(), ["add", "delete"]);
/// ```
pub struct FilteringResourceEventHandler<K, F, H> {
    filter: F,
    handler: H,
    _object: std::marker::PhantomData<fn(&K)>,
}

impl<K, F, H> std::fmt::Debug for FilteringResourceEventHandler<K, F, H> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FilteringResourceEventHandler")
            .finish_non_exhaustive()
    }
}

impl<K, F, H> FilteringResourceEventHandler<K, F, H>
where
    F: Fn(&K) -> bool + Send + Sync + 'static,
    H: ResourceEventHandler<K>,
{
    /// Passes to `handler` what `filter` accepts.
    pub fn new(filter: F, handler: H) -> Self {
        Self {
            filter,
            handler,
            _object: std::marker::PhantomData,
        }
    }
}

impl<K, F, H> ResourceEventHandler<K> for FilteringResourceEventHandler<K, F, H>
where
    K: 'static,
    F: Fn(&K) -> bool + Send + Sync + 'static,
    H: ResourceEventHandler<K>,
{
    fn on_add(&self, obj: &Arc<K>, is_in_initial_list: bool) {
        if (self.filter)(obj) {
            self.handler.on_add(obj, is_in_initial_list);
        }
    }

    fn on_update(&self, old: &Arc<K>, new: &Arc<K>) {
        match ((self.filter)(old), (self.filter)(new)) {
            (true, true) => self.handler.on_update(old, new),
            (true, false) => self.handler.on_delete(&DeletedObject::new(old.clone())),
            (false, true) => self.handler.on_add(new, false),
            (false, false) => {}
        }
    }

    fn on_delete(&self, obj: &DeletedObject<K>) {
        let passes = match obj.object() {
            Some(last) => (self.filter)(last),
            None => true,
        };
        if passes {
            self.handler.on_delete(obj);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use k8s_openapi::api::core::v1::ConfigMap;
    use std::sync::Mutex;

    fn cm(rv: &str, on: bool) -> Arc<ConfigMap> {
        let mut cm = ConfigMap::default();
        cm.metadata.name = Some("a".into());
        cm.metadata.resource_version = Some(rv.into());
        if on {
            cm.data = Some([("on".to_owned(), String::new())].into());
        }
        Arc::new(cm)
    }

    #[test]
    fn is_resync_should_hold_for_the_same_object_or_the_same_resource_version_only() {
        let a = cm("1", false);
        assert!(is_resync(&a, &a));
        assert!(is_resync(&a, &cm("1", true)));
        assert!(!is_resync(&a, &cm("2", false)));
        assert!(!is_resync(&cm("", false), &cm("", false)));
    }

    #[test]
    fn a_filtering_handler_should_pass_a_tombstone_it_cannot_filter_and_filter_one_it_can() {
        let deletes = Arc::new(Mutex::new(0));
        let handler = FilteringResourceEventHandler::new(
            |cm: &ConfigMap| cm.data.is_some(),
            ResourceEventHandlerFuncs::new().delete_func({
                let deletes = deletes.clone();
                move |_| *deletes.lock().unwrap_or_else(|e| e.into_inner()) += 1
            }),
        );
        let unknown: DeletedObject<ConfigMap> = DeletedFinalStateUnknown {
            key: "ns/a".into(),
            obj: None,
        }
        .into();
        handler.on_delete(&unknown);
        let filtered_out: DeletedObject<ConfigMap> = DeletedFinalStateUnknown {
            key: "ns/a".into(),
            obj: Some(cm("1", false)),
        }
        .into();
        handler.on_delete(&filtered_out);
        handler.on_delete(&DeletedObject::new(cm("1", true)));
        assert_eq!(*deletes.lock().unwrap_or_else(|e| e.into_inner()), 2);
    }

    #[test]
    fn a_deleted_object_should_always_give_its_key_and_name_tombstones_included() {
        let mut namespaced = ConfigMap::default();
        namespaced.metadata.namespace = Some("ns".into());
        namespaced.metadata.name = Some("a".into());
        let seen = DeletedObject::new(Arc::new(namespaced.clone()));
        assert_eq!(seen.key(), "ns/a");
        assert_eq!((seen.namespace(), seen.name()), (Some("ns"), "a"));
        assert_eq!(seen.object_name(), ObjectName::new("ns", "a"));
        assert!(!seen.is_final_state_unknown() && seen.final_state_unknown().is_none());

        let cluster_scoped = DeletedObject::new(cm("1", false));
        assert_eq!(cluster_scoped.key(), "a");
        assert_eq!(cluster_scoped.namespace(), None);

        // A tombstone's key wins over its (possibly stale) object, as in client-go.
        let stale: DeletedObject<ConfigMap> = DeletedFinalStateUnknown {
            key: "other/b".into(),
            obj: Some(Arc::new(namespaced)),
        }
        .into();
        assert_eq!(stale.key(), "other/b");
        assert_eq!((stale.namespace(), stale.name()), (Some("other"), "b"));
        assert_eq!(
            stale.object().and_then(|o| o.metadata.name.as_deref()),
            Some("a")
        );
        assert!(stale.is_final_state_unknown());

        for (key, namespace, name) in [
            ("x", None, "x"),
            ("/y", None, "y"),
            ("ns/with/slash", Some("ns"), "with/slash"),
            ("", None, ""),
        ] {
            let unknown: DeletedObject<ConfigMap> = DeletedFinalStateUnknown {
                key: key.into(),
                obj: None,
            }
            .into();
            assert_eq!(unknown.key(), key);
            assert_eq!(
                (unknown.namespace(), unknown.name()),
                (namespace, name),
                "{key}"
            );
            assert!(unknown.object().is_none());
            assert!(matches!(
                unknown.to_delta_object(),
                DeltaObject::DeletedFinalStateUnknown(t) if &*t.key == key
            ));
        }
    }

    #[test]
    fn funcs_without_closures_should_ignore_every_call() {
        let handler = ResourceEventHandlerFuncs::<ConfigMap>::new();
        handler.on_add(&cm("1", false), true);
        handler.on_update(&cm("1", false), &cm("2", false));
        handler.on_delete(&DeletedObject::new(cm("2", false)));
        assert_eq!(
            format!("{handler:?}"),
            "ResourceEventHandlerFuncs { add: false, update: false, delete: false }"
        );
    }
}
