//! [`ResourceEventHandler`] and its two ready-made implementations,
//! [`ResourceEventHandlerFuncs`] and [`FilteringResourceEventHandler`]
//! (client-go's `controller.go`).

use std::sync::Arc;

use kcr_cache::DeltaObject;
use kube::Resource;

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
/// * `on_delete(obj)`: an object is gone; `obj` is its last state, or a
///   [`DeletedFinalStateUnknown`](kcr_cache::DeletedFinalStateUnknown)
///   tombstone when the deletion was missed while the watch was down.
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

    /// An object was deleted; `obj` may be a tombstone.
    fn on_delete(&self, obj: &DeltaObject<K>) {
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
    fn on_delete(&self, obj: &DeltaObject<K>) {
        (**self).on_delete(obj);
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
type DeleteFn<K> = Box<dyn Fn(&DeltaObject<K>) + Send + Sync>;

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

    /// Called by `on_delete` with the object or its tombstone.
    #[must_use]
    pub fn delete_func(mut self, f: impl Fn(&DeltaObject<K>) + Send + Sync + 'static) -> Self {
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
    fn on_delete(&self, obj: &DeltaObject<K>) {
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
            (true, false) => self.handler.on_delete(&DeltaObject::Object(old.clone())),
            (false, true) => self.handler.on_add(new, false),
            (false, false) => {}
        }
    }

    fn on_delete(&self, obj: &DeltaObject<K>) {
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
    use kcr_cache::DeletedFinalStateUnknown;
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
        let unknown: DeltaObject<ConfigMap> = DeletedFinalStateUnknown {
            key: "ns/a".into(),
            obj: None,
        }
        .into();
        handler.on_delete(&unknown);
        let filtered_out: DeltaObject<ConfigMap> = DeletedFinalStateUnknown {
            key: "ns/a".into(),
            obj: Some(cm("1", false)),
        }
        .into();
        handler.on_delete(&filtered_out);
        handler.on_delete(&DeltaObject::Object(cm("1", true)));
        assert_eq!(*deletes.lock().unwrap_or_else(|e| e.into_inner()), 2);
    }

    #[test]
    fn funcs_without_closures_should_ignore_every_call() {
        let handler = ResourceEventHandlerFuncs::<ConfigMap>::new();
        handler.on_add(&cm("1", false), true);
        handler.on_update(&cm("1", false), &cm("2", false));
        handler.on_delete(&DeltaObject::Object(cm("2", false)));
        assert_eq!(
            format!("{handler:?}"),
            "ResourceEventHandlerFuncs { add: false, update: false, delete: false }"
        );
    }
}
