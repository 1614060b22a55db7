//! A rate-limited work queue retrying an item that fails, printing each delay.
//!
//! ```text
//! cargo run --example workqueue
//! ```
//!
//! The worker's "reconcile" of `default/flaky-pod` fails 8 times, then
//! succeeds. Each failure goes back to the queue with `add_rate_limited`:
//! the default controller rate limiter waits 5 ms, then twice as long after
//! every failure (capped at 1000 s), and the queue hands the item out again
//! when the delay is over. On success, `forget` resets its backoff.

use std::time::Duration;

use kcr_workqueue::{Config, RateLimiter, RateLimitingQueue, default_controller_rate_limiter};
use tokio::time::Instant;

const FAILURES: usize = 8;

/// Prints every delay the wrapped rate limiter gives.
struct PrintDelays<R>(R);

impl<T, R: RateLimiter<T>> RateLimiter<T> for PrintDelays<R> {
    fn when(&self, item: &T) -> Duration {
        let delay = self.0.when(item);
        println!("  failed; the rate limiter says: retry in {}", ms(delay));
        delay
    }
    fn forget(&self, item: &T) {
        self.0.forget(item);
    }
    fn num_requeues(&self, item: &T) -> usize {
        self.0.num_requeues(item)
    }
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let queue = RateLimitingQueue::with_config(
        PrintDelays(default_controller_rate_limiter()),
        Config::default().name("example"),
    );
    queue.add("default/flaky-pod".to_string());

    let mut attempts = 0;
    let mut requeued_at: Option<Instant> = None;
    while let Some(key) = queue.get().await {
        attempts += 1;
        let waited = requeued_at.map(|at| at.elapsed());
        match waited {
            Some(waited) => println!(
                "attempt {attempts} of {key}, handed out again after {}",
                ms(waited)
            ),
            None => println!("attempt {attempts} of {key}"),
        }
        if attempts <= FAILURES {
            queue.add_rate_limited(key.clone());
            requeued_at = Some(Instant::now());
        } else {
            println!(
                "  succeeded after {} retries; forgetting it",
                queue.num_requeues(&key)
            );
            queue.forget(&key);
            queue.shut_down();
        }
        queue.done(&key);
    }

    let metrics = kcr_metrics::encode_text(kcr_metrics::registry())?;
    println!("\nmetrics of the queue:");
    for line in metrics.lines().filter(|l| {
        l.starts_with("workqueue_adds_total") || l.starts_with("workqueue_retries_total")
    }) {
        println!("  {line}");
    }
    Ok(())
}

fn ms(d: Duration) -> String {
    format!("{:.1} ms", d.as_secs_f64() * 1e3)
}
