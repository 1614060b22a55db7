//! The built-in API as discovery shows it, compared line by line with what a real
//! kube-apiserver v1.36.2 serves (`data/api-resources-v1.36.2.txt`); and round trips
//! through `kube::Client` of kinds beyond the first few that kcr-testenv served.

use crate::common;

use std::collections::BTreeSet;
use std::fmt::Debug;

use k8s_openapi::api::batch::v1::Job;
use k8s_openapi::api::certificates::v1::CertificateSigningRequest;
use k8s_openapi::api::core::v1::Node;
use k8s_openapi::api::networking::v1::Ingress;
use k8s_openapi::api::policy::v1::PodDisruptionBudget;
use k8s_openapi::api::rbac::v1::{ClusterRole, Role, RoleBinding};
use k8s_openapi::kube_aggregator::pkg::apis::apiregistration::v1::APIService;
use kcr_testenv::TestEnv;
use kube::Resource;
use kube::api::{Api, DeleteParams, ListParams, PostParams};
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::{Value, json};

const REFERENCE: &str = include_str!("../../data/api-resources-v1.36.2.txt");

const AGGREGATED: &str = "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList";

async fn get_json(env: &TestEnv, path: &str, accept: &str) -> Value {
    let resp = common::raw(env.addr(), "GET", path, &[("Accept", accept)], b"").await;
    assert_eq!(resp.status, 200, "GET {path}");
    resp.json()
}

fn line(gv: &str, name: &str, kind: &str, namespaced: bool, verbs: &Value) -> String {
    let mut verbs: Vec<&str> = verbs
        .as_array()
        .map(|a| a.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    verbs.sort_unstable();
    format!(
        "{gv} {name} {kind} namespaced={namespaced} verbs={}",
        verbs.join(",")
    )
}

/// The reference's lines as the legacy discovery documents (`/api`, `/apis`, one
/// `APIResourceList` per group version) show them.
async fn legacy_lines(env: &TestEnv) -> BTreeSet<String> {
    let mut gvs = Vec::new();
    for v in get_json(env, "/api", "application/json").await["versions"]
        .as_array()
        .unwrap()
    {
        gvs.push(v.as_str().unwrap().to_owned());
    }
    for g in get_json(env, "/apis", "application/json").await["groups"]
        .as_array()
        .unwrap()
    {
        for v in g["versions"].as_array().unwrap() {
            gvs.push(v["groupVersion"].as_str().unwrap().to_owned());
        }
    }
    let mut out = BTreeSet::new();
    for gv in gvs {
        let path = if gv.contains('/') {
            format!("/apis/{gv}")
        } else {
            format!("/api/{gv}")
        };
        let list = get_json(env, &path, "application/json").await;
        assert_eq!(list["groupVersion"], json!(gv));
        for r in list["resources"].as_array().unwrap() {
            out.insert(line(
                &gv,
                r["name"].as_str().unwrap(),
                r["kind"].as_str().unwrap(),
                r["namespaced"].as_bool().unwrap(),
                &r["verbs"],
            ));
        }
    }
    out
}

/// The same lines from aggregated discovery (`apidiscovery.k8s.io/v2`).
async fn aggregated_lines(env: &TestEnv) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    for path in ["/api", "/apis"] {
        let doc = get_json(env, path, AGGREGATED).await;
        assert_eq!(doc["kind"], "APIGroupDiscoveryList");
        for group in doc["items"].as_array().unwrap() {
            let name = group["metadata"]["name"].as_str().unwrap_or_default();
            for version in group["versions"].as_array().unwrap() {
                let v = version["version"].as_str().unwrap();
                let gv = if name.is_empty() {
                    v.to_owned()
                } else {
                    format!("{name}/{v}")
                };
                for r in version["resources"].as_array().unwrap() {
                    let plural = r["resource"].as_str().unwrap();
                    let namespaced = r["scope"] == "Namespaced";
                    let kind = r["responseKind"]["kind"].as_str().unwrap();
                    out.insert(line(&gv, plural, kind, namespaced, &r["verbs"]));
                    for sub in r["subresources"].as_array().unwrap() {
                        out.insert(line(
                            &gv,
                            &format!("{plural}/{}", sub["subresource"].as_str().unwrap()),
                            sub["responseKind"]["kind"].as_str().unwrap(),
                            namespaced,
                            &sub["verbs"],
                        ));
                    }
                }
            }
        }
    }
    out
}

fn compare(what: &str, served: &BTreeSet<String>) -> Vec<String> {
    let reference: BTreeSet<String> = REFERENCE
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(str::to_owned)
        .collect();
    let matching = reference.intersection(served).count();
    println!(
        "{what}: {matching} of {} resources served as listed",
        reference.len()
    );
    let mut diffs: Vec<String> = reference
        .difference(served)
        .map(|l| format!("{what}: missing or different: {l}"))
        .collect();
    diffs.extend(
        served
            .difference(&reference)
            .map(|l| format!("{what}: not in the reference: {l}")),
    );
    diffs
}

#[tokio::test]
async fn discovery_should_serve_every_resource_of_the_reference_list_as_listed() {
    let env = TestEnv::start().await.unwrap();
    let mut diffs = compare("legacy discovery", &legacy_lines(&env).await);
    diffs.extend(compare(
        "aggregated discovery",
        &aggregated_lines(&env).await,
    ));
    assert!(diffs.is_empty(), "{}", diffs.join("\n"));
}

#[tokio::test]
async fn discovery_should_name_short_names_categories_and_foreign_subresource_kinds() {
    let env = TestEnv::start().await.unwrap();
    let apps = get_json(&env, "/apis/apps/v1", "application/json").await;
    let resources = apps["resources"].as_array().unwrap();
    let find = |name: &str| resources.iter().find(|r| r["name"] == name).unwrap();
    assert_eq!(find("deployments")["shortNames"], json!(["deploy"]));
    assert_eq!(find("deployments")["categories"], json!(["all"]));
    let scale = find("deployments/scale");
    assert_eq!(
        (&scale["group"], &scale["version"], &scale["kind"]),
        (&json!("autoscaling"), &json!("v1"), &json!("Scale"))
    );
    let core = get_json(&env, "/api/v1", "application/json").await;
    let eviction = core["resources"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["name"] == "pods/eviction")
        .unwrap();
    assert_eq!(eviction["group"], "policy");
    assert_eq!(eviction["kind"], "Eviction");
}

#[tokio::test]
async fn verbs_a_resource_does_not_serve_should_get_405() {
    let env = TestEnv::start().await.unwrap();
    // Namespaces have no deletecollection; reviews are create-only.
    for (method, path) in [
        ("DELETE", "/api/v1/namespaces"),
        ("GET", "/apis/authentication.k8s.io/v1/selfsubjectreviews"),
        ("DELETE", "/api/v1/componentstatuses/etcd-0"),
    ] {
        let resp = common::raw(env.addr(), method, path, &[], b"").await;
        assert_eq!(resp.status, 405, "{method} {path}");
        assert_eq!(resp.json()["reason"], "MethodNotAllowed");
    }
}

/// Creates `obj` through `api`, reads it back by get and list, deletes it and checks it is gone.
async fn round_trip<K>(api: Api<K>, obj: K)
where
    K: Resource + Clone + Debug + Serialize + DeserializeOwned,
{
    let name = obj.meta().name.clone().unwrap();
    let created = api.create(&PostParams::default(), &obj).await.unwrap();
    assert!(created.meta().uid.is_some());
    assert!(created.meta().resource_version.is_some());
    let got = api.get(&name).await.unwrap();
    assert_eq!(got.meta().uid, created.meta().uid);
    let listed = api.list(&ListParams::default()).await.unwrap();
    assert!(
        listed
            .items
            .iter()
            .any(|o| o.meta().name.as_deref() == Some(name.as_str())),
        "{name} listed"
    );
    api.delete(&name, &DeleteParams::default()).await.unwrap();
    let gone = api.get(&name).await.unwrap_err();
    assert!(
        matches!(&gone, kube::Error::Api(s) if s.code == 404),
        "{gone:?}"
    );
}

fn from_json<K: DeserializeOwned>(v: Value) -> K {
    serde_json::from_value(v).unwrap()
}

#[tokio::test]
async fn kinds_beyond_the_first_groups_should_round_trip_through_kube_client() {
    let env = TestEnv::start().await.unwrap();
    let c = env.client();
    let ns = "default";
    let pod_template = json!({
        "spec": {"restartPolicy": "Never", "containers": [{"name": "c", "image": "busybox"}]}
    });
    round_trip(
        Api::<Job>::namespaced(c.clone(), ns),
        from_json(json!({"metadata": {"name": "job"}, "spec": {"template": pod_template}})),
    )
    .await;
    round_trip(
        Api::<Role>::namespaced(c.clone(), ns),
        from_json(json!({"metadata": {"name": "reader"}, "rules": [
            {"apiGroups": [""], "resources": ["configmaps"], "verbs": ["get", "list"]}
        ]})),
    )
    .await;
    round_trip(
        Api::<RoleBinding>::namespaced(c.clone(), ns),
        from_json(json!({
            "metadata": {"name": "reader"},
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "reader"},
            "subjects": [{"kind": "ServiceAccount", "name": "default", "namespace": ns}]
        })),
    )
    .await;
    round_trip(
        Api::<ClusterRole>::all(c.clone()),
        from_json(json!({"metadata": {"name": "node-reader"}, "rules": [
            {"apiGroups": [""], "resources": ["nodes"], "verbs": ["get"]}
        ]})),
    )
    .await;
    round_trip(
        Api::<Node>::all(c.clone()),
        from_json(json!({"metadata": {"name": "node-1", "labels": {"kubernetes.io/os": "linux"}}})),
    )
    .await;
    round_trip(
        Api::<CertificateSigningRequest>::all(c.clone()),
        from_json(json!({"metadata": {"name": "csr-1"}, "spec": {
            "request": "LS0tLS1CRUdJTiBDRVJUSUZJQ0FURSBSRVFVRVNULS0tLS0K",
            "signerName": "example.com/signer",
            "usages": ["digital signature"]
        }})),
    )
    .await;
    round_trip(
        Api::<Ingress>::namespaced(c.clone(), ns),
        from_json(
            json!({"metadata": {"name": "web"}, "spec": {"defaultBackend": {
                "service": {"name": "web", "port": {"number": 80}}
            }}}),
        ),
    )
    .await;
    round_trip(
        Api::<PodDisruptionBudget>::namespaced(c.clone(), ns),
        from_json(json!({"metadata": {"name": "web"}, "spec": {
            "minAvailable": 1, "selector": {"matchLabels": {"app": "web"}}
        }})),
    )
    .await;
    round_trip(
        Api::<APIService>::all(c.clone()),
        from_json(
            json!({"metadata": {"name": "v1beta1.metrics.k8s.io"}, "spec": {
                "group": "metrics.k8s.io", "version": "v1beta1",
                "groupPriorityMinimum": 100, "versionPriority": 100,
                "service": {"name": "metrics-server", "namespace": "kube-system"}
            }}),
        ),
    )
    .await;
}

#[tokio::test]
async fn a_status_subresource_of_a_newly_served_kind_should_write_status_only() {
    let env = TestEnv::start().await.unwrap();
    let jobs: Api<Job> = Api::namespaced(env.client(), "default");
    let job: Job = from_json(
        json!({"metadata": {"name": "j"}, "spec": {"template": {"spec": {
            "restartPolicy": "Never", "containers": [{"name": "c", "image": "busybox"}]
        }}}}),
    );
    let created = jobs.create(&PostParams::default(), &job).await.unwrap();
    assert_eq!(created.metadata.generation, Some(1));
    let patch = json!({"spec": {"parallelism": 5}, "status": {"active": 1}});
    let patched = jobs
        .patch_status(
            "j",
            &kube::api::PatchParams::default(),
            &kube::api::Patch::Merge(&patch),
        )
        .await
        .unwrap();
    assert_eq!(patched.status.unwrap().active, Some(1));
    assert_eq!(
        patched.spec.unwrap().parallelism,
        created.spec.unwrap().parallelism
    );
}

#[tokio::test]
async fn newly_served_kinds_should_be_decoded_through_their_types() {
    let env = TestEnv::start().await.unwrap();
    let role = json!({
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "Role",
        "metadata": {"name": "typo"},
        "rules": [{"apiGroups": [""], "resources": ["pods"], "verbs": ["get"], "verb": ["list"]}]
    });
    let path = "/apis/rbac.authorization.k8s.io/v1/namespaces/default/roles";
    let ct = ("Content-Type", "application/json");
    let body = serde_json::to_vec(&role).unwrap();
    let strict = common::raw(
        env.addr(),
        "POST",
        &format!("{path}?fieldValidation=Strict"),
        &[ct],
        &body,
    )
    .await;
    assert_eq!(strict.status, 400, "{:?}", strict.json());
    let created = common::raw(env.addr(), "POST", path, &[ct], &body).await;
    assert_eq!(created.status, 201);
    assert_eq!(
        created.header("warning"),
        Some(r#"299 - "unknown field \"rules[0].verb\"""#)
    );
    assert_eq!(created.json()["rules"][0].get("verb"), None);
    let wrong = json!({
        "apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "j"},
        "spec": {"parallelism": "many", "template": {}}
    });
    let resp = common::raw(
        env.addr(),
        "POST",
        "/apis/batch/v1/namespaces/default/jobs",
        &[ct],
        &serde_json::to_vec(&wrong).unwrap(),
    )
    .await;
    assert_eq!(resp.status, 400, "{:?}", resp.json());
}

#[tokio::test]
async fn a_group_should_prefer_its_highest_priority_version() {
    let env = TestEnv::start().await.unwrap();
    let group = get_json(&env, "/apis/autoscaling", "application/json").await;
    assert_eq!(group["preferredVersion"]["version"], "v2");
    assert_eq!(
        group["versions"],
        json!([
            {"groupVersion": "autoscaling/v2", "version": "v2"},
            {"groupVersion": "autoscaling/v1", "version": "v1"}
        ])
    );
    let aggregated = get_json(&env, "/apis", AGGREGATED).await;
    let autoscaling = aggregated["items"]
        .as_array()
        .unwrap()
        .iter()
        .find(|g| g["metadata"]["name"] == "autoscaling")
        .unwrap();
    assert_eq!(autoscaling["versions"][0]["version"], "v2");
}
