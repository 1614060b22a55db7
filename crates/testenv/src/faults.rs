//! Fault injection: make the server misbehave the way a real one can.

use std::sync::Arc;
use std::time::Duration;

use tokio::time::Instant;

use crate::error::Result;
use crate::server::Shared;

/// A failure to answer requests with, for [`Faults::fail_next`].
///
/// ```
/// use kcr_testenv::Failure;
/// let f = Failure::too_many_requests(2).verb("update").resource("leases");
/// assert_eq!(f.code(), 429);
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Failure {
    code: u16,
    retry_after: Option<u32>,
    verb: Option<String>,
    resource: Option<String>,
}

impl Failure {
    /// Answers with this HTTP status code and a `metav1.Status` body whose `reason` matches it.
    #[must_use]
    pub fn status(code: u16) -> Self {
        Self {
            code,
            retry_after: None,
            verb: None,
            resource: None,
        }
    }

    /// `500 InternalError`.
    #[must_use]
    pub fn internal_error() -> Self {
        Self::status(500)
    }

    /// `429 TooManyRequests` with `Retry-After: seconds` (and `details.retryAfterSeconds`).
    #[must_use]
    pub fn too_many_requests(retry_after_seconds: u32) -> Self {
        Self {
            retry_after: Some(retry_after_seconds),
            ..Self::status(429)
        }
    }

    /// `409 Conflict`.
    #[must_use]
    pub fn conflict() -> Self {
        Self::status(409)
    }

    /// `503 ServiceUnavailable`.
    #[must_use]
    pub fn service_unavailable() -> Self {
        Self::status(503)
    }

    /// Adds a `Retry-After` header.
    #[must_use]
    pub fn retry_after(mut self, seconds: u32) -> Self {
        self.retry_after = Some(seconds);
        self
    }

    /// Only requests with this Kubernetes verb (`get`, `list`, `watch`, `create`, `update`,
    /// `patch`, `delete`, `deletecollection`) fail.
    #[must_use]
    pub fn verb(mut self, verb: impl Into<String>) -> Self {
        self.verb = Some(verb.into());
        self
    }

    /// Only requests for this resource (plural name, e.g. `leases`) fail.
    #[must_use]
    pub fn resource(mut self, resource: impl Into<String>) -> Self {
        self.resource = Some(resource.into());
        self
    }

    /// The HTTP status code.
    pub fn code(&self) -> u16 {
        self.code
    }

    pub(crate) fn retry_after_seconds(&self) -> Option<u32> {
        self.retry_after
    }

    fn matches(&self, verb: &str, resource: &str) -> bool {
        self.verb.as_deref().is_none_or(|v| v == verb)
            && self.resource.as_deref().is_none_or(|r| r == resource)
    }
}

/// An object whose updates are refused, for [`Faults::refuse_updates_to`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ObjectTarget {
    pub(crate) resource: String,
    pub(crate) namespace: Option<String>,
    pub(crate) name: String,
}

/// The fault configuration (behind the server's fault lock).
#[derive(Debug, Default)]
pub(crate) struct FaultState {
    pub(crate) failures: Vec<(usize, Failure)>,
    pub(crate) latency: Duration,
    pub(crate) close_watches_after: Option<u64>,
    pub(crate) watch_event_delay: Duration,
    pub(crate) refused_user_agents: Vec<String>,
    pub(crate) refused_objects: Vec<ObjectTarget>,
    /// Resources whose streaming lists never end their initial events with the bookmark.
    pub(crate) omit_initial_events_end: Vec<String>,
    /// Resources whose watch cache is initializing, until when.
    pub(crate) initializing: Vec<(String, Instant)>,
}

impl FaultState {
    /// Takes one planned failure matching this request, if any.
    pub(crate) fn take_failure(&mut self, verb: &str, resource: &str) -> Option<Failure> {
        let i = self
            .failures
            .iter()
            .position(|(n, f)| *n > 0 && f.matches(verb, resource))?;
        let (n, f) = &mut self.failures[i];
        *n -= 1;
        let f = f.clone();
        self.failures.retain(|(n, _)| *n > 0);
        Some(f)
    }

    /// Whether streaming lists of `resource` leave out the initial-events-end bookmark.
    pub(crate) fn omits_initial_events_end(&self, resource: &str) -> bool {
        self.omit_initial_events_end.iter().any(|r| r == resource)
    }

    /// Whether the watch cache of `resource` is initializing at `now` (forgets those that are done).
    pub(crate) fn watch_cache_initializing(&mut self, resource: &str, now: Instant) -> bool {
        self.initializing.retain(|(_, until)| *until > now);
        self.initializing.iter().any(|(r, _)| r == resource)
    }

    /// Whether a write by `user_agent` to this object is refused.
    pub(crate) fn refuses(
        &self,
        user_agent: &str,
        resource: &str,
        namespace: Option<&str>,
        name: Option<&str>,
    ) -> bool {
        self.refused_user_agents
            .iter()
            .any(|ua| user_agent.starts_with(ua.as_str()))
            || self.refused_objects.iter().any(|t| {
                t.resource == resource
                    && t.namespace.as_deref() == namespace
                    && Some(t.name.as_str()) == name
            })
    }
}

/// Fault injection for a running server; get it from [`TestEnv::faults`](crate::TestEnv::faults).
///
/// Every fault is what a client could see from a real API server: dropped watches, `410 Gone`,
/// error statuses, slowness, refused writes, a server that goes away and comes back.
/// Faults last until [`Faults::clear`] (except the one-shot ones: closing watches, compaction,
/// and the counted failures).
#[derive(Debug, Clone)]
pub struct Faults {
    pub(crate) shared: Arc<Shared>,
}

impl Faults {
    /// Ends every open watch now (the response stream ends, as when an API server restarts).
    pub fn close_all_watches(&self) {
        self.shared.close_watches.send_modify(|epoch| *epoch += 1);
    }

    /// Ends each watch after it has sent `events` events (bookmarks not counted); `None` turns
    /// this off. Applies to open watches and new ones.
    pub fn close_watches_after_events(&self, events: Option<u64>) {
        self.shared.faults.lock().close_watches_after = events;
    }

    /// Compacts the storage underneath the watch cache at the current version, as
    /// `etcdctl compact` does on a real cluster. As on kube-apiserver, the watch cache's window of
    /// recent history is untouched: watches, exact lists and continue tokens from versions in it
    /// are still served; lists at exact versions older than the window get storage's
    /// `410 Gone` ("The resourceVersion for the provided list is too old.").
    /// To make every older version `410`, use [`Faults::compact_history`].
    pub fn compact_storage(&self) {
        self.shared.store.lock().compact_storage();
    }

    /// Drops the whole change history now, the watch cache's window included (as a compaction
    /// followed by a restart of kube-apiserver would): watches and lists from any older resource
    /// version get `410 Gone` (`reason: Expired`), and so do continue tokens issued before.
    pub fn compact_history(&self) {
        self.shared.store.lock().compact();
        // Watches that are behind notice on their next read.
        self.shared.changed.send_modify(|_| {});
    }

    /// The next `count` requests that match `failure` (verb / resource) fail with its status.
    pub fn fail_next(&self, count: usize, failure: Failure) {
        if count > 0 {
            self.shared.faults.lock().failures.push((count, failure));
        }
    }

    /// Delays every request (before it is served) by `latency`; zero turns it off.
    pub fn set_latency(&self, latency: Duration) {
        self.shared.faults.lock().latency = latency;
    }

    /// Holds every watch event (not bookmarks) for `delay` before it is sent, as a slow or
    /// lagging watch cache would: writes succeed at once, informers see them `delay` later.
    /// Events of one watch stay in order (each waits behind the one before it); zero turns
    /// this off. Applies to open watches and new ones.
    pub fn delay_watch_events(&self, delay: Duration) {
        self.shared.faults.lock().watch_event_delay = delay;
    }

    /// Refuses every write (create, update, patch, delete) from clients whose `User-Agent` starts
    /// with `user_agent`, with `500 InternalError`: a leader that cannot renew its lease.
    /// See [`TestEnv::client_with_user_agent`](crate::TestEnv::client_with_user_agent).
    pub fn refuse_updates_from_user_agent(&self, user_agent: impl Into<String>) {
        self.shared
            .faults
            .lock()
            .refused_user_agents
            .push(user_agent.into());
    }

    /// Refuses every write (create, update, patch, delete, any subresource) to one object with
    /// `500 InternalError`. `resource` is the plural name (`leases`); `namespace` is `None` for
    /// cluster-scoped objects.
    pub fn refuse_updates_to(&self, resource: &str, namespace: Option<&str>, name: &str) {
        self.shared
            .faults
            .lock()
            .refused_objects
            .push(ObjectTarget {
                resource: resource.to_owned(),
                namespace: namespace.map(str::to_owned),
                name: name.to_owned(),
            });
    }

    /// Streaming lists (`sendInitialEvents=true`) of `resource` (plural name, e.g. `configmaps`)
    /// send their initial events but never the bookmark annotated `k8s.io/initial-events-end`
    /// that ends them, and then go on as a watch (changes, periodic bookmarks without the
    /// annotation), as an aggregated API server that ignores the streaming-list protocol does
    /// (kubernetes#140890). Until [`Faults::clear`].
    pub fn omit_initial_events_end(&self, resource: impl Into<String>) {
        self.shared
            .faults
            .lock()
            .omit_initial_events_end
            .push(resource.into());
    }

    /// For `duration` from now, the watch cache of `resource` (plural name) is initializing, as
    /// kube-apiserver's is after a start or while it re-initializes (KEP-4568, GA in v1.34):
    /// every watch, and every list the watch cache would serve, is answered `429
    /// TooManyRequests` with kube-apiserver's status (`message: "storage is (re)initializing"`,
    /// `details.retryAfterSeconds: 1`) and `Retry-After: 1`. Lists kube-apiserver sends to etcd
    /// meanwhile are served: those from the latest version (`resourceVersion` unset or `""`), at
    /// an exact version or continuing a page, and those without a label or field selector that
    /// set a `limit`. Gets are served. Measured on the server's clock (Tokio's, so a test under
    /// a paused clock advances through it).
    pub fn initialize_watch_cache(&self, resource: impl Into<String>, duration: Duration) {
        let until = Instant::now() + duration;
        self.shared
            .faults
            .lock()
            .initializing
            .push((resource.into(), until));
    }

    /// Removes every lasting fault: planned failures, latency, watch event delay, refusals,
    /// closing after N events, omitted initial-events-end bookmarks, initializing watch caches.
    pub fn clear(&self) {
        *self.shared.faults.lock() = FaultState::default();
    }

    /// Stops serving: closes the listening socket and every connection (and so every watch).
    /// The state is kept; [`Faults::restart_serving`] serves it again on the same port.
    pub async fn stop_serving(&self) {
        crate::server::stop(&self.shared).await;
    }

    /// Serves again on the same address after [`Faults::stop_serving`] (does nothing if serving).
    pub async fn restart_serving(&self) -> Result<()> {
        crate::server::start(&self.shared).await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn failures_should_be_counted_and_matched_by_verb_and_resource() {
        let mut s = FaultState::default();
        s.failures
            .push((2, Failure::conflict().verb("update").resource("leases")));
        assert!(s.take_failure("get", "leases").is_none());
        assert!(s.take_failure("update", "configmaps").is_none());
        assert_eq!(
            s.take_failure("update", "leases").map(|f| f.code()),
            Some(409)
        );
        assert!(s.take_failure("update", "leases").is_some());
        assert!(s.take_failure("update", "leases").is_none());
    }

    #[test]
    fn refusals_should_match_user_agent_prefix_or_the_exact_object() {
        let mut s = FaultState::default();
        s.refused_user_agents.push("replica-a".into());
        s.refused_objects.push(ObjectTarget {
            resource: "leases".into(),
            namespace: Some("ns".into()),
            name: "lock".into(),
        });
        assert!(s.refuses("replica-a/1.0", "configmaps", Some("ns"), Some("x")));
        assert!(!s.refuses("replica-b", "configmaps", Some("ns"), Some("x")));
        assert!(s.refuses("replica-b", "leases", Some("ns"), Some("lock")));
        assert!(!s.refuses("replica-b", "leases", Some("other"), Some("lock")));
    }
}
