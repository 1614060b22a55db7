//! What the manager caches (controller-runtime `pkg/cache` `Options` and `ByObject`): the
//! namespaces its informers watch, their label and field selectors and a transform, by default
//! and per type, and the informers made from them.
//!
//! A manager limited to namespaces lists and watches each of them on its own
//! (`/api/v1/namespaces/<ns>/...`), never the whole cluster, so it runs with namespace-scoped
//! RBAC (a `Role` per namespace).

use std::any::{Any, TypeId};
use std::collections::HashMap;
use std::fmt;
use std::fmt::Debug;
use std::sync::Arc;
use std::time::Duration;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use k8s_openapi::{ClusterResourceScope, NamespaceResourceScope};
use kcr_informer::{SharedIndexInformer, SharedInformerFactory, WireFormat};
use kube::core::PartialObjectMeta;
use kube::{Client, Resource};
use parking_lot::Mutex;
use serde::de::DeserializeOwned;

type MetaTransform = Arc<dyn Fn(&mut ObjectMeta) + Send + Sync>;
type ObjectTransform<K> = Arc<dyn Fn(K) -> K + Send + Sync>;

/// What the manager's informers cache (controller-runtime `cache.Options`): by default every
/// namespace and every object; set with
/// [`Options::informers`](crate::Options::informers).
///
/// ```
/// use k8s_openapi::api::core::v1::{ConfigMap, Secret};
/// use kcr_controller_manager::manager::{ByObject, InformerOptions};
/// use kcr_controller_manager::Options;
///
/// let cache = InformerOptions::default()
///     // Every namespaced type is watched in these two namespaces only.
///     .default_namespaces(["team-a", "team-b"])
///     // Annotations are not kept in the cache.
///     .default_transform(|meta| meta.annotations = None)
///     // Secrets: only those labelled for the operator, and only in team-a.
///     .by_object::<Secret>(
///         ByObject::new()
///             .namespaces(["team-a"])
///             .label_selector("app.kubernetes.io/managed-by=my-operator"),
///     )
///     // Config maps: their data is dropped before they are cached.
///     .by_object::<ConfigMap>(ByObject::new().transform(|mut cm: ConfigMap| {
///         cm.data = None;
///         cm
///     }));
/// let options = Options::default().informers(cache);
/// # let _ = options;
/// ```
#[derive(Clone, Default)]
#[must_use]
pub struct InformerOptions {
    default_namespaces: Vec<String>,
    default_label_selector: Option<String>,
    default_field_selector: Option<String>,
    default_transform: Option<MetaTransform>,
    wire_format: WireFormat,
    /// `ByObject<K>` by `TypeId::of::<K>()`.
    by_object: HashMap<TypeId, Arc<dyn Any + Send + Sync>>,
    /// The namespaces and selectors of each typed `ByObject<K>` by `K`'s (group, plural): what
    /// a metadata-only cache of `K` (`PartialObjectMeta<K>`) without a `ByObject` of its own
    /// takes, as controller-runtime keys `ByObject` by GVK for both.
    by_resource: HashMap<(String, String), ByObject<()>>,
}

impl Debug for InformerOptions {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("InformerOptions")
            .field("default_namespaces", &self.default_namespaces)
            .field("default_label_selector", &self.default_label_selector)
            .field("default_field_selector", &self.default_field_selector)
            .field("default_transform", &self.default_transform.is_some())
            .field("wire_format", &self.wire_format)
            .field("by_object", &self.by_object.len())
            .finish()
    }
}

impl InformerOptions {
    /// Namespaced types are cached from these namespaces only, one List & Watch per namespace
    /// (controller-runtime `DefaultNamespaces`); empty (the default): all namespaces.
    /// Cluster-scoped types are not affected.
    pub fn default_namespaces<S: Into<String>>(
        mut self,
        namespaces: impl IntoIterator<Item = S>,
    ) -> Self {
        self.default_namespaces = namespaces.into_iter().map(Into::into).collect();
        self
    }

    /// Only objects matching this label selector are cached (`DefaultLabelSelector`), for every
    /// type without its own.
    pub fn default_label_selector(mut self, selector: impl Into<String>) -> Self {
        self.default_label_selector = Some(selector.into());
        self
    }

    /// Only objects matching this field selector are cached (`DefaultFieldSelector`), for every
    /// type without its own.
    pub fn default_field_selector(mut self, selector: impl Into<String>) -> Self {
        self.default_field_selector = Some(selector.into());
        self
    }

    /// Changes the metadata of every object before it is cached (`DefaultTransform`), for every
    /// type without a transform of its own (after `managedFields` are dropped).
    pub fn default_transform(
        mut self,
        f: impl Fn(&mut ObjectMeta) + Send + Sync + 'static,
    ) -> Self {
        self.default_transform = Some(Arc::new(f));
        self
    }

    /// The wire format the caches list and watch in: [`WireFormat::Protobuf`] (the default, as
    /// client-go's) for the built-in kinds whose protobuf decoding kcr-protobuf proves, JSON
    /// for every other kind; [`WireFormat::Json`] switches back to JSON for every kind.
    pub fn wire_format(mut self, format: WireFormat) -> Self {
        self.wire_format = format;
        self
    }

    /// The cache settings of `K` (controller-runtime `ByObject`); what it leaves unset comes
    /// from the defaults. A second call for the same type replaces the first.
    ///
    /// The metadata-only cache of a typed `K` (`PartialObjectMeta<K>`, see
    /// [`Manager::metadata_reader`](crate::Manager::metadata_reader)) takes `K`'s namespaces
    /// and selectors too, unless `by_object::<PartialObjectMeta<K>>` gives its own; a
    /// transform applies to its own type only.
    pub fn by_object<K: Resource + 'static>(mut self, options: ByObject<K>) -> Self
    where
        K::DynamicType: 'static,
    {
        // A typed kind's type information is `()`; a dynamic object's is an `ApiResource`.
        let unit: &dyn Any = &();
        if !K::metadata_api()
            && let Some(dt) = unit.downcast_ref::<K::DynamicType>()
        {
            self.by_resource.insert(
                (K::group(dt).into_owned(), K::plural(dt).into_owned()),
                ByObject {
                    namespaces: options.namespaces.clone(),
                    label_selector: options.label_selector.clone(),
                    field_selector: options.field_selector.clone(),
                    transform: None,
                    sync_period: options.sync_period,
                },
            );
        }
        self.by_object.insert(
            TypeId::of::<K>(),
            Arc::new(options) as Arc<dyn Any + Send + Sync>,
        );
        self
    }

    fn of<K: 'static>(&self) -> Option<&ByObject<K>> {
        self.by_object
            .get(&TypeId::of::<K>())
            .and_then(|b| b.downcast_ref::<ByObject<K>>())
    }

    /// The namespaces and selectors of `K`: its own `ByObject`, else, for a metadata-only `K`,
    /// those of the typed kind it holds the metadata of.
    fn scope_of<K: Resource<DynamicType = ()> + 'static>(&self) -> Option<Scoping<'_>> {
        if let Some(b) = self.of::<K>() {
            return Some(Scoping {
                namespaces: b.namespaces.as_deref(),
                label_selector: b.label_selector.as_deref(),
                field_selector: b.field_selector.as_deref(),
                sync_period: b.sync_period,
            });
        }
        if !K::metadata_api() {
            return None;
        }
        let b = self
            .by_resource
            .get(&(K::group(&()).into_owned(), K::plural(&()).into_owned()))?;
        Some(Scoping {
            namespaces: b.namespaces.as_deref(),
            label_selector: b.label_selector.as_deref(),
            field_selector: b.field_selector.as_deref(),
            sync_period: b.sync_period,
        })
    }
}

/// The namespaces, selectors and sync period one type is cached with (from a `ByObject`).
#[derive(Clone, Copy)]
struct Scoping<'a> {
    namespaces: Option<&'a [String]>,
    label_selector: Option<&'a str>,
    field_selector: Option<&'a str>,
    sync_period: Option<Duration>,
}

/// The cache settings of one type (controller-runtime `cache.ByObject`); each unset one comes
/// from [`InformerOptions`]' defaults.
#[must_use]
pub struct ByObject<K> {
    namespaces: Option<Vec<String>>,
    label_selector: Option<String>,
    field_selector: Option<String>,
    transform: Option<ObjectTransform<K>>,
    sync_period: Option<Duration>,
}

impl<K> Default for ByObject<K> {
    fn default() -> Self {
        Self {
            namespaces: None,
            label_selector: None,
            field_selector: None,
            transform: None,
            sync_period: None,
        }
    }
}

impl<K> Clone for ByObject<K> {
    fn clone(&self) -> Self {
        Self {
            namespaces: self.namespaces.clone(),
            label_selector: self.label_selector.clone(),
            field_selector: self.field_selector.clone(),
            transform: self.transform.clone(),
            sync_period: self.sync_period,
        }
    }
}

impl<K> Debug for ByObject<K> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ByObject")
            .field("namespaces", &self.namespaces)
            .field("label_selector", &self.label_selector)
            .field("field_selector", &self.field_selector)
            .field("transform", &self.transform.is_some())
            .field("sync_period", &self.sync_period)
            .finish()
    }
}

impl<K> ByObject<K> {
    /// Settings that take every default.
    pub fn new() -> Self {
        Self::default()
    }

    /// The namespaces `K` is cached from (empty: all), instead of the default ones. Ignored for
    /// a cluster-scoped `K`.
    pub fn namespaces<S: Into<String>>(mut self, namespaces: impl IntoIterator<Item = S>) -> Self {
        self.namespaces = Some(namespaces.into_iter().map(Into::into).collect());
        self
    }

    /// Only objects of `K` matching this label selector are cached.
    pub fn label_selector(mut self, selector: impl Into<String>) -> Self {
        self.label_selector = Some(selector.into());
        self
    }

    /// Only objects of `K` matching this field selector are cached.
    pub fn field_selector(mut self, selector: impl Into<String>) -> Self {
        self.field_selector = Some(selector.into());
        self
    }

    /// Changes each object of `K` before it is cached, instead of the default transform.
    pub fn transform(mut self, f: impl Fn(K) -> K + Send + Sync + 'static) -> Self {
        self.transform = Some(Arc::new(f));
        self
    }

    /// How often the informers of `K` replay their cache to the controllers' handlers, instead
    /// of the manager's [`sync_period`](crate::Options::sync_period) (controller-runtime's
    /// `ByObject.SyncPeriod`; zero: never). As there, it replays the cache as updates whose old
    /// and new objects are the same (queued at low priority, refused by predicates that look
    /// for a change); nothing is read from the API server. Set before the informers of `K` are
    /// made (the manager makes them when a controller or a reader first asks).
    pub fn sync_period(mut self, period: Duration) -> Self {
        self.sync_period = Some(period);
        self
    }
}

mod sealed {
    pub trait Sealed {}
    impl Sealed for k8s_openapi::NamespaceResourceScope {}
    impl Sealed for k8s_openapi::ClusterResourceScope {}
}

/// The scope of a type the manager caches: namespaced (cached per namespace when the cache is
/// limited to namespaces) or cluster-scoped. Implemented for k8s-openapi's two scopes, which
/// every generated type and every `#[derive(CustomResource)]` type has.
pub trait InformerScope: sealed::Sealed + Send + Sync + 'static {
    /// Whether objects of this scope live in namespaces.
    const NAMESPACED: bool;

    /// The factory's informer of `K` in `namespace` (`None`: all namespaces).
    #[doc(hidden)]
    fn informer<K>(
        factory: &SharedInformerFactory,
        namespace: Option<&str>,
    ) -> SharedIndexInformer<K>
    where
        K: Resource<DynamicType = (), Scope = Self>
            + Clone
            + DeserializeOwned
            + Debug
            + Send
            + Sync
            + 'static;
}

impl InformerScope for NamespaceResourceScope {
    const NAMESPACED: bool = true;

    fn informer<K>(
        factory: &SharedInformerFactory,
        namespace: Option<&str>,
    ) -> SharedIndexInformer<K>
    where
        K: Resource<DynamicType = (), Scope = Self>
            + Clone
            + DeserializeOwned
            + Debug
            + Send
            + Sync
            + 'static,
    {
        match namespace {
            Some(ns) => factory.namespaced_informer::<K>(ns),
            None => factory.informer::<K>(),
        }
    }
}

impl InformerScope for ClusterResourceScope {
    const NAMESPACED: bool = false;

    fn informer<K>(factory: &SharedInformerFactory, _: Option<&str>) -> SharedIndexInformer<K>
    where
        K: Resource<DynamicType = (), Scope = Self>
            + Clone
            + DeserializeOwned
            + Debug
            + Send
            + Sync
            + 'static,
    {
        factory.informer::<K>()
    }
}

/// Selectors of a factory: (label, field).
type Selectors = (Option<String>, Option<String>);

struct State {
    /// One factory per pair of selectors; the defaults' is `default`.
    factories: HashMap<Selectors, SharedInformerFactory>,
    /// Set by the manager's caches step: from then on a factory starts the informers asked of it
    /// at once.
    started: bool,
}

/// The manager's informers, made as its [`InformerOptions`] say (controller-runtime's
/// `cache.Informers` of the manager's cache): for each type, one informer per namespace the
/// options name (or one across the cluster, for a cluster-scoped type or a manager without
/// namespaces), with the type's label and field selectors and transform. Handed out by
/// [`Manager::informer_factory`](crate::Manager::informer_factory); the builder's watches and
/// [`Manager::informer_reader`](crate::Manager::informer_reader) share them.
///
/// Nothing here lists or watches outside what the options allow: a manager limited to
/// namespaces never lists across the cluster, so it runs with namespace-scoped RBAC.
///
/// ```no_run
/// # async fn doc(client: kube::Client) -> Result<(), Box<dyn std::error::Error>> {
/// use k8s_openapi::api::core::v1::Pod;
/// use kcr_controller_manager::manager::InformerOptions;
/// use kcr_controller_manager::{Manager, Options};
/// use kcr_informer::ResourceEventHandlerFuncs;
///
/// let manager = Manager::new(
///     client,
///     Options::default().informers(InformerOptions::default().default_namespaces(["team-a", "team-b"])),
/// )?;
/// // One informer in team-a, one in team-b: none across the cluster.
/// for pods in manager.informer_factory().informers::<Pod>() {
///     pods.add_event_handler(ResourceEventHandlerFuncs::new().add_func(|pod: &std::sync::Arc<Pod>, _| {
///         println!("pod {:?}", pod.metadata.name);
///     }))?;
/// }
/// # Ok(())
/// # }
/// ```
pub struct Informers {
    client: Client,
    sync_period: Duration,
    options: InformerOptions,
    default: SharedInformerFactory,
    // A parking_lot lock, never held across `.await`.
    state: Mutex<State>,
}

impl Debug for Informers {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let factories: Vec<SharedInformerFactory> =
            self.state.lock().factories.values().cloned().collect();
        f.debug_struct("Informers")
            .field("options", &self.options)
            .field("factories", &factories)
            .finish_non_exhaustive()
    }
}

impl Informers {
    pub(crate) fn new(client: Client, sync_period: Duration, options: InformerOptions) -> Self {
        let default_selectors = (
            options.default_label_selector.clone(),
            options.default_field_selector.clone(),
        );
        let default = factory(
            &client,
            sync_period,
            &default_selectors,
            options.wire_format,
        );
        Self {
            state: Mutex::new(State {
                factories: HashMap::from([(default_selectors, default.clone())]),
                started: false,
            }),
            client,
            sync_period,
            options,
            default,
        }
    }

    /// The factory with the default selectors.
    pub(crate) fn default_factory(&self) -> &SharedInformerFactory {
        &self.default
    }

    /// The informers caching `K`: one per namespace when `K` is namespaced and the options
    /// name namespaces, else one, with the selectors of `K` (its [`ByObject`], else the
    /// defaults). A transform the options give is set on an informer not started yet. Made on
    /// first use and shared after; informers made after the manager's caches step start at once.
    pub fn informers<K>(&self) -> Vec<SharedIndexInformer<K>>
    where
        K: Resource<DynamicType = ()> + Clone + DeserializeOwned + Debug + Send + Sync + 'static,
        K::Scope: InformerScope,
    {
        let by = self.options.scope_of::<K>();
        let namespaces: &[String] = if <K::Scope as InformerScope>::NAMESPACED {
            by.and_then(|b| b.namespaces)
                .unwrap_or(&self.options.default_namespaces)
        } else {
            &[]
        };
        let mut state = self.state.lock();
        let factory = self.factory_for::<K>(&mut state);
        if let Some(period) = by.and_then(|b| b.sync_period) {
            // Read by the factory when it makes an informer of `K`.
            let _ = factory
                .clone()
                .resync_for(&kube::api::ApiResource::erase::<K>(&()), period);
        }
        let informers: Vec<SharedIndexInformer<K>> = if namespaces.is_empty() {
            vec![<K::Scope as InformerScope>::informer::<K>(&factory, None)]
        } else {
            namespaces
                .iter()
                .map(|ns| <K::Scope as InformerScope>::informer::<K>(&factory, Some(ns)))
                .collect()
        };
        let transform = self.transform_of::<K>();
        for informer in informers.iter().filter(|i| !i.is_started()) {
            if let Some(transform) = transform.clone() {
                let set = informer.set_transform(move |obj: Arc<K>| {
                    Ok(Arc::new(transform(Arc::unwrap_or_clone(obj))))
                });
                if let Err(e) = set {
                    tracing::debug!(informer = %informer.informer_name(), error = %e, "transform not set");
                }
            }
        }
        // After the caches step, a new informer starts now (with a runtime to run it on).
        if state.started && tokio::runtime::Handle::try_current().is_ok() {
            factory.start();
        }
        informers
    }

    /// The factory for `K`'s label and field selectors (its own, else the defaults), made on
    /// first use.
    fn factory_for<K: Resource<DynamicType = ()> + 'static>(
        &self,
        state: &mut State,
    ) -> SharedInformerFactory {
        let by = self.options.scope_of::<K>();
        let selectors = (
            by.as_ref()
                .and_then(|b| b.label_selector.map(str::to_owned))
                .or_else(|| self.options.default_label_selector.clone()),
            by.as_ref()
                .and_then(|b| b.field_selector.map(str::to_owned))
                .or_else(|| self.options.default_field_selector.clone()),
        );
        state
            .factories
            .entry(selectors)
            .or_insert_with_key(|s| {
                factory(&self.client, self.sync_period, s, self.options.wire_format)
            })
            .clone()
    }

    /// Makes the informers of `K` made from now on list and watch with `selector` (a sharded
    /// controller's share, see [`sharding`](crate::sharding)); false, changing nothing, when
    /// informers of `K` exist already.
    pub(crate) fn set_shard_selector_for<K>(&self, selector: kcr_informer::ShardSelector) -> bool
    where
        K: Resource<DynamicType = ()> + Clone + DeserializeOwned + Debug + Send + Sync + 'static,
        K::Scope: InformerScope,
    {
        let mut state = self.state.lock();
        let factory = self.factory_for::<K>(&mut state);
        factory.set_shard_selector_for(&kube::api::ApiResource::erase::<K>(&()), selector)
    }

    /// Reads the metadata of `K` from the metadata-only informers of `K` (`PartialObjectMeta<K>`,
    /// see [`Manager::metadata_reader`](crate::Manager::metadata_reader)).
    pub fn metadata_reader<K>(&self) -> InformerReader<PartialObjectMeta<K>>
    where
        K: Resource<DynamicType = ()> + Clone + Debug + Send + Sync + 'static,
        K::Scope: InformerScope,
    {
        self.reader::<PartialObjectMeta<K>>()
    }

    /// Reads `K` from the informers of [`informers`](Self::informers).
    pub fn reader<K>(&self) -> InformerReader<K>
    where
        K: Resource<DynamicType = ()> + Clone + DeserializeOwned + Debug + Send + Sync + 'static,
        K::Scope: InformerScope,
    {
        InformerReader::new(self.informers::<K>())
    }

    /// The namespaces [`informers`](Self::informers) makes one informer each for, in its
    /// order (empty: one informer for every namespace, or a cluster-scoped `K`).
    pub(crate) fn cached_namespaces<K>(&self) -> Vec<String>
    where
        K: Resource + 'static,
        K::Scope: InformerScope,
    {
        if !<K::Scope as InformerScope>::NAMESPACED {
            return Vec::new();
        }
        self.options
            .of::<K>()
            .and_then(|b| b.namespaces.clone())
            .unwrap_or_else(|| self.options.default_namespaces.clone())
    }

    /// The label selector the informers of `K` list and watch with, if any.
    pub(crate) fn label_selector_of<K: 'static>(&self) -> Option<String> {
        self.options
            .of::<K>()
            .and_then(|b| b.label_selector.clone())
            .or_else(|| self.options.default_label_selector.clone())
    }

    fn transform_of<K>(&self) -> Option<ObjectTransform<K>>
    where
        K: Resource + 'static,
    {
        if let Some(t) = self.options.of::<K>().and_then(|b| b.transform.clone()) {
            return Some(t);
        }
        let meta = self.options.default_transform.clone()?;
        Some(Arc::new(move |mut obj: K| {
            meta(obj.meta_mut());
            obj
        }))
    }

    /// Starts every factory's informers (the manager's caches step) and returns the factories,
    /// to wait for their sync; informers asked for later start at once.
    pub(crate) fn start(&self) -> Vec<SharedInformerFactory> {
        let mut state = self.state.lock();
        state.started = true;
        let factories: Vec<SharedInformerFactory> = state.factories.values().cloned().collect();
        for f in &factories {
            f.start();
        }
        factories
    }

    /// Every factory, to shut them down.
    pub(crate) fn factories(&self) -> Vec<SharedInformerFactory> {
        self.state.lock().factories.values().cloned().collect()
    }
}

fn factory(
    client: &Client,
    sync_period: Duration,
    selectors: &Selectors,
    wire_format: WireFormat,
) -> SharedInformerFactory {
    let mut factory =
        SharedInformerFactory::new(client.clone(), sync_period).wire_format(wire_format);
    if let Some(label) = &selectors.0 {
        factory = factory.label_selector(label.clone());
    }
    if let Some(field) = &selectors.1 {
        factory = factory.field_selector(field.clone());
    }
    factory
}

/// Reads one type from the manager's cache, across the namespaces it caches (what
/// controller-runtime's cache-backed client reads). Made by
/// [`Manager::informer_reader`](crate::Manager::informer_reader).
pub struct InformerReader<K> {
    informers: Vec<SharedIndexInformer<K>>,
}

impl<K> Clone for InformerReader<K> {
    fn clone(&self) -> Self {
        Self {
            informers: self.informers.clone(),
        }
    }
}

impl<K> Debug for InformerReader<K>
where
    K: Resource + Clone + Send + Sync + 'static,
{
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let names: Vec<String> = self.informers.iter().map(|i| i.informer_name()).collect();
        f.debug_struct("InformerReader")
            .field("informers", &names)
            .finish()
    }
}

impl<K> InformerReader<K>
where
    K: Resource + Clone + Send + Sync + 'static,
{
    /// The cached object `name` in `namespace` (`None` for a cluster-scoped object).
    pub fn get(&self, namespace: Option<&str>, name: &str) -> Option<Arc<K>> {
        let key = match namespace {
            Some(ns) => format!("{ns}/{name}"),
            None => name.to_owned(),
        };
        self.informers
            .iter()
            .find_map(|i| i.get_indexer().get_by_key(&key))
    }

    /// Every cached object.
    pub fn list(&self) -> Vec<Arc<K>> {
        let mut out = Vec::new();
        for informer in &self.informers {
            out.extend(informer.get_indexer().list().iter().cloned());
        }
        out
    }

    /// Whether every informer behind the reader has synced.
    pub fn has_synced(&self) -> bool {
        self.informers.iter().all(SharedIndexInformer::has_synced)
    }

    /// The informers behind the reader (one per cached namespace, or one).
    pub fn informers(&self) -> &[SharedIndexInformer<K>] {
        &self.informers
    }
}

impl<K> InformerReader<K> {
    pub(crate) fn new(informers: Vec<SharedIndexInformer<K>>) -> Self {
        Self { informers }
    }
}
