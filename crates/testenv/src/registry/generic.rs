//! The generic store (kube-apiserver's `registry/generic/registry/store.go`): committing a
//! change, preparing and storing an update, graceful deletion with finalizers.

use std::sync::Arc;

use bytes::Bytes;
use serde_json::{Map, Value, json};

use crate::conversion;
use crate::endpoints::handlers::rest::served_json;
use crate::endpoints::handlers::rest::str_of;
use crate::endpoints::handlers::rest::to_bytes;
use crate::endpoints::installer::Target;
use crate::meta::{self, meta_str, metadata_mut};
use crate::namespace;
use crate::registry::rest::{Generation, strategy_for};
use crate::registry::{self, ResourceDef};
use crate::server::Shared;
use crate::status::{ApiError, ApiResult};
use crate::store::{EventType, Store, Stored};
use crate::validation;

/// Commits a change and wakes the watches.
pub(crate) fn commit(
    shared: &Shared,
    store: &mut Store,
    def: &ResourceDef,
    namespace: Option<&str>,
    key: &str,
    kind: EventType,
    value: Value,
) -> Stored {
    let value = conversion::to_storage(def, value);
    let stored = store.commit(&def.storage, namespace, key, kind, value);
    shared.notify(store.rv());
    stored
}

pub(crate) fn set_rv(obj: &mut Map<String, Value>, rv: u64) {
    metadata_mut(obj).insert("resourceVersion".into(), Value::String(rv.to_string()));
}

/// Whether the parts of an object that `generation` tracks changed: everything but metadata
/// and status; `with_status`: status too (a custom resource's main resource, as
/// apiextensions-apiserver compares everything but metadata: with the status subresource the
/// main resource keeps the old status anyway).
pub(crate) fn spec_changed(old: &Value, new: &Value, with_status: bool) -> bool {
    let strip = |v: &Value| -> Map<String, Value> {
        let mut m = v.as_object().cloned().unwrap_or_default();
        for k in ["metadata", "status", "kind", "apiVersion"] {
            if k != "status" || !with_status {
                m.remove(k);
            }
        }
        m
    };
    strip(old) != strip(new)
}

pub(crate) fn finalizers(v: &Value) -> Vec<String> {
    v.pointer("/metadata/finalizers")
        .and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .filter_map(|f| f.as_str().map(str::to_owned))
                .collect()
        })
        .unwrap_or_default()
}

pub(crate) enum Part {
    Main,
    Status,
}

/// An object's annotations, `None` when it has none (Go compares a nil and an empty map equal).
fn annotations(v: &Value) -> Option<&Map<String, Value>> {
    v.pointer("/metadata/annotations")
        .and_then(Value::as_object)
        .filter(|m| !m.is_empty())
}

/// The metadata fields that a write through `/status` may change: kube-apiserver's older
/// status strategies reset only the spec (ReplicaSets) or the spec and labels (Deployments),
/// so kube-controller-manager's Deployment controller records a revision annotation through
/// `/status`; the others keep the object's metadata.
pub(crate) fn status_metadata(def: &ResourceDef) -> &'static [&'static str] {
    if def.custom || def.group != "apps" {
        return &[];
    }
    match def.kind.as_str() {
        "Deployment" => &["annotations", "finalizers", "ownerReferences"],
        "ReplicaSet" => &["labels", "annotations", "finalizers", "ownerReferences"],
        _ => &[],
    }
}

/// Builds the object an update stores: `Ok(None)` for a no-op.
/// The field manager's part of an update (`old`, the object as the request makes it): it runs
/// after the decoder's defaults and before the strategy prepares the update, as
/// kube-apiserver's handlers run the field manager before the registry, so what
/// `PrepareForUpdate` changes is owned by nobody. The handlers' closures also run the mutating
/// admission plugins that act on updates here (after the field manager, before the strategy),
/// where kube-apiserver's update handler runs them; their error ends the update.
pub(crate) type Manage<'a> = &'a dyn Fn(&Value, &mut Value) -> ApiResult<()>;

#[allow(clippy::too_many_arguments)]
pub(crate) fn prepare_update(
    def: &ResourceDef,
    old: &Value,
    new: Map<String, Value>,
    part: Part,
    rv_required: bool,
    uid_precondition: bool,
    next_rv: u64,
    manage: Manage<'_>,
) -> ApiResult<Option<Value>> {
    let name = meta_str(old, "name").unwrap_or_default();
    let old_rv = meta_str(old, "resourceVersion").unwrap_or_default();
    let new_value = Value::Object(new);
    validation::preconditions::check_update(def, old, &new_value, uid_precondition)?;
    match meta_str(&new_value, "resourceVersion").filter(|s| !s.is_empty()) {
        None if rv_required => {
            return Err(ApiError::invalid(
                &def.group,
                &def.kind,
                name,
                &[(
                    "metadata.resourceVersion",
                    "FieldValueInvalid",
                    "Invalid value: 0x0: must be specified for an update".into(),
                )],
            ));
        }
        Some(rv) if rv != old_rv => return Err(ApiError::modified(&def.group, &def.plural, name)),
        _ => {}
    }
    let Value::Object(mut result) = (match part {
        Part::Status => {
            let mut r = old.clone();
            if let Some(m) = r.as_object_mut() {
                match new_value.get("status") {
                    Some(s) => m.insert("status".into(), s.clone()),
                    None => m.remove("status"),
                };
                // What the kind's status strategy takes from the new object's metadata.
                for k in status_metadata(def) {
                    let old_meta = m.get("metadata").and_then(|v| v.get(*k)).cloned();
                    let new_meta = new_value.pointer(&format!("/metadata/{k}")).cloned();
                    if old_meta != new_meta {
                        match new_meta {
                            Some(v) => metadata_mut(m).insert((*k).into(), v),
                            None => metadata_mut(m).remove(*k),
                        };
                    }
                }
                // The field manager of the write (server-side apply) has already worked out
                // the entries.
                if let Some(f) = new_value.pointer("/metadata/managedFields") {
                    metadata_mut(m).insert("managedFields".into(), f.clone());
                }
            }
            r
        }
        Part::Main => new_value,
    }) else {
        return Err(ApiError::internal("object is not a map"));
    };
    result.insert("kind".into(), Value::String(def.kind.clone()));
    result.insert("apiVersion".into(), Value::String(def.api_version()));
    if let Part::Status = part {
        let mut managed = Value::Object(std::mem::take(&mut result));
        manage(old, &mut managed)?;
        let Value::Object(m) = managed else {
            return Err(ApiError::internal("object is not a map"));
        };
        result = m;
        let strategy = strategy_for(def);
        let mut errs = strategy.validate_status_update(old, &result);
        if def.custom {
            // apiextensions-apiserver's status strategy checks the schema and its rules too.
            errs.extend(crate::custom_resource::validate(def, &result));
            let rules = crate::custom_resource::validate_rules(def, &result, Some(old), &errs);
            errs.extend(rules);
        }
        validation::field::check(strategy.error_group(def), &def.kind, name, errs)?;
    }
    if let Part::Main = part {
        if def.status {
            match old.get("status") {
                Some(s) => result.insert("status".into(), s.clone()),
                None => result.remove("status"),
            };
        }
        let old_meta = old
            .get("metadata")
            .and_then(Value::as_object)
            .cloned()
            .unwrap_or_default();
        check_identity(&old_meta, &result)?;
        let immutable = validation::object_meta::update(&old_meta, &result);
        let meta = metadata_mut(&mut result);
        for k in [
            "uid",
            "creationTimestamp",
            "deletionTimestamp",
            "deletionGracePeriodSeconds",
            "namespace",
            "name",
            "generation",
        ] {
            match old_meta.get(k) {
                Some(v) => meta.insert(k.into(), v.clone()),
                None => meta.remove(k),
            };
        }
        meta.remove("selfLink");
        let strategy = strategy_for(def);
        strategy.defaults(&mut result);
        let mut managed = Value::Object(std::mem::take(&mut result));
        manage(old, &mut managed)?;
        let Value::Object(m) = managed else {
            return Err(ApiError::internal("object is not a map"));
        };
        result = m;
        strategy.prepare_for_update(old, &mut result);
        validation::on_update(def, old, &result, &immutable)?;
    }
    let terminating = old.pointer("/metadata/deletionTimestamp").is_some();
    if terminating {
        let before = finalizers(old);
        let added: Vec<String> = finalizers(&Value::Object(result.clone()))
            .into_iter()
            .filter(|f| !before.contains(f))
            .collect();
        if !added.is_empty() {
            return Err(ApiError::invalid(
                &def.group,
                &def.kind,
                name,
                &[(
                    "metadata.finalizers",
                    "FieldValueForbidden",
                    format!(
                        "Forbidden: no new finalizers can be added if the object is being deleted, found new finalizers {added:?}"
                    ),
                )],
            ));
        }
    }
    set_rv(&mut result, old_rv.parse().unwrap_or_default());
    let mut result = Value::Object(result);
    let main_custom = def.custom && matches!(part, Part::Main);
    let bump = match def.generation() {
        Generation::Untracked | Generation::OnCreate => false,
        Generation::OnSpecChange => spec_changed(old, &result, main_custom),
        Generation::OnSpecOrAnnotationsChange => {
            spec_changed(old, &result, main_custom)
                || (matches!(part, Part::Main) && annotations(old) != annotations(&result))
        }
        Generation::OnChangeOrLabels => {
            spec_changed(old, &result, true)
                || old.pointer("/metadata/labels") != result.pointer("/metadata/labels")
        }
    };
    if bump {
        let generation = old
            .pointer("/metadata/generation")
            .and_then(Value::as_i64)
            .unwrap_or(0)
            + 1;
        if let Some(m) = result.as_object_mut() {
            metadata_mut(m).insert("generation".into(), json!(generation));
        }
    }
    if result == *old {
        return Ok(None);
    }
    if let Some(m) = result.as_object_mut() {
        set_rv(m, next_rv);
    }
    Ok(Some(result))
}

/// `400` when an update's body (after a patch, too) names another object than its URL.
fn check_identity(old_meta: &Map<String, Value>, new: &Map<String, Value>) -> ApiResult<()> {
    let field = |m: Option<&Value>, k: &str| {
        m.and_then(|m| m.get(k))
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_owned()
    };
    let new_meta = new.get("metadata");
    let old_meta = Some(old_meta).map(|m| m as &Map<String, Value>);
    let (old_ns, new_ns) = (
        old_meta
            .and_then(|m| m.get("namespace"))
            .and_then(Value::as_str)
            .unwrap_or_default(),
        field(new_meta, "namespace"),
    );
    if !new_ns.is_empty() && new_ns != old_ns {
        return Err(ApiError::bad_request(
            "the namespace of the provided object does not match the namespace sent on the request",
        ));
    }
    let old_name = old_meta
        .and_then(|m| m.get("name"))
        .and_then(Value::as_str)
        .unwrap_or_default();
    let new_name = field(new_meta, "name");
    if !new_name.is_empty() && new_name != old_name {
        return Err(ApiError::bad_request(format!(
            "the name of the object ({new_name}) does not match the name on the URL ({old_name})"
        )));
    }
    Ok(())
}

/// Stores an updated object; removes it when it is terminating and has no finalizers left.
pub(crate) fn store_update(
    shared: &Shared,
    store: &mut Store,
    t: &Target,
    old: &Stored,
    new: Option<Value>,
    dry: bool,
) -> ApiResult<(u16, Bytes)> {
    let Some(new) = new else {
        return Ok((200, served_json(t, old)));
    };
    if dry {
        // Nothing is stored: the answer keeps the stored object's resourceVersion.
        let mut new = conversion::to_storage(&t.def, new);
        if let (Some(m), Some(rv)) = (new.as_object_mut(), meta_str(&old.value, "resourceVersion"))
        {
            metadata_mut(m).insert("resourceVersion".into(), Value::String(rv.to_owned()));
        }
        return Ok((200, to_bytes(&new)));
    }
    let is_crd = strategy_for(&t.def).declares_resources();
    let ns = t.namespace.as_deref().filter(|_| t.def.namespaced);
    let key = t.key();
    if new.pointer("/metadata/deletionTimestamp").is_some() && finalizers(&new).is_empty() {
        let stored = commit(shared, store, &t.def, ns, &key, EventType::Deleted, new);
        if is_crd {
            remove_crd(shared, store, &stored.value);
        }
        return Ok((200, stored.json));
    }
    let defs = if is_crd {
        Some(registry::from_crd(&new)?)
    } else {
        None
    };
    let stored = commit(shared, store, &t.def, ns, &key, EventType::Modified, new);
    if let Some(defs) = defs {
        store.register(
            &format!(
                "{}/{}",
                str_of(&stored.value, "/spec/group"),
                str_of(&stored.value, "/spec/names/plural")
            ),
            defs,
        );
    }
    Ok((200, served_json(t, &stored)))
}

/// Stops serving a deleted CRD and deletes its objects.
pub(crate) fn remove_crd(shared: &Shared, store: &mut Store, crd: &Value) {
    let storage: Arc<str> = format!(
        "{}/{}",
        str_of(crd, "/spec/group"),
        str_of(crd, "/spec/names/plural")
    )
    .into();
    let defs: Vec<Arc<ResourceDef>> = store
        .defs()
        .iter()
        .filter(|d| d.custom && d.storage == storage)
        .cloned()
        .collect();
    if let Some(def) = defs.first() {
        for key in store.keys(&storage, None) {
            delete_now(shared, store, def, &key);
        }
    }
    store.unregister(&storage);
}

/// Removes an object now (no finalizer check); returns its last state.
pub(crate) fn delete_now(
    shared: &Shared,
    store: &mut Store,
    def: &ResourceDef,
    key: &str,
) -> Option<Stored> {
    let old = store.get(&def.storage, key)?.clone();
    let mut last = (*old.value).clone();
    if let Some(m) = last.as_object_mut() {
        set_rv(m, store.next_rv());
    }
    if let Some(l) = strategy_for(def).deleted_state(&last) {
        last = l;
    }
    let ns = meta_str(&old.value, "namespace").map(str::to_owned);
    commit(
        shared,
        store,
        def,
        ns.as_deref(),
        key,
        EventType::Deleted,
        last,
    );
    Some(old)
}

/// Deletes one object (honouring finalizers); returns the status code and body.
pub(crate) fn delete_one(
    shared: &Shared,
    store: &mut Store,
    def: &ResourceDef,
    key: &str,
    options: &Value,
    dry: bool,
) -> ApiResult<(u16, Stored)> {
    let name = key.rsplit('/').next().unwrap_or(key);
    let old = store
        .get(&def.storage, key)
        .cloned()
        .ok_or_else(|| ApiError::not_found(&def.group, &def.plural, name))?;
    if let Some(uid) = options
        .pointer("/preconditions/uid")
        .and_then(Value::as_str)
    {
        let actual = meta_str(&old.value, "uid").unwrap_or_default();
        if uid != actual {
            return Err(ApiError::conflict(
                &def.group,
                &def.plural,
                name,
                &format!(
                    "Precondition failed: UID in precondition: {uid}, UID in object meta: {actual}"
                ),
            ));
        }
    }
    if let Some(rv) = options
        .pointer("/preconditions/resourceVersion")
        .and_then(Value::as_str)
    {
        let actual = meta_str(&old.value, "resourceVersion").unwrap_or_default();
        if rv != actual {
            return Err(ApiError::conflict(
                &def.group,
                &def.kind,
                name,
                &format!(
                    "the ResourceVersion in the precondition ({rv}) does not match the ResourceVersion in record ({actual}). The object might have been modified"
                ),
            ));
        }
    }
    if strategy_for(def).terminates_on_delete() {
        return namespace::delete(shared, store, def, key, &old, dry);
    }
    if dry {
        return Ok((200, old));
    }
    // Foreground and Orphan deletion hand the object to the garbage collector through a
    // finalizer; kcr-testenv runs no garbage collector (as envtest), so the object stays.
    let gc_finalizer = match validation::options::propagation_policy_of(options) {
        Some("Foreground") => Some("foregroundDeletion"),
        Some("Orphan") => Some("orphan"),
        _ => None,
    };
    if let Some(gc) = gc_finalizer
        && old.value.pointer("/metadata/deletionTimestamp").is_none()
        && !(def.group.is_empty() && def.plural == "namespaces")
    {
        let mut new = (*old.value).clone();
        if let Some(m) = new.as_object_mut() {
            let meta = metadata_mut(m);
            let list = meta
                .entry("finalizers")
                .or_insert_with(|| Value::Array(Vec::new()));
            if let Value::Array(items) = list
                && !items.iter().any(|f| f.as_str() == Some(gc))
            {
                items.push(Value::String(gc.to_owned()));
            }
        }
        let old = Stored::new(new);
        return mark_deleting(shared, store, def, key, &old);
    }
    if !finalizers(&old.value).is_empty() {
        if old.value.pointer("/metadata/deletionTimestamp").is_some() {
            return Ok((200, old));
        }
        return mark_deleting(shared, store, def, key, &old);
    }
    let mut removed = delete_now(shared, store, def, key).unwrap_or(old);
    if let Some(last) = strategy_for(def).deleted_state(&removed.value) {
        removed = Stored::new(last);
    }
    if strategy_for(def).declares_resources() {
        remove_crd(shared, store, &removed.value);
    }
    Ok((200, removed))
}

/// Sets `deletionTimestamp` on an object that finalizers keep.
pub(crate) fn mark_deleting(
    shared: &Shared,
    store: &mut Store,
    def: &ResourceDef,
    key: &str,
    old: &Stored,
) -> ApiResult<(u16, Stored)> {
    let mut new = (*old.value).clone();
    if let Some(m) = new.as_object_mut() {
        let next = store.next_rv();
        let meta = metadata_mut(m);
        meta.insert(
            "deletionTimestamp".into(),
            Value::String(meta::now_rfc3339()),
        );
        meta.insert("deletionGracePeriodSeconds".into(), json!(0));
        meta.insert("resourceVersion".into(), Value::String(next.to_string()));
        // The first deletion changes what the object's controllers do: kube-apiserver bumps
        // a generation it keeps (`updateForGracefulDeletionAndFinalizers`).
        if let Some(g) = meta
            .get("generation")
            .and_then(Value::as_i64)
            .filter(|g| *g > 0)
        {
            meta.insert("generation".into(), json!(g + 1));
        }
    }
    let ns = meta_str(&old.value, "namespace").map(str::to_owned);
    let stored = commit(
        shared,
        store,
        def,
        ns.as_deref(),
        key,
        EventType::Modified,
        new,
    );
    Ok((200, stored))
}
