//! JSON encoding in kube-apiserver's field order: an object's `kind`, `apiVersion` and
//! `metadata` come first (Go encodes a struct's fields in declaration order, and every API type
//! starts with its `TypeMeta` and `ObjectMeta`), and `metadata`'s members follow `ObjectMeta`'s
//! (and `ListMeta`'s) order. Other members keep `serde_json`'s (sorted) order.

use serde_json::{Map, Value};

/// The members an API object starts with.
const TYPE_FIRST: [&str; 3] = ["kind", "apiVersion", "metadata"];

/// `ObjectMeta`'s fields in declaration order, then `ListMeta`'s that it lacks.
const META_ORDER: [&str; 17] = [
    "name",
    "generateName",
    "namespace",
    "selfLink",
    "uid",
    "resourceVersion",
    "generation",
    "creationTimestamp",
    "deletionTimestamp",
    "deletionGracePeriodSeconds",
    "labels",
    "annotations",
    "ownerReferences",
    "finalizers",
    "managedFields",
    "continue",
    "remainingItemCount",
];

/// `v` encoded as JSON, top-level members in kube-apiserver's order.
pub(crate) fn to_vec(v: &Value) -> Vec<u8> {
    let mut out = Vec::with_capacity(256);
    match v {
        Value::Object(map) => write_ordered(&mut out, map, &TYPE_FIRST, true),
        other => write_value(&mut out, other),
    }
    out
}

fn write_value(out: &mut Vec<u8>, v: &Value) {
    // Writing a `Value` into a `Vec` cannot fail (its map keys are strings).
    let _ = serde_json::to_writer(&mut *out, v);
}

/// Writes `map` with the members named in `first` first (in that order), then the rest.
/// `top`: the map is an object whose `metadata` member is an `ObjectMeta`.
fn write_ordered(out: &mut Vec<u8>, map: &Map<String, Value>, first: &[&str], top: bool) {
    out.push(b'{');
    let mut wrote = false;
    let mut member = |out: &mut Vec<u8>, key: &str, value: &Value| {
        if wrote {
            out.push(b',');
        }
        wrote = true;
        write_value(out, &Value::String(key.to_owned()));
        out.push(b':');
        match value {
            Value::Object(meta) if top && key == "metadata" => {
                write_ordered(out, meta, &META_ORDER, false);
            }
            other => write_value(out, other),
        }
    };
    for key in first {
        if let Some(value) = map.get(*key) {
            member(out, key, value);
        }
    }
    for (key, value) in map {
        if !first.contains(&key.as_str()) {
            member(out, key, value);
        }
    }
    out.push(b'}');
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn type_meta_and_metadata_should_come_first_in_go_order() {
        let v = json!({
            "apiVersion": "v1",
            "data": {"b": "1", "a": "\"q\""},
            "kind": "ConfigMap",
            "metadata": {"uid": "u", "namespace": "ns", "name": "n", "labels": {"x": "y"}, "resourceVersion": "5"}
        });
        let text = String::from_utf8(to_vec(&v)).unwrap();
        assert_eq!(
            text,
            r#"{"kind":"ConfigMap","apiVersion":"v1","metadata":{"name":"n","namespace":"ns","uid":"u","resourceVersion":"5","labels":{"x":"y"}},"data":{"a":"\"q\"","b":"1"}}"#
        );
        let back: Value = serde_json::from_str(&text).unwrap();
        assert_eq!(back, v);
        assert_eq!(
            to_vec(&json!([1, {"b": 1, "a": 2}])),
            br#"[1,{"a":2,"b":1}]"#
        );
    }
}
