//! apps/v1 workload defaults, as kube-apiserver's apps/v1 defaulters set them when a request is
//! decoded (`SetDefaults_Deployment`, `_ReplicaSet`, `_StatefulSet`, `_DaemonSet`), plus the
//! defaults of their pod templates.

use serde_json::{Map, Value, json};

use crate::defaults::json::{existing, items, object, or_insert, or_insert_str};
use crate::defaults::pod;

use crate::registry::ResourceDef;
use crate::registry::rest::{Generation, Strategy};
use crate::store::Store;
use crate::validation::{self, field::FieldError};

fn template(spec: &mut Map<String, Value>) {
    if let Some(t) = object(spec, "template") {
        pod::pod_template(t);
    }
}

/// A rolling update's `maxUnavailable` and `maxSurge`, when the strategy is a rolling update.
fn rolling_update(strategy: &mut Map<String, Value>, max_unavailable: Value, max_surge: Value) {
    or_insert_str(strategy, "type", "RollingUpdate");
    if strategy.get("type").and_then(Value::as_str) != Some("RollingUpdate") {
        return;
    }
    if let Some(r) = object(strategy, "rollingUpdate") {
        or_insert(r, "maxUnavailable", max_unavailable);
        or_insert(r, "maxSurge", max_surge);
    }
}

/// Fills the defaults of the workload `kind`; other kinds are left alone.
pub(crate) fn workload(kind: &str, obj: &mut Map<String, Value>) {
    let Some(spec) = object(obj, "spec") else {
        return;
    };
    match kind {
        "Deployment" => {
            or_insert(spec, "replicas", json!(1));
            if let Some(s) = object(spec, "strategy") {
                rolling_update(s, json!("25%"), json!("25%"));
            }
            or_insert(spec, "revisionHistoryLimit", json!(10));
            or_insert(spec, "progressDeadlineSeconds", json!(600));
        }
        "ReplicaSet" => or_insert(spec, "replicas", json!(1)),
        "DaemonSet" => {
            if let Some(s) = object(spec, "updateStrategy") {
                rolling_update(s, json!(1), json!(0));
            }
            or_insert(spec, "revisionHistoryLimit", json!(10));
        }
        "StatefulSet" => {
            or_insert_str(spec, "podManagementPolicy", "OrderedReady");
            if let Some(s) = object(spec, "updateStrategy") {
                if s.get("type").is_none_or(|t| t.is_null() || t == "") {
                    s.insert("type".into(), json!("RollingUpdate"));
                    object(s, "rollingUpdate");
                }
                if s.get("type").and_then(Value::as_str) == Some("RollingUpdate")
                    && let Some(r) = existing(s, "rollingUpdate")
                {
                    or_insert(r, "partition", json!(0));
                }
            }
            if let Some(p) = object(spec, "persistentVolumeClaimRetentionPolicy") {
                or_insert_str(p, "whenDeleted", "Retain");
                or_insert_str(p, "whenScaled", "Retain");
            }
            or_insert(spec, "replicas", json!(1));
            or_insert(spec, "revisionHistoryLimit", json!(10));
            for claim in items(spec, "volumeClaimTemplates") {
                if let Some(s) = object(claim, "spec") {
                    pod::persistent_volume_claim_spec(s);
                }
                if let Some(status) = object(claim, "status") {
                    or_insert_str(status, "phase", "Pending");
                }
            }
        }
        _ => return,
    }
    template(spec);
}

/// A new workload's status: the zero status kube-apiserver's strategies reset it to, as Go
/// encodes it (the counters without `omitempty` stay, as `0`).
pub(crate) fn prepare_for_create(kind: &str, obj: &mut Map<String, Value>) {
    let status = match kind {
        "StatefulSet" => json!({"replicas": 0, "availableReplicas": 0}),
        "ReplicaSet" => json!({"replicas": 0}),
        "DaemonSet" => json!({"currentNumberScheduled": 0, "numberMisscheduled": 0,
                              "desiredNumberScheduled": 0, "numberReady": 0}),
        _ => json!({}),
    };
    obj.insert("status".into(), status);
}

/// The annotation apps/v1 DaemonSets carry their internal `spec.templateGeneration` in.
const TEMPLATE_GENERATION: &str = "deprecated.daemonset.template.generation";

/// Sets a DaemonSet's template generation annotation.
fn set_template_generation(obj: &mut Map<String, Value>, generation: i64) {
    let meta = crate::meta::metadata_mut(obj);
    let annotations = meta.entry("annotations").or_insert_with(|| json!({}));
    if !annotations.is_object() {
        *annotations = json!({});
    }
    if let Some(a) = annotations.as_object_mut() {
        a.insert(TEMPLATE_GENERATION.into(), json!(generation.to_string()));
    }
}

fn template_generation(obj: &Value) -> i64 {
    obj.pointer("/metadata/annotations")
        .and_then(|a| a.get(TEMPLATE_GENERATION))
        .and_then(Value::as_str)
        .and_then(|g| g.parse().ok())
        .unwrap_or(0)
}

/// The strategy of an apps/v1 workload (`kind`): its defaults, an empty status on create, the
/// selector and template rules, and the selector fixed once set.
pub(crate) struct WorkloadStrategy {
    kind: &'static str,
}

/// Deployments.
pub(crate) static DEPLOYMENT: WorkloadStrategy = WorkloadStrategy { kind: "Deployment" };
/// ReplicaSets.
pub(crate) static REPLICA_SET: WorkloadStrategy = WorkloadStrategy { kind: "ReplicaSet" };
/// StatefulSets.
pub(crate) static STATEFUL_SET: WorkloadStrategy = WorkloadStrategy {
    kind: "StatefulSet",
};
/// DaemonSets.
pub(crate) static DAEMON_SET: WorkloadStrategy = WorkloadStrategy { kind: "DaemonSet" };

impl Strategy for WorkloadStrategy {
    fn generation(&self) -> Generation {
        if self.kind == "Deployment" {
            Generation::OnSpecOrAnnotationsChange
        } else {
            Generation::OnSpecChange
        }
    }

    /// The workload defaults; a DaemonSet also always carries its template generation
    /// annotation (the v1 form of the internal field, so its writer owns it).
    fn defaults(&self, obj: &mut Map<String, Value>) {
        workload(self.kind, obj);
        if self.kind == "DaemonSet" {
            let generation = template_generation(&Value::Object(obj.clone()));
            set_template_generation(obj, generation);
        }
    }

    fn prepare_for_create(&self, _store: &Store, _namespace: &str, obj: &mut Map<String, Value>) {
        prepare_for_create(self.kind, obj);
        if self.kind == "DaemonSet" {
            set_template_generation(obj, 1);
        }
    }

    /// A DaemonSet keeps its template generation, bumped when the template changes.
    fn prepare_for_update(&self, old: &Value, new: &mut Map<String, Value>) {
        if self.kind == "DaemonSet" {
            let changed =
                old.pointer("/spec/template") != new.get("spec").and_then(|s| s.get("template"));
            set_template_generation(new, template_generation(old) + i64::from(changed));
        }
    }

    fn validate(&self, _def: &ResourceDef, obj: &Map<String, Value>) -> Vec<FieldError> {
        let mut errs = validation::apps::workload(obj);
        if self.kind == "DaemonSet" {
            errs.extend(validation::apps::daemon_set(obj));
        }
        if self.kind == "StatefulSet" {
            errs.extend(validation::apps::stateful_set(obj));
        }
        errs
    }

    fn validate_update(&self, old: &Value, new: &Map<String, Value>) -> Vec<FieldError> {
        validation::apps::workload_update(self.kind, old, new)
    }

    fn validates_new_state_first(&self) -> bool {
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_deployment_should_get_a_rolling_update_strategy_and_limits() {
        let mut d = json!({"spec": {"template": {"spec": {"containers": [{"name": "a",
            "image": "nginx:1.27"}]}}}});
        workload("Deployment", d.as_object_mut().unwrap());
        let spec = &d["spec"];
        assert_eq!(spec["replicas"], 1);
        assert_eq!(
            spec["strategy"],
            json!({"type": "RollingUpdate",
                   "rollingUpdate": {"maxUnavailable": "25%", "maxSurge": "25%"}})
        );
        assert_eq!(spec["revisionHistoryLimit"], 10);
        assert_eq!(spec["progressDeadlineSeconds"], 600);
        assert_eq!(spec["template"]["spec"]["restartPolicy"], "Always");
    }

    #[test]
    fn a_recreate_deployment_should_get_no_rolling_update() {
        let mut d = json!({"spec": {"strategy": {"type": "Recreate"}}});
        workload("Deployment", d.as_object_mut().unwrap());
        assert_eq!(d["spec"]["strategy"], json!({"type": "Recreate"}));
    }

    #[test]
    fn a_daemon_set_and_a_stateful_set_should_get_their_strategies() {
        let mut ds = json!({"spec": {}});
        workload("DaemonSet", ds.as_object_mut().unwrap());
        assert_eq!(
            ds["spec"]["updateStrategy"],
            json!({"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": 1, "maxSurge": 0}})
        );
        let mut ss = json!({"spec": {}});
        workload("StatefulSet", ss.as_object_mut().unwrap());
        assert_eq!(
            ss["spec"]["updateStrategy"],
            json!({"type": "RollingUpdate", "rollingUpdate": {"partition": 0}})
        );
        assert_eq!(ss["spec"]["podManagementPolicy"], "OrderedReady");
    }
}
