//! kcr: Kubernetes client-go's controller machinery in Rust.
//!
//! kcr is for people who write Kubernetes controllers and operators in Rust
//! and want client-go's proven semantics: the work queue with its rate
//! limiters, the cache (ThreadSafeStore, indexers, DeltaFIFO), the reflector
//! (List & Watch), the shared informer, and controller-runtime's manager
//! (leader election, probes, metrics, controllers and reconcilers), on top of
//! `kube-client` and `k8s-openapi`.
//!
//! This crate re-exports each layer as a module, behind a feature of the
//! same name (all on by default). Depend on `kcr` for the whole stack, or on
//! a single layer crate (`kcr-workqueue`, ...) for one part.
//!
//! | module | crate | what it holds | client-go / controller-runtime |
//! | --- | --- | --- | --- |
//! | [`workqueue`] | `kcr-workqueue` | `Queue`, `DelayingQueue`, `RateLimitingQueue`, `PriorityQueue`, rate limiters | `util/workqueue`, controller-runtime `priorityqueue` |
//! | [`cache`] | `kcr-cache` | key functions, `ThreadSafeStore`, `IndexedStore` (`Store` + `Indexer`), `DeltaFifo`, listers, label selectors | `tools/cache` (store, index, delta_fifo, listers) |
//! | [`reflector`] | `kcr-reflector` | `ListerWatcher` (for `kube::Api`), `Reflector`, backoff | `tools/cache/reflector.go`, `listwatch.go` |
//! | [`informer`] | `kcr-informer` | `SharedIndexInformer`, event handlers, `SharedInformerFactory` | `tools/cache/shared_informer.go`, `informers` |
//! | [`controller_manager`] | `kcr-controller-manager` | `Manager`, `Runnable`, leader election, `/healthz` `/readyz`, `/metrics`, `Controller` + `Reconciler`, `EventRecorder` | controller-runtime `manager`, `builder`, `reconcile`; `tools/leaderelection`, `tools/record` |
//! | [`metrics`] | `kcr-metrics` | the Prometheus registry and every metric family, with client-go's names | `workqueue` / `reflector` metrics, controller-runtime `metrics` |
//!
//! `kcr-testenv` (an embedded API server for tests, and the `kcr-apiserver`
//! binary) is a dev-dependency, not part of this facade; the examples below
//! use it as their cluster.
//!
//! A library that depends on kcr does not choose a Kubernetes version:
//! binaries and tests enable one of `k8s-openapi`'s version features
//! (`k8s-openapi = { version = "0.29", features = ["latest"] }`; `v1_33` to `v1_37`).
//!
//! What a controller needs besides the layers is re-exported: [`kube`], [`k8s_openapi`],
//! [`async_trait`](macro@async_trait), [`CancellationToken`], and a [`prelude`]. The README's
//! "Getting started" section goes from `cargo new` to a running controller.
//!
//! Logs go through `tracing`: a binary installs a subscriber
//! (`tracing_subscriber::fmt().with_env_filter(EnvFilter::from_default_env()).init()`), and
//! `RUST_LOG` chooses what is printed (`RUST_LOG=info`, or `RUST_LOG=kcr_controller_manager=debug`
//! for one layer).
//!
//! The runnable programs are in the repository's `examples/`:
//! `cargo run --example controller-manager` runs kubernetes/sample-controller's
//! Foo controller under the manager, with no cluster needed.
#![cfg_attr(
    feature = "controller_manager",
    doc = r#"
# A controller

The [`controller_manager`] layer is what most operators need: a `Manager`
that owns the shared informers, the probes, the metrics server and leader
election, and controllers that call a reconciler for every object that
changes.

```
use k8s_openapi::api::core::v1::ConfigMap;
use kcr::controller_manager::controller::reconciler_fn;
use kcr::controller_manager::{Action, Controller, Request};
use kcr::controller_manager::{BoxError, Manager, Options};
use kube::api::{Api, PostParams};

# #[tokio::main(flavor = "current_thread")]
# async fn main() -> Result<(), Box<dyn std::error::Error>> {
# let env = kcr_testenv::TestEnv::start().await?;
# let client = env.client();
let manager = Manager::new(client.clone(), Options::default().metrics_bind_address("0"))?;
let (seen_tx, mut seen_rx) = tokio::sync::mpsc::unbounded_channel();
Controller::builder(&manager, "config-maps")
    .for_::<ConfigMap>()
    .build(reconciler_fn(move |req: Request| {
        let _ = seen_tx.send(req);
        async { Ok::<_, BoxError>(Action::done()) }
    }))?;

let (stop_tx, stop_rx) = tokio::sync::oneshot::channel::<()>();
let running = tokio::spawn({
    let manager = manager.clone();
    async move { manager.start(async { let _ = stop_rx.await; }).await }
});
let mut cm = ConfigMap::default();
cm.metadata.name = Some("settings".into());
Api::<ConfigMap>::namespaced(client, "default").create(&PostParams::default(), &cm).await?;
assert_eq!(seen_rx.recv().await, Some(Request::namespaced("default", "settings")));
let _ = stop_tx.send(()); // a real operator stops on SIGTERM
running.await??;
# Ok(())
# }
```
"#
)]
#![cfg_attr(
    feature = "workqueue",
    doc = r#"
# The work queue

Handlers add keys; workers `get`, process and call `done`. A key added
several times before a worker gets it is processed once, and never by two
workers at once.

```
use kcr::workqueue::Queue;

# #[tokio::main(flavor = "current_thread")]
# async fn main() {
let queue = Queue::new();
queue.add("default/a".to_string());
queue.add("default/a".to_string()); // deduplicated
queue.add("default/b".to_string());
assert_eq!(queue.len(), 2);

let key = queue.get().await.expect("queued");
assert_eq!(key, "default/a");
queue.done(&key);
# }
```
"#
)]
#![cfg_attr(
    feature = "cache",
    doc = r#"
# The cache

An indexed, thread-safe store of `Arc<K>` with listers, as an informer keeps
it.

```
use std::sync::Arc;
use k8s_openapi::api::core::v1::ConfigMap;
use kcr::cache::{IndexedStore, Lister, Selector};

# fn main() -> kcr::cache::Result<()> {
let cache = Arc::new(IndexedStore::<ConfigMap>::namespace_indexed());
let mut cm = ConfigMap::default();
cm.metadata.namespace = Some("default".into());
cm.metadata.name = Some("settings".into());
cache.add(Arc::new(cm))?;

let lister = Lister::new(cache.clone());
assert!(lister.namespaced("default").get("settings").is_some());
assert_eq!(lister.namespaced("default").list(&Selector::everything()).len(), 1);
# Ok(())
# }
```
"#
)]
#![cfg_attr(
    feature = "reflector",
    doc = r#"
# The reflector

List & Watch from a `kube::Api` into a store, with client-go's relist,
bookmark and backoff rules.

```
use std::sync::Arc;
use std::time::Duration;
use k8s_openapi::api::core::v1::ConfigMap;
use kcr::cache::IndexedStore;
use kcr::reflector::Reflector;
use kube::api::{Api, PostParams};
use tokio_util::sync::CancellationToken;

# #[tokio::main(flavor = "current_thread")]
# async fn main() -> Result<(), Box<dyn std::error::Error>> {
# let env = kcr_testenv::TestEnv::start().await?;
let api: Api<ConfigMap> = Api::namespaced(env.client(), "default");
let mut cm = ConfigMap::default();
cm.metadata.name = Some("settings".into());
api.create(&PostParams::default(), &cm).await?;

let cache = Arc::new(IndexedStore::<ConfigMap>::default());
let reflector = Arc::new(Reflector::new(api, cache.clone()));
let cancel = CancellationToken::new();
let task = tokio::spawn({
    let (reflector, cancel) = (reflector.clone(), cancel.clone());
    async move { reflector.run(cancel).await }
});
while cache.get_by_key("default/settings").is_none() {
    tokio::time::sleep(Duration::from_millis(5)).await;
}
cancel.cancel();
let _ = task.await?;
# Ok(())
# }
```
"#
)]
#![cfg_attr(
    feature = "informer",
    doc = r#"
# The shared informer

One List & Watch per resource, an indexed cache, and any number of event
handlers.

```
use std::sync::Arc;
use std::time::Duration;
use k8s_openapi::api::core::v1::ConfigMap;
use kcr::informer::{ResourceEventHandlerFuncs, SharedInformerFactory};
use tokio_util::sync::CancellationToken;

# #[tokio::main(flavor = "current_thread")]
# async fn main() -> Result<(), Box<dyn std::error::Error>> {
# let env = kcr_testenv::TestEnv::start().await?;
let factory = SharedInformerFactory::new(env.client(), Duration::ZERO);
let informer = factory.informer::<ConfigMap>();
let registration = informer.add_event_handler(ResourceEventHandlerFuncs::new().add_func(
    |cm: &Arc<ConfigMap>, _in_initial_list| println!("added {:?}", cm.metadata.name),
))?;
factory.start();
assert!(kcr::informer::wait_for_cache_sync(&CancellationToken::new(), &[&informer, &registration]).await);
let lister = informer.lister();
assert!(lister.namespaced("default").get("missing").is_none());
factory.shutdown().await;
# Ok(())
# }
```
"#
)]
#![cfg_attr(
    feature = "metrics",
    doc = r#"
# Metrics

Every layer records client-go's and controller-runtime's metrics into one
registry, which the manager serves at `/metrics`.

```
# fn main() -> Result<(), Box<dyn std::error::Error>> {
let text = kcr::metrics::encode_text(kcr::metrics::registry())?;
# let _ = text;
# Ok(())
# }
```
"#
)]

#[cfg(feature = "cache")]
#[doc(inline)]
pub use kcr_cache as cache;
#[cfg(feature = "controller_manager")]
#[doc(inline)]
pub use kcr_controller_manager as controller_manager;
#[cfg(feature = "informer")]
#[doc(inline)]
pub use kcr_informer as informer;
#[cfg(feature = "metrics")]
#[doc(inline)]
pub use kcr_metrics as metrics;
#[cfg(feature = "reflector")]
#[doc(inline)]
pub use kcr_reflector as reflector;
#[cfg(feature = "workqueue")]
#[doc(inline)]
pub use kcr_workqueue as workqueue;

/// kube, as kcr uses it (`kcr::kube::Client`, `kcr::kube::Api`, ...): no separate dependency
/// needed, and never a second version of it.
pub use kube;

/// k8s-openapi, as kcr uses it, without a Kubernetes version: the binary (or the tests of a
/// library) chooses one in its own `k8s-openapi` dependency, as in
/// `k8s-openapi = { version = "0.29", features = ["latest"] }`.
pub use k8s_openapi;

/// The attribute a [`Reconciler`](controller_manager::Reconciler) implementation needs:
/// `#[kcr::async_trait] impl Reconciler for MyReconciler { ... }`.
pub use async_trait::async_trait;

/// The cancellation token runnables and reflectors stop on (tokio-util's).
pub use tokio_util::sync::CancellationToken;

/// What a controller needs, in one import: `use kcr::prelude::*;`.
///
/// The manager and its options, the controller builder, the reconciler trait with its request
/// and action, the informer options and reader, the cached client (read-your-own-writes) and its
/// read options, the `async_trait` attribute, the cancellation token, and kube's `Api`,
/// `Client`, `Resource` and `ResourceExt`.
pub mod prelude {
    pub use crate::CancellationToken;
    pub use crate::async_trait;
    #[cfg(feature = "controller_manager")]
    pub use kcr_controller_manager::{
        Action, BoxError, Controller, Manager, Options, Reconciler, Request,
        client::{CachedClient, ReadOptions},
        manager::{ByObject, InformerOptions, InformerReader},
    };
    pub use kube::{Api, Client, Resource, ResourceExt};
}
