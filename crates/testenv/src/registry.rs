//! The resources the server knows: the built-in ones and those that CRDs declare.

use std::sync::Arc;

use serde_json::Value;

use crate::status::{ApiError, ApiResult};

/// One served resource (one group, version and plural).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct ResourceDef {
    pub(crate) group: String,
    pub(crate) version: String,
    pub(crate) plural: String,
    pub(crate) singular: String,
    pub(crate) kind: String,
    pub(crate) list_kind: String,
    pub(crate) namespaced: bool,
    pub(crate) short_names: Vec<String>,
    pub(crate) categories: Vec<String>,
    pub(crate) status: bool,
    pub(crate) scale: bool,
    /// Custom resources require `metadata.resourceVersion` on update.
    pub(crate) custom: bool,
    /// Fields besides `metadata.name` / `metadata.namespace` that a field selector may use.
    pub(crate) extra_fields: &'static [&'static str],
    /// The storage key: `group/plural`, shared by every version of a resource.
    pub(crate) storage: Arc<str>,
}

impl ResourceDef {
    /// Whether the kind keeps `metadata.generation` (set to 1 on create, bumped when anything
    /// but metadata and status changes): custom resources, CRDs, workloads and Pods do;
    /// ConfigMaps, Secrets, Namespaces, Services, Leases, Events, ServiceAccounts do not.
    pub(crate) fn tracks_generation(&self) -> bool {
        self.custom
            || matches!(
                self.kind.as_str(),
                "Deployment"
                    | "ReplicaSet"
                    | "StatefulSet"
                    | "DaemonSet"
                    | "Pod"
                    | "Job"
                    | "CronJob"
                    | "CustomResourceDefinition"
            )
    }

    /// Whether a DELETE that removes the object at once answers with the object (Pods,
    /// Namespaces) rather than a `Status` `Success`, as kube-apiserver's registries do.
    pub(crate) fn returns_deleted_object(&self) -> bool {
        self.group.is_empty() && matches!(self.plural.as_str(), "pods" | "namespaces")
    }

    pub(crate) fn api_version(&self) -> String {
        if self.group.is_empty() {
            self.version.clone()
        } else {
            format!("{}/{}", self.group, self.version)
        }
    }
}

#[allow(clippy::too_many_arguments)]
fn builtin(
    group: &str,
    version: &str,
    plural: &str,
    kind: &str,
    namespaced: bool,
    short_names: &[&str],
    status: bool,
    scale: bool,
    extra_fields: &'static [&'static str],
) -> ResourceDef {
    ResourceDef {
        group: group.into(),
        version: version.into(),
        plural: plural.into(),
        singular: kind.to_lowercase(),
        kind: kind.into(),
        list_kind: format!("{kind}List"),
        namespaced,
        short_names: short_names.iter().map(|s| (*s).to_owned()).collect(),
        categories: Vec::new(),
        status,
        scale,
        custom: false,
        extra_fields,
        storage: storage_of(group, plural).into(),
    }
}

/// Where a built-in resource is stored: `group/plural`, except for versions that share another
/// group's storage (events.k8s.io Events are core Events).
fn storage_of(group: &str, plural: &str) -> String {
    match (group, plural) {
        ("events.k8s.io", "events") => "/events".to_owned(),
        _ => format!("{group}/{plural}"),
    }
}

/// The built-in resources.
pub(crate) fn builtins() -> Vec<ResourceDef> {
    vec![
        builtin(
            "",
            "v1",
            "namespaces",
            "Namespace",
            false,
            &["ns"],
            true,
            false,
            &["status.phase"],
        ),
        builtin(
            "",
            "v1",
            "configmaps",
            "ConfigMap",
            true,
            &["cm"],
            false,
            false,
            &[],
        ),
        builtin(
            "",
            "v1",
            "secrets",
            "Secret",
            true,
            &[],
            false,
            false,
            &["type"],
        ),
        builtin(
            "",
            "v1",
            "pods",
            "Pod",
            true,
            &["po"],
            true,
            false,
            &[
                "spec.nodeName",
                "spec.restartPolicy",
                "spec.schedulerName",
                "spec.serviceAccountName",
                "status.phase",
                "status.podIP",
            ],
        ),
        builtin(
            "",
            "v1",
            "services",
            "Service",
            true,
            &["svc"],
            true,
            false,
            &[],
        ),
        builtin(
            "",
            "v1",
            "events",
            "Event",
            true,
            &["ev"],
            false,
            false,
            &[
                "involvedObject.kind",
                "involvedObject.namespace",
                "involvedObject.name",
                "involvedObject.uid",
                "involvedObject.apiVersion",
                "involvedObject.resourceVersion",
                "involvedObject.fieldPath",
                "reason",
                "reportingComponent",
                "source",
                "type",
            ],
        ),
        builtin(
            "",
            "v1",
            "serviceaccounts",
            "ServiceAccount",
            true,
            &["sa"],
            false,
            false,
            &[],
        ),
        builtin(
            "apps",
            "v1",
            "deployments",
            "Deployment",
            true,
            &["deploy"],
            true,
            true,
            &[],
        ),
        builtin(
            "coordination.k8s.io",
            "v1",
            "leases",
            "Lease",
            true,
            &[],
            false,
            false,
            &[],
        ),
        builtin(
            "events.k8s.io",
            "v1",
            "events",
            "Event",
            true,
            &["ev"],
            false,
            false,
            &[
                "reason",
                "type",
                "reportingController",
                "regarding.kind",
                "regarding.name",
                "regarding.namespace",
            ],
        ),
        builtin(
            "apiextensions.k8s.io",
            "v1",
            "customresourcedefinitions",
            "CustomResourceDefinition",
            false,
            &["crd", "crds"],
            true,
            false,
            &[],
        ),
        // Create-only: answered by `review`, never stored (see `review::is_review`).
        builtin(
            "authentication.k8s.io",
            "v1",
            "tokenreviews",
            "TokenReview",
            false,
            &[],
            false,
            false,
            &[],
        ),
        builtin(
            "authorization.k8s.io",
            "v1",
            "subjectaccessreviews",
            "SubjectAccessReview",
            false,
            &[],
            false,
            false,
            &[],
        ),
    ]
}

fn str_at<'a>(v: &'a Value, path: &[&str]) -> Option<&'a str> {
    let mut cur = v;
    for p in path {
        cur = cur.get(*p)?;
    }
    cur.as_str()
}

/// The resources a CustomResourceDefinition serves (one per served version), after validating it.
/// Groups under `k8s.io` and `kubernetes.io` are reserved for APIs the Kubernetes project
/// approves (KEP 1111): a CRD in one needs the `api-approved.kubernetes.io` annotation.
fn protected_group(group: &str) -> bool {
    ["k8s.io", "kubernetes.io"]
        .iter()
        .any(|g| group == *g || group.ends_with(&format!(".{g}")))
}

pub(crate) fn from_crd(crd: &Value) -> ApiResult<Vec<ResourceDef>> {
    let name = str_at(crd, &["metadata", "name"]).unwrap_or_default();
    let mut causes: Vec<(&str, &str, String)> = Vec::new();
    let group = str_at(crd, &["spec", "group"]).unwrap_or_default();
    let plural = str_at(crd, &["spec", "names", "plural"]).unwrap_or_default();
    let kind = str_at(crd, &["spec", "names", "kind"]).unwrap_or_default();
    let scope = str_at(crd, &["spec", "scope"]).unwrap_or_default();
    if protected_group(group)
        && crd
            .pointer("/metadata/annotations/api-approved.kubernetes.io")
            .and_then(Value::as_str)
            .is_none_or(str::is_empty)
    {
        causes.push((
            "metadata.annotations[api-approved.kubernetes.io]",
            "FieldValueRequired",
            "Required value: protected groups must have approval annotation \"api-approved.kubernetes.io\", see https://github.com/kubernetes/enhancements/pull/1111".into(),
        ));
    }
    if group.is_empty() {
        causes.push(("spec.group", "FieldValueRequired", "Required value".into()));
    } else if !group.contains('.') {
        // Also keeps CRDs out of the built-in groups (`apps`, `batch`, ...), none of which has a
        // dot; the dotted built-in groups are protected (`*.k8s.io`).
        causes.push((
            "spec.group",
            "FieldValueInvalid",
            format!("Invalid value: {group:?}: should be a domain with at least one dot"),
        ));
    }
    if plural.is_empty() {
        causes.push((
            "spec.names.plural",
            "FieldValueRequired",
            "Required value".into(),
        ));
    }
    if kind.is_empty() {
        causes.push((
            "spec.names.kind",
            "FieldValueRequired",
            "Required value".into(),
        ));
    }
    if scope != "Namespaced" && scope != "Cluster" {
        causes.push((
            "spec.scope",
            "FieldValueNotSupported",
            format!("Unsupported value: {scope:?}: supported values: \"Cluster\", \"Namespaced\""),
        ));
    }
    if !plural.is_empty() && !group.is_empty() && name != format!("{plural}.{group}") {
        causes.push((
            "metadata.name",
            "FieldValueInvalid",
            format!("Invalid value: {name:?}: must be spec.names.plural+\".\"+spec.group"),
        ));
    }
    let versions = crd.pointer("/spec/versions").and_then(Value::as_array);
    let versions = match versions {
        Some(v) if !v.is_empty() => v.clone(),
        _ => {
            causes.push((
                "spec.versions",
                "FieldValueRequired",
                "Required value".into(),
            ));
            Vec::new()
        }
    };
    let storage_count = versions
        .iter()
        .filter(|v| v.get("storage").and_then(Value::as_bool) == Some(true))
        .count();
    if !versions.is_empty() && storage_count != 1 {
        causes.push((
            "spec.versions",
            "FieldValueInvalid",
            "Invalid value: must have exactly one version marked as storage version".into(),
        ));
    }
    if !causes.is_empty() {
        return Err(ApiError::invalid(
            "apiextensions.k8s.io",
            "CustomResourceDefinition",
            name,
            &causes,
        ));
    }
    let names = crd.pointer("/spec/names");
    let list = |key: &str| -> Vec<String> {
        names
            .and_then(|n| n.get(key))
            .and_then(Value::as_array)
            .map(|a| {
                a.iter()
                    .filter_map(|s| s.as_str().map(str::to_owned))
                    .collect()
            })
            .unwrap_or_default()
    };
    let singular = names
        .and_then(|n| n.get("singular"))
        .and_then(Value::as_str)
        .map_or_else(|| kind.to_lowercase(), str::to_owned);
    let list_kind = names
        .and_then(|n| n.get("listKind"))
        .and_then(Value::as_str)
        .map_or_else(|| format!("{kind}List"), str::to_owned);
    let storage: Arc<str> = format!("{group}/{plural}").into();
    let mut out = Vec::new();
    for v in &versions {
        if v.get("served").and_then(Value::as_bool) != Some(true) {
            continue;
        }
        let Some(version) = v.get("name").and_then(Value::as_str) else {
            continue;
        };
        let sub = v.get("subresources");
        out.push(ResourceDef {
            group: group.into(),
            version: version.into(),
            plural: plural.into(),
            singular: singular.clone(),
            kind: kind.into(),
            list_kind: list_kind.clone(),
            namespaced: scope == "Namespaced",
            short_names: list("shortNames"),
            categories: list("categories"),
            status: sub.and_then(|s| s.get("status")).is_some(),
            scale: false,
            custom: true,
            extra_fields: &[],
            storage: storage.clone(),
        });
    }
    Ok(out)
}
