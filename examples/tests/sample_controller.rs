//! The Foo controller and the stand-in Deployment controller of the
//! examples, run by a `Manager` over real HTTP against kcr-testenv, or against the real
//! cluster of `KCR_TEST_KUBECONFIG` (each test in a namespace of its own, the manager's cache
//! limited to it; there the cluster's own Deployment controller makes the replicas available,
//! so its nodes must be able to pull `nginx`).

// `foo` names sample-controller's Foo resource here, not a placeholder.
#![allow(clippy::disallowed_names)]

use std::time::Duration;

use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::events::v1::Event;
use kcr_controller_manager::manager::InformerOptions;
use kcr_controller_manager::{Manager, Options};
use kcr_examples::foo::Foo;
use kcr_examples::sample_controller::{self, Settings};
use kcr_examples::{cluster, deployment_status};
use kcr_testenv::TestCluster;
use kube::api::{Api, ListParams, Patch, PatchParams, PostParams};
use kube::{Client, ResourceExt};
use tokio::sync::oneshot;
use tokio::task::JoinHandle;

/// Every wait of these tests is bounded by this (on a real cluster, pods must start).
fn deadline() -> Duration {
    if TestCluster::real_cluster_requested() {
        Duration::from_secs(300)
    } else {
        Duration::from_secs(30)
    }
}

struct Running {
    cluster: TestCluster,
    stop: Option<oneshot::Sender<()>>,
    task: JoinHandle<kcr_controller_manager::Result<()>>,
}

impl Running {
    fn client(&self) -> Client {
        self.cluster.client()
    }

    fn namespace(&self) -> String {
        self.cluster.namespace().to_owned()
    }

    async fn stop(mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        let stopped = tokio::time::timeout(deadline(), self.task).await;
        assert!(
            matches!(stopped, Ok(Ok(Ok(())))),
            "manager did not stop cleanly: {stopped:?}"
        );
        self.cluster.shutdown().await;
    }
}

/// The test's cluster with the Foo CRD, and a manager (its cache limited to the test's
/// namespace) running the Foo controller and, on kcr-testenv, the stand-in Deployment
/// controller.
async fn start(test: &str) -> Running {
    let test_cluster = TestCluster::start(test).await.expect("cluster");
    let client = test_cluster.client();
    cluster::install_foo_crd(&client).await.expect("crd");
    let manager = Manager::new(
        client,
        Options::default()
            .metrics_bind_address("0")
            .informers(InformerOptions::default().default_namespaces([test_cluster.namespace()])),
    )
    .expect("manager");
    sample_controller::add_to_manager(&manager, Settings::default().skip_name_validation(true))
        .await
        .expect("controller");
    if !test_cluster.is_real() {
        deployment_status::add_to_manager(&manager, Duration::from_millis(20)).expect("status");
    }
    let (stop_tx, stop_rx) = oneshot::channel::<()>();
    let task = tokio::spawn(async move {
        manager
            .start(async {
                let _ = stop_rx.await;
            })
            .await
    });
    Running {
        cluster: test_cluster,
        stop: Some(stop_tx),
        task,
    }
}

/// Polls `check` until it returns `Some`, for at most [`deadline`].
async fn eventually<T, F, Fut>(what: &str, mut check: F) -> T
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Option<T>>,
{
    let polled = tokio::time::timeout(deadline(), async {
        loop {
            if let Some(v) = check().await {
                return v;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    })
    .await;
    match polled {
        Ok(v) => v,
        Err(_) => panic!("timed out waiting until {what}"),
    }
}

async fn foo_available(client: &Client, ns: &str, name: &str) -> Option<i32> {
    let foos: Api<Foo> = Api::namespaced(client.clone(), ns);
    foos.get(name).await.ok().map(|f| f.available_replicas())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn foos_should_reach_their_desired_replicas_with_deployments_they_own() {
    let running = start("foos_should_reach_their_desire").await;
    // Available replicas need Pods that run: a kubelet (kcr-testenv's stand-in Deployment
    // controller makes them available without one).
    if running
        .cluster
        .skip_without_kubelet("foos_should_reach_their_desired_replicas_with_deployments_they_own")
        .await
    {
        running.stop().await;
        return;
    }
    let client = running.client();
    let ns = running.namespace();
    for (name, replicas) in [("one", 1), ("three", 3)] {
        cluster::create_foo(&client, &ns, name, replicas)
            .await
            .expect("foo");
    }

    for (name, replicas) in [("one", 1), ("three", 3)] {
        eventually(&format!("{name} has {replicas} available replicas"), || {
            let (client, ns) = (client.clone(), ns.clone());
            async move { (foo_available(&client, &ns, name).await == Some(replicas)).then_some(()) }
        })
        .await;
        let foo: Foo = Api::namespaced(client.clone(), &ns)
            .get(name)
            .await
            .expect("foo");
        let deployments: Api<Deployment> = Api::namespaced(client.clone(), &ns);
        let deployment = deployments
            .get(&format!("{name}-deployment"))
            .await
            .expect("deployment");
        assert!(sample_controller::is_controlled_by(&deployment, &foo));
        let owner = &deployment
            .metadata
            .owner_references
            .as_deref()
            .unwrap_or_default()[0];
        assert_eq!(
            (owner.controller, owner.block_owner_deletion),
            (Some(true), Some(true)),
            "the Foo's reference is a controller reference as NewControllerRef makes it"
        );
        assert_eq!(deployment.spec.replicas, Some(replicas));
    }
    running.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn scaling_a_foo_should_scale_its_deployment_and_update_its_status() {
    let running = start("scaling_a_foo_should_scale_its").await;
    // Available replicas need Pods that run: a kubelet (kcr-testenv's stand-in Deployment
    // controller makes them available without one).
    if running
        .cluster
        .skip_without_kubelet("scaling_a_foo_should_scale_its_deployment_and_update_its_status")
        .await
    {
        running.stop().await;
        return;
    }
    let client = running.client();
    let ns = running.namespace();
    cluster::create_foo(&client, &ns, "scaled", 1)
        .await
        .expect("foo");
    eventually("scaled has 1 available replica", || {
        let (client, ns) = (client.clone(), ns.clone());
        async move { (foo_available(&client, &ns, "scaled").await == Some(1)).then_some(()) }
    })
    .await;

    let foos: Api<Foo> = Api::namespaced(client.clone(), &ns);
    let patch = serde_json::json!({ "spec": { "replicas": 4 } });
    foos.patch("scaled", &PatchParams::default(), &Patch::Merge(&patch))
        .await
        .expect("scale");

    eventually("scaled has 4 available replicas", || {
        let (client, ns) = (client.clone(), ns.clone());
        async move { (foo_available(&client, &ns, "scaled").await == Some(4)).then_some(()) }
    })
    .await;
    let deployments: Api<Deployment> = Api::namespaced(client.clone(), &ns);
    let deployment = deployments
        .get("scaled-deployment")
        .await
        .expect("deployment");
    assert_eq!(deployment.spec.replicas, Some(4));
    running.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_deployment_the_foo_does_not_own_should_get_an_event_and_stay_untouched() {
    let running = start("a_deployment_the_foo_does_not_").await;
    let client = running.client();
    let ns = running.namespace();
    let deployments: Api<Deployment> = Api::namespaced(client.clone(), &ns);
    let taken: Deployment = serde_json::from_value(serde_json::json!({
        "metadata": { "name": "taken-deployment", "namespace": ns,
                      "annotations": { "kcr.dev/written-by": "the-test" } },
        "spec": {
            "replicas": 5,
            "selector": { "matchLabels": { "app": "other" } },
            "template": { "metadata": { "labels": { "app": "other" } },
                          "spec": { "containers": [{ "name": "c", "image": "busybox" }] } }
        }
    }))
    .expect("deployment json");
    let taken = deployments
        .create(&PostParams::default(), &taken)
        .await
        .expect("create");
    // The Foo named "taken" asks for the Deployment "taken-deployment".
    cluster::create_foo(&client, &ns, "taken", 1)
        .await
        .expect("foo");

    let events: Api<Event> = Api::namespaced(client.clone(), &ns);
    let event = eventually("the ErrResourceExists event is recorded", || {
        let events = events.clone();
        async move {
            let list = events.list(&ListParams::default()).await.ok()?;
            list.items.into_iter().find(|e| {
                e.reason.as_deref() == Some(sample_controller::ERR_RESOURCE_EXISTS)
                    && e.regarding.as_ref().and_then(|r| r.name.as_deref()) == Some("taken")
            })
        }
    })
    .await;
    assert_eq!(event.type_.as_deref(), Some("Warning"));
    assert_eq!(
        event.regarding.as_ref().and_then(|r| r.kind.as_deref()),
        Some("Foo")
    );
    assert_eq!(
        event.note.as_deref(),
        Some("resource \"taken-deployment\" already exists and is not managed by Foo")
    );

    let after = deployments
        .get("taken-deployment")
        .await
        .expect("deployment");
    // The Deployment controller (the stand-in one, or a real cluster's) sets the status of
    // every Deployment and may add annotations of its own (a real one writes
    // `deployment.kubernetes.io/revision`), so the resource version may move; the Foo
    // controller must leave the spec, labels, owners and the test's own annotation alone.
    assert_eq!(
        after.metadata.generation, taken.metadata.generation,
        "the deployment's spec was changed"
    );
    assert_eq!(after.spec, taken.spec);
    assert_eq!(after.labels(), taken.labels());
    assert_eq!(
        after.annotations().get("kcr.dev/written-by"),
        Some(&"the-test".to_owned())
    );
    assert!(after.owner_references().is_empty());
    assert_eq!(after.spec.replicas, Some(5));
    let foo: Foo = Api::namespaced(client.clone(), &ns)
        .get("taken")
        .await
        .expect("foo");
    assert!(
        foo.status.is_none(),
        "a Foo without its Deployment got a status"
    );
    running.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_sync_should_record_a_synced_event() {
    let running = start("every_sync_should_record_a_syn").await;
    let client = running.client();
    let ns = running.namespace();
    cluster::create_foo(&client, &ns, "synced", 1)
        .await
        .expect("foo");
    let events: Api<Event> = Api::namespaced(client.clone(), &ns);
    let event = eventually("a Synced event is recorded", || {
        let events = events.clone();
        async move {
            let list = events.list(&ListParams::default()).await.ok()?;
            list.items.into_iter().find(|e| {
                e.reason.as_deref() == Some(sample_controller::SUCCESS_SYNCED)
                    && e.regarding.as_ref().and_then(|r| r.name.as_deref()) == Some("synced")
            })
        }
    })
    .await;
    assert_eq!(event.type_.as_deref(), Some("Normal"));
    assert_eq!(
        event.note.as_deref(),
        Some(sample_controller::MESSAGE_RESOURCE_SYNCED)
    );
    running.stop().await;
}
