//! The rules of `PriorityQueue`: controller-runtime's priority queue plus aging.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use kcr_workqueue::{AddOpts, ItemExponentialFailureRateLimiter, PriorityConfig, PriorityQueue};
use tokio::time::{Instant, advance, sleep, timeout};

const MS: Duration = Duration::from_millis(1);

fn strict() -> PriorityQueue<&'static str> {
    PriorityQueue::with_config(
        ItemExponentialFailureRateLimiter::new(5 * MS, Duration::from_secs(1000)),
        PriorityConfig::default().without_aging(),
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
async fn len_should_count_an_item_added_again_while_it_is_processed() {
    // controller-runtime's "enqueues a locked item".
    for queue in [strict(), PriorityQueue::default()] {
        queue.add("foo");
        assert_eq!(queue.len(), 1);
        assert_eq!(queue.get_with_priority().await, Some(("foo", 0)));
        assert_eq!(queue.len(), 0);
        queue.add("foo");
        assert_eq!(queue.len(), 1, "ready again, waiting for its done");
        queue.add_with_opts("foo", prio(3));
        assert_eq!(queue.len(), 1);
        queue.done(&"foo");
        assert_eq!(queue.len(), 1);
        assert_eq!(queue.get_with_priority().await, Some(("foo", 3)));
        assert_eq!(queue.len(), 0);
        // Added again with a delay while processed: not ready, not counted
        // until its time comes.
        queue.add_after("foo", 10 * MS);
        assert_eq!(queue.len(), 0);
        advance(10 * MS).await;
        settle().await;
        assert_eq!(queue.len(), 1, "ready while still processed");
        queue.done(&"foo");
        assert_eq!(queue.len(), 1);
        assert_eq!(queue.get().await, Some("foo"));
        queue.done(&"foo");
        assert_eq!(queue.len(), 0);
    }
}

#[tokio::test(start_paused = true)]
async fn an_item_whose_priority_is_raised_should_go_to_the_back_of_its_new_level() {
    // controller-runtime's "follows FIFO order in the new priority queue
    // when item priority changes".
    for queue in [strict(), PriorityQueue::default()] {
        queue.add_with_opts("foo", prio(0));
        queue.add_with_opts("bar", prio(1));
        queue.add_with_opts("foo", prio(1));
        assert_eq!(queue.len(), 2);
        assert_eq!(queue.get_with_priority().await, Some(("bar", 1)));
        assert_eq!(queue.get_with_priority().await, Some(("foo", 1)));
        queue.done(&"foo");
        queue.done(&"bar");

        // "gets pushed to the front if the priority increases".
        queue.add("foo");
        queue.add("bar");
        queue.add("baz");
        queue.add_with_opts("baz", prio(1));
        assert_eq!(queue.get_with_priority().await, Some(("baz", 1)));
        assert_eq!(queue.len(), 2);
        assert_eq!(queue.get().await, Some("foo"));
        assert_eq!(queue.get().await, Some("bar"));
        for item in ["foo", "bar", "baz"] {
            queue.done(&item);
        }

        // Raised while it waits for its done: placed by the time of the raise.
        queue.add("a");
        assert_eq!(queue.get().await, Some("a"));
        queue.add("a");
        queue.add_with_opts("b", prio(1));
        queue.add_with_opts("a", prio(1));
        queue.done(&"a");
        assert_eq!(queue.get().await, Some("b"));
        assert_eq!(queue.get().await, Some("a"));
        queue.done(&"a");
        queue.done(&"b");

        // Raised while it waits for its delay: placed by the time it is ready.
        queue.add_after("x", 10 * MS);
        queue.add_with_opts("y", prio(1).after(10 * MS));
        queue.add_with_opts("x", prio(1).after(10 * MS));
        advance(10 * MS).await;
        settle().await;
        assert_eq!(queue.get().await, Some("y"));
        assert_eq!(queue.get().await, Some("x"));
        queue.done(&"x");
        queue.done(&"y");
    }
}

#[tokio::test(start_paused = true)]
async fn with_aging_a_raise_should_never_move_an_item_back() {
    // An item that has waited longer than the raise is worth keeps its place.
    let queue = PriorityQueue::with_config(
        ItemExponentialFailureRateLimiter::new(5 * MS, Duration::from_secs(1000)),
        PriorityConfig::default().aging(10 * MS),
    );
    queue.add("old");
    advance(Duration::from_secs(1)).await;
    queue.add_with_opts("b", prio(1));
    queue.add_with_opts("c", prio(1));
    queue.add_with_opts("old", prio(1));
    assert_eq!(queue.get_with_priority().await, Some(("old", 1)));
    assert_eq!(queue.get().await, Some("b"));
    assert_eq!(queue.get().await, Some("c"));
}

#[tokio::test(start_paused = true)]
async fn without_aging_a_delayed_item_made_ready_by_an_add_should_keep_its_first_place() {
    // controller-runtime keeps the item's added counter: it goes before the
    // items added after its first (delayed) add.
    let queue = strict();
    queue.add_after("a", Duration::from_secs(3600));
    advance(MS).await;
    queue.add("b");
    advance(MS).await;
    queue.add("a");
    assert_eq!(queue.len(), 2);
    assert_eq!(queue.get().await, Some("a"));
    assert_eq!(queue.get().await, Some("b"));
}

#[tokio::test(start_paused = true)]
async fn without_aging_items_made_ready_by_the_timer_should_be_ordered_as_controller_runtime() {
    let queue = strict();
    // Due at the same time and of the same priority, after a raise: ordered
    // by their added counters (the raise gave `x` a later one).
    queue.add_after("x", 10 * MS);
    queue.add_with_opts("y", prio(1).after(10 * MS));
    queue.add_with_opts("x", prio(1).after(20 * MS));
    // A timer-readied item goes after the items added ready before it was
    // ready, whatever their time of add.
    queue.add_with_opts("z", prio(1).after(5 * MS));
    advance(7 * MS).await;
    settle().await;
    queue.add_with_opts("w", prio(1));
    advance(3 * MS).await;
    settle().await;
    let mut order = Vec::new();
    while !queue.is_empty() {
        order.push(queue.get().await.unwrap());
    }
    assert_eq!(order, ["z", "w", "y", "x"]);
}

#[tokio::test(start_paused = true)]
async fn get_should_return_none_at_once_after_shut_down_even_with_items_queued() {
    // controller-runtime's issue #3239 test.
    let queue = strict();
    queue.add("baz");
    queue.add_after("delayed", 10 * MS);
    queue.shut_down();
    queue.add("ignored");
    queue.add_with_opts("foo", AddOpts::default().after(Duration::from_secs(1)));
    advance(20 * MS).await;
    settle().await;
    assert_eq!(queue.get().await, None);
    assert_eq!(queue.get_with_priority().await, None);
    assert!(queue.is_shutting_down());
}

#[tokio::test(start_paused = true)]
async fn shut_down_should_wake_parked_workers_with_none() {
    let queue = strict();
    let worker = {
        let queue = queue.clone();
        tokio::spawn(async move { queue.get().await })
    };
    settle().await;
    queue.shut_down();
    assert_eq!(worker.await.unwrap(), None);
}

#[tokio::test(start_paused = true)]
async fn shut_down_with_drain_should_be_a_plain_shut_down_as_in_controller_runtime() {
    let queue = strict();
    queue.add("a");
    queue.add("b");
    let item = queue.get().await.unwrap();
    timeout(MS, queue.shut_down_with_drain())
        .await
        .expect("returns at once, though an item is being processed");
    assert!(queue.is_shutting_down());
    assert_eq!(queue.get().await, None, "b is not handed out");
    queue.done(&item);
}

#[tokio::test(start_paused = true)]
async fn priority_queue_should_hold_no_reference_to_an_item_after_done() {
    let queue: PriorityQueue<Arc<str>> = PriorityQueue::default();
    let item: Arc<str> = Arc::from("ns/a");
    let weak = Arc::downgrade(&item);
    queue.add_rate_limited(item);
    let got = queue.get().await.unwrap();
    queue.forget(&got);
    queue.done(&got);
    drop(got);
    assert!(weak.upgrade().is_none());
}

#[tokio::test(start_paused = true)]
async fn rate_limiter_should_give_the_queue_limiter() {
    let queue = strict();
    queue.add_rate_limited("a");
    assert_eq!(queue.rate_limiter().num_requeues(&"a"), 1);
    assert_eq!(queue.rate_limiter().when(&"a"), 10 * MS);
    assert_eq!(queue.num_requeues(&"a"), 2);
}

#[tokio::test(start_paused = true)]
async fn add_all_with_opts_should_add_several_items_with_one_set_of_options() {
    let queue = strict();
    queue.add("first");
    queue.add_all_with_opts(["a", "b", "c"], prio(2));
    queue.add_all_with_opts(["d", "a"], prio(1));
    assert_eq!(queue.len(), 5);
    let mut order = Vec::new();
    for _ in 0..5 {
        order.push(queue.get_with_priority().await.unwrap());
    }
    assert_eq!(
        order,
        [("a", 2), ("b", 2), ("c", 2), ("d", 1), ("first", 0)]
    );
    for (item, _) in order {
        queue.done(&item);
    }
    // Rate limited: each item asks the limiter for its own delay.
    let start = Instant::now();
    queue.add_rate_limited("b");
    queue.add_all_with_opts(["a", "b"], AddOpts::default().rate_limited());
    assert_eq!(queue.num_requeues(&"a"), 1);
    assert_eq!(queue.num_requeues(&"b"), 2);
    // Both ready at 5 ms (b keeps its earlier ready time): b was added first.
    assert_eq!(queue.get().await, Some("b"));
    assert_eq!(queue.get().await, Some("a"));
    assert_eq!(start.elapsed(), 5 * MS);
    // Nothing is added after shut down, and the limiter is not asked.
    queue.shut_down();
    queue.add_all_with_opts(["x", "y"], AddOpts::default().rate_limited());
    assert_eq!(queue.num_requeues(&"x"), 0);
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
        PriorityConfig::default().aging(step),
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
        PriorityConfig::default().without_aging(),
    );
    assert_eq!(starvation_run(strict, Duration::from_secs(10)).await, None);
}

fn strict_owned() -> PriorityQueue<String> {
    PriorityQueue::with_config(
        ItemExponentialFailureRateLimiter::new(5 * MS, Duration::from_secs(1000)),
        PriorityConfig::default().without_aging(),
    )
}

#[tokio::test(start_paused = true)]
async fn many_items_of_five_priorities_should_come_out_by_priority_then_in_order() {
    // controller-runtime's `TestHighPriorityItemsAreReturnedBeforeLowPriorityItemMultipleTimes`,
    // for items ready at once and items made ready together by the timer.
    const PER_PRIORITY: usize = 1000;
    let levels = [
        ("high", 10),
        ("upperMiddle", 5),
        ("middle", 0),
        ("lowMiddle", -5),
        ("low", -10),
    ];
    for after in [Duration::ZERO, Duration::from_secs(1)] {
        for queue in [strict_owned(), PriorityQueue::default()] {
            for i in 0..PER_PRIORITY {
                for (name, p) in levels {
                    queue.add_with_opts(format!("{name}-{i}"), prio(p).after(after));
                }
            }
            settle().await;
            if !after.is_zero() {
                assert_eq!(queue.len(), 0);
                advance(after).await;
                settle().await;
            }
            assert_eq!(queue.len(), 5 * PER_PRIORITY);
            for (name, p) in levels {
                for i in 0..PER_PRIORITY {
                    let (key, got) = queue.get_with_priority().await.unwrap();
                    assert_eq!((key.as_str(), got), (format!("{name}-{i}").as_str(), p));
                    queue.done(&key);
                }
            }
            assert!(queue.is_empty());
        }
    }
}

#[tokio::test(start_paused = true)]
async fn a_high_priority_item_made_ready_should_come_before_a_low_priority_item_ready_earlier() {
    // controller-runtime's `TestHighPriorityItemThatBecameReadyIsReturnedBeforeLowPriorityItem`.
    for queue in [strict(), PriorityQueue::default()] {
        queue.add_with_opts("foo", prio(-100));
        queue.add_with_opts("prio", prio(0).after(Duration::from_secs(1)));
        settle().await;
        advance(Duration::from_secs(1)).await;
        settle().await;
        assert_eq!(queue.get_with_priority().await, Some(("prio", 0)));
        assert_eq!(queue.get_with_priority().await, Some(("foo", -100)));
    }
}

#[tokio::test(start_paused = true)]
async fn a_parked_worker_should_get_a_delayed_item_as_soon_as_it_is_added_without_delay() {
    // controller-runtime's `TestWaitingItemIsReturnedRightAfterReadWithoutAfter`.
    let queue = strict();
    let worker = {
        let queue = queue.clone();
        tokio::spawn(async move { queue.get().await })
    };
    settle().await;
    queue.add_with_opts("foo", AddOpts::default().after(Duration::from_secs(60)));
    settle().await;
    assert!(!worker.is_finished());
    let start = Instant::now();
    queue.add("foo");
    assert_eq!(worker.await.unwrap(), Some("foo"));
    assert_eq!(start.elapsed(), Duration::ZERO);
}

#[tokio::test(start_paused = true)]
async fn a_parked_worker_should_get_delayed_items_in_ready_order() {
    // controller-runtime's `TestMultipleItemsWithAfterAreReturnedInCorrectOrder`.
    let queue = strict();
    let start = Instant::now();
    queue.add_with_opts("foo", AddOpts::default().after(Duration::from_secs(1)));
    queue.add_with_opts("bar", AddOpts::default().after(200 * MS));
    assert_eq!(queue.get().await, Some("bar"));
    assert_eq!(start.elapsed(), 200 * MS);
    assert_eq!(queue.get().await, Some("foo"));
    assert_eq!(start.elapsed(), Duration::from_secs(1));
}

/// controller-runtime's `TestFuzzPriorityQueue`: producers add random items
/// with random priorities and delays while workers take them; an item is
/// never handed out twice at once, and comes out with the highest priority
/// it was added with since it was last handed out.
async fn fuzz(queue: PriorityQueue<u32>, seed: u64) {
    use rand::{Rng, SeedableRng, rngs::StdRng};
    use std::collections::{HashMap, HashSet};
    let in_queue: Arc<tokio::sync::Mutex<HashMap<u32, i32>>> = Arc::default();
    let handed_out: Arc<parking_lot::Mutex<HashSet<u32>>> = Arc::default();
    let mut tasks = Vec::new();
    for producer in 0..10 {
        let (queue, in_queue) = (queue.clone(), in_queue.clone());
        tasks.push(tokio::spawn(async move {
            let mut rng = StdRng::seed_from_u64(seed + producer);
            for _ in 0..1000 {
                let item = rng.random_range(0..64u32);
                let priority = rng.random_range(-3..=3);
                let mut opts = prio(priority);
                if rng.random_bool(0.3) {
                    opts = opts.after(rng.random_range(0..10u32) * MS);
                }
                {
                    let mut in_queue = in_queue.lock().await;
                    queue.add_with_opts(item, opts);
                    let known = in_queue.entry(item).or_insert(priority);
                    *known = (*known).max(priority);
                }
                if rng.random_bool(0.1) {
                    tokio::task::yield_now().await;
                }
            }
        }));
    }
    for _ in 0..20 {
        let (queue, in_queue, handed_out) = (queue.clone(), in_queue.clone(), handed_out.clone());
        tasks.push(tokio::spawn(async move {
            loop {
                let item = {
                    let mut in_queue = in_queue.lock().await;
                    if in_queue.is_empty() {
                        return;
                    }
                    let (item, priority) = queue.get_with_priority().await.unwrap();
                    assert_eq!(Some(priority), in_queue.remove(&item), "priority of {item}");
                    item
                };
                assert!(handed_out.lock().insert(item), "{item} handed out twice");
                tokio::task::yield_now().await;
                handed_out.lock().remove(&item);
                queue.done(&item);
            }
        }));
    }
    for task in tasks {
        task.await.unwrap();
    }
}

#[tokio::test(start_paused = true)]
async fn concurrent_producers_and_workers_should_keep_the_priority_queue_invariants() {
    let strict = PriorityQueue::with_config(
        ItemExponentialFailureRateLimiter::new(5 * MS, Duration::from_secs(1000)),
        PriorityConfig::default().without_aging(),
    );
    fuzz(strict, 1).await;
    fuzz(PriorityQueue::default(), 2).await;
}
