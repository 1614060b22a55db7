//! The event recorder against kcr-testenv: events land on the server,
//! repeats are counted, similar events aggregated, spam dropped.
//!
//! With `KCR_TEST_KUBECONFIG` set, the tests run against that cluster in a namespace of their
//! own, on the wall clock: those of the recorder's filters then wait out the minutes they
//! assert (two for the aggregation, five for the spam filter's refill). Those that need fault
//! injection skip there, saying so.

use std::time::Duration;

use k8s_openapi::api::core::v1::{ConfigMap, Event as CoreEvent};
use k8s_openapi::api::events::v1::Event;
use kcr_controller_manager::record::{EventRecorder, EventType, EventsApi, Reporter};
use kcr_testenv::{TestCluster, TestEnv};
use kube::api::{ListParams, PostParams};
use kube::{Api, Resource};

type TestResult = Result<(), Box<dyn std::error::Error>>;

async fn config_map(
    client: &kube::Client,
    namespace: &str,
    name: &str,
) -> Result<ConfigMap, kube::Error> {
    let mut cm = ConfigMap::default();
    cm.metadata.name = Some(name.into());
    Api::<ConfigMap>::namespaced(client.clone(), namespace)
        .create(&PostParams::default(), &cm)
        .await
}

fn reporter() -> Reporter {
    Reporter {
        controller: "kcr-test".into(),
        instance: Some("replica-1".into()),
    }
}

/// The events.k8s.io/v1 Events of [`reporter`] (a real cluster's controllers may write others
/// into the namespace).
async fn events_v1(client: &kube::Client, namespace: &str) -> Result<Vec<Event>, kube::Error> {
    events_v1_from(client, namespace, &reporter().controller).await
}

/// The events.k8s.io/v1 Events that `controller` reported in `namespace`.
async fn events_v1_from(
    client: &kube::Client,
    namespace: &str,
    controller: &str,
) -> Result<Vec<Event>, kube::Error> {
    let mut events = Api::<Event>::namespaced(client.clone(), namespace)
        .list(&ListParams::default())
        .await?
        .items;
    events.retain(|e| e.reporting_controller.as_deref() == Some(controller));
    Ok(events)
}

#[tokio::test(start_paused = true)]
async fn repeats_of_an_event_should_become_one_events_v1_event_with_a_series() -> TestResult {
    let env = TestCluster::start_paused("repeats-of-an-event-should-bec").await?;
    let cm = config_map(&env.client(), env.namespace(), "settings").await?;
    let recorder = EventRecorder::new(env.client(), reporter())?;
    for _ in 0..5 {
        recorder.event_for(&cm, EventType::Normal, "Synced", "applied");
        tokio::time::sleep(Duration::from_secs(1)).await;
    }
    recorder.flush().await;
    let events = events_v1(&env.client(), env.namespace()).await?;
    assert_eq!(events.len(), 1, "{events:?}");
    let e = &events[0];
    assert_eq!(e.series.as_ref().map(|s| s.count), Some(5));
    assert_eq!(e.reason.as_deref(), Some("Synced"));
    assert_eq!(e.note.as_deref(), Some("applied"));
    assert_eq!(e.type_.as_deref(), Some("Normal"));
    assert_eq!(e.reporting_controller.as_deref(), Some("kcr-test"));
    assert_eq!(e.reporting_instance.as_deref(), Some("replica-1"));
    let regarding = e.regarding.clone().unwrap_or_default();
    assert_eq!(regarding.name.as_deref(), Some("settings"));
    assert_eq!(regarding.uid, cm.meta().uid);
    assert!(
        e.metadata
            .name
            .as_deref()
            .is_some_and(|n| n.starts_with("settings."))
    );
    env.shutdown().await;
    Ok(())
}

#[tokio::test(start_paused = true)]
async fn similar_events_should_be_aggregated_on_the_server() -> TestResult {
    let env = TestCluster::start_paused("similar-events-should-be-aggre").await?;
    let cm = config_map(&env.client(), env.namespace(), "settings").await?;
    let recorder = EventRecorder::new(env.client(), reporter())?;
    for i in 1..=12 {
        recorder.event_for(
            &cm,
            EventType::Warning,
            "SyncFailed",
            &format!("attempt {i} failed"),
        );
        tokio::time::sleep(Duration::from_secs(10)).await;
    }
    recorder.flush().await;
    let events = events_v1(&env.client(), env.namespace()).await?;
    // Nine individual events, then one aggregate counting the 10th to 12th. Its note is that
    // of the 10th: the 11th and 12th only count in its series, as a note cannot change (the
    // server refuses it, as kube-apiserver does, and the aggregate would stop counting).
    assert_eq!(events.len(), 10, "{events:?}");
    let aggregated: Vec<_> = events
        .iter()
        .filter(|e| {
            e.note
                .as_deref()
                .is_some_and(|n| n.starts_with("(combined from similar events): "))
        })
        .collect();
    assert_eq!(aggregated.len(), 1);
    assert_eq!(
        aggregated[0].note.as_deref(),
        Some("(combined from similar events): attempt 10 failed")
    );
    assert_eq!(aggregated[0].series.as_ref().map(|s| s.count), Some(3));
    env.shutdown().await;
    Ok(())
}

#[tokio::test(start_paused = true)]
async fn spam_about_one_object_should_be_capped_at_a_burst_then_one_per_five_minutes() -> TestResult
{
    let env = TestCluster::start_paused("spam-about-one-object-should-b").await?;
    let ns = env.namespace();
    let cm = config_map(&env.client(), ns, "noisy").await?;
    let quiet = config_map(&env.client(), ns, "quiet").await?;
    let recorder = EventRecorder::new(env.client(), reporter())?;
    for _ in 0..40 {
        recorder.event_for(&cm, EventType::Warning, "Flapping", "again");
    }
    recorder.event_for(&quiet, EventType::Normal, "Synced", "ok");
    recorder.flush().await;
    let count = |events: &[Event], name: &str| {
        events
            .iter()
            .find(|e| e.regarding.as_ref().and_then(|r| r.name.as_deref()) == Some(name))
            .map(|e| e.series.as_ref().map_or(1, |s| s.count))
    };
    let events = events_v1(&env.client(), ns).await?;
    assert_eq!(count(&events, "noisy"), Some(25));
    assert_eq!(count(&events, "quiet"), Some(1));

    // On the wall clock too: the budget refills by one event in 300 s, and the two events
    // below are a moment apart, so only the first gets one.
    tokio::time::sleep(Duration::from_secs(301)).await;
    recorder.event_for(&cm, EventType::Warning, "Flapping", "again");
    recorder.event_for(&cm, EventType::Warning, "Flapping", "again");
    recorder.flush().await;
    // One more write after five minutes, carrying the true count.
    assert_eq!(
        count(&events_v1(&env.client(), ns).await?, "noisy"),
        Some(41)
    );
    env.shutdown().await;
    Ok(())
}

#[tokio::test(start_paused = true)]
async fn core_v1_events_should_count_repeats() -> TestResult {
    let env = TestCluster::start_paused("core-v1-events-should-count-re").await?;
    let cm = config_map(&env.client(), env.namespace(), "settings").await?;
    let recorder = EventRecorder::builder(env.client(), reporter())
        .api(EventsApi::CoreV1)
        .build()?;
    for _ in 0..3 {
        recorder.event_for(&cm, EventType::Normal, "Synced", "applied");
    }
    recorder.flush().await;
    let mut events = Api::<CoreEvent>::namespaced(env.client(), env.namespace())
        .list(&ListParams::default())
        .await?
        .items;
    events.retain(|e| e.reporting_component.as_deref() == Some(reporter().controller.as_str()));
    assert_eq!(events.len(), 1, "{events:?}");
    assert_eq!(events[0].count, Some(3));
    assert_eq!(events[0].message.as_deref(), Some("applied"));
    assert_eq!(events[0].involved_object.name.as_deref(), Some("settings"));
    assert_eq!(
        events[0]
            .source
            .as_ref()
            .and_then(|s| s.component.as_deref()),
        Some("kcr-test")
    );
    env.shutdown().await;
    Ok(())
}

#[tokio::test(start_paused = true)]
async fn a_recorder_should_never_block_its_caller_and_drop_what_overflows() -> TestResult {
    if TestCluster::skip_on_real_cluster(
        "a_recorder_should_never_block_its_caller_and_drop_what_overflows",
        "fault injection (a slow server)",
    ) {
        return Ok(());
    }
    let env = TestEnv::start().await?;
    let cm = config_map(&env.client(), "default", "settings").await?;
    let recorder = EventRecorder::builder(env.client(), reporter())
        .queue_size(4)
        .build()?;
    env.faults().set_latency(Duration::from_secs(1));
    // Far more events than the queue holds, while every write is slow: the
    // calls return at once and the overflow is dropped.
    let before = tokio::time::Instant::now();
    for i in 0..100 {
        recorder.event_for(&cm, EventType::Normal, "Burst", &format!("event {i}"));
    }
    assert_eq!(before.elapsed(), Duration::ZERO);
    recorder.flush().await;
    let written = events_v1(&env.client(), "default").await?.len();
    assert!((1..=6).contains(&written), "{written} events written");
    Ok(())
}

#[tokio::test(start_paused = true)]
async fn a_refused_write_should_be_dropped_without_failing_anyone() -> TestResult {
    if TestCluster::skip_on_real_cluster(
        "a_refused_write_should_be_dropped_without_failing_anyone",
        "fault injection (refused writes)",
    ) {
        return Ok(());
    }
    let env = TestEnv::start().await?;
    let cm = config_map(&env.client(), "default", "settings").await?;
    let recorder = EventRecorder::new(env.client_with_user_agent("recorder")?, reporter())?;
    env.faults().refuse_updates_from_user_agent("recorder");
    recorder.event_for(&cm, EventType::Warning, "Refused", "nobody will see this");
    let before = tokio::time::Instant::now();
    recorder.flush().await;
    // An error status from the server is not retried.
    assert!(before.elapsed() < Duration::from_secs(1));
    assert!(events_v1(&env.client(), "default").await?.is_empty());
    env.faults().clear();
    recorder.event_for(&cm, EventType::Normal, "Accepted", "this one lands");
    recorder.flush().await;
    assert_eq!(events_v1(&env.client(), "default").await?.len(), 1);
    Ok(())
}

#[tokio::test(start_paused = true)]
async fn the_manager_should_hand_out_recorders_reporting_as_its_replica() -> TestResult {
    let env = TestCluster::start_paused("the-manager-should-hand-out-re").await?;
    let cm = config_map(&env.client(), env.namespace(), "settings").await?;
    let manager = kcr_controller_manager::Manager::new(
        env.client(),
        kcr_controller_manager::Options::default().leader_election_identity("replica-7"),
    )?;
    let recorder = manager.event_recorder("foo-controller")?;
    recorder.event_for(&cm, EventType::Normal, "Created", "made it");
    recorder.flush().await;
    let events = events_v1_from(&env.client(), env.namespace(), "foo-controller").await?;
    assert_eq!(events.len(), 1);
    assert_eq!(events[0].reporting_instance.as_deref(), Some("replica-7"));
    env.shutdown().await;
    Ok(())
}

#[tokio::test(start_paused = true)]
async fn a_manager_should_record_leader_election_events_on_its_lease() -> TestResult {
    let env = TestCluster::start_paused("a-manager-should-record-leader").await?;
    let manager = kcr_controller_manager::Manager::new(
        env.client(),
        kcr_controller_manager::Options::default()
            .metrics_bind_address("0")
            .leader_election_namespace(env.namespace())
            .leader_election("events-lock")
            .leader_election_identity("replica-9"),
    )?;
    let (stop_tx, stop_rx) = tokio::sync::oneshot::channel::<()>();
    let m = manager.clone();
    let task = tokio::spawn(async move {
        m.start(async move {
            let _ = stop_rx.await;
        })
        .await
    });
    tokio::time::timeout(Duration::from_secs(5), manager.elected()).await?;
    let _ = stop_tx.send(());
    task.await??;
    let notes = |events: Vec<Event>| -> Vec<String> {
        events
            .into_iter()
            .filter(|e| {
                e.regarding.as_ref().and_then(|r| r.kind.as_deref()) == Some("Lease")
                    && e.regarding.as_ref().and_then(|r| r.name.as_deref()) == Some("events-lock")
                    && e.reason.as_deref() == Some("LeaderElection")
            })
            .filter_map(|e| e.note)
            .collect()
    };
    let mut seen = Vec::new();
    for _ in 0..50 {
        seen = notes(events_v1_from(&env.client(), env.namespace(), "replica-9").await?);
        if seen.len() == 2 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    seen.sort();
    assert_eq!(
        seen,
        vec!["replica-9 became leader", "replica-9 stopped leading"]
    );
    env.shutdown().await;
    Ok(())
}
