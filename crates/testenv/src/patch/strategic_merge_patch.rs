//! Strategic merge patch: a JSON merge patch whose lists merge by the patch merge key of the
//! built-in type (`containers` by `name`, `ports` by `containerPort`, ...) where the type says
//! `x-kubernetes-patch-strategy: merge`, with the directives `$patch` (`replace`, `delete`,
//! `merge`), `$retainKeys`, `$setElementOrder/<list>` and `$deleteFromPrimitiveList/<list>`.

use serde_json::{Map, Value};

use crate::managed_fields::{Schema, Ty};

const PATCH: &str = "$patch";
const RETAIN_KEYS: &str = "$retainKeys";
const SET_ELEMENT_ORDER: &str = "$setElementOrder/";
const DELETE_FROM_PRIMITIVE_LIST: &str = "$deleteFromPrimitiveList/";

/// Why a strategic merge patch could not be applied.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(crate) enum SmpError {
    /// A `$patch` directive kube-apiserver does not know (it answers 500 for it).
    #[error("unknown patch type: {0} in map: {1}")]
    UnknownDirective(String, String),
    /// A patch the type's strategies cannot apply (kube-apiserver answers 400... or 422).
    #[error("{0}")]
    Invalid(String),
}

/// A map as Go's `%v` prints it (`map[a:1 b:x]`), for kube-apiserver's messages.
fn go_map(m: &Map<String, Value>) -> String {
    let mut keys: Vec<&String> = m.keys().collect();
    keys.sort();
    let parts: Vec<String> = keys
        .into_iter()
        .map(|k| {
            let v = match &m[k] {
                Value::String(s) => s.clone(),
                Value::Object(o) => go_map(o),
                other => other.to_string(),
            };
            format!("{k}:{v}")
        })
        .collect();
    format!("map[{}]", parts.join(" "))
}

/// Applies a strategic merge patch to an object of the schema's root type.
pub(crate) fn strategic_merge_patch(
    schema: &Schema,
    original: &Value,
    patch: &Value,
) -> Result<Value, SmpError> {
    let (Value::Object(o), Value::Object(p)) = (original, patch) else {
        return Err(SmpError::Invalid(
            "a strategic merge patch must be a JSON object".into(),
        ));
    };
    Ok(merge_map(schema, &schema.root, o, p)?.map_or(Value::Object(Map::new()), Value::Object))
}

/// Merges a patch map into an original map; `None` when the patch deletes the map.
fn merge_map(
    schema: &Schema,
    ty: &Ty,
    original: &Map<String, Value>,
    patch: &Map<String, Value>,
) -> Result<Option<Map<String, Value>>, SmpError> {
    if let Some(d) = patch.get(PATCH) {
        return match d.as_str() {
            Some("replace") => {
                let mut p = patch.clone();
                p.remove(PATCH);
                Ok(Some(strip_directives(schema, ty, &p)?))
            }
            Some("delete") => Ok(None),
            Some("merge") => {
                let mut p = patch.clone();
                p.remove(PATCH);
                merge_map(schema, ty, original, &p)
            }
            _ => Err(SmpError::UnknownDirective(
                d.as_str().map_or_else(|| d.to_string(), str::to_owned),
                go_map(patch),
            )),
        };
    }
    let mut out = original.clone();
    if let Some(keys) = patch.get(RETAIN_KEYS) {
        let Some(keys) = keys.as_array() else {
            return Err(SmpError::Invalid(format!(
                "invalid $retainKeys directive: {keys}"
            )));
        };
        let keep: Vec<&str> = keys.iter().filter_map(Value::as_str).collect();
        out.retain(|k, _| keep.contains(&k.as_str()));
    }
    for (k, v) in patch {
        if let Some(field) = k.strip_prefix(DELETE_FROM_PRIMITIVE_LIST) {
            let Some(gone) = v.as_array() else {
                return Err(SmpError::Invalid(format!(
                    "invalid {k} directive: it must be a list"
                )));
            };
            if let Some(Value::Array(items)) = out.get_mut(field) {
                items.retain(|i| !gone.contains(i));
            }
        }
    }
    for (k, pv) in patch {
        if k == RETAIN_KEYS
            || k.starts_with(DELETE_FROM_PRIMITIVE_LIST)
            || k.starts_with(SET_ELEMENT_ORDER)
        {
            continue;
        }
        let cty = schema.child(ty, k);
        let order = patch
            .get(&format!("{SET_ELEMENT_ORDER}{k}"))
            .and_then(Value::as_array);
        if pv.is_null() {
            out.remove(k);
            continue;
        }
        let merged = match (out.get(k), pv) {
            (Some(Value::Object(o)), Value::Object(p)) => {
                merge_map(schema, &cty, o, p)?.map(Value::Object)
            }
            (orig, Value::Array(p)) => {
                let empty = Vec::new();
                let o = match orig {
                    Some(Value::Array(o)) => o,
                    _ => &empty,
                };
                Some(merge_field_list(schema, ty, k, o, p, order)?)
            }
            // A map the object does not have yet: a patch of deletions only leaves it out, as
            // the typed object kube-apiserver decodes the result into would.
            (_, Value::Object(p)) => merge_map(schema, &cty, &Map::new(), p)?
                .filter(|m| !m.is_empty() || p.is_empty())
                .map(Value::Object),
            (_, other) => Some(other.clone()),
        };
        match merged {
            Some(v) => {
                out.insert(k.clone(), v);
            }
            None => {
                out.remove(k);
            }
        }
    }
    // `$setElementOrder` for a list the patch does not otherwise change.
    for (k, order) in patch {
        let Some(field) = k.strip_prefix(SET_ELEMENT_ORDER) else {
            continue;
        };
        if patch.contains_key(field) {
            continue;
        }
        let Some(order) = order.as_array() else {
            continue;
        };
        if let Some(Value::Array(items)) = out.get(field) {
            let key = merge_key(schema, ty, field);
            let reordered = normalize_order(items.clone(), order, items, key.as_deref());
            out.insert(field.to_owned(), Value::Array(reordered));
        }
    }
    Ok(Some(out))
}

/// Removes the directives of a patch that replaces instead of merging.
fn strip_directives(
    schema: &Schema,
    ty: &Ty,
    patch: &Map<String, Value>,
) -> Result<Map<String, Value>, SmpError> {
    Ok(merge_map(schema, ty, &Map::new(), patch)?.unwrap_or_default())
}

fn merge_key(schema: &Schema, ty: &Ty, field: &str) -> Option<String> {
    schema.field(ty, field).and_then(|f| f.merge_key.clone())
}

fn merges(schema: &Schema, ty: &Ty, field: &str) -> bool {
    schema
        .field(ty, field)
        .and_then(|f| f.patch_strategy.as_deref())
        .is_some_and(|s| s.split(',').any(|p| p == "merge"))
}

/// Merges the list under `field` of a struct of type `ty`.
fn merge_field_list(
    schema: &Schema,
    ty: &Ty,
    field: &str,
    original: &[Value],
    patch: &[Value],
    order: Option<&Vec<Value>>,
) -> Result<Value, SmpError> {
    let elem = match schema.child(ty, field) {
        Ty::List(_, elem) => *elem,
        _ => Ty::Deduced,
    };
    if !merges(schema, ty, field) {
        // Replaced whole; a `{"$patch": "replace"}` item is dropped all the same.
        let mut items = Vec::with_capacity(patch.len());
        for p in patch {
            match p {
                Value::Object(m) if m.get(PATCH).is_some() && m.len() == 1 => {}
                Value::Object(m) => items.push(Value::Object(strip_directives(schema, &elem, m)?)),
                other => items.push(other.clone()),
            }
        }
        return Ok(Value::Array(items));
    }
    let key = merge_key(schema, ty, field);
    let maps = patch.iter().chain(original).any(Value::is_object);
    if !maps {
        let mut merged: Vec<Value> = Vec::new();
        for v in original.iter().chain(patch) {
            if !merged.contains(v) {
                merged.push(v.clone());
            }
        }
        let order = order.map_or(patch, Vec::as_slice);
        return Ok(Value::Array(normalize_order(merged, order, original, None)));
    }
    let Some(key) = key else {
        return Err(SmpError::Invalid(format!(
            "cannot merge lists without merge key for {field}"
        )));
    };
    let mut merged: Vec<Value> = original.to_vec();
    let mut patch_items: Vec<&Map<String, Value>> = Vec::new();
    for p in patch {
        let Value::Object(m) = p else {
            return Err(SmpError::Invalid(format!(
                "the list {field} mixes maps and other values"
            )));
        };
        match m.get(PATCH) {
            None => patch_items.push(m),
            Some(d) => match d.as_str() {
                Some("replace") => {
                    let mut items = Vec::new();
                    for q in patch {
                        if let Value::Object(qm) = q
                            && qm.get(PATCH).is_none()
                        {
                            items.push(Value::Object(strip_directives(schema, &elem, qm)?));
                        }
                    }
                    return Ok(Value::Array(items));
                }
                Some("delete") => {
                    let Some(id) = m.get(&key) else {
                        return Err(SmpError::Invalid(format!(
                            "delete patch type with no merge key defined: {}",
                            go_map(m)
                        )));
                    };
                    merged.retain(|o| o.get(&key) != Some(id));
                }
                Some("merge") => patch_items.push(m),
                _ => {
                    return Err(SmpError::UnknownDirective(
                        d.as_str().map_or_else(|| d.to_string(), str::to_owned),
                        go_map(m),
                    ));
                }
            },
        }
    }
    let mut in_patch: Vec<Value> = Vec::new();
    for p in patch_items {
        let mut p = p.clone();
        if p.get(PATCH).and_then(Value::as_str) == Some("merge") {
            p.remove(PATCH);
        }
        let Some(id) = p.get(&key).cloned() else {
            return Err(SmpError::Invalid(format!(
                "map: {} does not contain declared merge key: {key}",
                go_map(&p)
            )));
        };
        match merged.iter().position(|o| o.get(&key) == Some(&id)) {
            Some(i) => {
                let o = merged[i].as_object().cloned().unwrap_or_default();
                match merge_map(schema, &elem, &o, &p)? {
                    Some(m) => merged[i] = Value::Object(m),
                    None => {
                        merged.remove(i);
                    }
                }
            }
            None => {
                if let Some(m) = merge_map(schema, &elem, &Map::new(), &p)? {
                    merged.push(Value::Object(m));
                }
            }
        }
        in_patch.push(Value::Object(p));
    }
    let order = order.map_or(in_patch.as_slice(), Vec::as_slice);
    Ok(Value::Array(normalize_order(
        merged,
        order,
        original,
        Some(&key),
    )))
}

/// Orders a merged list as kube-apiserver does: the items the patch (or its
/// `$setElementOrder`) names in that order, the others in their original order, interleaved
/// where the original order says so.
fn normalize_order(
    merged: Vec<Value>,
    order: &[Value],
    original: &[Value],
    key: Option<&str>,
) -> Vec<Value> {
    let id = |v: &Value| -> Value {
        match key {
            Some(k) => v.get(k).cloned().unwrap_or(Value::Null),
            None => v.clone(),
        }
    };
    let index = |list: &[Value], v: &Value| -> Option<usize> {
        let want = id(v);
        list.iter().position(|x| id(x) == want)
    };
    let (mut patched, mut server_only): (Vec<Value>, Vec<Value>) =
        merged.into_iter().partition(|v| index(order, v).is_some());
    patched.sort_by_key(|v| index(order, v).unwrap_or(usize::MAX));
    server_only.sort_by_key(|v| index(original, v).unwrap_or(usize::MAX));
    let mut out = Vec::with_capacity(patched.len() + server_only.len());
    let (mut i, mut j) = (0, 0);
    while i < server_only.len() || j < patched.len() {
        if i >= server_only.len() {
            out.push(patched[j].clone());
            j += 1;
        } else if j >= patched.len() {
            out.push(server_only[i].clone());
            i += 1;
        } else {
            let left_first = match (
                index(original, &server_only[i]),
                index(original, &patched[j]),
            ) {
                (Some(l), Some(r)) => l < r,
                _ => false,
            };
            if left_first {
                out.push(server_only[i].clone());
                i += 1;
            } else {
                out.push(patched[j].clone());
                j += 1;
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn deployment(containers: Value) -> Value {
        json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web"},
            "spec": {"template": {"spec": {"containers": containers}}}})
    }

    fn containers(v: &Value) -> &Value {
        &v["spec"]["template"]["spec"]["containers"]
    }

    fn schema() -> Schema {
        Schema::builtin("apps", "v1", "Deployment")
    }

    #[test]
    fn containers_should_merge_by_name_and_keep_the_others() {
        let orig =
            deployment(json!([{"name": "a", "image": "a:1"}, {"name": "b", "image": "b:1"}]));
        let patch = deployment(json!([{"name": "a", "image": "a:2"}]));
        let out = strategic_merge_patch(&schema(), &orig, &patch).unwrap();
        assert_eq!(
            containers(&out),
            &json!([{"name": "a", "image": "a:2"}, {"name": "b", "image": "b:1"}])
        );
    }

    #[test]
    fn a_new_container_should_come_first_and_a_new_env_var_last() {
        let orig = deployment(
            json!([{"name": "a", "env": [{"name": "X", "value": "1"}, {"name": "Y", "value": "2"}]}, {"name": "b"}]),
        );
        let out =
            strategic_merge_patch(&schema(), &orig, &deployment(json!([{"name": "c"}]))).unwrap();
        assert_eq!(containers(&out)[0]["name"], "c");
        let patch = deployment(
            json!([{"name": "a", "env": [{"name": "Y", "value": "22"}, {"name": "Z", "value": "3"}]}]),
        );
        let out = strategic_merge_patch(&schema(), &orig, &patch).unwrap();
        assert_eq!(
            containers(&out)[0]["env"],
            json!([{"name": "X", "value": "1"}, {"name": "Y", "value": "22"}, {"name": "Z", "value": "3"}])
        );
    }

    #[test]
    fn directives_should_delete_replace_and_reorder() {
        let orig = deployment(
            json!([{"name": "a", "image": "a:1", "args": ["x", "y"]}, {"name": "b", "image": "b:1"}]),
        );
        let out = strategic_merge_patch(
            &schema(),
            &orig,
            &deployment(json!([{"name": "b", "$patch": "delete"}])),
        )
        .unwrap();
        assert_eq!(
            containers(&out),
            &json!([{"name": "a", "image": "a:1", "args": ["x", "y"]}])
        );
        let out = strategic_merge_patch(
            &schema(),
            &orig,
            &deployment(json!([{"name": "z"}, {"$patch": "replace"}])),
        )
        .unwrap();
        assert_eq!(containers(&out), &json!([{"name": "z"}]));
        let patch = json!({"spec": {"template": {"spec": {"$setElementOrder/containers": [{"name": "b"}, {"name": "a"}], "containers": [{"name": "a", "image": "a:3"}]}}}});
        let out = strategic_merge_patch(&schema(), &orig, &patch).unwrap();
        assert_eq!(containers(&out)[0]["name"], "b");
        assert_eq!(containers(&out)[1]["image"], "a:3");
        let err = strategic_merge_patch(
            &schema(),
            &orig,
            &deployment(json!([{"name": "b", "$patch": "bogus"}])),
        )
        .unwrap_err();
        assert_eq!(
            err.to_string(),
            "unknown patch type: bogus in map: map[$patch:bogus name:b]"
        );
    }

    #[test]
    fn retain_keys_and_delete_from_primitive_list_should_apply() {
        let s = Schema::builtin("", "v1", "Pod");
        let orig = json!({"metadata": {"finalizers": ["a", "b"]}, "spec": {"volumes": [{"name": "v", "configMap": {"name": "c"}}]}});
        let patch = json!({"metadata": {"$deleteFromPrimitiveList/finalizers": ["a"], "finalizers": ["c"]},
            "spec": {"volumes": [{"name": "v", "emptyDir": {}, "$retainKeys": ["emptyDir", "name"]}]}});
        let out = strategic_merge_patch(&s, &orig, &patch).unwrap();
        assert_eq!(out["metadata"]["finalizers"], json!(["c", "b"]));
        assert_eq!(
            out["spec"]["volumes"],
            json!([{"name": "v", "emptyDir": {}}])
        );
    }

    #[test]
    fn an_ephemeral_containers_env_should_merge_by_name_as_a_containers_does() {
        // `EphemeralContainer` inlines `EphemeralContainerCommon`, whose `env`, `ports`,
        // `volumeMounts` and `volumeDevices` carry the same patch strategy as `Container`'s.
        let s = Schema::builtin("", "v1", "Pod");
        let orig = json!({"spec": {"ephemeralContainers": [{"name": "debug", "image": "busybox",
            "env": [{"name": "A", "value": "1"}], "volumeMounts": [{"name": "v", "mountPath": "/a"}]}]}});
        let patch = json!({"spec": {"ephemeralContainers": [{"name": "debug",
            "env": [{"name": "B", "value": "2"}], "volumeMounts": [{"name": "w", "mountPath": "/b"}]}]}});
        let out = strategic_merge_patch(&s, &orig, &patch).unwrap();
        let debug = &out["spec"]["ephemeralContainers"][0];
        assert_eq!(
            debug["env"],
            json!([{"name": "B", "value": "2"}, {"name": "A", "value": "1"}])
        );
        assert_eq!(
            debug["volumeMounts"],
            json!([{"name": "w", "mountPath": "/b"}, {"name": "v", "mountPath": "/a"}])
        );
        assert_eq!(debug["image"], "busybox");
    }
}
