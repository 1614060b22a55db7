//! The Job controller's sync against a model of the store: writes are applied as the server
//! applies them (a deleted Pod with finalizers stays terminating until they are gone), and
//! random client actions come between syncs.

use std::collections::BTreeMap;

use proptest::prelude::*;

use super::*;

#[derive(Debug, Clone)]
struct World {
    job: Value,
    pods: BTreeMap<String, Value>,
    next: u64,
    now: i64,
    /// The uids of the Pods that succeeded.
    succeeded: BTreeSet<String>,
}

const T0: i64 = 1_800_000_000;

fn job_value(parallelism: i64, completions: Option<i64>, suspend: bool) -> Value {
    let mut job = json!({
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": "j", "namespace": "ns", "uid": "job-uid", "generation": 1},
        "spec": {
            "parallelism": parallelism,
            "backoffLimit": 6,
            "selector": {"matchLabels": {"batch.kubernetes.io/job-name": "j"}},
            "suspend": suspend,
            "completionMode": "NonIndexed",
            "podReplacementPolicy": "TerminatingOrFailed",
            "template": {
                "metadata": {"labels": {"batch.kubernetes.io/job-name": "j"}},
                "spec": {"restartPolicy": "Never", "containers": [{"name": "c", "image": "i"}]}
            }
        },
        "status": {}
    });
    if let Some(c) = completions {
        job["spec"]["completions"] = json!(c);
    }
    job
}

impl World {
    fn new(job: Value) -> Self {
        Self {
            job,
            pods: BTreeMap::new(),
            next: 0,
            now: T0,
            succeeded: BTreeSet::new(),
        }
    }

    fn apply(&mut self, action: &Action) -> bool {
        match action {
            Action::CreatePod(pod) => {
                self.next += 1;
                let name = format!("{}{:05}", str_at(pod, "/metadata/generateName"), self.next);
                let mut pod = pod.clone();
                let refs = pod["metadata"]["ownerReferences"].as_array().unwrap();
                assert_eq!(refs.len(), 1);
                assert!(tracked(&pod));
                pod["metadata"]["name"] = json!(name);
                pod["metadata"]["uid"] = json!(format!("pod-{}", self.next));
                pod["metadata"]["resourceVersion"] = json!("1");
                pod["metadata"]["creationTimestamp"] = json!(rfc3339(self.now));
                pod["status"] = json!({"phase": "Pending"});
                self.pods.insert(name, pod);
                true
            }
            Action::DeletePod(name) => {
                let Some(pod) = self.pods.get_mut(name) else {
                    return true;
                };
                assert!(controlled_by(pod, "job-uid"));
                if finalizers(pod).is_empty() {
                    self.pods.remove(name);
                } else {
                    pod["metadata"]["deletionTimestamp"] = json!(rfc3339(self.now));
                }
                true
            }
            Action::RemoveFinalizer(name, _, kept) => {
                let Some(pod) = self.pods.get_mut(name) else {
                    return true;
                };
                pod["metadata"]["finalizers"] = json!(kept);
                if kept.is_empty() && terminating(pod) {
                    self.pods.remove(name);
                }
                true
            }
            Action::WriteStatus(status) => {
                self.job["status"] = status.clone();
                true
            }
            Action::PatchPod(name, patch) => {
                let pod = self.pods.get_mut(name).expect("patches only existing Pods");
                crate::controllers::stateful_set::tests::apply_owner_patch(pod, patch);
                true
            }
        }
    }

    fn sync(&mut self) -> Vec<Action> {
        let pods: Vec<Value> = self.pods.values().cloned().collect();
        let actions = plan(&self.job, &pods, self.now);
        for a in &actions {
            if !self.apply(a) {
                break;
            }
        }
        // Invariants after every sync.
        let active = self
            .pods
            .values()
            .filter(|p| active(p) && controlled_by(p, "job-uid"))
            .count() as i64;
        let suspended = self.job["spec"]["suspend"] == json!(true);
        if suspended || finished(&self.job) {
            assert_eq!(active, 0, "a suspended or finished Job keeps no active Pod");
        }
        let parallelism = int_at(&self.job, "/spec/parallelism").unwrap();
        assert!(active <= parallelism.max(0) || !created_any(&actions));
        actions
    }

    fn settle(&mut self) {
        for _ in 0..100 {
            if self.sync().is_empty() {
                return;
            }
        }
        panic!("the Job controller does not settle");
    }

    fn active(&self) -> usize {
        self.pods.values().filter(|p| active(p)).count()
    }

    fn finish_pod(&mut self, i: usize, ok: bool) {
        let Some(name) = self
            .pods
            .iter()
            .filter(|(_, p)| active(p))
            .map(|(n, _)| n.clone())
            .nth(i)
        else {
            return;
        };
        let pod = self.pods.get_mut(&name).unwrap();
        pod["status"]["phase"] = json!(if ok { "Succeeded" } else { "Failed" });
        if ok {
            self.succeeded.insert(str_at(pod, "/metadata/uid").into());
        }
    }

    fn conditions(&self) -> Vec<(String, String, String)> {
        conditions(&self.job)
            .iter()
            .map(|c| {
                (
                    str_at(c, "/type").into(),
                    str_at(c, "/status").into(),
                    str_at(c, "/reason").into(),
                )
            })
            .collect()
    }
}

fn created_any(actions: &[Action]) -> bool {
    actions.iter().any(|a| matches!(a, Action::CreatePod(_)))
}

fn cond(t: &str, s: &str, r: &str) -> (String, String, String) {
    (t.into(), s.into(), r.into())
}

#[test]
fn a_suspended_job_should_get_the_suspended_condition_and_no_pods() {
    let mut w = World::new(job_value(1, Some(1), true));
    w.settle();
    assert!(w.pods.is_empty());
    assert_eq!(
        w.job["status"],
        json!({
            "conditions": [{
                "type": "Suspended", "status": "True",
                "lastProbeTime": rfc3339(T0), "lastTransitionTime": rfc3339(T0),
                "reason": "JobSuspended", "message": "Job suspended"
            }],
            "terminating": 0, "uncountedTerminatedPods": {}, "ready": 0
        })
    );
}

#[test]
fn a_running_job_should_create_parallelism_pods() {
    let mut w = World::new(job_value(3, Some(5), false));
    w.settle();
    assert_eq!(w.active(), 3);
    let pod = w.pods.values().next().unwrap();
    assert_eq!(pod["metadata"]["generateName"], json!("j-"));
    assert_eq!(pod["metadata"]["finalizers"], json!([TRACKING_FINALIZER]));
    assert_eq!(w.job["status"]["active"], json!(3));
    assert_eq!(w.job["status"]["startTime"], json!(rfc3339(T0)));
    // Two succeed: two more Pods, as completions still needs them.
    w.finish_pod(0, true);
    w.finish_pod(0, true);
    w.settle();
    assert_eq!(w.job["status"]["succeeded"], json!(2));
    assert_eq!(w.active(), 3);
    w.finish_pod(0, true);
    w.finish_pod(0, true);
    w.settle();
    // One more completion needed: only one active Pod is kept.
    assert_eq!(w.job["status"]["succeeded"], json!(4));
    assert_eq!(w.active(), 1);
    w.finish_pod(0, true);
    w.settle();
    assert_eq!(
        w.conditions(),
        vec![
            cond("SuccessCriteriaMet", "True", "CompletionsReached"),
            cond("Complete", "True", "CompletionsReached")
        ]
    );
    assert_eq!(w.job["status"]["completionTime"], json!(rfc3339(T0)));
}

#[test]
fn suspend_should_delete_the_pods_and_resume_should_recreate_them() {
    let mut w = World::new(job_value(2, None, false));
    w.settle();
    assert_eq!(w.active(), 2);
    w.job["spec"]["suspend"] = json!(true);
    w.now += 10;
    w.settle();
    assert!(w.pods.is_empty(), "deleted Pods lose their finalizer first");
    assert_eq!(
        w.conditions(),
        vec![cond("Suspended", "True", "JobSuspended")]
    );
    assert_eq!(w.job["status"].get("failed"), None);
    w.job["spec"]["suspend"] = json!(false);
    w.now += 10;
    w.settle();
    assert_eq!(w.active(), 2);
    assert_eq!(
        w.conditions(),
        vec![cond("Suspended", "False", "JobResumed")]
    );
    assert_eq!(w.job["status"]["startTime"], json!(rfc3339(T0 + 20)));
}

#[test]
fn active_deadline_seconds_should_fail_the_job() {
    let mut job = job_value(2, None, false);
    job["spec"]["activeDeadlineSeconds"] = json!(30);
    let mut w = World::new(job);
    w.settle();
    assert_eq!(w.active(), 2);
    assert_eq!(deadline(&w.job), Some(T0 + 30));
    w.now += 29;
    w.settle();
    assert_eq!(w.active(), 2);
    w.now += 1;
    w.settle();
    assert!(w.pods.is_empty());
    assert_eq!(
        w.conditions(),
        vec![
            cond("FailureTarget", "True", "DeadlineExceeded"),
            cond("Failed", "True", "DeadlineExceeded")
        ]
    );
    assert_eq!(
        conditions(&w.job)[1]["message"],
        json!("Job was active longer than specified deadline")
    );
    assert_eq!(deadline(&w.job), None);
}

#[test]
fn failures_beyond_the_backoff_limit_should_fail_the_job() {
    let mut job = job_value(1, None, false);
    job["spec"]["backoffLimit"] = json!(1);
    let mut w = World::new(job);
    w.settle();
    w.finish_pod(0, false);
    w.settle();
    assert_eq!(w.job["status"]["failed"], json!(1));
    assert_eq!(w.active(), 1);
    w.finish_pod(0, false);
    w.settle();
    assert_eq!(w.job["status"]["failed"], json!(2));
    assert!(
        w.conditions()
            .contains(&cond("Failed", "True", "BackoffLimitExceeded"))
    );
    assert_eq!(w.active(), 0);
}

#[test]
fn an_indexed_job_should_give_each_pod_its_index() {
    let mut job = job_value(2, Some(3), false);
    job["spec"]["completionMode"] = json!("Indexed");
    let mut w = World::new(job);
    w.settle();
    let mut indexes: Vec<i64> = w.pods.values().filter_map(pod_index).collect();
    indexes.sort_unstable();
    assert_eq!(indexes, vec![0, 1]);
    let pod = w.pods.values().find(|p| pod_index(p) == Some(1)).unwrap();
    assert_eq!(pod["metadata"]["generateName"], json!("j-1-"));
    assert_eq!(pod["spec"]["hostname"], json!("j-1"));
    assert_eq!(
        pod["spec"]["containers"][0]["env"][0]["name"],
        json!("JOB_COMPLETION_INDEX")
    );
}

#[test]
fn a_job_managed_by_another_controller_should_be_left_alone() {
    let mut job = job_value(2, None, false);
    job["spec"]["managedBy"] = json!("example.com/other");
    assert!(plan(&job, &[], T0).is_empty());
    job["spec"]["managedBy"] = json!(DEFAULT_MANAGER);
    assert!(!plan(&job, &[], T0).is_empty());
}

#[test]
fn times_should_parse_as_rfc3339() {
    assert_eq!(parse_time("1970-01-01T00:00:00Z"), Some(0));
    assert_eq!(parse_time(&rfc3339(T0)), Some(T0));
    assert_eq!(
        parse_time("2030-01-01T00:00:00.5Z"),
        parse_time("2030-01-01T00:00:00Z")
    );
    assert_eq!(
        parse_time("2030-01-01T01:00:00+01:00"),
        parse_time("2030-01-01T00:00:00Z")
    );
    assert_eq!(parse_time("nonsense"), None);
}

#[derive(Debug, Clone)]
enum Client {
    Suspend(bool),
    Parallelism(i64),
    DeletePod(usize),
    Finish(usize, bool),
    Advance(i64),
    Sync,
}

fn client() -> impl Strategy<Value = Client> {
    prop_oneof![
        any::<bool>().prop_map(Client::Suspend),
        (0..4_i64).prop_map(Client::Parallelism),
        (0..4_usize).prop_map(Client::DeletePod),
        ((0..4_usize), any::<bool>()).prop_map(|(i, ok)| Client::Finish(i, ok)),
        (0..20_i64).prop_map(Client::Advance),
        Just(Client::Sync),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    /// Random client actions between syncs: a suspended or finished Job keeps no active Pod
    /// (checked in `World::sync`), no Pod is counted twice, and once settled the Job has what
    /// its spec asks for.
    #[test]
    fn syncs_should_keep_the_invariants(
        completions in proptest::option::of(1..6_i64),
        deadline_s in proptest::option::of(10..60_i64),
        actions in proptest::collection::vec(client(), 1..40),
    ) {
        let mut job = job_value(2, completions, false);
        if let Some(d) = deadline_s {
            job["spec"]["activeDeadlineSeconds"] = json!(d);
        }
        let mut w = World::new(job);
        for a in actions {
            match a {
                Client::Suspend(s) => w.job["spec"]["suspend"] = json!(s),
                Client::Parallelism(p) => w.job["spec"]["parallelism"] = json!(p),
                Client::DeletePod(i) => {
                    if let Some(name) = w.pods.keys().nth(i).cloned() {
                        w.apply(&Action::DeletePod(name));
                    }
                }
                Client::Finish(i, ok) => w.finish_pod(i, ok),
                Client::Advance(s) => w.now += s,
                Client::Sync => { w.sync(); }
            }
        }
        w.settle();
        // Every success counted exactly once.
        let succeeded = int_at(&w.job, "/status/succeeded").unwrap_or(0);
        prop_assert_eq!(succeeded, w.succeeded.len() as i64);
        prop_assert!(w.job.pointer("/status/uncountedTerminatedPods/succeeded").is_none());
        prop_assert!(!w.pods.values().any(|p| !active(p) && tracked(p)));
        let suspended = w.job["spec"]["suspend"] == json!(true);
        let active = w.active() as i64;
        prop_assert_eq!(int_at(&w.job, "/status/active").unwrap_or(0), active);
        if !finished(&w.job) && !suspended {
            let parallelism = int_at(&w.job, "/spec/parallelism").unwrap();
            let want = match completions {
                Some(c) => parallelism.min(c - succeeded),
                None => parallelism,
            };
            prop_assert_eq!(active, want);
            if let (Some(d), Some(s)) = (deadline_s, parse_time(str_at(&w.job, "/status/startTime"))) {
                prop_assert!(w.now - s < d, "past its deadline but not failed");
            }
        }
        // No write loop.
        let pods: Vec<Value> = w.pods.values().cloned().collect();
        prop_assert!(plan(&w.job, &pods, w.now).is_empty());
    }
}

#[test]
fn orphans_should_be_adopted_with_the_tracking_finalizer() {
    let mut w = World::new(job_value(1, None, false));
    w.pods.insert(
        "stray".into(),
        json!({"metadata": {"name": "stray", "uid": "stray-uid",
                            "labels": {"batch.kubernetes.io/job-name": "j"}},
               "status": {"phase": "Pending"}}),
    );
    w.settle();
    assert_eq!(w.pods.len(), 1, "the orphan is the one active Pod");
    assert!(controlled_by(&w.pods["stray"], "job-uid"));
    assert!(tracked(&w.pods["stray"]));
    // Relabelled out of the selector: released, losing the finalizer; a new Pod replaces it.
    w.pods.get_mut("stray").unwrap()["metadata"]["labels"] = json!({});
    w.settle();
    assert!(!controlled_by(&w.pods["stray"], "job-uid"));
    assert!(!tracked(&w.pods["stray"]));
    assert_eq!(w.active(), 2);
}

#[test]
fn the_finalizer_of_a_pod_whose_job_is_gone_or_finished_should_be_left_to_nobody() {
    let pod = |refs: Value| {
        json!({"metadata": {"namespace": "ns", "name": "p", "ownerReferences": refs,
                            "finalizers": [TRACKING_FINALIZER]}})
    };
    let job_ref = json!([{"apiVersion": "batch/v1", "kind": "Job", "name": "j", "uid": "job-uid",
                          "controller": true}]);
    let running = job_value(1, None, false);
    let mut done = running.clone();
    done["status"]["conditions"] = json!([{"type": "Complete", "status": "True"}]);
    let mut external = done.clone();
    external["spec"]["managedBy"] = json!("example.com/other");
    let gone = |_: &str, _: &str, _: &str| None;
    assert!(orphan_tracked(&pod(json!([])), gone));
    assert!(orphan_tracked(&pod(job_ref.clone()), gone));
    assert!(!orphan_tracked(
        &pod(job_ref.clone()),
        |_: &str, _: &str, _: &str| Some(running.clone())
    ));
    assert!(orphan_tracked(
        &pod(job_ref.clone()),
        |_: &str, _: &str, _: &str| Some(done.clone())
    ));
    assert!(!orphan_tracked(
        &pod(job_ref.clone()),
        |_: &str, _: &str, _: &str| Some(external.clone())
    ));
    let rs_ref = json!([{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "r", "uid": "u",
                         "controller": true}]);
    assert!(!orphan_tracked(&pod(rs_ref), gone));
}

#[test]
fn status_changes_should_be_told_by_events() {
    let running = job_value(1, None, false);
    let cond = |t: &str, st: &str, reason: &str, message: &str| json!({"type": t, "status": st, "reason": reason, "message": message});
    let suspended =
        json!({"conditions": [cond("Suspended", "True", "JobSuspended", "Job suspended")]});
    assert_eq!(
        status_events(&running, &suspended),
        vec![Event::normal("Suspended", "Job suspended")]
    );
    let mut was_suspended = running.clone();
    was_suspended["status"] = suspended.clone();
    assert!(status_events(&was_suspended, &suspended).is_empty());
    let resumed = json!({"conditions": [cond("Suspended", "False", "JobResumed", "Job resumed")]});
    assert_eq!(
        status_events(&was_suspended, &resumed),
        vec![Event::normal("Resumed", "Job resumed")]
    );
    let message = "Job was active longer than specified deadline";
    let failed = json!({"conditions": [
        cond("FailureTarget", "True", "DeadlineExceeded", message),
        cond("Failed", "True", "DeadlineExceeded", message)
    ]});
    assert_eq!(
        status_events(&running, &failed),
        vec![Event::warning("DeadlineExceeded", message)]
    );
}

#[test]
fn a_huge_parallelism_should_be_created_in_bounded_syncs() {
    let mut w = World::new(job_value(2_000_000_000, None, false));
    w.sync();
    assert_eq!(w.active() as i64, MAX_CREATES_PER_SYNC);
    w.sync();
    assert_eq!(w.active() as i64, 2 * MAX_CREATES_PER_SYNC);
}
