//! kube-controller-manager's StatefulSet controller (`pkg/controller/statefulset`, v1.36), on a
//! cluster without scheduler and kubelets: the Pods it creates stay `Pending` and never become
//! Ready (unless a client writes their status).
//!
//! # Sync protocol
//!
//! After every change of the store (and when a Ready Pod has been Ready for `minReadySeconds`,
//! on the controller's [`Clock`]), each StatefulSet is synced from a snapshot of the store (the
//! set, the Pods and ControllerRevisions it controls, the claims of its namespace): [`plan`]
//! computes the writes, which are then sent one after the other as requests of
//! kube-controller-manager (see [`super::requests`]); after a refused write only the status is
//! still written (kube-controller-manager requeues the set; here the next change resyncs it).
//! A sync is:
//!
//! 1. **Revisions** (`controller/history`): the update revision is the ControllerRevision whose
//!    `data` is the patch of the current template; an equal older revision is renumbered to the
//!    next revision number, otherwise a new one `<set>-<hash>` is created (a name taken by
//!    different data bumps `collisionCount`). The current revision is the one named by
//!    `status.currentRevision`, else the update revision.
//! 2. **Pods** (claimed before step 1: an orphan Pod `<set>-<ordinal>` that the selector
//!    matches is adopted, a Pod of the set that it no longer matches released) for the ordinals
//!    `[start, start+replicas)`; a missing
//!    one is created (with its claims from `volumeClaimTemplates` first) from the current
//!    revision's template below the partition and the update revision's otherwise; a Failed or
//!    Succeeded one is deleted (to be recreated). With `OrderedReady` the sync stops at the first
//!    Pod it creates, at a terminating Pod and at a Pod that is not Running and Ready, so with
//!    Pods that never become Ready only the lowest ordinal exists; `Parallel` creates them all.
//!    Pods of higher ordinals are deleted from the highest down (`OrderedReady`: one per sync,
//!    only once every lower Pod is Ready, except for the first unhealthy Pod). With
//!    `RollingUpdate`, Pods of another revision at or above the partition are deleted from the
//!    highest ordinal down while fewer than `maxUnavailable` Pods are unhealthy.
//! 3. **Status** (`UpdateStatus`, only when it differs): `observedGeneration`, `replicas` (Pods
//!    that exist), `readyReplicas`, `availableReplicas`, `currentReplicas`/`updatedReplicas`
//!    (Pods of each revision that are not terminating), the revision names and
//!    `collisionCount`; a rolling update whose Pods are all updated and Ready completes (the
//!    current revision becomes the update revision).
//! 4. **History**: revisions that neither the status nor a Pod uses are deleted, oldest first,
//!    beyond `revisionHistoryLimit`.
//!
//! Each Pod and claim create and Pod delete is recorded as an Event about the set
//! (`SuccessfulCreate`, `FailedCreate`, `SuccessfulDelete`, ... from `statefulset-controller`).
//!
//! # Invariants
//!
//! - No ordinal is created twice: a Pod is created only for an ordinal no Pod of the snapshot
//!   has, and its name is its ordinal's, so a second create is refused as `AlreadyExists`.
//! - Every object the controller creates has exactly one controller `ownerReference` (the set).
//! - Only Pods the set controls (controller reference with the set's uid) are deleted.
//! - `OrderedReady`: a Pod is created only when every lower ordinal exists, is Running and
//!   Ready and is not terminating.
//! - A sync writes nothing when the store already agrees with it (no write loops).

use std::collections::{BTreeMap, BTreeSet};
use std::sync::{Arc, Weak};

use http::Method;
use serde_json::{Map, Value, json};

use super::events::{Event, Recorder};
use super::history;
use super::job::Clock;
use super::requests::{self, collection};
use crate::server::Shared;
use crate::store::Store;

/// The label with a Pod's revision (`apps.ControllerRevisionHashLabelKey`).
pub(crate) const REVISION_LABEL: &str = "controller-revision-hash";
/// The label with a Pod's name (`apps.StatefulSetPodNameLabel`).
pub(crate) const POD_NAME_LABEL: &str = "statefulset.kubernetes.io/pod-name";
/// The label with a Pod's ordinal (`apps.PodIndexLabel`).
pub(crate) const POD_INDEX_LABEL: &str = "apps.kubernetes.io/pod-index";

/// At most this many Pods are created in one sync (the rest in the next ones), so a huge
/// `replicas` does not build a huge plan.
const MAX_CREATES_PER_SYNC: i64 = 500;

/// What a sync reads: the set and what it controls in its namespace.
#[derive(Debug, Clone, Default)]
pub(crate) struct Observed {
    /// The StatefulSet.
    pub(crate) set: Value,
    /// The Pods of its namespace.
    pub(crate) pods: Vec<Value>,
    /// The ControllerRevisions of its namespace.
    pub(crate) revisions: Vec<Value>,
    /// The names of the PersistentVolumeClaims of its namespace.
    pub(crate) claims: BTreeSet<String>,
    /// Now, in seconds since the Unix epoch (the controller's [`Clock`]).
    pub(crate) now: i64,
}

/// One write of a sync.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Action {
    /// Create this ControllerRevision.
    CreateRevision(Value),
    /// Give an existing revision the next revision number.
    RenumberRevision(String, i64),
    /// Create this claim.
    CreateClaim(Value),
    /// Create this Pod.
    CreatePod(Value),
    /// Delete the Pod of this name.
    DeletePod(String),
    /// Patch the Pod of this name with this strategic merge patch (adoption, release).
    PatchPod(String, Value),
    /// Write this status.
    WriteStatus(Value),
    /// Delete the revision of this name.
    DeleteRevision(String),
}

fn str_at<'a>(v: &'a Value, ptr: &str) -> &'a str {
    v.pointer(ptr).and_then(Value::as_str).unwrap_or_default()
}

fn int_at(v: &Value, ptr: &str) -> Option<i64> {
    v.pointer(ptr).and_then(Value::as_i64)
}

/// Whether `obj` has a controller reference to the object of `uid`.
pub(crate) fn controlled_by(obj: &Value, uid: &str) -> bool {
    obj.pointer("/metadata/ownerReferences")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .any(|r| {
            r.get("controller").and_then(Value::as_bool) == Some(true)
                && r.get("uid").and_then(Value::as_str) == Some(uid)
        })
}

/// Whether `obj` has a controller reference (to anything).
pub(crate) fn has_controller(obj: &Value) -> bool {
    obj.pointer("/metadata/ownerReferences")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .any(|r| r.get("controller").and_then(Value::as_bool) == Some(true))
}

/// The labels of `obj`.
pub(crate) fn labels(obj: &Value) -> Map<String, Value> {
    obj.pointer("/metadata/labels")
        .and_then(Value::as_object)
        .cloned()
        .unwrap_or_default()
}

/// The strategic merge patch that adopts a dependent (`ownerRefControllerPatch`): the
/// controller reference, the dependent's uid as precondition, and `finalizers` to add.
pub(crate) fn adopt_patch(controller: Value, uid: &str, finalizers: &[&str]) -> Value {
    let mut meta = json!({"ownerReferences": [controller], "uid": uid});
    if !finalizers.is_empty() {
        meta["finalizers"] = json!(finalizers);
    }
    json!({"metadata": meta})
}

/// The strategic merge patch that releases a dependent (`deleteOwnerRefStrategicMergePatch`):
/// the owner's reference deleted, the dependent's uid as precondition, `finalizers` removed.
pub(crate) fn release_patch(owner_uid: &str, uid: &str, finalizers: &[&str]) -> Value {
    let mut meta = json!({
        "ownerReferences": [{"$patch": "delete", "uid": owner_uid}],
        "uid": uid
    });
    if !finalizers.is_empty() {
        meta["$deleteFromPrimitiveList/finalizers"] = json!(finalizers);
    }
    json!({"metadata": meta})
}

/// `metav1.NewControllerRef`.
pub(crate) fn controller_ref(owner: &Value, api_version: &str, kind: &str) -> Value {
    json!({
        "apiVersion": api_version,
        "kind": kind,
        "name": str_at(owner, "/metadata/name"),
        "uid": str_at(owner, "/metadata/uid"),
        "controller": true,
        "blockOwnerDeletion": true
    })
}

pub(crate) fn terminating(pod: &Value) -> bool {
    pod.pointer("/metadata/deletionTimestamp").is_some()
}

fn phase(pod: &Value) -> &str {
    str_at(pod, "/status/phase")
}

/// `isRunningAndReady`: phase Running and the `Ready` condition True.
pub(crate) fn running_and_ready(pod: &Value) -> bool {
    phase(pod) == "Running" && ready_condition(pod)
}

/// The `Ready` condition is True.
pub(crate) fn ready_condition(pod: &Value) -> bool {
    pod.pointer("/status/conditions")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .any(|c| str_at(c, "/type") == "Ready" && str_at(c, "/status") == "True")
}

fn healthy(pod: &Value) -> bool {
    running_and_ready(pod) && !terminating(pod)
}

/// The ordinal of a Pod named `<set>-<n>`.
fn ordinal(set_name: &str, pod_name: &str) -> Option<i64> {
    let rest = pod_name.strip_prefix(set_name)?.strip_prefix('-')?;
    if rest.is_empty() || !rest.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    rest.parse().ok()
}

/// `maxUnavailable` of a rolling update (default 1, a percentage of `replicas` rounded down, at
/// least 1).
fn max_unavailable(set: &Value, replicas: i64) -> i64 {
    let n = match set.pointer("/spec/updateStrategy/rollingUpdate/maxUnavailable") {
        Some(Value::Number(n)) => n.as_i64().unwrap_or(1),
        Some(Value::String(s)) => match s.strip_suffix('%').and_then(|p| p.parse::<i64>().ok()) {
            Some(p) => p * replicas / 100,
            None => 1,
        },
        _ => 1,
    };
    n.max(1)
}

/// The template a revision restores.
fn revision_template(revision: &Value) -> Value {
    let mut t = revision
        .pointer("/data/spec/template")
        .cloned()
        .unwrap_or_else(|| json!({}));
    if let Some(m) = t.as_object_mut() {
        m.remove("$patch");
    }
    t
}

/// The claims of a Pod of `ordinal`: one per `volumeClaimTemplates` entry, named
/// `<template>-<set>-<ordinal>`, labelled with the template's labels and the selector's.
fn claims_for(set: &Value, ordinal: i64) -> Vec<Value> {
    let set_name = str_at(set, "/metadata/name");
    let selector = set
        .pointer("/spec/selector/matchLabels")
        .and_then(Value::as_object)
        .cloned()
        .unwrap_or_default();
    set.pointer("/spec/volumeClaimTemplates")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .map(|t| {
            let mut claim = t.clone();
            let Some(obj) = claim.as_object_mut() else {
                return claim;
            };
            obj.remove("status");
            obj.insert("apiVersion".into(), json!("v1"));
            obj.insert("kind".into(), json!("PersistentVolumeClaim"));
            let meta = crate::meta::metadata_mut(obj);
            let name = format!(
                "{}-{set_name}-{ordinal}",
                meta.get("name").and_then(Value::as_str).unwrap_or_default()
            );
            meta.insert("name".into(), json!(name));
            for k in ["namespace", "uid", "resourceVersion", "creationTimestamp"] {
                meta.remove(k);
            }
            let labels = meta
                .entry("labels")
                .or_insert_with(|| Value::Object(Map::new()));
            if let Some(l) = labels.as_object_mut() {
                l.extend(selector.clone());
            }
            if str_at(
                set,
                "/spec/persistentVolumeClaimRetentionPolicy/whenDeleted",
            ) == "Delete"
            {
                meta.insert(
                    "ownerReferences".into(),
                    json!([{
                        "apiVersion": "apps/v1",
                        "kind": "StatefulSet",
                        "name": set_name,
                        "uid": str_at(set, "/metadata/uid")
                    }]),
                );
            }
            claim
        })
        .collect()
}

/// `newStatefulSetPod` with `template` and the revision `revision`: the template's labels,
/// annotations and finalizers, `generateName` `<set>-`, the controller reference, the identity
/// (name, hostname, subdomain, name and index labels) and the claims' volumes.
fn new_pod(set: &Value, template: &Value, revision: &str, ordinal: i64) -> Value {
    let set_name = str_at(set, "/metadata/name");
    let name = format!("{set_name}-{ordinal}");
    let mut labels = template
        .pointer("/metadata/labels")
        .and_then(Value::as_object)
        .cloned()
        .unwrap_or_default();
    labels.insert(POD_NAME_LABEL.into(), json!(name));
    labels.insert(POD_INDEX_LABEL.into(), json!(ordinal.to_string()));
    labels.insert(REVISION_LABEL.into(), json!(revision));
    let mut meta = Map::new();
    meta.insert("name".into(), json!(name));
    meta.insert("generateName".into(), json!(format!("{set_name}-")));
    meta.insert("labels".into(), Value::Object(labels));
    for k in ["annotations", "finalizers"] {
        if let Some(v) = template.pointer(&format!("/metadata/{k}")) {
            meta.insert(k.into(), v.clone());
        }
    }
    meta.insert(
        "ownerReferences".into(),
        json!([controller_ref(set, "apps/v1", "StatefulSet")]),
    );
    let mut spec = template
        .get("spec")
        .and_then(Value::as_object)
        .cloned()
        .unwrap_or_default();
    spec.insert("hostname".into(), json!(name));
    let service = str_at(set, "/spec/serviceName");
    if !service.is_empty() {
        spec.insert("subdomain".into(), json!(service));
    }
    let claims = claims_for(set, ordinal);
    if !claims.is_empty() {
        let templates: Vec<&str> = set
            .pointer("/spec/volumeClaimTemplates")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .map(|t| str_at(t, "/metadata/name"))
            .collect();
        let mut volumes: Vec<Value> = templates
            .iter()
            .zip(&claims)
            .map(|(t, c)| {
                json!({"name": t, "persistentVolumeClaim": {"claimName": str_at(c, "/metadata/name")}})
            })
            .collect();
        for v in spec
            .get("volumes")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            if !templates.contains(&str_at(v, "/name")) {
                volumes.push(v.clone());
            }
        }
        spec.insert("volumes".into(), Value::Array(volumes));
    }
    json!({"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": spec})
}

/// The revisions step: `(actions, update revision name, its template, current revision name,
/// its template, collision count, revisions kept)`.
struct Revisions {
    actions: Vec<Action>,
    update: (String, Value),
    current: (String, Value),
    collision_count: i64,
    /// The set's revisions after the step, oldest first (name, revision number).
    owned: Vec<(String, i64)>,
}

fn revisions(obs: &Observed) -> Revisions {
    let set = &obs.set;
    let uid = str_at(set, "/metadata/uid");
    let set_name = str_at(set, "/metadata/name");
    let template = set
        .pointer("/spec/template")
        .cloned()
        .unwrap_or_else(|| json!({}));
    let data = history::template_patch(&template);
    let data_text = history::go_json(&data);
    let mut owned: Vec<&Value> = obs
        .revisions
        .iter()
        .filter(|r| controlled_by(r, uid))
        .collect();
    owned.sort_by_key(|r| {
        (
            int_at(r, "/revision").unwrap_or(0),
            str_at(r, "/metadata/name"),
        )
    });
    let next = owned
        .last()
        .and_then(|r| int_at(r, "/revision"))
        .unwrap_or(0)
        + 1;
    let mut collision_count = int_at(set, "/status/collisionCount").unwrap_or(0);
    let mut actions = Vec::new();
    let same = |r: &Value| r.get("data").map(history::go_json).as_deref() == Some(&data_text);
    let mut kept: Vec<(String, i64)> = owned
        .iter()
        .map(|r| {
            (
                str_at(r, "/metadata/name").to_owned(),
                int_at(r, "/revision").unwrap_or(0),
            )
        })
        .collect();
    let update_name = match owned.iter().rev().find(|r| same(r)) {
        Some(eq) => {
            let name = str_at(eq, "/metadata/name").to_owned();
            if !std::ptr::eq(*eq, *owned.last().unwrap_or(eq)) {
                actions.push(Action::RenumberRevision(name.clone(), next));
                for k in &mut kept {
                    if k.0 == name {
                        k.1 = next;
                    }
                }
            }
            name
        }
        None => {
            let mut name;
            loop {
                name = history::revision_name(
                    set_name,
                    &history::hash(&data_text, Some(collision_count)),
                );
                match obs
                    .revisions
                    .iter()
                    .find(|r| str_at(r, "/metadata/name") == name)
                {
                    Some(taken) if !(same(taken) && controlled_by(taken, uid)) => {
                        collision_count += 1;
                    }
                    _ => break,
                }
            }
            let hash = name.rsplit('-').next().unwrap_or_default().to_owned();
            let mut labels = template
                .pointer("/metadata/labels")
                .and_then(Value::as_object)
                .cloned()
                .unwrap_or_default();
            labels.insert(history::HASH_LABEL.into(), json!(hash));
            actions.push(Action::CreateRevision(json!({
                "apiVersion": "apps/v1",
                "kind": "ControllerRevision",
                "metadata": {
                    "name": name,
                    "labels": labels,
                    "ownerReferences": [controller_ref(set, "apps/v1", "StatefulSet")]
                },
                "data": data,
                "revision": next
            })));
            kept.push((name.clone(), next));
            name
        }
    };
    kept.sort_by_key(|k| k.1);
    let current_name = str_at(set, "/status/currentRevision");
    let current = owned
        .iter()
        .find(|r| !current_name.is_empty() && str_at(r, "/metadata/name") == current_name)
        .map(|r| (current_name.to_owned(), revision_template(r)))
        .unwrap_or_else(|| (update_name.clone(), template.clone()));
    Revisions {
        actions,
        update: (update_name, template),
        current,
        collision_count,
        owned: kept,
    }
}

/// The writes that bring the store in line with `obs.set` (see the module documentation).
pub(crate) fn plan(obs: &Observed) -> Vec<Action> {
    let set = &obs.set;
    let uid = str_at(set, "/metadata/uid");
    let set_name = str_at(set, "/metadata/name");
    let revs = revisions(obs);
    let mut actions = Vec::new();
    let (update_name, update_template) = &revs.update;
    let (current_name, current_template) = &revs.current;
    let replicas = int_at(set, "/spec/replicas").unwrap_or(1).max(0);
    let start = int_at(set, "/spec/ordinals/start").unwrap_or(0).max(0);
    let end = start + replicas;
    let mut slots: BTreeMap<i64, &Value> = BTreeMap::new();
    let mut condemned: Vec<(i64, &Value)> = Vec::new();
    let deleting = set.pointer("/metadata/deletionTimestamp").is_some();
    // `ClaimPods` of the set's members (Pods named `<set>-<ordinal>`): orphans its selector
    // matches are adopted, its own Pods the selector no longer matches released.
    let selector = set.pointer("/spec/selector").cloned().unwrap_or_default();
    let mut claims = Vec::new();
    for pod in &obs.pods {
        let name = str_at(pod, "/metadata/name");
        let Some(ord) = ordinal(set_name, name) else {
            continue;
        };
        let matches = crate::validation::apps::selects(&selector, &labels(pod));
        let pod_uid = str_at(pod, "/metadata/uid");
        if controlled_by(pod, uid) {
            if matches {
                claims.push((ord, pod));
            } else if !deleting {
                actions.push(Action::PatchPod(
                    name.into(),
                    release_patch(uid, pod_uid, &[]),
                ));
            }
        } else if !has_controller(pod) && matches && !deleting && !terminating(pod) {
            actions.push(Action::PatchPod(
                name.into(),
                adopt_patch(controller_ref(set, "apps/v1", "StatefulSet"), pod_uid, &[]),
            ));
            claims.push((ord, pod));
        }
    }
    // Pods are claimed before the revisions are synced, as `sync` does.
    actions.extend(revs.actions.iter().cloned());
    for (ord, pod) in claims {
        if (start..end).contains(&ord) {
            slots.insert(ord, pod);
        } else {
            condemned.push((ord, pod));
        }
    }
    condemned.sort_by_key(|c| c.0);
    let all: Vec<(i64, &Value)> = slots
        .iter()
        .map(|(o, p)| (*o, *p))
        .chain(condemned.iter().copied())
        .collect();
    let min_ready = int_at(set, "/spec/minReadySeconds").unwrap_or(0);
    let available = |p: &Value| running_and_ready(p) && available_for(p, min_ready, obs.now);
    // The first unhealthy replica in ordinal order (a missing one counts), else the condemned
    // unhealthy Pod of the lowest ordinal.
    let first_unhealthy: Option<i64> = (start..end)
        .find(|o| slots.get(o).is_none_or(|p| !healthy(p)))
        .or_else(|| condemned.iter().find(|(_, p)| !healthy(p)).map(|(o, _)| *o));
    let monotonic = str_at(set, "/spec/podManagementPolicy") != "Parallel";
    let rolling = str_at(set, "/spec/updateStrategy/type") != "OnDelete";
    let partition = int_at(set, "/spec/updateStrategy/rollingUpdate/partition").unwrap_or(0);
    let mut pod_actions = Vec::new();
    let mut created = 0;
    'sync: {
        if deleting {
            break 'sync;
        }
        for ord in start..end {
            match slots.get(&ord) {
                Some(pod) => {
                    if matches!(phase(pod), "Failed" | "Succeeded") {
                        if !terminating(pod) {
                            pod_actions
                                .push(Action::DeletePod(str_at(pod, "/metadata/name").into()));
                        }
                        if monotonic {
                            break 'sync;
                        }
                        continue;
                    }
                    // A pending Pod gets the claims it lacks.
                    if phase(pod) == "Pending" {
                        for claim in claims_for(set, ord) {
                            if !obs.claims.contains(str_at(&claim, "/metadata/name")) {
                                pod_actions.push(Action::CreateClaim(claim));
                            }
                        }
                    }
                    if monotonic && (terminating(pod) || !available(pod)) {
                        break 'sync;
                    }
                }
                None => {
                    // The name is taken by a Pod the set does not claim (a released one): the
                    // create could only fail with AlreadyExists.
                    let name = format!("{set_name}-{ord}");
                    if obs.pods.iter().any(|p| str_at(p, "/metadata/name") == name) {
                        if monotonic {
                            break 'sync;
                        }
                        continue;
                    }
                    for claim in claims_for(set, ord) {
                        if !obs.claims.contains(str_at(&claim, "/metadata/name")) {
                            pod_actions.push(Action::CreateClaim(claim));
                        }
                    }
                    let current = rolling && ord < partition;
                    let (name, template) = if current {
                        (current_name, current_template)
                    } else {
                        (update_name, update_template)
                    };
                    pod_actions.push(Action::CreatePod(new_pod(set, template, name, ord)));
                    created += 1;
                    if monotonic || created >= MAX_CREATES_PER_SYNC {
                        break 'sync;
                    }
                }
            }
        }
        for (ord, pod) in condemned.iter().rev() {
            if terminating(pod) {
                if monotonic {
                    break 'sync;
                }
                continue;
            }
            if !available(pod) && monotonic && first_unhealthy != Some(*ord) {
                break 'sync;
            }
            pod_actions.push(Action::DeletePod(str_at(pod, "/metadata/name").into()));
            if monotonic {
                break 'sync;
            }
        }
        if !rolling {
            break 'sync;
        }
        let unavailable = replicas - slots.values().filter(|p| healthy(p)).count() as i64;
        let budget = max_unavailable(set, replicas) - unavailable;
        let mut deleted = 0;
        for pod in slots
            .range(start + partition.max(0)..end)
            .rev()
            .map(|(_, p)| p)
        {
            if deleted >= budget {
                break;
            }
            if str_at(pod, &format!("/metadata/labels/{REVISION_LABEL}")) != update_name
                && !terminating(pod)
            {
                pod_actions.push(Action::DeletePod(str_at(pod, "/metadata/name").into()));
                deleted += 1;
            }
        }
    }
    actions.extend(pod_actions);
    // Status, from the Pods of the snapshot.
    let (mut count, mut ready, mut available, mut current, mut updated) = (0, 0, 0, 0, 0);
    for (_, pod) in &all {
        let created = !phase(pod).is_empty();
        if created {
            count += 1;
        }
        if running_and_ready(pod) {
            ready += 1;
            if available_for(pod, min_ready, obs.now) {
                available += 1;
            }
        }
        if created && !terminating(pod) {
            let rev = str_at(pod, &format!("/metadata/labels/{REVISION_LABEL}"));
            if rev == current_name {
                current += 1;
            }
            if rev == update_name {
                updated += 1;
            }
        }
    }
    let mut current_revision = current_name.clone();
    if rolling && updated == count && ready == count {
        current = updated;
        current_revision = update_name.clone();
    }
    let generation = int_at(set, "/metadata/generation").unwrap_or(0);
    let mut status = Map::new();
    status.insert("observedGeneration".into(), json!(generation));
    status.insert("replicas".into(), json!(count));
    for (k, v) in [
        ("readyReplicas", ready),
        ("currentReplicas", current),
        ("updatedReplicas", updated),
    ] {
        if v != 0 {
            status.insert(k.into(), json!(v));
        }
    }
    status.insert("currentRevision".into(), json!(current_revision));
    status.insert("updateRevision".into(), json!(update_name));
    status.insert("collisionCount".into(), json!(revs.collision_count));
    status.insert("availableReplicas".into(), json!(available));
    if let Some(c) = set.pointer("/status/conditions") {
        status.insert("conditions".into(), c.clone());
    }
    let old = |k: &str| set.pointer(&format!("/status/{k}")).cloned();
    let num = |k: &str| int_at(set, &format!("/status/{k}")).unwrap_or(0);
    let inconsistent = generation > num("observedGeneration")
        || count != num("replicas")
        || current != num("currentReplicas")
        || ready != num("readyReplicas")
        || updated != num("updatedReplicas")
        || available != num("availableReplicas")
        || old("currentRevision") != Some(json!(current_revision))
        || old("updateRevision") != Some(json!(update_name));
    if inconsistent {
        actions.push(Action::WriteStatus(Value::Object(status)));
    }
    // History: revisions neither the status nor a live Pod uses, beyond the limit.
    let limit = int_at(set, "/spec/revisionHistoryLimit")
        .unwrap_or(10)
        .max(0) as usize;
    let live: BTreeSet<&str> = all
        .iter()
        .map(|(_, p)| str_at(p, &format!("/metadata/labels/{REVISION_LABEL}")))
        .chain([current_revision.as_str(), update_name.as_str()])
        .collect();
    let old_revisions: Vec<&String> = revs
        .owned
        .iter()
        .map(|(n, _)| n)
        .filter(|n| !live.contains(n.as_str()))
        .collect();
    if old_revisions.len() > limit {
        for name in &old_revisions[..old_revisions.len() - limit] {
            actions.push(Action::DeleteRevision((*name).clone()));
        }
    }
    actions
}

/// Whether a Ready Pod has been Ready for `min_ready` seconds (by its condition's
/// `lastTransitionTime`).
fn available_for(pod: &Value, min_ready: i64, now: i64) -> bool {
    if min_ready <= 0 {
        return true;
    }
    ready_since(pod).is_some_and(|s| s + min_ready <= now)
}

/// When a Ready Pod became Ready (its condition's `lastTransitionTime`).
fn ready_since(pod: &Value) -> Option<i64> {
    pod.pointer("/status/conditions")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .find(|c| str_at(c, "/type") == "Ready")
        .map(|c| str_at(c, "/lastTransitionTime"))
        .and_then(crate::controllers::job::parse_time)
}

/// When a Ready Pod of the set becomes available (`minReadySeconds` after it became Ready), if
/// one is still to: kube-controller-manager syncs the set again then.
fn next_available(obs: &Observed) -> Option<i64> {
    let min_ready = int_at(&obs.set, "/spec/minReadySeconds").unwrap_or(0);
    if min_ready <= 0 {
        return None;
    }
    let uid = str_at(&obs.set, "/metadata/uid");
    obs.pods
        .iter()
        .filter(|p| controlled_by(p, uid) && running_and_ready(p))
        .filter_map(ready_since)
        .map(|s| s + min_ready)
        .filter(|at| *at > obs.now)
        .min()
}

/// A namespace's Pods, ControllerRevisions and claim names.
type NamespaceObjects = (Vec<Value>, Vec<Value>, BTreeSet<String>);

/// The snapshot of every StatefulSet's [`Observed`].
fn observe(store: &Store, now: i64) -> Vec<Observed> {
    let values = |storage: &str, ns: &str| -> Vec<Value> {
        store
            .keys(storage, Some(ns))
            .iter()
            .filter_map(|k| store.get(storage, k).map(|s| (*s.value).clone()))
            .collect()
    };
    let mut by_ns: BTreeMap<String, NamespaceObjects> = BTreeMap::new();
    let mut out = Vec::new();
    for key in store.keys("apps/statefulsets", None) {
        let Some(set) = store.get("apps/statefulsets", &key) else {
            continue;
        };
        let set = (*set.value).clone();
        let ns = str_at(&set, "/metadata/namespace").to_owned();
        let (pods, revisions, claims) = by_ns
            .entry(ns.clone())
            .or_insert_with(|| {
                let claims = values("/persistentvolumeclaims", &ns)
                    .iter()
                    .map(|c| str_at(c, "/metadata/name").to_owned())
                    .collect();
                (
                    values("/pods", &ns),
                    values("apps/controllerrevisions", &ns),
                    claims,
                )
            })
            .clone();
        out.push(Observed {
            set,
            pods,
            revisions,
            claims,
            now,
        });
    }
    out
}

/// Sends `action` for the set `set`; whether it was accepted.
async fn execute(shared: &Arc<Shared>, recorder: &Recorder, set: &Value, action: &Action) -> bool {
    let ns = str_at(set, "/metadata/namespace");
    let name = str_at(set, "/metadata/name");
    let answer = match action {
        Action::CreateRevision(body) => {
            let path = collection("apps/v1", ns, "controllerrevisions");
            let a = requests::send(shared, Method::POST, &path, "", Some(body)).await;
            // An equal revision created meanwhile is taken as is, as `CreateControllerRevision`.
            return a.ok() || a.status == 409;
        }
        Action::RenumberRevision(rev, number) => {
            let path = format!("{}/{rev}", collection("apps/v1", ns, "controllerrevisions"));
            let body = json!({"revision": number});
            requests::send(shared, Method::PATCH, &path, "", Some(&body)).await
        }
        Action::DeleteRevision(rev) => {
            let path = format!("{}/{rev}", collection("apps/v1", ns, "controllerrevisions"));
            requests::send(shared, Method::DELETE, &path, "", None).await
        }
        Action::CreateClaim(body) => {
            let path = collection("v1", ns, "persistentvolumeclaims");
            let a = requests::send(shared, Method::POST, &path, "", Some(body)).await;
            if a.status == 409 {
                return true;
            }
            // `recordClaimEvent`; the claim's Pod is `<set>-<ordinal>`.
            let claim = str_at(body, "/metadata/name");
            let pod = format!("{name}-{}", claim.rsplit('-').next().unwrap_or_default());
            let event = if a.ok() {
                Event::normal(
                    "SuccessfulCreate",
                    format!("create Claim {claim} Pod {pod} in StatefulSet {name} success"),
                )
            } else {
                Event::warning(
                    "FailedCreate",
                    format!(
                        "create Claim {claim} for Pod {pod} in StatefulSet {name} failed error: {}",
                        message(&a)
                    ),
                )
            };
            record(shared, recorder, set, &event).await;
            return a.ok();
        }
        Action::CreatePod(body) => {
            let path = collection("v1", ns, "pods");
            let a = requests::send(shared, Method::POST, &path, "", Some(body)).await;
            record(shared, recorder, set, &pod_event("create", body, name, &a)).await;
            a
        }
        Action::DeletePod(pod) => {
            let path = format!("{}/{pod}", collection("v1", ns, "pods"));
            let a = requests::send(shared, Method::DELETE, &path, "", None).await;
            if a.status == 404 {
                return true;
            }
            let body = json!({"metadata": {"name": pod}});
            record(shared, recorder, set, &pod_event("delete", &body, name, &a)).await;
            return a.ok();
        }
        Action::PatchPod(pod, patch) => {
            let path = format!("{}/{pod}", collection("v1", ns, "pods"));
            requests::strategic_patch(shared, &path, patch).await
        }
        Action::WriteStatus(status) => {
            return write_status(shared, ns, name, str_at(set, "/metadata/uid"), status).await;
        }
    };
    answer.ok()
}

/// The error text of a refused request (its Status message).
fn message(answer: &requests::Answer) -> String {
    str_at(&answer.body, "/message").to_owned()
}

/// `recordPodEvent` for `verb` (`create`, `delete`) of `pod` in the set `set_name`.
fn pod_event(verb: &str, pod: &Value, set_name: &str, answer: &requests::Answer) -> Event {
    let pod = str_at(pod, "/metadata/name");
    let (ok, failed) = match verb {
        "create" => ("SuccessfulCreate", "FailedCreate"),
        _ => ("SuccessfulDelete", "FailedDelete"),
    };
    if answer.ok() {
        Event::normal(
            ok,
            format!("{verb} Pod {pod} in StatefulSet {set_name} successful"),
        )
    } else {
        Event::warning(
            failed,
            format!(
                "{verb} Pod {pod} in StatefulSet {set_name} failed error: {}",
                message(answer)
            ),
        )
    }
}

/// Records `event` about the set, as the `statefulset-controller`.
async fn record(shared: &Arc<Shared>, recorder: &Recorder, set: &Value, event: &Event) {
    recorder
        .record(
            shared,
            "statefulset-controller",
            set,
            "apps/v1",
            "StatefulSet",
            event,
        )
        .await;
}

/// `UpdateStatus` with the latest version of the set (retried on conflict, as client-go's
/// `RetryOnConflict`).
async fn write_status(
    shared: &Arc<Shared>,
    ns: &str,
    name: &str,
    uid: &str,
    status: &Value,
) -> bool {
    let path = format!("{}/{name}", collection("apps/v1", ns, "statefulsets"));
    for _ in 0..5 {
        let latest = requests::send(shared, Method::GET, &path, "", None).await;
        if !latest.ok() || str_at(&latest.body, "/metadata/uid") != uid {
            return false;
        }
        let mut body = latest.body;
        body["status"] = status.clone();
        let a = requests::send(
            shared,
            Method::PUT,
            &format!("{path}/status"),
            "",
            Some(&body),
        )
        .await;
        if a.status != 409 {
            return a.ok();
        }
    }
    false
}

/// One pass: every StatefulSet synced once.
async fn pass(shared: &Arc<Shared>, recorder: &Recorder, clock: &Clock) -> Option<i64> {
    let observed = observe(&shared.store.lock(), clock.now());
    let mut next: Option<i64> = None;
    for obs in observed {
        let mut failed = false;
        for action in plan(&obs) {
            // After a refused write only the status is still written, as `UpdateStatefulSet`
            // does.
            if failed && !matches!(action, Action::WriteStatus(_)) {
                continue;
            }
            let ok = execute(shared, recorder, &obs.set, &action).await;
            if !ok
                && matches!(
                    action,
                    Action::CreateRevision(_) | Action::RenumberRevision(..)
                )
            {
                // Without its revisions the set is not synced at all.
                break;
            }
            failed |= !ok;
        }
        if let Some(at) = next_available(&obs) {
            next = Some(next.map_or(at, |n| n.min(at)));
        }
    }
    next
}

/// Runs the controller until the server is gone: a pass after every change, and when a Ready
/// Pod becomes available.
pub(super) async fn run(shared: Weak<Shared>) {
    super::run_timed(shared, |shared, recorder, clock| {
        Box::pin(pass(shared, recorder, clock))
    })
    .await;
}

#[cfg(test)]
pub(crate) mod tests;
