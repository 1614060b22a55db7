//! `list` and the list options shared with `watch` and `deletecollection` (kube-apiserver's
//! `endpoints/handlers/get.go` `ListResource`).

use bytes::{BufMut, Bytes, BytesMut};
use serde_json::{Map, Value, json};

use crate::conversion;
use crate::endpoints::handlers::rest::served_json;
use crate::endpoints::installer::Target;
use crate::registry::ResourceDef;
use crate::registry::field_labels::FieldLabels;
use crate::selector::{FieldSelector, LabelSelector};
use crate::server::{Request, Shared};
use crate::sharding::ShardSelector;
use crate::status::{ApiError, ApiResult};
use crate::store::{ListQuery, Stored, VersionError};

/// A list from a future version waits for the store to reach it (see [`crate::watch_cache`]).
pub(crate) async fn watch_cache_wait(shared: &Shared, req: &Request) -> ApiResult<()> {
    let continues = req.param("continue").is_some_and(|c| !c.is_empty());
    let waits = crate::watch_cache::list_waits_for(
        &shared.store.lock(),
        req.param("resourceVersion"),
        continues,
    );
    match waits {
        Some(rv) => crate::watch_cache::wait_until_fresh(shared, rv).await,
        None => Ok(()),
    }
}

/// Parsed list / watch options.
#[derive(Debug, Default)]
pub(crate) struct ListOptions {
    pub(crate) labels: LabelSelector,
    pub(crate) fields: FieldSelector,
    pub(crate) limit: usize,
    pub(crate) continue_token: Option<(u64, String)>,
    pub(crate) resource_version: Option<String>,
    pub(crate) rv_match: Option<String>,
    pub(crate) allow_bookmarks: bool,
    pub(crate) send_initial_events: Option<bool>,
    pub(crate) timeout_seconds: Option<u64>,
    /// `shardSelector` (only with the `ShardedListAndWatch` gate; see [`crate::sharding`]).
    pub(crate) shard: Option<ShardSelector>,
}

impl ListOptions {
    pub(crate) fn matches(&self, v: &Value) -> bool {
        self.labels.matches(v)
            && self.fields.matches(v)
            && self.shard.as_ref().is_none_or(|s| s.matches(v))
    }

    /// Whether every object matches (no label, field or shard selector).
    pub(crate) fn selects_everything(&self) -> bool {
        self.labels.is_empty() && self.fields.is_empty() && self.shard.is_none()
    }

    /// `metadata.shardInfo` of a sharded list of a built-in kind (custom resource lists, which
    /// kube-apiserver serves unstructured, carry none).
    pub(crate) fn shard_info(&self, def: &ResourceDef) -> Option<Value> {
        let shard = self.shard.as_ref().filter(|_| !def.custom)?;
        Some(json!({"selector": shard.canonical()}))
    }

    /// The requested version as a number (`None` for `""`).
    pub(crate) fn rv_number(&self) -> ApiResult<Option<u64>> {
        match self.resource_version.as_deref() {
            None | Some("") => Ok(None),
            Some(s) => s
                .parse::<u64>()
                .map(Some)
                .map_err(|_| ApiError::bad_request(format!("invalid resource version: {s:?}"))),
        }
    }
}

pub(crate) fn invalid_list_options(causes: &[(&str, &str, String)]) -> ApiError {
    ApiError::invalid("meta.k8s.io", "ListOptions", "", causes)
}

/// A boolean query parameter as kube-apiserver converts it (`Convert_Slice_string_To_bool`):
/// `0` and `false` (any case) are false, anything else true.
pub(crate) fn query_bool(value: Option<&str>) -> Option<bool> {
    value.map(|v| !(v == "0" || v.eq_ignore_ascii_case("false")))
}

pub(crate) fn bool_param(req: &Request, name: &str) -> ApiResult<Option<bool>> {
    Ok(query_bool(req.param(name)))
}

/// Encodes a continue token (see [`crate::wire::continue_token`]).
pub(crate) fn encode_continue(rv: u64, key: &str) -> String {
    crate::wire::continue_token::encode(rv, key)
}

/// Parses and validates the list options of a list (`watch == false`) or watch request.
/// `shardSelector` is read only when the `ShardedListAndWatch` gate is on (`sharding`), as on
/// kube-apiserver, which ignores it otherwise.
pub(crate) fn list_options(
    req: &Request,
    def: &ResourceDef,
    watch: bool,
    sharding: bool,
) -> ApiResult<ListOptions> {
    let mut o = ListOptions {
        labels: LabelSelector::parse(req.param("labelSelector").unwrap_or_default())?,
        fields: FieldSelector::parse(
            req.param("fieldSelector").unwrap_or_default(),
            FieldLabels::of(def),
        )?
        .renamed(|f| conversion::field_label(def, f)),
        resource_version: req.param("resourceVersion").map(str::to_owned),
        rv_match: req
            .param("resourceVersionMatch")
            .filter(|s| !s.is_empty())
            .map(str::to_owned),
        allow_bookmarks: bool_param(req, "allowWatchBookmarks")?.unwrap_or(false),
        send_initial_events: bool_param(req, "sendInitialEvents")?,
        ..ListOptions::default()
    };
    if let Some(l) = req.param("limit").filter(|s| !s.is_empty()) {
        let n = crate::wire::go_strconv::parse_int(l).map_err(ApiError::bad_request)?;
        o.limit = usize::try_from(n.max(0)).unwrap_or(0);
    }
    if let Some(t) = req.param("timeoutSeconds").filter(|s| !s.is_empty()) {
        let seconds = crate::wire::go_strconv::parse_int(t).map_err(ApiError::bad_request)?;
        o.timeout_seconds = Some(u64::try_from(seconds).unwrap_or(0));
    }
    let cont = req.param("continue").filter(|s| !s.is_empty());
    let rv = o.resource_version.as_deref().unwrap_or_default();
    let mut causes: Vec<(&str, &str, String)> = Vec::new();
    let forbidden = "FieldValueForbidden";
    if watch {
        if o.send_initial_events.is_some() && o.rv_match.as_deref() != Some("NotOlderThan") {
            causes.push(("resourceVersionMatch", forbidden, "Forbidden: sendInitialEvents requires setting resourceVersionMatch to NotOlderThan".into()));
        }
        if let Some(m) = o.rv_match.as_deref() {
            if o.send_initial_events.is_none() {
                causes.push(("resourceVersionMatch", forbidden, "Forbidden: resourceVersionMatch is forbidden for watch unless sendInitialEvents is provided".into()));
            }
            if m != "NotOlderThan" {
                causes.push((
                    "resourceVersionMatch",
                    "FieldValueNotSupported",
                    format!("Unsupported value: {m:?}: supported values: \"NotOlderThan\""),
                ));
            }
        }
    } else {
        if let Some(m) = o.rv_match.as_deref() {
            if rv.is_empty() {
                causes.push(("resourceVersionMatch", forbidden, "Forbidden: resourceVersionMatch is forbidden unless resourceVersion is provided".into()));
            }
            if cont.is_some() {
                causes.push((
                    "resourceVersionMatch",
                    forbidden,
                    "Forbidden: resourceVersionMatch is forbidden when continue is provided".into(),
                ));
            }
            if m != "Exact" && m != "NotOlderThan" {
                causes.push(("resourceVersionMatch", "FieldValueNotSupported", format!("Unsupported value: {m:?}: supported values: \"Exact\", \"NotOlderThan\", \"\"")));
            }
            if m == "Exact" && rv == "0" {
                causes.push(("resourceVersionMatch", forbidden, "Forbidden: resourceVersionMatch \"exact\" is forbidden for resourceVersion \"0\"".into()));
            }
        }
        if o.send_initial_events.is_some() {
            causes.push((
                "sendInitialEvents",
                forbidden,
                "Forbidden: sendInitialEvents is forbidden for list".into(),
            ));
        }
    }
    if !causes.is_empty() {
        return Err(invalid_list_options(&causes));
    }
    if sharding && let Some(text) = req.param("shardSelector") {
        // The registry refuses it with a plain error, which kube-apiserver answers as `500`.
        o.shard = ShardSelector::parse(text).map_err(|e| ApiError::new(500, "", e.to_string()))?;
    }
    if let Some(rv) = o.resource_version.as_deref().filter(|s| !s.is_empty())
        && let Err(e) = crate::wire::go_strconv::parse_uint(rv)
    {
        let why = format!("resourceVersion: Invalid value: {rv:?}: {e}");
        // The watch handler reports it as an internal error, the list handler as a bad request.
        return Err(if watch {
            ApiError::new(500, "", why)
        } else {
            ApiError::bad_request(format!("invalid resource version: {why}"))
        });
    }
    if let Some(c) = cont {
        if !rv.is_empty() && rv != "0" {
            return Err(ApiError::bad_request(
                "specifying resource version is not allowed when using continue",
            ));
        }
        let decoded = crate::wire::continue_token::decode(c)
            .map_err(|e| ApiError::bad_request(format!("invalid continue token: {e}")))?;
        o.continue_token = Some(decoded);
    }
    Ok(o)
}

pub(crate) fn version_error(e: VersionError, requested: u64) -> ApiError {
    match e {
        VersionError::TooOld { compacted } => ApiError::gone(format!(
            "too old resource version: {requested} ({compacted})"
        )),
        VersionError::TooNew { current } => {
            ApiError::too_large_resource_version(requested, current)
        }
    }
}

pub(crate) fn list(shared: &Shared, req: &Request, t: &Target) -> ApiResult<(u16, Bytes)> {
    let o = list_options(req, &t.def, false, shared.options.sharded_list_and_watch)?;
    let keep = |v: &Value| o.matches(v);
    // As etcd3's store: only a list without a label or field selector counts what remains (a
    // shard selector does not stop it; the count is of every object after the page).
    let count_remaining = o.labels.is_empty() && o.fields.is_empty();
    let (at, after) = match &o.continue_token {
        Some((rv, key)) => (Some(*rv), Some(key.as_str())),
        None => match (o.rv_number()?, o.rv_match.as_deref()) {
            (Some(rv), Some("Exact")) => (Some(rv), None),
            _ => (None, None),
        },
    };
    let page = {
        let store = shared.store.lock();
        if let (Some(rv), None | Some("NotOlderThan"), None) =
            (o.rv_number()?, o.rv_match.as_deref(), &o.continue_token)
            && rv > store.rv()
        {
            return Err(ApiError::too_large_resource_version(rv, store.rv()));
        }
        let q = ListQuery {
            namespace: t.namespace.as_deref(),
            at,
            after,
            limit: crate::watch_cache::list_limit(o.resource_version.as_deref(), o.limit),
            keep: &keep,
            count_remaining,
        };
        store.list(&t.def.storage, &q).map_err(|e| match e {
            VersionError::TooOld { .. } if o.continue_token.is_none() => {
                crate::watch_cache::expired_list(&store, at.unwrap_or_default())
            }
            e => version_error(e, at.unwrap_or_default()),
        })
    };
    let page = match page {
        Ok(p) => p,
        Err(e) if e.code == 410 && o.continue_token.is_some() => {
            return Err(ApiError::gone(
                "The provided continue parameter is too old to display a consistent list result. You can start a new list without the continue parameter, or use the continue token in this response to retrieve the remainder of the results. Continuing with the provided token results in an inconsistent list - objects that were created, modified, or deleted between the time the first chunk was returned and now may show up in the list.",
            ));
        }
        Err(e) => return Err(e),
    };
    let mut list_meta = Map::new();
    list_meta.insert("resourceVersion".into(), Value::String(page.rv.to_string()));
    if let Some(key) = &page.last_key {
        list_meta.insert(
            "continue".into(),
            Value::String(encode_continue(page.rv, key)),
        );
        if let Some(n) = page.remaining {
            list_meta.insert("remainingItemCount".into(), json!(n));
        }
    }
    if let Some(info) = o.shard_info(&t.def) {
        list_meta.insert("shardInfo".into(), info);
    }
    if t.def.custom && !t.metadata_only && !list_meta.contains_key("continue") {
        // Custom resource lists (unstructured on kube-apiserver) always carry `continue`; their
        // metadata-only form is a typed `PartialObjectMetadataList`, which does not.
        list_meta.insert("continue".into(), Value::String(String::new()));
    }
    if let Some(schema) = t.protobuf
        && let Some(body) = crate::protobuf::encode_list(schema, &list_meta, &page.items)
    {
        return Ok((200, Bytes::from(body)));
    }
    let (kind, api_version) = list_type(t);
    let head = json!({"kind": kind, "apiVersion": api_version, "metadata": list_meta});
    Ok((
        200,
        list_body(&head, page.items.iter().map(|s| list_item_json(t, s))),
    ))
}

/// An item of a list: built-in lists carry no `kind`/`apiVersion` on their items (the list's
/// type names them), custom resource and metadata-only lists do.
pub(crate) fn list_item_json(t: &Target, stored: &Stored) -> Bytes {
    let json = served_json(t, stored);
    if t.def.custom || t.metadata_only {
        return json;
    }
    crate::type_meta::strip(&json)
}

/// The kind and apiVersion of a list served to this target.
pub(crate) fn list_type(t: &Target) -> (String, String) {
    if t.metadata_only {
        ("PartialObjectMetadataList".into(), "meta.k8s.io/v1".into())
    } else {
        (t.def.list_kind.clone(), t.def.api_version())
    }
}

/// `{"kind":..,"apiVersion":..,"metadata":..,"items":[...]}` from pre-serialized items.
pub(crate) fn list_body(head: &Value, items: impl Iterator<Item = Bytes>) -> Bytes {
    let head = crate::serializer::to_vec(head);
    let mut out = BytesMut::with_capacity(head.len() + 64);
    // `head` is a JSON object: drop its closing brace and append the items.
    out.put_slice(&head[..head.len().saturating_sub(1)]);
    out.put_slice(b",\"items\":[");
    for (i, item) in items.enumerate() {
        if i > 0 {
            out.put_u8(b',');
        }
        out.put_slice(&item);
    }
    out.put_slice(b"]}");
    out.freeze()
}
