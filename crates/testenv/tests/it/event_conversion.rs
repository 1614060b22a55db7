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
