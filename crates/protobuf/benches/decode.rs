//! Decoding a list page of 500 ConfigMaps as kube-apiserver returns them (two managedFields
//! entries and the last-applied annotation each): JSON with serde_json beside protobuf with
//! kcr-protobuf, into k8s-openapi's `ConfigMap`, managedFields kept and skipped. The same for
//! a page of 500 Pods, copies of the Pod a real kube-apiserver v1.36.2 returned
//! (`tests/data/pod.json`: a ReplicaSet's Pod with its spec, status and managedFields), each
//! with its own name.
//!
//! The page is kcr-informer's bench fixture (`initial_sync`). `cargo bench -p kcr-protobuf
//! --bench decode`. Last run (release, shared 2-core machine), per page of 500: JSON (whole)
//! 3.09 ms, protobuf (whole) 3.08 ms, protobuf skipping managedFields 0.91 ms; the page is
//! 655 KiB as JSON and 485 KiB as protobuf. Whole objects cost as much in either format:
//! `FieldsV1` is JSON inside protobuf, and times are formatted as text for k8s-openapi's
//! `Deserialize`. A later run (load average about 2): ConfigMaps JSON 2.58 ms, protobuf
//! 2.70 ms, skipping 0.86 ms; Pods (4,153 KiB as JSON, 2,810 KiB as protobuf) JSON 63.1 ms,
//! protobuf 56.1 ms, protobuf skipping managedFields 16.3 ms (a Pod's managedFields, parsed
//! as JSON values either way, are most of the cost of a whole one).

#![allow(missing_docs)]

use std::hint::black_box;

use criterion::{Criterion, criterion_group, criterion_main};
use k8s_openapi::api::core::v1::{ConfigMap, Pod};
use kcr_protobuf::{DecodeOptions, Schema, list};
use serde_json::Value;

fn page() -> (Vec<u8>, Vec<u8>) {
    let json = include_bytes!("data/configmap-list-page.json");
    let list: Value = serde_json::from_slice(json).unwrap();
    let items = list["items"].as_array().unwrap();
    let meta = list["metadata"].as_object().unwrap();
    let schema = Schema::for_kind("v1", "ConfigMap").unwrap();
    let protobuf = list::encode(schema, meta, items).unwrap();
    (json.to_vec(), protobuf)
}

fn pod_page() -> (Vec<u8>, Vec<u8>) {
    let pod: Value = serde_json::from_str(include_str!("../tests/data/pod.json")).unwrap();
    let items: Vec<Value> = (0..500)
        .map(|i| {
            let mut item = pod.clone();
            item["metadata"]["name"] = Value::String(format!("web-{i:05}"));
            item
        })
        .collect();
    let meta = serde_json::json!({"resourceVersion": "1000"});
    let list = serde_json::json!({
        "apiVersion": "v1", "kind": "PodList", "metadata": meta, "items": items,
    });
    let schema = Schema::for_kind("v1", "Pod").unwrap();
    let protobuf = list::encode(schema, meta.as_object().unwrap(), &items).unwrap();
    (serde_json::to_vec(&list).unwrap(), protobuf)
}

fn decode_pods(c: &mut Criterion) {
    let (json, protobuf) = pod_page();
    eprintln!(
        "pod page: {} KiB as JSON, {} KiB as protobuf",
        json.len() / 1024,
        protobuf.len() / 1024
    );
    let mut group = c.benchmark_group("decode_500_pods");
    group.bench_function("json", |b| {
        b.iter(|| {
            let list: k8s_openapi::List<Pod> = serde_json::from_slice(black_box(&json)).unwrap();
            list.items.len()
        });
    });
    for (name, skip) in [("protobuf", false), ("protobuf_skip_managed_fields", true)] {
        let options = DecodeOptions::default().skip_managed_fields(skip);
        group.bench_function(name, |b| {
            b.iter(|| {
                list::decode::<Pod>(black_box(&protobuf), options)
                    .unwrap()
                    .items
                    .len()
            });
        });
    }
    group.finish();
}

fn decode(c: &mut Criterion) {
    let (json, protobuf) = page();
    eprintln!(
        "page: {} KiB as JSON, {} KiB as protobuf",
        json.len() / 1024,
        protobuf.len() / 1024
    );
    let mut group = c.benchmark_group("decode_500_configmaps");
    group.bench_function("json", |b| {
        b.iter(|| {
            let list: k8s_openapi::List<ConfigMap> =
                serde_json::from_slice(black_box(&json)).unwrap();
            list.items.len()
        });
    });
    group.bench_function("protobuf", |b| {
        b.iter(|| {
            list::decode::<ConfigMap>(black_box(&protobuf), DecodeOptions::default())
                .unwrap()
                .items
                .len()
        });
    });
    group.bench_function("protobuf_skip_managed_fields", |b| {
        let options = DecodeOptions::default().skip_managed_fields(true);
        b.iter(|| {
            list::decode::<ConfigMap>(black_box(&protobuf), options)
                .unwrap()
                .items
                .len()
        });
    });
    group.finish();
}

criterion_group!(benches, decode, decode_pods);
criterion_main!(benches);
