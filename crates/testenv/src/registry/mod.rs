//! The resources the server knows (the built-in ones and those that CRDs declare) and the layer
//! under the handlers, as kube-apiserver's `registry`: the [`generic`] store does what every
//! kind shares and calls the kind's [`rest::Strategy`] for the rest; each kind with rules of its
//! own has its file under `registry/<group>/` (`core`, `apps`, `autoscaling`, `batch`,
//! `coordination`, `discovery`, `events`, `flowcontrol`, `networking`, `rbac`, `scheduling`,
//! `storage`, `admissionregistration`, `apiextensions`, and [`custom_resource`] for every custom
//! resource).

pub(crate) mod admissionregistration;
pub(crate) mod apiextensions;
pub(crate) mod apps;
pub(crate) mod autoscaling;
pub(crate) mod batch;
pub(crate) mod coordination;
pub(crate) mod core;
pub(crate) mod custom_resource;
pub(crate) mod discovery;
pub(crate) mod events;
pub(crate) mod field_labels;
pub(crate) mod flowcontrol;
pub(crate) mod generic;
pub(crate) mod networking;
pub(crate) mod policy;
pub(crate) mod rbac;
pub(crate) mod rest;
pub(crate) mod scheduling;
pub(crate) mod storage;

use std::sync::Arc;

use serde_json::Value;

use crate::status::ApiResult;

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
    /// A custom resource's entry in its CRD's `spec.versions` (schema, subresources).
    pub(crate) crd_version: Option<Arc<Value>>,
    /// A custom resource's storage version (its CRD's `storage: true` version) when that version
    /// is served; discovery's `storageVersionHash` comes from it.
    pub(crate) crd_storage_version: Option<Arc<str>>,
}

impl ResourceDef {
    /// How the kind keeps `metadata.generation` (its strategy's).
    pub(crate) fn generation(&self) -> rest::Generation {
        rest::strategy_for(self).generation()
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
        categories: crate::api_resources::categories(group, plural),
        status,
        scale,
        custom: false,
        extra_fields,
        storage: storage_of(group, plural).into(),
        crd_version: None,
        crd_storage_version: None,
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
/// The built-in resources: those written out below, then every other resource of the reference
/// list (see [`crate::api_resources`]).
pub(crate) fn builtins() -> Vec<ResourceDef> {
    let mut defs = vec![
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
                "spec.hostNetwork",
                "status.phase",
                "status.podIP",
                "status.podIPs",
                "status.nominatedNodeName",
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
            &["spec.clusterIP", "spec.type"],
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
        builtin(
            "",
            "v1",
            "replicationcontrollers",
            "ReplicationController",
            true,
            &["rc"],
            true,
            true,
            &[],
        ),
        builtin(
            "apps",
            "v1",
            "replicasets",
            "ReplicaSet",
            true,
            &["rs"],
            true,
            true,
            &[],
        ),
        builtin(
            "apps",
            "v1",
            "statefulsets",
            "StatefulSet",
            true,
            &["sts"],
            true,
            true,
            &[],
        ),
        builtin(
            "policy",
            "v1",
            "poddisruptionbudgets",
            "PodDisruptionBudget",
            true,
            &["pdb"],
            true,
            false,
            &[],
        ),
        builtin(
            "certificates.k8s.io",
            "v1",
            "certificatesigningrequests",
            "CertificateSigningRequest",
            false,
            &["csr"],
            true,
            false,
            &[],
        ),
        builtin(
            "rbac.authorization.k8s.io",
            "v1",
            "roles",
            "Role",
            true,
            &[],
            false,
            false,
            &[],
        ),
        builtin(
            "rbac.authorization.k8s.io",
            "v1",
            "rolebindings",
            "RoleBinding",
            true,
            &[],
            false,
            false,
            &[],
        ),
        builtin(
            "rbac.authorization.k8s.io",
            "v1",
            "clusterroles",
            "ClusterRole",
            false,
            &[],
            false,
            false,
            &[],
        ),
        builtin(
            "rbac.authorization.k8s.io",
            "v1",
            "clusterrolebindings",
            "ClusterRoleBinding",
            false,
            &[],
            false,
            false,
            &[],
        ),
        // Create-only: answered by `review`, never stored.
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
    ];
    let rest = crate::api_resources::builtin_defs(&defs);
    defs.extend(rest);
    defs
}

fn str_at<'a>(v: &'a Value, path: &[&str]) -> Option<&'a str> {
    let mut cur = v;
    for p in path {
        cur = cur.get(*p)?;
    }
    cur.as_str()
}

/// The resources a CustomResourceDefinition serves (one per served version), after validating it
/// (`validation::crd`).
pub(crate) fn from_crd(crd: &Value) -> ApiResult<Vec<ResourceDef>> {
    let name = str_at(crd, &["metadata", "name"]).unwrap_or_default();
    crate::validation::crd::check(crd, name)?;
    let group = str_at(crd, &["spec", "group"]).unwrap_or_default();
    let plural = str_at(crd, &["spec", "names", "plural"]).unwrap_or_default();
    let kind = str_at(crd, &["spec", "names", "kind"]).unwrap_or_default();
    let scope = str_at(crd, &["spec", "scope"]).unwrap_or_default();
    let versions = crd
        .pointer("/spec/versions")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
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
    // apiextensions-apiserver's discovery hashes the storage version only when it is served.
    let crd_storage_version: Option<Arc<str>> = versions
        .iter()
        .filter(|v| v.get("served").and_then(Value::as_bool) == Some(true))
        .find(|v| v.get("storage").and_then(Value::as_bool) == Some(true))
        .and_then(|v| v.get("name").and_then(Value::as_str))
        .map(Arc::from);
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
            scale: sub.and_then(|s| s.get("scale")).is_some(),
            custom: true,
            extra_fields: &[],
            storage: storage.clone(),
            crd_version: Some(Arc::new(v.clone())),
            crd_storage_version: crd_storage_version.clone(),
        });
    }
    Ok(out)
}
