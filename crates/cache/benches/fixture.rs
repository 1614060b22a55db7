//! Objects as a real kube-apiserver v1.36.2 returns them (copies of
//! `/work/shared/fixtures`, see its README): the ConfigMaps of
//! `data/configmap-list-page.json` (3 labels, 2 data keys, the last-applied
//! annotation, two managedFields entries) and the ReplicaSet-owned Pod of
//! `data/pod.json`. Each copy gets its own name (and uid) and is decoded
//! from its own JSON, as a list decodes it (strings allocated at their
//! length), with `managedFields` dropped, as informers do by default.

use k8s_openapi::api::core::v1::{ConfigMap, Pod};
use serde::de::DeserializeOwned;
use serde_json::Value;

const CONFIG_MAP_PAGE: &[u8] = include_bytes!("data/configmap-list-page.json");
const POD: &[u8] = include_bytes!("data/pod.json");

/// Objects per namespace in the namespaced copies.
pub const PER_NAMESPACE: usize = 1_000;

/// `n` copies of the items of `templates`, each renamed, in namespaces of
/// [`PER_NAMESPACE`] objects, decoded from their own JSON.
fn copies<K: DeserializeOwned>(templates: &[Value], n: usize, prefix: &str) -> Vec<K> {
    (0..n)
        .map(|i| {
            let mut item = templates[i % templates.len()].clone();
            let meta = &mut item["metadata"];
            meta["name"] = Value::from(format!("{prefix}-{i:06}"));
            meta["namespace"] = Value::from(format!("namespace-{:03}", i / PER_NAMESPACE));
            meta["uid"] = Value::from(format!("00000000-0000-4000-8000-{i:012}"));
            if let Some(meta) = meta.as_object_mut() {
                meta.remove("managedFields");
            }
            let json = serde_json::to_vec(&item).expect("a fixture object");
            serde_json::from_slice(&json).expect("a fixture object")
        })
        .collect()
}

/// `n` ConfigMaps from the fixture page.
pub fn config_maps(n: usize) -> Vec<ConfigMap> {
    let page: Value = serde_json::from_slice(CONFIG_MAP_PAGE).expect("the fixture page");
    let items = page["items"].as_array().expect("a list").clone();
    copies(&items, n, "app-config")
}

/// `n` Pods from the fixture Pod.
pub fn pods(n: usize) -> Vec<Pod> {
    let pod: Value = serde_json::from_slice(POD).expect("the fixture Pod");
    copies(&[pod], n, "web")
}
