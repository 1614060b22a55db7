//! `SharedIndexInformer::synced_version` over real HTTP: the number follows the cache, and a
//! wait for a write's version ends when the watch delivers it.

mod support;

use std::time::Duration;

use k8s_openapi::api::core::v1::ConfigMap;
use kcr_cache::Indexers;
use kcr_informer::{SharedIndexInformer, parse_resource_version, wait_for_cache_sync};
use kcr_testenv::TestCluster;
use kube::api::Api;
use tokio_util::sync::CancellationToken;

use support::{create, start_cluster_paused, update};

fn version_of(cm: &ConfigMap) -> u64 {
    cm.metadata
        .resource_version
        .as_deref()
        .and_then(parse_resource_version)
        .unwrap_or_else(|| panic!("a write without a comparable resource version"))
}

#[tokio::test(start_paused = true)]
async fn a_wait_for_a_writes_version_should_end_when_the_watch_delivers_it() {
    let cluster = start_cluster_paused("synced_version_wait").await;
    let api: Api<ConfigMap> = Api::namespaced(cluster.client(), cluster.namespace());
    let informer: SharedIndexInformer<ConfigMap> =
        SharedIndexInformer::new(api.clone(), Duration::ZERO, Indexers::default())
            .label_selector(support::OWN);
    let version = informer.synced_version();
    assert_eq!(version.current(), 0, "nothing synced before start");
    let cancel = CancellationToken::new();
    let task = tokio::spawn({
        let informer = informer.clone();
        let cancel = cancel.clone();
        async move { informer.run(cancel).await }
    });
    let never = CancellationToken::new();
    assert!(wait_for_cache_sync(&never, &[&informer]).await);
    assert!(version.current() > 0, "the list's version is the first");

    let created = create(&api, "a", "1").await;
    let wanted = version_of(&created);
    tokio::time::timeout(
        TestCluster::bound(Duration::from_secs(10)),
        version.wait_until(|v| v >= wanted),
    )
    .await
    .unwrap_or_else(|_| panic!("the informer never reached {wanted}"));
    // The cache is ahead of the number: what the version promises is there.
    let cached = informer
        .get_indexer()
        .get_by_key(&format!("{}/a", cluster.namespace()))
        .unwrap_or_else(|| panic!("the created object is not cached"));
    assert!(version_of(&cached) >= wanted);

    if let Some(env) = cluster.test_env() {
        env.faults().delay_watch_events(Duration::from_secs(5));
        let started = tokio::time::Instant::now();
        let updated = update(&api, "a", "2").await;
        let wanted = version_of(&updated);
        assert!(
            version.current() < wanted,
            "the watch has not delivered it yet"
        );
        version.wait_until(|v| v >= wanted).await;
        let waited = started.elapsed();
        assert!(
            waited >= Duration::from_secs(5) && waited < Duration::from_secs(6),
            "the wait ended when the delayed event arrived, not before or much after: {waited:?}"
        );
        env.faults().delay_watch_events(Duration::ZERO);
    } else {
        TestCluster::skip_on_real_cluster(
            "a_wait_for_a_writes_version_should_end_when_the_watch_delivers_it (second half)",
            "kcr-testenv's watch event delay",
        );
    }
    cancel.cancel();
    let _ = task.await;
}
