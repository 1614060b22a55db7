//! Create and update validation of the built-in kinds that have rules of their own (CronJobs,
//! HorizontalPodAutoscalers, networking and policy kinds, ...), over HTTP through
//! `kube::Client`: each invalid request is a `422 Invalid` whose message and causes are those
//! kube-apiserver v1.36 writes.

use k8s_openapi::api::autoscaling::{v1 as autoscaling_v1, v2 as autoscaling_v2};
use k8s_openapi::api::batch::v1::CronJob;
use kcr_testenv::TestEnv;
use kube::api::{Api, Patch, PatchParams, PostParams};
use serde::de::DeserializeOwned;
use serde_json::{Value, json};

/// The Status message and `(field, message)` causes of a refused write.
fn refusal(err: kube::Error) -> (String, Vec<(String, String)>) {
    match err {
        kube::Error::Api(s) => {
            assert_eq!(s.code, 422, "{}", s.message);
            assert_eq!(s.reason, "Invalid");
            let causes = s
                .details
                .map(|d| d.causes)
                .unwrap_or_default()
                .into_iter()
                .map(|c| (c.field, c.message))
                .collect();
            (s.message, causes)
        }
        other => panic!("expected an API error, got {other:?}"),
    }
}

fn pairs(v: &[(&str, &str)]) -> Vec<(String, String)> {
    v.iter()
        .map(|(a, b)| ((*a).to_owned(), (*b).to_owned()))
        .collect()
}

fn typed<K: DeserializeOwned>(v: Value) -> K {
    serde_json::from_value(v).unwrap()
}

async fn refused<K>(api: &Api<K>, obj: Value) -> (String, Vec<(String, String)>)
where
    K: kube::Resource + Clone + DeserializeOwned + serde::Serialize + std::fmt::Debug,
{
    let err = api
        .create(&PostParams::default(), &typed::<K>(obj))
        .await
        .unwrap_err();
    refusal(err)
}

fn cron_job(name: &str, spec: Value) -> Value {
    let mut spec = spec;
    if spec.get("jobTemplate").is_none() {
        spec["jobTemplate"] = json!({"spec": {"template": {"spec": {"restartPolicy": "OnFailure",
            "containers": [{"name": "c", "image": "busybox"}]}}}});
    }
    json!({"apiVersion": "batch/v1", "kind": "CronJob", "metadata": {"name": name}, "spec": spec})
}

#[tokio::test]
async fn a_cron_job_schedule_should_be_parsed_as_the_cron_parser_does() {
    let env = TestEnv::start().await.unwrap();
    let api: Api<CronJob> = Api::namespaced(env.client(), "default");
    let (message, causes) = refused(&api, cron_job("bad", json!({"schedule": "61 * * * *"}))).await;
    assert_eq!(
        message,
        "CronJob.batch \"bad\" is invalid: spec.schedule: Invalid value: \"61 * * * *\": end of range (61) above maximum (59): 61"
    );
    assert_eq!(causes.len(), 1);
    let (_, causes) = refused(&api, cron_job("bad", json!({"schedule": "* * *"}))).await;
    assert_eq!(
        causes,
        pairs(&[(
            "spec.schedule",
            "Invalid value: \"* * *\": expected exactly 5 fields, found 3: [* * *]"
        )])
    );
    let (_, causes) = refused(
        &api,
        cron_job("bad", json!({"schedule": "CRON_TZ=UTC 0 * * * *"})),
    )
    .await;
    assert_eq!(
        causes,
        pairs(&[(
            "spec.schedule",
            "Invalid value: \"CRON_TZ=UTC 0 * * * *\": cannot use TZ or CRON_TZ in schedule, use timeZone field instead"
        )])
    );
    let (_, causes) = refused(&api, cron_job("bad", json!({"schedule": "@fortnightly"}))).await;
    assert_eq!(
        causes,
        pairs(&[(
            "spec.schedule",
            "Invalid value: \"@fortnightly\": unrecognized descriptor: @fortnightly"
        )])
    );
    for schedule in ["*/15 8-18 * * mon-fri", "@hourly", "0 0 1 jan,jul *"] {
        let name = format!("ok-{}", schedule.len());
        api.create(
            &PostParams::default(),
            &typed(cron_job(&name, json!({"schedule": schedule}))),
        )
        .await
        .unwrap_or_else(|e| panic!("{schedule}: {e}"));
    }
}

#[tokio::test]
async fn a_cron_job_spec_should_list_every_cause_in_order() {
    let env = TestEnv::start().await.unwrap();
    let api: Api<CronJob> = Api::namespaced(env.client(), "default");
    let (message, causes) = refused(
        &api,
        cron_job(
            "bad",
            json!({"schedule": "@daily", "timeZone": "Europe/Pariss", "concurrencyPolicy": "Sometimes",
                "startingDeadlineSeconds": -5, "successfulJobsHistoryLimit": -1,
                "jobTemplate": {"spec": {"template": {"spec": {"restartPolicy": "Always",
                    "containers": [{"name": "c", "image": "busybox"}]}}}}}),
        ),
    )
    .await;
    let want = pairs(&[
        (
            "spec.startingDeadlineSeconds",
            "Invalid value: -5: must be greater than or equal to 0",
        ),
        (
            "spec.timeZone",
            "Invalid value: \"Europe/Pariss\": unknown time zone Europe/Pariss",
        ),
        (
            "spec.concurrencyPolicy",
            "Unsupported value: \"Sometimes\": supported values: \"Allow\", \"Forbid\", \"Replace\"",
        ),
        (
            "spec.jobTemplate.spec.template.spec.restartPolicy",
            "Required value: valid values: \"OnFailure\", \"Never\"",
        ),
        (
            "spec.successfulJobsHistoryLimit",
            "Invalid value: -1: must be greater than or equal to 0",
        ),
    ]);
    assert_eq!(causes, want);
    let listed: Vec<String> = want.iter().map(|(f, m)| format!("{f}: {m}")).collect();
    assert_eq!(
        message,
        format!("CronJob.batch \"bad\" is invalid: [{}]", listed.join(", "))
    );
}

#[tokio::test]
async fn a_cron_job_name_should_leave_room_for_its_jobs_suffix() {
    let env = TestEnv::start().await.unwrap();
    let api: Api<CronJob> = Api::namespaced(env.client(), "default");
    let name = "a".repeat(53);
    let (_, causes) = refused(&api, cron_job(&name, json!({"schedule": "@daily"}))).await;
    assert_eq!(
        causes,
        pairs(&[(
            "metadata.name",
            &format!("Invalid value: \"{name}\": must be no more than 52 characters"),
        )])
    );
    api.create(
        &PostParams::default(),
        &typed(cron_job(&"a".repeat(52), json!({"schedule": "@daily"}))),
    )
    .await
    .unwrap();
}

#[tokio::test]
async fn a_cron_job_update_should_check_the_new_schedule_and_time_zone() {
    let env = TestEnv::start().await.unwrap();
    let api: Api<CronJob> = Api::namespaced(env.client(), "default");
    api.create(
        &PostParams::default(),
        &typed(cron_job(
            "nightly",
            json!({"schedule": "0 3 * * *", "timeZone": "Europe/Paris"}),
        )),
    )
    .await
    .unwrap();
    let patch = |spec: Value| Patch::Merge(json!({"spec": spec}));
    let err = api
        .patch(
            "nightly",
            &PatchParams::default(),
            &patch(json!({"schedule": "TZ=UTC 0 3 * * *"})),
        )
        .await
        .unwrap_err();
    assert_eq!(
        refusal(err).1,
        pairs(&[(
            "spec.schedule",
            "Invalid value: \"TZ=UTC 0 3 * * *\": cannot use TZ or CRON_TZ in schedule, use timeZone field instead"
        )])
    );
    let err = api
        .patch(
            "nightly",
            &PatchParams::default(),
            &patch(json!({"timeZone": "local", "concurrencyPolicy": "Never"})),
        )
        .await
        .unwrap_err();
    assert_eq!(
        refusal(err).1,
        pairs(&[
            (
                "spec.timeZone",
                "Invalid value: \"local\": timeZone must be an explicit time zone as defined in https://www.iana.org/time-zones"
            ),
            (
                "spec.timeZone",
                "Invalid value: \"local\": unknown time zone local"
            ),
            (
                "spec.concurrencyPolicy",
                "Unsupported value: \"Never\": supported values: \"Allow\", \"Forbid\", \"Replace\""
            ),
        ])
    );
    api.patch(
        "nightly",
        &PatchParams::default(),
        &patch(json!({"schedule": "30 4 * * *", "timeZone": "America/New_York"})),
    )
    .await
    .unwrap();
}

fn hpa_v2(name: &str, spec: Value) -> Value {
    json!({"apiVersion": "autoscaling/v2", "kind": "HorizontalPodAutoscaler",
        "metadata": {"name": name}, "spec": spec})
}

#[tokio::test]
async fn an_autoscaler_should_have_sane_bounds_and_a_target() {
    let env = TestEnv::start().await.unwrap();
    let api: Api<autoscaling_v2::HorizontalPodAutoscaler> =
        Api::namespaced(env.client(), "default");
    let (message, causes) = refused(
        &api,
        hpa_v2(
            "web",
            json!({"minReplicas": 5, "maxReplicas": 2,
                "scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": ".."}}),
        ),
    )
    .await;
    let want = pairs(&[
        (
            "spec.maxReplicas",
            "Invalid value: 2: must be greater than or equal to `minReplicas`",
        ),
        (
            "spec.scaleTargetRef.name",
            "Invalid value: \"..\": may not be '..'",
        ),
    ]);
    assert_eq!(causes, want);
    assert!(
        message.starts_with("HorizontalPodAutoscaler.autoscaling \"web\" is invalid: ["),
        "{message}"
    );
    let (_, causes) = refused(
        &api,
        hpa_v2(
            "web",
            json!({"maxReplicas": 3, "scaleTargetRef": {"kind": "Deployment", "name": "web"},
                "metrics": [{"type": "Pods", "pods": {"metric": {"name": "qps"},
                    "target": {"type": "Value", "value": "10"}}}],
                "behavior": {"scaleDown": {"stabilizationWindowSeconds": -1,
                    "policies": [{"type": "Pods", "value": 1, "periodSeconds": 0}]}}}),
        ),
    )
    .await;
    assert_eq!(
        causes,
        pairs(&[
            (
                "spec.metrics[0].pods.target.averageValue",
                "Required value: must specify a positive target averageValue"
            ),
            (
                "spec.behavior.scaleDown.stabilizationWindowSeconds",
                "Invalid value: -1: must be greater than or equal to zero"
            ),
            (
                "spec.behavior.scaleDown.policies[0].periodSeconds",
                "Invalid value: 0: must be greater than zero"
            ),
        ])
    );
}

#[tokio::test]
async fn a_v1_autoscaler_should_be_checked_through_its_cpu_metric() {
    let env = TestEnv::start().await.unwrap();
    let api: Api<autoscaling_v1::HorizontalPodAutoscaler> =
        Api::namespaced(env.client(), "default");
    let (_, causes) = refused(
        &api,
        json!({"apiVersion": "autoscaling/v1", "kind": "HorizontalPodAutoscaler",
            "metadata": {"name": "web"}, "spec": {"minReplicas": 0, "maxReplicas": 0,
            "scaleTargetRef": {"kind": "Deployment", "name": "web"},
            "targetCPUUtilizationPercentage": 0}}),
    )
    .await;
    assert_eq!(
        causes,
        pairs(&[
            (
                "spec.minReplicas",
                "Invalid value: 0: must be greater than or equal to 1"
            ),
            (
                "spec.maxReplicas",
                "Invalid value: 0: must be greater than 0"
            ),
            (
                "spec.metrics[0].resource.target.averageUtilization",
                "Invalid value: 0: must be greater than 0"
            ),
            (
                "spec.metrics",
                "Forbidden: must specify at least one Object or External metric to support scaling to zero replicas"
            ),
        ])
    );
}

#[tokio::test]
async fn an_ingress_should_have_valid_rules_paths_and_backends() {
    use k8s_openapi::api::networking::v1::Ingress;
    let env = TestEnv::start().await.unwrap();
    let api: Api<Ingress> = Api::namespaced(env.client(), "default");
    let (message, causes) = refused(
        &api,
        json!({"apiVersion": "networking.k8s.io/v1", "kind": "Ingress", "metadata": {"name": "web"},
            "spec": {}}),
    )
    .await;
    assert_eq!(
        message,
        "Ingress.networking.k8s.io \"web\" is invalid: spec: Invalid value: null: either `defaultBackend` or `rules` must be specified"
    );
    assert_eq!(causes.len(), 1);
    let (_, causes) = refused(
        &api,
        json!({"apiVersion": "networking.k8s.io/v1", "kind": "Ingress", "metadata": {"name": "web"},
            "spec": {"rules": [{"host": "10.0.0.1", "http": {"paths": [
                {"path": "shop", "pathType": "Prefix",
                    "backend": {"service": {"name": "shop", "port": {"number": 0}}}},
                {"path": "/api", "pathType": "Exact",
                    "backend": {"service": {"name": "api", "port": {"name": "HTTP"}}}}]}}],
            "tls": [{"hosts": ["*.example.com"], "secretName": "tls_cert"}]}}),
    )
    .await;
    assert_eq!(
        causes,
        pairs(&[
            (
                "spec.rules[0].host",
                "Invalid value: \"10.0.0.1\": must be a DNS name, not an IP address"
            ),
            (
                "spec.rules[0].http.paths[0].path",
                "Invalid value: \"shop\": must be an absolute path"
            ),
            (
                "spec.rules[0].http.paths[0].backend",
                "Required value: port name or number is required"
            ),
            (
                "spec.rules[0].http.paths[1].backend.service.port.name",
                "Invalid value: \"HTTP\": must contain only alpha-numeric characters (a-z, 0-9), and hyphens (-)"
            ),
            (
                "spec.rules[0].http.paths[1].backend.service.port.name",
                "Invalid value: \"HTTP\": must contain at least one letter (a-z)"
            ),
            (
                "spec.tls[0].secretName",
                "Invalid value: \"tls_cert\": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"
            ),
        ])
    );
}

#[tokio::test]
async fn a_network_policy_should_have_valid_ports_and_peers() {
    use k8s_openapi::api::networking::v1::NetworkPolicy;
    let env = TestEnv::start().await.unwrap();
    let api: Api<NetworkPolicy> = Api::namespaced(env.client(), "default");
    let (_, causes) = refused(
        &api,
        json!({"apiVersion": "networking.k8s.io/v1", "kind": "NetworkPolicy", "metadata": {"name": "np"},
            "spec": {"podSelector": {},
                "ingress": [{"ports": [{"port": 8443, "endPort": 8000}],
                    "from": [{"ipBlock": {"cidr": "192.168.0.0/16", "except": ["10.0.0.0/8"]}}]}],
                "egress": [{"to": [{"ipBlock": {"cidr": "not-a-cidr"}}]}]}}),
    )
    .await;
    assert_eq!(
        causes,
        pairs(&[
            (
                "spec.ingress[0].ports[0].endPort",
                "Invalid value: 8443: must be greater than or equal to `port`"
            ),
            (
                "spec.ingress[0].from[0].ipBlock.except[0]",
                "Invalid value: \"10.0.0.0/8\": must be a strict subset of `cidr`"
            ),
            (
                "spec.egress[0].to[0].ipBlock.cidr",
                "Invalid value: \"not-a-cidr\": must be a valid CIDR value, (e.g. 10.9.8.0/24 or 2001:db8::/64)"
            ),
        ])
    );
}

#[tokio::test]
async fn an_ingress_class_controller_should_be_required_and_immutable() {
    use k8s_openapi::api::networking::v1::IngressClass;
    let env = TestEnv::start().await.unwrap();
    let api: Api<IngressClass> = Api::all(env.client());
    let name = "kcr-kind-validation-class";
    let (_, causes) = refused(
        &api,
        json!({"apiVersion": "networking.k8s.io/v1", "kind": "IngressClass",
            "metadata": {"name": name}, "spec": {}}),
    )
    .await;
    assert_eq!(causes, pairs(&[("spec.controller", "Required value")]));
    api.create(
        &PostParams::default(),
        &typed(
            json!({"apiVersion": "networking.k8s.io/v1", "kind": "IngressClass",
            "metadata": {"name": name}, "spec": {"controller": "example.com/ingress"}}),
        ),
    )
    .await
    .unwrap();
    let err = api
        .patch(
            name,
            &PatchParams::default(),
            &Patch::Merge(json!({"spec": {"controller": "example.com/other"}})),
        )
        .await
        .unwrap_err();
    assert_eq!(
        refusal(err).1,
        pairs(&[(
            "spec.controller",
            "Invalid value: \"example.com/other\": field is immutable"
        )])
    );
}

#[tokio::test]
async fn a_disruption_budget_should_set_one_bound() {
    use k8s_openapi::api::policy::v1::PodDisruptionBudget;
    let env = TestEnv::start().await.unwrap();
    let api: Api<PodDisruptionBudget> = Api::namespaced(env.client(), "default");
    let (message, causes) = refused(
        &api,
        json!({"apiVersion": "policy/v1", "kind": "PodDisruptionBudget", "metadata": {"name": "web"},
            "spec": {"minAvailable": 1, "maxUnavailable": "120%",
                "selector": {"matchLabels": {"app": "web"}}}}),
    )
    .await;
    let want = pairs(&[
        (
            "spec",
            "Invalid value: {\"minAvailable\":1,\"selector\":{\"matchLabels\":{\"app\":\"web\"}},\"maxUnavailable\":\"120%\"}: minAvailable and maxUnavailable cannot be both set",
        ),
        (
            "spec.maxUnavailable",
            "Invalid value: \"120%\": must not be greater than 100%",
        ),
    ]);
    assert_eq!(causes, want);
    assert!(
        message
            .starts_with("PodDisruptionBudget.policy \"web\" is invalid: [spec: Invalid value: "),
        "{message}"
    );
    let (_, causes) = refused(
        &api,
        json!({"apiVersion": "policy/v1", "kind": "PodDisruptionBudget", "metadata": {"name": "web"},
            "spec": {"minAvailable": "most", "unhealthyPodEvictionPolicy": "Sometimes"}}),
    )
    .await;
    assert_eq!(
        causes,
        pairs(&[
            (
                "spec.minAvailable",
                "Invalid value: \"most\": a valid percent string must be a numeric string followed by an ending '%' (e.g. '1%',  or '93%', regex used for validation is '[0-9]+%')"
            ),
            (
                "spec.unhealthyPodEvictionPolicy",
                "Unsupported value: \"Sometimes\": supported values: \"AlwaysAllow\", \"IfHealthyBudget\""
            ),
        ])
    );
}

#[tokio::test]
async fn a_persistent_volume_should_have_one_source_that_stays() {
    use k8s_openapi::api::core::v1::PersistentVolume;
    let env = TestEnv::start().await.unwrap();
    let api: Api<PersistentVolume> = Api::all(env.client());
    let name = "kcr-kind-validation-pv";
    let (message, causes) = refused(
        &api,
        json!({"apiVersion": "v1", "kind": "PersistentVolume", "metadata": {"name": name},
            "spec": {"capacity": {"storage": "1Gi"}}}),
    )
    .await;
    assert_eq!(
        causes,
        pairs(&[
            ("spec.accessModes", "Required value"),
            ("spec", "Required value: must specify a volume type"),
        ])
    );
    assert_eq!(
        message,
        format!(
            "PersistentVolume \"{name}\" is invalid: [spec.accessModes: Required value, spec: Required value: must specify a volume type]"
        )
    );
    let (_, causes) = refused(
        &api,
        json!({"apiVersion": "v1", "kind": "PersistentVolume", "metadata": {"name": name},
            "spec": {"accessModes": ["ReadWriteOnce"], "capacity": {"storage": "1Gi"},
                "nfs": {"server": "", "path": "exports"}}}),
    )
    .await;
    assert_eq!(
        causes,
        pairs(&[
            ("spec.nfs.server", "Required value"),
            (
                "spec.nfs.path",
                "Invalid value: \"exports\": must be an absolute path"
            ),
        ])
    );
    api.create(
        &PostParams::default(),
        &typed(
            json!({"apiVersion": "v1", "kind": "PersistentVolume", "metadata": {"name": name},
            "spec": {"accessModes": ["ReadWriteOnce"], "capacity": {"storage": "1Gi"},
                "hostPath": {"path": "/tmp/data"}}}),
        ),
    )
    .await
    .unwrap();
    let err = api
        .patch(
            name,
            &PatchParams::default(),
            &Patch::Merge(json!({"spec": {"hostPath": {"path": "/tmp/other"}}})),
        )
        .await
        .unwrap_err();
    let (_, causes) = refusal(err);
    assert_eq!(causes.len(), 1);
    assert_eq!(causes[0].0, "spec.persistentvolumesource");
    assert!(
        causes[0]
            .1
            .starts_with("Forbidden: spec.persistentvolumesource is immutable after creation"),
        "{}",
        causes[0].1
    );
}

#[tokio::test]
async fn a_storage_class_should_name_a_provisioner_and_known_policies() {
    use k8s_openapi::api::storage::v1::StorageClass;
    let env = TestEnv::start().await.unwrap();
    let api: Api<StorageClass> = Api::all(env.client());
    let (message, causes) = refused(
        &api,
        json!({"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass",
            "metadata": {"name": "kcr-kind-validation-sc"}, "provisioner": "",
            "reclaimPolicy": "Recycle", "volumeBindingMode": "Eventually"}),
    )
    .await;
    let want = pairs(&[
        ("provisioner", "Required value"),
        (
            "reclaimPolicy",
            "Unsupported value: \"Recycle\": supported values: \"Delete\", \"Retain\"",
        ),
        (
            "volumeBindingMode",
            "Unsupported value: \"Eventually\": supported values: \"Immediate\", \"WaitForFirstConsumer\"",
        ),
    ]);
    assert_eq!(causes, want);
    assert!(
        message.starts_with(
            "StorageClass.storage.k8s.io \"kcr-kind-validation-sc\" is invalid: [provisioner: Required value, "
        ),
        "{message}"
    );
}

#[tokio::test]
async fn a_quota_should_limit_quota_resources_by_sane_amounts() {
    use k8s_openapi::api::core::v1::ResourceQuota;
    let env = TestEnv::start().await.unwrap();
    let api: Api<ResourceQuota> = Api::namespaced(env.client(), "default");
    let (_, causes) = refused(
        &api,
        json!({"apiVersion": "v1", "kind": "ResourceQuota", "metadata": {"name": "q"},
            "spec": {"hard": {"pods": "2500m", "limits.memory": "-1Gi", "count/jobs.batch": "5"}}}),
    )
    .await;
    assert_eq!(
        causes,
        pairs(&[
            (
                "spec.hard[limits.memory]",
                "Invalid value: \"-1Gi\": must be greater than or equal to 0"
            ),
            (
                "spec.hard[pods]",
                "Invalid value: \"2500m\": must be an integer"
            ),
        ])
    );
    let (_, causes) = refused(
        &api,
        json!({"apiVersion": "v1", "kind": "ResourceQuota", "metadata": {"name": "q"},
            "spec": {"hard": {"pods": "10"}, "scopes": ["BestEffort", "NotBestEffort"]}}),
    )
    .await;
    assert_eq!(
        causes,
        pairs(&[(
            "spec.scopes",
            "Invalid value: [\"BestEffort\",\"NotBestEffort\"]: conflicting scopes"
        )])
    );
}

#[tokio::test]
async fn a_namespace_finalizer_should_be_standard_or_qualified() {
    use k8s_openapi::api::core::v1::Namespace;
    let env = TestEnv::start().await.unwrap();
    let api: Api<Namespace> = Api::all(env.client());
    let (message, causes) = refused(
        &api,
        json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "kcr-kind-validation-ns"},
            "spec": {"finalizers": ["cleanup"]}}),
    )
    .await;
    assert_eq!(
        causes,
        pairs(&[(
            "spec.finalizers",
            "Invalid value: \"cleanup\": name is neither a standard finalizer name nor is it fully qualified"
        )])
    );
    assert_eq!(
        message,
        "Namespace \"kcr-kind-validation-ns\" is invalid: spec.finalizers: Invalid value: \"cleanup\": name is neither a standard finalizer name nor is it fully qualified"
    );
    api.create(
        &PostParams::default(),
        &typed(json!({"apiVersion": "v1", "kind": "Namespace",
            "metadata": {"name": "kcr-kind-validation-ns"},
            "spec": {"finalizers": ["example.com/cleanup"]}})),
    )
    .await
    .unwrap();
}

#[tokio::test]
async fn endpoints_should_have_routable_addresses_and_valid_ports() {
    use k8s_openapi::api::core::v1::Endpoints;
    let env = TestEnv::start().await.unwrap();
    let api: Api<Endpoints> = Api::namespaced(env.client(), "default");
    let (_, causes) = refused(
        &api,
        json!({"apiVersion": "v1", "kind": "Endpoints", "metadata": {"name": "web"},
            "subsets": [{"addresses": [{"ip": "0.0.0.0"}, {"ip": "10.1.2.3", "nodeName": "Node_1"}],
                "ports": [{"name": "http", "port": 70000}, {"name": "https", "port": 443, "protocol": "ICMP"}]},
                {"ports": [{"port": 80}]}]}),
    )
    .await;
    assert_eq!(
        causes,
        pairs(&[
            (
                "subsets[0].addresses[0].ip",
                "Invalid value: \"0.0.0.0\": may not be unspecified (0.0.0.0)"
            ),
            (
                "subsets[0].addresses[1].nodeName",
                "Invalid value: \"Node_1\": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"
            ),
            (
                "subsets[0].ports[0].port",
                "Invalid value: 70000: must be between 1 and 65535, inclusive"
            ),
            (
                "subsets[0].ports[1].protocol",
                "Unsupported value: \"ICMP\": supported values: \"SCTP\", \"TCP\", \"UDP\""
            ),
            (
                "subsets[1]",
                "Required value: must specify `addresses` or `notReadyAddresses`"
            ),
        ])
    );
    api.create(
        &PostParams::default(),
        &typed(
            json!({"apiVersion": "v1", "kind": "Endpoints", "metadata": {"name": "web"},
            "subsets": [{"addresses": [{"ip": "10.1.2.3"}], "ports": [{"port": 8080}]}]}),
        ),
    )
    .await
    .unwrap();
}

#[tokio::test]
async fn a_limit_range_should_have_standard_item_types_and_sane_bounds() {
    use k8s_openapi::api::core::v1::LimitRange;
    let env = TestEnv::start().await.unwrap();
    let api: Api<LimitRange> = Api::namespaced(env.client(), "default");
    let (_, causes) = refused(
        &api,
        json!({"apiVersion": "v1", "kind": "LimitRange", "metadata": {"name": "limits"},
            "spec": {"limits": [{"type": "Pod", "defaultRequest": {"memory": "64Mi"}},
                {"type": "Container", "min": {"memory": "1Gi"}, "max": {"memory": "512Mi"}},
                {"type": "Container"}]}}),
    )
    .await;
    assert_eq!(
        causes,
        pairs(&[
            (
                "spec.limits[0].defaultRequest",
                "Forbidden: may not be specified when `type` is 'Pod'"
            ),
            (
                "spec.limits[1].min[memory]",
                "Invalid value: \"1Gi\": min value 1Gi is greater than max value 512Mi"
            ),
            (
                "spec.limits[1].defaultRequest[memory]",
                "Invalid value: \"512Mi\": min value 1Gi is greater than default request value 512Mi"
            ),
            (
                "spec.limits[1].default[memory]",
                "Invalid value: \"1Gi\": min value 1Gi is greater than default value 512Mi"
            ),
            ("spec.limits[2].type", "Duplicate value: \"Container\""),
        ])
    );
}
