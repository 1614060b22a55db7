//! Update rules kube-apiserver applies to every kind (`ValidateObjectMetaUpdate` and the
//! handlers' identity checks), on kinds and verbs beyond the recorded cases.

use serde_json::{Value, json};

use crate::common::raw;

async fn create(addr: std::net::SocketAddr, path: &str, body: Value) -> Value {
    let r = raw(
        addr,
        "POST",
        path,
        &[("Content-Type", "application/json")],
        &serde_json::to_vec(&body).unwrap_or_default(),
    )
    .await;
    assert_eq!(r.status, 201, "{}", String::from_utf8_lossy(&r.body));
    r.json()
}

async fn patch(
    addr: std::net::SocketAddr,
    path: &str,
    content_type: &str,
    body: Value,
) -> (u16, Value) {
    let r = raw(
        addr,
        "PATCH",
        path,
        &[("Content-Type", content_type)],
        &serde_json::to_vec(&body).unwrap_or_default(),
    )
    .await;
    (r.status, r.json())
}

fn causes(status: &Value) -> Vec<(String, String)> {
    status["details"]["causes"]
        .as_array()
        .map(|c| {
            c.iter()
                .map(|c| {
                    (
                        c["field"].as_str().unwrap_or_default().to_owned(),
                        c["message"].as_str().unwrap_or_default().to_owned(),
                    )
                })
                .collect()
        })
        .unwrap_or_default()
}

#[tokio::test]
async fn a_patch_changing_the_uid_of_a_secret_should_be_refused_as_immutable_twice() {
    let env = kcr_testenv::TestEnv::start().await.expect("start");
    let addr = env.addr();
    let path = "/api/v1/namespaces/default/secrets";
    create(
        addr,
        path,
        json!({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "s1"}}),
    )
    .await;
    let uid = "6f0e7b1c-0000-4000-8000-000000000002";
    let (status, body) = patch(
        addr,
        &format!("{path}/s1"),
        "application/merge-patch+json",
        json!({"metadata": {"uid": uid}}),
    )
    .await;
    assert_eq!(status, 422);
    assert_eq!(
        body["message"],
        format!(
            "Secret \"s1\" is invalid: metadata.uid: Invalid value: \"{uid}\": field is immutable"
        )
    );
    let expected = (
        "metadata.uid".to_owned(),
        format!("Invalid value: \"{uid}\": field is immutable"),
    );
    assert_eq!(causes(&body), vec![expected.clone(), expected]);
}

#[tokio::test]
async fn deletion_fields_of_a_deployment_should_not_change_through_a_strategic_merge_patch() {
    let env = kcr_testenv::TestEnv::start().await.expect("start");
    let addr = env.addr();
    let path = "/apis/apps/v1/namespaces/default/deployments";
    create(
        addr,
        path,
        json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "d1"},
               "spec": {"selector": {"matchLabels": {"a": "b"}},
                        "template": {"metadata": {"labels": {"a": "b"}},
                                     "spec": {"containers": [{"name": "c", "image": "nginx"}]}}}}),
    )
    .await;
    let (status, body) = patch(
        addr,
        &format!("{path}/d1"),
        "application/strategic-merge-patch+json",
        json!({"metadata": {"deletionGracePeriodSeconds": 5}}),
    )
    .await;
    assert_eq!(status, 422);
    let expected = (
        "metadata.deletionGracePeriodSeconds".to_owned(),
        "Invalid value: 5: field is immutable".to_owned(),
    );
    assert_eq!(causes(&body), vec![expected.clone(), expected]);
}

#[tokio::test]
async fn a_put_setting_a_deletion_timestamp_on_a_service_should_be_refused() {
    let env = kcr_testenv::TestEnv::start().await.expect("start");
    let addr = env.addr();
    let path = "/api/v1/namespaces/default/services";
    let mut svc = create(
        addr,
        path,
        json!({"apiVersion": "v1", "kind": "Service", "metadata": {"name": "s1"},
               "spec": {"ports": [{"port": 80}]}}),
    )
    .await;
    svc["metadata"]["deletionTimestamp"] = json!("2030-01-01T00:00:00Z");
    let r = raw(
        addr,
        "PUT",
        &format!("{path}/s1"),
        &[("Content-Type", "application/json")],
        &serde_json::to_vec(&svc).unwrap_or_default(),
    )
    .await;
    assert_eq!(r.status, 422);
    assert_eq!(
        causes(&r.json())[0],
        (
            "metadata.deletionTimestamp".to_owned(),
            "Invalid value: \"2030-01-01T00:00:00Z\": field is immutable".to_owned()
        )
    );
}

#[tokio::test]
async fn a_put_with_another_uid_should_still_fail_its_precondition() {
    let env = kcr_testenv::TestEnv::start().await.expect("start");
    let addr = env.addr();
    let path = "/api/v1/namespaces/default/configmaps";
    let mut cm = create(
        addr,
        path,
        json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c1"}}),
    )
    .await;
    cm["metadata"]["uid"] = json!("6f0e7b1c-0000-4000-8000-000000000003");
    let r = raw(
        addr,
        "PUT",
        &format!("{path}/c1"),
        &[("Content-Type", "application/json")],
        &serde_json::to_vec(&cm).unwrap_or_default(),
    )
    .await;
    assert_eq!(r.status, 409);
}

#[tokio::test]
async fn patches_naming_another_object_should_be_bad_requests() {
    let env = kcr_testenv::TestEnv::start().await.expect("start");
    let addr = env.addr();
    let path = "/apis/coordination.k8s.io/v1/namespaces/default/leases";
    create(addr, path, json!({"apiVersion": "coordination.k8s.io/v1", "kind": "Lease", "metadata": {"name": "l1"}})).await;
    let (status, body) = patch(
        addr,
        &format!("{path}/l1"),
        "application/merge-patch+json",
        json!({"metadata": {"namespace": "kube-system"}}),
    )
    .await;
    assert_eq!(status, 400);
    assert_eq!(
        body["message"],
        "the namespace of the provided object does not match the namespace sent on the request"
    );
    let (status, body) = patch(
        addr,
        &format!("{path}/l1"),
        "application/json-patch+json",
        json!([{"op": "replace", "path": "/metadata/name", "value": "l2"}]),
    )
    .await;
    assert_eq!(status, 400);
    assert_eq!(
        body["message"],
        "the name of the object (l2) does not match the name on the URL (l1)"
    );
}

#[tokio::test]
async fn system_fields_in_a_patch_should_be_reset_without_an_error() {
    let env = kcr_testenv::TestEnv::start().await.expect("start");
    let addr = env.addr();
    let path = "/api/v1/namespaces/default/serviceaccounts";
    let sa = create(
        addr,
        path,
        json!({"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": "a1"}}),
    )
    .await;
    let (status, body) = patch(
        addr,
        &format!("{path}/a1"),
        "application/merge-patch+json",
        json!({"metadata": {"creationTimestamp": "2001-01-01T00:00:00Z", "generation": 7}}),
    )
    .await;
    assert_eq!(status, 200);
    assert_eq!(
        body["metadata"]["creationTimestamp"],
        sa["metadata"]["creationTimestamp"]
    );
    assert!(body["metadata"].get("generation").is_none());
}

const POD_UPDATE: &str = "Forbidden: pod updates may not change fields other than `spec.containers[*].image`,`spec.initContainers[*].image`,`spec.activeDeadlineSeconds`,`spec.tolerations` (only additions to existing tolerations),`spec.terminationGracePeriodSeconds` (allow it to be set to 1 if it was previously negative)\n";

#[tokio::test]
async fn a_pod_update_should_change_only_what_kube_apiserver_allows() {
    let env = kcr_testenv::TestEnv::start().await.expect("start");
    let addr = env.addr();
    let path = "/api/v1/namespaces/default/pods";
    create(
        addr,
        path,
        json!({"metadata": {"name": "p"}, "spec": {
            "initContainers": [{"name": "init", "image": "busybox:1"}],
            "containers": [{"name": "app", "image": "nginx:1"}],
            "activeDeadlineSeconds": 600}}),
    )
    .await;
    let p = format!("{path}/p");
    let merge = "application/merge-patch+json";
    let json_patch = "application/json-patch+json";
    // Images, a lower deadline and a new toleration (after those DefaultTolerationSeconds
    // added) may change.
    let (status, v) = patch(
        addr,
        &p,
        json_patch,
        json!([
            {"op": "replace", "path": "/spec/initContainers/0/image", "value": "busybox:2"},
            {"op": "replace", "path": "/spec/containers/0/image", "value": "nginx:2"},
            {"op": "replace", "path": "/spec/activeDeadlineSeconds", "value": 300},
            {"op": "add", "path": "/spec/tolerations/-", "value": {"key": "k", "operator": "Exists"}}
        ]),
    )
    .await;
    assert_eq!(status, 200, "{v}");
    // A command is another field: refused with the diff of the internal specs.
    let (status, v) = patch(
        addr,
        &p,
        json_patch,
        json!([{"op": "add", "path": "/spec/containers/0/command", "value": ["sh"]}]),
    )
    .await;
    assert_eq!(status, 422);
    let c = causes(&v);
    assert_eq!(c.len(), 1);
    assert_eq!(c[0].0, "spec");
    let diff = c[0]
        .1
        .strip_prefix(POD_UPDATE)
        .expect("the allowed fields, then the diff");
    assert!(diff.starts_with("@@ -"), "{diff}");
    assert!(
        diff.contains("\n    \"Image\": \"nginx:2\",\n-   \"Command\": null,\n+   \"Command\": [\n+    \"sh\"\n+   ],\n    \"Args\": null,\n"),
        "{diff}"
    );
    // A longer deadline, and a deadline removed.
    let (status, v) = patch(
        addr,
        &p,
        merge,
        json!({"spec": {"activeDeadlineSeconds": 900}}),
    )
    .await;
    assert_eq!(status, 422);
    assert_eq!(
        causes(&v),
        [(
            "spec.activeDeadlineSeconds".to_owned(),
            "Invalid value: 900: must be less than or equal to previous value".to_owned()
        )]
    );
    // Containers cannot be added (and nothing else is checked then).
    let (status, v) = patch(
        addr,
        &p,
        json_patch,
        json!([{"op": "add", "path": "/spec/containers/-", "value": {"name": "b", "image": "b"}}]),
    )
    .await;
    assert_eq!(status, 422);
    assert_eq!(
        causes(&v),
        [(
            "spec.containers".to_owned(),
            "Forbidden: pod updates may not add or remove containers".to_owned()
        )]
    );
    // An existing toleration cannot change (but for its seconds). (Its operator: a toleration
    // whose key changed would be given back by DefaultTolerationSeconds, which acts on updates.)
    let (status, v) = patch(
        addr,
        &p,
        json_patch,
        json!([{"op": "replace", "path": "/spec/tolerations/0/operator", "value": "Equal"}]),
    )
    .await;
    assert_eq!(status, 422);
    assert_eq!(
        causes(&v)[0],
        (
            "spec.tolerations".to_owned(),
            "Forbidden: existing toleration can not be modified except its tolerationSeconds"
                .to_owned()
        )
    );
}

#[tokio::test]
async fn workload_updates_should_keep_what_their_kind_fixes() {
    let env = kcr_testenv::TestEnv::start().await.expect("start");
    let addr = env.addr();
    let template = json!({"metadata": {"labels": {"app": "w"}},
                          "spec": {"containers": [{"name": "a", "image": "nginx"}]}});
    let spec = json!({"selector": {"matchLabels": {"app": "w"}}, "template": template});
    let sts = "/apis/apps/v1/namespaces/default/statefulsets";
    let created = create(addr, sts, json!({"metadata": {"name": "w"}, "spec": spec})).await;
    assert_eq!(
        created["status"],
        json!({"replicas": 0, "availableReplicas": 0})
    );
    let merge = "application/merge-patch+json";
    // minReadySeconds and ordinals may change; the revision history too.
    let (status, v) = patch(
        addr,
        &format!("{sts}/w"),
        merge,
        json!({"spec": {"minReadySeconds": 5, "revisionHistoryLimit": 3, "ordinals": {"start": 2}}}),
    )
    .await;
    assert_eq!(status, 200, "{v}");
    // A selector that still matches the template is still not an allowed change.
    let (status, v) = patch(
        addr,
        &format!("{sts}/w"),
        merge,
        json!({"spec": {"selector": {"matchLabels": {"app": "w", "x": null}, "matchExpressions": [
            {"key": "app", "operator": "Exists"}]}}}),
    )
    .await;
    assert_eq!(status, 422);
    assert_eq!(causes(&v).len(), 1);
    assert!(causes(&v)[0].1.starts_with("Forbidden: updates to statefulset spec for fields other than 'replicas', 'ordinals', 'template'"));
    // A ReplicaSet's selector is immutable, after its spec is validated.
    let rs = "/apis/apps/v1/namespaces/default/replicasets";
    let created = create(addr, rs, json!({"metadata": {"name": "w"}, "spec": spec})).await;
    assert_eq!(created["status"], json!({"replicas": 0}));
    let (status, v) = patch(
        addr,
        &format!("{rs}/w"),
        merge,
        json!({"spec": {"selector": {"matchLabels": {"app": "other"}}}}),
    )
    .await;
    assert_eq!(status, 422);
    assert_eq!(
        causes(&v),
        [
            (
                "spec.template.metadata.labels".to_owned(),
                "Invalid value: {\"app\":\"w\"}: `selector` does not match template `labels`"
                    .to_owned()
            ),
            (
                "spec.selector".to_owned(),
                "Invalid value: {\"matchLabels\":{\"app\":\"other\"}}: field is immutable"
                    .to_owned()
            ),
        ]
    );
    // A DaemonSet counts its template generations in an annotation.
    let ds = "/apis/apps/v1/namespaces/default/daemonsets";
    let created = create(addr, ds, json!({"metadata": {"name": "w"}, "spec": spec})).await;
    let generation = |v: &Value| {
        v["metadata"]["annotations"]["deprecated.daemonset.template.generation"].clone()
    };
    assert_eq!(generation(&created), "1");
    let (_, v) = patch(
        addr,
        &format!("{ds}/w"),
        merge,
        json!({"spec": {"minReadySeconds": 1}}),
    )
    .await;
    assert_eq!(generation(&v), "1");
    let (_, v) = patch(
        addr,
        &format!("{ds}/w"),
        merge,
        json!({"spec": {"template": {"spec": {"containers": [{"name": "a", "image": "nginx:2"}]}}}}),
    )
    .await;
    assert_eq!(generation(&v), "2");
}

#[tokio::test]
async fn service_ports_should_be_unique_by_name_and_by_port_and_protocol() {
    let env = kcr_testenv::TestEnv::start().await.expect("start");
    let addr = env.addr();
    let path = "/api/v1/namespaces/default/services";
    let r = raw(
        addr,
        "POST",
        path,
        &[("Content-Type", "application/json")],
        &serde_json::to_vec(&json!({"metadata": {"name": "s"}, "spec": {"ports": [
            {"name": "a", "port": 53, "protocol": "UDP"},
            {"name": "a", "port": 53, "protocol": "TCP"},
            {"name": "b", "port": 53, "protocol": "UDP"}]}}))
        .unwrap_or_default(),
    )
    .await;
    assert_eq!(r.status, 422);
    assert_eq!(
        causes(&r.json()),
        [
            ("spec.ports[1].name".to_owned(), "Duplicate value: \"a\"".to_owned()),
            (
                "spec.ports[2]".to_owned(),
                "Duplicate value: {\"Name\":\"\",\"Protocol\":\"UDP\",\"AppProtocol\":null,\"Port\":53,\"TargetPort\":0,\"NodePort\":0}".to_owned()
            ),
        ]
    );
    // No ports at all: only a headless Service may.
    let r = raw(
        addr,
        "POST",
        path,
        &[("Content-Type", "application/json")],
        &serde_json::to_vec(
            &json!({"metadata": {"name": "headless"}, "spec": {"clusterIP": "None"}}),
        )
        .unwrap_or_default(),
    )
    .await;
    assert_eq!(r.status, 201, "{}", String::from_utf8_lossy(&r.body));
}

#[tokio::test]
async fn a_claim_spec_should_be_immutable_but_for_what_binding_sets() {
    let env = kcr_testenv::TestEnv::start().await.expect("start");
    let addr = env.addr();
    let path = "/api/v1/namespaces/default/persistentvolumeclaims";
    let created = create(
        addr,
        path,
        json!({"metadata": {"name": "c"}, "spec": {"accessModes": ["ReadWriteOnce"],
            "resources": {"requests": {"storage": "1Gi"}}}}),
    )
    .await;
    assert_eq!(created["spec"]["volumeMode"], "Filesystem");
    assert_eq!(created["status"], json!({"phase": "Pending"}));
    let merge = "application/merge-patch+json";
    // A volume name and a storage class it did not have yet.
    let (status, v) = patch(
        addr,
        &format!("{path}/c"),
        merge,
        json!({"spec": {"volumeName": "pv-1", "storageClassName": "fast"}}),
    )
    .await;
    assert_eq!(status, 200, "{v}");
    // Not another volume mode.
    let (status, v) = patch(
        addr,
        &format!("{path}/c"),
        merge,
        json!({"spec": {"volumeMode": "Block"}}),
    )
    .await;
    assert_eq!(status, 422);
    assert_eq!(
        causes(&v),
        [(
            "spec".to_owned(),
            "Forbidden: spec is immutable after creation except resources.requests and volumeAttributesClassName for bound claims\n@@ -11,7 +11,7 @@\n  },\n  \"VolumeName\": \"pv-1\",\n  \"StorageClassName\": \"fast\",\n- \"VolumeMode\": \"Filesystem\",\n+ \"VolumeMode\": \"Block\",\n  \"DataSource\": null,\n  \"DataSourceRef\": null,\n  \"VolumeAttributesClassName\": null\n".to_owned()
        )]
    );
}

#[tokio::test]
async fn a_service_status_should_hold_load_balancer_ingress_only_for_a_load_balancer() {
    let env = kcr_testenv::TestEnv::start().await.expect("start");
    let addr = env.addr();
    let path = "/api/v1/namespaces/default/services";
    let ports = json!([{"port": 80}]);
    create(
        addr,
        path,
        json!({"metadata": {"name": "lb"}, "spec": {"type": "LoadBalancer", "ports": ports}}),
    )
    .await;
    create(
        addr,
        path,
        json!({"metadata": {"name": "plain"}, "spec": {"ports": ports}}),
    )
    .await;
    let merge = "application/merge-patch+json";
    let ingress = |point: Value| json!({"status": {"loadBalancer": {"ingress": [point]}}});
    let (status, v) = patch(
        addr,
        &format!("{path}/lb/status"),
        merge,
        ingress(json!({"hostname": "10.0.0.1"})),
    )
    .await;
    assert_eq!(status, 422);
    assert_eq!(
        causes(&v),
        [(
            "status.loadBalancer.ingress[0].hostname".to_owned(),
            "Invalid value: \"10.0.0.1\": must be a DNS name, not an IP address".to_owned()
        )]
    );
    let (status, v) = patch(
        addr,
        &format!("{path}/lb/status"),
        merge,
        ingress(json!({"hostname": "lb.example.com"})),
    )
    .await;
    assert_eq!(status, 200, "{v}");
    let (status, v) = patch(
        addr,
        &format!("{path}/plain/status"),
        merge,
        ingress(json!({"ip": "192.0.2.1"})),
    )
    .await;
    assert_eq!(status, 422);
    assert_eq!(
        causes(&v)[0].1,
        "Forbidden: may only be used when `spec.type` is 'LoadBalancer'"
    );
}

#[tokio::test]
async fn a_service_leaving_node_ports_behind_should_lose_what_it_kept_from_them() {
    let env = kcr_testenv::TestEnv::start().await.expect("start");
    let addr = env.addr();
    let path = "/api/v1/namespaces/default/services";
    let created = create(
        addr,
        path,
        json!({"metadata": {"name": "np"}, "spec": {"type": "LoadBalancer",
            "ports": [{"port": 80}]}}),
    )
    .await;
    assert!(
        created["spec"]["ports"][0]["nodePort"].is_u64(),
        "{created}"
    );
    assert_eq!(created["spec"]["externalTrafficPolicy"], "Cluster");
    let (status, v) = patch(
        addr,
        &format!("{path}/np"),
        "application/merge-patch+json",
        json!({"spec": {"type": "ClusterIP"}}),
    )
    .await;
    assert_eq!(status, 200, "{v}");
    assert!(v["spec"]["ports"][0].get("nodePort").is_none(), "{v}");
    assert!(v["spec"].get("externalTrafficPolicy").is_none(), "{v}");
    assert_eq!(v["spec"]["type"], "ClusterIP");
    // The field manager saw the update before the strategy dropped those fields: the writer
    // still owns them, as on kube-apiserver.
    let owned = &v["metadata"]["managedFields"][0]["fieldsV1"]["f:spec"];
    assert!(owned.get("f:externalTrafficPolicy").is_some(), "{v}");
    // A Service's DELETE answers with the Service.
    let r = raw(addr, "DELETE", &format!("{path}/np"), &[], b"").await;
    assert_eq!(
        (r.status, r.json()["kind"].clone()),
        (200, json!("Service"))
    );
}

/// A binding's role reference cannot change (the message prints the internal `rbac.RoleRef`
/// as Go's `%#v` does); its subjects' API group is defaulted and a new state is checked twice.
#[tokio::test]
async fn a_binding_s_role_reference_should_not_change() {
    let env = kcr_testenv::TestEnv::start().await.expect("start");
    let addr = env.addr();
    let path = "/apis/rbac.authorization.k8s.io/v1/namespaces/default/rolebindings";
    let created = create(
        addr,
        path,
        json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding",
            "metadata": {"name": "b"},
            "roleRef": {"kind": "ClusterRole", "name": "view"},
            "subjects": [{"kind": "User", "name": "alice"}]}),
    )
    .await;
    assert_eq!(created["roleRef"]["apiGroup"], "rbac.authorization.k8s.io");
    assert_eq!(
        created["subjects"][0]["apiGroup"],
        "rbac.authorization.k8s.io"
    );
    let (status, body) = patch(
        addr,
        &format!("{path}/b"),
        "application/merge-patch+json",
        json!({"roleRef": {"name": "edit"}}),
    )
    .await;
    assert_eq!(status, 422, "{body}");
    assert_eq!(
        causes(&body),
        [(
            "roleRef".to_owned(),
            "Invalid value: rbac.RoleRef{APIGroup:\"rbac.authorization.k8s.io\", \
             Kind:\"ClusterRole\", Name:\"edit\"}: cannot change roleRef"
                .to_owned()
        )]
    );
    let (status, body) = patch(
        addr,
        &format!("{path}/b"),
        "application/merge-patch+json",
        json!({"subjects": [{"kind": "Robot", "name": "r2"}]}),
    )
    .await;
    assert_eq!(status, 422, "{body}");
    let unsupported = (
        "subjects[0].kind".to_owned(),
        "Unsupported value: \"Robot\": supported values: \"ServiceAccount\", \"User\", \"Group\""
            .to_owned(),
    );
    assert_eq!(causes(&body), [unsupported.clone(), unsupported]);
}

/// What a provisioner was given, a PriorityClass's value and an EndpointSlice's address type
/// cannot change.
#[tokio::test]
async fn storage_classes_priority_classes_and_endpoint_slices_should_keep_their_fixed_fields() {
    let env = kcr_testenv::TestEnv::start().await.expect("start");
    let addr = env.addr();
    let classes = "/apis/storage.k8s.io/v1/storageclasses";
    let sc = create(
        addr,
        classes,
        json!({"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass",
            "metadata": {"name": "fast"}, "provisioner": "example.com/disk",
            "parameters": {"type": "ssd"}}),
    )
    .await;
    assert_eq!(sc["reclaimPolicy"], "Delete");
    assert_eq!(sc["volumeBindingMode"], "Immediate");
    let (status, body) = patch(
        addr,
        &format!("{classes}/fast"),
        "application/merge-patch+json",
        json!({"parameters": {"type": "hdd"}, "volumeBindingMode": "WaitForFirstConsumer"}),
    )
    .await;
    assert_eq!(status, 422, "{body}");
    assert_eq!(
        causes(&body),
        [
            (
                "parameters".to_owned(),
                "Forbidden: updates to parameters are forbidden.".to_owned()
            ),
            (
                "volumeBindingMode".to_owned(),
                "Invalid value: \"WaitForFirstConsumer\": field is immutable".to_owned()
            )
        ]
    );
    // Labels and annotations still change.
    let (status, _) = patch(
        addr,
        &format!("{classes}/fast"),
        "application/merge-patch+json",
        json!({"metadata": {"labels": {"tier": "gold"}}}),
    )
    .await;
    assert_eq!(status, 200);

    let priorities = "/apis/scheduling.k8s.io/v1/priorityclasses";
    let pc = create(
        addr,
        priorities,
        json!({"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass",
            "metadata": {"name": "batch"}, "value": 1000}),
    )
    .await;
    assert_eq!(pc["metadata"]["generation"], 1);
    assert_eq!(pc["preemptionPolicy"], "PreemptLowerPriority");
    let (status, body) = patch(
        addr,
        &format!("{priorities}/batch"),
        "application/merge-patch+json",
        json!({"value": 2000}),
    )
    .await;
    assert_eq!(status, 422, "{body}");
    assert_eq!(
        causes(&body),
        [(
            "value".to_owned(),
            "Forbidden: may not be changed in an update.".to_owned()
        )]
    );
    // A description changes, and the generation stays 1.
    let (status, body) = patch(
        addr,
        &format!("{priorities}/batch"),
        "application/merge-patch+json",
        json!({"description": "nightly"}),
    )
    .await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["metadata"]["generation"], 1);

    let slices = "/apis/discovery.k8s.io/v1/namespaces/default/endpointslices";
    let eps = create(
        addr,
        slices,
        json!({"apiVersion": "discovery.k8s.io/v1", "kind": "EndpointSlice",
            "metadata": {"name": "s"}, "addressType": "IPv4",
            "endpoints": [{"addresses": ["10.0.0.1"]}]}),
    )
    .await;
    assert_eq!(eps["metadata"]["generation"], 1);
    // A label change bumps an EndpointSlice's generation.
    let (status, body) = patch(
        addr,
        &format!("{slices}/s"),
        "application/merge-patch+json",
        json!({"metadata": {"labels": {"a": "b"}}}),
    )
    .await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["metadata"]["generation"], 2);
    let (status, body) = patch(
        addr,
        &format!("{slices}/s"),
        "application/merge-patch+json",
        json!({"addressType": "IPv6"}),
    )
    .await;
    assert_eq!(status, 422, "{body}");
    assert_eq!(
        causes(&body),
        [(
            "addressType".to_owned(),
            "Invalid value: \"IPv6\": field is immutable".to_owned()
        )]
    );
}
