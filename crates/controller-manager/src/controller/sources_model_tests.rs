//! A model test of how a controller's sources are started and stopped when its warmup and its
//! start race (see [`Core::start_sources`](super::controller::Core)): random interleavings of
//! warmup, start, their cancellations, the handlers' sync and the passing of time, under a
//! paused clock. Checked after each run:
//!
//! - each source is registered at most once, and every registered source is unregistered
//!   exactly once by the time both runs have ended;
//! - nothing is reconciled before the start, nor before every handler has synced;
//! - a started controller whose handlers synced, with neither run cancelled, reconciles;
//! - both runs end once cancelled (no hang), and the queue is shut down if the start ran or a
//!   source was registered.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::Duration;

use kcr_informer::SharedInformerFactory;
use kcr_metrics::controller::ControllerMetrics;
use kcr_workqueue::PriorityQueue;
use proptest::prelude::*;
use tokio_util::sync::CancellationToken;

use super::controller::{Core, Running, SourcesState};
use super::predicate::Predicate;
use super::reconciler::{Action, Request, reconciler_fn};
use super::source::{Source, StartedSource};
use crate::sharding::ShardGate;
use crate::{BoxError, Runnable};

/// A watch whose handler syncs when the test says so, counting registrations and removals.
struct ModelSource {
    synced: Arc<AtomicBool>,
    starts: Arc<AtomicUsize>,
    stops: Arc<AtomicUsize>,
}

struct ModelStarted {
    synced: Arc<AtomicBool>,
    stops: Arc<AtomicUsize>,
}

impl Source for ModelSource {
    fn start(
        &self,
        _queue: &PriorityQueue<Request>,
        _predicates: &Arc<[Box<dyn Predicate>]>,
        _shard: Option<&Arc<ShardGate>>,
    ) -> crate::Result<Box<dyn StartedSource>> {
        self.starts.fetch_add(1, Ordering::SeqCst);
        Ok(Box::new(ModelStarted {
            synced: self.synced.clone(),
            stops: self.stops.clone(),
        }))
    }

    fn name(&self) -> String {
        "model".into()
    }

    fn cache_synced(&self) -> bool {
        true
    }
}

impl StartedSource for ModelStarted {
    fn has_synced(&self) -> bool {
        self.synced.load(Ordering::SeqCst)
    }

    fn stop(&self) {
        self.stops.fetch_add(1, Ordering::SeqCst);
    }
}

#[derive(Clone, Copy, Debug)]
enum Op {
    Warmup,
    Start,
    CancelWarmup,
    CancelStart,
    Sync,
    Tick(u16),
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        Just(Op::Warmup),
        Just(Op::Start),
        Just(Op::CancelWarmup),
        Just(Op::CancelStart),
        Just(Op::Sync),
        (1u16..400).prop_map(Op::Tick),
    ]
}

/// What one run showed.
#[derive(Debug, Default)]
struct Seen {
    starts: Vec<usize>,
    stops: Vec<usize>,
    early_reconcile: bool,
    reconciled: bool,
    ran: bool,
    ended: bool,
    queue_shut: bool,
    live: bool,
}

async fn run(ops: Vec<Op>, warmup: bool) -> Result<Seen, BoxError> {
    let synced = Arc::new(AtomicBool::new(false));
    let started_flag = Arc::new(AtomicBool::new(false));
    let counters: Vec<(Arc<AtomicUsize>, Arc<AtomicUsize>)> =
        (0..2).map(|_| (Arc::default(), Arc::default())).collect();
    let sources: Vec<Box<dyn Source>> = counters
        .iter()
        .map(|(starts, stops)| {
            Box::new(ModelSource {
                synced: synced.clone(),
                starts: starts.clone(),
                stops: stops.clone(),
            }) as Box<dyn Source>
        })
        .collect();
    let client = kube::Client::try_from(kube::Config::new("http://127.0.0.1:1".parse()?))?;
    let metrics = ControllerMetrics::register(&kcr_metrics::Registry::new())?;
    let core = Arc::new(Core {
        name: Arc::from("model"),
        queue: PriorityQueue::default(),
        metrics: metrics.controller("model"),
        max_concurrent_reconciles: 1,
        reconcile_timeout: None,
        cache_sync_timeout: Duration::from_secs(120),
        sources,
        source_state: tokio::sync::Mutex::new(SourcesState::Idle),
        warmup,
        predicates: Arc::from(Vec::<Box<dyn Predicate>>::new()),
        factory: SharedInformerFactory::new(client, Duration::ZERO),
        need_leader_election: true,
        started: AtomicBool::new(false),
        stopping: AtomicBool::new(false),
        shard: None,
    });
    let early = Arc::new(AtomicBool::new(false));
    let reconciled = Arc::new(AtomicBool::new(false));
    let reconciler = {
        let (synced, started_flag, early, reconciled) = (
            synced.clone(),
            started_flag.clone(),
            early.clone(),
            reconciled.clone(),
        );
        reconciler_fn(move |_req: Request| {
            if !synced.load(Ordering::SeqCst) || !started_flag.load(Ordering::SeqCst) {
                early.store(true, Ordering::SeqCst);
            }
            reconciled.store(true, Ordering::SeqCst);
            async { Ok::<_, BoxError>(Action::done()) }
        })
    };
    let running = Arc::new(Running {
        core: core.clone(),
        reconciler: Arc::new(reconciler),
    });
    core.queue.add(Request::namespaced("ns", "x"));

    let (warm_ctx, start_ctx) = (CancellationToken::new(), CancellationToken::new());
    let mut tasks = Vec::new();
    let (mut warmed, mut started, mut did_sync) = (false, false, false);
    let (mut warm_cancelled, mut start_cancelled) = (false, false);
    for op in ops {
        match op {
            Op::Warmup if !warmed => {
                warmed = true;
                let (r, ctx) = (running.clone(), warm_ctx.clone());
                tasks.push(tokio::spawn(async move { r.warmup(ctx).await }));
            }
            Op::Start if !started => {
                started = true;
                started_flag.store(true, Ordering::SeqCst);
                let (r, ctx) = (running.clone(), start_ctx.clone());
                tasks.push(tokio::spawn(async move { r.start(ctx).await }));
            }
            Op::CancelWarmup => {
                warm_cancelled = true;
                warm_ctx.cancel();
            }
            Op::CancelStart => {
                start_cancelled = true;
                start_ctx.cancel();
            }
            Op::Sync => {
                did_sync = true;
                synced.store(true, Ordering::SeqCst);
            }
            Op::Tick(ms) => tokio::time::sleep(Duration::from_millis(u64::from(ms))).await,
            Op::Warmup | Op::Start => {}
        }
        for _ in 0..4 {
            tokio::task::yield_now().await;
        }
    }
    // Long enough for a sync poll and a reconcile.
    tokio::time::sleep(Duration::from_secs(1)).await;
    // Owed a reconcile: started and synced, neither run cancelled.
    let owed = started && did_sync && !warm_cancelled && !start_cancelled;
    let live = !owed || reconciled.load(Ordering::SeqCst);
    warm_ctx.cancel();
    start_ctx.cancel();
    let mut ended = true;
    for task in tasks {
        match tokio::time::timeout(Duration::from_secs(10), task).await {
            Ok(Ok(Ok(()))) => {}
            _ => ended = false,
        }
    }
    Ok(Seen {
        starts: counters
            .iter()
            .map(|(s, _)| s.load(Ordering::SeqCst))
            .collect(),
        stops: counters
            .iter()
            .map(|(_, s)| s.load(Ordering::SeqCst))
            .collect(),
        early_reconcile: early.load(Ordering::SeqCst),
        reconciled: reconciled.load(Ordering::SeqCst),
        ran: started || counters.iter().any(|(s, _)| s.load(Ordering::SeqCst) > 0),
        ended,
        queue_shut: core.queue.is_shutting_down(),
        live,
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(128))]

    #[test]
    fn warmup_and_start_should_share_one_start_and_one_stop_of_the_sources(
        ops in proptest::collection::vec(op(), 1..12),
        warmup in any::<bool>(),
    ) {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .start_paused(true)
            .build()
            .map_err(|e| TestCaseError::fail(e.to_string()))?;
        let seen = runtime
            .block_on(run(ops, warmup))
            .map_err(|e| TestCaseError::fail(e.to_string()))?;
        prop_assert!(seen.ended, "a run did not end once cancelled: {seen:?}");
        for (starts, stops) in seen.starts.iter().zip(&seen.stops) {
            prop_assert!(*starts <= 1, "registered twice: {seen:?}");
            prop_assert_eq!(starts, stops, "{:?}", seen);
        }
        prop_assert!(!seen.early_reconcile, "reconciled before start or sync: {seen:?}");
        prop_assert!(seen.live, "started and synced, never reconciled: {seen:?}");
        prop_assert!(!seen.ran || seen.queue_shut, "queue left running: {seen:?}");
        let _ = seen.reconciled;
    }
}
