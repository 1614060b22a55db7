//! kube-controller-manager's StatefulSet and Job controllers (`TestEnvBuilder::
//! stateful_set_controller` / `job_controller`, in `realistic`) beyond the recorded cases, over
//! HTTP with `kube::Client`. Their Pods carry a node selector no node has, so they stay
//! `Pending` on a real cluster (`KCR_TEST_KUBECONFIG`) as on kcr-testenv, which has no scheduler.

use std::time::Duration;

use k8s_openapi::api::apps::v1::{ControllerRevision, StatefulSet};
use k8s_openapi::api::batch::v1::Job;
use k8s_openapi::api::core::v1::{PersistentVolumeClaim, Pod};
use kcr_testenv::{TestCluster, TestEnv};
use kube::api::{Api, ListParams, Patch, PatchParams, PostParams};
use kube::{Client, ResourceExt};
use serde_json::{Value, json};

/// A client and a namespace of its own: on the real cluster of `KCR_TEST_KUBECONFIG`, else on a
/// realistic kcr-testenv (the controllers on).
struct Cluster {
    client: Client,
    namespace: String,
    _env: Option<TestEnv>,
    _real: Option<TestCluster>,
}

async fn cluster(test: &str) -> Cluster {
    if TestCluster::real_cluster_requested() {
        let real = TestCluster::start(test).await.expect("cluster");
        return Cluster {
            client: real.client(),
            namespace: real.namespace().to_owned(),
            _env: None,
            _real: Some(real),
        };
    }
    let env = TestEnv::builder().realistic().start().await.expect("start");
    let client = env.client();
    let namespace = test.replace('_', "-");
    let ns: k8s_openapi::api::core::v1::Namespace =
        serde_json::from_value(json!({"metadata": {"name": namespace}})).unwrap();
    Api::all(client.clone())
        .create(&PostParams::default(), &ns)
        .await
        .expect("namespace");
    let accounts: Api<k8s_openapi::api::core::v1::ServiceAccount> =
        Api::namespaced(client.clone(), &namespace);
    assert!(
        eventually(Duration::from_secs(5), || async {
            accounts.get_opt("default").await.unwrap().is_some()
        })
        .await
    );
    Cluster {
        client,
        namespace,
        _env: Some(env),
        _real: None,
    }
}

/// Polls until `f` holds, for at most `limit` (longer on a real cluster).
async fn eventually<F, Fut>(limit: Duration, mut f: F) -> bool
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = bool>,
{
    let limit = TestCluster::bound(limit);
    let start = tokio::time::Instant::now();
    while start.elapsed() < limit {
        if f().await {
            return true;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    false
}

/// `(reason, message)` of the Events about `name` in the namespace, sorted.
async fn events_about(client: &Client, namespace: &str, name: &str) -> Vec<(String, String)> {
    let events: Api<k8s_openapi::api::core::v1::Event> = Api::namespaced(client.clone(), namespace);
    let mut out: Vec<(String, String)> = events
        .list(&ListParams::default())
        .await
        .unwrap()
        .items
        .into_iter()
        .filter(|e| e.involved_object.name.as_deref() == Some(name))
        .map(|e| (e.reason.unwrap_or_default(), e.message.unwrap_or_default()))
        .collect();
    out.sort();
    out
}

/// A Pod template that no node runs.
fn template(app: &str, restart: &str) -> Value {
    json!({
        "metadata": {"labels": {"app": app}},
        "spec": {
            "restartPolicy": restart,
            "automountServiceAccountToken": false,
            "nodeSelector": {"kcr.dev/no-such-node": "true"},
            "containers": [{"name": "app", "image": "registry.k8s.io/pause:3.10"}]
        }
    })
}

fn stateful_set(name: &str, replicas: i32, policy: &str) -> StatefulSet {
    serde_json::from_value(json!({
        "metadata": {"name": name},
        "spec": {
            "replicas": replicas,
            "serviceName": name,
            "podManagementPolicy": policy,
            "selector": {"matchLabels": {"app": name}},
            "template": template(name, "Always"),
            "volumeClaimTemplates": [{
                "metadata": {"name": "data"},
                "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}}
            }]
        }
    }))
    .unwrap()
}

async fn pod_names(pods: &Api<Pod>, selector: &str) -> Vec<String> {
    let mut names: Vec<String> = pods
        .list(&ListParams::default().labels(selector))
        .await
        .unwrap()
        .items
        .iter()
        .filter(|p| p.metadata.deletion_timestamp.is_none())
        .map(ResourceExt::name_any)
        .collect();
    names.sort();
    names
}

fn status(v: &impl serde::Serialize) -> Value {
    serde_json::to_value(v).unwrap()["status"].clone()
}

#[tokio::test]
async fn an_ordered_ready_stateful_set_should_create_only_its_first_pod_while_none_is_ready() {
    let c = cluster("sts-ordered-ready").await;
    let sets: Api<StatefulSet> = Api::namespaced(c.client.clone(), &c.namespace);
    let pods: Api<Pod> = Api::namespaced(c.client.clone(), &c.namespace);
    let created = sets
        .create(
            &PostParams::default(),
            &stateful_set("web", 3, "OrderedReady"),
        )
        .await
        .unwrap();
    assert!(
        eventually(Duration::from_secs(5), || async {
            let s = status(&sets.get("web").await.unwrap());
            s["observedGeneration"] == json!(1) && s["replicas"] == json!(1)
        })
        .await
    );
    // The controller has seen web-0 (status.replicas 1): it waits for it to be Ready.
    assert_eq!(pod_names(&pods, "app=web").await, vec!["web-0"]);
    let pod = pods.get("web-0").await.unwrap();
    let labels = pod.labels();
    let s = status(&sets.get("web").await.unwrap());
    assert_eq!(labels["statefulset.kubernetes.io/pod-name"], "web-0");
    assert_eq!(labels["apps.kubernetes.io/pod-index"], "0");
    assert_eq!(
        json!(labels["controller-revision-hash"]),
        s["updateRevision"]
    );
    assert_eq!(pod.metadata.generate_name.as_deref(), Some("web-"));
    let refs = pod.owner_references();
    assert_eq!(refs.len(), 1);
    assert_eq!(refs[0].uid, created.uid().unwrap());
    assert_eq!(refs[0].controller, Some(true));
    let spec = pod.spec.as_ref().unwrap();
    assert_eq!(spec.hostname.as_deref(), Some("web-0"));
    assert_eq!(spec.subdomain.as_deref(), Some("web"));
    let volume = &spec.volumes.as_ref().unwrap()[0];
    assert_eq!(volume.name, "data");
    assert_eq!(
        volume.persistent_volume_claim.as_ref().unwrap().claim_name,
        "data-web-0"
    );
    assert_eq!(pod.status.unwrap().phase.as_deref(), Some("Pending"));
    // Its claim, labelled with the selector; a Pod created by the controller went through
    // admission as a client's would (the field manager is kube-controller-manager).
    let claims: Api<PersistentVolumeClaim> = Api::namespaced(c.client.clone(), &c.namespace);
    let claim = claims.get("data-web-0").await.unwrap();
    assert_eq!(claim.labels()["app"], "web");
    assert!(
        pod.metadata
            .managed_fields
            .unwrap()
            .iter()
            .any(|m| m.manager.as_deref() == Some("kube-controller-manager"))
    );
    // One revision, named as the status says, owned by the set.
    let revisions: Api<ControllerRevision> = Api::namespaced(c.client.clone(), &c.namespace);
    let list = revisions.list(&ListParams::default()).await.unwrap().items;
    assert_eq!(list.len(), 1);
    assert_eq!(json!(list[0].name_any()), s["updateRevision"]);
    assert_eq!(s["currentRevision"], s["updateRevision"]);
    assert_eq!(list[0].revision, Some(1));
    // The Events of its creates.
    let expected = vec![
        (
            "SuccessfulCreate".to_owned(),
            "create Claim data-web-0 Pod web-0 in StatefulSet web success".to_owned(),
        ),
        (
            "SuccessfulCreate".to_owned(),
            "create Pod web-0 in StatefulSet web successful".to_owned(),
        ),
    ];
    assert!(
        eventually(Duration::from_secs(5), || async {
            events_about(&c.client, &c.namespace, "web").await == expected
        })
        .await
    );
}

#[tokio::test]
async fn a_parallel_stateful_set_should_scale_all_its_pods_at_once() {
    let c = cluster("sts-parallel").await;
    let sets: Api<StatefulSet> = Api::namespaced(c.client.clone(), &c.namespace);
    let pods: Api<Pod> = Api::namespaced(c.client.clone(), &c.namespace);
    sets.create(&PostParams::default(), &stateful_set("db", 3, "Parallel"))
        .await
        .unwrap();
    assert!(
        eventually(Duration::from_secs(5), || async {
            pod_names(&pods, "app=db").await == ["db-0", "db-1", "db-2"]
        })
        .await
    );
    assert!(
        eventually(Duration::from_secs(5), || async {
            status(&sets.get("db").await.unwrap())["replicas"] == json!(3)
        })
        .await
    );
    // Down through the scale subresource: the higher ordinals go.
    sets.patch_scale(
        "db",
        &PatchParams::default(),
        &Patch::Merge(json!({"spec": {"replicas": 1}})),
    )
    .await
    .unwrap();
    assert!(
        eventually(Duration::from_secs(5), || async {
            pod_names(&pods, "app=db").await == ["db-0"]
                && status(&sets.get("db").await.unwrap())["replicas"] == json!(1)
        })
        .await
    );
    // Claims are retained (whenScaled: Retain).
    let claims: Api<PersistentVolumeClaim> = Api::namespaced(c.client.clone(), &c.namespace);
    assert!(claims.get_opt("data-db-2").await.unwrap().is_some());
    // Up again: the same names come back.
    sets.patch_scale(
        "db",
        &PatchParams::default(),
        &Patch::Merge(json!({"spec": {"replicas": 2}})),
    )
    .await
    .unwrap();
    assert!(
        eventually(Duration::from_secs(5), || async {
            pod_names(&pods, "app=db").await == ["db-0", "db-1"]
        })
        .await
    );
}

#[tokio::test]
async fn a_template_change_should_make_a_new_update_revision() {
    let c = cluster("sts-template-change").await;
    let sets: Api<StatefulSet> = Api::namespaced(c.client.clone(), &c.namespace);
    sets.create(
        &PostParams::default(),
        &stateful_set("web", 1, "OrderedReady"),
    )
    .await
    .unwrap();
    assert!(
        eventually(Duration::from_secs(5), || async {
            status(&sets.get("web").await.unwrap())["replicas"] == json!(1)
        })
        .await
    );
    let first = status(&sets.get("web").await.unwrap())["updateRevision"].clone();
    sets.patch(
        "web",
        &PatchParams::default(),
        &Patch::Merge(json!({"spec": {"template": {"metadata": {"annotations": {"rev": "2"}}}}})),
    )
    .await
    .unwrap();
    assert!(
        eventually(Duration::from_secs(5), || async {
            let s = status(&sets.get("web").await.unwrap());
            s["observedGeneration"] == json!(2) && s["updateRevision"] != first
        })
        .await
    );
    let s = status(&sets.get("web").await.unwrap());
    // web-0 is not Ready: the rolling update waits and the current revision stays.
    assert_eq!(s["currentRevision"], first);
    assert_eq!(s["currentReplicas"], json!(1));
    assert!(s.get("updatedReplicas").is_none());
    let revisions: Api<ControllerRevision> = Api::namespaced(c.client.clone(), &c.namespace);
    let mut numbers: Vec<(String, i64)> = revisions
        .list(&ListParams::default())
        .await
        .unwrap()
        .items
        .iter()
        .map(|r| (r.name_any(), r.revision.unwrap_or_default()))
        .collect();
    numbers.sort_by_key(|n| n.1);
    assert_eq!(numbers.len(), 2);
    assert_eq!(json!(numbers[0].0), first);
    assert_eq!(json!(numbers[1].0), s["updateRevision"]);
    assert_eq!(numbers[1].1, 2);
}

fn job(name: &str, parallelism: i32, completions: i32, suspend: bool) -> Job {
    serde_json::from_value(json!({
        "metadata": {"name": name},
        "spec": {
            "parallelism": parallelism,
            "completions": completions,
            "suspend": suspend,
            "template": template(name, "Never")
        }
    }))
    .unwrap()
}

#[tokio::test]
async fn a_job_should_create_parallelism_pods_that_it_tracks() {
    let c = cluster("job-parallelism").await;
    let jobs: Api<Job> = Api::namespaced(c.client.clone(), &c.namespace);
    let pods: Api<Pod> = Api::namespaced(c.client.clone(), &c.namespace);
    let created = jobs
        .create(&PostParams::default(), &job("work", 2, 5, false))
        .await
        .unwrap();
    let selector = "batch.kubernetes.io/job-name=work";
    assert!(
        eventually(Duration::from_secs(5), || async {
            pod_names(&pods, selector).await.len() == 2
                && status(&jobs.get("work").await.unwrap())["active"] == json!(2)
        })
        .await
    );
    let s = status(&jobs.get("work").await.unwrap());
    assert_eq!(s["ready"], json!(0));
    assert_eq!(s["terminating"], json!(0));
    assert_eq!(s["uncountedTerminatedPods"], json!({}));
    assert!(s["startTime"].is_string());
    for pod in pods
        .list(&ListParams::default().labels(selector))
        .await
        .unwrap()
    {
        assert_eq!(pod.metadata.generate_name.as_deref(), Some("work-"));
        assert_eq!(
            pod.finalizers(),
            &["batch.kubernetes.io/job-tracking".to_owned()]
        );
        let labels = pod.labels();
        assert_eq!(
            labels["batch.kubernetes.io/controller-uid"],
            created.uid().unwrap()
        );
        assert_eq!(labels["controller-uid"], created.uid().unwrap());
        assert_eq!(labels["job-name"], "work");
        let refs = pod.owner_references();
        assert_eq!(refs.len(), 1);
        assert_eq!(refs[0].kind, "Job");
        assert_eq!(refs[0].controller, Some(true));
        // Created through admission, as a client's Pod: DefaultTolerationSeconds added these.
        let tolerations: Vec<(String, Option<i64>)> = pod
            .spec
            .unwrap()
            .tolerations
            .unwrap_or_default()
            .into_iter()
            .map(|t| (t.key.unwrap_or_default(), t.toleration_seconds))
            .collect();
        assert!(tolerations.contains(&("node.kubernetes.io/not-ready".into(), Some(300))));
        assert!(tolerations.contains(&("node.kubernetes.io/unreachable".into(), Some(300))));
    }
}

#[tokio::test]
async fn a_refused_pod_should_not_keep_the_status_from_being_written() {
    let c = cluster("sts-pod-refused").await;
    // A quota of no Pods: once the quota controller has filled its status, admission refuses
    // every Pod of the namespace.
    let quotas: Api<k8s_openapi::api::core::v1::ResourceQuota> =
        Api::namespaced(c.client.clone(), &c.namespace);
    let quota = serde_json::from_value(json!({
        "metadata": {"name": "no-pods"},
        "spec": {"hard": {"pods": "0"}}
    }))
    .unwrap();
    quotas.create(&PostParams::default(), &quota).await.unwrap();
    assert!(
        eventually(Duration::from_secs(5), || async {
            status(&quotas.get("no-pods").await.unwrap())["hard"]["pods"] == json!("0")
        })
        .await
    );
    let sets: Api<StatefulSet> = Api::namespaced(c.client.clone(), &c.namespace);
    sets.create(&PostParams::default(), &stateful_set("web", 2, "Parallel"))
        .await
        .unwrap();
    assert!(
        eventually(Duration::from_secs(5), || async {
            let s = status(&sets.get("web").await.unwrap());
            s["observedGeneration"] == json!(1) && s["updateRevision"].is_string()
        })
        .await
    );
    let pods: Api<Pod> = Api::namespaced(c.client.clone(), &c.namespace);
    assert!(pod_names(&pods, "app=web").await.is_empty());
    assert_eq!(
        status(&sets.get("web").await.unwrap())["replicas"],
        json!(0)
    );
    // Told by a Warning Event, its repeats counted in it rather than written anew.
    assert!(
        eventually(Duration::from_secs(5), || async {
            events_about(&c.client, &c.namespace, "web")
                .await
                .iter()
                .any(|(reason, message)| {
                    reason == "FailedCreate"
                        && message.starts_with("create Pod web-0 in StatefulSet web failed error: ")
                        && message.contains("exceeded quota: no-pods")
                })
        })
        .await
    );
}

fn conditions(s: &Value) -> Vec<(String, String, String)> {
    s["conditions"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|c| {
            let f = |k: &str| c[k].as_str().unwrap_or_default().to_owned();
            (f("type"), f("status"), f("reason"))
        })
        .collect()
}

#[tokio::test]
async fn suspending_a_job_should_delete_its_pods_and_resuming_should_recreate_them() {
    let c = cluster("job-suspend").await;
    let jobs: Api<Job> = Api::namespaced(c.client.clone(), &c.namespace);
    let pods: Api<Pod> = Api::namespaced(c.client.clone(), &c.namespace);
    let selector = "batch.kubernetes.io/job-name=pause";
    jobs.create(&PostParams::default(), &job("pause", 2, 2, false))
        .await
        .unwrap();
    assert!(
        eventually(Duration::from_secs(5), || async {
            pod_names(&pods, selector).await.len() == 2
        })
        .await
    );
    let suspend = |s: bool| Patch::Merge(json!({"spec": {"suspend": s}}));
    jobs.patch("pause", &PatchParams::default(), &suspend(true))
        .await
        .unwrap();
    assert!(
        eventually(Duration::from_secs(5), || async {
            let s = status(&jobs.get("pause").await.unwrap());
            pods.list(&ListParams::default().labels(selector))
                .await
                .unwrap()
                .items
                .is_empty()
                && conditions(&s) == [("Suspended".into(), "True".into(), "JobSuspended".into())]
                && s.get("active").is_none()
        })
        .await
    );
    let s = status(&jobs.get("pause").await.unwrap());
    assert_eq!(s["conditions"][0]["message"], json!("Job suspended"));
    assert!(
        eventually(Duration::from_secs(5), || async {
            let events = events_about(&c.client, &c.namespace, "pause").await;
            let count = |reason: &str| events.iter().filter(|e| e.0 == reason).count();
            count("SuccessfulCreate") == 2
                && count("SuccessfulDelete") == 2
                && events.contains(&("Suspended".into(), "Job suspended".into()))
        })
        .await
    );
    // Deleted for the suspension, the Pods do not count as failed.
    assert!(s.get("failed").is_none());
    jobs.patch("pause", &PatchParams::default(), &suspend(false))
        .await
        .unwrap();
    assert!(
        eventually(Duration::from_secs(5), || async {
            let s = status(&jobs.get("pause").await.unwrap());
            pod_names(&pods, selector).await.len() == 2
                && conditions(&s) == [("Suspended".into(), "False".into(), "JobResumed".into())]
                && s["startTime"].is_string()
        })
        .await
    );
}

#[tokio::test(start_paused = true)]
async fn a_job_past_its_active_deadline_should_fail() {
    let c = cluster("job-deadline").await;
    if c._env.is_none() {
        // The deadline passes in real time there.
        tokio::time::resume();
    }
    let jobs: Api<Job> = Api::namespaced(c.client.clone(), &c.namespace);
    let pods: Api<Pod> = Api::namespaced(c.client.clone(), &c.namespace);
    let selector = "batch.kubernetes.io/job-name=late";
    let mut late = job("late", 1, 1, false);
    late.spec.as_mut().unwrap().active_deadline_seconds = Some(5);
    jobs.create(&PostParams::default(), &late).await.unwrap();
    assert!(
        eventually(Duration::from_secs(4), || async {
            pod_names(&pods, selector).await.len() == 1
        })
        .await
    );
    assert!(
        eventually(Duration::from_secs(30), || async {
            let s = status(&jobs.get("late").await.unwrap());
            conditions(&s)
                == [
                    (
                        "FailureTarget".into(),
                        "True".into(),
                        "DeadlineExceeded".into(),
                    ),
                    ("Failed".into(), "True".into(), "DeadlineExceeded".into()),
                ]
        })
        .await
    );
    let s = status(&jobs.get("late").await.unwrap());
    assert_eq!(
        s["conditions"][1]["message"],
        json!("Job was active longer than specified deadline")
    );
    assert!(s.get("active").is_none());
    assert!(
        eventually(Duration::from_secs(5), || async {
            pod_names(&pods, selector).await.is_empty()
        })
        .await
    );
}

#[tokio::test]
async fn an_orphan_pod_with_a_members_name_should_be_adopted() {
    let c = cluster("sts-adoption").await;
    let pods: Api<Pod> = Api::namespaced(c.client.clone(), &c.namespace);
    let mut orphan: Pod = serde_json::from_value(template("web", "Always")).unwrap();
    orphan.metadata.name = Some("web-0".into());
    let orphan = pods.create(&PostParams::default(), &orphan).await.unwrap();
    let sets: Api<StatefulSet> = Api::namespaced(c.client.clone(), &c.namespace);
    let set = sets
        .create(
            &PostParams::default(),
            &stateful_set("web", 1, "OrderedReady"),
        )
        .await
        .unwrap();
    assert!(
        eventually(Duration::from_secs(5), || async {
            pods.get("web-0")
                .await
                .unwrap()
                .owner_references()
                .iter()
                .any(|r| r.controller == Some(true) && Some(&r.uid) == set.uid().as_ref())
        })
        .await
    );
    // The same Pod, not a new one; the set counts it.
    assert_eq!(pods.get("web-0").await.unwrap().uid(), orphan.uid());
    assert!(
        eventually(Duration::from_secs(5), || async {
            status(&sets.get("web").await.unwrap())["replicas"] == json!(1)
        })
        .await
    );
}

#[tokio::test]
async fn the_pods_of_a_deleted_job_should_go() {
    let c = cluster("job-delete").await;
    let jobs: Api<Job> = Api::namespaced(c.client.clone(), &c.namespace);
    let pods: Api<Pod> = Api::namespaced(c.client.clone(), &c.namespace);
    let selector = "batch.kubernetes.io/job-name=gone";
    jobs.create(&PostParams::default(), &job("gone", 2, 2, false))
        .await
        .unwrap();
    assert!(
        eventually(Duration::from_secs(5), || async {
            pod_names(&pods, selector).await.len() == 2
        })
        .await
    );
    jobs.delete("gone", &kube::api::DeleteParams::background())
        .await
        .unwrap();
    // The garbage collector deletes them; the Job controller takes its finalizer off.
    assert!(
        eventually(Duration::from_secs(10), || async {
            pods.list(&ListParams::default().labels(selector))
                .await
                .unwrap()
                .items
                .is_empty()
        })
        .await
    );
}

#[tokio::test]
async fn an_ordered_ready_stateful_set_should_go_on_once_its_pod_is_ready() {
    let c = cluster("sts-ready").await;
    let sets: Api<StatefulSet> = Api::namespaced(c.client.clone(), &c.namespace);
    let pods: Api<Pod> = Api::namespaced(c.client.clone(), &c.namespace);
    sets.create(
        &PostParams::default(),
        &stateful_set("web", 2, "OrderedReady"),
    )
    .await
    .unwrap();
    assert!(
        eventually(Duration::from_secs(5), || async {
            pod_names(&pods, "app=web").await == ["web-0"]
        })
        .await
    );
    // What a kubelet would report: Running and Ready.
    let ready = json!({"status": {
        "phase": "Running",
        "conditions": [{"type": "Ready", "status": "True"}]
    }});
    pods.patch_status("web-0", &PatchParams::default(), &Patch::Merge(ready))
        .await
        .unwrap();
    assert!(
        eventually(Duration::from_secs(5), || async {
            pod_names(&pods, "app=web").await == ["web-0", "web-1"]
        })
        .await
    );
    assert!(
        eventually(Duration::from_secs(5), || async {
            let s = status(&sets.get("web").await.unwrap());
            s["replicas"] == json!(2)
                && s["readyReplicas"] == json!(1)
                && s["availableReplicas"] == json!(1)
        })
        .await
    );
}

#[tokio::test(start_paused = true)]
async fn a_ready_pod_should_become_available_after_min_ready_seconds() {
    let c = cluster("sts-min-ready").await;
    if c._env.is_none() {
        // The seconds pass in real time there.
        tokio::time::resume();
    }
    let sets: Api<StatefulSet> = Api::namespaced(c.client.clone(), &c.namespace);
    let pods: Api<Pod> = Api::namespaced(c.client.clone(), &c.namespace);
    let mut set = stateful_set("web", 1, "OrderedReady");
    set.spec.min_ready_seconds = Some(5);
    sets.create(&PostParams::default(), &set).await.unwrap();
    assert!(
        eventually(Duration::from_secs(4), || async {
            pod_names(&pods, "app=web").await == ["web-0"]
        })
        .await
    );
    let now = k8s_openapi::jiff::Timestamp::now()
        .strftime("%Y-%m-%dT%H:%M:%SZ")
        .to_string();
    let ready = json!({"status": {
        "phase": "Running",
        "conditions": [{"type": "Ready", "status": "True", "lastTransitionTime": now}]
    }});
    pods.patch_status("web-0", &PatchParams::default(), &Patch::Merge(ready))
        .await
        .unwrap();
    assert!(
        eventually(Duration::from_secs(4), || async {
            status(&sets.get("web").await.unwrap())["readyReplicas"] == json!(1)
        })
        .await
    );
    // Nothing changes after that: the controller wakes itself when the Pod becomes available.
    assert!(
        eventually(Duration::from_secs(30), || async {
            status(&sets.get("web").await.unwrap())["availableReplicas"] == json!(1)
        })
        .await
    );
}
