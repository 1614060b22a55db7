//! `pods/<name>/log`: the log a test wrote for a container (see
//! [`TestEnv::set_pod_log`](crate::TestEnv::set_pod_log) and its siblings), served with
//! `PodLogOptions` as kube-apiserver and the kubelet together serve it.
//!
//! kube-apiserver's part (`pkg/registry/core/pod/rest/log.go`, `LogLocation`):
//!
//! - the query parameters decode into `PodLogOptions`; a number that does not parse is `400`;
//! - `ValidatePodLogOptions`: a negative `tailLines`, a `limitBytes` or `sinceSeconds` below 1,
//!   or both `sinceSeconds` and `sinceTime`, are a `422 Invalid` on the kind `PodLogOptions`;
//! - the Pod must exist (`404`), and the container is chosen as `validateContainer` does:
//!   `container` may be left out only for a Pod with one container, and must name one of its
//!   containers, init containers or ephemeral containers (`400` otherwise).
//!
//! The kubelet's part, which kube-apiserver passes on (its `400` answers become a `400
//! BadRequest` carrying the kubelet's text):
//!
//! - `previous=true` reads the log of the container's previous, terminated instance, which a
//!   test sets with [`TestEnv::set_previous_pod_log`](crate::TestEnv::set_previous_pod_log);
//!   without one the kubelet answers `previous terminated container "c" in pod "p" not found`;
//! - `tailLines` keeps the last lines, then `sinceSeconds` / `sinceTime` (the later of the two
//!   bounds, `sinceTime` at second precision as kube-apiserver forwards it) drop older lines;
//! - `timestamps=true` starts each line with its time in RFC 3339 with nanoseconds and a space;
//! - `limitBytes` cuts the output (timestamps included) after that many bytes, even inside a
//!   line;
//! - `follow=true` streams: what the log holds, then each line appended later, until the Pod is
//!   deleted, the byte limit is reached or the client goes away. The previous instance has
//!   ended, so following it stops at its end.
//!
//! As on a cluster, a Pod not yet bound to a node (no `spec.nodeName`) has no kubelet to ask:
//! once the options, the Pod and the container are checked, the answer is `204 No Content`
//! at once, also with `follow=true`. The log a test set is served for a Pod with a node (one
//! created with `spec.nodeName`, or bound through `pods/binding`).

use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use bytes::Bytes;
use http::{HeaderValue, Response, header};
use k8s_openapi::jiff::Timestamp;
use serde_json::{Value, json};
use tokio::sync::{mpsc, watch};

use crate::body::Body;
use crate::server::{Request, Shared, error_response};
use crate::status::ApiError;
use crate::store::object_key;
use crate::validation::field::{self, FieldError};

/// One entry of a container's log: a line with its `\n` (or a last, unterminated part) and when
/// the container wrote it.
#[derive(Debug, Clone, PartialEq)]
struct Entry {
    time: SystemTime,
    text: String,
}

/// The log of one container: its current instance and, once it restarted, its previous one.
#[derive(Debug, Default)]
struct ContainerLog {
    current: Vec<Entry>,
    /// Bumped whenever `current` is replaced, so that a follower starts again from its top.
    instance: u64,
    previous: Option<Vec<Entry>>,
}

/// The logs a test wrote, by namespace, Pod and container.
#[derive(Debug)]
pub(crate) struct PodLogs {
    logs: HashMap<(String, String, String), ContainerLog>,
    /// Bumped on every change; followers wait on it.
    changed: watch::Sender<u64>,
}

impl Default for PodLogs {
    fn default() -> Self {
        Self {
            logs: HashMap::new(),
            changed: watch::channel(0).0,
        }
    }
}

type Key = (String, String, String);

fn key(namespace: &str, pod: &str, container: &str) -> Key {
    (namespace.to_owned(), pod.to_owned(), container.to_owned())
}

/// `text` as log entries written at `time`: one per line.
fn entries(text: &str, time: SystemTime) -> Vec<Entry> {
    text.split_inclusive('\n')
        .map(|line| Entry {
            time,
            text: line.to_owned(),
        })
        .collect()
}

impl PodLogs {
    fn notify(&self) {
        self.changed.send_modify(|n| *n = n.wrapping_add(1));
    }

    /// Replaces the log of the current instance of a container.
    pub(crate) fn set(
        &mut self,
        namespace: &str,
        pod: &str,
        container: &str,
        text: &str,
        time: SystemTime,
    ) {
        let log = self.logs.entry(key(namespace, pod, container)).or_default();
        log.current = entries(text, time);
        log.instance += 1;
        self.notify();
    }

    /// Appends lines to the log of the current instance of a container.
    pub(crate) fn append(
        &mut self,
        namespace: &str,
        pod: &str,
        container: &str,
        text: &str,
        time: SystemTime,
    ) {
        let log = self.logs.entry(key(namespace, pod, container)).or_default();
        log.current.extend(entries(text, time));
        self.notify();
    }

    /// Sets the log of the previous, terminated instance of a container.
    pub(crate) fn set_previous(
        &mut self,
        namespace: &str,
        pod: &str,
        container: &str,
        text: &str,
        time: SystemTime,
    ) {
        let log = self.logs.entry(key(namespace, pod, container)).or_default();
        log.previous = Some(entries(text, time));
        self.notify();
    }
}

/// `PodLogOptions` as the query parameters give them.
#[derive(Debug, Default, Clone)]
struct Options {
    container: Option<String>,
    follow: bool,
    previous: bool,
    timestamps: bool,
    since_seconds: Option<i64>,
    since_time: Option<Timestamp>,
    tail_lines: Option<i64>,
    limit_bytes: Option<i64>,
}

/// A boolean parameter as apimachinery's query conversion reads it: absent is `false`, `0`
/// and `false` (any case) are `false`, anything else is `true`.
fn flag(req: &Request, name: &str) -> bool {
    req.param(name)
        .is_some_and(|v| v != "0" && !v.eq_ignore_ascii_case("false"))
}

/// An integer parameter; one that does not parse is `400`, with Go's `strconv` message.
fn number(req: &Request, name: &str) -> Result<Option<i64>, ApiError> {
    let Some(s) = req.param(name).filter(|s| !s.is_empty()) else {
        return Ok(None);
    };
    s.parse::<i64>().map(Some).map_err(|e| {
        let why = match e.kind() {
            std::num::IntErrorKind::PosOverflow | std::num::IntErrorKind::NegOverflow => {
                "value out of range"
            }
            _ => "invalid syntax",
        };
        ApiError::bad_request(format!("strconv.ParseInt: parsing {s:?}: {why}"))
    })
}

/// `sinceTime`, an RFC 3339 time; one that does not parse is `400`.
fn time(req: &Request, name: &str) -> Result<Option<Timestamp>, ApiError> {
    let Some(s) = req.param(name).filter(|s| !s.is_empty()) else {
        return Ok(None);
    };
    s.parse::<Timestamp>().map(Some).map_err(|_| {
        ApiError::bad_request(format!(
            "parsing time {s:?} as \"2006-01-02T15:04:05Z07:00\": cannot parse {s:?} as \"2006\""
        ))
    })
}

impl Options {
    fn from_request(req: &Request) -> Result<Self, ApiError> {
        Ok(Self {
            container: req
                .param("container")
                .filter(|c| !c.is_empty())
                .map(str::to_owned),
            follow: flag(req, "follow"),
            previous: flag(req, "previous"),
            timestamps: flag(req, "timestamps"),
            since_seconds: number(req, "sinceSeconds")?,
            since_time: time(req, "sinceTime")?,
            tail_lines: number(req, "tailLines")?,
            limit_bytes: number(req, "limitBytes")?,
        })
    }

    /// `ValidatePodLogOptions`.
    fn validate(&self, pod: &str) -> Result<(), ApiError> {
        let mut errs = Vec::new();
        if let Some(n) = self.tail_lines.filter(|n| *n < 0) {
            errs.push(FieldError::invalid(
                "tailLines",
                &json!(n),
                "must be greater than or equal to 0",
            ));
        }
        if let Some(n) = self.limit_bytes.filter(|n| *n < 1) {
            errs.push(FieldError::invalid(
                "limitBytes",
                &json!(n),
                "must be greater than 0",
            ));
        }
        match (self.since_seconds, self.since_time) {
            (Some(_), Some(_)) => errs.push(FieldError::forbidden(
                "",
                "at most one of `sinceTime` or `sinceSeconds` may be specified",
            )),
            (Some(n), None) if n < 1 => errs.push(FieldError::invalid(
                "sinceSeconds",
                &json!(n),
                "must be greater than 0",
            )),
            _ => {}
        }
        field::check("", "PodLogOptions", pod, errs)
    }

    /// The earliest time a line may have to be sent, as the kubelet computes it from
    /// `sinceSeconds` and `sinceTime` (which kube-apiserver forwards at second precision).
    fn since(&self, now: SystemTime) -> Option<SystemTime> {
        let by_seconds = self.since_seconds.map(|s| {
            now.checked_sub(Duration::from_secs(s.unsigned_abs()))
                .unwrap_or(SystemTime::UNIX_EPOCH)
        });
        let by_time = self.since_time.map(|t| {
            let secs = t.as_second();
            if secs >= 0 {
                SystemTime::UNIX_EPOCH + Duration::from_secs(secs.unsigned_abs())
            } else {
                SystemTime::UNIX_EPOCH
            }
        });
        match (by_seconds, by_time) {
            (Some(a), Some(b)) => Some(a.max(b)),
            (a, b) => a.or(b),
        }
    }
}

fn names(pod: &Value, field: &str) -> Vec<String> {
    pod.pointer(&format!("/spec/{field}"))
        .and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .filter_map(|c| c.get("name").and_then(Value::as_str).map(str::to_owned))
                .collect()
        })
        .unwrap_or_default()
}

/// The container a log request is for, as kube-apiserver's `validateContainer` picks it.
fn container(pod: &Value, pod_name: &str, requested: Option<&str>) -> Result<String, ApiError> {
    let containers = names(pod, "containers");
    // Init containers, containers, then ephemeral containers (`podutil.VisitContainers`).
    let mut all = names(pod, "initContainers");
    all.extend(containers.iter().cloned());
    all.extend(names(pod, "ephemeralContainers"));
    match requested {
        None => match containers.as_slice() {
            [only] => Ok(only.clone()),
            [] => Err(ApiError::bad_request(format!(
                "a container name must be specified for pod {pod_name}"
            ))),
            _ => Err(ApiError::bad_request(format!(
                "a container name must be specified for pod {pod_name}, choose one of: [{}]",
                all.join(" ")
            ))),
        },
        Some(c) if all.iter().any(|n| n == c) => Ok(c.to_owned()),
        Some(c) => Err(ApiError::bad_request(format!(
            "container {c} is not valid for pod {pod_name}"
        ))),
    }
}

/// `time` as the kubelet prefixes a line with it: RFC 3339 in UTC with as many fractional
/// digits as needed (Go's `time.RFC3339Nano`).
fn stamp(time: SystemTime) -> String {
    Timestamp::try_from(time).map_or_else(|_| String::new(), |t| t.to_string())
}

/// What the kubelet writes for `entries`: each line, with its time first when asked.
fn render(entries: &[Entry], o: &Options, since: Option<SystemTime>) -> Vec<u8> {
    let mut out = Vec::new();
    for e in entries {
        if since.is_some_and(|s| e.time < s) {
            continue;
        }
        if o.timestamps {
            out.extend_from_slice(stamp(e.time).as_bytes());
            out.push(b' ');
        }
        out.extend_from_slice(e.text.as_bytes());
    }
    out
}

/// The last `n` entries (all of them when `n` is absent).
fn tail(entries: &[Entry], n: Option<i64>) -> &[Entry] {
    match n.and_then(|n| usize::try_from(n).ok()) {
        Some(n) => &entries[entries.len().saturating_sub(n)..],
        None => entries,
    }
}

/// The bytes still allowed by `limitBytes` (`None`: no limit).
fn cut(mut bytes: Vec<u8>, remaining: &mut Option<usize>) -> Vec<u8> {
    if let Some(r) = remaining {
        bytes.truncate(*r);
        *r -= bytes.len();
    }
    bytes
}

fn text_response(body: Body) -> Response<Body> {
    let mut resp = Response::new(body);
    resp.headers_mut()
        .insert(header::CONTENT_TYPE, HeaderValue::from_static("text/plain"));
    resp
}

/// `GET .../pods/<name>/log`.
pub(crate) fn get(
    shared: &Arc<Shared>,
    req: &Request,
    namespace: &str,
    name: &str,
) -> Response<Body> {
    match start(shared, req, namespace, name) {
        Ok(resp) => resp,
        Err(e) => error_response(&e),
    }
}

fn start(
    shared: &Arc<Shared>,
    req: &Request,
    namespace: &str,
    name: &str,
) -> Result<Response<Body>, ApiError> {
    let o = Options::from_request(req)?;
    o.validate(name)?;
    let pod = shared
        .store
        .lock()
        .get("/pods", &object_key(Some(namespace), name))
        .map(|s| s.value.clone())
        .ok_or_else(|| ApiError::not_found("", "pods", name))?;
    let c = container(&pod, name, o.container.as_deref())?;
    if pod
        .pointer("/spec/nodeName")
        .and_then(Value::as_str)
        .is_none_or(str::is_empty)
    {
        // `LogLocation` has no location for a Pod without a host: nothing to stream.
        let mut resp = Response::new(Body::full(Bytes::new()));
        *resp.status_mut() = http::StatusCode::NO_CONTENT;
        return Ok(resp);
    }
    let uid = pod
        .pointer("/metadata/uid")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_owned();
    let k = key(namespace, name, &c);
    let since = o.since(SystemTime::now());
    let mut remaining = o.limit_bytes.and_then(|l| usize::try_from(l).ok());
    // Subscribe before reading, so that no line appended in between goes unnoticed.
    let logs = shared.pod_logs.lock();
    let changes = logs.changed.subscribe();
    let log = logs.logs.get(&k);
    let (first, instance, sent) = if o.previous {
        let Some(previous) = log.and_then(|l| l.previous.as_ref()) else {
            return Err(ApiError::bad_request(format!(
                "previous terminated container {c:?} in pod {name:?} not found"
            )));
        };
        (render(tail(previous, o.tail_lines), &o, since), 0, 0)
    } else {
        let current = log.map_or(&[][..], |l| l.current.as_slice());
        (
            render(tail(current, o.tail_lines), &o, since),
            log.map_or(0, |l| l.instance),
            current.len(),
        )
    };
    drop(logs);
    let first = cut(first, &mut remaining);
    if !o.follow || o.previous || remaining == Some(0) {
        return Ok(text_response(Body::full(first)));
    }
    let (tx, rx) = mpsc::channel(16);
    let follower = Follower {
        shared: shared.clone(),
        key: k,
        uid,
        options: o,
        since,
        instance,
        sent,
        remaining,
        tx,
        changes,
    };
    tokio::spawn(follower.run(first));
    Ok(text_response(Body::Stream(rx)))
}

/// A `follow=true` stream: sends the lines appended to a container's log until the Pod is
/// deleted, the byte limit is reached or the client goes away.
struct Follower {
    shared: Arc<Shared>,
    key: Key,
    uid: String,
    options: Options,
    since: Option<SystemTime>,
    /// The instance of the log being followed, and how many of its entries were sent.
    instance: u64,
    sent: usize,
    remaining: Option<usize>,
    tx: mpsc::Sender<Bytes>,
    changes: watch::Receiver<u64>,
}

impl Follower {
    async fn run(mut self, first: Vec<u8>) {
        let mut store = self.shared.changed.subscribe();
        let mut close = self.shared.close_watches.subscribe();
        // An empty chunk still starts the response, as the kubelet's first zero-byte write does.
        if self.tx.send(Bytes::from(first)).await.is_err() {
            return;
        }
        loop {
            if !self.pod_exists() {
                return;
            }
            tokio::select! {
                () = self.tx.closed() => return,
                r = self.changes.changed() => if r.is_err() { return },
                r = store.changed() => if r.is_err() { return },
                _ = close.changed() => return,
            }
            let next = self.next_chunk();
            if next.is_empty() {
                continue;
            }
            let next = cut(next, &mut self.remaining);
            if self.tx.send(Bytes::from(next)).await.is_err() || self.remaining == Some(0) {
                return;
            }
        }
    }

    /// Whether the Pod followed still exists (a Pod of the same name made since is another).
    fn pod_exists(&self) -> bool {
        let (ns, name, _) = &self.key;
        self.shared
            .store
            .lock()
            .get("/pods", &object_key(Some(ns), name))
            .is_some_and(|s| {
                s.value.pointer("/metadata/uid").and_then(Value::as_str) == Some(self.uid.as_str())
            })
    }

    /// The lines written since the last chunk (from the top of a log that was replaced).
    fn next_chunk(&mut self) -> Vec<u8> {
        let logs = self.shared.pod_logs.lock();
        let Some(log) = logs.logs.get(&self.key) else {
            return Vec::new();
        };
        if log.instance != self.instance {
            self.instance = log.instance;
            self.sent = 0;
        }
        let new = log.current.get(self.sent..).unwrap_or_default();
        self.sent = log.current.len();
        render(new, &self.options, self.since)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(secs: u64) -> SystemTime {
        SystemTime::UNIX_EPOCH + Duration::from_secs(secs)
    }

    #[test]
    fn tail_should_keep_the_last_entries() {
        let e = entries("a\nb\nc", at(0));
        let texts = |es: &[Entry]| es.iter().map(|e| e.text.clone()).collect::<String>();
        assert_eq!(texts(tail(&e, Some(2))), "b\nc");
        assert_eq!(texts(tail(&e, Some(5))), "a\nb\nc");
        assert_eq!(texts(tail(&e, Some(0))), "");
        assert_eq!(texts(tail(&e, None)), "a\nb\nc");
    }

    #[test]
    fn timestamps_should_read_as_rfc3339_nano() {
        assert_eq!(stamp(at(1_700_000_000)), "2023-11-14T22:13:20Z");
        let t = at(1_700_000_000) + Duration::from_nanos(120_000_000);
        assert_eq!(stamp(t), "2023-11-14T22:13:20.12Z");
        let t = at(1_700_000_000) + Duration::from_nanos(1);
        assert_eq!(stamp(t), "2023-11-14T22:13:20.000000001Z");
    }

    #[test]
    fn the_byte_limit_should_cut_inside_a_line_and_count_down() {
        let mut remaining = Some(5);
        assert_eq!(cut(b"abc\n".to_vec(), &mut remaining), b"abc\n");
        assert_eq!(cut(b"defg\n".to_vec(), &mut remaining), b"d");
        assert_eq!(remaining, Some(0));
    }
}
