//! The rules of `DelayingQueue` (client-go's `delaying_queue_test.go`, rewritten).

use std::time::Duration;

use kcr_workqueue::{Config, DelayingConfig, DelayingQueue};
use rand::{Rng, SeedableRng, rngs::StdRng};
use tokio::time::{Instant, advance, timeout};

const MS: Duration = Duration::from_millis(1);

/// Lets the timer task run after the clock moved.
async fn settle() {
    for _ in 0..20 {
        tokio::task::yield_now().await;
    }
}

#[tokio::test(start_paused = true)]
async fn a_zero_delay_should_add_now() {
    let queue = DelayingQueue::new();
    queue.add_after("a", Duration::ZERO);
    assert_eq!(queue.len(), 1);
}

#[tokio::test(start_paused = true)]
async fn an_item_should_wait_for_its_delay() {
    let queue = DelayingQueue::new();
    queue.add_after("a", 50 * MS);
    settle().await;
    assert_eq!(queue.len(), 0);
    advance(49 * MS).await;
    settle().await;
    assert_eq!(queue.len(), 0, "not ready before its delay");
    advance(MS).await;
    settle().await;
    assert_eq!(queue.len(), 1);
}

#[tokio::test(start_paused = true)]
async fn get_should_wait_for_a_delayed_item_and_hand_it_out_on_time() {
    let queue = DelayingQueue::new();
    let start = Instant::now();
    queue.add_after("a", 30 * MS);
    assert_eq!(queue.get().await, Some("a"));
    assert_eq!(start.elapsed(), 30 * MS);
}

#[tokio::test(start_paused = true)]
async fn an_item_waiting_twice_should_keep_the_earlier_ready_time() {
    let queue = DelayingQueue::new();
    let start = Instant::now();
    queue.add_after("later-first", 50 * MS);
    queue.add_after("later-first", 10 * MS);
    queue.add_after("sooner-first", 10 * MS);
    queue.add_after("sooner-first", 50 * MS);
    assert_eq!(queue.get().await, Some("later-first"));
    assert_eq!(queue.get().await, Some("sooner-first"));
    assert_eq!(start.elapsed(), 10 * MS);
    queue.done(&"later-first");
    queue.done(&"sooner-first");
    // The superseded ready time (50 ms) adds nothing more.
    assert!(timeout(Duration::from_secs(1), queue.get()).await.is_err());
}

#[tokio::test(start_paused = true)]
async fn ready_items_should_enter_the_queue_in_ready_time_order() {
    let queue = DelayingQueue::new();
    queue.add_after("c", 30 * MS);
    queue.add_after("a", 10 * MS);
    queue.add_after("b", 20 * MS);
    queue.add_after("d", 30 * MS);
    // All of them are due by the time the timer runs.
    advance(40 * MS).await;
    settle().await;
    assert_eq!(queue.len(), 4);
    for expected in ["a", "b", "c", "d"] {
        assert_eq!(queue.get().await, Some(expected));
    }
}

#[tokio::test(start_paused = true)]
async fn a_delayed_item_already_queued_should_not_be_queued_twice() {
    let queue = DelayingQueue::new();
    queue.add("a");
    queue.add_after("a", 10 * MS);
    advance(20 * MS).await;
    settle().await;
    assert_eq!(queue.len(), 1);
}

#[tokio::test(start_paused = true)]
async fn shut_down_should_drop_the_waiting_items() {
    let queue = DelayingQueue::new();
    queue.add("now");
    queue.add_after("later", 10 * MS);
    queue.shut_down();
    advance(20 * MS).await;
    settle().await;
    assert_eq!(queue.get().await, Some("now"));
    assert_eq!(queue.get().await, None);
    queue.add_after("after-shut-down", Duration::ZERO);
    assert_eq!(queue.len(), 0);
}

#[tokio::test(start_paused = true)]
async fn many_delayed_items_should_each_be_handed_out_at_its_ready_time_in_order() {
    let queue = DelayingQueue::new();
    let mut rng = StdRng::seed_from_u64(2);
    let start = Instant::now();
    let mut expected: Vec<(Duration, u32)> = (0..10_000)
        .map(|i| {
            let delay = Duration::from_millis(rng.random_range(0..50));
            queue.add_after(i, delay);
            (delay, i)
        })
        .collect();
    expected.sort();
    for (delay, item) in expected {
        assert_eq!(queue.get().await, Some(item));
        assert_eq!(start.elapsed(), delay, "item {item} neither early nor late");
    }
}

#[test]
fn a_queue_built_outside_a_runtime_should_start_its_timer_inside_one() {
    let queue = DelayingQueue::new();
    queue.add_after("a", 5 * MS);
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .start_paused(true)
        .build()
        .unwrap();
    runtime.block_on(async {
        assert_eq!(queue.get().await, Some("a"));
    });
}

#[tokio::test(start_paused = true)]
async fn dropping_every_handle_should_end_the_timer_task() {
    let queue = DelayingQueue::new();
    queue.add_after(1, Duration::from_secs(3600));
    let tasks = tokio::runtime::Handle::current()
        .metrics()
        .num_alive_tasks();
    assert_eq!(tasks, 1, "one timer task");
    drop(queue);
    settle().await;
    let tasks = tokio::runtime::Handle::current()
        .metrics()
        .num_alive_tasks();
    assert_eq!(tasks, 0);
}

#[tokio::test(start_paused = true)]
async fn add_after_should_never_block_its_caller_even_while_the_timer_cannot_run() {
    let queue = DelayingQueue::new();
    // 200,000 delayed adds without a single await: the timer task cannot run
    // meanwhile (client-go's producers would block on its 1000-slot channel).
    for i in 0..200_000u32 {
        queue.add_after(i, Duration::from_millis(u64::from(i % 50) + 1));
    }
    let mut got = 0;
    while got < 200_000 {
        let item = queue.get().await.unwrap();
        queue.done(&item);
        got += 1;
    }
    assert_eq!(queue.len(), 0);
}

#[tokio::test(start_paused = true)]
async fn a_delayed_add_should_still_fire_after_the_item_was_added_and_processed() {
    // client-go: `add` does not cancel a waiting `add_after`; once the item
    // is done, the delayed add queues it again when it is due.
    let queue = DelayingQueue::new();
    queue.add_after("a", 10 * MS);
    queue.add("a");
    let a = queue.get().await.unwrap();
    queue.done(&a);
    assert_eq!(queue.len(), 0);
    advance(10 * MS).await;
    settle().await;
    assert_eq!(queue.len(), 1, "the delayed add fired");
    assert_eq!(queue.get().await, Some("a"));
}

#[tokio::test(start_paused = true)]
async fn delayed_items_should_become_ready_in_ready_time_order_whatever_the_add_order() {
    // client-go's `TestAddTwoFireEarly` and `TestCopyShifting`.
    let queue = DelayingQueue::new();
    queue.add_after("foo", Duration::from_secs(1));
    queue.add_after("bar", 50 * MS);
    settle().await;
    assert_eq!(queue.len(), 0);
    advance(60 * MS).await;
    settle().await;
    assert_eq!(queue.len(), 1);
    assert_eq!(queue.get().await, Some("bar"));
    queue.add_after("baz", Duration::from_secs(2));
    advance(Duration::from_secs(1)).await;
    settle().await;
    assert_eq!(queue.len(), 1);
    assert_eq!(queue.get().await, Some("foo"));
    advance(Duration::from_secs(2)).await;
    settle().await;
    assert_eq!(queue.len(), 1);
    assert_eq!(queue.get().await, Some("baz"));

    let queue = DelayingQueue::new();
    queue.add_after("foo", Duration::from_secs(1));
    queue.add_after("bar", 500 * MS);
    queue.add_after("baz", 250 * MS);
    settle().await;
    assert_eq!(queue.len(), 0);
    advance(Duration::from_secs(2)).await;
    settle().await;
    assert_eq!(queue.len(), 3);
    for expected in ["baz", "bar", "foo"] {
        assert_eq!(queue.get().await, Some(expected));
    }
}

/// The queue's two timers: the default (Tokio's wheel, then the timer
/// thread within 2 ms of a ready time) and Tokio's wheel alone.
fn both_timers<T: kcr_workqueue::Item>() -> [DelayingQueue<T>; 2] {
    [
        DelayingQueue::with_config(Config::default()),
        DelayingQueue::with_config(DelayingConfig::default().timer_resolution(MS)),
    ]
}

#[tokio::test(start_paused = true)]
async fn an_item_should_come_at_its_ready_time_whichever_timer_wakes_the_queue() {
    for queue in both_timers() {
        let start = Instant::now();
        queue.add_after("a", 50 * MS);
        // The default timer sleeps on the wheel until 2 ms before, then also
        // asks the timer thread (which a paused clock does not drive).
        advance(48 * MS).await;
        settle().await;
        assert_eq!(queue.len(), 0, "not at the horizon");
        advance(2 * MS - Duration::from_micros(1)).await;
        settle().await;
        assert_eq!(queue.len(), 0, "not a microsecond early");
        advance(Duration::from_micros(1)).await;
        settle().await;
        assert_eq!(queue.len(), 1);
        assert_eq!(start.elapsed(), 50 * MS);
        queue.shut_down();
    }
}

#[tokio::test(start_paused = true)]
async fn sub_millisecond_ready_times_should_come_in_order_and_never_early() {
    for queue in both_timers() {
        let mut rng = StdRng::seed_from_u64(3);
        let start = Instant::now();
        let mut expected: Vec<(Duration, u32)> = (0..2_000)
            .map(|i| {
                let delay = Duration::from_micros(rng.random_range(1..20_000));
                queue.add_after(i, delay);
                (delay, i)
            })
            .collect();
        expected.sort();
        for (delay, item) in expected {
            assert_eq!(queue.get().await, Some(item));
            let at = start.elapsed();
            // A paused clock moves only to Tokio's millisecond ticks.
            assert!(
                at >= delay && at < delay + MS,
                "item {item} due at {delay:?} came at {at:?}"
            );
        }
        queue.shut_down();
    }
}

#[tokio::test(start_paused = true)]
async fn a_sooner_add_should_wake_a_timer_waiting_within_its_horizon() {
    let queue = DelayingQueue::new();
    let start = Instant::now();
    queue.add_after("later", Duration::from_micros(11_500));
    advance(10 * MS).await;
    settle().await;
    // The timer now waits for "later" within its precise horizon.
    queue.add_after("sooner", Duration::from_micros(300));
    assert_eq!(queue.get().await, Some("sooner"));
    // A paused clock moves to Tokio's millisecond ticks.
    assert_eq!(start.elapsed(), 11 * MS);
    assert_eq!(queue.get().await, Some("later"));
    assert_eq!(start.elapsed(), 12 * MS);
}
