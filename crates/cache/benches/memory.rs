//! Bytes of memory per cached object, measured with a counting global
//! allocator (heap bytes requested, live once the cache is built):
//!
//! - kcr-cache's `IndexedStore` (with and without the namespace index) beside
//!   kube-runtime's reflector `Store`, for the same 100,000 synthetic
//!   ConfigMaps, in the same run (client-go on the same objects: 1,195
//!   bytes per object);
//! - the default `IndexedStore` beside the compact one (`IndexedStore::compact`), both
//!   with the namespace index, for objects as a real server returns them
//!   (`fixture.rs`: 50,000 ConfigMaps, 10,000 Pods; managedFields dropped):
//!   client-go holds 1,259 bytes per such ConfigMap (measured outside the
//!   project). That table is also written to `<target>/kcr-cache-bytes.md`,
//!   which `cargo xtask bench` prints.
//!
//! Run with `cargo bench -p kcr-cache --bench memory`.

#![allow(missing_docs)]

mod common;
mod fixture;

use std::alloc::System;
use std::sync::Arc;

use k8s_openapi::api::core::v1::{ConfigMap, Pod};
use kcr_cache::{IndexedStore, Indexers, meta_namespace_key_func};
use kube_runtime::reflector::store::Writer;
use kube_runtime::watcher::Event;
use stats_alloc::{INSTRUMENTED_SYSTEM, Region, StatsAlloc};

use common::{OBJECTS, config_maps};

#[global_allocator]
static GLOBAL: &StatsAlloc<System> = &INSTRUMENTED_SYSTEM;

/// Live bytes allocated since `region` started.
fn live(region: &Region<'_, System>) -> i64 {
    let s = region.change();
    // A realloc already counts its growth in `bytes_allocated` and its
    // shrinking in `bytes_deallocated`; `bytes_reallocated` repeats them.
    s.bytes_allocated as i64 - s.bytes_deallocated as i64
}

/// Builds the objects and a store inside one region, drops every other
/// reference, and returns the bytes still live per object.
fn measure<S>(build: impl FnOnce(Vec<ConfigMap>) -> S) -> f64 {
    let region = Region::new(GLOBAL);
    let store = build(config_maps(1));
    let bytes = live(&region);
    drop(store);
    bytes as f64 / OBJECTS as f64
}

fn main() {
    // Only the objects, each in its own Arc (what any store must hold).
    // (A fresh vector: collecting in place would keep the big source buffer.)
    let objects = measure(|objects| {
        let mut arcs = Vec::with_capacity(objects.len());
        for obj in objects {
            arcs.push(Arc::new(obj));
        }
        arcs
    });
    let kcr_indexed = measure(|objects| {
        let cache = IndexedStore::<ConfigMap>::namespace_indexed();
        for obj in objects {
            cache.add(Arc::new(obj)).expect("valid object");
        }
        cache
    });
    let kcr_plain = measure(|objects| {
        let cache = IndexedStore::<ConfigMap>::new(
            meta_namespace_key_func::<ConfigMap>,
            Indexers::default(),
        );
        for obj in objects {
            cache.add(Arc::new(obj)).expect("valid object");
        }
        cache
    });
    let kube_runtime = measure(|objects| {
        let mut writer = Writer::<ConfigMap>::default();
        for obj in objects {
            // The writer clones the event's object into its own Arc; the
            // event's copy is dropped right after, as in a watcher.
            writer.apply_watcher_event(&Event::Apply(obj));
        }
        writer
    });

    println!(
        "bytes per cached object ({OBJECTS} ConfigMaps, 100 namespaces, 3 labels, 2 data keys)"
    );
    println!("{:<44} {:>10} {:>18}", "store", "bytes/obj", "overhead/obj");
    for (name, bytes) in [
        ("objects alone (Arc<ConfigMap>)", objects),
        ("kcr-cache IndexedStore + namespace index", kcr_indexed),
        ("kcr-cache IndexedStore, no index", kcr_plain),
        ("kube-runtime reflector Store", kube_runtime),
    ] {
        println!("{name:<44} {bytes:>10.0} {:>18.0}", bytes - objects);
    }
    println!(
        "ratio kcr (namespace index) / kube-runtime: {:.3} (target <= 1.15)",
        kcr_indexed / kube_runtime
    );
    println!("client-go: 1195 bytes per object");
    compact();
}

/// Where cargo puts its output: three levels above this binary
/// (`<target>/release/deps/memory-<hash>`).
fn target_dir() -> Option<std::path::PathBuf> {
    std::env::current_exe()
        .ok()?
        .ancestors()
        .nth(3)
        .map(std::path::PathBuf::from)
}

/// Bytes per object of a namespace-indexed cache, default or compact,
/// filled with `n` objects made by `objects` (inside the measured region).
fn cache_bytes<K>(n: usize, objects: fn(usize) -> Vec<K>, compact: Option<usize>) -> f64
where
    K: kube_core::Resource + serde::Serialize + serde::de::DeserializeOwned,
    K: Send + Sync + 'static,
{
    let region = Region::new(GLOBAL);
    let cache = IndexedStore::<K>::namespace_indexed();
    let cache = match compact {
        Some(decoded) => cache.compact_with(decoded),
        None => cache,
    };
    for obj in objects(n) {
        cache.add(Arc::new(obj)).expect("valid object");
    }
    let bytes = live(&region);
    assert_eq!(cache.len(), n);
    drop(cache);
    bytes as f64 / n as f64
}

/// The default cache beside the compact one on the fixture objects.
fn compact() {
    const CONFIG_MAPS: usize = 50_000;
    const PODS: usize = 10_000;
    let decoded = kcr_cache::DEFAULT_DECODED_OBJECTS;
    let rows = [
        (
            format!("{CONFIG_MAPS} ConfigMaps"),
            cache_bytes::<ConfigMap>(CONFIG_MAPS, fixture::config_maps, None),
            cache_bytes::<ConfigMap>(CONFIG_MAPS, fixture::config_maps, Some(decoded)),
            cache_bytes::<ConfigMap>(CONFIG_MAPS, fixture::config_maps, Some(0)),
            "1,259",
        ),
        (
            format!("{PODS} Pods"),
            cache_bytes::<Pod>(PODS, fixture::pods, None),
            cache_bytes::<Pod>(PODS, fixture::pods, Some(decoded)),
            cache_bytes::<Pod>(PODS, fixture::pods, Some(0)),
            "—",
        ),
    ];
    let mut table = format!(
        "| bytes per cached object, namespace index included (objects of a real kube-apiserver, managedFields dropped) | default `IndexedStore` | compact `IndexedStore` (`IndexedStore::compact`: {decoded} kept decoded) | compact / default | compact, none kept decoded (`compact_with(0)`) | client-go (measured outside the project) |\n| --- | ---: | ---: | ---: | ---: | ---: |\n",
    );
    for (objects, default, compact, bare, client_go) in &rows {
        table.push_str(&format!(
            "| {objects} | {default:.0} | {compact:.0} | {:.3} | {bare:.0} | {client_go} |\n",
            compact / default
        ));
    }
    println!("\n{table}");
    if let Some(dir) = target_dir() {
        let path = dir.join("kcr-cache-bytes.md");
        if let Err(e) = std::fs::write(&path, &table) {
            eprintln!("cannot write {}: {e}", path.display());
        }
    }
}
