//! 8 workers, 100,000 adds over 1,000 keys, re-adds during processing and a
//! concurrent `shut_down_with_drain`, on a multi-threaded runtime, with a
//! checker of the queue's two promises.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering::SeqCst};
use std::time::Duration;

use kcr_workqueue::Queue;
use rand::{Rng, SeedableRng, rngs::StdRng};

const KEYS: usize = 1_000;
const ADDS: usize = 100_000;
const WORKERS: usize = 8;

/// What the checker knows of every key.
struct Checker {
    /// A worker holds the key now.
    held: Vec<AtomicBool>,
    /// Bumped before every add of the key.
    version: Vec<AtomicU64>,
    /// The highest version whose add surely happened before shut down.
    accepted: Vec<AtomicU64>,
    /// The highest version a worker saw when it got the key.
    processed: Vec<AtomicU64>,
    adds: AtomicUsize,
    /// How many times a worker got a key another worker held.
    shared: AtomicUsize,
}

impl Checker {
    fn new() -> Self {
        let atomics = || (0..KEYS).map(|_| AtomicU64::new(0)).collect();
        Self {
            held: (0..KEYS).map(|_| AtomicBool::new(false)).collect(),
            version: atomics(),
            accepted: atomics(),
            processed: atomics(),
            adds: AtomicUsize::new(0),
            shared: AtomicUsize::new(0),
        }
    }

    fn add(&self, queue: &Queue<usize>, key: usize) {
        let version = self.version[key].fetch_add(1, SeqCst) + 1;
        queue.add(key);
        self.adds.fetch_add(1, SeqCst);
        // Still running after the add: the add happened before shut down.
        if !queue.is_shutting_down() {
            self.accepted[key].fetch_max(version, SeqCst);
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn eight_workers_should_never_share_an_item_nor_lose_an_add() {
    let queue: Queue<usize> = Queue::new();
    let checker = Arc::new(Checker::new());

    let workers: Vec<_> = (0..WORKERS)
        .map(|w| {
            let (queue, checker) = (queue.clone(), checker.clone());
            tokio::spawn(async move {
                let mut rng = StdRng::seed_from_u64(w as u64);
                let mut processed = 0usize;
                while let Some(key) = queue.get().await {
                    // Counted, not asserted here: a panicking worker would
                    // never call `done` and the drain would wait forever.
                    if checker.held[key].swap(true, SeqCst) {
                        checker.shared.fetch_add(1, SeqCst);
                    }
                    checker.processed[key].fetch_max(checker.version[key].load(SeqCst), SeqCst);
                    if rng.random_ratio(1, 10) {
                        // Added again while being processed.
                        checker.add(&queue, key);
                    }
                    if rng.random_ratio(1, 4) {
                        tokio::task::yield_now().await;
                    }
                    checker.held[key].store(false, SeqCst);
                    queue.done(&key);
                    processed += 1;
                }
                processed
            })
        })
        .collect();

    let drain = {
        let (queue, checker) = (queue.clone(), checker.clone());
        tokio::spawn(async move {
            while checker.adds.load(SeqCst) < ADDS * 9 / 10 {
                tokio::task::yield_now().await;
            }
            queue.shut_down_with_drain().await;
        })
    };

    let producer = {
        let (queue, checker) = (queue.clone(), checker.clone());
        tokio::spawn(async move {
            let mut rng = StdRng::seed_from_u64(99);
            for i in 0..ADDS {
                checker.add(&queue, rng.random_range(0..KEYS));
                if i % 64 == 0 {
                    tokio::task::yield_now().await;
                }
            }
        })
    };

    producer.await.unwrap();
    // A guard against a hang (a lost `done` would keep the drain waiting), not
    // a timing: the whole test takes well under a second.
    let processed = tokio::time::timeout(Duration::from_secs(60), async {
        drain.await.unwrap();
        let mut processed = 0;
        for worker in workers {
            processed += worker.await.unwrap();
        }
        processed
    })
    .await
    .unwrap_or_else(|_| {
        panic!(
            "drain or workers hung; items held by two workers at once: {}",
            checker.shared.load(SeqCst)
        )
    });
    assert!(queue.is_shutting_down());
    assert_eq!(queue.len(), 0);
    assert!(processed > 0);
    assert_eq!(
        checker.shared.load(SeqCst),
        0,
        "an item was held by two workers at once"
    );

    let mut checked = 0;
    for key in 0..KEYS {
        let accepted = checker.accepted[key].load(SeqCst);
        let seen = checker.processed[key].load(SeqCst);
        assert!(
            seen >= accepted,
            "key {key}: added (version {accepted}) after its last processing (saw {seen})"
        );
        checked += usize::from(accepted > 0);
    }
    assert!(
        checked > KEYS / 2,
        "the checker saw accepted adds for most keys"
    );
}
