//! LimitRanges: core/v1's `SetDefaults_LimitRangeItem`. A `Container` item's default limit is its
//! maximum where it gives none, its default request its default limit, else its minimum.
//! `ValidateLimitRange` (in part): each item's type (standard or qualified, once each), no
//! default limits or requests for `Pod` items, a storage bound for `PersistentVolumeClaim`
//! items, min <= default request <= default limit <= max per resource, ratios of at least 1
//! (the ratio's relation to the default limit and request is not checked).

use serde_json::{Map, Value, json};

use crate::defaults::json::items;
use crate::registry::ResourceDef;
use crate::registry::rest::Strategy;
use crate::validation::field::FieldError;
use crate::validation::names;

/// The `ValidateLimitRange` rules this port has, for the spec's items.
fn limit_items(obj: &Map<String, Value>) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let limits = obj
        .get("spec")
        .and_then(|s| s.get("limits"))
        .and_then(Value::as_array);
    let mut seen: Vec<String> = Vec::new();
    for (i, item) in limits.into_iter().flatten().enumerate() {
        let at = format!("spec.limits[{i}]");
        let Some(item) = item.as_object() else {
            continue;
        };
        let ty = item.get("type").and_then(Value::as_str).unwrap_or_default();
        let name_errs = names::qualified_name(ty);
        for msg in &name_errs {
            errs.push(FieldError::invalid(format!("{at}.type"), &json!(ty), msg));
        }
        if name_errs.is_empty()
            && !ty.contains('/')
            && !matches!(ty, "Pod" | "Container" | "PersistentVolumeClaim")
        {
            errs.push(FieldError::invalid(
                format!("{at}.type"),
                &json!(ty),
                "must be a standard limit type or fully qualified",
            ));
        }
        if seen.iter().any(|t| t == ty) {
            errs.push(FieldError::duplicate(format!("{at}.type"), &json!(ty)));
        }
        seen.push(ty.to_owned());
        let (min, max) = (resources(item, "min"), resources(item, "max"));
        if ty == "Pod" {
            for key in ["default", "defaultRequest"] {
                if !resources(item, key).is_empty() {
                    errs.push(FieldError::forbidden(
                        format!("{at}.{key}"),
                        "may not be specified when `type` is 'Pod'",
                    ));
                }
            }
        }
        if ty == "PersistentVolumeClaim"
            && !min.contains_key("storage")
            && !max.contains_key("storage")
        {
            errs.push(FieldError::required(
                format!("{at}.limits"),
                "either minimum or maximum storage value is required, but neither was provided",
            ));
        }
        let (default, request) = (
            resources(item, "default"),
            resources(item, "defaultRequest"),
        );
        let ratio = resources(item, "maxLimitRequestRatio");
        let mut keys: Vec<&String> = min
            .keys()
            .chain(max.keys())
            .chain(default.keys())
            .chain(request.keys())
            .chain(ratio.keys())
            .collect();
        keys.sort();
        keys.dedup();
        let value = |q: &Value| super::persistent_volume::quantity_number(q);
        let text = |q: &Value| q.as_str().map_or_else(|| q.to_string(), str::to_owned);
        for key in keys {
            let greater = |a: Option<&Value>, b: Option<&Value>| match (a, b) {
                (Some(a), Some(b)) => matches!((value(a), value(b)), (Some(x), Some(y)) if x > y),
                _ => false,
            };
            let (lo, hi, def, req) = (
                min.get(key),
                max.get(key),
                default.get(key),
                request.get(key),
            );
            // Each check: (is it broken, the field, the value shown, the message).
            let checks = [
                (greater(lo, hi), "min", lo, lo, "min value", hi, "max value"),
                (
                    greater(lo, req),
                    "defaultRequest",
                    req,
                    lo,
                    "min value",
                    req,
                    "default request value",
                ),
                (
                    greater(req, hi),
                    "defaultRequest",
                    req,
                    req,
                    "default request value",
                    hi,
                    "max value",
                ),
                (
                    greater(req, def),
                    "defaultRequest",
                    req,
                    req,
                    "default request value",
                    def,
                    "default limit value",
                ),
                (
                    greater(lo, def),
                    "default",
                    lo,
                    lo,
                    "min value",
                    def,
                    "default value",
                ),
                (
                    greater(def, hi),
                    "default",
                    hi,
                    def,
                    "default value",
                    hi,
                    "max value",
                ),
            ];
            for (broken, field, shown, a, a_name, b, b_name) in checks {
                if let (true, Some(shown), Some(a), Some(b)) = (broken, shown, a, b) {
                    errs.push(FieldError::invalid(
                        format!("{at}.{field}[{key}]"),
                        &json!(text(shown)),
                        &format!("{a_name} {} is greater than {b_name} {}", text(a), text(b)),
                    ));
                }
            }
            if let Some(r) = ratio.get(key)
                && value(r).is_some_and(|v| v < 1.0)
            {
                errs.push(FieldError::invalid(
                    format!("{at}.maxLimitRequestRatio[{key}]"),
                    &json!(text(r)),
                    &format!("ratio {} is less than 1", text(r)),
                ));
            }
        }
    }
    errs
}

/// The LimitRange strategy.
pub(crate) struct LimitRangeStrategy;

fn resources(item: &Map<String, Value>, key: &str) -> Map<String, Value> {
    item.get(key)
        .and_then(Value::as_object)
        .cloned()
        .unwrap_or_default()
}

impl Strategy for LimitRangeStrategy {
    fn validate(&self, _def: &ResourceDef, obj: &Map<String, Value>) -> Vec<FieldError> {
        limit_items(obj)
    }

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
    fn items_should_have_one_standard_type_each_and_sane_bounds() {
        let lr = json!({"spec": {"limits": [
            {"type": "Pod", "default": {"cpu": "1"}},
            {"type": "Pod"},
            {"type": "Node"},
            {"type": "PersistentVolumeClaim", "min": {"cpu": "1200m"}, "max": {"cpu": "1100m"}},
            {"type": "example.com/thing", "maxLimitRequestRatio": {"cpu": "500m"}}]}});
        let got: Vec<(String, String)> = limit_items(lr.as_object().unwrap())
            .into_iter()
            .map(|e| (e.field, e.message))
            .collect();
        assert_eq!(
            got,
            [
                ("spec.limits[0].default", "Forbidden: may not be specified when `type` is 'Pod'"),
                ("spec.limits[1].type", "Duplicate value: \"Pod\""),
                ("spec.limits[2].type", "Invalid value: \"Node\": must be a standard limit type or fully qualified"),
                ("spec.limits[3].limits", "Required value: either minimum or maximum storage value is required, but neither was provided"),
                ("spec.limits[3].min[cpu]", "Invalid value: \"1200m\": min value 1200m is greater than max value 1100m"),
                ("spec.limits[4].maxLimitRequestRatio[cpu]", "Invalid value: \"500m\": ratio 500m is less than 1"),
            ]
            .map(|(f, m)| (f.to_owned(), m.to_owned()))
        );
    }

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
