//! The `ServiceAccount` admission plugin: a Pod's `serviceAccountName` defaults to `default`;
//! when that ServiceAccount exists and the token is automounted, a projected
//! `kube-api-access-<random>` volume (token, `kube-root-ca.crt`, namespace) is mounted
//! read-only in every container. (kcr-testenv admits a Pod whose ServiceAccount does not exist
//! without the volume, where kube-apiserver refuses it with `403`.)

use serde_json::{Map, Value, json};

use super::{Attributes, Plugin};
use crate::defaults::json::{items, object};
use crate::meta::random_suffix;
use crate::status::ApiResult;
use crate::store::{Store, object_key};

const TOKEN_MOUNT_PATH: &str = "/var/run/secrets/kubernetes.io/serviceaccount";

/// The plugin.
pub(super) struct ServiceAccount;

impl Plugin for ServiceAccount {
    fn admit_create(&self, a: &Attributes<'_>, obj: &mut Map<String, Value>) -> ApiResult<()> {
        if a.is_core("Pod")
            && let Some(spec) = object(obj, "spec")
        {
            service_account(a.store, a.namespace, spec);
        }
        Ok(())
    }
}

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
