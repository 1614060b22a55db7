//! kube-controller-manager's Job controller (`pkg/controller/job`, v1.36), on a cluster without
//! scheduler and kubelets: the Pods it creates stay `Pending` (a client may still write their
//! status, e.g. `Succeeded`).
//!
//! # Sync protocol
//!
//! After every change of the store, and when a Job's `activeDeadlineSeconds` runs out, each Job
//! that has not finished (no `Complete` or `Failed` condition) is synced from a snapshot: [`plan`]
//! computes the writes, sent one after the other as kube-controller-manager's requests (see
//! [`super::requests`]); after a refused write only the status is still written, and the next
//! change syncs again. A Job whose `spec.managedBy` names another controller is left alone.
//!
//! - **Pods** it controls (controller reference with the Job's uid; orphans its selector matches
//!   are adopted with the tracking finalizer, its Pods the selector no longer matches released)
//!   are *active* while not
//!   terminating and not `Succeeded`/`Failed`. A finished Pod that still has the
//!   `batch.kubernetes.io/job-tracking` finalizer is first recorded in
//!   `status.uncountedTerminatedPods` (a deleted Pod that had not succeeded counts as failed),
//!   then loses the finalizer; a later sync moves it to `succeeded`/`failed`.
//! - **Failure**: more failures than `backoffLimit`, or `activeDeadlineSeconds` elapsed since
//!   `startTime` (not while suspended), add the `FailureTarget` condition (`BackoffLimitExceeded`
//!   / `DeadlineExceeded`) and delete the active Pods; once no Pod is terminating and every
//!   finished Pod is counted, the `Failed` condition follows with the same reason and message.
//! - **Success**: `succeeded` reaching `completions` (without `completions`: a success and no
//!   active Pod) adds `SuccessCriteriaMet`, then (as for `Failed`) `Complete` with
//!   `completionTime`.
//! - **Suspended**: the active Pods are deleted and the `Suspended` condition is True
//!   (`JobSuspended`, `Job suspended`); resuming makes it False (`JobResumed`, `Job resumed`) and
//!   sets a new `startTime` (a suspended Job has none).
//! - **Otherwise** the Job wants `min(parallelism, completions - succeeded)` active Pods
//!   (`parallelism` without `completions`): missing ones are created (generateName `<job>-`, the
//!   template's labels and annotations, the tracking finalizer, a controller reference; an
//!   Indexed Job's Pods get their completion index as label, annotation, hostname
//!   `<job>-<index>` and `JOB_COMPLETION_INDEX`), extra ones deleted (not Ready and newest
//!   first). A Pod the controller deletes loses its finalizer first, so it does not count as
//!   failed.
//! - **Orphans**: a Pod with the tracking finalizer whose Job is gone or finished (or that has
//!   no controller) loses the finalizer, so a deleted Job's Pods can go.
//! - **Events** (from `job-controller`): `SuccessfulCreate`/`FailedCreate`,
//!   `SuccessfulDelete`/`FailedDelete` per Pod, `Suspended`, `Resumed`, `Completed`, and the
//!   failure's reason as a Warning.
//! - **Status** (`UpdateStatus`, only when it changed): `startTime` when first not suspended,
//!   `active`, `ready`, `terminating`, `uncountedTerminatedPods`, the conditions.
//!
//! # Invariants
//!
//! - At most `parallelism` (and at most `completions - succeeded`) Pods are active after a
//!   sync's creates; a suspended or finished Job creates none.
//! - Every Pod it creates has exactly one controller `ownerReference` (the Job) and the tracking
//!   finalizer; it deletes only Pods it controls.
//! - A Pod is counted once: its uid enters `uncountedTerminatedPods` once, and leaves it for a
//!   counter once its finalizer is gone.
//! - Times come from the controller's clock ([`Clock`]), which follows tokio's clock, so a test
//!   with `tokio::time::pause()` moves deadlines with `tokio::time::advance`.

use std::collections::BTreeSet;
use std::sync::{Arc, Weak};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use http::Method;
use serde_json::{Map, Value, json};

use super::events::{Event, Recorder};
use super::requests::{self, collection};
use super::stateful_set::{
    adopt_patch, controlled_by, controller_ref, has_controller, labels, ready_condition,
    release_patch, terminating,
};
use crate::server::Shared;
use crate::store::Store;

/// The finalizer of the Pods a Job tracks.
pub(crate) const TRACKING_FINALIZER: &str = "batch.kubernetes.io/job-tracking";
/// The `spec.managedBy` of the Jobs this controller syncs (the others are left to their
/// controller).
pub(crate) const DEFAULT_MANAGER: &str = "kubernetes.io/job-controller";
/// At most this many Pods are created in one sync (`MaxPodCreateDeletePerSync`).
const MAX_CREATES_PER_SYNC: i64 = 500;
/// The label and annotation with an Indexed Job Pod's index.
pub(crate) const INDEX_KEY: &str = "batch.kubernetes.io/job-completion-index";

/// Seconds since the Unix epoch, from the system clock.
pub(crate) fn wall_now() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs() as i64)
}

/// The controller's clock: the system time when it started, moved on by tokio's clock (so a
/// paused tokio clock stops it and `tokio::time::advance` moves it).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Clock {
    wall: i64,
    start: tokio::time::Instant,
}

impl Clock {
    /// A clock reading the system time now.
    pub(crate) fn start() -> Self {
        Self {
            wall: wall_now(),
            start: tokio::time::Instant::now(),
        }
    }

    /// Seconds since the Unix epoch.
    pub(crate) fn now(&self) -> i64 {
        self.wall + self.start.elapsed().as_secs() as i64
    }

    /// The tokio instant of `secs` since the Unix epoch.
    pub(crate) fn instant(&self, secs: i64) -> tokio::time::Instant {
        let offset = (secs - self.wall).max(0) as u64;
        self.start + Duration::from_secs(offset)
    }
}

/// `2006-01-02T15:04:05Z` (fractions and offsets accepted) as seconds since the Unix epoch.
pub(crate) fn parse_time(s: &str) -> Option<i64> {
    let b = s.as_bytes();
    if b.len() < 20 || b[4] != b'-' || b[7] != b'-' || b[10] != b'T' {
        return None;
    }
    let num = |r: std::ops::Range<usize>| s.get(r)?.parse::<i64>().ok();
    let (y, mo, d) = (num(0..4)?, num(5..7)?, num(8..10)?);
    let (h, mi, sec) = (num(11..13)?, num(14..16)?, num(17..19)?);
    let mut rest = &s[19..];
    if let Some(frac) = rest.strip_prefix('.') {
        rest = frac.trim_start_matches(|c: char| c.is_ascii_digit());
    }
    let offset = match rest {
        "Z" | "z" => 0,
        _ if rest.len() == 6 => {
            let sign = if rest.starts_with('-') { -1 } else { 1 };
            sign * (rest.get(1..3)?.parse::<i64>().ok()? * 3600
                + rest.get(4..6)?.parse::<i64>().ok()? * 60)
        }
        _ => return None,
    };
    // Days from civil (Howard Hinnant's algorithm).
    let y = if mo <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (mo + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    let days = era * 146_097 + doe - 719_468;
    Some(days * 86_400 + h * 3600 + mi * 60 + sec - offset)
}

fn rfc3339(secs: i64) -> String {
    crate::meta::rfc3339(secs.max(0) as u64)
}

fn str_at<'a>(v: &'a Value, ptr: &str) -> &'a str {
    v.pointer(ptr).and_then(Value::as_str).unwrap_or_default()
}

fn int_at(v: &Value, ptr: &str) -> Option<i64> {
    v.pointer(ptr).and_then(Value::as_i64)
}

/// One write of a sync.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Action {
    /// Write this status.
    WriteStatus(Value),
    /// Remove the tracking finalizer of the Pod of this name (its resourceVersion, finalizers
    /// kept).
    RemoveFinalizer(String, String, Vec<Value>),
    /// Create this Pod.
    CreatePod(Value),
    /// Delete the Pod of this name.
    DeletePod(String),
    /// Patch the Pod of this name with this strategic merge patch (adoption, release).
    PatchPod(String, Value),
}

fn has_condition(job: &Value, kind: &str) -> bool {
    conditions(job)
        .iter()
        .any(|c| str_at(c, "/type") == kind && str_at(c, "/status") == "True")
}

fn conditions(job: &Value) -> Vec<Value> {
    job.pointer("/status/conditions")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default()
}

/// Whether the Job has finished (`Complete` or `Failed`).
pub(crate) fn finished(job: &Value) -> bool {
    has_condition(job, "Complete") || has_condition(job, "Failed")
}

fn condition(kind: &str, status: &str, reason: &str, message: &str, now: i64) -> Value {
    json!({
        "type": kind,
        "status": status,
        "lastProbeTime": rfc3339(now),
        "lastTransitionTime": rfc3339(now),
        "reason": reason,
        "message": message
    })
}

/// `ensureJobConditionStatus`: sets the condition `kind` to `status` (a missing condition is
/// added only as True); whether it changed.
fn ensure_condition(
    conds: &mut Vec<Value>,
    kind: &str,
    status: &str,
    reason: &str,
    message: &str,
    now: i64,
) -> bool {
    if let Some(c) = conds.iter_mut().find(|c| str_at(c, "/type") == kind) {
        if str_at(c, "/status") == status {
            return false;
        }
        *c = condition(kind, status, reason, message, now);
        return true;
    }
    if status == "True" {
        conds.push(condition(kind, status, reason, message, now));
        return true;
    }
    false
}

fn finalizers(pod: &Value) -> Vec<Value> {
    pod.pointer("/metadata/finalizers")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default()
}

fn tracked(pod: &Value) -> bool {
    finalizers(pod)
        .iter()
        .any(|f| f.as_str() == Some(TRACKING_FINALIZER))
}

fn phase(pod: &Value) -> &str {
    str_at(pod, "/status/phase")
}

fn active(pod: &Value) -> bool {
    !terminating(pod) && !matches!(phase(pod), "Succeeded" | "Failed")
}

/// `isPodFailed` under the Job's `podReplacementPolicy`.
fn pod_failed(pod: &Value, job: &Value) -> bool {
    if phase(pod) == "Failed" {
        return true;
    }
    if str_at(job, "/spec/podReplacementPolicy") == "Failed" {
        return false;
    }
    terminating(pod) && phase(pod) != "Succeeded"
}

/// The Pod for the Job (`GetPodFromTemplate` plus the tracking finalizer; `index` for an
/// Indexed Job).
fn new_pod(job: &Value, index: Option<i64>) -> Value {
    let name = str_at(job, "/metadata/name");
    let template = job.pointer("/spec/template").cloned().unwrap_or_default();
    let mut meta = Map::new();
    let mut labels = template
        .pointer("/metadata/labels")
        .and_then(Value::as_object)
        .cloned()
        .unwrap_or_default();
    let mut annotations = template
        .pointer("/metadata/annotations")
        .and_then(Value::as_object)
        .cloned()
        .unwrap_or_default();
    let mut spec = template
        .get("spec")
        .and_then(Value::as_object)
        .cloned()
        .unwrap_or_default();
    let generate = match index {
        Some(i) => {
            labels.insert(INDEX_KEY.into(), json!(i.to_string()));
            annotations.insert(INDEX_KEY.into(), json!(i.to_string()));
            spec.entry("hostname")
                .or_insert_with(|| json!(format!("{name}-{i}")));
            for list in ["initContainers", "containers"] {
                if let Some(cs) = spec.get_mut(list).and_then(Value::as_array_mut) {
                    for c in cs {
                        let env = c
                            .as_object_mut()
                            .map(|m| m.entry("env").or_insert_with(|| json!([])));
                        if let Some(Value::Array(env)) = env
                            && !env
                                .iter()
                                .any(|e| str_at(e, "/name") == "JOB_COMPLETION_INDEX")
                        {
                            env.push(json!({
                                "name": "JOB_COMPLETION_INDEX",
                                "valueFrom": {"fieldRef": {
                                    "fieldPath": format!("metadata.labels['{INDEX_KEY}']")
                                }}
                            }));
                        }
                    }
                }
            }
            format!("{name}-{i}-")
        }
        None => format!("{name}-"),
    };
    meta.insert("generateName".into(), json!(generate));
    if !labels.is_empty() {
        meta.insert("labels".into(), Value::Object(labels));
    }
    if !annotations.is_empty() {
        meta.insert("annotations".into(), Value::Object(annotations));
    }
    let mut fins = template
        .pointer("/metadata/finalizers")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    if !fins.iter().any(|f| f.as_str() == Some(TRACKING_FINALIZER)) {
        fins.push(json!(TRACKING_FINALIZER));
    }
    meta.insert("finalizers".into(), Value::Array(fins));
    meta.insert(
        "ownerReferences".into(),
        json!([controller_ref(job, "batch/v1", "Job")]),
    );
    json!({"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": spec})
}

/// The index of an Indexed Job's Pod.
fn pod_index(pod: &Value) -> Option<i64> {
    pod.pointer(&format!(
        "/metadata/annotations/{}",
        INDEX_KEY.replace('/', "~1")
    ))
    .or_else(|| {
        pod.pointer(&format!(
            "/metadata/labels/{}",
            INDEX_KEY.replace('/', "~1")
        ))
    })
    .and_then(Value::as_str)
    .and_then(|s| s.parse().ok())
}

/// The writes that bring the store in line with `job` and its `pods` at `now` (seconds since
/// the Unix epoch), see the module documentation.
pub(crate) fn plan(job: &Value, pods: &[Value], now: i64) -> Vec<Action> {
    let managed_by = str_at(job, "/spec/managedBy");
    if finished(job) || !(managed_by.is_empty() || managed_by == DEFAULT_MANAGER) {
        return Vec::new();
    }
    let uid = str_at(job, "/metadata/uid");
    // `ClaimPods`: orphans the selector matches are adopted (with the tracking finalizer), the
    // Job's Pods it no longer matches released (losing it).
    let selector = job.pointer("/spec/selector").cloned().unwrap_or_default();
    let deleting_job = job.pointer("/metadata/deletionTimestamp").is_some();
    let mut claim_actions = Vec::new();
    let mut claimed: Vec<&Value> = Vec::new();
    for pod in pods {
        let matches = crate::validation::apps::selects(&selector, &labels(pod));
        let name = str_at(pod, "/metadata/name");
        let pod_uid = str_at(pod, "/metadata/uid");
        if controlled_by(pod, uid) {
            if matches {
                claimed.push(pod);
            } else if !deleting_job {
                claim_actions.push(Action::PatchPod(
                    name.into(),
                    release_patch(uid, pod_uid, &[TRACKING_FINALIZER]),
                ));
            }
        } else if !has_controller(pod) && matches && !deleting_job && !terminating(pod) {
            claim_actions.push(Action::PatchPod(
                name.into(),
                adopt_patch(
                    controller_ref(job, "batch/v1", "Job"),
                    pod_uid,
                    &[TRACKING_FINALIZER],
                ),
            ));
            claimed.push(pod);
        }
    }
    let pods = claimed;
    let mut status = job
        .get("status")
        .and_then(Value::as_object)
        .cloned()
        .unwrap_or_default();
    let suspended = job.pointer("/spec/suspend").and_then(Value::as_bool) == Some(true);
    let mut actions = claim_actions;
    let mut post = Vec::new();
    // Finished Pods: uncounted first, counted once their finalizer is gone.
    let uncounted = |k: &str| -> Vec<String> {
        job.pointer(&format!("/status/uncountedTerminatedPods/{k}"))
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
            .map(str::to_owned)
            .collect()
    };
    let mut counters = [
        int_at(job, "/status/succeeded").unwrap_or(0),
        int_at(job, "/status/failed").unwrap_or(0),
    ];
    let mut lists = [uncounted("succeeded"), uncounted("failed")];
    let pod_by_uid = |u: &str| pods.iter().find(|p| str_at(p, "/metadata/uid") == u);
    for (i, list) in lists.iter_mut().enumerate() {
        list.retain(|u| {
            let still = pod_by_uid(u).is_some_and(|p| tracked(p));
            if !still {
                counters[i] += 1;
            }
            still
        });
    }
    for pod in &pods {
        if !tracked(pod) {
            continue;
        }
        let pod_uid = str_at(pod, "/metadata/uid").to_owned();
        let slot = if phase(pod) == "Succeeded" {
            Some(0)
        } else if pod_failed(pod, job) {
            Some(1)
        } else {
            None
        };
        if let Some(i) = slot {
            if !lists[0].contains(&pod_uid) && !lists[1].contains(&pod_uid) {
                lists[i].push(pod_uid);
            }
            let kept: Vec<Value> = finalizers(pod)
                .into_iter()
                .filter(|f| f.as_str() != Some(TRACKING_FINALIZER))
                .collect();
            post.push(Action::RemoveFinalizer(
                str_at(pod, "/metadata/name").into(),
                str_at(pod, "/metadata/resourceVersion").into(),
                kept,
            ));
        }
    }
    let succeeded = counters[0] + lists[0].len() as i64;
    let failed = counters[1] + lists[1].len() as i64;
    let active_pods: Vec<&Value> = pods.iter().copied().filter(|p| active(p)).collect();
    let terminating_count = pods
        .iter()
        .filter(|p| terminating(p) && !matches!(phase(p), "Succeeded" | "Failed"))
        .count() as i64;
    let mut conds = conditions(job);
    // A terminal condition waits until no Pod is terminating and every finished Pod is counted.
    let settled = terminating_count == 0 && lists.iter().all(Vec::is_empty);
    // The start time, and the suspension condition.
    if !suspended && !status.contains_key("startTime") {
        status.insert("startTime".into(), json!(rfc3339(now)));
    }
    let failure_target = conds
        .iter()
        .find(|c| str_at(c, "/type") == "FailureTarget" && str_at(c, "/status") == "True")
        .cloned();
    let success_target = has_condition(job, "SuccessCriteriaMet");
    let mut delete_all = false;
    let mut want: Option<i64> = None;
    if let Some(target) = failure_target {
        delete_all = true;
        if settled {
            conds.push(condition(
                "Failed",
                "True",
                str_at(&target, "/reason"),
                str_at(&target, "/message"),
                now,
            ));
        }
    } else if success_target {
        delete_all = true;
        if settled {
            conds.push(condition(
                "Complete",
                "True",
                "CompletionsReached",
                "Reached expected number of succeeded pods",
                now,
            ));
            status.insert("completionTime".into(), json!(rfc3339(now)));
        }
    } else {
        let backoff = int_at(job, "/spec/backoffLimit").unwrap_or(6);
        let deadline = int_at(job, "/spec/activeDeadlineSeconds").filter(|_| !suspended);
        let start = status
            .get("startTime")
            .and_then(Value::as_str)
            .and_then(parse_time);
        let failure = if failed > backoff {
            Some((
                "BackoffLimitExceeded",
                "Job has reached the specified backoff limit",
            ))
        } else if let (Some(d), Some(s)) = (deadline, start)
            && now - s >= d
        {
            Some((
                "DeadlineExceeded",
                "Job was active longer than specified deadline",
            ))
        } else {
            None
        };
        let completions = int_at(job, "/spec/completions");
        let complete = match completions {
            Some(c) => succeeded >= c && active_pods.is_empty(),
            None => succeeded > 0 && active_pods.is_empty(),
        };
        if let Some((reason, message)) = failure {
            conds.push(condition("FailureTarget", "True", reason, message, now));
            delete_all = true;
            if settled {
                conds.push(condition("Failed", "True", reason, message, now));
            }
        } else if complete {
            let message = "Reached expected number of succeeded pods";
            conds.push(condition(
                "SuccessCriteriaMet",
                "True",
                "CompletionsReached",
                message,
                now,
            ));
            if settled {
                conds.push(condition(
                    "Complete",
                    "True",
                    "CompletionsReached",
                    message,
                    now,
                ));
                status.insert("completionTime".into(), json!(rfc3339(now)));
            }
        } else if suspended {
            delete_all = true;
            // The deadline counts while the Job runs: a suspended Job has no start time (which
            // lets the resume set a new one, as status validation requires).
            status.remove("startTime");
            ensure_condition(
                &mut conds,
                "Suspended",
                "True",
                "JobSuspended",
                "Job suspended",
                now,
            );
        } else {
            if ensure_condition(
                &mut conds,
                "Suspended",
                "False",
                "JobResumed",
                "Job resumed",
                now,
            ) {
                status.insert("startTime".into(), json!(rfc3339(now)));
            }
            let parallelism = int_at(job, "/spec/parallelism").unwrap_or(1).max(0);
            want = Some(match completions {
                Some(c) => parallelism.min((c - succeeded).max(0)),
                None => parallelism,
            });
        }
    }
    // Pods to delete or create.
    let mut deleting: BTreeSet<String> = BTreeSet::new();
    let mut creating = Vec::new();
    if delete_all {
        deleting.extend(
            active_pods
                .iter()
                .map(|p| str_at(p, "/metadata/name").to_owned()),
        );
    } else if let Some(want) = want {
        let have = active_pods.len() as i64;
        let replace_only_failed = str_at(job, "/spec/podReplacementPolicy") == "Failed";
        let busy = have
            + if replace_only_failed {
                terminating_count
            } else {
                0
            };
        if have > want {
            let mut order: Vec<&&Value> = active_pods.iter().collect();
            // Not Ready first, then the newest.
            order.sort_by(|a, b| {
                ready_condition(a)
                    .cmp(&ready_condition(b))
                    .then_with(|| {
                        str_at(b, "/metadata/creationTimestamp")
                            .cmp(str_at(a, "/metadata/creationTimestamp"))
                    })
                    .then_with(|| str_at(b, "/metadata/name").cmp(str_at(a, "/metadata/name")))
            });
            deleting.extend(
                order
                    .iter()
                    .take((have - want) as usize)
                    .map(|p| str_at(p, "/metadata/name").to_owned()),
            );
        } else if busy < want {
            // `MaxPodCreateDeletePerSync`: the rest in the next syncs.
            let n = (want - busy).min(MAX_CREATES_PER_SYNC);
            if str_at(job, "/spec/completionMode") == "Indexed" {
                let completions = int_at(job, "/spec/completions").unwrap_or(0);
                let taken: BTreeSet<i64> = pods
                    .iter()
                    .filter(|p| active(p) || phase(p) == "Succeeded")
                    .filter_map(|p| pod_index(p))
                    .collect();
                creating.extend(
                    (0..completions)
                        .filter(|i| !taken.contains(i))
                        .take(n as usize)
                        .map(|i| new_pod(job, Some(i))),
                );
            } else {
                creating.extend((0..n).map(|_| new_pod(job, None)));
            }
        }
    }
    let deleted_ready = active_pods
        .iter()
        .filter(|p| deleting.contains(str_at(p, "/metadata/name")) && ready_condition(p))
        .count() as i64;
    // As `manageJob`, the Pods it creates count as active in the status it writes.
    let active_after = active_pods.len() as i64 - deleting.len() as i64 + creating.len() as i64;
    let ready = active_pods.iter().filter(|p| ready_condition(p)).count() as i64 - deleted_ready;
    // The status the sync leaves.
    let set = |status: &mut Map<String, Value>, k: &str, v: i64, omit_zero: bool| {
        if v == 0 && omit_zero {
            status.remove(k);
        } else {
            status.insert(k.into(), json!(v));
        }
    };
    set(&mut status, "active", active_after, true);
    set(&mut status, "ready", ready, false);
    set(&mut status, "terminating", terminating_count, false);
    set(&mut status, "succeeded", counters[0], true);
    set(&mut status, "failed", counters[1], true);
    let mut uncounted_obj = Map::new();
    for (k, list) in ["succeeded", "failed"].iter().zip(&lists) {
        if !list.is_empty() {
            uncounted_obj.insert((*k).into(), json!(list));
        }
    }
    status.insert(
        "uncountedTerminatedPods".into(),
        Value::Object(uncounted_obj),
    );
    if conds.is_empty() {
        status.remove("conditions");
    } else {
        status.insert("conditions".into(), Value::Array(conds));
    }
    let new_status = Value::Object(status);
    // As `syncJob`: deletions (each Pod losing the finalizer before its delete) and creates
    // first, then the status with the uncounted Pods, then the finalizers of finished Pods.
    for pod in &active_pods {
        let name = str_at(pod, "/metadata/name");
        if deleting.contains(name) {
            if tracked(pod) {
                let kept: Vec<Value> = finalizers(pod)
                    .into_iter()
                    .filter(|f| f.as_str() != Some(TRACKING_FINALIZER))
                    .collect();
                actions.push(Action::RemoveFinalizer(
                    name.into(),
                    str_at(pod, "/metadata/resourceVersion").into(),
                    kept,
                ));
            }
            actions.push(Action::DeletePod(name.into()));
        }
    }
    actions.extend(creating.into_iter().map(Action::CreatePod));
    if job.get("status") != Some(&new_status) {
        actions.push(Action::WriteStatus(new_status));
    }
    actions.extend(post);
    actions
}

/// When the Job's `activeDeadlineSeconds` runs out (seconds since the Unix epoch), if it runs.
fn deadline(job: &Value) -> Option<i64> {
    if finished(job) || job.pointer("/spec/suspend").and_then(Value::as_bool) == Some(true) {
        return None;
    }
    let d = int_at(job, "/spec/activeDeadlineSeconds")?;
    let start = parse_time(str_at(job, "/status/startTime"))?;
    Some(start + d)
}

/// Every Job with the Pods of its namespace (read once per namespace).
fn observe(store: &Store) -> Vec<(Value, Arc<Vec<Value>>)> {
    let mut by_ns: std::collections::BTreeMap<String, Arc<Vec<Value>>> = Default::default();
    store
        .keys("batch/jobs", None)
        .iter()
        .filter_map(|k| store.get("batch/jobs", k))
        .map(|j| {
            let job = (*j.value).clone();
            let ns = str_at(&job, "/metadata/namespace").to_owned();
            let pods = by_ns
                .entry(ns.clone())
                .or_insert_with(|| {
                    Arc::new(
                        store
                            .keys("/pods", Some(&ns))
                            .iter()
                            .filter_map(|k| store.get("/pods", k).map(|s| (*s.value).clone()))
                            .collect(),
                    )
                })
                .clone();
            (job, pods)
        })
        .collect()
}

async fn execute(shared: &Arc<Shared>, recorder: &Recorder, job: &Value, action: &Action) -> bool {
    let ns = str_at(job, "/metadata/namespace");
    let pods = collection("v1", ns, "pods");
    match action {
        Action::CreatePod(body) => {
            let a = requests::send(shared, Method::POST, &pods, "", Some(body)).await;
            // `RealPodControl`'s Events.
            let event = if a.ok() {
                Event::normal(
                    "SuccessfulCreate",
                    format!("Created pod: {}", str_at(&a.body, "/metadata/name")),
                )
            } else {
                Event::warning(
                    "FailedCreate",
                    format!("Error creating: {}", str_at(&a.body, "/message")),
                )
            };
            record(shared, recorder, job, &event).await;
            a.ok()
        }
        Action::DeletePod(name) => {
            let a =
                requests::send(shared, Method::DELETE, &format!("{pods}/{name}"), "", None).await;
            if a.status == 404 {
                return true;
            }
            let event = if a.ok() {
                Event::normal("SuccessfulDelete", format!("Deleted pod: {name}"))
            } else {
                Event::warning(
                    "FailedDelete",
                    format!("Error deleting: {}", str_at(&a.body, "/message")),
                )
            };
            record(shared, recorder, job, &event).await;
            a.ok()
        }
        Action::RemoveFinalizer(name, _, _) => {
            // `removeTrackingFinalizerPatch`.
            let body = json!({"metadata": {
                "$deleteFromPrimitiveList/finalizers": [TRACKING_FINALIZER]
            }});
            let a = requests::strategic_patch(shared, &format!("{pods}/{name}"), &body).await;
            a.ok() || a.status == 404
        }
        Action::PatchPod(name, patch) => {
            requests::strategic_patch(shared, &format!("{pods}/{name}"), patch)
                .await
                .ok()
        }
        Action::WriteStatus(status) => {
            let path = format!(
                "{}/{}/status",
                collection("batch/v1", ns, "jobs"),
                str_at(job, "/metadata/name")
            );
            let mut body = job.clone();
            body["status"] = status.clone();
            let ok = requests::send(shared, Method::PUT, &path, "", Some(&body))
                .await
                .ok();
            if ok {
                for event in status_events(job, status) {
                    record(shared, recorder, job, &event).await;
                }
            }
            ok
        }
    }
}

/// The Events of a status change: the suspension and resumption, the Job's end.
fn status_events(job: &Value, status: &Value) -> Vec<Event> {
    let old = conditions(job);
    let new: Vec<Value> = status
        .get("conditions")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    let state = |conds: &[Value], kind: &str| {
        conds
            .iter()
            .find(|c| str_at(c, "/type") == kind)
            .map(|c| str_at(c, "/status").to_owned())
    };
    let mut events = Vec::new();
    let suspended = state(&new, "Suspended");
    if suspended != state(&old, "Suspended") {
        match suspended.as_deref() {
            Some("True") => events.push(Event::normal("Suspended", "Job suspended")),
            Some("False") => events.push(Event::normal("Resumed", "Job resumed")),
            _ => {}
        }
    }
    if state(&new, "Complete").as_deref() == Some("True")
        && state(&old, "Complete").as_deref() != Some("True")
    {
        events.push(Event::normal("Completed", "Job completed"));
    }
    if let Some(c) = new
        .iter()
        .find(|c| str_at(c, "/type") == "Failed" && str_at(c, "/status") == "True")
        && state(&old, "Failed").as_deref() != Some("True")
    {
        let reason = match str_at(c, "/reason") {
            "DeadlineExceeded" => "DeadlineExceeded",
            "BackoffLimitExceeded" => "BackoffLimitExceeded",
            _ => "Failed",
        };
        events.push(Event::warning(reason, str_at(c, "/message")));
    }
    events
}

/// Records `event` about the Job, as the `job-controller`.
async fn record(shared: &Arc<Shared>, recorder: &Recorder, job: &Value, event: &Event) {
    recorder
        .record(shared, "job-controller", job, "batch/v1", "Job", event)
        .await;
}

/// Whether the tracking finalizer of `pod` is left to nobody (`syncOrphanPod`): the Pod has no
/// controller, or its controller is a batch/v1 Job that is gone or finished (and not managed by
/// another controller); `job_of` finds a Job by namespace, name and uid.
pub(crate) fn orphan_tracked(
    pod: &Value,
    job_of: impl Fn(&str, &str, &str) -> Option<Value>,
) -> bool {
    if !tracked(pod) {
        return false;
    }
    let controller = pod
        .pointer("/metadata/ownerReferences")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .find(|r| r.get("controller").and_then(Value::as_bool) == Some(true));
    let Some(r) = controller else {
        return true;
    };
    if str_at(r, "/kind") != "Job" || str_at(r, "/apiVersion") != "batch/v1" {
        return false;
    }
    let ns = str_at(pod, "/metadata/namespace");
    match job_of(ns, str_at(r, "/name"), str_at(r, "/uid")) {
        Some(job) => {
            let managed_by = str_at(&job, "/spec/managedBy");
            (managed_by.is_empty() || managed_by == DEFAULT_MANAGER) && finished(&job)
        }
        None => true,
    }
}

/// The Pods whose tracking finalizer no Job will remove (see [`orphan_tracked`]).
fn orphans(store: &Store) -> Vec<(String, String)> {
    let job_of = |ns: &str, name: &str, uid: &str| {
        store
            .get("batch/jobs", &crate::store::object_key(Some(ns), name))
            .map(|s| (*s.value).clone())
            .filter(|j| str_at(j, "/metadata/uid") == uid)
    };
    store
        .keys("/pods", None)
        .iter()
        .filter_map(|k| store.get("/pods", k))
        .filter(|p| orphan_tracked(&p.value, job_of))
        .map(|p| {
            (
                str_at(&p.value, "/metadata/namespace").to_owned(),
                str_at(&p.value, "/metadata/name").to_owned(),
            )
        })
        .collect()
}

/// One pass: orphaned Pods released, every Job synced once; the next deadline of a running Job.
async fn pass(shared: &Arc<Shared>, recorder: &Recorder, clock: &Clock) -> Option<i64> {
    let (observed, orphans) = {
        let store = shared.store.lock();
        (observe(&store), orphans(&store))
    };
    for (ns, name) in orphans {
        let body = json!({"metadata": {
            "$deleteFromPrimitiveList/finalizers": [TRACKING_FINALIZER]
        }});
        let path = format!("{}/{name}", collection("v1", &ns, "pods"));
        requests::strategic_patch(shared, &path, &body).await;
    }
    let mut next: Option<i64> = None;
    for (job, pods) in observed {
        let mut failed = false;
        for action in plan(&job, &pods, clock.now()) {
            // After a refused write only the status is still written, as `syncJob` does.
            if failed && !matches!(action, Action::WriteStatus(_)) {
                continue;
            }
            failed |= !execute(shared, recorder, &job, &action).await;
        }
        if let Some(d) = deadline(&job)
            && d > clock.now()
        {
            next = Some(next.map_or(d, |n| n.min(d)));
        }
    }
    next
}

/// Runs the controller until the server is gone.
pub(super) async fn run(shared: Weak<Shared>) {
    super::run_timed(shared, |shared, recorder, clock| {
        Box::pin(pass(shared, recorder, clock))
    })
    .await;
}

#[cfg(test)]
mod tests;
