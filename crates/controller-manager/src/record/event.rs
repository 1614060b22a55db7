//! The event recorder (client-go `tools/record/event.go`).

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use k8s_openapi::api::core::v1::{Event as CoreEvent, EventSource, ObjectReference};
use k8s_openapi::api::events::v1::{Event, EventSeries};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{MicroTime, Time};
use k8s_openapi::jiff::Timestamp;
use kube::api::{ObjectMeta, Patch, PatchParams, PostParams};
use kube::{Api, Client, Resource};
use tokio::sync::{mpsc, oneshot};
use tokio::time::Instant;

use super::events_cache::{
    Correlation, CorrelatorOptions, EventCorrelator, LocalEvent, event_name,
};
use crate::{Error, Result};

/// Attempts per event on transport errors (client-go `maxTriesPerEvent`).
const MAX_TRIES_PER_EVENT: u32 = 12;
/// Pause between attempts (client-go `defaultSleepDuration`); the first
/// pause is a random fraction of it.
const RETRY_SLEEP: Duration = Duration::from_secs(10);
/// Events buffered between callers and the writer (client-go's broadcaster
/// queue length); beyond it new events are dropped.
pub const DEFAULT_QUEUE_SIZE: usize = 1000;

/// The type of an event.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EventType {
    /// Something expected happened.
    Normal,
    /// Something may need attention.
    Warning,
}

impl EventType {
    /// `"Normal"` or `"Warning"`.
    pub fn as_str(self) -> &'static str {
        match self {
            EventType::Normal => "Normal",
            EventType::Warning => "Warning",
        }
    }
}

/// Who reports the events (`reportingController` / `reportingInstance`, or
/// `source.component` / `source.host` in core/v1).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Reporter {
    /// The controller's name, e.g. `my-operator`.
    pub controller: String,
    /// This replica's name (default: the host name).
    pub instance: Option<String>,
}

impl From<&str> for Reporter {
    fn from(controller: &str) -> Self {
        Self {
            controller: controller.to_owned(),
            instance: None,
        }
    }
}

/// Which Event API the recorder writes.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum EventsApi {
    /// `events.k8s.io/v1`; repeats are counted in `series`.
    #[default]
    EventsV1,
    /// `core/v1` (`v1`); repeats are counted in `count`.
    CoreV1,
}

enum Message {
    Event(Box<LocalEvent>, Instant),
    Flush(oneshot::Sender<()>),
}

/// Records Kubernetes events without ever blocking or failing the caller.
///
/// [`event`](EventRecorder::event) hands the event to a background task
/// through a bounded queue (dropping it, with a warning, if the queue is
/// full). The task runs client-go's correlator on it and writes it:
///
/// - the same event again (same object, type, reason and message) raises
///   the count of the existing Event (`series.count` in events.k8s.io/v1,
///   `count` in core/v1) instead of creating another;
/// - from the 10th event within 10 minutes that differs from earlier ones
///   only by message, they are aggregated into one Event whose message
///   starts with `(combined from similar events): `;
/// - each reporter may write 25 events about one object at once, then one
///   every 5 minutes; the rest are dropped.
///
/// Writes that fail on the transport are retried (12 attempts, 10 s
/// apart); an error from the API server drops the event with a log line.
///
/// ```no_run
/// use kcr_controller_manager::record::{EventRecorder, EventType};
/// use k8s_openapi::api::core::v1::ConfigMap;
///
/// # async fn demo(client: kube::Client, cm: ConfigMap) -> kcr_controller_manager::Result<()> {
/// let recorder = EventRecorder::new(client, "my-operator".into())?;
/// recorder.event_for(&cm, EventType::Normal, "Synced", "config applied");
/// # Ok(())
/// # }
/// ```
#[derive(Clone)]
pub struct EventRecorder {
    tx: mpsc::Sender<Message>,
    reporter: Arc<(String, String)>,
}

impl fmt::Debug for EventRecorder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("EventRecorder")
            .field("reporting_controller", &self.reporter.0)
            .field("reporting_instance", &self.reporter.1)
            .finish_non_exhaustive()
    }
}

/// Builds an [`EventRecorder`].
#[must_use]
pub struct EventRecorderBuilder {
    client: Client,
    reporter: Reporter,
    api: EventsApi,
    correlator: CorrelatorOptions,
    queue_size: usize,
}

impl fmt::Debug for EventRecorderBuilder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("EventRecorderBuilder")
            .field("reporter", &self.reporter)
            .field("api", &self.api)
            .field("correlator", &self.correlator)
            .field("queue_size", &self.queue_size)
            .finish_non_exhaustive()
    }
}

impl EventRecorderBuilder {
    /// Writes to `api` (default events.k8s.io/v1).
    pub fn api(mut self, api: EventsApi) -> Self {
        self.api = api;
        self
    }

    /// Correlator settings (default: client-go's).
    pub fn correlator(mut self, options: CorrelatorOptions) -> Self {
        self.correlator = options;
        self
    }

    /// Events buffered before new ones are dropped (default 1000).
    pub fn queue_size(mut self, size: usize) -> Self {
        self.queue_size = size.max(1);
        self
    }

    /// Starts the writer task on the current tokio runtime.
    pub fn build(self) -> Result<EventRecorder> {
        let runtime = tokio::runtime::Handle::try_current().map_err(Error::NoRuntime)?;
        let instance = self.reporter.instance.clone().unwrap_or_else(host_name);
        let (tx, rx) = mpsc::channel(self.queue_size);
        let writer = Writer {
            client: self.client,
            api: self.api,
            correlator: EventCorrelator::new(self.correlator),
        };
        runtime.spawn(writer.run(rx));
        Ok(EventRecorder {
            tx,
            reporter: Arc::new((self.reporter.controller, instance)),
        })
    }
}

fn host_name() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .ok()
        .map(|h| h.trim().to_owned())
        .filter(|h| !h.is_empty())
        .or_else(|| std::env::var("HOSTNAME").ok().filter(|h| !h.is_empty()))
        .unwrap_or_else(|| "localhost".to_owned())
}

impl EventRecorder {
    /// A recorder with the defaults (events.k8s.io/v1, client-go's
    /// correlator, a queue of 1000). Needs a tokio runtime.
    pub fn new(client: Client, reporter: Reporter) -> Result<Self> {
        Self::builder(client, reporter).build()
    }

    /// A builder for other settings.
    pub fn builder(client: Client, reporter: Reporter) -> EventRecorderBuilder {
        EventRecorderBuilder {
            client,
            reporter,
            api: EventsApi::default(),
            correlator: CorrelatorOptions::default(),
            queue_size: DEFAULT_QUEUE_SIZE,
        }
    }

    /// Records an event about `regarding`; the action is the reason.
    pub fn event(
        &self,
        regarding: &ObjectReference,
        type_: EventType,
        reason: &str,
        message: &str,
    ) {
        self.event_with_action(regarding, None, type_, reason, reason, message);
    }

    /// Records an event about `object`.
    pub fn event_for<K>(&self, object: &K, type_: EventType, reason: &str, message: &str)
    where
        K: Resource<DynamicType = ()>,
    {
        self.event(&object.object_ref(&()), type_, reason, message);
    }

    /// Records an event with every field: `related` object, machine-readable
    /// `action`.
    pub fn event_with_action(
        &self,
        regarding: &ObjectReference,
        related: Option<&ObjectReference>,
        type_: EventType,
        reason: &str,
        action: &str,
        message: &str,
    ) {
        let now = Timestamp::now();
        let regarding_name = regarding.name.as_deref().unwrap_or_default();
        let namespace = regarding
            .namespace
            .clone()
            .filter(|n| !n.is_empty())
            .unwrap_or_else(|| "default".into());
        let event = LocalEvent {
            regarding: regarding.clone(),
            related: related.cloned(),
            type_: type_.as_str().to_owned(),
            reason: reason.to_owned(),
            action: action.to_owned(),
            message: message.to_owned(),
            reporting_controller: self.reporter.0.clone(),
            reporting_instance: self.reporter.1.clone(),
            name: event_name(regarding_name, now),
            namespace,
            count: 1,
            first_timestamp: now,
            last_timestamp: now,
        };
        match self
            .tx
            .try_send(Message::Event(Box::new(event), Instant::now()))
        {
            Ok(()) => {}
            Err(mpsc::error::TrySendError::Full(_)) => {
                tracing::warn!(
                    reason,
                    object = regarding_name,
                    "event queue full: event dropped"
                );
            }
            Err(mpsc::error::TrySendError::Closed(_)) => {
                tracing::warn!(
                    reason,
                    object = regarding_name,
                    "event writer stopped: event dropped"
                );
            }
        }
    }

    /// Waits until every event recorded before this call has been written
    /// (or given up on).
    pub async fn flush(&self) {
        let (done, wait) = oneshot::channel();
        if self.tx.send(Message::Flush(done)).await.is_ok() {
            let _ = wait.await;
        }
    }
}

/// The background task: correlates and writes, one event at a time.
struct Writer {
    client: Client,
    api: EventsApi,
    correlator: EventCorrelator,
}

/// Why one write failed: retry on the transport, give up on the server's word.
enum WriteError {
    Server(kube::Error),
    Transport(kube::Error),
}

impl From<kube::Error> for WriteError {
    fn from(e: kube::Error) -> Self {
        match e {
            kube::Error::Api(_) => WriteError::Server(e),
            other => WriteError::Transport(other),
        }
    }
}

/// The longest `note` events.k8s.io/v1 accepts, in bytes.
pub const NOTE_LENGTH_LIMIT: usize = 1024;

/// `message` cut to [`NOTE_LENGTH_LIMIT`] bytes on a character boundary (the
/// API server refuses a longer note, which would lose the event).
fn note(message: &str) -> &str {
    if message.len() <= NOTE_LENGTH_LIMIT {
        return message;
    }
    let mut end = NOTE_LENGTH_LIMIT;
    while !message.is_char_boundary(end) {
        end -= 1;
    }
    &message[..end]
}

fn micro(t: Timestamp) -> MicroTime {
    MicroTime(t)
}

fn to_events_v1(e: &LocalEvent) -> Event {
    Event {
        metadata: ObjectMeta {
            name: Some(e.name.clone()),
            namespace: Some(e.namespace.clone()),
            ..ObjectMeta::default()
        },
        event_time: Some(micro(e.first_timestamp)),
        series: (e.count > 1).then(|| EventSeries {
            count: e.count,
            last_observed_time: micro(e.last_timestamp),
        }),
        reporting_controller: Some(e.reporting_controller.clone()),
        reporting_instance: Some(e.reporting_instance.clone()),
        action: Some(e.action.clone()),
        reason: Some(e.reason.clone()),
        note: Some(note(&e.message).to_owned()),
        type_: Some(e.type_.clone()),
        regarding: Some(e.regarding.clone()),
        related: e.related.clone(),
        ..Event::default()
    }
}

/// The patch that counts a repeat of an events.k8s.io/v1 Event: its `series` and nothing else.
fn series_patch(e: &LocalEvent) -> serde_json::Value {
    let series = EventSeries {
        count: e.count,
        last_observed_time: micro(e.last_timestamp),
    };
    serde_json::json!({ "series": series })
}

fn to_core_v1(e: &LocalEvent) -> CoreEvent {
    CoreEvent {
        metadata: ObjectMeta {
            name: Some(e.name.clone()),
            namespace: Some(e.namespace.clone()),
            ..ObjectMeta::default()
        },
        involved_object: e.regarding.clone(),
        related: e.related.clone(),
        reason: Some(e.reason.clone()),
        message: Some(e.message.clone()),
        type_: Some(e.type_.clone()),
        action: Some(e.action.clone()),
        count: Some(e.count),
        first_timestamp: Some(Time(e.first_timestamp)),
        last_timestamp: Some(Time(e.last_timestamp)),
        source: Some(EventSource {
            component: Some(e.reporting_controller.clone()),
            host: Some(e.reporting_instance.clone()),
        }),
        reporting_component: Some(e.reporting_controller.clone()),
        reporting_instance: Some(e.reporting_instance.clone()),
        ..CoreEvent::default()
    }
}

impl Writer {
    async fn run(mut self, mut rx: mpsc::Receiver<Message>) {
        while let Some(message) = rx.recv().await {
            match message {
                Message::Flush(done) => {
                    let _ = done.send(());
                }
                Message::Event(event, at) => {
                    let wall = event.last_timestamp;
                    match self.correlator.correlate(*event, at, wall) {
                        Correlation::Skip => {
                            tracing::debug!("event dropped by the spam filter");
                        }
                        Correlation::Create { event, key } => self.record(event, key, false).await,
                        Correlation::Patch { event, key } => self.record(event, key, true).await,
                    }
                }
            }
        }
    }

    async fn record(&mut self, event: LocalEvent, key: String, patch: bool) {
        for attempt in 1..=MAX_TRIES_PER_EVENT {
            match self.write(&event, patch).await {
                Ok(written) => {
                    self.correlator.update_state(&key, &written);
                    return;
                }
                Err(WriteError::Server(e)) => {
                    tracing::warn!(name = %event.name, reason = %event.reason, error = %e, "server rejected event (will not retry)");
                    return;
                }
                Err(WriteError::Transport(e)) => {
                    if attempt == MAX_TRIES_PER_EVENT {
                        tracing::error!(name = %event.name, reason = %event.reason, error = %e, "unable to write event (giving up)");
                        return;
                    }
                    tracing::info!(name = %event.name, error = %e, attempt, "unable to write event (will retry)");
                    let pause = if attempt == 1 {
                        RETRY_SLEEP.mul_f64(rand::random::<f64>())
                    } else {
                        RETRY_SLEEP
                    };
                    tokio::time::sleep(pause).await;
                }
            }
        }
    }

    /// One write: a create, or a patch of the count (falling back to a
    /// create with count 1 if the event is gone). Returns what the server
    /// now holds.
    async fn write(&self, event: &LocalEvent, patch: bool) -> Result<LocalEvent, WriteError> {
        if patch {
            match self.patch(event).await {
                Ok(()) => return Ok(event.clone()),
                Err(kube::Error::Api(status)) if status.code == 404 => {
                    let fresh = LocalEvent {
                        count: 1,
                        first_timestamp: event.last_timestamp,
                        ..event.clone()
                    };
                    self.create(&fresh).await?;
                    return Ok(fresh);
                }
                Err(e) => return Err(e.into()),
            }
        }
        self.create(event).await?;
        Ok(event.clone())
    }

    async fn create(&self, event: &LocalEvent) -> Result<(), kube::Error> {
        let pp = PostParams::default();
        match self.api {
            EventsApi::EventsV1 => {
                Api::<Event>::namespaced(self.client.clone(), &event.namespace)
                    .create(&pp, &to_events_v1(event))
                    .await?;
            }
            EventsApi::CoreV1 => {
                Api::<CoreEvent>::namespaced(self.client.clone(), &event.namespace)
                    .create(&pp, &to_core_v1(event))
                    .await?;
            }
        }
        Ok(())
    }

    async fn patch(&self, event: &LocalEvent) -> Result<(), kube::Error> {
        let pp = PatchParams::default();
        match self.api {
            EventsApi::EventsV1 => {
                // Only `series`, as client-go's events broadcaster patches it: every other field
                // of an events.k8s.io/v1 Event is immutable (a changed `note`, the latest
                // message of an aggregated event, is refused with 422).
                let body = series_patch(event);
                Api::<Event>::namespaced(self.client.clone(), &event.namespace)
                    .patch(&event.name, &pp, &Patch::Strategic(&body))
                    .await?;
            }
            EventsApi::CoreV1 => {
                let body = serde_json::json!({
                    "count": event.count,
                    "lastTimestamp": Time(event.last_timestamp),
                    "message": event.message,
                });
                Api::<CoreEvent>::namespaced(self.client.clone(), &event.namespace)
                    .patch(&event.name, &pp, &Patch::Merge(&body))
                    .await?;
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn local(count: i32) -> LocalEvent {
        let t = Timestamp::UNIX_EPOCH;
        LocalEvent {
            regarding: ObjectReference {
                name: Some("cm".into()),
                namespace: Some("ns".into()),
                ..ObjectReference::default()
            },
            related: None,
            type_: "Warning".into(),
            reason: "Failed".into(),
            action: "Sync".into(),
            message: "boom".into(),
            reporting_controller: "ctl".into(),
            reporting_instance: "host".into(),
            name: "cm.1".into(),
            namespace: "ns".into(),
            count,
            first_timestamp: t,
            last_timestamp: t,
        }
    }

    #[test]
    fn an_events_v1_event_should_carry_a_series_only_for_repeats() {
        let e = to_events_v1(&local(1));
        assert!(e.series.is_none());
        assert_eq!(e.reporting_controller.as_deref(), Some("ctl"));
        assert_eq!(e.note.as_deref(), Some("boom"));
        assert!(e.event_time.is_some());
        let e = to_events_v1(&local(3));
        assert_eq!(e.series.map(|s| s.count), Some(3));
    }

    #[test]
    fn an_events_v1_repeat_should_patch_only_its_series() {
        let mut e = local(4);
        e.message = "(combined from similar events): boom 11".into();
        let patch = series_patch(&e);
        let fields: Vec<&String> = patch
            .as_object()
            .map(|o| o.keys().collect())
            .unwrap_or_default();
        assert_eq!(fields, ["series"]);
        assert_eq!(patch["series"]["count"], 4);
        assert!(patch["series"]["lastObservedTime"].is_string());
    }

    #[test]
    fn a_long_message_should_be_cut_to_the_note_limit_on_a_character_boundary() {
        let mut e = local(1);
        e.message = "é".repeat(600);
        let n = to_events_v1(&e).note.unwrap_or_default();
        assert_eq!(n.len(), 1024);
        assert!(n.chars().all(|c| c == 'é'));
        e.message = "short".into();
        assert_eq!(to_events_v1(&e).note.as_deref(), Some("short"));
    }

    #[test]
    fn a_core_v1_event_should_carry_count_and_source() {
        let e = to_core_v1(&local(2));
        assert_eq!(e.count, Some(2));
        assert_eq!(e.source.and_then(|s| s.component).as_deref(), Some("ctl"));
        assert_eq!(e.involved_object.name.as_deref(), Some("cm"));
    }

    #[test]
    fn building_outside_a_runtime_should_fail_not_panic() {
        // A client needs a runtime to exist, so build one only for it.
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build();
        let Ok(rt) = rt else { return };
        let config = kube::Config::new("http://127.0.0.1:1".parse().unwrap_or_default());
        let client = rt.block_on(async { Client::try_from(config) });
        let Ok(client) = client else { return };
        assert!(matches!(
            EventRecorder::new(client, "ctl".into()),
            Err(Error::NoRuntime(_))
        ));
    }
}
