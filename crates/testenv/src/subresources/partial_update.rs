//! Subresources that read and write one part of an object, as kube-apiserver's strategies for
//! them do (everything else in a write is ignored; `GET` returns the whole object):
//!
//! - `pods/ephemeralcontainers`: `spec.ephemeralContainers`; existing ones may be neither
//!   changed nor removed, new ones need a unique name and an image.
//! - `pods/resize`: the `resources` and `resizePolicy` of the containers and init containers;
//!   only `cpu` and `memory` may change.
//! - `certificatesigningrequests/approval`: `status.conditions`; `Approved` and `Denied`
//!   exclude each other and, once set, stay; under RBAC the writer needs `approve` on the
//!   signer.
//!
//! Writes go through `PUT` (a stale `resourceVersion` gets `409`) or `PATCH` (JSON merge, JSON
//! and strategic merge patch). They bump `resourceVersion` but, unlike the main resource, do
//! not record `managedFields` entries.

use bytes::Bytes;
use http::Method;
use serde_json::{Value, json};

use crate::api::{self, Target};
use crate::managed_fields;
use crate::meta::{self, meta_str, metadata_mut};
use crate::patch;
use crate::server::{Request, Shared};
use crate::status::{ApiError, ApiResult};
use crate::store::{EventType, object_key};
use crate::validation::field::FieldError;

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

/// `spec.ephemeralContainers` of `new` on `old`.
fn ephemeral_containers(old: &Value, new: &Value) -> (Value, Vec<FieldError>) {
    let mut errs = Vec::new();
    let before = array_at(old, "/spec/ephemeralContainers");
    let after = array_at(new, "/spec/ephemeralContainers");
    for (i, c) in before.iter().enumerate() {
        match after.iter().position(|n| name_of(n) == name_of(c)) {
            None => errs.push(FieldError::forbidden(
                "spec.ephemeralContainers",
                &format!(
                    "existing ephemeral containers {:?} may not be removed",
                    name_of(c)
                ),
            )),
            Some(j) if after[j] != *c => errs.push(FieldError::forbidden(
                format!("spec.ephemeralContainers[{i}]"),
                &format!(
                    "existing ephemeral containers {:?} may not be changed",
                    name_of(c)
                ),
            )),
            Some(_) => {}
        }
    }
    let mut names: Vec<String> = array_at(old, "/spec/containers")
        .iter()
        .chain(array_at(old, "/spec/initContainers"))
        .map(|c| name_of(c).to_owned())
        .collect();
    for (i, c) in after.iter().enumerate() {
        let path = format!("spec.ephemeralContainers[{i}]");
        let name = name_of(c);
        if before.iter().any(|b| name_of(b) == name) {
            names.push(name.to_owned());
            continue;
        }
        if name.is_empty() {
            errs.push(FieldError::required(format!("{path}.name"), ""));
        } else if names.iter().any(|n| n == name) {
            errs.push(FieldError::duplicate(format!("{path}.name"), &json!(name)));
        }
        if c.get("image")
            .and_then(Value::as_str)
            .is_none_or(str::is_empty)
        {
            errs.push(FieldError::required(format!("{path}.image"), ""));
        }
        names.push(name.to_owned());
    }
    let mut out = old.clone();
    if let Some(spec) = out.get_mut("spec").and_then(Value::as_object_mut) {
        if after.is_empty() {
            spec.remove("ephemeralContainers");
        } else {
            spec.insert("ephemeralContainers".into(), Value::Array(after.to_vec()));
        }
    }
    (out, errs)
}

/// The `resources` and `resizePolicy` of `new`'s containers on `old`.
fn resize(old: &Value, new: &Value) -> (Value, Vec<FieldError>) {
    let mut errs = Vec::new();
    let mut out = old.clone();
    for list in ["containers", "initContainers"] {
        let pointer = format!("/spec/{list}");
        let wanted = array_at(new, &pointer).to_vec();
        let Some(current) = out.pointer_mut(&pointer).and_then(Value::as_array_mut) else {
            continue;
        };
        for (i, c) in current.iter_mut().enumerate() {
            let Some(w) = wanted.iter().find(|w| name_of(w) == name_of(c)) else {
                continue;
            };
            let Some(c) = c.as_object_mut() else {
                continue;
            };
            for field in ["resources", "resizePolicy"] {
                let before = c.get(field).cloned().unwrap_or_default();
                let after = w.get(field).cloned().unwrap_or_default();
                if field == "resources" {
                    for part in ["requests", "limits"] {
                        let names = |v: &Value| -> Vec<(String, Value)> {
                            v.get(part)
                                .and_then(Value::as_object)
                                .map(|m| m.iter().map(|(k, v)| (k.clone(), v.clone())).collect())
                                .unwrap_or_default()
                        };
                        let (b, a) = (names(&before), names(&after));
                        let changed = b
                            .iter()
                            .filter(|e| !a.contains(e))
                            .chain(a.iter().filter(|e| !b.contains(e)))
                            .any(|(k, _)| k != "cpu" && k != "memory");
                        if changed {
                            errs.push(FieldError::forbidden(
                                format!("spec.{list}[{i}].resources.{part}"),
                                "only cpu and memory resources are mutable",
                            ));
                        }
                    }
                }
                if after.is_null() {
                    c.remove(field);
                } else {
                    c.insert(field.into(), after);
                }
            }
        }
    }
    (out, errs)
}

fn condition_types(v: &Value) -> Vec<String> {
    array_at(v, "/status/conditions")
        .iter()
        .filter_map(|c| c.get("type").and_then(Value::as_str).map(str::to_owned))
        .collect()
}

/// `status.conditions` of `new` on `old` (a CSR's approval).
fn approval(old: &Value, new: &Value) -> (Value, Vec<FieldError>) {
    let mut errs = Vec::new();
    let now = meta::now_rfc3339();
    let mut conditions = array_at(new, "/status/conditions").to_vec();
    for c in &mut conditions {
        if let Some(m) = c.as_object_mut() {
            for key in ["lastUpdateTime", "lastTransitionTime"] {
                if m.get(key).is_none_or(Value::is_null) {
                    m.insert(key.into(), json!(now));
                }
            }
        }
    }
    let after = condition_types(&json!({"status": {"conditions": conditions}}));
    for kind in ["Approved", "Denied"] {
        if condition_types(old).iter().any(|t| t == kind) && !after.iter().any(|t| t == kind) {
            errs.push(FieldError::forbidden(
                "status.conditions",
                &format!("updates may not remove a condition of type {kind:?}"),
            ));
        }
    }
    if after.iter().any(|t| t == "Approved") && after.iter().any(|t| t == "Denied") {
        errs.push(FieldError::invalid(
            "status.conditions",
            &json!(conditions),
            "Approved and Denied conditions are mutually exclusive",
        ));
    }
    let mut out = old.clone();
    if let Some(m) = out.as_object_mut() {
        let status = m.entry("status").or_insert_with(|| json!({}));
        if let Some(s) = status.as_object_mut() {
            s.insert("conditions".into(), Value::Array(conditions));
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
    let new = requested(shared, req, t, &current)?;
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
    if result == old || req.param("dryRun") == Some("All") {
        return Ok((200, to_bytes(&result)));
    }
    let rv = store.next_rv();
    if let Some(m) = result.as_object_mut() {
        metadata_mut(m).insert("resourceVersion".into(), json!(rv.to_string()));
        if def.tracks_generation() && t.sub.as_deref() != Some("approval") {
            let generation = old
                .pointer("/metadata/generation")
                .and_then(Value::as_i64)
                .unwrap_or(0)
                + 1;
            metadata_mut(m).insert("generation".into(), json!(generation));
        }
    }
    let ns = t.namespace.as_deref().filter(|_| def.namespaced);
    let stored = api::commit(
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
