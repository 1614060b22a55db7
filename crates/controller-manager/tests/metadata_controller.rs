//! Controllers over metadata-only caches (controller-runtime's `OnlyMetadata` and
//! `WatchesMetadata`), over real HTTP against kcr-testenv or the real cluster of
//! `KCR_TEST_KUBECONFIG`: `owns_metadata` reconciles the owner of a changed object whose
//! metadata alone is cached, `watches_metadata` maps an object's metadata to requests, and the
//! manager's `metadata_reader` reads that cache, scoped as the kind's `ByObject` says.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use k8s_openapi::ByteString;
use k8s_openapi::api::core::v1::{ConfigMap, Secret};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{ObjectMeta, OwnerReference};
use kcr_controller_manager::controller::reconciler_fn;
use kcr_controller_manager::manager::{ByObject, InformerOptions};
use kcr_controller_manager::{Action, BoxError, Controller, Manager, Options, Request};
use kcr_testenv::TestCluster;
use kube::Api;
use kube::api::{DeleteParams, Patch, PatchParams, PostParams};
use kube::core::PartialObjectMeta;
use parking_lot::Mutex;

mod common;
use common::start;

type TestResult = Result<(), Box<dyn std::error::Error>>;

fn options(ns: &str) -> InformerOptions {
    InformerOptions::default().default_namespaces([ns])
}

fn quiet(informers: InformerOptions) -> Options {
    Options::default()
        .metrics_bind_address("0")
        .health_probe_bind_address("0")
        .informers(informers)
}

/// Waits (in 10 ms steps, up to 60 s of the test's clock) until `cond` holds.
async fn eventually(mut cond: impl FnMut() -> bool) -> bool {
    for _ in 0..6000 {
        if cond() {
            return true;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    cond()
}

fn config_map(name: &str) -> ConfigMap {
    ConfigMap {
        metadata: ObjectMeta {
            name: Some(name.into()),
            ..ObjectMeta::default()
        },
        ..ConfigMap::default()
    }
}

/// A Secret with 4 KiB of data, labelled, controlled by the ConfigMap `owner` (`uid`) if given.
fn secret(name: &str, owner: Option<(&str, &str)>, labels: &[(&str, &str)]) -> Secret {
    Secret {
        metadata: ObjectMeta {
            name: Some(name.into()),
            labels: Some(
                labels
                    .iter()
                    .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
                    .collect(),
            ),
            owner_references: owner.map(|(name, uid)| {
                vec![OwnerReference {
                    api_version: "v1".into(),
                    kind: "ConfigMap".into(),
                    name: name.into(),
                    uid: uid.into(),
                    controller: Some(true),
                    ..OwnerReference::default()
                }]
            }),
            ..ObjectMeta::default()
        },
        data: Some(BTreeMap::from([(
            "key".to_owned(),
            ByteString(vec![b'k'; 4096]),
        )])),
        ..Secret::default()
    }
}

#[derive(Clone, Default)]
struct Calls(Arc<Mutex<Vec<String>>>);

impl Calls {
    fn record(&self, req: &Request) {
        self.0.lock().push(req.name.to_string());
    }
    fn count(&self, name: &str) -> usize {
        self.0.lock().iter().filter(|n| *n == name).count()
    }
}

#[tokio::test(start_paused = true)]
async fn an_object_owned_through_its_metadata_should_reconcile_its_owner() -> TestResult {
    let env = TestCluster::start_paused("metadata-owns").await?;
    let ns = env.namespace().to_owned();
    let config_maps: Api<ConfigMap> = Api::namespaced(env.client(), &ns);
    let secrets: Api<Secret> = Api::namespaced(env.client(), &ns);
    let owner = config_maps
        .create(&PostParams::default(), &config_map("owner"))
        .await?;
    let uid = owner.metadata.uid.clone().unwrap_or_default();

    let manager = Manager::new(env.client(), quiet(options(&ns)))?;
    let calls = Calls::default();
    let log = calls.clone();
    // What the reconciler reads of the owned Secrets: their labels, from the metadata cache.
    let seen: Arc<Mutex<Vec<String>>> = Arc::default();
    let reader = manager.metadata_reader::<Secret>();
    let seen_by_reconciler = seen.clone();
    Controller::builder(&manager, "metadata-owns")
        .for_::<ConfigMap>()
        .owns_metadata::<Secret>()
        .build(reconciler_fn(move |req: Request| {
            log.record(&req);
            let tiers: Vec<String> = reader
                .list()
                .iter()
                .filter(|s| {
                    s.metadata
                        .owner_references
                        .iter()
                        .flatten()
                        .any(|o| o.name == *req.name)
                })
                .filter_map(|s| s.metadata.labels.as_ref()?.get("tier").cloned())
                .collect();
            seen_by_reconciler.lock().extend(tiers);
            async move { Ok::<_, BoxError>(Action::done()) }
        }))?;
    // The controller's watch of Secrets is the metadata informer the reader reads.
    let informers = manager.metadata_reader::<Secret>();
    assert_eq!(informers.informers().len(), 1);
    assert!(
        informers.informers()[0]
            .informer_name()
            .ends_with("(metadata)"),
        "{}",
        informers.informers()[0].informer_name()
    );
    let (stop, task) = start(&manager);
    assert!(eventually(|| calls.count("owner") == 1).await);

    // Created, relabelled, deleted: each reconciles the owner, which reads the metadata.
    secrets
        .create(
            &PostParams::default(),
            &secret("owned", Some(("owner", &uid)), &[("tier", "a")]),
        )
        .await?;
    assert!(eventually(|| calls.count("owner") == 2).await);
    assert!(eventually(|| seen.lock().contains(&"a".to_owned())).await);
    secrets
        .patch(
            "owned",
            &PatchParams::default(),
            &Patch::Merge(serde_json::json!({"metadata": {"labels": {"tier": "b"}}})),
        )
        .await?;
    assert!(eventually(|| calls.count("owner") == 3).await);
    assert!(eventually(|| seen.lock().contains(&"b".to_owned())).await);
    secrets.delete("owned", &DeleteParams::default()).await?;
    assert!(eventually(|| calls.count("owner") == 4).await);
    // A Secret controlled by no ConfigMap reconciles nothing; a sentinel after it, through the
    // same informer, shows it was seen (its owner need not exist: the request names it).
    secrets
        .create(&PostParams::default(), &secret("loose", None, &[]))
        .await?;
    secrets
        .create(
            &PostParams::default(),
            &secret("sentinel-secret", Some(("sentinel", "u1")), &[]),
        )
        .await?;
    assert!(eventually(|| calls.count("sentinel") == 1).await);
    assert_eq!(calls.count("loose"), 0);

    let _ = stop.send(());
    task.await??;
    env.shutdown().await;
    Ok(())
}

#[tokio::test(start_paused = true)]
async fn watches_metadata_should_map_an_objects_metadata_to_requests() -> TestResult {
    let env = TestCluster::start_paused("metadata-watches").await?;
    let ns = env.namespace().to_owned();
    let secrets: Api<Secret> = Api::namespaced(env.client(), &ns);
    let manager = Manager::new(env.client(), quiet(options(&ns)))?;
    let calls = Calls::default();
    let log = calls.clone();
    Controller::builder(&manager, "metadata-watches")
        .for_::<ConfigMap>()
        .watches_metadata::<Secret>(|secret: &PartialObjectMeta<Secret>| {
            // The ConfigMap a Secret's annotation names.
            let ns = secret.metadata.namespace.clone().unwrap_or_default();
            secret
                .metadata
                .annotations
                .iter()
                .flatten()
                .filter(|(k, _)| k.as_str() == "example.com/for")
                .map(|(_, name)| Request::namespaced(ns.clone(), name.clone()))
                .collect()
        })
        .build(reconciler_fn(move |req: Request| {
            log.record(&req);
            async move { Ok::<_, BoxError>(Action::done()) }
        }))?;
    let (stop, task) = start(&manager);
    let mut annotated = secret("annotated", None, &[]);
    annotated.metadata.annotations = Some([("example.com/for".into(), "target".into())].into());
    secrets.create(&PostParams::default(), &annotated).await?;
    assert!(eventually(|| calls.count("target") == 1).await);

    let _ = stop.send(());
    task.await??;
    env.shutdown().await;
    Ok(())
}

/// The metadata cache of a kind takes that kind's `ByObject` namespaces and selectors (as
/// controller-runtime keys `ByObject` by GVK), unless it has a `ByObject` of its own.
#[tokio::test(start_paused = true)]
async fn a_metadata_cache_should_be_scoped_by_its_kinds_by_object() -> TestResult {
    let env = TestCluster::start_paused("metadata-by-object").await?;
    let ns = env.namespace().to_owned();
    let secrets: Api<Secret> = Api::namespaced(env.client(), &ns);
    for (name, tier) in [("in-a", "a"), ("in-b", "b")] {
        secrets
            .create(
                &PostParams::default(),
                &secret(name, None, &[("tier", tier)]),
            )
            .await?;
    }
    let manager = Manager::new(
        env.client(),
        quiet(
            options(&ns)
                .by_object::<Secret>(ByObject::new().label_selector("tier=a"))
                .by_object::<PartialObjectMeta<ConfigMap>>(
                    ByObject::new().field_selector("metadata.name=none"),
                ),
        ),
    )?;
    let secrets_metadata = manager.metadata_reader::<Secret>();
    let config_maps_metadata = manager.metadata_reader::<ConfigMap>();
    let (stop, task) = start(&manager);
    assert!(
        eventually(|| secrets_metadata.has_synced() && config_maps_metadata.has_synced()).await
    );
    let names: Vec<String> = secrets_metadata
        .list()
        .iter()
        .filter_map(|s| s.metadata.name.clone())
        .collect();
    assert_eq!(names, ["in-a"]);
    assert!(secrets_metadata.get(Some(&ns), "in-b").is_none());
    // Its own `ByObject`: no ConfigMap is named `none`.
    assert!(config_maps_metadata.list().is_empty());

    let _ = stop.send(());
    task.await??;
    env.shutdown().await;
    Ok(())
}
