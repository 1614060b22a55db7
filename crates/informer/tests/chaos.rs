//! Chaos at the handlers: random writes while watches are closed, the
//! history is compacted (410 → relist with tombstones) and requests fail.
//! Replaying every handler call must reproduce the server's final state,
//! and no call may contradict the calls before it.

mod support;

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use k8s_openapi::api::core::v1::ConfigMap;
use kcr_cache::Indexers;
use kcr_informer::{DeletedObject, ResourceEventHandler, SharedIndexInformer};
use kcr_reflector::BackoffConfig;
use kcr_testenv::Failure;
use kube::api::{Api, PostParams};
use parking_lot::Mutex;
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use tokio_util::sync::CancellationToken;

use support::{config_map, eventually, key_of, rv_of, start_env};

/// Rebuilds the state from the calls and records every call that does not
/// follow from the ones before (an add of a known key, an update whose old
/// object is not the last state, a delete of an unknown key, a version
/// going backwards).
#[derive(Default)]
struct Replayer {
    state: Mutex<BTreeMap<String, (u64, Option<String>)>>,
    violations: Mutex<Vec<String>>,
    calls: Mutex<u64>,
    tombstones: Mutex<u64>,
}

fn value(cm: &ConfigMap) -> Option<String> {
    cm.data.as_ref().and_then(|d| d.get("v").cloned())
}

impl ResourceEventHandler<ConfigMap> for Replayer {
    fn on_add(&self, obj: &Arc<ConfigMap>, _initial: bool) {
        *self.calls.lock() += 1;
        let key = key_of(&**obj);
        if let Some(prev) = self
            .state
            .lock()
            .insert(key.clone(), (rv_of(&**obj), value(obj)))
        {
            self.violations
                .lock()
                .push(format!("add of known {key} (had {prev:?})"));
        }
    }

    fn on_update(&self, old: &Arc<ConfigMap>, new: &Arc<ConfigMap>) {
        *self.calls.lock() += 1;
        let key = key_of(&**new);
        let mut state = self.state.lock();
        match state.get(&key) {
            None => self
                .violations
                .lock()
                .push(format!("update of unknown {key}")),
            Some((rv, _)) if *rv != rv_of(&**old) => {
                self.violations.lock().push(format!(
                    "update of {key}: old {} but last {rv}",
                    rv_of(&**old)
                ));
            }
            Some(_) if rv_of(&**new) < rv_of(&**old) => {
                self.violations
                    .lock()
                    .push(format!("update of {key} goes backwards"));
            }
            Some(_) => {}
        }
        state.insert(key, (rv_of(&**new), value(new)));
    }

    fn on_delete(&self, obj: &DeletedObject<ConfigMap>) {
        *self.calls.lock() += 1;
        if obj.is_final_state_unknown() {
            *self.tombstones.lock() += 1;
        }
        let key = obj.key().into_owned();
        if self.state.lock().remove(&key).is_none() {
            self.violations
                .lock()
                .push(format!("delete of unknown {key}"));
        }
    }
}

async fn server_state(api: &Api<ConfigMap>) -> BTreeMap<String, (u64, Option<String>)> {
    let list = api
        .list(&Default::default())
        .await
        .unwrap_or_else(|e| panic!("list: {e}"));
    list.items
        .iter()
        .map(|cm| (key_of(cm), (rv_of(cm), value(cm))))
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn replaying_the_handler_calls_should_reproduce_the_servers_final_state_under_chaos() {
    if kcr_testenv::TestCluster::skip_on_real_cluster(
        "replaying_the_handler_calls_should_reproduce_the_servers_final_state_under_chaos",
        "fault injection (closed watches, compaction, 500s, 429s)",
    ) {
        return;
    }
    let env = start_env().await;
    let api: Api<ConfigMap> = Api::namespaced(env.client(), "default");
    for i in 0..10 {
        support::create(&api, &format!("cm{i}"), "0").await;
    }
    let informer = SharedIndexInformer::new(api.clone(), Duration::ZERO, Indexers::default())
        .name("chaos")
        // Quick retries keep the test short; the semantics are the same.
        .reflector_options(|r| {
            let mut backoff = BackoffConfig::default();
            backoff.initial = Duration::from_millis(20);
            backoff.max = Duration::from_millis(100);
            backoff.reset_after = Duration::from_millis(50);
            r.backoff(backoff)
        });
    let replayers: Vec<Arc<Replayer>> = (0..3).map(|_| Arc::new(Replayer::default())).collect();
    for r in &replayers {
        informer
            .add_event_handler(r.clone())
            .unwrap_or_else(|e| panic!("{e}"));
    }
    let cancel = CancellationToken::new();
    let task = tokio::spawn({
        let (informer, cancel) = (informer.clone(), cancel.clone());
        async move { informer.run(cancel).await }
    });

    let mut rng = StdRng::seed_from_u64(0x5eed);
    let mut late = None;
    for step in 0..400u32 {
        let name = format!("cm{}", rng.random_range(0..20));
        match rng.random_range(0..10) {
            0..=2 => {
                let _ = api
                    .create(
                        &PostParams::default(),
                        &config_map(&name, &step.to_string()),
                    )
                    .await;
            }
            3..=7 => {
                if let Ok(mut cm) = api.get(&name).await {
                    cm.data = Some([("v".to_owned(), step.to_string())].into());
                    let _ = api.replace(&name, &PostParams::default(), &cm).await;
                }
            }
            _ => {
                let _ = api.delete(&name, &Default::default()).await;
            }
        }
        match rng.random_range(0..60) {
            0 => env.faults().close_all_watches(),
            1 => env.faults().compact_history(),
            2 => env
                .faults()
                .fail_next(1, Failure::internal_error().verb("watch")),
            3 => env
                .faults()
                .fail_next(1, Failure::internal_error().verb("list")),
            _ => {}
        }
        // Pace the writer a little, so chaos hits the informer at every
        // stage (listing, watching, backing off, relisting).
        tokio::time::sleep(Duration::from_millis(rng.random_range(0..3))).await;
        if step == 200 {
            // A handler added in the middle of it all.
            let r = Arc::new(Replayer::default());
            informer
                .add_event_handler(r.clone())
                .unwrap_or_else(|e| panic!("{e}"));
            late = Some(r);
        }
    }
    env.faults().clear();
    // One more change, seen live once everything has settled.
    support::create(&api, "final", "x").await;
    let expected = server_state(&api).await;
    let late = late.unwrap_or_else(|| panic!("the late handler"));
    let all: Vec<Arc<Replayer>> = replayers.iter().cloned().chain([late]).collect();
    eventually("every handler replays to the server's state", 30, || {
        all.iter().all(|r| *r.state.lock() == expected)
    })
    .await;
    for (i, r) in all.iter().enumerate() {
        assert!(
            r.violations.lock().is_empty(),
            "handler {i}: {:?}",
            r.violations.lock()
        );
    }
    let cached: BTreeMap<String, (u64, Option<String>)> = informer
        .get_indexer()
        .list()
        .iter()
        .map(|cm| (key_of(&**cm), (rv_of(&**cm), value(cm))))
        .collect();
    assert_eq!(cached, expected, "the cache too");
    let calls = *all[0].calls.lock();
    let tombstones = *all[0].tombstones.lock();
    eprintln!("{calls} calls, {tombstones} tombstones");
    assert!(calls > 100, "the chaos produced calls: {calls}");
    assert!(tombstones > 0, "relists produced tombstones");
    cancel.cancel();
    let _ = task.await;
}
