//! Request conventions kube-apiserver v1.36 follows, over HTTP with `kube::Client`: `dryRun`
//! takes only `All`, a PUT with another object's `uid` conflicts, a ConfigMap's DELETE answers
//! with a `Status`, Foreground and Orphan deletion leave a garbage-collector finalizer, and
//! `/version` reports v1.36.

use k8s_openapi::api::core::v1::ConfigMap;
use kcr_testenv::TestEnv;
use kube::api::{Api, DeleteParams, PostParams, PropagationPolicy};

use crate::common;
use common::{configmap, raw};

fn status_code(e: kube::Error) -> (u16, String) {
    match e {
        kube::Error::Api(s) => (s.code, s.message),
        other => panic!("expected an API error, got {other}"),
    }
}

#[tokio::test]
async fn dry_run_should_accept_only_all() {
    let env = TestEnv::start().await.unwrap();
    let body = serde_json::to_vec(&configmap("dry", &[])).unwrap();
    let answer = raw(
        env.addr(),
        "POST",
        "/api/v1/namespaces/default/configmaps?dryRun=Yes",
        &[("Content-Type", "application/json")],
        &body,
    )
    .await;
    assert_eq!(answer.status, 422);
    let status = answer.json();
    assert_eq!(status["details"]["kind"], "CreateOptions");
    assert_eq!(status["details"]["causes"][0]["field"], "dryRun");
    let api: Api<ConfigMap> = Api::namespaced(env.client(), "default");
    assert!(api.get_opt("dry").await.unwrap().is_none());
}

#[tokio::test]
async fn a_put_with_another_uid_should_conflict() {
    let env = TestEnv::start().await.unwrap();
    let api: Api<ConfigMap> = Api::namespaced(env.client(), "default");
    api.create(&PostParams::default(), &configmap("a", &[]))
        .await
        .unwrap();
    let mut stale = configmap("a", &[]);
    stale.metadata.uid = Some("00000000-0000-0000-0000-000000000001".into());
    let (code, message) = status_code(
        api.replace("a", &PostParams::default(), &stale)
            .await
            .unwrap_err(),
    );
    assert_eq!(code, 409);
    assert!(
        message.contains("Precondition failed: UID in precondition"),
        "{message}"
    );
}

#[tokio::test]
async fn configmaps_should_have_no_generation_and_answer_delete_with_a_status() {
    let env = TestEnv::start().await.unwrap();
    let api: Api<ConfigMap> = Api::namespaced(env.client(), "default");
    let created = api
        .create(&PostParams::default(), &configmap("a", &[]))
        .await
        .unwrap();
    assert_eq!(created.metadata.generation, None);
    let answer = api.delete("a", &DeleteParams::default()).await.unwrap();
    let status = answer.right().expect("a Status");
    assert!(status.is_success());
    assert_eq!(status.details.map(|d| d.uid), created.metadata.uid);
}

#[tokio::test]
async fn foreground_deletion_should_leave_the_object_with_the_gc_finalizer() {
    let env = TestEnv::start().await.unwrap();
    let api: Api<ConfigMap> = Api::namespaced(env.client(), "default");
    api.create(&PostParams::default(), &configmap("fg", &[]))
        .await
        .unwrap();
    api.create(&PostParams::default(), &configmap("or", &[]))
        .await
        .unwrap();
    let fg = DeleteParams {
        propagation_policy: Some(PropagationPolicy::Foreground),
        ..Default::default()
    };
    let kept = api
        .delete("fg", &fg)
        .await
        .unwrap()
        .left()
        .expect("the object");
    assert_eq!(
        kept.metadata.finalizers,
        Some(vec!["foregroundDeletion".to_owned()])
    );
    assert!(kept.metadata.deletion_timestamp.is_some());
    let orphan = DeleteParams {
        propagation_policy: Some(PropagationPolicy::Orphan),
        ..Default::default()
    };
    let kept = api
        .delete("or", &orphan)
        .await
        .unwrap()
        .left()
        .expect("the object");
    assert_eq!(kept.metadata.finalizers, Some(vec!["orphan".to_owned()]));
}

#[tokio::test]
async fn version_should_report_1_36() {
    let env = TestEnv::start().await.unwrap();
    let info = env.client().apiserver_version().await.unwrap();
    assert_eq!((info.major.as_str(), info.minor.as_str()), ("1", "36"));
    assert!(
        info.git_version.starts_with("v1.36."),
        "{}",
        info.git_version
    );
}
