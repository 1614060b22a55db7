//! Defaulting and the strategies of built-in kinds through `kube::Client`: what kube-apiserver
//! sets on a decoded object (owned by the writer in `managedFields`), what its strategies,
//! admission plugins and allocators set after the field manager (owned by nobody), and the
//! validation of what they produce.

use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::core::v1::{Namespace, Pod, Secret, Service, ServiceAccount};
use kcr_testenv::TestEnv;
use kube::api::{Api, DeleteParams, Patch, PatchParams, PostParams};
use serde_json::{Value, json};

/// The `fieldsV1` of the first managedFields entry of `obj`.
fn fields_v1<K: serde::Serialize>(obj: &K) -> Value {
    let v = serde_json::to_value(obj).unwrap();
    v.pointer("/metadata/managedFields/0/fieldsV1")
        .cloned()
        .unwrap_or(Value::Null)
}

fn deployment(containers: Value, volumes: Value) -> Deployment {
    serde_json::from_value(json!({
        "metadata": {"name": "web"},
        "spec": {
            "selector": {"matchLabels": {"app": "web"}},
            "template": {
                "metadata": {"labels": {"app": "web"}},
                "spec": {"containers": containers, "volumes": volumes}
            }
        }
    }))
    .unwrap()
}

fn api_error(err: kube::Error) -> kube::core::Status {
    match err {
        kube::Error::Api(s) => *s,
        other => panic!("expected an API error, got {other:?}"),
    }
}

#[tokio::test]
async fn a_deployment_should_be_created_with_its_defaults_owned_by_its_creator() {
    let env = TestEnv::start().await.unwrap();
    let api: Api<Deployment> = Api::namespaced(env.client(), "default");
    let d = deployment(json!([{"name": "app", "image": "nginx:1.27"}]), json!([]));
    let created = api.create(&PostParams::default(), &d).await.unwrap();

    let spec = &created.spec;
    assert_eq!(spec.replicas, Some(1));
    assert_eq!(spec.revision_history_limit, Some(10));
    assert_eq!(spec.progress_deadline_seconds, Some(600));
    let strategy = serde_json::to_value(&spec.strategy).unwrap();
    assert_eq!(
        strategy,
        json!({"type": "RollingUpdate", "rollingUpdate": {"maxSurge": "25%", "maxUnavailable": "25%"}})
    );
    let pod = spec.template.spec.as_ref().unwrap();
    assert_eq!(pod.restart_policy.as_deref(), Some("Always"));
    assert_eq!(pod.dns_policy.as_deref(), Some("ClusterFirst"));
    assert_eq!(pod.scheduler_name.as_deref(), Some("default-scheduler"));
    assert_eq!(pod.termination_grace_period_seconds, Some(30));
    assert!(pod.security_context.is_some());
    assert_eq!(
        pod.enable_service_links, None,
        "only Pods get service links"
    );
    let c = &pod.containers[0];
    assert_eq!(c.image_pull_policy.as_deref(), Some("IfNotPresent"));
    assert_eq!(
        c.termination_message_path.as_deref(),
        Some("/dev/termination-log")
    );
    assert_eq!(c.termination_message_policy.as_deref(), Some("File"));
    assert_eq!(created.status, Some(Default::default()));

    // kube-apiserver defaults at decode, before the field manager: the creator owns them.
    let fields = fields_v1(&created);
    assert!(
        fields
            .pointer("/f:spec/f:strategy/f:rollingUpdate/f:maxSurge")
            .is_some()
    );
    assert!(fields.pointer("/f:spec/f:revisionHistoryLimit").is_some());
    assert!(
        fields
            .pointer(
                "/f:spec/f:template/f:spec/f:containers/k:{\"name\":\"app\"}/f:imagePullPolicy"
            )
            .is_some()
    );
    assert!(fields.get("f:status").is_none());
}

#[tokio::test]
async fn a_strategic_merge_of_one_container_should_keep_the_others_and_default_the_new_one() {
    let env = TestEnv::start().await.unwrap();
    let api: Api<Deployment> = Api::namespaced(env.client(), "default");
    let d = deployment(
        json!([{"name": "a", "image": "nginx:1.27"}, {"name": "b", "image": "busybox:1.36"}]),
        json!([]),
    );
    api.create(&PostParams::default(), &d).await.unwrap();
    let patched = api
        .patch(
            "web",
            &PatchParams::default(),
            &Patch::Strategic(json!({"spec": {"template": {"spec": {"containers": [
                {"name": "b", "image": "busybox"},
                {"name": "c", "image": "redis:7", "ports": [{"containerPort": 6379}]}
            ]}}}})),
        )
        .await
        .unwrap();
    let pod = patched.spec.template.spec.unwrap();
    let names: Vec<&str> = pod.containers.iter().map(|c| c.name.as_str()).collect();
    assert_eq!(names, ["a", "b", "c"]);
    // `b` keeps the pull policy it was given when it was created; `c` gets its defaults.
    assert_eq!(pod.containers[1].image.as_deref(), Some("busybox"));
    assert_eq!(
        pod.containers[1].image_pull_policy.as_deref(),
        Some("IfNotPresent")
    );
    let c = &pod.containers[2];
    assert_eq!(c.image_pull_policy.as_deref(), Some("IfNotPresent"));
    assert_eq!(
        c.ports.as_ref().unwrap()[0].protocol.as_deref(),
        Some("TCP")
    );
    assert_eq!(patched.metadata.generation, Some(2));
}

#[tokio::test]
async fn a_volume_with_two_sources_should_be_refused() {
    let env = TestEnv::start().await.unwrap();
    let api: Api<Deployment> = Api::namespaced(env.client(), "default");
    let d = deployment(
        json!([{"name": "a", "image": "nginx:1.27"}]),
        json!([{"name": "data", "emptyDir": {}}]),
    );
    let created = api.create(&PostParams::default(), &d).await.unwrap();
    let volumes = created.spec.template.spec.unwrap().volumes.unwrap();
    assert!(volumes[0].empty_dir.is_some());
    let err = api
        .patch(
            "web",
            &PatchParams::default(),
            &Patch::Strategic(json!({"spec": {"template": {"spec": {"volumes": [
                {"name": "data", "configMap": {"name": "cfg"}}
            ]}}}})),
        )
        .await
        .unwrap_err();
    let status = api_error(err);
    assert_eq!(status.code, 422);
    let causes = status.details.unwrap().causes;
    assert_eq!(causes[0].field, "spec.template.spec.volumes[0].configMap");
    assert_eq!(
        causes[0].message,
        "Forbidden: may not specify more than 1 volume type"
    );
}

#[tokio::test]
async fn a_secret_should_merge_string_data_into_data_and_default_its_type() {
    let env = TestEnv::start().await.unwrap();
    let api: Api<Secret> = Api::namespaced(env.client(), "default");
    let s: Secret = serde_json::from_value(json!({
        "metadata": {"name": "creds"},
        "data": {"user": "b2xk", "token": "dA=="},
        "stringData": {"user": "admin"}
    }))
    .unwrap();
    let created = api.create(&PostParams::default(), &s).await.unwrap();
    let data = created.data.as_ref().unwrap();
    assert_eq!(data["user"].0, b"admin");
    assert_eq!(data["token"].0, b"t");
    assert!(created.string_data.is_none());
    assert_eq!(created.type_.as_deref(), Some("Opaque"));
    let fields = fields_v1(&created);
    assert!(fields.pointer("/f:data/f:user").is_some());
    assert!(fields.pointer("/f:type").is_some());
    assert!(fields.get("f:stringData").is_none());

    let err = api
        .patch(
            "creds",
            &PatchParams::default(),
            &Patch::Merge(json!({"type": "kubernetes.io/basic-auth"})),
        )
        .await
        .unwrap_err();
    assert_eq!(api_error(err).code, 422);
}

#[tokio::test]
async fn a_service_should_get_a_cluster_ip_that_cannot_change() {
    let env = TestEnv::start().await.unwrap();
    let api: Api<Service> = Api::namespaced(env.client(), "default");
    let svc: Service = serde_json::from_value(json!({
        "metadata": {"name": "web"},
        "spec": {"selector": {"app": "web"}, "ports": [{"port": 80}]}
    }))
    .unwrap();
    let created = api.create(&PostParams::default(), &svc).await.unwrap();
    let spec = created.spec.as_ref().unwrap();
    let ip = spec.cluster_ip.clone().unwrap();
    assert!(ip.parse::<std::net::Ipv4Addr>().is_ok(), "{ip}");
    assert_eq!(spec.cluster_ips.as_deref(), Some(&[ip.clone()][..]));
    assert_eq!(spec.type_.as_deref(), Some("ClusterIP"));
    assert_eq!(spec.session_affinity.as_deref(), Some("None"));
    assert_eq!(spec.ip_families.as_deref(), Some(&["IPv4".to_owned()][..]));
    assert_eq!(spec.ip_family_policy.as_deref(), Some("SingleStack"));
    let port = &spec.ports.as_ref().unwrap()[0];
    assert_eq!(port.protocol.as_deref(), Some("TCP"));
    assert_eq!(
        port.target_port,
        Some(k8s_openapi::apimachinery::pkg::util::intstr::IntOrString::Int(80))
    );
    // The allocator runs after the field manager: nobody owns the cluster IPs.
    let fields = fields_v1(&created);
    assert!(fields.pointer("/f:spec/f:type").is_some());
    assert!(fields.pointer("/f:spec/f:clusterIP").is_none());

    // A PUT that leaves the allocated values out keeps them.
    let mut replaced = created.clone();
    if let Some(spec) = replaced.spec.as_mut() {
        spec.cluster_ip = None;
        spec.cluster_ips = None;
        spec.ip_families = None;
        spec.ip_family_policy = None;
    }
    let replaced = api
        .replace("web", &PostParams::default(), &replaced)
        .await
        .unwrap();
    assert_eq!(replaced.spec.unwrap().cluster_ip, Some(ip));

    let err = api
        .patch(
            "web",
            &PatchParams::default(),
            &Patch::Merge(json!({"spec": {"clusterIP": "10.96.7.7"}})),
        )
        .await
        .unwrap_err();
    let status = api_error(err);
    assert_eq!(status.code, 422);
    assert_eq!(
        status.details.unwrap().causes[0].message,
        "Invalid value: [\"10.96.7.7\"]: may not change once set"
    );
}

#[tokio::test]
async fn a_namespace_finalizer_should_be_set_by_the_strategy_and_kept_by_updates() {
    let env = TestEnv::start().await.unwrap();
    let api: Api<Namespace> = Api::all(env.client());
    let ns: Namespace = serde_json::from_value(json!({"metadata": {"name": "team-a"}})).unwrap();
    let created = api.create(&PostParams::default(), &ns).await.unwrap();
    let finalizers = |ns: &Namespace| ns.spec.as_ref().and_then(|s| s.finalizers.clone());
    assert_eq!(finalizers(&created), Some(vec!["kubernetes".to_owned()]));
    let fields = fields_v1(&created);
    assert!(fields.get("f:spec").is_none(), "{fields}");
    assert!(
        fields
            .pointer("/f:metadata/f:labels/f:kubernetes.io~1metadata.name")
            .is_some()
    );

    let mut without = created.clone();
    without.spec = None;
    let replaced = api
        .replace("team-a", &PostParams::default(), &without)
        .await
        .unwrap();
    assert_eq!(finalizers(&replaced), Some(vec!["kubernetes".to_owned()]));
}

#[tokio::test]
async fn a_pod_should_be_admitted_with_its_service_account_token_and_tolerations() {
    let env = TestEnv::start().await.unwrap();
    let accounts: Api<ServiceAccount> = Api::namespaced(env.client(), "default");
    let sa: ServiceAccount =
        serde_json::from_value(json!({"metadata": {"name": "default"}})).unwrap();
    accounts.create(&PostParams::default(), &sa).await.unwrap();
    let api: Api<Pod> = Api::namespaced(env.client(), "default");
    let pod: Pod = serde_json::from_value(json!({
        "metadata": {"name": "p1"},
        "spec": {"containers": [{"name": "app", "image": "nginx:1.27",
            "resources": {"limits": {"cpu": "500m", "memory": "128Mi"}},
            "readinessProbe": {"httpGet": {"path": "/healthz", "port": 8080}}}]}
    }))
    .unwrap();
    let created = api.create(&PostParams::default(), &pod).await.unwrap();
    let spec = created.spec.as_ref().unwrap();
    assert_eq!(spec.service_account_name.as_deref(), Some("default"));
    assert_eq!(spec.enable_service_links, Some(true));
    assert_eq!(spec.priority, Some(0));
    let volume = &spec.volumes.as_ref().unwrap()[0];
    assert!(
        volume.name.starts_with("kube-api-access-"),
        "{}",
        volume.name
    );
    let c = &spec.containers[0];
    let mount = &c.volume_mounts.as_ref().unwrap()[0];
    assert_eq!(mount.name, volume.name);
    assert_eq!(
        mount.mount_path,
        "/var/run/secrets/kubernetes.io/serviceaccount"
    );
    let requests = c.resources.as_ref().unwrap().requests.as_ref().unwrap();
    assert_eq!(requests["cpu"].0, "500m");
    let probe = c.readiness_probe.as_ref().unwrap();
    assert_eq!(probe.period_seconds, Some(10));
    assert_eq!(
        probe.http_get.as_ref().unwrap().scheme.as_deref(),
        Some("HTTP")
    );
    let tolerations = spec.tolerations.as_ref().unwrap();
    assert_eq!(tolerations.len(), 2);
    assert_eq!(tolerations[0].toleration_seconds, Some(300));
    let status = created.status.as_ref().unwrap();
    assert_eq!(status.phase.as_deref(), Some("Pending"));
    assert_eq!(status.qos_class.as_deref(), Some("Guaranteed"));
    // Admission and the strategy run after the field manager: nobody owns what they set.
    let fields = fields_v1(&created);
    assert!(fields.pointer("/f:spec/f:enableServiceLinks").is_some());
    assert!(fields.pointer("/f:spec/f:serviceAccountName").is_none());
    assert!(fields.pointer("/f:spec/f:tolerations").is_none());

    let deleted = api
        .delete("p1", &DeleteParams::default())
        .await
        .unwrap()
        .left()
        .unwrap();
    assert!(deleted.metadata.deletion_timestamp.is_some());
    assert_eq!(deleted.metadata.deletion_grace_period_seconds, Some(0));
    assert!(api.get_opt("p1").await.unwrap().is_none());
}

/// A PodTemplate's pod spec gets a Pod's defaults, owned by its writer, and the kind keeps
/// `metadata.generation`: 1 on create, bumped by a change of its template, not by a label.
#[tokio::test]
async fn a_pod_templates_spec_should_be_defaulted_for_its_writer_and_its_generation_kept() {
    use k8s_openapi::api::core::v1::PodTemplate;
    let env = TestEnv::start().await.unwrap();
    let api: Api<PodTemplate> = Api::namespaced(env.client(), "default");
    let template: PodTemplate = serde_json::from_value(json!({
        "metadata": {"name": "t"},
        "template": {"spec": {"initContainers": [{"name": "init", "image": "busybox"}],
            "containers": [{"name": "app", "image": "nginx:latest"}]}}
    }))
    .unwrap();
    let created = api.create(&PostParams::default(), &template).await.unwrap();
    assert_eq!(created.metadata.generation, Some(1));
    let v = serde_json::to_value(&created).unwrap();
    let spec = &v["template"]["spec"];
    // `:latest` pulls always; an init container is defaulted as a container is.
    assert_eq!(spec["containers"][0]["imagePullPolicy"], "Always");
    assert_eq!(spec["initContainers"][0]["imagePullPolicy"], "Always");
    assert_eq!(spec["restartPolicy"], "Always");
    assert_eq!(spec["dnsPolicy"], "ClusterFirst");
    let owned = fields_v1(&created);
    let app = &owned["f:template"]["f:spec"]["f:containers"]["k:{\"name\":\"app\"}"];
    assert!(app.get("f:imagePullPolicy").is_some(), "{owned}");
    assert!(
        owned["f:template"]["f:spec"]
            .get("f:restartPolicy")
            .is_some(),
        "{owned}"
    );

    let labelled = api
        .patch(
            "t",
            &PatchParams::default(),
            &Patch::Merge(json!({"metadata": {"labels": {"a": "b"}}})),
        )
        .await
        .unwrap();
    assert_eq!(labelled.metadata.generation, Some(1));
    let changed = api
        .patch(
            "t",
            &PatchParams::default(),
            &Patch::Merge(json!({"template": {"spec": {"terminationGracePeriodSeconds": 5}}})),
        )
        .await
        .unwrap();
    assert_eq!(changed.metadata.generation, Some(2));
}

async fn create_raw(addr: std::net::SocketAddr, path: &str, body: Value) -> Value {
    let r = crate::common::raw(
        addr,
        "POST",
        path,
        &[("Content-Type", "application/json")],
        &serde_json::to_vec(&body).unwrap(),
    )
    .await;
    assert_eq!(r.status, 201, "{}", String::from_utf8_lossy(&r.body));
    r.json()
}

/// Kinds beyond Pods and workloads get their `SetDefaults_*` too, and their strategies' initial
/// state: CronJobs, ReplicationControllers, PersistentVolumes, CSIDrivers; a claim naming its
/// data source one way gets the other.
#[tokio::test]
async fn more_kinds_should_be_created_with_kube_apiserver_s_defaults() {
    let env = TestEnv::start().await.unwrap();
    let addr = env.addr();
    let pod_spec = json!({"restartPolicy": "Never",
        "containers": [{"name": "c", "image": "busybox:1.36"}]});
    let cj = create_raw(
        addr,
        "/apis/batch/v1/namespaces/default/cronjobs",
        json!({"apiVersion": "batch/v1", "kind": "CronJob", "metadata": {"name": "nightly"},
            "spec": {"schedule": "0 3 * * *",
                "jobTemplate": {"spec": {"template": {"spec": pod_spec}}}}}),
    )
    .await;
    assert_eq!(cj["metadata"]["generation"], 1);
    let spec = &cj["spec"];
    assert_eq!(
        (
            &spec["concurrencyPolicy"],
            &spec["suspend"],
            &spec["successfulJobsHistoryLimit"],
            &spec["failedJobsHistoryLimit"]
        ),
        (&json!("Allow"), &json!(false), &json!(3), &json!(1))
    );
    let template = &spec["jobTemplate"]["spec"]["template"]["spec"];
    assert_eq!(template["terminationGracePeriodSeconds"], 30);
    assert_eq!(
        template["containers"][0]["terminationMessagePath"],
        "/dev/termination-log"
    );
    assert_eq!(cj["status"], json!({}));

    let rc = create_raw(
        addr,
        "/api/v1/namespaces/default/replicationcontrollers",
        json!({"apiVersion": "v1", "kind": "ReplicationController", "metadata": {"name": "legacy"},
            "spec": {"template": {"metadata": {"labels": {"app": "legacy"}},
                "spec": {"containers": [{"name": "c", "image": "nginx"}]}}}}),
    )
    .await;
    assert_eq!(rc["spec"]["replicas"], 1);
    assert_eq!(rc["spec"]["selector"], json!({"app": "legacy"}));
    assert_eq!(rc["metadata"]["labels"], json!({"app": "legacy"}));
    assert_eq!(rc["spec"]["template"]["spec"]["dnsPolicy"], "ClusterFirst");
    assert_eq!(rc["status"], json!({"replicas": 0}));

    let pv = create_raw(
        addr,
        "/api/v1/persistentvolumes",
        json!({"apiVersion": "v1", "kind": "PersistentVolume", "metadata": {"name": "local"},
            "spec": {"capacity": {"storage": "1Gi"}, "accessModes": ["ReadWriteOnce"],
                "hostPath": {"path": "/data"}}}),
    )
    .await;
    assert_eq!(pv["spec"]["persistentVolumeReclaimPolicy"], "Retain");
    assert_eq!(pv["spec"]["volumeMode"], "Filesystem");
    assert_eq!(pv["spec"]["hostPath"], json!({"path": "/data", "type": ""}));
    assert_eq!(pv["status"]["phase"], "Pending");
    assert!(pv["status"]["lastPhaseTransitionTime"].is_string(), "{pv}");

    let driver = create_raw(
        addr,
        "/apis/storage.k8s.io/v1/csidrivers",
        json!({"apiVersion": "storage.k8s.io/v1", "kind": "CSIDriver",
            "metadata": {"name": "disk.example.com"}, "spec": {}}),
    )
    .await;
    assert_eq!(
        driver["spec"],
        json!({"attachRequired": true, "podInfoOnMount": false, "storageCapacity": false,
            "fsGroupPolicy": "ReadWriteOnceWithFSType", "volumeLifecycleModes": ["Persistent"],
            "requiresRepublish": false, "seLinuxMount": false})
    );

    let claim = create_raw(
        addr,
        "/api/v1/namespaces/default/persistentvolumeclaims",
        json!({"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": {"name": "c"},
            "spec": {"accessModes": ["ReadWriteOnce"],
                "resources": {"requests": {"storage": "1Gi"}},
                "dataSourceRef": {"apiGroup": "snapshot.storage.k8s.io",
                    "kind": "VolumeSnapshot", "name": "snap"}}}),
    )
    .await;
    assert_eq!(
        claim["spec"]["dataSource"],
        json!({"apiGroup": "snapshot.storage.k8s.io", "kind": "VolumeSnapshot", "name": "snap"})
    );
    // The copy is the strategy's, not the writer's.
    let owned = claim
        .pointer("/metadata/managedFields/0/fieldsV1/f:spec")
        .cloned()
        .unwrap_or(Value::Null);
    assert!(owned.get("f:dataSourceRef").is_some(), "{owned}");
    assert!(owned.get("f:dataSource").is_none(), "{owned}");
}

/// Autoscalers, network policies, priority and fairness, endpoints and limit ranges get their
/// versions' `SetDefaults_*`.
#[tokio::test]
async fn policy_and_networking_kinds_should_be_created_with_their_defaults() {
    let env = TestEnv::start().await.unwrap();
    let addr = env.addr();
    let hpa = create_raw(
        addr,
        "/apis/autoscaling/v2/namespaces/default/horizontalpodautoscalers",
        json!({"apiVersion": "autoscaling/v2", "kind": "HorizontalPodAutoscaler",
            "metadata": {"name": "web"}, "spec": {"maxReplicas": 5,
                "scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"},
                "behavior": {"scaleUp": {"stabilizationWindowSeconds": 30}}}}),
    )
    .await;
    assert_eq!(hpa["spec"]["minReplicas"], 1);
    assert_eq!(
        hpa["spec"]["metrics"],
        json!([{"type": "Resource", "resource": {"name": "cpu",
            "target": {"type": "Utilization", "averageUtilization": 80}}}])
    );
    assert_eq!(
        hpa["spec"]["behavior"],
        json!({"scaleUp": {"stabilizationWindowSeconds": 30, "selectPolicy": "Max",
                "policies": [{"type": "Pods", "value": 4, "periodSeconds": 15},
                             {"type": "Percent", "value": 100, "periodSeconds": 15}]},
               "scaleDown": {"selectPolicy": "Max",
                "policies": [{"type": "Percent", "value": 100, "periodSeconds": 15}]}})
    );

    let np = create_raw(
        addr,
        "/apis/networking.k8s.io/v1/namespaces/default/networkpolicies",
        json!({"apiVersion": "networking.k8s.io/v1", "kind": "NetworkPolicy",
            "metadata": {"name": "dns"}, "spec": {"podSelector": {},
                "egress": [{"ports": [{"port": 53}]}]}}),
    )
    .await;
    assert_eq!(np["spec"]["policyTypes"], json!(["Ingress", "Egress"]));
    assert_eq!(np["spec"]["egress"][0]["ports"][0]["protocol"], "TCP");

    let class = create_raw(
        addr,
        "/apis/networking.k8s.io/v1/ingressclasses",
        json!({"apiVersion": "networking.k8s.io/v1", "kind": "IngressClass",
            "metadata": {"name": "edge"}, "spec": {"controller": "example.com/edge",
                "parameters": {"kind": "EdgeConfig", "name": "default"}}}),
    )
    .await;
    assert_eq!(class["spec"]["parameters"]["scope"], "Cluster");

    let level = create_raw(
        addr,
        "/apis/flowcontrol.apiserver.k8s.io/v1/prioritylevelconfigurations",
        json!({"apiVersion": "flowcontrol.apiserver.k8s.io/v1",
            "kind": "PriorityLevelConfiguration", "metadata": {"name": "batch"},
            "spec": {"type": "Limited", "limited": {"limitResponse": {"type": "Queuing",
                "queuing": {}}}}}),
    )
    .await;
    assert_eq!(
        level["spec"]["limited"],
        json!({"nominalConcurrencyShares": 30, "lendablePercent": 0,
            "limitResponse": {"type": "Queuing",
                "queuing": {"handSize": 8, "queues": 64, "queueLengthLimit": 50}}})
    );
    let schema = create_raw(
        addr,
        "/apis/flowcontrol.apiserver.k8s.io/v1/flowschemas",
        json!({"apiVersion": "flowcontrol.apiserver.k8s.io/v1", "kind": "FlowSchema",
            "metadata": {"name": "batch"},
            "spec": {"priorityLevelConfiguration": {"name": "batch"}}}),
    )
    .await;
    assert_eq!(schema["spec"]["matchingPrecedence"], 1000);

    let ep = create_raw(
        addr,
        "/api/v1/namespaces/default/endpoints",
        json!({"apiVersion": "v1", "kind": "Endpoints", "metadata": {"name": "ext"},
            "subsets": [{"addresses": [{"ip": "10.0.0.1"}], "ports": [{"port": 80}]}]}),
    )
    .await;
    assert_eq!(ep["subsets"][0]["ports"][0]["protocol"], "TCP");
    let slice = create_raw(
        addr,
        "/apis/discovery.k8s.io/v1/namespaces/default/endpointslices",
        json!({"apiVersion": "discovery.k8s.io/v1", "kind": "EndpointSlice",
            "metadata": {"name": "ext"}, "addressType": "IPv4", "endpoints": [],
            "ports": [{"port": 80}]}),
    )
    .await;
    assert_eq!(
        slice["ports"][0],
        json!({"name": "", "protocol": "TCP", "port": 80})
    );
    // An empty list without `omitempty` is stored as `null`.
    assert!(
        slice.get("endpoints").is_some_and(Value::is_null),
        "{slice}"
    );

    let lr = create_raw(
        addr,
        "/api/v1/namespaces/default/limitranges",
        json!({"apiVersion": "v1", "kind": "LimitRange", "metadata": {"name": "limits"},
            "spec": {"limits": [{"type": "Container", "max": {"cpu": "2"}}]}}),
    )
    .await;
    assert_eq!(
        lr["spec"]["limits"][0],
        json!({"type": "Container", "max": {"cpu": "2"}, "default": {"cpu": "2"},
            "defaultRequest": {"cpu": "2"}})
    );
}
