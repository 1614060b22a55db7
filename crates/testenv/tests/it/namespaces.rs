//! Namespace lifecycle over HTTP with `kube::Client`: deletion moves a namespace to
//! `Terminating`, creates in it are refused with 403, and kcr-testenv's namespace finalizer
//! removes its objects and then the namespace (kube-controller-manager's job on a cluster).

use std::time::Duration;

use k8s_openapi::api::core::v1::{ConfigMap, Namespace};
use kcr_testenv::TestEnv;
use kube::api::{Api, DeleteParams, Patch, PatchParams, PostParams};
use serde_json::json;

fn namespace(name: &str) -> Namespace {
    let mut ns = Namespace::default();
    ns.metadata.name = Some(name.into());
    ns
}

fn configmap(name: &str) -> ConfigMap {
    let mut cm = ConfigMap::default();
    cm.metadata.name = Some(name.into());
    cm
}

/// Polls until `f` holds (the finalizer runs in the background), for at most five seconds.
async fn eventually<F, Fut>(mut f: F) -> bool
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = bool>,
{
    for _ in 0..100 {
        if f().await {
            return true;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    false
}

#[tokio::test]
async fn a_new_namespace_should_get_its_defaults() {
    let env = TestEnv::start().await.unwrap();
    let api: Api<Namespace> = Api::all(env.client());
    let ns = api
        .create(&PostParams::default(), &namespace("team-a"))
        .await
        .unwrap();
    let labels = ns.metadata.labels.unwrap_or_default();
    assert_eq!(
        labels
            .get("kubernetes.io/metadata.name")
            .map(String::as_str),
        Some("team-a")
    );
    assert_eq!(
        ns.spec.and_then(|s| s.finalizers),
        Some(vec!["kubernetes".to_owned()])
    );
    assert_eq!(ns.status.and_then(|s| s.phase).as_deref(), Some("Active"));
    assert_eq!(ns.metadata.generation, None);
}

#[tokio::test]
async fn deleting_a_namespace_should_remove_its_objects_then_the_namespace() {
    let env = TestEnv::start().await.unwrap();
    let namespaces: Api<Namespace> = Api::all(env.client());
    namespaces
        .create(&PostParams::default(), &namespace("doomed"))
        .await
        .unwrap();
    let cms: Api<ConfigMap> = Api::namespaced(env.client(), "doomed");
    cms.create(&PostParams::default(), &configmap("plain"))
        .await
        .unwrap();
    let mut kept = configmap("kept");
    kept.metadata.finalizers = Some(vec!["example.com/hold".into()]);
    cms.create(&PostParams::default(), &kept).await.unwrap();

    let answer = namespaces
        .delete("doomed", &DeleteParams::default())
        .await
        .unwrap();
    let terminating = answer
        .left()
        .expect("a namespace DELETE answers with the namespace");
    assert!(terminating.metadata.deletion_timestamp.is_some());
    assert_eq!(
        terminating.status.and_then(|s| s.phase).as_deref(),
        Some("Terminating")
    );

    // The finalizer deletes the plain object and marks the one a finalizer holds; the namespace
    // waits for it.
    assert!(eventually(|| async { cms.get_opt("plain").await.unwrap().is_none() }).await);
    let held = cms.get("kept").await.unwrap();
    assert!(held.metadata.deletion_timestamp.is_some());
    assert!(namespaces.get_opt("doomed").await.unwrap().is_some());

    // New content is refused while it terminates.
    let e = cms
        .create(&PostParams::default(), &configmap("late"))
        .await
        .unwrap_err();
    assert!(matches!(e, kube::Error::Api(s) if s.code == 403 && s.reason == "Forbidden"));

    cms.patch(
        "kept",
        &PatchParams::default(),
        &Patch::Merge(json!({"metadata": {"finalizers": null}})),
    )
    .await
    .unwrap();
    assert!(eventually(|| async { namespaces.get_opt("doomed").await.unwrap().is_none() }).await);
}

#[tokio::test]
async fn without_the_finalizer_a_namespace_should_stay_terminating_until_finalized() {
    let env = TestEnv::builder()
        .finalize_namespaces(false)
        .start()
        .await
        .unwrap();
    let namespaces: Api<Namespace> = Api::all(env.client());
    namespaces
        .create(&PostParams::default(), &namespace("stuck"))
        .await
        .unwrap();
    let cms: Api<ConfigMap> = Api::namespaced(env.client(), "stuck");
    cms.create(&PostParams::default(), &configmap("inside"))
        .await
        .unwrap();
    namespaces
        .delete("stuck", &DeleteParams::default())
        .await
        .unwrap();
    // A second DELETE answers with the terminating namespace again.
    let again = namespaces
        .delete("stuck", &DeleteParams::default())
        .await
        .unwrap();
    assert!(
        again
            .left()
            .is_some_and(|ns| ns.metadata.deletion_timestamp.is_some())
    );
    // Objects in it can still be read and updated.
    cms.patch(
        "inside",
        &PatchParams::default(),
        &Patch::Merge(json!({"data": {"a": "1"}})),
    )
    .await
    .unwrap();

    let mut finalized = namespaces.get("stuck").await.unwrap();
    finalized.spec = Some(Default::default());
    let answer = namespaces
        .replace_subresource("finalize", "stuck", &PostParams::default(), &finalized)
        .await
        .unwrap();
    assert!(answer.spec.and_then(|s| s.finalizers).is_none());
    assert!(namespaces.get_opt("stuck").await.unwrap().is_none());
}

#[tokio::test]
async fn a_dry_run_delete_should_leave_the_namespace_active() {
    let env = TestEnv::start().await.unwrap();
    let namespaces: Api<Namespace> = Api::all(env.client());
    namespaces
        .create(&PostParams::default(), &namespace("kept"))
        .await
        .unwrap();
    let dp = DeleteParams {
        dry_run: true,
        ..Default::default()
    };
    namespaces.delete("kept", &dp).await.unwrap();
    let ns = namespaces.get("kept").await.unwrap();
    assert_eq!(ns.status.and_then(|s| s.phase).as_deref(), Some("Active"));
}
