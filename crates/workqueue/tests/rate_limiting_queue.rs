//! `RateLimitingQueue` with the default controller rate limiter.

use std::time::Duration;

use kcr_workqueue::{
    ItemExponentialFailureRateLimiter, RateLimitingQueue, default_controller_rate_limiter,
};
use tokio::time::Instant;

const MS: Duration = Duration::from_millis(1);

/// The schedule of seed 002: 5 ms doubling, 1000 s from the 19th failure on.
fn seed_002_schedule(failures: u32) -> Vec<Duration> {
    (0..failures)
        .map(|n| {
            if n < 18 {
                5 * MS * (1 << n)
            } else {
                Duration::from_secs(1000)
            }
        })
        .collect()
}

#[tokio::test(start_paused = true)]
async fn an_item_failing_every_time_should_be_retried_on_the_exact_exponential_schedule() {
    let queue = RateLimitingQueue::new(default_controller_rate_limiter());
    queue.add("failing");
    let mut handed_out = Vec::new();
    while let Some(key) = queue.get().await {
        handed_out.push(Instant::now());
        if handed_out.len() == 26 {
            queue.shut_down();
        } else {
            // The reconcile fails at once: back to the queue, rate limited.
            queue.add_rate_limited(key);
        }
        queue.done(&key);
    }
    let gaps: Vec<Duration> = handed_out.windows(2).map(|w| w[1] - w[0]).collect();
    assert_eq!(
        gaps,
        seed_002_schedule(25),
        "no floor, no jitter: the limiter's delays alone"
    );
    assert_eq!(queue.num_requeues(&"failing"), 25);
}

#[tokio::test(start_paused = true)]
async fn forget_should_restart_the_schedule() {
    let queue = RateLimitingQueue::new(default_controller_rate_limiter());
    for _ in 0..5 {
        queue.add_rate_limited("a");
        let key = queue.get().await.unwrap();
        queue.done(&key);
    }
    assert_eq!(queue.num_requeues(&"a"), 5);
    queue.forget(&"a");
    assert_eq!(queue.num_requeues(&"a"), 0);
    let start = Instant::now();
    queue.add_rate_limited("a");
    assert_eq!(queue.get().await, Some("a"));
    assert_eq!(start.elapsed(), 5 * MS);
}

#[tokio::test(start_paused = true)]
async fn the_bucket_should_let_100_items_through_at_once_then_10_per_second() {
    let queue = RateLimitingQueue::new(default_controller_rate_limiter());
    let start = Instant::now();
    for i in 0..130 {
        queue.add_rate_limited(i);
    }
    for i in 0..130u32 {
        assert_eq!(queue.get().await, Some(i));
        let expected = if i < 100 {
            // Only the exponential limiter's first delay.
            5 * MS
        } else {
            (i - 99) * 100 * MS
        };
        assert_eq!(start.elapsed(), expected, "item {i}");
    }
}

#[tokio::test(start_paused = true)]
async fn add_after_on_a_rate_limiting_queue_should_not_touch_the_limiter() {
    let queue = RateLimitingQueue::new(ItemExponentialFailureRateLimiter::new(
        MS,
        Duration::from_secs(1),
    ));
    queue.add_after("a", 10 * MS);
    assert_eq!(queue.num_requeues(&"a"), 0);
    assert_eq!(queue.get().await, Some("a"));
}
