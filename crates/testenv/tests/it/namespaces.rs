//! Namespace lifecycle over HTTP with `kube::Client`: deletion moves a namespace to
//! `Terminating`, creates in it are refused with 403, and kcr-testenv's namespace finalizer
//! removes its objects and then the namespace (kube-controller-manager's job on a cluster).

use crate::common::eventually;

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

/// The namespace controller's conditions on `name`, as `(type, status, reason, message)`.
async fn deletion_conditions(
    api: &Api<Namespace>,
    name: &str,
) -> Vec<(String, String, String, String)> {
    let ns = api.get(name).await.unwrap();
    ns.status
        .and_then(|s| s.conditions)
        .unwrap_or_default()
        .into_iter()
        .map(|c| {
            (
                c.type_,
                c.status,
                c.reason.unwrap_or_default(),
                c.message.unwrap_or_default(),
            )
        })
        .collect()
}

#[tokio::test]
async fn a_terminating_namespace_should_state_what_content_and_finalizers_remain() {
    let env = TestEnv::start().await.unwrap();
    let namespaces: Api<Namespace> = Api::all(env.client());
    namespaces
        .create(&PostParams::default(), &namespace("held"))
        .await
        .unwrap();
    let cms: Api<ConfigMap> = Api::namespaced(env.client(), "held");
    for (name, finalizer) in [("a", "example.com/one"), ("b", "example.com/one")] {
        let mut cm = configmap(name);
        cm.metadata.finalizers = Some(vec![finalizer.into()]);
        cms.create(&PostParams::default(), &cm).await.unwrap();
    }
    let secrets: Api<k8s_openapi::api::core::v1::Secret> = Api::namespaced(env.client(), "held");
    let mut secret = k8s_openapi::api::core::v1::Secret::default();
    secret.metadata.name = Some("s".into());
    secret.metadata.finalizers = Some(vec!["example.com/two".into()]);
    secrets
        .create(&PostParams::default(), &secret)
        .await
        .unwrap();
    namespaces
        .delete("held", &DeleteParams::default())
        .await
        .unwrap();
    let remaining = |c: &[(String, String, String, String)]| {
        c.iter()
            .any(|c| c.0 == "NamespaceContentRemaining" && c.1 == "True")
    };
    assert!(
        eventually(|| async { remaining(&deletion_conditions(&namespaces, "held").await) }).await
    );
    let conditions = deletion_conditions(&namespaces, "held").await;
    fn strings(c: &(String, String, String, String)) -> (&str, &str, &str, &str) {
        (c.0.as_str(), c.1.as_str(), c.2.as_str(), c.3.as_str())
    }
    assert_eq!(
        conditions.iter().map(strings).collect::<Vec<_>>(),
        [
            (
                "NamespaceDeletionDiscoveryFailure",
                "False",
                "ResourcesDiscovered",
                "All resources successfully discovered"
            ),
            (
                "NamespaceDeletionGroupVersionParsingFailure",
                "False",
                "ParsedGroupVersions",
                "All legacy kube types successfully parsed"
            ),
            (
                "NamespaceDeletionContentFailure",
                "False",
                "ContentDeleted",
                "All content successfully deleted, may be waiting on finalization"
            ),
            (
                "NamespaceContentRemaining",
                "True",
                "SomeResourcesRemain",
                "Some resources are remaining: configmaps. has 2 resource instances, secrets. has 1 resource instances"
            ),
            (
                "NamespaceFinalizersRemaining",
                "True",
                "SomeFinalizersRemain",
                "Some content in the namespace has finalizers remaining: example.com/one in 2 resource instances, example.com/two in 1 resource instances"
            ),
        ]
    );
    // The conditions are kube-controller-manager's, written through status.
    let ns = namespaces.get("held").await.unwrap();
    let entry = ns
        .metadata
        .managed_fields
        .unwrap_or_default()
        .into_iter()
        .find(|e| e.manager.as_deref() == Some("kube-controller-manager"))
        .expect("the controller's entry");
    assert_eq!(entry.subresource.as_deref(), Some("status"));
    // Once the finalizers go, so does the namespace.
    let release = Patch::Merge(json!({"metadata": {"finalizers": null}}));
    for name in ["a", "b"] {
        cms.patch(name, &PatchParams::default(), &release)
            .await
            .unwrap();
    }
    secrets
        .patch("s", &PatchParams::default(), &release)
        .await
        .unwrap();
    assert!(eventually(|| async { namespaces.get_opt("held").await.unwrap().is_none() }).await);
}
