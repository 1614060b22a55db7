//! `create` (kube-apiserver's `endpoints/handlers/create.go`).

use bytes::Bytes;
use serde_json::{Value, json};

use crate::admission;
use crate::custom_resource;
use crate::endpoints::handlers::rest::decode_fields;
use crate::endpoints::handlers::rest::dry_run;
use crate::endpoints::handlers::rest::manager_of;
use crate::endpoints::handlers::rest::parse_object;
use crate::endpoints::handlers::rest::served_json;
use crate::endpoints::handlers::rest::to_bytes;
use crate::endpoints::installer::Target;
use crate::managed_fields;
use crate::meta::{self, metadata_mut};
use crate::registry::generic::commit;
use crate::registry::generic::set_rv;
use crate::registry::rest::strategy_for;
use crate::registry::{self};
use crate::server::{Request, Shared};
use crate::status::{ApiError, ApiResult};
use crate::store::{EventType, Store, object_key};
use crate::validation;

pub(crate) fn create(shared: &Shared, req: &Request, t: &Target) -> ApiResult<(u16, Bytes)> {
    create_managed(shared, req, t, false)
}

/// Creates an object; `applied`: its `managedFields` are already those of the apply that
/// creates it.
pub(crate) fn create_managed(
    shared: &Shared,
    req: &Request,
    t: &Target,
    applied: bool,
) -> ApiResult<(u16, Bytes)> {
    let def = &t.def;
    let mut obj = parse_object(shared, req, def)?;
    decode_fields(req, def, &mut obj)?;
    obj.insert("kind".into(), Value::String(def.kind.clone()));
    obj.insert("apiVersion".into(), Value::String(def.api_version()));
    let meta = metadata_mut(&mut obj);
    let requested_name = [meta.get("name"), meta.get("generateName")]
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .find(|n| !n.is_empty())
        .unwrap_or_default()
        .to_owned();
    let name = match meta
        .get("name")
        .and_then(Value::as_str)
        .filter(|n| !n.is_empty())
    {
        Some(n) => n.to_owned(),
        None => match meta
            .get("generateName")
            .and_then(Value::as_str)
            .filter(|n| !n.is_empty())
        {
            Some(prefix) => format!("{prefix}{}", meta::random_suffix()),
            None => {
                return Err(ApiError::invalid(
                    &def.group,
                    &def.kind,
                    "",
                    &[(
                        "metadata.name",
                        "FieldValueRequired",
                        "Required value: name or generateName is required".into(),
                    )],
                ));
            }
        },
    };
    meta.insert("name".into(), Value::String(name.clone()));
    if def.namespaced {
        let ns = t.namespace.clone().unwrap_or_default();
        match meta.get("namespace").and_then(Value::as_str) {
            Some(body_ns) if !body_ns.is_empty() && body_ns != ns => {
                return Err(ApiError::bad_request(
                    "the namespace of the provided object does not match the namespace sent on the request",
                ));
            }
            _ => {}
        }
        meta.insert("namespace".into(), Value::String(ns));
    } else {
        meta.remove("namespace");
    }
    meta.insert("uid".into(), Value::String(meta::new_uid()));
    meta.insert(
        "creationTimestamp".into(),
        Value::String(meta::now_rfc3339()),
    );
    // Kinds that track generation start at 1; the others keep what the client sent.
    if def.generation() != crate::registry::rest::Generation::Untracked {
        meta.insert("generation".into(), json!(1));
    }
    meta.remove("deletionTimestamp");
    meta.remove("deletionGracePeriodSeconds");
    meta.remove("selfLink");
    if def.status {
        obj.remove("status");
    }
    let strategy = strategy_for(def);
    strategy.defaults_on_create(&mut obj);
    validation::on_create(def, &obj)?;
    let is_crd = strategy.declares_resources();
    let mut new_defs = None;
    if is_crd {
        let status = custom_resource::crd_status::initial(&Value::Object(obj.clone()));
        obj.insert("status".into(), status);
        new_defs = Some(registry::from_crd(&Value::Object(obj.clone()))?);
    }
    let key = object_key(t.namespace.as_deref().filter(|_| def.namespaced), &name);
    let mut store = shared.store.lock();
    if !applied {
        let mut value = Value::Object(obj);
        managed_fields::field_manager_for(&store, def, None).update(
            None,
            &mut value,
            &manager_of(req),
        );
        let Value::Object(m) = value else {
            return Err(ApiError::internal("object is not a map"));
        };
        obj = m;
    }
    let namespace = t.namespace.as_deref().filter(|_| def.namespaced);
    let attributes = admission::Attributes {
        def,
        namespace: namespace.unwrap_or_default(),
        name: &requested_name,
        store: &store,
        warnings: &req.warnings,
        disabled: &shared.options.disabled_admission_plugins,
        service_accounts_controller: shared.options.namespace_controllers,
        subresource: None,
    };
    // After the field manager, so what mutating admission and the strategy set is owned by
    // nobody; validating admission then sees the object as it would be stored.
    admission::admit_create(&attributes, &mut obj)?;
    strategy.prepare_for_create(&store, namespace.unwrap_or_default(), &mut obj);
    admission::validate_create(&attributes, &obj)?;
    if obj
        .get("metadata")
        .and_then(|m| m.get("resourceVersion"))
        .and_then(Value::as_str)
        .is_some_and(|rv| !rv.is_empty() && rv != "0")
    {
        // The storage refuses it with a plain error, which kube-apiserver answers as `500`.
        return Err(ApiError::new(
            500,
            "",
            "resourceVersion should not be set on objects to be created",
        ));
    }
    if store.get(&def.storage, &key).is_some() {
        return Err(ApiError::already_exists(&def.group, &def.plural, &name));
    }
    if let Some(defs) = &new_defs
        && let Some(first) = defs.first()
    {
        let taken = store.defs().iter().any(|d| {
            d.group == first.group && d.plural == first.plural && d.storage != first.storage
        });
        if taken {
            return Err(ApiError::already_exists(&def.group, &def.plural, &name));
        }
    }
    if dry_run(req) {
        // Nothing is stored, so the object gets no resourceVersion; kube-apiserver's dry run
        // still passes it through the storage codec.
        let obj = crate::conversion::to_storage(def, Value::Object(obj));
        return Ok((201, to_bytes(&obj)));
    }
    admission::record_create(shared, &mut store, def, namespace.unwrap_or_default(), &obj);
    set_rv(&mut obj, store.next_rv());
    let ns = t.namespace.as_deref().filter(|_| def.namespaced);
    let stored = commit(
        shared,
        &mut store,
        def,
        ns,
        &key,
        EventType::Added,
        Value::Object(obj),
    );
    if let (Some(defs), Some(first)) = (new_defs.clone(), new_defs.as_ref().and_then(|d| d.first()))
    {
        let storage = first.storage.clone();
        store.register(&storage, defs);
        establish_crd(shared, &mut store, t, &key, &stored.value);
    }
    Ok((201, served_json(t, &stored)))
}

/// The write of apiextensions-apiserver's controllers right after a CRD's create: its names
/// accepted and established (see [`custom_resource::crd_status`]).
pub(crate) fn establish_crd(
    shared: &Shared,
    store: &mut Store,
    t: &Target,
    key: &str,
    created: &Value,
) {
    let status = custom_resource::crd_status::established(created, &meta::now_rfc3339());
    let mut new = created.clone();
    new["status"] = status;
    managed_fields::field_manager_for(store, &t.def, Some("status")).update(
        Some(created),
        &mut new,
        custom_resource::crd_status::MANAGER,
    );
    if let Some(m) = new.as_object_mut() {
        set_rv(m, store.next_rv());
    }
    commit(shared, store, &t.def, None, key, EventType::Modified, new);
}
