//! HorizontalPodAutoscalers (`autoscaling/v1` and `autoscaling/v2`): the defaults of
//! `SetDefaults_HorizontalPodAutoscaler`. Both versions start at one replica; a v2 autoscaler
//! without metrics scales on 80% CPU utilization, and a `behavior` it gives is completed with
//! the default rules (scale up: no stabilization, the larger of 4 Pods or 100% per 15 s; scale
//! down: 100% per 15 s, the stabilization window left to kube-controller-manager's flag), each
//! rule keeping what the writer set.
//!
//! `ValidateHorizontalPodAutoscaler` / `...Update`, on the internal (v2) form of either version
//! (a v1 autoscaler's `targetCPUUtilizationPercentage` is its one `Resource` metric, and the
//! causes name that metric's fields): replica bounds (at least 1, or 0 on update of an
//! autoscaler already at 0), the scale target reference, each metric (its type, exactly the
//! matching source, metric names, targets), the behavior's rules and policies.

use serde_json::{Map, Value, json};

use crate::defaults::json::{existing, or_insert};
use crate::registry::ResourceDef;
use crate::registry::rest::Strategy;
use crate::validation::field::FieldError;

/// The largest scaling policy period, in seconds.
const MAX_PERIOD_SECONDS: i64 = 1800;
/// The largest stabilization window, in seconds.
const MAX_STABILIZATION_WINDOW_SECONDS: i64 = 3600;

/// `IsValidPathSegmentName`.
pub(crate) fn path_segment_name(name: &str) -> Vec<String> {
    if name == "." || name == ".." {
        return vec![format!("may not be '{name}'")];
    }
    let mut msgs = Vec::new();
    for bad in ["/", "%"] {
        if name.contains(bad) {
            msgs.push(format!("may not contain '{bad}'"));
        }
    }
    msgs
}

fn str_of<'a>(v: Option<&'a Value>, key: &str) -> &'a str {
    v.and_then(|v| v.get(key))
        .and_then(Value::as_str)
        .unwrap_or_default()
}

fn present<'a>(v: Option<&'a Value>, key: &str) -> Option<&'a Value> {
    v.and_then(|v| v.get(key)).filter(|v| !v.is_null())
}

/// `ValidateCrossVersionObjectReference`.
fn object_reference(r: Option<&Value>, path: &str, errs: &mut Vec<FieldError>) {
    for key in ["kind", "name"] {
        let value = str_of(r, key);
        if value.is_empty() {
            errs.push(FieldError::required(format!("{path}.{key}"), ""));
        }
        for msg in path_segment_name(value) {
            errs.push(FieldError::invalid(
                format!("{path}.{key}"),
                &json!(value),
                &msg,
            ));
        }
    }
}

/// A quantity's sign from its text (`None`: not a quantity the decoder would have let in).
fn quantity_sign(q: &Value) -> i32 {
    let text = match q {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    };
    let t = text.trim();
    let negative = t.starts_with('-');
    let digits = t.trim_start_matches(['+', '-']);
    let nonzero = digits
        .chars()
        .take_while(|c| c.is_ascii_digit() || *c == '.')
        .any(|c| c.is_ascii_digit() && c != '0');
    match (nonzero, negative) {
        (false, _) => 0,
        (true, true) => -1,
        (true, false) => 1,
    }
}

fn quantity_text(q: &Value) -> Value {
    match q {
        Value::String(_) => q.clone(),
        other => json!(other.to_string()),
    }
}

/// `validateMetricTarget`.
fn metric_target(t: Option<&Value>, path: &str, errs: &mut Vec<FieldError>) {
    let ty = str_of(t, "type");
    if ty.is_empty() {
        errs.push(FieldError::required(
            format!("{path}.type"),
            "must specify a metric target type",
        ));
    }
    if !matches!(ty, "Utilization" | "Value" | "AverageValue") {
        errs.push(FieldError::invalid(
            format!("{path}.type"),
            &json!(ty),
            "must be either Utilization, Value, or AverageValue",
        ));
    }
    for key in ["value", "averageValue"] {
        if let Some(q) = present(t, key)
            && quantity_sign(q) != 1
        {
            errs.push(FieldError::invalid(
                format!("{path}.{key}"),
                &quantity_text(q),
                "must be positive",
            ));
        }
    }
    if let Some(u) = present(t, "averageUtilization")
        && u.as_i64().is_some_and(|u| u < 1)
    {
        errs.push(FieldError::invalid(
            format!("{path}.averageUtilization"),
            u,
            "must be greater than 0",
        ));
    }
}

/// `validateMetricIdentifier`.
fn metric_identifier(id: Option<&Value>, path: &str, errs: &mut Vec<FieldError>) {
    let name = str_of(id, "name");
    if name.is_empty() {
        errs.push(FieldError::required(
            format!("{path}.name"),
            "must specify a metric name",
        ));
    }
    for msg in path_segment_name(name) {
        errs.push(FieldError::invalid(
            format!("{path}.name"),
            &json!(name),
            &msg,
        ));
    }
}

/// The rules of one metric source (`object`, `external`, `pods`, `resource`,
/// `containerResource`) at `path`.
fn metric_source(kind: &str, src: &Value, path: &str, errs: &mut Vec<FieldError>) {
    let src = Some(src);
    let target = present(src, "target");
    let has = |key: &str| present(target, key).is_some();
    let tpath = format!("{path}.target");
    match kind {
        "object" | "external" => {
            if kind == "object" {
                object_reference(
                    present(src, "describedObject"),
                    &format!("{path}.describedObject"),
                    errs,
                );
            }
            metric_identifier(present(src, "metric"), &format!("{path}.metric"), errs);
            metric_target(target, &tpath, errs);
            if !has("value") && !has("averageValue") {
                errs.push(FieldError::required(
                    format!("{tpath}.averageValue"),
                    if kind == "object" {
                        "must set either a target value or averageValue"
                    } else {
                        "must set either a target value for metric or a per-pod target"
                    },
                ));
            }
            if kind == "external" && has("value") && has("averageValue") {
                errs.push(FieldError::forbidden(
                    format!("{tpath}.value"),
                    "may not set both a target value for metric and a per-pod target",
                ));
            }
        }
        "pods" => {
            metric_identifier(present(src, "metric"), &format!("{path}.metric"), errs);
            metric_target(target, &tpath, errs);
            if !has("averageValue") {
                errs.push(FieldError::required(
                    format!("{tpath}.averageValue"),
                    "must specify a positive target averageValue",
                ));
            }
        }
        _ => {
            let name = str_of(src, "name");
            if name.is_empty() {
                errs.push(FieldError::required(
                    format!("{path}.name"),
                    "must specify a resource name",
                ));
            }
            if kind == "containerResource" {
                let container = str_of(src, "container");
                if container.is_empty() {
                    errs.push(FieldError::required(
                        format!("{path}.container"),
                        "must specify a container",
                    ));
                } else {
                    for msg in crate::validation::names::dns1123_label(container) {
                        errs.push(FieldError::invalid(
                            format!("{path}.container"),
                            &json!(container),
                            &msg,
                        ));
                    }
                }
            }
            metric_target(target, &tpath, errs);
            if !has("averageUtilization") && !has("averageValue") {
                errs.push(FieldError::required(
                    format!("{tpath}.averageUtilization"),
                    "must set either a target raw value or a target utilization",
                ));
            }
            if has("averageUtilization") && has("averageValue") {
                errs.push(FieldError::forbidden(
                    format!("{tpath}.averageValue"),
                    "may not set both a target raw value and a target utilization",
                ));
            }
        }
    }
}

const METRIC_TYPES: [&str; 5] = [
    "ContainerResource",
    "External",
    "Object",
    "Pods",
    "Resource",
];

/// `validateMetricSpec`.
fn metric_spec(m: &Value, path: &str, errs: &mut Vec<FieldError>) {
    let ty = str_of(Some(m), "type");
    if ty.is_empty() {
        errs.push(FieldError::required(
            format!("{path}.type"),
            "must specify a metric source type",
        ));
    }
    if !METRIC_TYPES.contains(&ty) {
        errs.push(FieldError::not_supported(
            format!("{path}.type"),
            &json!(ty),
            &METRIC_TYPES,
        ));
    }
    let mut present_kinds = Vec::new();
    for kind in [
        "object",
        "external",
        "pods",
        "resource",
        "containerResource",
    ] {
        if let Some(src) = present(Some(m), kind) {
            present_kinds.push(kind);
            if present_kinds.len() == 1 {
                metric_source(kind, src, &format!("{path}.{kind}"), errs);
            }
        }
    }
    let expected = match ty {
        "Object" => "object",
        "Pods" => "pods",
        "Resource" => "resource",
        "External" => "external",
        "ContainerResource" => "containerResource",
        _ => {
            errs.push(FieldError::not_supported(
                format!("{path}.type"),
                &json!(ty),
                &METRIC_TYPES,
            ));
            ""
        }
    };
    if !expected.is_empty() && present(Some(m), expected).is_none() {
        errs.push(FieldError::required(
            format!("{path}.{expected}"),
            "must populate information for the given metric source",
        ));
    }
    if present_kinds.len() != 1 {
        // A Go set's order: the others are listed sorted here.
        let mut others: Vec<&str> = present_kinds
            .into_iter()
            .filter(|k| *k != expected)
            .collect();
        others.sort_unstable();
        for kind in others {
            errs.push(FieldError::forbidden(
                format!("{path}.{kind}"),
                "must populate the given metric source only",
            ));
        }
    }
}

/// `validateScalingRules`.
fn validate_scaling_rules(rules: Option<&Value>, path: &str, errs: &mut Vec<FieldError>) {
    let Some(rules) = rules.filter(|r| !r.is_null()) else {
        return;
    };
    if let Some(w) = present(Some(rules), "stabilizationWindowSeconds")
        && let Some(n) = w.as_i64()
    {
        if n < 0 {
            errs.push(FieldError::invalid(
                format!("{path}.stabilizationWindowSeconds"),
                w,
                "must be greater than or equal to zero",
            ));
        }
        if n > MAX_STABILIZATION_WINDOW_SECONDS {
            errs.push(FieldError::invalid(
                format!("{path}.stabilizationWindowSeconds"),
                w,
                &format!("must be less than or equal to {MAX_STABILIZATION_WINDOW_SECONDS}"),
            ));
        }
    }
    if let Some(p) = present(Some(rules), "selectPolicy").and_then(Value::as_str)
        && !matches!(p, "Disabled" | "Max" | "Min")
    {
        errs.push(FieldError::not_supported(
            format!("{path}.selectPolicy"),
            &json!(p),
            &["Disabled", "Max", "Min"],
        ));
    }
    let policies = present(Some(rules), "policies")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    if policies.is_empty() {
        errs.push(FieldError::required(
            format!("{path}.policies"),
            "must specify at least one Policy",
        ));
    }
    for (i, policy) in policies.iter().enumerate() {
        let at = format!("{path}.policies[{i}]");
        let ty = str_of(Some(policy), "type");
        if !matches!(ty, "Pods" | "Percent") {
            errs.push(FieldError::not_supported(
                format!("{at}.type"),
                &json!(ty),
                &["Percent", "Pods"],
            ));
        }
        let int = |key: &str| policy.get(key).and_then(Value::as_i64).unwrap_or(0);
        if int("value") <= 0 {
            errs.push(FieldError::invalid(
                format!("{at}.value"),
                &json!(int("value")),
                "must be greater than zero",
            ));
        }
        let period = int("periodSeconds");
        if period <= 0 {
            errs.push(FieldError::invalid(
                format!("{at}.periodSeconds"),
                &json!(period),
                "must be greater than zero",
            ));
        }
        if period > MAX_PERIOD_SECONDS {
            errs.push(FieldError::invalid(
                format!("{at}.periodSeconds"),
                &json!(period),
                &format!("must be less than or equal to {MAX_PERIOD_SECONDS}"),
            ));
        }
    }
}

/// The metrics of the internal form: a v2 autoscaler's, or a v1 autoscaler's CPU target.
fn metrics(obj: &Map<String, Value>) -> Vec<Value> {
    let spec = obj.get("spec");
    if obj.get("apiVersion").and_then(Value::as_str) == Some("autoscaling/v1") {
        return present(spec, "targetCPUUtilizationPercentage")
            .map(|pct| {
                vec![json!({"type": "Resource", "resource": {"name": "cpu",
                    "target": {"type": "Utilization", "averageUtilization": pct}}})]
            })
            .unwrap_or_default();
    }
    present(spec, "metrics")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default()
}

/// `validateHorizontalPodAutoscalerSpec` with the lowest `minReplicas` allowed.
fn autoscaler_spec(obj: &Map<String, Value>, min_lower_bound: i64) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let spec = obj.get("spec");
    let min = present(spec, "minReplicas").and_then(Value::as_i64);
    let max = present(spec, "maxReplicas")
        .and_then(Value::as_i64)
        .unwrap_or(0);
    if let Some(min) = min
        && min < min_lower_bound
    {
        errs.push(FieldError::invalid(
            "spec.minReplicas",
            &json!(min),
            &format!("must be greater than or equal to {min_lower_bound}"),
        ));
    }
    if max < 1 {
        errs.push(FieldError::invalid(
            "spec.maxReplicas",
            &json!(max),
            "must be greater than 0",
        ));
    }
    if let Some(min) = min
        && max < min
    {
        errs.push(FieldError::invalid(
            "spec.maxReplicas",
            &json!(max),
            "must be greater than or equal to `minReplicas`",
        ));
    }
    object_reference(
        present(spec, "scaleTargetRef"),
        "spec.scaleTargetRef",
        &mut errs,
    );
    let metrics = metrics(obj);
    for (i, m) in metrics.iter().enumerate() {
        metric_spec(m, &format!("spec.metrics[{i}]"), &mut errs);
    }
    if min == Some(0) {
        let scales_on_objects = metrics
            .iter()
            .any(|m| matches!(str_of(Some(m), "type"), "Object" | "External"));
        if !scales_on_objects {
            errs.push(FieldError::forbidden(
                "spec.metrics",
                "must specify at least one Object or External metric to support scaling to zero replicas",
            ));
        }
    }
    if let Some(behavior) = present(spec, "behavior") {
        validate_scaling_rules(behavior.get("scaleUp"), "spec.behavior.scaleUp", &mut errs);
        validate_scaling_rules(
            behavior.get("scaleDown"),
            "spec.behavior.scaleDown",
            &mut errs,
        );
    }
    errs
}

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

    /// `ValidateHorizontalPodAutoscaler`: `minReplicas` of at least 1 (scaling to zero is an
    /// alpha feature, off).
    fn validate(&self, _def: &ResourceDef, obj: &Map<String, Value>) -> Vec<FieldError> {
        autoscaler_spec(obj, 1)
    }

    /// `ValidateHorizontalPodAutoscalerUpdate`: the same rules, `minReplicas` 0 kept by an
    /// autoscaler that already had it.
    fn validate_update(&self, old: &Value, new: &Map<String, Value>) -> Vec<FieldError> {
        let old_min = old.pointer("/spec/minReplicas").and_then(Value::as_i64);
        autoscaler_spec(new, if old_min == Some(0) { 0 } else { 1 })
    }

    fn validates_new_state_on_update(&self) -> bool {
        false
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

    fn hpa(v: Value) -> Map<String, Value> {
        let mut obj = v;
        HorizontalPodAutoscalerStrategy.defaults(obj.as_object_mut().unwrap());
        obj.as_object().unwrap().clone()
    }

    fn causes(errs: &[FieldError]) -> Vec<(String, String)> {
        errs.iter()
            .map(|e| (e.field.clone(), e.message.clone()))
            .collect()
    }

    fn def() -> ResourceDef {
        crate::registry::builtins()
            .into_iter()
            .find(|d| d.kind == "HorizontalPodAutoscaler")
            .unwrap()
    }

    fn pairs(v: &[(&str, &str)]) -> Vec<(String, String)> {
        v.iter()
            .map(|(a, b)| ((*a).to_owned(), (*b).to_owned()))
            .collect()
    }

    #[test]
    fn replica_bounds_and_the_target_should_be_checked_first() {
        let obj = hpa(
            json!({"apiVersion": "autoscaling/v2", "spec": {"minReplicas": 0,
            "maxReplicas": 0, "scaleTargetRef": {"kind": "Deployment", "name": "a/b"}}}),
        );
        assert_eq!(
            causes(&HorizontalPodAutoscalerStrategy.validate(&def(), &obj)),
            pairs(&[
                (
                    "spec.minReplicas",
                    "Invalid value: 0: must be greater than or equal to 1"
                ),
                (
                    "spec.maxReplicas",
                    "Invalid value: 0: must be greater than 0"
                ),
                (
                    "spec.scaleTargetRef.name",
                    "Invalid value: \"a/b\": may not contain '/'"
                ),
                (
                    "spec.metrics",
                    "Forbidden: must specify at least one Object or External metric to support scaling to zero replicas"
                ),
            ])
        );
        // An autoscaler already at 0 may stay there on update.
        let old = json!({"spec": {"minReplicas": 0}});
        assert!(
            !causes(&HorizontalPodAutoscalerStrategy.validate_update(&old, &obj))
                .iter()
                .any(|(f, _)| f == "spec.minReplicas")
        );
    }

    #[test]
    fn each_metric_should_have_its_one_source_and_a_target() {
        let obj = hpa(
            json!({"apiVersion": "autoscaling/v2", "spec": {"minReplicas": 2,
            "maxReplicas": 1, "scaleTargetRef": {"kind": "Deployment", "name": "web"},
            "metrics": [
                {"type": "Resource", "resource": {"name": "cpu",
                    "target": {"type": "Utilization", "averageUtilization": 0, "averageValue": "-1"}}},
                {"type": "Pods", "resource": {"name": "cpu", "target": {"type": "Utilization", "averageUtilization": 50}},
                    "pods": {"metric": {"name": ""}, "target": {"type": "Bogus"}}},
                {"type": "Fancy"}
            ]}}),
        );
        assert_eq!(
            causes(&HorizontalPodAutoscalerStrategy.validate(&def(), &obj)),
            pairs(&[
                (
                    "spec.maxReplicas",
                    "Invalid value: 1: must be greater than or equal to `minReplicas`"
                ),
                (
                    "spec.metrics[0].resource.target.averageValue",
                    "Invalid value: \"-1\": must be positive"
                ),
                (
                    "spec.metrics[0].resource.target.averageUtilization",
                    "Invalid value: 0: must be greater than 0"
                ),
                (
                    "spec.metrics[0].resource.target.averageValue",
                    "Forbidden: may not set both a target raw value and a target utilization"
                ),
                (
                    "spec.metrics[1].pods.metric.name",
                    "Required value: must specify a metric name"
                ),
                (
                    "spec.metrics[1].pods.target.type",
                    "Invalid value: \"Bogus\": must be either Utilization, Value, or AverageValue"
                ),
                (
                    "spec.metrics[1].pods.target.averageValue",
                    "Required value: must specify a positive target averageValue"
                ),
                (
                    "spec.metrics[1].resource",
                    "Forbidden: must populate the given metric source only"
                ),
                (
                    "spec.metrics[2].type",
                    "Unsupported value: \"Fancy\": supported values: \"ContainerResource\", \"External\", \"Object\", \"Pods\", \"Resource\""
                ),
                (
                    "spec.metrics[2].type",
                    "Unsupported value: \"Fancy\": supported values: \"ContainerResource\", \"External\", \"Object\", \"Pods\", \"Resource\""
                ),
            ])
        );
    }

    #[test]
    fn behavior_rules_should_be_bounded() {
        let obj = hpa(
            json!({"apiVersion": "autoscaling/v2", "spec": {"maxReplicas": 3,
            "scaleTargetRef": {"kind": "Deployment", "name": "web"},
            "behavior": {"scaleUp": {"stabilizationWindowSeconds": 4000, "selectPolicy": "Most",
                "policies": [{"type": "Nodes", "value": 0, "periodSeconds": 1801}]},
                "scaleDown": {"policies": []}}}}),
        );
        assert_eq!(
            causes(&HorizontalPodAutoscalerStrategy.validate(&def(), &obj)),
            pairs(&[
                (
                    "spec.behavior.scaleUp.stabilizationWindowSeconds",
                    "Invalid value: 4000: must be less than or equal to 3600"
                ),
                (
                    "spec.behavior.scaleUp.selectPolicy",
                    "Unsupported value: \"Most\": supported values: \"Disabled\", \"Max\", \"Min\""
                ),
                (
                    "spec.behavior.scaleUp.policies[0].type",
                    "Unsupported value: \"Nodes\": supported values: \"Percent\", \"Pods\""
                ),
                (
                    "spec.behavior.scaleUp.policies[0].value",
                    "Invalid value: 0: must be greater than zero"
                ),
                (
                    "spec.behavior.scaleUp.policies[0].periodSeconds",
                    "Invalid value: 1801: must be less than or equal to 1800"
                ),
                (
                    "spec.behavior.scaleDown.policies",
                    "Required value: must specify at least one Policy"
                ),
            ])
        );
    }

    #[test]
    fn a_v1_cpu_target_should_be_checked_as_its_metric() {
        let obj = hpa(
            json!({"apiVersion": "autoscaling/v1", "spec": {"maxReplicas": 3,
            "scaleTargetRef": {"kind": "", "name": "web"}, "targetCPUUtilizationPercentage": 0}}),
        );
        assert_eq!(
            causes(&HorizontalPodAutoscalerStrategy.validate(&def(), &obj)),
            pairs(&[
                ("spec.scaleTargetRef.kind", "Required value"),
                (
                    "spec.metrics[0].resource.target.averageUtilization",
                    "Invalid value: 0: must be greater than 0"
                ),
            ])
        );
    }
}
