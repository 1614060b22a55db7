//! What kube-controller-manager's `pkg/controller/deployment/util` computes: surge and
//! unavailability bounds, revisions, the annotations a Deployment writes on its ReplicaSets,
//! and the conditions of a Deployment's status.

use std::cmp::Ordering;

use serde_json::{Map, Value, json};

use super::{int_at, name, str_at};

pub(crate) const REVISION: &str = "deployment.kubernetes.io/revision";
pub(crate) const REVISION_HISTORY: &str = "deployment.kubernetes.io/revision-history";
pub(crate) const DESIRED_REPLICAS: &str = "deployment.kubernetes.io/desired-replicas";
pub(crate) const MAX_REPLICAS: &str = "deployment.kubernetes.io/max-replicas";
pub(crate) const HASH_LABEL: &str = "pod-template-hash";
/// The longest `revision-history` annotation kube-controller-manager writes.
const MAX_REV_HISTORY_CHARS: usize = 2000;

/// `spec.replicas` (defaulted to 1 on every stored object).
pub(crate) fn replicas(v: &Value) -> i64 {
    v.pointer("/spec/replicas")
        .and_then(Value::as_i64)
        .unwrap_or(1)
}

pub(crate) fn is_rolling(d: &Value) -> bool {
    str_at(d, "/spec/strategy/type") == "RollingUpdate"
}

/// `GetScaledValueFromIntOrPercent`.
fn scaled(v: Option<&Value>, total: i64, round_up: bool) -> i64 {
    match v {
        Some(Value::Number(n)) => n.as_i64().unwrap_or(0),
        Some(Value::String(s)) => {
            let Some(p) = s.strip_suffix('%').and_then(|p| p.parse::<i64>().ok()) else {
                return s.parse().unwrap_or(0);
            };
            let x = (p * total) as f64 / 100.0;
            if round_up {
                x.ceil() as i64
            } else {
                x.floor() as i64
            }
        }
        _ => 0,
    }
}

/// `ResolveFenceposts`: (surge, unavailable) of a rolling update.
fn fenceposts(d: &Value) -> (i64, i64) {
    let desired = replicas(d);
    let surge = scaled(
        d.pointer("/spec/strategy/rollingUpdate/maxSurge"),
        desired,
        true,
    );
    let mut unavailable = scaled(
        d.pointer("/spec/strategy/rollingUpdate/maxUnavailable"),
        desired,
        false,
    );
    if surge == 0 && unavailable == 0 {
        unavailable = 1;
    }
    (surge, unavailable)
}

/// `MaxSurge`.
pub(crate) fn max_surge(d: &Value) -> i64 {
    if is_rolling(d) { fenceposts(d).0 } else { 0 }
}

/// `MaxUnavailable`.
pub(crate) fn max_unavailable(d: &Value) -> i64 {
    if !is_rolling(d) || replicas(d) == 0 {
        return 0;
    }
    fenceposts(d).1.min(replicas(d))
}

pub(crate) fn annotation<'a>(v: &'a Value, key: &str) -> Option<&'a str> {
    v.pointer("/metadata/annotations")
        .and_then(|a| a.get(key))
        .and_then(Value::as_str)
}

fn annotations_mut(v: &mut Value) -> &mut Map<String, Value> {
    let meta = v
        .as_object_mut()
        .map(crate::meta::metadata_mut)
        .expect("objects are maps");
    let a = meta
        .entry("annotations")
        .or_insert_with(|| Value::Object(Map::new()));
    if !a.is_object() {
        *a = Value::Object(Map::new());
    }
    a.as_object_mut().expect("just made a map")
}

/// `Revision`: the revision annotation as a number (0 when missing or not a number).
pub(crate) fn revision(rs: &Value) -> i64 {
    annotation(rs, REVISION)
        .and_then(|r| r.parse().ok())
        .unwrap_or(0)
}

/// `MaxRevision`.
pub(crate) fn max_revision(rss: &[Value]) -> i64 {
    rss.iter().map(revision).max().unwrap_or(0)
}

/// The template without the `pod-template-hash` label (and without empty label maps).
fn without_hash(t: Option<&Value>) -> Value {
    let mut t = t.cloned().unwrap_or(json!({}));
    if let Some(labels) = t
        .pointer_mut("/metadata/labels")
        .and_then(Value::as_object_mut)
    {
        labels.remove(HASH_LABEL);
        if labels.is_empty()
            && let Some(m) = t.pointer_mut("/metadata").and_then(Value::as_object_mut)
        {
            m.remove("labels");
        }
    }
    if let Some(m) = t.pointer_mut("/metadata").and_then(Value::as_object_mut) {
        m.remove("creationTimestamp");
    }
    t
}

/// `EqualIgnoreHash`: the two pod templates are equal but for the `pod-template-hash` label.
pub(crate) fn equal_ignore_hash(a: Option<&Value>, b: Option<&Value>) -> bool {
    without_hash(a) == without_hash(b)
}

/// `ReplicaSetsByCreationTimestamp`: older first, then by name.
pub(crate) fn by_creation(a: &Value, b: &Value) -> Ordering {
    str_at(a, "/metadata/creationTimestamp")
        .cmp(str_at(b, "/metadata/creationTimestamp"))
        .then_with(|| name(a).cmp(name(b)))
}

/// `ReplicaSetsByRevision`: lower revision first, then by creation.
pub(crate) fn by_revision(a: &Value, b: &Value) -> Ordering {
    let (ra, rb) = (revision(a), revision(b));
    if ra == rb {
        by_creation(a, b)
    } else {
        ra.cmp(&rb)
    }
}

/// `ReplicaSetsBySizeNewer` (`newer`) or `ReplicaSetsBySizeOlder`: larger first, then newer
/// (or older) first.
pub(crate) fn by_size(a: &Value, b: &Value, newer: bool) -> Ordering {
    replicas(b).cmp(&replicas(a)).then_with(|| {
        if newer {
            by_creation(b, a)
        } else {
            by_creation(a, b)
        }
    })
}

/// `SetReplicasAnnotations`: whether anything changed.
pub(crate) fn set_replicas_annotations(rs: &mut Value, desired: i64, max: i64) -> bool {
    let a = annotations_mut(rs);
    let mut changed = false;
    for (k, v) in [(DESIRED_REPLICAS, desired), (MAX_REPLICAS, max)] {
        let v = v.to_string();
        if a.get(k).and_then(Value::as_str) != Some(v.as_str()) {
            a.insert(k.into(), json!(v));
            changed = true;
        }
    }
    changed
}

/// `ReplicasAnnotationsNeedUpdate`.
pub(crate) fn replicas_annotations_need_update(rs: &Value, desired: i64, max: i64) -> bool {
    annotation(rs, DESIRED_REPLICAS) != Some(desired.to_string().as_str())
        || annotation(rs, MAX_REPLICAS) != Some(max.to_string().as_str())
}

/// `GetDesiredReplicasAnnotation`.
pub(crate) fn desired_replicas_annotation(rs: &Value) -> Option<i64> {
    annotation(rs, DESIRED_REPLICAS).and_then(|v| v.parse().ok())
}

/// The Deployment annotations not copied to its ReplicaSets (`skipCopyAnnotation`).
fn skip_copy(key: &str) -> bool {
    matches!(
        key,
        "kubectl.kubernetes.io/last-applied-configuration"
            | REVISION
            | REVISION_HISTORY
            | DESIRED_REPLICAS
            | MAX_REPLICAS
            | "deprecated.deployment.rollback.to"
    )
}

/// `SetNewReplicaSetAnnotations`: the Deployment's annotations copied, the revision raised to
/// `new_revision` (keeping the previous one in `revision-history`), the replicas annotations
/// for a ReplicaSet about to be created. Whether anything changed.
pub(crate) fn set_new_rs_annotations(
    d: &Value,
    rs: &mut Value,
    new_revision: i64,
    exists: bool,
) -> bool {
    let mut changed = false;
    let copied: Vec<(String, Value)> = d
        .pointer("/metadata/annotations")
        .and_then(Value::as_object)
        .into_iter()
        .flatten()
        .filter(|(k, _)| !skip_copy(k))
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    let a = annotations_mut(rs);
    for (k, v) in copied {
        if a.get(&k) != Some(&v) {
            a.insert(k, v);
            changed = true;
        }
    }
    let old = a.get(REVISION).and_then(Value::as_str).map(str::to_owned);
    let old_int = match &old {
        Some(o) => match o.parse::<i64>() {
            Ok(n) => n,
            Err(_) if o.is_empty() => 0,
            Err(_) => return false,
        },
        None => 0,
    };
    if old_int < new_revision {
        a.insert(REVISION.into(), json!(new_revision.to_string()));
        changed = true;
        if let Some(old) = old {
            let history = a
                .get(REVISION_HISTORY)
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_owned();
            if history.is_empty() {
                a.insert(REVISION_HISTORY.into(), json!(old));
            } else {
                let mut revisions: Vec<&str> = history.split(',').collect();
                let mut total = history.len() + old.len() + 1;
                let mut start = 0;
                while total > MAX_REV_HISTORY_CHARS && start < revisions.len() {
                    total -= revisions[start].len() + 1;
                    start += 1;
                }
                if total <= MAX_REV_HISTORY_CHARS {
                    revisions = revisions.split_off(start);
                    revisions.push(&old);
                    a.insert(REVISION_HISTORY.into(), json!(revisions.join(",")));
                }
            }
        }
    }
    if !exists && set_replicas_annotations(rs, replicas(d), replicas(d) + max_surge(d)) {
        changed = true;
    }
    changed
}

/// `SetDeploymentRevision`: whether it changed.
pub(crate) fn set_deployment_revision(d: &mut Value, revision: &str) -> bool {
    let a = annotations_mut(d);
    if a.get(REVISION).and_then(Value::as_str) == Some(revision) {
        return false;
    }
    a.insert(REVISION.into(), json!(revision));
    true
}

/// `NewRSNewReplicas`: the size a Deployment's new ReplicaSet may have now.
pub(crate) fn new_rs_new_replicas(d: &Value, all: &[Value], new_rs: &Value) -> i64 {
    if is_rolling(d) {
        let current: i64 = all.iter().map(replicas).sum();
        let max_total = replicas(d) + max_surge(d);
        if current >= max_total {
            return replicas(new_rs);
        }
        let up = (max_total - current).min(replicas(d) - replicas(new_rs));
        replicas(new_rs) + up
    } else {
        replicas(d)
    }
}

/// `IsSaturated`.
pub(crate) fn is_saturated(d: &Value, rs: Option<&Value>) -> bool {
    let Some(rs) = rs else {
        return false;
    };
    desired_replicas_annotation(rs) == Some(replicas(d))
        && int_at(rs, "/status/availableReplicas") == replicas(d)
        && replicas(rs) == replicas(d)
}

/// `GetReplicaSetProportion`.
pub(crate) fn proportion(rs: &Value, d: &Value, to_add: i64, added: i64) -> i64 {
    if replicas(rs) == 0 || to_add == 0 || to_add == added {
        return 0;
    }
    let fraction = fraction(rs, d);
    let allowed = to_add - added;
    if to_add > 0 {
        fraction.min(allowed)
    } else {
        fraction.max(allowed)
    }
}

/// `getReplicaSetFraction`.
fn fraction(rs: &Value, d: &Value) -> i64 {
    if replicas(d) == 0 {
        return -replicas(rs);
    }
    let deployment_replicas = replicas(d) + max_surge(d);
    let annotated = annotation(rs, MAX_REPLICAS)
        .and_then(|v| v.parse::<i64>().ok())
        .unwrap_or_else(|| int_at(d, "/status/replicas"));
    if annotated == 0 {
        return 0;
    }
    let size = (replicas(rs) * deployment_replicas) as f64 / annotated as f64;
    size.round() as i64 - replicas(rs)
}

// Conditions.

pub(crate) fn condition<'a>(status: &'a Map<String, Value>, kind: &str) -> Option<&'a Value> {
    status
        .get("conditions")
        .and_then(Value::as_array)?
        .iter()
        .find(|c| str_at(c, "/type") == kind)
}

/// `NewDeploymentCondition`, stamped now.
pub(crate) fn new_condition(kind: &str, status: &str, reason: &str, message: String) -> Value {
    let now = super::now();
    json!({
        "type": kind,
        "status": status,
        "lastUpdateTime": now,
        "lastTransitionTime": now,
        "reason": reason,
        "message": message,
    })
}

/// `RemoveDeploymentCondition`.
pub(crate) fn remove_condition(status: &mut Map<String, Value>, kind: &str) {
    if let Some(Value::Array(c)) = status.get_mut("conditions") {
        c.retain(|c| str_at(c, "/type") != kind);
        if c.is_empty() {
            status.remove("conditions");
        }
    }
}

/// `SetDeploymentCondition`: nothing when the status and reason are the same; the transition
/// time kept when the status is; the condition moves to the end.
pub(crate) fn set_condition(status: &mut Map<String, Value>, mut cond: Value) {
    let kind = str_at(&cond, "/type").to_owned();
    if let Some(current) = condition(status, &kind) {
        if str_at(current, "/status") == str_at(&cond, "/status")
            && str_at(current, "/reason") == str_at(&cond, "/reason")
        {
            return;
        }
        if str_at(current, "/status") == str_at(&cond, "/status") {
            cond["lastTransitionTime"] = current
                .get("lastTransitionTime")
                .cloned()
                .unwrap_or(Value::Null);
        }
    }
    let mut kept: Vec<Value> = status
        .get("conditions")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter(|c| str_at(c, "/type") != kind)
        .cloned()
        .collect();
    kept.push(cond);
    status.insert("conditions".into(), Value::Array(kept));
}

/// `HasProgressDeadline`.
pub(crate) fn has_progress_deadline(d: &Value) -> bool {
    d.pointer("/spec/progressDeadlineSeconds")
        .and_then(Value::as_i64)
        .is_some_and(|s| s != i64::from(i32::MAX))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn deployment(replicas: i64, surge: Value, unavailable: Value) -> Value {
        json!({"spec": {"replicas": replicas, "strategy": {"type": "RollingUpdate",
            "rollingUpdate": {"maxSurge": surge, "maxUnavailable": unavailable}}}})
    }

    #[test]
    fn fenceposts_should_round_surge_up_and_unavailable_down() {
        let d = deployment(1, json!("25%"), json!("25%"));
        assert_eq!((max_surge(&d), max_unavailable(&d)), (1, 0));
        let d = deployment(10, json!("25%"), json!("25%"));
        assert_eq!((max_surge(&d), max_unavailable(&d)), (3, 2));
        let d = deployment(0, json!("25%"), json!("25%"));
        assert_eq!((max_surge(&d), max_unavailable(&d)), (0, 0));
        let d = deployment(3, json!(0), json!(0));
        assert_eq!((max_surge(&d), max_unavailable(&d)), (0, 1));
        let d = deployment(2, json!(0), json!(5));
        assert_eq!(max_unavailable(&d), 2);
        let recreate = json!({"spec": {"replicas": 4, "strategy": {"type": "Recreate"}}});
        assert_eq!((max_surge(&recreate), max_unavailable(&recreate)), (0, 0));
    }

    #[test]
    fn a_changed_condition_should_move_to_the_end_and_keep_its_transition_time() {
        let mut status = Map::new();
        set_condition(
            &mut status,
            new_condition("Progressing", "True", "NewReplicaSetCreated", "m".into()),
        );
        status["conditions"][0]["lastTransitionTime"] = json!("t0");
        set_condition(
            &mut status,
            new_condition(
                "Available",
                "False",
                "MinimumReplicasUnavailable",
                "a".into(),
            ),
        );
        set_condition(
            &mut status,
            new_condition("Progressing", "True", "ReplicaSetUpdated", "p".into()),
        );
        let c = status["conditions"].as_array().cloned().unwrap_or_default();
        assert_eq!(c[0]["type"], "Available");
        assert_eq!(c[1]["reason"], "ReplicaSetUpdated");
        assert_eq!(c[1]["lastTransitionTime"], "t0");
        // The same status and reason: nothing changes.
        let before = status.clone();
        set_condition(
            &mut status,
            new_condition("Progressing", "True", "ReplicaSetUpdated", "other".into()),
        );
        assert_eq!(status, before);
    }

    #[test]
    fn a_raised_revision_should_keep_the_old_one_in_the_history() {
        let d = json!({"metadata": {"annotations": {"team": "a", REVISION: "9"}},
            "spec": {"replicas": 2, "strategy": {"type": "Recreate"}}});
        let mut rs = json!({"metadata": {"annotations": {REVISION: "1"}}});
        assert!(set_new_rs_annotations(&d, &mut rs, 3, true));
        assert_eq!(annotation(&rs, REVISION), Some("3"));
        assert_eq!(annotation(&rs, REVISION_HISTORY), Some("1"));
        assert_eq!(annotation(&rs, "team"), Some("a"));
        assert_eq!(annotation(&rs, DESIRED_REPLICAS), None);
        let mut fresh = json!({"metadata": {}});
        assert!(set_new_rs_annotations(&d, &mut fresh, 1, false));
        assert_eq!(annotation(&fresh, DESIRED_REPLICAS), Some("2"));
        assert_eq!(annotation(&fresh, MAX_REPLICAS), Some("2"));
        assert!(!set_new_rs_annotations(&d, &mut fresh, 1, false));
    }

    #[test]
    fn templates_should_compare_without_their_hash_label() {
        let a = json!({"metadata": {"labels": {"app": "x", HASH_LABEL: "abc"}}, "spec": {"c": 1}});
        let b = json!({"metadata": {"labels": {"app": "x"}}, "spec": {"c": 1}});
        assert!(equal_ignore_hash(Some(&a), Some(&b)));
        let c = json!({"metadata": {"labels": {"app": "x"}}, "spec": {"c": 2}});
        assert!(!equal_ignore_hash(Some(&a), Some(&c)));
    }
}
