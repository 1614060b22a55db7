//! MutatingAdmissionPolicy beyond the recorded `adm-map-mutations` case: a Deployment mutated
//! with an apply configuration (pod template labels, a container merged into the keyed
//! `containers` list) and a JSON patch (`replace /spec/replicas`), atomic fields refused,
//! params, variables and match conditions, `failurePolicy` `Ignore` against `Fail`, a policy on
//! `UPDATE` that reads `oldObject`, reinvocation, and the plugin switched off.

use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::core::v1::{ConfigMap, Namespace};
use kube::api::{Api, ApiResource, DynamicObject, GroupVersionKind, PostParams};
use kube::{Client, ResourceExt};
use serde_json::{Value, json};

async fn realistic() -> kcr_testenv::TestEnv {
    kcr_testenv::TestEnv::builder()
        .realistic()
        .start()
        .await
        .expect("start")
}

fn from<T: serde::de::DeserializeOwned>(v: Value) -> T {
    serde_json::from_value(v).expect("valid object")
}

async fn namespace(client: &Client, name: &str) {
    Api::<Namespace>::all(client.clone())
        .create(
            &PostParams::default(),
            &from(json!({"metadata": {"name": name}})),
        )
        .await
        .expect("namespace");
}

fn resource(kind: &str, plural: &str) -> ApiResource {
    ApiResource::from_gvk_with_plural(
        &GroupVersionKind::gvk("admissionregistration.k8s.io", "v1", kind),
        plural,
    )
}

/// Creates the policy `name` (`spec`) and its binding `name` (`binding_spec`, to which
/// `policyName` is added).
async fn policy(client: &Client, name: &str, spec: Value, mut binding_spec: Value) {
    let policies = Api::<DynamicObject>::all_with(
        client.clone(),
        &resource("MutatingAdmissionPolicy", "mutatingadmissionpolicies"),
    );
    policies
        .create(
            &PostParams::default(),
            &from(json!({"apiVersion": "admissionregistration.k8s.io/v1",
                "kind": "MutatingAdmissionPolicy", "metadata": {"name": name}, "spec": spec})),
        )
        .await
        .expect("policy");
    binding_spec["policyName"] = json!(name);
    let bindings = Api::<DynamicObject>::all_with(
        client.clone(),
        &resource(
            "MutatingAdmissionPolicyBinding",
            "mutatingadmissionpolicybindings",
        ),
    );
    bindings
        .create(
            &PostParams::default(),
            &from(json!({"apiVersion": "admissionregistration.k8s.io/v1",
                "kind": "MutatingAdmissionPolicyBinding", "metadata": {"name": name},
                "spec": binding_spec})),
        )
        .await
        .expect("binding");
}

fn rules(resources: &str, group: &str, operations: &[&str]) -> Value {
    json!({"resourceRules": [{"apiGroups": [group], "apiVersions": ["v1"],
        "operations": operations, "resources": [resources]}]})
}

fn refused(e: kube::Error) -> String {
    match e {
        kube::Error::Api(s) if s.code == 403 && s.reason == "Invalid" => s.message,
        other => panic!("expected 403 Invalid, got {other:?}"),
    }
}

fn deployment(name: &str) -> Deployment {
    from(json!({"metadata": {"name": name}, "spec": {
        "replicas": 1,
        "selector": {"matchLabels": {"app": name}},
        "template": {"metadata": {"labels": {"app": name}},
            "spec": {"containers": [{"name": "app", "image": "nginx"}]}}}}))
}

#[tokio::test]
async fn a_deployment_should_get_an_apply_configuration_and_a_json_patch() {
    let env = realistic().await;
    let client = env.client();
    namespace(&client, "deploy").await;
    policy(
        &client,
        "template",
        json!({"matchConstraints": rules("deployments", "apps", &["CREATE"]),
            "mutations": [
                {"patchType": "ApplyConfiguration", "applyConfiguration": {"expression":
                    "Object{spec: Object.spec{template: Object.spec.template{\
                        metadata: Object.spec.template.metadata{labels: {\"injected\": \"yes\"}},\
                        spec: Object.spec.template.spec{containers: [\
                            Object.spec.template.spec.containers{name: \"sidecar\", image: \"busybox\"}]}}}}"}},
                {"patchType": "JSONPatch", "jsonPatch": {"expression":
                    "[JSONPatch{op: \"replace\", path: \"/spec/replicas\", value: 3}]"}},
                // Admission sees a new object before the storage gives it a uid.
                {"patchType": "JSONPatch", "jsonPatch": {"expression":
                    "[JSONPatch{op: \"add\", path: \"/metadata/annotations\", \
                        value: {\"had-uid\": string(has(object.metadata.uid))}}]"}}
            ]}),
        json!({}),
    )
    .await;
    let deployments: Api<Deployment> = Api::namespaced(client.clone(), "deploy");
    let created = deployments
        .create(&PostParams::default(), &deployment("d1"))
        .await
        .unwrap();
    let created = serde_json::to_value(&created).unwrap();
    let at = |p: &str| created.pointer(p).cloned().unwrap_or(Value::Null);
    assert_eq!(at("/spec/replicas"), json!(3));
    assert_eq!(at("/metadata/annotations"), json!({"had-uid": "false"}));
    assert!(at("/metadata/uid").is_string());
    assert_eq!(
        at("/spec/template/metadata/labels"),
        json!({"app": "d1", "injected": "yes"})
    );
    // `containers` is keyed by name: the live container stays, the sidecar joins it and gets
    // the kind's defaults.
    assert_eq!(at("/spec/template/spec/containers/0/name"), json!("app"));
    assert_eq!(at("/spec/template/spec/containers/0/image"), json!("nginx"));
    assert_eq!(
        at("/spec/template/spec/containers/1/name"),
        json!("sidecar")
    );
    assert_eq!(
        at("/spec/template/spec/containers/1/terminationMessagePath"),
        json!("/dev/termination-log")
    );
    // The mutation is owned by no field manager.
    let owned = at("/metadata/managedFields").to_string();
    assert!(!owned.contains("injected"), "{owned}");
}

#[tokio::test]
async fn atomic_fields_and_misnamed_types_should_be_refused() {
    let env = realistic().await;
    let client = env.client();
    namespace(&client, "atomic").await;
    policy(
        &client,
        "selector",
        json!({"matchConstraints": rules("deployments", "apps", &["CREATE"]),
            "mutations": [{"patchType": "ApplyConfiguration", "applyConfiguration": {"expression":
                "Object{spec: Object.spec{selector: Object.spec.selector{matchLabels: {\"x\": \"y\"}}}}"}}]}),
        json!({}),
    )
    .await;
    let deployments: Api<Deployment> = Api::namespaced(client.clone(), "atomic");
    let err = deployments
        .create(&PostParams::default(), &deployment("d1"))
        .await
        .unwrap_err();
    assert_eq!(
        refused(err),
        "policy 'selector' with binding 'selector' denied request: error applying patch: invalid ApplyConfiguration: may not mutate atomic arrays, maps or structs: .spec.selector"
    );

    let env = realistic().await;
    let client = env.client();
    namespace(&client, "names").await;
    policy(
        &client,
        "names",
        json!({"matchConstraints": rules("configmaps", "", &["CREATE"]),
            "mutations": [{"patchType": "ApplyConfiguration", "applyConfiguration": {"expression":
                "Object{metadata: Object.spec{labels: {\"x\": \"y\"}}}"}}]}),
        json!({"matchResources": {"objectSelector": {"matchExpressions": [
            {"key": "typed", "operator": "DoesNotExist"}]}}}),
    )
    .await;
    let err = Api::<ConfigMap>::namespaced(client.clone(), "names")
        .create(
            &PostParams::default(),
            &from(json!({"metadata": {"name": "c"}})),
        )
        .await
        .unwrap_err();
    assert_eq!(
        refused(err),
        "policy 'names' with binding 'names' denied request: type mismatch: unexpected type name \"Object.spec\", expected \"Object.metadata\", which matches field name path from root Object type"
    );
    policy(
        &client,
        "undeclared",
        json!({"matchConstraints": rules("configmaps", "", &["CREATE"]),
            "mutations": [{"patchType": "ApplyConfiguration", "applyConfiguration": {"expression":
                "Object{spec: Object.spec{x: 1}}"}}]}),
        json!({"matchResources": {"objectSelector": {"matchLabels": {"typed": "yes"}}}}),
    )
    .await;
    let err = Api::<ConfigMap>::namespaced(client.clone(), "names")
        .create(
            &PostParams::default(),
            &from(json!({"metadata": {"name": "t", "labels": {"typed": "yes"}}})),
        )
        .await
        .unwrap_err();
    let message = refused(err);
    assert_eq!(
        message,
        "policy 'undeclared' with binding 'undeclared' denied request: error applying patch: failed to convert patch object to typed object: .spec: field not declared in schema"
    );
}

#[tokio::test]
async fn params_variables_and_match_conditions_should_choose_the_mutation() {
    let env = realistic().await;
    let client = env.client();
    namespace(&client, "params").await;
    let config_maps: Api<ConfigMap> = Api::namespaced(client.clone(), "params");
    config_maps
        .create(
            &PostParams::default(),
            &from(json!({"metadata": {"name": "settings"}, "data": {"team": "blue"}})),
        )
        .await
        .unwrap();
    policy(
        &client,
        "team",
        json!({"paramKind": {"apiVersion": "v1", "kind": "ConfigMap"},
            "matchConstraints": rules("configmaps", "", &["CREATE"]),
            "matchConditions": [{"name": "prefixed",
                "expression": "object.metadata.name.startsWith('m-')"}],
            "variables": [{"name": "team", "expression": "params.data.team + '-' + request.operation"}],
            "mutations": [{"patchType": "ApplyConfiguration", "applyConfiguration": {"expression":
                "Object{metadata: Object.metadata{labels: {\"team\": variables.team}}}"}}]}),
        json!({"paramRef": {"name": "settings", "parameterNotFoundAction": "Deny"}}),
    )
    .await;
    let mutated = config_maps
        .create(
            &PostParams::default(),
            &from(json!({"metadata": {"name": "m-1"}})),
        )
        .await
        .unwrap();
    assert_eq!(
        mutated.labels().get("team").map(String::as_str),
        Some("blue-CREATE")
    );
    let left = config_maps
        .create(
            &PostParams::default(),
            &from(json!({"metadata": {"name": "x-1"}})),
        )
        .await
        .unwrap();
    assert!(left.labels().get("team").is_none());
    // Without its param the binding cannot be configured: every failure is a cause, the first
    // one the message, and a configuration error keeps the reason `Forbidden`.
    policy(
        &client,
        "missing",
        json!({"paramKind": {"apiVersion": "v1", "kind": "ConfigMap"},
            "matchConstraints": rules("configmaps", "", &["CREATE"]),
            "mutations": [{"patchType": "JSONPatch", "jsonPatch": {"expression": "[]"}}]}),
        json!({"paramRef": {"name": "absent", "parameterNotFoundAction": "Deny"}}),
    )
    .await;
    let response = crate::common::raw(
        env.addr(),
        "POST",
        "/api/v1/namespaces/params/configmaps",
        &[("Content-Type", "application/json")],
        br#"{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"m-2"}}"#,
    )
    .await;
    let message = "policy 'missing' with binding 'missing' denied request: failed to configure binding: no params found for policy binding with `Deny` parameterNotFoundAction";
    assert_eq!(
        response.json(),
        json!({"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
            "message": message, "reason": "Forbidden",
            "details": {"name": "m-2", "kind": "configmaps", "causes": [{"message": message}]},
            "code": 403})
    );
}

#[tokio::test]
async fn an_expression_error_should_refuse_unless_the_failure_policy_ignores_it() {
    let env = realistic().await;
    let client = env.client();
    namespace(&client, "failures").await;
    for (name, failure_policy) in [("fail", "Fail"), ("ignore", "Ignore")] {
        policy(
            &client,
            name,
            json!({"failurePolicy": failure_policy,
            "matchConstraints": rules("configmaps", "", &["CREATE"]),
            "mutations": [
                {"patchType": "ApplyConfiguration", "applyConfiguration": {"expression":
                    "Object{metadata: Object.metadata{labels: {\"v\": object.data.missing}}}"}},
                {"patchType": "JSONPatch", "jsonPatch": {"expression":
                    "[JSONPatch{op: \"add\", path: \"/data/ran\", value: \"yes\"}]"}}
            ]}),
            json!({"matchResources": {"objectSelector": {"matchLabels": {"policy": name}}}}),
        )
        .await;
    }
    let config_maps: Api<ConfigMap> = Api::namespaced(client.clone(), "failures");
    let err = config_maps
        .create(
            &PostParams::default(),
            &from(json!({"metadata": {"name": "f", "labels": {"policy": "fail"}}, "data": {"a": "1"}})),
        )
        .await
        .unwrap_err();
    let message = refused(err);
    assert_eq!(
        message,
        "policy 'fail' with binding 'fail' denied request: expression 'Object{metadata: Object.metadata{labels: {\"v\": object.data.missing}}}' resulted in error: no such key: missing"
    );
    // Ignored: the failed mutation changes nothing, the next one still runs.
    let kept = config_maps
        .create(
            &PostParams::default(),
            &from(json!({"metadata": {"name": "i", "labels": {"policy": "ignore"}}, "data": {"a": "1"}})),
        )
        .await
        .unwrap();
    assert!(kept.labels().get("v").is_none());
    assert_eq!(
        kept.data.unwrap().get("ran").map(String::as_str),
        Some("yes")
    );
}

#[tokio::test]
async fn a_policy_on_update_should_see_the_old_object() {
    let env = realistic().await;
    let client = env.client();
    namespace(&client, "updates").await;
    policy(
        &client,
        "previous",
        json!({"matchConstraints": rules("configmaps", "", &["UPDATE"]),
            "mutations": [{"patchType": "JSONPatch", "jsonPatch": {"expression":
                "[JSONPatch{op: \"add\", path: \"/metadata/annotations\", value: {\"previous\": oldObject.data.v}}]"}}]}),
        json!({}),
    )
    .await;
    let config_maps: Api<ConfigMap> = Api::namespaced(client.clone(), "updates");
    let created = config_maps
        .create(
            &PostParams::default(),
            &from(json!({"metadata": {"name": "c"}, "data": {"v": "1"}})),
        )
        .await
        .unwrap();
    assert!(created.annotations().is_empty(), "not on create");
    let mut changed = created.clone();
    changed.data = Some([("v".to_owned(), "2".to_owned())].into());
    let updated = config_maps
        .replace("c", &PostParams::default(), &changed)
        .await
        .unwrap();
    assert_eq!(
        updated.annotations().get("previous").map(String::as_str),
        Some("1")
    );
    assert_eq!(
        updated.data.unwrap().get("v").map(String::as_str),
        Some("2")
    );
}

#[tokio::test]
async fn an_if_needed_policy_should_run_again_after_a_later_mutation() {
    let env = realistic().await;
    let client = env.client();
    namespace(&client, "again").await;
    // Policies run in name order: `a-copy` runs before `b-source` sets what it copies.
    for (name, reinvocation) in [("a-copy", "IfNeeded"), ("a-never", "Never")] {
        let label = if reinvocation == "IfNeeded" {
            "copied"
        } else {
            "never"
        };
        policy(
            &client,
            name,
            json!({"reinvocationPolicy": reinvocation,
                "matchConstraints": rules("configmaps", "", &["CREATE"]),
                "mutations": [{"patchType": "ApplyConfiguration", "applyConfiguration": {"expression":
                    format!("has(object.data) && 'src' in object.data ? \
                        Object{{metadata: Object.metadata{{labels: {{\"{label}\": object.data.src}}}}}} : Object{{}}")}}]}),
            json!({}),
        )
        .await;
    }
    policy(
        &client,
        "b-source",
        json!({"matchConstraints": rules("configmaps", "", &["CREATE"]),
            "mutations": [{"patchType": "ApplyConfiguration", "applyConfiguration": {"expression":
                "Object{data: {\"src\": \"v\"}}"}}]}),
        json!({}),
    )
    .await;
    let created = Api::<ConfigMap>::namespaced(client.clone(), "again")
        .create(
            &PostParams::default(),
            &from(json!({"metadata": {"name": "c"}})),
        )
        .await
        .unwrap();
    assert_eq!(
        created.labels().get("copied").map(String::as_str),
        Some("v")
    );
    assert!(created.labels().get("never").is_none());
}

#[tokio::test]
async fn the_plugin_switched_off_should_not_mutate() {
    let env = kcr_testenv::TestEnv::builder()
        .realistic()
        .admission_plugin("MutatingAdmissionPolicy", false)
        .start()
        .await
        .unwrap();
    let client = env.client();
    namespace(&client, "off").await;
    policy(
        &client,
        "label",
        json!({"matchConstraints": rules("configmaps", "", &["CREATE"]),
            "mutations": [{"patchType": "ApplyConfiguration", "applyConfiguration": {"expression":
                "Object{metadata: Object.metadata{labels: {\"mutated\": \"true\"}}}"}}]}),
        json!({}),
    )
    .await;
    let created = Api::<ConfigMap>::namespaced(client.clone(), "off")
        .create(
            &PostParams::default(),
            &from(json!({"metadata": {"name": "c"}})),
        )
        .await
        .unwrap();
    assert!(created.labels().is_empty());
}

#[tokio::test]
async fn a_refusal_should_carry_its_causes() {
    let env = realistic().await;
    let client = env.client();
    namespace(&client, "causes").await;
    policy(
        &client,
        "remove",
        json!({"matchConstraints": rules("configmaps", "", &["CREATE"]),
            "mutations": [{"patchType": "JSONPatch", "jsonPatch": {"expression":
                "[JSONPatch{op: \"remove\", path: \"/data/nope\"}]"}},
                {"patchType": "JSONPatch", "jsonPatch": {"expression":
                "[JSONPatch{op: \"test\", path: \"/data/a\", value: \"2\"}, \
                  JSONPatch{op: \"replace\", path: \"/x/y\", value: 1}]"}},
                {"patchType": "JSONPatch", "jsonPatch": {"expression":
                "[JSONPatch{op: \"replace\", path: \"/x/y\", value: 1}]"}}]}),
        json!({}),
    )
    .await;
    let response = crate::common::raw(
        env.addr(),
        "POST",
        "/api/v1/namespaces/causes/configmaps",
        &[("Content-Type", "application/json")],
        br#"{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c"},"data":{"a":"1"}}"#,
    )
    .await;
    // Each failed mutation is a cause; a failed `test` leaves the object as it was.
    let message = "policy 'remove' with binding 'remove' denied request: JSON Patch: error in remove for path: '/data/nope': Unable to remove nonexistent key: nope: missing value";
    let second = "policy 'remove' with binding 'remove' denied request: JSON Patch: replace operation does not apply: doc is missing path: /x/y: missing value";
    assert_eq!(
        response.json(),
        json!({"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
            "message": message, "reason": "Invalid",
            "details": {"name": "c", "kind": "configmaps",
                "causes": [{"message": message}, {"message": second}]},
            "code": 403})
    );
}

#[tokio::test]
async fn a_custom_resource_should_merge_by_its_schemas_list_map_keys() {
    let env = realistic().await;
    let client = env.client();
    namespace(&client, "custom").await;
    let crds = Api::<DynamicObject>::all_with(
        client.clone(),
        &ApiResource::from_gvk_with_plural(
            &GroupVersionKind::gvk("apiextensions.k8s.io", "v1", "CustomResourceDefinition"),
            "customresourcedefinitions",
        ),
    );
    let item = json!({"type": "object", "properties": {
        "name": {"type": "string"}, "v": {"type": "integer"}}, "required": ["name"]});
    crds.create(
        &PostParams::default(),
        &from(
            json!({"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
            "metadata": {"name": "gadgets.map.example.com"},
            "spec": {"group": "map.example.com", "scope": "Namespaced",
                "names": {"plural": "gadgets", "singular": "gadget", "kind": "Gadget",
                    "listKind": "GadgetList"},
                "versions": [{"name": "v1", "served": true, "storage": true,
                    "schema": {"openAPIV3Schema": {"type": "object", "properties": {
                        "spec": {"type": "object", "properties": {
                            "items": {"type": "array", "items": item,
                                "x-kubernetes-list-type": "map",
                                "x-kubernetes-list-map-keys": ["name"]},
                            "tags": {"type": "array", "items": {"type": "string"}}}}}}}}]}}),
        ),
    )
    .await
    .unwrap();
    policy(
        &client,
        "gadgets",
        json!({"matchConstraints": rules("gadgets", "map.example.com", &["CREATE"]),
            "mutations": [{"patchType": "ApplyConfiguration", "applyConfiguration": {"expression":
                "Object{spec: Object.spec{items: [Object.spec.items{name: \"b\", v: 2}, \
                    Object.spec.items{name: \"a\", v: 9}]}}"}}]}),
        json!({}),
    )
    .await;
    let gadgets = Api::<DynamicObject>::namespaced_with(
        client.clone(),
        "custom",
        &ApiResource::from_gvk_with_plural(
            &GroupVersionKind::gvk("map.example.com", "v1", "Gadget"),
            "gadgets",
        ),
    );
    let body = json!({"apiVersion": "map.example.com/v1", "kind": "Gadget",
        "metadata": {"name": "g"}, "spec": {"items": [{"name": "a", "v": 1}, {"name": "c", "v": 3}]}});
    let mut created = None;
    // The CRD's resource is served once it is established.
    for _ in 0..100 {
        match gadgets
            .create(&PostParams::default(), &from(body.clone()))
            .await
        {
            Ok(g) => {
                created = Some(g);
                break;
            }
            Err(_) => tokio::time::sleep(std::time::Duration::from_millis(50)).await,
        }
    }
    let created = created.expect("created");
    // Items are merged by `name` (structured-merge-diff's order: the configuration's items in
    // its order, the live items it does not name after the shared ones): `a` takes the applied
    // value, `c` stays, `b` is added.
    assert_eq!(
        created.data["spec"]["items"],
        json!([{"name": "b", "v": 2}, {"name": "a", "v": 9}, {"name": "c", "v": 3}])
    );
}

#[tokio::test]
async fn a_json_patch_to_a_field_the_kind_lacks_should_be_an_internal_error() {
    let env = realistic().await;
    let client = env.client();
    namespace(&client, "strict").await;
    policy(
        &client,
        "unknown",
        json!({"failurePolicy": "Ignore",
            "matchConstraints": rules("configmaps", "", &["CREATE"]),
            "mutations": [{"patchType": "JSONPatch", "jsonPatch": {"expression":
                "[JSONPatch{op: \"add\", path: \"/spec\", value: {\"x\": 1}}]"}}]}),
        json!({}),
    )
    .await;
    let response = crate::common::raw(
        env.addr(),
        "POST",
        "/api/v1/namespaces/strict/configmaps",
        &[("Content-Type", "application/json")],
        br#"{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c"}}"#,
    )
    .await;
    // Not a policy failure: the failure policy does not apply.
    let why = "strict decoding error: unknown field \"spec\"";
    assert_eq!(
        response.json(),
        json!({"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
            "message": format!("Internal error occurred: {why}"), "reason": "InternalError",
            "details": {"causes": [{"message": why}]}, "code": 500})
    );
}
