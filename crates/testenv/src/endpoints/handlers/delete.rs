//! `delete` and `deletecollection` (kube-apiserver's `endpoints/handlers/delete.go`).

use bytes::Bytes;
use serde_json::{Map, Value, json};

use crate::endpoints::handlers::list::list_body;
use crate::endpoints::handlers::list::list_item_json;
use crate::endpoints::handlers::list::list_options;
use crate::endpoints::handlers::list::list_type;
use crate::endpoints::handlers::rest::body_dry_run;
use crate::endpoints::handlers::rest::served_json;
use crate::endpoints::handlers::rest::to_bytes;
use crate::endpoints::installer::Target;
use crate::meta::meta_str;
use crate::registry::generic::delete_one;
use crate::registry::generic::finalizers;
use crate::registry::rest::strategy_for;
use crate::server::{Request, Shared};
use crate::status::{ApiError, ApiResult};
use crate::validation;

/// The DeleteOptions of a delete, as kube-apiserver's delete handlers read them: the body when
/// there is one (the query is then ignored), else the query parameters (`propagationPolicy`,
/// `orphanDependents`, `gracePeriodSeconds`, `dryRun`), whose decode errors are `400`.
pub(crate) fn delete_options(req: &Request) -> ApiResult<Value> {
    if !req.body.is_empty() {
        let v: Value = serde_json::from_slice(&req.body).map_err(|e| {
            ApiError::bad_request(format!(
                "the body of the request could not be decoded as DeleteOptions: {e}"
            ))
        })?;
        if !v.is_object() {
            return Err(ApiError::bad_request("DeleteOptions must be a JSON object"));
        }
        return Ok(v);
    }
    let mut options = Map::new();
    if let Some(policy) = req.param("propagationPolicy") {
        options.insert("propagationPolicy".into(), json!(policy));
    }
    if let Some(orphan) =
        crate::endpoints::handlers::list::query_bool(req.param("orphanDependents"))
    {
        options.insert("orphanDependents".into(), json!(orphan));
    }
    if let Some(grace) = req.param("gracePeriodSeconds") {
        let seconds = crate::wire::go_strconv::parse_int(grace).map_err(ApiError::bad_request)?;
        options.insert("gracePeriodSeconds".into(), json!(seconds));
    }
    let dry_run: Vec<&str> = req
        .query
        .iter()
        .filter(|(k, _)| k == "dryRun")
        .map(|(_, v)| v.as_str())
        .collect();
    if !dry_run.is_empty() {
        options.insert("dryRun".into(), json!(dry_run));
    }
    Ok(Value::Object(options))
}

pub(crate) fn delete(shared: &Shared, req: &Request, t: &Target) -> ApiResult<(u16, Bytes)> {
    if t.sub.is_some() {
        return Err(ApiError::method_not_allowed());
    }
    let options = delete_options(req)?;
    validation::options::validate_delete(&options)?;
    let options = validation::options::with_policy(options);
    let mut store = shared.store.lock();
    let dry = body_dry_run(&options);
    let (code, stored) = delete_one(shared, &mut store, &t.def, &t.key(), &options, dry)?;
    // An object that is gone (or would be) is answered with a `Status` `Success`, except by the
    // registries that return the deleted object (Pods, Namespaces); one that finalizers keep is
    // answered with its current state.
    let kept = stored
        .value
        .pointer("/metadata/deletionTimestamp")
        .is_some()
        || (dry && !finalizers(&stored.value).is_empty());
    if kept || strategy_for(&t.def).returns_deleted_object() || t.metadata_only {
        return Ok((code, served_json(t, &stored)));
    }
    let mut details = json!({
        "name": t.name(),
        "group": t.def.group,
        "kind": t.def.plural,
        "uid": meta_str(&stored.value, "uid").unwrap_or_default(),
    });
    if t.def.group.is_empty()
        && let Some(d) = details.as_object_mut()
    {
        d.remove("group");
    }
    let status = json!({
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Success",
        "details": details,
    });
    Ok((code, to_bytes(&status)))
}

pub(crate) fn delete_collection(
    shared: &Shared,
    req: &Request,
    t: &Target,
) -> ApiResult<(u16, Bytes)> {
    let o = list_options(req, &t.def, false, shared.options.sharded_list_and_watch)?;
    let options = delete_options(req)?;
    validation::options::validate_delete(&options)?;
    let options = validation::options::with_policy(options);
    let mut store = shared.store.lock();
    let mut deleted = Vec::new();
    for key in store.keys(&t.def.storage, t.namespace.as_deref()) {
        let Some(current) = store.get(&t.def.storage, &key) else {
            continue;
        };
        if !o.matches(&current.value) {
            continue;
        }
        let dry = body_dry_run(&options);
        let (_, stored) = delete_one(shared, &mut store, &t.def, &key, &options, dry)?;
        deleted.push(list_item_json(t, &stored));
    }
    let (kind, api_version) = list_type(t);
    let mut list_meta = Map::new();
    list_meta.insert(
        "resourceVersion".into(),
        Value::String(store.rv().to_string()),
    );
    if let Some(info) = o.shard_info(&t.def) {
        list_meta.insert("shardInfo".into(), info);
    }
    let head = json!({"kind": kind, "apiVersion": api_version, "metadata": list_meta});
    Ok((200, list_body(&head, deleted.into_iter())))
}
