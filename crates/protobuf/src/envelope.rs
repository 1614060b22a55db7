//! Kubernetes' envelopes: the `k8s\0` prefix and `runtime.Unknown` around an object or list,
//! List messages (`metadata` = 1, `items` = 2), and watch events.
//!
//! kube-apiserver's protobuf serializer writes `k8s\0` followed by a `runtime.Unknown`
//! (`typeMeta` = 1 with `apiVersion` = 1 and `kind` = 2, `raw` = 2, `contentEncoding` = 3,
//! `contentType` = 4) whose `raw` is the object's message. A watch streams frames of a 4-byte
//! big-endian length followed by a `metav1.WatchEvent` (`type` = 1, `object` = 2, a
//! `runtime.RawExtension` whose `raw` = 1 holds the object as the serializer writes it, with
//! its `k8s\0` envelope); the frames themselves have no envelope (the stream serializer is the
//! raw one).

use std::borrow::Cow;

use bytes::{Buf, Bytes, BytesMut};
use serde::Deserialize;
use serde_json::{Map, Value};

use crate::de::{DecodeOptions, from_message};
use crate::error::{Error, Result};
use crate::json::{Path, from_json, to_json};
use crate::schema::{LIST_META, Schema, item_schema_for, schema_for};
use crate::wire::{self, Reader};

/// The prefix of every body the protobuf serializer writes.
pub const MAGIC: &[u8; 4] = b"k8s\x00";

/// The media type of protobuf bodies.
pub const MEDIA_TYPE: &str = "application/vnd.kubernetes.protobuf";

/// The media type of protobuf watch streams.
pub const WATCH_MEDIA_TYPE: &str = "application/vnd.kubernetes.protobuf;stream=watch";

/// A `runtime.Unknown`: the type of a body and its message.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Unknown<'a> {
    /// `typeMeta.apiVersion`.
    pub api_version: Cow<'a, str>,
    /// `typeMeta.kind`.
    pub kind: Cow<'a, str>,
    /// The object's message.
    pub raw: &'a [u8],
}

/// Reads the `k8s\0` prefix and the `runtime.Unknown` after it.
pub fn unwrap(body: &[u8]) -> Result<Unknown<'_>> {
    let rest = body.strip_prefix(MAGIC).ok_or(Error::MissingPrefix)?;
    let mut out = Unknown::default();
    for f in Reader::new(rest) {
        let f = f?;
        match (f.number, f.wire) {
            (1, wire::LEN) => {
                for t in Reader::new(f.data) {
                    let t = t?;
                    match (t.number, t.wire) {
                        (1, wire::LEN) => out.api_version = String::from_utf8_lossy(t.data),
                        (2, wire::LEN) => out.kind = String::from_utf8_lossy(t.data),
                        _ => {}
                    }
                }
            }
            (2, wire::LEN) => out.raw = f.data,
            _ => {}
        }
    }
    Ok(out)
}

/// `k8s\0` and a `runtime.Unknown` of that type around a message, as the serializer writes
/// them (empty `contentEncoding` and `contentType` included).
#[must_use]
pub fn wrap(api_version: &str, kind: &str, raw: &[u8]) -> Vec<u8> {
    let mut type_meta = Vec::with_capacity(api_version.len() + kind.len() + 4);
    wire::put_bytes_field(1, api_version.as_bytes(), &mut type_meta);
    wire::put_bytes_field(2, kind.as_bytes(), &mut type_meta);
    let mut out = Vec::with_capacity(raw.len() + type_meta.len() + 20);
    out.extend_from_slice(MAGIC);
    wire::put_bytes_field(1, &type_meta, &mut out);
    wire::put_bytes_field(2, raw, &mut out);
    wire::put_bytes_field(3, b"", &mut out);
    wire::put_bytes_field(4, b"", &mut out);
    out
}

fn unknown_kind(u: &Unknown<'_>) -> Error {
    Error::UnknownKind {
        api_version: u.api_version.clone().into_owned(),
        kind: u.kind.clone().into_owned(),
    }
}

/// Decodes an object body (`k8s\0` + `runtime.Unknown`) into `T`, through the table of the
/// kind its envelope names.
pub fn decode_object<'de, T: Deserialize<'de>>(
    body: &'de [u8],
    options: DecodeOptions,
) -> Result<T> {
    let u = unwrap(body)?;
    let schema = schema_for(&u.api_version, &u.kind).ok_or_else(|| unknown_kind(&u))?;
    from_message(u.raw, schema.fields, options)
}

/// Decodes an object's message (without envelope) of a known kind into `T`.
pub fn decode_message<'de, T: Deserialize<'de>>(
    message: &'de [u8],
    schema: &Schema,
    options: DecodeOptions,
) -> Result<T> {
    from_message(message, schema.fields, options)
}

/// Decodes an object body into its JSON form (with `apiVersion` and `kind`), strictly: a
/// field the table does not know is refused unless it holds only zero values. For bodies a
/// client sends.
pub fn object_to_json(body: &[u8]) -> Result<Value> {
    let u = unwrap(body)?;
    let schema = schema_for(&u.api_version, &u.kind).ok_or_else(|| unknown_kind(&u))?;
    let mut obj = to_json(u.raw, schema.fields)?;
    if let Value::Object(m) = &mut obj {
        m.insert(
            "apiVersion".into(),
            Value::String(u.api_version.into_owned()),
        );
        m.insert("kind".into(), Value::String(u.kind.into_owned()));
    }
    Ok(obj)
}

/// The message of an object's JSON form (without envelope), through its kind's table.
pub fn encode_message(object: &Map<String, Value>, schema: &Schema) -> Result<Vec<u8>> {
    let mut out = Vec::new();
    from_json(
        object,
        schema.fields,
        &["apiVersion", "kind"],
        &Path::Root,
        &mut out,
    )?;
    Ok(out)
}

/// Encodes an object's JSON form (with `apiVersion` and `kind`) as the protobuf serializer
/// writes it. A field the kind's table does not know is refused.
pub fn encode_object(object: &Value) -> Result<Vec<u8>> {
    let (obj, schema) = typed(object)?;
    let raw = encode_message(obj, schema)?;
    Ok(wrap(schema.api_version(), schema.kind(), &raw))
}

fn typed(object: &Value) -> Result<(&Map<String, Value>, &'static Schema)> {
    let obj = object
        .as_object()
        .ok_or_else(|| Error::Invalid("an object is not a JSON object".into()))?;
    let field = |name| obj.get(name).and_then(Value::as_str).unwrap_or_default();
    let (api_version, kind) = (field("apiVersion"), field("kind"));
    let schema = schema_for(api_version, kind).ok_or_else(|| Error::UnknownKind {
        api_version: api_version.to_owned(),
        kind: kind.to_owned(),
    })?;
    Ok((obj, schema))
}

/// Encodes a list: `metadata` (a `ListMeta`'s JSON form) and the items' JSON forms, as a
/// `<Kind>List` of the item schema's group and version.
pub fn encode_list<'v>(
    schema: &Schema,
    metadata: &Map<String, Value>,
    items: impl IntoIterator<Item = &'v Value>,
) -> Result<Vec<u8>> {
    list_body(schema, metadata, |list| {
        let root = Path::Root;
        let items_path = Path::Field(&root, "items");
        for (i, item) in items.into_iter().enumerate() {
            let obj = item
                .as_object()
                .ok_or_else(|| Error::Invalid(format!("items[{i}] is not an object")))?;
            let path = Path::Index(&items_path, i);
            wire::put_message_field(2, list, |buf| {
                from_json(obj, schema.fields, &["apiVersion", "kind"], &path, buf)
            })?;
        }
        Ok(())
    })
}

/// Encodes a list from `metadata` (a `ListMeta`'s JSON form) and the items' messages (as
/// [`encode_message`] writes them), as a `<Kind>List` of the item schema's group and version.
pub fn encode_list_of_messages<'m>(
    schema: &Schema,
    metadata: &Map<String, Value>,
    items: impl IntoIterator<Item = &'m [u8]>,
) -> Result<Vec<u8>> {
    list_body(schema, metadata, |list| {
        for item in items {
            wire::put_bytes_field(2, item, list);
        }
        Ok(())
    })
}

/// A `<Kind>List` body: its metadata (field 1), the items `put_items` writes (field 2), in the
/// `k8s\0` envelope.
fn list_body(
    schema: &Schema,
    metadata: &Map<String, Value>,
    put_items: impl FnOnce(&mut Vec<u8>) -> Result<()>,
) -> Result<Vec<u8>> {
    let mut list = Vec::new();
    let root = Path::Root;
    let meta_path = Path::Field(&root, "metadata");
    wire::put_message_field(1, &mut list, |buf| {
        from_json(metadata, LIST_META, &[], &meta_path, buf)
    })?;
    put_items(&mut list)?;
    Ok(wrap(
        schema.api_version(),
        &format!("{}List", schema.kind()),
        &list,
    ))
}

/// A list's metadata.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ListMeta {
    /// `resourceVersion`.
    pub resource_version: String,
    /// `continue` (empty on the last page).
    pub continue_token: String,
    /// `remainingItemCount`.
    pub remaining_item_count: Option<i64>,
}

/// A decoded list.
#[derive(Clone, Debug, PartialEq)]
pub struct List<T> {
    /// The list's metadata.
    pub metadata: ListMeta,
    /// The items, in order.
    pub items: Vec<T>,
}

/// An item of a list that did not decode.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{kind} {name}: {source}")]
pub struct ItemError {
    /// The item's kind.
    pub kind: String,
    /// The item's `namespace/name` (or `name`), `<unknown name>` when unreadable.
    pub name: String,
    /// Why it did not decode.
    #[source]
    pub source: Error,
}

fn read_list_meta(b: &[u8]) -> Result<ListMeta> {
    let mut meta = ListMeta::default();
    for f in Reader::new(b) {
        let f = f?;
        #[allow(clippy::cast_possible_wrap)]
        match (f.number, f.wire) {
            (2, wire::LEN) => meta.resource_version = String::from_utf8_lossy(f.data).into_owned(),
            (3, wire::LEN) => meta.continue_token = String::from_utf8_lossy(f.data).into_owned(),
            (4, wire::VARINT) => meta.remaining_item_count = Some(f.varint as i64),
            _ => {}
        }
    }
    Ok(meta)
}

/// Decodes a list body (`k8s\0` + `runtime.Unknown` of a `<Kind>List`), each item through its
/// kind's table straight into `T`. An item that does not decode is named in the error.
pub fn decode_list<'de, T: Deserialize<'de>>(
    body: &'de [u8],
    options: DecodeOptions,
) -> Result<List<T>, ItemError> {
    let whole = |source| ItemError {
        kind: "list".into(),
        name: String::new(),
        source,
    };
    let u = unwrap(body).map_err(whole)?;
    let schema = item_schema_for(&u.api_version, &u.kind).ok_or_else(|| whole(unknown_kind(&u)))?;
    let mut list = List {
        metadata: ListMeta::default(),
        items: Vec::new(),
    };
    for f in Reader::new(u.raw) {
        let f = f.map_err(whole)?;
        match (f.number, f.wire) {
            (1, wire::LEN) => list.metadata = read_list_meta(f.data).map_err(whole)?,
            (2, wire::LEN) => {
                let item =
                    from_message(f.data, schema.fields, options).map_err(|source| ItemError {
                        kind: schema.kind().to_owned(),
                        name: describe(f.data),
                        source,
                    })?;
                list.items.push(item);
            }
            _ => {}
        }
    }
    Ok(list)
}

/// A list body taken apart without decoding its items: the list's type, its metadata and each
/// item's message (without envelope), in order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ListMessages<'a> {
    /// `typeMeta.apiVersion` of the list.
    pub api_version: Cow<'a, str>,
    /// `typeMeta.kind` of the list (`ConfigMapList`).
    pub kind: Cow<'a, str>,
    /// The list's metadata.
    pub metadata: ListMeta,
    /// The items' messages.
    pub items: Vec<&'a [u8]>,
}

/// Takes a list body (`k8s\0` + `runtime.Unknown` of a `<Kind>List`) apart into its metadata
/// and its items' messages, whatever the kind (the items can then be decoded one by one, with
/// [`decode_message`] or [`message_to_json`]).
pub fn list_messages(body: &[u8]) -> Result<ListMessages<'_>> {
    let u = unwrap(body)?;
    let mut list = ListMessages {
        api_version: u.api_version,
        kind: u.kind,
        metadata: ListMeta::default(),
        items: Vec::new(),
    };
    for f in Reader::new(u.raw) {
        let f = f?;
        match (f.number, f.wire) {
            (1, wire::LEN) => list.metadata = read_list_meta(f.data)?,
            (2, wire::LEN) => list.items.push(f.data),
            _ => {}
        }
    }
    Ok(list)
}

/// Decodes an object's message (without envelope) of a known kind into its JSON form (without
/// `apiVersion` and `kind`), strictly, as [`object_to_json`] does.
pub fn message_to_json(message: &[u8], schema: &Schema) -> Result<Value> {
    to_json(message, schema.fields)
}

/// The `namespace/name` (or `name`) of an object's message, `<unknown name>` when its
/// metadata cannot be read.
#[must_use]
pub fn describe(message: &[u8]) -> String {
    #[derive(Deserialize, Default)]
    struct Meta {
        name: Option<String>,
        namespace: Option<String>,
    }
    #[derive(Deserialize, Default)]
    struct Partial {
        #[serde(default)]
        metadata: Meta,
    }
    const TABLE: &[crate::schema::Field] = &[(
        1,
        "metadata",
        crate::schema::Kind::Msg(crate::schema::OBJECT_META),
    )];
    let p: Partial = from_message(
        message,
        TABLE,
        DecodeOptions::default().skip_managed_fields(true),
    )
    .unwrap_or_default();
    match (p.metadata.namespace, p.metadata.name) {
        (Some(ns), Some(name)) if !ns.is_empty() => format!("{ns}/{name}"),
        (_, Some(name)) => name,
        _ => "<unknown name>".into(),
    }
}

/// A watch event: its type and its object's body (`k8s\0` + `runtime.Unknown`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WatchEvent<'a> {
    /// `ADDED`, `MODIFIED`, `DELETED`, `BOOKMARK` or `ERROR`.
    pub event_type: Cow<'a, str>,
    /// The object as the serializer writes it.
    pub object: &'a [u8],
}

/// Decodes one watch frame (a `metav1.WatchEvent`; one wrapped in `k8s\0` + `runtime.Unknown`
/// is read too).
pub fn decode_watch_event(frame: &[u8]) -> Result<WatchEvent<'_>> {
    let message = if frame.starts_with(MAGIC) {
        unwrap(frame)?.raw
    } else {
        frame
    };
    let mut event = WatchEvent {
        event_type: Cow::Borrowed(""),
        object: &[],
    };
    for f in Reader::new(message) {
        let f = f?;
        match (f.number, f.wire) {
            (1, wire::LEN) => event.event_type = String::from_utf8_lossy(f.data),
            (2, wire::LEN) => {
                for r in Reader::new(f.data) {
                    let r = r?;
                    if (r.number, r.wire) == (1, wire::LEN) {
                        event.object = r.data;
                    }
                }
            }
            (1 | 2, found) => {
                return Err(Error::WrongWireType {
                    field: f.number,
                    name: if f.number == 1 { "type" } else { "object" },
                    found,
                    expected: wire::LEN,
                });
            }
            _ => {}
        }
    }
    Ok(event)
}

/// One watch frame: the 4-byte big-endian length and a `metav1.WatchEvent` of that type
/// around an object body (`k8s\0` + `runtime.Unknown`).
///
/// # Errors
///
/// [`Error::FrameTooLarge`] for an event of 4 GiB or more.
pub fn encode_watch_frame(event_type: &str, object: &[u8]) -> Result<Vec<u8>> {
    let mut raw_extension = Vec::with_capacity(object.len() + 6);
    wire::put_bytes_field(1, object, &mut raw_extension);
    let mut event = Vec::with_capacity(raw_extension.len() + event_type.len() + 8);
    wire::put_bytes_field(1, event_type.as_bytes(), &mut event);
    wire::put_bytes_field(2, &raw_extension, &mut event);
    let len = u32::try_from(event.len()).map_err(|_| Error::FrameTooLarge {
        len: event.len(),
        limit: u32::MAX as usize,
    })?;
    let mut out = Vec::with_capacity(event.len() + 4);
    out.extend_from_slice(&len.to_be_bytes());
    out.extend_from_slice(&event);
    Ok(out)
}

/// Splits a watch stream into its frames as its chunks arrive. A frame announcing more than
/// the limit is refused as soon as its length is read, so the buffer never holds more than
/// the limit plus one chunk.
#[derive(Debug)]
pub struct FrameReader {
    buffer: BytesMut,
    limit: usize,
}

impl FrameReader {
    /// A reader refusing frames longer than `limit` bytes.
    #[must_use]
    pub fn new(limit: usize) -> Self {
        Self {
            buffer: BytesMut::new(),
            limit,
        }
    }

    /// Adds the next chunk of the stream.
    pub fn push(&mut self, chunk: &[u8]) {
        self.buffer.extend_from_slice(chunk);
    }

    /// The next whole frame (without its length), `Ok(None)` when more bytes are needed.
    ///
    /// # Errors
    ///
    /// [`Error::FrameTooLarge`] when the next frame is longer than the limit.
    pub fn next_frame(&mut self) -> Result<Option<Bytes>> {
        let Some(head) = self.buffer.get(..4) else {
            return Ok(None);
        };
        let len = u32::from_be_bytes([head[0], head[1], head[2], head[3]]) as usize;
        if len > self.limit {
            return Err(Error::FrameTooLarge {
                len,
                limit: self.limit,
            });
        }
        if self.buffer.len() < 4 + len {
            return Ok(None);
        }
        self.buffer.advance(4);
        Ok(Some(self.buffer.split_to(len).freeze()))
    }

    /// Checks, once the stream has ended, that it did not end inside a frame.
    ///
    /// # Errors
    ///
    /// [`Error::Truncated`] (field 0) when bytes of an unfinished frame are left.
    pub fn finish(&mut self) -> Result<()> {
        if self.buffer.is_empty() {
            Ok(())
        } else {
            self.buffer.clear();
            Err(Error::Truncated { field: 0 })
        }
    }
}
