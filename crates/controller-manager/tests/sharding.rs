//! Sharded controllers over real HTTP, three replicas and 3,000 objects, under a paused clock
//! (the server runs in the test's runtime): every object is reconciled, a shared record of the
//! reconciles in flight shows no object in two replicas' reconciles at once, and after each
//! change (a replica killed without releasing its Lease, one added, one cut off from the
//! server for longer than its lease) every object is owned by exactly one live member within
//! one lease duration plus a retry period.
//!
//! Both modes run: client-side against a server without `ShardedListAndWatch` (the default,
//! also what a real cluster through `KCR_TEST_KUBECONFIG` offers), server-side against
//! kcr-testenv with the gate on, where each replica's cache also holds only its share.

mod common;

use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use futures::StreamExt;
use k8s_openapi::api::core::v1::ConfigMap;
use kcr_controller_manager::controller::reconciler_fn;
use kcr_controller_manager::sharding::{Config, Mode, RangeSet, ShardField, ShardMember, fnv1a64};
use kcr_controller_manager::{Action, Controller, Request};
use kcr_controller_manager::{BoxError, Manager, Options};
use kcr_testenv::{TestCluster, TestEnv};
use kube::api::{ListParams, ObjectMeta, PostParams};
use kube::{Api, Client};
use parking_lot::Mutex;
use tokio::task::JoinHandle;
use tokio::time::Instant;

type TestResult = Result<(), Box<dyn std::error::Error>>;

const OBJECTS: usize = 3_000;
const LEASE: Duration = Duration::from_secs(15);
const RETRY: Duration = Duration::from_secs(2);
/// What a reconcile takes.
const WORK: Duration = Duration::from_millis(20);

/// The reconciles in flight across all replicas, and what went wrong.
#[derive(Default)]
struct Record {
    in_flight: Mutex<HashMap<String, String>>,
    overlaps: Mutex<Vec<String>>,
    reconciled: Mutex<HashMap<String, usize>>,
}

/// A reconcile in the record; leaves it when dropped (also when the reconcile is aborted).
struct Reconciling {
    record: Arc<Record>,
    key: String,
    who: String,
}

impl Record {
    fn begin(self: &Arc<Self>, key: &str, who: &str) -> Reconciling {
        if let Some(other) = self.in_flight.lock().insert(key.to_owned(), who.to_owned()) {
            self.overlaps.lock().push(format!(
                "{key} reconciled by {who} while {other} reconciled it"
            ));
        }
        *self.reconciled.lock().entry(key.to_owned()).or_default() += 1;
        Reconciling {
            record: self.clone(),
            key: key.to_owned(),
            who: who.to_owned(),
        }
    }
}

impl Drop for Reconciling {
    fn drop(&mut self) {
        let mut in_flight = self.record.in_flight.lock();
        if in_flight.get(&self.key) == Some(&self.who) {
            in_flight.remove(&self.key);
        }
    }
}

/// A client that can be cut off from the server: every request then fails at once, as with a
/// network partition.
#[derive(Clone)]
struct Cuttable {
    inner: Client,
    cut: Arc<AtomicBool>,
}

impl tower::Service<http::Request<kube::client::Body>> for Cuttable {
    type Response = http::Response<kube::client::Body>;
    type Error = kube::Error;
    type Future = futures::future::BoxFuture<'static, Result<Self::Response, Self::Error>>;

    fn poll_ready(
        &mut self,
        _: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Result<(), Self::Error>> {
        std::task::Poll::Ready(Ok(()))
    }

    fn call(&mut self, request: http::Request<kube::client::Body>) -> Self::Future {
        if self.cut.load(Ordering::SeqCst) {
            return Box::pin(async {
                Err(kube::Error::Service("partitioned from the server".into()))
            });
        }
        let inner = self.inner.clone();
        Box::pin(async move { inner.send(request).await })
    }
}

struct Replica {
    member: ShardMember,
    manager: Manager,
    cut: Arc<AtomicBool>,
    task: JoinHandle<kcr_controller_manager::Result<()>>,
    _stop: tokio::sync::oneshot::Sender<()>,
}

fn replica(
    client: &Client,
    namespace: &str,
    who: &str,
    mode: Mode,
    record: &Arc<Record>,
) -> Result<Replica, Box<dyn std::error::Error>> {
    let cut = Arc::new(AtomicBool::new(false));
    let client = Client::new(
        Cuttable {
            inner: client.clone(),
            cut: cut.clone(),
        },
        namespace.to_owned(),
    );
    let manager = Manager::new(
        client.clone(),
        Options::default().metrics_bind_address("0").informers(
            kcr_controller_manager::manager::InformerOptions::default()
                .default_namespaces([namespace])
                .default_label_selector("app=sharded"),
        ),
    )?;
    let member = ShardMember::new(
        client,
        Config::new("sharding-test", namespace, who)
            .with_mode(mode)
            .lease_duration(LEASE)
            .retry_period(RETRY),
    )?;
    let record = record.clone();
    let name = who.to_owned();
    static NEXT: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let n = NEXT.fetch_add(1, Ordering::SeqCst);
    Controller::builder(&manager, format!("sharded-{n}-{who}"))
        .for_::<ConfigMap>()
        .max_concurrent_reconciles(4)
        .sharded(&member)
        .build(reconciler_fn(move |req: Request| {
            let record = record.clone();
            let name = name.clone();
            async move {
                let _in_flight = record.begin(&req.name, &name);
                tokio::time::sleep(WORK).await;
                Ok::<_, BoxError>(Action::done())
            }
        }))?;
    let (stop, task) = common::start(&manager);
    Ok(Replica {
        member,
        manager,
        cut,
        task,
        _stop: stop,
    })
}

async fn create_objects(
    client: &Client,
    namespace: &str,
) -> Result<Vec<u64>, Box<dyn std::error::Error>> {
    let api: Api<ConfigMap> = Api::namespaced(client.clone(), namespace);
    let created: Vec<Result<ConfigMap, kube::Error>> = futures::stream::iter(0..OBJECTS)
        .map(|i| {
            let api = api.clone();
            async move {
                let cm = ConfigMap {
                    metadata: ObjectMeta {
                        name: Some(format!("cm-{i:04}")),
                        labels: Some([("app".to_owned(), "sharded".to_owned())].into()),
                        ..ObjectMeta::default()
                    },
                    ..ConfigMap::default()
                };
                api.create(&PostParams::default(), &cm).await
            }
        })
        .buffer_unordered(16)
        .collect()
        .await;
    let mut hashes = Vec::with_capacity(OBJECTS);
    for cm in created {
        hashes.push(fnv1a64(cm?.metadata.uid.unwrap_or_default().as_bytes()));
    }
    Ok(hashes)
}

/// Changes one object every 20 ms, round robin, until stopped; returns how many.
async fn churn(
    client: Client,
    namespace: String,
    stop: Arc<AtomicBool>,
) -> Result<usize, kube::Error> {
    let api: Api<ConfigMap> = Api::namespaced(client, &namespace);
    let mut changes = 0;
    while !stop.load(Ordering::SeqCst) {
        let name = format!("cm-{:04}", (changes * 7) % OBJECTS);
        let patch = serde_json::json!({ "data": { "n": changes.to_string() } });
        api.patch(
            &name,
            &kube::api::PatchParams::default(),
            &kube::api::Patch::Merge(&patch),
        )
        .await?;
        changes += 1;
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    Ok(changes)
}

/// Whether the given members own disjoint sets that together cover the space.
fn partition(members: &[&ShardMember]) -> bool {
    let mut union = RangeSet::new();
    for m in members {
        let owned = m.owned();
        if union.overlaps(&owned) {
            return false;
        }
        union = union.union(&owned);
    }
    union == RangeSet::full()
}

async fn wait_until(what: &str, limit: Duration, f: impl Fn() -> bool) -> Result<Duration, String> {
    let start = Instant::now();
    eprintln!("waiting for {what}");
    while !f() {
        if start.elapsed() > limit {
            return Err(format!("timed out after {limit:?} waiting for {what}"));
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    Ok(start.elapsed())
}

/// Samples every member every 100 ms: no two own the same hash at once.
fn checker(members: Vec<ShardMember>) -> (Arc<AtomicBool>, JoinHandle<Result<usize, String>>) {
    let stop = Arc::new(AtomicBool::new(false));
    let done = stop.clone();
    let task = tokio::spawn(async move {
        let mut samples = 0;
        while !done.load(Ordering::SeqCst) {
            let owned: Vec<RangeSet> = members.iter().map(ShardMember::owned).collect();
            for (i, a) in owned.iter().enumerate() {
                for (j, b) in owned.iter().enumerate().skip(i + 1) {
                    if a.overlaps(b) {
                        return Err(format!(
                            "{} and {} own {} at once",
                            members[i].identity(),
                            members[j].identity(),
                            a.intersection(b)
                        ));
                    }
                }
            }
            samples += 1;
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        Ok(samples)
    });
    (stop, task)
}

async fn three_replicas(
    mode: Mode,
    cluster_client: Client,
    namespace: String,
    server_side: bool,
) -> TestResult {
    let hashes = create_objects(&cluster_client, &namespace).await?;
    let record = Arc::new(Record::default());
    let a = replica(&cluster_client, &namespace, "replica-a", mode, &record)?;
    let b = replica(&cluster_client, &namespace, "replica-b", mode, &record)?;
    let c = replica(&cluster_client, &namespace, "replica-c", mode, &record)?;
    let limit = TestCluster::bound(LEASE + RETRY);

    // Every object reconciled; the three split the space.
    wait_until(
        "the three to split the space",
        TestCluster::bound(Duration::from_secs(60)),
        || partition(&[&a.member, &b.member, &c.member]),
    )
    .await?;
    wait_until(
        "every object reconciled",
        TestCluster::bound(Duration::from_secs(60)),
        || record.reconciled.lock().len() == OBJECTS,
    )
    .await?;
    for m in [&a.member, &b.member, &c.member] {
        assert_eq!(m.members(), ["replica-a", "replica-b", "replica-c"]);
        let share = m.share();
        assert!(
            (0.2..0.47).contains(&share),
            "{} owns {share}",
            m.identity()
        );
    }
    if server_side {
        // Each cache holds about a third (the server filtered), never everything.
        wait_until(
            "the caches to hold only their shares",
            TestCluster::bound(Duration::from_secs(30)),
            || {
                [&a, &b, &c].iter().all(|r| {
                    let cached = r.manager.informer_reader::<ConfigMap>().list().len();
                    cached < OBJECTS * 6 / 10
                })
            },
        )
        .await?;
        let cached: usize = [&a, &b, &c]
            .iter()
            .map(|r| r.manager.informer_reader::<ConfigMap>().list().len())
            .sum();
        assert_eq!(cached, OBJECTS, "the three caches partition the objects");
        assert_eq!(a.member.selector().server_applied(), Some(true));
    } else {
        assert_eq!(
            a.manager.informer_reader::<ConfigMap>().list().len(),
            OBJECTS
        );
    }
    let owned_by = |m: &ShardMember| hashes.iter().filter(|h| m.owns(**h)).count();
    let counts: usize = [&a.member, &b.member, &c.member]
        .iter()
        .map(|m| owned_by(m))
        .sum();
    assert_eq!(counts, OBJECTS);

    let d_member;
    let (stop_check, check) = checker(vec![a.member.clone(), b.member.clone(), c.member.clone()]);
    // Objects keep changing throughout, so reconciles are in flight while ranges move.
    let churn_stop = Arc::new(AtomicBool::new(false));
    let churn = tokio::spawn(churn(
        cluster_client.clone(),
        namespace.clone(),
        churn_stop.clone(),
    ));
    let a_owned = hashes.iter().filter(|h| a.member.owns(**h)).count();

    // 1. Kill a without releasing its Lease: cut off and its manager dropped.
    a.cut.store(true, Ordering::SeqCst);
    a.task.abort();
    let took = wait_until("b and c to take a's ranges", limit, || {
        partition(&[&b.member, &c.member])
    })
    .await?;
    assert!(
        took >= LEASE - RETRY,
        "taken over {took:?} after the kill: before a's lease expired"
    );
    // a's objects are queued again by their new owners (their cached objects, at once).
    let before: usize = record.reconciled.lock().values().sum();
    wait_until(
        "a's objects reconciled by b and c",
        TestCluster::bound(Duration::from_secs(30)),
        || record.reconciled.lock().values().sum::<usize>() >= before + a_owned,
    )
    .await?;

    // 2. Add d: b, c and d split the space.
    let d = replica(&cluster_client, &namespace, "replica-d", mode, &record)?;
    d_member = d.member.clone();
    let (stop_check2, check2) = checker(vec![
        a.member.clone(),
        b.member.clone(),
        c.member.clone(),
        d_member.clone(),
    ]);
    wait_until("b, c and d to split the space", limit, || {
        d.member.share() > 0.15 && partition(&[&b.member, &c.member, &d.member])
    })
    .await?;

    // 3. Cut b off for longer than its lease: it stops before c and d take over, and comes
    // back once it reaches the server again.
    b.cut.store(true, Ordering::SeqCst);
    wait_until("b to drop its ranges", LEASE, || {
        b.member.owned().is_empty()
    })
    .await?;
    wait_until("c and d to take b's ranges", limit, || {
        partition(&[&c.member, &d.member])
    })
    .await?;
    tokio::time::sleep(LEASE).await;
    b.cut.store(false, Ordering::SeqCst);
    wait_until("b, c and d to split the space again", limit, || {
        b.member.share() > 0.15 && partition(&[&b.member, &c.member, &d.member])
    })
    .await?;
    tokio::time::sleep(Duration::from_secs(5)).await;

    churn_stop.store(true, Ordering::SeqCst);
    let changes = churn.await??;
    assert!(changes > 100, "{changes} changes");
    stop_check.store(true, Ordering::SeqCst);
    stop_check2.store(true, Ordering::SeqCst);
    let samples = check.await??;
    let samples2 = check2.await??;
    assert!(
        samples > 100 && samples2 > 100,
        "{samples} and {samples2} samples"
    );
    let overlaps = record.overlaps.lock().clone();
    assert!(
        overlaps.is_empty(),
        "objects in two replicas' reconciles at once: {overlaps:?}"
    );
    assert_eq!(record.reconciled.lock().len(), OBJECTS);

    // The members' Leases are labelled with their group.
    let leases: Api<k8s_openapi::api::coordination::v1::Lease> =
        Api::namespaced(cluster_client.clone(), &namespace);
    let listed = leases
        .list(&ListParams::default().labels("kcr.io/shard-group=sharding-test"))
        .await?;
    assert!(listed.items.len() >= 3);
    for r in [b, c, d] {
        drop(r._stop);
        let _ = r.task.await;
    }
    Ok(())
}

#[tokio::test(start_paused = true)]
async fn three_client_side_replicas_should_split_the_work_and_never_reconcile_an_object_twice_at_once()
-> TestResult {
    let cluster = TestCluster::start_paused("sharding-client-side").await?;
    let client = cluster.client();
    let ns = cluster.namespace().to_owned();
    three_replicas(Mode::ClientSide, client, ns, false).await?;
    cluster.shutdown().await;
    Ok(())
}

#[tokio::test(start_paused = true)]
async fn three_server_side_replicas_should_cache_only_their_shares_and_never_reconcile_an_object_twice_at_once()
-> TestResult {
    if TestCluster::skip_on_real_cluster(
        "three_server_side_replicas_should_cache_only_their_shares",
        "a server with the ShardedListAndWatch gate",
    ) {
        return Ok(());
    }
    let env = TestEnv::builder()
        .sharded_list_and_watch(true)
        .start()
        .await?;
    three_replicas(Mode::ServerSide, env.client(), "default".to_owned(), true).await?;
    env.shutdown().await;
    Ok(())
}

#[tokio::test(start_paused = true)]
async fn server_side_mode_against_a_server_without_the_gate_should_filter_on_the_client()
-> TestResult {
    if TestCluster::skip_on_real_cluster(
        "server_side_mode_against_a_server_without_the_gate",
        "a server without the gate",
    ) {
        return Ok(());
    }
    let env = TestEnv::start().await?;
    let client = env.client();
    let hashes = create_objects(&client, "default").await?;
    let record = Arc::new(Record::default());
    let a = replica(&client, "default", "replica-a", Mode::ServerSide, &record)?;
    let b = replica(&client, "default", "replica-b", Mode::ServerSide, &record)?;
    wait_until(
        "a and b to split the space",
        Duration::from_secs(60),
        || partition(&[&a.member, &b.member]),
    )
    .await?;
    wait_until("every object reconciled", Duration::from_secs(60), || {
        record.reconciled.lock().len() == OBJECTS
    })
    .await?;
    // The server ignored the selector: whole caches, filtered before the queue.
    assert_eq!(a.member.selector().server_applied(), Some(false));
    assert_eq!(
        a.manager.informer_reader::<ConfigMap>().list().len(),
        OBJECTS
    );
    assert!(record.overlaps.lock().is_empty());
    let owned: usize = hashes
        .iter()
        .filter(|h| a.member.owns(**h) || b.member.owns(**h))
        .count();
    assert_eq!(owned, OBJECTS);
    let _ = ShardField::Uid;
    env.shutdown().await;
    Ok(())
}
