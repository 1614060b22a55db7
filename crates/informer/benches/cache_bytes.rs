//! Where the bytes of a cached ConfigMap go: heap bytes (as requested from
//! the allocator, counted by a counting global allocator) and allocations
//! per object, for 50,000 ConfigMaps as a real kube-apiserver returns them
//! (`fixture`: labels, data, the last-applied annotation, two managedFields
//! entries), each decoded from its own JSON as a list decodes it:
//!
//! - the decoded object, with and without `managedFields`, and field by
//!   field: the `Arc` with the inline struct, each `ObjectMeta` string, each
//!   map's strings and its `BTreeMap` node;
//! - kcr's `IndexedStore` beyond the objects: key strings, the object table and key
//!   hash table, the namespace index;
//! - kcr's informer all-in (factory defaults, and keeping managedFields)
//!   beside kube-runtime's reflector `Store` fed as its watcher feeds it,
//!   with and without managedFields stripped before it.
//!
//! The allocator's own cost per allocation (glibc: 8 bytes of header,
//! rounding to 16, at least 32 bytes) is not in the bytes; the allocation
//! counts show how much it adds. Run with
//! `cargo bench -p kcr-informer --bench cache_bytes`
//! (`KCR_BENCH_OBJECTS` to change the count).
//!
//! Last run (50,000 objects): a decoded ConfigMap is 8,015 bytes with its
//! managedFields, 2,639 without (3,008 with glibc's per-allocation cost), of
//! which the three `BTreeMap` nodes (labels, annotations, data: 544 bytes
//! each however few entries) are 1,632 and the `Arc` with the inline struct
//! 448; kcr's informer holds 2,781 bytes per object all-in (cache keys, table
//! and namespace index 142 of them), kube-runtime's `Store` 2,853. The
//! decoded strings and vectors have no spare capacity (0 bytes per object:
//! serde_json allocates each string at its length), so `shrink_to_fit`
//! after decoding frees nothing; the `BTreeMap` nodes cannot shrink.

#![allow(missing_docs)]

mod fixture;
mod support;

use std::alloc::System;
use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use k8s_openapi::api::core::v1::ConfigMap;
use kcr_cache::{
    IndexedStore, Indexers, NAMESPACE_INDEX, meta_namespace_index_func, meta_namespace_key_func,
};
use kcr_informer::SharedIndexInformer;
use kube_runtime::reflector::store::Writer;
use kube_runtime::watcher::Event;
use stats_alloc::{INSTRUMENTED_SYSTEM, Region, StatsAlloc};
use tokio_util::sync::CancellationToken;

use support::InMemory;

#[global_allocator]
static GLOBAL: &StatsAlloc<System> = &INSTRUMENTED_SYSTEM;

fn objects() -> usize {
    std::env::var("KCR_BENCH_OBJECTS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(50_000)
}

/// Heap held: bytes requested and allocations live.
#[derive(Debug, Clone, Copy, Default)]
struct Heap {
    bytes: i64,
    blocks: i64,
}

impl std::ops::Sub for Heap {
    type Output = Heap;
    fn sub(self, o: Heap) -> Heap {
        Heap {
            bytes: self.bytes - o.bytes,
            blocks: self.blocks - o.blocks,
        }
    }
}

/// Heap still live since `region` started (negative: freed).
fn live(region: &Region<'_, System>) -> Heap {
    let s = region.change();
    Heap {
        // A realloc already counts its growth in `bytes_allocated` (its
        // shrinking in `bytes_deallocated`); `bytes_reallocated` repeats it.
        bytes: s.bytes_allocated as i64 - s.bytes_deallocated as i64,
        blocks: s.allocations as i64 - s.deallocations as i64,
    }
}

/// Builds something inside a region; returns it and the heap it holds.
fn measure<S>(build: impl FnOnce() -> S) -> (S, Heap) {
    let region = Region::new(GLOBAL);
    let built = build();
    let heap = live(&region);
    (built, heap)
}

/// The heap freed by `f`.
fn freed(f: impl FnOnce()) -> Heap {
    let region = Region::new(GLOBAL);
    f();
    let h = live(&region);
    Heap {
        bytes: -h.bytes,
        blocks: -h.blocks,
    }
}

fn decode(json: &[u8]) -> ConfigMap {
    serde_json::from_slice(json).unwrap_or_else(|e| panic!("a ConfigMap: {e}"))
}

fn strip(mut cm: ConfigMap) -> ConfigMap {
    cm.metadata.managed_fields = None;
    cm
}

/// The heap of a map's keys and values (each non-empty one is an allocation).
fn map_strings(map: Option<&BTreeMap<String, String>>) -> Heap {
    let mut h = Heap::default();
    for s in map.into_iter().flatten().flat_map(|(k, v)| [k, v]) {
        h.bytes += s.capacity() as i64;
        h.blocks += i64::from(s.capacity() > 0);
    }
    h
}

/// Bytes allocated but unused in a decoded object's strings and vectors
/// (capacity beyond length): what `shrink_to_fit` after decoding could give
/// back. The `BTreeMap` nodes have a fixed size and cannot shrink.
fn spare_capacity(cm: &ConfigMap) -> i64 {
    let meta = &cm.metadata;
    let strings = [
        &meta.name,
        &meta.namespace,
        &meta.uid,
        &meta.resource_version,
        &meta.generate_name,
    ]
    .into_iter()
    .flatten()
    .chain(
        [&meta.labels, &meta.annotations, &cm.data]
            .into_iter()
            .flatten()
            .flat_map(|m| m.iter().flat_map(|(k, v)| [k, v])),
    )
    .map(|s| s.capacity() - s.len());
    let vectors = [
        meta.finalizers.as_ref().map(|v| v.capacity() - v.len()),
        meta.owner_references
            .as_ref()
            .map(|v| v.capacity() - v.len()),
    ]
    .into_iter()
    .flatten();
    strings.chain(vectors).sum::<usize>() as i64
}

/// What glibc's malloc takes for a request of `size` bytes: 8 bytes of
/// header, rounded up to 16, at least 32.
fn chunk(size: usize) -> i64 {
    if size == 0 {
        0
    } else {
        ((size + 8).div_ceil(16) * 16).max(32) as i64
    }
}

/// glibc's bytes for one decoded ConfigMap without managedFields, every
/// allocation counted by its size: the `Arc`, the strings, and one node of
/// `node` bytes per map (maps of at most 11 entries).
fn object_chunks(cm: &ConfigMap, node: usize) -> i64 {
    let m = &cm.metadata;
    let strings = [&m.name, &m.namespace, &m.uid, &m.resource_version]
        .into_iter()
        .flatten()
        .map(|s| chunk(s.capacity()))
        .sum::<i64>();
    let maps = [&m.labels, &m.annotations, &cm.data]
        .into_iter()
        .flatten()
        .map(|map| {
            chunk(node)
                + map
                    .iter()
                    .map(|(k, v)| chunk(k.capacity()) + chunk(v.capacity()))
                    .sum::<i64>()
        })
        .sum::<i64>();
    chunk(std::mem::size_of::<ConfigMap>() + 2 * std::mem::size_of::<usize>()) + strings + maps
}

fn sum(heaps: impl Iterator<Item = Heap>) -> Heap {
    heaps.fold(Heap::default(), |a, h| Heap {
        bytes: a.bytes + h.bytes,
        blocks: a.blocks + h.blocks,
    })
}

fn informer(
    runtime: &tokio::runtime::Runtime,
    json: &Arc<Vec<Vec<u8>>>,
    count: usize,
    keep_managed_fields: bool,
) -> SharedIndexInformer<ConfigMap> {
    // What `SharedInformerFactory::informer` builds, over an in-memory list.
    let mut indexers = Indexers::default();
    indexers.insert(NAMESPACE_INDEX.to_owned(), meta_namespace_index_func());
    let informer = SharedIndexInformer::new(
        InMemory {
            make: Arc::new({
                let json = json.clone();
                move |i| decode(&json[i])
            }),
            count,
        },
        Duration::ZERO,
        indexers,
    )
    .name("cache_bytes")
    .keep_managed_fields(keep_managed_fields);
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
    informer
}

fn kube_runtime_store(json: &[Vec<u8>], stripped: bool) -> Writer<ConfigMap> {
    let mut writer = Writer::<ConfigMap>::default();
    writer.apply_watcher_event(&Event::Init);
    for j in json {
        // The writer clones the event's object into its own Arc; the
        // event's copy is dropped right after, as in a watcher.
        let cm = if stripped {
            strip(decode(j))
        } else {
            decode(j)
        };
        writer.apply_watcher_event(&Event::InitApply(cm));
    }
    writer.apply_watcher_event(&Event::InitDone);
    writer
}

struct Report {
    n: f64,
    rows: Vec<(String, Heap)>,
}

impl Report {
    fn row(&mut self, what: impl Into<String>, heap: Heap) {
        self.rows.push((what.into(), heap));
    }

    fn print(&self) {
        println!("| what | bytes per object | allocations per object |");
        println!("| --- | ---: | ---: |");
        for (what, h) in &self.rows {
            println!(
                "| {what} | {:.0} | {:.2} |",
                h.bytes as f64 / self.n,
                h.blocks as f64 / self.n
            );
        }
    }
}

fn main() {
    // As criterion does: a filter argument that does not name this bench skips it.
    let filter = std::env::args().skip(1).find(|a| !a.starts_with('-'));
    if filter.is_some_and(|f| !"cache_bytes".contains(&f) && !f.contains("cache_bytes")) {
        return;
    }
    let n = objects();
    let items = fixture::items();
    let json: Arc<Vec<Vec<u8>>> = Arc::new(
        (0..n)
            .map(|i| {
                serde_json::to_vec(&fixture::as_served(&items, i))
                    .unwrap_or_else(|e| panic!("encode: {e}"))
            })
            .collect(),
    );
    let json_bytes = json.iter().map(Vec::len).sum::<usize>() / n;
    let json_stripped = serde_json::to_vec(&strip(decode(&json[0])))
        .map(|v| v.len())
        .unwrap_or(0);
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap_or_else(|e| panic!("runtime: {e}"));
    // Register the metric families and warm the runtime outside the regions.
    drop(informer(&runtime, &json, 10, false));
    let mut r = Report {
        n: n as f64,
        rows: Vec::new(),
    };

    // The objects alone (the vector of pointers is allocated before).
    let mut full: Vec<Arc<ConfigMap>> = Vec::with_capacity(n);
    let ((), with_mf) = measure(|| full.extend(json.iter().map(|j| Arc::new(decode(j)))));
    let mut lean: Vec<Arc<ConfigMap>> = Vec::with_capacity(n);
    let ((), without_mf) = measure(|| lean.extend(json.iter().map(|j| Arc::new(strip(decode(j))))));
    r.row("decoded `Arc<ConfigMap>`, managedFields kept", with_mf);
    r.row(
        "decoded `Arc<ConfigMap>`, managedFields dropped",
        without_mf,
    );

    // Field by field, on the same objects (managedFields kept, then taken).
    let mut parts: Vec<ConfigMap> = json.iter().map(|j| decode(j)).collect();
    let inline = std::mem::size_of::<ConfigMap>() + 2 * std::mem::size_of::<usize>();
    r.row(
        format!(
            "· the `Arc` with the inline `ConfigMap` ({} bytes, of which `ObjectMeta` {})",
            std::mem::size_of::<ConfigMap>(),
            std::mem::size_of::<kube::api::ObjectMeta>()
        ),
        Heap {
            bytes: (inline * n) as i64,
            blocks: n as i64,
        },
    );
    let mf = freed(|| {
        parts
            .iter_mut()
            .for_each(|c| drop(c.metadata.managed_fields.take()))
    });
    for (what, take) in [
        (
            "· metadata.name",
            (|c: &mut ConfigMap| drop(c.metadata.name.take())) as fn(&mut ConfigMap),
        ),
        ("· metadata.namespace", |c| {
            drop(c.metadata.namespace.take())
        }),
        ("· metadata.uid", |c| drop(c.metadata.uid.take())),
        ("· metadata.resourceVersion", |c| {
            drop(c.metadata.resource_version.take())
        }),
    ] {
        let h = freed(|| parts.iter_mut().for_each(take));
        r.row(what, h);
    }
    let mut node = 0;
    for (what, strings, take) in [
        (
            "metadata.labels (3)",
            sum(parts
                .iter()
                .map(|c| map_strings(c.metadata.labels.as_ref()))),
            (|c: &mut ConfigMap| drop(c.metadata.labels.take())) as fn(&mut ConfigMap),
        ),
        (
            "metadata.annotations (last-applied)",
            sum(parts
                .iter()
                .map(|c| map_strings(c.metadata.annotations.as_ref()))),
            |c| drop(c.metadata.annotations.take()),
        ),
        (
            "data (2 keys)",
            sum(parts.iter().map(|c| map_strings(c.data.as_ref()))),
            |c| drop(c.data.take()),
        ),
    ] {
        let h = freed(|| parts.iter_mut().for_each(take));
        if node == 0 && h.blocks > strings.blocks {
            node = ((h.bytes - strings.bytes) / (h.blocks - strings.blocks)) as usize;
        }
        r.row(format!("· {what}: keys and values"), strings);
        r.row(format!("· {what}: the `BTreeMap` nodes"), h - strings);
    }
    let rest = freed(|| parts.clear());
    r.row("· anything else left in the objects (the check: 0)", rest);
    r.row("managedFields (2 entries), when kept", mf);
    r.row(
        "spare capacity in the decoded strings and vectors (what `shrink_to_fit` could free)",
        Heap {
            bytes: lean.iter().map(|c| spare_capacity(c)).sum(),
            blocks: 0,
        },
    );

    // kcr's cache beyond the objects: no index, then the namespace index.
    let (keyed, cache_alone) = measure(|| {
        let cache = IndexedStore::new(meta_namespace_key_func::<ConfigMap>, Indexers::default());
        for cm in &lean {
            cache.add(cm.clone()).unwrap_or_else(|e| panic!("add: {e}"));
        }
        cache
    });
    let object_glibc = lean.iter().map(|c| object_chunks(c, node)).sum::<i64>();
    let key_glibc: i64 = keyed.list_keys().iter().map(|k| chunk(k.len() + 16)).sum();
    let key_bytes: i64 = keyed
        .list_keys()
        .iter()
        .map(|k| (k.len() + 2 * std::mem::size_of::<usize>()) as i64)
        .sum();
    drop(keyed);
    let (indexed, cache_indexed) = measure(|| {
        let cache = IndexedStore::<ConfigMap>::namespace_indexed();
        for cm in &lean {
            cache.add(cm.clone()).unwrap_or_else(|e| panic!("add: {e}"));
        }
        cache
    });
    drop(indexed);
    r.row(
        "kcr `IndexedStore` beyond the objects, no index",
        cache_alone,
    );
    r.row(
        "· key strings (`Arc<str>` \"namespace/name\")",
        Heap {
            bytes: key_bytes,
            blocks: n as i64,
        },
    );
    r.row(
        "· object table and key hash table",
        cache_alone
            - Heap {
                bytes: key_bytes,
                blocks: n as i64,
            },
    );
    r.row(
        "kcr `IndexedStore` namespace index entries",
        cache_indexed - cache_alone,
    );
    drop(lean);
    drop(full);

    let (kcr, kcr_heap) = measure(|| informer(&runtime, &json, n, false));
    drop(kcr);
    let (kcr, kcr_keep_heap) = measure(|| informer(&runtime, &json, n, true));
    drop(kcr);
    let (store, kr_lean) = measure(|| kube_runtime_store(&json, true));
    drop(store);
    let (store, kr_full) = measure(|| kube_runtime_store(&json, false));
    drop(store);
    r.row(
        "**kcr informer, factory defaults (managedFields dropped, namespace index), all-in**",
        kcr_heap,
    );
    r.row("· beyond the objects", kcr_heap - without_mf);
    r.row("kcr informer, managedFields kept, all-in", kcr_keep_heap);
    r.row(
        "**kube-runtime `Store`, managedFields stripped before it, all-in**",
        kr_lean,
    );
    r.row("· beyond the objects", kr_lean - without_mf);
    r.row("kube-runtime `Store`, managedFields kept, all-in", kr_full);

    println!(
        "cache_bytes: {n} ConfigMaps from configmap-list-page.json; JSON as served {json_bytes} \
         bytes per object, {json_stripped} without managedFields; heap bytes as requested\n"
    );
    r.print();
    println!(
        "\nWith glibc's malloc (8 bytes of header, rounded up to 16, at least 32), a decoded \
         ConfigMap without managedFields takes {:.0} bytes instead of {:.0} (its {} allocations \
         counted one by one), and a key {:.0} instead of {:.0}.",
        object_glibc as f64 / n as f64,
        without_mf.bytes as f64 / n as f64,
        without_mf.blocks / n as i64,
        key_glibc as f64 / n as f64,
        key_bytes as f64 / n as f64,
    );
    println!(
        "\nratio kcr informer / kube-runtime Store (both without managedFields): {:.3}",
        kcr_heap.bytes as f64 / kr_lean.bytes as f64
    );
}
