//! client-go's work queues (`util/workqueue`) in async Rust.
//!
//! A controller's event handlers add object keys; its workers `get` them,
//! reconcile, and call `done`. The queues guarantee, as client-go's do:
//!
//! - **Fair**: items are handed out in the order they were added
//!   ([`Queue`]), or by priority and then in order ([`PriorityQueue`]).
//! - **Stingy**: an item added several times before a worker gets it is
//!   processed once; an item is never handed to two workers at once, and an
//!   item added while it is processed is queued again when its worker calls
//!   `done`.
//! - **Shared**: any number of producers and workers use clones of one
//!   handle (an `Arc`); `get().await` parks a worker without a thread.
//! - **Shut down**: adds after shut down are ignored; workers still get what
//!   is queued, then `None`; `shut_down_with_drain().await` also waits for
//!   the items being processed (a `shut_down` meanwhile ends that wait).
//!   [`PriorityQueue`] shuts down as controller-runtime's: `get` returns
//!   `None` at once, and `shut_down_with_drain` does not wait.
//! - **Lets go**: the queue holds an item only while it is queued or being
//!   processed; at `done` its copies are dropped.
//!
//! | type | client-go | adds |
//! | --- | --- | --- |
//! | [`Queue`] | `Interface` | `add`, `get`, `done`, `len`, `shut_down`, `shut_down_with_drain` |
//! | [`DelayingQueue`] | `DelayingInterface` | `add_after` (one timer task, whatever the number of delayed items; callers never block) |
//! | [`RateLimitingQueue`] | `RateLimitingInterface` | `add_rate_limited`, `forget`, `num_requeues` |
//! | [`PriorityQueue`] | controller-runtime's `priorityqueue` | `add_with_opts` / `add_all_with_opts` with [`AddOpts`] (priority, after, rate limited), aging |
//!
//! Each is built with `new` or `with_config`: a [`Config`] (name, metrics
//! provider) for the first three, a [`PriorityConfig`] (a `Config` plus the
//! aging) for [`PriorityQueue`].
//!
//! [`parallelize_until`] runs independent pieces of work on several threads
//! until done or cancelled, as client-go's `ParallelizeUntil`.
//!
//! # The one intended difference
//!
//! The queues follow client-go v1.36 and controller-runtime's priority queue
//! rule for rule, with one exception: [`PriorityQueue`] ages waiting items
//! by default (a ready item gains one priority level per
//! [`DEFAULT_AGING_STEP`] of waiting), so a steady stream of high-priority
//! items cannot starve a low-priority one. With [`PriorityConfig::without_aging`] it
//! orders items exactly as controller-runtime does.
//!
//! Rate limiters ([`RateLimiter`]): [`ItemExponentialFailureRateLimiter`],
//! [`ItemFastSlowRateLimiter`], [`BucketRateLimiter`], [`MaxOfRateLimiter`],
//! [`WithMaxWaitRateLimiter`], and [`default_controller_rate_limiter`].
//!
//! With the `metrics` feature (on by default), a queue built with a name
//! ([`Config::name`]) records client-go's workqueue metrics through
//! `kcr-metrics`; without it, queues carry no metrics code at all. Its
//! durations are timed with the CPU's time-stamp counter (through `quanta`,
//! the monotonic clock where the CPU has no invariant one), or with Tokio's
//! clock for a queue built while that clock is paused, so that in tests
//! they follow `tokio::time::advance`.
//!
//! # Example
//!
//! A worker retrying an item that fails, with the default controller rate
//! limiter (5 ms, 10 ms, 20 ms, ... up to 1000 s):
//!
//! ```
//! use kcr_workqueue::{Config, RateLimitingQueue, default_controller_rate_limiter};
//!
//! # #[tokio::main(flavor = "current_thread", start_paused = true)]
//! # async fn main() {
//! let queue = RateLimitingQueue::with_config(
//!     default_controller_rate_limiter(),
//!     Config::default().name("example"),
//! );
//! queue.add("default/my-pod".to_string());
//!
//! let worker = queue.clone();
//! let mut attempts = 0;
//! while let Some(key) = worker.get().await {
//!     attempts += 1;
//!     if attempts < 4 {
//!         worker.add_rate_limited(key.clone()); // failed: retry after a backoff
//!     } else {
//!         worker.forget(&key); // succeeded: reset its backoff
//!         worker.shut_down();
//!     }
//!     worker.done(&key);
//! }
//! assert_eq!(attempts, 4);
//! # }
//! ```

mod background;
mod config;
mod default_rate_limiters;
mod delaying_queue;
mod metrics;
mod parallelizer;
mod precise_timer;
mod priority_queue;
mod queue;
mod rate_limiting_queue;
mod waiters;

pub use config::{
    Config, DEFAULT_AGING_STEP, DEFAULT_TIMER_RESOLUTION, DelayingConfig, PriorityConfig,
};
pub use default_rate_limiters::{
    BucketRateLimiter, ItemExponentialFailureRateLimiter, ItemFastSlowRateLimiter,
    MaxOfRateLimiter, RateLimiter, WithMaxWaitRateLimiter, default_controller_rate_limiter,
};
pub use delaying_queue::DelayingQueue;
pub use parallelizer::{ParallelizeOptions, parallelize_until};
pub use priority_queue::{AddOpts, PriorityQueue};
pub use queue::{Item, Queue};
pub use rate_limiting_queue::RateLimitingQueue;
pub use waiters::Get;

/// The errors of kcr-workqueue.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// A token bucket needs a finite, positive rate and a burst of at least 1.
    #[error(
        "invalid token bucket: qps {qps} (must be finite and > 0), burst {burst} (must be >= 1)"
    )]
    InvalidBucket {
        /// The rate asked for.
        qps: f64,
        /// The burst asked for.
        burst: u32,
    },
}

/// The result type of kcr-workqueue.
pub type Result<T, E = Error> = std::result::Result<T, E>;
