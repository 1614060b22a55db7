//! `pods/<name>/binding` (`v1` Binding): assigns a Pod to a node, as the scheduler does, with
//! kube-apiserver's checks: the names must agree, the target must be a `Node` with a name, and
//! the Pod must be unassigned, not terminating and without scheduling gates. The Pod gets
//! `spec.nodeName`, the binding's annotations and the `PodScheduled` condition.

use bytes::Bytes;
use serde_json::{Value, json};

use crate::endpoints::Target;
use crate::meta::{self, meta_str, metadata_mut};
use crate::registry::generic;
use crate::server::{Request, Shared};
use crate::status::{ApiError, ApiResult};
use crate::store::{EventType, object_key};

/// `POST .../pods/<name>/binding`.
pub(crate) fn create(shared: &Shared, req: &Request, t: &Target) -> ApiResult<(u16, Bytes)> {
    let binding = super::body_json(req, "Binding")?;
    let name = t.name.as_deref().unwrap_or_default();
    let namespace = t.namespace.as_deref().unwrap_or_default();
    if meta_str(&binding, "name") != Some(name) {
        return Err(ApiError::bad_request(
            "name in URL does not match name in Binding object",
        ));
    }
    let target_kind = binding
        .pointer("/target/kind")
        .and_then(Value::as_str)
        .unwrap_or_default();
    let node = binding
        .pointer("/target/name")
        .and_then(Value::as_str)
        .unwrap_or_default();
    let mut causes = Vec::new();
    if !target_kind.is_empty() && target_kind != "Node" {
        causes.push((
            "target.kind",
            "FieldValueNotSupported",
            format!("Unsupported value: {target_kind:?}: supported values: \"Node\", \"<empty>\""),
        ));
    }
    if node.is_empty() {
        causes.push((
            "target.name",
            "FieldValueRequired",
            "Required value".to_owned(),
        ));
    }
    if !causes.is_empty() {
        return Err(ApiError::invalid("", "Binding", name, &causes));
    }
    let key = object_key(Some(namespace), name);
    let mut store = shared.store.lock();
    let mut pod = store
        .get(&t.def.storage, &key)
        .map(|s| (*s.value).clone())
        .ok_or_else(|| ApiError::not_found("", "pods", name))?;
    let conflict = |why: String| ApiError::conflict("", "pods", name, &why);
    if pod.pointer("/metadata/deletionTimestamp").is_some() {
        return Err(conflict(format!(
            "pod {name} is being deleted, cannot be assigned to a host"
        )));
    }
    if let Some(current) = pod
        .pointer("/spec/nodeName")
        .and_then(Value::as_str)
        .filter(|n| !n.is_empty())
    {
        return Err(conflict(format!(
            "pod {name} is already assigned to node {current:?}"
        )));
    }
    if pod
        .pointer("/spec/schedulingGates")
        .and_then(Value::as_array)
        .is_some_and(|g| !g.is_empty())
    {
        return Err(conflict(format!(
            "pod {name} has non-empty .spec.schedulingGates"
        )));
    }
    if req.param("dryRun") == Some("All") {
        return Ok(super::success());
    }
    let now = meta::now_rfc3339();
    let rv = store.next_rv();
    let Some(obj) = pod.as_object_mut() else {
        return Err(ApiError::internal("the Pod is not an object"));
    };
    if let Some(spec) = obj.get_mut("spec").and_then(Value::as_object_mut) {
        spec.insert("nodeName".into(), json!(node));
    }
    let meta = metadata_mut(obj);
    if let Some(extra) = binding
        .pointer("/metadata/annotations")
        .and_then(Value::as_object)
    {
        let annotations = meta.entry("annotations").or_insert_with(|| json!({}));
        if let Some(a) = annotations.as_object_mut() {
            for (k, v) in extra {
                a.insert(k.clone(), v.clone());
            }
        }
    }
    meta.insert("resourceVersion".into(), json!(rv.to_string()));
    let status = obj.entry("status").or_insert_with(|| json!({}));
    if let Some(status) = status.as_object_mut() {
        let conditions = status.entry("conditions").or_insert_with(|| json!([]));
        if let Some(list) = conditions.as_array_mut() {
            let scheduled = json!({
                "type": "PodScheduled",
                "status": "True",
                "lastProbeTime": null,
                "lastTransitionTime": now,
            });
            match list
                .iter_mut()
                .find(|c| c.get("type").and_then(Value::as_str) == Some("PodScheduled"))
            {
                Some(c) if c.get("status").and_then(Value::as_str) == Some("True") => {}
                Some(c) => *c = scheduled,
                None => list.push(scheduled),
            }
        }
    }
    generic::commit(
        shared,
        &mut store,
        &t.def,
        Some(namespace),
        &key,
        EventType::Modified,
        pod,
    );
    Ok(super::success())
}
