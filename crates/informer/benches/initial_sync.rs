//! Initial sync from an API server on realistic objects: time from start to
//! synced and peak RSS (VmHWM) of the client, kcr's informer beside
//! kube-runtime's watcher + reflector, in one run on the same server.
//!
//! The objects are 50,000 ConfigMaps (`KCR_BENCH_OBJECTS` to change) made
//! from the 500 items of `data/configmap-list-page.json`, a page recorded
//! from a real kube-apiserver v1.36.2: each keeps its labels, data, the
//! `kubectl.kubernetes.io/last-applied-configuration` annotation and its two
//! `managedFields` entries as the server returned them; copy `i` is named
//! `app-config-{i:05}` (also inside the annotation) and kcr-testenv gives it
//! its own uid, creationTimestamp and resourceVersion as it is created.
//!
//! kcr-testenv serves them from a child process, so its memory never counts
//! as the client's; each variant syncs in a fresh child process that reports
//! its time to synced, its VmHWM and its CPU time. The variants run in turn,
//! `KCR_BENCH_RUNS` rounds (3 by default), and the table gives the medians
//! and every run:
//!
//! - `kcr factory defaults`: `SharedInformerFactory::informer::<ConfigMap>()`
//!   (protobuf, as client-go asks by default, managedFields dropped), synced when the
//!   informer's `has_synced` is true (polled every millisecond); kcr-testenv encodes an
//!   object the first time it is asked for in protobuf and keeps the encoding, as
//!   kube-apiserver's watch cache keeps encoded objects, so one unmeasured protobuf sync
//!   runs before the rounds;
//! - `kcr JSON`: the defaults with `wire_format(WireFormat::Json)`, the baseline;
//! - `kcr keep managedFields`: the defaults with `keep_managed_fields(true)`;
//! - `kube-runtime paged list`: `watcher(api, Config::default())` (pages of
//!   500) with `.modify(|cm| cm.metadata.managed_fields = None)` feeding
//!   `reflector(writer, ..)`, synced at `Event::InitDone`;
//! - `kube-runtime streaming list`: the same with
//!   `Config::default().streaming_lists()`.
//!
//! Run with `cargo bench -p kcr-informer --bench initial_sync`; the table is
//! also written to `<target>/kcr-initial-sync.md`, which `cargo xtask bench`
//! prints after its own table.
//!
//! With `KCR_BENCH_KIND=pods` the objects are 10,000 Pods instead, copies of
//! kcr-protobuf's `tests/data/pod.json` (a ReplicaSet's Pod as a real
//! kube-apiserver v1.36.2 returned it: spec, owner reference, labels,
//! annotations and its managedFields), named `web-{i:05}`; the table goes to
//! `<target>/kcr-initial-sync-pods.md`.
//!
//! Last run, protobuf the default (50,000 objects, medians of 3 after one unmeasured protobuf
//! sync, shared 2-core machine at load average 3–7; time / peak / live heap at synced): kcr
//! defaults (protobuf) 0.83 s / 164 MiB / 133 MiB (client CPU 0.61 s), the JSON baseline
//! 1.05 s / 164 MiB / 133 MiB (0.77 s), managedFields kept 1.49 s / 353 MiB / 301 MiB,
//! kube-runtime paged 4.17 s / 175 MiB / 136 MiB (0.71 s), streaming 2.00 s / 171 MiB /
//! 136 MiB (1.49 s). Pods (10,000, same session): defaults 1.11 s / 352 MiB / 307 MiB
//! (0.86 s), JSON 1.18 s / 351 MiB / 306 MiB (1.07 s), kept 2.16 s / 829 MiB / 728 MiB,
//! kube-runtime paged 2.64 s / 394 MiB, streaming 1.72 s / 355 MiB.
//!
//! The run before, when JSON was the default (load average below 1): kcr
//! defaults 0.73 s / 164 MiB / 133 MiB (client CPU 0.77 s), protobuf 0.57 s / 164 MiB /
//! 132 MiB (0.50 s), managedFields kept 0.88 s / 378 MiB / 326 MiB, kube-runtime paged
//! 2.42 s / 175 MiB / 136 MiB (0.55 s), streaming 3.14 s / 171 MiB / 136 MiB (2.77 s). The
//! runs before (no counting allocator): kcr defaults 0.78 s and 0.71 s / 162 MiB, protobuf
//! 0.53 s and 0.49 s / 162 MiB, kube-runtime paged 3.60 s and 2.87 s / 172–173 MiB,
//! streaming 3.47 s and 3.52 s / 169 MiB.
//!
//! Pods (10,000, `KCR_BENCH_KIND=pods`, that run): kcr defaults (JSON) 0.90 s / 351 MiB /
//! 307 MiB (client CPU 0.94 s), protobuf 0.63 s / 351 MiB / 307 MiB (0.64 s), kept 1.21 s /
//! 883 MiB / 781 MiB, kube-runtime paged 1.68 s / 394 MiB / 307 MiB, streaming 1.23 s /
//! 355 MiB / 307 MiB. Before JSON-decoded objects with arrays were cloned to drop their spare
//! `Vec` capacity (and protobuf `Vec`s allocated at their length): kcr defaults 0.80 s /
//! 400 MiB / 355 MiB, protobuf 0.79 s / 401 MiB (an earlier run of the same day).
//!
//! Protobuf beside JSON (50,000 objects, medians of 3, shared 2-core machine): kcr defaults
//! 1.09 s / 162 MiB (client CPU 0.87 s), the same in protobuf 0.88 s / 162 MiB (0.59 s;
//! runs 1.35, 0.88 and 0.77 s: the first run's server encodes each object, later runs send
//! the encodings it kept), managedFields kept 1.69 s / 376 MiB, kube-runtime paged 6.26 s /
//! 172 MiB, streaming 2.08 s / 169 MiB. A run before kcr-testenv kept encodings: JSON
//! 0.98 s, protobuf 1.06 s (client CPU 0.65 s both). The peak is the cache at rest either
//! way; protobuf saves client CPU (about a third here), not memory.
//!
//! Earlier runs (50,000 objects, medians of 3, shared 2-core machine at load
//! average 12–15, so times vary run to run by ±50 %): kcr defaults
//! (streaming list, managedFields skipped while decoding) 1.77 s / 162 MiB
//! (client CPU 0.73 s) and 2.27 s / 163 MiB (0.88 s), kcr keeping
//! managedFields 3.89 s / 376 MiB and 2.74 s / 377 MiB, kube-runtime paged
//! 19.1 s / 173 MiB and 38.3 s / 173 MiB, kube-runtime streaming 3.60 s /
//! 170 MiB and 5.65 s / 169 MiB. The same runs of the code before a list
//! went from decoder to cache transformed once and without copies (a
//! keyed temporary map for the streaming list, the list collected again by
//! the FIFO's transform and the informer's cache replace): kcr defaults
//! 2.12 s / 167 MiB and 2.50 s / 167 MiB, kept 2.59 s / 380 MiB. kcr's peak
//! is its cache at rest (2,781 bytes per object requested, about 3.1 KB
//! with the allocator's per-allocation cost, `cache_bytes`) plus the 9 MiB
//! the process starts with. Before streaming lists and the decoding skip
//! were the defaults: 3.01 s / 450 MiB (the whole list decoded with its
//! managedFields before the transform dropped them).

#![allow(missing_docs)]

mod fixture;

use std::io::{BufRead, BufReader, Write};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use futures::{StreamExt, TryStreamExt};
use k8s_openapi::api::core::v1::{ConfigMap, Namespace, Pod};
use kcr_informer::{SharedInformerFactory, WireFormat};
use kube::api::{Api, ApiResource, DynamicObject, ObjectMeta, PostParams};
use kube::config::{KubeConfigOptions, Kubeconfig};
use serde::de::DeserializeOwned;
use serde_json::Value;
use tokio::time::Instant;

use fixture::NAMESPACE;

/// Counts the bytes allocated and freed, for the heap still live at synced (two atomic
/// additions per allocation; nothing is added to any allocation itself).
#[global_allocator]
static GLOBAL: &stats_alloc::StatsAlloc<std::alloc::System> = &stats_alloc::INSTRUMENTED_SYSTEM;

/// Heap bytes live now: allocated minus freed (a realloc's growth is in the first, its
/// shrinking in the second).
fn live_heap_kib() -> u64 {
    let s = GLOBAL.stats();
    (s.bytes_allocated.saturating_sub(s.bytes_deallocated) / 1024) as u64
}

/// (argument, row label) of every variant, in the order they run.
const VARIANTS: [(&str, &str); 5] = [
    (
        "kcr",
        "kcr `SharedInformerFactory` defaults (protobuf, managedFields dropped)",
    ),
    (
        "kcr-json",
        "kcr defaults + `wire_format(WireFormat::Json)` (the JSON baseline)",
    ),
    ("kcr-keep", "kcr defaults, managedFields kept"),
    (
        "kube-runtime",
        "kube-runtime 5 watcher + reflector, paged list, managedFields stripped in `.modify`",
    ),
    (
        "kube-runtime-streaming",
        "kube-runtime, streaming list, stripped",
    ),
];

/// Whether the bench syncs Pods (`KCR_BENCH_KIND=pods`) rather than ConfigMaps.
fn pods() -> bool {
    std::env::var("KCR_BENCH_KIND").is_ok_and(|k| k == "pods")
}

fn objects() -> usize {
    env_number("KCR_BENCH_OBJECTS", if pods() { 10_000 } else { 50_000 })
}

/// Copy `i` of the recorded Pod (`pod.json`), ready to create: named `web-{i:05}`, in
/// the bench's namespace, without the fields the server sets (uid, resourceVersion,
/// creationTimestamp, status); its owner reference, managedFields and the rest as recorded.
fn pod_to_create(pod: &Value, i: usize) -> Value {
    let mut obj = pod.clone();
    if let Some(meta) = obj["metadata"].as_object_mut() {
        for field in ["uid", "resourceVersion", "creationTimestamp"] {
            meta.remove(field);
        }
        meta.insert("name".into(), Value::String(format!("web-{i:05}")));
        meta.insert("namespace".into(), Value::String(NAMESPACE.into()));
    }
    if let Some(obj) = obj.as_object_mut() {
        obj.remove("status");
    }
    obj
}

fn runs() -> usize {
    env_number("KCR_BENCH_RUNS", 3).max(1)
}

fn env_number(name: &str, default: usize) -> usize {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap_or_else(|e| panic!("runtime: {e}"))
}

async fn client(kubeconfig: &str) -> kube::Client {
    let kc = Kubeconfig::read_from(kubeconfig).unwrap_or_else(|e| panic!("kubeconfig: {e}"));
    let config = kube::Config::from_custom_kubeconfig(kc, &KubeConfigOptions::default())
        .await
        .unwrap_or_else(|e| panic!("config: {e}"));
    kube::Client::try_from(config).unwrap_or_else(|e| panic!("client: {e}"))
}

/// The child that serves: creates the objects, prints `READY <kubeconfig>`,
/// serves until its stdin closes.
fn server() {
    let rt = runtime();
    rt.block_on(async {
        let n = objects();
        let env = kcr_testenv::TestEnv::builder()
            .history_size(n + 1_000)
            .start()
            .await
            .unwrap_or_else(|e| panic!("testenv: {e}"));
        let c = env.client();
        let namespace = Namespace {
            metadata: ObjectMeta {
                name: Some(NAMESPACE.to_owned()),
                ..ObjectMeta::default()
            },
            ..Namespace::default()
        };
        Api::<Namespace>::all(c.clone())
            .create(&PostParams::default(), &namespace)
            .await
            .unwrap_or_else(|e| panic!("namespace: {e}"));
        // Created as JSON, so every field reaches the server as recorded.
        let (resource, make): (ApiResource, Box<dyn Fn(usize) -> Value>) = if pods() {
            // kcr-protobuf's copy of the fixture (its tests round-trip it).
            let path = concat!(
                env!("CARGO_MANIFEST_DIR"),
                "/../protobuf/tests/data/pod.json"
            );
            let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{path}: {e}"));
            let pod: Value = serde_json::from_str(&text).unwrap_or_else(|e| panic!("{path}: {e}"));
            (
                ApiResource::erase::<Pod>(&()),
                Box::new(move |i| pod_to_create(&pod, i)),
            )
        } else {
            let items = fixture::items();
            (
                ApiResource::erase::<ConfigMap>(&()),
                Box::new(move |i| fixture::to_create(&items, i)),
            )
        };
        let api: Api<DynamicObject> = Api::namespaced_with(c.clone(), NAMESPACE, &resource);
        let started = Instant::now();
        futures::stream::iter(0..n)
            .map(|i| {
                let api = api.clone();
                let obj: DynamicObject =
                    serde_json::from_value(make(i)).unwrap_or_else(|e| panic!("object {i}: {e}"));
                async move { api.create(&PostParams::default(), &obj).await.map(|_| ()) }
            })
            .buffer_unordered(16)
            .try_collect::<Vec<()>>()
            .await
            .unwrap_or_else(|e| panic!("seed: {e}"));
        eprintln!(
            "initial_sync: {n} {} created in {:.1} s",
            resource.plural,
            started.elapsed().as_secs_f64()
        );
        println!("READY {}", env.kubeconfig_path().display());
        let _ = std::io::stdout().flush();
        tokio::task::spawn_blocking(|| {
            let mut line = String::new();
            while std::io::stdin()
                .read_line(&mut line)
                .map(|n| n > 0)
                .unwrap_or(false)
            {
                line.clear();
            }
        })
        .await
        .unwrap_or_else(|e| panic!("stdin: {e}"));
        env.shutdown().await;
    });
}

/// The bounds of the kinds the bench syncs.
trait Kind:
    kube::Resource<DynamicType = ()>
    + Clone
    + DeserializeOwned
    + std::fmt::Debug
    + Send
    + Sync
    + 'static
{
}

impl<K> Kind for K where
    K: kube::Resource<DynamicType = ()>
        + Clone
        + DeserializeOwned
        + std::fmt::Debug
        + Send
        + Sync
        + 'static
{
}

/// One kcr initial sync through the factory; returns the objects cached.
async fn sync_kcr<K: Kind>(
    client: kube::Client,
    keep_managed_fields: bool,
    format: WireFormat,
) -> usize {
    let factory = SharedInformerFactory::new(client, Duration::ZERO)
        .keep_managed_fields(keep_managed_fields)
        .wire_format(format);
    let informer = factory.informer::<K>();
    factory.start();
    while !informer.has_synced() {
        tokio::time::sleep(Duration::from_millis(1)).await;
    }
    let n = informer.get_indexer().len();
    // Shut down after the sync is measured: its time is not the sync's.
    tokio::spawn(async move { factory.shutdown().await });
    n
}

/// One kube-runtime initial sync; returns the objects in the store.
async fn sync_kube_runtime<K: Kind>(client: kube::Client, streaming: bool) -> usize {
    use kube_runtime::{WatchStreamExt, reflector, watcher};
    let (reader, writer) = reflector::store::<K>();
    let config = if streaming {
        watcher::Config::default().streaming_lists()
    } else {
        watcher::Config::default()
    };
    let stream = reflector::reflector(
        writer,
        watcher::watcher(Api::<K>::all(client), config).modify(|obj| {
            obj.meta_mut().managed_fields = None;
        }),
    );
    let mut stream = std::pin::pin!(stream);
    while let Some(event) = stream.next().await {
        match event {
            Ok(watcher::Event::InitDone) => break,
            Ok(_) => {}
            Err(e) => panic!("kube-runtime watcher: {e}"),
        }
    }
    let n = reader.state().len();
    // The store stays alive (this process exits once it has measured), so the live heap
    // counts it, as it counts kcr's cache.
    std::mem::forget(reader);
    n
}

fn status_kib(field: &str) -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with(field))
                .and_then(|l| l.split_whitespace().nth(1).and_then(|v| v.parse().ok()))
        })
        .unwrap_or(0)
}

/// CPU time (user + system) this process has used, in seconds.
fn cpu_seconds() -> f64 {
    // Fields 14 and 15 of /proc/self/stat, in clock ticks (100 per second on Linux).
    std::fs::read_to_string("/proc/self/stat")
        .ok()
        .and_then(|s| {
            let after_name = s.rsplit_once(')')?.1;
            let fields: Vec<&str> = after_name.split_whitespace().collect();
            let utime: f64 = fields.get(11)?.parse().ok()?;
            let stime: f64 = fields.get(12)?.parse().ok()?;
            Some((utime + stime) / 100.0)
        })
        .unwrap_or(0.0)
}

/// One initial sync of `K` by `variant`; returns the objects cached.
async fn sync<K: Kind>(client: kube::Client, variant: &str) -> usize {
    match variant {
        "kcr" => sync_kcr::<K>(client, false, WireFormat::default()).await,
        "kcr-json" => sync_kcr::<K>(client, false, WireFormat::Json).await,
        "kcr-keep" => sync_kcr::<K>(client, true, WireFormat::default()).await,
        "kube-runtime" => sync_kube_runtime::<K>(client, false).await,
        "kube-runtime-streaming" => sync_kube_runtime::<K>(client, true).await,
        other => panic!("unknown variant {other:?}"),
    }
}

/// The child that measures one sync: prints
/// `RESULT <objects> <seconds> <peak KiB> <cpu seconds> <baseline KiB> <live heap KiB at synced>`.
fn measure() {
    let kubeconfig = std::env::var("KCR_BENCH_KUBECONFIG").unwrap_or_default();
    let variant = std::env::var("KCR_BENCH_VARIANT").unwrap_or_default();
    let rt = runtime();
    rt.block_on(async {
        let client = client(&kubeconfig).await;
        let baseline = status_kib("VmHWM:");
        let cpu_before = cpu_seconds();
        let started = Instant::now();
        let n = if pods() {
            sync::<Pod>(client, &variant).await
        } else {
            sync::<ConfigMap>(client, &variant).await
        };
        let secs = started.elapsed().as_secs_f64();
        let peak = status_kib("VmHWM:");
        let cpu = cpu_seconds() - cpu_before;
        let live = live_heap_kib();
        println!("RESULT {n} {secs:.3} {peak} {cpu:.2} {baseline} {live}");
        let _ = std::io::stdout().flush();
    });
    // Exit without dropping the caches: their teardown is not measured.
    std::process::exit(0);
}

struct Server {
    child: Child,
    kubeconfig: String,
}

impl Drop for Server {
    fn drop(&mut self) {
        drop(self.child.stdin.take());
        let _ = self.child.wait();
    }
}

fn start_server() -> Server {
    let exe = std::env::current_exe().unwrap_or_else(|e| panic!("current_exe: {e}"));
    let mut child = Command::new(exe)
        .env("KCR_BENCH_ROLE", "server")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("spawn server: {e}"));
    let stdout = child
        .stdout
        .take()
        .unwrap_or_else(|| panic!("server stdout"));
    let mut line = String::new();
    BufReader::new(stdout)
        .read_line(&mut line)
        .unwrap_or_else(|e| panic!("server: {e}"));
    match line.split_whitespace().collect::<Vec<_>>().as_slice() {
        ["READY", kubeconfig] => Server {
            kubeconfig: (*kubeconfig).to_owned(),
            child,
        },
        _ => panic!("server said {line:?}"),
    }
}

/// One run of one variant in a fresh process.
#[derive(Debug, Clone, Copy)]
struct Run {
    secs: f64,
    peak_kib: u64,
    cpu: f64,
    baseline_kib: u64,
    /// Heap bytes live right after the sync (the objects cached, and what else the
    /// client holds), as the allocator counted them.
    live_kib: u64,
}

fn measure_in_child(server: &Server, variant: &str) -> Run {
    let exe = std::env::current_exe().unwrap_or_else(|e| panic!("current_exe: {e}"));
    let out = Command::new(exe)
        .env("KCR_BENCH_ROLE", "measure")
        .env("KCR_BENCH_VARIANT", variant)
        .env("KCR_BENCH_KUBECONFIG", &server.kubeconfig)
        .stderr(Stdio::inherit())
        .output()
        .unwrap_or_else(|e| panic!("measure: {e}"));
    let text = String::from_utf8_lossy(&out.stdout);
    let line = text
        .lines()
        .find(|l| l.starts_with("RESULT"))
        .unwrap_or_else(|| panic!("{variant} said {text:?} ({})", out.status));
    let parts: Vec<&str> = line.split_whitespace().collect();
    let n: usize = parts[1].parse().unwrap_or(0);
    assert!(
        n >= objects(),
        "{variant} cached {n} objects, fewer than {}",
        objects()
    );
    Run {
        secs: parts[2].parse().unwrap_or(0.0),
        peak_kib: parts[3].parse().unwrap_or(0),
        cpu: parts[4].parse().unwrap_or(0.0),
        baseline_kib: parts[5].parse().unwrap_or(0),
        live_kib: parts[6].parse().unwrap_or(0),
    }
}

fn median<T: PartialOrd + Copy>(mut v: Vec<T>) -> T {
    v.sort_by(|a, b| a.partial_cmp(b).unwrap_or(std::cmp::Ordering::Equal));
    v[v.len() / 2]
}

fn mib(kib: u64) -> String {
    format!("{:.0} MiB", kib as f64 / 1024.0)
}

fn table(n: usize, results: &[(&str, Vec<Run>)]) -> String {
    let runs = results.first().map_or(0, |(_, r)| r.len());
    let objects = if pods() {
        "Pods from pod.json (a ReplicaSet's Pod as a real server returned it, with its \
         managedFields)"
    } else {
        "ConfigMaps from configmap-list-page.json (with managedFields and last-applied)"
    };
    let mut s = format!(
        "initial_sync: {n} {objects}, served by kcr-testenv in its own process; medians of \
         {runs} fresh processes per variant\n\n\
         | informer | time to synced | peak RSS (VmHWM) | live heap at synced | client CPU | runs (time, peak) |\n\
         | --- | ---: | ---: | ---: | ---: | --- |\n"
    );
    for (label, r) in results {
        let each: Vec<String> = r
            .iter()
            .map(|r| format!("{:.2} s, {}", r.secs, mib(r.peak_kib)))
            .collect();
        s.push_str(&format!(
            "| {label} | {:.2} s | {} | {} | {:.2} s | {} |\n",
            median(r.iter().map(|r| r.secs).collect()),
            mib(median(r.iter().map(|r| r.peak_kib).collect())),
            mib(median(r.iter().map(|r| r.live_kib).collect())),
            median(r.iter().map(|r| r.cpu).collect()),
            each.join("; ")
        ));
    }
    let baseline = median(
        results
            .iter()
            .flat_map(|(_, r)| r.iter().map(|r| r.baseline_kib))
            .collect(),
    );
    s.push_str(&format!(
        "\nEach process's VmHWM before the sync started (runtime and client): {}.\n",
        mib(baseline)
    ));
    s
}

/// Where cargo puts its output: three levels above this binary
/// (`<target>/release/deps/initial_sync-<hash>`).
fn target_dir() -> Option<PathBuf> {
    std::env::current_exe()
        .ok()?
        .ancestors()
        .nth(3)
        .map(PathBuf::from)
}

fn bench() {
    // As criterion does: a filter argument that does not name this bench skips it.
    let filter = std::env::args().skip(1).find(|a| !a.starts_with('-'));
    if filter.is_some_and(|f| !"initial_sync".contains(&f) && !f.contains("initial_sync")) {
        return;
    }
    let n = objects();
    let server = start_server();
    let mut results: Vec<(&str, Vec<Run>)> = VARIANTS
        .iter()
        .map(|(_, label)| (*label, Vec::new()))
        .collect();
    // kcr-testenv encodes each object in protobuf the first time one is asked for and keeps
    // the encoding (as kube-apiserver's watch cache keeps encoded objects): one protobuf sync,
    // not measured, pays that once, so that no variant's first round carries it.
    let warm = measure_in_child(&server, "kcr");
    eprintln!("initial_sync warm-up (not counted): {:.2} s", warm.secs);
    for round in 0..runs() {
        for ((variant, _), (_, runs)) in VARIANTS.iter().zip(results.iter_mut()) {
            let run = measure_in_child(&server, variant);
            eprintln!(
                "initial_sync round {} {variant}: {:.2} s, peak {}, live {}, cpu {:.2} s",
                round + 1,
                run.secs,
                mib(run.peak_kib),
                mib(run.live_kib),
                run.cpu
            );
            runs.push(run);
        }
    }
    drop(server);
    let out = table(n, &results);
    println!("\n{out}");
    if let Some(dir) = target_dir() {
        let path = dir.join(if pods() {
            "kcr-initial-sync-pods.md"
        } else {
            "kcr-initial-sync.md"
        });
        if let Err(e) = std::fs::write(&path, &out) {
            eprintln!("cannot write {}: {e}", path.display());
        }
    }
}

fn main() {
    match std::env::var("KCR_BENCH_ROLE").as_deref() {
        Ok("server") => server(),
        Ok("measure") => measure(),
        _ => bench(),
    }
}
