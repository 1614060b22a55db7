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
use crate::custom_resource::{defaulting, openapi_schema, structural};

/// Groups under `k8s.io` and `kubernetes.io` are reserved for APIs the Kubernetes project
/// approves: a CRD in one needs the `api-approved.kubernetes.io` annotation.
fn protected_group(group: &str) -> bool {
    ["k8s.io", "kubernetes.io"]
        .iter()
        .any(|g| group == *g || group.ends_with(&format!(".{g}")))
}

/// How a CRD in a protected group states its approval: the `api-approved.kubernetes.io`
/// annotation holds the URL of the approving pull request, or a reason starting with
/// `unapproved` (accepted, but the CRD's `KubernetesAPIApprovalPolicyConformant` condition is
/// `False`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Approval {
    Missing,
    Bypassed,
    Approved,
    Invalid,
}

const APPROVAL_ANNOTATION: &str = "api-approved.kubernetes.io";

/// The approval state of `crd`'s annotations, with the reason kube-apiserver gives for it.
pub(crate) fn approval_state(crd: &Value) -> (Approval, String) {
    let annotation = crd
        .pointer("/metadata/annotations")
        .and_then(|a| a.get(APPROVAL_ANNOTATION))
        .and_then(Value::as_str)
        .unwrap_or_default();
    if annotation.is_empty() {
        (
            Approval::Missing,
            format!(
                "protected groups must have approval annotation {APPROVAL_ANNOTATION:?}, see https://github.com/kubernetes/enhancements/pull/1111"
            ),
        )
    } else if annotation.starts_with("unapproved") {
        (Approval::Bypassed, format!("not approved: {annotation:?}"))
    } else if is_absolute_url(annotation) {
        (Approval::Approved, format!("approved in {annotation}"))
    } else {
        (
            Approval::Invalid,
            format!(
                "protected groups must have approval annotation {APPROVAL_ANNOTATION:?} with either a URL or a reason starting with \"unapproved\", see https://github.com/kubernetes/enhancements/pull/1111"
            ),
        )
    }
}

/// Whether `s` is a URL with a scheme and a host (`https://github.com/...`).
fn is_absolute_url(s: &str) -> bool {
    let Some((scheme, rest)) = s.split_once("://") else {
        return false;
    };
    let scheme_ok = scheme.starts_with(|c: char| c.is_ascii_alphabetic())
        && scheme
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "+-.".contains(c));
    let host = rest.split(['/', '?', '#']).next().unwrap_or_default();
    scheme_ok && !host.is_empty() && !s.chars().any(|c| c.is_whitespace() || c.is_control())
}

/// The `KubernetesAPIApprovalPolicyConformant` condition of a CRD in a protected group.
pub(crate) fn approval_condition(crd: &Value, now: &str) -> Option<Value> {
    if !protected_group(str_at(crd, "/spec/group")) {
        return None;
    }
    let (state, message) = approval_state(crd);
    let (status, reason) = match state {
        Approval::Invalid => ("False", "InvalidAnnotation"),
        Approval::Missing => ("False", "MissingAnnotation"),
        Approval::Approved => ("True", "ApprovedAnnotation"),
        Approval::Bypassed => ("False", "UnapprovedAnnotation"),
    };
    Some(
        json!({"type": "KubernetesAPIApprovalPolicyConformant", "status": status,
        "lastTransitionTime": now, "reason": reason, "message": message}),
    )
}

/// A missing or malformed approval annotation.
fn api_approval(crd: &Value) -> Option<FieldError> {
    let field = format!("metadata.annotations[{APPROVAL_ANNOTATION}]");
    match approval_state(crd) {
        (Approval::Missing, reason) => Some(FieldError::required(field, &reason)),
        (Approval::Invalid, reason) => {
            let value = crd
                .pointer("/metadata/annotations")
                .and_then(|a| a.get(APPROVAL_ANNOTATION))
                .cloned()
                .unwrap_or(json!(""));
            Some(FieldError::invalid(field, &value, &reason))
        }
        _ => None,
    }
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
    if protected_group(group) {
        errs.extend(api_approval(crd));
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
    subresources(&versions, &mut errs);
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

/// Every version needs a schema; each schema must be structural and follow the OpenAPI rules
/// ([`structural`], [`openapi_schema`]).
fn schemas(versions: &[Value], errs: &mut Vec<FieldError>) {
    let lifted = !versions.is_empty() && common(versions, "/schema/openAPIV3Schema");
    let has_status = |v: &Value| {
        v.pointer("/subresources/status")
            .is_some_and(|s| !s.is_null())
    };
    for (i, v) in versions.iter().enumerate() {
        let Some(schema) = v.pointer("/schema/openAPIV3Schema") else {
            errs.push(FieldError::required(
                format!("spec.versions[{i}].schema.openAPIV3Schema"),
                "",
            ));
            continue;
        };
        let (path, status) = if lifted {
            if i > 0 {
                continue;
            }
            (
                "spec.validation.openAPIV3Schema".to_owned(),
                versions.iter().any(has_status),
            )
        } else {
            (
                format!("spec.versions[{i}].schema.openAPIV3Schema"),
                has_status(v),
            )
        };
        errs.extend(schema_causes(schema, &path, status));
    }
}

/// The causes of one `openAPIV3Schema` at `path`; `status`: its version has the status
/// subresource.
fn schema_causes(schema: &Value, path: &str, status: bool) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let ty = schema
        .get("type")
        .and_then(Value::as_str)
        .unwrap_or_default();
    if status && !ty.is_empty() && ty != "object" {
        errs.push(FieldError::invalid(
            format!("{path}.type"),
            &json!(ty),
            "only \"object\" is allowed as the type at the root of the schema if the status subresource is enabled",
        ));
    }
    if schema.get("nullable").and_then(Value::as_bool) == Some(true) {
        errs.push(FieldError::forbidden(
            format!("{path}.nullable"),
            "nullable cannot be true at the root",
        ));
    }
    let unreadable = structural::conversion_error(schema);
    if unreadable.is_none() {
        // Defaults are checked only in a structural schema.
        let structural = structural::validate(schema, path);
        if structural.is_empty() {
            errs.extend(defaulting::validate_defaults(schema, path));
        }
        errs.extend(structural);
    }
    errs.extend(openapi_schema::validate(schema, path));
    if let Some(why) = unreadable
        && errs.is_empty()
    {
        errs.push(FieldError::invalid(path, &json!(""), &why));
    }
    errs
}

/// The scale subresource names simple JSON paths: spec replicas under `.spec`, status replicas
/// under `.status`, the label selector under either.
fn subresources(versions: &[Value], errs: &mut Vec<FieldError>) {
    let lifted = !versions.is_empty() && common(versions, "/subresources");
    for (i, v) in versions.iter().enumerate() {
        let Some(scale) = v.pointer("/subresources/scale").filter(|s| s.is_object()) else {
            continue;
        };
        if lifted && i > 0 {
            break;
        }
        let path = if lifted {
            "spec.subresources.scale".to_owned()
        } else {
            format!("spec.versions[{i}].subresources.scale")
        };
        let text = |k: &str| scale.get(k).and_then(Value::as_str).unwrap_or_default();
        for (key, under, detail) in [
            (
                "specReplicasPath",
                &[".spec."][..],
                "should be a json path under .spec",
            ),
            (
                "statusReplicasPath",
                &[".status."][..],
                "should be a json path under .status",
            ),
            (
                "labelSelectorPath",
                &[".spec.", ".status."][..],
                "should be a json path under either .spec or .status",
            ),
        ] {
            let value = text(key);
            let field = format!("{path}.{key}");
            if value.is_empty() {
                if key != "labelSelectorPath" {
                    errs.push(FieldError::required(field, ""));
                }
            } else if !value.starts_with('.') {
                errs.push(FieldError::invalid(
                    field,
                    &json!(value),
                    "must be a simple json path starting with .",
                ));
            } else if !under.iter().any(|u| value.starts_with(u)) {
                errs.push(FieldError::invalid(field, &json!(value), detail));
            }
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
