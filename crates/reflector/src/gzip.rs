//! Response bodies the API server compressed (`Content-Encoding: gzip`), decompressed as they
//! stream in: a watch-list's events can be decoded as soon as the server flushed them, and a
//! list's compressed bytes are never held whole.

use std::io;

use async_compression::tokio::bufread::GzipDecoder;
use bytes::{Bytes, BytesMut};
use futures::{Stream, StreamExt, TryStreamExt};
use http_body_util::BodyExt;
use tokio_util::io::{ReaderStream, StreamReader};

use crate::error::Error;

/// How much decompressed data one chunk of the decompressed stream holds at most.
const CHUNK_BYTES: usize = 64 * 1024;

/// The `Accept-Encoding` of a request that takes a compressed answer (client-go's, through Go's
/// transport: `gzip`), and of one that does not.
pub(crate) fn accept_encoding(gzip: bool) -> &'static str {
    if gzip { "gzip" } else { "identity" }
}

/// Whether the response body is gzip-compressed.
pub(crate) fn is_gzip(headers: &http::HeaderMap) -> bool {
    headers
        .get(http::header::CONTENT_ENCODING)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.trim().eq_ignore_ascii_case("gzip"))
}

/// Why reading a compressed body failed.
#[derive(Debug, thiserror::Error)]
pub(crate) enum GunzipError {
    /// The bytes are not gzip (or not valid gzip): [`Error::Decompress`].
    #[error("{0}")]
    Corrupt(#[source] io::Error),
    /// The body could not be read (the connection broke, the stream ended mid-member):
    /// [`Error::Read`].
    #[error("{0}")]
    Read(#[source] io::Error),
}

impl GunzipError {
    fn into_error(self) -> Error {
        match self {
            GunzipError::Corrupt(e) => Error::Decompress(e),
            GunzipError::Read(e) => Error::Read(Box::new(e)),
        }
    }
}

/// The error a body stream's item error becomes: [`Error::Decompress`] for bytes that do not
/// decompress, else [`Error::Read`].
pub(crate) fn read_error<E>(e: E) -> Error
where
    E: std::error::Error + Send + Sync + 'static,
{
    let boxed: Box<dyn std::error::Error + Send + Sync> = Box::new(e);
    match boxed.downcast::<GunzipError>() {
        Ok(gunzip) => gunzip.into_error(),
        Err(other) => Error::Read(other),
    }
}

/// Decompresses `body` as it streams in (chunks of at most 64 KiB of decompressed data).
pub(crate) fn gunzip<S, E>(body: S) -> impl Stream<Item = Result<Bytes, GunzipError>> + Send
where
    S: Stream<Item = Result<Bytes, E>> + Send + 'static,
    E: Into<Box<dyn std::error::Error + Send + Sync>>,
{
    let reader = StreamReader::new(body.map_err(io::Error::other));
    let mut decoder = GzipDecoder::new(reader);
    // A body may hold several gzip members back to back.
    decoder.multiple_members(true);
    ReaderStream::with_capacity(decoder, CHUNK_BYTES).map_err(|e| {
        if e.kind() == io::ErrorKind::InvalidData {
            GunzipError::Corrupt(e)
        } else {
            GunzipError::Read(e)
        }
    })
}

/// A whole response body, decompressed (as it streams in) when `gzip`.
pub(crate) async fn collect(body: kube::client::Body, gzip: bool) -> Result<Bytes, Error> {
    if !gzip {
        return body
            .collect()
            .await
            .map(|c| c.to_bytes())
            .map_err(|e| Error::Read(Box::new(e)));
    }
    collect_gzip(body.into_data_stream()).await
}

/// A whole gzip-compressed body, decompressed as it streams in.
pub(crate) async fn collect_gzip<S, E>(body: S) -> Result<Bytes, Error>
where
    S: Stream<Item = Result<Bytes, E>> + Send + 'static,
    E: Into<Box<dyn std::error::Error + Send + Sync>>,
{
    let mut out = BytesMut::new();
    let mut data = std::pin::pin!(gunzip(body));
    while let Some(chunk) = data.next().await {
        out.extend_from_slice(&chunk.map_err(GunzipError::into_error)?);
    }
    Ok(out.freeze())
}

#[cfg(test)]
mod tests {
    use std::io::Write;

    use super::*;

    fn gzip(data: &[u8]) -> Vec<u8> {
        let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        e.write_all(data).unwrap_or_else(|err| panic!("{err}"));
        e.finish().unwrap_or_else(|err| panic!("{err}"))
    }

    fn chunks(bytes: &[u8], size: usize) -> Vec<Result<Bytes, io::Error>> {
        bytes
            .chunks(size)
            .map(|c| Ok(Bytes::copy_from_slice(c)))
            .collect()
    }

    #[tokio::test]
    async fn a_compressed_body_should_decompress_across_any_chunking() {
        let data: Vec<u8> = (0..200_000u32)
            .flat_map(|i| (i % 251).to_le_bytes())
            .collect();
        let compressed = gzip(&data);
        for size in [1, 7, 4096, compressed.len()] {
            let body = futures::stream::iter(chunks(&compressed, size));
            let out = collect_gzip(body).await.unwrap_or_else(|e| panic!("{e}"));
            assert_eq!(out.as_ref(), data.as_slice(), "chunks of {size}");
        }
    }

    #[tokio::test]
    async fn a_flushed_member_should_be_readable_before_the_body_ends() {
        // The server flushes after each event: the decoder yields it before more arrives.
        let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        e.write_all(b"{\"type\":\"ADDED\"}\n")
            .and_then(|()| e.flush())
            .unwrap_or_else(|err| panic!("{err}"));
        let first = Bytes::from(std::mem::take(e.get_mut()));
        let (tx, rx) = futures::channel::mpsc::unbounded::<Result<Bytes, io::Error>>();
        tx.unbounded_send(Ok(first))
            .unwrap_or_else(|err| panic!("{err}"));
        let mut data = std::pin::pin!(gunzip(rx));
        let got = data.next().await;
        assert_eq!(
            got.and_then(Result::ok).as_deref(),
            Some(b"{\"type\":\"ADDED\"}\n".as_slice())
        );
        drop(tx);
    }

    #[tokio::test]
    async fn bytes_that_are_not_gzip_should_be_a_typed_decompress_error() {
        let body = futures::stream::iter(chunks(b"this is not gzip at all, not even close", 5));
        let err = collect_gzip(body).await.err();
        assert!(matches!(err, Some(Error::Decompress(_))), "{err:?}");
        let mut compressed = gzip(b"hello world, hello world");
        let n = compressed.len();
        compressed[n / 2] ^= 0xff;
        compressed[n - 6] ^= 0xff;
        let body = futures::stream::iter(chunks(&compressed, 3));
        let err = collect_gzip(body).await.err();
        assert!(matches!(err, Some(Error::Decompress(_))), "{err:?}");
    }

    #[tokio::test]
    async fn a_broken_transport_should_stay_a_read_error() {
        let compressed = gzip(b"hello world");
        let body = futures::stream::iter(vec![
            Ok(Bytes::copy_from_slice(&compressed[..5])),
            Err(io::Error::new(io::ErrorKind::ConnectionReset, "reset")),
        ]);
        let err = collect_gzip(body).await.err();
        assert!(matches!(err, Some(Error::Read(_))), "{err:?}");
        let mapped = read_error(GunzipError::Corrupt(io::Error::new(
            io::ErrorKind::InvalidData,
            "bad",
        )));
        assert!(matches!(mapped, Error::Decompress(_)));
    }
}
