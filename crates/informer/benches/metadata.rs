//! Metadata-only caches against full ones, on Secrets and Pods as a real kube-apiserver v1.36.2
//! returned them (`data/core_v1_secrets.json`: 6 Secrets of six types; `data/core_v1_pods.json`:
//! 16 Pods of Deployments, StatefulSets, Jobs, DaemonSets and standalone ones, with kubelet-like
//! statuses), copied and renamed to `KCR_BENCH_OBJECTS` objects (10,000 by default):
//!
//! - bytes per cached object (heap bytes requested, counted by a counting global allocator),
//!   informer all-in (cache, keys, namespace index), each object decoded as the factory's
//!   informers decode it by default: from protobuf, managedFields skipped. Full: `Secret` /
//!   `Pod` (`informer::<K>()`); metadata: `PartialObjectMeta<K>` (`metadata_informer::<K>()`),
//!   from the `PartialObjectMetadata` protobuf message, and from JSON (kube-client's form,
//!   whose `types` are kept);
//! - the time to decode one list of all of them (median of 9 runs), in protobuf (the factory's
//!   default) and in JSON, full list against `PartialObjectMetadataList`, managedFields
//!   skipped as the informer skips them.
//!
//! Run with `cargo bench -p kcr-informer --bench metadata` (the table is also written to
//! `<target>/kcr-metadata.md`, which `cargo xtask bench` prints).
//!
//! Last run (10,000 of each, load average 9): bytes per cached Secret 2,246 full, 1,315
//! metadata (1,350 from JSON); per Pod 30,297 full, 1,783 metadata (2,085 from JSON); a list
//! decodes in protobuf in 76.3 / 27.9 ms (Secrets) and 911 / 73.2 ms (Pods), in JSON in
//! 150 / 158 ms and 1,677 / 732 ms.

#![allow(missing_docs)]

mod support;

use std::alloc::System;
use std::sync::Arc;
use std::time::Duration;

use tokio::time::Instant;

use k8s_openapi::api::core::v1::{Pod, Secret};
use kcr_cache::{Indexers, NAMESPACE_INDEX, meta_namespace_index_func};
use kcr_informer::SharedIndexInformer;
use kcr_protobuf::{DecodeOptions, Schema};
use kube::Resource;
use kube::core::PartialObjectMeta;
use serde::de::DeserializeOwned;
use serde_json::{Map, Value, json};
use stats_alloc::{INSTRUMENTED_SYSTEM, Region, StatsAlloc};
use tokio_util::sync::CancellationToken;

use support::InMemory;

#[global_allocator]
static GLOBAL: &StatsAlloc<System> = &INSTRUMENTED_SYSTEM;

fn objects() -> usize {
    std::env::var("KCR_BENCH_OBJECTS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(10_000)
}

/// The items of a recorded list, each renamed to a copy number `i` (`<name>-<i>`), as their
/// JSON form with `apiVersion` and `kind`.
fn copies(file: &str, api_version: &str, kind: &str, n: usize) -> Vec<Map<String, Value>> {
    let path = format!("{}/benches/data/{file}", env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    let list: Value = serde_json::from_str(&text).unwrap_or_else(|e| panic!("{path}: {e}"));
    let items = list["items"]
        .as_array()
        .unwrap_or_else(|| panic!("{path}: no items"));
    (0..n)
        .map(|i| {
            let mut item = items[i % items.len()].clone();
            let name = format!(
                "{}-{i:06}",
                item["metadata"]["name"].as_str().unwrap_or("x")
            );
            item["metadata"]["name"] = Value::String(name);
            item["apiVersion"] = json!(api_version);
            item["kind"] = json!(kind);
            match item {
                Value::Object(map) => map,
                _ => unreachable!(),
            }
        })
        .collect()
}

/// The `PartialObjectMetadata` form of an object.
fn partial(object: &Map<String, Value>) -> Map<String, Value> {
    let mut map = Map::new();
    map.insert("kind".into(), json!("PartialObjectMetadata"));
    map.insert("apiVersion".into(), json!("meta.k8s.io/v1"));
    map.insert("metadata".into(), object["metadata"].clone());
    map
}

fn schema(api_version: &str, kind: &str) -> &'static Schema {
    Schema::for_kind(api_version, kind).unwrap_or_else(|| panic!("no table for {kind}"))
}

fn lean() -> DecodeOptions {
    DecodeOptions::default().skip_managed_fields(true)
}

/// Heap bytes still live since `region` started.
fn live(region: &Region<'_, System>) -> i64 {
    let s = region.change();
    s.bytes_allocated as i64 - s.bytes_deallocated as i64
}

/// An informer as the factory builds one (namespace index, managedFields dropped), synced
/// from `count` objects `make` decodes; returns it and the heap bytes it holds per object.
fn informer_bytes<K>(
    runtime: &tokio::runtime::Runtime,
    count: usize,
    make: Arc<dyn Fn(usize) -> K + Send + Sync>,
) -> (SharedIndexInformer<K>, f64)
where
    K: Resource + Clone + Send + Sync + std::fmt::Debug + 'static,
{
    let region = Region::new(GLOBAL);
    let mut indexers = Indexers::default();
    indexers.insert(NAMESPACE_INDEX.to_owned(), meta_namespace_index_func());
    let informer = SharedIndexInformer::new(InMemory { make, count }, Duration::ZERO, indexers)
        .name("metadata_bench");
    runtime.block_on(async {
        let cancel = CancellationToken::new();
        let task = tokio::spawn({
            let (informer, cancel) = (informer.clone(), cancel.clone());
            async move { informer.run(cancel).await }
        });
        while !informer.has_synced() || informer.get_indexer().len() < count {
            tokio::time::sleep(Duration::from_millis(1)).await;
        }
        cancel.cancel();
        let _ = task.await;
    });
    let bytes = live(&region) as f64 / count as f64;
    (informer, bytes)
}

/// The median of 9 timed runs of `f`.
fn median(mut f: impl FnMut()) -> Duration {
    f();
    let mut times: Vec<Duration> = (0..9)
        .map(|_| {
            let start = Instant::now();
            f();
            start.elapsed()
        })
        .collect();
    times.sort();
    times[times.len() / 2]
}

#[derive(serde::Deserialize)]
#[serde(bound(deserialize = "K: DeserializeOwned"))]
struct JsonList<K> {
    items: Vec<K>,
}

struct Kind {
    name: &'static str,
    api_version: &'static str,
    kind: &'static str,
    file: &'static str,
}

fn run<K>(runtime: &tokio::runtime::Runtime, what: &Kind, n: usize, rows: &mut Vec<String>)
where
    K: Resource<DynamicType = ()>
        + Clone
        + DeserializeOwned
        + Send
        + Sync
        + std::fmt::Debug
        + 'static,
{
    let objects = copies(what.file, what.api_version, what.kind, n);
    let full_schema = schema(what.api_version, what.kind);
    let meta_schema = schema("meta.k8s.io/v1", "PartialObjectMetadata");
    let encode = |object: &Map<String, Value>, schema: &Schema| {
        kcr_protobuf::message::encode(object, schema).unwrap_or_else(|e| panic!("encode: {e}"))
    };
    let full_pb: Arc<Vec<Vec<u8>>> =
        Arc::new(objects.iter().map(|o| encode(o, full_schema)).collect());
    let meta_pb: Arc<Vec<Vec<u8>>> = Arc::new(
        objects
            .iter()
            .map(|o| encode(&partial(o), meta_schema))
            .collect(),
    );
    let meta_json: Arc<Vec<Vec<u8>>> = Arc::new(
        objects
            .iter()
            .map(|o| {
                let mut p = partial(o);
                if let Some(m) = p["metadata"].as_object_mut() {
                    m.remove("managedFields");
                }
                serde_json::to_vec(&p).unwrap_or_default()
            })
            .collect(),
    );

    // Bytes per cached object, full against metadata, in the same run.
    let (full, full_bytes) = informer_bytes::<K>(runtime, n, {
        let pb = full_pb.clone();
        Arc::new(move |i| {
            kcr_protobuf::message::decode(&pb[i], full_schema, lean())
                .unwrap_or_else(|e| panic!("decode: {e}"))
        })
    });
    drop(full);
    let (meta, meta_bytes) = informer_bytes::<PartialObjectMeta<K>>(runtime, n, {
        let pb = meta_pb.clone();
        Arc::new(move |i| {
            kcr_protobuf::message::decode(&pb[i], meta_schema, lean())
                .unwrap_or_else(|e| panic!("decode: {e}"))
        })
    });
    drop(meta);
    let (meta, meta_json_bytes) = informer_bytes::<PartialObjectMeta<K>>(runtime, n, {
        let json = meta_json.clone();
        Arc::new(move |i| serde_json::from_slice(&json[i]).unwrap_or_else(|e| panic!("{e}")))
    });
    drop(meta);
    rows.push(format!(
        "| bytes per cached {}, informer all-in | {:.0} | {:.0} ({:.3}×); from JSON, `types` kept: {:.0} |",
        what.name,
        full_bytes,
        meta_bytes,
        meta_bytes / full_bytes,
        meta_json_bytes
    ));

    // The time to decode one list of all of them.
    let list_meta = json!({"resourceVersion": "1"});
    let list_meta = list_meta.as_object().unwrap_or_else(|| unreachable!());
    let full_list = kcr_protobuf::list::encode_messages(
        full_schema,
        list_meta,
        full_pb.iter().map(Vec::as_slice),
    )
    .unwrap_or_else(|e| panic!("{e}"));
    let meta_list = kcr_protobuf::list::encode_messages(
        meta_schema,
        list_meta,
        meta_pb.iter().map(Vec::as_slice),
    )
    .unwrap_or_else(|e| panic!("{e}"));
    let pb_full = median(|| {
        let list =
            kcr_protobuf::list::decode::<K>(&full_list, lean()).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(list.items.len(), n);
    });
    let pb_meta = median(|| {
        let list = kcr_protobuf::list::decode::<PartialObjectMeta<K>>(&meta_list, lean())
            .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(list.items.len(), n);
    });
    let json_full_body = serde_json::to_vec(&json!({
        "kind": format!("{}List", what.kind), "apiVersion": what.api_version,
        "metadata": {"resourceVersion": "1"}, "items": objects,
    }))
    .unwrap_or_default();
    let json_meta_body = serde_json::to_vec(&json!({
        "kind": "PartialObjectMetadataList", "apiVersion": "meta.k8s.io/v1",
        "metadata": {"resourceVersion": "1"},
        "items": objects.iter().map(partial).collect::<Vec<_>>(),
    }))
    .unwrap_or_default();
    let json_full = median(|| {
        let list: JsonList<K> =
            serde_json::from_slice(&json_full_body).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(list.items.len(), n);
    });
    let json_meta = median(|| {
        let list: JsonList<PartialObjectMeta<K>> =
            serde_json::from_slice(&json_meta_body).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(list.items.len(), n);
    });
    let ms = |d: Duration| d.as_secs_f64() * 1e3;
    rows.push(format!(
        "| decode a list of {n} {}s, protobuf, managedFields skipped ({} / {} KiB) | {:.1} ms | {:.1} ms ({:.2}×) |",
        what.name,
        full_list.len() / 1024,
        meta_list.len() / 1024,
        ms(pb_full),
        ms(pb_meta),
        ms(pb_meta) / ms(pb_full)
    ));
    rows.push(format!(
        "| decode a list of {n} {}s, JSON, managedFields decoded ({} / {} KiB) | {:.1} ms | {:.1} ms ({:.2}×) |",
        what.name,
        json_full_body.len() / 1024,
        json_meta_body.len() / 1024,
        ms(json_full),
        ms(json_meta),
        ms(json_meta) / ms(json_full)
    ));
}

fn main() {
    // As criterion does: a filter argument that does not name this bench skips it.
    let filter = std::env::args().skip(1).find(|a| !a.starts_with('-'));
    if filter.is_some_and(|f| !"metadata".contains(&f) && !f.contains("metadata")) {
        return;
    }
    let n = objects();
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap_or_else(|e| panic!("runtime: {e}"));
    // Register the metric families and warm the runtime outside the regions.
    drop(informer_bytes::<Secret>(
        &runtime,
        1,
        Arc::new(|_| Secret {
            metadata: kube::api::ObjectMeta {
                name: Some("warm".into()),
                ..Default::default()
            },
            ..Secret::default()
        }),
    ));
    let mut rows = vec![
        "| benchmark | full object (baseline, same run) | metadata only |".to_owned(),
        "| --- | --- | --- |".to_owned(),
    ];
    run::<Secret>(
        &runtime,
        &Kind {
            name: "Secret",
            api_version: "v1",
            kind: "Secret",
            file: "core_v1_secrets.json",
        },
        n,
        &mut rows,
    );
    run::<Pod>(
        &runtime,
        &Kind {
            name: "Pod",
            api_version: "v1",
            kind: "Pod",
            file: "core_v1_pods.json",
        },
        n,
        &mut rows,
    );
    let table = format!(
        "Metadata-only caches ({n} objects of each kind):\n\n{}\n",
        rows.join("\n")
    );
    println!("{table}");
    if let Some(dir) = target_dir() {
        let path = dir.join("kcr-metadata.md");
        if let Err(e) = std::fs::write(&path, &table) {
            eprintln!("cannot write {}: {e}", path.display());
        }
    }
}

/// Where cargo puts its output: three levels above this binary
/// (`<target>/release/deps/metadata-<hash>`), for `cargo xtask bench` to print the table.
fn target_dir() -> Option<std::path::PathBuf> {
    std::env::current_exe()
        .ok()?
        .ancestors()
        .nth(3)
        .map(std::path::PathBuf::from)
}
