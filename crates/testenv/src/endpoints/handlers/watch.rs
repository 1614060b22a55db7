//! Watches: a chunked stream of JSON lines (`{"type":"ADDED","object":{...}}`), or of
//! length-delimited protobuf `WatchEvent` frames for a client that asks for protobuf first,
//! replayed from the history from the requested resource version, with bookmarks, timeouts
//! and watch-list.

use std::sync::Arc;
use std::time::Duration;

use bytes::{BufMut, Bytes, BytesMut};
use http::{HeaderValue, Response, header};
use serde_json::{Value, json};
use tokio::sync::mpsc;
use tokio::time::Instant;

use crate::body::Body;
use crate::endpoints::Target;
use crate::endpoints::handlers::list::{ListOptions, list_options};
use crate::endpoints::handlers::rest::served_json;
use crate::server::{Request, Shared, error_response};
use crate::status::ApiError;
use crate::store::{EventType, ListQuery, Stored, VersionError};

/// How many history events a watch reads per lock.
const BATCH: usize = 512;

/// One event line.
fn event_line(kind: &str, object: &[u8]) -> Bytes {
    let mut b = BytesMut::with_capacity(object.len() + 32);
    b.put_slice(b"{\"type\":\"");
    b.put_slice(kind.as_bytes());
    b.put_slice(b"\",\"object\":");
    b.put_slice(object);
    b.put_slice(b"}\n");
    b.freeze()
}

fn bookmark_object(t: &Target, rv: u64, initial_events_end: bool) -> Value {
    // An empty object of the kind: kube-apiserver v1.36 omits its zero `creationTimestamp`.
    let mut metadata = json!({"resourceVersion": rv.to_string()});
    if initial_events_end {
        metadata["annotations"] = json!({"k8s.io/initial-events-end": "true"});
    }
    let (kind, api_version) = if t.metadata_only {
        (
            "PartialObjectMetadata".to_owned(),
            "meta.k8s.io/v1".to_owned(),
        )
    } else {
        (t.def.kind.clone(), t.def.api_version())
    };
    json!({"kind": kind, "apiVersion": api_version, "metadata": metadata})
}

/// How a watch writes its events.
#[derive(Clone, Copy)]
enum Encoding {
    Json,
    /// Length-delimited protobuf frames of objects of this table's kind.
    Protobuf(&'static kcr_protobuf::Schema),
}

impl Encoding {
    /// One event about a stored object.
    fn event(self, t: &Target, kind: &str, object: &Stored) -> Bytes {
        match self {
            Encoding::Json => event_line(kind, &served_json(t, object)),
            Encoding::Protobuf(schema) => {
                self.frame_or_error(crate::protobuf::watch_frame(schema, kind, object))
            }
        }
    }

    /// One event about an object's JSON form.
    fn event_of(self, kind: &str, object: &Value) -> Bytes {
        match self {
            Encoding::Json => event_line(kind, &serde_json::to_vec(object).unwrap_or_default()),
            Encoding::Protobuf(_) => {
                self.frame_or_error(crate::protobuf::watch_frame_of(kind, object))
            }
        }
    }

    fn frame_or_error(self, frame: Result<Vec<u8>, crate::protobuf::Unsupported>) -> Bytes {
        match frame {
            Ok(frame) => Bytes::from(frame),
            // The tables of the kinds watched in protobuf cover every field the server writes;
            // should one not, the watch ends with an error rather than lose it.
            Err(e) => self.error(&ApiError::internal(format!(
                "unable to encode the watch event as protobuf: {}",
                e.0
            ))),
        }
    }

    fn bookmark(self, t: &Target, rv: u64, initial_events_end: bool) -> Bytes {
        self.event_of("BOOKMARK", &bookmark_object(t, rv, initial_events_end))
    }

    fn error(self, e: &ApiError) -> Bytes {
        let status = e.to_status();
        match self {
            Encoding::Json => event_line("ERROR", &serde_json::to_vec(&status).unwrap_or_default()),
            Encoding::Protobuf(_) => crate::protobuf::watch_frame_of("ERROR", &status)
                .map(Bytes::from)
                .unwrap_or_default(),
        }
    }
}

/// Starts a watch: answers `200` at once and streams events until the client goes away, the
/// timeout passes, or a fault closes it.
pub(crate) fn handle(shared: &Arc<Shared>, req: &Request, t: &Target) -> Response<Body> {
    let o = match list_options(req, &t.def, true, shared.options.sharded_list_and_watch) {
        Ok(o) => o,
        Err(e) => return error_response(&e),
    };
    let requested = match o.rv_number() {
        Ok(r) => r,
        Err(e) => return error_response(&e),
    };
    let initial = match o.send_initial_events {
        Some(send) => send,
        None => matches!(requested, None | Some(0)),
    };
    // Kinds whose tables cover every field the server writes are watched in protobuf when
    // asked (a watch cannot fall back to JSON halfway).
    let encoding = match t.protobuf {
        Some(schema) if schema.complete() => Encoding::Protobuf(schema),
        _ => Encoding::Json,
    };
    let (tx, rx) = mpsc::channel(shared.options.watch_buffer.max(1));
    let shared = shared.clone();
    let target = t.clone();
    tokio::spawn(async move {
        // A watch-list from a future version waits for it, then fails as kube-apiserver's cacher
        // does: with an ERROR event (see `crate::watch_cache`).
        if let (Some(r), Some(true)) = (requested, o.send_initial_events)
            && let Err(e) = crate::watch_cache::wait_until_fresh(&shared, r).await
        {
            let _ = tx.send(encoding.error(&e)).await;
            return;
        }
        // Subscribe before reading the state so no commit in between goes unnoticed.
        let changed = shared.changed.subscribe();
        let close = shared.close_watches.subscribe();
        let (initial_items, start_rv) = {
            let store = shared.store.lock();
            if initial {
                let keep = |v: &Value| o.matches(v);
                let q = ListQuery {
                    namespace: target.namespace.as_deref(),
                    at: None,
                    after: None,
                    limit: 0,
                    keep: &keep,
                    count_remaining: false,
                };
                match store.list(&target.def.storage, &q) {
                    Ok(page) => (page.items, page.rv),
                    Err(_) => (Vec::new(), store.rv()),
                }
            } else {
                match requested {
                    Some(r) if r > 0 => (Vec::new(), r),
                    _ => (Vec::new(), store.rv()),
                }
            }
        };
        let stream = WatchStream {
            shared,
            target,
            options: o,
            changed,
            close,
            tx,
            sent: 0,
            encoding,
        };
        stream.run(initial_items, start_rv).await;
    });
    let mut resp = Response::new(Body::Stream(rx));
    resp.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static(match encoding {
            Encoding::Json => "application/json",
            Encoding::Protobuf(_) => kcr_protobuf::WATCH_MEDIA_TYPE,
        }),
    );
    resp
}

struct WatchStream {
    shared: Arc<Shared>,
    target: Target,
    options: ListOptions,
    changed: tokio::sync::watch::Receiver<u64>,
    close: tokio::sync::watch::Receiver<u64>,
    tx: mpsc::Sender<Bytes>,
    /// Events sent (bookmarks not counted).
    sent: u64,
    encoding: Encoding,
}

/// Whether to stop after an event.
enum Flow {
    Continue,
    Stop,
}

impl WatchStream {
    async fn send(&mut self, line: Bytes, counts: bool) -> Flow {
        // A watch closed by `Faults::close_all_watches` sends nothing after the call, not even
        // an event committed before this task noticed the close.
        if self.close.has_changed().unwrap_or(true) {
            return Flow::Stop;
        }
        if counts {
            let delay = self.shared.faults.lock().watch_event_delay;
            if !delay.is_zero() {
                tokio::time::sleep(delay).await;
            }
        }
        if self.tx.send(line).await.is_err() {
            return Flow::Stop;
        }
        if counts {
            self.sent += 1;
            let limit = self.shared.faults.lock().close_watches_after;
            if limit.is_some_and(|n| self.sent >= n) {
                return Flow::Stop;
            }
        }
        Flow::Continue
    }

    fn in_scope(&self, namespace: Option<&str>) -> bool {
        self.target.namespace.is_none() || self.target.namespace.as_deref() == namespace
    }

    /// The type to send an event as, after selectors (`None`: not sent).
    fn visible(
        &self,
        kind: EventType,
        object: &Stored,
        prev: Option<&Stored>,
    ) -> Option<EventType> {
        let o = &self.options;
        if o.selects_everything() {
            return Some(kind);
        }
        let now = o.matches(&object.value);
        match kind {
            EventType::Added | EventType::Deleted => now.then_some(kind),
            EventType::Modified => {
                let before = prev.is_some_and(|p| o.matches(&p.value));
                match (before, now) {
                    (true, true) => Some(EventType::Modified),
                    (false, true) => Some(EventType::Added),
                    (true, false) => Some(EventType::Deleted),
                    (false, false) => None,
                }
            }
        }
    }

    async fn run(mut self, initial: Vec<Stored>, mut rv: u64) {
        for item in &initial {
            let line = self.encoding.event(&self.target, "ADDED", item);
            if let Flow::Stop = self.send(line, true).await {
                return;
            }
        }
        // The end of the initial events is marked by a bookmark, when bookmarks are allowed
        // (kube-apiserver v1.36 no longer requires them with `sendInitialEvents`), unless a
        // fault omits it.
        let omitted = self
            .shared
            .faults
            .lock()
            .omits_initial_events_end(&self.target.def.plural);
        if self.options.send_initial_events == Some(true)
            && self.options.allow_bookmarks
            && !omitted
        {
            let line = self.encoding.bookmark(&self.target, rv, true);
            if let Flow::Stop = self.send(line, false).await {
                return;
            }
        }
        let deadline = self
            .options
            .timeout_seconds
            .map(|s| Instant::now() + Duration::from_secs(s));
        let period = self
            .shared
            .options
            .bookmark_interval
            .max(Duration::from_millis(1));
        let mut next_bookmark = next_bookmark_time(Instant::now(), period, deadline);
        loop {
            // Send everything committed after `rv`.
            loop {
                let batch =
                    self.shared
                        .store
                        .lock()
                        .events_after(rv, &self.target.def.storage, BATCH);
                let (events, read_to) = match batch {
                    Ok(b) => b,
                    Err(VersionError::TooOld { compacted }) => {
                        let e =
                            ApiError::gone(format!("too old resource version: {rv} ({compacted})"));
                        let _ = self.tx.send(self.encoding.error(&e)).await;
                        return;
                    }
                    Err(VersionError::TooNew { .. }) => break,
                };
                let full = events.len() == BATCH;
                for e in &events {
                    if !self.in_scope(e.namespace.as_deref()) {
                        continue;
                    }
                    let Some(kind) = self.visible(e.kind, &e.object, e.prev.as_ref()) else {
                        continue;
                    };
                    let line = match (e.kind, kind, e.prev.as_ref()) {
                        // An object that left the selector: kube-apiserver's cacher sends its
                        // previous state (the one the watcher knows) at the change's version.
                        (EventType::Modified, EventType::Deleted, Some(prev)) => {
                            let mut old = (*prev.value).clone();
                            if let Some(meta) =
                                old.get_mut("metadata").and_then(Value::as_object_mut)
                            {
                                meta.insert(
                                    "resourceVersion".into(),
                                    Value::String(e.rv.to_string()),
                                );
                            }
                            self.encoding
                                .event(&self.target, kind.as_str(), &Stored::new(old))
                        }
                        _ => self.encoding.event(&self.target, kind.as_str(), &e.object),
                    };
                    if let Flow::Stop = self.send(line, true).await {
                        return;
                    }
                }
                rv = rv.max(read_to);
                if !full {
                    break;
                }
            }
            let timeout = async {
                match deadline {
                    Some(d) => tokio::time::sleep_until(d).await,
                    None => std::future::pending().await,
                }
            };
            tokio::select! {
                r = self.changed.changed() => if r.is_err() { return },
                _ = self.close.changed() => return,
                _ = self.tx.closed() => return,
                _ = timeout => return,
                _ = sleep_until_some(next_bookmark), if self.options.allow_bookmarks => {
                    // Report the newest version: everything up to it has been sent.
                    let current = self.shared.store.lock().rv();
                    if current > rv {
                        continue; // events first; then the bookmark
                    }
                    let line = self.encoding.bookmark(&self.target, rv, false);
                    if let Flow::Stop = self.send(line, false).await {
                        return;
                    }
                    next_bookmark = next_bookmark_time(Instant::now(), period, deadline);
                }
            }
        }
    }
}

/// When a watch sends its next bookmark, as kube-apiserver's watch cache schedules them: about
/// every `period` (a minute by default) and 2 s before the watch's timeout, whichever comes
/// first; `None` when that moment has passed (a watch shorter than 2 s gets no bookmark).
fn next_bookmark_time(
    now: Instant,
    period: Duration,
    deadline: Option<Instant>,
) -> Option<Instant> {
    let heartbeat = now + period;
    let Some(deadline) = deadline else {
        return Some(heartbeat);
    };
    let before_timeout = deadline.checked_sub(Duration::from_secs(2))?;
    let at = heartbeat.min(before_timeout);
    (at >= now).then_some(at)
}

async fn sleep_until_some(at: Option<Instant>) {
    match at {
        Some(at) => tokio::time::sleep_until(at).await,
        None => std::future::pending().await,
    }
}

#[cfg(test)]
mod bookmark_tests {
    use super::*;

    #[tokio::test(start_paused = true)]
    async fn bookmarks_should_come_every_period_and_two_seconds_before_the_timeout() {
        let now = Instant::now();
        let minute = Duration::from_secs(60);
        assert_eq!(next_bookmark_time(now, minute, None), Some(now + minute));
        let deadline = now + Duration::from_secs(10);
        assert_eq!(
            next_bookmark_time(now, minute, Some(deadline)),
            Some(now + Duration::from_secs(8))
        );
        assert_eq!(
            next_bookmark_time(now, minute, Some(now + Duration::from_secs(1))),
            None
        );
        let long = now + Duration::from_secs(600);
        assert_eq!(
            next_bookmark_time(now, minute, Some(long)),
            Some(now + minute)
        );
    }
}
