//! Defaulting, as apiextensions-apiserver's structural defaulting does it: a member absent from
//! an object (or `null` where the schema is not `nullable`) takes its property's `default`, and
//! defaulting continues inside the defaulted value; `null` members of non-nullable properties
//! without a default are dropped.

use serde_json::Value;

use super::{pruning, schema_validation};
use crate::validation::field::FieldError;

fn nullable(schema: &Value) -> bool {
    schema.get("nullable").and_then(Value::as_bool) == Some(true)
}

/// Applies the defaults of `schema` to `value`, recursively.
pub(crate) fn apply_defaults(value: &mut Value, schema: &Value) {
    match value {
        Value::Object(map) => {
            let properties = schema.get("properties").and_then(Value::as_object);
            if let Some(props) = properties {
                for (key, prop) in props {
                    let Some(default) = prop.get("default") else {
                        continue;
                    };
                    let missing = match map.get(key) {
                        None => true,
                        Some(Value::Null) => !nullable(prop),
                        Some(_) => false,
                    };
                    if missing {
                        map.insert(key.clone(), default.clone());
                    }
                }
            }
            let additional = schema.get("additionalProperties").filter(|a| a.is_object());
            let keys: Vec<String> = map.keys().cloned().collect();
            for key in keys {
                let sub = properties.and_then(|p| p.get(&key)).or(additional);
                let Some(sub) = sub else { continue };
                if map.get(&key).is_some_and(Value::is_null) && !nullable(sub) {
                    map.remove(&key);
                    continue;
                }
                if let Some(v) = map.get_mut(&key) {
                    apply_defaults(v, sub);
                }
            }
        }
        Value::Array(items) => {
            if let Some(item_schema) = schema.get("items").filter(|i| i.is_object()) {
                for item in items {
                    apply_defaults(item, item_schema);
                }
            }
        }
        _ => {}
    }
}

/// The causes of defaults that do not fit their schema, as kube-apiserver's `ValidateDefaults`
/// finds them in a structural schema at `path`: a default with fields the schema does not
/// specify (`must not have unknown fields`), or one the schema's validations refuse. Defaults
/// in the metadata of the resource (refused by the OpenAPI rules) are not looked at.
pub(crate) fn validate_defaults(schema: &Value, path: &str) -> Vec<FieldError> {
    let mut errs = Vec::new();
    defaults_at(schema, path, true, &mut errs);
    errs
}

fn defaults_at(s: &Value, path: &str, resource_root: bool, errs: &mut Vec<FieldError>) {
    if let Some(d) = s.get("default").filter(|d| !d.is_null()) {
        let at = format!("{path}.default");
        let mut pruned = d.clone();
        if pruning::prune_nested(&mut pruned, s) {
            errs.push(FieldError::invalid(&at, d, "must not have unknown fields"));
        }
        errs.extend(schema_validation::validate_value(d, s, &at));
    }
    if let Some(items) = s.get("items").filter(|i| i.is_object()) {
        defaults_at(items, &format!("{path}.items"), false, errs);
    }
    let embedded = resource_root
        || s.get("x-kubernetes-embedded-resource")
            .and_then(Value::as_bool)
            == Some(true);
    let mut names: Vec<(&String, &Value)> = s
        .get("properties")
        .and_then(Value::as_object)
        .into_iter()
        .flatten()
        .collect();
    names.sort_by(|a, b| a.0.cmp(b.0));
    for (k, p) in names {
        if embedded && ["metadata", "apiVersion", "kind"].contains(&k.as_str()) {
            continue;
        }
        defaults_at(p, &format!("{path}.properties[{k}]"), false, errs);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn defaults_should_fill_absent_members_and_recurse_into_them() {
        let schema = json!({"type": "object", "properties": {"spec": {"type": "object", "properties": {
            "color": {"type": "string", "default": "red"},
            "replicas": {"type": "integer", "default": 1},
            "nested": {"type": "object", "default": {}, "properties": {
                "mode": {"type": "string", "default": "auto"}}},
            "items": {"type": "array", "items": {"type": "object", "properties": {
                "k": {"type": "string", "default": "v"}}}},
            "gone": {"type": "string"}
        }}}});
        let mut v = json!({"spec": {"replicas": 3, "items": [{}], "gone": null}});
        apply_defaults(&mut v, &schema);
        assert_eq!(
            v,
            json!({"spec": {"color": "red", "replicas": 3, "nested": {"mode": "auto"},
                "items": [{"k": "v"}]}})
        );
    }

    #[test]
    fn defaults_should_fit_their_schema() {
        let schema = json!({"type": "object", "properties": {
            "metadata": {"type": "object", "default": {"x": 1}},
            "spec": {"type": "object", "properties": {
                "color": {"type": "string", "enum": ["red"], "default": "pink"},
                "nested": {"type": "object", "default": {"mode": "a", "bogus": 1},
                    "properties": {"mode": {"type": "string"}}},
                "ok": {"type": "integer", "default": 1}}}}});
        let causes: Vec<String> = validate_defaults(&schema, "s")
            .into_iter()
            .map(|e| format!("{}: {}", e.field, e.message))
            .collect();
        assert_eq!(
            causes,
            vec![
                "s.properties[spec].properties[color].default: Unsupported value: \"pink\": supported values: \"red\"",
                "s.properties[spec].properties[nested].default: Invalid value: {\"bogus\":1,\"mode\":\"a\"}: must not have unknown fields",
            ]
        );
    }
}
