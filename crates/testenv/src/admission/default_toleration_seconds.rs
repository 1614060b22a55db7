//! The `DefaultTolerationSeconds` admission plugin: a Pod that does not tolerate the
//! `not-ready` and `unreachable` `NoExecute` taints tolerates them for 300 s. As
//! kube-apiserver's plugin, it acts on creates and on updates (a PUT, patch or apply whose Pod
//! lacks the tolerations gets them back before the update is validated), never on subresources.

use serde_json::{Map, Value, json};

use super::{Attributes, Plugin};
use crate::defaults::json::object;
use crate::status::ApiResult;

const NOT_READY: &str = "node.kubernetes.io/not-ready";
const UNREACHABLE: &str = "node.kubernetes.io/unreachable";

/// The plugin.
pub(super) struct DefaultTolerationSeconds;

impl Plugin for DefaultTolerationSeconds {
    fn name(&self) -> &'static str {
        "DefaultTolerationSeconds"
    }

    fn admit_create(&self, a: &Attributes<'_>, obj: &mut Map<String, Value>) -> ApiResult<()> {
        admit(a, obj);
        Ok(())
    }

    fn admit_update(
        &self,
        a: &Attributes<'_>,
        _old: &Value,
        obj: &mut Map<String, Value>,
    ) -> ApiResult<()> {
        admit(a, obj);
        Ok(())
    }
}

fn admit(a: &Attributes<'_>, obj: &mut Map<String, Value>) {
    if a.is_core("Pod")
        && a.subresource.is_none()
        && let Some(spec) = object(obj, "spec")
    {
        default_toleration_seconds(spec);
    }
}

/// Whether an existing toleration already tolerates `key`'s `NoExecute` taint: its key is
/// `key` or empty (whatever its operator, as the plugin checks) and its effect `NoExecute` or
/// empty.
fn tolerates(tolerations: &[Value], key: &str) -> bool {
    tolerations.iter().any(|t| {
        let t_key = t.get("key").and_then(Value::as_str).unwrap_or_default();
        let effect = t.get("effect").and_then(Value::as_str).unwrap_or_default();
        (t_key == key || t_key.is_empty()) && (effect.is_empty() || effect == "NoExecute")
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

#[cfg(test)]
mod tests {
    use super::*;

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
