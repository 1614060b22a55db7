//! Reflector benchmarks against kcr-testenv, served from a child process (so
//! the server's memory never counts as the client's):
//!
//! - `initial_sync`: list 100,000 ConfigMaps (`KCR_BENCH_OBJECTS` to change)
//!   into a store, kcr's `Reflector` + `IndexedStore` beside kube-runtime's
//!   `watcher` + `reflector` store, in the same run on the same server;
//! - peak memory of one initial sync, each in a fresh child process (VmHWM),
//!   printed after the criterion groups;
//! - `watch_throughput`: events/s a reflector applies from a watch that
//!   replays 20,000 recorded updates.

use std::io::{BufRead, BufReader, Write};
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use criterion::{Criterion, Throughput};
use futures::{StreamExt, TryStreamExt};
use k8s_openapi::api::core::v1::{ConfigMap, Namespace};
use kcr_cache::{BoxError, IndexedStore};
use kcr_reflector::{
    ListOptions, ListerWatcher, ObjectList, Reflector, ReflectorStore, WatchOptions, WatchStream,
};
use kube::api::{Api, ObjectMeta, PostParams};
use kube::config::{KubeConfigOptions, Kubeconfig};
use tokio::sync::Notify;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

const NAMESPACE: &str = "bench";
const STREAM_NAMESPACE: &str = "stream";
const STREAM_OBJECTS: usize = 100;
const STREAM_EVENTS: usize = 20_000;

fn objects() -> usize {
    std::env::var("KCR_BENCH_OBJECTS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(100_000)
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap_or_else(|e| panic!("runtime: {e}"))
}

fn config_map(name: String, i: usize) -> ConfigMap {
    ConfigMap {
        metadata: ObjectMeta {
            name: Some(name),
            labels: Some([("app".to_owned(), format!("app-{}", i % 50))].into()),
            ..ObjectMeta::default()
        },
        data: Some(
            [
                ("index".to_owned(), i.to_string()),
                (
                    "config.yaml".to_owned(),
                    format!(
                        "server:\n  port: {}\n  name: item-{i}\n{}",
                        8000 + i % 1000,
                        "# padding\n".repeat(12)
                    ),
                ),
            ]
            .into(),
        ),
        ..ConfigMap::default()
    }
}

async fn client(kubeconfig: &str) -> kube::Client {
    let kc = Kubeconfig::read_from(kubeconfig).unwrap_or_else(|e| panic!("kubeconfig: {e}"));
    let config = kube::Config::from_custom_kubeconfig(kc, &KubeConfigOptions::default())
        .await
        .unwrap_or_else(|e| panic!("config: {e}"));
    kube::Client::try_from(config).unwrap_or_else(|e| panic!("client: {e}"))
}

/// The child that serves: seeds the objects, prints `READY <kubeconfig>
/// <stream_from> <stream_to>`, serves until its stdin closes.
fn server() {
    let rt = runtime();
    rt.block_on(async {
        let n = objects();
        let env = kcr_testenv::TestEnv::builder()
            .history_size(n + STREAM_EVENTS + 1_000)
            .start()
            .await
            .unwrap_or_else(|e| panic!("testenv: {e}"));
        let c = env.client();
        for ns in [NAMESPACE, STREAM_NAMESPACE] {
            let namespace = Namespace {
                metadata: ObjectMeta {
                    name: Some(ns.to_owned()),
                    ..ObjectMeta::default()
                },
                ..Namespace::default()
            };
            Api::<Namespace>::all(c.clone())
                .create(&PostParams::default(), &namespace)
                .await
                .unwrap_or_else(|e| panic!("namespace: {e}"));
        }
        let api: Api<ConfigMap> = Api::namespaced(c.clone(), NAMESPACE);
        futures::stream::iter(0..n)
            .map(|i| {
                let api = api.clone();
                async move {
                    api.create(&PostParams::default(), &config_map(format!("cm-{i:06}"), i))
                        .await
                        .map(|_| ())
                }
            })
            .buffer_unordered(16)
            .try_collect::<Vec<()>>()
            .await
            .unwrap_or_else(|e| panic!("seed: {e}"));
        let stream: Api<ConfigMap> = Api::namespaced(c.clone(), STREAM_NAMESPACE);
        let from = env.resource_version();
        for i in 0..STREAM_OBJECTS {
            stream
                .create(&PostParams::default(), &config_map(format!("s-{i:03}"), i))
                .await
                .unwrap_or_else(|e| panic!("seed: {e}"));
        }
        for i in 0..(STREAM_EVENTS - STREAM_OBJECTS) {
            let name = format!("s-{:03}", i % STREAM_OBJECTS);
            let mut cm = stream
                .get(&name)
                .await
                .unwrap_or_else(|e| panic!("get: {e}"));
            cm.data
                .get_or_insert_default()
                .insert("index".to_owned(), i.to_string());
            stream
                .replace(&name, &PostParams::default(), &cm)
                .await
                .unwrap_or_else(|e| panic!("update: {e}"));
        }
        let to = env.resource_version();
        println!("READY {} {from} {to}", env.kubeconfig_path().display());
        let _ = std::io::stdout().flush();
        // Serve until the parent closes our stdin.
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

/// An `IndexedStore` that signals when the reflector's list has been stored.
struct Signalling {
    cache: IndexedStore<ConfigMap>,
    replaced: Notify,
}

impl ReflectorStore<ConfigMap> for Signalling {
    fn add(&self, obj: Arc<ConfigMap>) -> Result<(), BoxError> {
        ReflectorStore::add(&self.cache, obj)
    }
    fn update(&self, obj: Arc<ConfigMap>) -> Result<(), BoxError> {
        ReflectorStore::update(&self.cache, obj)
    }
    fn delete(&self, obj: Arc<ConfigMap>) -> Result<(), BoxError> {
        ReflectorStore::delete(&self.cache, obj)
    }
    fn replace(&self, list: Vec<Arc<ConfigMap>>, rv: &str) -> Result<(), BoxError> {
        let r = ReflectorStore::replace(&self.cache, list, rv);
        self.replaced.notify_one();
        r
    }
    fn resync(&self) -> Result<(), BoxError> {
        Ok(())
    }
}

/// One initial sync with kcr; returns the number of objects stored.
async fn sync_kcr(client: kube::Client) -> usize {
    let store = Arc::new(Signalling {
        cache: IndexedStore::default(),
        replaced: Notify::new(),
    });
    let reflector = Reflector::new(
        Api::<ConfigMap>::namespaced(client, NAMESPACE),
        store.clone(),
    );
    let cancel = CancellationToken::new();
    let task = tokio::spawn({
        let cancel = cancel.clone();
        async move { reflector.run(cancel).await }
    });
    store.replaced.notified().await;
    cancel.cancel();
    let _ = task.await;
    store.cache.len()
}

/// One initial sync with kube-runtime's watcher + reflector store.
async fn sync_kube_runtime(client: kube::Client) -> usize {
    use kube_runtime::{reflector, watcher};
    let (reader, writer) = reflector::store::<ConfigMap>();
    let api = Api::<ConfigMap>::namespaced(client, NAMESPACE);
    let stream = reflector::reflector(writer, watcher::watcher(api, watcher::Config::default()));
    let mut stream = std::pin::pin!(stream);
    while let Some(event) = stream.next().await {
        if matches!(event, Ok(watcher::Event::InitDone)) {
            break;
        }
    }
    reader.state().len()
}

fn peak_rss_kib() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmHWM:"))
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

/// The child that measures one sync: prints `RESULT <objects> <seconds> <peak KiB> <cpu seconds>`.
fn measure() {
    let kubeconfig = std::env::var("KCR_BENCH_KUBECONFIG").unwrap_or_default();
    let which = std::env::var("KCR_BENCH_IMPL").unwrap_or_default();
    let rt = runtime();
    rt.block_on(async {
        let client = client(&kubeconfig).await;
        let cpu_before = cpu_seconds();
        let started = Instant::now();
        let n = match which.as_str() {
            "kube-runtime" => sync_kube_runtime(client).await,
            _ => sync_kcr(client).await,
        };
        let secs = started.elapsed().as_secs_f64();
        let cpu = cpu_seconds() - cpu_before;
        println!("RESULT {n} {secs:.3} {} {cpu:.2}", peak_rss_kib());
    });
}

/// Lists nothing at a fixed version, then watches through the real `Api`:
/// the reflector replays the recorded updates from that version.
struct ReplayFrom {
    api: Api<ConfigMap>,
    from: String,
}

#[async_trait]
impl ListerWatcher<ConfigMap> for ReplayFrom {
    async fn list(&self, _: &ListOptions) -> kcr_reflector::Result<ObjectList<ConfigMap>> {
        Ok(ObjectList {
            items: Vec::new(),
            resource_version: self.from.clone(),
            continue_token: None,
            remaining_item_count: None,
        })
    }
    async fn watch(&self, options: &WatchOptions) -> kcr_reflector::Result<WatchStream<ConfigMap>> {
        ListerWatcher::watch(&self.api, options).await
    }
    // Its "list" is the fixed version to replay from, never a stream.
    fn is_watch_list_semantics_unsupported(&self) -> bool {
        true
    }
}

struct Server {
    child: Child,
    kubeconfig: String,
    from: String,
    to: String,
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
    let parts: Vec<&str> = line.split_whitespace().collect();
    match parts.as_slice() {
        ["READY", kubeconfig, from, to] => Server {
            kubeconfig: (*kubeconfig).to_owned(),
            from: (*from).to_owned(),
            to: (*to).to_owned(),
            child,
        },
        _ => panic!("server said {line:?}"),
    }
}

fn measure_in_child(server: &Server, which: &str) -> (f64, u64, f64) {
    let exe = std::env::current_exe().unwrap_or_else(|e| panic!("current_exe: {e}"));
    let out = Command::new(exe)
        .env("KCR_BENCH_ROLE", "measure")
        .env("KCR_BENCH_IMPL", which)
        .env("KCR_BENCH_KUBECONFIG", &server.kubeconfig)
        .output()
        .unwrap_or_else(|e| panic!("measure: {e}"));
    let text = String::from_utf8_lossy(&out.stdout);
    let line = text
        .lines()
        .find(|l| l.starts_with("RESULT"))
        .unwrap_or_else(|| panic!("measure said {text:?}"));
    let parts: Vec<&str> = line.split_whitespace().collect();
    assert_eq!(
        parts[1].parse::<usize>().ok(),
        Some(objects()),
        "{which} stored every object"
    );
    (
        parts[2].parse().unwrap_or(0.0),
        parts[3].parse().unwrap_or(0),
        parts.get(4).and_then(|v| v.parse().ok()).unwrap_or(0.0),
    )
}

fn median<T: PartialOrd + Copy>(mut v: Vec<T>) -> T {
    v.sort_by(|a, b| a.partial_cmp(b).unwrap_or(std::cmp::Ordering::Equal));
    v[v.len() / 2]
}

fn bench() {
    let server = start_server();
    let rt = runtime();
    let client = rt.block_on(client(&server.kubeconfig));
    let n = objects();
    let mut c = Criterion::default()
        .sample_size(10)
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(10))
        .configure_from_args();

    let mut group = c.benchmark_group("initial_sync");
    group.throughput(Throughput::Elements(n as u64));
    // kube-runtime first: a server that warms up over the run favours the later one.
    group.bench_function(format!("kube_runtime_watcher_reflector/{n}"), |b| {
        b.iter_custom(|iters| {
            let client = client.clone();
            rt.block_on(async move {
                let started = Instant::now();
                for _ in 0..iters {
                    assert_eq!(sync_kube_runtime(client.clone()).await, n);
                }
                started.elapsed()
            })
        });
    });
    group.bench_function(format!("kcr_reflector_cache/{n}"), |b| {
        b.iter_custom(|iters| {
            let client = client.clone();
            rt.block_on(async move {
                let started = Instant::now();
                for _ in 0..iters {
                    assert_eq!(sync_kcr(client.clone()).await, n);
                }
                started.elapsed()
            })
        });
    });
    group.finish();

    let mut group = c.benchmark_group("watch_throughput");
    group.throughput(Throughput::Elements(STREAM_EVENTS as u64));
    group.bench_function(format!("kcr_reflector_cache/{STREAM_EVENTS}_events"), |b| {
        b.iter_custom(|iters| {
            let client = client.clone();
            let (from, to) = (server.from.clone(), server.to.clone());
            rt.block_on(async move {
                let started = Instant::now();
                for _ in 0..iters {
                    let lw = ReplayFrom {
                        api: Api::namespaced(client.clone(), STREAM_NAMESPACE),
                        from: from.clone(),
                    };
                    let cache = Arc::new(IndexedStore::<ConfigMap>::default());
                    let reflector = Arc::new(Reflector::new(lw, cache.clone()));
                    let cancel = CancellationToken::new();
                    let task = tokio::spawn({
                        let (reflector, cancel) = (reflector.clone(), cancel.clone());
                        async move { reflector.run(cancel).await }
                    });
                    while reflector.last_sync_resource_version() != to {
                        tokio::time::sleep(Duration::from_micros(200)).await;
                    }
                    cancel.cancel();
                    let _ = task.await;
                    assert_eq!(cache.len(), STREAM_OBJECTS);
                }
                started.elapsed()
            })
        });
    });
    group.finish();
    c.final_summary();

    // Peak memory, each sync in a fresh process.
    let runs = 5;
    for which in ["kcr", "kube-runtime"] {
        let results: Vec<(f64, u64, f64)> = (0..runs)
            .map(|_| measure_in_child(&server, which))
            .collect();
        let secs = median(results.iter().map(|r| r.0).collect());
        let kib = median(results.iter().map(|r| r.1).collect());
        let cpu = median(results.iter().map(|r| r.2).collect());
        println!(
            "initial_sync/{which}/{n}: peak RSS {:.1} MiB, {:.0} objects/s, client CPU {cpu:.2} s \
             (medians of {runs} fresh processes)",
            kib as f64 / 1024.0,
            n as f64 / secs
        );
    }
}

fn main() {
    match std::env::var("KCR_BENCH_ROLE").as_deref() {
        Ok("server") => server(),
        Ok("measure") => measure(),
        _ => bench(),
    }
}
