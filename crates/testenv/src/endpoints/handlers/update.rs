//! `update` (kube-apiserver's `endpoints/handlers/update.go`), `status` and `finalize` included.

use bytes::Bytes;
use serde_json::Value;

use crate::conversion;
use crate::endpoints::handlers::rest::decode_fields;
use crate::endpoints::handlers::rest::dry_run;
use crate::endpoints::handlers::rest::manage_write;
use crate::endpoints::handlers::rest::manager_of;
use crate::endpoints::handlers::rest::parse_object;
use crate::endpoints::handlers::rest::served_json;
use crate::endpoints::handlers::scale::write_scale;
use crate::endpoints::installer::Target;
use crate::namespace;
use crate::registry::generic::Part;
use crate::registry::generic::prepare_update;
use crate::registry::generic::store_update;
use crate::registry::rest::strategy_for;
use crate::server::{Request, Shared};
use crate::status::{ApiError, ApiResult};

pub(crate) fn update(shared: &Shared, req: &Request, t: &Target) -> ApiResult<(u16, Bytes)> {
    let def = &t.def;
    if t.sub.as_deref() == Some("scale") {
        let body: Value = serde_json::from_slice(&req.body).map_err(|e| {
            ApiError::bad_request(format!(
                "the body of the request could not be decoded as JSON: {e}"
            ))
        })?;
        return write_scale(shared, req, t, |_| Ok(body.clone()));
    }
    let mut obj = parse_object(shared, req, def)?;
    decode_fields(req, def, &mut obj)?;
    // `checkName`: the body must name the object of the URL.
    let n = obj
        .get("metadata")
        .and_then(|m| m.get("name"))
        .and_then(Value::as_str)
        .unwrap_or_default();
    if n.is_empty() {
        return Err(ApiError::bad_request(format!(
            "the name of the object ({} based on URL) was undeterminable: name must be provided",
            t.name()
        )));
    }
    if n != t.name() {
        return Err(ApiError::bad_request(format!(
            "the name of the object ({n}) does not match the name on the URL ({})",
            t.name()
        )));
    }
    if t.sub.as_deref() == Some("finalize") {
        let mut store = shared.store.lock();
        let (code, stored) = namespace::finalize(
            shared,
            &mut store,
            def,
            t.name(),
            &Value::Object(obj),
            &manager_of(req),
            dry_run(req),
        )?;
        return Ok((code, served_json(t, &stored)));
    }
    if let Some(ns) = obj
        .get("metadata")
        .and_then(|m| m.get("namespace"))
        .and_then(Value::as_str)
        && def.namespaced
        && !ns.is_empty()
        && Some(ns) != t.namespace.as_deref()
    {
        return Err(ApiError::bad_request(
            "the namespace of the provided object does not match the namespace sent on the request",
        ));
    }
    let mut store = shared.store.lock();
    let old = store
        .get(&def.storage, &t.key())
        .map(|s| conversion::stored_as(def, s))
        .ok_or_else(|| ApiError::not_found(&def.group, &def.plural, t.name()))?;
    let part = if t.sub.as_deref() == Some("status") {
        Part::Status
    } else {
        Part::Main
    };
    let rv_required = !strategy_for(def).allow_unconditional_update();
    let new = prepare_update(
        def,
        &old.value,
        obj,
        part,
        rv_required,
        true,
        store.next_rv(),
        &|old, new| {
            manage_write(&store, t, req, old, new);
            crate::admission::admit_update(shared, &store, req, t, old, new)
        },
    )?;
    crate::admission::validate_update(shared, &store, req, t, &old.value, new.as_ref())?;
    store_update(shared, &mut store, t, &old, new, dry_run(req))
}
