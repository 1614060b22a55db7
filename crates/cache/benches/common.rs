//! The objects both benchmarks use: 100,000 ConfigMaps over 100 namespaces,
//! each with 3 labels and 2 data keys.

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::ConfigMap;

/// How many ConfigMaps.
pub const OBJECTS: usize = 100_000;
/// Over how many namespaces.
pub const NAMESPACES: usize = 100;

/// ConfigMap `i` at `generation` (the generation changes a label and the data).
pub fn config_map(i: usize, generation: u32) -> ConfigMap {
    let mut cm = ConfigMap::default();
    cm.metadata.name = Some(format!("config-{i:06}"));
    cm.metadata.namespace = Some(format!("namespace-{:03}", i % NAMESPACES));
    cm.metadata.resource_version = Some(format!(
        "{}",
        1_000_000 + i as u64 * 2 + u64::from(generation)
    ));
    cm.metadata.uid = Some(format!("00000000-0000-4000-8000-{i:012}"));
    cm.metadata.labels = Some(BTreeMap::from([
        ("app".to_owned(), format!("app-{}", i % 50)),
        (
            "tier".to_owned(),
            ["frontend", "backend", "cache"][i % 3].to_owned(),
        ),
        ("generation".to_owned(), generation.to_string()),
    ]));
    cm.data = Some(BTreeMap::from([
        (
            "config.yaml".to_owned(),
            format!("key: value-{i}\nreplicas: {}\n", i % 7),
        ),
        ("mode".to_owned(), format!("mode-{generation}")),
    ]));
    cm
}

/// All the ConfigMaps at `generation`.
pub fn config_maps(generation: u32) -> Vec<ConfigMap> {
    (0..OBJECTS).map(|i| config_map(i, generation)).collect()
}
