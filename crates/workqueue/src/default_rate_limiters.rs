//! [`RateLimiter`] and client-go's rate limiters.

use std::sync::Arc;
use std::time::Duration;

use parking_lot::Mutex;
use tokio::time::Instant;

use crate::queue::{Item, Map};
use crate::{Error, Result};

/// Decides how long an item waits before it is retried (client-go's
/// `RateLimiter`).
///
/// Implementations lock only for a few map operations: they are called from
/// async code but never block.
pub trait RateLimiter<T>: Send + Sync {
    /// How long `item` should wait before its next attempt (and records the
    /// attempt).
    fn when(&self, item: &T) -> Duration;
    /// Stops tracking `item`: its next failure starts the schedule afresh.
    fn forget(&self, item: &T);
    /// How many times `item` has been rate limited since it was last forgotten.
    fn num_requeues(&self, item: &T) -> usize;
}

impl<T, R: RateLimiter<T> + ?Sized> RateLimiter<T> for Box<R> {
    fn when(&self, item: &T) -> Duration {
        (**self).when(item)
    }
    fn forget(&self, item: &T) {
        (**self).forget(item)
    }
    fn num_requeues(&self, item: &T) -> usize {
        (**self).num_requeues(item)
    }
}

impl<T, R: RateLimiter<T> + ?Sized> RateLimiter<T> for Arc<R> {
    fn when(&self, item: &T) -> Duration {
        (**self).when(item)
    }
    fn forget(&self, item: &T) {
        (**self).forget(item)
    }
    fn num_requeues(&self, item: &T) -> usize {
        (**self).num_requeues(item)
    }
}

/// client-go's `DefaultControllerRateLimiter`: the larger of a per-item
/// exponential backoff (5 ms doubling up to 1000 s) and an overall token
/// bucket (10 per second, burst 100).
pub fn default_controller_rate_limiter<T: Item>() -> MaxOfRateLimiter<T> {
    MaxOfRateLimiter::new(vec![
        Box::new(ItemExponentialFailureRateLimiter::new(
            Duration::from_millis(5),
            Duration::from_secs(1000),
        )),
        Box::new(BucketRateLimiter::default_controller()),
    ])
}

/// Per item: `base · 2^failures`, capped at `max` (and never overflowing).
pub struct ItemExponentialFailureRateLimiter<T> {
    failures: Mutex<Map<T, u32>>,
    base: Duration,
    max: Duration,
}

impl<T> std::fmt::Debug for ItemExponentialFailureRateLimiter<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ItemExponentialFailureRateLimiter")
            .field("base", &self.base)
            .field("max", &self.max)
            .finish_non_exhaustive()
    }
}

impl<T: Item> ItemExponentialFailureRateLimiter<T> {
    /// Waits `base`, then twice as long after every failure, up to `max`.
    pub fn new(base: Duration, max: Duration) -> Self {
        Self {
            failures: Mutex::new(Map::default()),
            base,
            max,
        }
    }
}

/// `base · 2^exp`, or `max` when that is larger or does not fit.
fn backoff(base: Duration, exp: u32, max: Duration) -> Duration {
    let factor = 1u128.checked_shl(exp).unwrap_or(0);
    match base.as_nanos().checked_mul(factor) {
        Some(nanos) if factor != 0 && nanos <= max.as_nanos() => {
            // At most `max`, so it fits a Duration.
            Duration::new(
                (nanos / 1_000_000_000) as u64,
                (nanos % 1_000_000_000) as u32,
            )
        }
        _ => max,
    }
}

impl<T: Item> RateLimiter<T> for ItemExponentialFailureRateLimiter<T> {
    fn when(&self, item: &T) -> Duration {
        let exp = {
            let mut failures = self.failures.lock();
            let count = failures.entry(item.clone()).or_insert(0);
            let exp = *count;
            *count = count.saturating_add(1);
            exp
        };
        backoff(self.base, exp, self.max)
    }

    fn forget(&self, item: &T) {
        self.failures.lock().remove(item);
    }

    fn num_requeues(&self, item: &T) -> usize {
        self.failures.lock().get(item).map_or(0, |n| *n as usize)
    }
}

/// Per item: `fast` for the first `max_fast_attempts` attempts, then `slow`.
pub struct ItemFastSlowRateLimiter<T> {
    attempts: Mutex<Map<T, u32>>,
    fast: Duration,
    slow: Duration,
    max_fast_attempts: u32,
}

impl<T> std::fmt::Debug for ItemFastSlowRateLimiter<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ItemFastSlowRateLimiter")
            .field("fast", &self.fast)
            .field("slow", &self.slow)
            .field("max_fast_attempts", &self.max_fast_attempts)
            .finish_non_exhaustive()
    }
}

impl<T: Item> ItemFastSlowRateLimiter<T> {
    /// Waits `fast` for the first `max_fast_attempts` attempts, `slow` after.
    pub fn new(fast: Duration, slow: Duration, max_fast_attempts: u32) -> Self {
        Self {
            attempts: Mutex::new(Map::default()),
            fast,
            slow,
            max_fast_attempts,
        }
    }
}

impl<T: Item> RateLimiter<T> for ItemFastSlowRateLimiter<T> {
    fn when(&self, item: &T) -> Duration {
        let attempts = {
            let mut attempts = self.attempts.lock();
            let count = attempts.entry(item.clone()).or_insert(0);
            *count = count.saturating_add(1);
            *count
        };
        if attempts <= self.max_fast_attempts {
            self.fast
        } else {
            self.slow
        }
    }

    fn forget(&self, item: &T) {
        self.attempts.lock().remove(item);
    }

    fn num_requeues(&self, item: &T) -> usize {
        self.attempts.lock().get(item).map_or(0, |n| *n as usize)
    }
}

struct Bucket {
    tokens: f64,
    last: Instant,
}

/// An overall token bucket (client-go's `BucketRateLimiter` over
/// `rate.Limiter`): `burst` tokens, refilled at `qps` per second. Every
/// [`when`](RateLimiter::when) reserves a token and returns how long to wait
/// for it, as `Reserve().Delay()` does; items are not tracked.
pub struct BucketRateLimiter {
    bucket: Mutex<Bucket>,
    qps: f64,
    burst: f64,
}

impl std::fmt::Debug for BucketRateLimiter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BucketRateLimiter")
            .field("qps", &self.qps)
            .field("burst", &self.burst)
            .finish_non_exhaustive()
    }
}

impl BucketRateLimiter {
    /// A full bucket of `burst` tokens refilled at `qps` per second.
    ///
    /// Fails unless `qps` is finite and positive and `burst` is at least 1.
    pub fn new(qps: f64, burst: u32) -> Result<Self> {
        if !(qps.is_finite() && qps > 0.0) || burst == 0 {
            return Err(Error::InvalidBucket { qps, burst });
        }
        Ok(Self::new_unchecked(qps, burst))
    }

    fn new_unchecked(qps: f64, burst: u32) -> Self {
        Self {
            bucket: Mutex::new(Bucket {
                tokens: f64::from(burst),
                last: Instant::now(),
            }),
            qps,
            burst: f64::from(burst),
        }
    }

    /// 10 per second, burst 100: the bucket of [`default_controller_rate_limiter`].
    pub fn default_controller() -> Self {
        Self::new_unchecked(10.0, 100)
    }

    /// Reserves a token: how long until it is available.
    pub fn reserve(&self) -> Duration {
        let now = Instant::now();
        let mut bucket = self.bucket.lock();
        let elapsed = now.saturating_duration_since(bucket.last).as_secs_f64();
        let tokens = (bucket.tokens + elapsed * self.qps).min(self.burst) - 1.0;
        bucket.tokens = tokens;
        bucket.last = now.max(bucket.last);
        if tokens >= 0.0 {
            Duration::ZERO
        } else {
            // In nanoseconds, truncated, as `rate.Limiter` computes it (a
            // wait too long for an `i64` of nanoseconds is "forever").
            let nanos = -tokens / self.qps * 1e9;
            if nanos >= i64::MAX as f64 {
                Duration::MAX
            } else {
                Duration::from_nanos(nanos as u64)
            }
        }
    }
}

impl<T> RateLimiter<T> for BucketRateLimiter {
    fn when(&self, _item: &T) -> Duration {
        self.reserve()
    }
    fn forget(&self, _item: &T) {}
    fn num_requeues(&self, _item: &T) -> usize {
        0
    }
}

/// The largest delay of several limiters (every one records the attempt).
pub struct MaxOfRateLimiter<T> {
    limiters: Vec<Box<dyn RateLimiter<T>>>,
}

impl<T> std::fmt::Debug for MaxOfRateLimiter<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MaxOfRateLimiter")
            .field("limiters", &self.limiters.len())
            .finish()
    }
}

impl<T> MaxOfRateLimiter<T> {
    /// The largest delay of `limiters`.
    pub fn new(limiters: Vec<Box<dyn RateLimiter<T>>>) -> Self {
        Self { limiters }
    }
}

impl<T> RateLimiter<T> for MaxOfRateLimiter<T> {
    fn when(&self, item: &T) -> Duration {
        self.limiters
            .iter()
            .map(|l| l.when(item))
            .max()
            .unwrap_or_default()
    }
    fn forget(&self, item: &T) {
        for limiter in &self.limiters {
            limiter.forget(item);
        }
    }
    fn num_requeues(&self, item: &T) -> usize {
        self.limiters
            .iter()
            .map(|l| l.num_requeues(item))
            .max()
            .unwrap_or_default()
    }
}

/// Another limiter's delay, never longer than `max_wait`.
pub struct WithMaxWaitRateLimiter<R> {
    limiter: R,
    max_wait: Duration,
}

impl<R> std::fmt::Debug for WithMaxWaitRateLimiter<R> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WithMaxWaitRateLimiter")
            .field("max_wait", &self.max_wait)
            .finish_non_exhaustive()
    }
}

impl<R> WithMaxWaitRateLimiter<R> {
    /// `limiter`'s delays, capped at `max_wait`.
    pub fn new(limiter: R, max_wait: Duration) -> Self {
        Self { limiter, max_wait }
    }
}

impl<T, R: RateLimiter<T>> RateLimiter<T> for WithMaxWaitRateLimiter<R> {
    fn when(&self, item: &T) -> Duration {
        self.limiter.when(item).min(self.max_wait)
    }
    fn forget(&self, item: &T) {
        self.limiter.forget(item);
    }
    fn num_requeues(&self, item: &T) -> usize {
        self.limiter.num_requeues(item)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: Duration = Duration::from_millis(1);

    #[test]
    fn exponential_limiter_should_double_from_base_and_stop_at_max() {
        let limiter = ItemExponentialFailureRateLimiter::new(MS, Duration::from_secs(1));
        let delays: Vec<_> = (0..12).map(|_| limiter.when(&"one")).collect();
        let expected: Vec<_> = [1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1000, 1000]
            .into_iter()
            .map(|ms| ms * MS)
            .collect();
        assert_eq!(delays, expected);
        assert_eq!(limiter.num_requeues(&"one"), 12);
        assert_eq!(limiter.when(&"two"), MS, "items are tracked apart");
        limiter.forget(&"one");
        assert_eq!(limiter.num_requeues(&"one"), 0);
        assert_eq!(limiter.when(&"one"), MS);
    }

    #[test]
    fn exponential_limiter_should_never_overflow() {
        let limiter = ItemExponentialFailureRateLimiter::new(
            Duration::from_secs(u64::MAX / 2),
            Duration::MAX,
        );
        for _ in 0..200 {
            limiter.when(&1);
        }
        assert_eq!(limiter.when(&1), Duration::MAX);
        assert_eq!(backoff(MS, 127, Duration::MAX), Duration::MAX);
        assert_eq!(backoff(MS, 128, Duration::MAX), Duration::MAX);
        assert_eq!(
            backoff(MS, u32::MAX, Duration::from_secs(3)),
            Duration::from_secs(3)
        );
    }

    #[test]
    fn exponential_limiter_should_reach_its_max_after_a_thousand_failures() {
        // client-go's `TestItemExponentialFailureRateLimiterOverFlow`.
        let limiter = ItemExponentialFailureRateLimiter::new(MS, Duration::from_secs(1000));
        for _ in 0..5 {
            limiter.when(&"one");
        }
        assert_eq!(limiter.when(&"one"), 32 * MS);
        for _ in 0..1000 {
            limiter.when(&"overflow1");
        }
        assert_eq!(limiter.when(&"overflow1"), Duration::from_secs(1000));
        let minute = Duration::from_secs(60);
        let limiter = ItemExponentialFailureRateLimiter::new(minute, 1000 * 60 * minute);
        for _ in 0..2 {
            limiter.when(&"two");
        }
        assert_eq!(limiter.when(&"two"), 4 * minute);
        for _ in 0..1000 {
            limiter.when(&"overflow2");
        }
        assert_eq!(limiter.when(&"overflow2"), 1000 * 60 * minute);
    }

    #[tokio::test(start_paused = true)]
    async fn max_of_should_follow_client_go_test_max_of_rate_limiter() {
        let limiter: MaxOfRateLimiter<&str> = MaxOfRateLimiter::new(vec![
            Box::new(ItemFastSlowRateLimiter::new(
                5 * MS,
                Duration::from_secs(3),
                3,
            )),
            Box::new(ItemExponentialFailureRateLimiter::new(
                MS,
                Duration::from_secs(1),
            )),
        ]);
        let delays: Vec<_> = (0..5).map(|_| limiter.when(&"one")).collect();
        let slow = Duration::from_secs(3);
        assert_eq!(delays, [5 * MS, 5 * MS, 5 * MS, slow, slow]);
        assert_eq!(limiter.num_requeues(&"one"), 5);
        assert_eq!(limiter.when(&"two"), 5 * MS);
        assert_eq!(limiter.when(&"two"), 5 * MS);
        assert_eq!(limiter.num_requeues(&"two"), 2);
        limiter.forget(&"one");
        assert_eq!(limiter.num_requeues(&"one"), 0);
        assert_eq!(limiter.when(&"one"), 5 * MS);
        assert_eq!(limiter.num_requeues(&"two"), 2, "forget is per item");
    }

    #[test]
    fn fast_slow_limiter_should_switch_after_max_fast_attempts() {
        let limiter = ItemFastSlowRateLimiter::new(5 * MS, 10 * MS, 3);
        let delays: Vec<_> = (0..5).map(|_| limiter.when(&"a")).collect();
        assert_eq!(delays, [5 * MS, 5 * MS, 5 * MS, 10 * MS, 10 * MS]);
        assert_eq!(limiter.num_requeues(&"a"), 5);
        limiter.forget(&"a");
        assert_eq!(limiter.when(&"a"), 5 * MS);
    }

    #[test]
    fn bucket_should_refuse_a_rate_that_is_not_positive_or_an_empty_burst() {
        assert!(BucketRateLimiter::new(0.0, 1).is_err());
        assert!(BucketRateLimiter::new(f64::NAN, 1).is_err());
        assert!(BucketRateLimiter::new(-1.0, 1).is_err());
        assert!(BucketRateLimiter::new(1.0, 0).is_err());
        assert!(BucketRateLimiter::new(1.0, 1).is_ok());
    }

    #[tokio::test(start_paused = true)]
    async fn bucket_should_pass_a_burst_of_100_then_10_per_second() {
        let limiter = BucketRateLimiter::default_controller();
        for i in 0..100 {
            assert_eq!(
                RateLimiter::<&str>::when(&limiter, &"x"),
                Duration::ZERO,
                "burst item {i}"
            );
        }
        // Each further reservation waits 100 ms more than the one before.
        for k in 1..=20u32 {
            assert_eq!(RateLimiter::<&str>::when(&limiter, &"x"), k * 100 * MS);
        }
        // The bucket is 20 tokens in debt: after 3 s, 10 tokens are free.
        tokio::time::advance(Duration::from_secs(3)).await;
        for _ in 0..10 {
            assert_eq!(RateLimiter::<&str>::when(&limiter, &"x"), Duration::ZERO);
        }
        assert_eq!(RateLimiter::<&str>::when(&limiter, &"x"), 100 * MS);
        // A long idle time refills no more than the burst.
        tokio::time::advance(Duration::from_secs(3600)).await;
        for _ in 0..100 {
            assert_eq!(RateLimiter::<&str>::when(&limiter, &"x"), Duration::ZERO);
        }
        assert_eq!(RateLimiter::<&str>::when(&limiter, &"x"), 100 * MS);
    }

    #[tokio::test(start_paused = true)]
    async fn bucket_delays_should_be_truncated_to_the_nanosecond() {
        // 3 per second, burst 1: the waits are 1/3 s and 2/3 s, truncated
        // (333333333 ns, 666666666 ns) as `rate.Limiter` truncates them.
        let limiter = BucketRateLimiter::new(3.0, 1).unwrap();
        let delays: Vec<_> = (0..3)
            .map(|_| RateLimiter::<&str>::when(&limiter, &"x"))
            .collect();
        assert_eq!(
            delays,
            [
                Duration::ZERO,
                Duration::from_nanos(333_333_333),
                Duration::from_nanos(666_666_666)
            ]
        );
    }

    #[tokio::test(start_paused = true)]
    async fn max_of_should_take_the_largest_delay_and_forget_in_every_limiter() {
        let limiter: MaxOfRateLimiter<&str> = MaxOfRateLimiter::new(vec![
            Box::new(ItemFastSlowRateLimiter::new(
                5 * MS,
                3 * Duration::from_secs(1),
                1,
            )),
            Box::new(ItemExponentialFailureRateLimiter::new(
                MS,
                Duration::from_secs(1),
            )),
        ]);
        assert_eq!(limiter.when(&"a"), 5 * MS);
        assert_eq!(limiter.when(&"a"), Duration::from_secs(3));
        assert_eq!(limiter.num_requeues(&"a"), 2);
        limiter.forget(&"a");
        assert_eq!(limiter.num_requeues(&"a"), 0);
        assert_eq!(limiter.when(&"a"), 5 * MS);
    }

    #[test]
    fn with_max_wait_should_cap_the_delay() {
        let limiter = WithMaxWaitRateLimiter::new(
            ItemExponentialFailureRateLimiter::new(
                Duration::from_secs(1),
                Duration::from_secs(100),
            ),
            Duration::from_secs(3),
        );
        let delays: Vec<_> = (0..4).map(|_| limiter.when(&"a").as_secs()).collect();
        assert_eq!(delays, [1, 2, 3, 3]);
        assert_eq!(limiter.num_requeues(&"a"), 4);
        limiter.forget(&"a");
        assert_eq!(limiter.num_requeues(&"a"), 0);
    }

    #[tokio::test(start_paused = true)]
    async fn default_controller_rate_limiter_should_follow_the_exponential_schedule_of_seed_002() {
        let limiter = default_controller_rate_limiter::<&str>();
        let delays: Vec<_> = (0..25).map(|_| limiter.when(&"failing")).collect();
        let expected: Vec<_> = (0..25u32)
            .map(|n| {
                if n < 18 {
                    5 * MS * (1 << n)
                } else {
                    Duration::from_secs(1000)
                }
            })
            .collect();
        assert_eq!(delays, expected);
    }
}
