//! The per-handler machinery of a shared informer (client-go's
//! `sharedProcessor` and `processorListener` in `shared_informer.go`): every
//! handler has an unbounded buffer and a task that drains it, so a slow
//! handler never holds up the informer or the other handlers.
//!
//! # Removing a handler (the protocol)
//!
//! A listener goes *registered* → *closed* → *stopped*:
//!
//! 1. **Close** ([`Listener::close`], called by [`Processor::remove_listener`]
//!    under the processor's write lock, itself taken under the informer's
//!    `block_deltas`, so no notification is being distributed meanwhile):
//!    the `closed` flag is set and the buffer is marked closed and emptied
//!    under its lock. From then on [`Listener::add`] drops what it is given.
//! 2. **Drain**: the delivery loop (on the blocking pool) reads `closed`
//!    before every handler call, so the call in progress, if any, is the
//!    last one; the notifications it had taken but not handed over are
//!    dropped; the listener's task then ends.
//! 3. **Stopped**: the listener's `stopped` token is cancelled when its task
//!    ends (a guard built before the task is spawned, so also when the task
//!    is dropped unpolled), or at removal when no task was ever spawned
//!    (spawning and removal both hold the processor's write lock, so a
//!    listener not spawned by then never will be: it is off the list).
//!
//! Invariants (checked by the model test at the end of this file):
//!
//! * **No call after the wait**: once `stopped` is cancelled, no handler
//!   call of that listener is running or will start. (One exception: a
//!   runtime shutting down drops the listener's task while a call it
//!   handed to the blocking pool may still run.)
//! * **No loss before the removal, no reordering, no duplicate**: the calls
//!   a handler gets are a prefix, in order, of the notifications
//!   distributed to it; a removal drops only what the handler had not yet
//!   been handed, so everything distributed before the handler last caught
//!   up is delivered.
//! * **No self-deadlock**: a handler call runs with its listener recorded in
//!   a thread-local ([`current_listener`]); waiting for that listener from
//!   inside it is refused with a typed error instead of hanging.

use std::collections::VecDeque;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Duration;

use kcr_cache::synctrack::SingleFileTracker;
use kcr_metrics::prometheus::IntCounter;
use parking_lot::{Mutex, RwLock};
use tokio::runtime::Handle;
use tokio::sync::Notify;
use tokio::task::JoinHandle;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

use crate::event_handler::{DeletedObject, ResourceEventHandler};

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
        obj: DeletedObject<K>,
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
    /// Whether the listener's task was spawned (set and read under the
    /// processor's write lock).
    spawned: AtomicBool,
    /// Cancelled once no handler call runs or will run (see the protocol
    /// in the module doc).
    stopped: CancellationToken,
    panic_counter: IntCounter,
    informer: Arc<str>,
}

thread_local! {
    /// The listener whose handler call runs on this thread (its address),
    /// or 0.
    static CURRENT_LISTENER: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
}

/// The address of the listener whose handler is being called on this
/// thread, if any.
pub(crate) fn current_listener() -> Option<usize> {
    let current = CURRENT_LISTENER.with(std::cell::Cell::get);
    (current != 0).then_some(current)
}

/// Records a listener as this thread's current one until dropped (also
/// when the handler call unwinds).
struct InCall(usize);

impl InCall {
    fn enter(listener: usize) -> Self {
        Self(CURRENT_LISTENER.with(|c| c.replace(listener)))
    }
}

impl Drop for InCall {
    fn drop(&mut self) {
        CURRENT_LISTENER.with(|c| c.set(self.0));
    }
}

/// Cancels a listener's `stopped` token when its task ends or is dropped.
struct StopOnDrop(CancellationToken);

impl Drop for StopOnDrop {
    fn drop(&mut self) {
        self.0.cancel();
    }
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
            spawned: AtomicBool::new(false),
            stopped: CancellationToken::new(),
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

    /// Cancelled once no handler call of this listener runs or will run.
    pub(crate) fn stopped(&self) -> &CancellationToken {
        &self.stopped
    }

    /// This listener's identity for [`current_listener`].
    pub(crate) fn address(&self) -> usize {
        std::ptr::from_ref(self) as usize
    }

    /// Starts the listener's task on `runtime` (under the processor's write
    /// lock).
    fn spawn(self: &Arc<Self>, runtime: &Handle) -> JoinHandle<()> {
        self.spawned.store(true, Ordering::Release);
        let guard = StopOnDrop(self.stopped.clone());
        let me = self.clone();
        runtime.spawn(async move {
            let _stop_when_done = guard;
            me.run().await;
        })
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
        let _in_call = InCall::enter(self.address());
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
            let task = listener.spawn(runtime);
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
                if !l.spawned.load(Ordering::Acquire) {
                    // Never spawned, and off the list: never will be.
                    l.stopped.cancel();
                }
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
            .map(|l| (l.id, l.spawn(&runtime)))
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
    use k8s_openapi::api::core::v1::ConfigMap;
    use proptest::prelude::*;
    use std::sync::atomic::AtomicUsize;

    /// Records the index (the name) of every object it is called with, and
    /// any call that starts or ends once its removal was waited for.
    #[derive(Default)]
    struct Model {
        calls: parking_lot::Mutex<Vec<usize>>,
        /// Set once the shut-down wait has returned.
        returned: AtomicBool,
        in_call: AtomicUsize,
        violations: parking_lot::Mutex<Vec<String>>,
        /// Microseconds each call spins, by call number (cycled).
        delays: Vec<u64>,
    }

    impl ResourceEventHandler<ConfigMap> for Model {
        fn on_add(&self, obj: &Arc<ConfigMap>, _: bool) {
            self.in_call.fetch_add(1, Ordering::SeqCst);
            if self.returned.load(Ordering::SeqCst) {
                self.violations
                    .lock()
                    .push("a call started after the wait".into());
            }
            let n = self.calls.lock().len();
            if let Some(d) = self.delays.get(n % self.delays.len().max(1)) {
                // Only to vary the interleavings with the distributing task:
                // a handler call runs on the blocking pool, and this test's
                // runtime runs on the real clock.
                #[allow(clippy::disallowed_methods)]
                std::thread::sleep(Duration::from_micros(*d));
            }
            let index = obj.metadata.name.as_deref().and_then(|n| n.parse().ok());
            self.calls.lock().push(index.unwrap_or(usize::MAX));
            if self.returned.load(Ordering::SeqCst) {
                self.violations
                    .lock()
                    .push("a call ran on after the wait".into());
            }
            self.in_call.fetch_sub(1, Ordering::SeqCst);
        }
    }

    #[derive(Debug, Clone)]
    enum Op {
        /// Distribute this many notifications.
        Distribute(usize),
        /// Wait until the handler has been called for all of them.
        Settle,
        /// Let the handler's thread run a little.
        Yield,
        /// Let the handler's thread run for this many microseconds (to
        /// catch it in the middle of a call).
        Pause(u64),
        /// Start the processor (once; later ones do nothing).
        Start,
    }

    fn op() -> impl Strategy<Value = Op> {
        prop_oneof![
            4 => (1usize..6).prop_map(Op::Distribute),
            1 => Just(Op::Settle),
            1 => Just(Op::Yield),
            2 => (0u64..1500).prop_map(Op::Pause),
            1 => Just(Op::Start),
        ]
    }

    fn notification(i: usize) -> Notification<ConfigMap> {
        let mut cm = ConfigMap::default();
        cm.metadata.name = Some(i.to_string());
        Notification::Add {
            obj: Arc::new(cm),
            is_in_initial_list: false,
        }
    }

    async fn settle(model: &Model, n: usize) -> Result<(), TestCaseError> {
        for _ in 0..20_000 {
            if model.calls.lock().len() >= n {
                return Ok(());
            }
            tokio::time::sleep(Duration::from_micros(100)).await;
        }
        Err(TestCaseError::fail(format!(
            "the handler never caught up with {n}"
        )))
    }

    /// One run of the model: `before` runs, the handler is removed and
    /// waited for, then `after` runs; returns the model and how many
    /// notifications were distributed before the removal and were
    /// certainly delivered (those before the last settle).
    async fn scenario(
        before: Vec<Op>,
        after: Vec<Op>,
        delays: Vec<u64>,
    ) -> Result<(Arc<Model>, usize, usize), TestCaseError> {
        let model = Arc::new(Model {
            delays,
            ..Model::default()
        });
        let processor = Processor::new();
        let listener = Arc::new(Listener::new(
            1,
            model.clone(),
            Duration::ZERO,
            Duration::ZERO,
            IntCounter::new("model_panics", "panics")
                .map_err(|e| TestCaseError::fail(e.to_string()))?,
            Arc::from("model"),
        ));
        processor.add_listener(listener.clone());
        let (mut distributed, mut settled, mut started) = (0, 0, false);
        for op in before {
            match op {
                Op::Distribute(n) => {
                    for _ in 0..n {
                        processor.distribute(notification(distributed), false);
                        distributed += 1;
                    }
                }
                Op::Settle if started => {
                    settle(&model, distributed).await?;
                    settled = distributed;
                }
                Op::Settle => {}
                Op::Yield => tokio::task::yield_now().await,
                Op::Pause(micros) => tokio::time::sleep(Duration::from_micros(micros)).await,
                Op::Start if !started => {
                    processor.run(Handle::current());
                    started = true;
                }
                Op::Start => {}
            }
        }
        // The shut-down: remove, then wait.
        prop_assert!(processor.remove_listener(1));
        listener.stopped().cancelled().await;
        prop_assert_eq!(
            model.in_call.load(Ordering::SeqCst),
            0,
            "a call runs after the wait"
        );
        model.returned.store(true, Ordering::SeqCst);
        let mut later = distributed;
        for op in after {
            match op {
                Op::Distribute(n) => {
                    for _ in 0..n {
                        processor.distribute(notification(later), false);
                        later += 1;
                    }
                }
                Op::Start if !started => {
                    processor.run(Handle::current());
                    started = true;
                }
                _ => tokio::task::yield_now().await,
            }
        }
        // Give a wrongly surviving task the time to call the handler.
        tokio::time::sleep(Duration::from_millis(2)).await;
        processor.stop().await;
        Ok((model, distributed, settled))
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(96))]

        /// The removal protocol's invariants (module doc) over random
        /// interleavings of notifications, catch-ups, start and removal with
        /// a handler of random speed.
        #[test]
        fn a_shut_down_handler_should_get_a_gapless_prefix_and_nothing_after_the_wait(
            before in proptest::collection::vec(op(), 0..24),
            after in proptest::collection::vec(op(), 0..6),
            delays in proptest::collection::vec(0u64..1000, 1..8),
        ) {
            let runtime = tokio::runtime::Builder::new_multi_thread()
                .worker_threads(2)
                .enable_time()
                .build()
                .map_err(|e| TestCaseError::fail(e.to_string()))?;
            let (model, distributed, settled) = runtime.block_on(scenario(before, after, delays))?;
            let calls = model.calls.lock().clone();
            prop_assert!(model.violations.lock().is_empty(), "{:?}", model.violations.lock());
            // A prefix, in order, of what was distributed before the removal.
            let expected: Vec<usize> = (0..calls.len()).collect();
            prop_assert_eq!(&calls, &expected);
            prop_assert!(calls.len() <= distributed, "{} calls of {} distributed", calls.len(), distributed);
            // Nothing lost before the handler last caught up.
            prop_assert!(calls.len() >= settled, "{} calls, {} settled", calls.len(), settled);
        }
    }

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
