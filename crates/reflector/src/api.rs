//! [`ListerWatcher`] for [`kube::Api`]: raw list and watch requests through
//! the `kube::Client`, decoded here so that a bad object or event becomes a
//! typed error naming the object, never a panic.

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::fmt::Debug;
use std::time::Duration;

use async_trait::async_trait;
use bytes::{Buf, Bytes, BytesMut};
use futures::{Stream, StreamExt};
use http_body_util::BodyExt;
use kube::client::Body;
use kube::core::Status;
use kube::{Api, Resource};
use serde::de::DeserializeOwned;
use serde::{Deserialize, Deserializer};
use serde_json::value::RawValue;

use crate::error::{Error, Result};
use crate::listwatch::{
    Bookmark, ListOptions, ListerWatcher, ObjectList, WatchEvent, WatchOptions, WatchStream,
};
use crate::shard_selector::ShardSelector;
use crate::without_managed_fields::{WithoutManagedFields, items_without_managed_fields};

/// The default limit on one watch event (one line of a watch response):
/// 8 MiB. The API server refuses requests over 3 MiB and etcd stores objects
/// up to 1.5 MiB; the JSON it sends back adds `managedFields`, escaping and
/// the event's envelope, so the largest real object stays well below this.
pub const DEFAULT_MAX_EVENT_BYTES: usize = 8 << 20;

/// The [`ListerWatcher`] of a [`kube::Api`], with a limit on the size of one
/// watch event (`Api<K>` itself is a lister-watcher with the default limit,
/// [`DEFAULT_MAX_EVENT_BYTES`]).
///
/// A watch line that grows past the limit without ending is refused with
/// [`Error::EventTooLarge`] as soon as it does, so a server that never ends
/// a line cannot make the reflector's memory grow without bound.
#[derive(Clone, Debug)]
pub struct ApiListerWatcher<K> {
    api: Api<K>,
    decoding: Decoding,
    shard: Option<ShardSelector>,
    /// Set once a sharded watch has probed whether the server applies the selector.
    probed: std::sync::Arc<std::sync::atomic::AtomicBool>,
}

/// The wire format an [`ApiListerWatcher`] asks for.
///
/// The default is [`WireFormat::Protobuf`], as client-go's: a built-in kind whose decoding
/// kcr-protobuf proves against a real kube-apiserver's bytes ([`kcr_protobuf::proven::is_proven`]:
/// every listable built-in resource of Kubernetes v1.36) is listed and watched in protobuf;
/// custom resources, dynamic objects and any kind without a proven table are read as JSON.
/// Metadata-only objects ([`PartialObjectMeta<K>`](kube::core::PartialObjectMeta)) follow `K`:
/// a proven `K`'s metadata is asked for as a protobuf `PartialObjectMetadataList` (JSON as the
/// fallback, as client-go's metadata client asks), any other `K`'s in JSON.
/// [`WireFormat::Json`] switches back to JSON for every kind.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub enum WireFormat {
    /// JSON for every kind.
    Json,
    /// Kubernetes' protobuf (`application/vnd.kubernetes.protobuf`, client-go's default) for
    /// the proven built-in kinds, JSON for every other kind (the default). List pages and
    /// watch frames are decoded straight into the object type; a server that answers JSON
    /// anyway is read as JSON.
    #[default]
    Protobuf,
}

/// How list and watch bodies are decoded.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Decoding {
    pub(crate) max_event_bytes: usize,
    pub(crate) drop_managed_fields: bool,
    /// The table of `K` when protobuf is asked for and `K` has one.
    pub(crate) protobuf: Option<&'static kcr_protobuf::Schema>,
    /// Lists and streaming lists take gzip-compressed answers (`Accept-Encoding: gzip`).
    pub(crate) gzip: bool,
    /// `K` is a metadata-only type (`PartialObjectMeta`): lists and watches ask for
    /// `PartialObjectMetadata`, and an answer of another kind is refused.
    pub(crate) metadata: bool,
}

impl Default for Decoding {
    fn default() -> Self {
        Self {
            max_event_bytes: DEFAULT_MAX_EVENT_BYTES,
            drop_managed_fields: false,
            protobuf: None,
            gzip: true,
            metadata: false,
        }
    }
}

impl<K: Resource> ApiListerWatcher<K>
where
    K::DynamicType: 'static,
{
    /// Lists and watches through `api`, with the default event limit, in the default
    /// [`WireFormat`] (protobuf for a proven built-in kind, JSON for any other).
    pub fn new(api: Api<K>) -> Self {
        Self {
            api,
            decoding: default_decoding::<K>(),
            shard: None,
            probed: std::sync::Arc::default(),
        }
    }

    /// Asks for `format` (default [`WireFormat::Protobuf`]). With [`WireFormat::Protobuf`], a
    /// kind whose protobuf decoding is not proven (custom resources, dynamic objects, built-in
    /// kinds outside kcr-protobuf's proven kinds) is still asked for in JSON; so is the
    /// metadata of such a kind.
    #[must_use]
    pub fn wire_format(mut self, format: WireFormat) -> Self {
        self.decoding.protobuf = match format {
            WireFormat::Protobuf => proven_schema::<K>(),
            WireFormat::Json => None,
        };
        self
    }
}

impl<K> ApiListerWatcher<K> {
    /// Sends `selector`'s current value as the `shardSelector` parameter of every list and
    /// watch (KEP-5866 sharded list and watch), and ends an open watch when it changes so the
    /// reflector lists again with the new value (see [`ShardSelector`]).
    #[must_use]
    pub fn shard_selector(mut self, selector: ShardSelector) -> Self {
        self.shard = Some(selector);
        self
    }

    /// The largest watch event accepted, in bytes (default
    /// [`DEFAULT_MAX_EVENT_BYTES`]).
    #[must_use]
    pub fn max_event_bytes(mut self, max_event_bytes: usize) -> Self {
        self.decoding.max_event_bytes = max_event_bytes;
        self
    }

    /// Sends `Accept-Encoding: gzip` on lists and streaming lists (default `true`, as client-go,
    /// whose transport asks for gzip on every request): kube-apiserver then compresses a list
    /// larger than 128 KiB and, from v1.37, the stream of a streaming list, about five to ten
    /// times smaller on the wire for typical objects. A compressed body is decompressed as it
    /// streams in, never held whole. Plain watches are always asked for uncompressed (a watch's
    /// events are small and come one at a time). `false` asks for `identity` everywhere.
    #[must_use]
    pub fn gzip(mut self, gzip: bool) -> Self {
        self.decoding.gzip = gzip;
        self
    }

    /// Decodes every listed or watched object without its
    /// `metadata.managedFields`: the field is skipped as it is read, never
    /// built (default `false`: objects are decoded whole). For an informer
    /// that drops managed fields anyway, this saves building them.
    #[must_use]
    pub fn drop_managed_fields(mut self, drop: bool) -> Self {
        self.decoding.drop_managed_fields = drop;
        self
    }
}

/// The protobuf table `K` is read through, `None` when `K` is read as JSON: only a typed kind
/// (static type information, not a dynamic object) whose decoding is proven against a real
/// server's bytes ([`kcr_protobuf::proven::is_proven`]). The metadata of such a kind
/// (`PartialObjectMeta<K>`, whose kind is `K`'s) is read through `PartialObjectMetadata`'s
/// table: its one field is the `ObjectMeta` every proven kind's decoding covers.
fn proven_schema<K: Resource>() -> Option<&'static kcr_protobuf::Schema>
where
    K::DynamicType: 'static,
{
    // A typed kind's type information is `()`; a dynamic object's is an `ApiResource`.
    let unit: &dyn std::any::Any = &();
    let dt = unit.downcast_ref::<K::DynamicType>()?;
    let (api_version, kind) = (K::api_version(dt), K::kind(dt));
    if !kcr_protobuf::proven::is_proven(&api_version, &kind) {
        return None;
    }
    if K::metadata_api() {
        return kcr_protobuf::Schema::for_kind(METADATA_API_VERSION, METADATA_KIND);
    }
    kcr_protobuf::Schema::for_kind(&api_version, &kind)
}

#[async_trait]
impl<K> ListerWatcher<K> for ApiListerWatcher<K>
where
    K: Resource + Clone + DeserializeOwned + Debug + Send + Sync + 'static,
{
    async fn list(&self, options: &ListOptions) -> Result<ObjectList<K>> {
        let Some(shard) = &self.shard else {
            return api_list(&self.api, options, self.decoding, None)
                .await
                .map(|(list, _)| list);
        };
        let (selector, _) = shard.snapshot();
        let (list, applied) =
            api_list(&self.api, options, self.decoding, selector.as_deref()).await?;
        if selector.is_some() {
            shard.note_list(applied);
        }
        Ok(list)
    }

    async fn watch(&self, options: &WatchOptions) -> Result<WatchStream<K>> {
        let Some(shard) = &self.shard else {
            return api_watch(&self.api, options, self.decoding, None).await;
        };
        let (selector, generation) = shard.snapshot();
        // A streaming list tells nothing of the selector: a one-item list, once, does
        // (`shardInfo`), from the watch cache.
        if selector.is_some()
            && shard.server_applied().is_none()
            && !self.probed.swap(true, std::sync::atomic::Ordering::SeqCst)
        {
            let probe = ListOptions {
                limit: Some(1),
                resource_version: Some("0".into()),
                ..options_selectors(options)
            };
            if let Ok((_, applied)) =
                api_list(&self.api, &probe, self.decoding, selector.as_deref()).await
            {
                shard.note_list(applied);
            }
        }
        let stream = api_watch(&self.api, options, self.decoding, selector.as_deref()).await?;
        Ok(shard.end_on_change(stream, generation))
    }
}

/// `Api<K>` lists and watches as [`ApiListerWatcher::new`] does: the default event limit and
/// wire format.
#[async_trait]
impl<K> ListerWatcher<K> for Api<K>
where
    K: Resource + Clone + DeserializeOwned + Debug + Send + Sync + 'static,
    K::DynamicType: 'static,
{
    async fn list(&self, options: &ListOptions) -> Result<ObjectList<K>> {
        api_list(self, options, default_decoding::<K>(), None)
            .await
            .map(|(list, _)| list)
    }

    async fn watch(&self, options: &WatchOptions) -> Result<WatchStream<K>> {
        api_watch(self, options, default_decoding::<K>(), None).await
    }
}

/// The decoding of [`ApiListerWatcher::new`]: the default event limit and wire format.
fn default_decoding<K: Resource>() -> Decoding
where
    K::DynamicType: 'static,
{
    Decoding {
        protobuf: proven_schema::<K>(),
        metadata: K::metadata_api(),
        ..Decoding::default()
    }
}

/// List options with a watch's selectors.
fn options_selectors(options: &WatchOptions) -> ListOptions {
    ListOptions {
        label_selector: options.label_selector.clone(),
        field_selector: options.field_selector.clone(),
        ..ListOptions::default()
    }
}

/// A list page, and whether the server said it applied the shard selector sent (see
/// [`ShardSelector::server_applied`]).
async fn api_list<K>(
    api: &Api<K>,
    options: &ListOptions,
    decoding: Decoding,
    shard: Option<&str>,
) -> Result<(ObjectList<K>, Option<bool>)>
where
    K: Resource + Clone + DeserializeOwned,
{
    let mut url = list_url(api.resource_url(), options);
    if let Some(shard) = shard {
        push_param(&mut url, "shardSelector", shard);
    }
    let accept = match (decoding.metadata, decoding.protobuf.is_some()) {
        (true, true) => METADATA_LIST_ACCEPT_PROTOBUF,
        (true, false) => METADATA_LIST_ACCEPT,
        (false, true) => crate::protobuf::ACCEPT,
        (false, false) => JSON,
    };
    let response = send(api, url, accept, decoding.gzip).await?;
    let protobuf = crate::protobuf::is_protobuf(response.headers().get(http::header::CONTENT_TYPE));
    let gzip = crate::gzip::is_gzip(response.headers());
    let body = crate::gzip::collect(response.into_body(), gzip).await?;
    let (list, shard_info) = if protobuf {
        if decoding.metadata {
            crate::protobuf::expect_metadata_list(&body)?;
        }
        crate::protobuf::decode_list(&body, decoding.drop_managed_fields)?
    } else {
        let (list, shard_info, kind) = decode_list_parts(&body, decoding.drop_managed_fields)?;
        if decoding.metadata {
            expect_metadata_list(kind.as_deref())?;
        }
        (list, shard_info)
    };
    // Custom resource lists honour the selector without saying so: only a built-in kind's
    // list without `shardInfo` shows a server that ignored it.
    let applied = match shard_info {
        Some(_) => Some(true),
        None if is_built_in::<K>(api) => Some(false),
        None => None,
    };
    Ok((list, applied))
}

/// Whether `api` serves a built-in kind (its group has no dot, or is one of Kubernetes' own
/// `*.k8s.io` groups); custom resources are served by a handler that writes no `shardInfo`.
fn is_built_in<K: Resource>(api: &Api<K>) -> bool {
    let url = api.resource_url();
    let Some(rest) = url.strip_prefix("/apis/") else {
        return true;
    };
    let group = rest.split('/').next().unwrap_or("");
    !group.contains('.') || group.ends_with(".k8s.io")
}

async fn api_watch<K>(
    api: &Api<K>,
    options: &WatchOptions,
    decoding: Decoding,
    shard: Option<&str>,
) -> Result<WatchStream<K>>
where
    K: Resource + Clone + DeserializeOwned + Send + 'static,
{
    let mut url = watch_url(api.resource_url(), options);
    if let Some(shard) = shard {
        push_param(&mut url, "shardSelector", shard);
    }
    let accept = match (decoding.metadata, decoding.protobuf.is_some()) {
        (true, true) => METADATA_ACCEPT_PROTOBUF,
        (true, false) => METADATA_ACCEPT,
        (false, true) => crate::protobuf::ACCEPT,
        (false, false) => JSON,
    };
    // Only a streaming list's answer is worth compressing (kube-apiserver compresses no other
    // watch).
    let response = send(
        api,
        url,
        accept,
        decoding.gzip && options.send_initial_events,
    )
    .await?;
    let gzip = crate::gzip::is_gzip(response.headers());
    let protobuf = crate::protobuf::is_protobuf(response.headers().get(http::header::CONTENT_TYPE));
    let body = response.into_body().into_data_stream();
    if let Some(schema) = decoding.protobuf
        && protobuf
    {
        let (limit, drop) = (decoding.max_event_bytes, decoding.drop_managed_fields);
        let metadata = decoding.metadata;
        return Ok(if gzip {
            let body = Box::pin(crate::gzip::gunzip(body));
            crate::protobuf::watch_events(body, schema, limit, drop, metadata).boxed()
        } else {
            crate::protobuf::watch_events(body, schema, limit, drop, metadata).boxed()
        });
    }
    Ok(if gzip {
        watch_events(Box::pin(crate::gzip::gunzip(body)), decoding).boxed()
    } else {
        watch_events(body, decoding).boxed()
    })
}

const JSON: &str = "application/json";
/// What kube-client asks for when `K` is a `PartialObjectMeta` (metadata-only lists).
const METADATA_LIST_ACCEPT: &str =
    "application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1";
/// What kube-client asks for when `K` is a `PartialObjectMeta` (metadata-only watches).
const METADATA_ACCEPT: &str = "application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1";
/// What client-go's metadata client asks for (metadata-only lists): protobuf, else JSON, else
/// the plain JSON list (whose kind is then refused, as client-go refuses it).
const METADATA_LIST_ACCEPT_PROTOBUF: &str = "application/vnd.kubernetes.protobuf;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,application/json";
/// What client-go's metadata client asks for (metadata-only watches).
const METADATA_ACCEPT_PROTOBUF: &str = "application/vnd.kubernetes.protobuf;as=PartialObjectMetadata;g=meta.k8s.io;v=v1,application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1,application/json";
/// The group and version of the metadata-only kinds.
pub(crate) const METADATA_API_VERSION: &str = "meta.k8s.io/v1";
/// The kind of a metadata-only object (a watch event's, a list item's).
pub(crate) const METADATA_KIND: &str = "PartialObjectMetadata";
/// The kind of a metadata-only list.
pub(crate) const METADATA_LIST_KIND: &str = "PartialObjectMetadataList";

/// A list answering a metadata-only request must be a `PartialObjectMetadataList`: a server
/// that ignores `as=` (or a proxy that drops the parameter) sends the full list, whose items
/// would decode as metadata and hide the mistake (client-go refuses it too).
pub(crate) fn expect_metadata_list(kind: Option<&str>) -> Result<()> {
    match kind {
        Some(METADATA_LIST_KIND) => Ok(()),
        other => Err(Error::NotMetadata {
            kind: other.unwrap_or("<unknown kind>").to_owned(),
        }),
    }
}

async fn send<K: Resource + Clone>(
    api: &Api<K>,
    url: String,
    accept: &'static str,
    gzip: bool,
) -> Result<http::Response<Body>> {
    let request = http::Request::get(url)
        .header(http::header::ACCEPT, accept)
        .header(
            http::header::ACCEPT_ENCODING,
            crate::gzip::accept_encoding(gzip),
        )
        .body(Body::empty())
        .map_err(Error::BuildRequest)?;
    // `Api` does not lend its client; a clone is two strings and an `Arc`.
    let client = api.clone().into_client();
    let response = client.send(request).await.map_err(Error::Request)?;
    let code = response.status();
    if code.is_client_error() || code.is_server_error() {
        let header_retry_after = response
            .headers()
            .get(http::header::RETRY_AFTER)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.trim().parse::<u64>().ok())
            .map(Duration::from_secs);
        let protobuf =
            crate::protobuf::is_protobuf(response.headers().get(http::header::CONTENT_TYPE));
        let gzip = crate::gzip::is_gzip(response.headers());
        let body = crate::gzip::collect(response.into_body(), gzip).await?;
        let decoded = if protobuf {
            crate::protobuf::decode_status(&body).ok_or(())
        } else {
            serde_json::from_slice::<Status>(&body).map_err(|_| ())
        };
        let status = match decoded {
            Ok(status) if status.code != 0 => status,
            Ok(status) => status.with_code(code.as_u16()),
            Err(_) => Status::failure(
                String::from_utf8_lossy(&body).trim(),
                code.canonical_reason().unwrap_or(""),
            )
            .with_code(code.as_u16()),
        };
        let mut error = Error::from_status(status);
        if let Error::Api { retry_after, .. } = &mut error
            && header_retry_after.is_some()
        {
            *retry_after = header_retry_after;
        }
        return Err(error);
    }
    Ok(response)
}

/// Appends `key=value` to a query, percent-encoding the value.
fn push_param(url: &mut String, key: &str, value: &str) {
    url.push(if url.contains('?') { '&' } else { '?' });
    url.push_str(key);
    url.push('=');
    for byte in value.bytes() {
        match byte {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'.' | b'_' | b'~' => {
                url.push(char::from(byte));
            }
            other => {
                const HEX: &[u8; 16] = b"0123456789ABCDEF";
                url.push('%');
                url.push(char::from(HEX[usize::from(other >> 4)]));
                url.push(char::from(HEX[usize::from(other & 0xf)]));
            }
        }
    }
}

/// The URL of one list page. Unlike `kube::api::ListParams`, `resourceVersion=0`
/// is sent together with `limit`, as client-go does.
pub(crate) fn list_url(base: &str, options: &ListOptions) -> String {
    let mut url = String::with_capacity(base.len() + 64);
    url.push_str(base);
    if let Some(labels) = &options.label_selector {
        push_param(&mut url, "labelSelector", labels);
    }
    if let Some(fields) = &options.field_selector {
        push_param(&mut url, "fieldSelector", fields);
    }
    if let Some(limit) = options.limit {
        push_param(&mut url, "limit", &limit.to_string());
    }
    if let Some(token) = &options.continue_token {
        push_param(&mut url, "continue", token);
    } else if let Some(rv) = &options.resource_version {
        push_param(&mut url, "resourceVersion", rv);
        if let Some(m) = options.resource_version_match {
            push_param(&mut url, "resourceVersionMatch", m.as_str());
        }
    }
    url
}

/// The URL of a watch.
pub(crate) fn watch_url(base: &str, options: &WatchOptions) -> String {
    let mut url = String::with_capacity(base.len() + 128);
    url.push_str(base);
    push_param(&mut url, "watch", "true");
    if let Some(labels) = &options.label_selector {
        push_param(&mut url, "labelSelector", labels);
    }
    if let Some(fields) = &options.field_selector {
        push_param(&mut url, "fieldSelector", fields);
    }
    push_param(&mut url, "resourceVersion", &options.resource_version);
    if let Some(m) = options.resource_version_match {
        push_param(&mut url, "resourceVersionMatch", m.as_str());
    }
    if let Some(timeout) = options.timeout_seconds {
        push_param(&mut url, "timeoutSeconds", &timeout.to_string());
    }
    if options.allow_watch_bookmarks {
        push_param(&mut url, "allowWatchBookmarks", "true");
    }
    if options.send_initial_events {
        push_param(&mut url, "sendInitialEvents", "true");
    }
    url
}

#[derive(Default, Deserialize)]
#[serde(rename_all = "camelCase")]
struct ListMetaLite {
    #[serde(default)]
    resource_version: Option<String>,
    #[serde(default, rename = "continue")]
    continue_token: Option<String>,
    #[serde(default)]
    remaining_item_count: Option<i64>,
    /// KEP-5866: the shard selector the server applied.
    #[serde(default)]
    shard_info: Option<ShardInfoLite>,
}

#[derive(Default, Deserialize)]
struct ShardInfoLite {
    #[serde(default)]
    selector: Option<String>,
}

fn null_as_empty<'de, D, T>(deserializer: D) -> Result<Vec<T>, D::Error>
where
    D: Deserializer<'de>,
    T: Deserialize<'de>,
{
    Ok(Option::<Vec<T>>::deserialize(deserializer)?.unwrap_or_default())
}

#[derive(Deserialize)]
#[serde(bound(deserialize = "K: DeserializeOwned"))]
struct TypedList<K> {
    #[serde(default)]
    kind: Option<String>,
    #[serde(default)]
    metadata: ListMetaLite,
    #[serde(default, deserialize_with = "null_as_empty")]
    items: Vec<K>,
}

#[derive(Deserialize)]
#[serde(bound(deserialize = "K: DeserializeOwned"))]
struct TypedListWithoutManagedFields<K> {
    #[serde(default)]
    kind: Option<String>,
    #[serde(default)]
    metadata: ListMetaLite,
    #[serde(default, deserialize_with = "items_without_managed_fields")]
    items: Vec<K>,
}

#[derive(Deserialize)]
struct RawList<'a> {
    #[serde(default, borrow, deserialize_with = "null_as_empty")]
    items: Vec<&'a RawValue>,
}

/// Decodes a list body. The fast path decodes straight into `K`; only when
/// that fails is the body walked again to name the object at fault.
#[cfg(test)]
pub(crate) fn decode_list<K: DeserializeOwned>(body: &[u8]) -> Result<ObjectList<K>> {
    decode_list_with(body, false)
}

/// [`decode_list`], skipping each object's managedFields when asked.
#[cfg(test)]
pub(crate) fn decode_list_with<K: DeserializeOwned>(
    body: &[u8],
    drop_managed_fields: bool,
) -> Result<ObjectList<K>> {
    decode_list_parts(body, drop_managed_fields).map(|(list, _, _)| list)
}

/// [`decode_list_with`], the selector of the list's `metadata.shardInfo`, if any, and the
/// list's `kind`.
#[allow(clippy::type_complexity)]
fn decode_list_parts<K: DeserializeOwned>(
    body: &[u8],
    drop_managed_fields: bool,
) -> Result<(ObjectList<K>, Option<String>, Option<String>)> {
    let decoded = if drop_managed_fields {
        serde_json::from_slice::<TypedListWithoutManagedFields<K>>(body)
            .map(|l| (l.kind, l.metadata, l.items))
    } else {
        serde_json::from_slice::<TypedList<K>>(body).map(|l| (l.kind, l.metadata, l.items))
    };
    match decoded {
        Ok((kind, metadata, items)) => Ok((
            ObjectList {
                items,
                resource_version: metadata.resource_version.unwrap_or_default(),
                continue_token: metadata.continue_token.filter(|t| !t.is_empty()),
                remaining_item_count: metadata.remaining_item_count,
            },
            metadata.shard_info.map(|i| i.selector.unwrap_or_default()),
            kind,
        )),
        Err(whole) => {
            let raw = match serde_json::from_slice::<RawList<'_>>(body) {
                Ok(raw) => raw,
                Err(source) => {
                    return Err(Error::Malformed {
                        what: "list",
                        source,
                    });
                }
            };
            for item in raw.items {
                if let Err(source) = serde_json::from_str::<K>(item.get()) {
                    return Err(decode_error(item, source));
                }
            }
            Err(Error::Malformed {
                what: "list",
                source: whole,
            })
        }
    }
}

/// Names a raw object (kind, namespace/name) for an error report.
pub(crate) fn describe(raw: &RawValue) -> (String, String) {
    #[derive(Deserialize, Default)]
    struct Meta {
        #[serde(default)]
        name: Option<String>,
        #[serde(default)]
        namespace: Option<String>,
    }
    #[derive(Deserialize, Default)]
    struct Partial {
        #[serde(default)]
        kind: Option<String>,
        #[serde(default)]
        metadata: Option<Meta>,
    }
    let partial = serde_json::from_str::<Partial>(raw.get()).unwrap_or_default();
    let kind = partial.kind.unwrap_or_else(|| "<unknown kind>".to_owned());
    let name = match partial.metadata {
        Some(Meta {
            name: Some(name),
            namespace: Some(ns),
        }) if !ns.is_empty() => format!("{ns}/{name}"),
        Some(Meta {
            name: Some(name), ..
        }) => name,
        _ => "<unknown name>".to_owned(),
    };
    (kind, name)
}

fn decode_error(raw: &RawValue, source: serde_json::Error) -> Error {
    let (kind, name) = describe(raw);
    Error::Decode { kind, name, source }
}

#[derive(Deserialize)]
struct RawEvent<'a> {
    #[serde(rename = "type", borrow)]
    event_type: Cow<'a, str>,
    #[serde(borrow)]
    object: &'a RawValue,
}

/// The part of a `BOOKMARK` event's object a bookmark keeps (JSON or protobuf).
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct BookmarkMeta {
    #[serde(default)]
    pub(crate) resource_version: String,
    #[serde(default)]
    pub(crate) annotations: Option<BTreeMap<String, String>>,
}

/// A `BOOKMARK` event's object.
#[derive(Deserialize)]
pub(crate) struct BookmarkObject {
    pub(crate) metadata: BookmarkMeta,
}

/// Decodes one line of a watch. `None` for a blank line.
#[cfg(test)]
pub(crate) fn decode_event<K: DeserializeOwned + Clone>(
    line: &[u8],
) -> Option<Result<WatchEvent<K>>> {
    decode_event_with(line, false)
}

/// Whether an object's JSON text holds an array other than its `managedFields`: decoded,
/// each of its `Vec`s keeps the spare capacity serde's growth by doubling left (room for four
/// tolerations where there are three: about a seventh of a Pod). A `[` inside a string counts
/// too; it costs a clone, never a wrong answer.
fn has_arrays_beside_managed_fields(json: &str) -> bool {
    let b = json.as_bytes();
    b.iter()
        .enumerate()
        .any(|(i, c)| *c == b'[' && !b[..i].ends_with(b"\"managedFields\":"))
}

/// [`decode_event`], skipping the object's managedFields when asked. Then (the lean mode an
/// informer asks for) an object with arrays is cloned, which allocates each `Vec` at its
/// length, and the decoded one dropped: what the cache keeps has no spare capacity.
#[cfg(test)]
pub(crate) fn decode_event_with<K: DeserializeOwned + Clone>(
    line: &[u8],
    drop_managed_fields: bool,
) -> Option<Result<WatchEvent<K>>> {
    decode_event_as(line, drop_managed_fields, false)
}

/// [`decode_event_with`]; with `metadata`, an object event must carry a
/// `PartialObjectMetadata` (see [`expect_metadata_list`]).
fn decode_event_as<K: DeserializeOwned + Clone>(
    line: &[u8],
    drop_managed_fields: bool,
    metadata: bool,
) -> Option<Result<WatchEvent<K>>> {
    if line.iter().all(u8::is_ascii_whitespace) {
        return None;
    }
    let raw = match serde_json::from_slice::<RawEvent<'_>>(line) {
        Ok(raw) => raw,
        Err(source) => {
            // A bare `Status` line is how some servers end a watch with an error.
            if let Ok(status) = serde_json::from_slice::<Status>(line)
                && status.code != 0
            {
                return Some(Err(Error::from_status(status)));
            }
            return Some(Err(Error::Malformed {
                what: "watch event",
                source,
            }));
        }
    };
    let object = |raw_object: &RawValue| {
        if metadata {
            expect_metadata_object(raw_object)?;
        }
        let decoded = if drop_managed_fields {
            serde_json::from_str::<WithoutManagedFields<K>>(raw_object.get()).map(|o| {
                if has_arrays_beside_managed_fields(raw_object.get()) {
                    o.0.clone()
                } else {
                    o.0
                }
            })
        } else {
            serde_json::from_str::<K>(raw_object.get())
        };
        decoded.map_err(|e| decode_error(raw_object, e))
    };
    Some(match &*raw.event_type {
        "ADDED" => object(raw.object).map(WatchEvent::Added),
        "MODIFIED" => object(raw.object).map(WatchEvent::Modified),
        "DELETED" => object(raw.object).map(WatchEvent::Deleted),
        "BOOKMARK" => serde_json::from_str::<BookmarkObject>(raw.object.get())
            .map(|b| {
                WatchEvent::Bookmark(Bookmark {
                    resource_version: b.metadata.resource_version,
                    annotations: b.metadata.annotations.unwrap_or_default(),
                })
            })
            .map_err(|e| decode_error(raw.object, e)),
        "ERROR" => serde_json::from_str::<Status>(raw.object.get())
            .map(|s| WatchEvent::Error(Box::new(s)))
            .map_err(|e| decode_error(raw.object, e)),
        other => {
            let (kind, name) = describe(raw.object);
            Err(Error::UnknownEventType {
                event_type: other.to_owned(),
                kind,
                name,
            })
        }
    })
}

/// The lines of a watch body as its chunks arrive. Each byte is examined
/// once (a chunk is searched for a newline from where the previous search
/// stopped, not from the start of the pending line), so a long line costs
/// time linear in its length; and a line longer than the limit is refused
/// as soon as it is, so the buffer never holds more than the limit plus one
/// chunk.
#[derive(Debug)]
pub(crate) struct LineBuffer {
    buffer: BytesMut,
    /// The first bytes of `buffer` known to hold no newline.
    searched: usize,
    max_line: usize,
    /// How many bytes were examined in all (for tests).
    examined: u64,
}

impl LineBuffer {
    pub(crate) fn new(max_line: usize) -> Self {
        Self {
            buffer: BytesMut::new(),
            searched: 0,
            max_line,
            examined: 0,
        }
    }

    pub(crate) fn push(&mut self, chunk: &[u8]) {
        self.buffer.extend_from_slice(chunk);
    }

    /// The next complete line (without its newline), `Ok(None)` when more
    /// bytes are needed, or the limit when the pending line exceeds it.
    pub(crate) fn next_line(&mut self) -> Result<Option<BytesMut>, usize> {
        let fresh = &self.buffer[self.searched..];
        let found = fresh.iter().position(|b| *b == b'\n');
        self.examined += found.map_or(fresh.len(), |p| p + 1) as u64;
        match found {
            Some(pos) => {
                let end = self.searched + pos;
                self.searched = 0;
                if end > self.max_line {
                    return Err(self.max_line);
                }
                let mut line = self.buffer.split_to(end + 1);
                line.truncate(end);
                Ok(Some(line))
            }
            None => {
                self.searched = self.buffer.len();
                if self.buffer.len() > self.max_line {
                    return Err(self.max_line);
                }
                Ok(None)
            }
        }
    }

    /// What is left once the body has ended (a last line without a newline).
    pub(crate) fn rest(&mut self) -> BytesMut {
        self.searched = 0;
        self.buffer.split()
    }

    #[cfg(test)]
    pub(crate) fn examined(&self) -> u64 {
        self.examined
    }
}

/// How a watch body is cut into events: lines of JSON, or length-prefixed protobuf frames.
pub(crate) trait Framing: Send + 'static {
    /// One event's bytes.
    type Unit: AsRef<[u8]> + Send;

    /// Takes the next chunk of the body.
    fn push(&mut self, chunk: &[u8]);

    /// The next whole event, `Ok(None)` when more bytes are needed, `Err(limit)` when it is
    /// longer than the limit.
    fn next_unit(&mut self) -> std::result::Result<Option<Self::Unit>, usize>;

    /// Once the body has ended: a last event it held, or the error of an event cut short.
    fn end(&mut self) -> Result<Option<Self::Unit>>;

    /// Frees what is buffered once the stream has ended in an error.
    fn clear(&mut self);
}

impl Framing for LineBuffer {
    type Unit = BytesMut;

    fn push(&mut self, chunk: &[u8]) {
        LineBuffer::push(self, chunk);
    }

    fn next_unit(&mut self) -> std::result::Result<Option<BytesMut>, usize> {
        self.next_line()
    }

    /// A final line without a newline.
    fn end(&mut self) -> Result<Option<BytesMut>> {
        let rest = self.rest();
        Ok(rest.has_remaining().then_some(rest))
    }

    fn clear(&mut self) {
        *self = LineBuffer::new(0);
    }
}

/// Splits a body into events with `framing` and decodes each with `decode` (`None`: nothing
/// to deliver, such as a blank line). A transport error ends the stream after one
/// `Err(Error::Read)` item; an event longer than the limit ends it after one
/// `Err(Error::EventTooLarge)`, as soon as that is known; a body that ends inside an event
/// after the error [`Framing::end`] gives.
pub(crate) fn split_events<K, S, E, F, D>(
    body: S,
    framing: F,
    decode: D,
) -> impl Stream<Item = Result<WatchEvent<K>>> + Send
where
    K: Send + 'static,
    S: Stream<Item = Result<Bytes, E>> + Send + Unpin + 'static,
    E: std::error::Error + Send + Sync + 'static,
    F: Framing,
    D: Fn(&[u8]) -> Option<Result<WatchEvent<K>>> + Send + 'static,
{
    struct State<S, F, D> {
        body: S,
        framing: F,
        decode: D,
        done: bool,
    }
    let state = State {
        body,
        framing,
        decode,
        done: false,
    };
    futures::stream::unfold(state, |mut state| async move {
        loop {
            if state.done {
                return None;
            }
            match state.framing.next_unit() {
                Ok(Some(unit)) => match (state.decode)(unit.as_ref()) {
                    Some(item) => return Some((item, state)),
                    None => continue,
                },
                Ok(None) => {}
                Err(limit) => {
                    state.done = true;
                    state.framing.clear();
                    return Some((Err(Error::EventTooLarge { limit }), state));
                }
            }
            match state.body.next().await {
                Some(Ok(chunk)) => state.framing.push(&chunk),
                Some(Err(e)) => {
                    state.done = true;
                    state.framing.clear();
                    return Some((Err(crate::gzip::read_error(e)), state));
                }
                // The pending bytes were checked against the limit above.
                None => {
                    state.done = true;
                    return match state.framing.end() {
                        Ok(Some(unit)) => (state.decode)(unit.as_ref()).map(|item| (item, state)),
                        Ok(None) => None,
                        Err(e) => Some((Err(e), state)),
                    };
                }
            }
        }
    })
}

/// Splits a body into lines and decodes each as a watch event. A transport
/// error ends the stream after one `Err(Error::Read)` item; a line longer
/// than `max_event_bytes` ends it after one `Err(Error::EventTooLarge)`.
pub(crate) fn watch_events<K, S, E>(
    body: S,
    decoding: Decoding,
) -> impl Stream<Item = Result<WatchEvent<K>>> + Send
where
    K: DeserializeOwned + Clone + Send + 'static,
    S: Stream<Item = Result<Bytes, E>> + Send + Unpin + 'static,
    E: std::error::Error + Send + Sync + 'static,
{
    let drop_managed_fields = decoding.drop_managed_fields;
    let metadata = decoding.metadata;
    split_events(
        body,
        LineBuffer::new(decoding.max_event_bytes),
        move |line: &[u8]| decode_event_as::<K>(line, drop_managed_fields, metadata),
    )
}

/// A watch event's object answering a metadata-only watch must be a `PartialObjectMetadata`.
fn expect_metadata_object(raw: &RawValue) -> Result<()> {
    #[derive(Deserialize)]
    struct Kind<'a> {
        #[serde(default, borrow)]
        kind: Option<Cow<'a, str>>,
    }
    match serde_json::from_str::<Kind<'_>>(raw.get()) {
        Ok(Kind { kind }) if kind.as_deref() == Some(METADATA_KIND) => Ok(()),
        Ok(Kind { kind }) => Err(Error::NotMetadata {
            kind: kind.map_or_else(|| "<unknown kind>".to_owned(), Cow::into_owned),
        }),
        Err(source) => Err(decode_error(raw, source)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use k8s_openapi::api::core::v1::ConfigMap;

    #[test]
    fn protobuf_should_be_asked_only_for_typed_proven_kinds() {
        use k8s_openapi::api::apps::v1::Deployment;
        use k8s_openapi::api::certificates::v1::CertificateSigningRequest;
        use k8s_openapi::api::core::v1::Binding;
        use kube::api::DynamicObject;
        use kube::core::PartialObjectMeta;
        assert!(proven_schema::<ConfigMap>().is_some());
        assert!(proven_schema::<Deployment>().is_some());
        assert!(proven_schema::<CertificateSigningRequest>().is_some());
        // A table, but not a listable kind the oracle recorded.
        assert!(kcr_protobuf::Schema::for_kind("v1", "Binding").is_some());
        assert!(proven_schema::<Binding>().is_none());
        // The metadata of a proven kind is read through `PartialObjectMetadata`'s table; of any
        // other kind, in JSON.
        assert_eq!(
            proven_schema::<PartialObjectMeta<ConfigMap>>().map(|s| (s.api_version(), s.kind())),
            Some(("meta.k8s.io/v1", "PartialObjectMetadata"))
        );
        assert!(proven_schema::<PartialObjectMeta<Binding>>().is_none());
        assert!(proven_schema::<PartialObjectMeta<DynamicObject>>().is_none());
        assert!(proven_schema::<DynamicObject>().is_none());
    }

    #[test]
    fn list_url_should_send_resource_version_zero_with_limit() {
        let options = ListOptions {
            resource_version: Some("0".into()),
            limit: Some(500),
            label_selector: Some("app in (a,b)".into()),
            ..ListOptions::default()
        };
        assert_eq!(
            list_url("/api/v1/configmaps", &options),
            "/api/v1/configmaps?labelSelector=app%20in%20%28a%2Cb%29&limit=500&resourceVersion=0"
        );
    }

    #[test]
    fn list_url_should_omit_resource_version_with_a_continue_token() {
        let options = ListOptions {
            resource_version: Some("0".into()),
            limit: Some(500),
            continue_token: Some("abc=".into()),
            ..ListOptions::default()
        };
        assert_eq!(
            list_url("/api/v1/configmaps", &options),
            "/api/v1/configmaps?limit=500&continue=abc%3D"
        );
    }

    #[test]
    fn watch_url_should_carry_bookmarks_timeout_and_streaming_parameters() {
        let options = WatchOptions {
            resource_version: String::new(),
            resource_version_match: Some(crate::VersionMatch::NotOlderThan),
            timeout_seconds: Some(321),
            allow_watch_bookmarks: true,
            send_initial_events: true,
            field_selector: Some("metadata.name=x".into()),
            ..WatchOptions::default()
        };
        assert_eq!(
            watch_url("/api/v1/namespaces/ns/configmaps", &options),
            "/api/v1/namespaces/ns/configmaps?watch=true&fieldSelector=metadata.name%3Dx\
             &resourceVersion=&resourceVersionMatch=NotOlderThan&timeoutSeconds=321\
             &allowWatchBookmarks=true&sendInitialEvents=true"
        );
    }

    #[test]
    fn decode_list_should_name_the_object_that_does_not_decode() {
        let body = br#"{"kind":"ConfigMapList","metadata":{"resourceVersion":"7"},"items":[
            {"metadata":{"name":"good","namespace":"a"}},
            {"kind":"ConfigMap","metadata":{"name":"bad","namespace":"b"},"data":{"k":5}}]}"#;
        let err = decode_list::<ConfigMap>(body).err();
        match err {
            Some(Error::Decode { kind, name, .. }) => {
                assert_eq!(kind, "ConfigMap");
                assert_eq!(name, "b/bad");
            }
            other => panic!("expected a decode error, got {other:?}"),
        }
    }

    #[test]
    fn decode_list_should_read_version_continue_and_null_items() {
        let body = br#"{"metadata":{"resourceVersion":"9","continue":"next"},"items":null}"#;
        let list = decode_list::<ConfigMap>(body).ok();
        assert_eq!(
            list,
            Some(ObjectList {
                items: vec![],
                resource_version: "9".into(),
                continue_token: Some("next".into()),
                remaining_item_count: None,
            })
        );
    }

    #[test]
    fn decode_event_should_report_unknown_types_and_malformed_lines() {
        let unknown = decode_event::<ConfigMap>(
            br#"{"type":"SHRUGGED","object":{"kind":"ConfigMap","metadata":{"name":"x"}}}"#,
        );
        assert!(matches!(
            unknown,
            Some(Err(Error::UnknownEventType { ref event_type, ref name, .. }))
                if event_type == "SHRUGGED" && name == "x"
        ));
        let malformed = decode_event::<ConfigMap>(br#"{"type":"ADDED","object":"#);
        assert!(matches!(malformed, Some(Err(Error::Malformed { .. }))));
        assert!(decode_event::<ConfigMap>(b"  ").is_none());
    }

    #[test]
    fn decode_event_should_read_initial_events_end_bookmarks() {
        let event = decode_event::<ConfigMap>(
            br#"{"type":"BOOKMARK","object":{"kind":"ConfigMap","metadata":{"resourceVersion":"12","annotations":{"k8s.io/initial-events-end":"true"}}}}"#,
        );
        match event {
            Some(Ok(WatchEvent::Bookmark(b))) => {
                assert_eq!(b.resource_version, "12");
                assert!(b.is_initial_events_end());
            }
            other => panic!("expected a bookmark, got {other:?}"),
        }
    }

    #[tokio::test]
    async fn watch_events_should_split_lines_across_chunks() {
        let chunks: Vec<Result<Bytes, std::io::Error>> = vec![
            Ok(Bytes::from_static(
                br#"{"type":"ADDED","object":{"metadata":{"name":"a","resourceVersion":"1"}}}"#,
            )),
            Ok(Bytes::from_static(
                b"\n{\"type\":\"DELETED\",\"object\":{\"metadata\"",
            )),
            Ok(Bytes::from_static(
                br#":{"name":"a","resourceVersion":"2"}}}"#,
            )),
        ];
        let events: Vec<_> =
            watch_events::<ConfigMap, _, _>(futures::stream::iter(chunks), Decoding::default())
                .collect()
                .await;
        assert_eq!(events.len(), 2);
        assert!(
            matches!(&events[0], Ok(WatchEvent::Added(cm)) if cm.metadata.name.as_deref() == Some("a"))
        );
        assert!(
            matches!(&events[1], Ok(WatchEvent::Deleted(cm)) if cm.metadata.resource_version.as_deref() == Some("2"))
        );
    }

    #[test]
    fn line_buffer_should_examine_each_byte_once_however_a_long_line_is_chunked() {
        // 8 MiB in 1 KiB chunks: a rescan from the line's start at each
        // chunk would examine about 32 GiB.
        let mut lines = LineBuffer::new(DEFAULT_MAX_EVENT_BYTES + 1);
        let chunk = vec![b'x'; 1024];
        let total = 8 << 20;
        for _ in 0..total / 1024 {
            lines.push(&chunk);
            assert_eq!(lines.next_line(), Ok(None));
        }
        lines.push(b"\nnext");
        let line = lines.next_line().ok().flatten().map(|l| l.len());
        assert_eq!(line, Some(total));
        assert!(
            lines.examined() <= total as u64 + 1,
            "examined {} bytes for a line of {total}",
            lines.examined()
        );
        assert_eq!(lines.next_line(), Ok(None));
        assert_eq!(&lines.rest()[..], b"next");
    }

    #[test]
    fn line_buffer_should_refuse_a_line_longer_than_its_limit() {
        let mut lines = LineBuffer::new(10);
        lines.push(b"0123456789\n");
        assert_eq!(lines.next_line().ok().flatten().map(|l| l.len()), Some(10));
        lines.push(b"0123456789A");
        assert_eq!(
            lines.next_line(),
            Err(10),
            "no newline yet, already too long"
        );
        let mut lines = LineBuffer::new(10);
        lines.push(b"0123456789AB\n");
        assert_eq!(lines.next_line(), Err(10), "a whole line in one chunk");
    }

    #[tokio::test]
    async fn watch_events_should_end_with_a_typed_error_on_a_line_over_the_limit() {
        let chunks: Vec<Result<Bytes, std::io::Error>> = vec![
            Ok(Bytes::from_static(
                b"{\"type\":\"ADDED\",\"object\":{\"metadata\":{\"name\":\"a\"}}}\n",
            )),
            Ok(Bytes::from(vec![b' '; 100])),
            Ok(Bytes::from(vec![b' '; 100])),
        ];
        let events: Vec<_> = watch_events::<ConfigMap, _, _>(
            futures::stream::iter(chunks),
            Decoding {
                max_event_bytes: 150,
                ..Decoding::default()
            },
        )
        .collect()
        .await;
        assert_eq!(events.len(), 2, "{events:?}");
        assert!(matches!(events[0], Ok(WatchEvent::Added(_))));
        assert!(matches!(
            events[1],
            Err(Error::EventTooLarge { limit: 150 })
        ));
    }

    const WITH_MANAGED_FIELDS: &str = r#"{"metadata":{"name":"a","namespace":"ns","resourceVersion":"3",
        "managedFields":[{"manager":"m","operation":"Update","fieldsType":"FieldsV1","fieldsV1":{"f:data":{}}}]},
        "data":{"k":"v"}}"#;

    #[test]
    fn decode_list_should_skip_managed_fields_only_when_asked() {
        let body = format!(
            r#"{{"metadata":{{"resourceVersion":"4"}},"items":[{WITH_MANAGED_FIELDS},{WITH_MANAGED_FIELDS}]}}"#
        );
        let kept =
            decode_list_with::<ConfigMap>(body.as_bytes(), false).unwrap_or_else(|e| panic!("{e}"));
        assert!(
            kept.items
                .iter()
                .all(|cm| cm.metadata.managed_fields.is_some())
        );
        let dropped =
            decode_list_with::<ConfigMap>(body.as_bytes(), true).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(dropped.items.len(), 2);
        assert_eq!(dropped.resource_version, "4");
        assert!(
            dropped
                .items
                .iter()
                .all(|cm| cm.metadata.managed_fields.is_none())
        );
        assert!(dropped.items.iter().all(|cm| cm.data == kept.items[0].data));
        let null_items = decode_list_with::<ConfigMap>(br#"{"items":null}"#, true)
            .unwrap_or_else(|e| panic!("{e}"));
        assert!(null_items.items.is_empty());
    }

    #[test]
    fn objects_decoded_without_managed_fields_should_keep_no_spare_capacity() {
        use k8s_openapi::api::core::v1::Pod;
        let line = br#"{"type":"ADDED","object":{"apiVersion":"v1","kind":"Pod",
            "metadata":{"name":"web","resourceVersion":"7","managedFields":[
                {"manager":"kubelet","operation":"Update","fieldsType":"FieldsV1","fieldsV1":{}}]},
            "spec":{"containers":[{"name":"web","image":"nginx"}],"tolerations":[
                {"key":"a","operator":"Exists"},{"key":"b","operator":"Exists"},
                {"key":"c","operator":"Exists"}]}}}"#;
        let line: Vec<u8> = line.iter().copied().filter(|b| *b != b'\n').collect();
        let tolerations = |drop| match decode_event_with::<Pod>(&line, drop) {
            Some(Ok(WatchEvent::Added(pod))) => {
                let t = pod.spec.and_then(|s| s.tolerations).unwrap_or_default();
                (t.len(), t.capacity())
            }
            other => panic!("{other:?}"),
        };
        // Decoded as it is, serde's growth leaves room for a fourth.
        assert_eq!(tolerations(false), (3, 4));
        assert_eq!(tolerations(true), (3, 3));
        // An object without arrays beside its managedFields is not cloned.
        assert!(!has_arrays_beside_managed_fields(
            r#"{"metadata":{"managedFields":[{}]},"data":{"a":"b"}}"#
        ));
        assert!(has_arrays_beside_managed_fields(
            r#"{"metadata":{"finalizers":["x"]}}"#
        ));
    }

    #[test]
    fn decode_event_should_skip_managed_fields_only_when_asked() {
        let line = format!(r#"{{"type":"MODIFIED","object":{WITH_MANAGED_FIELDS}}}"#);
        let managed = |drop| match decode_event_with::<ConfigMap>(line.as_bytes(), drop) {
            Some(Ok(WatchEvent::Modified(cm))) => cm.metadata.managed_fields.is_some(),
            other => panic!("expected an update, got {other:?}"),
        };
        assert!(managed(false));
        assert!(!managed(true));
        let bad = br#"{"type":"ADDED","object":{"metadata":{"name":"b","namespace":"ns","managedFields":[]},"data":{"k":5}}}"#;
        assert!(matches!(
            decode_event_with::<ConfigMap>(bad, true),
            Some(Err(Error::Decode { ref name, .. })) if name == "ns/b"
        ));
    }
}
