//! The admission plugins beyond the recorded `admission` cases (other kinds, other fields):
//! LimitRanger, ResourceQuota with the quota controller, ServiceAccount, PodSecurity,
//! ValidatingAdmissionPolicy, StorageObjectInUseProtection with the protection controllers, and
//! switching plugins off.

use crate::common::eventually;
use std::time::Duration;

use k8s_openapi::api::admissionregistration::v1::{
    ValidatingAdmissionPolicy, ValidatingAdmissionPolicyBinding,
};
use k8s_openapi::api::apps::v1::StatefulSet;
use k8s_openapi::api::core::v1::{
    ConfigMap, LimitRange, Namespace, PersistentVolume, PersistentVolumeClaim, Pod, ResourceQuota,
    Secret, ServiceAccount,
};
use kube::api::{Api, DeleteParams, PostParams};
use kube::{Client, ResourceExt};
use serde_json::{Value, json};

async fn realistic() -> kcr_testenv::TestEnv {
    kcr_testenv::TestEnv::builder()
        .realistic()
        .start()
        .await
        .expect("start")
}

fn from<T: serde::de::DeserializeOwned>(v: Value) -> T {
    serde_json::from_value(v).expect("valid object")
}

/// A namespace with `labels`, and (with the ServiceAccounts controller) its `default`
/// ServiceAccount.
async fn namespace(client: &Client, name: &str, labels: Value) {
    Api::<Namespace>::all(client.clone())
        .create(
            &PostParams::default(),
            &from(json!({"metadata": {"name": name, "labels": labels}})),
        )
        .await
        .expect("namespace");
    let accounts: Api<ServiceAccount> = Api::namespaced(client.clone(), name);
    assert!(eventually(|| async { accounts.get_opt("default").await.unwrap().is_some() }).await);
}

/// Every `Warning` header of a response.
fn warnings_of(response: &crate::common::RawResponse) -> Vec<&str> {
    response
        .headers
        .iter()
        .filter(|(k, _)| k.eq_ignore_ascii_case("warning"))
        .map(|(_, v)| v.as_str())
        .collect()
}

fn pod(name: &str, container: Value) -> Pod {
    let mut c = json!({"name": "app", "image": "registry.k8s.io/pause:3.10"});
    if let (Some(c), Some(extra)) = (c.as_object_mut(), container.as_object()) {
        c.extend(extra.clone());
    }
    from(json!({
        "metadata": {"name": name},
        "spec": {"automountServiceAccountToken": false, "containers": [c]}
    }))
}

/// The message of a refusal with `code`.
fn refused(e: kube::Error, code: u16) -> String {
    match e {
        kube::Error::Api(s) if s.code == code => s.message,
        other => panic!("expected {code}, got {other:?}"),
    }
}

async fn create<K>(api: &Api<K>, obj: Value) -> Result<K, kube::Error>
where
    K: kube::Resource + Clone + serde::de::DeserializeOwned + serde::Serialize + std::fmt::Debug,
{
    api.create(&PostParams::default(), &from(obj)).await
}

#[tokio::test]
async fn limit_ranger_should_default_init_containers_and_bound_the_pod() {
    let env = realistic().await;
    let client = env.client();
    namespace(&client, "lr", json!({})).await;
    let ranges: Api<LimitRange> = Api::namespaced(client.clone(), "lr");
    create(
        &ranges,
        json!({"metadata": {"name": "l"}, "spec": {"limits": [
            {"type": "Container", "default": {"memory": "100Mi"}},
            {"type": "Pod", "min": {"memory": "150Mi"}}
        ]}}),
    )
    .await
    .unwrap();
    let pods: Api<Pod> = Api::namespaced(client.clone(), "lr");
    let mut two = pod("two", json!({}));
    let mut init = two.spec.as_ref().unwrap().containers[0].clone();
    init.name = "setup".into();
    two.spec.as_mut().unwrap().init_containers = Some(vec![init]);
    let created = pods.create(&PostParams::default(), &two).await;
    // The container's 100Mi (the defaulted request) is under the Pod minimum.
    assert_eq!(
        refused(created.unwrap_err(), 403),
        "pods \"two\" is forbidden: minimum memory usage per Pod is 150Mi, but request is 100Mi"
    );
    let big = pod(
        "big",
        json!({"resources": {"requests": {"memory": "200Mi"}, "limits": {"memory": "200Mi"}}}),
    );
    let mut big_init = big.clone();
    let mut init = big.spec.as_ref().unwrap().containers[0].clone();
    init.name = "setup".into();
    init.resources = None;
    big_init.spec.as_mut().unwrap().init_containers = Some(vec![init]);
    let created = pods
        .create(&PostParams::default(), &big_init)
        .await
        .unwrap();
    assert_eq!(
        created.annotations()["kubernetes.io/limit-ranger"],
        "LimitRanger plugin set: memory request for init container setup; memory limit for init container setup"
    );
    let setup = &created.spec.unwrap().init_containers.unwrap()[0];
    let limits = setup.resources.as_ref().unwrap().limits.as_ref().unwrap();
    assert_eq!(limits["memory"].0, "100Mi");
}

#[tokio::test]
async fn a_plugin_switched_off_should_not_act() {
    let env = kcr_testenv::TestEnv::builder()
        .realistic()
        .admission_plugin("LimitRanger", false)
        .start()
        .await
        .unwrap();
    let client = env.client();
    namespace(&client, "off", json!({})).await;
    let ranges: Api<LimitRange> = Api::namespaced(client.clone(), "off");
    create(
        &ranges,
        json!({"metadata": {"name": "l"}, "spec": {"limits": [
            {"type": "Container", "max": {"cpu": "1"}}
        ]}}),
    )
    .await
    .unwrap();
    let pods: Api<Pod> = Api::namespaced(client.clone(), "off");
    let created = pods
        .create(
            &PostParams::default(),
            &pod("p", json!({"resources": {"limits": {"cpu": "2"}}})),
        )
        .await
        .unwrap();
    assert!(created.annotations().is_empty());
    let started = kcr_testenv::TestEnv::builder()
        .admission_plugin("NoSuchPlugin", false)
        .start()
        .await;
    assert!(
        matches!(started, Err(kcr_testenv::Error::AdmissionPlugin(ref n)) if n == "NoSuchPlugin"),
        "an unknown plugin is refused"
    );
    // A plugin of kube-apiserver that kcr-testenv does not run may be named.
    let _ = kcr_testenv::TestEnv::builder()
        .admission_plugin("AlwaysPullImages", false)
        .start()
        .await
        .unwrap();
}

#[tokio::test]
async fn object_count_quotas_should_follow_creates_and_deletes() {
    let env = realistic().await;
    let client = env.client();
    namespace(&client, "rq", json!({})).await;
    let quotas: Api<ResourceQuota> = Api::namespaced(client.clone(), "rq");
    create(
        &quotas,
        json!({"metadata": {"name": "q"}, "spec": {"hard": {
            "count/configmaps": "2", "secrets": "1"
        }}}),
    )
    .await
    .unwrap();
    // kube-root-ca.crt is one ConfigMap already.
    assert!(
        eventually(|| async {
            let q = quotas.get("q").await.unwrap();
            q.status
                .and_then(|s| s.used)
                .is_some_and(|u| u.get("count/configmaps").is_some_and(|q| q.0 == "1"))
        })
        .await
    );
    let config_maps: Api<ConfigMap> = Api::namespaced(client.clone(), "rq");
    create(&config_maps, json!({"metadata": {"name": "one"}}))
        .await
        .unwrap();
    let err = create(&config_maps, json!({"metadata": {"name": "two"}}))
        .await
        .unwrap_err();
    assert_eq!(
        refused(err, 403),
        "configmaps \"two\" is forbidden: exceeded quota: q, requested: count/configmaps=1, used: count/configmaps=2, limited: count/configmaps=2"
    );
    let secrets: Api<Secret> = Api::namespaced(client.clone(), "rq");
    create(&secrets, json!({"metadata": {"name": "s1"}}))
        .await
        .unwrap();
    let err = create(&secrets, json!({"metadata": {"name": "s2"}}))
        .await
        .unwrap_err();
    assert!(
        refused(err, 403).ends_with("requested: secrets=1, used: secrets=1, limited: secrets=1")
    );
    // The quota controller gives back what a delete frees.
    config_maps
        .delete("one", &DeleteParams::default())
        .await
        .unwrap();
    assert!(
        eventually(|| async {
            create(&config_maps, json!({"metadata": {"name": "two"}}))
                .await
                .is_ok()
        })
        .await
    );
}

#[tokio::test]
async fn a_quota_should_constrain_nothing_before_its_status_is_known() {
    let env = kcr_testenv::TestEnv::builder()
        .namespace_controllers(true)
        .start()
        .await
        .unwrap();
    let client = env.client();
    namespace(&client, "rq", json!({})).await;
    let quotas: Api<ResourceQuota> = Api::namespaced(client.clone(), "rq");
    let q = create(
        &quotas,
        json!({"metadata": {"name": "q"}, "spec": {"hard": {"pods": "0"}}}),
    )
    .await
    .unwrap();
    assert_eq!(serde_json::to_value(q.status).unwrap(), json!({}));
    let pods: Api<Pod> = Api::namespaced(client.clone(), "rq");
    pods.create(&PostParams::default(), &pod("p", json!({})))
        .await
        .unwrap();
}

#[tokio::test]
async fn a_missing_service_account_should_be_refused_only_when_it_is_named_or_expected() {
    let env = realistic().await;
    let client = env.client();
    namespace(&client, "sa", json!({})).await;
    let pods: Api<Pod> = Api::namespaced(client.clone(), "sa");
    let mut p = pod("p", json!({}));
    p.spec.as_mut().unwrap().service_account_name = Some("robot".into());
    let err = pods.create(&PostParams::default(), &p).await.unwrap_err();
    assert_eq!(
        refused(err, 403),
        "pods \"p\" is forbidden: error looking up service account sa/robot: serviceaccount \"robot\" not found"
    );
    // A mirror pod gets no ServiceAccount and may not project a token.
    let mut mirror: Pod = pod("mirror", json!({}));
    mirror.metadata.annotations =
        Some([("kubernetes.io/config.mirror".to_owned(), "x".to_owned())].into());
    let created = pods.create(&PostParams::default(), &mirror).await.unwrap();
    assert_eq!(created.spec.unwrap().service_account_name, None);
    mirror.metadata.name = Some("mirror2".into());
    mirror.spec.as_mut().unwrap().image_pull_secrets = Some(vec![from(json!({"name": "s"}))]);
    let err = pods
        .create(&PostParams::default(), &mirror)
        .await
        .unwrap_err();
    assert_eq!(
        refused(err, 403),
        "pods \"mirror2\" is forbidden: mirror pods may not reference secrets"
    );
    // Without the ServiceAccounts controller no namespace has `default`: such Pods are
    // admitted (kcr-testenv's one deliberate difference).
    let bare = kcr_testenv::TestEnv::builder().start().await.unwrap();
    Api::<Pod>::namespaced(bare.client(), "default")
        .create(&PostParams::default(), &pod("p", json!({})))
        .await
        .unwrap();
}

#[tokio::test]
async fn pod_security_should_enforce_and_warn_per_namespace_labels() {
    let env = realistic().await;
    let client = env.client();
    namespace(
        &client,
        "psa",
        json!({"pod-security.kubernetes.io/enforce": "baseline",
               "pod-security.kubernetes.io/warn": "restricted",
               "pod-security.kubernetes.io/warn-version": "v1.30"}),
    )
    .await;
    let pods: Api<Pod> = Api::namespaced(client.clone(), "psa");
    let err = pods
        .create(
            &PostParams::default(),
            &pod("root", json!({"securityContext": {"privileged": true}, "ports": [{"containerPort": 80, "hostPort": 8080}]})),
        )
        .await
        .unwrap_err();
    assert_eq!(
        refused(err, 403),
        "pods \"root\" is forbidden: violates PodSecurity \"baseline:latest\": hostPort (container \"app\" uses hostPort 8080), privileged (container \"app\" must not set securityContext.privileged=true)"
    );
    // A workload is admitted with the warn level's warning (kube's client logs it; the raw
    // request shows it).
    let sts = json!({"apiVersion": "apps/v1", "kind": "StatefulSet", "metadata": {"name": "s"},
        "spec": {"selector": {"matchLabels": {"a": "s"}}, "serviceName": "s",
                 "template": {"metadata": {"labels": {"a": "s"}}, "spec": {"containers": [
                     {"name": "c", "image": "x", "securityContext": {"runAsUser": 0, "allowPrivilegeEscalation": false,
                      "capabilities": {"drop": ["ALL"]}, "runAsNonRoot": true, "seccompProfile": {"type": "RuntimeDefault"}}}]}}}});
    let response = crate::common::raw(
        env.addr(),
        "POST",
        "/apis/apps/v1/namespaces/psa/statefulsets",
        &[("Content-Type", "application/json")],
        sts.to_string().as_bytes(),
    )
    .await;
    assert_eq!(response.status, 201);
    assert_eq!(
        response.header("warning"),
        Some(
            "299 - \"would violate PodSecurity \\\"restricted:v1.30\\\": runAsUser=0 (container \\\"c\\\" must not set runAsUser=0)\""
        )
    );
    let _ = Api::<StatefulSet>::namespaced(client.clone(), "psa")
        .get("s")
        .await
        .unwrap();
    // An invalid level is refused on a new namespace.
    let err = Api::<Namespace>::all(client.clone())
        .create(
            &PostParams::default(),
            &from(json!({"metadata": {"name": "bad", "labels": {"pod-security.kubernetes.io/audit": "strict"}}})),
        )
        .await
        .unwrap_err();
    assert_eq!(
        refused(err, 422),
        "Namespace \"bad\" is invalid: metadata.labels[pod-security.kubernetes.io/audit]: Invalid value: \"strict\": must be one of privileged, baseline, restricted"
    );
}

#[tokio::test]
async fn a_validating_admission_policy_should_use_its_params_and_actions() {
    let env = realistic().await;
    let client = env.client();
    namespace(&client, "vap", json!({"team": "a"})).await;
    let config_maps: Api<ConfigMap> = Api::namespaced(client.clone(), "vap");
    create(
        &config_maps,
        json!({"metadata": {"name": "limits"}, "data": {"maxKeys": "1"}}),
    )
    .await
    .unwrap();
    create(
        &Api::<ValidatingAdmissionPolicy>::all(client.clone()),
        json!({"metadata": {"name": "keys"}, "spec": {
            "failurePolicy": "Fail",
            "paramKind": {"apiVersion": "v1", "kind": "ConfigMap"},
            "matchConstraints": {"resourceRules": [{"apiGroups": [""], "apiVersions": ["v1"],
                "operations": ["CREATE"], "resources": ["secrets"]}]},
            "validations": [{"expression": "size(object.data) <= int(params.data.maxKeys)",
                             "messageExpression": "'at most ' + params.data.maxKeys + ' keys'"}]
        }}),
    )
    .await
    .unwrap();
    let bindings: Api<ValidatingAdmissionPolicyBinding> = Api::all(client.clone());
    create(
        &bindings,
        json!({"metadata": {"name": "keys"}, "spec": {"policyName": "keys",
            "validationActions": ["Deny"],
            "paramRef": {"name": "limits", "parameterNotFoundAction": "Deny"},
            "matchResources": {"namespaceSelector": {"matchLabels": {"team": "a"}}}}}),
    )
    .await
    .unwrap();
    let secrets: Api<Secret> = Api::namespaced(client.clone(), "vap");
    create(
        &secrets,
        json!({"metadata": {"name": "one"}, "data": {"a": "YQ=="}}),
    )
    .await
    .unwrap();
    let err = create(
        &secrets,
        json!({"metadata": {"name": "two"}, "data": {"a": "YQ==", "b": "Yg=="}}),
    )
    .await
    .unwrap_err();
    assert_eq!(
        refused(err, 422),
        "secrets \"two\" is forbidden: ValidatingAdmissionPolicy 'keys' with binding 'keys' denied request: at most 1 keys"
    );
    // Another namespace is not selected; without its param the binding denies.
    namespace(&client, "other", json!({"team": "a"})).await;
    let err = create(
        &Api::<Secret>::namespaced(client.clone(), "other"),
        json!({"metadata": {"name": "s"}}),
    )
    .await
    .unwrap_err();
    assert_eq!(
        refused(err, 422),
        "secrets \"s\" is forbidden: ValidatingAdmissionPolicy 'keys' with binding 'keys' denied request: no params found for policy binding with `Deny` parameterNotFoundAction"
    );
    namespace(&client, "elsewhere", json!({"team": "b"})).await;
    create(
        &Api::<Secret>::namespaced(client.clone(), "elsewhere"),
        json!({"metadata": {"name": "s", "labels": {"x": "y"}}, "data": {"a": "YQ==", "b": "Yg=="}}),
    )
    .await
    .unwrap();
}

#[tokio::test]
async fn a_claim_in_use_should_stay_until_its_pod_is_gone() {
    let env = realistic().await;
    let client = env.client();
    namespace(&client, "pvc", json!({})).await;
    let volumes: Api<PersistentVolume> = Api::all(client.clone());
    let pv = create(
        &volumes,
        json!({"metadata": {"name": "pv1"}, "spec": {"capacity": {"storage": "1Gi"},
            "accessModes": ["ReadWriteOnce"], "hostPath": {"path": "/tmp"}}}),
    )
    .await
    .unwrap();
    assert_eq!(pv.finalizers(), ["kubernetes.io/pv-protection"]);
    let claims: Api<PersistentVolumeClaim> = Api::namespaced(client.clone(), "pvc");
    create(
        &claims,
        json!({"metadata": {"name": "data"}, "spec": {"accessModes": ["ReadWriteOnce"],
            "resources": {"requests": {"storage": "1Gi"}}}}),
    )
    .await
    .unwrap();
    let pods: Api<Pod> = Api::namespaced(client.clone(), "pvc");
    let mut p = pod("user", json!({}));
    p.spec.as_mut().unwrap().volumes = Some(vec![from(
        json!({"name": "d", "persistentVolumeClaim": {"claimName": "data"}}),
    )]);
    pods.create(&PostParams::default(), &p).await.unwrap();
    claims
        .delete("data", &DeleteParams::default())
        .await
        .unwrap();
    tokio::time::sleep(Duration::from_millis(300)).await;
    let claim = claims.get("data").await.unwrap();
    assert!(claim.metadata.deletion_timestamp.is_some());
    assert_eq!(claim.finalizers(), ["kubernetes.io/pvc-protection"]);
    pods.delete("user", &DeleteParams::default()).await.unwrap();
    assert!(eventually(|| async { claims.get_opt("data").await.unwrap().is_none() }).await);
    volumes
        .delete("pv1", &DeleteParams::default())
        .await
        .unwrap();
    assert!(eventually(|| async { volumes.get_opt("pv1").await.unwrap().is_none() }).await);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kcr_apiserver_should_switch_admission_plugins_off_by_flag() {
    use tokio::io::{AsyncBufReadExt, BufReader};
    use tokio::process::Command;

    let out = Command::new(env!("CARGO_BIN_EXE_kcr-apiserver"))
        .args([
            "--port",
            "0",
            "--disable-admission-plugins=LimitRanger,Bogus",
        ])
        .output()
        .await
        .expect("run kcr-apiserver");
    assert!(!out.status.success());
    assert_eq!(
        String::from_utf8_lossy(&out.stderr).trim(),
        "kcr-apiserver: admission-control plugin \"Bogus\" does not exist"
    );

    let dir = std::env::temp_dir().join(format!("kcr-admission-flag-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_kcr-apiserver"))
        .args([
            "--port",
            "0",
            "--disable-admission-plugins",
            "NamespaceLifecycle",
        ])
        .arg("--kubeconfig-out")
        .arg(dir.join("kubeconfig"))
        .stdout(std::process::Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .expect("start kcr-apiserver");
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let first = lines.next_line().await.unwrap().expect("a first line");
    let addr: std::net::SocketAddr = first
        .strip_prefix("listening on http://")
        .expect("the address")
        .parse()
        .unwrap();
    // Without NamespaceLifecycle a create in a namespace that does not exist is stored.
    let response = crate::common::raw(
        addr,
        "POST",
        "/api/v1/namespaces/nowhere/configmaps",
        &[("Content-Type", "application/json")],
        br#"{"metadata": {"name": "c"}}"#,
    )
    .await;
    assert_eq!(response.status, 201);
    let _ = child.kill().await;
    let _ = std::fs::remove_dir_all(&dir);
}

#[tokio::test]
async fn updates_should_be_admitted_by_policies_and_pod_security() {
    use kube::api::{Patch, PatchParams};

    let env = realistic().await;
    let client = env.client();
    namespace(&client, "upd", json!({})).await;
    create(
        &Api::<ValidatingAdmissionPolicy>::all(client.clone()),
        json!({"metadata": {"name": "immutable-owner"}, "spec": {
            "matchConstraints": {"resourceRules": [{"apiGroups": [""], "apiVersions": ["v1"],
                "operations": ["UPDATE"], "resources": ["configmaps"]}]},
            "validations": [{"expression": "object.data.owner == oldObject.data.owner",
                             "message": "owner is immutable", "reason": "Forbidden"}]
        }}),
    )
    .await
    .unwrap();
    create(
        &Api::<ValidatingAdmissionPolicyBinding>::all(client.clone()),
        json!({"metadata": {"name": "immutable-owner"}, "spec": {"policyName": "immutable-owner",
            "validationActions": ["Deny"]}}),
    )
    .await
    .unwrap();
    let config_maps: Api<ConfigMap> = Api::namespaced(client.clone(), "upd");
    // Creates are not matched (the rule names UPDATE only).
    create(
        &config_maps,
        json!({"metadata": {"name": "c"}, "data": {"owner": "a"}}),
    )
    .await
    .unwrap();
    let patch = |owner: &str| Patch::Merge(json!({"data": {"owner": owner, "x": "1"}}));
    let err = config_maps
        .patch("c", &PatchParams::default(), &patch("b"))
        .await
        .unwrap_err();
    assert_eq!(
        refused(err, 403),
        "configmaps \"c\" is forbidden: ValidatingAdmissionPolicy 'immutable-owner' with binding 'immutable-owner' denied request: owner is immutable"
    );
    config_maps
        .patch("c", &PatchParams::default(), &patch("a"))
        .await
        .unwrap();

    // Relabelling a namespace: existing Pods that break the new level are named.
    let pods: Api<Pod> = Api::namespaced(client.clone(), "upd");
    for name in ["a", "b", "c"] {
        pods.create(&PostParams::default(), &pod(name, json!({})))
            .await
            .unwrap();
    }
    pods.create(
        &PostParams::default(),
        &pod("d", json!({"securityContext": {"privileged": true}})),
    )
    .await
    .unwrap();
    let body = json!({"metadata": {"labels": {"pod-security.kubernetes.io/enforce": "baseline"}}});
    let response = crate::common::raw(
        env.addr(),
        "PATCH",
        "/api/v1/namespaces/upd",
        &[("Content-Type", "application/merge-patch+json")],
        body.to_string().as_bytes(),
    )
    .await;
    assert_eq!(response.status, 200);
    assert_eq!(
        warnings_of(&response),
        [
            "299 - \"existing pods in namespace \\\"upd\\\" violate the new PodSecurity enforce level \\\"baseline:latest\\\"\"",
            "299 - \"d: privileged\""
        ]
    );
    let body =
        json!({"metadata": {"labels": {"pod-security.kubernetes.io/enforce": "restricted"}}});
    let response = crate::common::raw(
        env.addr(),
        "PATCH",
        "/api/v1/namespaces/upd",
        &[("Content-Type", "application/merge-patch+json")],
        body.to_string().as_bytes(),
    )
    .await;
    assert_eq!(
        warnings_of(&response),
        [
            "299 - \"existing pods in namespace \\\"upd\\\" violate the new PodSecurity enforce level \\\"restricted:latest\\\"\"",
            "299 - \"a (and 2 other pods): allowPrivilegeEscalation != false, unrestricted capabilities, runAsNonRoot != true, seccompProfile\"",
            "299 - \"d: allowPrivilegeEscalation != false, unrestricted capabilities, privileged, runAsNonRoot != true, seccompProfile\""
        ]
    );
    let err = Api::<Namespace>::all(client.clone())
        .patch(
            "upd",
            &PatchParams::default(),
            &Patch::Merge(json!({"metadata": {"labels": {"pod-security.kubernetes.io/warn-version": "1.30"}}})),
        )
        .await
        .unwrap_err();
    assert_eq!(
        refused(err, 422),
        "Namespace \"upd\" is invalid: metadata.labels[pod-security.kubernetes.io/warn-version]: Invalid value: \"1.30\": must be \"latest\" or \"v1.x\""
    );
}

/// A webhook configuration and a binding get admissionregistration/v1's defaults, as
/// kube-apiserver stores them (the recorded cases cover only a policy's): each webhook's
/// failure and match policies, selectors, timeout, rule scope and service port, a mutating
/// webhook's reinvocation policy, and a binding's match resources.
#[tokio::test]
async fn webhook_configurations_and_bindings_should_be_stored_with_their_v1_defaults() {
    use k8s_openapi::api::admissionregistration::v1::{
        MutatingWebhookConfiguration, ValidatingWebhookConfiguration,
    };
    let env = realistic().await;
    let client = env.client();
    let webhook = json!({
        "name": "check.example.com",
        "admissionReviewVersions": ["v1"],
        "sideEffects": "None",
        "clientConfig": {"service": {"name": "hook", "namespace": "default"}},
        "rules": [{"operations": ["CREATE"], "apiGroups": [""], "apiVersions": ["v1"],
            "resources": ["configmaps"]}],
    });
    let validating = Api::<ValidatingWebhookConfiguration>::all(client.clone())
        .create(
            &PostParams::default(),
            &from(json!({"metadata": {"name": "v"}, "webhooks": [webhook.clone()]})),
        )
        .await
        .expect("create");
    let stored = serde_json::to_value(&validating).unwrap();
    let w = &stored["webhooks"][0];
    assert_eq!(w["failurePolicy"], "Fail");
    assert_eq!(w["matchPolicy"], "Equivalent");
    assert_eq!(w["namespaceSelector"], json!({}));
    assert_eq!(w["objectSelector"], json!({}));
    assert_eq!(w["timeoutSeconds"], 10);
    assert_eq!(w["rules"][0]["scope"], "*");
    assert_eq!(w["clientConfig"]["service"]["port"], 443);
    assert!(w.get("reinvocationPolicy").is_none());

    let mutating = Api::<MutatingWebhookConfiguration>::all(client.clone())
        .create(
            &PostParams::default(),
            &from(json!({"metadata": {"name": "m"}, "webhooks": [webhook]})),
        )
        .await
        .expect("create");
    let stored = serde_json::to_value(&mutating).unwrap();
    assert_eq!(stored["webhooks"][0]["reinvocationPolicy"], "Never");
    assert_eq!(stored["webhooks"][0]["timeoutSeconds"], 10);

    let binding = Api::<ValidatingAdmissionPolicyBinding>::all(client.clone())
        .create(
            &PostParams::default(),
            &from(
                json!({"metadata": {"name": "b"}, "spec": {"policyName": "p",
                "validationActions": ["Deny"],
                "matchResources": {"resourceRules": [{"operations": ["CREATE"],
                    "apiGroups": [""], "apiVersions": ["v1"], "resources": ["secrets"]}]}}}),
            ),
        )
        .await
        .expect("create");
    let stored = serde_json::to_value(&binding).unwrap();
    let m = &stored["spec"]["matchResources"];
    assert_eq!(m["matchPolicy"], "Equivalent");
    assert_eq!(m["namespaceSelector"], json!({}));
    assert_eq!(m["objectSelector"], json!({}));
    assert_eq!(m["resourceRules"][0]["scope"], "*");
}
