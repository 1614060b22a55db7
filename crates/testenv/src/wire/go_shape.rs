//! The shape of a built-in object as kube-apiserver writes it, beyond its `null`s
//! ([`go_nulls`](super::go_nulls)): kube-apiserver decodes every write into the kind's Go types,
//! stores it in etcd as protobuf and answers with what it decodes from there, encoded by Go's
//! `encoding/json`. Two things follow for every field of every built-in kind:
//!
//! - **Decoding** ([`decoded`]): an empty list or map under `omitempty` is not written again
//!   (`encoding/json` drops a slice or map of length 0), so the writer does not own it either.
//! - **Storage** ([`stored`]): protobuf has no empty list or map apart from an absent one, so
//!   an empty slice or map comes back `nil`, which a field without `omitempty` writes as `null`
//!   (`rules: []` of a ClusterRole is stored and answered as `rules: null`); and a field that is
//!   absent is written as the zero value of its Go type when its tag says so (a struct held by
//!   value is `{}`, a number without `omitempty` is `0`, a slice without `omitempty` is `null`):
//!   a ReplicationController's `status` is `{"replicas": 0}`, a CronJob's
//!   `jobTemplate.metadata` is `{}`.
//!
//! The Go types come from [`go_types`](super::go_types) and the tags from
//! [`go_fields`](super::go_fields); a struct the table does not know is left as it is. Custom
//! resources are stored as JSON and keep what they were written with.

use serde_json::{Map, Value};

use super::go_fields::{Tag, lookup};
use super::go_nulls;
use super::go_types::{GoType, GoTypes};

/// Structs nested deeper than this are not walked (no Go value struct nests so deep).
const MAX_DEPTH: usize = 128;

#[derive(Clone, Copy, PartialEq, Eq)]
enum Pass {
    Decoded,
    Stored,
}

/// Drops the empty lists and maps that decoding into the Go types and encoding again drop:
/// those of `omitempty` fields.
pub(crate) fn decoded(types: &GoTypes, obj: &mut Map<String, Value>) {
    if let GoType::Struct(i) = types.root {
        walk_struct(types, i, obj, Pass::Decoded, 0);
    }
}

/// The object as kube-apiserver answers once it has stored it: empty lists and maps come back
/// as `nil` (dropped under `omitempty`, else `null`), absent fields as what Go writes for their
/// zero value.
pub(crate) fn stored(types: &GoTypes, obj: &mut Map<String, Value>) {
    if let GoType::Struct(i) = types.root {
        walk_struct(types, i, obj, Pass::Stored, 0);
    }
}

/// Whether `v` is what protobuf cannot tell from nothing for a value of type `ty`: an empty
/// list, map or byte string.
fn is_empty_collection(ty: &GoType, v: &Value) -> bool {
    match (ty.underlying(), v) {
        (GoType::Slice(_), Value::Array(a)) => a.is_empty(),
        (GoType::Map(_), Value::Object(m)) => m.is_empty(),
        (GoType::Bytes, Value::String(s)) => s.is_empty(),
        _ => false,
    }
}

fn walk(types: &GoTypes, ty: &GoType, v: &mut Value, pass: Pass, depth: usize) {
    if depth > MAX_DEPTH {
        return;
    }
    match (ty.underlying(), v) {
        (GoType::Struct(i), Value::Object(m)) => walk_struct(types, *i, m, pass, depth + 1),
        (GoType::Slice(elem), Value::Array(items)) => {
            for item in items {
                walk(types, elem, item, pass, depth + 1);
            }
        }
        (GoType::Map(elem), Value::Object(m)) => {
            for item in m.values_mut() {
                walk(types, elem, item, pass, depth + 1);
            }
        }
        _ => {}
    }
}

fn walk_struct(types: &GoTypes, i: usize, m: &mut Map<String, Value>, pass: Pass, depth: usize) {
    let Some(s) = types.structs.get(i) else {
        return;
    };
    let Some(known) = super::go_fields::TABLE.get(s.qualified.as_str()) else {
        return;
    };
    let mut emptied = Vec::new();
    for (k, v) in m.iter_mut() {
        let Some(ty) = s.fields.get(k) else {
            continue;
        };
        if is_empty_collection(ty, v) {
            emptied.push(k.clone());
        } else {
            walk(types, ty, v, pass, depth);
        }
    }
    for k in emptied {
        let (Some(ty), Some(field)) = (s.fields.get(&k), lookup(&s.qualified, &k)) else {
            continue;
        };
        match (pass, field.tag) {
            // `encoding/json`'s `omitempty` drops a slice, map or byte string of length 0.
            (_, Tag::OmitEmpty | Tag::NamedOmitEmpty | Tag::OmitZero) => {
                m.remove(&k);
            }
            // Stored as protobuf, it comes back `nil`: the field's zero.
            (Pass::Stored, Tag::Value | Tag::Pointer) => {
                let zero = go_nulls::null_field(types, i, &k, ty, depth).unwrap_or(Value::Null);
                m.insert(k, zero);
            }
            (Pass::Decoded, Tag::Value | Tag::Pointer) => {}
        }
    }
    if pass == Pass::Stored {
        for (k, ty) in &s.fields {
            if m.contains_key(k) || !known.contains_key(k.as_str()) {
                continue;
            }
            if let Some(v) = go_nulls::null_field(types, i, k, ty, depth) {
                m.insert(k.clone(), v);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::go_types;
    use k8s_openapi::api;
    use serde_json::json;

    fn shaped<T: serde::de::DeserializeOwned + 'static>(v: Value, pass: Pass) -> Value {
        let types = go_types::of::<T>().unwrap();
        let Value::Object(mut m) = v else {
            panic!("not an object")
        };
        match pass {
            Pass::Decoded => decoded(&types, &mut m),
            Pass::Stored => stored(&types, &mut m),
        }
        Value::Object(m)
    }

    #[test]
    fn an_empty_list_without_omitempty_should_be_stored_as_null() {
        let role = shaped::<api::rbac::v1::ClusterRole>(
            json!({"metadata": {"name": "r"}, "rules": []}),
            Pass::Stored,
        );
        assert_eq!(role, json!({"metadata": {"name": "r"}, "rules": null}));
        // Absent, it is written as its zero too.
        let role =
            shaped::<api::rbac::v1::ClusterRole>(json!({"metadata": {"name": "r"}}), Pass::Stored);
        assert_eq!(role, json!({"metadata": {"name": "r"}, "rules": null}));
    }

    #[test]
    fn empty_omitempty_lists_and_maps_should_be_dropped_when_decoded() {
        let cm = shaped::<api::core::v1::ConfigMap>(
            json!({"metadata": {"name": "c", "labels": {}, "finalizers": []}, "data": {},
                   "binaryData": {"a": ""}}),
            Pass::Decoded,
        );
        assert_eq!(
            cm,
            json!({"metadata": {"name": "c"}, "binaryData": {"a": ""}})
        );
        let svc = shaped::<api::core::v1::Service>(
            json!({"spec": {"externalIPs": [], "ports": [{"port": 80}]}}),
            Pass::Decoded,
        );
        assert_eq!(svc, json!({"spec": {"ports": [{"port": 80}]}}));
    }

    #[test]
    fn a_value_struct_and_a_number_without_omitempty_should_be_written_when_absent() {
        let rc = shaped::<api::core::v1::ReplicationController>(
            json!({"metadata": {"name": "r"}, "spec": {"template": {"spec": {
                "containers": [{"name": "c", "image": "i"}]}}}}),
            Pass::Stored,
        );
        assert_eq!(rc["status"], json!({"replicas": 0}));
        assert_eq!(rc["spec"]["template"]["metadata"], json!({}));
        assert_eq!(
            rc["spec"]["template"]["spec"]["containers"][0]["resources"],
            json!({})
        );
        let cj = shaped::<api::batch::v1::CronJob>(
            json!({"spec": {"schedule": "@hourly", "jobTemplate": {"spec": {"template": {}}}}}),
            Pass::Stored,
        );
        assert_eq!(cj["spec"]["jobTemplate"]["metadata"], json!({}));
        assert_eq!(cj["status"], json!({}));
    }

    #[test]
    fn a_pod_disruption_budget_status_should_have_its_four_counts() {
        let pdb = shaped::<api::policy::v1::PodDisruptionBudget>(
            json!({"spec": {"minAvailable": 1}}),
            Pass::Stored,
        );
        assert_eq!(
            pdb["status"],
            json!({"disruptionsAllowed": 0, "currentHealthy": 0, "desiredHealthy": 0,
                   "expectedPods": 0})
        );
    }
}
