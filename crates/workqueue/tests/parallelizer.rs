//! The rules of `parallelize_until` (client-go's `parallelizer_test.go`,
//! rewritten, plus cancellation, parallelism and panics).

use std::panic::{self, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::time::Duration;

use kcr_workqueue::{ParallelizeOptions, parallelize_until};
use tokio_util::sync::CancellationToken;

fn visits(workers: usize, pieces: usize, chunk_size: usize) -> Vec<usize> {
    let seen: Vec<AtomicUsize> = (0..pieces).map(|_| AtomicUsize::new(0)).collect();
    parallelize_until(
        &CancellationToken::new(),
        workers,
        pieces,
        |piece| {
            seen[piece].fetch_add(1, Ordering::Relaxed);
        },
        ParallelizeOptions::default().chunk_size(chunk_size),
    );
    seen.into_iter().map(AtomicUsize::into_inner).collect()
}

#[test]
fn parallelize_until_should_do_every_piece_exactly_once() {
    // client-go's cases, then edges: one worker, more workers than chunks,
    // a chunk larger than the work, chunk size 0 (as 1).
    for (pieces, workers, chunk_size) in [
        (1000, 10, 1),
        (1000, 10, 10),
        (1000, 10, 100),
        (999, 10, 13),
        (10, 1, 1),
        (3, 16, 1),
        (5, 4, 100),
        (100, 3, 0),
    ] {
        assert_eq!(
            visits(workers, pieces, chunk_size),
            vec![1; pieces],
            "pieces {pieces}, workers {workers}, chunk size {chunk_size}"
        );
    }
}

#[test]
fn parallelize_until_should_do_nothing_without_pieces_or_workers() {
    assert!(visits(4, 0, 1).is_empty());
    assert_eq!(visits(0, 10, 1), vec![0; 10], "client-go starts no worker");
}

#[test]
fn parallelize_until_should_start_no_piece_once_cancelled() {
    let cancel = CancellationToken::new();
    cancel.cancel();
    let done = AtomicUsize::new(0);
    parallelize_until(
        &cancel,
        4,
        100,
        |_| {
            done.fetch_add(1, Ordering::Relaxed);
        },
        ParallelizeOptions::default(),
    );
    assert_eq!(done.into_inner(), 0);

    // Cancelled by piece 10: one worker does no piece after it, even within
    // its chunk.
    let cancel = CancellationToken::new();
    let done = Mutex::new(Vec::new());
    parallelize_until(
        &cancel,
        1,
        100,
        |piece| {
            done.lock().unwrap().push(piece);
            if piece == 10 {
                cancel.cancel();
            }
        },
        ParallelizeOptions::default().chunk_size(7),
    );
    assert_eq!(done.into_inner().unwrap(), (0..=10).collect::<Vec<_>>());

    // Several workers: the pieces after 10 wait until it has cancelled, so
    // each other worker has at most one piece under way then, and starts no
    // other one.
    let cancel = CancellationToken::new();
    let cancelled = (Mutex::new(false), Condvar::new());
    let done = AtomicUsize::new(0);
    parallelize_until(
        &cancel,
        4,
        10_000,
        |piece| {
            let (flag, changed) = &cancelled;
            if piece == 10 {
                cancel.cancel();
                *flag.lock().unwrap() = true;
                changed.notify_all();
            } else if piece > 10 {
                let guard = flag.lock().unwrap();
                let (_guard, wait) = changed
                    .wait_timeout_while(guard, Duration::from_secs(30), |c| !*c)
                    .unwrap();
                assert!(!wait.timed_out(), "piece 10 ran");
            }
            done.fetch_add(1, Ordering::SeqCst);
        },
        ParallelizeOptions::default(),
    );
    let done = done.into_inner();
    assert!((11..=11 + 3).contains(&done), "{done} pieces done");
}

#[test]
fn parallelize_until_should_run_its_workers_at_the_same_time() {
    // Every piece waits until all four have started: only four workers
    // running together get past it (the wait's bound only turns a hang into
    // a failure).
    let started = Mutex::new(0);
    let all = Condvar::new();
    let met = AtomicUsize::new(0);
    parallelize_until(
        &CancellationToken::new(),
        4,
        4,
        |_| {
            let mut n = started.lock().unwrap();
            *n += 1;
            all.notify_all();
            let (n, timeout) = all
                .wait_timeout_while(n, Duration::from_secs(30), |n| *n < 4)
                .unwrap();
            if !timeout.timed_out() && *n == 4 {
                met.fetch_add(1, Ordering::Relaxed);
            }
        },
        ParallelizeOptions::default(),
    );
    assert_eq!(met.into_inner(), 4);
}

/// Set when the thread that holds it ends (its thread-local is dropped
/// after the thread's work has returned).
struct OnExit(Arc<(Mutex<bool>, Condvar)>);

impl Drop for OnExit {
    fn drop(&mut self) {
        let (exited, changed) = &*self.0;
        *exited.lock().unwrap() = true;
        changed.notify_all();
    }
}

thread_local! {
    static ON_EXIT: std::cell::RefCell<Option<OnExit>> = const { std::cell::RefCell::new(None) };
}

#[test]
fn a_panicking_piece_should_stop_the_others_and_reach_the_caller() {
    // The first piece a spawned worker runs panics; the calling thread's
    // first piece waits until that worker's thread has ended (so its panic
    // was caught), and the calling thread must then start no other piece.
    let caller = std::thread::current().id();
    let exit = Arc::new((Mutex::new(false), Condvar::new()));
    let claimed = AtomicBool::new(false);
    let done = AtomicUsize::new(0);
    let outcome = panic::catch_unwind(AssertUnwindSafe(|| {
        parallelize_until(
            &CancellationToken::new(),
            2,
            1000,
            |_| {
                if std::thread::current().id() != caller {
                    if !claimed.swap(true, Ordering::SeqCst) {
                        ON_EXIT.with(|e| *e.borrow_mut() = Some(OnExit(exit.clone())));
                        panic!("a piece failed");
                    }
                } else {
                    let (exited, changed) = &*exit;
                    let guard = exited.lock().unwrap();
                    let (_guard, wait) = changed
                        .wait_timeout_while(guard, Duration::from_secs(30), |e| !*e)
                        .unwrap();
                    assert!(!wait.timed_out(), "the panicking worker ended");
                }
                done.fetch_add(1, Ordering::SeqCst);
            },
            ParallelizeOptions::default(),
        );
    }));
    let payload = outcome.expect_err("the panic is resumed in the caller");
    assert_eq!(payload.downcast_ref::<&str>(), Some(&"a piece failed"));
    assert_eq!(done.into_inner(), 1, "the caller stopped after its piece");
}
