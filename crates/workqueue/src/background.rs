//! The two background tasks of a queue: the timer that moves delayed items
//! into the queue when they are due, and the refresher of the unfinished-work
//! gauges (every 500 ms, as client-go).
//!
//! Both hold only a `Weak` reference to the queue, so they end when the queue
//! shuts down or its last handle is dropped.

use std::sync::{Arc, Weak};
use std::time::Duration;

use tokio::sync::Notify;
use tokio::time::{Instant, MissedTickBehavior};

/// How often the unfinished-work gauges are refreshed (client-go's period).
pub(crate) const UNFINISHED_WORK_UPDATE_PERIOD: Duration = Duration::from_millis(500);

/// What the timer does after a [`Background::fire`].
pub(crate) enum Fire {
    /// The queue is shut down: end the task.
    Stop,
    /// Sleep until this deadline (or until woken, if `None`).
    Next(Option<Instant>),
}

/// A queue as its metrics refresher sees it.
pub(crate) trait Background: Send + Sync + 'static {
    /// Refreshes the unfinished-work gauges; false once the queue is shut down.
    fn update_unfinished(&self) -> bool;
}

/// A queue whose delayed items wait in a heap under its lock, as the shared
/// timer loop below sees it (the priority queue).
pub(crate) trait Timed: Send + Sync + 'static {
    /// Moves every item due at `now` into the queue; returns the next deadline.
    fn fire(&self, now: Instant) -> Fire;
}

/// Spawns the timer task on the current runtime (a single task per queue,
/// whatever the number of delayed items: they wait in a heap).
pub(crate) fn spawn_timer<S: Timed>(
    handle: &tokio::runtime::Handle,
    queue: Weak<S>,
    wake: Arc<Notify>,
) {
    handle.spawn(async move {
        loop {
            // Registered before firing, so a wake-up sent while we fire is kept.
            let notified = wake.notified();
            tokio::pin!(notified);
            notified.as_mut().enable();
            let next = {
                let Some(queue) = queue.upgrade() else {
                    return;
                };
                match queue.fire(Instant::now()) {
                    Fire::Stop => return,
                    Fire::Next(next) => next,
                }
                // The strong reference is dropped here, before sleeping.
            };
            match next {
                Some(deadline) => {
                    let _ = tokio::time::timeout_at(deadline, notified).await;
                }
                None => notified.await,
            }
        }
    });
}

/// Spawns the task refreshing the unfinished-work gauges every 500 ms while the
/// queue runs.
pub(crate) fn spawn_unfinished_work_updater<S: Background>(
    handle: &tokio::runtime::Handle,
    queue: Weak<S>,
) {
    handle.spawn(async move {
        let mut ticks = tokio::time::interval_at(
            Instant::now() + UNFINISHED_WORK_UPDATE_PERIOD,
            UNFINISHED_WORK_UPDATE_PERIOD,
        );
        ticks.set_missed_tick_behavior(MissedTickBehavior::Delay);
        loop {
            ticks.tick().await;
            let Some(queue) = queue.upgrade() else {
                return;
            };
            if !queue.update_unfinished() {
                return;
            }
        }
    });
}
