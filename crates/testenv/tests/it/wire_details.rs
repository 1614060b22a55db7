//! Details of what goes over the wire that clients can see: the field order of JSON bodies
//! (kube-apiserver writes `kind`, `apiVersion`, `metadata` first) and dry-run writes that
//! return no resourceVersion that was never stored.

use crate::common;

use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::core::v1::{ConfigMap, Namespace};
use kcr_testenv::TestEnv;
use kube::api::{Api, DeleteParams, Patch, PatchParams, PostParams};
use serde_json::json;

fn starts_with(body: &[u8], prefix: &str) {
    let text = String::from_utf8_lossy(body);
    assert!(
        text.starts_with(prefix),
        "{text}\ndoes not start with\n{prefix}"
    );
}

#[tokio::test]
async fn objects_lists_and_errors_should_start_with_kind_api_version_and_metadata() {
    let env = TestEnv::start().await.unwrap();
    let body = serde_json::to_vec(&common::configmap("ordered", &[("a", "b")])).unwrap();
    let created = common::raw(
        env.addr(),
        "POST",
        "/api/v1/namespaces/default/configmaps",
        &[("Content-Type", "application/json")],
        &body,
    )
    .await;
    assert_eq!(created.status, 201);
    starts_with(
        &created.body,
        r#"{"kind":"ConfigMap","apiVersion":"v1","metadata":{"name":"ordered","namespace":"default","uid":""#,
    );
    let got = common::raw(
        env.addr(),
        "GET",
        "/api/v1/namespaces/default/configmaps/ordered",
        &[],
        b"",
    )
    .await;
    starts_with(
        &got.body,
        r#"{"kind":"ConfigMap","apiVersion":"v1","metadata":{"name":"ordered","namespace":"default","uid":""#,
    );
    let text = String::from_utf8_lossy(&got.body);
    let rv = text.find(r#""resourceVersion""#).unwrap();
    let created_at = text.find(r#""creationTimestamp""#).unwrap();
    let labels = text.find(r#""labels""#).unwrap();
    let managed = text.find(r#""managedFields""#).unwrap();
    assert!(
        rv < created_at && created_at < labels && labels < managed,
        "{text}"
    );
    let list = common::raw(
        env.addr(),
        "GET",
        "/api/v1/namespaces/default/configmaps",
        &[],
        b"",
    )
    .await;
    starts_with(
        &list.body,
        r#"{"kind":"ConfigMapList","apiVersion":"v1","metadata":{"resourceVersion":"#,
    );
    let missing = common::raw(
        env.addr(),
        "GET",
        "/api/v1/namespaces/default/configmaps/missing",
        &[],
        b"",
    )
    .await;
    assert_eq!(missing.status, 404);
    starts_with(
        &missing.body,
        r#"{"kind":"Status","apiVersion":"v1","metadata":{},"#,
    );
}

#[tokio::test]
async fn dry_run_writes_should_return_no_new_resource_version_and_store_nothing() {
    let env = TestEnv::start().await.unwrap();
    let api: Api<ConfigMap> = Api::namespaced(env.client(), "default");
    let created = api
        .create(&PostParams::default(), &common::configmap("dry", &[]))
        .await
        .unwrap();
    let rv = created.metadata.resource_version.clone();
    let server_rv = env.resource_version();
    let dry = PostParams {
        dry_run: true,
        ..PostParams::default()
    };

    let mut changed = created.clone();
    changed.data = Some([("key".to_owned(), "dry".to_owned())].into());
    let replaced = api.replace("dry", &dry, &changed).await.unwrap();
    assert_eq!(replaced.data, changed.data);
    assert_eq!(replaced.metadata.resource_version, rv, "update");

    let patch = json!({"data": {"key": "patched"}});
    let patch_params = PatchParams {
        dry_run: true,
        ..PatchParams::default()
    };
    let patched = api
        .patch("dry", &patch_params, &Patch::Merge(&patch))
        .await
        .unwrap();
    assert_eq!(patched.data.unwrap()["key"], "patched");
    assert_eq!(patched.metadata.resource_version, rv, "patch");

    let new = api
        .create(&dry, &common::configmap("dry-new", &[]))
        .await
        .unwrap();
    assert_eq!(new.metadata.resource_version, None, "create");

    let namespaces: Api<Namespace> = Api::all(env.client());
    let mut ns = Namespace::default();
    ns.metadata.name = Some("dry-ns".into());
    let ns = namespaces
        .create(&PostParams::default(), &ns)
        .await
        .unwrap();
    let ns_rv = ns.metadata.resource_version.clone();
    let server_rv_ns = env.resource_version();
    let delete_dry = DeleteParams {
        dry_run: true,
        ..DeleteParams::default()
    };
    let answered = namespaces.delete("dry-ns", &delete_dry).await.unwrap();
    let terminating = answered.left().unwrap();
    assert_eq!(terminating.metadata.resource_version, ns_rv, "delete");
    assert!(terminating.metadata.deletion_timestamp.is_some());

    assert_eq!(env.resource_version(), server_rv_ns);
    assert_eq!(server_rv_ns, server_rv + 1, "only the namespace was stored");

    let deployments: Api<Deployment> = Api::namespaced(env.client(), "default");
    let deployment: Deployment = serde_json::from_value(json!({
        "metadata": {"name": "web"},
        "spec": {
            "replicas": 1,
            "selector": {"matchLabels": {"app": "web"}},
            "template": {
                "metadata": {"labels": {"app": "web"}},
                "spec": {"containers": [{"name": "web", "image": "nginx"}]}
            }
        }
    }))
    .unwrap();
    let deployment = deployments
        .create(&PostParams::default(), &deployment)
        .await
        .unwrap();
    let scale = json!({"spec": {"replicas": 3}});
    let scaled = deployments
        .patch_scale("web", &patch_params, &Patch::Merge(&scale))
        .await
        .unwrap();
    assert_eq!(scaled.spec.unwrap().replicas, Some(3));
    assert_eq!(
        scaled.metadata.resource_version, deployment.metadata.resource_version,
        "scale"
    );
    let stored = deployments.get("web").await.unwrap();
    assert_eq!(stored.spec.replicas, Some(1));
    let stored = api.get("dry").await.unwrap();
    assert_eq!(stored.data, created.data);
    assert_eq!(stored.metadata.resource_version, rv);
    assert!(api.get_opt("dry-new").await.unwrap().is_none());
}
