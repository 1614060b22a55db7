//! Sharded controllers: reconcile throughput with 1, 2 and 4 replicas of one controller on
//! 10,000 ConfigMaps, with a reconciler bound by I/O (it awaits 5 ms per object, 20 workers per
//! replica), against kcr-testenv with `ShardedListAndWatch` on, in one process. One iteration
//! queues every object once (each replica queues the ones its member owns, as its handlers
//! would) and ends when all 10,000 are reconciled; the 1-replica group is the baseline of the
//! same run. Then, per replica count, the bytes a replica's cache takes in server-side mode
//! (live bytes once the replicas have synced, divided by the replicas), and the peak of live
//! bytes while they start and sync, per replica (sampled every millisecond, counting the
//! in-process server's response buffers too). Run with
//! `cargo bench -p kcr-controller-manager --bench sharding`.

#![allow(missing_docs)]

use std::alloc::System;
use std::collections::BTreeMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicI64, AtomicUsize, Ordering};
use std::time::Duration;

use tokio::time::Instant;

use criterion::{
    BenchmarkId, Criterion, SamplingMode, Throughput, criterion_group, criterion_main,
};
use futures::StreamExt;
use k8s_openapi::api::core::v1::ConfigMap;
use kcr_controller_manager::controller::reconciler_fn;
use kcr_controller_manager::manager::InformerOptions;
use kcr_controller_manager::sharding::{Config, Mode, RangeSet, ShardMember};
use kcr_controller_manager::{Action, Controller, Request};
use kcr_controller_manager::{BoxError, Manager, Options};
use kcr_testenv::TestEnv;
use kube::api::{ObjectMeta, PostParams};
use kube::{Api, Client};
use stats_alloc::{INSTRUMENTED_SYSTEM, Region, StatsAlloc};

#[global_allocator]
static GLOBAL: &StatsAlloc<System> = &INSTRUMENTED_SYSTEM;

const OBJECTS: usize = 10_000;
const WORK: Duration = Duration::from_millis(5);
const WORKERS: usize = 20;

struct Replica {
    member: ShardMember,
    manager: Manager,
    controller: Controller,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    task: tokio::task::JoinHandle<kcr_controller_manager::Result<()>>,
}

fn replica(client: &Client, who: &str, group: &str, done: &Arc<AtomicUsize>) -> Replica {
    let manager = Manager::new(
        client.clone(),
        Options::default().metrics_bind_address("0").informers(
            InformerOptions::default()
                .default_namespaces(["default"])
                .default_label_selector("bench=sharding"),
        ),
    )
    .expect("a manager");
    let member = ShardMember::new(
        client.clone(),
        Config::new(group, "default", who)
            .with_mode(Mode::ServerSide)
            .lease_duration(Duration::from_millis(1500))
            .renew_deadline(Duration::from_millis(1000))
            .retry_period(Duration::from_millis(200)),
    )
    .expect("a member");
    let done = done.clone();
    let controller = Controller::builder(&manager, format!("{group}-{who}"))
        .for_::<ConfigMap>()
        .max_concurrent_reconciles(WORKERS)
        .sharded(&member)
        .build(reconciler_fn(move |_req: Request| {
            let done = done.clone();
            async move {
                tokio::time::sleep(WORK).await;
                done.fetch_add(1, Ordering::SeqCst);
                Ok::<_, BoxError>(Action::done())
            }
        }))
        .expect("a controller");
    let (stop, rx) = tokio::sync::oneshot::channel::<()>();
    let m = manager.clone();
    let task = tokio::spawn(async move {
        m.start(async move {
            let _ = rx.await;
        })
        .await
    });
    Replica {
        member,
        manager,
        controller,
        stop: Some(stop),
        task,
    }
}

async fn create_objects(client: &Client) {
    let api: Api<ConfigMap> = Api::namespaced(client.clone(), "default");
    let data: BTreeMap<String, String> = (0..8)
        .map(|k| (format!("key-{k}"), "v".repeat(120)))
        .collect();
    futures::stream::iter(0..OBJECTS)
        .map(|i| {
            let api = api.clone();
            let data = data.clone();
            async move {
                let cm = ConfigMap {
                    metadata: ObjectMeta {
                        name: Some(format!("cm-{i:05}")),
                        labels: Some([("bench".to_owned(), "sharding".to_owned())].into()),
                        ..ObjectMeta::default()
                    },
                    data: Some(data),
                    ..ConfigMap::default()
                };
                api.create(&PostParams::default(), &cm)
                    .await
                    .expect("created");
            }
        })
        .buffer_unordered(32)
        .collect::<Vec<()>>()
        .await;
}

fn partition(members: &[&ShardMember]) -> bool {
    let mut union = RangeSet::new();
    for m in members {
        let owned = m.owned();
        if union.overlaps(&owned) {
            return false;
        }
        union = union.union(&owned);
    }
    union == RangeSet::full()
}

fn live() -> i64 {
    let s = GLOBAL.stats();
    s.bytes_allocated as i64 - s.bytes_deallocated as i64
}

/// Starts `n` replicas and waits until they split the space and every cache holds its share.
/// Returns them with the live bytes they added once synced, and the peak of live bytes over the
/// start (both since just before the start).
async fn start(
    client: &Client,
    n: usize,
    group: &str,
    done: &Arc<AtomicUsize>,
) -> (Vec<Replica>, i64, i64) {
    let base = live();
    let peak = Arc::new(AtomicI64::new(base));
    let sampling = Arc::new(AtomicBool::new(true));
    // A thread of its own samples the heap, whatever the runtime is busy with.
    let sampler = std::thread::spawn({
        let (peak, sampling) = (peak.clone(), sampling.clone());
        #[allow(clippy::disallowed_methods)]
        move || {
            while sampling.load(Ordering::SeqCst) {
                peak.fetch_max(live(), Ordering::SeqCst);
                std::thread::sleep(Duration::from_millis(1));
            }
        }
    });
    let region = Region::new(GLOBAL);
    let replicas: Vec<Replica> = (0..n)
        .map(|i| replica(client, &format!("r{i}"), group, done))
        .collect();
    let started = Instant::now();
    loop {
        let members: Vec<&ShardMember> = replicas.iter().map(|r| &r.member).collect();
        let cached: usize = replicas
            .iter()
            .map(|r| r.manager.informer_reader::<ConfigMap>().list().len())
            .sum();
        if partition(&members)
            && cached == OBJECTS
            && members.iter().all(|m| m.members().len() == n)
        {
            break;
        }
        assert!(
            started.elapsed() < Duration::from_secs(120),
            "{n} replicas did not settle"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    // Let the relists' garbage go.
    tokio::time::sleep(Duration::from_millis(500)).await;
    let change = region.change();
    let settled = change.bytes_allocated as i64 - change.bytes_deallocated as i64;
    sampling.store(false, Ordering::SeqCst);
    let _ = sampler.join();
    (replicas, settled, peak.load(Ordering::SeqCst) - base)
}

async fn stop(replicas: Vec<Replica>) {
    for mut r in replicas {
        drop(r.stop.take());
        let _ = r.task.await;
    }
}

/// Queues every object once on the replica that owns it and waits until all are reconciled.
async fn reconcile_all(replicas: &[Replica], done: &AtomicUsize) -> Duration {
    done.store(0, Ordering::SeqCst);
    let started = Instant::now();
    for r in replicas {
        for cm in r.manager.informer_reader::<ConfigMap>().list() {
            let hash = kcr_controller_manager::sharding::fnv1a64(
                cm.metadata.uid.as_deref().unwrap_or("").as_bytes(),
            );
            if r.member.owns(hash) {
                r.controller.queue().add(Request::namespaced(
                    "default",
                    cm.metadata.name.clone().unwrap_or_default(),
                ));
            }
        }
    }
    while done.load(Ordering::SeqCst) < OBJECTS {
        tokio::time::sleep(Duration::from_millis(1)).await;
    }
    started.elapsed()
}

fn sharding(c: &mut Criterion) {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("a runtime");
    let env = rt.block_on(async {
        let env = TestEnv::builder()
            .sharded_list_and_watch(true)
            .start()
            .await
            .expect("kcr-testenv");
        create_objects(&env.client()).await;
        env
    });
    let client = env.client();
    let mut group = c.benchmark_group("sharded_reconcile_10k_objects_5ms");
    group.sampling_mode(SamplingMode::Flat);
    group.sample_size(10);
    group.warm_up_time(Duration::from_secs(1));
    group.measurement_time(Duration::from_secs(10));
    group.throughput(Throughput::Elements(OBJECTS as u64));
    let mut memory = Vec::new();
    for n in [1usize, 2, 4] {
        let done = Arc::new(AtomicUsize::new(0));
        let (replicas, settled, peak) = rt.block_on(start(&client, n, &format!("bench{n}"), &done));
        let shares: Vec<String> = replicas
            .iter()
            .map(|r| format!("{:.3}", r.member.share()))
            .collect();
        memory.push((n, settled / n as i64, peak / n as i64, shares));
        group.bench_function(BenchmarkId::new("replicas", n), |b| {
            b.iter_custom(|iters| {
                let mut total = Duration::ZERO;
                for _ in 0..iters {
                    total += rt.block_on(reconcile_all(&replicas, &done));
                }
                total
            });
        });
        rt.block_on(stop(replicas));
    }
    group.finish();
    for (n, settled, peak, shares) in memory {
        println!(
            "sharding memory: {n} replica(s), server-side: {:.1} MiB live per replica once synced, {:.1} MiB peak per replica while syncing; shares {}",
            settled as f64 / (1 << 20) as f64,
            peak as f64 / (1 << 20) as f64,
            shares.join(" ")
        );
    }
    rt.block_on(env.shutdown());
}

criterion_group!(benches, sharding);
criterion_main!(benches);
