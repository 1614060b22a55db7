//! The envelope of every protobuf body: the `k8s\0` prefix ([`MAGIC`]) and a
//! `runtime.Unknown` (`typeMeta` = 1 with `apiVersion` = 1 and `kind` = 2, `raw` = 2,
//! `contentEncoding` = 3, `contentType` = 4) whose `raw` is the object's or list's message, as
//! kube-apiserver's protobuf serializer writes it.

use std::borrow::Cow;

use crate::MAGIC;
use crate::error::{Error, Result};
use crate::wire::{self, Reader};

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

pub(crate) fn unknown_kind(u: &Unknown<'_>) -> Error {
    Error::UnknownKind {
        api_version: u.api_version.clone().into_owned(),
        kind: u.kind.clone().into_owned(),
    }
}
