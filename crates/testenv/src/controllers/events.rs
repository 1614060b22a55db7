//! The Events the workload controllers record, as client-go's legacy event recorder writes them
//! (`record.EventRecorder` with `EventSinkImpl` and its `EventCorrelator`): a core/v1 Event named
//! `<object>.<nanoseconds in hex>` about the object, with the controller as its source and
//! reporting component, `count: 1` and both timestamps now; an identical Event again (same
//! object, type, reason and message) is a patch of the first one's `count` and
//! `lastTimestamp`; and the spam filter lets through 25 Events per object, then one per five
//! minutes (so a controller whose write keeps being refused does not write Events for ever,
//! each of which would make it sync again).

use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use parking_lot::Mutex;
use tokio::time::Instant;

use http::Method;
use serde_json::{Value, json};

use super::requests::{self, collection};
use crate::server::Shared;

/// One Event to record.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Event {
    /// `Normal` or `Warning`.
    pub(crate) kind: &'static str,
    /// The reason (`SuccessfulCreate`, ...).
    pub(crate) reason: &'static str,
    /// The message.
    pub(crate) message: String,
}

impl Event {
    /// A `Normal` Event.
    pub(crate) fn normal(reason: &'static str, message: impl Into<String>) -> Self {
        Self {
            kind: "Normal",
            reason,
            message: message.into(),
        }
    }

    /// A `Warning` Event.
    pub(crate) fn warning(reason: &'static str, message: impl Into<String>) -> Self {
        Self {
            kind: "Warning",
            reason,
            message: message.into(),
        }
    }
}

/// The spam filter's burst and refill period (`defaultSpamBurst`, `defaultSpamQPS` 1/300).
const SPAM_BURST: f64 = 25.0;
const SPAM_REFILL: Duration = Duration::from_secs(300);

/// A controller's event recorder: what it recorded (for the counts) and its spam filter.
#[derive(Debug, Default)]
pub(crate) struct Recorder {
    state: Mutex<State>,
}

/// An Event recorded: its name, namespace and count.
type Recorded = (String, String, u64);

#[derive(Debug, Default)]
struct State {
    /// Identical Events by object uid, type, reason and message.
    recorded: HashMap<String, Recorded>,
    /// Tokens per involved object, and when they were counted.
    buckets: HashMap<String, (f64, Instant)>,
}

impl Recorder {
    /// Whether the spam filter lets one more Event about `uid` through now.
    fn allow(&self, uid: &str) -> bool {
        let mut state = self.state.lock();
        let now = Instant::now();
        let (tokens, at) = state
            .buckets
            .entry(uid.to_owned())
            .or_insert((SPAM_BURST, now));
        let refill = now.duration_since(*at).as_secs_f64() / SPAM_REFILL.as_secs_f64();
        *tokens = (*tokens + refill).min(SPAM_BURST);
        *at = now;
        if *tokens < 1.0 {
            return false;
        }
        *tokens -= 1.0;
        true
    }

    /// Records `event` about `object` (of `api_version` and `kind`) from `component`.
    pub(crate) async fn record(
        &self,
        shared: &Arc<Shared>,
        component: &str,
        object: &Value,
        api_version: &str,
        kind: &str,
        event: &Event,
    ) {
        let uid = str_at(object, "/metadata/uid");
        if !self.allow(&uid) {
            return;
        }
        let key = format!("{uid}\n{}\n{}\n{}", event.kind, event.reason, event.message);
        let seen = self.state.lock().recorded.get(&key).cloned();
        if let Some((name, ns, count)) = seen {
            let body = json!({"count": count + 1, "lastTimestamp": crate::meta::now_rfc3339()});
            let path = format!("{}/{name}", collection("v1", &ns, "events"));
            if requests::strategic_patch(shared, &path, &body).await.ok() {
                self.state
                    .lock()
                    .recorded
                    .insert(key, (name, ns, count + 1));
                return;
            }
        }
        if let Some(name) = create(shared, component, object, api_version, kind, event).await {
            let ns = str_at(object, "/metadata/namespace");
            self.state.lock().recorded.insert(key, (name, ns, 1));
        }
    }
}

fn str_at(v: &Value, ptr: &str) -> String {
    v.pointer(ptr)
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_owned()
}

/// Creates `event` about `object`; its name when stored.
async fn create(
    shared: &Arc<Shared>,
    component: &str,
    object: &Value,
    api_version: &str,
    kind: &str,
    event: &Event,
) -> Option<String> {
    let at = |p: &str| str_at(object, p);
    let ns = at("/metadata/namespace");
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    let now = crate::meta::now_rfc3339();
    let body = json!({
        "apiVersion": "v1",
        "kind": "Event",
        "metadata": {
            "name": format!("{}.{nanos:x}", at("/metadata/name")),
            "namespace": ns
        },
        "involvedObject": {
            "kind": kind,
            "namespace": ns,
            "name": at("/metadata/name"),
            "uid": at("/metadata/uid"),
            "apiVersion": api_version,
            "resourceVersion": at("/metadata/resourceVersion")
        },
        "reason": event.reason,
        "message": event.message,
        "source": {"component": component},
        "firstTimestamp": now,
        "lastTimestamp": now,
        "count": 1,
        "type": event.kind,
        "eventTime": null,
        "reportingComponent": component,
        "reportingInstance": ""
    });
    let path = collection("v1", &ns, "events");
    let a = requests::send(shared, Method::POST, &path, "", Some(&body)).await;
    a.ok().then(|| str_at(&a.body, "/metadata/name"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test(start_paused = true)]
    async fn the_spam_filter_should_let_25_events_through_then_one_per_five_minutes() {
        let r = Recorder::default();
        assert_eq!((0..40).filter(|_| r.allow("a")).count(), 25);
        assert!(r.allow("b"), "per object");
        tokio::time::advance(Duration::from_secs(299)).await;
        assert!(!r.allow("a"));
        tokio::time::advance(Duration::from_secs(2)).await;
        assert!(r.allow("a"));
        assert!(!r.allow("a"));
    }
}
