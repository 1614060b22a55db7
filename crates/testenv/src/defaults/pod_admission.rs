//! What kube-apiserver's default admission plugins and the Pod strategy set on a new Pod after
//! the field manager (so no manager owns it):
//! - `ServiceAccount`: `serviceAccountName` defaults to `default`; when that ServiceAccount
//!   exists and the token is automounted, a projected `kube-api-access-<random>` volume (token,
//!   `kube-root-ca.crt`, namespace) mounted read-only in every container;
//! - `DefaultTolerationSeconds`: 300 s `NoExecute` tolerations of `not-ready` and `unreachable`;
//! - `Priority`: priority 0 and `PreemptLowerPriority` without a priority class;
//! - `PrepareForCreate`: status `Pending` with the pod's QoS class.
//!
//! kcr-testenv differs in one way: a Pod whose ServiceAccount does not exist is admitted without
//! the token volume, where kube-apiserver refuses it with 403 (no ServiceAccount controller
//! creates `default` in kcr-testenv's namespaces).

use serde_json::{Map, Value, json};

use super::json::{items, object, or_insert};
use crate::meta::random_suffix;
use crate::store::{Store, object_key};

const TOKEN_MOUNT_PATH: &str = "/var/run/secrets/kubernetes.io/serviceaccount";
const NOT_READY: &str = "node.kubernetes.io/not-ready";
const UNREACHABLE: &str = "node.kubernetes.io/unreachable";

/// Whether the pod's token is mounted: the pod's setting, else its ServiceAccount's, else yes.
fn automount(spec: &Map<String, Value>, account: &Value) -> bool {
    spec.get("automountServiceAccountToken")
        .and_then(Value::as_bool)
        .or_else(|| {
            account
                .get("automountServiceAccountToken")
                .and_then(Value::as_bool)
        })
        .unwrap_or(true)
}

fn has_token_mount(c: &Value) -> bool {
    c.get("volumeMounts")
        .and_then(Value::as_array)
        .is_some_and(|ms| {
            ms.iter()
                .any(|m| m.get("mountPath").and_then(Value::as_str) == Some(TOKEN_MOUNT_PATH))
        })
}

fn service_account(store: &Store, namespace: &str, spec: &mut Map<String, Value>) {
    let name = match spec.get("serviceAccountName").and_then(Value::as_str) {
        Some(n) if !n.is_empty() => n.to_owned(),
        _ => match spec.get("serviceAccount").and_then(Value::as_str) {
            Some(n) if !n.is_empty() => n.to_owned(),
            _ => "default".to_owned(),
        },
    };
    spec.insert("serviceAccountName".into(), json!(name));
    spec.insert("serviceAccount".into(), json!(name));
    let Some(account) = store.get("/serviceaccounts", &object_key(Some(namespace), &name)) else {
        return;
    };
    if !automount(spec, &account.value) {
        return;
    }
    let all_mounted = ["containers", "initContainers"].iter().all(|list| {
        spec.get(*list)
            .and_then(Value::as_array)
            .is_none_or(|cs| cs.iter().all(has_token_mount))
    });
    if all_mounted {
        return;
    }
    let volume_name = format!("kube-api-access-{}", random_suffix());
    let volume = json!({
        "name": volume_name,
        "projected": {
            "sources": [
                {"serviceAccountToken": {"expirationSeconds": 3607, "path": "token"}},
                {"configMap": {"name": "kube-root-ca.crt", "items": [{"key": "ca.crt", "path": "ca.crt"}]}},
                {"downwardAPI": {"items": [{"path": "namespace", "fieldRef": {"apiVersion": "v1", "fieldPath": "metadata.namespace"}}]}}
            ],
            "defaultMode": 420
        }
    });
    let volumes = spec.entry("volumes").or_insert_with(|| json!([]));
    if let Some(v) = volumes.as_array_mut() {
        v.push(volume);
    }
    for list in ["initContainers", "containers"] {
        for c in items(spec, list) {
            if has_token_mount(&Value::Object(c.clone())) {
                continue;
            }
            let mounts = c.entry("volumeMounts").or_insert_with(|| json!([]));
            if let Some(m) = mounts.as_array_mut() {
                m.push(
                    json!({"name": volume_name, "readOnly": true, "mountPath": TOKEN_MOUNT_PATH}),
                );
            }
        }
    }
}

/// Whether an existing toleration already tolerates `key`'s `NoExecute` taint.
fn tolerates(tolerations: &[Value], key: &str) -> bool {
    tolerations.iter().any(|t| {
        let t_key = t.get("key").and_then(Value::as_str).unwrap_or_default();
        let effect = t.get("effect").and_then(Value::as_str).unwrap_or_default();
        let exists = t.get("operator").and_then(Value::as_str) == Some("Exists");
        (t_key == key || (t_key.is_empty() && exists))
            && (effect.is_empty() || effect == "NoExecute")
    })
}

fn default_toleration_seconds(spec: &mut Map<String, Value>) {
    let existing: Vec<Value> = spec
        .get("tolerations")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    let mut added = Vec::new();
    for key in [NOT_READY, UNREACHABLE] {
        if !tolerates(&existing, key) {
            added.push(json!({"key": key, "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 300}));
        }
    }
    if added.is_empty() {
        return;
    }
    let list = spec.entry("tolerations").or_insert_with(|| json!([]));
    if let Some(l) = list.as_array_mut() {
        l.extend(added);
    }
}

fn priority(spec: &mut Map<String, Value>) {
    let value = match spec.get("priorityClassName").and_then(Value::as_str) {
        Some("system-node-critical") => 2_000_001_000,
        Some("system-cluster-critical") => 2_000_000_000,
        _ => 0,
    };
    or_insert(spec, "priority", json!(value));
    or_insert(spec, "preemptionPolicy", json!("PreemptLowerPriority"));
}

/// The QoS class of a pod spec: `Guaranteed` when every container limits CPU and memory and
/// requests what it limits, `BestEffort` when none requests or limits either, else `Burstable`.
/// (Quantities are compared as written.)
pub(crate) fn qos_class(spec: &Map<String, Value>) -> &'static str {
    let mut any = false;
    let mut guaranteed = true;
    for list in ["initContainers", "containers"] {
        for c in spec
            .get(list)
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            let of = |k: &str| {
                c.pointer(&format!("/resources/{k}"))
                    .and_then(Value::as_object)
                    .cloned()
                    .unwrap_or_default()
            };
            let (requests, limits) = (of("requests"), of("limits"));
            for r in ["cpu", "memory"] {
                let request = requests.get(r).filter(|q| !is_zero(q));
                let limit = limits.get(r).filter(|q| !is_zero(q));
                any |= request.is_some() || limit.is_some();
                if limit.is_none() || request.is_some_and(|q| Some(q) != limit) {
                    guaranteed = false;
                }
            }
        }
    }
    match (any, guaranteed) {
        (false, _) => "BestEffort",
        (true, true) => "Guaranteed",
        (true, false) => "Burstable",
    }
}

/// Whether a quantity is zero (`0`, `"0"`, `"0m"`, `"0.0Gi"`).
fn is_zero(q: &Value) -> bool {
    match q {
        Value::Number(n) => n.as_f64() == Some(0.0),
        Value::String(s) => {
            let number: String = s
                .chars()
                .take_while(|c| c.is_ascii_digit() || matches!(c, '.' | '+' | '-'))
                .filter(char::is_ascii_digit)
                .collect();
            !number.is_empty() && number.chars().all(|c| c == '0')
        }
        _ => false,
    }
}

/// Admits a new Pod in `namespace` and sets its initial status.
pub(super) fn prepare_for_create(store: &Store, namespace: &str, obj: &mut Map<String, Value>) {
    if let Some(spec) = object(obj, "spec") {
        service_account(store, namespace, spec);
        default_toleration_seconds(spec);
        priority(spec);
    }
    let qos = obj
        .get("spec")
        .and_then(Value::as_object)
        .map_or("BestEffort", qos_class);
    obj.insert(
        "status".into(),
        json!({"phase": "Pending", "qosClass": qos}),
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_qos_class_should_follow_requests_and_limits() {
        let spec = |r: Value| {
            json!({"containers": [{"name": "a", "resources": r}]})
                .as_object()
                .cloned()
                .unwrap()
        };
        assert_eq!(qos_class(&spec(json!({}))), "BestEffort");
        assert_eq!(
            qos_class(&spec(json!({"limits": {"cpu": "1", "memory": "1Gi"},
                                   "requests": {"cpu": "1", "memory": "1Gi"}}))),
            "Guaranteed"
        );
        assert_eq!(
            qos_class(&spec(json!({"requests": {"cpu": "1"}}))),
            "Burstable"
        );
    }

    #[test]
    fn existing_tolerations_should_not_be_doubled() {
        let mut spec = json!({"tolerations": [{"operator": "Exists"}]})
            .as_object()
            .cloned()
            .unwrap();
        default_toleration_seconds(&mut spec);
        assert_eq!(spec["tolerations"].as_array().unwrap().len(), 1);
        let mut spec = Map::new();
        default_toleration_seconds(&mut spec);
        assert_eq!(spec["tolerations"].as_array().unwrap().len(), 2);
    }
}
