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
    queue.add_after("z", Duration::ZERO); // no delay: an add, not a retry
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
        r#"workqueue_retries_total{controller="pods",name="pods"} 2"#,
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
