//! Subresources with behaviour of their own, through `kube::Client`: `scale` of the apps
//! workloads and ReplicationControllers, `pods/eviction` (with PodDisruptionBudgets),
//! `pods/log`, `pods/binding`, `pods/ephemeralcontainers`, `pods/resize` and
//! `certificatesigningrequests/approval`.

use k8s_openapi::api::apps::v1::{ReplicaSet, StatefulSet};
use k8s_openapi::api::certificates::v1::CertificateSigningRequest;
use k8s_openapi::api::core::v1::{Pod, ReplicationController};
use k8s_openapi::api::policy::v1::PodDisruptionBudget;
use kcr_testenv::TestEnv;
use kube::api::{Api, EvictParams, LogParams, Patch, PatchParams, PostParams};
use kube::core::Status;
use serde_json::json;

fn from_json<T: serde::de::DeserializeOwned>(v: serde_json::Value) -> T {
    serde_json::from_value(v).unwrap()
}

fn api_error(e: kube::Error) -> Status {
    match e {
        kube::Error::Api(s) => *s,
        other => panic!("expected an API error, got {other:?}"),
    }
}

/// A client that hands `429` back instead of retrying it.
fn no_retry_client(env: &TestEnv) -> kube::Client {
    let mut config = env.config().unwrap();
    config.default_retry = false;
    kube::Client::try_from(config).unwrap()
}

fn pod(name: &str, labels: serde_json::Value) -> Pod {
    from_json(json!({
        "metadata": {"name": name, "labels": labels},
        "spec": {"containers": [{"name": "app", "image": "nginx",
                                  "resources": {"requests": {"cpu": "100m", "memory": "64Mi"}}}]}
    }))
}

async fn running_ready(pods: &Api<Pod>, name: &str) {
    let mut p = pods.get_status(name).await.unwrap();
    p.status = Some(from_json(json!({
        "phase": "Running",
        "conditions": [{"type": "Ready", "status": "True"}]
    })));
    pods.replace_status(name, &PostParams::default(), &p)
        .await
        .unwrap();
}

fn template(app: &str) -> serde_json::Value {
    json!({"metadata": {"labels": {"app": app}},
           "spec": {"containers": [{"name": "app", "image": "nginx"}]}})
}

#[tokio::test]
async fn scale_should_read_and_write_the_replicas_of_replica_sets_stateful_sets_and_controllers() {
    let env = TestEnv::start().await.unwrap();
    let rs: Api<ReplicaSet> = Api::namespaced(env.client(), "default");
    rs.create(
        &PostParams::default(),
        &from_json(json!({"metadata": {"name": "web"}, "spec": {"replicas": 2,
            "selector": {"matchLabels": {"app": "web"}, "matchExpressions": [{"key": "tier", "operator": "NotIn", "values": ["db"]}]},
            "template": template("web")}})),
    )
    .await
    .unwrap();
    let scale = rs.get_scale("web").await.unwrap();
    assert_eq!(scale.spec.unwrap().replicas, Some(2));
    assert_eq!(
        scale.status.unwrap().selector.as_deref(),
        Some("app=web,tier notin (db)")
    );
    let scaled = rs
        .patch_scale(
            "web",
            &PatchParams::default(),
            &Patch::Merge(json!({"spec": {"replicas": 5}})),
        )
        .await
        .unwrap();
    assert_eq!(scaled.spec.unwrap().replicas, Some(5));
    assert_eq!(rs.get("web").await.unwrap().spec.replicas, Some(5));

    let sts: Api<StatefulSet> = Api::namespaced(env.client(), "default");
    sts.create(
        &PostParams::default(),
        &from_json(
            json!({"metadata": {"name": "db"}, "spec": {"replicas": 1, "serviceName": "db",
            "selector": {"matchLabels": {"app": "db"}}, "template": template("db")}}),
        ),
    )
    .await
    .unwrap();
    let mut scale = sts.get_scale("db").await.unwrap();
    scale.spec.as_mut().unwrap().replicas = Some(3);
    sts.replace_scale("db", &PostParams::default(), &scale)
        .await
        .unwrap();
    assert_eq!(sts.get("db").await.unwrap().spec.replicas, Some(3));
    // A stale resourceVersion in the Scale is a conflict.
    let err = sts
        .replace_scale("db", &PostParams::default(), &scale)
        .await
        .unwrap_err();
    assert_eq!(api_error(err).code, 409);

    let rc: Api<ReplicationController> = Api::namespaced(env.client(), "default");
    rc.create(
        &PostParams::default(),
        &from_json(
            json!({"metadata": {"name": "legacy"}, "spec": {"replicas": 1,
            "selector": {"app": "legacy"}, "template": template("legacy")}}),
        ),
    )
    .await
    .unwrap();
    let scale = rc.get_scale("legacy").await.unwrap();
    assert_eq!(
        scale.status.unwrap().selector.as_deref(),
        Some("app=legacy")
    );
    rc.patch_scale(
        "legacy",
        &PatchParams::default(),
        &Patch::Merge(json!({"spec": {"replicas": 0}})),
    )
    .await
    .unwrap();
    assert_eq!(
        rc.get("legacy").await.unwrap().spec.unwrap().replicas,
        Some(0)
    );
}

#[tokio::test]
async fn eviction_should_delete_the_pod_unless_its_disruption_budget_forbids_it() {
    let env = TestEnv::start().await.unwrap();
    let client = no_retry_client(&env);
    let pods: Api<Pod> = Api::namespaced(client.clone(), "default");
    // Without a budget the Pod goes.
    pods.create(&PostParams::default(), &pod("free", json!({"app": "free"})))
        .await
        .unwrap();
    running_ready(&pods, "free").await;
    let status = pods.evict("free", &EvictParams::default()).await.unwrap();
    assert_eq!(status.code, 201);
    assert!(pods.get_opt("free").await.unwrap().is_none());

    pods.create(
        &PostParams::default(),
        &pod("guarded", json!({"app": "guarded"})),
    )
    .await
    .unwrap();
    running_ready(&pods, "guarded").await;
    let pdbs: Api<PodDisruptionBudget> = Api::namespaced(client.clone(), "default");
    pdbs.create(
        &PostParams::default(),
        &from_json(json!({"metadata": {"name": "guard"},
            "spec": {"minAvailable": 1, "selector": {"matchLabels": {"app": "guarded"}}}})),
    )
    .await
    .unwrap();
    // No disruption controller has processed the budget yet.
    let err = api_error(
        pods.evict("guarded", &EvictParams::default())
            .await
            .unwrap_err(),
    );
    assert_eq!(err.code, 429);
    assert_eq!(err.reason, "TooManyRequests");
    assert_eq!(
        err.message,
        "Cannot evict pod as it would violate the pod's disruption budget."
    );
    let cause = &err.details.unwrap().causes[0];
    assert_eq!(
        (cause.reason.as_str(), cause.message.as_str()),
        (
            "DisruptionBudget",
            "The disruption budget guard is still being processed by the server."
        )
    );
    // The budget allows no disruption: 429 with the budget's numbers.
    let set_status = |allowed: i32| {
        let pdbs = pdbs.clone();
        async move {
            let mut pdb = pdbs.get_status("guard").await.unwrap();
            pdb.status = Some(from_json(json!({
                "observedGeneration": 1, "disruptionsAllowed": allowed,
                "currentHealthy": 1, "desiredHealthy": 1, "expectedPods": 1
            })));
            pdbs.replace_status("guard", &PostParams::default(), &pdb)
                .await
                .unwrap();
        }
    };
    set_status(0).await;
    let err = api_error(
        pods.evict("guarded", &EvictParams::default())
            .await
            .unwrap_err(),
    );
    assert_eq!(err.code, 429);
    assert_eq!(
        err.details.unwrap().causes[0].message,
        "The disruption budget guard needs 1 healthy pods and has 1 currently"
    );
    assert!(pods.get_opt("guarded").await.unwrap().is_some());
    // One disruption allowed: the Pod goes and the budget records it.
    set_status(1).await;
    pods.evict("guarded", &EvictParams::default())
        .await
        .unwrap();
    assert!(pods.get_opt("guarded").await.unwrap().is_none());
    let status = pdbs.get("guard").await.unwrap().status.unwrap();
    assert_eq!(status.disruptions_allowed, Some(0));
    assert!(status.disrupted_pods.unwrap().contains_key("guarded"));
    // A Pending Pod is deleted whatever the budget says.
    pods.create(
        &PostParams::default(),
        &pod("pending", json!({"app": "guarded"})),
    )
    .await
    .unwrap();
    pods.evict("pending", &EvictParams::default())
        .await
        .unwrap();
    // A missing Pod is not found.
    assert_eq!(
        api_error(
            pods.evict("gone", &EvictParams::default())
                .await
                .unwrap_err()
        )
        .code,
        404
    );
}

#[tokio::test]
async fn pod_logs_should_return_what_the_test_set() {
    let env = TestEnv::start().await.unwrap();
    let pods: Api<Pod> = Api::namespaced(env.client(), "default");
    let mut bound = pod("p", json!({}));
    bound.spec.as_mut().unwrap().node_name = Some("node-1".into());
    pods.create(&PostParams::default(), &bound).await.unwrap();
    assert_eq!(pods.logs("p", &LogParams::default()).await.unwrap(), "");
    env.set_pod_log("default", "p", "app", "one\ntwo\nthree\n");
    assert_eq!(
        pods.logs("p", &LogParams::default()).await.unwrap(),
        "one\ntwo\nthree\n"
    );
    let tail = LogParams {
        tail_lines: Some(2),
        ..LogParams::default()
    };
    assert_eq!(pods.logs("p", &tail).await.unwrap(), "two\nthree\n");
    let limited = LogParams {
        limit_bytes: Some(3),
        ..LogParams::default()
    };
    assert_eq!(pods.logs("p", &limited).await.unwrap(), "one");
    let wrong = LogParams {
        container: Some("sidecar".into()),
        ..LogParams::default()
    };
    let err = api_error(pods.logs("p", &wrong).await.unwrap_err());
    assert_eq!(
        (err.code, err.message.as_str()),
        (400, "container sidecar is not valid for pod p")
    );
    assert_eq!(
        api_error(pods.logs("nope", &LogParams::default()).await.unwrap_err()).code,
        404
    );
}

#[tokio::test]
async fn a_binding_should_assign_the_pod_to_a_node_once() {
    let env = TestEnv::start().await.unwrap();
    let pods: Api<Pod> = Api::namespaced(env.client(), "default");
    pods.create(&PostParams::default(), &pod("p", json!({})))
        .await
        .unwrap();
    let binding: k8s_openapi::api::core::v1::Binding = from_json(json!({
        "metadata": {"name": "p"}, "target": {"kind": "Node", "name": "node-1"}
    }));
    let status: Status = pods
        .create_subresource("binding", "p", &PostParams::default(), &binding)
        .await
        .unwrap();
    assert_eq!(status.code, 201);
    let bound = pods.get("p").await.unwrap();
    assert_eq!(bound.spec.unwrap().node_name.as_deref(), Some("node-1"));
    let scheduled = bound.status.unwrap().conditions.unwrap();
    assert!(
        scheduled
            .iter()
            .any(|c| c.type_ == "PodScheduled" && c.status == "True")
    );
    let err = pods
        .create_subresource::<_, Status>("binding", "p", &PostParams::default(), &binding)
        .await
        .unwrap_err();
    let err = api_error(err);
    assert_eq!(err.code, 409);
    assert_eq!(
        err.message,
        "Operation cannot be fulfilled on pods \"p\": pod p is already assigned to node \"node-1\""
    );
}

#[tokio::test]
async fn ephemeral_containers_should_be_added_but_never_changed_or_removed() {
    let env = TestEnv::start().await.unwrap();
    let pods: Api<Pod> = Api::namespaced(env.client(), "default");
    pods.create(&PostParams::default(), &pod("p", json!({})))
        .await
        .unwrap();
    let debug = json!({"spec": {"ephemeralContainers": [
        {"name": "debugger", "image": "busybox", "targetContainerName": "app"}
    ]}});
    let patched = pods
        .patch_ephemeral_containers("p", &PatchParams::default(), &Patch::Strategic(debug))
        .await
        .unwrap();
    let ephemeral = patched.spec.unwrap().ephemeral_containers.unwrap();
    assert_eq!(ephemeral[0].name, "debugger");
    // Other fields written through the subresource are ignored.
    let mut pod = pods.get_ephemeral_containers("p").await.unwrap();
    pod.metadata.labels = Some([("x".to_owned(), "y".to_owned())].into());
    pod.spec
        .as_mut()
        .unwrap()
        .ephemeral_containers
        .as_mut()
        .unwrap()[0]
        .image = Some("alpine".into());
    let err = api_error(
        pods.replace_ephemeral_containers("p", &PostParams::default(), &pod)
            .await
            .unwrap_err(),
    );
    assert_eq!(err.code, 422);
    // A duplicate name is refused.
    let dup = json!({"spec": {"ephemeralContainers": [
        {"name": "debugger", "image": "busybox", "targetContainerName": "app"},
        {"name": "app", "image": "busybox"}
    ]}});
    let err = api_error(
        pods.patch_ephemeral_containers("p", &PatchParams::default(), &Patch::Merge(dup))
            .await
            .unwrap_err(),
    );
    assert_eq!(err.code, 422);
    let labels = pods
        .get("p")
        .await
        .unwrap()
        .metadata
        .labels
        .unwrap_or_default();
    assert!(!labels.contains_key("x"));
}

#[tokio::test]
async fn resize_should_change_only_container_resources() {
    let env = TestEnv::start().await.unwrap();
    let pods: Api<Pod> = Api::namespaced(env.client(), "default");
    pods.create(&PostParams::default(), &pod("p", json!({})))
        .await
        .unwrap();
    let patch = json!({"metadata": {"labels": {"ignored": "yes"}},
        "spec": {"containers": [{"name": "app", "image": "ignored",
                                 "resources": {"requests": {"cpu": "200m", "memory": "64Mi"}}}]}});
    let resized = pods
        .patch_resize("p", &PatchParams::default(), &Patch::Strategic(patch))
        .await
        .unwrap();
    let container = &resized.spec.unwrap().containers[0];
    assert_eq!(
        container
            .resources
            .as_ref()
            .unwrap()
            .requests
            .as_ref()
            .unwrap()["cpu"]
            .0,
        "200m"
    );
    assert_eq!(container.image.as_deref(), Some("nginx"));
    assert!(
        !resized
            .metadata
            .labels
            .unwrap_or_default()
            .contains_key("ignored")
    );
    // Only cpu and memory may change.
    let storage = json!({"spec": {"containers": [{"name": "app",
        "resources": {"requests": {"cpu": "200m", "memory": "64Mi", "ephemeral-storage": "1Gi"}}}]}});
    let err = api_error(
        pods.patch_resize("p", &PatchParams::default(), &Patch::Strategic(storage))
            .await
            .unwrap_err(),
    );
    assert_eq!(err.code, 422);
}

#[tokio::test]
async fn approval_should_set_the_conditions_of_a_certificate_signing_request() {
    let env = TestEnv::start().await.unwrap();
    let csrs: Api<CertificateSigningRequest> = Api::all(env.client());
    csrs.create(
        &PostParams::default(),
        &from_json(json!({"metadata": {"name": "node-csr"}, "spec": {
            "request": "LS0tLS1CRUdJTiBDRVJUSUZJQ0FURSBSRVFVRVNULS0tLS0K",
            "signerName": "kubernetes.io/kube-apiserver-client",
            "usages": ["client auth"]}})),
    )
    .await
    .unwrap();
    let approve = json!({"status": {"conditions": [
        {"type": "Approved", "status": "True", "reason": "TestApproved", "message": "approved by the test"}
    ]}});
    let approved = csrs
        .patch_subresource(
            "approval",
            "node-csr",
            &PatchParams::default(),
            &Patch::Merge(approve),
        )
        .await
        .unwrap();
    let conditions = approved.status.unwrap().conditions.unwrap();
    assert_eq!(conditions[0].type_, "Approved");
    assert!(conditions[0].last_update_time.is_some());
    // Approved and Denied exclude each other.
    let both = json!({"status": {"conditions": [
        {"type": "Approved", "status": "True"}, {"type": "Denied", "status": "True"}
    ]}});
    let err = api_error(
        csrs.patch_subresource(
            "approval",
            "node-csr",
            &PatchParams::default(),
            &Patch::Merge(both),
        )
        .await
        .unwrap_err(),
    );
    assert_eq!(err.code, 422);
}

#[tokio::test]
async fn an_unready_pod_should_be_evicted_without_spending_a_healthy_budget() {
    let env = TestEnv::start().await.unwrap();
    let client = no_retry_client(&env);
    let pods: Api<Pod> = Api::namespaced(client.clone(), "default");
    let pdbs: Api<PodDisruptionBudget> = Api::namespaced(client.clone(), "default");
    pdbs.create(
        &PostParams::default(),
        &from_json(json!({"metadata": {"name": "guard"},
            "spec": {"minAvailable": 1, "selector": {"matchLabels": {"app": "web"}}}})),
    )
    .await
    .unwrap();
    let mut pdb = pdbs.get_status("guard").await.unwrap();
    pdb.status = Some(from_json(json!({
        "observedGeneration": 1, "disruptionsAllowed": 0,
        "currentHealthy": 1, "desiredHealthy": 1, "expectedPods": 2
    })));
    pdbs.replace_status("guard", &PostParams::default(), &pdb)
        .await
        .unwrap();
    pods.create(
        &PostParams::default(),
        &pod("unready", json!({"app": "web"})),
    )
    .await
    .unwrap();
    let mut p = pods.get_status("unready").await.unwrap();
    p.status = Some(from_json(json!({
        "phase": "Running",
        "conditions": [{"type": "Ready", "status": "False"}]
    })));
    pods.replace_status("unready", &PostParams::default(), &p)
        .await
        .unwrap();
    // A dry run deletes nothing.
    let dry = EvictParams {
        post_options: PostParams {
            dry_run: true,
            ..PostParams::default()
        },
        ..EvictParams::default()
    };
    pods.evict("unready", &dry).await.unwrap();
    assert!(pods.get_opt("unready").await.unwrap().is_some());
    pods.evict("unready", &EvictParams::default())
        .await
        .unwrap();
    assert!(pods.get_opt("unready").await.unwrap().is_none());
    let status = pdbs.get("guard").await.unwrap().status.unwrap();
    assert_eq!(status.disruptions_allowed, Some(0));
    assert!(status.disrupted_pods.is_none());
}

#[tokio::test]
async fn a_log_request_should_name_the_container_of_a_pod_with_several() {
    let env = TestEnv::start().await.unwrap();
    let pods: Api<Pod> = Api::namespaced(env.client(), "default");
    pods.create(
        &PostParams::default(),
        &from_json(
            json!({"metadata": {"name": "two"}, "spec": {"nodeName": "node-1", "containers": [
                {"name": "app", "image": "nginx"}, {"name": "proxy", "image": "envoy"}
            ]}}),
        ),
    )
    .await
    .unwrap();
    let err = api_error(pods.logs("two", &LogParams::default()).await.unwrap_err());
    assert_eq!(
        (err.code, err.message.as_str()),
        (
            400,
            "a container name must be specified for pod two, choose one of: [app proxy]"
        )
    );
    env.set_pod_log("default", "two", "proxy", "proxied\n");
    let proxy = LogParams {
        container: Some("proxy".into()),
        ..LogParams::default()
    };
    assert_eq!(pods.logs("two", &proxy).await.unwrap(), "proxied\n");
}

/// The `managedFields` entry of `manager`, as JSON.
fn managed_entry(
    meta: &k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta,
    manager: &str,
) -> serde_json::Value {
    let entries = serde_json::to_value(meta.managed_fields.clone().unwrap_or_default()).unwrap();
    entries
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["manager"] == manager)
        .cloned()
        .unwrap_or_else(|| panic!("no managedFields entry of {manager}: {entries}"))
}

fn manager(name: &str) -> PatchParams {
    PatchParams {
        field_manager: Some(name.into()),
        ..PatchParams::default()
    }
}

#[tokio::test]
async fn ephemeral_container_writes_should_be_recorded_as_the_subresource_and_refused_with_kube_apiserver_messages()
 {
    let env = TestEnv::start().await.unwrap();
    let pods: Api<Pod> = Api::namespaced(env.client(), "default");
    pods.create(&PostParams::default(), &pod("p", json!({})))
        .await
        .unwrap();
    let debug = json!({"spec": {"ephemeralContainers": [
        {"name": "debugger", "image": "busybox", "targetContainerName": "app"}
    ]}});
    let patched = pods
        .patch_ephemeral_containers("p", &manager("kubectl-debug"), &Patch::Strategic(debug))
        .await
        .unwrap();
    let entry = managed_entry(&patched.metadata, "kubectl-debug");
    assert_eq!(entry["operation"], "Update");
    assert_eq!(entry["apiVersion"], "v1");
    assert_eq!(entry["subresource"], "ephemeralcontainers");
    let owned = &entry["fieldsV1"]["f:spec"]["f:ephemeralContainers"]["k:{\"name\":\"debugger\"}"];
    for field in [
        "f:image",
        "f:name",
        "f:targetContainerName",
        "f:terminationMessagePolicy",
    ] {
        assert!(owned.get(field).is_some(), "{field} in {entry}");
    }

    let refused = |body: serde_json::Value| {
        let pods = pods.clone();
        async move {
            api_error(
                pods.patch_ephemeral_containers("p", &PatchParams::default(), &Patch::Merge(body))
                    .await
                    .unwrap_err(),
            )
        }
    };
    let existing = json!({"name": "debugger", "image": "busybox", "targetContainerName": "app"});
    let err = refused(json!({"spec": {"ephemeralContainers": []}})).await;
    assert_eq!(err.code, 422);
    assert_eq!(
        err.message,
        "Pod \"p\" is invalid: spec.ephemeralContainers: Forbidden: existing ephemeral containers \"debugger\" may not be removed\n"
    );
    let err = refused(json!({"spec": {"ephemeralContainers": [
        {"name": "debugger", "image": "alpine", "targetContainerName": "app"}
    ]}}))
    .await;
    assert!(
        err.message.starts_with(
            "Pod \"p\" is invalid: spec.ephemeralContainers: Forbidden: existing ephemeral containers \"debugger\" may not be changed\n@@ -1,6 +1,6 @@\n {\n  \"Name\": \"debugger\",\n- \"Image\": \"busybox\",\n+ \"Image\": \"alpine\",\n"
        ),
        "{}",
        err.message
    );
    let err = refused(json!({"spec": {"ephemeralContainers": [existing,
        {"name": "app", "image": "busybox", "targetContainerName": "ghost",
         "ports": [{"containerPort": 80}]}
    ]}}))
    .await;
    assert_eq!(
        err.message,
        "Pod \"p\" is invalid: [spec.ephemeralContainers[1].name: Duplicate value: \"app\", \
         spec.ephemeralContainers[1].targetContainerName: Not found: \"ghost\", \
         spec.ephemeralContainers[1].ports: Forbidden: cannot be set for an Ephemeral Container]"
    );
    let causes = err.details.unwrap().causes;
    assert_eq!(causes[1].reason, "FieldValueNotFound");
}

#[tokio::test]
async fn resize_writes_should_be_recorded_as_the_subresource_and_refused_with_kube_apiserver_messages()
 {
    let env = TestEnv::start().await.unwrap();
    let pods: Api<Pod> = Api::namespaced(env.client(), "default");
    pods.create(&PostParams::default(), &pod("p", json!({})))
        .await
        .unwrap();
    let patch = json!({"spec": {"containers": [{"name": "app",
        "resources": {"requests": {"cpu": "300m"}}}]}});
    let resized = pods
        .patch_resize("p", &manager("vpa"), &Patch::Strategic(patch))
        .await
        .unwrap();
    let entry = managed_entry(&resized.metadata, "vpa");
    assert_eq!(entry["subresource"], "resize");
    assert_eq!(entry["operation"], "Update");
    let app = &entry["fieldsV1"]["f:spec"]["f:containers"]["k:{\"name\":\"app\"}"];
    assert_eq!(
        app["f:resources"]["f:requests"],
        json!({"f:cpu": {}}),
        "only what changed: {entry}"
    );

    let refused = |body: serde_json::Value| {
        let pods = pods.clone();
        async move {
            api_error(
                pods.patch_resize("p", &PatchParams::default(), &Patch::Strategic(body))
                    .await
                    .unwrap_err(),
            )
        }
    };
    let err = refused(json!({"spec": {"containers": [{"name": "app",
        "resources": {"limits": {"ephemeral-storage": "1Gi"}}}]}}))
    .await;
    assert_eq!(
        (err.code, err.message.as_str()),
        (
            422,
            "Pod \"p\" is invalid: spec: Forbidden: only cpu and memory resources are mutable"
        )
    );
    let err = refused(json!({"spec": {"containers": [{"name": "app",
        "resources": {"requests": {"memory": null}}}]}}))
    .await;
    assert_eq!(
        err.message,
        "Pod \"p\" is invalid: spec.containers[0].resources.requests: Forbidden: resource requests cannot be removed"
    );
    let err = refused(json!({"spec": {"containers": [{"name": "app",
        "resources": {"limits": {"cpu": "300m", "memory": "64Mi"}}}]}}))
    .await;
    assert_eq!(
        err.message,
        "Pod \"p\" is invalid: spec: Invalid value: \"Guaranteed\": Pod QOS Class may not change as a result of resizing"
    );
}

#[tokio::test]
async fn approval_writes_should_be_recorded_as_the_subresource_and_refused_with_kube_apiserver_messages()
 {
    let env = TestEnv::start().await.unwrap();
    let csrs: Api<CertificateSigningRequest> = Api::all(env.client());
    csrs.create(
        &PostParams::default(),
        &from_json(json!({"metadata": {"name": "node-csr"}, "spec": {
            "request": "LS0tLS1CRUdJTiBDRVJUSUZJQ0FURSBSRVFVRVNULS0tLS0K",
            "signerName": "kubernetes.io/kube-apiserver-client",
            "usages": ["client auth"]}})),
    )
    .await
    .unwrap();
    let refused = |body: serde_json::Value| {
        let csrs = csrs.clone();
        async move {
            api_error(
                csrs.patch_subresource(
                    "approval",
                    "node-csr",
                    &PatchParams::default(),
                    &Patch::Merge(body),
                )
                .await
                .unwrap_err(),
            )
        }
    };
    let prefix = "CertificateSigningRequest.certificates.k8s.io \"node-csr\" is invalid: ";
    let err =
        refused(json!({"status": {"conditions": [{"type": "Approved", "status": "False"}]}})).await;
    assert_eq!(
        (err.code, err.message.strip_prefix(prefix)),
        (
            422,
            Some(
                "status.conditions[0].status: Unsupported value: \"False\": supported values: \"True\""
            )
        )
    );

    let approve = json!({"status": {"conditions": [
        {"type": "Approved", "status": "True", "reason": "TestApproved"}
    ]}});
    let approved = csrs
        .patch_subresource(
            "approval",
            "node-csr",
            &manager("approver"),
            &Patch::Merge(approve),
        )
        .await
        .unwrap();
    let entry = managed_entry(&approved.metadata, "approver");
    assert_eq!(entry["subresource"], "approval");
    assert_eq!(entry["apiVersion"], "certificates.k8s.io/v1");
    assert!(
        entry["fieldsV1"]["f:status"]["f:conditions"]
            .get("k:{\"type\":\"Approved\"}")
            .is_some(),
        "{entry}"
    );

    let err = refused(json!({"status": {"conditions": [
        {"type": "Approved", "status": "True", "reason": "TestApproved"},
        {"type": "Denied", "status": "True"}
    ]}}))
    .await;
    assert_eq!(
        err.message.strip_prefix(prefix),
        Some(
            "status.conditions[1].type: Invalid value: \"Denied\": Approved and Denied conditions are mutually exclusive"
        )
    );
    let err = refused(json!({"status": {"conditions": []}})).await;
    assert_eq!(
        err.message.strip_prefix(prefix),
        Some(
            "status.conditions: Forbidden: updates may not remove a condition of type \"Approved\""
        )
    );
}

#[tokio::test]
async fn exec_attach_and_portforward_of_a_pod_without_a_node_should_be_bad_requests() {
    let env = TestEnv::start().await.unwrap();
    let pods: Api<Pod> = Api::namespaced(env.client(), "default");
    pods.create(
        &PostParams::default(),
        &from_json(json!({"metadata": {"name": "two"}, "spec": {"containers": [
            {"name": "app", "image": "nginx"}, {"name": "proxy", "image": "envoy"}
        ]}})),
    )
    .await
    .unwrap();
    let call = |method: http::Method, path: &str| {
        let req = http::Request::builder()
            .method(method)
            .uri(format!("/api/v1/namespaces/default/pods/{path}"))
            .body(Vec::new())
            .unwrap();
        let client = env.client();
        async move { api_error(client.request_text(req).await.unwrap_err()) }
    };
    for (method, path) in [
        (
            http::Method::POST,
            "two/exec?container=app&command=ls&stdout=true",
        ),
        (http::Method::GET, "two/attach?container=proxy&stdout=true"),
        (http::Method::POST, "two/portforward?ports=80"),
    ] {
        let err = call(method, path).await;
        assert_eq!(
            (err.code, err.reason.as_str(), err.message.as_str()),
            (400, "BadRequest", "pod two does not have a host assigned"),
            "{path}"
        );
    }
    // exec and attach choose the container first; portforward has none.
    let err = call(http::Method::POST, "two/exec?command=ls&stdout=true").await;
    assert_eq!(
        (err.code, err.message.as_str()),
        (
            400,
            "a container name must be specified for pod two, choose one of: [app proxy]"
        )
    );
    let err = call(http::Method::GET, "two/attach?container=nope").await;
    assert_eq!(err.message, "container nope is not valid for pod two");
    assert_eq!(
        call(http::Method::POST, "gone/exec?command=ls").await.code,
        404
    );
}
