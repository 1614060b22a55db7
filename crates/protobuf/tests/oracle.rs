//! The differential oracle: the same lists, watches and errors recorded from a real
//! kube-apiserver v1.36.2 in JSON and in protobuf (`data/wire/`, see its README) must decode to
//! equal objects, kind by kind: kcr-protobuf's decoding of the protobuf against serde's
//! decoding of the JSON, into the k8s-openapi type and into the JSON form.
//!
//! Each test checks every kind and reports every failing kind at once.

use std::fmt::Debug;
use std::path::PathBuf;

use k8s_openapi::Metadata;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{ObjectMeta, Status};
use kcr_protobuf::{DecodeOptions, Schema, list, message, object, watch};
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;

/// A fixture file's bytes.
fn read(name: &str) -> Vec<u8> {
    let path: PathBuf = [env!("CARGO_MANIFEST_DIR"), "tests", "data", "wire", name]
        .iter()
        .collect();
    std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn json_of(name: &str) -> Value {
    serde_json::from_slice(&read(name)).unwrap_or_else(|e| panic!("{name}: {e}"))
}

/// The first place two JSON values differ, as a path and both values.
fn first_difference(path: &str, a: &Value, b: &Value) -> Option<String> {
    match (a, b) {
        (Value::Object(x), Value::Object(y)) => {
            for (k, v) in x {
                let here = format!("{path}.{k}");
                match y.get(k) {
                    Some(w) => {
                        if let Some(d) = first_difference(&here, v, w) {
                            return Some(d);
                        }
                    }
                    None => return Some(format!("{here}: {v} on the left only")),
                }
            }
            y.keys()
                .find(|k| !x.contains_key(*k))
                .map(|k| format!("{path}.{k}: {} on the right only", y[k]))
        }
        (Value::Array(x), Value::Array(y)) if x.len() == y.len() => x
            .iter()
            .zip(y)
            .enumerate()
            .find_map(|(i, (v, w))| first_difference(&format!("{path}[{i}]"), v, w)),
        _ if a == b => None,
        _ => Some(format!("{path}: {a} != {b}")),
    }
}

/// Compares two values, naming the first difference.
fn compare<T: PartialEq + Serialize>(what: &str, protobuf: &T, json: &T) -> Result<(), String> {
    if protobuf == json {
        return Ok(());
    }
    let (a, b) = (
        serde_json::to_value(protobuf).unwrap_or_default(),
        serde_json::to_value(json).unwrap_or_default(),
    );
    Err(format!(
        "{what}: protobuf (left) and JSON (right) differ: {}",
        first_difference("", &a, &b).unwrap_or_else(|| "(in a way serde does not show)".into())
    ))
}

/// The one expected difference, from the fixtures' README: protobuf has no `TypeMeta` for an
/// embedded object, so a StatefulSet's `spec.volumeClaimTemplates[].apiVersion` and `kind`
/// (as the manifest wrote them) are in JSON only. Removes exactly those from a JSON item and
/// says how many templates had them.
fn without_expected_difference(stem: &str, item: &mut Value) -> usize {
    if stem != "apps_v1_statefulsets" {
        return 0;
    }
    let Some(templates) = item
        .pointer_mut("/spec/volumeClaimTemplates")
        .and_then(Value::as_array_mut)
    else {
        return 0;
    };
    let mut n = 0;
    for t in templates {
        let t = t
            .as_object_mut()
            .expect("a volumeClaimTemplate is an object");
        assert_eq!(t.remove("apiVersion"), Some(Value::from("v1")));
        assert_eq!(t.remove("kind"), Some(Value::from("PersistentVolumeClaim")));
        n += 1;
    }
    n
}

/// Checks one kind's list pair: the list metadata, then item by item the typed objects
/// (with and without managedFields) and both JSON forms kcr-protobuf produces.
fn check_list<K>(stem: &str) -> Result<(), String>
where
    K: DeserializeOwned + PartialEq + Debug + Serialize + Metadata<Ty = ObjectMeta>,
{
    let pb = read(&format!("{stem}.pb"));
    let json = json_of(&format!("{stem}.json"));
    let json_items = json["items"]
        .as_array()
        .ok_or("the JSON list has no items")?;

    // List metadata.
    let typed =
        list::decode::<K>(&pb, DecodeOptions::default()).map_err(|e| format!("decode: {e}"))?;
    let meta = &json["metadata"];
    let want = (
        meta["resourceVersion"].as_str().unwrap_or_default(),
        meta["continue"].as_str().unwrap_or_default(),
        meta["remainingItemCount"].as_i64(),
    );
    let got = (
        typed.metadata.resource_version.as_str(),
        typed.metadata.continue_token.as_str(),
        typed.metadata.remaining_item_count,
    );
    if got != want {
        return Err(format!("list metadata {got:?} != {want:?}"));
    }
    if typed.items.len() != json_items.len() {
        return Err(format!(
            "{} items in protobuf, {} in JSON",
            typed.items.len(),
            json_items.len()
        ));
    }

    // Typed objects.
    let skipped = list::decode::<K>(&pb, DecodeOptions::default().skip_managed_fields(true))
        .map_err(|e| format!("decode without managedFields: {e}"))?;
    for (i, (item, json_item)) in typed.items.iter().zip(json_items).enumerate() {
        let expected: K = serde_json::from_value(json_item.clone())
            .map_err(|e| format!("items[{i}]: the JSON does not decode: {e}"))?;
        compare(&format!("items[{i}] typed"), item, &expected)?;
        let mut lean: K = serde_json::from_value(json_item.clone()).map_err(|e| e.to_string())?;
        lean.metadata_mut().managed_fields = None;
        compare(
            &format!("items[{i}] typed without managedFields"),
            &skipped.items[i],
            &lean,
        )?;
    }

    // JSON forms: through the serde Deserializer, and strictly through the tables.
    let parts = list::messages(&pb).map_err(|e| format!("list::messages: {e}"))?;
    let schema = Schema::for_list_item(&parts.api_version, &parts.kind)
        .ok_or_else(|| format!("no table for {} {}", parts.api_version, parts.kind))?;
    let mut differences = 0;
    for (i, (message, json_item)) in parts.items.iter().zip(json_items).enumerate() {
        let serde_form: Value = message::decode(message, schema, DecodeOptions::default())
            .map_err(|e| format!("items[{i}] as JSON: {e}"))?;
        let strict_form =
            message::to_json(message, schema).map_err(|e| format!("items[{i}] strictly: {e}"))?;
        let mut json_item = json_item.clone();
        let removed = without_expected_difference(stem, &mut json_item);
        if removed > 0 {
            // The difference is real: the protobuf forms lack exactly what was removed.
            assert_ne!(serde_form, *json_items.get(i).unwrap_or(&Value::Null));
            differences += removed;
        }
        compare(&format!("items[{i}] JSON form"), &serde_form, &json_item)?;
        compare(
            &format!("items[{i}] strict JSON form"),
            &strict_form,
            &json_item,
        )?;
    }
    if stem == "apps_v1_statefulsets" && differences == 0 {
        return Err("the expected volumeClaimTemplates difference was not seen".into());
    }
    Ok(())
}

/// Checks one watch pair: the same events, in order, with equal objects.
fn check_watch<K>(stem: &str) -> Result<(), String>
where
    K: DeserializeOwned + PartialEq + Debug + Serialize,
{
    let pb = read(&format!("{stem}.watch.pb"));
    let json = read(&format!("{stem}.watch.json"));
    let lines: Vec<Value> = serde_json::Deserializer::from_slice(&json)
        .into_iter()
        .collect::<Result<_, _>>()
        .map_err(|e| format!("the JSON stream: {e}"))?;
    let mut frames = watch::FrameReader::new(1 << 20);
    frames.push(&pb);
    let mut n = 0;
    while let Some(frame) = frames.next_frame().map_err(|e| e.to_string())? {
        let event = watch::decode_event(&frame).map_err(|e| format!("event {n}: {e}"))?;
        let line = lines
            .get(n)
            .ok_or_else(|| format!("event {n} is in protobuf only"))?;
        if line["type"] != *event.event_type {
            return Err(format!(
                "event {n}: type {} != {}",
                event.event_type, line["type"]
            ));
        }
        let typed: K = object::decode(event.object, DecodeOptions::default())
            .map_err(|e| format!("event {n}: {e}"))?;
        let expected: K = serde_json::from_value(line["object"].clone())
            .map_err(|e| format!("event {n}: the JSON does not decode: {e}"))?;
        compare(&format!("event {n} typed"), &typed, &expected)?;
        let strict = object::to_json(event.object).map_err(|e| format!("event {n}: {e}"))?;
        compare(
            &format!("event {n} strict JSON form"),
            &strict,
            &line["object"],
        )?;
        let mut serde_form: Value = object::decode(event.object, DecodeOptions::default())
            .map_err(|e| format!("event {n}: {e}"))?;
        if let Value::Object(m) = &mut serde_form {
            m.insert("apiVersion".into(), line["object"]["apiVersion"].clone());
            m.insert("kind".into(), line["object"]["kind"].clone());
        }
        compare(
            &format!("event {n} JSON form"),
            &serde_form,
            &line["object"],
        )?;
        n += 1;
    }
    frames.finish().map_err(|e| e.to_string())?;
    if n != lines.len() {
        return Err(format!("{n} events in protobuf, {} in JSON", lines.len()));
    }
    Ok(())
}

/// Every list pair of the fixtures, with the k8s-openapi type of its items.
macro_rules! lists {
    ($($stem:literal => $ty:ty,)*) => {
        /// The file stems of every list pair this test checks.
        const LIST_STEMS: &[&str] = &[$($stem),*];

        fn check_every_list() -> Vec<String> {
            let mut failures = Vec::new();
            $(
                if let Err(e) = check_list::<$ty>($stem) {
                    failures.push(format!("{}: {e}", $stem));
                }
            )*
            failures
        }
    };
}

lists! {
    "core_v1_componentstatuses" => k8s_openapi::api::core::v1::ComponentStatus,
    "core_v1_configmaps" => k8s_openapi::api::core::v1::ConfigMap,
    "core_v1_endpoints" => k8s_openapi::api::core::v1::Endpoints,
    "core_v1_events" => k8s_openapi::api::core::v1::Event,
    "core_v1_limitranges" => k8s_openapi::api::core::v1::LimitRange,
    "core_v1_namespaces" => k8s_openapi::api::core::v1::Namespace,
    "core_v1_nodes" => k8s_openapi::api::core::v1::Node,
    "core_v1_persistentvolumeclaims" => k8s_openapi::api::core::v1::PersistentVolumeClaim,
    "core_v1_persistentvolumes" => k8s_openapi::api::core::v1::PersistentVolume,
    "core_v1_pods" => k8s_openapi::api::core::v1::Pod,
    "core_v1_podtemplates" => k8s_openapi::api::core::v1::PodTemplate,
    "core_v1_replicationcontrollers" => k8s_openapi::api::core::v1::ReplicationController,
    "core_v1_resourcequotas" => k8s_openapi::api::core::v1::ResourceQuota,
    "core_v1_secrets" => k8s_openapi::api::core::v1::Secret,
    "core_v1_serviceaccounts" => k8s_openapi::api::core::v1::ServiceAccount,
    "core_v1_services" => k8s_openapi::api::core::v1::Service,
    "apiregistration.k8s.io_v1_apiservices" =>
        k8s_openapi::kube_aggregator::pkg::apis::apiregistration::v1::APIService,
    "apps_v1_controllerrevisions" => k8s_openapi::api::apps::v1::ControllerRevision,
    "apps_v1_daemonsets" => k8s_openapi::api::apps::v1::DaemonSet,
    "apps_v1_deployments" => k8s_openapi::api::apps::v1::Deployment,
    "apps_v1_replicasets" => k8s_openapi::api::apps::v1::ReplicaSet,
    "apps_v1_statefulsets" => k8s_openapi::api::apps::v1::StatefulSet,
    "events.k8s.io_v1_events" => k8s_openapi::api::events::v1::Event,
    "autoscaling_v2_horizontalpodautoscalers" =>
        k8s_openapi::api::autoscaling::v2::HorizontalPodAutoscaler,
    "autoscaling_v1_horizontalpodautoscalers" =>
        k8s_openapi::api::autoscaling::v1::HorizontalPodAutoscaler,
    "batch_v1_cronjobs" => k8s_openapi::api::batch::v1::CronJob,
    "batch_v1_jobs" => k8s_openapi::api::batch::v1::Job,
    "certificates.k8s.io_v1_certificatesigningrequests" =>
        k8s_openapi::api::certificates::v1::CertificateSigningRequest,
    "networking.k8s.io_v1_ingressclasses" => k8s_openapi::api::networking::v1::IngressClass,
    "networking.k8s.io_v1_ingresses" => k8s_openapi::api::networking::v1::Ingress,
    "networking.k8s.io_v1_ipaddresses" => k8s_openapi::api::networking::v1::IPAddress,
    "networking.k8s.io_v1_networkpolicies" => k8s_openapi::api::networking::v1::NetworkPolicy,
    "networking.k8s.io_v1_servicecidrs" => k8s_openapi::api::networking::v1::ServiceCIDR,
    "policy_v1_poddisruptionbudgets" => k8s_openapi::api::policy::v1::PodDisruptionBudget,
    "rbac.authorization.k8s.io_v1_clusterrolebindings" =>
        k8s_openapi::api::rbac::v1::ClusterRoleBinding,
    "rbac.authorization.k8s.io_v1_clusterroles" => k8s_openapi::api::rbac::v1::ClusterRole,
    "rbac.authorization.k8s.io_v1_rolebindings" => k8s_openapi::api::rbac::v1::RoleBinding,
    "rbac.authorization.k8s.io_v1_roles" => k8s_openapi::api::rbac::v1::Role,
    "storage.k8s.io_v1_csidrivers" => k8s_openapi::api::storage::v1::CSIDriver,
    "storage.k8s.io_v1_csinodes" => k8s_openapi::api::storage::v1::CSINode,
    "storage.k8s.io_v1_csistoragecapacities" => k8s_openapi::api::storage::v1::CSIStorageCapacity,
    "storage.k8s.io_v1_storageclasses" => k8s_openapi::api::storage::v1::StorageClass,
    "storage.k8s.io_v1_volumeattachments" => k8s_openapi::api::storage::v1::VolumeAttachment,
    "storage.k8s.io_v1_volumeattributesclasses" =>
        k8s_openapi::api::storage::v1::VolumeAttributesClass,
    "admissionregistration.k8s.io_v1_mutatingadmissionpolicies" =>
        k8s_openapi::api::admissionregistration::v1::MutatingAdmissionPolicy,
    "admissionregistration.k8s.io_v1_mutatingadmissionpolicybindings" =>
        k8s_openapi::api::admissionregistration::v1::MutatingAdmissionPolicyBinding,
    "admissionregistration.k8s.io_v1_mutatingwebhookconfigurations" =>
        k8s_openapi::api::admissionregistration::v1::MutatingWebhookConfiguration,
    "admissionregistration.k8s.io_v1_validatingadmissionpolicies" =>
        k8s_openapi::api::admissionregistration::v1::ValidatingAdmissionPolicy,
    "admissionregistration.k8s.io_v1_validatingadmissionpolicybindings" =>
        k8s_openapi::api::admissionregistration::v1::ValidatingAdmissionPolicyBinding,
    "admissionregistration.k8s.io_v1_validatingwebhookconfigurations" =>
        k8s_openapi::api::admissionregistration::v1::ValidatingWebhookConfiguration,
    "apiextensions.k8s.io_v1_customresourcedefinitions" =>
        k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition,
    "scheduling.k8s.io_v1_priorityclasses" => k8s_openapi::api::scheduling::v1::PriorityClass,
    "coordination.k8s.io_v1_leases" => k8s_openapi::api::coordination::v1::Lease,
    "node.k8s.io_v1_runtimeclasses" => k8s_openapi::api::node::v1::RuntimeClass,
    "discovery.k8s.io_v1_endpointslices" => k8s_openapi::api::discovery::v1::EndpointSlice,
    "resource.k8s.io_v1_deviceclasses" => k8s_openapi::api::resource::v1::DeviceClass,
    "resource.k8s.io_v1_resourceclaims" => k8s_openapi::api::resource::v1::ResourceClaim,
    "resource.k8s.io_v1_resourceclaimtemplates" =>
        k8s_openapi::api::resource::v1::ResourceClaimTemplate,
    "resource.k8s.io_v1_resourceslices" => k8s_openapi::api::resource::v1::ResourceSlice,
    "flowcontrol.apiserver.k8s.io_v1_flowschemas" => k8s_openapi::api::flowcontrol::v1::FlowSchema,
    "flowcontrol.apiserver.k8s.io_v1_prioritylevelconfigurations" =>
        k8s_openapi::api::flowcontrol::v1::PriorityLevelConfiguration,
}

/// The index's entries of one section.
fn index(section: &str) -> Vec<Value> {
    json_of("index.json")[section]
        .as_array()
        .cloned()
        .unwrap_or_default()
}

#[test]
fn every_list_of_the_fixtures_should_be_checked() {
    let mut recorded: Vec<String> = index("lists")
        .iter()
        .filter_map(|l| l["file"].as_str().map(str::to_owned))
        .collect();
    recorded.sort();
    let mut checked: Vec<String> = LIST_STEMS.iter().map(|s| (*s).to_owned()).collect();
    checked.sort();
    assert_eq!(checked, recorded);
    assert_eq!(checked.len(), 61);
}

#[test]
fn every_protobuf_list_should_decode_to_what_its_json_decodes_to() {
    let failures = check_every_list();
    assert!(
        failures.is_empty(),
        "{} of {} kinds differ:\n{}",
        failures.len(),
        LIST_STEMS.len(),
        failures.join("\n")
    );
}

/// A check of one pair of files.
type Check = fn(&str) -> Result<(), String>;

#[test]
fn every_protobuf_watch_should_carry_the_events_of_its_json_watch() {
    use k8s_openapi::api::apps::v1::Deployment;
    use k8s_openapi::api::core::v1::{ConfigMap, Pod};
    let mut recorded: Vec<String> = index("watches")
        .iter()
        .filter_map(|w| w["file"].as_str().map(str::to_owned))
        .collect();
    recorded.sort();
    let checks: [(&str, Check); 4] = [
        ("apps_v1_deployments", check_watch::<Deployment>),
        ("core_v1_configmaps", check_watch::<ConfigMap>),
        (
            "core_v1_configmaps.initial-events",
            check_watch::<ConfigMap>,
        ),
        ("core_v1_pods", check_watch::<Pod>),
    ];
    assert_eq!(
        checks
            .iter()
            .map(|(s, _)| (*s).to_owned())
            .collect::<Vec<_>>(),
        recorded
    );
    let failures: Vec<String> = checks
        .iter()
        .filter_map(|(stem, check)| check(stem).err().map(|e| format!("{stem}: {e}")))
        .collect();
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn protobuf_error_bodies_should_decode_to_their_json_status() {
    let pb = read("extra/core_v1_configmaps.get-404.pb");
    let json = json_of("extra/core_v1_configmaps.get-404.json");
    let typed: Status = object::decode(&pb, DecodeOptions::default()).unwrap();
    let expected: Status = serde_json::from_value(json.clone()).unwrap();
    compare("404 Status", &typed, &expected).unwrap();
    compare(
        "404 Status JSON form",
        &object::to_json(&pb).unwrap(),
        &json,
    )
    .unwrap();
    assert_eq!(typed.code, Some(404));

    // A custom resource asked for in protobuf: kube-apiserver refuses with a protobuf Status.
    let pb = read("extra/fixtures.wire.example.com_v1_wire-gadgets.406.pb");
    let typed: Status = object::decode(&pb, DecodeOptions::default()).unwrap();
    assert_eq!(typed.code, Some(406));
    assert_eq!(typed.reason.as_deref(), Some("NotAcceptable"));
    let strict = object::to_json(&pb).unwrap();
    assert_eq!(strict["kind"], "Status");
    assert_eq!(strict["code"], 406);
    let reparsed: Status = serde_json::from_value(strict).unwrap();
    assert_eq!(reparsed, typed);
}

#[test]
fn the_proven_kinds_should_be_exactly_the_kinds_the_oracle_covers() {
    let mut covered: Vec<(String, String)> = index("lists")
        .iter()
        .map(|l| {
            let group = l["group"].as_str().unwrap_or_default();
            let version = l["version"].as_str().unwrap_or_default();
            let api_version = if group.is_empty() {
                version.to_owned()
            } else {
                format!("{group}/{version}")
            };
            (
                api_version,
                l["kind"].as_str().unwrap_or_default().to_owned(),
            )
        })
        .collect();
    covered.sort();
    let proven: Vec<(String, String)> = kcr_protobuf::proven::kinds()
        .map(|s| (s.api_version().to_owned(), s.kind().to_owned()))
        .collect();
    assert_eq!(proven, covered);
    assert!(
        covered
            .iter()
            .all(|(api_version, kind)| kcr_protobuf::proven::is_proven(api_version, kind))
    );
}
