//! What the compact cache (`IndexedStore::compact`) costs to read and write,
//! beside the default cache in the same run, on objects as a real
//! kube-apiserver returns them (`fixture.rs`: 50,000 ConfigMaps and 10,000
//! Pods, namespaces of 1,000, managedFields dropped), both caches with the
//! namespace index. Its bytes per object are in the `memory` bench. Run
//! with `cargo bench -p kcr-cache --bench compact`.
//!
//! - `get`: `get_by_key` of every key in turn (the compact cache's 256
//!   decoded objects almost never hold the next one: each get decodes), and
//!   of one key again and again (served from the decoded cache);
//! - `by_index` of a 1,000-object namespace and `list` of them all: the
//!   default cache hands out its shared snapshot, the compact one decodes
//!   every object at each call;
//! - `add` of every object into an empty cache (the compact one encodes);
//! - the encoding chosen (JSON, `serde_json`) beside CBOR (`ciborium`, a
//!   binary serde format that, like JSON, describes itself, as
//!   `k8s-openapi`'s deserializers need): bytes per encoded object (printed)
//!   and the time to decode one.

#![allow(missing_docs)]

mod fixture;

use std::hint::black_box;
use std::sync::Arc;
use std::time::Duration;

use criterion::{BatchSize, Criterion, Throughput, criterion_group, criterion_main};
use k8s_openapi::api::core::v1::{ConfigMap, Pod};
use kcr_cache::{IndexedStore, NAMESPACE_INDEX};
use kube_core::Resource;
use serde::Serialize;
use serde::de::DeserializeOwned;

const NAMESPACE: &str = "namespace-007";

fn filled<K>(objects: &[Arc<K>], compact: bool) -> IndexedStore<K>
where
    K: Resource + Serialize + DeserializeOwned + Send + Sync + 'static,
{
    let cache = IndexedStore::<K>::namespace_indexed();
    let cache = if compact { cache.compact() } else { cache };
    for obj in objects {
        cache.add(obj.clone()).expect("valid object");
    }
    cache
}

fn reads_of<K>(c: &mut Criterion, kind: &str, objects: Vec<K>, list: bool)
where
    K: Resource + Serialize + DeserializeOwned + Send + Sync + 'static,
{
    let n = objects.len();
    let objects: Vec<Arc<K>> = objects.into_iter().map(Arc::new).collect();
    let caches = [
        ("default", filled(&objects, false)),
        ("compact", filled(&objects, true)),
    ];
    let keys = caches[0].1.list_keys();

    let mut group = c.benchmark_group(format!("compact_get_{kind}_{}k", n / 1000));
    group.throughput(Throughput::Elements(1));
    for (label, cache) in &caches {
        let mut i = 0;
        group.bench_function(format!("{label}/every_key_in_turn"), |b| {
            b.iter(|| {
                i = (i + 1) % keys.len();
                cache.get_by_key(black_box(&keys[i]))
            })
        });
        let one = &keys[n / 2];
        group.bench_function(format!("{label}/one_key_again"), |b| {
            b.iter(|| cache.get_by_key(black_box(one)))
        });
    }
    group.finish();

    let mut group = c.benchmark_group(format!("compact_by_index_{kind}_namespace_1000"));
    for (label, cache) in &caches {
        assert_eq!(
            cache
                .by_index(NAMESPACE_INDEX, NAMESPACE)
                .map(|v| v.len())
                .ok(),
            Some(fixture::PER_NAMESPACE)
        );
        group.bench_function(*label, |b| {
            b.iter(|| cache.by_index(NAMESPACE_INDEX, black_box(NAMESPACE)))
        });
    }
    group.finish();

    if list {
        let mut group = c.benchmark_group(format!("compact_list_{kind}_{}k", n / 1000));
        for (label, cache) in &caches {
            group.bench_function(*label, |b| b.iter(|| cache.list()));
        }
        group.finish();

        let mut group = c.benchmark_group(format!("compact_add_all_{kind}_{}k", n / 1000));
        group.throughput(Throughput::Elements(n as u64));
        for (label, compact) in [("default", false), ("compact", true)] {
            group.bench_function(label, |b| {
                b.iter_batched(
                    || objects.clone(),
                    |objects| {
                        let cache = IndexedStore::<K>::namespace_indexed();
                        let cache = if compact { cache.compact() } else { cache };
                        for obj in objects {
                            cache.add(obj).expect("valid object");
                        }
                        cache
                    },
                    BatchSize::PerIteration,
                )
            });
        }
        group.finish();
    }
}

/// JSON beside CBOR for `n` objects: mean encoded bytes, and decoding one.
fn encodings_of<K>(c: &mut Criterion, kind: &str, objects: &[K])
where
    K: Serialize + DeserializeOwned,
{
    let json: Vec<Vec<u8>> = objects
        .iter()
        .map(|o| serde_json::to_vec(o).expect("encodes"))
        .collect();
    let cbor: Vec<Vec<u8>> = objects
        .iter()
        .map(|o| {
            let mut out = Vec::new();
            ciborium::into_writer(o, &mut out).expect("encodes");
            out
        })
        .collect();
    let mean = |all: &[Vec<u8>]| all.iter().map(Vec::len).sum::<usize>() as f64 / all.len() as f64;
    println!(
        "compact_encoding_{kind}: mean bytes per encoded object: JSON {:.0}, CBOR {:.0}",
        mean(&json),
        mean(&cbor)
    );
    let mut group = c.benchmark_group(format!("compact_decode_one_{kind}"));
    let mut i = 0;
    group.bench_function("json", |b| {
        b.iter(|| {
            i = (i + 1) % json.len();
            serde_json::from_slice::<K>(black_box(&json[i])).expect("decodes")
        })
    });
    group.bench_function("cbor", |b| {
        b.iter(|| {
            i = (i + 1) % cbor.len();
            ciborium::from_reader::<K, _>(black_box(&cbor[i][..])).expect("decodes")
        })
    });
    group.finish();
}

fn reads(c: &mut Criterion) {
    let config_maps = fixture::config_maps(50_000);
    encodings_of(c, "configmap", &config_maps[..1000]);
    reads_of::<ConfigMap>(c, "configmap", config_maps, true);
    let pods = fixture::pods(10_000);
    encodings_of(c, "pod", &pods[..100]);
    reads_of::<Pod>(c, "pod", pods, false);
}

fn config() -> Criterion {
    Criterion::default()
        .sample_size(10)
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(2))
        .configure_from_args()
}

criterion_group! {
    name = benches;
    config = config();
    targets = reads
}
criterion_main!(benches);
