//! `shardSelector` (KEP-5866) over HTTP against kcr-testenv: the reflector's store follows the
//! selector, a change of the selector relists at once (no backoff), and whether the server
//! applied it is read from `shardInfo`.

use std::collections::BTreeSet;
use std::sync::Arc;
use std::time::Duration;

use k8s_openapi::api::core::v1::ConfigMap;
use kcr_cache::IndexedStore;
use kcr_reflector::{ApiListerWatcher, Reflector, ShardSelector};
use kcr_testenv::TestEnv;
use kube::Api;
use kube::api::{ObjectMeta, PostParams};
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

type TestResult = Result<(), Box<dyn std::error::Error>>;

fn fnv1a64(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325u64, |h, b| {
        (h ^ u64::from(*b)).wrapping_mul(0x0000_0100_0000_01b3)
    })
}

const LOWER: &str = "shardRange(object.metadata.uid, '0x0000000000000000', '0x8000000000000000')";
const UPPER: &str = "shardRange(object.metadata.uid, '0x8000000000000000', '0x10000000000000000')";

async fn run(
    gate: bool,
) -> Result<
    (
        BTreeSet<String>,
        BTreeSet<String>,
        Option<bool>,
        Duration,
        BTreeSet<String>,
    ),
    Box<dyn std::error::Error>,
> {
    let env = TestEnv::builder()
        .sharded_list_and_watch(gate)
        .start()
        .await?;
    let api: Api<ConfigMap> = Api::namespaced(env.client(), "default");
    let mut lower = BTreeSet::new();
    let mut all = BTreeSet::new();
    for i in 0..40 {
        let cm = ConfigMap {
            metadata: ObjectMeta {
                name: Some(format!("cm-{i:02}")),
                ..ObjectMeta::default()
            },
            ..ConfigMap::default()
        };
        let created = api.create(&PostParams::default(), &cm).await?;
        let name = format!("default/cm-{i:02}");
        if fnv1a64(created.metadata.uid.unwrap_or_default().as_bytes()) < 1 << 63 {
            lower.insert(name.clone());
        }
        all.insert(name);
    }
    let selector = ShardSelector::new();
    selector.set(Some(LOWER.into()));
    let cache = Arc::new(IndexedStore::<ConfigMap>::default());
    let lw = ApiListerWatcher::new(api.clone()).shard_selector(selector.clone());
    let reflector = Arc::new(Reflector::new(lw, cache.clone()).name("sharded"));
    let stop = CancellationToken::new();
    let task = tokio::spawn({
        let (reflector, stop) = (reflector.clone(), stop.clone());
        async move { reflector.run(stop).await }
    });
    let keys = |c: &IndexedStore<ConfigMap>| -> BTreeSet<String> {
        c.list_keys().into_iter().map(|k| k.to_string()).collect()
    };
    let want_first = if gate { lower.clone() } else { all.clone() };
    while keys(&cache) != want_first {
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    let first = keys(&cache);
    // The other half: the watch ends and the reflector lists again, at once.
    let changed = Instant::now();
    selector.set(Some(UPPER.into()));
    let want_second: BTreeSet<String> = if gate {
        all.difference(&lower).cloned().collect()
    } else {
        all.clone()
    };
    let mut second = keys(&cache);
    if gate {
        while second != want_second {
            tokio::time::sleep(Duration::from_millis(10)).await;
            second = keys(&cache);
        }
    }
    let took = changed.elapsed();
    stop.cancel();
    task.await?;
    env.shutdown().await;
    Ok((first, second, selector.server_applied(), took, lower))
}

#[tokio::test(start_paused = true)]
async fn the_store_should_follow_the_shard_selector_and_relist_at_once_when_it_changes()
-> TestResult {
    let (first, second, applied, took, lower) = run(true).await?;
    assert_eq!(first, lower);
    assert!(first.is_disjoint(&second));
    assert_eq!(first.len() + second.len(), 40);
    assert_eq!(applied, Some(true));
    // No backoff between the ended watch and the new list (the reflector's first backoff
    // step is 800 ms).
    assert!(took < Duration::from_millis(800), "relisted after {took:?}");
    Ok(())
}

#[tokio::test(start_paused = true)]
async fn a_server_without_the_gate_should_be_seen_ignoring_the_selector() -> TestResult {
    let (first, second, applied, _, _) = run(false).await?;
    assert_eq!(first.len(), 40);
    assert_eq!(second.len(), 40);
    assert_eq!(applied, Some(false));
    Ok(())
}
