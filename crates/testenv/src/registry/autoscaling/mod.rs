//! HorizontalPodAutoscalers (`autoscaling/v1` and `autoscaling/v2`): the defaults of
//! `SetDefaults_HorizontalPodAutoscaler`. Both versions start at one replica; a v2 autoscaler
//! without metrics scales on 80% CPU utilization, and a `behavior` it gives is completed with
//! the default rules (scale up: no stabilization, the larger of 4 Pods or 100% per 15 s; scale
//! down: 100% per 15 s, the stabilization window left to kube-controller-manager's flag), each
//! rule keeping what the writer set.

use serde_json::{Map, Value, json};

use crate::defaults::json::{existing, or_insert};
use crate::registry::rest::Strategy;

/// The HorizontalPodAutoscaler strategy (both versions).
pub(crate) struct HorizontalPodAutoscalerStrategy;

/// `copyHPAScalingRules`: the writer's rules over the defaults, field by field.
fn scaling_rules(given: Option<&Value>, mut defaults: Map<String, Value>) -> Value {
    if let Some(given) = given.and_then(Value::as_object) {
        for k in [
            "selectPolicy",
            "stabilizationWindowSeconds",
            "policies",
            "tolerance",
        ] {
            if let Some(v) = given.get(k).filter(|v| !v.is_null()) {
                defaults.insert(k.into(), v.clone());
            }
        }
    }
    Value::Object(defaults)
}

fn as_map(v: Value) -> Map<String, Value> {
    match v {
        Value::Object(m) => m,
        _ => Map::new(),
    }
}

impl Strategy for HorizontalPodAutoscalerStrategy {
    fn defaults(&self, obj: &mut Map<String, Value>) {
        let v1 = obj.get("apiVersion").and_then(Value::as_str) == Some("autoscaling/v1");
        let Some(spec) = existing(obj, "spec") else {
            return;
        };
        or_insert(spec, "minReplicas", json!(1));
        if v1 {
            return;
        }
        if spec
            .get("metrics")
            .and_then(Value::as_array)
            .is_none_or(Vec::is_empty)
        {
            spec.insert(
                "metrics".into(),
                json!([{"type": "Resource", "resource": {"name": "cpu",
                    "target": {"type": "Utilization", "averageUtilization": 80}}}]),
            );
        }
        if let Some(behavior) = existing(spec, "behavior") {
            let up = scaling_rules(
                behavior.get("scaleUp"),
                as_map(
                    json!({"stabilizationWindowSeconds": 0, "selectPolicy": "Max",
                    "policies": [{"type": "Pods", "value": 4, "periodSeconds": 15},
                                 {"type": "Percent", "value": 100, "periodSeconds": 15}]}),
                ),
            );
            let down = scaling_rules(
                behavior.get("scaleDown"),
                as_map(json!({"selectPolicy": "Max",
                    "policies": [{"type": "Percent", "value": 100, "periodSeconds": 15}]})),
            );
            behavior.insert("scaleUp".into(), up);
            behavior.insert("scaleDown".into(), down);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_behavior_should_be_completed_with_the_default_rules() {
        let mut hpa = json!({"apiVersion": "autoscaling/v2", "spec": {"maxReplicas": 3,
            "behavior": {"scaleDown": {"stabilizationWindowSeconds": 60}}}});
        HorizontalPodAutoscalerStrategy.defaults(hpa.as_object_mut().unwrap());
        let spec = &hpa["spec"];
        assert_eq!(spec["minReplicas"], 1);
        assert_eq!(
            spec["metrics"][0]["resource"]["target"]["averageUtilization"],
            80
        );
        assert_eq!(
            spec["behavior"]["scaleDown"],
            json!({"stabilizationWindowSeconds": 60, "selectPolicy": "Max",
                "policies": [{"type": "Percent", "value": 100, "periodSeconds": 15}]})
        );
        assert_eq!(spec["behavior"]["scaleUp"]["policies"][0]["type"], "Pods");
        let mut v1 = json!({"apiVersion": "autoscaling/v1", "spec": {"maxReplicas": 3}});
        HorizontalPodAutoscalerStrategy.defaults(v1.as_object_mut().unwrap());
        assert_eq!(v1["spec"], json!({"maxReplicas": 3, "minReplicas": 1}));
    }
}
