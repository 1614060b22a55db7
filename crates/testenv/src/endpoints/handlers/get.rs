//! `get` (kube-apiserver's `endpoints/handlers/get.go`, single objects).

use bytes::Bytes;

use crate::endpoints::handlers::rest::served_json;
use crate::endpoints::handlers::rest::to_bytes;
use crate::endpoints::handlers::scale::scale_for;
use crate::endpoints::installer::Target;
use crate::server::Shared;
use crate::status::{ApiError, ApiResult};

pub(crate) fn get(shared: &Shared, t: &Target) -> ApiResult<(u16, Bytes)> {
    let store = shared.store.lock();
    let stored = store
        .get(&t.def.storage, &t.key())
        .ok_or_else(|| ApiError::not_found(&t.def.group, &t.def.plural, t.name()))?;
    if t.sub.as_deref() == Some("scale") {
        return Ok((200, to_bytes(&scale_for(&t.def, &stored.value))));
    }
    if let Some(schema) = t.protobuf
        && let Some(body) = crate::protobuf::encode_object(schema, stored)
    {
        return Ok((200, Bytes::from(body)));
    }
    Ok((200, served_json(t, stored)))
}
