//! The `Priority` admission plugin: a Pod's `priority` from its `priorityClassName` (the
//! system classes; 0 without one) and `preemptionPolicy` `PreemptLowerPriority`. On an update
//! (never a subresource) it keeps the stored Pod's `priority` and `preemptionPolicy` when the
//! new one lacks them, as kube-apiserver's plugin does, so only other changes reach the update
//! validation's whole-spec diff.

use serde_json::{Map, Value, json};

use super::{Attributes, Plugin};
use crate::defaults::json::{object, or_insert};
use crate::status::ApiResult;

/// The plugin.
pub(super) struct Priority;

impl Plugin for Priority {
    fn name(&self) -> &'static str {
        "Priority"
    }

    fn admit_create(&self, a: &Attributes<'_>, obj: &mut Map<String, Value>) -> ApiResult<()> {
        if a.is_core("Pod")
            && let Some(spec) = object(obj, "spec")
        {
            priority(spec);
        }
        Ok(())
    }

    fn admit_update(
        &self,
        a: &Attributes<'_>,
        old: &Value,
        obj: &mut Map<String, Value>,
    ) -> ApiResult<()> {
        if a.is_core("Pod")
            && a.subresource.is_none()
            && let Some(spec) = object(obj, "spec")
        {
            for key in ["priority", "preemptionPolicy"] {
                if spec.get(key).is_none_or(Value::is_null)
                    && let Some(v) = old
                        .pointer(&format!("/spec/{key}"))
                        .filter(|v| !v.is_null())
                {
                    spec.insert(key.into(), v.clone());
                }
            }
        }
        Ok(())
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
