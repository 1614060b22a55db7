//! What becomes of a `null` in a built-in object: kube-apiserver decodes every object into the
//! kind's Go types and encodes it again before it stores it, so a `null` turns into what Go's
//! `encoding/json` writes for the zero value of the field's type:
//!
//! - a pointer, or a string, number, bool, slice or map with `omitempty`: nothing (the field is
//!   dropped);
//! - a string, number or bool without `omitempty`: `""`, `0`, `false`;
//! - a slice or map without `omitempty`: `null`;
//! - a struct value (never dropped by `omitempty`): `{}` with what its own zero fields write,
//!   field by field by these same rules;
//! - a `metav1.Time` or `MicroTime` value: `null` (its zero encodes so), or nothing under
//!   `omitzero` (`metadata.creationTimestamp`); a `resource.Quantity` value: `"0"`; an
//!   `intstr.IntOrString` value: `0`; a `runtime.RawExtension`: `null`.
//!
//! An item of a list or a value of a map that is `null` becomes the zero of the item type. A
//! field of a struct the object leaves out is decoded as its zero value too, so it is written as
//! a `null` field would be (a condition without `lastProbeTime` gets `lastProbeTime: null`, a
//! container without `resources` gets `resources: {}`); the field manager then owns those
//! fields for the writer that brought the struct (`f:lastProbeTime: {}`), as structured-merge-
//! diff does with the object converted from the Go types.
//!
//! The Go type of each field comes from k8s-openapi ([`go_types`](super::go_types)), whether it
//! is a pointer and its `omitempty` and `omitzero` from the Go sources
//! ([`go_fields`](super::go_fields)). A struct the table does not know has its `null`s dropped.

use serde_json::{Map, Value};

use super::go_fields::{Tag, lookup};
use super::go_types::{GoType, GoTypes};

/// Structs nested deeper than this are not walked (no Go value struct nests so deep).
const MAX_DEPTH: usize = 128;

/// Turns the `null`s of `obj`, an object of the kind `types` describes, into what decoding it
/// into the Go types and encoding it again writes.
#[cfg(test)]
pub(crate) fn normalize(types: &GoTypes, obj: &mut Map<String, Value>) {
    if let GoType::Struct(i) = types.root {
        walk_struct(types, i, obj, 0, false);
    }
}

/// What decoding `obj` into the Go types and encoding it again writes: its `null`s as the rules
/// above turn them, and every field its structs leave out as a `null` field would be
/// (a zero value, or nothing).
pub(crate) fn round_trip(types: &GoTypes, obj: &mut Map<String, Value>) {
    if let GoType::Struct(i) = types.root {
        walk_struct(types, i, obj, 0, true);
    }
}

fn walk(types: &GoTypes, ty: &GoType, v: &mut Value, depth: usize, fill: bool) {
    if depth > MAX_DEPTH {
        return;
    }
    match (ty.underlying(), v) {
        (GoType::Struct(i), Value::Object(m)) => walk_struct(types, *i, m, depth + 1, fill),
        (GoType::Slice(elem), Value::Array(items)) => {
            for item in items {
                walk_item(types, elem, item, depth + 1, fill);
            }
        }
        (GoType::Map(elem), Value::Object(m)) => {
            for item in m.values_mut() {
                walk_item(types, elem, item, depth + 1, fill);
            }
        }
        _ => {}
    }
}

/// An item of a slice or a value of a map: `null` is the zero of its type.
fn walk_item(types: &GoTypes, ty: &GoType, v: &mut Value, depth: usize, fill: bool) {
    if v.is_null() {
        *v = zero(types, ty, depth);
    } else {
        walk(types, ty, v, depth, fill);
    }
}

fn walk_struct(types: &GoTypes, i: usize, m: &mut Map<String, Value>, depth: usize, fill: bool) {
    let Some(s) = types.structs.get(i) else {
        return;
    };
    let nulls: Vec<String> = m
        .iter_mut()
        .filter_map(|(k, v)| {
            let ty = s.fields.get(k)?;
            if v.is_null() {
                return Some(k.clone());
            }
            walk(types, ty, v, depth, fill);
            None
        })
        .collect();
    for k in nulls {
        let Some(ty) = s.fields.get(&k) else {
            continue;
        };
        match null_field(types, i, &k, ty, depth) {
            Some(v) => {
                m.insert(k, v);
            }
            None => {
                m.remove(&k);
            }
        }
    }
    // A field the object leaves out is decoded as its zero value too, and encoded as one.
    if !fill {
        return;
    }
    for (k, ty) in &s.fields {
        if m.contains_key(k) {
            continue;
        }
        if let Some(v) = null_field(types, i, k, ty, depth) {
            m.insert(k.clone(), v);
        }
    }
}

/// What a field of struct `i` that is `null` (or zero) encodes as: `None` when it is dropped.
pub(super) fn null_field(
    types: &GoTypes,
    i: usize,
    name: &str,
    ty: &GoType,
    depth: usize,
) -> Option<Value> {
    let tag = lookup(&types.structs[i].qualified, name)?.tag;
    match tag {
        Tag::OmitZero | Tag::OmitEmpty => None,
        Tag::Pointer => Some(Value::Null),
        Tag::Value => Some(zero(types, ty, depth + 1)),
        Tag::NamedOmitEmpty => match ty.underlying() {
            GoType::Struct(_)
            | GoType::Time
            | GoType::MicroTime
            | GoType::Quantity
            | GoType::IntOrString
            | GoType::Raw(_) => Some(zero(types, ty, depth + 1)),
            _ => None,
        },
    }
}

/// What Go writes for the zero value of `ty`.
fn zero(types: &GoTypes, ty: &GoType, depth: usize) -> Value {
    match ty.underlying() {
        GoType::Bool => Value::Bool(false),
        GoType::Int32 | GoType::Int64 | GoType::Uint8 | GoType::Float64 | GoType::IntOrString => {
            Value::from(0)
        }
        GoType::String => Value::String(String::new()),
        GoType::Quantity => Value::String("0".into()),
        GoType::Bytes
        | GoType::Slice(_)
        | GoType::Map(_)
        | GoType::Time
        | GoType::MicroTime
        | GoType::Raw(_)
        | GoType::Named(..) => Value::Null,
        GoType::Struct(i) => {
            let mut m = Map::new();
            if depth <= MAX_DEPTH
                && let Some(s) = types.structs.get(*i)
            {
                for (k, t) in &s.fields {
                    if let Some(v) = null_field(types, *i, k, t, depth) {
                        m.insert(k.clone(), v);
                    }
                }
            }
            Value::Object(m)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::go_fields::TABLE;
    use crate::wire::go_types;
    use k8s_openapi::api;
    use serde_json::json;

    fn normalized<T: serde::de::DeserializeOwned + 'static>(v: Value) -> Value {
        let types = go_types::of::<T>().unwrap();
        let Value::Object(mut m) = v else {
            panic!("not an object")
        };
        normalize(&types, &mut m);
        Value::Object(m)
    }

    /// The structs a Go type is made of.
    fn structs_in(t: &GoType) -> Option<usize> {
        match t {
            GoType::Struct(i) => Some(*i),
            GoType::Slice(e) | GoType::Map(e) => structs_in(e),
            _ => None,
        }
    }

    #[test]
    fn the_table_should_know_every_struct_the_served_kinds_reach() {
        // Structs k8s-openapi has beyond v1.36 are reached only through fields the table (the
        // v1.36.2 sources) does not have.
        let mut missing = std::collections::BTreeSet::new();
        let mut kinds = 0;
        for def in crate::registry::builtins() {
            let Some(types) = crate::validation::unknown_fields::go_types(&def) else {
                continue;
            };
            kinds += 1;
            let mut reached: Vec<usize> = structs_in(&types.root).into_iter().collect();
            for s in &types.structs {
                let Some(known) = TABLE.get(s.qualified.as_str()) else {
                    continue;
                };
                for (name, t) in &s.fields {
                    if known.contains_key(name.as_str()) {
                        reached.extend(structs_in(t));
                    }
                }
            }
            for i in reached {
                let q = &types.structs[i].qualified;
                if !TABLE.contains_key(q.as_str()) {
                    missing.insert(format!("{q} ({})", def.kind));
                }
            }
        }
        assert!(kinds > 40, "{kinds} kinds");
        assert!(missing.is_empty(), "{missing:#?}");
    }

    #[test]
    fn the_fields_of_an_inline_struct_should_be_its_container_s() {
        // `EphemeralContainer` inlines `EphemeralContainerCommon`; `Volume` inlines
        // `VolumeSource`.
        let p = normalized::<api::core::v1::Pod>(json!({"spec": {
            "ephemeralContainers": [{"name": null, "resources": null, "image": null}],
            "volumes": [{"name": null, "emptyDir": null}]
        }}));
        assert_eq!(
            p,
            json!({"spec": {"ephemeralContainers": [{"name": "", "resources": {}}],
                "volumes": [{"name": ""}]}})
        );
    }

    #[test]
    fn the_table_should_read_the_go_tags() {
        let spec = &TABLE["apps.v1.DeploymentSpec"];
        assert_eq!(spec["replicas"].tag, Tag::OmitEmpty);
        assert_eq!(spec["selector"].tag, Tag::Pointer);
        assert_eq!(spec["template"].tag, Tag::Value);
        assert_eq!(spec["strategy"].tag, Tag::NamedOmitEmpty);
        assert_eq!(
            TABLE["meta.v1.ObjectMeta"]["creationTimestamp"].tag,
            Tag::OmitZero
        );
    }

    #[test]
    fn a_null_pointer_or_omitempty_field_should_be_dropped() {
        let d = normalized::<api::apps::v1::Deployment>(json!({
            "metadata": {"name": "d", "labels": null, "creationTimestamp": null},
            "spec": {"replicas": null, "paused": null, "selector": {"matchLabels": null},
                "template": {"metadata": {"creationTimestamp": null}, "spec": {
                    "containers": [{"name": "c", "image": "i", "command": null,
                        "securityContext": null}]}}}
        }));
        assert_eq!(
            d,
            json!({"metadata": {"name": "d"}, "spec": {"selector": {},
                "template": {"metadata": {}, "spec": {"containers": [{"name": "c", "image": "i"}]}}}})
        );
    }

    #[test]
    fn a_null_value_struct_should_be_its_zero() {
        let d = normalized::<api::apps::v1::Deployment>(json!({
            "metadata": {"name": "d"},
            "spec": {"strategy": null, "template": {"metadata": null, "spec": {
                "containers": [{"name": "c", "image": "i", "resources": null}]}}},
            "status": null
        }));
        assert_eq!(
            d,
            json!({"metadata": {"name": "d"}, "spec": {"strategy": {}, "template": {
                "metadata": {}, "spec": {"containers": [{"name": "c", "image": "i", "resources": {}}]}}},
                "status": {}})
        );
        // A zero PodSpec carries its containers (no omitempty) as null.
        let p = normalized::<api::core::v1::PodTemplate>(json!({"template": {"spec": null}}));
        assert_eq!(p, json!({"template": {"spec": {"containers": null}}}));
    }

    #[test]
    fn a_null_required_scalar_should_be_its_zero() {
        let d = normalized::<api::apps::v1::Deployment>(json!({
            "spec": {"template": {"spec": {"containers": [{"name": null, "image": "i",
                "ports": [{"containerPort": null, "name": null}]}]}}}
        }));
        assert_eq!(
            d,
            json!({"spec": {"template": {"spec": {"containers": [{"name": "", "image": "i",
                "ports": [{"containerPort": 0}]}]}}}})
        );
    }

    #[test]
    fn a_null_list_without_omitempty_should_stay_null() {
        let r = normalized::<api::rbac::v1::ClusterRole>(json!({"rules": null,
            "aggregationRule": null}));
        assert_eq!(r, json!({"rules": null}));
        let r = normalized::<api::rbac::v1::Role>(json!({"rules": [{"verbs": null,
            "apiGroups": null}]}));
        assert_eq!(r, json!({"rules": [{"verbs": null}]}));
    }

    #[test]
    fn null_times_should_follow_their_go_field() {
        let p = normalized::<api::core::v1::Pod>(json!({
            "metadata": {"deletionTimestamp": null, "creationTimestamp": null},
            "status": {"startTime": null, "conditions": [{"type": "Ready", "status": "True",
                "lastProbeTime": null, "lastTransitionTime": null}]}
        }));
        assert_eq!(
            p,
            json!({"metadata": {}, "status": {"conditions": [{"type": "Ready", "status": "True",
                "lastProbeTime": null, "lastTransitionTime": null}]}})
        );
    }

    #[test]
    fn null_items_should_be_the_zero_of_their_type() {
        let d = normalized::<api::apps::v1::Deployment>(json!({
            "metadata": {"labels": {"a": null}, "finalizers": [null]},
            "spec": {"template": {"spec": {"containers": [null], "nodeSelector": {"x": null}}}}
        }));
        assert_eq!(
            d,
            json!({"metadata": {"labels": {"a": ""}, "finalizers": [""]},
                "spec": {"template": {"spec": {"containers": [{"name": "", "resources": {}}],
                    "nodeSelector": {"x": ""}}}}})
        );
    }

    #[test]
    fn special_value_types_should_encode_their_zero() {
        let s = normalized::<api::core::v1::Service>(json!({
            "spec": {"ports": [{"port": 80, "targetPort": null, "nodePort": null}]}
        }));
        assert_eq!(
            s,
            json!({"spec": {"ports": [{"port": 80, "targetPort": 0}]}})
        );
        let r = normalized::<api::apps::v1::ControllerRevision>(
            json!({"data": null, "revision": null}),
        );
        assert_eq!(r, json!({"data": null, "revision": 0}));
    }

    /// Every non-null scalar of `v` with its path.
    fn scalars(v: &Value, path: String, out: &mut Vec<(String, Value)>) {
        match v {
            Value::Object(m) => {
                for (k, x) in m {
                    scalars(x, format!("{path}/{k}"), out);
                }
            }
            Value::Array(a) => {
                for (i, x) in a.iter().enumerate() {
                    scalars(x, format!("{path}/{i}"), out);
                }
            }
            Value::Null => {}
            _ => out.push((path, v.clone())),
        }
    }

    fn json_tree() -> impl proptest::strategy::Strategy<Value = Value> {
        use proptest::prelude::*;
        const KEYS: &[&str] = &[
            "metadata",
            "spec",
            "template",
            "containers",
            "resources",
            "labels",
            "replicas",
            "name",
            "image",
            "strategy",
            "selector",
            "matchLabels",
            "status",
            "conditions",
            "creationTimestamp",
            "ports",
            "containerPort",
            "command",
            "limits",
            "x",
        ];
        let leaf = prop_oneof![
            4 => Just(Value::Null),
            1 => any::<bool>().prop_map(Value::Bool),
            1 => any::<i32>().prop_map(Value::from),
            1 => "[a-z0-9]{0,4}".prop_map(Value::String),
        ];
        leaf.prop_recursive(6, 64, 6, |inner| {
            prop_oneof![
                proptest::collection::vec(inner.clone(), 0..3).prop_map(Value::Array),
                proptest::collection::btree_map(proptest::sample::select(KEYS), inner, 0..6)
                    .prop_map(|m| Value::Object(
                        m.into_iter().map(|(k, v)| (k.to_owned(), v)).collect()
                    )),
            ]
        })
    }

    proptest::proptest! {
        #[test]
        fn normalizing_should_keep_every_non_null_value_and_be_idempotent(
            spec in json_tree(), metadata in json_tree(), status in json_tree(),
        ) {
            let types = go_types::of::<api::apps::v1::Deployment>().unwrap();
            let mut m = Map::new();
            m.insert("metadata".into(), metadata);
            m.insert("spec".into(), spec);
            m.insert("status".into(), status);
            let before = Value::Object(m.clone());
            normalize(&types, &mut m);
            let once = Value::Object(m.clone());
            normalize(&types, &mut m);
            proptest::prop_assert_eq!(&Value::Object(m), &once);
            let mut kept = Vec::new();
            scalars(&before, String::new(), &mut kept);
            for (path, v) in kept {
                proptest::prop_assert_eq!(once.pointer(&path), Some(&v), "{}", path);
            }
        }
    }

    #[test]
    fn a_round_trip_should_write_the_zero_of_every_field_left_out() {
        let types = go_types::of::<api::core::v1::Pod>().unwrap();
        let mut m = json!({"spec": {"containers": [{"name": "c", "image": "i"}]},
            "status": {"conditions": [{"type": "Ready", "status": "True"}]}})
        .as_object()
        .unwrap()
        .clone();
        round_trip(&types, &mut m);
        let v = Value::Object(m);
        // Value structs (`resources`), `null` times, required strings and lists stay or appear;
        // pointers and `omitempty` fields do not.
        assert_eq!(v["spec"]["containers"][0]["resources"], json!({}));
        assert_eq!(
            v["status"]["conditions"][0],
            json!({"type": "Ready", "status": "True", "lastProbeTime": null, "lastTransitionTime": null})
        );
        assert_eq!(v["metadata"], json!({}));
        assert!(v["spec"].get("nodeName").is_none());
        assert!(v["spec"].get("securityContext").is_none());
        // Idempotent.
        let mut again = v.as_object().unwrap().clone();
        round_trip(&types, &mut again);
        assert_eq!(Value::Object(again), v);
    }
}
