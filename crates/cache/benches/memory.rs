//! Bytes of memory per cached object, measured with a counting global
//! allocator: kcr-cache's `IndexedStore` (with and without the namespace index)
//! beside kube-runtime's reflector `Store`, for the same 100,000 ConfigMaps,
//! in the same run. client-go on the same objects: 1,195 bytes per object.
//! Run with `cargo bench -p kcr-cache --bench memory`.

#![allow(missing_docs)]

mod common;

use std::alloc::System;
use std::sync::Arc;

use k8s_openapi::api::core::v1::ConfigMap;
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
}
