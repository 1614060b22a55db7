//! Defaulting, as apiextensions-apiserver's structural defaulting does it: a member absent from
//! an object (or `null` where the schema is not `nullable`) takes its property's `default`, and
//! defaulting continues inside the defaulted value; `null` members of non-nullable properties
//! without a default are dropped.

use serde_json::Value;

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
}
