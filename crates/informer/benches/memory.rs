//! Bytes of memory per cached Pod, measured with a counting global
//! allocator, for the same 50,000 Pods in the same run: the kcr informer
//! (which drops `managedFields` by default) beside kube-runtime's reflector
//! `Store` fed the Pods as a watcher delivers them, with and without the
//! same `managedFields` transform. Run with
//! `cargo bench -p kcr-informer --bench memory`.
//!
//! Live bytes are bytes allocated minus bytes freed (a realloc's growth is
//! already in the first, its shrinking in the second).
//!
//! Last run: kcr informer 20,037 bytes per Pod (the bare decoded Pods
//! without managedFields: 19,913); kube-runtime `Store` 29,665 (ratio
//! 0.675), or 13,807 when fed the Pods without `managedFields` (ratio
//! 1.45). kube-runtime's writer clones each object into its own `Arc`, and
//! a clone gives every `Vec` the capacity of its length, while a decoded
//! Pod keeps the capacity serde's `Vec` growth left (room for four
//! containers, volumes, conditions, statuses...: about 6 KB of a Pod); a
//! ConfigMap has no such `Vec`s once its managedFields are skipped.

#![allow(missing_docs)]

mod support;

use std::alloc::System;
use std::sync::Arc;
use std::time::Duration;

use k8s_openapi::api::core::v1::Pod;
use kcr_cache::{Indexers, NAMESPACE_INDEX, meta_namespace_index_func};
use kcr_informer::SharedIndexInformer;
use kube_runtime::reflector::store::Writer;
use kube_runtime::watcher::Event;
use stats_alloc::{INSTRUMENTED_SYSTEM, Region, StatsAlloc};
use tokio_util::sync::CancellationToken;

use support::InMemory;

#[global_allocator]
static GLOBAL: &StatsAlloc<System> = &INSTRUMENTED_SYSTEM;

const PODS: usize = 50_000;

/// A Pod as a Deployment's ReplicaSet creates it and the kubelet updates
/// it, decoded from JSON as a watcher decodes it, with the two
/// `managedFields` entries the API server records.
fn pod(i: usize) -> Pod {
    let ns = format!("team-{:02}", i % 50);
    let name = format!("web-7d4b9c8f6d-{i:06}");
    let json = format!(
        r#"{{"apiVersion":"v1","kind":"Pod","metadata":{{"name":"{name}","namespace":"{ns}","uid":"6f1c2a3e-{i:04x}-4b5c-9d8e-0123456789ab","resourceVersion":"{rv}","creationTimestamp":"2026-11-20T10:00:00Z","generateName":"web-7d4b9c8f6d-","labels":{{"app":"web","pod-template-hash":"7d4b9c8f6d","tier":"frontend"}},"annotations":{{"kubectl.kubernetes.io/restartedAt":"2026-11-20T09:59:00Z"}},"ownerReferences":[{{"apiVersion":"apps/v1","kind":"ReplicaSet","name":"web-7d4b9c8f6d","uid":"0a1b2c3d-0000-4000-8000-000000000001","controller":true,"blockOwnerDeletion":true}}],
"managedFields":[{{"manager":"kube-controller-manager","operation":"Update","apiVersion":"v1","time":"2026-11-20T10:00:00Z","fieldsType":"FieldsV1","fieldsV1":{{"f:metadata":{{"f:annotations":{{".":{{}},"f:kubectl.kubernetes.io/restartedAt":{{}}}},"f:generateName":{{}},"f:labels":{{".":{{}},"f:app":{{}},"f:pod-template-hash":{{}},"f:tier":{{}}}},"f:ownerReferences":{{".":{{}},"k:{{\"uid\":\"0a1b2c3d-0000-4000-8000-000000000001\"}}":{{}}}}}},"f:spec":{{"f:containers":{{"k:{{\"name\":\"web\"}}":{{".":{{}},"f:env":{{".":{{}},"k:{{\"name\":\"MODE\"}}":{{".":{{}},"f:name":{{}},"f:value":{{}}}}}},"f:image":{{}},"f:imagePullPolicy":{{}},"f:name":{{}},"f:ports":{{".":{{}},"k:{{\"containerPort\":8080,\"protocol\":\"TCP\"}}":{{".":{{}},"f:containerPort":{{}},"f:name":{{}},"f:protocol":{{}}}}}},"f:resources":{{".":{{}},"f:limits":{{".":{{}},"f:memory":{{}}}},"f:requests":{{".":{{}},"f:cpu":{{}},"f:memory":{{}}}}}},"f:terminationMessagePath":{{}},"f:terminationMessagePolicy":{{}}}}}},"f:dnsPolicy":{{}},"f:enableServiceLinks":{{}},"f:restartPolicy":{{}},"f:schedulerName":{{}},"f:securityContext":{{}},"f:terminationGracePeriodSeconds":{{}}}}}}}},
{{"manager":"kubelet","operation":"Update","apiVersion":"v1","time":"2026-11-20T10:00:05Z","fieldsType":"FieldsV1","subresource":"status","fieldsV1":{{"f:status":{{"f:conditions":{{"k:{{\"type\":\"ContainersReady\"}}":{{".":{{}},"f:lastProbeTime":{{}},"f:lastTransitionTime":{{}},"f:status":{{}},"f:type":{{}}}},"k:{{\"type\":\"Initialized\"}}":{{".":{{}},"f:lastProbeTime":{{}},"f:lastTransitionTime":{{}},"f:status":{{}},"f:type":{{}}}},"k:{{\"type\":\"Ready\"}}":{{".":{{}},"f:lastProbeTime":{{}},"f:lastTransitionTime":{{}},"f:status":{{}},"f:type":{{}}}}}},"f:containerStatuses":{{}},"f:hostIP":{{}},"f:phase":{{}},"f:podIP":{{}},"f:podIPs":{{".":{{}},"k:{{\"ip\":\"10.244.1.{ip}\"}}":{{".":{{}},"f:ip":{{}}}}}},"f:startTime":{{}}}}}}}}]}},
"spec":{{"containers":[{{"name":"web","image":"registry.example.com/web:1.27.3","imagePullPolicy":"IfNotPresent","env":[{{"name":"MODE","value":"production"}}],"ports":[{{"name":"http","containerPort":8080,"protocol":"TCP"}}],"resources":{{"limits":{{"memory":"256Mi"}},"requests":{{"cpu":"100m","memory":"128Mi"}}}},"terminationMessagePath":"/dev/termination-log","terminationMessagePolicy":"File","volumeMounts":[{{"name":"kube-api-access-{i:05}","mountPath":"/var/run/secrets/kubernetes.io/serviceaccount","readOnly":true}}]}}],"restartPolicy":"Always","terminationGracePeriodSeconds":30,"dnsPolicy":"ClusterFirst","serviceAccountName":"default","nodeName":"node-{node}","securityContext":{{}},"schedulerName":"default-scheduler","enableServiceLinks":true,"volumes":[{{"name":"kube-api-access-{i:05}","projected":{{"sources":[{{"serviceAccountToken":{{"expirationSeconds":3607,"path":"token"}}}}],"defaultMode":420}}}}]}},
"status":{{"phase":"Running","hostIP":"192.168.0.{node}","podIP":"10.244.1.{ip}","podIPs":[{{"ip":"10.244.1.{ip}"}}],"startTime":"2026-11-20T10:00:00Z","conditions":[{{"type":"Initialized","status":"True","lastTransitionTime":"2026-11-20T10:00:00Z"}},{{"type":"Ready","status":"True","lastTransitionTime":"2026-11-20T10:00:05Z"}},{{"type":"ContainersReady","status":"True","lastTransitionTime":"2026-11-20T10:00:05Z"}}],"containerStatuses":[{{"name":"web","ready":true,"started":true,"restartCount":0,"image":"registry.example.com/web:1.27.3","imageID":"registry.example.com/web@sha256:4f0c0a4c7e1c2b8d1f6a3b5c7d9e0f1a2b3c4d5e6f708192a3b4c5d6e7f80910","containerID":"containerd://{i:064x}","state":{{"running":{{"startedAt":"2026-11-20T10:00:04Z"}}}}}}]}}}}"#,
        rv = 1000 + i,
        ip = i % 250,
        node = i % 20,
    );
    serde_json::from_str(&json).expect("a valid Pod")
}

fn strip(mut pod: Pod) -> Pod {
    pod.metadata.managed_fields = None;
    pod
}

/// Live bytes allocated since `region` started.
fn live(region: &Region<'_, System>) -> i64 {
    let s = region.change();
    // A realloc already counts its growth in `bytes_allocated` and its
    // shrinking in `bytes_deallocated`; `bytes_reallocated` repeats them.
    s.bytes_allocated as i64 - s.bytes_deallocated as i64
}

/// Builds a store inside one region and returns the bytes still live per
/// Pod once everything but the store is dropped.
fn measure<S>(build: impl FnOnce() -> S) -> f64 {
    let region = Region::new(GLOBAL);
    let store = build();
    let bytes = live(&region);
    drop(store);
    bytes as f64 / PODS as f64
}

fn informer(
    runtime: &tokio::runtime::Runtime,
    count: usize,
    keep_managed_fields: bool,
) -> SharedIndexInformer<Pod> {
    let mut indexers = Indexers::default();
    indexers.insert(NAMESPACE_INDEX.to_owned(), meta_namespace_index_func());
    let informer = SharedIndexInformer::new(
        InMemory {
            make: Arc::new(pod),
            count,
        },
        Duration::ZERO,
        indexers,
    )
    .name("memory")
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

fn main() {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    // Register the metric families and warm the runtime outside the regions.
    drop(informer(&runtime, 10, false));

    let sample = pod(0);
    let json_bytes = serde_json::to_vec(&sample).map(|v| v.len()).unwrap_or(0);
    let stripped_json_bytes = serde_json::to_vec(&strip(sample))
        .map(|v| v.len())
        .unwrap_or(0);

    let objects = measure(|| (0..PODS).map(|i| Arc::new(pod(i))).collect::<Vec<_>>());
    let objects_stripped = measure(|| {
        (0..PODS)
            .map(|i| Arc::new(strip(pod(i))))
            .collect::<Vec<_>>()
    });
    let kcr = measure(|| informer(&runtime, PODS, false));
    let kcr_keep = measure(|| informer(&runtime, PODS, true));
    let kube_runtime = measure(|| {
        let mut writer = Writer::<Pod>::default();
        writer.apply_watcher_event(&Event::Init);
        for i in 0..PODS {
            // The writer clones the event's object into its own Arc; the
            // event's copy is dropped right after, as in a watcher.
            writer.apply_watcher_event(&Event::InitApply(pod(i)));
        }
        writer.apply_watcher_event(&Event::InitDone);
        writer
    });
    let kube_runtime_stripped = measure(|| {
        let mut writer = Writer::<Pod>::default();
        writer.apply_watcher_event(&Event::Init);
        for i in 0..PODS {
            // As `watcher(..).modify(|p| p.managed_fields_mut().clear())` would.
            writer.apply_watcher_event(&Event::InitApply(strip(pod(i))));
        }
        writer.apply_watcher_event(&Event::InitDone);
        writer
    });

    println!(
        "bytes per cached Pod ({PODS} Pods in 50 namespaces; JSON {json_bytes} bytes, {stripped_json_bytes} without managedFields)"
    );
    println!("{:<58} {:>10}", "store", "bytes/Pod");
    for (name, bytes) in [
        ("Pods alone (Arc<Pod>, with managedFields)", objects),
        (
            "Pods alone (Arc<Pod>, managedFields dropped)",
            objects_stripped,
        ),
        (
            "kcr informer (default: managedFields dropped, ns index)",
            kcr,
        ),
        ("kcr informer, keep_managed_fields(true)", kcr_keep),
        (
            "kube-runtime reflector Store (as a watcher feeds it)",
            kube_runtime,
        ),
        (
            "kube-runtime Store, managedFields dropped before it",
            kube_runtime_stripped,
        ),
    ] {
        println!("{name:<58} {bytes:>10.0}");
    }
    println!(
        "ratio kcr informer / kube-runtime Store: {:.3} (target <= 1.0)",
        kcr / kube_runtime
    );
    println!(
        "ratio kcr informer / kube-runtime Store with the same transform: {:.3}",
        kcr / kube_runtime_stripped
    );
}
