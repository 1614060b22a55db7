//! [`PreciseTimer`]: wake-ups finer than Tokio's timer wheel, for the
//! delaying queue's timer task.
//!
//! Tokio's wheel counts whole milliseconds: a sleep ends at the first
//! millisecond boundary at or after its deadline (0.5 ms late on average for
//! deadlines spread evenly), and a driver that parked with a whole number of
//! milliseconds to wait wakes later still. One thread per process, started
//! at the first use, sleeps until the earliest deadline asked of it (a
//! condition variable's timed wait, which the OS serves with a
//! high-resolution timer) and wakes the task that asked.
//!
//! The thread only wakes tasks: what is due is always decided by the task
//! against `tokio::time::Instant`, and the task keeps a Tokio sleep as well,
//! so a paused test clock (whose time this thread does not see) still drives
//! the queue exactly as before, and a wake-up that comes early or late by the
//! paused clock changes nothing but the number of polls.

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::sync::{Arc, OnceLock, Weak};
use std::task::{Context, Poll, Waker};
use std::time::Duration;

use parking_lot::{Condvar, Mutex};

/// The real (monotonic) time: the thread measures real time on purpose, to
/// wake a task close to a deadline the task itself then checks with
/// `tokio::time`.
#[allow(clippy::disallowed_methods)] // the timer thread runs on real time, outside any runtime
fn real_now() -> std::time::Instant {
    std::time::Instant::now()
}

/// One task's wake-up request, shared with the timer thread.
struct Slot {
    state: Mutex<SlotState>,
}

struct SlotState {
    /// The deadline asked for last; an older entry in the heap finds it
    /// changed and wakes nobody.
    deadline: Option<std::time::Instant>,
    /// The deadline passed since the task last looked.
    fired: bool,
    waker: Option<Waker>,
}

/// A deadline in the timer thread's heap.
struct Entry {
    at: std::time::Instant,
    seq: u64,
    slot: Weak<Slot>,
}

impl Entry {
    /// Whether the slot no longer waits for this entry's deadline.
    fn is_stale(&self) -> bool {
        self.slot
            .upgrade()
            .is_none_or(|slot| slot.state.lock().deadline != Some(self.at))
    }
}

impl PartialEq for Entry {
    fn eq(&self, other: &Self) -> bool {
        (self.at, self.seq) == (other.at, other.seq)
    }
}

impl Eq for Entry {}

impl PartialOrd for Entry {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Entry {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        (self.at, self.seq).cmp(&(other.at, other.seq))
    }
}

/// The process's timer thread and its deadlines.
struct Sleeper {
    // A parking_lot mutex taken by async tasks only to push a deadline: never
    // held across an `.await` nor while the thread waits (the condition
    // variable releases it).
    heap: Mutex<Heap>,
    changed: Condvar,
}

struct Heap {
    entries: BinaryHeap<Reverse<Entry>>,
    seq: u64,
}

impl Sleeper {
    /// The process's sleeper, its thread started at the first call; `None`
    /// when the thread cannot be started (the queue then uses Tokio's wheel
    /// alone).
    fn get() -> Option<&'static Sleeper> {
        static SLEEPER: OnceLock<Option<&'static Sleeper>> = OnceLock::new();
        *SLEEPER.get_or_init(|| {
            let sleeper: &'static Sleeper = Box::leak(Box::new(Sleeper {
                heap: Mutex::new(Heap {
                    entries: BinaryHeap::new(),
                    seq: 0,
                }),
                changed: Condvar::new(),
            }));
            std::thread::Builder::new()
                .name("kcr-workqueue-timer".into())
                .spawn(move || sleeper.run())
                .ok()
                .map(|_| sleeper)
        })
    }

    fn run(&self) -> ! {
        let mut due = Vec::new();
        loop {
            {
                let mut heap = self.heap.lock();
                loop {
                    let Some(Reverse(first)) = heap.entries.peek() else {
                        self.changed.wait(&mut heap);
                        continue;
                    };
                    if first.is_stale() {
                        // Its task asked again since (or is gone): no need
                        // to wake up for it. (Lock order: heap, then slot;
                        // `arm` never holds both.)
                        heap.entries.pop();
                        continue;
                    }
                    let at = first.at;
                    if at <= real_now() {
                        break;
                    }
                    self.changed.wait_until(&mut heap, at);
                }
                let now = real_now();
                while heap.entries.peek().is_some_and(|Reverse(e)| e.at <= now) {
                    if let Some(Reverse(entry)) = heap.entries.pop() {
                        due.push(entry);
                    }
                }
            }
            for entry in due.drain(..) {
                let Some(slot) = entry.slot.upgrade() else {
                    continue;
                };
                let waker = {
                    let mut st = slot.state.lock();
                    if st.deadline != Some(entry.at) {
                        // Asked again since: a later entry stands for it.
                        continue;
                    }
                    st.deadline = None;
                    st.fired = true;
                    st.waker.take()
                };
                if let Some(waker) = waker {
                    waker.wake();
                }
            }
        }
    }

    fn push(&self, at: std::time::Instant, slot: Weak<Slot>) {
        let mut heap = self.heap.lock();
        let sooner = heap.entries.peek().is_none_or(|Reverse(e)| at < e.at);
        heap.seq += 1;
        let seq = heap.seq;
        heap.entries.push(Reverse(Entry { at, seq, slot }));
        drop(heap);
        if sooner {
            self.changed.notify_one();
        }
    }
}

/// A task's wake-up after a delay measured in real time to the
/// microsecond (within the OS timer's slack), from the process's timer
/// thread.
pub(crate) struct PreciseTimer {
    sleeper: &'static Sleeper,
    slot: Arc<Slot>,
}

impl PreciseTimer {
    /// A timer, or `None` when the timer thread cannot be started.
    pub(crate) fn new() -> Option<Self> {
        Some(Self {
            sleeper: Sleeper::get()?,
            slot: Arc::new(Slot {
                state: Mutex::new(SlotState {
                    deadline: None,
                    fired: false,
                    waker: None,
                }),
            }),
        })
    }

    /// Wakes the task polling [`poll_fired`](Self::poll_fired) once `after`
    /// has passed, replacing the wake-up asked before.
    pub(crate) fn arm(&mut self, after: Duration) {
        let at = real_now() + after;
        {
            let mut st = self.slot.state.lock();
            st.deadline = Some(at);
            st.fired = false;
        }
        self.sleeper.push(at, Arc::downgrade(&self.slot));
    }

    /// Ready once, when the wake-up asked by [`arm`](Self::arm) comes.
    pub(crate) fn poll_fired(&mut self, cx: &mut Context<'_>) -> Poll<()> {
        let mut st = self.slot.state.lock();
        if st.fired {
            st.fired = false;
            return Poll::Ready(());
        }
        if !st.waker.as_ref().is_some_and(|w| w.will_wake(cx.waker())) {
            st.waker = Some(cx.waker().clone());
        }
        Poll::Pending
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Waits (blocking, on real time: these tests are about the thread) for
    /// the timer to fire.
    fn wait_fired(timer: &mut PreciseTimer, limit: Duration) -> bool {
        let start = real_now();
        let waker = Waker::noop();
        let mut cx = Context::from_waker(waker);
        while real_now() - start < limit {
            if timer.poll_fired(&mut cx).is_ready() {
                return true;
            }
            std::thread::yield_now();
        }
        false
    }

    #[test]
    fn a_timer_should_fire_after_its_delay_and_only_once() {
        let mut timer = PreciseTimer::new().expect("timer thread");
        let start = real_now();
        timer.arm(Duration::from_micros(300));
        assert!(wait_fired(&mut timer, Duration::from_secs(5)));
        assert!(real_now() - start >= Duration::from_micros(300));
        assert!(!wait_fired(&mut timer, Duration::from_millis(5)));
    }

    #[test]
    fn arming_again_should_replace_the_earlier_wake_up() {
        let mut timer = PreciseTimer::new().expect("timer thread");
        let start = real_now();
        timer.arm(Duration::from_micros(100));
        timer.arm(Duration::from_millis(20));
        assert!(wait_fired(&mut timer, Duration::from_secs(5)));
        assert!(
            real_now() - start >= Duration::from_millis(20),
            "the first deadline woke nobody"
        );
    }

    #[test]
    fn a_fired_timer_should_wake_the_task_that_polled_it() {
        use std::sync::atomic::{AtomicBool, Ordering};
        struct Flag(AtomicBool, std::thread::Thread);
        impl std::task::Wake for Flag {
            fn wake(self: Arc<Self>) {
                self.0.store(true, Ordering::SeqCst);
                self.1.unpark();
            }
        }
        let flag = Arc::new(Flag(AtomicBool::new(false), std::thread::current()));
        let waker = Waker::from(flag.clone());
        let mut cx = Context::from_waker(&waker);
        let mut timer = PreciseTimer::new().expect("timer thread");
        timer.arm(Duration::from_micros(200));
        assert!(timer.poll_fired(&mut cx).is_pending());
        let start = real_now();
        while !flag.0.load(Ordering::SeqCst) && real_now() - start < Duration::from_secs(5) {
            std::thread::park_timeout(Duration::from_millis(10));
        }
        assert!(flag.0.load(Ordering::SeqCst), "woken by the timer thread");
        assert!(timer.poll_fired(&mut cx).is_ready());
    }
}
