//! kube-controller-manager's ReplicaSet controller (`pkg/controller/replicaset`): one sync of a
//! ReplicaSet
//!
//! 1. reads the Pods of its namespace; the *active* ones (not `Succeeded`/`Failed`, not being
//!    deleted) are claimed (`ClaimPods`): its own selected Pods are kept, its own unselected
//!    ones released, selected orphans adopted (unless the ReplicaSet is being deleted);
//! 2. unless it is being deleted, creates the missing Pods (`<rs>-` + 5 random characters,
//!    the template's labels, annotations and finalizers, its spec, a controller reference) or
//!    deletes the surplus, those kube-controller-manager ranks first (unscheduled, pending, not
//!    ready, cheaper `controller.kubernetes.io/pod-deletion-cost`, more siblings on the same
//!    node, more restarts, newer by a logarithmic age scale, then by uid);
//! 3. writes `status` (`replicas`, `fullyLabeledReplicas`, `readyReplicas`,
//!    `availableReplicas`, `terminatingReplicas`, `observedGeneration`, a `ReplicaFailure`
//!    condition while creating or deleting fails) through `/status` when it changed; the counts
//!    are those of the claimed Pods read in step 1.

use std::cmp::Ordering;
use std::sync::Arc;

use serde_json::{Map, Value, json};

use super::{
    Claim, Client, PODS, REPLICA_SETS, SyncResult, adopt, claim, collection_path, controller_of,
    controller_ref, deleting, int_at, name, namespace, release, selector_matches, str_at, uid,
};

/// At most this many Pods are created or deleted by one sync (`BurstReplicas`).
const BURST_REPLICAS: i64 = 500;

fn terminal(pod: &Value) -> bool {
    matches!(str_at(pod, "/status/phase"), "Succeeded" | "Failed")
}

/// `IsPodReady`: the `Ready` condition is `True`.
pub(crate) fn pod_ready(pod: &Value) -> bool {
    ready_condition(pod).is_some_and(|c| str_at(c, "/status") == "True")
}

fn ready_condition(pod: &Value) -> Option<&Value> {
    pod.pointer("/status/conditions")
        .and_then(Value::as_array)?
        .iter()
        .find(|c| str_at(c, "/type") == "Ready")
}

/// `IsPodAvailable`: ready for at least `min_ready_seconds`.
fn pod_available(pod: &Value, min_ready_seconds: i64, now: i64) -> bool {
    if !pod_ready(pod) {
        return false;
    }
    if min_ready_seconds == 0 {
        return true;
    }
    ready_condition(pod)
        .and_then(|c| c.get("lastTransitionTime"))
        .and_then(Value::as_str)
        .and_then(parse_time)
        .is_some_and(|t| t + min_ready_seconds <= now)
}

/// Seconds since the epoch of an RFC 3339 time (`metav1.Time`).
pub(crate) fn parse_time(s: &str) -> Option<i64> {
    let s = s.strip_suffix('Z')?;
    let (date, time) = s.split_once('T')?;
    let mut d = date.split('-').map(|p| p.parse::<i64>().ok());
    let (y, m, day) = (d.next()??, d.next()??, d.next()??);
    let mut t = time.split(':');
    let h: i64 = t.next()?.parse().ok()?;
    let mi: i64 = t.next()?.parse().ok()?;
    let sec: f64 = t.next()?.parse().ok()?;
    // Days from civil (Howard Hinnant's algorithm).
    let y = if m <= 2 { y - 1 } else { y };
    let era = if y >= 0 { y } else { y - 399 } / 400;
    let yoe = y - era * 400;
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + day - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    let days = era * 146_097 + doe - 719_468;
    Some(days * 86_400 + h * 3600 + mi * 60 + sec as i64)
}

pub(crate) fn unix_now() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs() as i64)
}

fn deletion_cost(pod: &Value) -> i64 {
    pod.pointer("/metadata/annotations/controller.kubernetes.io~1pod-deletion-cost")
        .and_then(Value::as_str)
        .and_then(|s| s.parse::<i32>().ok())
        .map_or(0, i64::from)
}

fn max_restarts(pod: &Value) -> i64 {
    ["initContainerStatuses", "containerStatuses"]
        .iter()
        .filter_map(|k| {
            pod.pointer(&format!("/status/{k}"))
                .and_then(Value::as_array)
        })
        .flatten()
        .map(|c| int_at(c, "/restartCount"))
        .max()
        .unwrap_or(0)
}

fn phase_ordinal(pod: &Value) -> u8 {
    match str_at(pod, "/status/phase") {
        "Unknown" => 1,
        "Running" => 2,
        _ => 0,
    }
}

/// `logarithmicRankDiff`: the difference of the base-2 logarithms of two ages in nanoseconds.
fn log_rank(t: i64, now: i64) -> i64 {
    let d = (now - t) as f64 * 1e9;
    if d > 0.0 { d.log2() as i64 } else { -1 }
}

/// `ActivePodsWithRanks.Less` as an ordering: which Pod goes first when scaling down.
fn rank_order(a: (&Value, usize), b: (&Value, usize), now: i64) -> Ordering {
    let (pa, ra) = a;
    let (pb, rb) = b;
    let na = str_at(pa, "/spec/nodeName");
    let nb = str_at(pb, "/spec/nodeName");
    if na != nb && (na.is_empty() || nb.is_empty()) {
        return if na.is_empty() {
            Ordering::Less
        } else {
            Ordering::Greater
        };
    }
    let o = phase_ordinal(pa).cmp(&phase_ordinal(pb));
    if o != Ordering::Equal {
        return o;
    }
    let o = pod_ready(pa).cmp(&pod_ready(pb));
    if o != Ordering::Equal {
        return o;
    }
    let o = deletion_cost(pa).cmp(&deletion_cost(pb));
    if o != Ordering::Equal {
        return o;
    }
    let o = rb.cmp(&ra);
    if o != Ordering::Equal {
        return o;
    }
    let time = |p: &Value, c: Option<&Value>| {
        c.and_then(|c| c.get("lastTransitionTime"))
            .and_then(Value::as_str)
            .and_then(parse_time)
            .or_else(|| {
                let _ = p;
                None
            })
    };
    if pod_ready(pa) && pod_ready(pb) {
        let ta = time(pa, ready_condition(pa));
        let tb = time(pb, ready_condition(pb));
        if ta != tb {
            return newer_first(ta, tb, now, pa, pb);
        }
    }
    let o = max_restarts(pb).cmp(&max_restarts(pa));
    if o != Ordering::Equal {
        return o;
    }
    let ca = parse_time(str_at(pa, "/metadata/creationTimestamp"));
    let cb = parse_time(str_at(pb, "/metadata/creationTimestamp"));
    if ca != cb {
        return newer_first(ca, cb, now, pa, pb);
    }
    Ordering::Equal
}

/// Empty time first, then the newer by logarithmic age buckets, equal buckets by uid.
fn newer_first(ta: Option<i64>, tb: Option<i64>, now: i64, pa: &Value, pb: &Value) -> Ordering {
    match (ta, tb) {
        (None, _) => Ordering::Less,
        (_, None) => Ordering::Greater,
        (Some(a), Some(b)) => {
            let diff = log_rank(a, now) - log_rank(b, now);
            match diff.cmp(&0) {
                Ordering::Equal => uid(pa).cmp(uid(pb)),
                o => o,
            }
        }
    }
}

/// `getPodsToDelete`: the first `diff` of `pods` as ranked for deletion; `related` are the
/// Pods of the ReplicaSet's siblings (itself included), counted per node.
pub(crate) fn pods_to_delete(
    mut pods: Vec<Arc<Value>>,
    related: &[Arc<Value>],
    diff: usize,
    now: i64,
) -> Vec<Arc<Value>> {
    if diff < pods.len() {
        let mut on_node: std::collections::HashMap<&str, usize> = Default::default();
        for p in related {
            if !terminal(p) && !super::deleting(p) {
                *on_node.entry(str_at(p, "/spec/nodeName")).or_default() += 1;
            }
        }
        let ranks: Vec<usize> = pods
            .iter()
            .map(|p| {
                on_node
                    .get(str_at(p, "/spec/nodeName"))
                    .copied()
                    .unwrap_or(0)
            })
            .collect();
        let mut ranked: Vec<(Arc<Value>, usize)> = pods.into_iter().zip(ranks).collect();
        ranked.sort_by(|a, b| rank_order((&a.0, a.1), (&b.0, b.1), now));
        pods = ranked.into_iter().map(|(p, _)| p).collect();
    }
    pods.truncate(diff);
    pods
}

/// The Pod kube-controller-manager creates from a ReplicaSet's template (`GetPodFromTemplate`).
pub(crate) fn pod_from_template(rs: &Value) -> Value {
    let template = rs.pointer("/spec/template").cloned().unwrap_or(json!({}));
    let mut meta = Map::new();
    for k in ["labels", "annotations", "finalizers"] {
        if let Some(v) = template.pointer(&format!("/metadata/{k}"))
            && !v.is_null()
        {
            meta.insert(k.into(), v.clone());
        }
    }
    // `getPodsPrefix`: `<name>-` unless that is no valid generateName prefix.
    let prefix = format!("{}-", name(rs));
    let masked = format!("{}a", name(rs));
    let prefix = if crate::validation::names::dns1123_subdomain(&masked).is_empty() {
        prefix
    } else {
        name(rs).to_owned()
    };
    meta.insert("generateName".into(), json!(prefix));
    meta.insert(
        "ownerReferences".into(),
        json!([controller_ref(rs, "ReplicaSet")]),
    );
    json!({
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": meta,
        "spec": template.get("spec").cloned().unwrap_or(json!({})),
    })
}

/// `calculateStatus` of the ReplicaSet controller.
fn calculate_status(
    rs: &Value,
    pods: &[Arc<Value>],
    terminating: usize,
    manage_error: Option<&super::ApiFailure>,
    now: i64,
) -> Map<String, Value> {
    let mut status = rs
        .get("status")
        .and_then(Value::as_object)
        .cloned()
        .unwrap_or_default();
    let template_labels = rs.pointer("/spec/template/metadata/labels");
    let min_ready = int_at(rs, "/spec/minReadySeconds");
    let mut fully = 0;
    let mut ready = 0;
    let mut available = 0;
    for p in pods {
        let labels = p.pointer("/metadata/labels");
        let all = template_labels.and_then(Value::as_object).is_none_or(|t| {
            t.iter()
                .all(|(k, v)| labels.and_then(|l| l.get(k)) == Some(v))
        });
        if all {
            fully += 1;
        }
        if pod_ready(p) {
            ready += 1;
            if pod_available(p, min_ready, now) {
                available += 1;
            }
        }
    }
    let has_failure = status
        .get("conditions")
        .and_then(Value::as_array)
        .is_some_and(|c| c.iter().any(|c| str_at(c, "/type") == "ReplicaFailure"));
    match manage_error {
        Some(e) if !has_failure => {
            let diff = pods.len() as i64 - int_at(rs, "/spec/replicas");
            let reason = match diff.cmp(&0) {
                Ordering::Less => "FailedCreate",
                Ordering::Greater => "FailedDelete",
                Ordering::Equal => "",
            };
            let mut conditions = status
                .get("conditions")
                .and_then(Value::as_array)
                .cloned()
                .unwrap_or_default();
            conditions.push(json!({
                "type": "ReplicaFailure",
                "status": "True",
                "lastTransitionTime": super::now(),
                "reason": reason,
                "message": e.message,
            }));
            status.insert("conditions".into(), Value::Array(conditions));
        }
        None if has_failure => {
            let kept: Vec<Value> = status
                .get("conditions")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .filter(|c| str_at(c, "/type") != "ReplicaFailure")
                .cloned()
                .collect();
            if kept.is_empty() {
                status.remove("conditions");
            } else {
                status.insert("conditions".into(), Value::Array(kept));
            }
        }
        _ => {}
    }
    set_count(&mut status, "replicas", pods.len() as i64, true);
    set_count(&mut status, "fullyLabeledReplicas", fully, false);
    set_count(&mut status, "readyReplicas", ready, false);
    set_count(&mut status, "availableReplicas", available, false);
    status.insert("terminatingReplicas".into(), json!(terminating));
    status
}

/// Sets an `int32` status field as Go's JSON writes it (`omitempty` drops a zero).
pub(crate) fn set_count(status: &mut Map<String, Value>, key: &str, n: i64, always: bool) {
    if n == 0 && !always {
        status.remove(key);
    } else {
        status.insert(key.into(), json!(n));
    }
}

/// One sync of the ReplicaSet stored at `key`.
pub(crate) async fn sync(client: &Client, key: &str) -> SyncResult {
    let Some(rs) = client.current(REPLICA_SETS, key) else {
        return Ok(());
    };
    let ns = namespace(&rs).to_owned();
    let rs_path = format!(
        "{}/{}",
        collection_path(&ns, "apps/v1", "replicasets"),
        name(&rs)
    );
    let pods_path = collection_path(&ns, "v1", "pods");
    let selector = rs.pointer("/spec/selector");
    let all_pods = client.list(PODS, &ns);
    let selected = |p: &Value| selector_matches(selector, p.pointer("/metadata/labels"));
    let terminating = all_pods
        .iter()
        .filter(|p| !terminal(p) && deleting(p))
        .filter(|p| {
            controller_of(p)
                .and_then(|r| r.get("uid"))
                .and_then(Value::as_str)
                == Some(uid(&rs))
                && selected(p)
        })
        .count();
    let mut claimed = Vec::new();
    let mut claim_error = None;
    for pod in all_pods.iter().filter(|p| !terminal(p) && !deleting(p)) {
        let path = format!("{pods_path}/{}", name(pod));
        match claim(&rs, pod, selected(pod)) {
            Claim::Owned => claimed.push(pod.clone()),
            Claim::Release => {
                if let Err(e) = release(client, &rs, pod, &path).await {
                    claim_error.get_or_insert(e);
                }
            }
            Claim::Adopt => match adopt(client, &rs, "ReplicaSet", &rs_path, pod, &path).await {
                Ok(true) => claimed.push(pod.clone()),
                Ok(false) => {}
                Err(e) => {
                    claim_error.get_or_insert(e);
                }
            },
            Claim::Ignore => {}
        }
    }
    if let Some(e) = claim_error {
        return Err(e);
    }
    let manage_error = if deleting(&rs) {
        None
    } else {
        manage_replicas(client, &rs, &claimed, &pods_path)
            .await
            .err()
    };
    let now = super::replica_set::unix_now();
    let new_status = calculate_status(&rs, &claimed, terminating, manage_error.as_ref(), now);
    let old_status = rs.get("status").and_then(Value::as_object);
    let same = |k: &str| {
        old_status
            .and_then(|s| s.get(k))
            .and_then(Value::as_i64)
            .unwrap_or(0)
            == new_status.get(k).and_then(Value::as_i64).unwrap_or(0)
    };
    let unchanged = [
        "replicas",
        "fullyLabeledReplicas",
        "readyReplicas",
        "availableReplicas",
    ]
    .iter()
    .all(|k| same(k))
        && int_at(&rs, "/metadata/generation") == int_at(&rs, "/status/observedGeneration")
        && old_status.and_then(|s| s.get("conditions")) == new_status.get("conditions")
        && old_status.and_then(|s| s.get("terminatingReplicas"))
            == new_status.get("terminatingReplicas");
    if !unchanged {
        let mut status = new_status;
        set_count(
            &mut status,
            "observedGeneration",
            int_at(&rs, "/metadata/generation"),
            false,
        );
        let mut body = (*rs).clone();
        body["status"] = Value::Object(status);
        client.update(&format!("{rs_path}/status"), &body).await?;
    }
    match manage_error {
        Some(e) => Err(e),
        None => Ok(()),
    }
}

/// `manageReplicas`: creates the missing Pods or deletes the surplus.
async fn manage_replicas(
    client: &Client,
    rs: &Arc<Value>,
    pods: &[Arc<Value>],
    pods_path: &str,
) -> SyncResult {
    let want = int_at(rs, "/spec/replicas");
    let diff = pods.len() as i64 - want;
    if diff < 0 {
        let missing = (-diff).min(BURST_REPLICAS);
        let labels_empty = rs
            .pointer("/spec/template/metadata/labels")
            .and_then(Value::as_object)
            .is_none_or(|m| m.is_empty());
        if labels_empty {
            return Err(super::ApiFailure {
                code: 0,
                message: "unable to create pods, no labels".into(),
            });
        }
        let pod = pod_from_template(rs);
        for _ in 0..missing {
            match client.create(pods_path, &pod).await {
                Ok(_) => {}
                // The namespace is going away: nothing to report.
                Err(e) if e.code == 403 && e.message.contains("because it is being terminated") => {
                    return Ok(());
                }
                Err(e) => return Err(e),
            }
        }
    } else if diff > 0 {
        let surplus = diff.min(BURST_REPLICAS) as usize;
        let related = related_pods(client, rs);
        let victims = pods_to_delete(pods.to_vec(), &related, surplus, unix_now());
        let mut first_error = None;
        for p in victims {
            match client.delete(&format!("{pods_path}/{}", name(&p))).await {
                Ok(_) => {}
                Err(e) if e.code == 404 => {}
                Err(e) => {
                    first_error.get_or_insert(e);
                }
            }
        }
        if let Some(e) = first_error {
            return Err(e);
        }
    }
    Ok(())
}

/// `getIndirectlyRelatedPods`: the Pods controlled by the ReplicaSets that share this one's
/// controller (or by this one alone when it has none).
fn related_pods(client: &Client, rs: &Value) -> Vec<Arc<Value>> {
    let ns = namespace(rs);
    let owner = controller_of(rs)
        .and_then(|r| r.get("uid"))
        .and_then(Value::as_str);
    let siblings: Vec<String> = match owner {
        Some(owner) => client
            .list(REPLICA_SETS, ns)
            .iter()
            .filter(|s| {
                controller_of(s)
                    .and_then(|r| r.get("uid"))
                    .and_then(Value::as_str)
                    == Some(owner)
            })
            .map(|s| uid(s).to_owned())
            .collect(),
        None => vec![uid(rs).to_owned()],
    };
    client
        .list(PODS, ns)
        .into_iter()
        .filter(|p| {
            controller_of(p)
                .and_then(|r| r.get("uid"))
                .and_then(Value::as_str)
                .is_some_and(|u| siblings.iter().any(|s| s == u))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pod(name: &str, created: &str, edit: impl FnOnce(&mut Value)) -> Arc<Value> {
        let mut p = json!({"metadata": {"name": name, "uid": format!("uid-{name}"), "creationTimestamp": created}, "spec": {}, "status": {"phase": "Pending"}});
        edit(&mut p);
        Arc::new(p)
    }

    #[test]
    fn times_should_parse_as_seconds_since_the_epoch() {
        assert_eq!(parse_time("1970-01-01T00:00:00Z"), Some(0));
        assert_eq!(parse_time("2026-11-27T16:05:29Z"), Some(1_795_795_529));
        assert_eq!(parse_time("nonsense"), None);
    }

    #[test]
    fn scale_down_should_delete_unscheduled_then_newer_pods_first() {
        let now = parse_time("2026-01-01T12:00:00Z").unwrap_or(0);
        let old = pod("old", "2026-01-01T00:00:00Z", |_| {});
        let new = pod("new", "2026-01-01T11:59:00Z", |_| {});
        let running = pod("running", "2026-01-01T11:59:50Z", |p| {
            p["spec"]["nodeName"] = json!("n1");
            p["status"]["phase"] = json!("Running");
        });
        let cheap = pod("cheap", "2026-01-01T00:00:00Z", |p| {
            p["metadata"]["annotations"] =
                json!({"controller.kubernetes.io/pod-deletion-cost": "-5"});
        });
        let all = vec![running.clone(), old.clone(), new.clone(), cheap.clone()];
        let first = pods_to_delete(all.clone(), &all, 3, now);
        let names: Vec<&str> = first.iter().map(|p| name(p)).collect();
        assert_eq!(names, ["cheap", "new", "old"]);
        // Deleting all needs no ranking.
        assert_eq!(pods_to_delete(all.clone(), &all, 4, now).len(), 4);
    }

    #[test]
    fn pods_should_come_from_the_template_with_a_controller_reference() {
        let rs = json!({"metadata": {"name": "web-abc", "namespace": "n", "uid": "u"},
            "spec": {"template": {"metadata": {"labels": {"app": "web"}, "annotations": {"a": "b"}},
            "spec": {"containers": [{"name": "c", "image": "i"}]}}}});
        let p = pod_from_template(&rs);
        assert_eq!(p["metadata"]["generateName"], "web-abc-");
        assert_eq!(p["metadata"]["labels"], json!({"app": "web"}));
        assert_eq!(p["metadata"]["annotations"], json!({"a": "b"}));
        assert_eq!(
            p["metadata"]["ownerReferences"],
            json!([{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "web-abc", "uid": "u", "controller": true, "blockOwnerDeletion": true}])
        );
        assert_eq!(p["spec"]["containers"][0]["name"], "c");
    }
}
