//! core/v1 and events.k8s.io/v1 Events are one resource: an Event written through one API
//! reads, lists, patches and selects through the other, as kube-apiserver converts them.

use k8s_openapi::api::core::v1::Event as CoreEvent;
use k8s_openapi::api::events::v1::Event;
use kcr_testenv::TestEnv;
use kube::api::{Api, ListParams, Patch, PatchParams, PostParams};
use serde_json::json;

#[tokio::test]
async fn an_events_v1_event_should_read_through_core_v1_with_its_fields_converted() {
    let env = TestEnv::start().await.unwrap();
    let events: Api<Event> = Api::namespaced(env.client(), "default");
    let core: Api<CoreEvent> = Api::namespaced(env.client(), "default");
    let e: Event = serde_json::from_value(json!({
        "metadata": {"name": "e1"},
        "eventTime": "2026-01-01T00:00:00.000000Z",
        "reportingController": "example.com/ctrl", "reportingInstance": "ctrl-1",
        "action": "Sync", "reason": "Synced", "type": "Normal", "note": "all good",
        "regarding": {"kind": "ConfigMap", "namespace": "default", "name": "cm1", "apiVersion": "v1"}
    }))
    .unwrap();
    events.create(&PostParams::default(), &e).await.unwrap();

    let read = core.get("e1").await.unwrap();
    assert_eq!(read.message.as_deref(), Some("all good"));
    assert_eq!(
        read.reporting_component.as_deref(),
        Some("example.com/ctrl")
    );
    assert_eq!(read.involved_object.name.as_deref(), Some("cm1"));
    assert_eq!(read.action.as_deref(), Some("Sync"));

    // A patch through events.k8s.io/v1 changes the one stored Event.
    events
        .patch(
            "e1",
            &PatchParams::default(),
            &Patch::Merge(
                json!({"series": {"count": 2, "lastObservedTime": "2026-01-01T00:00:05.000000Z"}}),
            ),
        )
        .await
        .unwrap();
    let read = core.get("e1").await.unwrap();
    assert_eq!(read.series.and_then(|s| s.count), Some(2));

    // Field selectors use each version's own field labels.
    let by_regarding = events
        .list(&ListParams::default().fields("regarding.name=cm1"))
        .await
        .unwrap();
    assert_eq!(by_regarding.items.len(), 1);
    assert_eq!(by_regarding.items[0].note.as_deref(), Some("all good"));
    let by_involved = core
        .list(&ListParams::default().fields("involvedObject.name=cm1"))
        .await
        .unwrap();
    assert_eq!(by_involved.items.len(), 1);
}

#[tokio::test]
async fn an_events_v1_events_note_should_be_immutable_but_its_series_not() {
    let env = TestEnv::start().await.unwrap();
    let events: Api<Event> = Api::namespaced(env.client(), "default");
    let core: Api<CoreEvent> = Api::namespaced(env.client(), "default");
    let e: Event = serde_json::from_value(json!({
        "metadata": {"name": "e2"},
        "eventTime": "2026-01-01T00:00:00.000000Z",
        "reportingController": "example.com/ctrl", "reportingInstance": "ctrl-1",
        "action": "Sync", "reason": "Failed", "type": "Warning", "note": "attempt 10 failed",
        "regarding": {"kind": "ConfigMap", "namespace": "default", "name": "cm1", "apiVersion": "v1"}
    }))
    .unwrap();
    events.create(&PostParams::default(), &e).await.unwrap();

    // kube-apiserver's ValidateEventUpdate: the note (the internal Event's `message`) cannot
    // change through events.k8s.io/v1, by patch or by update.
    let series = json!({"count": 2, "lastObservedTime": "2026-01-01T00:00:05.000000Z"});
    let err = events
        .patch(
            "e2",
            &PatchParams::default(),
            &Patch::Merge(json!({"series": series, "note": "attempt 11 failed"})),
        )
        .await
        .unwrap_err();
    let kube::Error::Api(status) = err else {
        panic!("{err}")
    };
    assert_eq!((status.code, status.reason.as_str()), (422, "Invalid"));
    assert_eq!(
        status.message,
        "Event \"e2\" is invalid: message: Invalid value: \"attempt 11 failed\": field is immutable"
    );
    let mut changed = events.get("e2").await.unwrap();
    changed.note = Some("other".into());
    assert!(matches!(
        events.replace("e2", &PostParams::default(), &changed).await,
        Err(kube::Error::Api(s)) if s.code == 422
    ));

    // The series alone (client-go's patch of a repeat) is accepted; core/v1 may still change
    // its message (no strict validation for the legacy API).
    let counted = events
        .patch(
            "e2",
            &PatchParams::default(),
            &Patch::Strategic(json!({"series": series})),
        )
        .await
        .unwrap();
    assert_eq!(counted.series.map(|s| s.count), Some(2));
    assert_eq!(counted.note.as_deref(), Some("attempt 10 failed"));
    core.patch(
        "e2",
        &PatchParams::default(),
        &Patch::Merge(json!({"message": "through core/v1"})),
    )
    .await
    .unwrap();
}
