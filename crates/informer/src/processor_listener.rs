//! The per-handler machinery of a shared informer (client-go's
//! `sharedProcessor` and `processorListener` in `shared_informer.go`): every
//! handler has an unbounded buffer and a task that drains it, so a slow
//! handler never holds up the informer or the other handlers.

use std::collections::VecDeque;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Duration;

use kcr_cache::DeltaObject;
use kcr_cache::synctrack::SingleFileTracker;
use kcr_metrics::prometheus::IntCounter;
use parking_lot::{Mutex, RwLock};
use tokio::runtime::Handle;
use tokio::sync::Notify;
use tokio::task::JoinHandle;
use tokio::time::Instant;

use crate::event_handler::ResourceEventHandler;

/// How long a listener waits before its next handler call after a call
/// panicked (client-go's listener loop runs under `wait.Until(..., 1s)`).
pub(crate) const PAUSE_AFTER_PANIC: Duration = Duration::from_secs(1);

/// What a listener hands its handler.
pub(crate) enum Notification<K> {
    Add {
        obj: Arc<K>,
        is_in_initial_list: bool,
    },
    Update {
        old: Arc<K>,
        new: Arc<K>,
    },
    Delete {
        obj: DeltaObject<K>,
    },
}

impl<K> Clone for Notification<K> {
    fn clone(&self) -> Self {
        match self {
            Self::Add {
                obj,
                is_in_initial_list,
            } => Self::Add {
                obj: obj.clone(),
                is_in_initial_list: *is_in_initial_list,
            },
            Self::Update { old, new } => Self::Update {
                old: old.clone(),
                new: new.clone(),
            },
            Self::Delete { obj } => Self::Delete { obj: obj.clone() },
        }
    }
}

impl<K> Notification<K> {
    fn is_initial(&self) -> bool {
        matches!(
            self,
            Self::Add {
                is_in_initial_list: true,
                ..
            }
        )
    }
}

struct Buffer<K> {
    queue: VecDeque<Notification<K>>,
    closed: bool,
}

/// The resync schedule of one listener.
#[derive(Debug)]
struct Resync {
    /// What the handler asked for (zero: never).
    requested: Duration,
    /// What it gets, given the informer's resync check period.
    period: Duration,
    next: Instant,
}

/// client-go's `determineResyncPeriod`: zero stays zero; a period shorter
/// than the check period is raised to it; no check period means no resync.
pub(crate) fn determine_resync_period(requested: Duration, check: Duration) -> Duration {
    if requested.is_zero() {
        return Duration::ZERO;
    }
    if check.is_zero() {
        tracing::warn!(
            ?requested,
            "the informer does not resync; the handler's resync is disabled"
        );
        return Duration::ZERO;
    }
    requested.max(check)
}

/// One registered handler: its buffer, its resync schedule and what its
/// registration reports (client-go's `processorListener`).
pub(crate) struct Listener<K> {
    pub(crate) id: u64,
    handler: Arc<dyn ResourceEventHandler<K>>,
    // parking_lot locks: held for a push or a swap, never across `.await`.
    buffer: Mutex<Buffer<K>>,
    wake: Notify,
    resync: Mutex<Resync>,
    /// Initial-list adds queued but not yet handled, and whether the
    /// informer has synced: the registration's `has_synced`.
    tracker: SingleFileTracker,
    panics: AtomicU64,
    closed: AtomicBool,
    panic_counter: IntCounter,
    informer: Arc<str>,
}

impl<K: Send + Sync + 'static> Listener<K> {
    pub(crate) fn new(
        id: u64,
        handler: Arc<dyn ResourceEventHandler<K>>,
        requested_resync: Duration,
        check_period: Duration,
        panic_counter: IntCounter,
        informer: Arc<str>,
    ) -> Self {
        let period = determine_resync_period(requested_resync, check_period);
        Self {
            id,
            handler,
            buffer: Mutex::new(Buffer {
                queue: VecDeque::new(),
                closed: false,
            }),
            wake: Notify::new(),
            resync: Mutex::new(Resync {
                requested: requested_resync,
                period,
                next: Instant::now() + period,
            }),
            tracker: SingleFileTracker::new(format!("{informer} + event handler {id}")),
            panics: AtomicU64::new(0),
            closed: AtomicBool::new(false),
            panic_counter,
            informer,
        }
    }

    /// Buffers a notification (never blocks on the handler).
    pub(crate) fn add(&self, notification: Notification<K>) {
        {
            let mut buffer = self.buffer.lock();
            if buffer.closed {
                return;
            }
            if notification.is_initial() {
                self.tracker.start();
            }
            buffer.queue.push_back(notification);
        }
        self.wake.notify_one();
    }

    /// The informer has synced: the registration is synced once every
    /// initial add buffered so far has been handled.
    pub(crate) fn upstream_has_synced(&self) {
        self.tracker.upstream_has_synced();
    }

    /// Whether the informer has synced and this handler has handled every
    /// initial add (client-go's registration `HasSynced`).
    pub(crate) fn has_synced(&self) -> bool {
        self.tracker.has_synced()
    }

    /// How many handler calls panicked.
    pub(crate) fn panics(&self) -> u64 {
        self.panics.load(Ordering::Relaxed)
    }

    /// How many notifications wait in the buffer.
    pub(crate) fn pending(&self) -> usize {
        self.buffer.lock().queue.len()
    }

    /// Stops delivery: buffered notifications are dropped; a call in progress
    /// finishes.
    pub(crate) fn close(&self) {
        self.closed.store(true, Ordering::Release);
        {
            let mut buffer = self.buffer.lock();
            buffer.closed = true;
            buffer.queue.clear();
        }
        self.wake.notify_one();
    }

    fn should_resync(&self, now: Instant) -> bool {
        let mut resync = self.resync.lock();
        if resync.period.is_zero() || now < resync.next {
            return false;
        }
        resync.next = now + resync.period;
        true
    }

    fn check_period_changed(&self, check: Duration) {
        let mut resync = self.resync.lock();
        resync.period = determine_resync_period(resync.requested, check);
        resync.next = Instant::now() + resync.period;
    }

    /// Drains the buffer batch by batch; each batch is handed to the handler
    /// on the blocking pool, one call at a time, in order. After a handler
    /// call panicked, the next call waits one second (client-go's listener
    /// runs under `wait.Until` with a one-second period, so a crashing
    /// handler is not spun on).
    async fn run(self: Arc<Self>) {
        let mut batch: VecDeque<Notification<K>> = VecDeque::new();
        let mut sleep_after_crash = false;
        loop {
            if batch.is_empty() {
                let notified = self.wake.notified();
                let taken = {
                    let mut buffer = self.buffer.lock();
                    if buffer.closed {
                        return;
                    }
                    std::mem::swap(&mut buffer.queue, &mut batch);
                    !batch.is_empty()
                };
                if !taken {
                    // A `notify_one` since the check left a permit: no lost wakeup.
                    notified.await;
                    continue;
                }
            }
            if sleep_after_crash {
                tokio::time::sleep(PAUSE_AFTER_PANIC).await;
                if self.closed.load(Ordering::Acquire) {
                    return;
                }
            }
            let me = self.clone();
            let handed = std::mem::take(&mut batch);
            match tokio::task::spawn_blocking(move || me.deliver(handed)).await {
                Ok((rest, crashed)) => {
                    batch = rest;
                    sleep_after_crash = crashed;
                }
                Err(e) => {
                    tracing::error!(informer = %self.informer, error = %e, "handler task failed")
                }
            }
        }
    }

    /// Runs on the blocking pool: hands `batch` to the handler, then keeps
    /// taking what was buffered meanwhile until the buffer is empty, so a
    /// busy handler costs one hand-off per busy period, not per batch.
    /// Stops after a call that panicked and returns what is left, with
    /// `true`.
    fn deliver(&self, mut batch: VecDeque<Notification<K>>) -> (VecDeque<Notification<K>>, bool) {
        loop {
            while let Some(notification) = batch.pop_front() {
                if self.closed.load(Ordering::Acquire) {
                    return (VecDeque::new(), false);
                }
                if !self.call(notification) {
                    return (batch, true);
                }
            }
            let mut buffer = self.buffer.lock();
            if buffer.closed || buffer.queue.is_empty() {
                return (batch, false);
            }
            std::mem::swap(&mut buffer.queue, &mut batch);
        }
    }

    /// One handler call, with its panic caught, logged and counted; false
    /// if it panicked.
    fn call(&self, notification: Notification<K>) -> bool {
        let initial = notification.is_initial();
        let outcome = catch_unwind(AssertUnwindSafe(|| match &notification {
            Notification::Add {
                obj,
                is_in_initial_list,
            } => self.handler.on_add(obj, *is_in_initial_list),
            Notification::Update { old, new } => self.handler.on_update(old, new),
            Notification::Delete { obj } => self.handler.on_delete(obj),
        }));
        let ok = outcome.is_ok();
        if let Err(panic) = outcome {
            self.panics.fetch_add(1, Ordering::Relaxed);
            self.panic_counter.inc();
            let message = panic
                .downcast_ref::<&str>()
                .map(|s| (*s).to_owned())
                .or_else(|| panic.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "<non-string panic>".to_owned());
            tracing::error!(
                informer = %self.informer,
                handler = self.id,
                %message,
                "an event handler panicked; the panic was caught and the handler keeps receiving events"
            );
        }
        if initial {
            self.tracker.finished();
        }
        ok
    }
}

struct ProcessorState<K> {
    listeners: Vec<Arc<Listener<K>>>,
    /// The listeners due for the resync in progress.
    syncing: Vec<Arc<Listener<K>>>,
    /// Set while running: where listener tasks are spawned.
    runtime: Option<Handle>,
    tasks: Vec<(u64, JoinHandle<()>)>,
}

/// Fans notifications out to the listeners (client-go's `sharedProcessor`).
pub(crate) struct Processor<K> {
    // A parking_lot lock: held to push into buffers or edit the lists,
    // never across `.await`.
    state: RwLock<ProcessorState<K>>,
}

impl<K: Send + Sync + 'static> Processor<K> {
    pub(crate) fn new() -> Self {
        Self {
            state: RwLock::new(ProcessorState {
                listeners: Vec::new(),
                syncing: Vec::new(),
                runtime: None,
                tasks: Vec::new(),
            }),
        }
    }

    /// Registers a listener, starting its task if the processor runs.
    pub(crate) fn add_listener(&self, listener: Arc<Listener<K>>) {
        let mut state = self.state.write();
        if let Some(runtime) = &state.runtime {
            let task = runtime.spawn(listener.clone().run());
            state.tasks.push((listener.id, task));
        }
        state.listeners.push(listener);
    }

    /// Unregisters a listener and stops it; false if it was not registered.
    pub(crate) fn remove_listener(&self, id: u64) -> bool {
        let mut state = self.state.write();
        let before = state.listeners.len();
        state.listeners.retain(|l| {
            if l.id == id {
                l.close();
                false
            } else {
                true
            }
        });
        state.syncing.retain(|l| l.id != id);
        // The task ends by itself once the listener is closed.
        state.tasks.retain(|(task_id, _)| *task_id != id);
        before != state.listeners.len()
    }

    /// Hands `notification` to every listener, or, for a resync, to the
    /// listeners due for one.
    pub(crate) fn distribute(&self, notification: Notification<K>, is_sync: bool) {
        let state = self.state.read();
        let listeners = if is_sync {
            &state.syncing
        } else {
            &state.listeners
        };
        if let Some((last, rest)) = listeners.split_last() {
            for listener in rest {
                listener.add(notification.clone());
            }
            last.add(notification);
        }
    }

    /// The informer has synced: tell every listener.
    pub(crate) fn upstream_has_synced(&self) {
        for listener in &self.state.read().listeners {
            listener.upstream_has_synced();
        }
    }

    /// How many listeners are registered.
    pub(crate) fn listener_count(&self) -> usize {
        self.state.read().listeners.len()
    }

    /// Picks the listeners due for a resync; true if any is (client-go's
    /// `shouldResync`).
    pub(crate) fn should_resync(&self) -> bool {
        let now = Instant::now();
        let mut state = self.state.write();
        let due: Vec<_> = state
            .listeners
            .iter()
            .filter(|l| l.should_resync(now))
            .cloned()
            .collect();
        let any = !due.is_empty();
        state.syncing = due;
        any
    }

    /// The informer's resync check period changed (before start).
    pub(crate) fn resync_check_period_changed(&self, check: Duration) {
        for listener in &self.state.read().listeners {
            listener.check_period_changed(check);
        }
    }

    /// Starts the task of every listener; later ones start as they are added.
    pub(crate) fn run(&self, runtime: Handle) {
        let mut state = self.state.write();
        let tasks: Vec<_> = state
            .listeners
            .iter()
            .map(|l| (l.id, runtime.spawn(l.clone().run())))
            .collect();
        state.tasks.extend(tasks);
        state.runtime = Some(runtime);
    }

    /// Stops every listener without waiting for their tasks.
    pub(crate) fn close_all(&self) {
        let mut state = self.state.write();
        state.runtime = None;
        for listener in &state.listeners {
            listener.close();
        }
    }

    /// Stops every listener and waits for their tasks (a handler call in
    /// progress finishes first).
    pub(crate) async fn stop(&self) {
        self.close_all();
        let tasks = std::mem::take(&mut self.state.write().tasks);
        for (_, task) in tasks {
            let _ = task.await;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_resync_period_should_be_raised_to_the_check_period_and_zero_should_stay_zero() {
        let s = Duration::from_secs;
        assert_eq!(determine_resync_period(s(0), s(10)), s(0));
        assert_eq!(determine_resync_period(s(5), s(10)), s(10));
        assert_eq!(determine_resync_period(s(30), s(10)), s(30));
        assert_eq!(
            determine_resync_period(s(30), s(0)),
            s(0),
            "no check period, no resync"
        );
    }
}
