//! [`SharedInformerFactory`]: one shared informer per resource (client-go's
//! `informers/factory.go` and the dynamic informer factory).

use std::any::{Any, TypeId};
use std::collections::HashMap;
use std::fmt;
use std::fmt::Debug;
use std::sync::Arc;
use std::time::Duration;

use futures::future::BoxFuture;
use kcr_cache::{Indexers, NAMESPACE_INDEX, meta_namespace_index_func};
use kcr_reflector::{ApiListerWatcher, ShardSelector, WireFormat};
use kube::api::{Api, ApiResource, DynamicObject};
use kube::core::{NamespaceScope, PartialObjectMeta};
use kube::{Client, Resource};
use parking_lot::Mutex;
use serde::de::DeserializeOwned;
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

use crate::shared_informer::SharedIndexInformer;
use crate::wait::{HasSynced, SYNCED_POLL_PERIOD};

/// Which informer of a factory: the resource, the namespace it watches
/// (`None`: all namespaces, or a cluster-scoped resource), whether it
/// holds dynamic objects and whether it holds metadata only.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct InformerKey {
    /// API group (empty for the core group).
    pub group: String,
    /// API version.
    pub version: String,
    /// Plural resource name.
    pub plural: String,
    /// The namespace watched, if restricted to one.
    pub namespace: Option<String>,
    /// Whether the informer holds `DynamicObject`s (from
    /// [`dynamic_informer`](SharedInformerFactory::dynamic_informer)).
    pub dynamic: bool,
    /// Whether the informer holds only the objects' metadata
    /// (`PartialObjectMeta`, from
    /// [`metadata_informer`](SharedInformerFactory::metadata_informer)).
    pub metadata: bool,
}

impl InformerKey {
    fn of(resource: &ApiResource, namespace: Option<&str>, dynamic: bool, metadata: bool) -> Self {
        Self {
            dynamic,
            metadata,
            group: resource.group.clone(),
            version: resource.version.clone(),
            plural: resource.plural.clone(),
            namespace: namespace.map(str::to_owned),
        }
    }
}

impl fmt::Display for InformerKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.plural)?;
        if !self.group.is_empty() {
            write!(f, ".{}", self.group)?;
        }
        write!(f, "/{}", self.version)?;
        if let Some(ns) = &self.namespace {
            write!(f, " in {ns}")?;
        }
        if self.dynamic {
            f.write_str(" (dynamic)")?;
        }
        if self.metadata {
            f.write_str(" (metadata)")?;
        }
        Ok(())
    }
}

/// A type-erased informer, so the factory can start and watch them all.
trait ErasedInformer: Send + Sync {
    fn has_synced(&self) -> bool;
    fn run(&self, cancel: CancellationToken) -> BoxFuture<'static, ()>;
}

impl<K> ErasedInformer for SharedIndexInformer<K>
where
    K: Resource + Clone + Send + Sync + 'static,
{
    fn has_synced(&self) -> bool {
        HasSynced::has_synced(self)
    }
    fn run(&self, cancel: CancellationToken) -> BoxFuture<'static, ()> {
        let informer = self.clone();
        Box::pin(async move {
            if let Err(e) = informer.run(cancel).await {
                tracing::warn!(informer = %informer.informer_name(), error = %e, "informer did not run");
            }
        })
    }
}

struct Entry {
    key: InformerKey,
    typed: Box<dyn Any + Send + Sync>,
    erased: Arc<dyn ErasedInformer>,
    started: bool,
}

#[derive(Default)]
struct State {
    informers: HashMap<(TypeId, InformerKey), Entry>,
    tasks: Vec<JoinHandle<()>>,
    shutting_down: bool,
}

#[derive(Clone, Default)]
struct Options {
    label_selector: Option<String>,
    field_selector: Option<String>,
    keep_managed_fields: bool,
    wire_format: WireFormat,
    custom_resync: HashMap<(String, String), Duration>,
    /// Per resource (group, plural): the `shardSelector` its informers list and watch with.
    shard_selectors: HashMap<(String, String), ShardSelector>,
}

struct Inner {
    client: Client,
    default_resync: Duration,
    options: Mutex<Options>,
    // A parking_lot lock, never held across `.await`.
    state: Mutex<State>,
    cancel: CancellationToken,
}

/// Hands out one [`SharedIndexInformer`] per resource and namespace, starts
/// them together, waits for their caches and shuts them down (client-go's
/// `SharedInformerFactory`, typed and dynamic in one).
///
/// Every informer of a factory shares its default resync period and its
/// list tweaks (label and field selectors, as client-go's
/// `WithTweakListOptions`), indexes its cache by namespace, and drops
/// `managedFields` unless [`keep_managed_fields`](Self::keep_managed_fields)
/// says otherwise. The factory is a cheap handle: clones share the informers.
///
/// ```no_run
/// # async fn doc(client: kube::Client) {
/// use std::time::Duration;
/// use k8s_openapi::api::core::v1::{ConfigMap, Pod};
/// use kcr_informer::{ResourceEventHandlerFuncs, SharedInformerFactory};
/// use tokio_util::sync::CancellationToken;
///
/// let factory = SharedInformerFactory::new(client, Duration::from_secs(600));
/// let pods = factory.informer::<Pod>();
/// pods.add_event_handler(ResourceEventHandlerFuncs::new().add_func(|pod: &std::sync::Arc<Pod>, _| {
///     println!("pod {:?}", pod.metadata.name);
/// })).unwrap();
/// let config_maps = factory.namespaced_informer::<ConfigMap>("default");
/// factory.start();
/// let synced = factory.wait_for_cache_sync(&CancellationToken::new()).await;
/// assert!(synced.values().all(|s| *s));
/// println!("{} config maps", config_maps.lister().namespaced("default").list(&Default::default()).len());
/// factory.shutdown().await;
/// # }
/// ```
#[derive(Clone)]
pub struct SharedInformerFactory {
    inner: Arc<Inner>,
}

impl fmt::Debug for SharedInformerFactory {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let state = self.inner.state.lock();
        let mut keys: Vec<String> = state
            .informers
            .values()
            .map(|e| e.key.to_string())
            .collect();
        keys.sort();
        f.debug_struct("SharedInformerFactory")
            .field("default_resync", &self.inner.default_resync)
            .field("informers", &keys)
            .field("shutting_down", &state.shutting_down)
            .finish_non_exhaustive()
    }
}

impl SharedInformerFactory {
    /// A factory whose informers list and watch through `client` and whose
    /// handlers resync every `default_resync` (zero: never).
    pub fn new(client: Client, default_resync: Duration) -> Self {
        Self {
            inner: Arc::new(Inner {
                client,
                default_resync,
                options: Mutex::new(Options::default()),
                state: Mutex::new(State::default()),
                cancel: CancellationToken::new(),
            }),
        }
    }

    /// Every informer lists and watches only objects matching this label
    /// selector (informers created before this call are not affected).
    #[must_use]
    pub fn label_selector(self, selector: impl Into<String>) -> Self {
        self.inner.options.lock().label_selector = Some(selector.into());
        self
    }

    /// Every informer lists and watches only objects matching this field
    /// selector (informers created before this call are not affected).
    #[must_use]
    pub fn field_selector(self, selector: impl Into<String>) -> Self {
        self.inner.options.lock().field_selector = Some(selector.into());
        self
    }

    /// Keeps `metadata.managedFields` in the caches (dropped by default).
    #[must_use]
    pub fn keep_managed_fields(self, keep: bool) -> Self {
        self.inner.options.lock().keep_managed_fields = keep;
        self
    }

    /// The wire format typed informers list and watch in (informers created before this call
    /// are not affected). With [`WireFormat::Protobuf`], the default as in client-go, the
    /// built-in kinds whose protobuf decoding is proven against a real kube-apiserver
    /// (kcr-protobuf's `is_proven`) are listed and watched in protobuf and every other kind
    /// (custom resources, every dynamic informer) in JSON; [`WireFormat::Json`] switches back
    /// to JSON for every kind.
    #[must_use]
    pub fn wire_format(self, format: WireFormat) -> Self {
        self.inner.options.lock().wire_format = format;
        self
    }

    /// A resync period for one resource, instead of the default (client-go's
    /// `WithCustomResyncConfig`).
    #[must_use]
    pub fn resync_for(self, resource: &ApiResource, resync: Duration) -> Self {
        self.inner
            .options
            .lock()
            .custom_resync
            .insert((resource.group.clone(), resource.plural.clone()), resync);
        self
    }

    /// Makes the informers of `resource` created from now on list and watch with `selector`
    /// (KEP-5866 sharded list and watch; see [`ShardSelector`]): when it changes, their
    /// watches end and they list again with the new value.
    ///
    /// Returns false, and changes nothing, when the factory already has an informer of
    /// `resource` (it keeps listing without the selector).
    pub fn set_shard_selector_for(&self, resource: &ApiResource, selector: ShardSelector) -> bool {
        let state = self.inner.state.lock();
        let exists = state.informers.values().any(|e| {
            e.key.group == resource.group
                && e.key.version == resource.version
                && e.key.plural == resource.plural
        });
        if exists {
            return false;
        }
        self.inner
            .options
            .lock()
            .shard_selectors
            .insert((resource.group.clone(), resource.plural.clone()), selector);
        true
    }

    /// The shared informer of `K` across all namespaces (or of the
    /// cluster-scoped `K`), created on first use.
    pub fn informer<K>(&self) -> SharedIndexInformer<K>
    where
        K: Resource<DynamicType = ()> + Clone + DeserializeOwned + Debug + Send + Sync + 'static,
    {
        let resource = ApiResource::erase::<K>(&());
        let format = self.inner.options.lock().wire_format;
        self.informer_for(&resource, None, || {
            ApiListerWatcher::new(Api::<K>::all(self.inner.client.clone())).wire_format(format)
        })
    }

    /// The shared informer of the namespaced `K` in `namespace`.
    pub fn namespaced_informer<K>(&self, namespace: &str) -> SharedIndexInformer<K>
    where
        K: Resource<DynamicType = ()> + Clone + DeserializeOwned + Debug + Send + Sync + 'static,
        K::Scope: NamespaceScope,
    {
        let resource = ApiResource::erase::<K>(&());
        let format = self.inner.options.lock().wire_format;
        self.informer_for(&resource, Some(namespace), || {
            ApiListerWatcher::new(Api::<K>::all(self.inner.client.clone()).constrain(namespace))
                .wire_format(format)
        })
    }

    /// The shared informer of a resource known at runtime, across all
    /// namespaces (client-go's dynamic informer factory).
    pub fn dynamic_informer(&self, resource: &ApiResource) -> SharedIndexInformer<DynamicObject> {
        self.informer_for(resource, None, || {
            ApiListerWatcher::new(Api::<DynamicObject>::all_with(
                self.inner.client.clone(),
                resource,
            ))
        })
    }

    /// The shared informer of a namespaced resource known at runtime, in
    /// `namespace`.
    pub fn namespaced_dynamic_informer(
        &self,
        resource: &ApiResource,
        namespace: &str,
    ) -> SharedIndexInformer<DynamicObject> {
        self.informer_for(resource, Some(namespace), || {
            ApiListerWatcher::new(Api::<DynamicObject>::namespaced_with(
                self.inner.client.clone(),
                namespace,
                resource,
            ))
        })
    }

    /// The shared informer of `K`'s metadata across all namespaces (or of the cluster-scoped
    /// `K`), created on first use: client-go's `metadatainformer`, controller-runtime's
    /// `OnlyMetadata`. It lists and watches `PartialObjectMetadata` (`Accept:
    /// ...;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1`, in protobuf for a kind kcr-protobuf
    /// proves, as client-go's metadata client asks), so its cache holds each object's
    /// `ObjectMeta` (name, labels, annotations, owner references, ...) and none of its spec,
    /// status or data: a fraction of the memory of [`informer::<K>()`](Self::informer), which
    /// is a separate informer with its own cache. `metadata_informer::<K>()` and
    /// `informer::<PartialObjectMeta<K>>()` are the same informer.
    ///
    /// The objects' `types` are what the server sent: `meta.k8s.io/v1`
    /// `PartialObjectMetadata` when read as JSON, `None` from protobuf (as client-go reads
    /// them); `K::kind(&())` names the kind either way.
    pub fn metadata_informer<K>(&self) -> SharedIndexInformer<PartialObjectMeta<K>>
    where
        K: Resource<DynamicType = ()> + Clone + Debug + Send + Sync + 'static,
    {
        self.informer::<PartialObjectMeta<K>>()
    }

    /// The shared informer of the metadata of the namespaced `K` in `namespace` (see
    /// [`metadata_informer`](Self::metadata_informer)).
    pub fn namespaced_metadata_informer<K>(
        &self,
        namespace: &str,
    ) -> SharedIndexInformer<PartialObjectMeta<K>>
    where
        K: Resource<DynamicType = ()> + Clone + Debug + Send + Sync + 'static,
        K::Scope: NamespaceScope,
    {
        self.namespaced_informer::<PartialObjectMeta<K>>(namespace)
    }

    /// The shared informer of the metadata of a resource known at runtime, across all
    /// namespaces (client-go's `metadatainformer` factory, keyed by resource as there). Read
    /// as JSON: only typed kinds kcr-protobuf proves are read in protobuf.
    pub fn dynamic_metadata_informer(
        &self,
        resource: &ApiResource,
    ) -> SharedIndexInformer<PartialObjectMeta<DynamicObject>> {
        self.informer_for(resource, None, || {
            ApiListerWatcher::new(Api::<PartialObjectMeta<DynamicObject>>::all_with(
                self.inner.client.clone(),
                resource,
            ))
        })
    }

    /// The shared informer of the metadata of a namespaced resource known at runtime, in
    /// `namespace`.
    pub fn namespaced_dynamic_metadata_informer(
        &self,
        resource: &ApiResource,
        namespace: &str,
    ) -> SharedIndexInformer<PartialObjectMeta<DynamicObject>> {
        self.informer_for(resource, Some(namespace), || {
            ApiListerWatcher::new(Api::<PartialObjectMeta<DynamicObject>>::namespaced_with(
                self.inner.client.clone(),
                namespace,
                resource,
            ))
        })
    }

    fn informer_for<K, F>(
        &self,
        resource: &ApiResource,
        namespace: Option<&str>,
        api: F,
    ) -> SharedIndexInformer<K>
    where
        K: Resource + Clone + DeserializeOwned + Debug + Send + Sync + 'static,
        F: FnOnce() -> ApiListerWatcher<K>,
    {
        let dynamic = TypeId::of::<K>() == TypeId::of::<DynamicObject>()
            || TypeId::of::<K>() == TypeId::of::<PartialObjectMeta<DynamicObject>>();
        let key = InformerKey::of(resource, namespace, dynamic, K::metadata_api());
        let mut state = self.inner.state.lock();
        // The type too: two Rust types may serve the same resource.
        let map_key = (TypeId::of::<K>(), key.clone());
        if let Some(informer) = state
            .informers
            .get(&map_key)
            .and_then(|e| e.typed.downcast_ref::<SharedIndexInformer<K>>())
        {
            return informer.clone();
        }
        let options = self.inner.options.lock().clone();
        let resync = options
            .custom_resync
            .get(&(resource.group.clone(), resource.plural.clone()))
            .copied()
            .unwrap_or(self.inner.default_resync);
        let mut indexers = Indexers::default();
        indexers.insert(NAMESPACE_INDEX.to_owned(), meta_namespace_index_func());
        // Objects are decoded without their managedFields unless they are
        // kept: the field is skipped while parsing, never built and dropped.
        let mut lister_watcher = api().drop_managed_fields(!options.keep_managed_fields);
        if let Some(selector) = options
            .shard_selectors
            .get(&(resource.group.clone(), resource.plural.clone()))
        {
            lister_watcher = lister_watcher.shard_selector(selector.clone());
        }
        let mut informer = SharedIndexInformer::new(lister_watcher, resync, indexers)
            .name(key.to_string())
            .keep_managed_fields(options.keep_managed_fields);
        if let Some(s) = options.label_selector {
            informer = informer.label_selector(s);
        }
        if let Some(s) = options.field_selector {
            informer = informer.field_selector(s);
        }
        state.informers.insert(
            map_key,
            Entry {
                key,
                typed: Box::new(informer.clone()),
                erased: Arc::new(informer.clone()),
                started: false,
            },
        );
        informer
    }

    /// Starts every informer not started yet, each on its own task
    /// (client-go's `Start`: call it again after asking for more informers).
    /// Does nothing after [`shutdown`](Self::shutdown). Needs a tokio runtime.
    pub fn start(&self) {
        let mut state = self.inner.state.lock();
        if state.shutting_down {
            return;
        }
        let mut tasks = Vec::new();
        for entry in state.informers.values_mut().filter(|e| !e.started) {
            entry.started = true;
            tasks.push(tokio::spawn(
                entry.erased.run(self.inner.cancel.child_token()),
            ));
        }
        state.tasks.extend(tasks);
    }

    /// Waits until every started informer has synced, or `cancel` fires;
    /// returns, per informer, whether it synced (client-go's
    /// `WaitForCacheSync`).
    pub async fn wait_for_cache_sync(
        &self,
        cancel: &CancellationToken,
    ) -> HashMap<InformerKey, bool> {
        let started: Vec<(InformerKey, Arc<dyn ErasedInformer>)> = {
            let state = self.inner.state.lock();
            state
                .informers
                .values()
                .filter(|e| e.started)
                .map(|e| (e.key.clone(), e.erased.clone()))
                .collect()
        };
        loop {
            if started.iter().all(|(_, i)| i.has_synced()) || cancel.is_cancelled() {
                return started
                    .iter()
                    .map(|(k, i)| (k.clone(), i.has_synced()))
                    .collect();
            }
            tokio::select! {
                () = cancel.cancelled() => {}
                () = tokio::time::sleep(SYNCED_POLL_PERIOD) => {}
            }
        }
    }

    /// Stops every informer and waits until they (and their handlers) have
    /// stopped. Informers asked for afterwards never start.
    pub async fn shutdown(&self) {
        let tasks = {
            let mut state = self.inner.state.lock();
            state.shutting_down = true;
            std::mem::take(&mut state.tasks)
        };
        self.inner.cancel.cancel();
        for task in tasks {
            let _ = task.await;
        }
    }
}
