//! [`PriorityQueue`]: controller-runtime's priority queue, with aging.

use std::collections::hash_map;
use std::collections::{BTreeMap, BinaryHeap};
use std::sync::{Arc, Weak};
use std::task::{Context, Poll, Waker};
use std::time::Duration;

use parking_lot::Mutex;
use tokio::sync::Notify;
use tokio::time::Instant;

use crate::background::{self, Background, Fire, Timed};
use crate::config::Config;
use crate::default_rate_limiters::{ItemExponentialFailureRateLimiter, RateLimiter};
use crate::metrics::{Metrics, Stamp};
use crate::queue::{Delayed, Item, Map};
use crate::waiters::{Get, Source, Waiters};

/// How many due items the timer moves per lock hold.
const FIRE_BATCH: usize = 1024;

/// How an item is added to a [`PriorityQueue`] (controller-runtime's `AddOpts`).
///
/// ```
/// use std::time::Duration;
/// use kcr_workqueue::AddOpts;
///
/// let opts = AddOpts::default().priority(-100).after(Duration::from_secs(1)).rate_limited();
/// assert_eq!(opts.priority, -100);
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[must_use]
pub struct AddOpts {
    /// Higher goes first (0 by default; controller-runtime's `LowPriority` is -100).
    pub priority: i32,
    /// Ready only after this delay (zero: ready now).
    pub after: Duration,
    /// Asks the queue's rate limiter for the delay; with a non-zero
    /// [`after`](AddOpts::after) too, the shorter of the two applies.
    pub rate_limited: bool,
}

impl AddOpts {
    /// Sets the priority.
    pub fn priority(mut self, priority: i32) -> Self {
        self.priority = priority;
        self
    }

    /// Sets the delay.
    pub fn after(mut self, after: Duration) -> Self {
        self.after = after;
        self
    }

    /// Asks the rate limiter for the delay.
    pub fn rate_limited(mut self) -> Self {
        self.rate_limited = true;
        self
    }
}

/// The position of a ready item: smallest first.
type ReadyKey = (i128, i128, u64);

/// An item's pending add (what it will be handed out with).
struct Pending {
    priority: i32,
    ready_at: Instant,
    /// Its ready time has come.
    ready: bool,
    /// Its position in the ready set, when it is there (ready and not processing).
    key: Option<ReadyKey>,
    /// The sequence number of its live heap entry while it is not ready.
    heap_seq: u64,
    /// Arrival order (FIFO among equals).
    order: u64,
}

#[derive(Default)]
struct PEntry {
    pending: Option<Pending>,
    processing: bool,
    added: Stamp,
    started: Stamp,
}

struct PState<T> {
    items: Map<T, PEntry>,
    ready: BTreeMap<ReadyKey, T>,
    delayed: BinaryHeap<Delayed<T>>,
    processing: usize,
    shutting_down: bool,
    drain: bool,
    waiters: Waiters,
    seq: u64,
    armed: Option<Instant>,
    spawn_deferred: bool,
}

struct PShared<T> {
    // Held only for non-blocking map operations, never across an `.await`.
    state: Mutex<PState<T>>,
    metrics: Metrics,
    limiter: Arc<dyn RateLimiter<T>>,
    aging_nanos: Option<i128>,
    epoch: Instant,
    timer_wake: Arc<Notify>,
    drained: Notify,
    me: Weak<PShared<T>>,
}

impl<T> Drop for PShared<T> {
    fn drop(&mut self) {
        self.timer_wake.notify_one();
    }
}

impl<T: Item> PShared<T> {
    fn nanos(&self, at: Instant) -> i128 {
        at.saturating_duration_since(self.epoch).as_nanos() as i128
    }

    /// Where an item goes among the ready ones: with aging, by
    /// `ready_at - priority · step` (its priority rises by one per step of
    /// waiting); without, by priority; then by ready time and arrival.
    fn ready_key(&self, priority: i32, ready_at: Instant, order: u64) -> ReadyKey {
        let ready = self.nanos(ready_at);
        let primary = match self.aging_nanos {
            Some(step) => ready - i128::from(priority) * step,
            None => -i128::from(priority),
        };
        (primary, ready, order)
    }

    fn try_spawn(&self, st: &mut PState<T>) {
        if !st.spawn_deferred {
            return;
        }
        let Ok(handle) = tokio::runtime::Handle::try_current() else {
            return;
        };
        st.spawn_deferred = false;
        background::spawn_timer(&handle, self.me.clone(), self.timer_wake.clone());
        if self.metrics.enabled() {
            background::spawn_unfinished_work_updater(&handle, self.me.clone());
        }
    }

    fn add_with_opts(&self, item: T, opts: AddOpts) {
        let mut after = opts.after;
        if opts.rate_limited {
            let limited = self.limiter.when(&item);
            if after.is_zero() || limited < after {
                after = limited;
            }
        }
        let now = Instant::now();
        let mut st = self.state.lock();
        if st.shutting_down {
            return;
        }
        if !after.is_zero() {
            self.metrics.retry();
        }
        let ready_at = now
            .checked_add(after)
            .unwrap_or_else(|| now + Duration::from_secs(86400 * 365 * 30));
        let is_ready = after.is_zero();
        st.seq += 1;
        let seq = st.seq;
        let PState {
            items,
            ready,
            delayed,
            waiters,
            ..
        } = &mut *st;
        let mut push_delayed = None;
        let mut waker: Option<Waker> = None;
        let (key, entry) = match items.entry(item) {
            hash_map::Entry::Occupied(o) => {
                let (k, e) = (o.key().clone(), o.into_mut());
                (k, e)
            }
            hash_map::Entry::Vacant(v) => {
                let k = v.key().clone();
                (k, v.insert(PEntry::default()))
            }
        };
        match &mut entry.pending {
            None => {
                let mut pending = Pending {
                    priority: opts.priority,
                    ready_at,
                    ready: is_ready,
                    key: None,
                    heap_seq: seq,
                    order: seq,
                };
                if is_ready {
                    entry.added = self.metrics.now();
                    self.metrics.add(pending.priority);
                    if !entry.processing {
                        let rk = self.ready_key(pending.priority, ready_at, seq);
                        pending.key = Some(rk);
                        ready.insert(rk, key);
                        waker = waiters.take_for(ready.len());
                    }
                } else {
                    push_delayed = Some((ready_at, seq, key));
                }
                entry.pending = Some(pending);
            }
            Some(pending) => {
                // Keep the higher priority and the earlier ready time.
                let priority = pending.priority.max(opts.priority);
                let earlier = ready_at < pending.ready_at;
                if pending.ready {
                    if priority != pending.priority || earlier {
                        if pending.priority != priority {
                            self.metrics.reprioritize(pending.priority, priority);
                        }
                        pending.priority = priority;
                        pending.ready_at = pending.ready_at.min(ready_at);
                        if let Some(old) = pending.key.take() {
                            ready.remove(&old);
                            let rk = self.ready_key(priority, pending.ready_at, pending.order);
                            pending.key = Some(rk);
                            ready.insert(rk, key);
                        }
                    }
                } else {
                    pending.priority = priority;
                    if earlier {
                        pending.ready_at = ready_at;
                        if is_ready {
                            pending.ready = true;
                            entry.added = self.metrics.now();
                            self.metrics.add(priority);
                            if !entry.processing {
                                let rk = self.ready_key(priority, ready_at, pending.order);
                                pending.key = Some(rk);
                                ready.insert(rk, key);
                                waker = waiters.take_for(ready.len());
                            }
                        } else {
                            pending.heap_seq = seq;
                            push_delayed = Some((ready_at, seq, key));
                        }
                    }
                }
            }
        }
        let mut rearm = false;
        if let Some((ready_at, seq, item)) = push_delayed {
            delayed.push(Delayed {
                ready_at,
                seq,
                item,
            });
            rearm = st.armed.is_none_or(|armed| ready_at < armed);
            if rearm {
                st.armed = Some(ready_at);
            }
        }
        if st.spawn_deferred {
            self.try_spawn(&mut st);
        }
        drop(st);
        if let Some(waker) = waker {
            waker.wake();
        }
        if rearm {
            self.timer_wake.notify_one();
        }
    }

    fn done(&self, item: &T) {
        let now = self.metrics.now();
        let mut st = self.state.lock();
        let PState {
            items,
            ready,
            waiters,
            processing,
            drain,
            ..
        } = &mut *st;
        let Some(entry) = items.get_mut(item) else {
            return;
        };
        if !entry.processing {
            return;
        }
        entry.processing = false;
        *processing -= 1;
        let started = std::mem::take(&mut entry.started);
        let mut waker = None;
        match &mut entry.pending {
            Some(pending) if pending.ready => {
                let rk = self.ready_key(pending.priority, pending.ready_at, pending.order);
                pending.key = Some(rk);
                ready.insert(rk, item.clone());
                waker = waiters.take_for(ready.len());
            }
            Some(_) => {}
            None => {
                items.remove(item);
            }
        }
        let drained = *drain && *processing == 0;
        drop(st);
        if let Some(waker) = waker {
            waker.wake();
        }
        self.metrics.done(started, now);
        if drained {
            self.drained.notify_waiters();
        }
    }

    fn shut_down(&self, drain: bool) {
        let mut st = self.state.lock();
        st.drain |= drain;
        let wakers = if st.shutting_down {
            Vec::new()
        } else {
            st.shutting_down = true;
            st.delayed.clear();
            st.armed = None;
            st.items.retain(|_, entry| {
                if entry.pending.as_ref().is_some_and(|p| !p.ready) {
                    entry.pending = None;
                }
                entry.pending.is_some() || entry.processing
            });
            st.waiters.take_all()
        };
        drop(st);
        for waker in wakers {
            waker.wake();
        }
        self.timer_wake.notify_one();
    }
}

impl<T: Item> Source<(T, i32)> for PShared<T> {
    fn poll_get(&self, cx: &mut Context<'_>, slot: &mut Option<u64>) -> Poll<Option<(T, i32)>> {
        let mut st = self.state.lock();
        if st.spawn_deferred {
            self.try_spawn(&mut st);
        }
        let PState {
            items,
            ready,
            waiters,
            processing,
            shutting_down,
            ..
        } = &mut *st;
        if let Some((_, item)) = ready.pop_first() {
            if let Some(id) = slot.take() {
                waiters.remove(id);
            }
            let mut priority = 0;
            let now = self.metrics.now();
            let mut added: Stamp = Default::default();
            if let Some(entry) = items.get_mut(&item) {
                if let Some(pending) = entry.pending.take() {
                    priority = pending.priority;
                }
                entry.processing = true;
                added = std::mem::take(&mut entry.added);
                entry.started = now;
            }
            *processing += 1;
            drop(st);
            self.metrics.get(priority, added, now);
            return Poll::Ready(Some((item, priority)));
        }
        if *shutting_down {
            if let Some(id) = slot.take() {
                waiters.remove(id);
            }
            return Poll::Ready(None);
        }
        waiters.park(slot, cx.waker());
        Poll::Pending
    }

    fn abandon(&self, slot: u64) {
        let mut st = self.state.lock();
        let waker = if !st.waiters.remove(slot) {
            // It was woken for an item it will never take: pass the wake-up on.
            let queued = st.ready.len();
            st.waiters.take_for(queued)
        } else {
            None
        };
        drop(st);
        if let Some(waker) = waker {
            waker.wake();
        }
    }
}

impl<T: Item> Timed for PShared<T> {
    fn fire(&self, now: Instant) -> Fire {
        let mut wakers = Vec::new();
        loop {
            let mut st = self.state.lock();
            if st.shutting_down {
                return Fire::Stop;
            }
            let mut moved = 0;
            while moved < FIRE_BATCH {
                let PState {
                    items,
                    ready,
                    waiters,
                    delayed,
                    ..
                } = &mut *st;
                match delayed.peek() {
                    Some(top) if top.ready_at <= now => {}
                    _ => break,
                }
                let Some(due) = delayed.pop() else { break };
                moved += 1;
                let Some(entry) = items.get_mut(&due.item) else {
                    continue;
                };
                let Some(pending) = entry.pending.as_mut() else {
                    continue;
                };
                if pending.ready || pending.heap_seq != due.seq {
                    continue;
                }
                pending.ready = true;
                entry.added = self.metrics.now();
                self.metrics.add(pending.priority);
                if entry.processing {
                    continue;
                }
                // Ordered by its scheduled ready time, not by when the timer ran.
                let rk = self.ready_key(pending.priority, pending.ready_at, pending.order);
                pending.key = Some(rk);
                ready.insert(rk, due.item);
                if let Some(waker) = waiters.take_for(ready.len()) {
                    wakers.push(waker);
                }
            }
            let more = moved == FIRE_BATCH;
            st.armed = st.delayed.peek().map(|top| top.ready_at);
            let next = st.armed;
            drop(st);
            for waker in wakers.drain(..) {
                waker.wake();
            }
            if !more {
                return Fire::Next(next);
            }
        }
    }
}

impl<T: Item> Background for PShared<T> {
    fn update_unfinished(&self) -> bool {
        let st = self.state.lock();
        if st.shutting_down {
            return false;
        }
        self.metrics.update_unfinished(
            st.items
                .values()
                .filter(|entry| entry.processing)
                .map(|entry| entry.started),
        );
        true
    }
}

/// controller-runtime's priority queue (what its controllers use by default),
/// with anti-starvation aging.
///
/// - [`get`](PriorityQueue::get) hands out the ready item of highest
///   effective priority, FIFO among equals; items not yet ready (added with a
///   delay) wait in the queue's timer heap.
/// - An item added again while it waits keeps the higher of its priorities
///   and the earlier of its ready times.
/// - The invariants of [`Queue`](crate::Queue) hold: an item is never handed
///   to two workers at once, an item added while processed comes back after
///   [`done`](PriorityQueue::done), adds after shut down are ignored, `get`
///   hands out what is ready after shut down, then `None`.
/// - Aging (beyond controller-runtime, see its issue #3496): a ready item's
///   effective priority rises by one level per aging step of waiting
///   ([`Config::aging`]), so a low-priority item of priority `p` can wait for
///   items of priority `q > p` made ready at most `(q - p) × step` after it,
///   and no more: a steady stream of high-priority adds cannot starve it.
///   [`Config::without_aging`] gives controller-runtime's strict order.
///
/// ```
/// use kcr_workqueue::{AddOpts, PriorityQueue};
///
/// # #[tokio::main(flavor = "current_thread")] async fn main() {
/// let queue: PriorityQueue<&str> = PriorityQueue::default();
/// queue.add_with_opts("listed", AddOpts::default().priority(-100));
/// queue.add("changed");
/// assert_eq!(queue.get_with_priority().await, Some(("changed", 0)));
/// assert_eq!(queue.get_with_priority().await, Some(("listed", -100)));
/// # }
/// ```
pub struct PriorityQueue<T> {
    shared: Arc<PShared<T>>,
}

impl<T> Clone for PriorityQueue<T> {
    fn clone(&self) -> Self {
        Self {
            shared: self.shared.clone(),
        }
    }
}

impl<T> std::fmt::Debug for PriorityQueue<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let st = self.shared.state.lock();
        f.debug_struct("PriorityQueue")
            .field("ready", &st.ready.len())
            .field("processing", &st.processing)
            .field("shutting_down", &st.shutting_down)
            .finish_non_exhaustive()
    }
}

impl<T: Item> Default for PriorityQueue<T> {
    /// An unnamed queue whose rate limiter is controller-runtime's default for
    /// it: per-item exponential backoff from 5 ms up to 1000 s.
    fn default() -> Self {
        Self::new(ItemExponentialFailureRateLimiter::new(
            Duration::from_millis(5),
            Duration::from_secs(1000),
        ))
    }
}

impl<T: Item> PriorityQueue<T> {
    /// An unnamed queue (no metrics) with the default aging, rate limited by `limiter`.
    pub fn new(limiter: impl RateLimiter<T> + 'static) -> Self {
        Self::with_config(limiter, Config::default())
    }

    /// A queue built from `config` (name, aging), rate limited by `limiter`.
    pub fn with_config(limiter: impl RateLimiter<T> + 'static, config: Config) -> Self {
        let metrics = config.priority_metrics();
        let shared = Arc::new_cyclic(|me| PShared {
            state: Mutex::new(PState {
                items: Map::default(),
                ready: BTreeMap::new(),
                delayed: BinaryHeap::new(),
                processing: 0,
                shutting_down: false,
                drain: false,
                waiters: Waiters::default(),
                seq: 0,
                armed: None,
                spawn_deferred: true,
            }),
            metrics,
            limiter: Arc::new(limiter),
            aging_nanos: config.aging.map(|step| step.as_nanos().max(1) as i128),
            epoch: Instant::now(),
            timer_wake: Arc::new(Notify::new()),
            drained: Notify::new(),
            me: me.clone(),
        });
        {
            let mut st = shared.state.lock();
            shared.try_spawn(&mut st);
        }
        Self { shared }
    }

    /// Adds `item` with `opts` (priority, delay, rate limiting). Ignored after
    /// shut down; a non-zero delay counts a retry in the metrics.
    pub fn add_with_opts(&self, item: T, opts: AddOpts) {
        self.shared.add_with_opts(item, opts);
    }

    /// Adds `item` now with priority 0.
    pub fn add(&self, item: T) {
        self.add_with_opts(item, AddOpts::default());
    }

    /// Adds `item` with priority 0 once `delay` has passed.
    pub fn add_after(&self, item: T, delay: Duration) {
        self.add_with_opts(item, AddOpts::default().after(delay));
    }

    /// Adds `item` with priority 0 after the delay the rate limiter gives it.
    pub fn add_rate_limited(&self, item: T) {
        self.add_with_opts(item, AddOpts::default().rate_limited());
    }

    /// The ready item of highest effective priority, with its priority;
    /// `None` once shut down and nothing ready is left.
    pub fn get_with_priority(&self) -> Get<'_, (T, i32)> {
        Get::new(&*self.shared)
    }

    /// The ready item of highest effective priority; `None` once shut down
    /// and nothing ready is left.
    pub async fn get(&self) -> Option<T> {
        self.get_with_priority().await.map(|(item, _)| item)
    }

    /// Marks `item` as done: if it was added while being processed, it is
    /// queued again now (with the priority and ready time of those adds).
    pub fn done(&self, item: &T) {
        self.shared.done(item);
    }

    /// Tells the rate limiter to stop tracking `item`.
    pub fn forget(&self, item: &T) {
        self.shared.limiter.forget(item);
    }

    /// How many times `item` was rate limited since it was last forgotten.
    pub fn num_requeues(&self, item: &T) -> usize {
        self.shared.limiter.num_requeues(item)
    }

    /// How many items are ready to be handed out.
    pub fn len(&self) -> usize {
        self.shared.state.lock().ready.len()
    }

    /// Whether no item is ready to be handed out.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Stops accepting items: later adds are ignored, items not yet ready are
    /// dropped, parked workers wake; `get` hands out what is ready, then `None`.
    pub fn shut_down(&self) {
        self.shared.shut_down(false);
    }

    /// [`shut_down`](PriorityQueue::shut_down), then waits until every item
    /// handed out is done.
    pub async fn shut_down_with_drain(&self) {
        self.shared.shut_down(true);
        loop {
            let notified = self.shared.drained.notified();
            tokio::pin!(notified);
            notified.as_mut().enable();
            if self.shared.state.lock().processing == 0 {
                return;
            }
            notified.await;
        }
    }

    /// Whether the queue is shutting down.
    pub fn is_shutting_down(&self) -> bool {
        self.shared.state.lock().shutting_down
    }
}
