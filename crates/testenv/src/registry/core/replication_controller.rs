//! ReplicationControllers: core/v1's `SetDefaults_ReplicationController` (the selector and the
//! object's labels default to the template's labels, one replica) and the template's pod
//! defaults, before the field manager records the write; an empty status on create; the kind
//! keeps `metadata.generation`.

use serde_json::{Map, Value, json};

use crate::defaults::json::{existing, or_insert};
use crate::defaults::pod;
use crate::meta::metadata_mut;
use crate::registry::rest::{Generation, Strategy};
use crate::store::Store;

/// The ReplicationController strategy.
pub(crate) struct ReplicationControllerStrategy;

fn empty_map(v: Option<&Value>) -> bool {
    v.and_then(Value::as_object).is_none_or(Map::is_empty)
}

impl Strategy for ReplicationControllerStrategy {
    fn generation(&self) -> Generation {
        Generation::OnSpecChange
    }

    fn defaults(&self, obj: &mut Map<String, Value>) {
        let template_labels = obj
            .get("spec")
            .and_then(|s| s.get("template"))
            .and_then(|t| t.get("metadata"))
            .and_then(|m| m.get("labels"))
            .filter(|l| l.is_object())
            .cloned();
        if let Some(labels) = template_labels {
            if let Some(spec) = existing(obj, "spec")
                && empty_map(spec.get("selector"))
            {
                spec.insert("selector".into(), labels.clone());
            }
            let meta = metadata_mut(obj);
            if empty_map(meta.get("labels")) {
                meta.insert("labels".into(), labels);
            }
        }
        let Some(spec) = existing(obj, "spec") else {
            return;
        };
        or_insert(spec, "replicas", json!(1));
        if let Some(template) = existing(spec, "template") {
            pod::pod_template(template);
        }
    }

    fn prepare_for_create(&self, _store: &Store, _namespace: &str, obj: &mut Map<String, Value>) {
        obj.insert("status".into(), json!({}));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_selector_and_labels_should_default_to_the_template_s() {
        let mut rc = json!({"metadata": {"name": "r"}, "spec": {"template": {
            "metadata": {"labels": {"app": "r"}},
            "spec": {"containers": [{"name": "c", "image": "nginx"}]}}}});
        ReplicationControllerStrategy.defaults(rc.as_object_mut().unwrap());
        assert_eq!(rc["spec"]["selector"], json!({"app": "r"}));
        assert_eq!(rc["metadata"]["labels"], json!({"app": "r"}));
        assert_eq!(rc["spec"]["replicas"], 1);
        let c = &rc["spec"]["template"]["spec"]["containers"][0];
        assert_eq!(c["imagePullPolicy"], "Always");
        assert_eq!(rc["spec"]["template"]["spec"]["restartPolicy"], "Always");
    }
}
