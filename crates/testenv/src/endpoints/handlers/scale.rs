//! The `scale` subresource of workloads and custom resources (`autoscaling/v1` `Scale`).

use bytes::Bytes;
use serde_json::{Value, json};

use crate::conversion;
use crate::custom_resource;
use crate::endpoints::handlers::rest::dry_run;
use crate::endpoints::handlers::rest::manage_write;
use crate::endpoints::handlers::rest::to_bytes;
use crate::endpoints::installer::Target;
use crate::managed_fields;
use crate::registry::ResourceDef;
use crate::registry::generic::Part;
use crate::registry::generic::prepare_update;
use crate::registry::generic::set_rv;
use crate::registry::generic::store_update;
use crate::server::{Request, Shared};
use crate::status::{ApiError, ApiResult};

/// The `Scale` of an object of `def`: from the CRD's scale paths for a custom resource.
pub(crate) fn scale_for(def: &ResourceDef, obj: &Value) -> Value {
    match def
        .crd_version
        .as_deref()
        .and_then(custom_resource::scale::ScalePaths::of)
    {
        Some(paths) => paths.scale_of(obj),
        None => scale_of(obj),
    }
}

/// A Scale's `spec`: autoscaling/v1 `ScaleSpec.replicas` is `omitempty`, so `0` is left out.
pub(crate) fn spec_of(replicas: Value) -> Value {
    if replicas.as_i64() == Some(0) {
        json!({})
    } else {
        json!({"replicas": replicas})
    }
}

pub(crate) fn scale_of(obj: &Value) -> Value {
    let selector = match obj.get("kind").and_then(Value::as_str) {
        // A ReplicationController's selector is a plain label map.
        Some("ReplicationController") => crate::subresources::map_selector_string(
            obj.pointer("/spec/selector").unwrap_or(&Value::Null),
        ),
        _ => crate::subresources::selector_string(
            obj.pointer("/spec/selector").unwrap_or(&Value::Null),
        ),
    };
    let m = obj.get("metadata").cloned().unwrap_or(json!({}));
    // `ScaleSpec.replicas` is `omitempty`: a Scale of 0 replicas has `spec: {}`.
    let replicas = obj.pointer("/spec/replicas").cloned().unwrap_or(json!(1));
    let spec = if replicas.as_i64() == Some(0) {
        json!({})
    } else {
        json!({"replicas": replicas})
    };
    json!({
        "kind": "Scale",
        "apiVersion": "autoscaling/v1",
        "metadata": {
            "name": m.get("name"),
            "namespace": m.get("namespace"),
            "uid": m.get("uid"),
            "resourceVersion": m.get("resourceVersion"),
            "creationTimestamp": m.get("creationTimestamp"),
        },
        "spec": spec,
        "status": {
            "replicas": obj.pointer("/status/replicas").cloned().unwrap_or(json!(0)),
            "selector": selector,
        }
    })
}

/// Updates `spec.replicas` through the `scale` subresource; `f` turns the current Scale into the
/// requested one.
pub(crate) fn write_scale(
    shared: &Shared,
    req: &Request,
    t: &Target,
    f: impl FnOnce(&Value) -> ApiResult<Value>,
) -> ApiResult<(u16, Bytes)> {
    write_scale_managed(shared, req, t, |scale, _| Ok((f(scale)?, None)))
}

/// Server-side apply of `config` by `manager` through the `scale` subresource: applied to the
/// Scale with the object's entries mapped onto it and back (see
/// [`managed_fields::apply_through_scale`]).
pub(crate) fn apply_scale(
    shared: &Shared,
    req: &Request,
    t: &Target,
    config: &Value,
    manager: &str,
    force: bool,
) -> ApiResult<(u16, Bytes)> {
    let def = t.def.clone();
    write_scale_managed(shared, req, t, |scale, parent| {
        let custom_path = def
            .crd_version
            .as_deref()
            .and_then(custom_resource::scale::ScalePaths::of)
            .map(|p| p.spec_replicas_path().to_vec());
        let path: Vec<&str> = match &custom_path {
            Some(p) => p.iter().map(String::as_str).collect(),
            None => vec!["spec", "replicas"],
        };
        let (mut applied, entries) = managed_fields::apply_through_scale(
            parent,
            &path,
            &def.api_version(),
            scale,
            config,
            manager,
            force,
        )?;
        // A Scale whose replicas the apply left out has 0 (Go's zero value).
        if applied.pointer("/spec/replicas").is_none() {
            applied["spec"] = json!({"replicas": 0});
        }
        Ok((applied, Some(entries)))
    })
}

/// [`write_scale`], where `f` also sees the object and may give its new `managedFields`
/// (else the write is recorded as an update through `scale`).
fn write_scale_managed(
    shared: &Shared,
    req: &Request,
    t: &Target,
    f: impl FnOnce(&Value, &Value) -> ApiResult<(Value, Option<Value>)>,
) -> ApiResult<(u16, Bytes)> {
    let def = &t.def;
    let mut store = shared.store.lock();
    let old = store
        .get(&def.storage, &t.key())
        .map(|s| conversion::stored_as(def, s))
        .ok_or_else(|| ApiError::not_found(&def.group, &def.plural, t.name()))?;
    let (scale, entries) = f(&scale_for(def, &old.value), &old.value)?;
    let replicas = scale
        .pointer("/spec/replicas")
        .and_then(Value::as_i64)
        .ok_or_else(|| {
            ApiError::invalid(
                "autoscaling",
                "Scale",
                t.name(),
                &[(
                    "spec.replicas",
                    "FieldValueRequired",
                    "Required value".into(),
                )],
            )
        })?;
    if replicas < 0 {
        return Err(ApiError::invalid(
            "autoscaling",
            "Scale",
            t.name(),
            &[(
                "spec.replicas",
                "FieldValueInvalid",
                format!("Invalid value: {replicas}: must be greater than or equal to 0"),
            )],
        ));
    }
    let mut new = (*old.value).clone();
    if let Some(rv) = scale
        .pointer("/metadata/resourceVersion")
        .and_then(Value::as_str)
        && let Some(m) = new.as_object_mut()
    {
        set_rv(m, rv.parse().unwrap_or(u64::MAX));
    }
    match def
        .crd_version
        .as_deref()
        .and_then(custom_resource::scale::ScalePaths::of)
    {
        Some(paths) => paths.set_replicas(&mut new, replicas),
        None => {
            if let Some(spec) = new.get_mut("spec").and_then(Value::as_object_mut) {
                spec.insert("replicas".into(), json!(replicas));
            }
        }
    }
    let Value::Object(new) = new else {
        return Err(ApiError::internal("object is not a map"));
    };
    let target = Target {
        sub: None,
        ..t.clone()
    };
    let prepared = prepare_update(
        def,
        &old.value,
        new,
        Part::Main,
        false,
        false,
        store.next_rv(),
        // Recorded as a write of the scale subresource (`spec.replicas`, subresource `scale`).
        &|old, new| {
            match &entries {
                Some(e) => {
                    if let Some(m) = new.as_object_mut() {
                        crate::meta::metadata_mut(m).insert("managedFields".into(), e.clone());
                    }
                }
                None => manage_write(&store, t, req, old, new),
            }
            crate::admission::admit_update(shared, &store, req, t, old, new)
        },
    )?;
    if dry_run(req) {
        // The Scale the write would give, at the stored resourceVersion (nothing is stored).
        let (code, would_be) = store_update(shared, &mut store, &target, &old, prepared, true)?;
        let would_be: Value = serde_json::from_slice(&would_be).unwrap_or_default();
        return Ok((code, to_bytes(&scale_for(def, &would_be))));
    }
    let (code, _) = store_update(shared, &mut store, &target, &old, prepared, false)?;
    let current = store
        .get(&def.storage, &t.key())
        .map_or(json!({}), |s| scale_for(def, &s.value));
    Ok((code, to_bytes(&current)))
}
