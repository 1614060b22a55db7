//! What read-your-own-writes adds to a cache read: `CachedClient::get` beside a plain cache get
//! (`InformerReader::get`, the baseline) on the same informer, in the same run.
//!
//! Setup: kcr-testenv with 1,000 `ConfigMap`s, a `Manager` caching them, synced. Each case
//! reads the same cached object (`default/cm-500`); the futures are polled once
//! (`now_or_never`, none of them waits), the baseline too.
//!
//! - `informer_reader_get`: the baseline, a plain cache get.
//! - `cached_client_get/off`: `CachedClient::get` with `Options::read_your_own_writes(false)`.
//! - `cached_client_get/on_nothing_pending`: read-your-own-writes on, no write recorded (what
//!   a read costs when the cache has caught up: the first read after that drops the entries).
//! - `cached_client_get/on_other_object_pending`: on, with a write of another object that the
//!   cache does not show yet (watch events held back): the slow path's lock and lookup.
//!
//! Then the same four, interleaved round by round, print their medians per get beside the
//! baseline's (on a shared machine, separate criterion runs drift apart with the load).

use std::time::Duration;

use criterion::{Criterion, criterion_group, criterion_main};
use futures::FutureExt;
use k8s_openapi::api::core::v1::ConfigMap;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kcr_controller_manager::client::CachedClient;
use kcr_controller_manager::manager::InformerReader;
use kcr_controller_manager::{Manager, Options};
use kube::api::{Api, PostParams};

const OBJECTS: usize = 1_000;

fn config_map(i: usize) -> ConfigMap {
    ConfigMap {
        metadata: ObjectMeta {
            name: Some(format!("cm-{i}")),
            ..ObjectMeta::default()
        },
        data: Some([("key".to_owned(), "value".to_owned())].into()),
        ..ConfigMap::default()
    }
}

struct Setup {
    _env: kcr_testenv::TestEnv,
    reader: InformerReader<ConfigMap>,
    off: CachedClient<ConfigMap>,
    on: CachedClient<ConfigMap>,
    on_pending: CachedClient<ConfigMap>,
    _stops: Vec<tokio::sync::oneshot::Sender<()>>,
}

async fn manager(
    env: &kcr_testenv::TestEnv,
    ryow: bool,
) -> (Manager, tokio::sync::oneshot::Sender<()>) {
    let manager = Manager::new(
        env.client(),
        Options::default()
            .metrics_bind_address("0")
            .read_your_own_writes(ryow),
    )
    .unwrap_or_else(|e| panic!("manager: {e}"));
    let reader = manager.informer_reader::<ConfigMap>();
    let (stop, rx) = tokio::sync::oneshot::channel::<()>();
    let m = manager.clone();
    tokio::spawn(async move {
        m.start(async {
            let _ = rx.await;
        })
        .await
    });
    while !reader.has_synced() {
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    (manager, stop)
}

async fn setup() -> Setup {
    let env = kcr_testenv::TestEnv::start()
        .await
        .unwrap_or_else(|e| panic!("testenv: {e}"));
    let api: Api<ConfigMap> = Api::namespaced(env.client(), "default");
    for i in 0..OBJECTS {
        api.create(&PostParams::default(), &config_map(i))
            .await
            .unwrap_or_else(|e| panic!("create: {e}"));
    }
    let (off_manager, stop_off) = manager(&env, false).await;
    let (on_manager, stop_on) = manager(&env, true).await;
    let (pending_manager, stop_pending) = manager(&env, true).await;
    let on_pending = pending_manager.cached_client::<ConfigMap>();
    // A write of cm-0 that the cache will not show while the bench runs.
    env.faults().delay_watch_events(Duration::from_secs(3600));
    let mut cm = api.get("cm-0").await.unwrap_or_else(|e| panic!("get: {e}"));
    cm.data = Some([("key".to_owned(), "changed".to_owned())].into());
    on_pending
        .replace(Some("default"), "cm-0", &PostParams::default(), &cm)
        .await
        .unwrap_or_else(|e| panic!("replace: {e}"));
    Setup {
        reader: on_manager.informer_reader::<ConfigMap>(),
        off: off_manager.cached_client::<ConfigMap>(),
        on: on_manager.cached_client::<ConfigMap>(),
        on_pending,
        _env: env,
        _stops: vec![stop_off, stop_on, stop_pending],
    }
}

fn read_your_writes(c: &mut Criterion) {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .unwrap_or_else(|e| panic!("runtime: {e}"));
    let s = runtime.block_on(setup());
    // The one read below that waits needs the runtime's timer.
    let _runtime = runtime.enter();
    let (ns, name) = (Some("default"), "cm-500");
    for (what, client) in [
        ("off", &s.off),
        ("on", &s.on),
        ("on_pending", &s.on_pending),
    ] {
        let got = client.get(ns, name).now_or_never();
        assert!(
            matches!(got, Some(Ok(Some(_)))),
            "{what}: the read must not wait: {got:?}"
        );
    }
    assert!(
        s.on_pending.get(ns, "cm-0").now_or_never().is_none(),
        "the pending write of cm-0 holds its get"
    );

    let mut group = c.benchmark_group("cache_get");
    group.bench_function("informer_reader_get", |b| {
        b.iter(|| async { s.reader.get(ns, name) }.now_or_never())
    });
    group.bench_function("cached_client_get/off", |b| {
        b.iter(|| s.off.get(ns, name).now_or_never())
    });
    group.bench_function("cached_client_get/on_nothing_pending", |b| {
        b.iter(|| s.on.get(ns, name).now_or_never())
    });
    group.bench_function("cached_client_get/on_other_object_pending", |b| {
        b.iter(|| s.on_pending.get(ns, name).now_or_never())
    });
    group.finish();
    paired(&s, ns, name);
    drop(s);
}

/// The same reads interleaved: `ROUNDS` rounds, each timing `PER_ROUND` gets of every case in
/// turn (the order rotating), and the median per get of each case over the rounds. A load that
/// drifts while the bench runs moves every case of a round alike, which separate criterion runs
/// (seconds apart on a shared machine) do not.
fn paired(s: &Setup, ns: Option<&str>, name: &str) {
    const ROUNDS: usize = 41;
    const PER_ROUND: u32 = 20_000;
    let cases: [(&str, &dyn Fn()); 4] = [
        ("informer_reader_get (baseline)", &|| {
            std::hint::black_box(async { s.reader.get(ns, name) }.now_or_never());
        }),
        ("cached_client_get/off", &|| {
            std::hint::black_box(s.off.get(ns, name).now_or_never());
        }),
        ("cached_client_get/on_nothing_pending", &|| {
            std::hint::black_box(s.on.get(ns, name).now_or_never());
        }),
        ("cached_client_get/on_other_object_pending", &|| {
            std::hint::black_box(s.on_pending.get(ns, name).now_or_never());
        }),
    ];
    let mut samples: Vec<Vec<f64>> = vec![Vec::with_capacity(ROUNDS); cases.len()];
    for round in 0..ROUNDS {
        for k in 0..cases.len() {
            let i = (round + k) % cases.len();
            let start = tokio::time::Instant::now();
            for _ in 0..PER_ROUND {
                (cases[i].1)();
            }
            samples[i].push(start.elapsed().as_nanos() as f64 / f64::from(PER_ROUND));
        }
    }
    println!("\npaired medians over {ROUNDS} interleaved rounds of {PER_ROUND} gets:");
    let median = |v: &mut Vec<f64>| {
        v.sort_by(f64::total_cmp);
        v[v.len() / 2]
    };
    let baseline = median(&mut samples[0].clone());
    for (i, (what, _)) in cases.iter().enumerate() {
        let m = median(&mut samples[i]);
        println!("  {what:<45} {m:>7.1} ns  ({:+.1} ns)", m - baseline);
    }
}

criterion_group!(benches, read_your_writes);
criterion_main!(benches);
