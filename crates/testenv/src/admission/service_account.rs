//! The `ServiceAccount` admission plugin: a Pod's `serviceAccountName` defaults to `default`
//! and must name a ServiceAccount of its namespace (else `403` `error looking up service
//! account <ns>/<name>: serviceaccount "<name>" not found`); when the token is automounted, a
//! projected `kube-api-access-<random>` volume (token, `kube-root-ca.crt`, namespace) is
//! mounted read-only in every container; a Pod without `imagePullSecrets` gets its
//! ServiceAccount's. A mirror Pod (annotation `kubernetes.io/config.mirror`) is left as it is
//! and may reference neither a ServiceAccount, nor a Secret, nor a token projection.
//!
//! kcr-testenv differs in one place on purpose: without kube-controller-manager's
//! ServiceAccounts controller (off by default), no namespace has a `default` ServiceAccount,
//! so kube-apiserver would refuse every Pod that names none; kcr-testenv then admits such a Pod
//! without a token volume. With the controller on it refuses it as kube-apiserver does.

use serde_json::{Map, Value, json};

use super::{Attributes, Plugin};
use crate::defaults::json::{items, object};
use crate::meta::random_suffix;
use crate::status::ApiResult;
use crate::store::object_key;

const TOKEN_MOUNT_PATH: &str = "/var/run/secrets/kubernetes.io/serviceaccount";
const MIRROR: &str = "kubernetes.io/config.mirror";
const DEFAULT: &str = "default";

/// The plugin.
pub(super) struct ServiceAccount;

fn is_mirror(obj: &Map<String, Value>) -> bool {
    obj.get("metadata")
        .and_then(|m| m.get("annotations"))
        .and_then(|a| a.get(MIRROR))
        .is_some()
}

impl Plugin for ServiceAccount {
    fn name(&self) -> &'static str {
        "ServiceAccount"
    }

    fn admit_create(&self, a: &Attributes<'_>, obj: &mut Map<String, Value>) -> ApiResult<()> {
        if !a.is_core("Pod") || is_mirror(obj) {
            return Ok(());
        }
        let Some(spec) = object(obj, "spec") else {
            return Ok(());
        };
        let name = spec
            .get("serviceAccountName")
            .and_then(Value::as_str)
            .filter(|n| !n.is_empty())
            .unwrap_or(DEFAULT)
            .to_owned();
        spec.insert("serviceAccountName".into(), json!(name));
        spec.insert("serviceAccount".into(), json!(name));
        let Some(account) = a
            .store
            .get("/serviceaccounts", &object_key(Some(a.namespace), &name))
        else {
            if name == DEFAULT && !a.service_accounts_controller {
                return Ok(());
            }
            return Err(a.forbidden(&format!(
                "error looking up service account {}/{name}: serviceaccount {name:?} not found",
                a.namespace
            )));
        };
        let account = &account.value;
        if automount(spec, account) {
            mount_token(spec);
        }
        let own = spec
            .get("imagePullSecrets")
            .and_then(Value::as_array)
            .is_some_and(|s| !s.is_empty());
        if !own {
            let secrets: Vec<Value> = account
                .get("imagePullSecrets")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .map(|s| json!({"name": s.get("name").cloned().unwrap_or(json!(""))}))
                .collect();
            if !secrets.is_empty() {
                spec.insert("imagePullSecrets".into(), Value::Array(secrets));
            }
        }
        Ok(())
    }

    fn validate_create(&self, a: &Attributes<'_>, obj: &Map<String, Value>) -> ApiResult<()> {
        if !a.is_core("Pod") || !is_mirror(obj) {
            return Ok(());
        }
        let spec = obj.get("spec").cloned().unwrap_or(json!({}));
        if spec
            .get("serviceAccountName")
            .and_then(Value::as_str)
            .is_some_and(|n| !n.is_empty())
        {
            return Err(a.forbidden("mirror pods may not reference service accounts"));
        }
        if references_secrets(&spec) {
            return Err(a.forbidden("mirror pods may not reference secrets"));
        }
        let projects_token = spec
            .get("volumes")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(|v| v.pointer("/projected/sources").and_then(Value::as_array))
            .flatten()
            .any(|s| s.get("serviceAccountToken").is_some());
        if projects_token {
            return Err(
                a.forbidden("mirror pods may not use service account token volume projection")
            );
        }
        Ok(())
    }
}

/// Whether a pod spec names a Secret: image pull secrets, secret volumes and projections, and
/// containers' secret environment.
fn references_secrets(spec: &Value) -> bool {
    let non_empty = |v: Option<&Value>| v.and_then(Value::as_array).is_some_and(|a| !a.is_empty());
    if non_empty(spec.get("imagePullSecrets")) {
        return true;
    }
    let volumes = spec.get("volumes").and_then(Value::as_array);
    for v in volumes.into_iter().flatten() {
        if v.get("secret").is_some() {
            return true;
        }
        let projected = v.pointer("/projected/sources").and_then(Value::as_array);
        if projected
            .into_iter()
            .flatten()
            .any(|s| s.get("secret").is_some())
        {
            return true;
        }
    }
    ["initContainers", "containers", "ephemeralContainers"]
        .iter()
        .filter_map(|l| spec.get(*l).and_then(Value::as_array))
        .flatten()
        .any(|c| {
            let env_from = c.get("envFrom").and_then(Value::as_array);
            let env = c.get("env").and_then(Value::as_array);
            env_from
                .into_iter()
                .flatten()
                .any(|e| e.get("secretRef").is_some())
                || env
                    .into_iter()
                    .flatten()
                    .any(|e| e.pointer("/valueFrom/secretKeyRef").is_some())
        })
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

/// Mounts the projected token volume in every container that has no token mount yet.
fn mount_token(spec: &mut Map<String, Value>) {
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
