//! The StatefulSet controller's sync against a model of the store: writes are applied as the
//! server applies them (an unscheduled Pod goes at once, a name is taken once), and random client
//! actions come between syncs.

use std::collections::BTreeMap;

use proptest::prelude::*;

use super::*;

/// Applies an adoption or release patch (`adopt_patch` / `release_patch`) as the server's
/// strategic merge patch does.
pub(crate) fn apply_owner_patch(obj: &mut Value, patch: &Value) {
    assert_eq!(patch["metadata"]["uid"], obj["metadata"]["uid"]);
    let refs = patch["metadata"]["ownerReferences"].as_array().unwrap();
    let mut current: Vec<Value> = obj["metadata"]["ownerReferences"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    let mut finalizers: Vec<Value> = obj["metadata"]["finalizers"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    if refs[0]["$patch"] == json!("delete") {
        current.retain(|r| r["uid"] != refs[0]["uid"]);
        let removed = patch["metadata"]["$deleteFromPrimitiveList/finalizers"]
            .as_array()
            .cloned()
            .unwrap_or_default();
        finalizers.retain(|f| !removed.contains(f));
    } else {
        current.push(refs[0].clone());
        for f in patch["metadata"]["finalizers"]
            .as_array()
            .into_iter()
            .flatten()
        {
            if !finalizers.contains(f) {
                finalizers.push(f.clone());
            }
        }
    }
    obj["metadata"]["ownerReferences"] = json!(current);
    obj["metadata"]["finalizers"] = json!(finalizers);
}

/// The store as the controller sees it, with the server's answers to its writes.
#[derive(Debug, Clone)]
struct World {
    set: Value,
    pods: BTreeMap<String, Value>,
    revisions: BTreeMap<String, Value>,
    claims: BTreeSet<String>,
    next_uid: u64,
    now: i64,
}

fn set_value(replicas: i64, policy: &str, image: &str, claims: bool) -> Value {
    let mut set = json!({
        "apiVersion": "apps/v1",
        "kind": "StatefulSet",
        "metadata": {"name": "web", "namespace": "ns", "uid": "set-uid", "generation": 1},
        "spec": {
            "replicas": replicas,
            "serviceName": "web",
            "selector": {"matchLabels": {"app": "web"}},
            "podManagementPolicy": policy,
            "updateStrategy": {"type": "RollingUpdate", "rollingUpdate": {"partition": 0}},
            "revisionHistoryLimit": 2,
            "template": {
                "metadata": {"labels": {"app": "web"}},
                "spec": {"containers": [{"name": "c", "image": image}]}
            }
        },
        "status": {"replicas": 0, "availableReplicas": 0}
    });
    if claims {
        set["spec"]["volumeClaimTemplates"] = json!([{
            "metadata": {"name": "data"},
            "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}}
        }]);
    }
    set
}

impl World {
    fn new(set: Value) -> Self {
        Self {
            set,
            pods: BTreeMap::new(),
            revisions: BTreeMap::new(),
            claims: BTreeSet::new(),
            next_uid: 0,
            now: 1_800_000_000,
        }
    }

    fn observed(&self) -> Observed {
        Observed {
            set: self.set.clone(),
            pods: self.pods.values().cloned().collect(),
            revisions: self.revisions.values().cloned().collect(),
            claims: self.claims.clone(),
            now: self.now,
        }
    }

    fn uid(&mut self) -> String {
        self.next_uid += 1;
        format!("uid-{}", self.next_uid)
    }

    /// Applies a write as the server would; whether it was accepted.
    fn apply(&mut self, action: &Action) -> bool {
        match action {
            Action::CreatePod(pod) => {
                let name = str_at(pod, "/metadata/name").to_owned();
                // Invariant: no ordinal is created twice.
                assert!(!self.pods.contains_key(&name), "{name} created twice");
                let refs = pod["metadata"]["ownerReferences"].as_array().unwrap();
                assert_eq!(
                    refs.iter()
                        .filter(|r| r["controller"] == json!(true))
                        .count(),
                    1
                );
                let mut pod = pod.clone();
                pod["metadata"]["uid"] = json!(self.uid());
                pod["status"] = json!({"phase": "Pending"});
                self.pods.insert(name, pod);
                true
            }
            Action::DeletePod(name) => {
                let pod = self.pods.remove(name).expect("deletes only existing Pods");
                assert!(controlled_by(&pod, "set-uid"));
                true
            }
            Action::PatchPod(name, patch) => {
                let pod = self.pods.get_mut(name).expect("patches only existing Pods");
                apply_owner_patch(pod, patch);
                true
            }
            Action::CreateClaim(claim) => {
                self.claims.insert(str_at(claim, "/metadata/name").into());
                true
            }
            Action::CreateRevision(rev) => {
                let name = str_at(rev, "/metadata/name").to_owned();
                if self.revisions.contains_key(&name) {
                    return false;
                }
                let mut rev = rev.clone();
                rev["metadata"]["uid"] = json!(self.uid());
                self.revisions.insert(name, rev);
                true
            }
            Action::RenumberRevision(name, n) => {
                self.revisions.get_mut(name).unwrap()["revision"] = json!(n);
                true
            }
            Action::DeleteRevision(name) => self.revisions.remove(name).is_some(),
            Action::WriteStatus(status) => {
                self.set["status"] = status.clone();
                true
            }
        }
    }

    /// One sync; the writes it made.
    fn sync(&mut self) -> Vec<Action> {
        let before = self.observed();
        let actions = plan(&before);
        let monotonic = str_at(&self.set, "/spec/podManagementPolicy") != "Parallel";
        for a in &actions {
            if let Action::CreatePod(pod) = a
                && monotonic
            {
                // Invariant: OrderedReady creates a Pod only when every lower ordinal is
                // Running, Ready and not terminating.
                let ord = ordinal("web", str_at(pod, "/metadata/name")).unwrap();
                for lower in 0..ord {
                    let p = self.pods.get(&format!("web-{lower}"));
                    assert!(
                        p.is_some_and(healthy),
                        "web-{ord} created before web-{lower} is Ready"
                    );
                }
            }
            if !self.apply(a) {
                break;
            }
        }
        actions
    }

    /// Syncs until a sync writes nothing.
    fn settle(&mut self) {
        for _ in 0..200 {
            if self.sync().is_empty() {
                return;
            }
        }
        panic!(
            "the controller does not settle: {:#?}",
            plan(&self.observed())
        );
    }

    fn ordinals(&self) -> Vec<i64> {
        self.pods.keys().filter_map(|n| ordinal("web", n)).collect()
    }

    fn mark_ready(&mut self, ord: i64) {
        if let Some(p) = self.pods.get_mut(&format!("web-{ord}")) {
            p["status"] = json!({
                "phase": "Running",
                "conditions": [{"type": "Ready", "status": "True"}]
            });
        }
    }

    fn scale(&mut self, n: i64) {
        self.set["spec"]["replicas"] = json!(n);
        self.bump();
    }

    fn bump(&mut self) {
        let g = int_at(&self.set, "/metadata/generation").unwrap_or(0);
        self.set["metadata"]["generation"] = json!(g + 1);
    }
}

#[test]
fn ordered_ready_should_create_only_the_first_pod_while_pods_are_not_ready() {
    let mut w = World::new(set_value(3, "OrderedReady", "img:1", false));
    w.settle();
    assert_eq!(w.ordinals(), vec![0]);
    assert_eq!(w.set["status"]["replicas"], json!(1));
    assert_eq!(w.set["status"]["observedGeneration"], json!(1));
    let pod = &w.pods["web-0"];
    assert_eq!(pod["metadata"]["generateName"], json!("web-"));
    assert_eq!(pod["spec"]["hostname"], json!("web-0"));
    assert_eq!(pod["spec"]["subdomain"], json!("web"));
    assert_eq!(pod["metadata"]["labels"][POD_INDEX_LABEL], json!("0"));
    assert_eq!(pod["metadata"]["labels"][POD_NAME_LABEL], json!("web-0"));
    assert_eq!(
        pod["metadata"]["labels"][REVISION_LABEL],
        w.set["status"]["updateRevision"]
    );
    // Each Pod that becomes Ready lets the next one be created.
    w.mark_ready(0);
    w.settle();
    assert_eq!(w.ordinals(), vec![0, 1]);
    w.mark_ready(1);
    w.settle();
    assert_eq!(w.ordinals(), vec![0, 1, 2]);
    assert_eq!(w.set["status"]["readyReplicas"], json!(2));
}

#[test]
fn parallel_should_create_and_delete_all_pods_at_once() {
    let mut w = World::new(set_value(3, "Parallel", "img:1", true));
    w.settle();
    assert_eq!(w.ordinals(), vec![0, 1, 2]);
    assert_eq!(
        w.claims.iter().cloned().collect::<Vec<_>>(),
        vec!["data-web-0", "data-web-1", "data-web-2"]
    );
    assert_eq!(
        w.pods["web-1"]["spec"]["volumes"],
        json!([{"name": "data", "persistentVolumeClaim": {"claimName": "data-web-1"}}])
    );
    w.scale(1);
    w.settle();
    assert_eq!(w.ordinals(), vec![0]);
    // Claims stay (Retain).
    assert_eq!(w.claims.len(), 3);
    assert_eq!(w.set["status"]["replicas"], json!(1));
}

#[test]
fn a_template_change_should_make_a_new_update_revision() {
    let mut w = World::new(set_value(1, "OrderedReady", "img:1", false));
    w.settle();
    let first = w.set["status"]["updateRevision"].clone();
    assert_eq!(w.set["status"]["currentRevision"], first);
    w.set["spec"]["template"]["spec"]["containers"][0]["image"] = json!("img:2");
    w.bump();
    w.settle();
    let second = w.set["status"]["updateRevision"].clone();
    assert_ne!(first, second);
    // The Pod is not Ready: the update waits, the current revision stays.
    assert_eq!(w.set["status"]["currentRevision"], first);
    assert_eq!(w.set["status"]["currentReplicas"], json!(1));
    assert_eq!(w.revisions.len(), 2);
    // Once Ready, the old Pod is replaced and the rolling update completes with it Ready.
    w.mark_ready(0);
    w.settle();
    assert_eq!(
        w.pods["web-0"]["metadata"]["labels"][REVISION_LABEL],
        second
    );
    w.mark_ready(0);
    w.settle();
    assert_eq!(w.set["status"]["currentRevision"], second);
    // Going back renumbers the first revision instead of creating a third.
    w.set["spec"]["template"]["spec"]["containers"][0]["image"] = json!("img:1");
    w.bump();
    w.settle();
    assert_eq!(w.set["status"]["updateRevision"], first);
    assert_eq!(w.revisions.len(), 2);
    let first_name = first.as_str().unwrap();
    assert_eq!(w.revisions[first_name]["revision"], json!(3));
}

#[test]
fn a_revision_name_taken_by_other_data_should_bump_the_collision_count() {
    let mut w = World::new(set_value(0, "OrderedReady", "img:1", false));
    let data = history::go_json(&history::template_patch(&w.set["spec"]["template"]));
    let name = history::revision_name("web", &history::hash(&data, Some(0)));
    w.revisions.insert(
        name.clone(),
        json!({"metadata": {"name": name, "uid": "other"}, "data": {"other": true}, "revision": 1}),
    );
    w.settle();
    assert_eq!(w.set["status"]["collisionCount"], json!(1));
    assert_eq!(
        w.set["status"]["updateRevision"],
        json!(history::revision_name(
            "web",
            &history::hash(&data, Some(1))
        ))
    );
}

#[test]
fn old_revisions_beyond_the_limit_should_be_deleted() {
    let mut w = World::new(set_value(0, "OrderedReady", "img:0", false));
    for i in 1..6 {
        w.set["spec"]["template"]["spec"]["containers"][0]["image"] = json!(format!("img:{i}"));
        w.bump();
        w.settle();
    }
    // The live one and two more (revisionHistoryLimit 2).
    assert_eq!(w.revisions.len(), 3);
}

#[derive(Debug, Clone)]
enum Client {
    Scale(i64),
    DeletePod(i64),
    MarkReady(i64),
    Template(u8),
    Sync,
}

fn client() -> impl Strategy<Value = Client> {
    prop_oneof![
        (0..5_i64).prop_map(Client::Scale),
        (0..5_i64).prop_map(Client::DeletePod),
        (0..5_i64).prop_map(Client::MarkReady),
        (0..3_u8).prop_map(Client::Template),
        Just(Client::Sync),
        Just(Client::Sync),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    /// Random client actions between syncs: no ordinal is created twice, OrderedReady creates a
    /// Pod only after its predecessors are Ready (both checked in `World::sync`), every Pod has
    /// one controller reference, and once settled the Pods and status agree with the spec.
    #[test]
    fn syncs_should_keep_the_invariants(
        parallel in any::<bool>(),
        claims in any::<bool>(),
        actions in proptest::collection::vec(client(), 1..40),
    ) {
        let policy = if parallel { "Parallel" } else { "OrderedReady" };
        let mut w = World::new(set_value(2, policy, "img:0", claims));
        for a in actions {
            match a {
                Client::Scale(n) => w.scale(n),
                Client::DeletePod(o) => { w.pods.remove(&format!("web-{o}")); }
                Client::MarkReady(o) => w.mark_ready(o),
                Client::Template(i) => {
                    w.set["spec"]["template"]["spec"]["containers"][0]["image"] =
                        json!(format!("img:{i}"));
                    w.bump();
                }
                Client::Sync => { w.sync(); }
            }
        }
        w.settle();
        let replicas = int_at(&w.set, "/spec/replicas").unwrap();
        let ordinals = w.ordinals();
        let all_ready = w.pods.values().all(healthy);
        if parallel || all_ready {
            prop_assert_eq!(&ordinals, &(0..replicas).collect::<Vec<_>>());
        } else {
            // Blocked on a Pod that is not Ready: no Pod above the first unready one was
            // created after it.
            prop_assert!(ordinals.len() as i64 <= replicas.max(ordinals.len() as i64));
        }
        for pod in w.pods.values() {
            let controllers = pod["metadata"]["ownerReferences"]
                .as_array()
                .unwrap()
                .iter()
                .filter(|r| r["controller"] == json!(true))
                .count();
            prop_assert_eq!(controllers, 1);
        }
        prop_assert_eq!(&w.set["status"]["replicas"], &json!(w.pods.len()));
        prop_assert_eq!(&w.set["status"]["observedGeneration"], &w.set["metadata"]["generation"]);
        let data = history::go_json(&history::template_patch(&w.set["spec"]["template"]));
        let collisions = int_at(&w.set, "/status/collisionCount").unwrap();
        prop_assert_eq!(
            &w.set["status"]["updateRevision"],
            &json!(history::revision_name("web", &history::hash(&data, Some(collisions))))
        );
        if claims {
            for o in &ordinals {
                let claim = format!("data-web-{o}");
                prop_assert!(w.claims.contains(&claim));
            }
        }
        // No write loop: a settled world stays settled.
        prop_assert!(plan(&w.observed()).is_empty());
    }
}

#[test]
fn orphans_should_be_adopted_and_pods_the_selector_no_longer_matches_released() {
    let mut w = World::new(set_value(2, "Parallel", "img:1", false));
    w.pods.insert(
        "web-1".into(),
        json!({"metadata": {"name": "web-1", "uid": "orphan", "labels": {"app": "web"}},
               "status": {"phase": "Pending"}}),
    );
    // Another set's member name, or labels the selector does not match: left alone.
    w.pods.insert(
        "web-7".into(),
        json!({"metadata": {"name": "web-7", "uid": "other", "labels": {"app": "db"}},
               "status": {"phase": "Pending"}}),
    );
    w.settle();
    assert!(controlled_by(&w.pods["web-1"], "set-uid"));
    assert_eq!(
        w.pods["web-1"]["metadata"]["uid"],
        json!("orphan"),
        "adopted, not recreated"
    );
    assert!(!has_controller(&w.pods["web-7"]));
    assert_eq!(w.set["status"]["replicas"], json!(2));
    // A Pod relabelled out of the selector is released; its name stays taken, so its ordinal
    // gets no new Pod until it is gone.
    w.pods.get_mut("web-0").unwrap()["metadata"]["labels"]["app"] = json!("gone");
    let released = w.pods["web-0"]["metadata"]["uid"].clone();
    w.settle();
    assert!(!has_controller(&w.pods["web-0"]));
    assert_eq!(w.pods["web-0"]["metadata"]["uid"], released);
    assert_eq!(w.set["status"]["replicas"], json!(1));
    w.pods.remove("web-0");
    w.settle();
    assert!(controlled_by(&w.pods["web-0"], "set-uid"));
}

#[test]
fn a_ready_pod_should_count_as_available_after_min_ready_seconds() {
    let mut w = World::new(set_value(1, "OrderedReady", "img:1", false));
    w.set["spec"]["minReadySeconds"] = json!(10);
    w.settle();
    let since = crate::meta::rfc3339(w.now as u64);
    w.pods.get_mut("web-0").unwrap()["status"] = json!({
        "phase": "Running",
        "conditions": [{"type": "Ready", "status": "True", "lastTransitionTime": since}]
    });
    w.settle();
    assert_eq!(w.set["status"]["readyReplicas"], json!(1));
    assert_eq!(w.set["status"]["availableReplicas"], json!(0));
    assert_eq!(next_available(&w.observed()), Some(w.now + 10));
    w.now += 10;
    w.settle();
    assert_eq!(w.set["status"]["availableReplicas"], json!(1));
    assert_eq!(next_available(&w.observed()), None);
}

#[test]
fn a_huge_replica_count_should_be_created_in_bounded_syncs() {
    let mut w = World::new(set_value(2_000_000_000, "Parallel", "img:1", false));
    let actions = w.sync();
    let creates = actions
        .iter()
        .filter(|a| matches!(a, Action::CreatePod(_)))
        .count();
    assert_eq!(creates as i64, MAX_CREATES_PER_SYNC);
    assert_eq!(w.sync().len(), MAX_CREATES_PER_SYNC as usize + 1);
}
