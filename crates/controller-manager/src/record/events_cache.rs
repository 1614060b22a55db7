//! The event correlator (client-go `tools/record/events_cache.go`): spam
//! filter, aggregation of similar events, and counting of repeats.
//!
//! Pure logic over explicit instants, so it is tested under a paused clock.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::time::Duration;

use k8s_openapi::api::core::v1::ObjectReference;
use k8s_openapi::jiff::Timestamp;
use tokio::time::Instant;

/// The correlator's settings; the defaults are client-go's.
#[derive(Debug, Clone)]
#[must_use]
pub struct CorrelatorOptions {
    /// Entries kept in each cache (LRU). Default 4096.
    pub lru_cache_size: usize,
    /// Events a reporter may send about one object at once. Default 25.
    pub burst: u32,
    /// Refill rate of that budget, in events per second. Default 1/300
    /// (one every 5 minutes).
    pub qps: f64,
    /// Distinct messages of otherwise identical events within
    /// `max_interval` before they are aggregated into one. Default 10.
    pub max_events: usize,
    /// The aggregation window. Default 10 minutes.
    pub max_interval: Duration,
}

impl Default for CorrelatorOptions {
    fn default() -> Self {
        Self {
            lru_cache_size: 4096,
            burst: 25,
            qps: 1.0 / 300.0,
            max_events: 10,
            max_interval: Duration::from_secs(600),
        }
    }
}

/// The prefix of an aggregated event's message.
pub const AGGREGATE_PREFIX: &str = "(combined from similar events): ";

/// An event as the recorder builds it, before it is written in either API.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct LocalEvent {
    pub(crate) regarding: ObjectReference,
    pub(crate) related: Option<ObjectReference>,
    pub(crate) type_: String,
    pub(crate) reason: String,
    pub(crate) action: String,
    pub(crate) message: String,
    pub(crate) reporting_controller: String,
    pub(crate) reporting_instance: String,
    /// The event object's name (`<regarding name>.<nanoseconds in hex>`).
    pub(crate) name: String,
    /// The event object's namespace.
    pub(crate) namespace: String,
    /// How many times it occurred (1 for a new event).
    pub(crate) count: i32,
    pub(crate) first_timestamp: Timestamp,
    pub(crate) last_timestamp: Timestamp,
}

/// What to do with an event after correlation.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Correlation {
    /// Dropped by the spam filter.
    Skip,
    /// Create `event` (its count is 1).
    Create { event: LocalEvent, key: String },
    /// The event exists on the server as `event.name`: raise its count to
    /// `event.count`.
    Patch { event: LocalEvent, key: String },
}

/// A small LRU map.
struct Lru<V> {
    capacity: usize,
    tick: u64,
    map: HashMap<String, (V, u64)>,
    order: BTreeMap<u64, String>,
}

impl<V> Lru<V> {
    fn new(capacity: usize) -> Self {
        Self {
            capacity: capacity.max(1),
            tick: 0,
            map: HashMap::new(),
            order: BTreeMap::new(),
        }
    }

    fn touch(&mut self, key: &str) -> Option<&mut V> {
        self.tick += 1;
        let tick = self.tick;
        let (value, used) = self.map.get_mut(key)?;
        self.order.remove(used);
        *used = tick;
        self.order.insert(tick, key.to_owned());
        Some(value)
    }

    fn insert(&mut self, key: String, value: V) {
        self.tick += 1;
        if let Some((_, used)) = self.map.insert(key.clone(), (value, self.tick)) {
            self.order.remove(&used);
        }
        self.order.insert(self.tick, key);
        while self.map.len() > self.capacity {
            let Some((_, oldest)) = self.order.pop_first() else {
                break;
            };
            self.map.remove(&oldest);
        }
    }

    #[cfg(test)]
    fn len(&self) -> usize {
        self.map.len()
    }
}

/// A token bucket that starts full (golang.org/x/time/rate, as client-go's
/// `flowcontrol` token bucket uses it).
struct TokenBucket {
    tokens: f64,
    last: Instant,
}

impl TokenBucket {
    fn try_accept(&mut self, now: Instant, qps: f64, burst: u32) -> bool {
        let elapsed = now.saturating_duration_since(self.last).as_secs_f64();
        self.last = now;
        self.tokens = (self.tokens + elapsed * qps).min(f64::from(burst));
        if self.tokens >= 1.0 {
            self.tokens -= 1.0;
            true
        } else {
            false
        }
    }
}

struct AggregateRecord {
    local_keys: BTreeSet<String>,
    last: Instant,
}

struct EventLog {
    count: i32,
    first_timestamp: Timestamp,
    name: String,
}

/// Filters, aggregates and counts events (client-go `EventCorrelator`).
pub(crate) struct EventCorrelator {
    options: CorrelatorOptions,
    spam: Lru<TokenBucket>,
    aggregates: Lru<AggregateRecord>,
    logs: Lru<EventLog>,
}

fn join(parts: &[&str]) -> String {
    // NUL-separated: unlike client-go's plain concatenation, two different
    // events can never share a key.
    parts.join("\u{0}")
}

fn object_parts(r: &ObjectReference) -> [&str; 5] {
    [
        r.kind.as_deref().unwrap_or_default(),
        r.namespace.as_deref().unwrap_or_default(),
        r.name.as_deref().unwrap_or_default(),
        r.uid.as_deref().unwrap_or_default(),
        r.api_version.as_deref().unwrap_or_default(),
    ]
}

/// Everything that makes an event unique, message included.
fn event_key(e: &LocalEvent) -> String {
    let o = object_parts(&e.regarding);
    let field_path = e.regarding.field_path.as_deref().unwrap_or_default();
    join(&[
        &e.reporting_controller,
        &e.reporting_instance,
        o[0],
        o[1],
        o[2],
        field_path,
        o[3],
        o[4],
        &e.type_,
        &e.reason,
        &e.message,
    ])
}

/// The reporter and the object: the unit of the spam budget.
fn spam_key(e: &LocalEvent) -> String {
    let o = object_parts(&e.regarding);
    join(&[
        &e.reporting_controller,
        &e.reporting_instance,
        o[0],
        o[1],
        o[2],
        o[3],
        o[4],
    ])
}

/// Everything but the message: events that differ only by message are
/// "similar" and get aggregated.
fn aggregate_key(e: &LocalEvent) -> String {
    let o = object_parts(&e.regarding);
    join(&[
        &e.reporting_controller,
        &e.reporting_instance,
        o[0],
        o[1],
        o[2],
        o[3],
        o[4],
        &e.type_,
        &e.reason,
        &e.reporting_controller,
        &e.reporting_instance,
    ])
}

/// `<name>.<nanoseconds since the epoch in hex>`, as client-go names events.
pub(crate) fn event_name(regarding_name: &str, at: Timestamp) -> String {
    format!("{regarding_name}.{:x}", at.as_nanosecond())
}

impl EventCorrelator {
    pub(crate) fn new(options: CorrelatorOptions) -> Self {
        let size = options.lru_cache_size;
        Self {
            options,
            spam: Lru::new(size),
            aggregates: Lru::new(size),
            logs: Lru::new(size),
        }
    }

    /// Correlates `event`, observed at `now` (monotonic) / `wall` (for the
    /// timestamps written): aggregate, count, then filter, in client-go's
    /// order.
    pub(crate) fn correlate(
        &mut self,
        event: LocalEvent,
        now: Instant,
        wall: Timestamp,
    ) -> Correlation {
        let (event, key) = self.aggregate(event, now, wall);
        let (event, repeat) = self.observe(event, &key);
        if !self.allow(&event, now) {
            return Correlation::Skip;
        }
        if repeat {
            Correlation::Patch { event, key }
        } else {
            Correlation::Create { event, key }
        }
    }

    /// Records what the server now holds for `key` (its name may differ if
    /// a patch had to fall back to a create).
    pub(crate) fn update_state(&mut self, key: &str, event: &LocalEvent) {
        self.logs.insert(
            key.to_owned(),
            EventLog {
                count: event.count,
                first_timestamp: event.first_timestamp,
                name: event.name.clone(),
            },
        );
    }

    fn aggregate(
        &mut self,
        event: LocalEvent,
        now: Instant,
        wall: Timestamp,
    ) -> (LocalEvent, String) {
        let full_key = event_key(&event);
        let agg_key = aggregate_key(&event);
        let max_interval = self.options.max_interval;
        let fresh = || AggregateRecord {
            local_keys: BTreeSet::new(),
            last: now,
        };
        let record = match self.aggregates.touch(&agg_key) {
            Some(r) if now.saturating_duration_since(r.last) <= max_interval => r,
            Some(r) => {
                *r = fresh();
                r
            }
            None => {
                self.aggregates.insert(agg_key.clone(), fresh());
                match self.aggregates.touch(&agg_key) {
                    Some(r) => r,
                    None => return (event, full_key),
                }
            }
        };
        record.local_keys.insert(event.message.clone());
        record.last = now;
        if record.local_keys.len() < self.options.max_events {
            return (event, full_key);
        }
        // Do not let the set grow beyond the maximum.
        record.local_keys.pop_first();
        let aggregated = LocalEvent {
            message: format!("{AGGREGATE_PREFIX}{}", event.message),
            name: event_name(event.regarding.name.as_deref().unwrap_or_default(), wall),
            count: 1,
            first_timestamp: wall,
            last_timestamp: wall,
            ..event
        };
        (aggregated, agg_key)
    }

    /// Counts a repeat of `key`: a repeat takes the first occurrence's name
    /// and first timestamp and the next count.
    fn observe(&mut self, mut event: LocalEvent, key: &str) -> (LocalEvent, bool) {
        let repeat = match self.logs.touch(key) {
            Some(log) if log.count > 0 => {
                event.name = log.name.clone();
                event.first_timestamp = log.first_timestamp;
                event.count = log.count.saturating_add(1);
                true
            }
            _ => false,
        };
        self.update_state(key, &event);
        (event, repeat)
    }

    fn allow(&mut self, event: &LocalEvent, now: Instant) -> bool {
        let key = spam_key(event);
        let (qps, burst) = (self.options.qps, self.options.burst);
        if self.spam.touch(&key).is_none() {
            self.spam.insert(
                key.clone(),
                TokenBucket {
                    tokens: f64::from(burst),
                    last: now,
                },
            );
        }
        match self.spam.touch(&key) {
            Some(bucket) => bucket.try_accept(now, qps, burst),
            None => true,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn event(object: &str, reason: &str, message: &str) -> LocalEvent {
        let now = Timestamp::UNIX_EPOCH;
        LocalEvent {
            regarding: ObjectReference {
                kind: Some("ConfigMap".into()),
                namespace: Some("default".into()),
                name: Some(object.into()),
                uid: Some(format!("uid-{object}")),
                api_version: Some("v1".into()),
                ..ObjectReference::default()
            },
            related: None,
            type_: "Normal".into(),
            reason: reason.into(),
            action: reason.into(),
            message: message.into(),
            reporting_controller: "test-controller".into(),
            reporting_instance: "test-instance".into(),
            name: event_name(object, Timestamp::now()),
            namespace: "default".into(),
            count: 1,
            first_timestamp: now,
            last_timestamp: now,
        }
    }

    fn count(c: &Correlation) -> Option<i32> {
        match c {
            Correlation::Skip => None,
            Correlation::Create { event, .. } | Correlation::Patch { event, .. } => {
                Some(event.count)
            }
        }
    }

    #[tokio::test(start_paused = true)]
    async fn repeats_of_one_event_should_be_counted_on_its_first_name() {
        let mut c = EventCorrelator::new(CorrelatorOptions::default());
        let first = c.correlate(event("a", "Synced", "ok"), Instant::now(), Timestamp::now());
        let Correlation::Create { event: created, .. } = first else {
            panic!("{first:?}")
        };
        for n in 2..=5 {
            tokio::time::advance(Duration::from_secs(1)).await;
            match c.correlate(event("a", "Synced", "ok"), Instant::now(), Timestamp::now()) {
                Correlation::Patch { event, .. } => {
                    assert_eq!(event.count, n);
                    assert_eq!(event.name, created.name);
                }
                other => panic!("{other:?}"),
            }
        }
    }

    #[tokio::test(start_paused = true)]
    async fn the_tenth_similar_event_within_ten_minutes_should_be_aggregated() {
        let mut c = EventCorrelator::new(CorrelatorOptions::default());
        for i in 1..=9 {
            let r = c.correlate(
                event("a", "Failed", &format!("error {i}")),
                Instant::now(),
                Timestamp::now(),
            );
            assert!(
                matches!(r, Correlation::Create { ref event, .. } if event.message == format!("error {i}")),
                "{r:?}"
            );
            tokio::time::advance(Duration::from_secs(30)).await;
        }
        let r = c.correlate(
            event("a", "Failed", "error 10"),
            Instant::now(),
            Timestamp::now(),
        );
        let Correlation::Create { event: agg, key } = r else {
            panic!("{r:?}")
        };
        assert_eq!(agg.message, "(combined from similar events): error 10");
        // Further similar events count on the aggregate.
        let r = c.correlate(
            event("a", "Failed", "error 11"),
            Instant::now(),
            Timestamp::now(),
        );
        let Correlation::Patch { event, key: k2 } = r else {
            panic!("{r:?}")
        };
        assert_eq!(
            (event.count, event.name.as_str(), k2),
            (2, agg.name.as_str(), key)
        );
        assert_eq!(event.message, "(combined from similar events): error 11");
    }

    #[tokio::test(start_paused = true)]
    async fn similar_events_more_than_ten_minutes_apart_should_not_be_aggregated() {
        let mut c = EventCorrelator::new(CorrelatorOptions::default());
        for i in 1..=12 {
            let r = c.correlate(
                event("a", "Failed", &format!("error {i}")),
                Instant::now(),
                Timestamp::now(),
            );
            assert!(
                matches!(r, Correlation::Create { ref event, .. } if !event.message.starts_with('(')),
                "{r:?}"
            );
            tokio::time::advance(Duration::from_secs(601)).await;
        }
    }

    #[tokio::test(start_paused = true)]
    async fn an_object_should_get_a_burst_of_25_then_one_event_per_5_minutes() {
        let mut c = EventCorrelator::new(CorrelatorOptions::default());
        let counts: Vec<_> = (0..30)
            .map(|_| {
                count(&c.correlate(event("a", "Synced", "ok"), Instant::now(), Timestamp::now()))
            })
            .collect();
        assert_eq!(counts.iter().flatten().count(), 25);
        assert_eq!(counts[24], Some(25));
        assert!(counts[25..].iter().all(Option::is_none));
        // Another object has its own budget.
        assert!(
            count(&c.correlate(event("b", "Synced", "ok"), Instant::now(), Timestamp::now()))
                .is_some()
        );

        tokio::time::advance(Duration::from_secs(299)).await;
        assert_eq!(
            count(&c.correlate(event("a", "Synced", "ok"), Instant::now(), Timestamp::now())),
            None
        );
        tokio::time::advance(Duration::from_secs(2)).await;
        // The 32nd occurrence is written, with its true count.
        assert_eq!(
            count(&c.correlate(event("a", "Synced", "ok"), Instant::now(), Timestamp::now())),
            Some(32)
        );
        assert_eq!(
            count(&c.correlate(event("a", "Synced", "ok"), Instant::now(), Timestamp::now())),
            None
        );
    }

    #[test]
    fn the_lru_should_evict_the_least_recently_used_entry() {
        let mut lru = Lru::new(2);
        lru.insert("a".into(), 1);
        lru.insert("b".into(), 2);
        assert!(lru.touch("a").is_some());
        lru.insert("c".into(), 3);
        assert_eq!(lru.len(), 2);
        assert!(lru.touch("b").is_none());
        assert!(lru.touch("a").is_some() && lru.touch("c").is_some());
    }

    #[test]
    fn keys_should_not_collide_when_text_shifts_between_fields() {
        let mut a = event("x", "Synced", "ok");
        let mut b = event("x", "Synced", "ok");
        (a.reporting_controller, a.reporting_instance) = ("ab".into(), "c".into());
        (b.reporting_controller, b.reporting_instance) = ("a".into(), "bc".into());
        assert_ne!(event_key(&a), event_key(&b));
        assert_ne!(spam_key(&a), spam_key(&b));
    }
}
