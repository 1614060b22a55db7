//! The shared informer factory over real HTTP, against kcr-testenv or the real cluster of
//! `KCR_TEST_KUBECONFIG` (in namespaces of the test's own: its cluster-wide informers see more
//! there, so the tests count only the objects in them).

mod support;

use std::sync::Arc;
use std::time::Duration;

use k8s_openapi::api::core::v1::{ConfigMap, Namespace, Secret, Service};
use kcr_cache::Selector;
use kcr_informer::{InformerKey, SharedInformerFactory};
use kube::api::{Api, ApiResource, DynamicObject, ObjectMeta, PostParams};
use tokio_util::sync::CancellationToken;

use support::{Recorder, create, eventually, start_cluster};

async fn namespace(client: kube::Client, name: &str) {
    let ns = Namespace {
        metadata: ObjectMeta {
            name: Some(name.into()),
            ..ObjectMeta::default()
        },
        ..Namespace::default()
    };
    Api::<Namespace>::all(client)
        .create(&PostParams::default(), &ns)
        .await
        .unwrap_or_else(|e| panic!("{e}"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_factory_should_share_one_informer_per_type_and_namespace_and_start_sync_and_stop_them_all()
 {
    let env = start_cluster("factory-share").await;
    let ns = env.namespace().to_owned();
    let other = format!("{ns}-other");
    namespace(env.client(), &other).await;
    // The factory's informers see only objects the tests create (a real cluster puts its own
    // into every namespace: kube-root-ca.crt, ...); those cluster-wide see other tests' too, so
    // only the keys in the test's two namespaces count.
    let ours = |keys: Vec<Arc<str>>| -> std::collections::BTreeSet<String> {
        keys.iter()
            .filter(|k| k.starts_with(&format!("{ns}/")) || k.starts_with(&format!("{other}/")))
            .map(|k| k.to_string())
            .collect()
    };
    let default_cms: Api<ConfigMap> = Api::namespaced(env.client(), &ns);
    let other_cms: Api<ConfigMap> = Api::namespaced(env.client(), &other);
    create(&default_cms, "a", "0").await;
    create(&other_cms, "b", "0").await;
    let secret = Secret {
        metadata: ObjectMeta {
            name: Some("s".into()),
            labels: Some(support::own_labels()),
            ..ObjectMeta::default()
        },
        ..Secret::default()
    };
    Api::<Secret>::namespaced(env.client(), &ns)
        .create(&PostParams::default(), &secret)
        .await
        .unwrap_or_else(|e| panic!("{e}"));

    let factory =
        SharedInformerFactory::new(env.client(), Duration::ZERO).label_selector(support::OWN);
    let config_maps = factory.informer::<ConfigMap>();
    let again = factory.informer::<ConfigMap>();
    assert!(
        Arc::ptr_eq(&config_maps.get_indexer(), &again.get_indexer()),
        "one informer per type"
    );
    let secrets = factory.informer::<Secret>();
    let in_other = factory.namespaced_informer::<ConfigMap>(&other);
    assert!(
        !Arc::ptr_eq(&config_maps.get_indexer(), &in_other.get_indexer()),
        "one per namespace"
    );
    let dynamic = factory.dynamic_informer(&ApiResource::erase::<ConfigMap>(&()));
    let recorder = Recorder::new();
    in_other
        .add_event_handler(recorder.clone())
        .unwrap_or_else(|e| panic!("{e}"));

    factory.start();
    factory.start(); // idempotent
    let synced = factory.wait_for_cache_sync(&CancellationToken::new()).await;
    assert_eq!(synced.len(), 4, "{synced:?}");
    assert!(synced.values().all(|s| *s), "{synced:?}");
    let key = InformerKey {
        group: String::new(),
        version: "v1".into(),
        plural: "configmaps".into(),
        namespace: Some(other.clone()),
        dynamic: false,
        metadata: false,
    };
    assert_eq!(synced.get(&key), Some(&true));
    assert_eq!(key.to_string(), format!("configmaps/v1 in {other}"));

    let everything = Selector::everything();
    assert_eq!(
        ours(config_maps.get_indexer().list_keys()),
        [format!("{ns}/a"), format!("{other}/b")].into()
    );
    assert_eq!(
        config_maps
            .lister()
            .namespaced(&other)
            .list(&everything)
            .len(),
        1,
        "namespace index"
    );
    assert_eq!(
        ours(in_other.get_indexer().list_keys()),
        [format!("{other}/b")].into()
    );
    assert_eq!(
        secrets
            .lister()
            .namespaced(&ns)
            .get("s")
            .map(|s| s.metadata.name.clone()),
        Some(Some("s".into()))
    );
    assert_eq!(
        ours(dynamic.get_indexer().list_keys()),
        [format!("{ns}/a"), format!("{other}/b")].into()
    );
    let _: Option<Arc<DynamicObject>> = dynamic.get_indexer().get_by_key(&format!("{ns}/a"));

    // A live change reaches the namespaced informer, not a change elsewhere.
    create(&default_cms, "c", "0").await;
    create(&other_cms, "d", "0").await;
    eventually("d", 10, || recorder.len() == 2).await;
    eventually("c", 10, || {
        ours(config_maps.get_indexer().list_keys()).len() == 4
    })
    .await;
    assert!(
        recorder
            .calls()
            .iter()
            .all(|c| c.key().starts_with(&format!("{other}/")))
    );

    // An informer asked for after start starts with the next start().
    let late = factory.namespaced_informer::<Secret>(&other);
    assert!(!late.is_started());
    factory.start();
    let synced = factory.wait_for_cache_sync(&CancellationToken::new()).await;
    assert_eq!(synced.len(), 5);
    assert!(late.has_synced());

    factory.shutdown().await;
    for stopped in [
        config_maps.is_stopped(),
        secrets.is_stopped(),
        in_other.is_stopped(),
        dynamic.is_stopped(),
        late.is_stopped(),
    ] {
        assert!(stopped);
    }
    // After shutdown nothing starts.
    let never = factory.namespaced_informer::<Secret>(&ns);
    factory.start();
    assert!(!never.is_started());
    let _ = Api::<Namespace>::all(env.client())
        .delete(&other, &kube::api::DeleteParams::background())
        .await;
    env.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn wait_for_cache_sync_should_report_an_informer_that_cannot_sync_as_not_synced() {
    let env = start_cluster("factory-never-synced").await;
    let factory = SharedInformerFactory::new(env.client(), Duration::ZERO);
    let config_maps = factory.namespaced_informer::<ConfigMap>(env.namespace());
    // A resource the server does not serve never lists.
    let missing = ApiResource {
        group: "example.com".into(),
        version: "v1".into(),
        api_version: "example.com/v1".into(),
        kind: "Missing".into(),
        plural: "missings".into(),
    };
    let never = factory.dynamic_informer(&missing);
    factory.start();
    let cancel = CancellationToken::new();
    // Cancelled once the config maps have synced (and at the latest after the bound).
    let stop = tokio::spawn({
        let (cancel, config_maps) = (cancel.clone(), config_maps.clone());
        async move {
            let _ = tokio::time::timeout(
                kcr_testenv::TestCluster::bound(Duration::from_secs(2)),
                async {
                    while !config_maps.has_synced() {
                        tokio::time::sleep(Duration::from_millis(10)).await;
                    }
                },
            )
            .await;
            cancel.cancel();
        }
    });
    let synced = factory.wait_for_cache_sync(&cancel).await;
    let _ = stop.await;
    assert!(config_maps.has_synced());
    assert!(!never.has_synced());
    assert_eq!(synced.values().filter(|s| **s).count(), 1, "{synced:?}");
    let never_ok: [&dyn kcr_informer::HasSynced; 2] = [&config_maps, &never];
    assert!(
        !kcr_informer::wait_for_cache_sync(&cancel, &never_ok).await,
        "cancelled: false"
    );
    factory.shutdown().await;
    env.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_factory_in_protobuf_should_fill_its_caches_as_one_in_json_does() {
    let env = start_cluster("factory-protobuf").await;
    let ns = env.namespace().to_owned();
    let cms: Api<ConfigMap> = Api::namespaced(env.client(), &ns);
    for name in ["a", "b", "c"] {
        create(&cms, name, "0").await;
    }
    // A Service: defaulted and allocated by the server (cluster IPs, IP families, ports with
    // an int-or-string target port).
    let services: Api<Service> = Api::namespaced(env.client(), &ns);
    let service = serde_json::from_value(serde_json::json!({
        "metadata": {"name": "web", "labels": {"app": "web"}},
        "spec": {"selector": {"app": "web"}, "ports": [
            {"name": "http", "port": 80, "targetPort": "http"},
            {"name": "metrics", "port": 9090, "targetPort": 9090, "protocol": "TCP"},
        ]},
    }))
    .unwrap();
    services
        .create(&PostParams::default(), &service)
        .await
        .unwrap();
    let json = SharedInformerFactory::new(env.client(), Duration::ZERO)
        .wire_format(kcr_informer::WireFormat::Json);
    // Protobuf is the default.
    let protobuf = SharedInformerFactory::new(env.client(), Duration::ZERO);
    let (json_cms, protobuf_cms) = (
        json.namespaced_informer::<ConfigMap>(&ns),
        protobuf.namespaced_informer::<ConfigMap>(&ns),
    );
    let (json_services, protobuf_services) = (
        json.namespaced_informer::<Service>(&ns),
        protobuf.namespaced_informer::<Service>(&ns),
    );
    let protobuf_dynamic = protobuf.dynamic_informer(&ApiResource::erase::<ConfigMap>(&()));
    for f in [&json, &protobuf] {
        f.start();
        let synced = f.wait_for_cache_sync(&CancellationToken::new()).await;
        assert!(synced.values().all(|s| *s), "{synced:?}");
    }
    create(&cms, "d", "1").await;
    let key = format!("{ns}/d");
    eventually("d in both caches", 10, || {
        json_cms.get_indexer().get_by_key(&key).is_some()
            && protobuf_cms.get_indexer().get_by_key(&key).is_some()
    })
    .await;
    let mut keys = protobuf_cms.get_indexer().list_keys();
    keys.sort();
    let mut json_keys = json_cms.get_indexer().list_keys();
    json_keys.sort();
    assert_eq!(keys, json_keys);
    for key in &keys {
        let (p, j) = (
            protobuf_cms.get_indexer().get_by_key(key),
            json_cms.get_indexer().get_by_key(key),
        );
        assert_eq!(p, j, "{key}");
        assert!(p.is_some_and(|cm| cm.metadata.managed_fields.is_none()));
    }
    let key = format!("{ns}/web");
    let (p, j) = (
        protobuf_services.get_indexer().get_by_key(&key),
        json_services.get_indexer().get_by_key(&key),
    );
    assert!(j.as_ref().is_some_and(|s| s.spec.is_some()), "{j:?}");
    assert_eq!(p, j);
    assert!(
        protobuf_dynamic
            .get_indexer()
            .get_by_key(&format!("{ns}/a"))
            .is_some(),
        "a dynamic informer of a protobuf factory lists in JSON"
    );
    json.shutdown().await;
    protobuf.shutdown().await;
    env.shutdown().await;
}
