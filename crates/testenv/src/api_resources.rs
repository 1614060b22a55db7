//! The built-in API of kube-apiserver v1.36: every group version, resource, subresource, kind,
//! scope and verb set it serves, read from the reference list recorded from a real server
//! (`data/api-resources-v1.36.2.txt`, embedded), plus what discovery shows beyond
//! that list (short names, categories) and the fields each kind's field selectors accept.
//!
//! [`builtin_defs`] turns the list into the resource table; [`verbs`] and [`subresources`]
//! answer discovery and the verb checks of the request handlers.

use std::sync::{Arc, LazyLock};

use crate::registry::ResourceDef;
use crate::status::{ApiError, ApiResult};

/// The reference list, one resource or subresource a line:
/// `GROUP/VERSION RESOURCE[/SUBRESOURCE] KIND namespaced=BOOL verbs=V,V,...`.
const REFERENCE: &str = include_str!("../data/api-resources-v1.36.2.txt");

/// One line of the reference list.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ApiResource {
    pub(crate) group: &'static str,
    pub(crate) version: &'static str,
    pub(crate) resource: &'static str,
    /// `""` for the resource itself.
    pub(crate) subresource: &'static str,
    pub(crate) kind: &'static str,
    pub(crate) namespaced: bool,
    pub(crate) verbs: Vec<&'static str>,
}

fn parse_line(line: &'static str) -> Option<ApiResource> {
    let mut cols = line.split_whitespace();
    let gv = cols.next()?;
    let res = cols.next()?;
    let kind = cols.next()?;
    let namespaced = cols.next()?.strip_prefix("namespaced=")? == "true";
    let verbs = cols.next()?.strip_prefix("verbs=")?;
    let (group, version) = gv.split_once('/').unwrap_or(("", gv));
    let (resource, subresource) = res.split_once('/').unwrap_or((res, ""));
    Some(ApiResource {
        group,
        version,
        resource,
        subresource,
        kind,
        namespaced,
        verbs: verbs.split(',').filter(|v| !v.is_empty()).collect(),
    })
}

/// Every line of the reference list, in its order.
pub(crate) fn reference() -> &'static [ApiResource] {
    static LIST: LazyLock<Vec<ApiResource>> = LazyLock::new(|| {
        REFERENCE
            .lines()
            .filter(|l| !l.trim().is_empty() && !l.starts_with('#'))
            .filter_map(parse_line)
            .collect()
    });
    &LIST
}

fn find(group: &str, version: &str, resource: &str, sub: &str) -> Option<&'static ApiResource> {
    reference().iter().find(|r| {
        r.group == group && r.version == version && r.resource == resource && r.subresource == sub
    })
}

/// The verbs every stored resource (custom resources included) serves.
pub(crate) const STORAGE_VERBS: [&str; 8] = [
    "create",
    "delete",
    "deletecollection",
    "get",
    "list",
    "patch",
    "update",
    "watch",
];

/// The verbs of a resource (`sub == ""`) or subresource, as discovery lists them.
pub(crate) fn verbs(def: &ResourceDef, sub: &str) -> Vec<&'static str> {
    if !def.custom
        && let Some(r) = find(&def.group, &def.version, &def.plural, sub)
    {
        return r.verbs.clone();
    }
    match sub {
        "" => STORAGE_VERBS.to_vec(),
        _ => vec!["get", "patch", "update"],
    }
}

/// A subresource as discovery shows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Subresource {
    pub(crate) name: &'static str,
    /// The group and version of the kind it answers with when they are not the resource's.
    pub(crate) group_version: Option<(&'static str, &'static str)>,
    pub(crate) kind: String,
    pub(crate) verbs: Vec<&'static str>,
}

/// The group and version of a subresource's kind that lives in another group.
fn foreign_kind(kind: &str) -> Option<(&'static str, &'static str)> {
    match kind {
        "Scale" => Some(("autoscaling", "v1")),
        "Eviction" => Some(("policy", "v1")),
        "TokenRequest" => Some(("authentication.k8s.io", "v1")),
        _ => None,
    }
}

/// The subresources of a resource, in the reference's order (custom resources: `status` and
/// `scale` as their CRD declares them).
pub(crate) fn subresources(def: &ResourceDef) -> Vec<Subresource> {
    if def.custom {
        let mut out = Vec::new();
        if def.scale {
            out.push(Subresource {
                name: "scale",
                group_version: foreign_kind("Scale"),
                kind: "Scale".into(),
                verbs: vec!["get", "patch", "update"],
            });
        }
        if def.status {
            out.push(Subresource {
                name: "status",
                group_version: None,
                kind: def.kind.clone(),
                verbs: vec!["get", "patch", "update"],
            });
        }
        return out;
    }
    reference()
        .iter()
        .filter(|r| {
            r.group == def.group
                && r.version == def.version
                && r.resource == def.plural
                && !r.subresource.is_empty()
        })
        .map(|r| Subresource {
            name: r.subresource,
            group_version: foreign_kind(r.kind),
            kind: r.kind.to_owned(),
            verbs: r.verbs.clone(),
        })
        .collect()
}

/// Whether a built-in resource is answered without storage (its only verb is `create`:
/// reviews, `bindings`).
pub(crate) fn is_create_only(def: &ResourceDef) -> bool {
    !def.custom && verbs(def, "") == ["create"]
}

/// `405 MethodNotAllowed` when the resource (or subresource) does not serve `verb`, as
/// kube-apiserver answers a method its route does not register.
pub(crate) fn check_verb(def: &ResourceDef, sub: Option<&str>, verb: &str) -> ApiResult<()> {
    if def.custom {
        return Ok(());
    }
    let Some(r) = find(
        &def.group,
        &def.version,
        &def.plural,
        sub.unwrap_or_default(),
    ) else {
        // Not in the reference (a subresource kcr-testenv adds): the handlers decide.
        return Ok(());
    };
    if r.verbs.contains(&verb) {
        Ok(())
    } else {
        Err(ApiError::method_not_allowed())
    }
}

/// What discovery shows of a built-in kind beyond the reference list.
struct Extras {
    short_names: &'static [&'static str],
    categories: &'static [&'static str],
    /// Fields besides `metadata.name` / `metadata.namespace` that field selectors accept.
    fields: &'static [&'static str],
}

const NONE: Extras = Extras {
    short_names: &[],
    categories: &[],
    fields: &[],
};

const fn short(names: &'static [&'static str]) -> Extras {
    Extras {
        short_names: names,
        categories: &[],
        fields: &[],
    }
}

const fn all(names: &'static [&'static str]) -> Extras {
    Extras {
        short_names: names,
        categories: &["all"],
        fields: &[],
    }
}

const API_EXTENSIONS: Extras = Extras {
    short_names: &[],
    categories: &["api-extensions"],
    fields: &[],
};

/// kube-apiserver's short names and categories (its registries' `ShortNames()` and
/// `Categories()`), and the field selector fields of each kind (its `GetAttrs` /
/// field label conversions).
fn extras(group: &str, resource: &str) -> Extras {
    match (group, resource) {
        ("", "componentstatuses") => short(&["cs"]),
        ("", "configmaps") => short(&["cm"]),
        ("", "endpoints") => short(&["ep"]),
        ("", "events") | ("events.k8s.io", "events") => short(&["ev"]),
        ("", "limitranges") => short(&["limits"]),
        ("", "namespaces") => Extras {
            fields: &["status.phase"],
            ..short(&["ns"])
        },
        ("", "nodes") => Extras {
            fields: &["spec.unschedulable"],
            ..short(&["no"])
        },
        ("", "persistentvolumeclaims") => short(&["pvc"]),
        ("", "persistentvolumes") => short(&["pv"]),
        ("", "pods") => all(&["po"]),
        ("", "replicationcontrollers") => Extras {
            fields: &["status.replicas"],
            ..all(&["rc"])
        },
        ("", "resourcequotas") => short(&["quota"]),
        ("", "secrets") => Extras {
            fields: &["type"],
            ..NONE
        },
        ("", "serviceaccounts") => short(&["sa"]),
        ("", "services") => all(&["svc"]),
        (
            "admissionregistration.k8s.io",
            "mutatingwebhookconfigurations"
            | "validatingwebhookconfigurations"
            | "validatingadmissionpolicies"
            | "validatingadmissionpolicybindings"
            | "mutatingadmissionpolicies"
            | "mutatingadmissionpolicybindings",
        ) => API_EXTENSIONS,
        ("apiextensions.k8s.io", "customresourcedefinitions") => Extras {
            short_names: &["crd", "crds"],
            ..API_EXTENSIONS
        },
        ("apiregistration.k8s.io", "apiservices") => API_EXTENSIONS,
        ("apps", "daemonsets") => all(&["ds"]),
        ("apps", "deployments") => all(&["deploy"]),
        ("apps", "replicasets") => Extras {
            fields: &["status.replicas"],
            ..all(&["rs"])
        },
        ("apps", "statefulsets") => all(&["sts"]),
        ("autoscaling", "horizontalpodautoscalers") => all(&["hpa"]),
        ("batch", "cronjobs") => all(&["cj"]),
        ("batch", "jobs") => Extras {
            fields: &["status.successful"],
            ..all(&[])
        },
        ("certificates.k8s.io", "certificatesigningrequests") => Extras {
            fields: &["spec.signerName"],
            ..short(&["csr"])
        },
        ("networking.k8s.io", "ingresses") => short(&["ing"]),
        ("networking.k8s.io", "ipaddresses") => short(&["ip"]),
        ("networking.k8s.io", "networkpolicies") => short(&["netpol"]),
        ("policy", "poddisruptionbudgets") => short(&["pdb"]),
        ("scheduling.k8s.io", "priorityclasses") => short(&["pc"]),
        ("storage.k8s.io", "storageclasses") => short(&["sc"]),
        ("storage.k8s.io", "volumeattributesclasses") => short(&["vac"]),
        _ => NONE,
    }
}

/// The categories discovery lists for a built-in resource (`all`, `api-extensions`).
pub(crate) fn categories(group: &str, resource: &str) -> Vec<String> {
    extras(group, resource)
        .categories
        .iter()
        .map(|s| (*s).to_owned())
        .collect()
}

/// The resource definitions of every resource of the reference list that `existing` lacks
/// (compared by group, version and resource), in the list's order.
pub(crate) fn builtin_defs(existing: &[ResourceDef]) -> Vec<ResourceDef> {
    reference()
        .iter()
        .filter(|r| r.subresource.is_empty())
        .filter(|r| {
            !existing
                .iter()
                .any(|d| d.group == r.group && d.version == r.version && d.plural == r.resource)
        })
        .map(|r| {
            let extras = extras(r.group, r.resource);
            let has = |sub: &str| find(r.group, r.version, r.resource, sub).is_some();
            ResourceDef {
                group: r.group.into(),
                version: r.version.into(),
                plural: r.resource.into(),
                singular: r.kind.to_lowercase(),
                kind: r.kind.into(),
                list_kind: format!("{}List", r.kind),
                namespaced: r.namespaced,
                short_names: extras.short_names.iter().map(|s| (*s).to_owned()).collect(),
                categories: extras.categories.iter().map(|s| (*s).to_owned()).collect(),
                status: has("status"),
                scale: has("scale"),
                custom: false,
                extra_fields: extras.fields,
                storage: Arc::from(format!("{}/{}", r.group, r.resource)),
                crd_version: None,
                crd_storage_version: None,
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_reference_list_should_parse_every_line() {
        let lines = REFERENCE.lines().filter(|l| !l.trim().is_empty()).count();
        assert_eq!(reference().len(), lines);
        let scale = find("apps", "v1", "deployments", "scale").unwrap();
        assert_eq!(scale.kind, "Scale");
        assert_eq!(scale.verbs, ["get", "patch", "update"]);
        let binding = find("", "v1", "bindings", "").unwrap();
        assert!(binding.namespaced);
        assert_eq!(binding.verbs, ["create"]);
    }

    #[test]
    fn builtin_defs_should_skip_resources_already_defined() {
        let all = builtin_defs(&[]);
        let jobs = all.iter().find(|d| d.plural == "jobs").unwrap();
        assert_eq!(jobs.group, "batch");
        assert!(jobs.status && !jobs.scale && jobs.namespaced);
        assert_eq!(jobs.extra_fields, ["status.successful"]);
        let without_jobs = builtin_defs(std::slice::from_ref(jobs));
        assert_eq!(without_jobs.len(), all.len() - 1);
    }
}
