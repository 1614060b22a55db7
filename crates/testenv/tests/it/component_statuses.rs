//! `componentstatuses` through `kube::Client`: the storage reports healthy, the scheduler and
//! the controller manager (which kcr-testenv does not run) unhealthy, as kube-apiserver reports
//! components that do not answer.

use k8s_openapi::api::core::v1::ComponentStatus;
use kcr_testenv::TestEnv;
use kube::api::{Api, ListParams};

fn health(cs: &ComponentStatus) -> (String, String, String) {
    let c = &cs.conditions.as_ref().unwrap()[0];
    (
        c.type_.clone(),
        c.status.clone(),
        c.message.clone().unwrap_or_default(),
    )
}

#[tokio::test]
async fn component_statuses_should_report_storage_healthy_and_absent_components_unhealthy() {
    let env = TestEnv::start().await.unwrap();
    let api: Api<ComponentStatus> = Api::all(env.client());
    let mut names: Vec<String> = api
        .list(&ListParams::default())
        .await
        .unwrap()
        .items
        .iter()
        .map(|cs| cs.metadata.name.clone().unwrap())
        .collect();
    names.sort();
    assert_eq!(names, ["controller-manager", "etcd-0", "scheduler"]);
    let etcd = api.get("etcd-0").await.unwrap();
    assert_eq!(
        health(&etcd),
        ("Healthy".into(), "True".into(), "ok".into())
    );
    let scheduler = api.get("scheduler").await.unwrap();
    assert_eq!(
        health(&scheduler),
        (
            "Healthy".into(),
            "False".into(),
            "Get \"https://127.0.0.1:10259/healthz\": dial tcp 127.0.0.1:10259: connect: connection refused".into()
        )
    );
    // A field selector picks one.
    let only = api
        .list(&ListParams::default().fields("metadata.name=etcd-0"))
        .await
        .unwrap();
    assert_eq!(only.items.len(), 1);
}

#[tokio::test]
async fn an_unknown_component_should_be_an_internal_error_as_on_kube_apiserver() {
    let env = TestEnv::start().await.unwrap();
    let api: Api<ComponentStatus> = Api::all(env.client());
    match api.get("kubelet").await.unwrap_err() {
        kube::Error::Api(s) => {
            assert_eq!(
                (s.code, s.message.as_str()),
                (500, "Component not found: kubelet")
            );
            assert_eq!(s.reason, "", "kube-apiserver gives no reason");
        }
        other => panic!("expected an API error, got {other:?}"),
    }
}
