//! LimitRanges: core/v1's `SetDefaults_LimitRangeItem`. A `Container` item's default limit is its
//! maximum where it gives none, its default request its default limit, else its minimum.

use serde_json::{Map, Value};

use crate::defaults::json::items;
use crate::registry::rest::Strategy;

/// The LimitRange strategy.
pub(crate) struct LimitRangeStrategy;

fn resources(item: &Map<String, Value>, key: &str) -> Map<String, Value> {
    item.get(key)
        .and_then(Value::as_object)
        .cloned()
        .unwrap_or_default()
}

impl Strategy for LimitRangeStrategy {
    fn defaults(&self, obj: &mut Map<String, Value>) {
        let Some(spec) = obj.get_mut("spec").and_then(Value::as_object_mut) else {
            return;
        };
        for item in items(spec, "limits") {
            if item.get("type").and_then(Value::as_str) != Some("Container") {
                continue;
            }
            let mut default = resources(item, "default");
            let mut request = resources(item, "defaultRequest");
            for (k, v) in resources(item, "max") {
                default.entry(k).or_insert(v);
            }
            for (k, v) in &default {
                request.entry(k.clone()).or_insert_with(|| v.clone());
            }
            for (k, v) in resources(item, "min") {
                request.entry(k).or_insert(v);
            }
            item.insert("default".into(), Value::Object(default));
            item.insert("defaultRequest".into(), Value::Object(request));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_container_item_should_default_its_limit_to_its_max_and_its_request_to_its_limit() {
        let mut lr = json!({"spec": {"limits": [{"type": "Container",
            "max": {"cpu": "2", "memory": "1Gi"}, "min": {"cpu": "100m", "ephemeral-storage": "1Gi"},
            "default": {"memory": "512Mi"}}]}});
        LimitRangeStrategy.defaults(lr.as_object_mut().unwrap());
        let item = &lr["spec"]["limits"][0];
        assert_eq!(item["default"], json!({"cpu": "2", "memory": "512Mi"}));
        assert_eq!(
            item["defaultRequest"],
            json!({"cpu": "2", "memory": "512Mi", "ephemeral-storage": "1Gi"})
        );
    }
}
