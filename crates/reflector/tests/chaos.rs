//! Chaos: 2,000 random creates, updates and deletes on 200 objects while the
//! server closes watches every 50 events, compacts its history twice and
//! answers bursts of 500s. At the end the reflector's store must equal a
//! fresh list, object by object and version by version, and no key's version
//! may ever have gone backwards (no event applied twice or out of order).

mod support;

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use k8s_openapi::api::core::v1::ConfigMap;
use kcr_metrics::reflector::ReflectorMetrics;
use kcr_reflector::{
    BackoffConfig, ListOptions, ListerWatcher, ObjectList, Reflector, WatchOptions, WatchStream,
};
use kcr_testenv::{Failure, TestEnv};
use kube::api::{Api, DeleteParams, ListParams, PostParams};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use tokio_util::sync::CancellationToken;

use support::{Checked, config_map, eventually, eventually_or};

/// Counts the watches the server answered with 429 (the reflector retries
/// those inside its cycle, so its watch error handler never sees them).
struct CountThrottles<L> {
    inner: L,
    throttled: Arc<AtomicUsize>,
}

#[async_trait::async_trait]
impl<L: ListerWatcher<ConfigMap>> ListerWatcher<ConfigMap> for CountThrottles<L> {
    async fn list(&self, options: &ListOptions) -> kcr_reflector::Result<ObjectList<ConfigMap>> {
        self.inner.list(options).await
    }

    async fn watch(&self, options: &WatchOptions) -> kcr_reflector::Result<WatchStream<ConfigMap>> {
        let result = self.inner.watch(options).await;
        if result
            .as_ref()
            .is_err_and(kcr_reflector::Error::is_too_many_requests)
        {
            self.throttled.fetch_add(1, Ordering::SeqCst);
        }
        result
    }
}

const OBJECTS: usize = 200;
const OPERATIONS: usize = 2_000;

/// Retries an operation the fault injection failed with a 500 (injected
/// failures happen before the server does anything, so a retry is safe).
async fn retrying<T, F, Fut>(mut op: F) -> T
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = Result<T, kube::Error>>,
{
    for _ in 0..50 {
        match op().await {
            Ok(v) => return v,
            Err(kube::Error::Api(s)) if s.code == 500 => continue,
            Err(e) => panic!("operation failed: {e}"),
        }
    }
    panic!("operation kept failing with 500")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn store_should_equal_a_fresh_list_after_random_changes_under_faults() {
    if kcr_testenv::TestCluster::skip_on_real_cluster(
        "store_should_equal_a_fresh_list_after_random_changes_under_faults",
        "fault injection (closed watches, compaction, 500s, 429s)",
    ) {
        return;
    }
    let seed: u64 = std::env::var("KCR_CHAOS_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(0x5eed_2026);
    let mut rng = StdRng::seed_from_u64(seed);

    let env = TestEnv::start()
        .await
        .unwrap_or_else(|e| panic!("testenv: {e}"));
    let api: Api<ConfigMap> = Api::namespaced(env.client(), "default");
    let faults = env.faults();

    let store = Checked::<ConfigMap>::new();
    let throttled = Arc::new(AtomicUsize::new(0));
    let families = ReflectorMetrics::register(&kcr_metrics::Registry::new())
        .unwrap_or_else(|e| panic!("metrics: {e}"));
    let reflector = Arc::new(
        Reflector::new(
            CountThrottles {
                inner: Api::<ConfigMap>::namespaced(
                    support::client_without_retries(&env),
                    "default",
                ),
                throttled: throttled.clone(),
            },
            store.clone(),
        )
        .name("chaos")
        .metrics(&families)
        // Lists and watches: a streaming list of the 200 objects would be
        // cut every 50 events by the fault injection below, before its
        // initial-events-end bookmark, and (as client-go's) be re-opened
        // for ever.
        .use_watch_list(false)
        .page_size(50)
        // The maximum is the throttled watch's `Retry-After` (a longer
        // `Retry-After` would be capped at the maximum).
        .backoff(BackoffConfig::new(
            Duration::from_millis(5),
            Duration::from_secs(1),
        )),
    );
    let metrics = families.for_reflector("chaos");
    let cancel = CancellationToken::new();
    let task = tokio::spawn({
        let (reflector, cancel) = (reflector.clone(), cancel.clone());
        async move { reflector.run(cancel).await }
    });

    faults.close_watches_after_events(Some(50));
    let mut exists = BTreeSet::new();
    let mut compact_after_this_op = None;
    for op in 0..OPERATIONS {
        match op {
            // Hold the reflector's next watch back for a second (429) and
            // compact meanwhile, leaving it behind: 410, relist.
            600 | 1_300 => {
                let throttles = throttled.load(Ordering::SeqCst);
                let relists = metrics.relists_expired.get();
                faults.fail_next(1, Failure::too_many_requests(1).verb("watch"));
                faults.close_all_watches();
                eventually("the reflector to be throttled", 10, || {
                    throttled.load(Ordering::SeqCst) > throttles
                })
                .await;
                compact_after_this_op = Some(relists);
            }
            300 | 1_000 | 1_700 => faults.fail_next(8, Failure::internal_error()),
            _ => {}
        }
        let name = format!("w{}", rng.random_range(0..OBJECTS));
        if !exists.contains(&name) {
            let cm = config_map(&name, &op.to_string());
            retrying(|| async { api.create(&PostParams::default(), &cm).await }).await;
            exists.insert(name);
        } else if rng.random_bool(0.7) {
            let value = op.to_string();
            retrying(|| async {
                let mut cm = api.get(&name).await?;
                cm.data = Some([("v".to_owned(), value.clone())].into());
                api.replace(&name, &PostParams::default(), &cm).await
            })
            .await;
        } else {
            retrying(|| async { api.delete(&name, &DeleteParams::default()).await }).await;
            exists.remove(&name);
        }
        // Compact once the server has moved past the throttled reflector.
        if let Some(relists) = compact_after_this_op.take() {
            faults.compact_history();
            eventually("the compaction to force a relist", 10, || {
                metrics.relists_expired.get() > relists
            })
            .await;
        }
        // Let the reflector interleave with the writes.
        if op % 25 == 0 {
            tokio::task::yield_now().await;
        }
    }
    faults.clear();

    let fresh = api
        .list(&ListParams::default())
        .await
        .unwrap_or_else(|e| panic!("list: {e}"));
    let expected: BTreeMap<String, String> = fresh
        .items
        .iter()
        .map(|cm| {
            (
                format!("default/{}", cm.metadata.name.clone().unwrap_or_default()),
                cm.metadata.resource_version.clone().unwrap_or_default(),
            )
        })
        .collect();
    let actual = || -> BTreeMap<String, String> {
        store
            .cache
            .list()
            .iter()
            .map(|cm| {
                (
                    format!(
                        "{}/{}",
                        cm.metadata.namespace.clone().unwrap_or_default(),
                        cm.metadata.name.clone().unwrap_or_default()
                    ),
                    cm.metadata.resource_version.clone().unwrap_or_default(),
                )
            })
            .collect()
    };
    eventually_or(
        "the store to equal a fresh list",
        30,
        || actual() == expected,
        || {
            let a = actual();
            let missing: Vec<_> = expected
                .iter()
                .filter(|(k, v)| a.get(*k) != Some(v))
                .take(5)
                .collect();
            let extra: Vec<_> = a
                .keys()
                .filter(|k| !expected.contains_key(*k))
                .take(5)
                .collect();
            format!("(seed {seed}) differing: {missing:?}, extra: {extra:?}")
        },
    )
    .await;
    assert_eq!(expected.len(), exists.len());
    // The data too, not only the versions.
    for cm in &fresh.items {
        let key = format!("default/{}", cm.metadata.name.clone().unwrap_or_default());
        let cached = store
            .cache
            .get_by_key(&key)
            .unwrap_or_else(|| panic!("{key} missing"));
        assert_eq!(cached.data, cm.data, "{key}");
    }
    assert!(
        store.violations.lock().is_empty(),
        "(seed {seed}) versions went backwards: {:?}",
        store.violations.lock()
    );
    assert!(
        metrics.relists_expired.get() >= 2,
        "both compactions forced a relist"
    );
    assert!(
        metrics.watches.get() >= 10,
        "watches were closed every 50 events"
    );
    cancel.cancel();
    let _ = task.await;
}
