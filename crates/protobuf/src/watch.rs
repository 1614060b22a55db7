//! Watch streams: frames of a 4-byte big-endian length followed by a `metav1.WatchEvent`
//! (`type` = 1, `object` = 2, a `runtime.RawExtension` whose `raw` = 1 holds the object as the
//! serializer writes it, with its `k8s\0` envelope); the frames themselves have no envelope
//! (the stream serializer is the raw one).

use std::borrow::Cow;

use bytes::{Buf, Bytes, BytesMut};

use crate::MAGIC;
use crate::envelope::unwrap;
use crate::error::{Error, Result};
use crate::wire::{self, Reader};

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
pub fn decode_event(frame: &[u8]) -> Result<WatchEvent<'_>> {
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
pub fn encode_frame(event_type: &str, object: &[u8]) -> Result<Vec<u8>> {
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
