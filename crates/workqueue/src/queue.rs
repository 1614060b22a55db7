//! [`Queue`]: client-go's `Type`, the fair, stingy work queue.

use std::collections::{HashMap, VecDeque};
use std::hash::{BuildHasher, Hash};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Weak};
use std::task::{Context, Poll, Waker};

use parking_lot::Mutex;
use std::time::Duration;
use tokio::sync::Notify;

use tokio::time::Instant;

use crate::background::{self, Background};
use crate::config::Config;
use crate::delaying_queue::Inbox;
use crate::metrics::{Metrics, Stamp};
use crate::waiters::{Get, Source, Waiters};

/// What a queue can hold: cheap to clone (an `Arc<str>`, a small struct of
/// `Arc`s, an integer), compared and hashed to deduplicate.
pub trait Item: Clone + Eq + Hash + Send + Sync + 'static {}

impl<T: Clone + Eq + Hash + Send + Sync + 'static> Item for T {}

pub(crate) type Hasher = foldhash::fast::RandomState;
pub(crate) type Map<K, V> = HashMap<K, V, Hasher>;

/// An item with its hash, computed once, before the lock is taken, and
/// carried along (inbox, timer, FIFO) so no later step hashes it again.
pub(crate) struct Hashed<T> {
    pub(crate) hash: u64,
    pub(crate) item: T,
}

/// An item the queue knows (queued or being processed). Slots stay where
/// they are (a freed one is reused), so the FIFO can point at them.
pub(crate) struct Slot<T> {
    hash: u64,
    /// `None` while the slot is free.
    item: Option<T>,
    entry: Entry,
}

/// A FIFO element: the item, and the slot that holds its state, so that
/// `get` needs no lookup.
pub(crate) struct Queued<T> {
    slot: usize,
    item: T,
}

thread_local! {
    /// The queue (its address) and slot of the last item this thread got:
    /// a worker usually calls `done` for it next, on the same thread, and
    /// then needs neither a hash nor a lookup. Only a hint: `done` checks the
    /// slot holds an equal item, and looks the item up otherwise.
    static LAST_GOT: std::cell::Cell<(usize, usize)> = const { std::cell::Cell::new((0, usize::MAX)) };
}

/// What the queue knows of one item: queued, processing, or both (processing
/// and added again). An item that is neither is let go (its slot freed).
#[derive(Default)]
pub(crate) struct Entry {
    /// Dirty: waiting to be handed out (in the FIFO unless being processed).
    pub(crate) queued: bool,
    /// Handed out and not yet done.
    pub(crate) processing: bool,
    /// When it became queued (metrics only).
    pub(crate) added: Stamp,
    /// When it was handed out (metrics only).
    pub(crate) started: Stamp,
}

/// A delayed item in the timer heap, ordered by ready time, then by arrival.
pub(crate) struct Delayed<T> {
    pub(crate) ready_at: Instant,
    pub(crate) seq: u64,
    pub(crate) item: T,
}

impl<T> PartialEq for Delayed<T> {
    fn eq(&self, other: &Self) -> bool {
        (self.ready_at, self.seq) == (other.ready_at, other.seq)
    }
}
impl<T> Eq for Delayed<T> {}
impl<T> PartialOrd for Delayed<T> {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}
impl<T> Ord for Delayed<T> {
    // Reversed: `BinaryHeap` is a max-heap and the earliest must come out first.
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        (other.ready_at, other.seq).cmp(&(self.ready_at, self.seq))
    }
}

/// Aligned to a cache line, so that in its mutex the lock word has a line
/// of its own: a thread spinning on the lock reads that line, not the one
/// the holder writes the state in (and the fields of [`Shared`] after the
/// mutex, read outside the lock, start on a line of their own too).
#[repr(align(64))]
pub(crate) struct State<T> {
    /// The slot of every item queued or being processed, found by the
    /// item's hash.
    index: hashbrown::HashTable<usize>,
    slots: Vec<Slot<T>>,
    /// Free slots.
    free: Vec<usize>,
    pub(crate) fifo: VecDeque<Queued<T>>,
    /// Items handed out and not yet done (queued again or not).
    pub(crate) processing: usize,
    /// Items handed out and not yet done that were added again (they enter
    /// the FIFO at `done`): the depth is `fifo.len() + requeued`.
    requeued: usize,
    pub(crate) shutting_down: bool,
    pub(crate) drain: bool,
    pub(crate) waiters: Waiters,
    /// No runtime at construction: the background tasks start at the next
    /// `get` or delayed add made inside one.
    pub(crate) spawn_deferred: bool,
}

/// The state shared by every handle of a [`Queue`], [`DelayingQueue`](crate::DelayingQueue)
/// or [`RateLimitingQueue`](crate::RateLimitingQueue).
pub(crate) struct Shared<T> {
    // A parking_lot mutex in async code: it is only ever held for a few
    // non-blocking operations on the maps, never across an `.await`.
    pub(crate) state: Mutex<State<T>>,
    hasher: Hasher,
    pub(crate) metrics: Metrics,
    drained: Notify,
    /// Delaying queues: where `add_after` leaves items for the timer task,
    /// never blocking.
    pub(crate) inbox: Option<Arc<Inbox<T>>>,
    /// Mirrors `State::shutting_down` for the lock-free `add_after`.
    pub(crate) shut: AtomicBool,
    /// The background tasks are spawned (mirrors `!State::spawn_deferred`).
    pub(crate) spawned: AtomicBool,
    me: Weak<Shared<T>>,
}

impl<T> Drop for Shared<T> {
    fn drop(&mut self) {
        // Every handle is gone: the timer task ends.
        if let Some(inbox) = &self.inbox {
            inbox.close();
        }
    }
}

#[inline]
fn wake(waker: Option<Waker>) {
    if let Some(waker) = waker {
        waker.wake();
    }
}

impl<T: Item> Shared<T> {
    /// A queue's state; a delaying queue's has a timer inbox of `timer_resolution`.
    pub(crate) fn new(config: &Config, timer_resolution: Option<Duration>) -> Arc<Self> {
        let inbox = timer_resolution.map(|resolution| Arc::new(Inbox::new(resolution)));
        let shared = Arc::new_cyclic(|me| Shared {
            state: Mutex::new(State {
                index: hashbrown::HashTable::new(),
                slots: Vec::new(),
                free: Vec::new(),
                fifo: VecDeque::new(),
                processing: 0,
                requeued: 0,
                shutting_down: false,
                drain: false,
                waiters: Waiters::default(),
                spawn_deferred: true,
            }),
            hasher: Hasher::default(),
            metrics: config.queue_metrics(me.clone()),
            drained: Notify::new(),
            inbox,
            shut: AtomicBool::new(false),
            spawned: AtomicBool::new(false),
            me: me.clone(),
        });
        {
            let mut st = shared.state.lock();
            shared.try_spawn(&mut st);
        }
        shared
    }

    /// Starts the background tasks this queue needs, if a runtime is at hand.
    pub(crate) fn try_spawn(&self, st: &mut State<T>) {
        if !st.spawn_deferred {
            return;
        }
        let delaying = self.inbox.is_some();
        if delaying || self.metrics.enabled() {
            let Ok(handle) = tokio::runtime::Handle::try_current() else {
                return;
            };
            if let Some(inbox) = &self.inbox {
                handle.spawn(crate::delaying_queue::run_timer(
                    self.me.clone(),
                    inbox.clone(),
                ));
            }
            if self.metrics.enabled() {
                background::spawn_unfinished_work_updater(&handle, self.me.clone());
            }
        }
        st.spawn_deferred = false;
        self.spawned.store(true, Ordering::Release);
    }

    /// This queue's address, naming it in [`LAST_GOT`].
    fn address(&self) -> usize {
        std::ptr::from_ref(self).addr()
    }

    /// `item` with its hash (computed without the lock).
    pub(crate) fn hashed(&self, item: T) -> Hashed<T> {
        Hashed {
            hash: self.hasher.hash_one(&item),
            item,
        }
    }

    /// Marks `item` queued; returns a parked worker to wake, if it entered
    /// the FIFO, and whether it became queued (it was not waiting already).
    /// An item that becomes queued is stamped with the metrics clock (as
    /// client-go stamps it in its lock, and only then: an add of an item
    /// already waiting reads no clock); the caller records the other
    /// metrics, outside the lock.
    pub(crate) fn enqueue(&self, st: &mut State<T>, hashed: Hashed<T>) -> (Option<Waker>, bool) {
        let State {
            index,
            slots,
            free,
            fifo,
            waiters,
            requeued,
            ..
        } = st;
        let Hashed { hash, item } = hashed;
        let found = index
            .find(hash, |&i| {
                slots.get(i).and_then(|s| s.item.as_ref()) == Some(&item)
            })
            .copied();
        if let Some(slot) = found.and_then(|i| slots.get_mut(i)) {
            let entry = &mut slot.entry;
            if entry.queued {
                return (None, false);
            }
            // Known and not queued: being processed (a finished item has no
            // slot), so it is queued again at `done`.
            entry.queued = true;
            entry.added = self.metrics.now();
            *requeued += 1;
            return (None, true);
        }
        let slot = Slot {
            hash,
            item: Some(item.clone()),
            entry: Entry {
                queued: true,
                added: self.metrics.now(),
                ..Entry::default()
            },
        };
        let i = match free.pop() {
            Some(i) if i < slots.len() => {
                slots[i] = slot;
                i
            }
            _ => {
                slots.push(slot);
                slots.len() - 1
            }
        };
        index.insert_unique(hash, i, |&j| slots.get(j).map_or(0, |s| s.hash));
        fifo.push_back(Queued { slot: i, item });
        (waiters.take_for(fifo.len()), true)
    }

    pub(crate) fn add(&self, item: T) {
        // Hash and depth before the lock: the critical section is the
        // table, the FIFO and, for an item that becomes queued, a clock read.
        let hashed = self.hashed(item);
        self.metrics.depth_inc();
        let mut st = self.state.lock();
        let (waker, queued) = if st.shutting_down {
            (None, false)
        } else {
            self.enqueue(&mut st, hashed)
        };
        drop(st);
        wake(waker);
        if queued {
            self.metrics.added();
        } else {
            self.metrics.depth_dec();
        }
    }

    pub(crate) fn done(&self, item: &T) {
        let (owner, hint) = LAST_GOT.get();
        let hinted = owner == self.address();
        let hash = (!hinted).then(|| self.hasher.hash_one(item));
        let now = self.metrics.now();
        let mut st = self.state.lock();
        let State {
            index,
            slots,
            free,
            fifo,
            waiters,
            processing,
            requeued,
            drain,
            ..
        } = &mut *st;
        let holds = |i: usize| slots.get(i).and_then(|s| s.item.as_ref()) == Some(item);
        let i = if hinted && holds(hint) {
            hint
        } else {
            let hash = hash.unwrap_or_else(|| self.hasher.hash_one(item));
            match index.find(hash, |&i| holds(i)) {
                Some(&i) => i,
                None => return,
            }
        };
        let Some(slot) = slots.get_mut(i) else {
            return;
        };
        let entry = &mut slot.entry;
        if !entry.processing {
            return;
        }
        entry.processing = false;
        *processing -= 1;
        let started = std::mem::take(&mut entry.started);
        let mut finished = None;
        let waker = if entry.queued {
            // Added while it was processed: queued again now.
            *requeued -= 1;
            if let Some(item) = slot.item.clone() {
                fifo.push_back(Queued { slot: i, item });
            }
            waiters.take_for(fifo.len())
        } else {
            // Its work has ended: the queue lets the item go (client-go
            // keeps no reference either), and the slot is reused.
            if let Ok(found) = index.find_entry(slot.hash, |&j| j == i) {
                found.remove();
            }
            finished = slot.item.take();
            free.push(i);
            None
        };
        let drained = *drain && *processing == 0;
        drop(st);
        // The queue's copy is dropped outside the lock (it may own a
        // resource whose drop takes time).
        drop(finished);
        wake(waker);
        self.metrics.done(started, now);
        if drained {
            self.drained.notify_waiters();
        }
    }

    pub(crate) fn len(&self) -> usize {
        self.state.lock().fifo.len()
    }

    pub(crate) fn is_shutting_down(&self) -> bool {
        self.state.lock().shutting_down
    }

    pub(crate) fn shut_down(&self, drain: bool) {
        let mut st = self.state.lock();
        // As client-go: a plain shut down turns a drain off (a waiting
        // `shut_down_with_drain` returns), a drain turns it on again.
        let drain_ended = st.drain && !drain;
        st.drain = drain;
        let wakers = if st.shutting_down {
            Vec::new()
        } else {
            st.shutting_down = true;
            self.shut.store(true, Ordering::Release);
            st.waiters.take_all()
        };
        drop(st);
        for waker in wakers {
            waker.wake();
        }
        if drain_ended {
            self.drained.notify_waiters();
        }
        if let Some(inbox) = &self.inbox {
            // The timer drops the delayed items and ends.
            inbox.close();
        }
    }

    pub(crate) async fn shut_down_with_drain(&self) {
        self.shut_down(true);
        loop {
            let notified = self.drained.notified();
            tokio::pin!(notified);
            notified.as_mut().enable();
            {
                let st = self.state.lock();
                if st.processing == 0 || !st.drain {
                    return;
                }
            }
            notified.await;
        }
    }
}

impl<T: Item> Source<T> for Shared<T> {
    fn poll_get(&self, cx: &mut Context<'_>, slot: &mut Option<u64>) -> Poll<Option<T>> {
        let now = self.metrics.now();
        let mut st = self.state.lock();
        if st.spawn_deferred {
            self.try_spawn(&mut st);
        }
        let State {
            slots,
            fifo,
            waiters,
            processing,
            shutting_down,
            ..
        } = &mut *st;
        if let Some(Queued { slot: i, item }) = fifo.pop_front() {
            if let Some(id) = slot.take() {
                waiters.remove(id);
            }
            let mut added: Stamp = Default::default();
            if let Some(Slot { entry, .. }) = slots.get_mut(i) {
                entry.queued = false;
                entry.processing = true;
                added = std::mem::take(&mut entry.added);
                entry.started = now;
            }
            *processing += 1;
            drop(st);
            LAST_GOT.set((self.address(), i));
            self.metrics.get(0, added, now);
            return Poll::Ready(Some(item));
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
            let queued = st.fifo.len();
            st.waiters.take_for(queued)
        } else {
            None
        };
        drop(st);
        wake(waker);
    }
}

#[cfg(feature = "metrics")]
impl<T: Item> kcr_metrics::workqueue::DepthSource for Shared<T> {
    /// The items queued: in the FIFO, or being processed and added again.
    fn depth(&self) -> i64 {
        let st = self.state.lock();
        i64::try_from(st.fifo.len() + st.requeued).unwrap_or(i64::MAX)
    }
}

impl<T: Item> Background for Shared<T> {
    fn update_unfinished(&self) -> bool {
        let st = self.state.lock();
        if st.shutting_down {
            return false;
        }
        self.metrics.update_unfinished(
            st.slots
                .iter()
                .filter(|slot| slot.entry.processing)
                .map(|slot| slot.entry.started),
        );
        true
    }
}

/// client-go's work queue: fair (FIFO), stingy (an item waiting is queued
/// once, and an item is never handed to two workers at once), shared by any
/// number of producers and workers.
///
/// - [`add`](Queue::add) queues an item unless it is already waiting; an item
///   being processed is queued again when its worker calls
///   [`done`](Queue::done), never handed out twice at once.
/// - [`get`](Queue::get) waits for the next item; after
///   [`shut_down`](Queue::shut_down) it still hands out what is queued, then
///   returns `None`. `add` after shut down is ignored.
///
/// A handle is an `Arc`: clone it for every producer and worker.
///
/// The queue holds its copies of an item only while the item is queued or
/// being processed: at [`done`](Queue::done) (unless it was added again)
/// they are dropped, so an item that owns a resource is let go when its
/// work ends, as in client-go.
///
/// ```
/// use kcr_workqueue::Queue;
///
/// # #[tokio::main(flavor = "current_thread")] async fn main() {
/// let queue: Queue<&str> = Queue::new();
/// queue.add("a");
/// queue.add("a"); // already waiting: queued once
/// assert_eq!(queue.len(), 1);
/// let item = queue.get().await.unwrap();
/// queue.add("a"); // being processed: comes back after `done`
/// assert_eq!(queue.len(), 0);
/// queue.done(&item);
/// assert_eq!(queue.len(), 1);
/// # }
/// ```
pub struct Queue<T> {
    pub(crate) shared: Arc<Shared<T>>,
}

impl<T> Clone for Queue<T> {
    fn clone(&self) -> Self {
        Self {
            shared: self.shared.clone(),
        }
    }
}

impl<T> std::fmt::Debug for Queue<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let st = self.shared.state.lock();
        f.debug_struct("Queue")
            .field("len", &st.fifo.len())
            .field("processing", &st.processing)
            .field("shutting_down", &st.shutting_down)
            .finish()
    }
}

impl<T: Item> Default for Queue<T> {
    fn default() -> Self {
        Self::new()
    }
}

impl<T: Item> Queue<T> {
    /// An unnamed queue (no metrics).
    pub fn new() -> Self {
        Self::with_config(Config::default())
    }

    /// A queue built from `config` (a named queue records metrics).
    pub fn with_config(config: Config) -> Self {
        Self {
            shared: Shared::new(&config, None),
        }
    }

    /// Queues `item`, unless it is already waiting, or marks it to be queued
    /// again when it is done if it is being processed. Ignored after shut down.
    pub fn add(&self, item: T) {
        self.shared.add(item);
    }

    /// The next item, oldest first; `None` once the queue is shut down and
    /// nothing is left in it. The caller must call [`done`](Queue::done) with
    /// it when finished.
    pub fn get(&self) -> Get<'_, T> {
        Get::new(&*self.shared)
    }

    /// Marks `item` as done: if it was added while being processed, it is
    /// queued again now.
    pub fn done(&self, item: &T) {
        self.shared.done(item);
    }

    /// How many items wait to be handed out (not counting delayed items or
    /// items being processed).
    pub fn len(&self) -> usize {
        self.shared.len()
    }

    /// Whether no item waits to be handed out.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Stops accepting items: later adds are ignored, delayed items are
    /// dropped, parked workers wake; `get` hands out what is left, then `None`.
    pub fn shut_down(&self) {
        self.shared.shut_down(false);
    }

    /// [`shut_down`](Queue::shut_down), then waits until every item handed
    /// out is done (items still queued may be handed out afterwards: workers
    /// that loop until `get` returns `None` finish them). A
    /// [`shut_down`](Queue::shut_down) called meanwhile makes it return at
    /// once, as in client-go.
    pub async fn shut_down_with_drain(&self) {
        self.shared.shut_down_with_drain().await;
    }

    /// Whether the queue is shutting down.
    pub fn is_shutting_down(&self) -> bool {
        self.shared.is_shutting_down()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn table_len<T>(queue: &Queue<T>) -> usize {
        queue.shared.state.lock().index.len()
    }

    async fn process(queue: &Queue<Arc<str>>, item: Arc<str>) {
        queue.add(item);
        let got = queue.get().await.unwrap();
        queue.done(&got);
    }

    #[tokio::test]
    async fn a_finished_item_should_leave_the_table_and_free_its_slot() {
        let queue: Queue<Arc<str>> = Queue::new();
        let first: Arc<str> = Arc::from("ns/first");
        process(&queue, first.clone()).await;
        assert_eq!(queue.len(), 0);
        assert_eq!(table_len(&queue), 0, "let go at done");
        assert_eq!(Arc::strong_count(&first), 1);
        // The next items reuse the freed slot.
        for i in 0..100 {
            process(&queue, Arc::from(format!("ns/{i}"))).await;
        }
        assert_eq!(queue.shared.state.lock().slots.len(), 1);
        // An item being processed or queued is held.
        let held_key: Arc<str> = Arc::from("ns/held");
        queue.add(held_key.clone());
        let held = queue.get().await.unwrap();
        queue.add(Arc::from("ns/waiting"));
        assert_eq!(table_len(&queue), 2);
        queue.add(held_key.clone());
        assert_eq!(queue.len(), 1, "being processed: queued again at done");
        queue.done(&held);
        assert_eq!(queue.len(), 2);
        check(&queue);
    }

    /// The index holds exactly the slots that hold an item, each of them
    /// queued or being processed, and the counts match the slots.
    fn check(queue: &Queue<Arc<str>>) {
        let st = queue.shared.state.lock();
        let held: Vec<&Slot<Arc<str>>> = st.slots.iter().filter(|s| s.item.is_some()).collect();
        assert_eq!(held.len(), st.index.len());
        assert!(held.iter().all(|s| s.entry.queued || s.entry.processing));
        let waiting = held
            .iter()
            .filter(|s| s.entry.queued && !s.entry.processing);
        assert_eq!(waiting.count(), st.fifo.len());
        let again = held.iter().filter(|s| s.entry.queued && s.entry.processing);
        assert_eq!(again.count(), st.requeued);
        let processing = held.iter().filter(|s| s.entry.processing);
        assert_eq!(processing.count(), st.processing);
        for (i, slot) in st.slots.iter().enumerate() {
            if let Some(item) = &slot.item {
                assert_eq!(
                    st.index.find(slot.hash, |&j| j == i),
                    Some(&i),
                    "{item} indexed"
                );
            }
        }
        for &i in &st.free {
            assert!(st.slots[i].item.is_none(), "a free slot is empty");
        }
    }

    #[tokio::test]
    async fn the_table_should_stay_consistent_through_adds_gets_and_dones() {
        let queue: Queue<Arc<str>> = Queue::new();
        let keys: Vec<Arc<str>> = (0..4096).map(|i| Arc::from(format!("k{i}"))).collect();
        let mut seed = 0x9e37_79b9_u32;
        let mut in_hand = Vec::new();
        for step in 0..20 * keys.len() {
            seed ^= seed << 13;
            seed ^= seed >> 17;
            seed ^= seed << 5;
            let key = &keys[(seed >> 8) as usize % keys.len()];
            match seed % 4 {
                0 | 1 => queue.add(key.clone()),
                2 if !queue.is_empty() => in_hand.push(queue.get().await.unwrap()),
                _ => {
                    if let Some(item) = in_hand.pop() {
                        queue.done(&item);
                    }
                }
            }
            if step % 1024 == 0 {
                check(&queue);
            }
        }
        for item in in_hand.drain(..) {
            queue.done(&item);
        }
        check(&queue);
        while !queue.is_empty() {
            let item = queue.get().await.unwrap();
            queue.done(&item);
        }
        check(&queue);
        assert_eq!(table_len(&queue), 0);
        assert!(keys.iter().all(|k| Arc::strong_count(k) == 1), "all let go");
    }

    #[tokio::test]
    async fn done_should_find_its_item_whatever_was_got_last() {
        // `done` starts from the slot of the item this thread got last: a
        // hint that must never pick the wrong item or queue.
        let q1: Queue<Arc<str>> = Queue::new();
        let q2: Queue<Arc<str>> = Queue::new();
        let key: Arc<str> = Arc::from("ns/same");
        q1.add(key.clone());
        q2.add(key.clone());
        q1.add(Arc::from("ns/other"));
        let a = q1.get().await.unwrap();
        let b = q2.get().await.unwrap();
        let c = q1.get().await.unwrap();
        // Re-added while processed: queued again at its own queue's `done`.
        q1.add(key.clone());
        q2.done(&b);
        assert_eq!((q1.len(), q2.len()), (0, 0));
        q1.done(&a);
        assert_eq!(q1.len(), 1, "q1's item came back, not q2's");
        q1.done(&c);
        let again = q1.get().await.unwrap();
        assert!(Arc::ptr_eq(&again, &key));
        // A `done` on another thread than the `get`.
        let q = q1.clone();
        tokio::task::spawn_blocking(move || q.done(&again))
            .await
            .unwrap();
        assert_eq!(q1.len(), 0);
        q1.add(key.clone());
        assert_eq!(q1.len(), 1, "it was done: added again, it is queued");
        // A `done` for an item not being processed changes nothing.
        q2.done(&key);
        q2.add(key.clone());
        assert_eq!(q2.len(), 1);
    }
}
