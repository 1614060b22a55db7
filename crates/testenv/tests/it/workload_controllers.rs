//! The Deployment and ReplicaSet controllers (`TestEnvBuilder::workload_controllers`, in
//! `realistic`) beyond the recorded cases: rolling updates that stall without ready Pods,
//! `Recreate`, scaling, the order in which a ReplicaSet deletes Pods, release of Pods whose
//! labels stop matching, Pods recreated after a client deletes them, pause and resume, and a
//! property test of the controllers' invariants over random client actions.

use crate::common::eventually;
use std::collections::BTreeMap;
use std::time::Duration;

use k8s_openapi::api::apps::v1::{Deployment, ReplicaSet};
use k8s_openapi::api::core::v1::{Pod, ServiceAccount};
use kube::api::{Api, DeleteParams, ListParams, Patch, PatchParams, PostParams};
use kube::{Client, ResourceExt};
use proptest::prelude::*;
use serde_json::{Value, json};

async fn env() -> kcr_testenv::TestEnv {
    kcr_testenv::TestEnv::builder()
        .workload_controllers(true)
        .garbage_collector(true)
        .start()
        .await
        .expect("start")
}

/// A namespace with the `default` ServiceAccount the Pods need (the ServiceAccounts
/// controller is off here).
async fn namespace(client: &Client, name: &str) {
    let ns: k8s_openapi::api::core::v1::Namespace =
        serde_json::from_value(json!({"metadata": {"name": name}})).expect("namespace");
    Api::all(client.clone())
        .create(&PostParams::default(), &ns)
        .await
        .expect("create namespace");
    let sa: ServiceAccount =
        serde_json::from_value(json!({"metadata": {"name": "default"}})).expect("sa");
    Api::<ServiceAccount>::namespaced(client.clone(), name)
        .create(&PostParams::default(), &sa)
        .await
        .expect("create sa");
}

fn deployment(name: &str, replicas: i32, image: &str, strategy: Value) -> Deployment {
    serde_json::from_value(json!({
        "metadata": {"name": name},
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": {"app": name}},
            "strategy": strategy,
            "template": {
                "metadata": {"labels": {"app": name}},
                "spec": {"automountServiceAccountToken": false,
                    "containers": [{"name": "app", "image": image}]}
            }
        }
    }))
    .expect("deployment")
}

fn replica_set(name: &str, replicas: i32) -> ReplicaSet {
    serde_json::from_value(json!({
        "metadata": {"name": name},
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": {"app": name}},
            "template": {
                "metadata": {"labels": {"app": name}},
                "spec": {"automountServiceAccountToken": false,
                    "containers": [{"name": "app", "image": "registry.k8s.io/pause:3.10"}]}
            }
        }
    }))
    .expect("replica set")
}

fn controller_uid<K: ResourceExt>(obj: &K) -> Option<String> {
    obj.owner_references()
        .iter()
        .find(|r| r.controller == Some(true))
        .map(|r| r.uid.clone())
}

/// The ReplicaSets controlled by `d`, by name.
async fn replica_sets_of(
    client: &Client,
    ns: &str,
    d: &Deployment,
) -> BTreeMap<String, ReplicaSet> {
    Api::<ReplicaSet>::namespaced(client.clone(), ns)
        .list(&ListParams::default())
        .await
        .expect("list")
        .items
        .into_iter()
        .filter(|rs| controller_uid(rs) == d.uid())
        .map(|rs| (rs.name_any(), rs))
        .collect()
}

/// The Pods controlled by the ReplicaSet with `uid`.
async fn pods_of(client: &Client, ns: &str, uid: &str) -> Vec<Pod> {
    Api::<Pod>::namespaced(client.clone(), ns)
        .list(&ListParams::default())
        .await
        .expect("list")
        .items
        .into_iter()
        .filter(|p| controller_uid(p).as_deref() == Some(uid))
        .collect()
}

fn spec_replicas(rs: &ReplicaSet) -> i32 {
    rs.spec.replicas.unwrap_or(1)
}

#[tokio::test]
async fn a_deployment_should_get_a_replica_set_whose_pods_stay_pending() {
    let env = env().await;
    let client = env.client();
    namespace(&client, "wl-basic").await;
    let deployments: Api<Deployment> = Api::namespaced(client.clone(), "wl-basic");
    let d = deployments
        .create(
            &PostParams::default(),
            &deployment("web", 2, "registry.k8s.io/pause:3.10", json!({})),
        )
        .await
        .expect("create");
    assert!(
        eventually(|| async {
            let d = deployments.get("web").await.expect("get");
            let s = d.status.unwrap_or_default();
            s.observed_generation == Some(1)
                && s.replicas == Some(2)
                && s.updated_replicas == Some(2)
                && s.unavailable_replicas == Some(2)
                && s.conditions.as_ref().is_some_and(|c| {
                    c.len() == 2 && c[1].reason.as_deref() == Some("ReplicaSetUpdated")
                })
        })
        .await
    );
    let current = deployments.get("web").await.expect("get");
    let conditions = current
        .status
        .and_then(|s| s.conditions)
        .unwrap_or_default();
    assert_eq!(conditions[0].type_.as_deref(), Some("Available"));
    assert_eq!(conditions[0].status.as_deref(), Some("False"));
    assert_eq!(
        conditions[0].message.as_deref(),
        Some("Deployment does not have minimum availability.")
    );
    let rss = replica_sets_of(&client, "wl-basic", &d).await;
    assert_eq!(rss.len(), 1);
    let (name, rs) = rss.into_iter().next().expect("one");
    let hash = rs.labels()["pod-template-hash"].clone();
    assert_eq!(name, format!("web-{hash}"));
    assert_eq!(
        conditions[1].message.as_deref(),
        Some(format!("ReplicaSet \"{name}\" is progressing.").as_str())
    );
    let a = rs.annotations();
    assert_eq!(a["deployment.kubernetes.io/revision"], "1");
    assert_eq!(a["deployment.kubernetes.io/desired-replicas"], "2");
    assert_eq!(a["deployment.kubernetes.io/max-replicas"], "3");
    assert_eq!(
        current.metadata.annotations.unwrap_or_default()["deployment.kubernetes.io/revision"],
        "1"
    );
    let owner = &rs.owner_references()[0];
    assert_eq!(
        (owner.kind.as_str(), owner.name.as_str()),
        ("Deployment", "web")
    );
    assert_eq!(owner.block_owner_deletion, Some(true));
    let pods = pods_of(&client, "wl-basic", &rs.uid().unwrap_or_default()).await;
    assert_eq!(pods.len(), 2);
    for p in &pods {
        assert_eq!(
            p.metadata.generate_name.as_deref(),
            Some(format!("{name}-").as_str())
        );
        assert_eq!(p.labels()["pod-template-hash"], hash);
        assert_eq!(
            p.status.as_ref().and_then(|s| s.phase.as_deref()),
            Some("Pending")
        );
        // Created through the API: admission gave the Pod its service account and tolerations.
        assert_eq!(
            p.spec
                .as_ref()
                .and_then(|s| s.service_account_name.as_deref()),
            Some("default")
        );
        let managers: Vec<_> = p
            .managed_fields()
            .iter()
            .filter_map(|m| m.manager.clone())
            .collect();
        assert_eq!(managers, ["kube-controller-manager"]);
    }
}

#[tokio::test]
async fn a_rolling_update_should_stall_when_no_pod_becomes_ready() {
    let env = env().await;
    let client = env.client();
    namespace(&client, "wl-rolling").await;
    let deployments: Api<Deployment> = Api::namespaced(client.clone(), "wl-rolling");
    let d = deployments
        .create(
            &PostParams::default(),
            &deployment("web", 4, "registry.k8s.io/pause:3.10", json!({})),
        )
        .await
        .expect("create");
    assert!(
        eventually(|| async {
            let rss = replica_sets_of(&client, "wl-rolling", &d).await;
            rss.len() == 1 && rss.values().all(|rs| spec_replicas(rs) == 4)
        })
        .await
    );
    let patch = json!({"spec": {"template": {"spec": {"containers": [
        {"name": "app", "image": "registry.k8s.io/pause:3.9"}]}}}});
    deployments
        .patch("web", &PatchParams::default(), &Patch::Strategic(&patch))
        .await
        .expect("patch");
    // maxSurge 1, maxUnavailable 1 of 4: the new ReplicaSet may grow while 5 Pods exist and 3
    // are available; none ever is, so the old one shrinks by its one unavailable Pod once and
    // the rollout stops at 3 old + 2 new.
    let settled = eventually(|| async {
        let rss = replica_sets_of(&client, "wl-rolling", &d).await;
        let by_revision: BTreeMap<String, i32> = rss
            .values()
            .map(|rs| {
                (
                    rs.annotations()["deployment.kubernetes.io/revision"].clone(),
                    spec_replicas(rs),
                )
            })
            .collect();
        let d = deployments.get("web").await.expect("get");
        let s = d.status.unwrap_or_default();
        by_revision == BTreeMap::from([("1".to_owned(), 3), ("2".to_owned(), 2)])
            && s.observed_generation == Some(2)
            && s.replicas == Some(5)
            && s.updated_replicas == Some(2)
            && s.unavailable_replicas == Some(5)
    })
    .await;
    assert!(
        settled,
        "{:?}",
        replica_sets_of(&client, "wl-rolling", &d).await.keys()
    );
    let d = deployments.get("web").await.expect("get");
    assert_eq!(
        d.annotations()["deployment.kubernetes.io/revision"],
        "2",
        "the Deployment carries its new revision"
    );
    let pods: Vec<Pod> = Api::<Pod>::namespaced(client.clone(), "wl-rolling")
        .list(&ListParams::default().labels("app=web"))
        .await
        .expect("list")
        .items;
    assert_eq!(pods.len(), 5);
}

#[tokio::test]
async fn recreate_should_replace_the_old_pods_before_creating_new_ones() {
    let env = env().await;
    let client = env.client();
    namespace(&client, "wl-recreate").await;
    let deployments: Api<Deployment> = Api::namespaced(client.clone(), "wl-recreate");
    let d = deployments
        .create(
            &PostParams::default(),
            &deployment(
                "web",
                2,
                "registry.k8s.io/pause:3.10",
                json!({"type": "Recreate"}),
            ),
        )
        .await
        .expect("create");
    assert!(
        eventually(|| async {
            let rss = replica_sets_of(&client, "wl-recreate", &d).await;
            let Some(rs) = rss.values().next() else {
                return false;
            };
            pods_of(&client, "wl-recreate", &rs.uid().unwrap_or_default())
                .await
                .len()
                == 2
        })
        .await
    );
    let patch = json!({"spec": {"template": {"metadata": {"labels": {"app": "web", "v": "2"}}}}});
    deployments
        .patch("web", &PatchParams::default(), &Patch::Merge(&patch))
        .await
        .expect("patch");
    assert!(
        eventually(|| async {
            let rss = replica_sets_of(&client, "wl-recreate", &d).await;
            let mut sizes = Vec::new();
            for rs in rss.values() {
                let pods = pods_of(&client, "wl-recreate", &rs.uid().unwrap_or_default()).await;
                sizes.push((
                    rs.annotations()["deployment.kubernetes.io/revision"].clone(),
                    spec_replicas(rs),
                    pods.len(),
                ));
            }
            sizes.sort();
            sizes == [("1".to_owned(), 0, 0), ("2".to_owned(), 2, 2)]
        })
        .await
    );
}

#[tokio::test]
async fn scaling_a_deployment_should_scale_its_replica_set_and_annotations() {
    let env = env().await;
    let client = env.client();
    namespace(&client, "wl-scale").await;
    let deployments: Api<Deployment> = Api::namespaced(client.clone(), "wl-scale");
    let d = deployments
        .create(
            &PostParams::default(),
            &deployment("web", 1, "registry.k8s.io/pause:3.10", json!({})),
        )
        .await
        .expect("create");
    assert!(
        eventually(|| async { replica_sets_of(&client, "wl-scale", &d).await.len() == 1 }).await
    );
    deployments
        .patch(
            "web",
            &PatchParams::default(),
            &Patch::Merge(&json!({"spec": {"replicas": 3}})),
        )
        .await
        .expect("scale");
    assert!(
        eventually(|| async {
            let rss = replica_sets_of(&client, "wl-scale", &d).await;
            let Some(rs) = rss.values().next() else {
                return false;
            };
            let a = rs.annotations();
            spec_replicas(rs) == 3
                && a.get("deployment.kubernetes.io/desired-replicas")
                    .map(String::as_str)
                    == Some("3")
                && a.get("deployment.kubernetes.io/max-replicas")
                    .map(String::as_str)
                    == Some("4")
                && pods_of(&client, "wl-scale", &rs.uid().unwrap_or_default())
                    .await
                    .len()
                    == 3
        })
        .await
    );
}

#[tokio::test]
async fn a_replica_set_scaled_down_should_delete_the_cheapest_pods_first() {
    let env = env().await;
    let client = env.client();
    namespace(&client, "wl-down").await;
    let rss: Api<ReplicaSet> = Api::namespaced(client.clone(), "wl-down");
    let rs = rss
        .create(&PostParams::default(), &replica_set("r", 3))
        .await
        .expect("create");
    let uid = rs.uid().unwrap_or_default();
    assert!(eventually(|| async { pods_of(&client, "wl-down", &uid).await.len() == 3 }).await);
    let pods: Api<Pod> = Api::namespaced(client.clone(), "wl-down");
    let keep_names: Vec<String> = pods_of(&client, "wl-down", &uid)
        .await
        .iter()
        .map(|p| p.name_any())
        .collect();
    // The one with the lowest deletion cost goes first.
    let cheap = keep_names[1].clone();
    pods.patch(
        &cheap,
        &PatchParams::default(),
        &Patch::Merge(&json!({"metadata": {"annotations": {"controller.kubernetes.io/pod-deletion-cost": "-100"}}})),
    )
    .await
    .expect("annotate");
    rss.patch(
        "r",
        &PatchParams::default(),
        &Patch::Merge(&json!({"spec": {"replicas": 2}})),
    )
    .await
    .expect("scale");
    assert!(
        eventually(|| async {
            let left: Vec<String> = pods_of(&client, "wl-down", &uid)
                .await
                .iter()
                .map(|p| p.name_any())
                .collect();
            left.len() == 2 && !left.contains(&cheap)
        })
        .await
    );
    assert!(
        eventually(|| async {
            rss.get("r")
                .await
                .expect("get")
                .status
                .is_some_and(|s| s.replicas == 2)
        })
        .await
    );
}

#[tokio::test]
async fn a_pod_whose_labels_stop_matching_should_be_released_and_replaced() {
    let env = env().await;
    let client = env.client();
    namespace(&client, "wl-release").await;
    let rss: Api<ReplicaSet> = Api::namespaced(client.clone(), "wl-release");
    let rs = rss
        .create(&PostParams::default(), &replica_set("r", 1))
        .await
        .expect("create");
    let uid = rs.uid().unwrap_or_default();
    assert!(eventually(|| async { pods_of(&client, "wl-release", &uid).await.len() == 1 }).await);
    let pods: Api<Pod> = Api::namespaced(client.clone(), "wl-release");
    let first = pods_of(&client, "wl-release", &uid).await[0].name_any();
    pods.patch(
        &first,
        &PatchParams::default(),
        &Patch::Merge(&json!({"metadata": {"labels": {"app": "elsewhere"}}})),
    )
    .await
    .expect("relabel");
    assert!(
        eventually(|| async {
            let released = pods.get(&first).await.expect("get");
            let owned = pods_of(&client, "wl-release", &uid).await;
            released.owner_references().is_empty()
                && owned.len() == 1
                && owned[0].name_any() != first
        })
        .await
    );
}

#[tokio::test]
async fn a_pod_deleted_by_a_client_should_be_recreated_and_an_orphan_adopted() {
    let env = env().await;
    let client = env.client();
    namespace(&client, "wl-recreated").await;
    let pods: Api<Pod> = Api::namespaced(client.clone(), "wl-recreated");
    let rss: Api<ReplicaSet> = Api::namespaced(client.clone(), "wl-recreated");
    let rs = rss
        .create(&PostParams::default(), &replica_set("r", 2))
        .await
        .expect("create");
    let uid = rs.uid().unwrap_or_default();
    assert!(eventually(|| async { pods_of(&client, "wl-recreated", &uid).await.len() == 2 }).await);
    let gone = pods_of(&client, "wl-recreated", &uid).await[0].name_any();
    pods.delete(&gone, &DeleteParams::default())
        .await
        .expect("delete");
    assert!(
        eventually(|| async {
            let now: Vec<String> = pods_of(&client, "wl-recreated", &uid)
                .await
                .iter()
                .map(|p| p.name_any())
                .collect();
            now.len() == 2 && !now.contains(&gone)
        })
        .await
    );
    // Scaled up by one while a matching orphan exists: the orphan is adopted, no Pod created.
    let orphan: Pod = serde_json::from_value(json!({
        "metadata": {"name": "stray", "labels": {"app": "r"}},
        "spec": {"automountServiceAccountToken": false,
            "containers": [{"name": "app", "image": "registry.k8s.io/pause:3.10"}]}
    }))
    .expect("pod");
    rss.patch(
        "r",
        &PatchParams::default(),
        &Patch::Merge(&json!({"spec": {"replicas": 3}})),
    )
    .await
    .expect("scale");
    let _ = pods.create(&PostParams::default(), &orphan).await;
    assert!(
        eventually(|| async {
            pods_of(&client, "wl-recreated", &uid).await.len() == 3
                && rss
                    .get("r")
                    .await
                    .expect("get")
                    .status
                    .is_some_and(|s| s.replicas == 3)
        })
        .await
    );
    tokio::time::sleep(Duration::from_millis(200)).await;
    assert_eq!(pods_of(&client, "wl-recreated", &uid).await.len(), 3);
}

#[tokio::test]
async fn pausing_and_resuming_should_set_the_progressing_condition() {
    let env = env().await;
    let client = env.client();
    namespace(&client, "wl-pause").await;
    let deployments: Api<Deployment> = Api::namespaced(client.clone(), "wl-pause");
    deployments
        .create(
            &PostParams::default(),
            &deployment("web", 0, "registry.k8s.io/pause:3.10", json!({})),
        )
        .await
        .expect("create");
    let progressing = |reason: &'static str, status: &'static str| {
        let deployments = deployments.clone();
        async move {
            let d = deployments.get("web").await.expect("get");
            d.status
                .and_then(|s| s.conditions)
                .unwrap_or_default()
                .iter()
                .any(|c| {
                    c.type_.as_deref() == Some("Progressing")
                        && c.reason.as_deref() == Some(reason)
                        && c.status.as_deref() == Some(status)
                })
        }
    };
    assert!(eventually(|| progressing("NewReplicaSetAvailable", "True")).await);
    for (paused, reason, message) in [
        (true, "DeploymentPaused", "Deployment is paused"),
        (false, "DeploymentResumed", "Deployment is resumed"),
    ] {
        deployments
            .patch(
                "web",
                &PatchParams::default(),
                &Patch::Merge(&json!({"spec": {"paused": paused}})),
            )
            .await
            .expect("pause");
        let seen = eventually(|| async {
            let d = deployments.get("web").await.expect("get");
            let s = d.status.unwrap_or_default();
            s.observed_generation == d.metadata.generation
                && s.conditions.unwrap_or_default().iter().any(|c| {
                    c.type_.as_deref() == Some("Progressing")
                        && c.reason.as_deref() == Some(reason)
                        && c.message.as_deref() == Some(message)
                })
        })
        .await;
        // Resumed, a Deployment at 0 replicas completes again right away.
        assert!(seen || (!paused && progressing("NewReplicaSetAvailable", "True").await));
    }
}

// The invariants over random client actions.

#[derive(Debug, Clone)]
enum Action {
    Scale(i32),
    DeletePod(usize),
    RelabelPod(usize),
    ChangeTemplate(u8),
}

fn action() -> impl Strategy<Value = Action> {
    prop_oneof![
        (0..4i32).prop_map(Action::Scale),
        (0..4usize).prop_map(Action::DeletePod),
        (0..4usize).prop_map(Action::RelabelPod),
        (0..3u8).prop_map(Action::ChangeTemplate),
    ]
}

/// What must hold once the controllers have settled; `Err` says what does not.
async fn invariants(client: &Client, ns: &str) -> Result<(), String> {
    let d = Api::<Deployment>::namespaced(client.clone(), ns)
        .get("web")
        .await
        .map_err(|e| e.to_string())?;
    let rss = Api::<ReplicaSet>::namespaced(client.clone(), ns)
        .list(&ListParams::default())
        .await
        .map_err(|e| e.to_string())?
        .items;
    let pods = Api::<Pod>::namespaced(client.clone(), ns)
        .list(&ListParams::default())
        .await
        .map_err(|e| e.to_string())?
        .items;
    for p in &pods {
        let controllers = p
            .owner_references()
            .iter()
            .filter(|r| r.controller == Some(true))
            .count();
        if controllers > 1 {
            return Err(format!("{} has {controllers} controllers", p.name_any()));
        }
    }
    for rs in &rss {
        let uid = rs.uid().unwrap_or_default();
        let owned = pods
            .iter()
            .filter(|p| controller_uid(*p).as_deref() == Some(uid.as_str()))
            .count() as i32;
        if owned != spec_replicas(rs) {
            return Err(format!(
                "{} wants {} Pods, has {owned}",
                rs.name_any(),
                spec_replicas(rs)
            ));
        }
        let status = rs.status.clone().unwrap_or_default();
        if status.replicas != owned || status.observed_generation != rs.metadata.generation {
            return Err(format!("{} status {status:?} is stale", rs.name_any()));
        }
    }
    let template = Some(d.spec.template.clone());
    let current: Vec<&ReplicaSet> = rss
        .iter()
        .filter(|rs| controller_uid(*rs) == d.uid())
        .filter(|rs| {
            let mut t = rs.spec.template.clone();
            if let Some(labels) = t
                .as_mut()
                .and_then(|t| t.metadata.as_mut())
                .and_then(|m| m.labels.as_mut())
            {
                labels.remove("pod-template-hash");
            }
            t == template
        })
        .collect();
    if current.len() != 1 {
        return Err(format!("{} ReplicaSets match the template", current.len()));
    }
    let s = d.status.clone().unwrap_or_default();
    if s.observed_generation != d.metadata.generation {
        return Err("the Deployment status is stale".into());
    }
    Ok(())
}

/// The resource versions of everything in `ns` the controllers write.
async fn snapshot(client: &Client, ns: &str) -> Vec<String> {
    let mut v: Vec<String> = Vec::new();
    for rs in Api::<ReplicaSet>::namespaced(client.clone(), ns)
        .list(&ListParams::default())
        .await
        .map(|l| l.items)
        .unwrap_or_default()
    {
        v.push(rs.resource_version().unwrap_or_default());
    }
    for p in Api::<Pod>::namespaced(client.clone(), ns)
        .list(&ListParams::default())
        .await
        .map(|l| l.items)
        .unwrap_or_default()
    {
        v.push(p.resource_version().unwrap_or_default());
    }
    if let Ok(d) = Api::<Deployment>::namespaced(client.clone(), ns)
        .get("web")
        .await
    {
        v.push(d.resource_version().unwrap_or_default());
    }
    v
}

/// Waits until nothing in `ns` changes for a while, then checks the invariants.
async fn settle_and_check(client: &Client, ns: &str) -> Result<(), String> {
    let mut last = snapshot(client, ns).await;
    let mut quiet = 0;
    for _ in 0..200 {
        tokio::time::sleep(Duration::from_millis(25)).await;
        let now = snapshot(client, ns).await;
        if now == last {
            quiet += 1;
            if quiet >= 4 {
                return invariants(client, ns).await;
            }
        } else {
            quiet = 0;
            last = now;
        }
    }
    Err("the controllers never settled".into())
}

/// The Pods a client took from their ReplicaSet (deleted or relabelled), per ReplicaSet uid.
type Losses = BTreeMap<String, i64>;

async fn apply(client: &Client, ns: &str, action: &Action, losses: &mut Losses) {
    let deployments: Api<Deployment> = Api::namespaced(client.clone(), ns);
    let pods: Api<Pod> = Api::namespaced(client.clone(), ns);
    let mut listed: Vec<Pod> = pods
        .list(&ListParams::default().labels("app=web"))
        .await
        .map(|l| l.items)
        .unwrap_or_default();
    listed.sort_by_key(|p| p.name_any());
    let pick = |i: usize| (!listed.is_empty()).then(|| listed[i % listed.len()].clone());
    let mut lose = |p: &Pod| {
        if let Some(uid) = controller_uid(p) {
            *losses.entry(uid).or_default() += 1;
        }
    };
    match action {
        Action::Scale(n) => {
            let _ = deployments
                .patch(
                    "web",
                    &PatchParams::default(),
                    &Patch::Merge(&json!({"spec": {"replicas": n}})),
                )
                .await;
        }
        Action::DeletePod(i) => {
            if let Some(p) = pick(*i) {
                lose(&p);
                let _ = pods.delete(&p.name_any(), &DeleteParams::default()).await;
            }
        }
        Action::RelabelPod(i) => {
            if let Some(p) = pick(*i) {
                lose(&p);
                let name = p.name_any();
                let _ = pods
                    .patch(
                        &name,
                        &PatchParams::default(),
                        &Patch::Merge(&json!({"metadata": {"labels": {"app": "moved"}}})),
                    )
                    .await;
            }
        }
        Action::ChangeTemplate(v) => {
            let patch =
                json!({"spec": {"template": {"metadata": {"annotations": {"v": v.to_string()}}}}});
            let _ = deployments
                .patch("web", &PatchParams::default(), &Patch::Merge(&patch))
                .await;
        }
    }
}

/// Everything the watches saw: Pod creations per controlling ReplicaSet uid, and each
/// ReplicaSet's `spec.replicas` increases (its first size included).
#[derive(Default)]
struct Seen {
    created: BTreeMap<String, i64>,
    replicas: BTreeMap<String, (i64, i64)>,
}

/// Watches the Pods and ReplicaSets of `ns` into `seen`.
async fn watch_into(client: &Client, ns: &str, seen: std::sync::Arc<std::sync::Mutex<Seen>>) {
    use futures::StreamExt;
    use kube::api::{WatchEvent, WatchParams};
    let pods: Api<Pod> = Api::namespaced(client.clone(), ns);
    let rss: Api<ReplicaSet> = Api::namespaced(client.clone(), ns);
    let params = WatchParams::default().timeout(290);
    let mut pod_events = pods.watch(&params, "0").await.expect("watch pods").boxed();
    let mut rs_events = rss.watch(&params, "0").await.expect("watch rss").boxed();
    let seen_pods = seen.clone();
    tokio::spawn(async move {
        while let Some(Ok(e)) = pod_events.next().await {
            if let WatchEvent::Added(p) = e
                && p.metadata.generate_name.is_some()
                && let Some(uid) = controller_uid(&p)
            {
                *seen_pods
                    .lock()
                    .expect("seen")
                    .created
                    .entry(uid)
                    .or_default() += 1;
            }
        }
    });
    tokio::spawn(async move {
        while let Some(Ok(e)) = rs_events.next().await {
            if let WatchEvent::Added(rs) | WatchEvent::Modified(rs) = e {
                let n = i64::from(spec_replicas(&rs));
                let mut seen = seen.lock().expect("seen");
                let entry = seen
                    .replicas
                    .entry(rs.uid().unwrap_or_default())
                    .or_insert((0, 0));
                if n > entry.1 {
                    entry.0 += n - entry.1;
                }
                entry.1 = n;
            }
        }
    });
}

/// No Pod created twice for one missing replica: a ReplicaSet created at most as many Pods as
/// its size grew by, plus the Pods clients took from it.
fn creations_bounded(seen: &Seen, losses: &Losses) -> Result<(), String> {
    for (uid, created) in &seen.created {
        let grown = seen.replicas.get(uid).map_or(0, |r| r.0);
        let lost = losses.get(uid).copied().unwrap_or(0);
        if *created > grown + lost {
            return Err(format!(
                "ReplicaSet {uid} created {created} Pods for {grown} replicas and {lost} lost"
            ));
        }
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 6, ..ProptestConfig::default() })]

    /// After every client action, once the controllers settle: at most one controller per Pod,
    /// every ReplicaSet controls exactly its `spec.replicas` Pods with a current status, no Pod
    /// was created twice for one missing replica, and the Deployment controls one ReplicaSet of
    /// its template.
    #[test]
    fn controllers_should_keep_their_invariants(actions in prop::collection::vec(action(), 1..6)) {
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .expect("runtime");
        let result: Result<(), String> = rt.block_on(async {
            let env = env().await;
            let client = env.client();
            namespace(&client, "wl-prop").await;
            let seen = std::sync::Arc::new(std::sync::Mutex::new(Seen::default()));
            watch_into(&client, "wl-prop", seen.clone()).await;
            let mut losses = Losses::new();
            Api::<Deployment>::namespaced(client.clone(), "wl-prop")
                .create(&PostParams::default(), &deployment("web", 2, "registry.k8s.io/pause:3.10", json!({})))
                .await
                .map_err(|e| e.to_string())?;
            settle_and_check(&client, "wl-prop").await?;
            creations_bounded(&seen.lock().expect("seen"), &losses)?;
            for a in &actions {
                apply(&client, "wl-prop", a, &mut losses).await;
                settle_and_check(&client, "wl-prop").await.map_err(|e| format!("after {a:?}: {e}"))?;
                creations_bounded(&seen.lock().expect("seen"), &losses)
                    .map_err(|e| format!("after {a:?}: {e}"))?;
            }
            Ok(())
        });
        prop_assert!(result.is_ok(), "{:?}", result);
    }
}

#[tokio::test]
async fn an_apply_through_scale_should_take_the_replicas_and_scale_the_replica_set() {
    let env = env().await;
    let client = env.client();
    namespace(&client, "wl-apply-scale").await;
    let deployments: Api<Deployment> = Api::namespaced(client.clone(), "wl-apply-scale");
    let d = deployments
        .create(
            &PostParams::default(),
            &deployment("web", 1, "registry.k8s.io/pause:3.10", json!({})),
        )
        .await
        .expect("create");
    let scale = json!({"apiVersion": "autoscaling/v1", "kind": "Scale",
        "metadata": {"name": "web"}, "spec": {"replicas": 2}});
    let conflict = deployments
        .patch_scale("web", &PatchParams::apply("hpa"), &Patch::Apply(&scale))
        .await
        .expect_err("the creator owns spec.replicas");
    assert!(matches!(conflict, kube::Error::Api(s) if s.code == 409));
    let scaled = deployments
        .patch_scale(
            "web",
            &PatchParams::apply("hpa").force(),
            &Patch::Apply(&scale),
        )
        .await
        .expect("forced apply");
    assert_eq!(scaled.spec.and_then(|s| s.replicas), Some(2));
    let d2 = deployments.get("web").await.expect("get");
    let entries = d2.managed_fields();
    let hpa = entries
        .iter()
        .find(|e| e.manager.as_deref() == Some("hpa"))
        .expect("hpa entry");
    assert_eq!(hpa.operation.as_deref(), Some("Apply"));
    assert_eq!(hpa.subresource.as_deref(), Some("scale"));
    assert_eq!(hpa.api_version.as_deref(), Some("apps/v1"));
    assert_eq!(
        hpa.fields_v1.as_ref().map(|f| f.0.clone()),
        Some(json!({"f:spec": {"f:replicas": {}}}))
    );
    let creator = entries
        .iter()
        .find(|e| e.operation.as_deref() == Some("Update") && e.subresource.is_none())
        .expect("creator entry");
    assert!(
        creator
            .fields_v1
            .as_ref()
            .and_then(|f| f.0.pointer("/f:spec/f:replicas"))
            .is_none()
    );
    assert!(
        eventually(|| async {
            replica_sets_of(&client, "wl-apply-scale", &d)
                .await
                .values()
                .any(|rs| spec_replicas(rs) == 2)
        })
        .await
    );
}

#[tokio::test]
async fn a_deployment_annotation_should_bump_its_generation_and_reach_its_replica_set() {
    let env = env().await;
    let client = env.client();
    namespace(&client, "wl-annotate").await;
    let deployments: Api<Deployment> = Api::namespaced(client.clone(), "wl-annotate");
    let d = deployments
        .create(
            &PostParams::default(),
            &deployment("web", 0, "registry.k8s.io/pause:3.10", json!({})),
        )
        .await
        .expect("create");
    assert!(
        eventually(|| async { replica_sets_of(&client, "wl-annotate", &d).await.len() == 1 }).await
    );
    let labelled = deployments
        .patch(
            "web",
            &PatchParams::default(),
            &Patch::Merge(&json!({"metadata": {"labels": {"x": "y"}}})),
        )
        .await
        .expect("label");
    assert_eq!(
        labelled.metadata.generation,
        Some(1),
        "labels are no new generation"
    );
    let annotated = deployments
        .patch(
            "web",
            &PatchParams::default(),
            &Patch::Merge(&json!({"metadata": {"annotations": {"team": "blue"}}})),
        )
        .await
        .expect("annotate");
    assert_eq!(annotated.metadata.generation, Some(2));
    assert!(
        eventually(|| async {
            replica_sets_of(&client, "wl-annotate", &d)
                .await
                .values()
                .any(|rs| rs.annotations().get("team").map(String::as_str) == Some("blue"))
                && deployments
                    .get("web")
                    .await
                    .expect("get")
                    .status
                    .and_then(|s| s.observed_generation)
                    == Some(2)
        })
        .await
    );
}

#[tokio::test]
async fn old_revisions_beyond_the_history_limit_should_go_and_a_reused_template_take_a_new_revision()
 {
    let env = env().await;
    let client = env.client();
    namespace(&client, "wl-history").await;
    let deployments: Api<Deployment> = Api::namespaced(client.clone(), "wl-history");
    let mut spec = deployment("web", 0, "registry.k8s.io/pause:3.10", json!({}));
    spec.spec.revision_history_limit = Some(1);
    let d = deployments
        .create(&PostParams::default(), &spec)
        .await
        .expect("create");
    let revisions = || async {
        let mut r: Vec<(String, Option<String>)> = replica_sets_of(&client, "wl-history", &d)
            .await
            .values()
            .map(|rs| {
                let a = rs.annotations();
                (
                    a["deployment.kubernetes.io/revision"].clone(),
                    a.get("deployment.kubernetes.io/revision-history").cloned(),
                )
            })
            .collect();
        r.sort();
        r
    };
    let set_image = |image: &'static str| {
        let deployments = deployments.clone();
        async move {
            let patch = json!({"spec": {"template": {"spec": {"containers": [
                {"name": "app", "image": image}]}}}});
            deployments
                .patch("web", &PatchParams::default(), &Patch::Strategic(&patch))
                .await
                .expect("patch");
        }
    };
    assert!(eventually(|| async { revisions().await == [("1".to_owned(), None)] }).await);
    set_image("registry.k8s.io/pause:3.9").await;
    assert!(
        eventually(|| async {
            revisions().await == [("1".to_owned(), None), ("2".to_owned(), None)]
        })
        .await
    );
    // Back to the first template: its ReplicaSet is the new one again, as revision 3, and
    // remembers revision 1; one old revision is kept.
    set_image("registry.k8s.io/pause:3.10").await;
    assert!(
        eventually(|| async {
            revisions().await
                == [
                    ("2".to_owned(), None),
                    ("3".to_owned(), Some("1".to_owned())),
                ]
        })
        .await,
        "{:?}",
        revisions().await
    );
    set_image("registry.k8s.io/pause:3.8").await;
    assert!(
        eventually(|| async {
            revisions().await
                == [
                    ("3".to_owned(), Some("1".to_owned())),
                    ("4".to_owned(), None),
                ]
        })
        .await,
        "{:?}",
        revisions().await
    );
}

#[tokio::test]
async fn pods_a_quota_refuses_should_show_as_replica_failures() {
    let env = kcr_testenv::TestEnv::builder()
        .workload_controllers(true)
        .quota_controller(true)
        .start()
        .await
        .expect("start");
    let client = env.client();
    namespace(&client, "wl-quota").await;
    let quota: k8s_openapi::api::core::v1::ResourceQuota = serde_json::from_value(
        json!({"metadata": {"name": "no-pods"}, "spec": {"hard": {"pods": "0"}}}),
    )
    .expect("quota");
    Api::namespaced(client.clone(), "wl-quota")
        .create(&PostParams::default(), &quota)
        .await
        .expect("create quota");
    let quotas: Api<k8s_openapi::api::core::v1::ResourceQuota> =
        Api::namespaced(client.clone(), "wl-quota");
    assert!(
        eventually(|| async {
            quotas
                .get("no-pods")
                .await
                .expect("get")
                .status
                .is_some_and(|s| s.hard.is_some())
        })
        .await
    );
    let deployments: Api<Deployment> = Api::namespaced(client.clone(), "wl-quota");
    deployments
        .create(
            &PostParams::default(),
            &deployment("web", 1, "registry.k8s.io/pause:3.10", json!({})),
        )
        .await
        .expect("create");
    assert!(
        eventually(|| async {
            let d = deployments.get("web").await.expect("get");
            d.status
                .and_then(|s| s.conditions)
                .unwrap_or_default()
                .iter()
                .any(|c| {
                    c.type_.as_deref() == Some("ReplicaFailure")
                        && c.reason.as_deref() == Some("FailedCreate")
                        && c.message
                            .as_deref()
                            .is_some_and(|m| m.contains("exceeded quota: no-pods"))
                })
        })
        .await,
        "{:?}",
        deployments.get("web").await.expect("get").status
    );
    let rs = Api::<ReplicaSet>::namespaced(client.clone(), "wl-quota")
        .list(&ListParams::default())
        .await
        .expect("list")
        .items;
    let conditions = rs[0]
        .status
        .clone()
        .and_then(|s| s.conditions)
        .unwrap_or_default();
    assert_eq!(conditions.len(), 1);
    assert_eq!(conditions[0].status.as_deref(), Some("True"));
    assert!(
        conditions[0]
            .message
            .as_deref()
            .is_some_and(|m| m.starts_with(&format!("pods \"{}-", rs[0].name_any())))
    );
}
