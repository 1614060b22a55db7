//! The `NamespaceLifecycle` admission plugin: no new object in a namespace that does not exist
//! (`404`) or is being terminated (`403`, with the `NamespaceTerminating` cause).

use serde_json::{Map, Value, json};

use super::{Attributes, Plugin};
use crate::status::{ApiError, ApiResult};

/// The plugin.
pub(super) struct NamespaceLifecycle;

impl Plugin for NamespaceLifecycle {
    fn name(&self) -> &'static str {
        "NamespaceLifecycle"
    }

    fn validate_create(&self, a: &Attributes<'_>, _obj: &Map<String, Value>) -> ApiResult<()> {
        if !a.def.namespaced {
            return Ok(());
        }
        let namespace = a.namespace;
        let Some(ns) = a.store.get("/namespaces", namespace) else {
            return Err(ApiError::not_found("", "namespaces", namespace));
        };
        if !crate::namespace::terminating(&ns.value) {
            return Ok(());
        }
        let name = a.name;
        let mut details = json!({
            "name": name,
            "group": a.def.group,
            "kind": a.def.plural,
            "causes": [{
                "reason": "NamespaceTerminating",
                "message": format!("namespace {namespace} is being terminated"),
                "field": "metadata.namespace"
            }]
        });
        if let Some(d) = details.as_object_mut()
            && a.def.group.is_empty()
        {
            d.remove("group");
        }
        let resource = if a.def.group.is_empty() {
            a.def.plural.clone()
        } else {
            format!("{}.{}", a.def.plural, a.def.group)
        };
        Err(ApiError::new(
        403,
        "Forbidden",
        format!(
            "{resource} {name:?} is forbidden: unable to create new content in namespace {namespace} because it is being terminated"
        ),
    )
    .with_details(details))
    }
}
