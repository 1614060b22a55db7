//! Round trips through the encoder and the decoders, on objects as kube-apiserver returns them
//! and on what kubectl sends; malformed input gives typed errors.

use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::core::v1::{ConfigMap, Pod, Secret};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Status;
use kcr_protobuf::{DecodeOptions, Error, Schema, envelope, list, object, watch};
use serde_json::{Value, json};

/// Three ConfigMaps as kube-apiserver v1.36 lists them (two managedFields entries and the
/// last-applied annotation each).
fn fixture_items() -> Vec<Value> {
    let list: Value = serde_json::from_str(include_str!("data/configmap-list-page.json")).unwrap();
    list["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|item| {
            let mut item = item.clone();
            item["apiVersion"] = json!("v1");
            item["kind"] = json!("ConfigMap");
            item
        })
        .collect()
}

#[test]
fn a_configmap_as_the_server_returns_it_should_round_trip() {
    for item in fixture_items() {
        let body = object::encode(&item).unwrap();
        assert!(body.starts_with(b"k8s\0"));
        assert_eq!(object::to_json(&body).unwrap(), item);
        let typed: ConfigMap = object::decode(&body, DecodeOptions::default()).unwrap();
        let expected: ConfigMap = serde_json::from_value(item.clone()).unwrap();
        assert_eq!(typed, expected);
        assert_eq!(
            typed.metadata.managed_fields.as_ref().map(Vec::len),
            Some(2)
        );
    }
}

#[test]
fn managed_fields_should_be_skipped_only_when_asked() {
    let item = &fixture_items()[0];
    let body = object::encode(item).unwrap();
    let skipped: ConfigMap =
        object::decode(&body, DecodeOptions::default().skip_managed_fields(true)).unwrap();
    let mut expected: ConfigMap = serde_json::from_value(item.clone()).unwrap();
    expected.metadata.managed_fields = None;
    assert_eq!(skipped, expected);
}

#[test]
fn what_kubectl_sends_should_decode_typed_as_its_json_form_does() {
    let web2 = include_bytes!("data/deployment-web2.pb");
    let as_json = object::to_json(web2).unwrap();
    let typed: Deployment = object::decode(web2, DecodeOptions::default()).unwrap();
    assert_eq!(
        typed,
        serde_json::from_value::<Deployment>(as_json.clone()).unwrap()
    );
    assert_eq!(typed.spec.replicas, Some(3));
    // And what the encoder writes for the JSON form decodes to it again.
    assert_eq!(
        object::to_json(&object::encode(&as_json).unwrap()).unwrap(),
        as_json
    );

    let creds = include_bytes!("data/secret-creds.pb");
    let secret: Secret = object::decode(creds, DecodeOptions::default()).unwrap();
    let data = secret.data.unwrap();
    assert_eq!(data["password"].0, b"hunter2");
    assert_eq!(
        object::to_json(&object::encode(&object::to_json(creds).unwrap()).unwrap()).unwrap(),
        object::to_json(creds).unwrap()
    );
}

#[test]
fn a_list_should_round_trip_with_its_metadata() {
    let items = fixture_items();
    let schema = Schema::for_kind("v1", "ConfigMap").unwrap();
    let meta = json!({"resourceVersion": "55757", "continue": "abc", "remainingItemCount": 497});
    let body = list::encode(schema, meta.as_object().unwrap(), &items).unwrap();
    let u = envelope::unwrap(&body).unwrap();
    assert_eq!((&*u.api_version, &*u.kind), ("v1", "ConfigMapList"));
    let list = list::decode::<ConfigMap>(&body, DecodeOptions::default()).unwrap();
    assert_eq!(list.metadata.resource_version, "55757");
    assert_eq!(list.metadata.continue_token, "abc");
    assert_eq!(list.metadata.remaining_item_count, Some(497));
    let expected: Vec<ConfigMap> = items
        .iter()
        .map(|i| serde_json::from_value(i.clone()).unwrap())
        .collect();
    assert_eq!(list.items, expected);
    assert_eq!(list.metadata.shard_selector, None);
}

/// A sharded list's `metadata.shardInfo` (KEP-5866, `ListMeta` field 5) is read, so a client
/// can tell from a protobuf list whether the server applied its shard selector.
#[test]
fn a_sharded_lists_shard_info_should_be_read() {
    let items = fixture_items();
    let schema = Schema::for_kind("v1", "ConfigMap").unwrap();
    let selector = "shardRange(object.metadata.uid, '0x0', '0x8000000000000000')";
    let meta = json!({"resourceVersion": "7", "shardInfo": {"selector": selector}});
    let body = list::encode(schema, meta.as_object().unwrap(), &items).unwrap();
    let list = list::decode::<ConfigMap>(&body, DecodeOptions::default()).unwrap();
    assert_eq!(list.metadata.shard_selector.as_deref(), Some(selector));
    assert_eq!(list.metadata.resource_version, "7");
    let messages = list::messages(&body).unwrap();
    assert_eq!(messages.metadata.shard_selector.as_deref(), Some(selector));
}

#[test]
fn a_list_item_that_does_not_decode_should_be_named() {
    // A ConfigMap whose `data` value is sent as a number.
    let mut cm = Vec::new();
    let meta = [0x0a, 0x01, b'x', 0x1a, 0x02, b'n', b's'];
    cm.extend([0x0a, meta.len() as u8]);
    cm.extend(meta);
    cm.extend([0x10, 0x05]);
    let mut list = vec![0x12, cm.len() as u8];
    list.extend(cm);
    let body = kcr_protobuf::envelope::wrap("v1", "ConfigMapList", &list);
    let e = list::decode::<ConfigMap>(&body, DecodeOptions::default()).unwrap_err();
    assert_eq!(e.kind, "ConfigMap");
    assert_eq!(e.name, "ns/x");
    assert!(matches!(
        e.source,
        Error::WrongWireType {
            field: 2,
            name: "data",
            found: 0,
            expected: 2
        }
    ));
}

#[test]
fn watch_frames_should_carry_events_and_statuses() {
    let item = &fixture_items()[1];
    let mut stream = watch::encode_frame("ADDED", &object::encode(item).unwrap()).unwrap();
    let status = json!({
        "kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
        "message": "too old resource version: 1 (5)", "reason": "Expired", "code": 410,
    });
    stream.extend(watch::encode_frame("ERROR", &object::encode(&status).unwrap()).unwrap());
    // Go's framer: a 4-byte big-endian length, then the WatchEvent itself.
    let len = u32::from_be_bytes(stream[..4].try_into().unwrap()) as usize;
    assert_eq!(
        &stream[4..6],
        &[0x0a, 0x05],
        "field 1 (type), 5 bytes: ADDED"
    );
    let mut frames = watch::FrameReader::new(1 << 20);
    let mut events = Vec::new();
    // One byte at a time: frames split anywhere.
    for b in &stream {
        frames.push(std::slice::from_ref(b));
        while let Some(frame) = frames.next_frame().unwrap() {
            events.push(frame);
        }
    }
    frames.finish().unwrap();
    assert_eq!(events.len(), 2);
    assert_eq!(events[0].len(), len);
    let added = watch::decode_event(&events[0]).unwrap();
    assert_eq!(added.event_type, "ADDED");
    let cm: ConfigMap = object::decode(added.object, DecodeOptions::default()).unwrap();
    assert_eq!(
        cm,
        serde_json::from_value::<ConfigMap>(item.clone()).unwrap()
    );
    let error = watch::decode_event(&events[1]).unwrap();
    assert_eq!(error.event_type, "ERROR");
    let s: Status = object::decode(error.object, DecodeOptions::default()).unwrap();
    assert_eq!(s.code, Some(410));
    assert_eq!(s.reason.as_deref(), Some("Expired"));
    // kube::core::Status-like types with enums read the same.
    let kube_like: serde_json::Map<String, Value> =
        object::decode(error.object, DecodeOptions::default()).unwrap();
    assert_eq!(Value::Object(kube_like), {
        let mut s = status.clone();
        s.as_object_mut().unwrap().remove("apiVersion");
        s.as_object_mut().unwrap().remove("kind");
        s
    });
}

#[test]
fn a_frame_over_the_limit_should_be_refused_before_it_is_read() {
    let mut frames = watch::FrameReader::new(100);
    frames.push(&[0, 0, 0, 101]);
    assert_eq!(
        frames.next_frame(),
        Err(Error::FrameTooLarge {
            len: 101,
            limit: 100
        })
    );
    let mut frames = watch::FrameReader::new(100);
    frames.push(&[0, 0, 0, 3, 1]);
    assert_eq!(frames.next_frame(), Ok(None));
    assert_eq!(frames.finish(), Err(Error::Truncated { field: 0 }));
}

#[test]
fn malformed_input_should_give_typed_errors() {
    let opts = DecodeOptions::default();
    assert_eq!(
        object::decode::<ConfigMap>(b"{}", opts),
        Err(Error::MissingPrefix)
    );
    assert_eq!(
        object::decode::<ConfigMap>(b"k8s\0\x0a\xff", opts),
        Err(Error::TruncatedVarint)
    );
    let job = kcr_protobuf::envelope::wrap("example.com/v1", "Widget", &[]);
    assert_eq!(
        object::decode::<ConfigMap>(&job, opts),
        Err(Error::UnknownKind {
            api_version: "example.com/v1".into(),
            kind: "Widget".into()
        })
    );
    // metadata.name (a string) sent as a number.
    let body = kcr_protobuf::envelope::wrap("v1", "ConfigMap", &[0x0a, 0x02, 0x08, 0x07]);
    assert_eq!(
        object::decode::<ConfigMap>(&body, opts),
        Err(Error::WrongWireType {
            field: 1,
            name: "name",
            found: 0,
            expected: 2
        })
    );
    assert!(matches!(
        object::encode(&json!({"apiVersion": "v1", "kind": "ConfigMap", "spec": {}})),
        Err(Error::UnknownJsonField { path }) if path == ".spec"
    ));
    assert!(matches!(
        object::encode(&json!({"apiVersion": "v1", "kind": "ConfigMap", "data": {"k": 5}})),
        Err(Error::Invalid(_))
    ));
}

mod properties {
    use super::*;
    use proptest::prelude::*;

    fn name() -> impl Strategy<Value = String> {
        "[a-z][a-z0-9.-]{0,12}"
    }

    fn text() -> impl Strategy<Value = String> {
        any::<String>()
    }

    fn time() -> impl Strategy<Value = String> {
        (1u64..253_402_300_799).prop_map(|s| {
            let v = serde_json::to_value(k8s_openapi::apimachinery::pkg::apis::meta::v1::Time(
                k8s_openapi::jiff::Timestamp::from_second(s.cast_signed()).unwrap(),
            ))
            .unwrap();
            v.as_str().unwrap().to_owned()
        })
    }

    fn string_map() -> impl Strategy<Value = serde_json::Map<String, Value>> {
        prop::collection::btree_map(name(), text(), 0..4)
            .prop_map(|m| m.into_iter().map(|(k, v)| (k, Value::String(v))).collect())
    }

    prop_compose! {
        fn managed_field()(manager in name(), t in time(), sub in prop::option::of(name())) -> Value {
            let mut v = json!({
                "manager": manager, "operation": "Update", "apiVersion": "v1", "time": t,
                "fieldsType": "FieldsV1", "fieldsV1": {"f:data": {".": {}, "f:k": {}}},
            });
            if let Some(s) = sub {
                v["subresource"] = json!(s);
            }
            v
        }
    }

    prop_compose! {
        fn configmap()(
            name in name(), ns in name(), labels in string_map(), annotations in string_map(),
            data in string_map(), binary in prop::collection::btree_map(name(), any::<Vec<u8>>(), 0..3),
            immutable in prop::option::of(any::<bool>()), generation in prop::option::of(1i64..1_000_000),
            created in time(), finalizers in prop::collection::vec(name(), 0..3),
            managed in prop::collection::vec(managed_field(), 0..3),
            owner in prop::option::of((name(), any::<bool>())),
        ) -> Value {
            let mut meta = json!({"name": name, "namespace": ns, "creationTimestamp": created});
            if !labels.is_empty() { meta["labels"] = Value::Object(labels); }
            if !annotations.is_empty() { meta["annotations"] = Value::Object(annotations); }
            if let Some(g) = generation { meta["generation"] = json!(g); }
            if !finalizers.is_empty() { meta["finalizers"] = json!(finalizers); }
            if !managed.is_empty() { meta["managedFields"] = Value::Array(managed); }
            if let Some((owner, controller)) = owner {
                meta["ownerReferences"] = json!([{
                    "apiVersion": "apps/v1", "kind": "ReplicaSet", "name": owner, "uid": "u-1",
                    "controller": controller,
                }]);
            }
            let mut cm = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": meta});
            if !data.is_empty() { cm["data"] = Value::Object(data); }
            if !binary.is_empty() {
                cm["binaryData"] = binary.into_iter().map(|(k, v)| {
                    let s = serde_json::to_value(k8s_openapi::ByteString(v)).unwrap();
                    (k, s)
                }).collect();
            }
            if let Some(i) = immutable { cm["immutable"] = json!(i); }
            cm
        }
    }

    proptest! {
        #[test]
        fn configmaps_should_round_trip_through_protobuf(cm in configmap()) {
            let body = object::encode(&cm).unwrap();
            prop_assert_eq!(object::to_json(&body).unwrap(), cm.clone());
            let typed: ConfigMap = object::decode(&body, DecodeOptions::default()).unwrap();
            prop_assert_eq!(typed, serde_json::from_value::<ConfigMap>(cm).unwrap());
        }

        #[test]
        fn arbitrary_bytes_should_never_panic(body in any::<Vec<u8>>()) {
            let mut prefixed = b"k8s\0".to_vec();
            prefixed.extend(&body);
            for b in [&body, &prefixed] {
                let _ = object::decode::<ConfigMap>(b, DecodeOptions::default());
                let _ = list::decode::<ConfigMap>(b, DecodeOptions::default());
                let _ = object::to_json(b);
                if let Ok(e) = watch::decode_event(b) {
                    let _ = object::decode::<ConfigMap>(e.object, DecodeOptions::default());
                }
            }
        }

        #[test]
        fn mutated_bodies_should_never_panic(
            cm in configmap(),
            flips in prop::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 1..4),
            cut in any::<prop::sample::Index>(),
        ) {
            let mut body = object::encode(&cm).unwrap();
            for (at, byte) in flips {
                let i = at.index(body.len());
                body[i] = byte;
            }
            let _ = object::decode::<ConfigMap>(&body, DecodeOptions::default());
            let _ = object::to_json(&body);
            body.truncate(cut.index(body.len()));
            let _ = object::decode::<ConfigMap>(&body, DecodeOptions::default().skip_managed_fields(true));
            let _ = object::to_json(&body);
        }

        /// A real server's Pod, its protobuf mutated: nested messages, inlined structs,
        /// repeated fields counted ahead, integers, quantities, times and int-or-strings.
        #[test]
        fn mutated_pods_should_never_panic(
            flips in prop::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 1..6),
            cut in any::<prop::sample::Index>(),
        ) {
            let pod: Value = serde_json::from_str(include_str!("data/pod.json")).unwrap();
            let mut body = object::encode(&pod).unwrap();
            for (at, byte) in flips {
                let i = at.index(body.len());
                body[i] = byte;
            }
            let _ = object::decode::<Pod>(&body, DecodeOptions::default());
            let _ = object::to_json(&body);
            body.truncate(cut.index(body.len()));
            let _ = object::decode::<Pod>(&body, DecodeOptions::default().skip_managed_fields(true));
            let _ = object::to_json(&body);
        }
    }
}

#[test]
fn a_pod_as_the_server_returns_it_should_round_trip() {
    let pod: Value = serde_json::from_str(include_str!("data/pod.json")).unwrap();
    let body = object::encode(&pod).unwrap();
    let typed: Pod = object::decode(&body, DecodeOptions::default()).unwrap();
    let expected: Pod = serde_json::from_value(pod.clone()).unwrap();
    assert_eq!(typed, expected);
    assert_eq!(object::to_json(&body).unwrap(), pod);
}

#[test]
fn kinds_with_maps_of_times_lists_of_integers_and_raw_json_should_round_trip() {
    for object in [
        json!({
            "apiVersion": "policy/v1", "kind": "PodDisruptionBudget",
            "metadata": {"name": "web", "namespace": "default"},
            "spec": {"minAvailable": 1, "selector": {"matchLabels": {"app": "web"}}},
            "status": {
                "observedGeneration": 1,
                "disruptedPods": {"web-1": "2026-11-26T17:00:00Z", "web-2": "2026-11-26T17:00:01Z"},
                "disruptionsAllowed": 0, "currentHealthy": 2, "desiredHealthy": 1,
                "expectedPods": 3,
            },
        }),
        json!({
            "apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": "web", "namespace": "default"},
            "spec": {
                "containers": [{"name": "web", "image": "nginx", "resources": {}}],
                "securityContext": {"supplementalGroups": [1000, 2000], "runAsUser": 0},
            },
            "status": {},
        }),
        json!({
            "apiVersion": "apps/v1", "kind": "ControllerRevision",
            "metadata": {"name": "web-1", "namespace": "default"},
            "data": {"spec": {"template": {"metadata": {"labels": {"app": "web"}}}}},
            "revision": 1,
        }),
    ] {
        let body = object::encode(&object).unwrap();
        assert_eq!(object::to_json(&body).unwrap(), object);
    }
    let pdb = object::encode(&json!({
        "apiVersion": "policy/v1", "kind": "PodDisruptionBudget",
        "metadata": {"name": "web"},
        "status": {"disruptedPods": {"web-1": "2026-11-26T17:00:00Z"}, "disruptionsAllowed": 1,
                   "currentHealthy": 1, "desiredHealthy": 1, "expectedPods": 1},
    }))
    .unwrap();
    let typed: k8s_openapi::api::policy::v1::PodDisruptionBudget =
        object::decode(&pdb, DecodeOptions::default()).unwrap();
    let status = typed.status.unwrap();
    assert_eq!(status.disrupted_pods.unwrap().len(), 1);
    assert_eq!(status.disruptions_allowed, Some(1));
}

#[test]
fn a_csr_extra_map_of_lists_should_round_trip_as_go_writes_it() {
    use k8s_openapi::api::certificates::v1::CertificateSigningRequest;
    let csr = json!({
        "apiVersion": "certificates.k8s.io/v1",
        "kind": "CertificateSigningRequest",
        "metadata": {"name": "csr-extra"},
        "spec": {
            "request": "cmVxdWVzdA==",
            "signerName": "example.com/signer",
            "username": "alice",
            "extra": {"scopes": ["read", "write"], "tenant": ["t1"]},
        },
    });
    let body = object::encode(&csr).unwrap();
    // `status` is a struct, not a pointer: Go writes it (empty) though the JSON left it out,
    // and its JSON then has `"status": {}`.
    let mut expected = csr.clone();
    expected["status"] = json!({});
    assert_eq!(object::to_json(&body).unwrap(), expected);
    let typed: CertificateSigningRequest = object::decode(&body, DecodeOptions::default()).unwrap();
    assert_eq!(typed, serde_json::from_value(expected).unwrap());
    // `map<string, ExtraValue>`: each entry's value is a message of repeated `items` = 1.
    let message = envelope::unwrap(&body).unwrap().raw.to_vec();
    let entry = [&[0x0a, 6][..], b"tenant", &[0x12, 4, 0x0a, 2], b"t1"].concat();
    let mut field = vec![0x32, u8::try_from(entry.len()).unwrap()];
    field.extend_from_slice(&entry);
    assert!(
        message.windows(field.len()).any(|w| w == field),
        "the tenant entry is not written as Go writes it"
    );
}

/// What kube-apiserver sends for `Accept: application/vnd.kubernetes.protobuf;
/// as=PartialObjectMetadataList;g=meta.k8s.io;v=v1`: a `meta.k8s.io/v1`
/// `PartialObjectMetadataList` whose items hold the objects' metadata only.
#[test]
fn a_partial_object_metadata_list_should_decode_to_the_objects_metadata() {
    let schema = Schema::for_kind("meta.k8s.io/v1", "PartialObjectMetadata").unwrap();
    assert!(schema.complete());
    assert_eq!(
        Schema::for_list_item("meta.k8s.io/v1", "PartialObjectMetadataList").map(Schema::kind),
        Some("PartialObjectMetadata")
    );
    let items: Vec<Value> = fixture_items()
        .into_iter()
        .map(|item| json!({"apiVersion": "meta.k8s.io/v1", "kind": "PartialObjectMetadata", "metadata": item["metadata"]}))
        .collect();
    let body = list::encode(
        schema,
        json!({"resourceVersion": "42"}).as_object().unwrap(),
        &items,
    )
    .unwrap();
    let u = envelope::unwrap(&body).unwrap();
    assert_eq!(
        (&*u.api_version, &*u.kind),
        ("meta.k8s.io/v1", "PartialObjectMetadataList")
    );
    let decoded = list::decode::<Value>(&body, DecodeOptions::default()).unwrap();
    assert_eq!(decoded.metadata.resource_version, "42");
    assert_eq!(decoded.items.len(), items.len());
    for (got, want) in decoded.items.iter().zip(&items) {
        assert_eq!(got["metadata"], want["metadata"]);
        assert!(got.get("data").is_none());
    }
}
