//! Pruning, as apiextensions-apiserver's structural pruning does it: members of an object that
//! the structural schema does not specify are dropped, unless the schema (or one above, down to
//! the next `properties`) sets `x-kubernetes-preserve-unknown-fields`. At the root of a resource
//! (and of an `x-kubernetes-embedded-resource`), `apiVersion`, `kind` and `metadata` are kept.

use serde_json::Value;

/// Whether `schema` sets `x-kubernetes-preserve-unknown-fields: true`.
fn preserves(schema: Option<&Value>) -> bool {
    schema
        .and_then(|s| s.get("x-kubernetes-preserve-unknown-fields"))
        .and_then(Value::as_bool)
        == Some(true)
}

fn child_path(path: &str, key: &str) -> String {
    if path.is_empty() {
        key.to_owned()
    } else {
        format!("{path}.{key}")
    }
}

/// Prunes `value` (the object at the root of a resource) against `schema`; returns the paths
/// of the dropped members (`spec.bogus`, `spec.items[0].x`), sorted.
pub(crate) fn prune(value: &mut Value, schema: &Value) -> Vec<String> {
    let mut out = Vec::new();
    prune_at(value, Some(schema), "", true, &mut out);
    out.sort();
    out
}

/// Prunes a value that is not the root of a resource (a schema's default); returns whether
/// anything was dropped.
pub(crate) fn prune_nested(value: &mut Value, schema: &Value) -> bool {
    let mut out = Vec::new();
    prune_at(value, Some(schema), "", false, &mut out);
    !out.is_empty()
}

fn prune_at(
    value: &mut Value,
    schema: Option<&Value>,
    path: &str,
    root: bool,
    out: &mut Vec<String>,
) {
    match value {
        Value::Object(map) => {
            let properties = schema
                .and_then(|s| s.get("properties"))
                .and_then(Value::as_object);
            let additional = schema
                .and_then(|s| s.get("additionalProperties"))
                .filter(|a| a.is_object());
            let embedded = root
                || schema
                    .and_then(|s| s.get("x-kubernetes-embedded-resource"))
                    .and_then(Value::as_bool)
                    == Some(true);
            let keep_unknown = preserves(schema);
            let keys: Vec<String> = map.keys().cloned().collect();
            for key in keys {
                if embedded && matches!(key.as_str(), "apiVersion" | "kind" | "metadata") {
                    continue;
                }
                let p = child_path(path, &key);
                let sub = properties.and_then(|props| props.get(&key)).or(additional);
                match sub {
                    Some(s) => {
                        if let Some(v) = map.get_mut(&key) {
                            prune_at(v, Some(s), &p, false, out);
                        }
                    }
                    None if keep_unknown => {}
                    None => {
                        map.remove(&key);
                        out.push(p);
                    }
                }
            }
        }
        Value::Array(items) => {
            let item_schema = schema
                .and_then(|s| s.get("items"))
                .filter(|i| i.is_object());
            if item_schema.is_none() && preserves(schema) {
                return;
            }
            for (i, item) in items.iter_mut().enumerate() {
                prune_at(item, item_schema, &format!("{path}[{i}]"), false, out);
            }
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn schema() -> Value {
        json!({"type": "object", "properties": {
            "spec": {"type": "object", "properties": {
                "size": {"type": "integer"},
                "tags": {"type": "array", "items": {"type": "string"}},
                "config": {"type": "object", "x-kubernetes-preserve-unknown-fields": true},
                "labels": {"type": "object", "additionalProperties": {"type": "string"}},
                "nested": {"type": "object", "properties": {"mode": {"type": "string"}}}
            }}
        }})
    }

    #[test]
    fn unknown_members_should_be_pruned_and_reported_sorted() {
        let mut v = json!({"apiVersion": "x/v1", "kind": "W", "metadata": {"name": "a"},
            "spec": {"size": 1, "bogus": 1, "nested": {"extra": true, "mode": "m"}},
            "topbogus": 1});
        let out = prune(&mut v, &schema());
        assert_eq!(out, vec!["spec.bogus", "spec.nested.extra", "topbogus"]);
        assert_eq!(
            v,
            json!({"apiVersion": "x/v1", "kind": "W", "metadata": {"name": "a"},
                "spec": {"size": 1, "nested": {"mode": "m"}}})
        );
    }

    #[test]
    fn preserved_and_additional_properties_should_be_kept() {
        let mut v = json!({"spec": {"config": {"any": {"deep": [1]}}, "labels": {"a": "b"}}});
        let before = v.clone();
        assert!(prune(&mut v, &schema()).is_empty());
        assert_eq!(v, before);
    }

    #[test]
    fn an_object_where_the_schema_wants_an_array_should_lose_its_members() {
        let mut v = json!({"spec": {"tags": {"a": 1}}});
        assert_eq!(prune(&mut v, &schema()), vec!["spec.tags.a"]);
        assert_eq!(v, json!({"spec": {"tags": {}}}));
    }
}
