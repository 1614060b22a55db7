//! List pages and watch streams in Kubernetes' protobuf wire format, decoded straight into
//! `K` through kcr-protobuf's field tables (see [`WireFormat`](crate::WireFormat)).

use bytes::Bytes;
use futures::Stream;
use kcr_protobuf::{DecodeOptions, Schema};
use kube::core::Status;
use serde::de::DeserializeOwned;

use crate::api::{BookmarkObject, Framing, split_events};
use crate::error::{Error, Result};
use crate::listwatch::{Bookmark, ObjectList, WatchEvent};

/// What a client that reads protobuf asks for (client-go's default): protobuf, else JSON.
pub(crate) const ACCEPT: &str = "application/vnd.kubernetes.protobuf, application/json";

/// Whether a response's `Content-Type` is protobuf (a body or a watch stream).
pub(crate) fn is_protobuf(content_type: Option<&http::HeaderValue>) -> bool {
    content_type
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.split(';').next())
        .is_some_and(|media| media.trim().eq_ignore_ascii_case(kcr_protobuf::MEDIA_TYPE))
}

fn options(drop_managed_fields: bool) -> DecodeOptions {
    DecodeOptions::default().skip_managed_fields(drop_managed_fields)
}

fn whole(what: &str, source: kcr_protobuf::Error) -> Error {
    Error::Protobuf {
        kind: what.to_owned(),
        name: String::new(),
        source,
    }
}

/// Refuses a protobuf list that is not a `PartialObjectMetadataList` (a metadata-only list
/// answered with the full objects), from its envelope alone.
pub(crate) fn expect_metadata_list(body: &[u8]) -> Result<()> {
    let u = kcr_protobuf::envelope::unwrap(body).map_err(|e| whole("list", e))?;
    crate::api::expect_metadata_list(Some(&u.kind))
}

/// Decodes a protobuf list page, each item straight into `K`, and the selector of its
/// `metadata.shardInfo`, if any.
pub(crate) fn decode_list<K: DeserializeOwned>(
    body: &[u8],
    drop_managed_fields: bool,
) -> Result<(ObjectList<K>, Option<String>)> {
    let list =
        kcr_protobuf::list::decode::<K>(body, options(drop_managed_fields)).map_err(|e| {
            Error::Protobuf {
                kind: e.kind,
                name: e.name,
                source: e.source,
            }
        })?;
    let list_meta = list.metadata;
    Ok((
        ObjectList {
            items: list.items,
            resource_version: list_meta.resource_version,
            continue_token: Some(list_meta.continue_token).filter(|t| !t.is_empty()),
            remaining_item_count: list_meta.remaining_item_count,
        },
        list_meta.shard_selector,
    ))
}

/// A `Status` error body in protobuf.
pub(crate) fn decode_status(body: &[u8]) -> Option<Status> {
    kcr_protobuf::object::decode::<Status>(body, DecodeOptions::default()).ok()
}

/// Decodes one watch frame (a `WatchEvent` whose object is a `k8s\0` body of `schema`'s kind,
/// or a `Status` for an `ERROR`).
pub(crate) fn decode_event<K: DeserializeOwned>(
    frame: &[u8],
    schema: &Schema,
    drop_managed_fields: bool,
    metadata: bool,
) -> Result<WatchEvent<K>> {
    let event = kcr_protobuf::watch::decode_event(frame).map_err(|e| whole("watch event", e))?;
    let object =
        kcr_protobuf::envelope::unwrap(event.object).map_err(|e| whole("watch event", e))?;
    let kind = if object.kind.is_empty() {
        schema.kind().to_owned()
    } else {
        object.kind.clone().into_owned()
    };
    let failed = |source| Error::Protobuf {
        kind: kind.clone(),
        name: kcr_protobuf::message::describe(object.raw),
        source,
    };
    let typed = |opts| {
        // A metadata-only watch answered with full objects (see `expect_metadata_list`).
        if metadata && object.kind != crate::api::METADATA_KIND {
            return Err(Error::NotMetadata { kind: kind.clone() });
        }
        kcr_protobuf::message::decode::<K>(object.raw, schema, opts).map_err(failed)
    };
    Ok(match &*event.event_type {
        "ADDED" => WatchEvent::Added(typed(options(drop_managed_fields))?),
        "MODIFIED" => WatchEvent::Modified(typed(options(drop_managed_fields))?),
        "DELETED" => WatchEvent::Deleted(typed(options(drop_managed_fields))?),
        "BOOKMARK" => {
            let b: BookmarkObject =
                kcr_protobuf::message::decode(object.raw, schema, options(true)).map_err(failed)?;
            WatchEvent::Bookmark(Bookmark {
                resource_version: b.metadata.resource_version,
                annotations: b.metadata.annotations.unwrap_or_default(),
            })
        }
        "ERROR" => {
            let status =
                kcr_protobuf::object::decode::<Status>(event.object, DecodeOptions::default())
                    .map_err(failed)?;
            WatchEvent::Error(Box::new(status))
        }
        other => {
            return Err(Error::UnknownEventType {
                event_type: other.to_owned(),
                kind,
                name: kcr_protobuf::message::describe(object.raw),
            });
        }
    })
}

/// A protobuf watch body's frames; a frame over the limit is `Err(limit)`.
struct Frames {
    reader: kcr_protobuf::watch::FrameReader,
    limit: usize,
}

impl Framing for Frames {
    type Unit = Bytes;

    fn push(&mut self, chunk: &[u8]) {
        self.reader.push(chunk);
    }

    fn next_unit(&mut self) -> std::result::Result<Option<Bytes>, usize> {
        self.reader.next_frame().map_err(|_| self.limit)
    }

    /// A body that ends inside a frame is an error; it holds no last event.
    fn end(&mut self) -> Result<Option<Bytes>> {
        self.reader
            .finish()
            .map(|()| None)
            .map_err(|e| whole("watch event", e))
    }

    fn clear(&mut self) {
        self.reader = kcr_protobuf::watch::FrameReader::new(0);
    }
}

/// Splits a protobuf watch body into its frames and decodes each. A transport error ends the
/// stream after one `Err(Error::Read)`; a frame longer than `max_event_bytes` after one
/// `Err(Error::EventTooLarge)`, as soon as its length is read; a body that ends inside a
/// frame after one `Err(Error::Protobuf)`.
pub(crate) fn watch_events<K, S, E>(
    body: S,
    schema: &'static Schema,
    max_event_bytes: usize,
    drop_managed_fields: bool,
    metadata: bool,
) -> impl Stream<Item = Result<WatchEvent<K>>> + Send
where
    K: DeserializeOwned + Send + 'static,
    S: Stream<Item = Result<Bytes, E>> + Send + Unpin + 'static,
    E: std::error::Error + Send + Sync + 'static,
{
    let frames = Frames {
        reader: kcr_protobuf::watch::FrameReader::new(max_event_bytes),
        limit: max_event_bytes,
    };
    split_events(body, frames, move |frame: &[u8]| {
        Some(decode_event(frame, schema, drop_managed_fields, metadata))
    })
}
