//! Metadata-only informers (client-go's `metadatainformer`) over real HTTP, against kcr-testenv
//! or the real cluster of `KCR_TEST_KUBECONFIG`: they sync from a streaming list of
//! `PartialObjectMetadata`, see adds, updates and deletes with the objects' labels, annotations
//! and owner references, in protobuf (the default) and in JSON, and keep a cache of their own
//! beside the full informer of the same kind.

mod support;

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use k8s_openapi::ByteString;
use k8s_openapi::api::core::v1::Secret;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::OwnerReference;
use kcr_informer::{InformerKey, SharedInformerFactory, WireFormat};
use kube::api::{Api, ObjectMeta, Patch, PatchParams, PostParams};
use kube::core::PartialObjectMeta;
use serde_json::json;
use tokio_util::sync::CancellationToken;

use support::{Call, Recorder, eventually, start_cluster};

fn secret(name: &str) -> Secret {
    let mut labels = support::own_labels();
    labels.insert("tier".into(), "db".into());
    Secret {
        metadata: ObjectMeta {
            name: Some(name.into()),
            labels: Some(labels),
            annotations: Some([("note".to_owned(), "first".to_owned())].into()),
            ..ObjectMeta::default()
        },
        data: Some(BTreeMap::from([(
            "password".to_owned(),
            ByteString(vec![b'x'; 4096]),
        )])),
        ..Secret::default()
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_metadata_informer_should_sync_and_see_changes_with_labels_annotations_and_owners() {
    let env = start_cluster("metadata-informer").await;
    let ns = env.namespace().to_owned();
    let secrets: Api<Secret> = Api::namespaced(env.client(), &ns);
    let owner = support::create(&Api::namespaced(env.client(), &ns), "owner", "0").await;
    for (i, format) in [WireFormat::Protobuf, WireFormat::Json]
        .into_iter()
        .enumerate()
    {
        let name = format!("s{i}");
        let key = format!("{ns}/{name}");
        secrets
            .create(&PostParams::default(), &secret(&name))
            .await
            .unwrap_or_else(|e| panic!("{e}"));

        let factory = SharedInformerFactory::new(env.client(), Duration::ZERO)
            .label_selector(support::OWN)
            .wire_format(format);
        let metadata = factory.namespaced_metadata_informer::<Secret>(&ns);
        assert!(
            Arc::ptr_eq(
                &metadata.get_indexer(),
                &factory
                    .namespaced_informer::<PartialObjectMeta<Secret>>(&ns)
                    .get_indexer()
            ),
            "metadata_informer::<K>() is informer::<PartialObjectMeta<K>>()"
        );
        // The full informer of the kind is another informer, with a cache of its own.
        let full = factory.namespaced_informer::<Secret>(&ns);
        let recorder = Recorder::new();
        metadata
            .add_event_handler(recorder.clone())
            .unwrap_or_else(|e| panic!("{e}"));
        factory.start();
        let synced = factory.wait_for_cache_sync(&CancellationToken::new()).await;
        let metadata_key = InformerKey {
            group: String::new(),
            version: "v1".into(),
            plural: "secrets".into(),
            namespace: Some(ns.clone()),
            dynamic: false,
            metadata: true,
        };
        assert_eq!(synced.len(), 2, "{synced:?}");
        assert_eq!(synced.get(&metadata_key), Some(&true), "{synced:?}");
        assert_eq!(
            metadata_key.to_string(),
            format!("secrets/v1 in {ns} (metadata)")
        );

        // The initial list: the metadata, not the data, which the full informer has.
        let cached = metadata.lister().namespaced(&ns).get(&name).unwrap();
        assert_eq!(cached.metadata.labels.as_ref().unwrap()["tier"], "db");
        assert_eq!(
            cached.metadata.annotations.as_ref().unwrap()["note"],
            "first"
        );
        assert!(
            cached.metadata.managed_fields.is_none(),
            "dropped by default"
        );
        let whole = full.lister().namespaced(&ns).get(&name).unwrap();
        assert_eq!(whole.data.as_ref().unwrap()["password"].0.len(), 4096);
        assert_eq!(cached.metadata.uid, whole.metadata.uid);
        assert!(matches!(
            recorder.calls_for(&key)[..],
            [Call::Add { initial: true, .. }]
        ));

        // An update of labels, annotations and owner references.
        let patched = secrets
            .patch(
                &name,
                &PatchParams::default(),
                &Patch::Merge(json!({"metadata": {
                    "labels": {"tier": "cache"},
                    "annotations": {"note": "second"},
                    "ownerReferences": [{
                        "apiVersion": "v1", "kind": "ConfigMap", "name": "owner",
                        "uid": owner.metadata.uid.clone().unwrap(),
                    }],
                }})),
            )
            .await
            .unwrap_or_else(|e| panic!("{e}"));
        let rv = patched.metadata.resource_version.clone();
        eventually("the metadata update", 5, || {
            metadata
                .lister()
                .namespaced(&ns)
                .get(&name)
                .is_some_and(|o| o.metadata.resource_version == rv)
        })
        .await;
        let cached = metadata.lister().namespaced(&ns).get(&name).unwrap();
        assert_eq!(cached.metadata.labels.as_ref().unwrap()["tier"], "cache");
        assert_eq!(
            cached.metadata.annotations.as_ref().unwrap()["note"],
            "second"
        );
        let owners: &[OwnerReference] = cached.metadata.owner_references.as_deref().unwrap();
        assert_eq!(
            (owners[0].kind.as_str(), owners[0].name.as_str()),
            ("ConfigMap", "owner")
        );
        assert_eq!(owners[0].uid, owner.metadata.uid.clone().unwrap());

        // A change of the data alone reaches a metadata informer too (a new resourceVersion).
        let mut changed = secrets.get(&name).await.unwrap_or_else(|e| panic!("{e}"));
        changed.data = Some(BTreeMap::from([(
            "password".to_owned(),
            ByteString(b"new".to_vec()),
        )]));
        let replaced = secrets
            .replace(&name, &PostParams::default(), &changed)
            .await
            .unwrap_or_else(|e| panic!("{e}"));
        let rv = replaced.metadata.resource_version.clone();
        eventually("the data update", 5, || {
            metadata
                .lister()
                .namespaced(&ns)
                .get(&name)
                .is_some_and(|o| o.metadata.resource_version == rv)
        })
        .await;

        // A delete.
        secrets
            .delete(&name, &Default::default())
            .await
            .unwrap_or_else(|e| panic!("{e}"));
        eventually("the delete", 5, || {
            metadata.lister().namespaced(&ns).get(&name).is_none()
        })
        .await;
        eventually("the delete handled", 5, || {
            recorder.calls_for(&key).len() == 4
        })
        .await;
        let calls = recorder.calls_for(&key);
        assert!(
            matches!(
                calls[..],
                [
                    Call::Add { initial: true, .. },
                    Call::Update { resync: false, .. },
                    Call::Update { resync: false, .. },
                    Call::Delete {
                        tombstone: false,
                        ..
                    },
                ]
            ),
            "{calls:?}"
        );
        factory.shutdown().await;
    }
    env.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_dynamic_metadata_informer_should_hold_the_metadata_of_a_resource_known_at_runtime() {
    let env = start_cluster("metadata-dynamic").await;
    let ns = env.namespace().to_owned();
    support::create(&Api::namespaced(env.client(), &ns), "a", "0").await;
    let factory =
        SharedInformerFactory::new(env.client(), Duration::ZERO).label_selector(support::OWN);
    let resource = kube::api::ApiResource::erase::<k8s_openapi::api::core::v1::ConfigMap>(&());
    let informer = factory.namespaced_dynamic_metadata_informer(&resource, &ns);
    factory.start();
    let synced = factory.wait_for_cache_sync(&CancellationToken::new()).await;
    let key = InformerKey {
        group: String::new(),
        version: "v1".into(),
        plural: "configmaps".into(),
        namespace: Some(ns.clone()),
        dynamic: true,
        metadata: true,
    };
    assert_eq!(synced.get(&key), Some(&true), "{synced:?}");
    let cached = informer.lister().namespaced(&ns).get("a").unwrap();
    assert_eq!(
        cached.metadata.labels.as_ref().unwrap()[support::OWN_LABEL.0],
        "true"
    );
    // Read as JSON: the type the server named.
    assert_eq!(
        cached.types.as_ref().map(|t| t.kind.as_str()),
        Some("PartialObjectMetadata")
    );
    factory.shutdown().await;
    env.shutdown().await;
}
