//! `get` (kube-apiserver's `endpoints/handlers/get.go`, single objects).

use bytes::Bytes;

use crate::endpoints::handlers::rest::served_json;
use crate::endpoints::handlers::rest::to_bytes;
use crate::endpoints::handlers::scale::scale_for;
use crate::endpoints::installer::Target;
use crate::server::{Request, Shared};
use crate::status::{ApiError, ApiResult};

pub(crate) fn get(shared: &Shared, req: &Request, t: &Target) -> ApiResult<(u16, Bytes)> {
    // Only `resourceVersion` of the list options applies to a get; a version that is not a
    // number is an internal error, as kube-apiserver's cacher reports it.
    if let Some(rv) = req.param("resourceVersion").filter(|s| !s.is_empty())
        && let Err(e) = crate::wire::go_strconv::parse_uint(rv)
    {
        return Err(ApiError::new(
            500,
            "",
            format!("resourceVersion: Invalid value: {rv:?}: {e}"),
        ));
    }
    let store = shared.store.lock();
    let stored = store
        .get(&t.def.storage, &t.key())
        .ok_or_else(|| ApiError::not_found(&t.def.group, &t.def.plural, t.name()))?;
    if t.sub.as_deref() == Some("scale") {
        let scale = scale_for(&t.def, &stored.value);
        if t.metadata_only {
            // The Scale's metadata, as for any object asked for as PartialObjectMetadata.
            return Ok((
                200,
                to_bytes(&serde_json::json!({
                    "kind": "PartialObjectMetadata",
                    "apiVersion": "meta.k8s.io/v1",
                    "metadata": scale.get("metadata").cloned().unwrap_or_default(),
                })),
            ));
        }
        return Ok((200, to_bytes(&scale)));
    }
    if let Some(schema) = t.protobuf
        && let Some(body) = crate::protobuf::encode_object(schema, stored)
    {
        return Ok((200, Bytes::from(body)));
    }
    Ok((200, served_json(t, stored)))
}
