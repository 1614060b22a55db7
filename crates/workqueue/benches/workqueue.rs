//! kcr-workqueue benchmarks (`cargo bench -p kcr-workqueue`).
//!
//! Items are string keys as `Arc<str>` (a clone is one atomic increment),
//! 10,000 distinct unless said otherwise. Besides criterion's time per
//! iteration, the multi-task benches print their own medians: items processed
//! per second, and for `add_after` the total time and the mean lateness
//! (measured here with `tokio::time::Instant`).

use std::hint::black_box;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering::Relaxed};
use std::time::Duration;

use criterion::{Criterion, Throughput, criterion_group};
use kcr_metrics::Registry;
use kcr_metrics::workqueue::{PrometheusProvider, WorkqueueMetrics};
use kcr_workqueue::{
    AddOpts, Config, DEFAULT_TIMER_RESOLUTION, DelayingConfig, DelayingQueue, PriorityQueue, Queue,
    RateLimitingQueue, default_controller_rate_limiter,
};
use parking_lot::Mutex;
use rand::{Rng, SeedableRng, rngs::StdRng};
use tokio::time::Instant;

const KEYS: usize = 10_000;

fn keys(n: usize) -> Vec<Arc<str>> {
    (0..n)
        .map(|i| Arc::from(format!("namespace-{}/object-{i:06}", i % 16)))
        .collect()
}

/// A named queue recording into a registry of its own, or an unnamed one.
fn config(metrics: bool, name: &str) -> Config {
    if metrics {
        let registry = Registry::new();
        let families = WorkqueueMetrics::register(&registry).expect("fresh registry");
        Config::default()
            .name(name)
            .metrics_provider(Arc::new(PrometheusProvider::new(families)))
    } else {
        Config::default()
    }
}

fn median(values: &mut [f64]) -> f64 {
    values.sort_by(f64::total_cmp);
    values.get(values.len() / 2).copied().unwrap_or(f64::NAN)
}

fn one_thread() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime")
}

fn two_threads() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime")
}

/// The CPU time this thread has run (Linux `/proc/thread-self/schedstat`):
/// on a loaded machine, wall time also counts the time other processes ran.
fn thread_cpu_time() -> Option<Duration> {
    let stat = std::fs::read_to_string("/proc/thread-self/schedstat").ok()?;
    let nanos: u64 = stat.split_whitespace().next()?.parse().ok()?;
    Some(Duration::from_nanos(nanos))
}

/// One task doing add → get → done: the data structure alone.
fn single_task(c: &mut Criterion) {
    let keys = keys(KEYS);
    let rt = one_thread();
    let mut group = c.benchmark_group("add_get_done_single_task");
    group.throughput(Throughput::Elements(1));
    for metrics in [false, true] {
        let label = if metrics { "metrics_on" } else { "metrics_off" };
        let cpu_rates = Mutex::new(Vec::new());
        group.bench_function(label, |b| {
            let queue: Queue<Arc<str>> =
                rt.block_on(async { Queue::with_config(config(metrics, "bench_single")) });
            b.iter_custom(|iters| {
                rt.block_on(async {
                    let cpu = thread_cpu_time();
                    let start = Instant::now();
                    for i in 0..iters as usize {
                        queue.add(keys[i % KEYS].clone());
                        let item = queue.get().await.expect("queued");
                        queue.done(black_box(&item));
                    }
                    let elapsed = start.elapsed();
                    if let (Some(before), Some(after)) = (cpu, thread_cpu_time()) {
                        let spent = (after - before).as_secs_f64();
                        if spent > 0.0 {
                            cpu_rates.lock().push(iters as f64 / spent);
                        }
                    }
                    elapsed
                })
            });
        });
        let rate = median(&mut cpu_rates.lock());
        println!(
            "add_get_done_single_task/{label}: median {:.2} M cycles per CPU-second",
            rate / 1e6
        );
    }
    group.finish();
}

/// One task draining a backlog: 10,000 keys added, then get → done for each.
/// The worker's cost when it has fallen behind, without a producer beside it
/// (compare with `producer_workers`, where the same work runs against a
/// producer on the other core).
fn backlog(c: &mut Criterion) {
    let keys = keys(KEYS);
    let rt = one_thread();
    let mut group = c.benchmark_group("backlog_10k_single_task");
    group.throughput(Throughput::Elements(KEYS as u64));
    for metrics in [false, true] {
        let label = if metrics { "metrics_on" } else { "metrics_off" };
        group.bench_function(label, |b| {
            let queue: Queue<Arc<str>> =
                rt.block_on(async { Queue::with_config(config(metrics, "bench_backlog")) });
            b.iter_custom(|iters| {
                rt.block_on(async {
                    let mut total = Duration::ZERO;
                    for _ in 0..iters {
                        for key in &keys {
                            queue.add(key.clone());
                        }
                        let start = Instant::now();
                        for _ in 0..KEYS {
                            let item = queue.get().await.expect("queued");
                            queue.done(black_box(&item));
                        }
                        total += start.elapsed();
                    }
                    total
                })
            });
        });
    }
    group.finish();
}

/// What a producer loop on Tokio must do: give the scheduler a chance every
/// so often (here when the task's budget of 128 operations is spent, so about
/// every 128 adds; a real producer awaits its event source anyway).
///
/// A task that never yields starves the tasks it wakes: Tokio puts a task
/// woken from a worker thread in that thread's LIFO slot, which other threads
/// cannot steal, so a parked worker (or the delaying queue's timer) woken by
/// an `add` would wait until the producer finished all its adds. Go's
/// scheduler preempts and lets idle threads steal; this is the Tokio
/// equivalent of the loop client-go's figures were measured with.
async fn cooperate() {
    tokio::task::coop::consume_budget().await;
}

/// One task doing add_with_opts → get → done on a priority queue, items in
/// four priorities (the depth gauge has a label set per priority).
fn priority_single_task(c: &mut Criterion) {
    let keys = keys(KEYS);
    let rt = one_thread();
    let mut group = c.benchmark_group("priority_add_get_done_single_task");
    group.throughput(Throughput::Elements(1));
    for metrics in [false, true] {
        let label = if metrics { "metrics_on" } else { "metrics_off" };
        group.bench_function(label, |b| {
            let queue: PriorityQueue<Arc<str>> = rt.block_on(async {
                PriorityQueue::with_config(
                    default_controller_rate_limiter(),
                    config(metrics, "bench_priority"),
                )
            });
            b.iter_custom(|iters| {
                rt.block_on(async {
                    let start = Instant::now();
                    for i in 0..iters as usize {
                        let opts = AddOpts::default().priority((i % 4) as i32 * 10 - 10);
                        queue.add_with_opts(keys[i % KEYS].clone(), opts);
                        let item = queue.get().await.expect("queued");
                        queue.done(black_box(&item));
                    }
                    start.elapsed()
                })
            });
        });
    }
    group.finish();
}

/// One producer adding `adds` keys (cycling over 10,000) as fast as it can;
/// `workers` workers doing get → done until the queue is shut down and empty.
/// Returns (items processed, elapsed).
async fn produce_and_process(
    queue: Queue<Arc<str>>,
    keys: Arc<Vec<Arc<str>>>,
    adds: usize,
    workers: usize,
) -> (usize, Duration) {
    let start = Instant::now();
    let handles: Vec<_> = (0..workers)
        .map(|_| {
            let queue = queue.clone();
            tokio::spawn(async move {
                let mut processed = 0usize;
                while let Some(item) = queue.get().await {
                    queue.done(&item);
                    processed += 1;
                }
                processed
            })
        })
        .collect();
    let producer = {
        let queue = queue.clone();
        tokio::spawn(async move {
            for i in 0..adds {
                queue.add(keys[i % KEYS].clone());
                // See `cooperate`.
                cooperate().await;
            }
            queue.shut_down();
        })
    };
    producer.await.expect("producer");
    let mut processed = 0;
    for handle in handles {
        processed += handle.await.expect("worker");
    }
    (processed, start.elapsed())
}

fn producer_workers(c: &mut Criterion) {
    const ADDS: usize = 200_000;
    let keys = Arc::new(keys(KEYS));
    let rt = two_threads();
    let mut group = c.benchmark_group("producer_workers");
    group.throughput(Throughput::Elements(ADDS as u64));
    for workers in [1, 4] {
        for metrics in [false, true] {
            let label = format!(
                "{workers}_workers/{}",
                if metrics { "metrics_on" } else { "metrics_off" }
            );
            let rates = Mutex::new(Vec::new());
            group.bench_function(&label, |b| {
                b.iter_custom(|iters| {
                    let mut total = Duration::ZERO;
                    for _ in 0..iters {
                        let (processed, elapsed) = rt.block_on(async {
                            let queue = Queue::with_config(config(metrics, "bench_workers"));
                            produce_and_process(queue, keys.clone(), ADDS, workers).await
                        });
                        rates.lock().push(processed as f64 / elapsed.as_secs_f64());
                        total += elapsed;
                    }
                    total
                });
            });
            let mut rates = rates.lock();
            let rate = median(&mut rates);
            // The runs are bimodal (see docs/performance.md):
            // the spread shows which regimes a run met.
            let (low, high) = (rates.first().copied(), rates.last().copied());
            println!(
                "producer_workers/{label}: median {:.2} M items processed/s (runs {:.2}-{:.2})",
                rate / 1e6,
                low.unwrap_or(f64::NAN) / 1e6,
                high.unwrap_or(f64::NAN) / 1e6,
            );
        }
    }
    group.finish();
}

/// An item of the delayed bench: a string key, and its index for the
/// bench's own bookkeeping.
#[derive(Clone, PartialEq, Eq, Hash)]
struct Delayed {
    key: Arc<str>,
    id: u32,
}

/// What delays the items of [`delayed_run`].
#[derive(Clone, Copy)]
enum Timer {
    /// `DelayingQueue::add_after` with this timer resolution (1 ms: Tokio's
    /// timer wheel alone, the queue's timer before it had a timer thread).
    Kcr { resolution: Duration },
    /// The baseline of Tokio's wheel itself: one task per item does
    /// `tokio::time::sleep_until(ready)` then `Queue::add`.
    SleepUntil,
}

impl Timer {
    fn label(self) -> String {
        match self {
            Timer::Kcr { resolution } if resolution == DEFAULT_TIMER_RESOLUTION => {
                format!("kcr default ({} µs)", resolution.as_micros())
            }
            Timer::Kcr { resolution } if resolution >= Duration::from_millis(1) => {
                "kcr, Tokio's wheel alone (1 ms)".to_owned()
            }
            Timer::Kcr { resolution } => format!("kcr {} µs", resolution.as_micros()),
            Timer::SleepUntil => "tokio::time::sleep_until per item".to_owned(),
        }
    }
}

/// The CPU time of every thread of this process and of kcr-workqueue's
/// timer thread alone (Linux `/proc/self/task/*/schedstat` and `comm`).
fn process_cpu_time() -> Option<(Duration, Duration)> {
    let (mut all, mut timer) = (0u64, 0u64);
    for task in std::fs::read_dir("/proc/self/task").ok()?.flatten() {
        let stat = std::fs::read_to_string(task.path().join("schedstat")).ok()?;
        let nanos = stat.split_whitespace().next()?.parse::<u64>().ok()?;
        all += nanos;
        let name = std::fs::read_to_string(task.path().join("comm")).unwrap_or_default();
        if name.starts_with("kcr-workqueue") {
            timer += nanos;
        }
    }
    Some((Duration::from_nanos(all), Duration::from_nanos(timer)))
}

/// One run of [`delayed_run`].
struct DelayedRun {
    /// From the first add to the last item handed out.
    total: Duration,
    /// Mean lateness of an item behind its ready time.
    lateness: Duration,
    /// CPU time of the whole process during the run, and of kcr-workqueue's
    /// timer thread alone.
    cpu: Option<(Duration, Duration)>,
}

/// `add_after` of 200,000 distinct items with delays uniform in [0, 50 ms],
/// drained by 2 workers; `pace` adds per millisecond, or as fast as one
/// producer can.
async fn delayed_run(
    items: Arc<Vec<Delayed>>,
    delays: Arc<Vec<Duration>>,
    pace: Option<usize>,
    timer: Timer,
) -> DelayedRun {
    let delaying: DelayingQueue<Delayed> = DelayingQueue::with_config(match timer {
        Timer::Kcr { resolution } => DelayingConfig::default().timer_resolution(resolution),
        Timer::SleepUntil => DelayingConfig::default(),
    });
    // The queue the workers read: the delaying queue itself, or a plain one
    // the per-item tasks add to.
    let queue: Queue<Delayed> = match timer {
        Timer::Kcr { .. } => (*delaying).clone(),
        Timer::SleepUntil => Queue::new(),
    };
    let n = items.len();
    let cpu_before = process_cpu_time();
    let start = Instant::now();
    // Intended ready times (ns after `start`), written before each add.
    let ready: Arc<Vec<AtomicU64>> = Arc::new((0..n).map(|_| AtomicU64::new(0)).collect());
    let delivered = Arc::new(AtomicUsize::new(0));
    let all_delivered = Arc::new(tokio::sync::Notify::new());
    let workers: Vec<_> = (0..2)
        .map(|_| {
            let (queue, ready) = (queue.clone(), ready.clone());
            let (delivered, all_delivered) = (delivered.clone(), all_delivered.clone());
            tokio::spawn(async move {
                let mut late = Duration::ZERO;
                let mut last = start;
                while let Some(item) = queue.get().await {
                    let now = Instant::now();
                    let at = start + Duration::from_nanos(ready[item.id as usize].load(Relaxed));
                    late += now.saturating_duration_since(at);
                    last = now;
                    queue.done(&item);
                    if delivered.fetch_add(1, Relaxed) + 1 == n {
                        all_delivered.notify_one();
                    }
                }
                (late, last)
            })
        })
        .collect();
    let producer = {
        let (delaying, queue, ready) = (delaying.clone(), queue.clone(), ready.clone());
        tokio::spawn(async move {
            let mut next_tick = Instant::now();
            for (i, item) in items.iter().enumerate() {
                if let Some(per_ms) = pace
                    && i > 0
                    && i % per_ms == 0
                {
                    next_tick += Duration::from_millis(1);
                    tokio::time::sleep_until(next_tick).await;
                }
                let now = Instant::now();
                let at = now + delays[i] - start;
                ready[i].store(at.as_nanos() as u64, Relaxed);
                match timer {
                    Timer::Kcr { .. } => delaying.add_after(item.clone(), delays[i]),
                    Timer::SleepUntil => {
                        let (queue, item, ready_at) =
                            (queue.clone(), item.clone(), now + delays[i]);
                        tokio::spawn(async move {
                            tokio::time::sleep_until(ready_at).await;
                            queue.add(item);
                        });
                    }
                }
                cooperate().await;
            }
        })
    };
    producer.await.expect("producer");
    all_delivered.notified().await;
    queue.shut_down();
    delaying.shut_down();
    let (mut late, mut last) = (Duration::ZERO, start);
    for worker in workers {
        let (l, t) = worker.await.expect("worker");
        late += l;
        last = last.max(t);
    }
    let cpu = cpu_before.zip(process_cpu_time()).map(|(before, after)| {
        (
            after.0.saturating_sub(before.0),
            after.1.saturating_sub(before.1),
        )
    });
    assert_eq!(
        delivered.load(Relaxed),
        n,
        "every delayed item is handed out once"
    );
    DelayedRun {
        total: last - start,
        lateness: late / n as u32,
        cpu,
    }
}

/// Where cargo puts its output: three levels above this binary
/// (`<target>/release/deps/workqueue-<hash>`); `cargo xtask bench` prints
/// the tables benches leave there.
fn target_dir() -> Option<std::path::PathBuf> {
    std::env::current_exe()
        .ok()?
        .ancestors()
        .nth(3)
        .map(std::path::PathBuf::from)
}

/// `add_after` of 200,000 items, unpaced and paced at 100,000/s, for the
/// queue's default timer resolution beside Tokio's wheel alone (the queue
/// before its timer thread), a per-item `tokio::time::sleep_until` and
/// other resolutions. Not a criterion bench: the variants run in turn in
/// each round (`KCR_BENCH_ROUNDS`, 7 by default), so a machine whose load
/// changes meets them alike; the table of medians is printed and written to
/// `<target>/kcr-add-after.md` for `cargo xtask bench`. The CPU column is
/// the whole process's (workers, timer task, timer thread).
fn add_after() {
    const N: usize = 200_000;
    // As criterion does: a filter argument that does not name this bench skips it.
    let filter = std::env::args().skip(1).find(|a| !a.starts_with('-'));
    if filter.is_some_and(|f| !"add_after_200k".contains(&f) && !f.contains("add_after_200k")) {
        return;
    }
    // `cargo bench` passes `--bench`; without it (`cargo test --benches`)
    // one round checks that the bench runs.
    let rounds: usize = if std::env::args().any(|a| a == "--bench") {
        std::env::var("KCR_BENCH_ROUNDS")
            .ok()
            .and_then(|r| r.parse().ok())
            .unwrap_or(7)
    } else {
        1
    };
    let mut rng = StdRng::seed_from_u64(7);
    let names = keys(N);
    let items: Arc<Vec<Delayed>> = Arc::new(
        names
            .into_iter()
            .enumerate()
            .map(|(id, key)| Delayed { key, id: id as u32 })
            .collect(),
    );
    let delays: Arc<Vec<Duration>> = Arc::new(
        (0..N)
            .map(|_| Duration::from_nanos(rng.random_range(0..=50_000_000)))
            .collect(),
    );
    let rt = two_threads();
    let wheel = Timer::Kcr {
        resolution: Duration::from_millis(1),
    };
    let default = Timer::Kcr {
        resolution: DEFAULT_TIMER_RESOLUTION,
    };
    let us = |n| Timer::Kcr {
        resolution: Duration::from_micros(n),
    };
    let variants = [
        ("unpaced", None, default),
        ("unpaced", None, wheel),
        ("paced_100k_per_s", Some(100), default),
        ("paced_100k_per_s", Some(100), wheel),
        ("paced_100k_per_s", Some(100), Timer::SleepUntil),
        ("paced_100k_per_s", Some(100), us(100)),
        ("paced_100k_per_s", Some(100), us(400)),
    ];
    let mut runs: Vec<Vec<DelayedRun>> = variants.iter().map(|_| Vec::new()).collect();
    for round in 0..rounds {
        for ((pacing, pace, timer), runs) in variants.iter().zip(runs.iter_mut()) {
            let run = rt.block_on(delayed_run(items.clone(), delays.clone(), *pace, *timer));
            eprintln!(
                "add_after_200k round {} {pacing} {}: total {:.3} s, mean lateness {:.3} ms, cpu {:.3} s (timer thread {:.3} s)",
                round + 1,
                timer.label(),
                run.total.as_secs_f64(),
                run.lateness.as_secs_f64() * 1e3,
                run.cpu.map_or(f64::NAN, |c| c.0.as_secs_f64()),
                run.cpu.map_or(f64::NAN, |c| c.1.as_secs_f64()),
            );
            runs.push(run);
        }
    }
    let mut table = format!(
        "| `add_after_200k`: 200,000 items, delays U[0, 50 ms], 2 workers, medians of {rounds} rounds | total | mean lateness | process CPU (of which the timer thread) |\n| --- | ---: | ---: | ---: |\n",
    );
    for ((pacing, _, timer), runs) in variants.iter().zip(&runs) {
        let mut totals: Vec<f64> = runs.iter().map(|r| r.total.as_secs_f64()).collect();
        let mut lateness: Vec<f64> = runs.iter().map(|r| r.lateness.as_secs_f64()).collect();
        let mut cpu: Vec<f64> = runs
            .iter()
            .filter_map(|r| r.cpu.map(|c| c.0.as_secs_f64()))
            .collect();
        let mut timer_cpu: Vec<f64> = runs
            .iter()
            .filter_map(|r| r.cpu.map(|c| c.1.as_secs_f64()))
            .collect();
        let (total, late) = (median(&mut totals), median(&mut lateness));
        let (cpu, timer_cpu) = (median(&mut cpu), median(&mut timer_cpu));
        table.push_str(&format!(
            "| {pacing}, {} | {total:.3} s | {:.3} ms | {cpu:.3} s ({timer_cpu:.3} s) |\n",
            timer.label(),
            late * 1e3
        ));
    }
    println!("\n{table}");
    if let Some(dir) = target_dir() {
        let path = dir.join("kcr-add-after.md");
        if let Err(e) = std::fs::write(&path, &table) {
            eprintln!("cannot write {}: {e}", path.display());
        }
    }
}

/// add_rate_limited → get → done → forget with the default controller rate
/// limiter. The bucket (10 per second after a burst of 100) would make a
/// real-time loop wait, so this runs on a paused clock: the figure is the CPU
/// cost of the calls and of the timer, not the delivery rate (10/s, as in client-go).
fn rate_limited_cycle(c: &mut Criterion) {
    let keys = keys(KEYS);
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .start_paused(true)
        .build()
        .expect("runtime");
    let mut group = c.benchmark_group("rate_limited_cycle");
    group.throughput(Throughput::Elements(1));
    group.bench_function("add_rate_limited_get_done_forget", |b| {
        let queue: RateLimitingQueue<Arc<str>> =
            rt.block_on(async { RateLimitingQueue::new(default_controller_rate_limiter()) });
        b.iter_custom(|iters| {
            rt.block_on(async {
                // Wall time: the paused clock does not move while we compute.
                #[allow(clippy::disallowed_methods)] // measuring real CPU time on a paused runtime
                let start = std::time::Instant::now();
                for i in 0..iters as usize {
                    queue.add_rate_limited(keys[i % KEYS].clone());
                    let item = queue.get().await.expect("queued");
                    queue.done(&item);
                    queue.forget(&item);
                }
                start.elapsed()
            })
        });
    });
    group.bench_function("add_rate_limited_call", |b| {
        let queue: RateLimitingQueue<Arc<str>> =
            rt.block_on(async { RateLimitingQueue::new(default_controller_rate_limiter()) });
        let mut i = 0usize;
        b.iter(|| {
            queue.add_rate_limited(keys[i % KEYS].clone());
            i += 1;
        });
    });
    group.finish();
}

fn criterion() -> Criterion {
    Criterion::default()
        .sample_size(10)
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(3))
        .configure_from_args()
}

criterion_group! {
    name = benches;
    config = criterion();
    targets = single_task, backlog, priority_single_task, producer_workers, rate_limited_cycle
}

fn main() {
    benches();
    add_after();
    Criterion::default().configure_from_args().final_summary();
}
