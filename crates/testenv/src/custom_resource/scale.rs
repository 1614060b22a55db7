//! The scale subresource of a custom resource: an `autoscaling/v1` `Scale` whose
//! `spec.replicas`, `status.replicas` and `status.selector` live at the paths the CRD's
//! `subresources.scale` names (`specReplicasPath`, `statusReplicasPath`, `labelSelectorPath`,
//! JSON paths like `.spec.replicas`).

use serde_json::{Map, Value, json};

/// The scale paths of a CRD version (its `subresources.scale`).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct ScalePaths {
    spec_replicas: Vec<String>,
    status_replicas: Vec<String>,
    label_selector: Option<Vec<String>>,
}

fn split(path: &str) -> Vec<String> {
    path.trim_start_matches('.')
        .split('.')
        .filter(|s| !s.is_empty())
        .map(str::to_owned)
        .collect()
}

fn at<'a>(v: &'a Value, path: &[String]) -> Option<&'a Value> {
    path.iter().try_fold(v, |cur, k| cur.get(k))
}

impl ScalePaths {
    /// From a CRD version's `subresources.scale`; `None` when it has none.
    pub(crate) fn of(crd_version: &Value) -> Option<Self> {
        let scale = crd_version.pointer("/subresources/scale")?;
        let path = |k: &str| scale.get(k).and_then(Value::as_str).map(split);
        Some(Self {
            spec_replicas: path("specReplicasPath")?,
            status_replicas: path("statusReplicasPath")?,
            label_selector: path("labelSelectorPath"),
        })
    }

    /// The path of the replicas a Scale's `spec.replicas` is (`specReplicasPath`).
    pub(crate) fn spec_replicas_path(&self) -> &[String] {
        &self.spec_replicas
    }

    /// The `Scale` of `obj`.
    pub(crate) fn scale_of(&self, obj: &Value) -> Value {
        let m = obj.get("metadata").cloned().unwrap_or(json!({}));
        let replicas = |p: &[String]| at(obj, p).and_then(Value::as_i64).unwrap_or(0);
        let mut status = json!({"replicas": replicas(&self.status_replicas)});
        if let Some(sel) = self
            .label_selector
            .as_deref()
            .and_then(|p| at(obj, p))
            .and_then(Value::as_str)
            .filter(|s| !s.is_empty())
        {
            status["selector"] = json!(sel);
        }
        json!({
            "kind": "Scale",
            "apiVersion": "autoscaling/v1",
            "metadata": {
                "name": m.get("name"),
                "namespace": m.get("namespace"),
                "uid": m.get("uid"),
                "resourceVersion": m.get("resourceVersion"),
                "creationTimestamp": m.get("creationTimestamp"),
            },
            "spec": crate::endpoints::handlers::scale::spec_of(json!(replicas(&self.spec_replicas))),
            "status": status,
        })
    }

    /// Sets the spec replicas of `obj` to `replicas` (creating the objects on the way).
    pub(crate) fn set_replicas(&self, obj: &mut Value, replicas: i64) {
        let Some((last, init)) = self.spec_replicas.split_last() else {
            return;
        };
        let mut cur = obj;
        for k in init {
            let Some(m) = cur.as_object_mut() else { return };
            cur = m
                .entry(k.clone())
                .or_insert_with(|| Value::Object(Map::new()));
        }
        if let Some(m) = cur.as_object_mut() {
            m.insert(last.clone(), json!(replicas));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scale_should_read_and_write_the_named_paths() {
        let version = json!({"subresources": {"scale": {"specReplicasPath": ".spec.count",
            "statusReplicasPath": ".status.count", "labelSelectorPath": ".status.sel"}}});
        let paths = ScalePaths::of(&version).unwrap();
        let mut obj = json!({"metadata": {"name": "w"}, "spec": {"count": 2},
            "status": {"count": 1, "sel": "a=b"}});
        let scale = paths.scale_of(&obj);
        assert_eq!(scale["spec"], json!({"replicas": 2}));
        assert_eq!(scale["status"], json!({"replicas": 1, "selector": "a=b"}));
        paths.set_replicas(&mut obj, 5);
        assert_eq!(obj["spec"]["count"], json!(5));
        assert_eq!(ScalePaths::of(&json!({"subresources": {}})), None);
    }
}
