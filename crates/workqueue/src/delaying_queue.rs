//! [`DelayingQueue`]: a [`Queue`] whose items can be added after a delay.

use std::collections::BTreeMap;
use std::future::Future;
use std::ops::Deref;
use std::sync::atomic::Ordering;
use std::sync::{Arc, Weak};
use std::task::Poll;
use std::time::Duration;

use tokio::sync::Notify;
use tokio::time::Instant;

use crate::config::{Config, DelayingConfig};
use crate::precise_timer::PreciseTimer;
use crate::queue::{Delayed, Hashed, Item, Queue, Shared};

/// How many due items the timer moves per lock hold, so that a large batch
/// never keeps workers and producers waiting long.
const FIRE_BATCH: usize = 1024;

/// A deadline so far away it never comes (for delays that overflow `Instant`).
fn far_future(now: Instant) -> Instant {
    now + Duration::from_secs(86400 * 365 * 30)
}

impl<T: Item> Shared<T> {
    pub(crate) fn add_after(&self, item: T, delay: Duration) {
        if self.shut.load(Ordering::Acquire) {
            return;
        }
        // Every delayed add counts a retry, a zero delay included, as in
        // client-go (so does every rate-limited add).
        self.metrics.retry();
        if delay.is_zero() {
            self.add(item);
            return;
        }
        let now = Instant::now();
        let ready_at = now.checked_add(delay).unwrap_or_else(|| far_future(now));
        if !self.spawned.load(Ordering::Acquire) {
            let mut st = self.state.lock();
            self.try_spawn(&mut st);
        }
        if let Some(inbox) = &self.inbox {
            // Unbounded: the caller never waits for the timer.
            inbox.push(self.hashed(item), ready_at);
        }
    }

    /// Queues the due items of `batch` in order; false once the queue is shut down.
    fn enqueue_due(&self, batch: &mut Vec<Hashed<T>>) -> bool {
        let mut wakers = Vec::new();
        let mut items = batch.drain(..);
        loop {
            let chunk = items.len().min(FIRE_BATCH);
            // Depth first, as in `add`.
            for _ in 0..chunk {
                self.metrics.depth_inc();
            }
            let mut st = self.state.lock();
            if st.shutting_down {
                drop(st);
                for _ in 0..chunk {
                    self.metrics.depth_dec();
                }
                return false;
            }
            let mut queued = 0;
            for item in items.by_ref().take(chunk) {
                let (waker, newly) = self.enqueue(&mut st, item);
                wakers.extend(waker);
                queued += usize::from(newly);
            }
            drop(st);
            for waker in wakers.drain(..) {
                waker.wake();
            }
            for _ in 0..queued {
                self.metrics.added();
            }
            for _ in queued..chunk {
                self.metrics.depth_dec();
            }
            if items.len() == 0 {
                return true;
            }
        }
    }
}

/// Where `add_after` leaves delayed items for the timer task.
///
/// A producer pushes under a short lock (no allocation per add, unlike a
/// channel's blocks and permits) and wakes the timer only if it sleeps: while
/// it runs, the timer takes everything here before it sleeps again, so a burst
/// of adds costs one wake-up. Every add wakes a sleeping timer, even one due
/// later than the timer's own deadline: relying on the timer's sleep alone
/// would make delivery wait for the runtime's time driver, which busy worker
/// threads poll late.
pub(crate) struct Inbox<T> {
    // A parking_lot mutex in async code: held only to push or swap a vector
    // and compare a time, never across an `.await`.
    state: parking_lot::Mutex<InboxState<T>>,
    wake: Notify,
    /// The timer wakes through a [`PreciseTimer`] as well as Tokio's wheel.
    precise: bool,
    /// The shortest time between two runs of the timer that a precise
    /// wake-up may ask for: under a steady stream of ready times (100,000
    /// items/s is one every 10 µs) the timer runs at most once per this much
    /// and queues what came due meanwhile, so the mean lateness this adds is
    /// about half of it, and the wake-ups (each a thread wake and a task
    /// poll) are bounded.
    resolution: Duration,
}

struct InboxState<T> {
    adds: Vec<(Hashed<T>, Instant)>,
    /// The earliest ready time in `adds`.
    earliest: Option<Instant>,
    /// The time the sleeping timer wakes at by itself; `None` while it runs
    /// (it looks at the inbox again before it sleeps) or once an add woke it.
    armed: Option<Instant>,
    /// Shut down, or every handle dropped: the timer ends.
    closed: bool,
}

impl<T> Inbox<T> {
    /// An inbox whose timer wakes at most once per `resolution` (Tokio's
    /// wheel alone from 1 ms).
    pub(crate) fn new(resolution: Duration) -> Self {
        Self {
            state: parking_lot::Mutex::new(InboxState {
                adds: Vec::new(),
                earliest: None,
                armed: None,
                closed: false,
            }),
            wake: Notify::new(),
            precise: resolution < TOKIO_RESOLUTION,
            resolution,
        }
    }

    fn push(&self, item: Hashed<T>, ready_at: Instant) {
        let mut st = self.state.lock();
        if st.closed {
            // The timer has ended: the item is dropped, as shut down drops
            // delayed items.
            return;
        }
        st.adds.push((item, ready_at));
        st.earliest = Some(st.earliest.map_or(ready_at, |at| at.min(ready_at)));
        let wake = st.armed.is_some();
        if wake {
            st.armed = None;
        }
        drop(st);
        if wake {
            self.wake.notify_one();
        }
    }

    pub(crate) fn close(&self) {
        let mut st = self.state.lock();
        st.closed = true;
        st.adds = Vec::new();
        st.earliest = None;
        drop(st);
        self.wake.notify_one();
    }
}

/// How many inbox items the timer files before it queues what is due: a
/// burst of adds must not hold back the items already due until all of it
/// is filed (unpaced `add_after` bench: mean lateness 28-75 ms with the
/// whole inbox filed first, 2-5 ms with 256, 6-9 ms with 1024).
const INSERT_CHUNK: usize = 256;

/// The inbox capacity kept between wake-ups of the timer.
const INBOX_KEEP: usize = 4096;

/// The width of a timer bucket: Tokio's timer resolution.
const BUCKET_NANOS: u128 = 1_000_000;

/// The delayed items whose ready time falls in one millisecond.
struct Bucket {
    /// The entries' hashes: the items themselves wait in `Timer::waiting`.
    items: Vec<Delayed<u64>>,
    /// The earliest ready time in `items`.
    min: Instant,
    /// `items` is in (ready time, arrival) order.
    sorted: bool,
}

/// The delayed items of one queue, owned by its timer task (no lock).
///
/// Items sit in per-millisecond buckets, in a `BTreeMap` keyed by the
/// millisecond: an insert is a push onto a short vector (no heap sift over a
/// structure of hundreds of thousands of entries, which is what made a binary
/// heap slow here), and a bucket is sorted once, when it comes due.
struct Timer<T> {
    buckets: BTreeMap<u64, Bucket>,
    /// Each waiting item, its ready time and the sequence number of its
    /// live bucket entry (older entries for the same item find no match and
    /// are skipped), found by the hash the item came with.
    waiting: hashbrown::HashTable<Waiting<T>>,
    seq: u64,
    epoch: Instant,
}

/// A waiting item's live entry in the timer.
struct Waiting<T> {
    hash: u64,
    item: T,
    ready_at: Instant,
    seq: u64,
}

fn order<T>(a: &Delayed<T>, b: &Delayed<T>) -> std::cmp::Ordering {
    (a.ready_at, a.seq).cmp(&(b.ready_at, b.seq))
}

impl<T: Item> Timer<T> {
    fn new() -> Self {
        Self {
            buckets: BTreeMap::new(),
            waiting: hashbrown::HashTable::new(),
            seq: 0,
            epoch: Instant::now(),
        }
    }

    fn insert(&mut self, item: Hashed<T>, ready_at: Instant) {
        let seq = self.seq + 1;
        match self.waiting.find_mut(item.hash, |w| w.item == item.item) {
            Some(waiting) => {
                if waiting.ready_at <= ready_at {
                    // Waiting already, and ready sooner: keep the earlier time.
                    return;
                }
                waiting.ready_at = ready_at;
                waiting.seq = seq;
            }
            None => {
                let waiting = Waiting {
                    hash: item.hash,
                    item: item.item,
                    ready_at,
                    seq,
                };
                self.waiting.insert_unique(item.hash, waiting, |w| w.hash);
            }
        }
        self.seq = seq;
        let nanos = ready_at.saturating_duration_since(self.epoch).as_nanos();
        let key = u64::try_from(nanos / BUCKET_NANOS).unwrap_or(u64::MAX);
        let bucket = self.buckets.entry(key).or_insert_with(|| Bucket {
            items: Vec::new(),
            min: ready_at,
            sorted: true,
        });
        bucket.min = bucket.min.min(ready_at);
        let delayed = Delayed {
            ready_at,
            seq,
            item: item.hash,
        };
        if bucket
            .items
            .last()
            .is_some_and(|last| order(last, &delayed).is_gt())
        {
            bucket.sorted = false;
        }
        bucket.items.push(delayed);
    }

    /// The earliest ready time.
    fn next(&self) -> Option<Instant> {
        self.buckets.first_key_value().map(|(_, bucket)| bucket.min)
    }

    /// Moves the items due at `now` to `batch`, in ready-time order.
    fn due(&mut self, now: Instant, batch: &mut Vec<Hashed<T>>) {
        while let Some(mut first) = self.buckets.first_entry() {
            let bucket = first.get_mut();
            if bucket.min > now {
                break;
            }
            if !bucket.sorted {
                bucket.items.sort_unstable_by(order);
                bucket.sorted = true;
            }
            let due = bucket.items.partition_point(|d| d.ready_at <= now);
            for delayed in bucket.items.drain(..due) {
                // The live entry of an item has its sequence number; one
                // superseded by an earlier ready time finds nothing.
                let hash = delayed.item;
                if let Ok(waiting) = self.waiting.find_entry(hash, |w| w.seq == delayed.seq) {
                    let (Waiting { item, .. }, _) = waiting.remove();
                    batch.push(Hashed { hash, item });
                }
            }
            match bucket.items.first() {
                Some(first_left) => {
                    bucket.min = first_left.ready_at;
                    break;
                }
                None => {
                    first.remove();
                }
            }
        }
    }
}

/// The resolution of Tokio's timer wheel.
const TOKIO_RESOLUTION: Duration = Duration::from_millis(1);

/// How far ahead of the earliest ready time the timer task stops sleeping on
/// Tokio's wheel and hands the rest of the wait to the [`PreciseTimer`]: the
/// wheel wakes at a millisecond boundary at or after its deadline, and a
/// driver parked for whole milliseconds may wake up to one more late.
const PRECISE_HORIZON: Duration = Duration::from_millis(2);

/// The timer asks for no precise wake-up while it started this many runs
/// within its resolution: the adds that keep waking it are its wake-ups.
/// (A producer paced at 100,000 adds/s in bursts of 100 per millisecond
/// wakes it once or twice per burst; one adding as fast as it can, every few
/// microseconds.)
const BUSY_RUNS: usize = 4;

/// Whether a thread waking up would find an idle core rather than preempt a
/// busy worker of the runtime: one of its other workers is parked, or parked
/// since the timer last looked (`parks`, the workers' park counts then,
/// updated), or it has a single worker (the one running the timer). While
/// every worker stays busy the items due wait for a worker anyway, and a timer
/// thread preempting one (it may hold the queue's lock) slows them all: with
/// the timer thread woken regardless, an unpaced burst of 200,000
/// `add_after` on two cores came tens of milliseconds late on average
/// where Tokio's wheel alone came well under one (README, Performance).
fn has_idle_capacity(runtime: &tokio::runtime::RuntimeMetrics, parks: &mut u64) -> bool {
    let workers = runtime.num_workers();
    if workers <= 1 {
        return true;
    }
    let (mut now, mut parked) = (0, false);
    for w in 0..workers {
        let count = runtime.worker_park_unpark_count(w);
        // An odd park/unpark count: that worker is parked.
        parked |= count % 2 == 1;
        now += count;
    }
    let parked_since = now != std::mem::replace(parks, now);
    parked || parked_since
}

/// The timer task of a delaying queue: takes the delayed items from the
/// inbox into its buckets, queues items when they are due, sleeps until the
/// earliest ready time or until an add needs it sooner. One task per queue,
/// whatever the number of delayed items.
///
/// It sleeps on Tokio's wheel until [`PRECISE_HORIZON`] before the earliest
/// ready time, then asks the [`PreciseTimer`] for a wake-up at that time (no
/// sooner than the queue's timer resolution after its last run), keeping a wheel sleep until the ready
/// time as well: the wheel alone delivers 0.5 ms late on average for its
/// rounding to whole milliseconds. The items due are always decided by
/// `tokio::time::Instant`, so a paused clock drives the queue through the
/// wheel sleep as before.
pub(crate) async fn run_timer<T: Item>(queue: Weak<Shared<T>>, inbox: Arc<Inbox<T>>) {
    let mut timer = Timer::new();
    let mut adds = Vec::new();
    let mut batch = Vec::new();
    // One sleep, re-armed only when its deadline changes.
    let sleep = tokio::time::sleep_until(far_future(Instant::now()));
    tokio::pin!(sleep);
    let mut armed: Option<Instant> = None;
    let mut elapsed = false;
    let mut precise = if inbox.precise {
        PreciseTimer::new()
    } else {
        None
    };
    let runtime = tokio::runtime::Handle::try_current()
        .ok()
        .map(|handle| handle.metrics());
    let mut parks = 0;
    // The ready time the precise timer was last asked to wake us at.
    let mut precise_armed: Option<Instant> = None;
    let mut last_run = Instant::now();
    // When the last runs started, the oldest first.
    let mut runs = [last_run; BUSY_RUNS];
    loop {
        {
            let mut st = inbox.state.lock();
            if st.closed {
                return;
            }
            std::mem::swap(&mut st.adds, &mut adds);
            st.earliest = None;
            st.armed = None;
        }
        let run = Instant::now();
        // The timer runs far more often than its resolution (a stream of
        // adds wakes it again and again): a precise wake-up is not worth a
        // thread's wake-up then, and wakes it up while other threads are busy.
        let busy = run.saturating_duration_since(runs[0]) < inbox.resolution;
        runs.rotate_left(1);
        runs[BUSY_RUNS - 1] = run;
        last_run = last_run.max(run);
        // In chunks, queueing what is due after each: an item whose ready
        // time has passed when it is filed is queued then, as client-go's
        // timer queues an item that comes in due.
        let mut pending = adds.drain(..);
        loop {
            for (item, ready_at) in pending.by_ref().take(INSERT_CHUNK) {
                timer.insert(item, ready_at);
            }
            timer.due(Instant::now(), &mut batch);
            if !batch.is_empty() {
                let Some(queue) = queue.upgrade() else {
                    return;
                };
                if !queue.enqueue_due(&mut batch) {
                    return;
                }
            }
            if pending.len() == 0 {
                break;
            }
        }
        drop(pending);
        if adds.capacity() > INBOX_KEEP {
            // After a burst: do not keep its memory (this vector is the
            // inbox's next one).
            adds = Vec::new();
        }
        let next = timer.next();
        let sooner = {
            let mut st = inbox.state.lock();
            if st.closed {
                return;
            }
            // What came in meanwhile waits for the next wake-up, unless it is
            // due sooner.
            let sooner = st
                .earliest
                .is_some_and(|at| next.is_none_or(|next| at < next));
            if !sooner {
                st.armed = Some(next.unwrap_or_else(|| far_future(Instant::now())));
            }
            sooner
        };
        if sooner {
            // Go again, but let the workers this task woke run now and then:
            // they may sit in this thread's LIFO slot.
            tokio::task::coop::consume_budget().await;
            continue;
        }
        let now = Instant::now();
        // The wheel's deadline: the ready time itself, or, with a precise
        // timer, the slot before the horizon while the ready time is further.
        let wheel_at = match (next, &precise) {
            (Some(next), Some(_)) if next > now + PRECISE_HORIZON => Some(next - PRECISE_HORIZON),
            _ => next,
        };
        if let (Some(next), Some(timer)) = (next, precise.as_mut())
            && wheel_at == Some(next)
            && precise_armed != Some(next)
            && !busy
            && runtime
                .as_ref()
                .is_none_or(|runtime| has_idle_capacity(runtime, &mut parks))
        {
            let at = next.max(last_run + inbox.resolution);
            timer.arm(at.saturating_duration_since(now));
            precise_armed = Some(next);
        }
        if wheel_at != armed || elapsed {
            sleep
                .as_mut()
                .reset(wheel_at.unwrap_or_else(|| far_future(now)));
            armed = wheel_at;
            elapsed = false;
        }
        let notified = inbox.wake.notified();
        tokio::pin!(notified);
        let woken = std::future::poll_fn(|cx| {
            if notified.as_mut().poll(cx).is_ready() {
                return Poll::Ready(true);
            }
            if let Some(timer) = precise.as_mut()
                && timer.poll_fired(cx).is_ready()
            {
                return Poll::Ready(true);
            }
            if sleep.as_mut().poll(cx).is_ready() {
                return Poll::Ready(false);
            }
            Poll::Pending
        })
        .await;
        if !woken {
            // The wheel's deadline came: re-arm after firing.
            elapsed = true;
        }
    }
}

/// client-go's `DelayingInterface`: a [`Queue`] plus
/// [`add_after`](DelayingQueue::add_after).
///
/// - A zero delay adds now. Every `add_after` (rate-limited adds included)
///   counts a retry in the metrics, whatever its delay.
/// - An item already waiting keeps the earlier of its two ready times.
/// - Ready items enter the queue in ready-time order. An item whose ready
///   time has already passed when the timer takes it in (in a burst of adds
///   the timer is still filing, in chunks) is queued as it is taken in, as
///   client-go's timer queues an item that reaches it due.
/// - Shut down drops the waiting items.
///
/// Callers never block and never take the queue's lock for a delayed add: it
/// goes through an unbounded inbox to the queue's single timer task, which
/// keeps the delayed items in millisecond buckets (client-go's 1000-slot channel blocks
/// producers when its timer falls behind). The methods of [`Queue`] are
/// reached through `Deref`.
///
/// ```
/// use std::time::Duration;
/// use kcr_workqueue::DelayingQueue;
///
/// # #[tokio::main(flavor = "current_thread", start_paused = true)] async fn main() {
/// let queue: DelayingQueue<&str> = DelayingQueue::new();
/// queue.add_after("later", Duration::from_millis(20));
/// queue.add_after("sooner", Duration::from_millis(10));
/// assert_eq!(queue.get().await, Some("sooner"));
/// assert_eq!(queue.get().await, Some("later"));
/// # }
/// ```
pub struct DelayingQueue<T> {
    queue: Queue<T>,
}

impl<T> Clone for DelayingQueue<T> {
    fn clone(&self) -> Self {
        Self {
            queue: self.queue.clone(),
        }
    }
}

impl<T> std::fmt::Debug for DelayingQueue<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DelayingQueue")
            .field("queue", &self.queue)
            .finish_non_exhaustive()
    }
}

impl<T> Deref for DelayingQueue<T> {
    type Target = Queue<T>;

    fn deref(&self) -> &Queue<T> {
        &self.queue
    }
}

impl<T: Item> Default for DelayingQueue<T> {
    fn default() -> Self {
        Self::new()
    }
}

impl<T: Item> DelayingQueue<T> {
    /// An unnamed delaying queue (no metrics).
    ///
    /// Its timer task is spawned on the current Tokio runtime; built outside
    /// one, the task starts at the first `get` or delayed add made inside one.
    pub fn new() -> Self {
        Self::with_config(Config::default())
    }

    /// A delaying queue built from `config`.
    pub fn with_config(config: impl Into<DelayingConfig>) -> Self {
        let config = config.into();
        Self {
            queue: Queue {
                shared: Shared::new(&config.config, Some(config.timer_resolution)),
            },
        }
    }

    /// Adds `item` once `delay` has passed (now if it is zero). Ignored after
    /// shut down. Counts a retry in the metrics, whatever the delay.
    pub fn add_after(&self, item: T, delay: Duration) {
        self.queue.shared.add_after(item, delay);
    }
}
