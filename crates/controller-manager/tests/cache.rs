//! The manager's informer options (controller-runtime `cache.Options`): namespaces, per-type
//! selectors and transforms, used by the builder's watches, over HTTP against kcr-testenv or
//! the real cluster of `KCR_TEST_KUBECONFIG` (each test in namespaces of its own).

mod common;

use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;

use common::start;
use k8s_openapi::api::core::v1::{ConfigMap, Namespace, Secret};
use kcr_controller_manager::controller::reconciler_fn;
use kcr_controller_manager::manager::{ByObject, InformerOptions};
use kcr_controller_manager::{Action, BoxError, Manager, Options};
use kcr_controller_manager::{Controller, Request};
use kcr_testenv::TestCluster;
use kube::api::{Api, DeleteParams, ObjectMeta, PostParams};
use kube::{Client, ResourceExt};
use tokio::sync::mpsc;

const DEADLINE: Duration = Duration::from_secs(30);

async fn namespace(client: &Client, name: &str) {
    let ns = Namespace {
        metadata: ObjectMeta {
            name: Some(name.into()),
            ..ObjectMeta::default()
        },
        ..Namespace::default()
    };
    Api::<Namespace>::all(client.clone())
        .create(&PostParams::default(), &ns)
        .await
        .expect("namespace");
}

/// Deletes the extra namespaces a test made, then its own.
async fn cleanup(cluster: TestCluster, extra: &[&str]) {
    let api = Api::<Namespace>::all(cluster.client());
    for ns in extra {
        let _ = api.delete(ns, &DeleteParams::background()).await;
    }
    cluster.shutdown().await;
}

/// The label of every config map a test creates: a real cluster puts config maps of its own
/// into every namespace (`kube-root-ca.crt`, a distribution's CA bundles), which do not count.
const OWN_LABEL: (&str, &str) = ("kcr.dev/e2e-object", "true");

/// Creates a config map of the test's own ([`OWN_LABEL`], and `labels`).
async fn config_map(client: &Client, ns: &str, name: &str, labels: &[(&str, &str)]) {
    let cm = ConfigMap {
        metadata: ObjectMeta {
            name: Some(name.into()),
            labels: Some(
                labels
                    .iter()
                    .chain([&OWN_LABEL])
                    .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
                    .collect(),
            ),
            annotations: Some(BTreeMap::from([("note".to_owned(), "kept?".to_owned())])),
            ..ObjectMeta::default()
        },
        data: Some(BTreeMap::from([("k".to_owned(), "v".to_owned())])),
        ..ConfigMap::default()
    };
    Api::<ConfigMap>::namespaced(client.clone(), ns)
        .create(&PostParams::default(), &cm)
        .await
        .expect("config map");
}

fn manager(client: Client, cache: InformerOptions) -> Manager {
    Manager::new(
        client,
        Options::default()
            .metrics_bind_address("0")
            .informers(cache),
    )
    .expect("manager")
}

/// The requests a controller of `ConfigMap`s sees until `expected` of them arrived.
async fn requests(rx: &mut mpsc::UnboundedReceiver<Request>, expected: usize) -> BTreeSet<String> {
    let mut seen = BTreeSet::new();
    while seen.len() < expected {
        let req = tokio::time::timeout(DEADLINE, rx.recv())
            .await
            .expect("a request in time")
            .expect("open channel");
        seen.insert(req.to_string());
    }
    seen
}

fn keys<K: kube::Resource>(objects: &[std::sync::Arc<K>]) -> BTreeSet<String> {
    objects
        .iter()
        .map(|o| format!("{}/{}", o.namespace().unwrap_or_default(), o.name_any()))
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_namespace_scoped_manager_should_cache_and_reconcile_only_its_namespaces() {
    let cluster = TestCluster::start("cache-scoped").await.expect("cluster");
    let client = cluster.client();
    let team_a = cluster.namespace().to_owned();
    let (team_b, other) = (format!("{team_a}-b"), format!("{team_a}-x"));
    namespace(&client, &team_b).await;
    namespace(&client, &other).await;
    for ns in [&team_a, &team_b, &other] {
        config_map(&client, ns, "settings", &[]).await;
    }

    let manager = manager(
        client.clone(),
        InformerOptions::default().default_namespaces([team_a.as_str(), team_b.as_str()]),
    );
    let (tx, mut rx) = mpsc::unbounded_channel();
    Controller::builder(&manager, "scoped-config-maps")
        .for_::<ConfigMap>()
        .build(reconciler_fn(move |req: Request| {
            let _ = tx.send(req);
            async { Ok::<_, BoxError>(Action::done()) }
        }))
        .expect("controller");
    let (stop, task) = start(&manager);

    // A real cluster has more config maps (kube-root-ca.crt in each namespace): only ours count.
    let ours = |cached: Vec<std::sync::Arc<ConfigMap>>| -> BTreeSet<String> {
        let own = cached
            .into_iter()
            .filter(|cm| cm.labels().get(OWN_LABEL.0).map(String::as_str) == Some(OWN_LABEL.1))
            .collect::<Vec<_>>();
        keys(&own)
    };
    let (a_settings, b_settings) = (format!("{team_a}/settings"), format!("{team_b}/settings"));
    let mut seen = BTreeSet::new();
    while !seen.contains(&a_settings) || !seen.contains(&b_settings) {
        seen.extend(requests(&mut rx, 1).await);
    }
    // A later change in another namespace is never seen; one in a cached namespace is.
    config_map(&client, &other, "later", &[]).await;
    config_map(&client, &team_b, "later", &[]).await;
    let b_later = format!("{team_b}/later");
    while !seen.contains(&b_later) {
        seen.extend(requests(&mut rx, 1).await);
    }
    assert!(
        seen.iter()
            .all(|k| k.starts_with(&format!("{team_a}/")) || k.starts_with(&format!("{team_b}/"))),
        "only the cached namespaces are reconciled: {seen:?}"
    );

    let reader = manager.informer_reader::<ConfigMap>();
    assert!(reader.has_synced());
    assert_eq!(
        ours(reader.list()),
        BTreeSet::from([a_settings, b_settings, b_later])
    );
    assert!(reader.get(Some(&other), "settings").is_none());
    assert!(reader.get(Some(&team_a), "settings").is_some());
    // One List & Watch per namespace, none across the cluster.
    let names: BTreeSet<String> = reader
        .informers()
        .iter()
        .map(|i| i.informer_name())
        .collect();
    assert_eq!(
        names,
        BTreeSet::from([
            format!("configmaps/v1 in {team_a}"),
            format!("configmaps/v1 in {team_b}"),
        ])
    );
    let factory = format!("{:?}", manager.informer_factory());
    assert!(
        !factory.contains("\"configmaps/v1\""),
        "no cluster-wide informer: {factory}"
    );

    let _ = stop.send(());
    assert!(matches!(
        tokio::time::timeout(DEADLINE, task).await,
        Ok(Ok(Ok(())))
    ));
    cleanup(cluster, &[&team_b, &other]).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn by_object_should_override_the_default_namespaces_and_selectors_of_one_type() {
    let cluster = TestCluster::start("cache-by-object")
        .await
        .expect("cluster");
    let client = cluster.client();
    let team_a = cluster.namespace().to_owned();
    let team_b = format!("{team_a}-b");
    namespace(&client, &team_b).await;
    for ns in [team_a.as_str(), team_b.as_str()] {
        config_map(&client, ns, "web", &[("app", "web")]).await;
        config_map(&client, ns, "db", &[("app", "db")]).await;
        for name in ["token", "other"] {
            let secret = Secret {
                metadata: ObjectMeta {
                    name: Some(name.into()),
                    labels: Some(BTreeMap::from([("app".to_owned(), "web".to_owned())])),
                    ..ObjectMeta::default()
                },
                ..Secret::default()
            };
            Api::<Secret>::namespaced(client.clone(), ns)
                .create(&PostParams::default(), &secret)
                .await
                .expect("secret");
        }
    }

    let manager = manager(
        client.clone(),
        InformerOptions::default()
            .default_namespaces([team_a.as_str(), team_b.as_str()])
            .default_label_selector("app=web")
            .by_object::<Secret>(
                ByObject::new()
                    .namespaces([team_b.as_str()])
                    .field_selector("metadata.name=token"),
            ),
    );
    let config_maps = manager.informer_reader::<ConfigMap>();
    let secrets = manager.informer_reader::<Secret>();
    let (stop, task) = start(&manager);
    tokio::time::timeout(DEADLINE, async {
        while !(config_maps.has_synced() && secrets.has_synced()) {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    })
    .await
    .expect("synced");

    // The default label selector, in the default namespaces.
    assert_eq!(
        keys(&config_maps.list()),
        BTreeSet::from([format!("{team_a}/web"), format!("{team_b}/web")])
    );
    // Secrets: their own namespaces and field selector, the default label selector.
    assert_eq!(
        keys(&secrets.list()),
        BTreeSet::from([format!("{team_b}/token")])
    );

    let _ = stop.send(());
    let _ = tokio::time::timeout(DEADLINE, task).await;
    cleanup(cluster, &[&team_b]).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn transforms_should_change_objects_before_they_are_cached() {
    let cluster = TestCluster::start("cache-transform")
        .await
        .expect("cluster");
    let client = cluster.client();
    let ns = cluster.namespace().to_owned();
    config_map(&client, &ns, "settings", &[]).await;
    let secret = Secret {
        metadata: ObjectMeta {
            name: Some("token".into()),
            annotations: Some(BTreeMap::from([("note".to_owned(), "x".to_owned())])),
            ..ObjectMeta::default()
        },
        data: Some(BTreeMap::from([(
            "t".to_owned(),
            k8s_openapi::ByteString(b"secret".to_vec()),
        )])),
        ..Secret::default()
    };
    Api::<Secret>::namespaced(client.clone(), &ns)
        .create(&PostParams::default(), &secret)
        .await
        .expect("secret");

    let manager = manager(
        client.clone(),
        InformerOptions::default()
            .default_namespaces([ns.as_str()])
            .default_transform(|meta| meta.annotations = None)
            .by_object::<Secret>(ByObject::new().transform(|mut s: Secret| {
                s.data = None;
                s
            })),
    );
    let (tx, mut rx) = mpsc::unbounded_channel();
    let config_maps = manager.informer_reader::<ConfigMap>();
    Controller::builder(&manager, "transformed-config-maps")
        .for_::<ConfigMap>()
        .owns::<Secret>()
        .build(reconciler_fn(move |req: Request| {
            let _ = tx.send(req);
            async { Ok::<_, BoxError>(Action::done()) }
        }))
        .expect("controller");
    let (stop, task) = start(&manager);
    requests(&mut rx, 1).await;

    let cm = config_maps
        .get(Some(&ns), "settings")
        .expect("cached config map");
    assert_eq!(cm.metadata.annotations, None, "the default transform ran");
    assert!(cm.data.is_some());
    let secrets = manager.informer_reader::<Secret>();
    let cached = secrets.get(Some(&ns), "token").expect("cached secret");
    assert_eq!(cached.data, None, "the secret's own transform ran");
    assert!(
        cached.metadata.annotations.is_some(),
        "a type's own transform replaces the default one"
    );

    let _ = stop.send(());
    let _ = tokio::time::timeout(DEADLINE, task).await;
    cluster.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cluster_scoped_types_should_ignore_the_namespaces() {
    let cluster = TestCluster::start("cache-cluster-scoped")
        .await
        .expect("cluster");
    let client = cluster.client();
    let manager = manager(
        client.clone(),
        InformerOptions::default().default_namespaces([cluster.namespace()]),
    );
    let namespaces = manager.informer_reader::<Namespace>();
    assert_eq!(namespaces.informers().len(), 1);
    let (stop, task) = start(&manager);
    tokio::time::timeout(DEADLINE, async {
        while !namespaces.has_synced() {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    })
    .await
    .expect("synced");
    assert!(namespaces.get(None, cluster.namespace()).is_some());
    assert!(
        namespaces.get(None, "default").is_some(),
        "every namespace is cached"
    );
    let _ = stop.send(());
    let _ = tokio::time::timeout(DEADLINE, task).await;
    cluster.shutdown().await;
}

/// A client that remembers the method and URI of every request it sends (the server's request
/// log, as the manager's client sees it).
#[derive(Clone)]
struct Recording {
    inner: Client,
    log: std::sync::Arc<parking_lot::Mutex<Vec<String>>>,
}

impl tower::Service<http::Request<kube::client::Body>> for Recording {
    type Response = http::Response<kube::client::Body>;
    type Error = kube::Error;
    type Future = futures::future::BoxFuture<'static, Result<Self::Response, Self::Error>>;

    fn poll_ready(
        &mut self,
        _: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Result<(), Self::Error>> {
        std::task::Poll::Ready(Ok(()))
    }

    fn call(&mut self, request: http::Request<kube::client::Body>) -> Self::Future {
        self.log
            .lock()
            .push(format!("{} {}", request.method(), request.uri()));
        let inner = self.inner.clone();
        Box::pin(async move { inner.send(request).await })
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_namespace_scoped_managers_informer_factory_should_never_list_other_namespaces() {
    let cluster = TestCluster::start("cache-factory-scoped")
        .await
        .expect("cluster");
    let client = cluster.client();
    let ns = cluster.namespace().to_owned();
    let other = format!("{ns}-x");
    namespace(&client, &other).await;
    config_map(&client, &ns, "mine", &[]).await;
    config_map(&client, &other, "theirs", &[]).await;

    let log = std::sync::Arc::new(parking_lot::Mutex::new(Vec::new()));
    let recording = Client::new(
        Recording {
            inner: client.clone(),
            log: log.clone(),
        },
        ns.clone(),
    );
    let manager = manager(
        recording,
        InformerOptions::default().default_namespaces([ns.as_str()]),
    );
    // Informers asked of the factory directly (no controller), before and after start.
    let factory = manager.informer_factory();
    let config_maps = factory.informers::<ConfigMap>();
    assert_eq!(config_maps.len(), 1);
    assert_eq!(
        config_maps[0].informer_name(),
        format!("configmaps/v1 in {ns}")
    );
    let namespaces = factory.reader::<Namespace>();
    let (stop, task) = start(&manager);
    let secrets = manager.informer_factory().reader::<Secret>();
    let config_maps = manager.informer_factory().reader::<ConfigMap>();
    tokio::time::timeout(DEADLINE, async {
        while !(config_maps.has_synced() && secrets.has_synced() && namespaces.has_synced()) {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    })
    .await
    .expect("synced");
    config_map(&client, &other, "later", &[]).await;
    config_map(&client, &ns, "later", &[]).await;
    tokio::time::timeout(DEADLINE, async {
        while config_maps.get(Some(&ns), "later").is_none() {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    })
    .await
    .expect("the later config map");

    // The cache holds the namespace's objects only (a cluster-scoped type: everything).
    assert!(
        keys(&config_maps.list())
            .iter()
            .all(|k| k.starts_with(&format!("{ns}/"))),
        "{:?}",
        keys(&config_maps.list())
    );
    assert!(config_maps.get(Some(&ns), "mine").is_some());
    assert!(namespaces.get(None, &other).is_some());
    // And the client never asked for config maps or secrets outside the namespace.
    let requests = log.lock().clone();
    let namespaced = |resource: &str| {
        requests
            .iter()
            .filter(|r| r.contains(&format!("/{resource}")))
            .cloned()
            .collect::<Vec<_>>()
    };
    for resource in ["configmaps", "secrets"] {
        let made = namespaced(resource);
        assert!(!made.is_empty(), "{resource} were listed: {requests:?}");
        for request in &made {
            let path = request
                .split_whitespace()
                .nth(1)
                .unwrap_or_default()
                .split('?')
                .next()
                .unwrap_or_default();
            assert_eq!(
                path,
                format!("/api/v1/namespaces/{ns}/{resource}"),
                "only the manager's namespace: {request}"
            );
        }
    }
    assert!(
        requests.iter().any(|r| r.contains("/api/v1/namespaces?")),
        "namespaces are cluster-scoped: {requests:?}"
    );

    let _ = stop.send(());
    let _ = tokio::time::timeout(DEADLINE, task).await;
    cleanup(cluster, &[&other]).await;
}
