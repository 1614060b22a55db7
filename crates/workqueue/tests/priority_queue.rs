//! The rules of `PriorityQueue`: controller-runtime's priority queue plus aging.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use kcr_workqueue::{AddOpts, Config, ItemExponentialFailureRateLimiter, PriorityQueue};
use tokio::time::{Instant, advance, sleep, timeout};

const MS: Duration = Duration::from_millis(1);

fn strict() -> PriorityQueue<&'static str> {
    PriorityQueue::with_config(
        ItemExponentialFailureRateLimiter::new(5 * MS, Duration::from_secs(1000)),
        Config::default().without_aging(),
    )
}

fn prio(p: i32) -> AddOpts {
    AddOpts::default().priority(p)
}

async fn settle() {
    for _ in 0..20 {
        tokio::task::yield_now().await;
    }
}

#[tokio::test(start_paused = true)]
async fn get_should_hand_out_higher_priorities_first_and_fifo_within_one() {
    for queue in [strict(), PriorityQueue::default()] {
        queue.add_with_opts("low-1", prio(-100));
        queue.add_with_opts("mid-1", prio(0));
        queue.add_with_opts("high-1", prio(10));
        queue.add_with_opts("low-2", prio(-100));
        queue.add_with_opts("mid-2", prio(0));
        queue.add_with_opts("high-2", prio(10));
        let mut order = Vec::new();
        for _ in 0..6 {
            order.push(queue.get_with_priority().await.unwrap());
        }
        assert_eq!(
            order,
            [
                ("high-1", 10),
                ("high-2", 10),
                ("mid-1", 0),
                ("mid-2", 0),
                ("low-1", -100),
                ("low-2", -100)
            ]
        );
    }
}

#[tokio::test(start_paused = true)]
async fn an_item_added_again_should_keep_the_higher_priority() {
    let queue = strict();
    queue.add_with_opts("a", prio(5));
    queue.add_with_opts("b", prio(1));
    queue.add_with_opts("b", prio(10));
    queue.add_with_opts("a", prio(-3));
    assert_eq!(queue.len(), 2);
    assert_eq!(queue.get_with_priority().await, Some(("b", 10)));
    assert_eq!(queue.get_with_priority().await, Some(("a", 5)));
}

#[tokio::test(start_paused = true)]
async fn an_item_added_again_should_keep_the_earlier_ready_time() {
    let queue = strict();
    let start = Instant::now();
    queue.add_with_opts("a", AddOpts::default().after(50 * MS));
    queue.add_with_opts("a", AddOpts::default().after(10 * MS));
    queue.add_with_opts("b", AddOpts::default().after(10 * MS));
    queue.add_with_opts("b", AddOpts::default().after(50 * MS));
    assert_eq!(queue.get().await, Some("a"));
    assert_eq!(queue.get().await, Some("b"));
    assert_eq!(start.elapsed(), 10 * MS);
    queue.done(&"a");
    queue.done(&"b");
    assert!(timeout(Duration::from_secs(1), queue.get()).await.is_err());
    // An immediate add of a delayed item makes it ready now.
    queue.add_with_opts("c", AddOpts::default().after(Duration::from_secs(60)));
    queue.add("c");
    assert_eq!(queue.len(), 1);
}

#[tokio::test(start_paused = true)]
async fn an_item_should_not_be_ready_before_its_delay() {
    let queue = strict();
    queue.add_with_opts("later", AddOpts::default().priority(100).after(20 * MS));
    queue.add_with_opts("now", prio(0));
    assert_eq!(queue.get().await, Some("now"));
    advance(19 * MS).await;
    settle().await;
    assert_eq!(queue.len(), 0);
    advance(MS).await;
    settle().await;
    assert_eq!(queue.get_with_priority().await, Some(("later", 100)));
}

#[tokio::test(start_paused = true)]
async fn rate_limited_adds_should_wait_the_limiter_delay_or_the_shorter_after() {
    let queue = strict();
    let start = Instant::now();
    queue.add_with_opts("a", AddOpts::default().rate_limited());
    assert_eq!(queue.get().await, Some("a"));
    assert_eq!(start.elapsed(), 5 * MS);
    queue.done(&"a");
    // The limiter says 10 ms now; a shorter `after` wins.
    let start = Instant::now();
    queue.add_with_opts("a", AddOpts::default().rate_limited().after(2 * MS));
    assert_eq!(queue.get().await, Some("a"));
    assert_eq!(start.elapsed(), 2 * MS);
    queue.done(&"a");
    assert_eq!(queue.num_requeues(&"a"), 2);
    queue.forget(&"a");
    assert_eq!(queue.num_requeues(&"a"), 0);
}

#[tokio::test(start_paused = true)]
async fn priority_queue_should_not_hand_out_an_item_being_processed() {
    let queue = strict();
    queue.add("a");
    let item = queue.get().await.unwrap();
    queue.add_with_opts("a", prio(7));
    assert_eq!(queue.len(), 0);
    assert!(timeout(Duration::from_secs(1), queue.get()).await.is_err());
    queue.done(&item);
    assert_eq!(
        queue.get_with_priority().await,
        Some(("a", 7)),
        "queued again at done"
    );
    queue.done(&"a");
    assert!(timeout(Duration::from_secs(1), queue.get()).await.is_err());
}

#[tokio::test(start_paused = true)]
async fn priority_queue_should_ignore_adds_after_shut_down_and_drain_what_is_ready() {
    let queue = strict();
    queue.add("ready");
    queue.add_after("delayed", 10 * MS);
    queue.shut_down();
    queue.add("ignored");
    advance(20 * MS).await;
    settle().await;
    assert_eq!(queue.get().await, Some("ready"));
    assert_eq!(queue.get().await, None);
    assert!(queue.is_shutting_down());
}

#[tokio::test(start_paused = true)]
async fn priority_queue_shut_down_with_drain_should_wait_for_items_being_processed() {
    let queue = strict();
    queue.add("a");
    let item = queue.get().await.unwrap();
    let drain = {
        let queue = queue.clone();
        tokio::spawn(async move { queue.shut_down_with_drain().await })
    };
    sleep(Duration::from_secs(5)).await;
    assert!(!drain.is_finished());
    queue.done(&item);
    timeout(Duration::from_secs(1), drain)
        .await
        .unwrap()
        .unwrap();
}

/// One worker taking 1 ms per item; a producer adding two priority-0 items
/// every millisecond (twice what the worker can take, so the backlog never
/// empties); one item of priority -100 added at the start.
///
/// Returns when the low-priority item was handed out (if it was within
/// `horizon`), and when the last high-priority item handed out before it had
/// become ready.
async fn starvation_run(
    queue: PriorityQueue<String>,
    horizon: Duration,
) -> Option<(Duration, Duration)> {
    let start = Instant::now();
    let stop = Arc::new(AtomicBool::new(false));
    let producer = {
        let (queue, stop) = (queue.clone(), stop.clone());
        tokio::spawn(async move {
            let mut n = 0u64;
            while !stop.load(Ordering::SeqCst) {
                for _ in 0..2 {
                    queue.add(format!("high-{n}:{}", start.elapsed().as_micros()));
                    n += 1;
                }
                sleep(MS).await;
            }
        })
    };
    // The stream is flowing when the low-priority item arrives.
    settle().await;
    assert!(queue.len() >= 2);
    queue.add_with_opts("low".to_string(), prio(-100));
    let mut latest_high_before_low = Duration::ZERO;
    let mut low_at = None;
    while start.elapsed() < horizon {
        let Some(item) = queue.get().await else { break };
        if item == "low" {
            low_at = Some(start.elapsed());
            queue.done(&item);
            break;
        }
        let ready: u64 = item.rsplit(':').next().unwrap().parse().unwrap();
        latest_high_before_low = latest_high_before_low.max(Duration::from_micros(ready));
        sleep(MS).await;
        queue.done(&item);
    }
    stop.store(true, Ordering::SeqCst);
    producer.await.unwrap();
    queue.shut_down();
    low_at.map(|at| (at, latest_high_before_low))
}

#[tokio::test(start_paused = true)]
async fn aging_should_keep_a_steady_high_priority_stream_from_starving_a_low_priority_item() {
    let step = 10 * MS;
    let aged = PriorityQueue::with_config(
        ItemExponentialFailureRateLimiter::new(5 * MS, Duration::from_secs(1000)),
        Config::default().aging(step),
    );
    let (low_at, latest_high) = starvation_run(aged, Duration::from_secs(10))
        .await
        .expect("the low-priority item is handed out");
    // The aging bound: no item made ready more than (0 - (-100)) × step after
    // the low-priority one goes before it...
    let bound = 100 * step;
    assert!(
        latest_high <= bound,
        "{latest_high:?} went first, beyond the bound {bound:?}"
    );
    // ...so it waits at most for the work those items bring: two per
    // millisecond of the bound, at 1 ms each.
    assert!(low_at <= 2 * bound + 10 * MS, "waited {low_at:?}");

    // Without aging, the same stream keeps it waiting for as long as it flows.
    let strict = PriorityQueue::with_config(
        ItemExponentialFailureRateLimiter::new(5 * MS, Duration::from_secs(1000)),
        Config::default().without_aging(),
    );
    assert_eq!(starvation_run(strict, Duration::from_secs(10)).await, None);
}
