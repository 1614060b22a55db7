//! The workqueue metrics of named queues, read back from the exposition text.
#![cfg(feature = "metrics")]

use std::sync::Arc;
use std::time::Duration;

use kcr_metrics::Registry;
use kcr_metrics::workqueue::{PrometheusProvider, WorkqueueMetrics};
use kcr_workqueue::{
    AddOpts, Config, PriorityQueue, Queue, RateLimitingQueue, default_controller_rate_limiter,
};

const MS: Duration = Duration::from_millis(1);

fn config(registry: &Registry, name: &str) -> Config {
    let metrics = WorkqueueMetrics::register(registry).unwrap();
    Config::default()
        .name(name)
        .metrics_provider(Arc::new(PrometheusProvider::new(metrics)))
}

fn exposition(registry: &Registry) -> String {
    kcr_metrics::encode_text(registry).unwrap()
}

fn assert_has(text: &str, line: &str) {
    assert!(
        text.lines().any(|l| l == line),
        "missing {line:?} in\n{text}"
    );
}

#[tokio::test(start_paused = true)]
async fn a_named_queue_should_expose_depth_adds_and_retries_after_a_known_sequence() {
    let registry = Registry::new();
    let queue = RateLimitingQueue::with_config(
        default_controller_rate_limiter(),
        config(&registry, "pods"),
    );
    queue.add("a");
    queue.add("b");
    queue.add("c");
    queue.add("a"); // deduplicated: not an add
    let a = queue.get().await.unwrap(); // depth 2
    queue.add_rate_limited("x"); // retry 1 (5 ms)
    queue.add_after("y", 10 * MS); // retry 2
    queue.add_after("z", Duration::ZERO); // added now, and still a retry (3)
    tokio::time::sleep(20 * MS).await; // x and y become ready: adds 6, depth 5
    queue.done(&a);
    let text = exposition(&registry);
    assert_has(
        &text,
        r#"workqueue_depth{controller="pods",name="pods",priority=""} 5"#,
    );
    assert_has(
        &text,
        r#"workqueue_adds_total{controller="pods",name="pods"} 6"#,
    );
    assert_has(
        &text,
        r#"workqueue_retries_total{controller="pods",name="pods"} 3"#,
    );
    assert_has(
        &text,
        r#"workqueue_queue_duration_seconds_count{controller="pods",name="pods"} 1"#,
    );
    assert_has(
        &text,
        r#"workqueue_work_duration_seconds_count{controller="pods",name="pods"} 1"#,
    );
    // `a` was held 20 ms: in the 0.1 s bucket, not the 0.01 s one.
    assert_has(
        &text,
        r#"workqueue_work_duration_seconds_bucket{controller="pods",name="pods",le="0.01"} 0"#,
    );
    assert_has(
        &text,
        r#"workqueue_work_duration_seconds_bucket{controller="pods",name="pods",le="0.1"} 1"#,
    );
}

fn depth_line(name: &str, depth: usize) -> String {
    format!(r#"workqueue_depth{{controller="{name}",name="{name}",priority=""}} {depth}"#)
}

#[tokio::test]
async fn the_depth_should_count_an_item_added_again_while_it_is_processed() {
    let registry = Registry::new();
    let queue = Queue::with_config(config(&registry, "redo"));
    queue.add("a");
    queue.add("b");
    assert_has(&exposition(&registry), &depth_line("redo", 2));
    let a = queue.get().await.unwrap();
    assert_has(&exposition(&registry), &depth_line("redo", 1));
    // Processing: not in the FIFO (len 1), but queued again at `done`.
    queue.add(a);
    assert_eq!(queue.len(), 1);
    assert_has(&exposition(&registry), &depth_line("redo", 2));
    queue.done(&a);
    assert_eq!(queue.len(), 2);
    assert_has(&exposition(&registry), &depth_line("redo", 2));
    let _b = queue.get().await.unwrap();
    let _a = queue.get().await.unwrap();
    assert_has(&exposition(&registry), &depth_line("redo", 0));
    // A dropped queue holds nothing; its name stays, at 0.
    queue.add("c");
    assert_has(&exposition(&registry), &depth_line("redo", 1));
    drop(queue);
    assert_has(&exposition(&registry), &depth_line("redo", 0));
}

#[tokio::test(start_paused = true)]
async fn unfinished_work_gauges_should_be_refreshed_every_500_ms() {
    let registry = Registry::new();
    let queue = Queue::with_config(config(&registry, "slow"));
    queue.add(1);
    queue.add(2);
    let _one = queue.get().await.unwrap();
    tokio::time::sleep(Duration::from_millis(500)).await;
    let _two = queue.get().await.unwrap();
    tokio::time::sleep(Duration::from_millis(1001)).await;
    // Refreshed at 1.5 s: item 1 held 1.5 s, item 2 held 1 s.
    let text = exposition(&registry);
    assert_has(
        &text,
        r#"workqueue_unfinished_work_seconds{controller="slow",name="slow"} 2.5"#,
    );
    assert_has(
        &text,
        r#"workqueue_longest_running_processor_seconds{controller="slow",name="slow"} 1.5"#,
    );
}

#[tokio::test(start_paused = true)]
async fn a_named_priority_queue_should_split_depth_by_priority() {
    let registry = Registry::new();
    let queue: PriorityQueue<&str> =
        PriorityQueue::with_config(default_controller_rate_limiter(), config(&registry, "prio"));
    queue.add_with_opts("a", AddOpts::default().priority(-100));
    queue.add_with_opts("b", AddOpts::default().priority(-100));
    queue.add_with_opts("b", AddOpts::default().priority(5)); // moves b from -100 to 5
    queue.add_with_opts("c", AddOpts::default().after(10 * MS)); // a retry; not in depth yet
    let text = exposition(&registry);
    assert_has(
        &text,
        r#"workqueue_depth{controller="prio",name="prio",priority="-100"} 1"#,
    );
    assert_has(
        &text,
        r#"workqueue_depth{controller="prio",name="prio",priority="5"} 1"#,
    );
    assert_has(
        &text,
        r#"workqueue_adds_total{controller="prio",name="prio"} 2"#,
    );
    assert_has(
        &text,
        r#"workqueue_retries_total{controller="prio",name="prio"} 1"#,
    );
    tokio::time::sleep(20 * MS).await;
    let text = exposition(&registry);
    assert_has(
        &text,
        r#"workqueue_depth{controller="prio",name="prio",priority="0"} 1"#,
    );
    assert_has(
        &text,
        r#"workqueue_adds_total{controller="prio",name="prio"} 3"#,
    );
}

#[tokio::test(start_paused = true)]
async fn a_named_queue_without_a_provider_should_record_into_the_default_registry() {
    let queue = Queue::with_config(Config::default().name("default-registry-test"));
    queue.add(1);
    let text = exposition(kcr_metrics::registry());
    assert_has(
        &text,
        r#"workqueue_adds_total{controller="default-registry-test",name="default-registry-test"} 1"#,
    );
}

#[tokio::test(start_paused = true)]
async fn an_unnamed_queue_should_record_nothing() {
    let registry = Registry::new();
    let _metrics = WorkqueueMetrics::register(&registry).unwrap();
    let queue = Queue::new();
    queue.add(1);
    assert!(!exposition(&registry).contains("workqueue_adds_total{"));
}

/// The value of the sample `name{labels}` in the exposition text.
fn sample(text: &str, series: &str) -> f64 {
    let line = text
        .lines()
        .find(|l| l.starts_with(series) && l[series.len()..].starts_with(' '))
        .unwrap_or_else(|| panic!("missing {series:?} in\n{text}"));
    line[series.len() + 1..].parse().unwrap()
}

fn close(actual: f64, expected: f64) -> bool {
    (actual - expected).abs() < 1e-9
}

#[tokio::test(start_paused = true)]
async fn adds_latency_and_work_duration_should_follow_client_go_test_metrics() {
    // client-go's `TestMetrics`: an item queued 50 µs, processed 25 µs while
    // added again five times (one add), queued again 25 µs before it is
    // handed out at `done`, then processed 1 ms.
    let registry = Registry::new();
    let queue = Queue::with_config(config(&registry, "tm"));
    let series = |metric: &str| format!(r#"{metric}{{controller="tm",name="tm"}}"#);
    queue.add("foo");
    let text = exposition(&registry);
    assert_eq!(sample(&text, &series("workqueue_adds_total")), 1.0);
    assert_has(&text, &depth_line("tm", 1));
    tokio::time::advance(Duration::from_micros(50)).await;
    let foo = queue.get().await.unwrap();
    let text = exposition(&registry);
    assert_eq!(
        sample(&text, &series("workqueue_queue_duration_seconds_count")),
        1.0
    );
    assert!(close(
        sample(&text, &series("workqueue_queue_duration_seconds_sum")),
        50e-6
    ));
    for _ in 0..5 {
        queue.add(foo);
    }
    let text = exposition(&registry);
    assert_eq!(
        sample(&text, &series("workqueue_adds_total")),
        2.0,
        "deduplicated"
    );
    assert_has(&text, &depth_line("tm", 1));
    tokio::time::advance(Duration::from_micros(25)).await;
    queue.done(&foo);
    let text = exposition(&registry);
    assert_eq!(
        sample(&text, &series("workqueue_work_duration_seconds_count")),
        1.0
    );
    assert!(close(
        sample(&text, &series("workqueue_work_duration_seconds_sum")),
        25e-6
    ));
    assert_has(&text, &depth_line("tm", 1));
    let foo = queue.get().await.unwrap();
    let text = exposition(&registry);
    // Queued since it was added again (25 µs ago), not since it was first added.
    assert_eq!(
        sample(&text, &series("workqueue_queue_duration_seconds_count")),
        2.0
    );
    assert!(close(
        sample(&text, &series("workqueue_queue_duration_seconds_sum")),
        75e-6
    ));
    tokio::time::advance(MS).await;
    queue.done(&foo);
    let text = exposition(&registry);
    assert_eq!(
        sample(&text, &series("workqueue_work_duration_seconds_count")),
        2.0
    );
    assert!(close(
        sample(&text, &series("workqueue_work_duration_seconds_sum")),
        25e-6 + 1e-3
    ));
    assert_has(&text, &depth_line("tm", 0));
}

#[tokio::test(start_paused = true)]
async fn every_delayed_or_rate_limited_add_should_count_a_retry_until_shut_down() {
    // client-go counts the retry in `AddAfter` before it looks at the delay.
    let registry = Registry::new();
    let queue = RateLimitingQueue::with_config(
        kcr_workqueue::BucketRateLimiter::new(10.0, 100).unwrap(),
        config(&registry, "retry"),
    );
    let retries = r#"workqueue_retries_total{controller="retry",name="retry"}"#;
    queue.add_after("a", Duration::ZERO);
    queue.add_rate_limited("b"); // the bucket has tokens: no delay
    assert_eq!(queue.len(), 2);
    assert_eq!(sample(&exposition(&registry), retries), 2.0);
    queue.add("c");
    assert_eq!(sample(&exposition(&registry), retries), 2.0, "a plain add");
    queue.shut_down();
    queue.add_after("d", Duration::ZERO);
    queue.add_after("e", MS);
    queue.add_rate_limited("f");
    assert_eq!(sample(&exposition(&registry), retries), 2.0, "ignored adds");
}

#[tokio::test(start_paused = true)]
async fn priority_queue_rate_limited_items_added_together_should_not_affect_each_other() {
    // controller-runtime's `TestWhenAddingMultipleItemsWithRatelimitTrue...`:
    // each item waits its own backoff, and each counts a retry and an add.
    let registry = Registry::new();
    let queue: PriorityQueue<&str> = PriorityQueue::with_config(
        kcr_workqueue::ItemExponentialFailureRateLimiter::new(5 * MS, Duration::from_secs(1000)),
        config(&registry, "pq-rl"),
    );
    for _ in 0..7 {
        queue.rate_limiter().when(&"bar");
    }
    let start = tokio::time::Instant::now();
    queue.add_all_with_opts(["foo", "bar"], AddOpts::default().rate_limited());
    assert_eq!(queue.get().await, Some("foo"));
    assert_eq!(start.elapsed(), 5 * MS);
    assert_eq!(queue.get().await, Some("bar"));
    assert_eq!(start.elapsed(), 640 * MS);
    let text = exposition(&registry);
    let series = |metric: &str| format!(r#"{metric}{{controller="pq-rl",name="pq-rl"}}"#);
    assert_eq!(sample(&text, &series("workqueue_adds_total")), 2.0);
    assert_eq!(sample(&text, &series("workqueue_retries_total")), 2.0);
    assert_has(
        &text,
        r#"workqueue_depth{controller="pq-rl",name="pq-rl",priority="0"} 0"#,
    );
}

#[tokio::test(start_paused = true)]
async fn priority_queue_depth_should_count_a_delayed_item_once_it_is_made_ready() {
    // controller-runtime: added with an `after`, then without (at a higher
    // priority), an item enters the depth once, at its final priority, and
    // leaves it when handed out.
    let registry = Registry::new();
    let queue: PriorityQueue<&str> =
        PriorityQueue::with_config(default_controller_rate_limiter(), config(&registry, "pq-d"));
    let depth =
        |p: i32| format!(r#"workqueue_depth{{controller="pq-d",name="pq-d",priority="{p}"}}"#);
    queue.add_with_opts("foo", AddOpts::default().after(Duration::from_secs(3600)));
    assert_eq!(queue.len(), 0);
    assert!(!exposition(&registry).contains("workqueue_depth{controller=\"pq-d\""));
    queue.add_with_opts("foo", AddOpts::default().priority(1));
    assert_eq!(queue.len(), 1);
    let text = exposition(&registry);
    assert_eq!(sample(&text, &depth(1)), 1.0);
    assert!(!text.contains(&depth(0)), "never counted at priority 0");
    assert_eq!(queue.get_with_priority().await, Some(("foo", 1)));
    assert_eq!(queue.len(), 0);
    assert_eq!(sample(&exposition(&registry), &depth(1)), 0.0);
    // Made ready by the timer, then added again without a delay: counted once.
    queue.add_with_opts("bar", AddOpts::default().after(50 * MS));
    tokio::time::sleep(50 * MS).await;
    for _ in 0..20 {
        tokio::task::yield_now().await; // the timer's turn
    }
    assert_eq!(queue.len(), 1);
    assert_eq!(sample(&exposition(&registry), &depth(0)), 1.0);
    queue.add("bar");
    assert_eq!(queue.len(), 1);
    assert_eq!(sample(&exposition(&registry), &depth(0)), 1.0);
    assert_eq!(queue.get().await, Some("bar"));
    assert_eq!(sample(&exposition(&registry), &depth(0)), 0.0);
}

#[tokio::test(start_paused = true)]
async fn priority_queue_adds_and_depth_should_follow_controller_runtime_scenarios() {
    let rl = || default_controller_rate_limiter();
    let depth = |name: &str, p: i32| {
        format!(r#"workqueue_depth{{controller="{name}",name="{name}",priority="{p}"}}"#)
    };
    let counter =
        |name: &str, metric: &str| format!(r#"{metric}{{controller="{name}",name="{name}"}}"#);

    // "returns an item as soon as it's unlocked": an item added again while
    // processed is a new add, and is counted in the depth at once.
    let registry = Registry::new();
    let q: PriorityQueue<&str> = PriorityQueue::with_config(rl(), config(&registry, "unlocked"));
    q.add("foo");
    assert_eq!(q.get().await, Some("foo"));
    q.add("foo");
    q.add("bar");
    assert_eq!(q.get().await, Some("bar"));
    q.add("baz");
    q.done(&"foo");
    assert_eq!(q.get().await, Some("foo"));
    let text = exposition(&registry);
    assert_eq!(sample(&text, &depth("unlocked", 0)), 1.0);
    assert_eq!(
        sample(&text, &counter("unlocked", "workqueue_adds_total")),
        4.0
    );

    // "enqueues a locked item".
    let registry = Registry::new();
    let q: PriorityQueue<&str> = PriorityQueue::with_config(rl(), config(&registry, "locked"));
    q.add("foo");
    assert_eq!(q.get_with_priority().await, Some(("foo", 0)));
    q.add("foo");
    assert_eq!(q.len(), 1);
    q.done(&"foo");
    assert_eq!(q.get_with_priority().await, Some(("foo", 0)));
    let text = exposition(&registry);
    assert_eq!(sample(&text, &depth("locked", 0)), 0.0);
    assert_eq!(
        sample(&text, &counter("locked", "workqueue_adds_total")),
        2.0
    );

    // "gets pushed to the front if the priority increases": the depth moves
    // from the old priority to the new one.
    let registry = Registry::new();
    let q: PriorityQueue<&str> = PriorityQueue::with_config(rl(), config(&registry, "raised"));
    q.add("foo");
    q.add("bar");
    q.add("baz");
    q.add_with_opts("baz", AddOpts::default().priority(1));
    assert_eq!(q.get_with_priority().await, Some(("baz", 1)));
    assert_eq!(q.len(), 2);
    let text = exposition(&registry);
    assert_eq!(sample(&text, &depth("raised", 0)), 2.0);
    assert_eq!(sample(&text, &depth("raised", 1)), 0.0);
    assert_eq!(
        sample(&text, &counter("raised", "workqueue_adds_total")),
        3.0
    );

    // "retains the lowest after duration": a ready item stays ready; the
    // delayed add still counts a retry.
    let registry = Registry::new();
    let q: PriorityQueue<&str> = PriorityQueue::with_config(rl(), config(&registry, "lowest"));
    q.add_with_opts("foo", AddOpts::default().after(Duration::ZERO));
    q.add_with_opts("foo", AddOpts::default().after(Duration::from_secs(3600)));
    assert_eq!(q.get_with_priority().await, Some(("foo", 0)));
    assert_eq!(q.len(), 0);
    let text = exposition(&registry);
    assert_eq!(sample(&text, &depth("lowest", 0)), 0.0);
    assert_eq!(
        sample(&text, &counter("lowest", "workqueue_adds_total")),
        1.0
    );
    assert_eq!(
        sample(&text, &counter("lowest", "workqueue_retries_total")),
        1.0
    );
}

#[tokio::test(start_paused = true)]
async fn unfinished_work_gauges_should_not_be_refreshed_after_shut_down() {
    // client-go's `TestMetricShutdown`: the updater stops at shut down.
    let registry = Registry::new();
    let queue = Queue::with_config(config(&registry, "stopped"));
    let unfinished = r#"workqueue_unfinished_work_seconds{controller="stopped",name="stopped"}"#;
    queue.add(1);
    let _one = queue.get().await.unwrap();
    tokio::time::sleep(Duration::from_millis(501)).await;
    assert_eq!(sample(&exposition(&registry), unfinished), 0.5);
    queue.shut_down();
    tokio::time::sleep(Duration::from_secs(60)).await;
    assert_eq!(sample(&exposition(&registry), unfinished), 0.5);
}

#[tokio::test(start_paused = true)]
async fn priority_queue_latency_should_start_when_an_item_becomes_ready() {
    // controller-runtime records an item's add time when it becomes ready,
    // not when it was added with a delay.
    let registry = Registry::new();
    let queue: PriorityQueue<&str> =
        PriorityQueue::with_config(default_controller_rate_limiter(), config(&registry, "pq-l"));
    let series = |metric: &str| format!(r#"{metric}{{controller="pq-l",name="pq-l"}}"#);
    queue.add_with_opts("foo", AddOpts::default().after(100 * MS));
    tokio::time::sleep(100 * MS).await;
    for _ in 0..20 {
        tokio::task::yield_now().await; // the timer's turn
    }
    assert_eq!(queue.len(), 1);
    tokio::time::advance(30 * MS).await;
    assert_eq!(queue.get().await, Some("foo"));
    tokio::time::advance(7 * MS).await;
    queue.done(&"foo");
    let text = exposition(&registry);
    assert_eq!(
        sample(&text, &series("workqueue_queue_duration_seconds_count")),
        1.0
    );
    assert!(close(
        sample(&text, &series("workqueue_queue_duration_seconds_sum")),
        0.03
    ));
    assert_eq!(
        sample(&text, &series("workqueue_work_duration_seconds_count")),
        1.0
    );
    assert!(close(
        sample(&text, &series("workqueue_work_duration_seconds_sum")),
        0.007
    ));
}
