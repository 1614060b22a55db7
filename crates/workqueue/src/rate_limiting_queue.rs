//! [`RateLimitingQueue`]: a [`DelayingQueue`] that asks a [`RateLimiter`]
//! how long a failed item waits.

use std::ops::Deref;
use std::sync::Arc;

use crate::config::{Config, DelayingConfig};
use crate::default_rate_limiters::{RateLimiter, default_controller_rate_limiter};
use crate::delaying_queue::DelayingQueue;
use crate::queue::Item;

/// client-go's `RateLimitingInterface`: a [`DelayingQueue`] plus
/// [`add_rate_limited`](RateLimitingQueue::add_rate_limited),
/// [`forget`](RateLimitingQueue::forget) and
/// [`num_requeues`](RateLimitingQueue::num_requeues).
///
/// The usual worker loop:
///
/// ```
/// use kcr_workqueue::RateLimitingQueue;
///
/// # async fn reconcile(_key: &str) -> Result<(), ()> { Ok(()) }
/// # #[tokio::main(flavor = "current_thread")] async fn main() {
/// let queue: RateLimitingQueue<String> = RateLimitingQueue::default();
/// queue.add("default/pod-a".to_string());
/// # queue.shut_down();
/// while let Some(key) = queue.get().await {
///     match reconcile(&key).await {
///         Ok(()) => queue.forget(&key),                  // success: reset its backoff
///         Err(()) => queue.add_rate_limited(key.clone()), // failure: retry later
///     }
///     queue.done(&key);
/// }
/// # }
/// ```
///
/// The methods of [`DelayingQueue`] and [`Queue`](crate::Queue) are reached
/// through `Deref`.
pub struct RateLimitingQueue<T> {
    queue: DelayingQueue<T>,
    limiter: Arc<dyn RateLimiter<T>>,
}

impl<T> Clone for RateLimitingQueue<T> {
    fn clone(&self) -> Self {
        Self {
            queue: self.queue.clone(),
            limiter: self.limiter.clone(),
        }
    }
}

impl<T> std::fmt::Debug for RateLimitingQueue<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RateLimitingQueue")
            .field("queue", &self.queue)
            .finish_non_exhaustive()
    }
}

impl<T> Deref for RateLimitingQueue<T> {
    type Target = DelayingQueue<T>;

    fn deref(&self) -> &DelayingQueue<T> {
        &self.queue
    }
}

impl<T: Item> Default for RateLimitingQueue<T> {
    /// An unnamed queue with [`default_controller_rate_limiter`].
    fn default() -> Self {
        Self::new(default_controller_rate_limiter())
    }
}

impl<T: Item> RateLimitingQueue<T> {
    /// An unnamed queue (no metrics) rate limited by `limiter`.
    pub fn new(limiter: impl RateLimiter<T> + 'static) -> Self {
        Self::with_config(limiter, Config::default())
    }

    /// A queue built from `config`, rate limited by `limiter`.
    pub fn with_config(
        limiter: impl RateLimiter<T> + 'static,
        config: impl Into<DelayingConfig>,
    ) -> Self {
        Self {
            queue: DelayingQueue::with_config(config),
            limiter: Arc::new(limiter),
        }
    }

    /// Adds `item` after the delay the rate limiter gives it.
    pub fn add_rate_limited(&self, item: T) {
        let delay = self.limiter.when(&item);
        self.queue.add_after(item, delay);
    }

    /// Tells the rate limiter to stop tracking `item` (call it once the item
    /// succeeded; it does not remove the item from the queue).
    pub fn forget(&self, item: &T) {
        self.limiter.forget(item);
    }

    /// How many times `item` was rate limited since it was last forgotten.
    pub fn num_requeues(&self, item: &T) -> usize {
        self.limiter.num_requeues(item)
    }

    /// The rate limiter of this queue.
    pub fn rate_limiter(&self) -> &Arc<dyn RateLimiter<T>> {
        &self.limiter
    }
}
