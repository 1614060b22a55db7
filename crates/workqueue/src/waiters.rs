//! Parked `get` calls and the future they return.

use std::collections::VecDeque;
use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll, Waker};

/// Workers parked in `get`, woken one per queued item, oldest first.
///
/// It also counts the waiters woken that have not yet looked at the queue
/// again: a queue wakes a parked worker only when it has more items waiting
/// than workers already on their way ([`Waiters::take_for`]), so that a
/// worker that is still running and takes the item itself does not leave a
/// woken one to find the queue empty and park again.
#[derive(Default)]
pub(crate) struct Waiters {
    list: VecDeque<(u64, Waker)>,
    next_id: u64,
    /// Waiters taken out of `list` whose `Get` has not been polled or dropped since.
    woken: usize,
}

impl Waiters {
    /// Parks (or re-parks) the waiter `slot` with `waker`.
    pub(crate) fn park(&mut self, slot: &mut Option<u64>, waker: &Waker) {
        if let Some(id) = *slot {
            if let Some((_, w)) = self.list.iter_mut().find(|(i, _)| *i == id) {
                w.clone_from(waker);
                return;
            }
            // Woken, and back: no longer on its way.
            self.woken = self.woken.saturating_sub(1);
        }
        let id = self.next_id;
        self.next_id += 1;
        self.list.push_back((id, waker.clone()));
        *slot = Some(id);
    }

    /// Removes `id` (its `Get` completed or was dropped); false if it was
    /// already taken by [`Waiters::take_one`].
    pub(crate) fn remove(&mut self, id: u64) -> bool {
        match self.list.iter().position(|(i, _)| *i == id) {
            Some(pos) => {
                self.list.remove(pos);
                true
            }
            None => {
                self.woken = self.woken.saturating_sub(1);
                false
            }
        }
    }

    /// Takes the oldest parked waiter, to be woken once the lock is released.
    #[inline]
    fn take_one(&mut self) -> Option<Waker> {
        let (_, waker) = self.list.pop_front()?;
        self.woken += 1;
        Some(waker)
    }

    /// Takes the oldest parked waiter if fewer waiters are already woken
    /// than the `queued` items waiting for a worker.
    #[inline]
    pub(crate) fn take_for(&mut self, queued: usize) -> Option<Waker> {
        if self.woken >= queued {
            return None;
        }
        self.take_one()
    }

    /// Takes every parked waiter.
    pub(crate) fn take_all(&mut self) -> Vec<Waker> {
        self.woken += self.list.len();
        self.list.drain(..).map(|(_, w)| w).collect()
    }
}

/// Where a [`Get`] takes its items from.
pub(crate) trait Source<O>: Send + Sync {
    /// Hands out the next item, or parks the waiter in `slot`.
    fn poll_get(&self, cx: &mut Context<'_>, slot: &mut Option<u64>) -> Poll<Option<O>>;
    /// The future in `slot` was dropped while parked.
    fn abandon(&self, slot: u64);
}

/// The future of a queue's `get`: the next item, or `None` once the queue is
/// shut down and drained.
///
/// Dropping it before it completes loses nothing: a wake-up meant for it goes
/// to the next parked worker.
#[must_use = "futures do nothing unless polled"]
pub struct Get<'a, O> {
    source: &'a dyn Source<O>,
    slot: Option<u64>,
}

impl<'a, O> Get<'a, O> {
    pub(crate) fn new(source: &'a dyn Source<O>) -> Self {
        Self { source, slot: None }
    }
}

impl<O> Future for Get<'_, O> {
    type Output = Option<O>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<O>> {
        let this = self.get_mut();
        let out = this.source.poll_get(cx, &mut this.slot);
        if out.is_ready() {
            this.slot = None;
        }
        out
    }
}

impl<O> Drop for Get<'_, O> {
    fn drop(&mut self) {
        if let Some(slot) = self.slot.take() {
            self.source.abandon(slot);
        }
    }
}

impl<O> std::fmt::Debug for Get<'_, O> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Get")
            .field("parked", &self.slot.is_some())
            .finish()
    }
}
