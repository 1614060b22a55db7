//! Streaming lists with and without gzip, against kcr-testenv (in process): a reflector's
//! watch-list of copies of the wire fixtures' Pods, ConfigMaps and Secrets (recorded from a real
//! kube-apiserver), `Accept-Encoding: gzip` (kcr's default) beside `identity`, in protobuf (the
//! default for built-in kinds) and JSON, in the same run on the same server. Time is the
//! streamed sync until the initial-events-end bookmark (decompressed and decoded); the bytes on
//! the wire (counted by a TCP proxy in front of the server) are printed after the groups.
//!
//! `KCR_BENCH_COPIES` (default 100) copies of each fixture item are created.

#[path = "../tests/support/mod.rs"]
mod support;

use std::time::Duration;

use criterion::{Criterion, Throughput};
use futures::StreamExt;
use k8s_openapi::api::core::v1::{ConfigMap, Namespace, Pod, Secret};
use kcr_reflector::{
    ApiListerWatcher, ListerWatcher, VersionMatch, WatchEvent, WatchOptions, WireFormat,
};
use kube::api::{Api, ObjectMeta, PostParams};
use serde::de::DeserializeOwned;
use serde_json::Value;
use tokio::time::Instant;

use support::CountingProxy;

const NAMESPACE: &str = "bench";

fn copies() -> usize {
    std::env::var("KCR_BENCH_COPIES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(100)
}

fn fixture_items(file: &str) -> Vec<Value> {
    let path = format!("{}/benches/data/{file}", env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    let list: Value = serde_json::from_str(&text).unwrap_or_else(|e| panic!("{path}: {e}"));
    list["items"].as_array().cloned().unwrap_or_default()
}

/// A fixture item made into a new object named `name` in the bench namespace: what the server
/// set (identity, versions, managed fields, status) and what a create may not carry is dropped.
fn as_new(item: &Value, name: &str) -> Value {
    let mut v = item.clone();
    if let Some(meta) = v.get_mut("metadata").and_then(Value::as_object_mut) {
        for key in [
            "uid",
            "resourceVersion",
            "creationTimestamp",
            "managedFields",
            "ownerReferences",
            "generation",
            "generateName",
        ] {
            meta.remove(key);
        }
        meta.insert("name".into(), Value::String(name.to_owned()));
        meta.insert("namespace".into(), Value::String(NAMESPACE.to_owned()));
    }
    if let Some(obj) = v.as_object_mut() {
        obj.remove("status");
    }
    if let Some(spec) = v.get_mut("spec").and_then(Value::as_object_mut) {
        spec.remove("ephemeralContainers");
    }
    v
}

/// The name of copy `c` of a fixture item: copies sort apart (all items' copy 0, then all
/// items' copy 1...), so a stream never carries two copies of one object side by side, which
/// gzip would compress far better than a cluster's distinct objects.
fn name(c: usize, base: &str) -> String {
    format!("c{c:04}-{base}")
}

/// Creates `copies` of each fixture item of `file`; returns how many were created (items the
/// server refuses are left out).
async fn seed<K>(client: &kube::Client, file: &str, copies: usize) -> usize
where
    K: kube::Resource<Scope = k8s_openapi::NamespaceResourceScope, DynamicType = ()>
        + Clone
        + DeserializeOwned
        + serde::Serialize
        + std::fmt::Debug,
{
    let api: Api<K> = Api::namespaced(client.clone(), NAMESPACE);
    let items = fixture_items(file);
    let mut created = 0;
    let mut refused = Vec::new();
    for item in &items {
        let base = item["metadata"]["name"].as_str().unwrap_or("x").to_owned();
        let first: K = match serde_json::from_value(as_new(item, &name(0, &base))) {
            Ok(obj) => obj,
            Err(e) => {
                refused.push(format!("{base}: {e}"));
                continue;
            }
        };
        if let Err(e) = api.create(&PostParams::default(), &first).await {
            refused.push(format!("{base}: {e}"));
            continue;
        }
        created += 1;
        let objects: Vec<K> = (1..copies)
            .filter_map(|c| serde_json::from_value(as_new(item, &name(c, &base))).ok())
            .collect();
        let results: Vec<_> = futures::stream::iter(objects)
            .map(|obj| {
                let api = api.clone();
                async move { api.create(&PostParams::default(), &obj).await.is_ok() }
            })
            .buffer_unordered(16)
            .collect()
            .await;
        created += results.into_iter().filter(|ok| *ok).count();
    }
    if !refused.is_empty() {
        eprintln!("{file}: left out {refused:?}");
    }
    created
}

/// One streaming list: the objects until the initial-events-end bookmark.
async fn stream<K>(lw: &ApiListerWatcher<K>) -> usize
where
    K: kube::Resource + Clone + DeserializeOwned + std::fmt::Debug + Send + Sync + 'static,
{
    let mut options = WatchOptions::new("");
    options.send_initial_events = true;
    options.resource_version_match = Some(VersionMatch::NotOlderThan);
    options.timeout_seconds = Some(300);
    let mut events = lw
        .watch(&options)
        .await
        .unwrap_or_else(|e| panic!("watch: {e}"));
    let mut n = 0;
    while let Some(event) = events.next().await {
        match event.unwrap_or_else(|e| panic!("event: {e}")) {
            WatchEvent::Added(_) => n += 1,
            WatchEvent::Bookmark(b) if b.is_initial_events_end() => return n,
            _ => {}
        }
    }
    panic!("the streaming list ended before its bookmark");
}

fn lister_watcher<K>(client: kube::Client, format: WireFormat, gzip: bool) -> ApiListerWatcher<K>
where
    K: kube::Resource<Scope = k8s_openapi::NamespaceResourceScope, DynamicType = ()> + 'static,
{
    ApiListerWatcher::new(Api::namespaced(client, NAMESPACE))
        .wire_format(format)
        .gzip(gzip)
}

fn bench_kind<K>(
    c: &mut Criterion,
    rt: &tokio::runtime::Runtime,
    env: &kcr_testenv::TestEnv,
    kind: &str,
    n: usize,
    wire: &mut Vec<String>,
) where
    K: kube::Resource<Scope = k8s_openapi::NamespaceResourceScope, DynamicType = ()>
        + Clone
        + DeserializeOwned
        + std::fmt::Debug
        + Send
        + Sync
        + 'static,
{
    let client = env.client();
    let mut group = c.benchmark_group(format!("watch_list_gzip/{kind}"));
    group.throughput(Throughput::Elements(n as u64));
    for format in [WireFormat::Protobuf, WireFormat::Json] {
        for gzip in [false, true] {
            let encoding = if gzip { "gzip" } else { "identity" };
            let lw = lister_watcher::<K>(client.clone(), format, gzip);
            group.bench_function(format!("{format:?}/{encoding}/{n}"), |b| {
                b.iter_custom(|iters| {
                    rt.block_on(async {
                        let started = Instant::now();
                        for _ in 0..iters {
                            assert_eq!(stream(&lw).await, n);
                        }
                        started.elapsed()
                    })
                });
            });
            let bytes = rt.block_on(async {
                let proxy = CountingProxy::start(env.addr()).await;
                let lw = lister_watcher::<K>(proxy.client(env), format, gzip);
                assert_eq!(stream(&lw).await, n);
                proxy.bytes()
            });
            wire.push(format!(
                "watch_list_gzip/{kind}/{format:?}/{encoding}/{n}: {bytes} bytes on the wire \
                 ({:.0} per object)",
                bytes as f64 / n as f64
            ));
        }
    }
    group.finish();
}

fn main() {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap_or_else(|e| panic!("runtime: {e}"));
    let copies = copies();
    let (env, counts) = rt.block_on(async {
        let env = kcr_testenv::TestEnv::builder()
            .start()
            .await
            .unwrap_or_else(|e| panic!("testenv: {e}"));
        let client = env.client();
        let ns = Namespace {
            metadata: ObjectMeta {
                name: Some(NAMESPACE.to_owned()),
                ..ObjectMeta::default()
            },
            ..Namespace::default()
        };
        Api::<Namespace>::all(client.clone())
            .create(&PostParams::default(), &ns)
            .await
            .unwrap_or_else(|e| panic!("namespace: {e}"));
        let pods = seed::<Pod>(&client, "core_v1_pods.json", copies).await;
        let config_maps = seed::<ConfigMap>(&client, "core_v1_configmaps.json", copies).await;
        let secrets = seed::<Secret>(&client, "core_v1_secrets.json", copies).await;
        (env, (pods, config_maps, secrets))
    });
    let mut c = Criterion::default()
        .sample_size(10)
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(5))
        .configure_from_args();
    let mut wire = Vec::new();
    bench_kind::<Pod>(&mut c, &rt, &env, "pods", counts.0, &mut wire);
    bench_kind::<ConfigMap>(&mut c, &rt, &env, "configmaps", counts.1, &mut wire);
    bench_kind::<Secret>(&mut c, &rt, &env, "secrets", counts.2, &mut wire);
    c.final_summary();
    for line in wire {
        println!("{line}");
    }
    rt.block_on(env.shutdown());
}
