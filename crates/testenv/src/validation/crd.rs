//! CustomResourceDefinition validation, as apiextensions-apiserver's
//! `ValidateCustomResourceDefinition` does it: the name is `<plural>.<group>`, the group a
//! dotted domain outside the protected `*.k8s.io` / `*.kubernetes.io` groups unless approved
//! (KEP 1111), exactly one storage version, and in `apiextensions.k8s.io/v1` a structural
//! `openAPIV3Schema` for every version.
//!
//! kube-apiserver validates the internal form of a CRD, in which a schema (or subresources)
//! common to every version is lifted to `spec.validation` (`spec.subresources`): the causes of
//! such a schema name `spec.validation.openAPIV3Schema`, those of a per-version schema
//! `spec.versions[i].schema.openAPIV3Schema`.

use serde_json::{Map, Value, json};

use super::field::FieldError;

/// The types a structural schema may name.
const TYPES: [&str; 6] = ["array", "boolean", "integer", "number", "object", "string"];

/// Groups under `k8s.io` and `kubernetes.io` are reserved for APIs the Kubernetes project
/// approves: a CRD in one needs the `api-approved.kubernetes.io` annotation.
fn protected_group(group: &str) -> bool {
    ["k8s.io", "kubernetes.io"]
        .iter()
        .any(|g| group == *g || group.ends_with(&format!(".{g}")))
}

fn str_at<'a>(v: &'a Value, pointer: &str) -> &'a str {
    v.pointer(pointer)
        .and_then(Value::as_str)
        .unwrap_or_default()
}

/// The storage versions a new CRD records in `status.storedVersions`: the first storage one.
pub(crate) fn initial_stored_versions(crd: &Value) -> Vec<Value> {
    versions(crd)
        .iter()
        .find(|v| v.get("storage").and_then(Value::as_bool) == Some(true))
        .and_then(|v| v.get("name"))
        .cloned()
        .into_iter()
        .collect()
}

fn versions(crd: &Value) -> Vec<Value> {
    crd.pointer("/spec/versions")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default()
}

/// Whether every version carries the same value at `pointer` (then the internal form lifts it
/// to the spec).
fn common(versions: &[Value], pointer: &str) -> bool {
    let first = versions.first().and_then(|v| v.pointer(pointer));
    versions.iter().all(|v| v.pointer(pointer) == first)
}

/// The internal versions as Go renders them in an `Invalid value` (fields by their Go names).
fn go_versions(versions: &[Value]) -> String {
    let lifted = |pointer: &str, v: &Value| {
        if common(versions, pointer) {
            Value::Null
        } else {
            v.pointer(pointer).cloned().unwrap_or(Value::Null)
        }
    };
    let items: Vec<String> = versions
        .iter()
        .map(|v| {
            let b = |k: &str| v.get(k).and_then(Value::as_bool).unwrap_or(false);
            let mut m = Map::new();
            m.insert("Name".into(), v.get("name").cloned().unwrap_or(json!("")));
            m.insert("Served".into(), json!(b("served")));
            m.insert("Storage".into(), json!(b("storage")));
            m.insert("Deprecated".into(), json!(b("deprecated")));
            m.insert(
                "DeprecationWarning".into(),
                v.get("deprecationWarning").cloned().unwrap_or(Value::Null),
            );
            m.insert("Schema".into(), lifted("/schema", v));
            m.insert("Subresources".into(), lifted("/subresources", v));
            m.insert(
                "AdditionalPrinterColumns".into(),
                lifted("/additionalPrinterColumns", v),
            );
            m.insert(
                "SelectableFields".into(),
                v.get("selectableFields").cloned().unwrap_or(Value::Null),
            );
            // serde_json keeps insertion order only with preserve_order; write it by hand.
            let fields: Vec<String> = [
                "Name",
                "Served",
                "Storage",
                "Deprecated",
                "DeprecationWarning",
                "Schema",
                "Subresources",
                "AdditionalPrinterColumns",
                "SelectableFields",
            ]
            .iter()
            .map(|k| format!("\"{k}\":{}", m[*k]))
            .collect();
            format!("{{{}}}", fields.join(","))
        })
        .collect();
    format!("[{}]", items.join(","))
}

/// The causes of a CRD (as it will be stored: `status.storedVersions` set).
pub(crate) fn validate(crd: &Value) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let name = str_at(crd, "/metadata/name");
    let group = str_at(crd, "/spec/group");
    let plural = str_at(crd, "/spec/names/plural");
    let kind = str_at(crd, "/spec/names/kind");
    let scope = str_at(crd, "/spec/scope");
    if protected_group(group)
        && crd
            .pointer("/metadata/annotations/api-approved.kubernetes.io")
            .and_then(Value::as_str)
            .is_none_or(str::is_empty)
    {
        errs.push(FieldError::required(
            "metadata.annotations[api-approved.kubernetes.io]",
            "protected groups must have approval annotation \"api-approved.kubernetes.io\", see https://github.com/kubernetes/enhancements/pull/1111",
        ));
    }
    if group.is_empty() {
        errs.push(FieldError::required("spec.group", ""));
    } else if !group.contains('.') {
        // Also keeps CRDs out of the built-in groups (`apps`, `batch`, ...), none of which has
        // a dot; the dotted built-in groups are protected (`*.k8s.io`).
        errs.push(FieldError::invalid(
            "spec.group",
            &json!(group),
            "should be a domain with at least one dot",
        ));
    }
    if plural.is_empty() {
        errs.push(FieldError::required("spec.names.plural", ""));
    }
    if kind.is_empty() {
        errs.push(FieldError::required("spec.names.kind", ""));
    }
    if scope != "Namespaced" && scope != "Cluster" {
        errs.push(FieldError::not_supported(
            "spec.scope",
            &json!(scope),
            &["Cluster", "Namespaced"],
        ));
    }
    if !plural.is_empty() && !group.is_empty() && name != format!("{plural}.{group}") {
        errs.push(FieldError::invalid(
            "metadata.name",
            &json!(name),
            "must be spec.names.plural+\".\"+spec.group",
        ));
    }
    let versions = versions(crd);
    if versions.is_empty() {
        errs.push(FieldError::required("spec.versions", ""));
    }
    let storage: Vec<&str> = versions
        .iter()
        .filter(|v| v.get("storage").and_then(Value::as_bool) == Some(true))
        .filter_map(|v| v.get("name").and_then(Value::as_str))
        .collect();
    if !versions.is_empty() && storage.len() != 1 {
        errs.push(FieldError {
            field: "spec.versions".into(),
            reason: "FieldValueInvalid",
            message: format!(
                "Invalid value: {}: must have exactly one version marked as storage version",
                go_versions(&versions)
            ),
        });
    }
    schemas(&versions, &mut errs);
    stored_versions(crd, &storage, &mut errs);
    errs
}

/// `422 Invalid` with the causes of [`validate`], if any.
pub(crate) fn check(crd: &Value, name: &str) -> Result<(), crate::status::ApiError> {
    super::field::check(
        "apiextensions.k8s.io",
        "CustomResourceDefinition",
        name,
        validate(crd),
    )
}

/// Every version needs a schema; each schema must be structural.
fn schemas(versions: &[Value], errs: &mut Vec<FieldError>) {
    let lifted = !versions.is_empty() && common(versions, "/schema/openAPIV3Schema");
    for (i, v) in versions.iter().enumerate() {
        let Some(schema) = v.pointer("/schema/openAPIV3Schema") else {
            errs.push(FieldError::required(
                format!("spec.versions[{i}].schema.openAPIV3Schema"),
                "",
            ));
            continue;
        };
        let path = if lifted {
            if i > 0 {
                continue;
            }
            "spec.validation.openAPIV3Schema".to_owned()
        } else {
            format!("spec.versions[{i}].schema.openAPIV3Schema")
        };
        match schema.get("type").and_then(Value::as_str) {
            None | Some("") => {
                errs.push(FieldError::required(
                    format!("{path}.type"),
                    "must not be empty at the root",
                ));
            }
            Some("object") => {}
            Some(other) => errs.push(FieldError::invalid(
                format!("{path}.type"),
                &json!(other),
                "must be object at the root",
            )),
        }
        schema_types(schema, &path, errs);
    }
}

/// `type` of every nested schema is one of [`TYPES`].
fn schema_types(schema: &Value, path: &str, errs: &mut Vec<FieldError>) {
    if let Some(t) = schema.get("type").and_then(Value::as_str)
        && !t.is_empty()
        && !TYPES.contains(&t)
    {
        errs.push(FieldError::not_supported(
            format!("{path}.type"),
            &json!(t),
            &TYPES,
        ));
    }
    if let Some(props) = schema.get("properties").and_then(Value::as_object) {
        for (k, p) in props {
            schema_types(p, &format!("{path}.properties[{k}]"), errs);
        }
    }
    for k in ["items", "additionalProperties"] {
        if let Some(s) = schema.get(k).filter(|s| s.is_object()) {
            schema_types(s, &format!("{path}.{k}"), errs);
        }
    }
}

/// Every storage version is in `status.storedVersions`.
fn stored_versions(crd: &Value, storage: &[&str], errs: &mut Vec<FieldError>) {
    let stored: Vec<Value> = crd
        .pointer("/status/storedVersions")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    if stored.is_empty() {
        if !storage.is_empty() {
            errs.push(FieldError::invalid(
                "status.storedVersions",
                &json!([]),
                "must have at least one stored version",
            ));
        }
        return;
    }
    for s in storage {
        if !stored.iter().any(|v| v.as_str() == Some(s)) {
            errs.push(FieldError::invalid(
                "status.storedVersions",
                &Value::Array(stored.clone()),
                &format!("must have the storage version {s}"),
            ));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn crd(versions: Value) -> Value {
        json!({"metadata": {"name": "ws.a.example.com"}, "spec": {"group": "a.example.com",
            "scope": "Namespaced", "names": {"plural": "ws", "kind": "W"}, "versions": versions}})
    }

    fn with_status(mut c: Value) -> Value {
        c["status"] = json!({"storedVersions": initial_stored_versions(&c)});
        c
    }

    fn messages(c: &Value) -> Vec<(String, String)> {
        validate(c)
            .into_iter()
            .map(|e| (e.field, e.message))
            .collect()
    }

    #[test]
    fn a_version_without_schema_should_be_refused() {
        let c = with_status(crd(
            json!([{"name": "v1", "served": true, "storage": true}]),
        ));
        assert_eq!(
            messages(&c),
            vec![(
                "spec.versions[0].schema.openAPIV3Schema".into(),
                "Required value".into()
            )]
        );
    }

    #[test]
    fn a_common_schema_should_be_checked_under_spec_validation() {
        let schema = json!({"openAPIV3Schema": {"properties": {"spec": {"type": "bogus"}}}});
        let c = with_status(crd(
            json!([{"name": "v1", "served": true, "storage": true, "schema": schema}]),
        ));
        assert_eq!(
            messages(&c),
            vec![
                (
                    "spec.validation.openAPIV3Schema.type".into(),
                    "Required value: must not be empty at the root".into()
                ),
                (
                    "spec.validation.openAPIV3Schema.properties[spec].type".into(),
                    "Unsupported value: \"bogus\": supported values: \"array\", \"boolean\", \"integer\", \"number\", \"object\", \"string\"".into()
                )
            ]
        );
    }

    #[test]
    fn two_storage_versions_should_be_refused() {
        let schema = json!({"openAPIV3Schema": {"type": "object"}});
        let c = with_status(crd(json!([
            {"name": "v1", "served": true, "storage": true, "schema": schema},
            {"name": "v2", "served": true, "storage": true, "schema": schema}
        ])));
        let m = messages(&c);
        assert_eq!(m.len(), 2);
        assert!(m[0].1.starts_with("Invalid value: [{\"Name\":\"v1\",\"Served\":true,\"Storage\":true,\"Deprecated\":false,\"DeprecationWarning\":null,\"Schema\":null,"));
        assert_eq!(
            m[1],
            (
                "status.storedVersions".into(),
                "Invalid value: [\"v1\"]: must have the storage version v2".into()
            )
        );
    }
}
