//! Discovery: `/version`, `/api`, `/apis`, the resource lists of each group version, the
//! aggregated discovery documents kubectl prefers, `/openapi/v2` and `/openapi/v3` (as far as
//! kubectl needs), and health checks.

use std::collections::BTreeMap;
use std::sync::Arc;

use http::{HeaderValue, Method, Response, header};
use serde_json::{Value, json};

use crate::api_resources;
use crate::body::Body;
use crate::endpoints::split_api_path;
use crate::registry::ResourceDef;
use crate::server::{Request, Shared, error_response, json_response};
use crate::status::ApiError;

/// The Kubernetes version the server reports.
pub(crate) const MAJOR: &str = "1";
/// The Kubernetes minor version the server reports.
pub(crate) const MINOR: &str = "36";
/// The patch release the server reports (the corpus in `tests/conformance/` was recorded from
/// kube-apiserver v1.36.2).
pub(crate) const PATCH: &str = "2";

/// A resource and its subresources as `APIResourceList` entries.
fn resource_entries(def: &ResourceDef) -> Vec<Value> {
    let mut main = json!({
        "name": def.plural,
        "singularName": def.singular,
        "namespaced": def.namespaced,
        "kind": def.kind,
        "verbs": api_resources::verbs(def, ""),
    });
    if !def.short_names.is_empty() {
        main["shortNames"] = json!(def.short_names);
    }
    if !def.categories.is_empty() {
        main["categories"] = json!(def.categories);
    }
    if let Some(hash) = storage_version_hash(def) {
        main["storageVersionHash"] = json!(hash);
    }
    let mut out = vec![main];
    for sub in api_resources::subresources(def) {
        let mut entry = json!({
            "name": format!("{}/{}", def.plural, sub.name),
            "singularName": "",
            "namespaced": def.namespaced,
            "kind": sub.kind,
            "verbs": sub.verbs,
        });
        if let Some((group, version)) = sub.group_version {
            entry["group"] = json!(group);
            entry["version"] = json!(version);
        }
        out.push(entry);
    }
    out
}

/// The group, version and kind objects of a resource are stored as, when its discovery entry
/// carries a `storageVersionHash`.
///
/// kube-apiserver hashes the kind its storage encodes to: the group's most preferred version
/// (autoscaling stores `v2` for both served versions), except for the resources its storage
/// factory pins to an older version for one release after they reached v1 (MutatingAdmissionPolicy
/// and its binding stay `v1beta1` in v1.36); events.k8s.io Events are core Events in storage.
/// Resources whose REST storage is not the generic store (create-only reviews and bindings,
/// componentstatuses) and subresources have no hash. A custom resource has its CRD's storage
/// version's hash, and none when that version is not served (as apiextensions-apiserver's
/// discovery controller does).
fn storage_gvk(def: &ResourceDef) -> Option<(&str, &str, &str)> {
    if def.custom {
        let version = def.crd_storage_version.as_deref()?;
        return Some((&def.group, version, &def.kind));
    }
    if api_resources::is_create_only(def)
        || (def.group.is_empty() && def.plural == "componentstatuses")
    {
        return None;
    }
    let version = match (def.group.as_str(), def.plural.as_str()) {
        ("events.k8s.io", "events") => return Some(("", "v1", &def.kind)),
        (
            "admissionregistration.k8s.io",
            "mutatingadmissionpolicies" | "mutatingadmissionpolicybindings",
        ) => "v1beta1",
        ("autoscaling", _) => "v2",
        _ => &def.version,
    };
    Some((&def.group, version, &def.kind))
}

/// Discovery's `storageVersionHash` of a resource: the first 8 bytes of the SHA-256 of
/// `group/version/kind` of its storage version (see [`storage_gvk`]), in standard base64, as
/// apiserver's `discovery.StorageVersionHash` computes it.
fn storage_version_hash(def: &ResourceDef) -> Option<String> {
    let (group, version, kind) = storage_gvk(def)?;
    Some(gvk_hash(group, version, kind))
}

fn gvk_hash(group: &str, version: &str, kind: &str) -> String {
    let digest = ring::digest::digest(
        &ring::digest::SHA256,
        format!("{group}/{version}/{kind}").as_bytes(),
    );
    crate::tls::base64(&digest.as_ref()[..8])
}

fn fxhash(s: &str) -> u64 {
    s.bytes().fold(0xcbf2_9ce4_8422_2325_u64, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x100_0000_01b3)
    })
}

/// A version's rank in Kubernetes' version priority: GA before beta before alpha, then the
/// higher major and minor number (`v2` > `v1` > `v1beta2` > `v1beta1` > `v1alpha1`); versions
/// that do not look like Kubernetes versions come last, by name.
fn version_priority(version: &str) -> (u8, u64, u64) {
    let Some(rest) = version.strip_prefix('v') else {
        return (0, 0, 0);
    };
    let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
    let Ok(major) = rest[..digits].parse::<u64>() else {
        return (0, 0, 0);
    };
    let tail = &rest[digits..];
    let (stability, minor) = match tail {
        "" => (3, 0),
        t => match t
            .strip_prefix("beta")
            .map(|m| (2, m))
            .or_else(|| t.strip_prefix("alpha").map(|m| (1, m)))
        {
            Some((level, m)) => match m.parse::<u64>() {
                Ok(n) => (level, n),
                Err(_) => return (0, 0, 0),
            },
            None => return (0, 0, 0),
        },
    };
    (stability, major, minor)
}

/// Group name → versions served, the preferred (highest priority) first, skipping the legacy
/// core group.
fn groups(defs: &[Arc<ResourceDef>]) -> BTreeMap<String, Vec<String>> {
    let mut groups: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for d in defs.iter().filter(|d| !d.group.is_empty()) {
        let versions = groups.entry(d.group.clone()).or_default();
        if !versions.contains(&d.version) {
            versions.push(d.version.clone());
        }
    }
    for versions in groups.values_mut() {
        versions.sort_by(|a, b| {
            version_priority(b)
                .cmp(&version_priority(a))
                .then_with(|| a.cmp(b))
        });
    }
    groups
}

fn group_json(name: &str, versions: &[String]) -> Value {
    let vs: Vec<Value> = versions
        .iter()
        .map(|v| json!({"groupVersion": format!("{name}/{v}"), "version": v}))
        .collect();
    let preferred = vs.first().cloned().unwrap_or(json!({}));
    json!({"name": name, "versions": vs, "preferredVersion": preferred})
}

fn aggregated_group(name: &str, versions: &[String], defs: &[Arc<ResourceDef>]) -> Value {
    let vs: Vec<Value> = versions
        .iter()
        .map(|v| {
            let resources: Vec<Value> = defs
                .iter()
                .filter(|d| d.group == name && &d.version == v)
                .map(|d| {
                    let subs: Vec<Value> = api_resources::subresources(d)
                        .into_iter()
                        .map(|sub| {
                            let (group, version) =
                                sub.group_version.unwrap_or((&d.group, &d.version));
                            json!({
                                "subresource": sub.name,
                                "responseKind": {"group": group, "version": version, "kind": sub.kind},
                                "verbs": sub.verbs,
                            })
                        })
                        .collect();
                    json!({
                        "resource": d.plural,
                        "responseKind": {"group": d.group, "version": d.version, "kind": d.kind},
                        "scope": if d.namespaced { "Namespaced" } else { "Cluster" },
                        "singularResource": d.singular,
                        "verbs": api_resources::verbs(d, ""),
                        "shortNames": d.short_names,
                        "categories": d.categories,
                        "subresources": subs,
                    })
                })
                .collect();
            json!({"version": v, "resources": resources, "freshness": "Current"})
        })
        .collect();
    json!({"metadata": {"name": name, "creationTimestamp": null}, "versions": vs})
}

fn gv_path(d: &ResourceDef) -> String {
    if d.group.is_empty() {
        format!("api/{}", d.version)
    } else {
        format!("apis/{}/{}", d.group, d.version)
    }
}

/// A minimal OpenAPI v3 document for one group version: a path per resource whose operations
/// carry `x-kubernetes-group-version-kind` and the `fieldValidation` / `dryRun` query parameters
/// (what kubectl checks to use server-side field validation). Schemas are left open.
fn openapi_v3_gv(defs: &[Arc<ResourceDef>], group: &str, version: &str) -> Value {
    let mut paths = serde_json::Map::new();
    let mut schemas = serde_json::Map::new();
    for d in defs
        .iter()
        .filter(|d| d.group == group && d.version == version)
    {
        let gvk = json!({"group": d.group, "version": d.version, "kind": d.kind});
        let params = json!([
            {"name": "fieldValidation", "in": "query", "schema": {"type": "string"}},
            {"name": "dryRun", "in": "query", "schema": {"type": "string"}},
            {"name": "fieldManager", "in": "query", "schema": {"type": "string"}}
        ]);
        let op = |id: &str| {
            json!({
                "operationId": format!("{id}{}", d.kind),
                "x-kubernetes-group-version-kind": gvk,
                "x-kubernetes-action": id,
                "parameters": params,
                "responses": {"200": {"description": "OK"}}
            })
        };
        let base = if d.namespaced {
            format!("/{}/namespaces/{{namespace}}/{}", gv_path(d), d.plural)
        } else {
            format!("/{}/{}", gv_path(d), d.plural)
        };
        paths.insert(base.clone(), json!({"get": op("list"), "post": op("post")}));
        paths.insert(
            format!("{base}/{{name}}"),
            json!({"get": op("get"), "put": op("put"), "patch": op("patch"), "delete": op("delete")}),
        );
        let schema_name = format!(
            "{}.{}.{}",
            if d.group.is_empty() { "core" } else { &d.group },
            d.version,
            d.kind
        );
        schemas.insert(
            schema_name,
            json!({
                "type": "object",
                "x-kubernetes-group-version-kind": [gvk],
                "x-kubernetes-preserve-unknown-fields": true
            }),
        );
    }
    json!({
        "openapi": "3.0.0",
        "info": {"title": "Kubernetes", "version": format!("v{MAJOR}.{MINOR}.{PATCH}")},
        "paths": paths,
        "components": {"schemas": schemas}
    })
}

fn with_content_type(mut resp: Response<Body>, ct: &'static str) -> Response<Body> {
    resp.headers_mut()
        .insert(header::CONTENT_TYPE, HeaderValue::from_static(ct));
    resp
}

const AGGREGATED: &str = "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList";

fn wants_aggregated(req: &Request) -> bool {
    req.header("accept").split(',').any(|media| {
        let params: Vec<&str> = media.split(';').map(str::trim).collect();
        params.contains(&"as=APIGroupDiscoveryList")
            && params.contains(&"v=v2")
            && params.contains(&"g=apidiscovery.k8s.io")
    })
}

fn bytes(v: &Value) -> Vec<u8> {
    serde_json::to_vec(v).unwrap_or_default()
}

/// Serves discovery, OpenAPI and health paths; `None` for any other path.
pub(crate) fn handle(shared: &Shared, req: &Request) -> Option<Response<Body>> {
    let path = req.path.trim_end_matches('/');
    let get_only = |resp: Response<Body>| {
        if req.method == Method::GET || req.method == Method::HEAD {
            resp
        } else {
            error_response(&ApiError::method_not_allowed())
        }
    };
    match path {
        "/healthz" | "/livez" | "/readyz" => {
            let mut r = Response::new(Body::full("ok"));
            r.headers_mut().insert(
                header::CONTENT_TYPE,
                HeaderValue::from_static("text/plain; charset=utf-8"),
            );
            return Some(r);
        }
        "/version" => {
            let v = json!({
                "major": MAJOR,
                "minor": MINOR,
                "emulationMajor": MAJOR,
                "emulationMinor": MINOR,
                "gitVersion": format!("v{MAJOR}.{MINOR}.{PATCH}+kcr-testenv"),
                "gitCommit": "0000000000000000000000000000000000000000",
                "gitTreeState": "clean",
                "buildDate": "2025-01-01T00:00:00Z",
                "goVersion": "go1.25",
                "compiler": "gc",
                "platform": "linux/amd64"
            });
            return Some(get_only(json_response(200, bytes(&v))));
        }
        "/openapi/v2" => {
            let v = json!({"swagger": "2.0", "info": {"title": "Kubernetes", "version": format!("v{MAJOR}.{MINOR}.{PATCH}")}, "paths": {}, "definitions": {}});
            return Some(get_only(json_response(200, bytes(&v))));
        }
        _ => {}
    }
    let store = shared.store.lock();
    let defs = store.defs();
    if path == "/openapi/v3" {
        let mut paths = serde_json::Map::new();
        for d in defs {
            let gv = gv_path(d);
            let hash = fxhash(&openapi_v3_gv(defs, &d.group, &d.version).to_string());
            paths.insert(
                gv.clone(),
                json!({"serverRelativeURL": format!("/openapi/v3/{gv}?hash={hash:016X}")}),
            );
        }
        return Some(get_only(json_response(
            200,
            bytes(&json!({"paths": paths})),
        )));
    }
    if let Some(gv) = path.strip_prefix("/openapi/v3/") {
        let (group, version) = match gv.split('/').collect::<Vec<_>>().as_slice() {
            ["api", v] => (String::new(), (*v).to_owned()),
            ["apis", g, v] => ((*g).to_owned(), (*v).to_owned()),
            _ => return Some(error_response(&ApiError::path_not_found())),
        };
        if !defs
            .iter()
            .any(|d| d.group == group && d.version == version)
        {
            return Some(error_response(&ApiError::path_not_found()));
        }
        return Some(get_only(json_response(
            200,
            bytes(&openapi_v3_gv(defs, &group, &version)),
        )));
    }
    if path.starts_with("/openapi/") {
        return Some(error_response(&ApiError::path_not_found()));
    }
    if path == "/api" {
        if wants_aggregated(req) {
            let core: Vec<String> = vec!["v1".into()];
            let mut g = aggregated_group("", &core, defs);
            g["metadata"] = json!({"creationTimestamp": null});
            let list = json!({"kind": "APIGroupDiscoveryList", "apiVersion": "apidiscovery.k8s.io/v2", "metadata": {}, "items": [g]});
            return Some(get_only(with_content_type(
                json_response(200, bytes(&list)),
                AGGREGATED,
            )));
        }
        let v = json!({
            "kind": "APIVersions",
            "versions": ["v1"],
            "serverAddressByClientCIDRs": [{"clientCIDR": "0.0.0.0/0", "serverAddress": shared.addr.to_string()}]
        });
        return Some(get_only(json_response(200, bytes(&v))));
    }
    if path == "/apis" {
        let groups = groups(defs);
        if wants_aggregated(req) {
            let items: Vec<Value> = groups
                .iter()
                .map(|(n, vs)| aggregated_group(n, vs, defs))
                .collect();
            let list = json!({"kind": "APIGroupDiscoveryList", "apiVersion": "apidiscovery.k8s.io/v2", "metadata": {}, "items": items});
            return Some(get_only(with_content_type(
                json_response(200, bytes(&list)),
                AGGREGATED,
            )));
        }
        let items: Vec<Value> = groups.iter().map(|(n, vs)| group_json(n, vs)).collect();
        let v = json!({"kind": "APIGroupList", "apiVersion": "v1", "groups": items});
        return Some(get_only(json_response(200, bytes(&v))));
    }
    let segs: Vec<&str> = path.trim_matches('/').split('/').collect();
    if let ["apis", group] = segs.as_slice() {
        let groups = groups(defs);
        let Some(versions) = groups.get(*group) else {
            return Some(error_response(&ApiError::path_not_found()));
        };
        let mut v = group_json(group, versions);
        v["kind"] = json!("APIGroup");
        v["apiVersion"] = json!("v1");
        return Some(get_only(json_response(200, bytes(&v))));
    }
    let (group, version, rest) = split_api_path(path)?;
    if !rest.is_empty() {
        return None;
    }
    let served: Vec<&Arc<ResourceDef>> = defs
        .iter()
        .filter(|d| d.group == group && d.version == version)
        .collect();
    if served.is_empty() {
        return Some(error_response(&ApiError::path_not_found()));
    }
    let resources: Vec<Value> = served.iter().flat_map(|d| resource_entries(d)).collect();
    let gv = if group.is_empty() {
        version.to_owned()
    } else {
        format!("{group}/{version}")
    };
    let v = json!({"kind": "APIResourceList", "apiVersion": "v1", "groupVersion": gv, "resources": resources});
    Some(get_only(json_response(200, bytes(&v))))
}

#[cfg(test)]
mod version_priority_tests {
    use super::version_priority;

    #[test]
    fn versions_should_sort_by_kubernetes_priority() {
        let mut versions = vec!["v1alpha1", "foo", "v1", "v1beta2", "v2", "v1beta1", "v10"];
        versions.sort_by_key(|v| std::cmp::Reverse(version_priority(v)));
        assert_eq!(
            versions,
            ["v10", "v2", "v1", "v1beta2", "v1beta1", "v1alpha1", "foo"]
        );
    }
}

#[cfg(test)]
mod storage_version_hash_tests {
    use super::*;
    use crate::registry::builtins;

    fn hash_of(group: &str, version: &str, plural: &str) -> Option<String> {
        let def = builtins()
            .into_iter()
            .find(|d| d.group == group && d.version == version && d.plural == plural)
            .unwrap_or_else(|| panic!("{group}/{version} {plural} is served"));
        storage_version_hash(&def)
    }

    #[test]
    fn admissionregistration_hashes_should_be_those_kube_apiserver_published() {
        // Recorded from kube-apiserver v1.36.2 (the with-controllers corpus).
        let recorded = [
            ("mutatingadmissionpolicies", "LYmCf+UMVdg="),
            ("mutatingadmissionpolicybindings", "90V5FRZZ3Zg="),
            ("mutatingwebhookconfigurations", "Sqi0GUgDaX0="),
            ("validatingadmissionpolicies", "6OxvlMmQ6is="),
            ("validatingadmissionpolicybindings", "v9715VZqakg="),
            ("validatingwebhookconfigurations", "B0wHjQmsGNk="),
        ];
        for (plural, hash) in recorded {
            assert_eq!(
                hash_of("admissionregistration.k8s.io", "v1", plural).as_deref(),
                Some(hash),
                "{plural}"
            );
        }
    }

    #[test]
    fn other_kinds_should_hash_their_storage_group_version_kind() {
        // Derived from the algorithm (base64 of the first 8 bytes of SHA-256 of
        // "group/version/kind"), e.g. `printf /v1/Pod | sha256sum`.
        assert_eq!(hash_of("", "v1", "pods").as_deref(), Some("xPOwRZ+Yhw8="));
        assert_eq!(
            hash_of("", "v1", "configmaps").as_deref(),
            Some("qFsyl6wFWjQ=")
        );
        assert_eq!(
            hash_of("", "v1", "namespaces").as_deref(),
            Some("Q3oi5N2YM8M=")
        );
        assert_eq!(
            hash_of("apps", "v1", "deployments").as_deref(),
            Some("8aSe+NMegvE=")
        );
        // autoscaling stores v2 for both served versions.
        let hpa = Some("qwQve8ut294=");
        assert_eq!(
            hash_of("autoscaling", "v2", "horizontalpodautoscalers").as_deref(),
            hpa
        );
        assert_eq!(
            hash_of("autoscaling", "v1", "horizontalpodautoscalers").as_deref(),
            hpa
        );
        // events.k8s.io Events are stored as core Events.
        let event = Some("r2yiGXH7wu8=");
        assert_eq!(hash_of("", "v1", "events").as_deref(), event);
        assert_eq!(hash_of("events.k8s.io", "v1", "events").as_deref(), event);
    }

    #[test]
    fn resources_outside_the_generic_store_should_have_no_hash() {
        assert_eq!(hash_of("", "v1", "componentstatuses"), None);
        assert_eq!(hash_of("", "v1", "bindings"), None);
        assert_eq!(
            hash_of("authorization.k8s.io", "v1", "subjectaccessreviews"),
            None
        );
        assert_eq!(hash_of("authentication.k8s.io", "v1", "tokenreviews"), None);
    }

    #[test]
    fn a_custom_resource_should_hash_its_served_storage_version() {
        let crd = |v1_served: bool| {
            json!({
                "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
                "metadata": {"name": "widgets.example.com"},
                "spec": {"group": "example.com", "scope": "Namespaced",
                    "names": {"plural": "widgets", "singular": "widget", "kind": "Widget", "listKind": "WidgetList"},
                    "versions": [
                        {"name": "v1", "served": v1_served, "storage": true,
                         "schema": {"openAPIV3Schema": {"type": "object"}}},
                        {"name": "v2", "served": true, "storage": false,
                         "schema": {"openAPIV3Schema": {"type": "object"}}}
                    ]},
                "status": {"storedVersions": ["v1"]}
            })
        };
        let defs = crate::registry::from_crd(&crd(true)).unwrap();
        // "example.com/v1/Widget", for the served v2 as well.
        for def in &defs {
            assert_eq!(storage_version_hash(def).as_deref(), Some("gIwvi5rymmg="));
        }
        let defs = crate::registry::from_crd(&crd(false)).unwrap();
        assert_eq!(defs.len(), 1);
        assert_eq!(storage_version_hash(&defs[0]), None);
    }
}
