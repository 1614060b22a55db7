//! Decoding a list page of 500 ConfigMaps as kube-apiserver returns them (two managedFields
//! entries and the last-applied annotation each): JSON with serde_json beside protobuf with
//! kcr-protobuf, into k8s-openapi's `ConfigMap`, managedFields kept and skipped.
//!
//! The page is kcr-informer's bench fixture (`initial_sync`). `cargo bench -p kcr-protobuf
//! --bench decode`. Last run (release, shared 2-core machine), per page of 500: JSON (whole)
//! 3.09 ms, protobuf (whole) 3.08 ms, protobuf skipping managedFields 0.91 ms; the page is
//! 655 KiB as JSON and 485 KiB as protobuf. Whole objects cost as much in either format:
//! `FieldsV1` is JSON inside protobuf, and times are formatted as text for k8s-openapi's
//! `Deserialize`.

#![allow(missing_docs)]

use std::hint::black_box;

use criterion::{Criterion, criterion_group, criterion_main};
use k8s_openapi::api::core::v1::ConfigMap;
use kcr_protobuf::{DecodeOptions, decode_list, encode_list, schema_for};
use serde_json::Value;

fn page() -> (Vec<u8>, Vec<u8>) {
    let json = include_bytes!("../../informer/benches/data/configmap-list-page.json");
    let list: Value = serde_json::from_slice(json).unwrap();
    let items = list["items"].as_array().unwrap();
    let meta = list["metadata"].as_object().unwrap();
    let schema = schema_for("v1", "ConfigMap").unwrap();
    let protobuf = encode_list(schema, meta, items).unwrap();
    (json.to_vec(), protobuf)
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
            decode_list::<ConfigMap>(black_box(&protobuf), DecodeOptions::default())
                .unwrap()
                .items
                .len()
        });
    });
    group.bench_function("protobuf_skip_managed_fields", |b| {
        let options = DecodeOptions::default().skip_managed_fields(true);
        b.iter(|| {
            decode_list::<ConfigMap>(black_box(&protobuf), options)
                .unwrap()
                .items
                .len()
        });
    });
    group.finish();
}

criterion_group!(benches, decode);
criterion_main!(benches);
