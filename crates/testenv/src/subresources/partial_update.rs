//! Subresources that read and write one part of an object, as kube-apiserver's strategies for
//! them do (everything else in a write is ignored; `GET` returns the whole object), each with
//! its validation:
//!
//! - `pods/ephemeralcontainers`: `spec.ephemeralContainers` (`ValidatePodEphemeralContainersUpdate`):
//!   existing ones may be neither removed nor changed; new ones need a name unique among all
//!   the Pod's containers, an image, a `targetContainerName` naming a container or init
//!   container, and none of the fields an ephemeral container may not set (ports, resources,
//!   probes, lifecycle, `subPath` mounts); a static Pod takes none. The `may not be changed`
//!   message ends with the diff of the two containers as their internal Go type encodes them.
//! - `pods/resize`: the `resources` and `resizePolicy` of the containers and init containers
//!   (`ValidatePodResize`): only `cpu` and `memory` may change, requests and limits may not be
//!   removed, the QoS class may not change, a non-sidecar init container's resources not at
//!   all; static and Windows Pods are not resized.
//! - `certificatesigningrequests/approval`: `status.conditions` (`ValidateCertificateSigningRequestApprovalUpdate`):
//!   `Approved`, `Denied` and `Failed` must be `True` and, once set, stay; `Approved` and
//!   `Denied` exclude each other; types are not repeated; under RBAC the writer needs `approve`
//!   on the signer.
//!
//! Writes go through `PUT` (a stale `resourceVersion` gets `409`) or `PATCH` (JSON merge, JSON
//! and strategic merge patch). They bump `resourceVersion` and record the writer's fields in
//! a `managedFields` entry with the subresource's name (`subresource: resize`, ...), as
//! kube-apiserver's field manager does.

use std::collections::HashSet;

use crate::registry::rest::Generation;
use bytes::Bytes;
use http::Method;
use serde_json::{Map, Value, json};

use crate::defaults;
use crate::endpoints::Target;
use crate::managed_fields;
use crate::meta::{self, meta_str, metadata_mut};
use crate::patch;
use crate::registry::generic;
use crate::server::{Request, Shared};
use crate::status::{ApiError, ApiResult};
use crate::store::{EventType, object_key};
use crate::validation::field::FieldError;
use crate::validation::names;

fn to_bytes(v: &Value) -> Bytes {
    Bytes::from(serde_json::to_vec(v).unwrap_or_default())
}

/// The object a write asks for: the `PUT` body, or the current object with the patch applied.
fn requested(shared: &Shared, req: &Request, t: &Target, current: &Value) -> ApiResult<Value> {
    if req.method == Method::PUT {
        return super::body_json(req, &t.def.kind);
    }
    let media = req.header("content-type");
    let media = media.split(';').next().unwrap_or_default().trim();
    let body: Value = serde_json::from_slice(&req.body).map_err(|e| {
        ApiError::bad_request(format!(
            "error decoding patch: {}",
            patch::go_json_error(&req.body, &e)
        ))
    })?;
    let mut target = current.clone();
    match media {
        "application/json-patch+json" => {
            patch::json_patch(&mut target, &body).map_err(|_| {
                ApiError::new(
                    422,
                    "Invalid",
                    "the server rejected our request due to an error in our request",
                )
                .with_details(json!({}))
            })?;
        }
        "application/merge-patch+json" => patch::merge_patch(&mut target, &body),
        "application/strategic-merge-patch+json" => {
            let schema = managed_fields::schema_for(&shared.store.lock(), &t.def);
            target = patch::strategic_merge_patch(&schema, current, &body)
                .map_err(|e| ApiError::bad_request(e.to_string()))?;
        }
        _ => {
            return Err(
                ApiError::new(415, "UnsupportedMediaType", "415: Unsupported Media Type")
                    .with_details(json!({})),
            );
        }
    }
    Ok(target)
}

fn array_at<'a>(v: &'a Value, pointer: &str) -> &'a [Value] {
    v.pointer(pointer)
        .and_then(Value::as_array)
        .map_or(&[], Vec::as_slice)
}

fn name_of(v: &Value) -> &str {
    v.get("name").and_then(Value::as_str).unwrap_or_default()
}

/// The annotation of a static Pod's mirror.
const MIRROR_POD: &str = "kubernetes.io/config.mirror";

fn is_mirror_pod(pod: &Value) -> bool {
    pod.pointer("/metadata/annotations")
        .and_then(Value::as_object)
        .is_some_and(|a| a.contains_key(MIRROR_POD))
}

/// A `Forbidden` error on the whole object (an empty field path).
fn forbidden_object(detail: &str) -> Vec<FieldError> {
    vec![FieldError::forbidden("", detail)]
}

/// The fields an ephemeral container may not set (kube-apiserver validates against an allow
/// list; these are the `Container` fields left out of it).
const NOT_FOR_EPHEMERAL: &[&str] = &[
    "ports",
    "resources",
    "resizePolicy",
    "restartPolicy",
    "restartPolicyRules",
    "livenessProbe",
    "readinessProbe",
    "startupProbe",
    "lifecycle",
];

/// Whether a JSON value is Go's zero value for its field.
fn is_zero(v: &Value) -> bool {
    match v {
        Value::Null => true,
        Value::Bool(b) => !b,
        Value::String(s) => s.is_empty(),
        Value::Array(a) => a.is_empty(),
        Value::Object(m) => m.values().all(is_zero),
        Value::Number(n) => n.as_f64() == Some(0.0),
    }
}

/// kube-apiserver's `validateEphemeralContainers` for the ephemeral containers of `pod`.
fn validate_ephemeral_containers(pod: &Value) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let mut seen: HashSet<&str> = HashSet::new();
    let mut others: HashSet<&str> = HashSet::new();
    for c in array_at(pod, "/spec/containers")
        .iter()
        .chain(array_at(pod, "/spec/initContainers"))
    {
        seen.insert(name_of(c));
        others.insert(name_of(c));
    }
    for (i, c) in array_at(pod, "/spec/ephemeralContainers")
        .iter()
        .enumerate()
    {
        let at = format!("spec.ephemeralContainers[{i}]");
        names::check_entry_name(&at, c, &mut seen, &mut errs);
        if c.get("image")
            .and_then(Value::as_str)
            .is_none_or(str::is_empty)
        {
            errs.push(FieldError::required(format!("{at}.image"), ""));
        }
        if let Some(target) = c
            .get("targetContainerName")
            .and_then(Value::as_str)
            .filter(|t| !t.is_empty())
            && !others.contains(target)
        {
            errs.push(FieldError {
                field: format!("{at}.targetContainerName"),
                reason: "FieldValueNotFound",
                message: format!("Not found: {}", json!(target)),
            });
        }
        for field in NOT_FOR_EPHEMERAL {
            if c.get(*field).is_some_and(|v| !is_zero(v)) {
                errs.push(FieldError::forbidden(
                    format!("{at}.{field}"),
                    "cannot be set for an Ephemeral Container",
                ));
            }
        }
        for (j, m) in array_at(c, "/volumeMounts").iter().enumerate() {
            for field in ["subPath", "subPathExpr"] {
                if m.get(field)
                    .and_then(Value::as_str)
                    .is_some_and(|s| !s.is_empty())
                {
                    errs.push(FieldError::forbidden(
                        format!("{at}.volumeMounts[{j}].{field}"),
                        "cannot be set for an Ephemeral Container",
                    ));
                }
            }
        }
    }
    errs
}

/// `spec.ephemeralContainers` of `new` on `old` (kube-apiserver's
/// `ValidatePodEphemeralContainersUpdate`): the new list must be valid, and existing ephemeral
/// containers may be neither removed nor changed (matched by name, in any order).
fn ephemeral_containers(old: &Value, new: &Value) -> (Value, Vec<FieldError>) {
    let mut after =
        json!({"spec": {"ephemeralContainers": array_at(new, "/spec/ephemeralContainers")}});
    if let Some(spec) = after.get_mut("spec").and_then(Value::as_object_mut) {
        // Decoding defaults the containers of the body (a Pod).
        defaults::pod::pod_spec(spec);
    }
    let after = array_at(&after, "/spec/ephemeralContainers").to_vec();
    let mut out = old.clone();
    if let Some(spec) = out.get_mut("spec").and_then(Value::as_object_mut) {
        if after.is_empty() {
            spec.remove("ephemeralContainers");
        } else {
            spec.insert("ephemeralContainers".into(), Value::Array(after.clone()));
        }
    }
    if is_mirror_pod(old) {
        return (
            out,
            forbidden_object("static pods do not support ephemeral containers"),
        );
    }
    let mut errs = validate_ephemeral_containers(&out);
    for c in array_at(old, "/spec/ephemeralContainers") {
        match after.iter().find(|n| name_of(n) == name_of(c)) {
            None => errs.push(FieldError::forbidden(
                "spec.ephemeralContainers",
                &format!(
                    "existing ephemeral containers {} may not be removed\n",
                    json!(name_of(c))
                ),
            )),
            Some(n) if n != c => {
                let (before, after) = (
                    crate::wire::go_internal::ephemeral_container_json_indented(c),
                    crate::wire::go_internal::ephemeral_container_json_indented(n),
                );
                errs.push(FieldError::forbidden(
                    "spec.ephemeralContainers",
                    &format!(
                        "existing ephemeral containers {} may not be changed\n{}",
                        json!(name_of(c)),
                        crate::wire::difflib::unified_diff(&before, &after, 3)
                    ),
                ));
            }
            Some(_) => {}
        }
    }
    (out, errs)
}

/// A sidecar: an init container that restarts (`restartPolicy: Always`).
fn is_sidecar(c: &Value) -> bool {
    c.get("restartPolicy").and_then(Value::as_str) == Some("Always")
}

/// A container's `requests` or `limits`.
fn resource_list<'a>(c: &'a Value, part: &str) -> Option<&'a Map<String, Value>> {
    c.pointer(&format!("/resources/{part}"))
        .and_then(Value::as_object)
}

/// `new`'s resources with their cpu and memory put back to `old`'s, as kube-apiserver compares
/// them to find changes to other resources (a list `old` lacks stays as `old` has it).
fn other_resources(new: &Value, old: &Value) -> Value {
    let mut out = Map::new();
    for part in ["requests", "limits"] {
        let Some(before) = resource_list(old, part).filter(|m| !m.is_empty()) else {
            continue;
        };
        let mut list = resource_list(new, part).cloned().unwrap_or_default();
        for r in ["cpu", "memory"] {
            list.remove(r);
            if let Some(q) = before.get(r) {
                list.insert(r.into(), q.clone());
            }
        }
        out.insert(part.into(), Value::Object(list));
    }
    Value::Object(out)
}

/// The requests and limits of `old` as kube-apiserver compares them (empty lists left out).
fn own_resources(old: &Value) -> Value {
    let mut out = Map::new();
    for part in ["requests", "limits"] {
        if let Some(list) = resource_list(old, part).filter(|m| !m.is_empty()) {
            out.insert(part.into(), Value::Object(list.clone()));
        }
    }
    Value::Object(out)
}

/// The QoS class of a Pod as kube-apiserver reads it: `status.qosClass`, else computed.
fn qos_of(pod: &Value) -> String {
    if let Some(q) = pod
        .pointer("/status/qosClass")
        .and_then(Value::as_str)
        .filter(|q| !q.is_empty())
    {
        return q.to_owned();
    }
    pod.get("spec")
        .and_then(Value::as_object)
        .map_or("BestEffort", crate::registry::core::pod::qos_class)
        .to_owned()
}

/// The `resources` and `resizePolicy` of `new`'s containers on `old` (matched by name), and
/// kube-apiserver's `ValidatePodResize`.
fn resize(old: &Value, new: &Value) -> (Value, Vec<FieldError>) {
    let mut new = new.clone();
    if let Some(m) = new.as_object_mut() {
        // Decoding defaults the body (a Pod): requests default to the limits.
        defaults::pod::pod(m);
    }
    let mut out = old.clone();
    for list in ["containers", "initContainers"] {
        let pointer = format!("/spec/{list}");
        let wanted = array_at(&new, &pointer).to_vec();
        let Some(current) = out.pointer_mut(&pointer).and_then(Value::as_array_mut) else {
            continue;
        };
        for c in current.iter_mut() {
            let Some(w) = wanted.iter().find(|w| name_of(w) == name_of(c)) else {
                continue;
            };
            let Some(c) = c.as_object_mut() else {
                continue;
            };
            for field in ["resources", "resizePolicy"] {
                match w.get(field).filter(|v| !v.is_null()) {
                    Some(v) => c.insert(field.into(), v.clone()),
                    None => c.remove(field),
                };
            }
        }
    }
    if is_mirror_pod(old) {
        return (out, forbidden_object("static pods cannot be resized"));
    }
    if old.pointer("/spec/os/name").and_then(Value::as_str) == Some("windows") {
        return (out, forbidden_object("windows pods cannot be resized"));
    }
    let mut errs = Vec::new();
    let after_qos = out
        .get("spec")
        .and_then(Value::as_object)
        .map_or("BestEffort", crate::registry::core::pod::qos_class);
    if qos_of(old) != after_qos {
        errs.push(FieldError::invalid(
            "spec",
            &json!(after_qos),
            "Pod QOS Class may not change as a result of resizing",
        ));
    }
    let running_without_resources = array_at(old, "/status/containerStatuses")
        .iter()
        .find(|s| s.pointer("/state/running").is_some())
        .is_some_and(|s| s.get("resources").is_none_or(Value::is_null));
    if running_without_resources {
        errs.push(FieldError::forbidden(
            "spec",
            "Pod running on node without support for resize",
        ));
    }
    let mut others_changed = false;
    for list in ["initContainers", "containers"] {
        let pointer = format!("/spec/{list}");
        for (i, (before, after)) in array_at(old, &pointer)
            .iter()
            .zip(array_at(&out, &pointer))
            .enumerate()
        {
            let at = format!("spec.{list}[{i}].resources");
            if list == "initContainers" && !is_sidecar(before) {
                if own_resources(before) != own_resources(after) {
                    errs.push(FieldError::forbidden(
                        at,
                        "resources for non-sidecar init containers are immutable",
                    ));
                }
                continue;
            }
            for (part, what) in [
                ("requests", "resource requests"),
                ("limits", "resource limits"),
            ] {
                let removed = resource_list(before, part).is_some_and(|b| {
                    let a = resource_list(after, part);
                    b.keys().any(|k| a.is_none_or(|a| !a.contains_key(k)))
                });
                if removed {
                    errs.push(FieldError::forbidden(
                        format!("{at}.{part}"),
                        &format!("{what} cannot be removed"),
                    ));
                }
            }
            others_changed |= other_resources(after, before) != own_resources(before);
        }
    }
    if others_changed {
        errs.push(FieldError::forbidden(
            "spec",
            "only cpu and memory resources are mutable",
        ));
    }
    (out, errs)
}

fn condition_types(v: &Value) -> Vec<String> {
    array_at(v, "/status/conditions")
        .iter()
        .filter_map(|c| c.get("type").and_then(Value::as_str).map(str::to_owned))
        .collect()
}

fn str_at<'a>(v: &'a Value, key: &str) -> &'a str {
    v.get(key).and_then(Value::as_str).unwrap_or_default()
}

/// kube-apiserver's `validateConditions` for a CSR's `status.conditions`, with what `old`
/// already holds tolerated (duplicate or empty types, both `Approved` and `Denied`).
fn validate_conditions(old: &Value, conditions: &[Value]) -> Vec<FieldError> {
    let old_types = condition_types(old);
    let allow_empty = old_types.iter().any(String::is_empty);
    let allow_duplicates = old_types
        .iter()
        .enumerate()
        .any(|(i, t)| old_types[..i].contains(t));
    let allow_both =
        old_types.iter().any(|t| t == "Approved") && old_types.iter().any(|t| t == "Denied");
    let mut errs = Vec::new();
    let mut seen: Vec<&str> = Vec::new();
    let (mut approved, mut denied) = (false, false);
    for (i, c) in conditions.iter().enumerate() {
        let at = format!("status.conditions[{i}]");
        let kind = str_at(c, "type");
        let status = str_at(c, "status");
        if kind.is_empty() && !allow_empty {
            errs.push(FieldError::required(format!("{at}.type"), ""));
        }
        let allowed: &[&str] = if matches!(kind, "Approved" | "Denied" | "Failed") {
            &["True"]
        } else {
            &["False", "True", "Unknown"]
        };
        if status.is_empty() {
            errs.push(FieldError::required(format!("{at}.status"), ""));
        } else if !allowed.contains(&status) {
            errs.push(FieldError::not_supported(
                format!("{at}.status"),
                &json!(status),
                allowed,
            ));
        }
        if !allow_both {
            let exclusive = match kind {
                "Approved" => {
                    approved = true;
                    denied
                }
                "Denied" => {
                    denied = true;
                    approved
                }
                _ => false,
            };
            if exclusive {
                errs.push(FieldError::invalid(
                    format!("{at}.type"),
                    &json!(kind),
                    "Approved and Denied conditions are mutually exclusive",
                ));
            }
        }
        if !allow_duplicates {
            if seen.contains(&kind) {
                errs.push(FieldError::duplicate(format!("{at}.type"), &json!(kind)));
            }
            seen.push(kind);
        }
    }
    errs
}

/// `status.conditions` of `new` on `old` (a CSR's approval), their times filled in as
/// kube-apiserver's approval strategy does, validated as `ValidateCertificateSigningRequestApprovalUpdate`.
fn approval(old: &Value, new: &Value) -> (Value, Vec<FieldError>) {
    let now = meta::now_rfc3339();
    let before = array_at(old, "/status/conditions");
    let mut conditions = array_at(new, "/status/conditions").to_vec();
    for c in &mut conditions {
        let (kind, status) = (str_at(c, "type").to_owned(), str_at(c, "status").to_owned());
        if let Some(m) = c.as_object_mut() {
            if m.get("lastUpdateTime").is_none_or(Value::is_null) {
                m.insert("lastUpdateTime".into(), json!(now));
            }
            if m.get("lastTransitionTime").is_none_or(Value::is_null) {
                // The time of an old condition of the same type and status stays.
                let kept = before
                    .iter()
                    .find(|o| str_at(o, "type") == kind && str_at(o, "status") == status)
                    .and_then(|o| o.get("lastTransitionTime"))
                    .filter(|t| !t.is_null())
                    .cloned();
                m.insert(
                    "lastTransitionTime".into(),
                    kept.unwrap_or_else(|| json!(now)),
                );
            }
        }
    }
    let mut errs = validate_conditions(old, &conditions);
    let after = condition_types(&json!({"status": {"conditions": conditions}}));
    for kind in ["Approved", "Denied", "Failed"] {
        let count = |types: &[String]| types.iter().filter(|t| *t == kind).count();
        if count(&after) < count(&condition_types(old)) {
            errs.push(FieldError::forbidden(
                "status.conditions",
                &format!("updates may not remove a condition of type {}", json!(kind)),
            ));
        }
    }
    let mut out = old.clone();
    if let Some(m) = out.as_object_mut() {
        let status = m.entry("status").or_insert_with(|| json!({}));
        if let Some(s) = status.as_object_mut() {
            if conditions.is_empty() {
                s.remove("conditions");
            } else {
                s.insert("conditions".into(), Value::Array(conditions));
            }
        }
    }
    (out, errs)
}

/// Under RBAC, approving or denying needs the `approve` verb on the CSR's signer
/// (`certificates.k8s.io` `signers`, named after the signer or its `domain/*`), as the
/// `CertificateApproval` admission plugin requires.
fn may_approve(shared: &Shared, req: &Request, csr: &Value, name: &str) -> ApiResult<()> {
    if !shared.options.rbac {
        return Ok(());
    }
    let signer = csr
        .pointer("/spec/signerName")
        .and_then(Value::as_str)
        .unwrap_or_default();
    let mut names = vec![signer.to_owned()];
    if let Some((domain, _)) = signer.split_once('/') {
        names.push(format!("{domain}/*"));
    }
    let allowed = names.iter().any(|n| {
        let a = crate::rbac::Attributes::resource(
            req.user.clone(),
            "approve",
            "",
            "certificates.k8s.io",
            "signers",
            "",
            n,
        );
        crate::rbac::authorize(shared, &a).allowed()
    });
    if allowed {
        return Ok(());
    }
    Err(ApiError::new(
        403,
        "Forbidden",
        format!(
            "certificatesigningrequests.certificates.k8s.io {name:?} is forbidden: user not permitted to approve requests with signerName {signer:?}"
        ),
    )
    .with_details(json!({"name": name, "group": "certificates.k8s.io", "kind": "certificatesigningrequests"})))
}

/// `GET`, `PUT` or `PATCH` of `pods/ephemeralcontainers`, `pods/resize` or
/// `certificatesigningrequests/approval`.
pub(crate) fn handle(shared: &Shared, req: &Request, t: &Target) -> ApiResult<(u16, Bytes)> {
    let def = &t.def;
    let name = t.name.as_deref().unwrap_or_default();
    let key = object_key(t.namespace.as_deref().filter(|_| def.namespaced), name);
    let current = shared
        .store
        .lock()
        .get(&def.storage, &key)
        .map(|s| (*s.value).clone())
        .ok_or_else(|| ApiError::not_found(&def.group, &def.plural, name))?;
    if req.method == Method::GET {
        return Ok((200, to_bytes(&current)));
    }
    let mut new = requested(shared, req, t, &current)?;
    if let Some(m) = new.as_object_mut() {
        crate::endpoints::handlers::rest::decoded(def, m);
    }
    if let Some(n) = meta_str(&new, "name").filter(|n| *n != name) {
        return Err(ApiError::bad_request(format!(
            "the name of the object ({n}) does not match the name on the URL ({name})"
        )));
    }
    let mut store = shared.store.lock();
    let old = store
        .get(&def.storage, &key)
        .map(|s| (*s.value).clone())
        .ok_or_else(|| ApiError::not_found(&def.group, &def.plural, name))?;
    let old_rv = meta_str(&old, "resourceVersion").unwrap_or_default();
    if let Some(rv) = meta_str(&new, "resourceVersion").filter(|rv| !rv.is_empty())
        && rv != old_rv
    {
        return Err(ApiError::modified(&def.group, &def.plural, name));
    }
    if let Some(uid) = meta_str(&new, "uid").filter(|u| !u.is_empty())
        && Some(uid) != meta_str(&old, "uid")
    {
        return Err(ApiError::conflict(
            &def.group,
            &def.plural,
            name,
            &format!(
                "Precondition failed: UID in precondition: {uid}, UID in object meta: {}",
                meta_str(&old, "uid").unwrap_or_default()
            ),
        ));
    }
    let (mut result, errs) = match t.sub.as_deref() {
        Some("ephemeralcontainers") => ephemeral_containers(&old, &new),
        Some("resize") => resize(&old, &new),
        _ => approval(&old, &new),
    };
    crate::validation::field::check(&def.group, &def.kind, name, errs)?;
    if t.sub.as_deref() == Some("approval") && condition_types(&result) != condition_types(&old) {
        // The authorizer reads the store: release it meanwhile, then make sure nothing changed.
        drop(store);
        may_approve(shared, req, &old, name)?;
        store = shared.store.lock();
        let now = store.get(&def.storage, &key).map(|s| s.value.clone());
        if now.as_deref() != Some(&old) {
            return Err(ApiError::modified(&def.group, &def.plural, name));
        }
    }
    if result == old {
        return Ok((200, to_bytes(&result)));
    }
    // Recorded as an update through the subresource, in an entry of its own.
    let manager = managed_fields::manager_name(req.param("fieldManager"), req.user_agent());
    managed_fields::field_manager_for(&store, def, t.sub.as_deref()).update(
        Some(&old),
        &mut result,
        &manager,
    );
    if req.param("dryRun") == Some("All") {
        return Ok((200, to_bytes(&result)));
    }
    let rv = store.next_rv();
    if let Some(m) = result.as_object_mut() {
        metadata_mut(m).insert("resourceVersion".into(), json!(rv.to_string()));
        if matches!(
            def.generation(),
            Generation::OnSpecChange | Generation::OnChangeOrLabels
        ) && t.sub.as_deref() != Some("approval")
        {
            let generation = old
                .pointer("/metadata/generation")
                .and_then(Value::as_i64)
                .unwrap_or(0)
                + 1;
            metadata_mut(m).insert("generation".into(), json!(generation));
        }
    }
    let ns = t.namespace.as_deref().filter(|_| def.namespaced);
    let stored = generic::commit(
        shared,
        &mut store,
        def,
        ns,
        &key,
        EventType::Modified,
        result,
    );
    Ok((200, stored.json))
}
