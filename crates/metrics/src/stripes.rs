//! Counters that the threads of a process add to without atomic
//! read-modify-writes: each thread that holds a lease has a stripe of its
//! own in every [`Stripes`], which only it writes (a plain load and store);
//! threads without one (more threads than stripes) share a last stripe and
//! add to it atomically. A reader sums the stripes.
//!
//! An atomic addition is a locked instruction: it waits until the core's
//! earlier stores are visible to the others. On a hot path whose other
//! writes go to lines another core holds (a work queue shared by a producer
//! and a worker), that wait costs more than the addition itself.

use std::sync::Mutex;
use std::sync::OnceLock;
use std::sync::PoisonError;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};

/// Eight counters: one cache line, so that two threads' stripes never share one.
#[repr(align(64))]
#[derive(Default)]
struct Line([AtomicU64; CELLS_PER_LINE]);

const CELLS_PER_LINE: usize = 8;

/// How many threads at a time have a stripe of their own: the CPUs and two
/// more (a runtime's workers, the main thread, a blocking thread), at most 64.
fn owned_stripes() -> usize {
    static OWNED: OnceLock<usize> = OnceLock::new();
    *OWNED.get_or_init(|| {
        std::thread::available_parallelism()
            .map_or(2, usize::from)
            .saturating_add(2)
            .min(64)
    })
}

/// The stripes not leased to a live thread.
struct Pool {
    /// Never leased yet: `next..owned_stripes()`.
    next: usize,
    /// Given back by threads that ended.
    free: Vec<usize>,
}

impl Pool {
    const fn new() -> Self {
        Pool {
            next: 0,
            free: Vec::new(),
        }
    }

    /// A stripe no live thread holds, if one of the `owned` is left.
    fn take(&mut self, owned: usize) -> Option<usize> {
        if let Some(stripe) = self.free.pop() {
            return Some(stripe);
        }
        (self.next < owned).then(|| {
            self.next += 1;
            self.next - 1
        })
    }

    fn give_back(&mut self, stripe: usize) {
        self.free.push(stripe);
    }
}

static POOL: Mutex<Pool> = Mutex::new(Pool::new());

/// A thread's stripe, given back to its pool when the thread ends. The
/// pool's lock orders the last writes of the thread that gave a stripe back
/// before the first of the thread that takes it.
struct Lease {
    pool: &'static Mutex<Pool>,
    stripe: Option<usize>,
}

impl Lease {
    fn take(pool: &'static Mutex<Pool>, owned: usize) -> Self {
        let stripe = pool
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take(owned);
        Lease { pool, stripe }
    }
}

impl Drop for Lease {
    fn drop(&mut self) {
        if let Some(stripe) = self.stripe {
            self.pool
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .give_back(stripe);
        }
    }
}

thread_local! {
    static LEASE: Lease = Lease::take(&POOL, owned_stripes());
}

/// This thread's stripe, if it has one (not while the thread is ending).
#[inline]
fn this_threads_stripe() -> Option<usize> {
    LEASE.try_with(|lease| lease.stripe).ok().flatten()
}

/// `cells` counters, striped per thread.
pub(crate) struct Stripes {
    cells: usize,
    lines_per_stripe: usize,
    /// The owned stripes, then the shared one.
    lines: Box<[Line]>,
}

impl Stripes {
    pub(crate) fn new(cells: usize) -> Self {
        let lines_per_stripe = cells.div_ceil(CELLS_PER_LINE).max(1);
        let stripes = owned_stripes() + 1;
        Self {
            cells,
            lines_per_stripe,
            lines: (0..stripes * lines_per_stripe)
                .map(|_| Line::default())
                .collect(),
        }
    }

    fn cell(&self, stripe: usize, cell: usize) -> Option<&AtomicU64> {
        let line = self
            .lines
            .get(stripe * self.lines_per_stripe + cell / CELLS_PER_LINE)?;
        line.0.get(cell % CELLS_PER_LINE)
    }

    /// Adds `n` to counter `cell` (wrapping, as an atomic addition does).
    #[inline]
    pub(crate) fn add(&self, cell: usize, n: u64) {
        if cell >= self.cells {
            return;
        }
        match this_threads_stripe() {
            Some(stripe) => {
                if let Some(counter) = self.cell(stripe, cell) {
                    // This thread alone writes its stripe.
                    counter.store(counter.load(Relaxed).wrapping_add(n), Relaxed);
                }
            }
            None => {
                if let Some(counter) = self.cell(owned_stripes(), cell) {
                    counter.fetch_add(n, Relaxed);
                }
            }
        }
    }

    /// Counter `cell`: the sum of its stripes.
    pub(crate) fn total(&self, cell: usize) -> u64 {
        (0..=owned_stripes())
            .filter_map(|stripe| self.cell(stripe, cell))
            .fold(0, |total, counter| {
                total.wrapping_add(counter.load(Relaxed))
            })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Barrier;

    #[test]
    fn live_threads_should_never_share_a_stripe() {
        let threads = owned_stripes() + 3;
        let barrier = Barrier::new(threads);
        let stripes: Vec<Option<usize>> = std::thread::scope(|scope| {
            let handles: Vec<_> = (0..threads)
                .map(|_| {
                    scope.spawn(|| {
                        let stripe = this_threads_stripe();
                        // Everyone holds its lease until all have one.
                        barrier.wait();
                        stripe
                    })
                })
                .collect();
            handles
                .into_iter()
                .map(|handle| handle.join().expect("thread"))
                .collect()
        });
        let mut owned: Vec<usize> = stripes.iter().flatten().copied().collect();
        let count = owned.len();
        owned.sort_unstable();
        owned.dedup();
        assert_eq!(owned.len(), count, "a stripe leased twice: {stripes:?}");
        assert!(owned.iter().all(|stripe| *stripe < owned_stripes()));
        // Other tests' threads may hold leases meanwhile; these threads
        // outnumber the stripes, so some went without.
        assert!(stripes.iter().any(Option::is_none), "{stripes:?}");
    }

    #[test]
    fn a_stripe_given_back_should_be_leased_again() {
        let mut pool = Pool::new();
        assert_eq!(pool.take(2), Some(0));
        assert_eq!(pool.take(2), Some(1));
        assert_eq!(pool.take(2), None);
        pool.give_back(0);
        assert_eq!(pool.take(2), Some(0));
        assert_eq!(pool.take(2), None);
    }

    #[test]
    fn a_dropped_lease_should_give_its_stripe_back() {
        static TEST_POOL: Mutex<Pool> = Mutex::new(Pool::new());
        let first = Lease::take(&TEST_POOL, 1);
        assert_eq!(first.stripe, Some(0));
        assert_eq!(Lease::take(&TEST_POOL, 1).stripe, None);
        drop(first);
        assert_eq!(Lease::take(&TEST_POOL, 1).stripe, Some(0));
    }

    #[test]
    fn additions_from_more_threads_than_stripes_should_all_count() {
        let counters = Stripes::new(10);
        let threads = owned_stripes() * 2 + 5;
        std::thread::scope(|scope| {
            for t in 0..threads {
                let counters = &counters;
                scope.spawn(move || {
                    for i in 0..10_000_u64 {
                        counters.add(t % 10, 1);
                        counters.add(9, i);
                    }
                });
            }
        });
        let per_cell: Vec<u64> = (0..9).map(|cell| counters.total(cell)).collect();
        let threads = threads as u64;
        for (cell, total) in per_cell.iter().enumerate() {
            let writers = (0..threads).filter(|t| *t % 10 == cell as u64).count() as u64;
            assert_eq!(*total, writers * 10_000, "cell {cell}");
        }
        let ninth_writers = (0..threads).filter(|t| *t % 10 == 9).count() as u64;
        assert_eq!(
            counters.total(9),
            ninth_writers * 10_000 + threads * (10_000 * 9_999 / 2)
        );
        // Out of range: ignored.
        counters.add(10, 1);
        assert_eq!(counters.total(10), 0);
    }
}
