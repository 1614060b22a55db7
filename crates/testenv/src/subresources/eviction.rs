//! `pods/<name>/eviction` (`policy/v1` Eviction): deletes the Pod, unless the
//! PodDisruptionBudget that covers it allows no disruption (`429 TooManyRequests`), as
//! kube-apiserver's eviction registry decides:
//!
//! - a Pod that is `Pending`, `Succeeded`, `Failed` or already terminating is deleted without
//!   looking at budgets;
//! - more than one matching budget is a `500`;
//! - a budget whose `status.observedGeneration` is behind its `generation` (no disruption
//!   controller has seen it: kcr-testenv runs none, so a test sets the budget's `status`) is a
//!   `429`, as is one with `status.disruptionsAllowed` 0;
//! - a Pod that is not Ready is deleted without spending the budget when the budget is healthy
//!   (`IfHealthyBudget`, the default) or allows it (`unhealthyPodEvictionPolicy: AlwaysAllow`);
//! - otherwise `disruptionsAllowed` is decremented and the Pod is recorded in
//!   `status.disruptedPods` before it is deleted.
//!
//! The eviction's `deleteOptions` (preconditions, `dryRun`) apply to the deletion.

use bytes::Bytes;
use serde_json::{Value, json};

use crate::endpoints::Target;
use crate::meta::{self, meta_str, metadata_mut};
use crate::registry::generic;
use crate::selector::LabelSelector;
use crate::server::{Request, Shared};
use crate::status::{ApiError, ApiResult};
use crate::store::{EventType, Store, object_key};

const PDBS: &str = "policy/poddisruptionbudgets";

fn too_many_requests(message: String, retry_after: u32) -> ApiError {
    let mut e = ApiError::new(
        429,
        "TooManyRequests",
        "Cannot evict pod as it would violate the pod's disruption budget.",
    )
    .with_details(json!({"causes": [{"reason": "DisruptionBudget", "message": message}]}));
    if retry_after > 0 {
        e.retry_after = Some(retry_after);
    }
    e
}

fn phase(pod: &Value) -> &str {
    pod.pointer("/status/phase")
        .and_then(Value::as_str)
        .unwrap_or_default()
}

fn is_ready(pod: &Value) -> bool {
    pod.pointer("/status/conditions")
        .and_then(Value::as_array)
        .is_some_and(|cs| {
            cs.iter().any(|c| {
                c.get("type").and_then(Value::as_str) == Some("Ready")
                    && c.get("status").and_then(Value::as_str) == Some("True")
            })
        })
}

fn int_at(v: &Value, pointer: &str) -> i64 {
    v.pointer(pointer).and_then(Value::as_i64).unwrap_or(0)
}

/// The budgets in the Pod's namespace whose selector matches it (an empty selector matches
/// nothing).
fn matching_budgets(store: &Store, namespace: &str, pod: &Value) -> Vec<Value> {
    store
        .keys(PDBS, Some(namespace))
        .iter()
        .filter_map(|k| store.get(PDBS, k))
        .filter(|pdb| {
            let selector = pdb
                .value
                .pointer("/spec/selector")
                .cloned()
                .unwrap_or_default();
            let text = super::selector_string(&selector);
            !text.is_empty() && LabelSelector::parse(&text).is_ok_and(|s| s.matches(pod))
        })
        .map(|s| (*s.value).clone())
        .collect()
}

/// Spends one disruption of `pdb` on the Pod `pod_name` (or checks that it could, on a dry run).
fn check_and_decrement(
    shared: &Shared,
    store: &mut Store,
    namespace: &str,
    pod_name: &str,
    mut pdb: Value,
    dry: bool,
) -> ApiResult<()> {
    let name = meta_str(&pdb, "name").unwrap_or_default().to_owned();
    if int_at(&pdb, "/status/observedGeneration") < int_at(&pdb, "/metadata/generation") {
        return Err(too_many_requests(
            format!("The disruption budget {name} is still being processed by the server."),
            10,
        ));
    }
    let allowed = int_at(&pdb, "/status/disruptionsAllowed");
    if allowed < 0 {
        return Err(ApiError::new(
            403,
            "Forbidden",
            format!("poddisruptionbudget.policy {name:?} is forbidden: pdb disruptions allowed is negative"),
        )
        .with_details(json!({"name": name, "group": "policy", "kind": "poddisruptionbudget"})));
    }
    if allowed == 0 {
        return Err(too_many_requests(
            format!(
                "The disruption budget {name} needs {} healthy pods and has {} currently",
                int_at(&pdb, "/status/desiredHealthy"),
                int_at(&pdb, "/status/currentHealthy")
            ),
            0,
        ));
    }
    if dry {
        return Ok(());
    }
    let now = meta::now_rfc3339();
    let observed = int_at(&pdb, "/status/observedGeneration");
    let Some(status) = pdb.get_mut("status").and_then(Value::as_object_mut) else {
        return Err(ApiError::internal("the PodDisruptionBudget has no status"));
    };
    status.insert("disruptionsAllowed".into(), json!(allowed - 1));
    let disrupted = status.entry("disruptedPods").or_insert_with(|| json!({}));
    if let Some(map) = disrupted.as_object_mut() {
        map.insert(pod_name.to_owned(), json!(now));
    } else {
        *disrupted = json!({pod_name: now});
    }
    if allowed - 1 == 0 {
        let condition = json!({
            "type": "DisruptionAllowed",
            "status": "False",
            "observedGeneration": observed,
            "lastTransitionTime": now,
            "reason": "InsufficientPods",
            "message": "",
        });
        let conditions = status.entry("conditions").or_insert_with(|| json!([]));
        if let Some(list) = conditions.as_array_mut() {
            match list
                .iter_mut()
                .find(|c| c.get("type").and_then(Value::as_str) == Some("DisruptionAllowed"))
            {
                Some(c) if c.get("status").and_then(Value::as_str) == Some("False") => {}
                Some(c) => *c = condition,
                None => list.push(condition),
            }
        }
    }
    let Some(def) = store.defs().iter().find(|d| &*d.storage == PDBS).cloned() else {
        return Err(ApiError::internal("PodDisruptionBudgets are not served"));
    };
    if let Some(m) = pdb.as_object_mut() {
        let rv = store.next_rv();
        metadata_mut(m).insert("resourceVersion".into(), json!(rv.to_string()));
    }
    let key = object_key(Some(namespace), &name);
    generic::commit(
        shared,
        store,
        &def,
        Some(namespace),
        &key,
        EventType::Modified,
        pdb,
    );
    Ok(())
}

/// `POST .../pods/<name>/eviction`.
pub(crate) fn create(shared: &Shared, req: &Request, t: &Target) -> ApiResult<(u16, Bytes)> {
    let eviction = super::body_json(req, "Eviction")?;
    let name = t.name.as_deref().unwrap_or_default();
    let namespace = t.namespace.as_deref().unwrap_or_default();
    if meta_str(&eviction, "name") != Some(name) {
        return Err(ApiError::bad_request(
            "name in URL does not match name in Eviction object",
        ));
    }
    let mut options = eviction
        .get("deleteOptions")
        .filter(|o| o.is_object())
        .cloned()
        .unwrap_or_else(|| json!({}));
    let query_dry = req.param("dryRun") == Some("All");
    let body_dry = options
        .get("dryRun")
        .and_then(Value::as_array)
        .is_some_and(|a| !a.is_empty());
    if query_dry && !body_dry {
        options["dryRun"] = json!(["All"]);
    }
    let dry = options
        .get("dryRun")
        .and_then(Value::as_array)
        .is_some_and(|a| a.iter().any(|v| v.as_str() == Some("All")));
    let key = object_key(Some(namespace), name);
    let mut store = shared.store.lock();
    let pod = store
        .get(&t.def.storage, &key)
        .map(|s| (*s.value).clone())
        .ok_or_else(|| ApiError::not_found("", "pods", name))?;
    let terminating = pod.pointer("/metadata/deletionTimestamp").is_some();
    let ignore_budgets = matches!(phase(&pod), "Succeeded" | "Failed" | "Pending") || terminating;
    if !ignore_budgets {
        let budgets = matching_budgets(&store, namespace, &pod);
        if budgets.len() > 1 {
            return Err(ApiError::new(
                500,
                "",
                "This pod has more than one PodDisruptionBudget, which the eviction subresource does not support.",
            ));
        }
        if let Some(pdb) = budgets.into_iter().next() {
            let unhealthy_allowed = !is_ready(&pod)
                && match pdb
                    .pointer("/spec/unhealthyPodEvictionPolicy")
                    .and_then(Value::as_str)
                {
                    Some("AlwaysAllow") => true,
                    _ => {
                        let desired = int_at(&pdb, "/status/desiredHealthy");
                        int_at(&pdb, "/status/currentHealthy") >= desired && desired > 0
                    }
                };
            if !unhealthy_allowed {
                check_and_decrement(shared, &mut store, namespace, name, pdb, dry)?;
            }
        }
    }
    generic::delete_one(shared, &mut store, &t.def, &key, &options, dry)?;
    Ok(super::success())
}
