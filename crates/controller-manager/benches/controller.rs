//! Reconcile dispatch throughput: kcr's `Controller` beside kube-runtime's
//! `applier` (the engine of its `Controller`), on the same 10,000 objects in
//! the same run.
//!
//! What is measured, per iteration, for 1 and 4 workers:
//!
//! - both sides start from a primed in-memory cache holding the same 10,000
//!   `ConfigMap`s (`Arc`s shared by both caches): kcr-cache's `IndexedStore` for
//!   kcr, kube-runtime's reflector `Store` for kube-runtime;
//! - the timer starts, 10,000 requests (one per object, built beforehand)
//!   are handed in — kcr: `controller.queue().add(request)` (what an event
//!   handler does); kube-runtime: a stream of the 10,000 `ObjectRef`s fed to
//!   `applier` (kept open afterwards, since `applier` drops its queue when
//!   its input ends);
//! - each reconcile looks its object up in its cache and returns "done"
//!   (kcr: `IndexedStore::get_by_key`, `Action::done()`; kube-runtime: the
//!   applier's own store lookup, `Action::await_change()`);
//! - the timer stops when 10,000 reconciles have returned.
//!
//! kcr's path includes its priority work queue (dedup, processing set,
//! rate-limiter forget, `done`), the per-reconcile tracing span (no
//! subscriber), panic catching and the controller and workqueue Prometheus
//! metrics; kube-runtime's includes its scheduler, runner and store lookup.
//! Both run on one multi-threaded tokio runtime with 2 worker threads;
//! kcr's controller runs on a `Manager` with no leader election, no HTTP
//! servers and no watches.

use std::convert::Infallible;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use futures::{StreamExt, stream};
use k8s_openapi::api::core::v1::ConfigMap;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kcr_cache::IndexedStore;
use kcr_controller_manager::controller::reconciler_fn;
use kcr_controller_manager::{Action, Controller, Request};
use kcr_controller_manager::{BoxError, Manager, Options};
use kube_runtime::reflector::{self, ObjectRef};
use kube_runtime::watcher;
use tokio::sync::Notify;

const OBJECTS: usize = 10_000;

fn objects() -> Vec<Arc<ConfigMap>> {
    (0..OBJECTS)
        .map(|i| {
            Arc::new(ConfigMap {
                metadata: ObjectMeta {
                    namespace: Some(format!("ns-{}", i % 10)),
                    name: Some(format!("cm-{i}")),
                    resource_version: Some(i.to_string()),
                    ..ObjectMeta::default()
                },
                data: Some([("key".to_owned(), "value".to_owned())].into()),
                ..ConfigMap::default()
            })
        })
        .collect()
}

#[derive(Debug, thiserror::Error)]
#[error("never")]
struct Never;

/// Counts reconciles and wakes the bench when the target is reached.
#[derive(Default)]
struct Counter {
    done: AtomicUsize,
    notify: Notify,
}

impl Counter {
    fn hit(&self) {
        if self.done.fetch_add(1, Ordering::Relaxed) + 1 == OBJECTS {
            self.notify.notify_one();
        }
    }
}

fn dispatch(c: &mut Criterion) {
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("no tokio runtime: {e}");
            return;
        }
    };
    let objects = objects();

    // kcr: a primed kcr-cache.
    let cache = Arc::new(IndexedStore::<ConfigMap>::namespace_indexed());
    for obj in &objects {
        if let Err(e) = cache.add(obj.clone()) {
            eprintln!("cache refused an object: {e}");
            return;
        }
    }
    // kube-runtime: a primed reflector store.
    let (store, mut writer) = reflector::store::<ConfigMap>();
    writer.apply_watcher_event(&watcher::Event::Init);
    for obj in &objects {
        writer.apply_watcher_event(&watcher::Event::InitApply((**obj).clone()));
    }
    writer.apply_watcher_event(&watcher::Event::InitDone);

    // kcr's manager (no API calls are made: no leader election, no watches).
    let client = {
        let _guard = runtime.enter();
        let config = kube::Config::new("http://127.0.0.1:9".parse().expect("a valid URL"));
        kube::Client::try_from(config).expect("a client for a local URL")
    };
    let manager = Manager::new(
        client,
        Options::default()
            .metrics_bind_address("0")
            .health_probe_bind_address("0"),
    )
    .expect("a manager without leader election");
    let mut controllers = Vec::new();
    for workers in [1usize, 4] {
        let counter = Arc::new(Counter::default());
        let (cache, hits) = (cache.clone(), counter.clone());
        let controller = Controller::builder(&manager, format!("bench-{workers}"))
            .max_concurrent_reconciles(workers)
            .build(reconciler_fn(move |req: Request| {
                let key = match &req.namespace {
                    Some(ns) => format!("{ns}/{}", req.name),
                    None => req.name.to_string(),
                };
                let found = cache.get_by_key(&key).is_some();
                hits.hit();
                async move {
                    if found {
                        Ok::<_, BoxError>(Action::done())
                    } else {
                        Err("missing".into())
                    }
                }
            }))
            .expect("a controller");
        controllers.push((workers, controller, counter));
    }
    let (stop_tx, stop_rx) = tokio::sync::oneshot::channel::<()>();
    let running = {
        let manager = manager.clone();
        runtime.spawn(async move {
            manager
                .start(async move {
                    let _ = stop_rx.await;
                })
                .await
        })
    };

    let requests: Vec<Request> = objects
        .iter()
        .filter_map(|o| Request::from_object(&**o))
        .collect();
    let refs: Vec<ObjectRef<ConfigMap>> =
        objects.iter().map(|o| ObjectRef::from_obj(&**o)).collect();

    let mut group = c.benchmark_group("reconcile_dispatch_10k");
    group.throughput(Throughput::Elements(OBJECTS as u64));
    group.sample_size(10);
    group.warm_up_time(Duration::from_secs(1));
    group.measurement_time(Duration::from_secs(4));

    for (workers, controller, counter) in &controllers {
        group.bench_with_input(BenchmarkId::new("kcr", workers), workers, |b, _| {
            b.to_async(&runtime).iter_custom(|iters| {
                let (controller, counter, requests) =
                    (controller.clone(), counter.clone(), requests.clone());
                async move {
                    let mut total = Duration::ZERO;
                    for _ in 0..iters {
                        let batch = requests.clone();
                        counter.done.store(0, Ordering::SeqCst);
                        // Speed is measured only here, in a benchmark.
                        #[allow(clippy::disallowed_methods)]
                        let started = std::time::Instant::now();
                        for req in batch {
                            controller.queue().add(req);
                        }
                        counter.notify.notified().await;
                        total += started.elapsed();
                    }
                    total
                }
            });
        });
    }

    for workers in [1u16, 4] {
        group.bench_with_input(
            BenchmarkId::new("kube-runtime", workers),
            &workers,
            |b, &workers| {
                b.to_async(&runtime).iter_custom(|iters| {
                    let (store, refs) = (store.clone(), refs.clone());
                    async move {
                        let mut total = Duration::ZERO;
                        for _ in 0..iters {
                            let batch = refs.clone();
                            #[allow(clippy::disallowed_methods)]
                            let started = std::time::Instant::now();
                            let input = stream::iter(batch.into_iter().map(Ok::<_, Infallible>))
                                .chain(stream::pending());
                            let applier = kube_runtime::applier(
                                |_obj: Arc<ConfigMap>, _ctx: Arc<()>| {
                                    futures::future::ready(Ok::<_, Never>(
                                        kube_runtime::controller::Action::await_change(),
                                    ))
                                },
                                |_obj, _err: &Never, _ctx| {
                                    kube_runtime::controller::Action::await_change()
                                },
                                Arc::new(()),
                                store.clone(),
                                input,
                                kube_runtime::Config::default().concurrency(workers),
                            );
                            let mut applier = std::pin::pin!(applier);
                            let mut reconciled = 0;
                            while reconciled < OBJECTS {
                                match applier.next().await {
                                    Some(Ok(_)) => reconciled += 1,
                                    Some(Err(e)) => panic!("applier failed: {e}"),
                                    None => panic!("applier ended after {reconciled} reconciles"),
                                }
                            }
                            total += started.elapsed();
                        }
                        total
                    }
                });
            },
        );
    }
    group.finish();

    let _ = stop_tx.send(());
    let _ = runtime.block_on(running);
}

criterion_group!(benches, dispatch);
criterion_main!(benches);
