//! Decoding and update rules recorded from kube-apiserver v1.36 (the DECODE area): discovery's
//! `storageVersionHash`, Pod update validation with the DefaultTolerationSeconds plugin on
//! updates, empty lists of server-side apply, go-yaml's error lines and duplicate-key warnings,
//! and unknown-field warnings of custom resources.

use k8s_openapi::api::core::v1::Pod;
use kube::Client;
use kube::api::{Api, PostParams};
use serde_json::{Value, json};

async fn realistic() -> kcr_testenv::TestEnv {
    kcr_testenv::TestEnv::builder()
        .realistic()
        .start()
        .await
        .expect("start")
}

/// The `422` causes of a refused write as `field: message`.
fn causes(err: kube::Error) -> Vec<String> {
    match err {
        kube::Error::Api(s) => {
            assert_eq!(s.code, 422, "{}", s.message);
            s.details
                .map(|d| d.causes)
                .unwrap_or_default()
                .into_iter()
                .map(|c| format!("{}: {}", c.field, c.message))
                .collect()
        }
        other => panic!("expected an API error, got {other:?}"),
    }
}

fn pod(name: &str, spec: Value) -> Pod {
    serde_json::from_value(
        json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name}, "spec": spec}),
    )
    .unwrap()
}

async fn create_pod(client: &Client, ns: &str, name: &str) -> Pod {
    let api: Api<Pod> = Api::namespaced(client.clone(), ns);
    api.create(
        &PostParams::default(),
        &pod(
            name,
            json!({"automountServiceAccountToken": false,
                   "containers": [{"name": "app", "image": "registry.k8s.io/pause:3.10"}]}),
        ),
    )
    .await
    .unwrap()
}

#[tokio::test]
async fn a_pod_put_without_tolerations_should_get_them_back_from_admission() {
    let env = realistic().await;
    let api: Api<Pod> = Api::namespaced(env.client(), "default");
    let created = create_pod(&env.client(), "default", "dts-put").await;
    // The server's spec without its tolerations: DefaultTolerationSeconds adds them again on
    // update, so nothing but the labels changes.
    let mut spec = serde_json::to_value(created.spec.unwrap()).unwrap();
    spec.as_object_mut().unwrap().remove("tolerations");
    let mut put = pod("dts-put", spec);
    put.metadata.labels = Some([("x".to_owned(), "y".to_owned())].into());
    let updated = api
        .replace("dts-put", &PostParams::default(), &put)
        .await
        .unwrap();
    let tolerations = serde_json::to_value(updated.spec.unwrap().tolerations).unwrap();
    assert_eq!(
        tolerations,
        json!([
            {"key": "node.kubernetes.io/not-ready", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 300},
            {"key": "node.kubernetes.io/unreachable", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 300}
        ])
    );
    assert_eq!(updated.metadata.generation, Some(1));
}

const UPDATABLE: &str = "spec: Forbidden: pod updates may not change fields other than `spec.containers[*].image`,`spec.initContainers[*].image`,`spec.activeDeadlineSeconds`,`spec.tolerations` (only additions to existing tolerations),`spec.terminationGracePeriodSeconds` (allow it to be set to 1 if it was previously negative)";

#[tokio::test]
async fn a_pod_put_of_the_original_spec_should_name_only_the_whole_spec() {
    // kube-apiserver v1.36.2 (corpus case upd-pod-put-unconditional): the admission plugins
    // give the tolerations, priority and preemption policy back; the ServiceAccount plugin does
    // not act on updates, so the diff names only serviceAccountName.
    let env = realistic().await;
    let api: Api<Pod> = Api::namespaced(env.client(), "default");
    create_pod(&env.client(), "default", "orig").await;
    let put = pod(
        "orig",
        json!({"automountServiceAccountToken": false,
               "containers": [{"name": "app", "image": "registry.k8s.io/pause:3.10"}]}),
    );
    let err = api
        .replace("orig", &PostParams::default(), &put)
        .await
        .unwrap_err();
    let causes = causes(err);
    assert_eq!(
        causes,
        [format!(
            "{UPDATABLE}\n@@ -40,7 +40,7 @@\n  \"ActiveDeadlineSeconds\": null,\n  \"DNSPolicy\": \"ClusterFirst\",\n  \"NodeSelector\": null,\n- \"ServiceAccountName\": \"default\",\n+ \"ServiceAccountName\": \"\",\n  \"AutomountServiceAccountToken\": false,\n  \"NodeName\": \"\",\n  \"SecurityContext\": {{\n"
        )]
    );
}

/// The stored Pod's spec as JSON, changed by `f`, PUT back; the `422` causes or `Ok`.
async fn put_spec(
    api: &Api<Pod>,
    name: &str,
    f: impl FnOnce(&mut Value),
) -> Result<Pod, Vec<String>> {
    let current = api.get(name).await.unwrap();
    let mut body = serde_json::to_value(&current).unwrap();
    f(&mut body["spec"]);
    let pod: Pod = serde_json::from_value(body).unwrap();
    api.replace(name, &PostParams::default(), &pod)
        .await
        .map_err(causes)
}

#[tokio::test]
async fn pod_updates_should_allow_only_what_validate_pod_update_allows() {
    let env = realistic().await;
    let api: Api<Pod> = Api::namespaced(env.client(), "default");
    create_pod(&env.client(), "default", "p").await;
    // An image may change; a deadline may be set, then only lowered.
    put_spec(&api, "p", |s| {
        s["containers"][0]["image"] = json!("registry.k8s.io/pause:3.9")
    })
    .await
    .unwrap();
    put_spec(&api, "p", |s| s["activeDeadlineSeconds"] = json!(100))
        .await
        .unwrap();
    put_spec(&api, "p", |s| s["activeDeadlineSeconds"] = json!(50))
        .await
        .unwrap();
    assert_eq!(
        put_spec(&api, "p", |s| s["activeDeadlineSeconds"] = json!(60))
            .await
            .unwrap_err(),
        [
            "spec.activeDeadlineSeconds: Invalid value: 60: must be less than or equal to previous value"
        ]
    );
    assert_eq!(
        put_spec(&api, "p", |s| {
            s.as_object_mut().unwrap().remove("activeDeadlineSeconds");
        })
        .await
        .unwrap_err(),
        [
            "spec.activeDeadlineSeconds: Invalid value: null: must not update from a positive integer to nil value"
        ]
    );
    // `ValidatePodSpec` first (a deadline is at least 1), the update rule (at least 0) passes.
    assert_eq!(
        put_spec(&api, "p", |s| s["activeDeadlineSeconds"] = json!(0))
            .await
            .unwrap_err(),
        [
            "spec.activeDeadlineSeconds: Invalid value: 0: must be between 1 and 2147483647, inclusive"
        ]
    );
    // Tolerations may be added; an existing one may change only its tolerationSeconds.
    let added = json!({"key": "k", "operator": "Equal", "value": "v", "effect": "NoSchedule"});
    put_spec(&api, "p", |s| {
        s["tolerations"].as_array_mut().unwrap().push(added.clone())
    })
    .await
    .unwrap();
    put_spec(&api, "p", |s| {
        s["tolerations"][0]["tolerationSeconds"] = json!(60)
    })
    .await
    .unwrap();
    assert_eq!(
        put_spec(&api, "p", |s| s["tolerations"][2]["value"] = json!("w"))
            .await
            .unwrap_err(),
        [
            "spec.tolerations: Forbidden: existing toleration can not be modified except its tolerationSeconds"
        ]
    );
    // The tolerations check comes before the whole-spec check.
    let causes = put_spec(&api, "p", |s| {
        s["tolerations"][2]["value"] = json!("w");
        s["dnsPolicy"] = json!("Default");
    })
    .await
    .unwrap_err();
    assert_eq!(causes.len(), 2, "{causes:?}");
    assert_eq!(
        causes[0],
        "spec.tolerations: Forbidden: existing toleration can not be modified except its tolerationSeconds"
    );
    assert!(causes[1].starts_with(UPDATABLE), "{}", causes[1]);
    assert!(
        causes[1].contains("- \"DNSPolicy\": \"ClusterFirst\",\n+ \"DNSPolicy\": \"Default\",\n"),
        "{}",
        causes[1]
    );
    // Labels are metadata: they may change.
    let mut current = api.get("p").await.unwrap();
    current.metadata.labels = Some([("a".to_owned(), "b".to_owned())].into());
    let updated = api
        .replace("p", &PostParams::default(), &current)
        .await
        .unwrap();
    assert_eq!(updated.metadata.labels.unwrap()["a"], "b");
}

#[tokio::test]
async fn a_pod_put_without_priority_should_keep_the_stored_one() {
    let env = realistic().await;
    let api: Api<Pod> = Api::namespaced(env.client(), "default");
    create_pod(&env.client(), "default", "prio").await;
    let updated = put_spec(&api, "prio", |s| {
        let s = s.as_object_mut().unwrap();
        s.remove("priority");
        s.remove("preemptionPolicy");
    })
    .await
    .unwrap();
    let spec = updated.spec.unwrap();
    assert_eq!(spec.priority, Some(0));
    assert_eq!(
        spec.preemption_policy.as_deref(),
        Some("PreemptLowerPriority")
    );
}

/// One request over plain HTTP: status, JSON body, `Warning` header.
async fn send(
    env: &kcr_testenv::TestEnv,
    method: &str,
    path: &str,
    content_type: &str,
    body: &[u8],
) -> (u16, Value, Option<String>) {
    let r = crate::common::raw(
        env.addr(),
        method,
        path,
        &[("Content-Type", content_type)],
        body,
    )
    .await;
    // Several Warning headers joined with ", " in the order received.
    let warnings: Vec<&str> = r
        .headers
        .iter()
        .filter(|(k, _)| k.eq_ignore_ascii_case("warning"))
        .map(|(_, v)| v.as_str())
        .collect();
    let warning = (!warnings.is_empty()).then(|| warnings.join(", "));
    (r.status, r.json(), warning)
}

const APPLY: &str = "application/apply-patch+yaml";
const JSON: &str = "application/json";

#[tokio::test]
async fn empty_lists_and_maps_should_come_back_as_storage_gives_them() {
    let env = realistic().await;
    let roles = "/apis/rbac.authorization.k8s.io/v1/clusterroles";
    // Applied: `rules` has no omitempty, so it is null; the applier still owns it.
    let (status, v, _) = send(
        &env,
        "PATCH",
        &format!("{roles}/applied?fieldManager=a"),
        APPLY,
        b"apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRole\nmetadata:\n  name: applied\n  labels: {}\nrules: []\n",
    )
    .await;
    assert_eq!(status, 201, "{v}");
    assert_eq!(v["rules"], Value::Null);
    assert!(v.get("rules").is_some(), "{v}");
    assert!(v["metadata"].get("labels").is_none(), "{v}");
    assert_eq!(
        v["metadata"]["managedFields"][0]["fieldsV1"],
        json!({"f:metadata": {"f:labels": {}}, "f:rules": {}})
    );
    // Created from JSON, and as a dry run: the same.
    for path in [format!("{roles}?dryRun=All"), roles.to_owned()] {
        let body = json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole",
                          "metadata": {"name": "created"}, "rules": [{"apiGroups": [""], "resources": ["pods"], "verbs": ["get"], "resourceNames": []}]});
        let (status, v, _) = send(&env, "POST", &path, JSON, body.to_string().as_bytes()).await;
        assert_eq!(status, 201, "{v}");
        assert_eq!(
            v["rules"][0],
            json!({"apiGroups": [""], "resources": ["pods"], "verbs": ["get"]}),
            "{path}"
        );
    }
    // A PUT's empty list comes back null too.
    let (_, before, _) = send(&env, "GET", &format!("{roles}/applied"), JSON, b"").await;
    let mut put = before.clone();
    put["rules"] = json!([]);
    put["metadata"]["labels"] = json!({"x": "y"});
    let (status, after, _) = send(
        &env,
        "PUT",
        &format!("{roles}/applied"),
        JSON,
        put.to_string().as_bytes(),
    )
    .await;
    assert_eq!(status, 200, "{after}");
    assert_eq!(after["rules"], Value::Null);
    assert!(after.get("rules").is_some(), "{after}");
    // A ConfigMap's empty data (omitempty) is dropped.
    let (status, v, _) = send(
        &env,
        "POST",
        "/api/v1/namespaces/default/configmaps",
        JSON,
        br#"{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"empty","annotations":{}},"data":{}}"#,
    )
    .await;
    assert_eq!(status, 201, "{v}");
    assert!(
        v.get("data").is_none() && v["metadata"].get("annotations").is_none(),
        "{v}"
    );
}

/// A Widget CRD of group `group`: v1 served and stored (spec.size, a free-form spec.config,
/// an embedded spec.template), v2 not served (spec.size only).
async fn widget_crd(env: &kcr_testenv::TestEnv, group: &str) {
    let v1 = json!({"type": "object", "properties": {"spec": {"type": "object", "properties": {
        "size": {"type": "integer"},
        "config": {"type": "object", "x-kubernetes-preserve-unknown-fields": true},
        "template": {"type": "object", "x-kubernetes-embedded-resource": true,
                     "properties": {"data": {"type": "object", "properties": {"a": {"type": "string"}}}}}
    }}}});
    let v2 = json!({"type": "object", "properties": {"spec": {"type": "object", "properties": {
        "size": {"type": "integer"}}}}});
    let crd = json!({"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
    "metadata": {"name": format!("widgets.{group}")},
    "spec": {"group": group, "scope": "Namespaced",
        "names": {"plural": "widgets", "singular": "widget", "kind": "Widget", "listKind": "WidgetList"},
        "versions": [
            {"name": "v1", "served": true, "storage": true, "schema": {"openAPIV3Schema": v1}},
            {"name": "v2", "served": false, "storage": false, "schema": {"openAPIV3Schema": v2}}
        ]}});
    let (status, v, _) = send(
        env,
        "POST",
        "/apis/apiextensions.k8s.io/v1/customresourcedefinitions",
        JSON,
        crd.to_string().as_bytes(),
    )
    .await;
    assert_eq!(status, 201, "{v}");
}

#[tokio::test]
async fn a_custom_resource_of_another_version_should_be_pruned_by_that_version_first() {
    let env = realistic().await;
    widget_crd(&env, "other.example.com").await;
    let path = "/apis/other.example.com/v1/namespaces/default/widgets";
    let body = |api_version: &str| {
        json!({"apiVersion": api_version, "kind": "Widget", "metadata": {"name": "w1"},
               "spec": {"size": 1, "extra": true}, "status": {"x": 1}})
        .to_string()
    };
    let mismatch = |v: &str| {
        format!(
            "the API version in the data ({v}) does not match the expected API version (other.example.com/v1)"
        )
    };
    // A version the CRD does not have: everything but apiVersion, kind and metadata is unknown.
    let (status, v, warning) = send(
        &env,
        "POST",
        path,
        JSON,
        body("other.example.com/v3").as_bytes(),
    )
    .await;
    assert_eq!(status, 400);
    assert_eq!(v["message"], mismatch("other.example.com/v3"));
    assert_eq!(
        warning.as_deref(),
        Some(r#"299 - "unknown field \"spec\"", 299 - "unknown field \"status\"""#)
    );
    // A version the CRD has (not served): pruned by its schema.
    let (status, v, warning) = send(
        &env,
        "POST",
        path,
        JSON,
        body("other.example.com/v2").as_bytes(),
    )
    .await;
    assert_eq!(status, 400);
    assert_eq!(v["message"], mismatch("other.example.com/v2"));
    assert_eq!(
        warning.as_deref(),
        Some(r#"299 - "unknown field \"spec.extra\"", 299 - "unknown field \"status\"""#)
    );
    // Strict: the strict decoding error comes first; Ignore: no warning.
    let (status, v, _) = send(
        &env,
        "POST",
        &format!("{path}?fieldValidation=Strict"),
        JSON,
        body("other.example.com/v3").as_bytes(),
    )
    .await;
    assert_eq!(status, 400);
    assert_eq!(
        v["message"],
        r#"Widget in version "v3" cannot be handled as a Widget: strict decoding error: unknown field "spec", unknown field "status""#
    );
    let (status, _, warning) = send(
        &env,
        "POST",
        &format!("{path}?fieldValidation=Ignore"),
        JSON,
        body("other.example.com/v3").as_bytes(),
    )
    .await;
    assert_eq!((status, warning), (400, None));
    // Another group, or no apiVersion: not pruned.
    for api_version in ["elsewhere.example.com/v1", ""] {
        let (status, v, warning) =
            send(&env, "POST", path, JSON, body(api_version).as_bytes()).await;
        assert_eq!(status, 400);
        assert_eq!(v["message"], mismatch(api_version));
        assert_eq!(warning, None);
    }
}

#[tokio::test]
async fn unknown_fields_of_a_custom_resource_should_warn_on_every_write() {
    let env = realistic().await;
    widget_crd(&env, "unknown.example.com").await;
    let path = "/apis/unknown.example.com/v1/namespaces/default/widgets";
    let body = json!({"apiVersion": "unknown.example.com/v1", "kind": "Widget", "metadata": {"name": "w1"},
        "spec": {"size": 1, "foo": 1, "config": {"any": {"thing": 1}},
                 "template": {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "x"},
                              "data": {"a": "1", "b": "2"}}}});
    let expected =
        r#"299 - "unknown field \"spec.foo\"", 299 - "unknown field \"spec.template.data.b\"""#;
    // Strict refuses the create, Ignore drops silently, Warn (the default) warns.
    let (status, v, _) = send(
        &env,
        "POST",
        &format!("{path}?fieldValidation=Strict"),
        JSON,
        body.to_string().as_bytes(),
    )
    .await;
    assert_eq!(status, 400);
    assert_eq!(
        v["message"],
        r#"Widget in version "v1" cannot be handled as a Widget: strict decoding error: unknown field "spec.foo", unknown field "spec.template.data.b""#
    );
    let (status, v, warning) = send(
        &env,
        "POST",
        &format!("{path}?fieldValidation=Ignore&dryRun=All"),
        JSON,
        body.to_string().as_bytes(),
    )
    .await;
    assert_eq!((status, warning), (201, None), "{v}");
    let (status, created, warning) =
        send(&env, "POST", path, JSON, body.to_string().as_bytes()).await;
    assert_eq!(status, 201, "{created}");
    assert_eq!(warning.as_deref(), Some(expected));
    // Pruned; what preserves unknown fields and the embedded object's metadata stay.
    assert_eq!(created["spec"]["config"], json!({"any": {"thing": 1}}));
    assert_eq!(
        created["spec"]["template"],
        json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "x"}, "data": {"a": "1"}})
    );
    assert!(created["spec"].get("foo").is_none());
    // An update and a merge patch warn the same way.
    let mut put = body.clone();
    put["metadata"]["resourceVersion"] = created["metadata"]["resourceVersion"].clone();
    let (status, _, warning) = send(
        &env,
        "PUT",
        &format!("{path}/w1"),
        JSON,
        put.to_string().as_bytes(),
    )
    .await;
    assert_eq!(status, 200);
    assert_eq!(warning.as_deref(), Some(expected));
    let (status, _, warning) = send(
        &env,
        "PATCH",
        &format!("{path}/w1"),
        "application/merge-patch+json",
        br#"{"spec": {"bar": {"baz": 1}}}"#,
    )
    .await;
    assert_eq!(status, 200);
    assert_eq!(
        warning.as_deref(),
        Some(r#"299 - "unknown field \"spec.bar\"""#)
    );
}

#[tokio::test]
async fn apply_bodies_should_read_as_go_yaml_reads_them() {
    let env = realistic().await;
    let cm = "/api/v1/namespaces/default/configmaps";
    let apply = |name: &str, query: &str| format!("{cm}/{name}?fieldManager=a{query}");
    // Syntax errors with go-yaml's lines.
    let (status, v, _) = send(
        &env,
        "PATCH",
        &apply("c", ""),
        APPLY,
        b"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\n   bad: x\n",
    )
    .await;
    assert_eq!(status, 400);
    assert_eq!(
        v["message"],
        "error decoding YAML: error converting YAML to JSON: yaml: line 5: mapping values are not allowed in this context"
    );
    let (_, v, _) = send(
        &env,
        "PATCH",
        &apply("c", ""),
        APPLY,
        b"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: 'c\n",
    )
    .await;
    assert_eq!(
        v["message"],
        "error decoding YAML: error converting YAML to JSON: yaml: line 5: found unexpected end of stream"
    );
    let (_, v, _) = send(
        &env,
        "PATCH",
        &apply("c", ""),
        APPLY,
        b"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\n labels: {}\n",
    )
    .await;
    assert_eq!(
        v["message"],
        "error decoding YAML: error converting YAML to JSON: yaml: line 4: did not find expected key"
    );
    // Repeated keys: a warning each (Warn), a 400 (Strict), nothing (Ignore).
    let repeated = b"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\ndata:\n  a: '1'\n  b: '1'\n  a: '2'\n  b: '2'\n";
    let (status, v, _) = send(
        &env,
        "PATCH",
        &apply("c", "&fieldValidation=Strict"),
        APPLY,
        repeated,
    )
    .await;
    assert_eq!(status, 400);
    assert_eq!(
        v["message"],
        "error strict decoding YAML: error converting YAML to JSON: yaml: unmarshal errors:\n  line 8: key \"a\" already set in map\n  line 9: key \"b\" already set in map"
    );
    let (status, _, warning) = send(
        &env,
        "PATCH",
        &apply("c", "&fieldValidation=Ignore&dryRun=All"),
        APPLY,
        repeated,
    )
    .await;
    assert_eq!((status, warning), (201, None));
    let (status, v, warning) = send(&env, "PATCH", &apply("c", ""), APPLY, repeated).await;
    assert_eq!(status, 201);
    assert_eq!(v["data"], json!({"a": "2", "b": "2"}));
    assert_eq!(
        warning.as_deref(),
        Some(
            r#"299 - "line 8: key \"a\" already set in map", 299 - "line 9: key \"b\" already set in map""#
        )
    );
    // The first document only; an empty body has no apiVersion and kind; a list is no object.
    let (status, v, _) = send(&env, "PATCH", &apply("c", ""), APPLY, b"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\ndata:\n  a: '3'\n---\nnot: [valid\n").await;
    assert_eq!(status, 200, "{v}");
    assert_eq!(v["data"], json!({"a": "3"}));
    let (status, v, _) = send(&env, "PATCH", &apply("c", ""), APPLY, b"").await;
    assert_eq!(
        (status, v["message"].as_str()),
        (400, Some("invalid object type: /, Kind="))
    );
    let (status, v, _) = send(&env, "PATCH", &apply("c", ""), APPLY, b"- a\n").await;
    assert_eq!(status, 400);
    assert_eq!(
        v["message"],
        "error decoding YAML: error unmarshaling JSON: while decoding JSON: json: cannot unmarshal array into Go value of type map[string]interface {}"
    );
}

#[tokio::test]
async fn apply_configurations_of_the_wrong_type_should_be_refused_as_structured_merge_diff_does() {
    let env = realistic().await;
    let apply =
        |name: &str| format!("/apis/apps/v1/namespaces/default/deployments/{name}?fieldManager=a");
    let deployment = |spec: &str| {
        format!("apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: d\nspec:\n{spec}")
    };
    let prefix = "failed to create typed patch object (/d; apps/v1, Kind=Deployment): ";
    for (spec, error) in [
        (
            "  replicas: three\n",
            ".spec.replicas: expected numeric (int or float), got string",
        ),
        ("  bogus: 1\n", ".spec.bogus: field not declared in schema"),
        (
            "  selector: [a]\n",
            ".spec.selector: expected map, got &{[a]}",
        ),
        (
            "  template:\n    spec:\n      containers:\n      - name: a\n        image: 1.5\n",
            ".spec.template.spec.containers[name=\"a\"].image: expected string, got &value.valueUnstructured{Value:1.5}",
        ),
        (
            "  template:\n    spec:\n      containers:\n      - name: a\n      - name: a\n",
            ".spec.template.spec.containers: duplicate entries for key [name=\"a\"]",
        ),
    ] {
        let (status, v, _) = send(
            &env,
            "PATCH",
            &apply("d"),
            APPLY,
            deployment(spec).as_bytes(),
        )
        .await;
        assert_eq!(status, 500, "{spec}: {v}");
        assert_eq!(v["message"], format!("{prefix}{error}"), "{spec}");
        assert!(v.get("reason").is_none(), "{v}");
    }
    // Nothing was created.
    let (status, _, _) = send(
        &env,
        "GET",
        "/apis/apps/v1/namespaces/default/deployments/d",
        JSON,
        b"",
    )
    .await;
    assert_eq!(status, 404);
}

#[tokio::test]
async fn a_gated_pod_should_only_gain_node_selector_entries() {
    let env = realistic().await;
    let api: Api<Pod> = Api::namespaced(env.client(), "default");
    api.create(
        &PostParams::default(),
        &pod(
            "gated",
            json!({"schedulingGates": [{"name": "g"}], "nodeSelector": {"a": "1"},
                   "containers": [{"name": "app", "image": "registry.k8s.io/pause:3.10"}]}),
        ),
    )
    .await
    .unwrap();
    // An entry added: allowed while gated.
    let updated = put_spec(&api, "gated", |s| s["nodeSelector"]["b"] = json!("2"))
        .await
        .unwrap();
    assert_eq!(updated.spec.unwrap().node_selector.unwrap().len(), 2);
    // Changed or removed: refused, with the new selector as Go prints it.
    assert_eq!(
        put_spec(&api, "gated", |s| s["nodeSelector"] =
            json!({"a": "9", "b": "2"}))
        .await
        .unwrap_err(),
        [
            "spec.nodeSelector: Invalid value: map[string]string{\"a\":\"9\", \"b\":\"2\"}: only additions to spec.nodeSelector are allowed (no mutations or deletions)"
        ]
    );
    // Without its gates a Pod's node selector is as immutable as the rest of its spec.
    put_spec(&api, "gated", |s| {
        s.as_object_mut().unwrap().remove("schedulingGates");
    })
    .await
    .unwrap();
    let causes = put_spec(&api, "gated", |s| s["nodeSelector"]["c"] = json!("3"))
        .await
        .unwrap_err();
    assert!(causes[0].starts_with(UPDATABLE), "{causes:?}");
}
