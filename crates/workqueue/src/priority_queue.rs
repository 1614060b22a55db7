//! [`PriorityQueue`]: controller-runtime's priority queue, with aging.

use std::collections::hash_map;
use std::collections::{BTreeMap, BinaryHeap};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Weak};
use std::task::{Context, Poll, Waker};
use std::time::Duration;

use parking_lot::Mutex;
use tokio::sync::Notify;
use tokio::time::Instant;

use crate::background::{self, Background, Fire, Timed};
use crate::config::{Config, PriorityConfig};
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

/// The position of a ready item: smallest first. Without aging
/// `(-priority, 0, counter)`, controller-runtime's order; with aging
/// `(ready - priority · step, ready, counter)`, `ready` in nanoseconds.
type ReadyKey = (i128, i128, u64);

/// An item's pending add (what it will be handed out with).
struct Pending {
    priority: i32,
    /// When it became ready, or (delayed) when it becomes ready.
    ready_at: Instant,
    /// Its ready time has come.
    ready: bool,
    /// Its place among the ready items (set when it becomes ready).
    key: ReadyKey,
    /// In the ready set: ready and not being processed (a ready item being
    /// processed enters it at `done`, with its key).
    in_ready: bool,
    /// The sequence number of its live heap entry while it is not ready.
    heap_seq: u64,
    /// controller-runtime's added counter: taken at the first add, again
    /// when the priority is raised and when the timer makes the item ready
    /// (FIFO within a priority).
    counter: u64,
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
    /// Items being processed that are ready again (counted by `len`).
    ready_processing: usize,
    shutting_down: bool,
    waiters: Waiters,
    /// The next heap sequence number.
    seq: u64,
    /// The next added counter.
    counter: u64,
    armed: Option<Instant>,
    spawn_deferred: bool,
}

fn next(n: &mut u64) -> u64 {
    let v = *n;
    *n += 1;
    v
}

struct PShared<T> {
    // Held only for non-blocking map operations, never across an `.await`.
    state: Mutex<PState<T>>,
    metrics: Metrics,
    limiter: Arc<dyn RateLimiter<T>>,
    aging_nanos: Option<i128>,
    epoch: Instant,
    timer_wake: Arc<Notify>,
    /// Mirrors `PState::shutting_down`: adds after shut down neither take
    /// the lock nor ask the rate limiter.
    shut: AtomicBool,
    me: Weak<PShared<T>>,
}

impl<T> Drop for PShared<T> {
    fn drop(&mut self) {
        self.timer_wake.notify_one();
    }
}

/// What an add leaves to do once the lock is released.
#[derive(Default)]
struct AddEffects {
    waker: Option<Waker>,
    rearm: bool,
}

impl<T: Item> PShared<T> {
    fn nanos(&self, at: Instant) -> i128 {
        at.saturating_duration_since(self.epoch).as_nanos() as i128
    }

    /// Where an item goes among the ready ones.
    fn ready_key(&self, priority: i32, ready_at: Instant, counter: u64) -> ReadyKey {
        match self.aging_nanos {
            Some(step) => {
                let ready = self.nanos(ready_at);
                (ready - i128::from(priority) * step, ready, counter)
            }
            None => (-i128::from(priority), 0, counter),
        }
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

    /// The delay of an add: the rate limiter's when asked, or the shorter
    /// of it and a non-zero `after` (controller-runtime's rule).
    fn delay(&self, item: &T, opts: &AddOpts) -> Duration {
        let mut after = opts.after;
        if opts.rate_limited {
            let limited = self.limiter.when(item);
            if after.is_zero() || limited < after {
                after = limited;
            }
        }
        after
    }

    fn add_with_opts(&self, item: T, opts: AddOpts) {
        if self.shut.load(Ordering::Acquire) {
            return;
        }
        let after = self.delay(&item, &opts);
        let now = Instant::now();
        let mut st = self.state.lock();
        if st.shutting_down {
            return;
        }
        let mut effects = AddEffects::default();
        self.insert(&mut st, item, opts.priority, after, now, &mut effects);
        if st.spawn_deferred {
            self.try_spawn(&mut st);
        }
        drop(st);
        if let Some(waker) = effects.waker {
            waker.wake();
        }
        if effects.rearm {
            self.timer_wake.notify_one();
        }
    }

    fn add_all_with_opts(&self, items: impl IntoIterator<Item = T>, opts: AddOpts) {
        if self.shut.load(Ordering::Acquire) {
            return;
        }
        let batch: Vec<(T, Duration)> = items
            .into_iter()
            .map(|item| {
                let after = self.delay(&item, &opts);
                (item, after)
            })
            .collect();
        if batch.is_empty() {
            return;
        }
        let now = Instant::now();
        let mut wakers = Vec::new();
        let mut rearm = false;
        let mut st = self.state.lock();
        if st.shutting_down {
            return;
        }
        for (item, after) in batch {
            let mut effects = AddEffects::default();
            self.insert(&mut st, item, opts.priority, after, now, &mut effects);
            wakers.extend(effects.waker);
            rearm |= effects.rearm;
        }
        if st.spawn_deferred {
            self.try_spawn(&mut st);
        }
        drop(st);
        for waker in wakers {
            waker.wake();
        }
        if rearm {
            self.timer_wake.notify_one();
        }
    }

    /// Adds one item under the lock, as controller-runtime's
    /// `lockedAddWithOpts` does: a new item takes the next added counter; a
    /// known one keeps the higher priority (a raise takes a new counter: the
    /// item goes to the back of its new priority) and the earlier ready time.
    fn insert(
        &self,
        st: &mut PState<T>,
        item: T,
        priority: i32,
        after: Duration,
        now: Instant,
        effects: &mut AddEffects,
    ) {
        if !after.is_zero() {
            self.metrics.retry();
        }
        let ready_at = now
            .checked_add(after)
            .unwrap_or_else(|| now + Duration::from_secs(86400 * 365 * 30));
        let is_ready = after.is_zero();
        let PState {
            items,
            ready,
            delayed,
            waiters,
            ready_processing,
            seq,
            counter,
            armed,
            ..
        } = st;
        let mut push_delayed = None;
        let (key, entry) = match items.entry(item) {
            hash_map::Entry::Occupied(o) => (o.key().clone(), o.into_mut()),
            hash_map::Entry::Vacant(v) => (v.key().clone(), v.insert(PEntry::default())),
        };
        let mut ready_now = false;
        match &mut entry.pending {
            None => {
                let heap_seq = next(seq);
                entry.pending = Some(Pending {
                    priority,
                    ready_at,
                    ready: is_ready,
                    key: (0, 0, 0),
                    in_ready: false,
                    heap_seq,
                    counter: next(counter),
                });
                if is_ready {
                    ready_now = true;
                } else {
                    push_delayed = Some((ready_at, heap_seq));
                }
            }
            Some(pending) => {
                let raised = priority > pending.priority;
                if raised {
                    if pending.ready {
                        self.metrics.reprioritize(pending.priority, priority);
                    }
                    pending.priority = priority;
                    pending.counter = next(counter);
                }
                if pending.ready {
                    if raised {
                        // At the back of its new priority, by the time of
                        // the raise; with aging, an item that has already
                        // waited longer than that keeps its place.
                        let raised_key = self.ready_key(priority, now, pending.counter);
                        let old_key = pending.key;
                        pending.key = raised_key.min(old_key);
                        if pending.in_ready
                            && let Some(item) = ready.remove(&old_key)
                        {
                            ready.insert(pending.key, item);
                        }
                    }
                } else if is_ready {
                    // Delayed, and now added without a delay: ready now,
                    // with the counter it has (controller-runtime's order).
                    pending.ready = true;
                    pending.ready_at = now;
                    ready_now = true;
                } else if ready_at < pending.ready_at {
                    pending.ready_at = ready_at;
                    pending.heap_seq = next(seq);
                    push_delayed = Some((ready_at, pending.heap_seq));
                }
            }
        }
        if ready_now {
            entry.added = self.metrics.now();
            if let Some(pending) = entry.pending.as_mut() {
                self.metrics.add(pending.priority);
                pending.key = self.ready_key(pending.priority, pending.ready_at, pending.counter);
                effects.waker = enter_ready(
                    pending,
                    entry.processing,
                    &key,
                    ready,
                    waiters,
                    ready_processing,
                );
            }
        }
        if let Some((ready_at, seq)) = push_delayed {
            delayed.push(Delayed {
                ready_at,
                seq,
                item: key,
            });
            if armed.is_none_or(|at| ready_at < at) {
                *armed = Some(ready_at);
                effects.rearm = true;
            }
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
            ready_processing,
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
        let mut finished = None;
        match &mut entry.pending {
            Some(pending) if pending.ready => {
                *ready_processing -= 1;
                pending.in_ready = true;
                ready.insert(pending.key, item.clone());
                waker = waiters.take_for(ready.len());
            }
            Some(_) => {}
            None => finished = items.remove_entry(item),
        }
        drop(st);
        // The queue's copy is dropped outside the lock.
        drop(finished);
        if let Some(waker) = waker {
            waker.wake();
        }
        self.metrics.done(started, now);
    }

    fn shut_down(&self) {
        let mut st = self.state.lock();
        if st.shutting_down {
            return;
        }
        st.shutting_down = true;
        self.shut.store(true, Ordering::Release);
        let delayed = std::mem::take(&mut st.delayed);
        st.armed = None;
        // Items not yet ready are dropped; ready ones stay (counted by
        // `len`, as in controller-runtime), never handed out.
        st.items.retain(|_, entry| {
            if entry.pending.as_ref().is_some_and(|p| !p.ready) {
                entry.pending = None;
            }
            entry.pending.is_some() || entry.processing
        });
        let wakers = st.waiters.take_all();
        drop(st);
        drop(delayed);
        for waker in wakers {
            waker.wake();
        }
        self.timer_wake.notify_one();
    }
}

/// Puts a pending item that became ready (its key set) among the ready
/// items, or, while it is processed, counts it until its `done`; returns a
/// parked worker to wake.
fn enter_ready<T: Item>(
    pending: &mut Pending,
    processing: bool,
    item: &T,
    ready: &mut BTreeMap<ReadyKey, T>,
    waiters: &mut Waiters,
    ready_processing: &mut usize,
) -> Option<Waker> {
    if processing {
        *ready_processing += 1;
        return None;
    }
    pending.in_ready = true;
    ready.insert(pending.key, item.clone());
    waiters.take_for(ready.len())
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
        if *shutting_down {
            // As controller-runtime: nothing is handed out after shut down.
            if let Some(id) = slot.take() {
                waiters.remove(id);
            }
            return Poll::Ready(None);
        }
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
        let mut due: Vec<(Instant, i32, u64, T)> = Vec::new();
        loop {
            let mut st = self.state.lock();
            if st.shutting_down {
                return Fire::Stop;
            }
            let PState {
                items,
                ready,
                waiters,
                delayed,
                ready_processing,
                counter,
                ..
            } = &mut *st;
            // Pop a batch of due entries (and every one due at the same
            // time as the last, so that they are ordered together).
            let mut popped = 0;
            let mut last = None;
            loop {
                match delayed.peek() {
                    Some(top)
                        if top.ready_at <= now
                            && (popped < FIRE_BATCH || last == Some(top.ready_at)) => {}
                    _ => break,
                }
                let Some(entry) = delayed.pop() else { break };
                popped += 1;
                last = Some(entry.ready_at);
                let live = items
                    .get(&entry.item)
                    .and_then(|e| e.pending.as_ref())
                    .filter(|p| !p.ready && p.heap_seq == entry.seq);
                if let Some(p) = live {
                    due.push((p.ready_at, p.priority, p.counter, entry.item));
                }
            }
            // controller-runtime moves due items in its waiting order (ready
            // time, higher priority, added counter), each taking the next
            // counter: FIFO by the time they became ready.
            due.sort_unstable_by(|a, b| (a.0, b.1, a.2).cmp(&(b.0, a.1, b.2)));
            for (_, _, _, item) in due.drain(..) {
                let Some(entry) = items.get_mut(&item) else {
                    continue;
                };
                let processing = entry.processing;
                let Some(pending) = entry.pending.as_mut() else {
                    continue;
                };
                pending.ready = true;
                pending.counter = next(counter);
                // With aging, ordered by its scheduled ready time, not by
                // when the timer ran.
                pending.key = self.ready_key(pending.priority, pending.ready_at, pending.counter);
                entry.added = self.metrics.now();
                self.metrics.add(pending.priority);
                wakers.extend(enter_ready(
                    pending,
                    processing,
                    &item,
                    ready,
                    waiters,
                    ready_processing,
                ));
            }
            let more = popped >= FIRE_BATCH;
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
///   and the earlier of its ready times. An item whose priority is raised
///   goes to the back of its new priority (FIFO by the time of the raise);
///   an item made ready by the timer goes after the items already ready; a
///   delayed item made ready by an add without delay keeps the place of its
///   first add. All as controller-runtime orders them.
/// - An item is never handed to two workers at once; an item added while
///   processed comes back after [`done`](PriorityQueue::done), and
///   [`len`](PriorityQueue::len) counts it meanwhile once it is ready.
/// - Shut down is controller-runtime's, which differs from
///   [`Queue`](crate::Queue)'s: adds are ignored and
///   [`get`](PriorityQueue::get) returns `None` at once, even with items
///   ready (a `Queue` hands those out first);
///   [`shut_down_with_drain`](PriorityQueue::shut_down_with_drain) is a plain
///   shut down that does not wait for the items being processed.
/// - Aging, the one intended difference from controller-runtime (see its
///   issue #3496), on by default: a ready item's effective priority rises by
///   one level per aging step of waiting ([`PriorityConfig::aging`]), so a
///   low-priority item of priority `p` can wait for items of priority
///   `q > p` made ready at most `(q - p) × step` after it, and no more: a
///   steady stream of high-priority adds cannot starve it. A raise of
///   priority never moves an item back: one that has aged past its new
///   priority keeps its place. [`PriorityConfig::without_aging`] gives
///   controller-runtime's order exactly.
///
/// ```
/// use kcr_workqueue::{AddOpts, PriorityQueue};
///
/// # #[tokio::main(flavor = "current_thread")] async fn main() {
/// let queue: PriorityQueue<&str> = PriorityQueue::default();
/// queue.add_all_with_opts(["listed-1", "listed-2"], AddOpts::default().priority(-100));
/// queue.add("changed");
/// assert_eq!(queue.len(), 3);
/// assert_eq!(queue.get_with_priority().await, Some(("changed", 0)));
/// assert_eq!(queue.get_with_priority().await, Some(("listed-1", -100)));
/// queue.shut_down();
/// assert_eq!(queue.get().await, None, "nothing is handed out after shut down");
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

    /// A queue built from `config` (name, aging; a plain [`Config`] has the
    /// default aging), rate limited by `limiter`.
    pub fn with_config(
        limiter: impl RateLimiter<T> + 'static,
        config: impl Into<PriorityConfig>,
    ) -> Self {
        let config = config.into();
        let metrics = config.config.priority_metrics();
        let shared = Arc::new_cyclic(|me| PShared {
            state: Mutex::new(PState {
                items: Map::default(),
                ready: BTreeMap::new(),
                delayed: BinaryHeap::new(),
                processing: 0,
                ready_processing: 0,
                shutting_down: false,
                waiters: Waiters::default(),
                seq: 0,
                counter: 0,
                armed: None,
                spawn_deferred: true,
            }),
            metrics,
            limiter: Arc::new(limiter),
            aging_nanos: config.aging.map(|step| step.as_nanos().max(1) as i128),
            epoch: Instant::now(),
            timer_wake: Arc::new(Notify::new()),
            shut: AtomicBool::new(false),
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

    /// Adds every item of `items`, in order, with the same `opts` (each
    /// asks the rate limiter for its own delay when rate limited), under one
    /// hold of the queue's lock: controller-runtime's `AddWithOpts(opts,
    /// items...)`. Ignored after shut down.
    pub fn add_all_with_opts(&self, items: impl IntoIterator<Item = T>, opts: AddOpts) {
        self.shared.add_all_with_opts(items, opts);
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
    /// `None` once shut down (at once, even with items ready).
    pub fn get_with_priority(&self) -> Get<'_, (T, i32)> {
        Get::new(&*self.shared)
    }

    /// The ready item of highest effective priority; `None` once shut down
    /// (at once, even with items ready).
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

    /// The rate limiter of this queue.
    pub fn rate_limiter(&self) -> &Arc<dyn RateLimiter<T>> {
        &self.shared.limiter
    }

    /// How many items are ready: those waiting to be handed out, and those
    /// being processed that were added again and are ready (handed out after
    /// their `done`), as controller-runtime counts. Items not yet ready are
    /// not counted.
    pub fn len(&self) -> usize {
        let st = self.shared.state.lock();
        st.ready.len() + st.ready_processing
    }

    /// Whether no item is ready ([`len`](PriorityQueue::len) is 0).
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Stops the queue, as controller-runtime's `ShutDown`: later adds are
    /// ignored, items not yet ready are dropped, and `get` returns `None` at
    /// once, parked workers included, even with items ready (unlike
    /// [`Queue::shut_down`](crate::Queue::shut_down)). `done` still works.
    pub fn shut_down(&self) {
        self.shared.shut_down();
    }

    /// As controller-runtime's `ShutDownWithDrain`: a plain
    /// [`shut_down`](PriorityQueue::shut_down) that returns at once, without
    /// waiting for the items being processed (unlike
    /// [`Queue::shut_down_with_drain`](crate::Queue::shut_down_with_drain)).
    /// A caller that must wait for its workers waits for their tasks.
    pub async fn shut_down_with_drain(&self) {
        self.shared.shut_down();
    }

    /// Whether the queue is shutting down.
    pub fn is_shutting_down(&self) -> bool {
        self.shared.state.lock().shutting_down
    }
}
