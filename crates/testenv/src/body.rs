//! The response body: a whole JSON document, or a stream of watch events; either can be
//! gzip-compressed as kube-apiserver compresses responses (see [`compress`]).

use std::convert::Infallible;
use std::io::Write;
use std::pin::Pin;
use std::task::{Context, Poll};

use bytes::Bytes;
use flate2::Compression;
use flate2::write::GzEncoder;
use http::{HeaderValue, Response, header};
use hyper::body::{Frame, SizeHint};
use tokio::sync::mpsc;

/// A response body.
#[derive(Debug)]
pub(crate) enum Body {
    /// A complete body, sent at once.
    Full(Option<Bytes>),
    /// A stream of chunks (one watch event each), ending when the sender is dropped.
    Stream(mpsc::Receiver<Bytes>),
    /// A stream of chunks, gzip-compressed as they come.
    Gzip(Box<GzipStream>),
}

impl Body {
    pub(crate) fn full(bytes: impl Into<Bytes>) -> Self {
        Body::Full(Some(bytes.into()))
    }
}

/// kube-apiserver compresses a response only when its first write is larger than this
/// (`defaultGzipThresholdBytes` of its `responsewriters`: 128 KiB).
pub(crate) const GZIP_THRESHOLD_BYTES: usize = 128 * 1024;

/// Whether the client accepts gzip, read as kube-apiserver's `negotiateContentEncoding` does:
/// one of the comma-separated tokens of `Accept-Encoding` is exactly `gzip` (a token with
/// parameters, such as `gzip;q=1`, does not count).
pub(crate) fn accepts_gzip(accept_encoding: &str) -> bool {
    accept_encoding.split(',').any(|t| t.trim() == "gzip")
}

/// Compresses a response for a client that accepts gzip, as kube-apiserver (v1.37, with
/// `APIResponseCompression` on, its default) does: a whole body (an object, a list, a status)
/// only when it is larger than [`GZIP_THRESHOLD_BYTES`]; the event stream of a streaming list
/// (`sendInitialEvents=true`) from its first byte, flushed whenever no further event is ready;
/// a plain watch never. Compression uses gzip level 1, as kube-apiserver's.
pub(crate) fn compress(resp: Response<Body>, watch_list: bool) -> Response<Body> {
    let (mut parts, body) = resp.into_parts();
    let body = match body {
        Body::Full(Some(bytes)) if bytes.len() > GZIP_THRESHOLD_BYTES => {
            let mut encoder =
                GzEncoder::new(Vec::with_capacity(bytes.len() / 4), Compression::fast());
            // Writing to a `Vec` cannot fail.
            match encoder.write_all(&bytes).and_then(|()| encoder.finish()) {
                Ok(compressed) => Body::full(compressed),
                Err(_) => return Response::from_parts(parts, Body::Full(Some(bytes))),
            }
        }
        Body::Stream(rx) if watch_list => Body::Gzip(Box::new(GzipStream::new(rx))),
        other => return Response::from_parts(parts, other),
    };
    parts
        .headers
        .insert(header::CONTENT_ENCODING, HeaderValue::from_static("gzip"));
    parts
        .headers
        .append(header::VARY, HeaderValue::from_static("Accept-Encoding"));
    Response::from_parts(parts, body)
}

/// A stream of chunks compressed as they arrive: every chunk ready is written to the encoder,
/// then the encoder is flushed (a sync flush, so the client can decode all of it) and its output
/// sent; the gzip trailer goes out when the stream ends.
#[derive(Debug)]
pub(crate) struct GzipStream {
    rx: mpsc::Receiver<Bytes>,
    encoder: Option<GzEncoder<Vec<u8>>>,
}

/// Output is sent once this much is ready, even while more chunks are queued.
const GZIP_FRAME_BYTES: usize = 64 * 1024;

impl GzipStream {
    fn new(rx: mpsc::Receiver<Bytes>) -> Self {
        Self {
            rx,
            encoder: Some(GzEncoder::new(Vec::new(), Compression::fast())),
        }
    }

    fn poll(&mut self, cx: &mut Context<'_>) -> Poll<Option<Bytes>> {
        let Some(encoder) = self.encoder.as_mut() else {
            return Poll::Ready(None);
        };
        let mut wrote = false;
        loop {
            match self.rx.poll_recv(cx) {
                Poll::Ready(Some(chunk)) => {
                    // Writing to a `Vec` cannot fail.
                    let _ = encoder.write_all(&chunk);
                    wrote = true;
                    if encoder.get_ref().len() >= GZIP_FRAME_BYTES {
                        break;
                    }
                }
                Poll::Ready(None) => {
                    let out = self
                        .encoder
                        .take()
                        .and_then(|e| e.finish().ok())
                        .unwrap_or_default();
                    return Poll::Ready(Some(Bytes::from(out)));
                }
                Poll::Pending if wrote => break,
                Poll::Pending => return Poll::Pending,
            }
        }
        let _ = encoder.flush();
        Poll::Ready(Some(Bytes::from(std::mem::take(encoder.get_mut()))))
    }
}

impl hyper::body::Body for Body {
    type Data = Bytes;
    type Error = Infallible;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Infallible>>> {
        match self.get_mut() {
            Body::Full(bytes) => Poll::Ready(bytes.take().map(|b| Ok(Frame::data(b)))),
            Body::Stream(rx) => rx.poll_recv(cx).map(|c| c.map(|b| Ok(Frame::data(b)))),
            Body::Gzip(g) => g.poll(cx).map(|c| c.map(|b| Ok(Frame::data(b)))),
        }
    }

    fn is_end_stream(&self) -> bool {
        match self {
            Body::Full(None) => true,
            Body::Gzip(g) => g.encoder.is_none(),
            _ => false,
        }
    }

    fn size_hint(&self) -> SizeHint {
        match self {
            Body::Full(Some(b)) => SizeHint::with_exact(b.len() as u64),
            Body::Full(None) => SizeHint::with_exact(0),
            Body::Stream(_) | Body::Gzip(_) => SizeHint::default(),
        }
    }
}

#[cfg(test)]
mod tests {
    use std::io::Read;

    use http_body_util::BodyExt;

    use super::*;

    fn gunzip(bytes: &[u8]) -> Vec<u8> {
        let mut out = Vec::new();
        flate2::read::GzDecoder::new(bytes)
            .read_to_end(&mut out)
            .unwrap_or_else(|e| panic!("gunzip: {e}"));
        out
    }

    #[test]
    fn accept_encoding_should_be_read_as_kube_apiserver_reads_it() {
        assert!(accepts_gzip("gzip"));
        assert!(accepts_gzip("deflate, gzip"));
        assert!(accepts_gzip(" gzip ,br"));
        assert!(!accepts_gzip("gzip;q=1.0"));
        assert!(!accepts_gzip("identity"));
        assert!(!accepts_gzip(""));
    }

    #[tokio::test]
    async fn only_bodies_over_the_threshold_should_be_compressed() {
        let small = compress(
            Response::new(Body::full(vec![b'a'; GZIP_THRESHOLD_BYTES])),
            false,
        );
        assert!(small.headers().get(header::CONTENT_ENCODING).is_none());
        let big = vec![b'a'; GZIP_THRESHOLD_BYTES + 1];
        let resp = compress(Response::new(Body::full(big.clone())), false);
        assert_eq!(resp.headers()[header::CONTENT_ENCODING], "gzip");
        assert_eq!(resp.headers()[header::VARY], "Accept-Encoding");
        let body = resp.into_body().collect().await.map(|b| b.to_bytes());
        let body = body.unwrap_or_else(|e| match e {});
        assert!(body.len() < big.len() / 10);
        assert_eq!(gunzip(&body), big);
    }

    #[tokio::test]
    async fn a_plain_watch_should_not_be_compressed_and_a_watch_list_should_stream() {
        let (_tx, rx) = mpsc::channel::<Bytes>(4);
        let plain = compress(Response::new(Body::Stream(rx)), false);
        assert!(plain.headers().get(header::CONTENT_ENCODING).is_none());

        let (tx, rx) = mpsc::channel::<Bytes>(4);
        let resp = compress(Response::new(Body::Stream(rx)), true);
        assert_eq!(resp.headers()[header::CONTENT_ENCODING], "gzip");
        let mut body = resp.into_body();
        tx.send(Bytes::from_static(b"{\"type\":\"ADDED\"}\n"))
            .await
            .unwrap_or_else(|e| panic!("send: {e}"));
        // The first event can be decoded before the stream ends (a sync flush).
        let first = body.frame().await;
        let first = first
            .and_then(|f| f.ok())
            .and_then(|f| f.into_data().ok())
            .unwrap_or_default();
        let mut decoder = flate2::write::GzDecoder::new(Vec::new());
        decoder
            .write_all(&first)
            .and_then(|()| decoder.flush())
            .unwrap_or_else(|e| panic!("decode: {e}"));
        assert_eq!(decoder.get_ref().as_slice(), b"{\"type\":\"ADDED\"}\n");
        tx.send(Bytes::from_static(b"{\"type\":\"BOOKMARK\"}\n"))
            .await
            .unwrap_or_else(|e| panic!("send: {e}"));
        drop(tx);
        let rest = body.collect().await.map(|b| b.to_bytes());
        let rest = rest.unwrap_or_else(|e| match e {});
        let whole = [first.as_ref(), rest.as_ref()].concat();
        assert_eq!(
            gunzip(&whole),
            b"{\"type\":\"ADDED\"}\n{\"type\":\"BOOKMARK\"}\n"
        );
    }
}
