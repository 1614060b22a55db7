//! [`parallelize_until`]: client-go's `ParallelizeUntil`, independent pieces
//! of work spread over worker threads until done or cancelled.

use std::any::Any;
use std::panic::{self, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use tokio_util::sync::CancellationToken;

/// How [`parallelize_until`] hands out its pieces (client-go's `Options`).
///
/// ```
/// use kcr_workqueue::ParallelizeOptions;
///
/// let options = ParallelizeOptions::default().chunk_size(100);
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[must_use]
pub struct ParallelizeOptions {
    chunk_size: usize,
}

impl ParallelizeOptions {
    /// Hands the pieces to the workers `chunk_size` at a time instead of one
    /// by one (client-go's `WithChunkSize`): worth it when there are many
    /// more pieces than workers and each piece is small. 0 means 1.
    pub fn chunk_size(mut self, chunk_size: usize) -> Self {
        self.chunk_size = chunk_size;
        self
    }
}

/// Calls `do_work_piece` once for each piece `0..pieces`, on up to `workers`
/// threads, until every piece is done or `cancel` is cancelled: client-go's
/// `workqueue.ParallelizeUntil`.
///
/// - The pieces are cut into chunks of [`ParallelizeOptions::chunk_size`]
///   (1 by default) handed out in order; a worker does its chunk's pieces in
///   order, and checks `cancel` before each one: once it is cancelled, no
///   piece starts (the ones under way finish).
/// - No more workers run than there are chunks; with `workers == 0` or
///   `pieces == 0` nothing is done, as in client-go.
/// - It returns when every worker has stopped. The calling thread is one of
///   the workers; the others are scoped threads, so `do_work_piece` may
///   borrow from the caller.
/// - A panic in `do_work_piece` stops the other workers before their next
///   piece and is resumed on the calling thread once they have stopped
///   (client-go's crash handler re-panics too).
///
/// It blocks the calling thread: from async code, call it inside
/// `tokio::task::spawn_blocking` (or `block_in_place`).
///
/// ```
/// use std::sync::atomic::{AtomicU64, Ordering};
/// use kcr_workqueue::{ParallelizeOptions, parallelize_until};
/// use tokio_util::sync::CancellationToken;
///
/// let sum = AtomicU64::new(0);
/// parallelize_until(&CancellationToken::new(), 4, 1000, |piece| {
///     sum.fetch_add(piece as u64, Ordering::Relaxed);
/// }, ParallelizeOptions::default().chunk_size(10));
/// assert_eq!(sum.into_inner(), 999 * 1000 / 2);
/// ```
pub fn parallelize_until<F>(
    cancel: &CancellationToken,
    workers: usize,
    pieces: usize,
    do_work_piece: F,
    options: ParallelizeOptions,
) where
    F: Fn(usize) + Sync,
{
    if pieces == 0 {
        return;
    }
    let chunk_size = options.chunk_size.max(1);
    let chunks = pieces.div_ceil(chunk_size);
    let workers = workers.min(chunks);
    if workers == 0 {
        return;
    }
    let next_chunk = AtomicUsize::new(0);
    let failed = AtomicBool::new(false);
    let work = || {
        loop {
            let chunk = next_chunk.fetch_add(1, Ordering::Relaxed);
            if chunk >= chunks {
                return;
            }
            let start = chunk * chunk_size;
            let end = pieces.min(start + chunk_size);
            for piece in start..end {
                if cancel.is_cancelled() || failed.load(Ordering::Relaxed) {
                    return;
                }
                do_work_piece(piece);
            }
        }
    };
    // A worker that panics stops the others (before their next piece).
    let worker = || -> Result<(), Box<dyn Any + Send>> {
        let result = panic::catch_unwind(AssertUnwindSafe(work));
        if result.is_err() {
            failed.store(true, Ordering::Relaxed);
        }
        result
    };
    let panicked = std::thread::scope(|scope| {
        let others: Vec<_> = (1..workers).map(|_| scope.spawn(worker)).collect();
        let mut panicked = worker().err();
        for other in others {
            // `worker` catches its panics: a join error cannot happen, but
            // is passed on all the same.
            let outcome = other.join().unwrap_or_else(Err);
            if let Err(payload) = outcome {
                panicked.get_or_insert(payload);
            }
        }
        panicked
    });
    if let Some(payload) = panicked {
        panic::resume_unwind(payload);
    }
}
