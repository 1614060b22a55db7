//! The storage preconditions of an update, as kube-apiserver's registry checks them: a
//! `metadata.uid` in the body must be the stored object's (else `409`), and a
//! `metadata.resourceVersion` must be a number (else `500`, as the real server answers).

use serde_json::Value;

use crate::meta::meta_str;
use crate::registry::ResourceDef;
use crate::status::{ApiError, ApiResult};

/// The etcd key kube-apiserver names in storage errors.
fn storage_key(def: &ResourceDef, old: &Value) -> String {
    let name = meta_str(old, "name").unwrap_or_default();
    let resource = if def.custom {
        format!("{}/{}", def.group, def.plural)
    } else {
        def.plural.clone()
    };
    match meta_str(old, "namespace") {
        Some(ns) if def.namespaced => format!("/registry/{resource}/{ns}/{name}"),
        _ => format!("/registry/{resource}/{name}"),
    }
}

/// Checks the preconditions an update's body carries against the stored object: its
/// `resourceVersion` and, for a `PUT` (`uid_precondition`; a patch sets no precondition, its
/// changed uid is refused by the metadata validation instead), its `uid`.
pub(crate) fn check_update(
    def: &ResourceDef,
    old: &Value,
    new: &Value,
    uid_precondition: bool,
) -> ApiResult<()> {
    if let Some(rv) = meta_str(new, "resourceVersion").filter(|s| !s.is_empty())
        && rv.parse::<u64>().is_err()
    {
        return Err(ApiError::new(
            500,
            "",
            format!("strconv.ParseUint: parsing {rv:?}: invalid syntax"),
        ));
    }
    if !uid_precondition {
        return Ok(());
    }
    let old_uid = meta_str(old, "uid").unwrap_or_default();
    if let Some(uid) = meta_str(new, "uid").filter(|s| !s.is_empty())
        && uid != old_uid
    {
        let name = meta_str(old, "name").unwrap_or_default();
        return Err(ApiError::conflict(
            &def.group,
            &def.plural,
            name,
            &format!(
                "StorageError: invalid object, Code: 4, Key: {}, ResourceVersion: 0, AdditionalErrorMsg: Precondition failed: UID in precondition: {uid}, UID in object meta: {old_uid}",
                storage_key(def, old)
            ),
        ));
    }
    Ok(())
}
