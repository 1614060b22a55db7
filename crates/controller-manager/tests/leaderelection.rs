//! Leader election over real HTTP against kcr-testenv, under a paused clock
//! (the server runs in the test's runtime, so time only moves when every
//! task waits on a timer).
//!
//! With `KCR_TEST_KUBECONFIG` set, the tests run against that cluster (the lease in a
//! namespace of the test's own) on a real clock: they then take the lease durations they
//! assert (up to a minute and a half). The two that need fault injection (refused or hanging
//! renewals) skip there, saying so.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::Duration;

use k8s_openapi::api::coordination::v1::Lease;
use kcr_controller_manager::leaderelection::{LeaderElectionConfig, LeaderElector, LeaseLock};
use kcr_testenv::{TestCluster, TestEnv};
use kube::Api;
use parking_lot::Mutex;
use tokio::task::JoinHandle;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

type TestResult = Result<(), Box<dyn std::error::Error>>;

const LEASE: &str = "kcr-test-lock";
const RETRY: Duration = Duration::from_secs(2);
const LEASE_DURATION: Duration = Duration::from_secs(15);
const RENEW_DEADLINE: Duration = Duration::from_secs(10);

/// Tracks the leaders' work across replicas: how many work at once (must
/// never exceed one) and when each started and stopped.
#[derive(Default)]
struct Work {
    working: AtomicUsize,
    overlap: AtomicBool,
    log: Mutex<Vec<(String, &'static str, Instant)>>,
}

impl Work {
    fn begin(&self, who: &str) {
        if self.working.fetch_add(1, Ordering::SeqCst) != 0 {
            self.overlap.store(true, Ordering::SeqCst);
        }
        self.log
            .lock()
            .push((who.to_owned(), "start", Instant::now()));
    }

    fn end(&self, who: &str) {
        self.log
            .lock()
            .push((who.to_owned(), "stop", Instant::now()));
        self.working.fetch_sub(1, Ordering::SeqCst);
    }

    fn at(&self, who: &str, what: &str) -> Option<Instant> {
        self.log
            .lock()
            .iter()
            .find(|(w, e, _)| w == who && *e == what)
            .map(|(_, _, t)| *t)
    }
}

struct Replica {
    elector: LeaderElector,
    stop: CancellationToken,
    task: JoinHandle<()>,
    stopped_leading: Arc<AtomicBool>,
}

/// Starts a replica named `who` on `client` (its lease in `namespace`). Its
/// leader work records itself in `work` and, once cancelled, takes
/// `wind_down` to stop.
fn replica(
    client: kube::Client,
    namespace: &str,
    who: &str,
    release: bool,
    wind_down: Duration,
    work: &Arc<Work>,
) -> Result<Replica, Box<dyn std::error::Error>> {
    let lock = LeaseLock::new(client, namespace, LEASE, who);
    let stopped_leading = Arc::new(AtomicBool::new(false));
    let stopped = stopped_leading.clone();
    let work = work.clone();
    let name = who.to_owned();
    let elector = LeaderElector::new(
        LeaderElectionConfig::new(lock)
            .name(format!("test-{who}"))
            .release_on_cancel(release)
            .on_started_leading(move |ctx| {
                let work = work.clone();
                let name = name.clone();
                async move {
                    work.begin(&name);
                    ctx.cancelled().await;
                    tokio::time::sleep(wind_down).await;
                    work.end(&name);
                }
            })
            .on_stopped_leading(move || stopped.store(true, Ordering::SeqCst)),
    )?;
    let stop = CancellationToken::new();
    let task = tokio::spawn({
        let elector = elector.clone();
        let stop = stop.clone();
        async move { elector.run(stop).await }
    });
    Ok(Replica {
        elector,
        stop,
        task,
        stopped_leading,
    })
}

/// Samples both replicas every 100 ms for the whole test: never two leaders.
fn checker(
    a: &LeaderElector,
    b: &LeaderElector,
    work: &Arc<Work>,
) -> (CancellationToken, JoinHandle<(usize, usize)>) {
    let stop = CancellationToken::new();
    let (a, b, work, token) = (a.clone(), b.clone(), work.clone(), stop.clone());
    let task = tokio::spawn(async move {
        let (mut samples, mut with_leader) = (0, 0);
        while !token.is_cancelled() {
            let leaders = usize::from(a.is_leader()) + usize::from(b.is_leader());
            assert!(leaders <= 1, "two electors lead at once");
            assert!(
                work.working.load(Ordering::SeqCst) <= 1,
                "two leaders work at once"
            );
            samples += 1;
            with_leader += usize::from(leaders == 1);
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        (samples, with_leader)
    });
    (stop, task)
}

async fn wait_until(what: &str, limit: Duration, f: impl Fn() -> bool) -> Result<Instant, String> {
    let deadline = Instant::now() + limit;
    while !f() {
        if Instant::now() > deadline {
            return Err(format!("timed out waiting for {what}"));
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    Ok(Instant::now())
}

async fn lease(client: &kube::Client, namespace: &str) -> Result<Lease, kube::Error> {
    Api::<Lease>::namespaced(client.clone(), namespace)
        .get(LEASE)
        .await
}

#[tokio::test(start_paused = true)]
async fn two_electors_should_never_lead_together_and_a_killed_leader_should_be_replaced_after_expiry()
-> TestResult {
    let env = TestCluster::start_paused("two-electors-should-never-lead").await?;
    let ns = env.namespace().to_owned();
    let work = Arc::new(Work::default());
    let a = replica(env.client(), &ns, "replica-a", false, Duration::ZERO, &work)?;
    wait_until("a leads", Duration::from_secs(5), || a.elector.is_leader()).await?;
    let b = replica(env.client(), &ns, "replica-b", false, Duration::ZERO, &work)?;
    let (check_stop, check) = checker(&a.elector, &b.elector, &work);

    // While a renews, b never takes over.
    tokio::time::sleep(Duration::from_secs(60)).await;
    assert!(a.elector.is_leader() && !b.elector.is_leader());
    assert_eq!(b.elector.get_leader(), "replica-a");
    let spec = lease(&env.client(), &ns).await?.spec.unwrap_or_default();
    assert_eq!(spec.holder_identity.as_deref(), Some("replica-a"));
    assert_eq!(spec.lease_duration_seconds, Some(15));
    assert_eq!(spec.lease_transitions, Some(0));

    // Kill a without releasing: b waits for the lease to expire by its own clock.
    let killed = Instant::now();
    a.stop.cancel();
    a.task.await?;
    assert!(a.stopped_leading.load(Ordering::SeqCst));
    let took_over =
        wait_until("b leads", Duration::from_secs(30), || b.elector.is_leader()).await?;
    let waited = took_over - killed;
    // a renewed at most one retry period before it was killed; b saw that
    // renewal at most one jittered retry period (< 2.2 periods) after it,
    // and tries at least every 2.2 periods.
    assert!(
        waited >= LEASE_DURATION - RETRY,
        "b took over {waited:?} after a was killed"
    );
    assert!(
        waited <= LEASE_DURATION + 2 * RETRY.mul_f64(2.2),
        "b took over {waited:?} after a was killed"
    );
    let spec = lease(&env.client(), &ns).await?.spec.unwrap_or_default();
    assert_eq!(spec.holder_identity.as_deref(), Some("replica-b"));
    assert_eq!(spec.lease_transitions, Some(1));

    tokio::time::sleep(Duration::from_secs(10)).await;
    check_stop.cancel();
    let (samples, with_leader) = check.await?;
    assert!(
        samples > 500 && with_leader > samples * 3 / 4,
        "{with_leader} of {samples} samples had a leader"
    );
    assert!(!work.overlap.load(Ordering::SeqCst));
    b.stop.cancel();
    b.task.await?;
    env.shutdown().await;
    Ok(())
}

#[tokio::test(start_paused = true)]
async fn with_release_on_cancel_the_other_should_lead_within_one_jittered_retry_period_once_the_work_stopped()
-> TestResult {
    let env = TestCluster::start_paused("with-release-on-cancel-the-oth").await?;
    let ns = env.namespace().to_owned();
    let work = Arc::new(Work::default());
    // a's work takes 3 s to stop once cancelled; the lease must stay held until then.
    let a = replica(
        env.client(),
        &ns,
        "replica-a",
        true,
        Duration::from_secs(3),
        &work,
    )?;
    wait_until("a leads", Duration::from_secs(5), || a.elector.is_leader()).await?;
    let b = replica(env.client(), &ns, "replica-b", false, Duration::ZERO, &work)?;
    let (check_stop, check) = checker(&a.elector, &b.elector, &work);
    tokio::time::sleep(Duration::from_secs(20)).await;

    a.stop.cancel();
    tokio::time::sleep(Duration::from_secs(1)).await;
    // Still winding down: the lease is still a's.
    assert_eq!(
        lease(&env.client(), &ns)
            .await?
            .spec
            .unwrap_or_default()
            .holder_identity
            .as_deref(),
        Some("replica-a")
    );
    assert!(!b.elector.is_leader());
    a.task.await?;
    let released = Instant::now();
    let spec = lease(&env.client(), &ns).await?.spec.unwrap_or_default();
    match spec.holder_identity.as_deref() {
        None | Some("") => assert_eq!(spec.lease_duration_seconds, Some(1)),
        Some(holder) => assert_eq!(holder, "replica-b"),
    }
    let took_over =
        wait_until("b leads", Duration::from_secs(30), || b.elector.is_leader()).await?;
    // b's next attempt comes within one jittered retry period (< 2.2 periods).
    assert!(
        took_over - released <= RETRY.mul_f64(2.2),
        "b took over {:?} after the release",
        took_over - released
    );
    let a_stopped = work
        .at("replica-a", "stop")
        .ok_or("a's work never stopped")?;
    let b_started = work
        .at("replica-b", "start")
        .ok_or("b's work never started")?;
    assert!(a_stopped <= b_started);

    check_stop.cancel();
    check.await?;
    assert!(!work.overlap.load(Ordering::SeqCst));
    b.stop.cancel();
    b.task.await?;
    env.shutdown().await;
    Ok(())
}

#[tokio::test(start_paused = true)]
async fn a_leader_whose_renewals_are_refused_should_stop_its_work_before_its_lease_expires()
-> TestResult {
    if TestCluster::skip_on_real_cluster(
        "a_leader_whose_renewals_are_refused_should_stop_its_work_before_its_lease_expires",
        "fault injection (refusing the leader's renewals)",
    ) {
        return Ok(());
    }
    let env = TestEnv::start().await?;
    let work = Arc::new(Work::default());
    let a = replica(
        env.client_with_user_agent("replica-a")?,
        "default",
        "replica-a",
        false,
        Duration::ZERO,
        &work,
    )?;
    wait_until("a leads", Duration::from_secs(5), || a.elector.is_leader()).await?;
    let b = replica(
        env.client_with_user_agent("replica-b")?,
        "default",
        "replica-b",
        false,
        Duration::ZERO,
        &work,
    )?;
    let (check_stop, check) = checker(&a.elector, &b.elector, &work);
    tokio::time::sleep(Duration::from_secs(20)).await;

    let refused = Instant::now();
    env.faults().refuse_updates_from_user_agent("replica-a");
    // a stops by itself (run returns), at the renew deadline of the next
    // renewal round (which starts within one retry period).
    a.task.await?;
    let a_stopped = work
        .at("replica-a", "stop")
        .ok_or("a's work never stopped")?;
    assert!(
        a_stopped - refused <= RETRY + RENEW_DEADLINE,
        "a stopped {:?} after the refusal",
        a_stopped - refused
    );
    assert!(a.stopped_leading.load(Ordering::SeqCst));

    let took_over =
        wait_until("b leads", Duration::from_secs(30), || b.elector.is_leader()).await?;
    let b_started = work
        .at("replica-b", "start")
        .ok_or("b's work never started")?;
    assert!(b_started >= took_over - Duration::from_millis(100));
    // a's last successful renewal was at most one retry period before the
    // refusal; b cannot take over before that renewal plus the lease duration.
    assert!(
        b_started - refused >= LEASE_DURATION - RETRY,
        "b took over {:?} after the refusal",
        b_started - refused
    );
    assert!(b_started > a_stopped);

    check_stop.cancel();
    check.await?;
    assert!(!work.overlap.load(Ordering::SeqCst));
    b.stop.cancel();
    b.task.await?;
    Ok(())
}

#[tokio::test(start_paused = true)]
async fn electors_should_report_each_new_leader() -> TestResult {
    let env = TestCluster::start_paused("electors-should-report-each-ne").await?;
    let ns = env.namespace().to_owned();
    let seen = Arc::new(Mutex::new(Vec::new()));
    let seen2 = seen.clone();
    let lock = LeaseLock::new(env.client(), &ns, LEASE, "solo");
    let elector = LeaderElector::new(
        LeaderElectionConfig::new(lock)
            .release_on_cancel(true)
            .on_new_leader(move |id| seen2.lock().push(id)),
    )?;
    let stop = CancellationToken::new();
    let task = tokio::spawn({
        let (elector, stop) = (elector.clone(), stop.clone());
        async move { elector.run(stop).await }
    });
    wait_until("solo leads", Duration::from_secs(5), || elector.is_leader()).await?;
    stop.cancel();
    task.await?;
    tokio::time::sleep(Duration::from_millis(10)).await;
    assert_eq!(*seen.lock(), vec!["solo".to_owned(), String::new()]);
    assert_eq!(elector.get_leader(), "");
    env.shutdown().await;
    Ok(())
}

#[tokio::test(start_paused = true)]
async fn a_leader_whose_renewals_hang_should_stop_at_the_renew_deadline() -> TestResult {
    if TestCluster::skip_on_real_cluster(
        "a_leader_whose_renewals_hang_should_stop_at_the_renew_deadline",
        "fault injection (a server that hangs)",
    ) {
        return Ok(());
    }
    let env = TestEnv::start().await?;
    let work = Arc::new(Work::default());
    let a = replica(
        env.client_with_user_agent("replica-a")?,
        "default",
        "replica-a",
        false,
        Duration::ZERO,
        &work,
    )?;
    wait_until("a leads", Duration::from_secs(5), || a.elector.is_leader()).await?;
    tokio::time::sleep(Duration::from_secs(7)).await;

    // Every request now takes a minute: the renewal in flight must be cut
    // off at the deadline instead of keeping a leading.
    let hung = Instant::now();
    env.faults().set_latency(Duration::from_secs(60));
    a.task.await?;
    let stopped = work
        .at("replica-a", "stop")
        .ok_or("a's work never stopped")?;
    assert!(
        stopped - hung <= RETRY + RENEW_DEADLINE,
        "a stopped {:?} after the server hung",
        stopped - hung
    );
    assert!(!a.elector.is_leader());
    Ok(())
}

#[tokio::test(start_paused = true)]
async fn a_leader_that_sees_another_holder_should_keep_trying_until_its_renew_deadline()
-> TestResult {
    let env = TestCluster::start_paused("a-leader-that-sees-another-hol").await?;
    let ns = env.namespace().to_owned();
    let work = Arc::new(Work::default());
    let a = replica(env.client(), &ns, "replica-a", false, Duration::ZERO, &work)?;
    wait_until("a leads", Duration::from_secs(5), || a.elector.is_leader()).await?;
    tokio::time::sleep(Duration::from_secs(5)).await;

    // Someone else writes itself in (a forced takeover).
    let api = Api::<Lease>::namespaced(env.client(), &ns);
    let mut taken = api.get(LEASE).await?;
    if let Some(spec) = taken.spec.as_mut() {
        spec.holder_identity = Some("intruder".into());
    }
    api.replace(LEASE, &Default::default(), &taken).await?;
    let written = Instant::now();
    a.task.await?;
    let stopped = work
        .at("replica-a", "stop")
        .ok_or("a's work never stopped")?;
    // As client-go: the renewal round that first sees the other holder
    // (within one retry period) retries until its renew deadline.
    let after = stopped - written;
    assert!(
        after > RETRY && after <= RETRY + RENEW_DEADLINE,
        "a stopped {after:?} after the takeover"
    );
    assert_eq!(a.elector.get_leader(), "intruder");
    env.shutdown().await;
    Ok(())
}

#[tokio::test(start_paused = true)]
async fn a_lease_lock_should_label_the_lease_it_creates_and_keep_the_labels_on_update() -> TestResult
{
    let env = TestCluster::start_paused("a-lease-lock-should-label-the").await?;
    let ns = env.namespace().to_owned();
    let lock = LeaseLock::new(env.client(), &ns, LEASE, "labelled")
        .labels([("app", "kcr-test"), ("tier", "control")]);
    let elector = LeaderElector::new(LeaderElectionConfig::new(lock))?;
    let stop = CancellationToken::new();
    let task = tokio::spawn({
        let (elector, stop) = (elector.clone(), stop.clone());
        async move { elector.run(stop).await }
    });
    wait_until("labelled leads", Duration::from_secs(5), || {
        elector.is_leader()
    })
    .await?;
    let created = lease(&env.client(), &ns).await?;
    let labels = created.metadata.labels.clone().unwrap_or_default();
    assert_eq!(labels.get("app").map(String::as_str), Some("kcr-test"));
    assert_eq!(labels.get("tier").map(String::as_str), Some("control"));

    // Someone changes one label and adds another; the next renewal writes
    // the lock's own label back and keeps the other one.
    let api = Api::<Lease>::namespaced(env.client(), &ns);
    let mut edited = created;
    if let Some(l) = edited.metadata.labels.as_mut() {
        l.insert("tier".into(), "edited".into());
        l.insert("owner".into(), "someone".into());
    }
    api.replace(LEASE, &Default::default(), &edited).await?;
    tokio::time::sleep(RETRY * 2).await;
    let labels = lease(&env.client(), &ns)
        .await?
        .metadata
        .labels
        .unwrap_or_default();
    assert_eq!(labels.get("tier").map(String::as_str), Some("control"));
    assert_eq!(labels.get("owner").map(String::as_str), Some("someone"));
    let spec = lease(&env.client(), &ns).await?.spec.unwrap_or_default();
    assert_eq!(spec.holder_identity.as_deref(), Some("labelled"));
    stop.cancel();
    task.await?;
    env.shutdown().await;
    Ok(())
}

#[tokio::test(start_paused = true)]
async fn the_lease_duration_should_be_written_in_whole_seconds_truncated() -> TestResult {
    let env = TestCluster::start_paused("the-lease-duration-should-be-w").await?;
    let ns = env.namespace().to_owned();
    let lock = LeaseLock::new(env.client(), &ns, LEASE, "truncated");
    let elector = LeaderElector::new(
        LeaderElectionConfig::new(lock).lease_duration(Duration::from_millis(15_900)),
    )?;
    let stop = CancellationToken::new();
    let task = tokio::spawn({
        let (elector, stop) = (elector.clone(), stop.clone());
        async move { elector.run(stop).await }
    });
    wait_until("truncated leads", Duration::from_secs(5), || {
        elector.is_leader()
    })
    .await?;
    let spec = lease(&env.client(), &ns).await?.spec.unwrap_or_default();
    assert_eq!(spec.lease_duration_seconds, Some(15));
    stop.cancel();
    task.await?;
    env.shutdown().await;
    Ok(())
}

/// Every change of the test lease a watch sees: when, the holder, the
/// resource version.
type LeaseLog = Arc<Mutex<Vec<(Instant, String, String)>>>;

async fn watch_lease(
    client: &kube::Client,
    namespace: &str,
) -> Result<(LeaseLog, JoinHandle<()>), kube::Error> {
    use futures::StreamExt;
    use kube::api::{ListParams, WatchEvent, WatchParams};
    let api = Api::<Lease>::namespaced(client.clone(), namespace);
    let fields = format!("metadata.name={LEASE}");
    let listed = api.list(&ListParams::default().fields(&fields)).await?;
    let from = listed.metadata.resource_version.unwrap_or_default();
    let mut events = api
        .watch(&WatchParams::default().fields(&fields), &from)
        .await?
        .boxed();
    let log = LeaseLog::default();
    let task = tokio::spawn({
        let log = log.clone();
        async move {
            while let Some(Ok(event)) = events.next().await {
                if let WatchEvent::Added(lease) | WatchEvent::Modified(lease) = event {
                    let holder = lease
                        .spec
                        .and_then(|s| s.holder_identity)
                        .unwrap_or_default();
                    let rv = lease.metadata.resource_version.unwrap_or_default();
                    log.lock().push((Instant::now(), holder, rv));
                }
            }
        }
    });
    Ok((log, task))
}

/// client-go 1.37's release retries a conflict: cancelling a leader cuts
/// its renewal off on the client, but the server may still apply it, and so
/// bump the lease's resource version after the release has read it. The
/// release's update then gets 409 and must read again and retry, or the
/// lease stays held until it expires.
///
/// kcr-testenv drops a request whose client went away while the latency
/// fault holds it, so the late renewal is played by a write of the test's
/// own (what a renewal writes: the same holder, a new renew time), timed
/// with latency faults on a paused clock: the release's read is applied at
/// +1.5 s, the racing write at +2 s, the release's first update at +3 s
/// (409), its second read and update at +4.5 s and +6 s.
#[tokio::test(start_paused = true)]
async fn a_release_racing_a_late_renewal_should_retry_its_conflict_and_release() -> TestResult {
    use kube::api::{Patch, PatchParams};
    if TestCluster::skip_on_real_cluster(
        "a_release_racing_a_late_renewal_should_retry_its_conflict_and_release",
        "fault injection (latency that orders the release's requests and a racing write)",
    ) {
        return Ok(());
    }
    let env = TestEnv::start().await?;
    let (log, watcher) = watch_lease(&env.client(), "default").await?;
    let work = Arc::new(Work::default());
    let a = replica(
        env.client_with_user_agent("replica-a")?,
        "default",
        "replica-a",
        true,
        Duration::ZERO,
        &work,
    )?;
    wait_until("a leads", Duration::from_secs(10), || a.elector.is_leader()).await?;
    // Between two renewals (every RETRY after the previous one).
    tokio::time::sleep(RETRY / 2).await;
    env.faults().set_latency(Duration::from_millis(1500));
    let cancelled = Instant::now();
    let seen_before_cancel = log.lock().len();
    a.stop.cancel();
    let racer = tokio::spawn({
        let api = Api::<Lease>::namespaced(env.client(), "default");
        async move {
            tokio::time::sleep(Duration::from_millis(500)).await;
            let renewal = serde_json::json!({"spec": {
                "holderIdentity": "replica-a",
                "renewTime": k8s_openapi::apimachinery::pkg::apis::meta::v1::MicroTime(
                    k8s_openapi::jiff::Timestamp::now()
                ),
            }});
            api.patch(LEASE, &PatchParams::default(), &Patch::Merge(&renewal))
                .await
                .map(drop)
        }
    });
    tokio::time::timeout(RENEW_DEADLINE + RETRY, a.task).await??;
    racer.await??;
    env.faults().clear();

    let after: Vec<_> = log.lock()[seen_before_cancel..]
        .iter()
        .map(|(t, holder, _)| (*t - cancelled, holder.clone()))
        .collect();
    // The racing write landed between the release's read and its first
    // update; the release came after a second read.
    let secs = Duration::from_secs_f64;
    assert_eq!(
        after,
        [
            (secs(2.0), "replica-a".to_owned()),
            (secs(6.0), String::new())
        ],
        "lease changes after the cancel"
    );
    let lease = lease(&env.client(), "default").await?;
    let spec = lease.spec.ok_or("no spec")?;
    assert_eq!(spec.holder_identity.as_deref().unwrap_or_default(), "");
    assert_eq!(spec.lease_duration_seconds, Some(1));
    assert!(a.stopped_leading.load(Ordering::SeqCst));
    watcher.abort();
    Ok(())
}
