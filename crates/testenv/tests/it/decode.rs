//! Decoding and update rules recorded from kube-apiserver v1.36 (the DECODE area): discovery's
//! `storageVersionHash`, Pod update validation with the DefaultTolerationSeconds plugin on
//! updates, empty lists of server-side apply, go-yaml's error lines and duplicate-key warnings,
//! and unknown-field warnings of custom resources.

use k8s_openapi::api::core::v1::Pod;
use kube::api::{Api, PostParams};
use kube::Client;
use serde_json::{Value, json};

async fn realistic() -> kcr_testenv::TestEnv {
    kcr_testenv::TestEnv::builder()
        .realistic()
        .start()
        .await
        .expect("start")
}

/// The `422` causes of a refused write as `field: message`.
fn causes(err: kube::Error) -> Vec<String> {
    match err {
        kube::Error::Api(s) => {
            assert_eq!(s.code, 422, "{}", s.message);
            s.details
                .map(|d| d.causes)
                .unwrap_or_default()
                .into_iter()
                .map(|c| format!("{}: {}", c.field, c.message))
                .collect()
        }
        other => panic!("expected an API error, got {other:?}"),
    }
}

fn pod(name: &str, spec: Value) -> Pod {
    serde_json::from_value(json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name}, "spec": spec}))
        .unwrap()
}

async fn create_pod(client: &Client, ns: &str, name: &str) -> Pod {
    let api: Api<Pod> = Api::namespaced(client.clone(), ns);
    api.create(
        &PostParams::default(),
        &pod(
            name,
            json!({"automountServiceAccountToken": false,
                   "containers": [{"name": "app", "image": "registry.k8s.io/pause:3.10"}]}),
        ),
    )
    .await
    .unwrap()
}

#[tokio::test]
async fn a_pod_put_without_tolerations_should_get_them_back_from_admission() {
    let env = realistic().await;
    let api: Api<Pod> = Api::namespaced(env.client(), "default");
    let created = create_pod(&env.client(), "default", "dts-put").await;
    // The server's spec without its tolerations: DefaultTolerationSeconds adds them again on
    // update, so nothing but the labels changes.
    let mut spec = serde_json::to_value(created.spec.unwrap()).unwrap();
    spec.as_object_mut().unwrap().remove("tolerations");
    let mut put = pod("dts-put", spec);
    put.metadata.labels = Some([("x".to_owned(), "y".to_owned())].into());
    let updated = api.replace("dts-put", &PostParams::default(), &put).await.unwrap();
    let tolerations = serde_json::to_value(updated.spec.unwrap().tolerations).unwrap();
    assert_eq!(
        tolerations,
        json!([
            {"key": "node.kubernetes.io/not-ready", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 300},
            {"key": "node.kubernetes.io/unreachable", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 300}
        ])
    );
    assert_eq!(updated.metadata.generation, Some(1));
}

const UPDATABLE: &str = "spec: Forbidden: pod updates may not change fields other than `spec.containers[*].image`,`spec.initContainers[*].image`,`spec.activeDeadlineSeconds`,`spec.tolerations` (only additions to existing tolerations),`spec.terminationGracePeriodSeconds` (allow it to be set to 1 if it was previously negative)";

#[tokio::test]
async fn a_pod_put_of_the_original_spec_should_name_only_the_whole_spec() {
    // kube-apiserver v1.36.2 (corpus case upd-pod-put-unconditional): the admission plugins
    // give the tolerations, priority and preemption policy back; the ServiceAccount plugin does
    // not act on updates, so the diff names only serviceAccountName.
    let env = realistic().await;
    let api: Api<Pod> = Api::namespaced(env.client(), "default");
    create_pod(&env.client(), "default", "orig").await;
    let put = pod(
        "orig",
        json!({"automountServiceAccountToken": false,
               "containers": [{"name": "app", "image": "registry.k8s.io/pause:3.10"}]}),
    );
    let err = api.replace("orig", &PostParams::default(), &put).await.unwrap_err();
    let causes = causes(err);
    assert_eq!(
        causes,
        [format!(
            "{UPDATABLE}\n@@ -40,7 +40,7 @@\n  \"ActiveDeadlineSeconds\": null,\n  \"DNSPolicy\": \"ClusterFirst\",\n  \"NodeSelector\": null,\n- \"ServiceAccountName\": \"default\",\n+ \"ServiceAccountName\": \"\",\n  \"AutomountServiceAccountToken\": false,\n  \"NodeName\": \"\",\n  \"SecurityContext\": {{\n"
        )]
    );
}

/// The stored Pod's spec as JSON, changed by `f`, PUT back; the `422` causes or `Ok`.
async fn put_spec(api: &Api<Pod>, name: &str, f: impl FnOnce(&mut Value)) -> Result<Pod, Vec<String>> {
    let current = api.get(name).await.unwrap();
    let mut body = serde_json::to_value(&current).unwrap();
    f(&mut body["spec"]);
    let pod: Pod = serde_json::from_value(body).unwrap();
    api.replace(name, &PostParams::default(), &pod).await.map_err(causes)
}

#[tokio::test]
async fn pod_updates_should_allow_only_what_validate_pod_update_allows() {
    let env = realistic().await;
    let api: Api<Pod> = Api::namespaced(env.client(), "default");
    create_pod(&env.client(), "default", "p").await;
    // An image may change; a deadline may be set, then only lowered.
    put_spec(&api, "p", |s| s["containers"][0]["image"] = json!("registry.k8s.io/pause:3.9"))
        .await
        .unwrap();
    put_spec(&api, "p", |s| s["activeDeadlineSeconds"] = json!(100)).await.unwrap();
    put_spec(&api, "p", |s| s["activeDeadlineSeconds"] = json!(50)).await.unwrap();
    assert_eq!(
        put_spec(&api, "p", |s| s["activeDeadlineSeconds"] = json!(60)).await.unwrap_err(),
        ["spec.activeDeadlineSeconds: Invalid value: 60: must be less than or equal to previous value"]
    );
    assert_eq!(
        put_spec(&api, "p", |s| {
            s.as_object_mut().unwrap().remove("activeDeadlineSeconds");
        })
        .await
        .unwrap_err(),
        ["spec.activeDeadlineSeconds: Invalid value: null: must not update from a positive integer to nil value"]
    );
    // `ValidatePodSpec` first (a deadline is at least 1), the update rule (at least 0) passes.
    assert_eq!(
        put_spec(&api, "p", |s| s["activeDeadlineSeconds"] = json!(0)).await.unwrap_err(),
        ["spec.activeDeadlineSeconds: Invalid value: 0: must be between 1 and 2147483647, inclusive"]
    );
    // Tolerations may be added; an existing one may change only its tolerationSeconds.
    let added = json!({"key": "k", "operator": "Equal", "value": "v", "effect": "NoSchedule"});
    put_spec(&api, "p", |s| s["tolerations"].as_array_mut().unwrap().push(added.clone()))
        .await
        .unwrap();
    put_spec(&api, "p", |s| s["tolerations"][0]["tolerationSeconds"] = json!(60))
        .await
        .unwrap();
    assert_eq!(
        put_spec(&api, "p", |s| s["tolerations"][2]["value"] = json!("w")).await.unwrap_err(),
        ["spec.tolerations: Forbidden: existing toleration can not be modified except its tolerationSeconds"]
    );
    // The tolerations check comes before the whole-spec check.
    let causes = put_spec(&api, "p", |s| {
        s["tolerations"][2]["value"] = json!("w");
        s["dnsPolicy"] = json!("Default");
    })
    .await
    .unwrap_err();
    assert_eq!(causes.len(), 2, "{causes:?}");
    assert_eq!(
        causes[0],
        "spec.tolerations: Forbidden: existing toleration can not be modified except its tolerationSeconds"
    );
    assert!(causes[1].starts_with(UPDATABLE), "{}", causes[1]);
    assert!(causes[1].contains("- \"DNSPolicy\": \"ClusterFirst\",\n+ \"DNSPolicy\": \"Default\",\n"), "{}", causes[1]);
    // Labels are metadata: they may change.
    let mut current = api.get("p").await.unwrap();
    current.metadata.labels = Some([("a".to_owned(), "b".to_owned())].into());
    let updated = api.replace("p", &PostParams::default(), &current).await.unwrap();
    assert_eq!(updated.metadata.labels.unwrap()["a"], "b");
}

#[tokio::test]
async fn a_pod_put_without_priority_should_keep_the_stored_one() {
    let env = realistic().await;
    let api: Api<Pod> = Api::namespaced(env.client(), "default");
    create_pod(&env.client(), "default", "prio").await;
    let updated = put_spec(&api, "prio", |s| {
        let s = s.as_object_mut().unwrap();
        s.remove("priority");
        s.remove("preemptionPolicy");
    })
    .await
    .unwrap();
    let spec = updated.spec.unwrap();
    assert_eq!(spec.priority, Some(0));
    assert_eq!(spec.preemption_policy.as_deref(), Some("PreemptLowerPriority"));
}

/// One request over plain HTTP: status, JSON body, `Warning` header.
async fn send(
    env: &kcr_testenv::TestEnv,
    method: &str,
    path: &str,
    content_type: &str,
    body: &[u8],
) -> (u16, Value, Option<String>) {
    let r = crate::common::raw(env.addr(), method, path, &[("Content-Type", content_type)], body).await;
    (r.status, r.json(), r.header("Warning").map(str::to_owned))
}

const APPLY: &str = "application/apply-patch+yaml";
const JSON: &str = "application/json";

#[tokio::test]
async fn empty_lists_and_maps_should_come_back_as_storage_gives_them() {
    let env = realistic().await;
    let roles = "/apis/rbac.authorization.k8s.io/v1/clusterroles";
    // Applied: `rules` has no omitempty, so it is null; the applier still owns it.
    let (status, v, _) = send(
        &env,
        "PATCH",
        &format!("{roles}/applied?fieldManager=a"),
        APPLY,
        b"apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRole\nmetadata:\n  name: applied\n  labels: {}\nrules: []\n",
    )
    .await;
    assert_eq!(status, 201, "{v}");
    assert_eq!(v["rules"], Value::Null);
    assert!(v.get("rules").is_some(), "{v}");
    assert!(v["metadata"].get("labels").is_none(), "{v}");
    assert_eq!(v["metadata"]["managedFields"][0]["fieldsV1"], json!({"f:metadata": {"f:labels": {}}, "f:rules": {}}));
    // Created from JSON, and as a dry run: the same.
    for path in [format!("{roles}?dryRun=All"), roles.to_owned()] {
        let body = json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole",
                          "metadata": {"name": "created"}, "rules": [{"apiGroups": [""], "resources": ["pods"], "verbs": ["get"], "resourceNames": []}]});
        let (status, v, _) = send(&env, "POST", &path, JSON, body.to_string().as_bytes()).await;
        assert_eq!(status, 201, "{v}");
        assert_eq!(v["rules"][0], json!({"apiGroups": [""], "resources": ["pods"], "verbs": ["get"]}), "{path}");
    }
    // A PUT's empty list comes back null too.
    let (_, before, _) = send(&env, "GET", &format!("{roles}/applied"), JSON, b"").await;
    let mut put = before.clone();
    put["rules"] = json!([]);
    put["metadata"]["labels"] = json!({"x": "y"});
    let (status, after, _) =
        send(&env, "PUT", &format!("{roles}/applied"), JSON, put.to_string().as_bytes()).await;
    assert_eq!(status, 200, "{after}");
    assert_eq!(after["rules"], Value::Null);
    assert!(after.get("rules").is_some(), "{after}");
    // A ConfigMap's empty data (omitempty) is dropped.
    let (status, v, _) = send(
        &env,
        "POST",
        "/api/v1/namespaces/default/configmaps",
        JSON,
        br#"{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"empty","annotations":{}},"data":{}}"#,
    )
    .await;
    assert_eq!(status, 201, "{v}");
    assert!(v.get("data").is_none() && v["metadata"].get("annotations").is_none(), "{v}");
}
