//! CRD validation rules (`x-kubernetes-validations`, CEL) through `kube::Client`, and the
//! managed fields of what Go's types add to a write: the zero values of the fields a write
//! leaves out (`lastProbeTime: null` owned as `f:lastProbeTime`), a Pod's IP lists, and a
//! `managedFields` reset.

use kcr_testenv::TestEnv;
use kube::Client;
use kube::api::{
    Api, ApiResource, DynamicObject, GroupVersionKind, Patch, PatchParams, PostParams,
};
use serde_json::{Value, json};

fn crd_api(env: &TestEnv) -> Api<DynamicObject> {
    Api::all_with(
        env.client(),
        &ApiResource::from_gvk_with_plural(
            &GroupVersionKind::gvk("apiextensions.k8s.io", "v1", "CustomResourceDefinition"),
            "customresourcedefinitions",
        ),
    )
}

/// A namespaced `Widget` CRD in `group` (one version `v1` of `schema`, a status subresource).
fn widget_crd(group: &str, schema: Value) -> DynamicObject {
    serde_json::from_value(json!({
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": format!("widgets.{group}")},
        "spec": {
            "group": group,
            "scope": "Namespaced",
            "names": {"plural": "widgets", "singular": "widget", "kind": "Widget",
                "listKind": "WidgetList"},
            "versions": [{"name": "v1", "served": true, "storage": true,
                "schema": {"openAPIV3Schema": schema}, "subresources": {"status": {}}}]
        }
    }))
    .unwrap()
}

fn widgets(env: &TestEnv, group: &str) -> Api<DynamicObject> {
    Api::namespaced_with(
        env.client(),
        "default",
        &ApiResource::from_gvk_with_plural(
            &GroupVersionKind::gvk(group, "v1", "Widget"),
            "widgets",
        ),
    )
}

async fn create_crd(env: &TestEnv, group: &str, schema: Value) -> Api<DynamicObject> {
    crd_api(env)
        .create(&PostParams::default(), &widget_crd(group, schema))
        .await
        .unwrap();
    widgets(env, group)
}

fn widget(group: &str, name: &str, spec: Value) -> DynamicObject {
    serde_json::from_value(
        json!({"apiVersion": format!("{group}/v1"), "kind": "Widget",
        "metadata": {"name": name}, "spec": spec}),
    )
    .unwrap()
}

/// The Status of a refused write: `(message, [(reason, field, message)])`.
fn refusal(r: Result<DynamicObject, kube::Error>) -> (String, Vec<(String, String, String)>) {
    match r {
        Err(kube::Error::Api(s)) => {
            assert_eq!(
                (s.code, s.reason.as_str()),
                (422, "Invalid"),
                "{}",
                s.message
            );
            let mut causes: Vec<(String, String, String)> = s
                .details
                .map(|d| {
                    d.causes
                        .into_iter()
                        .map(|c| (c.reason, c.field, c.message))
                        .collect()
                })
                .unwrap_or_default();
            // The order of causes of sibling fields is not fixed (Go map order).
            causes.sort();
            (s.message, causes)
        }
        other => panic!("expected 422, got {other:?}"),
    }
}

fn cause(reason: &str, field: &str, message: &str) -> (String, String, String) {
    (reason.into(), field.into(), message.into())
}

async fn merge(api: &Api<DynamicObject>, name: &str, patch: Value) -> kube::Result<DynamicObject> {
    api.patch(name, &PatchParams::default(), &Patch::Merge(patch))
        .await
}

#[tokio::test]
async fn transition_rules_should_compare_with_the_old_object_on_update_only() {
    let env = TestEnv::start().await.unwrap();
    let g = "t.example.com";
    let api = create_crd(
        &env,
        g,
        json!({"type": "object", "properties": {"spec": {"type": "object",
            "x-kubernetes-validations": [{"rule": "self.region == oldSelf.region",
                "message": "region is immutable"}],
            "properties": {"region": {"type": "string"}, "size": {"type": "integer",
                "x-kubernetes-validations": [{"rule": "self >= oldSelf",
                    "message": "size may only grow"}]}}}}}),
    )
    .await;
    // A create has no old object: the transition rules do not run.
    let w = api
        .create(
            &PostParams::default(),
            &widget(g, "w1", json!({"region": "eu", "size": 2})),
        )
        .await
        .unwrap();
    assert_eq!(w.metadata.generation, Some(1));

    let (message, causes) = refusal(merge(&api, "w1", json!({"spec": {"region": "us"}})).await);
    assert_eq!(
        message,
        format!("Widget.{g} \"w1\" is invalid: spec: Invalid value: region is immutable")
    );
    assert_eq!(
        causes,
        vec![cause(
            "FieldValueInvalid",
            "spec",
            "Invalid value: region is immutable"
        )]
    );
    let (message, _) = refusal(merge(&api, "w1", json!({"spec": {"size": 1}})).await);
    assert_eq!(
        message,
        format!("Widget.{g} \"w1\" is invalid: spec.size: Invalid value: 1: size may only grow")
    );
    // Both at once: one cause each.
    let (message, causes) =
        refusal(merge(&api, "w1", json!({"spec": {"size": 1, "region": "us"}})).await);
    assert!(
        message.starts_with(&format!("Widget.{g} \"w1\" is invalid: [")),
        "{message}"
    );
    assert_eq!(causes.len(), 2);

    let w = merge(&api, "w1", json!({"spec": {"size": 3}}))
        .await
        .unwrap();
    assert_eq!(w.data["spec"], json!({"region": "eu", "size": 3}));
    assert_eq!(w.metadata.generation, Some(2));
}

#[tokio::test]
async fn rules_should_answer_with_their_message_expression_reason_and_field_path() {
    let env = TestEnv::start().await.unwrap();
    let g = "m.example.com";
    let api = create_crd(
        &env,
        g,
        json!({"type": "object",
            "x-kubernetes-validations": [{"rule": "self.metadata.name.startsWith('w')"}],
            "properties": {"spec": {"type": "object", "properties": {
                "tags": {"type": "array", "maxItems": 10, "items": {"type": "string", "maxLength": 20},
                    "x-kubernetes-validations": [
                        {"rule": "self.all(t, size(t) <= 5)",
                         "messageExpression": "'tag too long: ' + self.filter(t, size(t) > 5)[0]"},
                        {"rule": "size(self) <= 3", "reason": "FieldValueForbidden",
                         "message": "at most 3 tags"}]},
                "name": {"type": "string", "maxLength": 20,
                    "x-kubernetes-validations": [{"rule": "self.matches('^[a-z]+$')"}]},
                "range": {"type": "object",
                    "properties": {"min": {"type": "integer"}, "max": {"type": "integer"}},
                    "x-kubernetes-validations": [{"rule": "self.min <= self.max",
                        "fieldPath": ".max", "message": "max must not be below min",
                        "reason": "FieldValueRequired"}]},
                "ports": {"type": "array", "maxItems": 10, "items": {"type": "object",
                    "properties": {"port": {"type": "integer"}},
                    "x-kubernetes-validations": [{"rule": "self.port > 1024",
                        "message": "only unprivileged ports"}]}}}}}}),
    )
    .await;
    let r = api
        .create(
            &PostParams::default(),
            &widget(
                g,
                "bad",
                json!({"tags": ["a", "bb", "longtag", "d"], "name": "Bob",
                    "range": {"min": 5, "max": 2}, "ports": [{"port": 8080}, {"port": 80}]}),
            ),
        )
        .await;
    let (_, causes) = refusal(r);
    assert_eq!(
        causes,
        vec![
            cause(
                "FieldValueForbidden",
                "spec.tags",
                "Forbidden: at most 3 tags"
            ),
            cause(
                "FieldValueInvalid",
                "<nil>",
                "Invalid value: failed rule: self.metadata.name.startsWith('w')"
            ),
            cause(
                "FieldValueInvalid",
                "spec.name",
                "Invalid value: \"Bob\": failed rule: self.matches('^[a-z]+$')"
            ),
            cause(
                "FieldValueInvalid",
                "spec.ports[1]",
                "Invalid value: only unprivileged ports"
            ),
            cause(
                "FieldValueInvalid",
                "spec.tags",
                "Invalid value: tag too long: longtag"
            ),
            cause(
                "FieldValueRequired",
                "spec.range.max",
                "Required value: max must not be below min"
            ),
        ]
    );
    let ok = api
        .create(
            &PostParams::default(),
            &widget(
                g,
                "w1",
                json!({"tags": ["a"], "name": "bob",
                "range": {"min": 1, "max": 2}, "ports": [{"port": 8080}]}),
            ),
        )
        .await
        .unwrap();
    assert_eq!(ok.data["spec"]["name"], "bob");
}

#[tokio::test]
async fn status_writes_should_run_the_rules_too() {
    let env = TestEnv::start().await.unwrap();
    let g = "s.example.com";
    let api = create_crd(
        &env,
        g,
        json!({"type": "object", "properties": {
            "spec": {"type": "object", "properties": {"a": {"type": "string"}}},
            "status": {"type": "object", "properties": {"phase": {"type": "string",
                "x-kubernetes-validations": [{"rule": "oldSelf != 'Done' || self == 'Done'",
                    "message": "Done is final"}]},
                "count": {"type": "integer", "x-kubernetes-validations": [
                    {"rule": "self >= 0", "messageExpression": "'count ' + string(self) + ' is negative'"}]}}}}}),
    )
    .await;
    api.create(&PostParams::default(), &widget(g, "w1", json!({"a": "x"})))
        .await
        .unwrap();
    let status = |v: Value| {
        let api = api.clone();
        async move {
            api.patch_status(
                "w1",
                &PatchParams::default(),
                &Patch::Merge(json!({"status": v})),
            )
            .await
        }
    };
    status(json!({"phase": "Done"})).await.unwrap();
    let (message, _) = refusal(status(json!({"phase": "Running"})).await);
    assert_eq!(
        message,
        format!(
            "Widget.{g} \"w1\" is invalid: status.phase: Invalid value: \"Running\": Done is final"
        )
    );
    let (_, causes) = refusal(status(json!({"count": -2})).await);
    assert_eq!(
        causes,
        vec![cause(
            "FieldValueInvalid",
            "status.count",
            "Invalid value: -2: count -2 is negative"
        )]
    );
    // The main resource ignores status, so its rules do not stop a spec change.
    merge(&api, "w1", json!({"spec": {"a": "y"}}))
        .await
        .unwrap();
}

#[tokio::test]
async fn rules_should_not_run_on_an_object_the_schema_already_refuses() {
    let env = TestEnv::start().await.unwrap();
    let g = "b.example.com";
    let api = create_crd(
        &env,
        g,
        json!({"type": "object", "properties": {"spec": {"type": "object",
            "properties": {"size": {"type": "integer"}, "name": {"type": "string",
                "x-kubernetes-validations": [{"rule": "self != 'x'"}]}}}}}),
    )
    .await;
    let r = api
        .create(
            &PostParams::default(),
            &widget(g, "w1", json!({"size": "big", "name": "x"})),
        )
        .await;
    let (_, causes) = refusal(r);
    assert_eq!(causes.len(), 2, "{causes:?}");
    assert_eq!(causes[0].0, "FieldValueInvalid");
    assert_eq!(
        (causes[0].1.as_str(), causes[0].2.as_str()),
        (
            "<nil>",
            "Invalid value: \"null\": some validation rules were not checked because the object was invalid; correct the existing errors to complete validation"
        )
    );
    assert_eq!(causes[1].0, "FieldValueTypeInvalid");
}

#[tokio::test]
async fn a_rule_added_later_should_ratchet_values_that_do_not_change() {
    let env = TestEnv::start().await.unwrap();
    let g = "r.example.com";
    let api = create_crd(
        &env,
        g,
        json!({"type": "object", "properties": {"spec": {"type": "object",
            "properties": {"name": {"type": "string"}, "size": {"type": "integer"}}}}}),
    )
    .await;
    api.create(
        &PostParams::default(),
        &widget(g, "w1", json!({"name": "bob", "size": 1})),
    )
    .await
    .unwrap();
    let crd = send(
        &env.client(),
        http::Method::PATCH,
        &format!("/apis/apiextensions.k8s.io/v1/customresourcedefinitions/widgets.{g}"),
        "application/json-patch+json",
        &json!([{"op": "add",
            "path": "/spec/versions/0/schema/openAPIV3Schema/properties/spec/properties/name/x-kubernetes-validations",
            "value": [{"rule": "self.startsWith('a')", "message": "must start with a"}]}]),
    )
    .await;
    assert_eq!(crd["metadata"]["generation"], 2, "{crd}");
    // `name` keeps its (now invalid) value: the write goes through, with a warning.
    let response = crate::common::raw(
        env.addr(),
        "PATCH",
        &format!("/apis/{g}/v1/namespaces/default/widgets/w1"),
        &[("Content-Type", "application/merge-patch+json")],
        json!({"spec": {"size": 2}}).to_string().as_bytes(),
    )
    .await;
    assert_eq!(response.status, 200);
    assert_eq!(
        response.header("warning"),
        Some(r#"299 - "spec.name: Invalid value: \"bob\": must start with a""#)
    );
    let (_, causes) = refusal(merge(&api, "w1", json!({"spec": {"name": "carl"}})).await);
    assert_eq!(
        causes,
        vec![cause(
            "FieldValueInvalid",
            "spec.name",
            "Invalid value: \"carl\": must start with a"
        )]
    );
    merge(&api, "w1", json!({"spec": {"name": "alice"}}))
        .await
        .unwrap();
}

#[tokio::test]
async fn a_rule_that_does_not_compile_should_refuse_the_crd() {
    let env = TestEnv::start().await.unwrap();
    let path = "spec.validation.openAPIV3Schema.properties[spec].x-kubernetes-validations[0].rule";
    for (rule, issue) in [
        (
            "self.nope == 1",
            "compilation failed: ERROR: <input>:1:5: undefined field 'nope'\n | self.nope == 1\n | ....^",
        ),
        (
            "self.a == x",
            "compilation failed: ERROR: <input>:1:11: undeclared reference to 'x' (in container '')",
        ),
        ("self.a ==", "compilation failed: ERROR: <input>:1:"),
    ] {
        let crd = widget_crd(
            "c.example.com",
            json!({"type": "object", "properties": {"spec": {"type": "object",
                "properties": {"a": {"type": "integer"}},
                "x-kubernetes-validations": [{"rule": rule}]}}}),
        );
        let r = crd_api(&env).create(&PostParams::default(), &crd).await;
        let (_, causes) = refusal(r);
        assert_eq!(causes.len(), 1, "{causes:?}");
        assert_eq!(
            (causes[0].0.as_str(), causes[0].1.as_str()),
            ("FieldValueInvalid", path)
        );
        let prefix = format!(
            "Invalid value: apiextensions.ValidationRule{{Rule:{}, Message:\"\"",
            Value::String(rule.into())
        );
        assert!(causes[0].2.starts_with(&prefix), "{}", causes[0].2);
        assert!(causes[0].2.contains(issue), "{rule}: {}", causes[0].2);
    }
    // Comprehension variables, `has()` and the resource's metadata compile.
    let crd = widget_crd(
        "c.example.com",
        json!({"type": "object",
            "x-kubernetes-validations": [{"rule": "self.metadata.name.size() < 20"}],
            "properties": {"spec": {"type": "object",
                "properties": {"a": {"type": "integer"}, "l": {"type": "array", "items": {"type": "string"}}},
                "x-kubernetes-validations": [{"rule": "!has(self.a) || self.l.all(x, x != 'b') && self.a > 0"}]}}}),
    );
    crd_api(&env)
        .create(&PostParams::default(), &crd)
        .await
        .unwrap();
}

/// Sends `body` to `path` with `content_type` and returns the answer.
async fn send(
    client: &Client,
    method: http::Method,
    path: &str,
    content_type: &str,
    body: &Value,
) -> Value {
    let req = http::Request::builder()
        .method(method)
        .uri(path)
        .header("content-type", content_type)
        .body(serde_json::to_vec(body).unwrap())
        .unwrap();
    let text = client.request_text(req).await.unwrap();
    serde_json::from_str(&text).unwrap()
}

/// The `fieldsV1` of the entry of `subresource` (`""` for the main resource).
fn fields_of(obj: &Value, subresource: &str) -> Value {
    obj["metadata"]["managedFields"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["subresource"].as_str().unwrap_or_default() == subresource)
        .map(|e| e["fieldsV1"].clone())
        .unwrap_or(Value::Null)
}

#[tokio::test]
async fn conditions_without_times_should_carry_null_times_owned_by_their_writer() {
    let env = TestEnv::start().await.unwrap();
    let client = env.client();
    let node = send(
        &client,
        http::Method::POST,
        "/api/v1/nodes",
        "application/json",
        &json!({"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1"}}),
    )
    .await;
    assert_eq!(node["metadata"]["name"], "n1");
    let node = send(
        &client,
        http::Method::PATCH,
        "/api/v1/nodes/n1/status",
        "application/strategic-merge-patch+json",
        &json!({"status": {"conditions": [{"type": "Ready", "status": "True"}]}}),
    )
    .await;
    assert_eq!(
        node["status"]["conditions"],
        json!([{"type": "Ready", "status": "True", "lastHeartbeatTime": null, "lastTransitionTime": null}])
    );
    assert_eq!(
        fields_of(&node, "status")["f:status"]["f:conditions"],
        json!({".": {}, "k:{\"type\":\"Ready\"}": {".": {}, "f:lastHeartbeatTime": {},
            "f:lastTransitionTime": {}, "f:status": {}, "f:type": {}}})
    );

    let deployment = send(
        &client,
        http::Method::POST,
        "/apis/apps/v1/namespaces/default/deployments",
        "application/json",
        &json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "d1"},
            "spec": {"selector": {"matchLabels": {"app": "d"}}, "template": {
                "metadata": {"labels": {"app": "d"}},
                "spec": {"containers": [{"name": "c", "image": "nginx"}]}}}}),
    )
    .await;
    // A create owns none of the zero values Go adds (the container's `resources: {}` it does,
    // with the container it adds).
    let main = fields_of(&deployment, "");
    assert!(
        main["f:spec"]["f:template"]["f:spec"]["f:containers"]["k:{\"name\":\"c\"}"]
            .get("f:resources")
            .is_some(),
        "{main}"
    );
    assert!(main.get("f:status").is_none(), "{main}");
    let deployment = send(&client, http::Method::PATCH,
        "/apis/apps/v1/namespaces/default/deployments/d1/status",
        "application/merge-patch+json",
        &json!({"status": {"conditions": [{"type": "Available", "status": "True", "reason": "R"}]}})).await;
    assert_eq!(
        deployment["status"]["conditions"],
        json!([{"type": "Available", "status": "True", "reason": "R",
            "lastUpdateTime": null, "lastTransitionTime": null}])
    );
    assert_eq!(
        fields_of(&deployment, "status")["f:status"]["f:conditions"],
        json!({".": {}, "k:{\"type\":\"Available\"}": {".": {}, "f:lastTransitionTime": {},
            "f:lastUpdateTime": {}, "f:reason": {}, "f:status": {}, "f:type": {}}})
    );
}

#[tokio::test]
async fn a_custom_resource_should_keep_what_it_leaves_out_out() {
    let env = TestEnv::start().await.unwrap();
    let g = "n.example.com";
    let api = create_crd(
        &env,
        g,
        json!({"type": "object", "properties": {"spec": {"type": "object", "properties": {
            "note": {"type": "string", "nullable": true},
            "when": {"type": "string", "format": "date-time", "nullable": true}}}}}),
    )
    .await;
    let w = api
        .create(
            &PostParams::default(),
            &widget(g, "w1", json!({"note": null})),
        )
        .await
        .unwrap();
    assert_eq!(w.data["spec"], json!({"note": null}));
    let fields = w.metadata.managed_fields.unwrap()[0]
        .fields_v1
        .clone()
        .unwrap()
        .0;
    assert_eq!(fields, json!({"f:spec": {".": {}, "f:note": {}}}));
}

#[tokio::test]
async fn a_pods_singular_ip_should_win_over_its_list() {
    let env = TestEnv::start().await.unwrap();
    let client = env.client();
    send(
        &client,
        http::Method::POST,
        "/api/v1/namespaces/default/pods",
        "application/json",
        &json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p1"},
            "spec": {"containers": [{"name": "c", "image": "nginx"}]}}),
    )
    .await;
    let status = |body: Value| {
        let client = client.clone();
        async move {
            send(
                &client,
                http::Method::PATCH,
                "/api/v1/namespaces/default/pods/p1/status",
                "application/merge-patch+json",
                &body,
            )
            .await
        }
    };
    let pod =
        status(json!({"status": {"podIPs": [{"ip": "10.0.0.1"}], "hostIP": "192.168.0.1"}})).await;
    assert_eq!(pod["status"]["podIP"], "10.0.0.1");
    assert_eq!(pod["status"]["hostIPs"], json!([{"ip": "192.168.0.1"}]));
    let pod = status(json!({"status": {"podIP": "10.0.0.2"}})).await;
    assert_eq!(pod["status"]["podIPs"], json!([{"ip": "10.0.0.2"}]));
    assert_eq!(
        fields_of(&pod, "status")["f:status"]["f:podIPs"],
        json!({".": {}, "k:{\"ip\":\"10.0.0.2\"}": {".": {}, "f:ip": {}}})
    );
}

#[tokio::test]
async fn an_empty_managed_fields_entry_should_reset_the_entries() {
    let env = TestEnv::start().await.unwrap();
    let client = env.client();
    send(
        &client,
        http::Method::POST,
        "/api/v1/namespaces/default/configmaps",
        "application/json",
        &json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c1",
            "labels": {"a": "b"}}, "data": {"k": "v"}}),
    )
    .await;
    let cm = send(
        &client,
        http::Method::PATCH,
        "/api/v1/namespaces/default/configmaps/c1",
        "application/merge-patch+json",
        &json!({"metadata": {"managedFields": [{}]}, "data": {"k2": "v2"}}),
    )
    .await;
    let entries = cm["metadata"]["managedFields"].as_array().unwrap();
    assert_eq!(entries.len(), 1, "{entries:?}");
    assert_eq!(entries[0]["fieldsV1"], json!({"f:data": {"f:k2": {}}}));
    // A reset that changes nothing leaves no entry at all.
    let cm = send(
        &client,
        http::Method::PATCH,
        "/api/v1/namespaces/default/configmaps/c1",
        "application/merge-patch+json",
        &json!({"metadata": {"managedFields": [{}]}}),
    )
    .await;
    assert!(cm["metadata"].get("managedFields").is_none(), "{cm}");
}

#[tokio::test]
async fn an_applier_should_own_only_what_it_applies_not_the_zero_values() {
    let env = TestEnv::start().await.unwrap();
    let client = env.client();
    send(
        &client,
        http::Method::POST,
        "/api/v1/nodes",
        "application/json",
        &json!({"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n2"}}),
    )
    .await;
    let node = send(
        &client,
        http::Method::PATCH,
        "/api/v1/nodes/n2/status?fieldManager=kubelet&force=true",
        "application/apply-patch+yaml",
        &json!({"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n2"},
            "status": {"conditions": [{"type": "Ready", "status": "True"}]}}),
    )
    .await;
    assert_eq!(
        node["status"]["conditions"],
        json!([{"type": "Ready", "status": "True", "lastHeartbeatTime": null, "lastTransitionTime": null}])
    );
    assert_eq!(
        fields_of(&node, "status")["f:status"]["f:conditions"],
        json!({"k:{\"type\":\"Ready\"}": {".": {}, "f:status": {}, "f:type": {}}})
    );
}

#[tokio::test]
async fn an_apply_that_brings_managed_fields_should_be_refused() {
    let env = TestEnv::start().await.unwrap();
    for managed in [
        json!([]),
        json!([{}]),
        json!([{"manager": "x", "operation": "Apply"}]),
    ] {
        let response = crate::common::raw(
            env.addr(),
            "PATCH",
            "/api/v1/namespaces/default/configmaps/c1?fieldManager=me",
            &[("Content-Type", "application/apply-patch+yaml")],
            json!({"apiVersion": "v1", "kind": "ConfigMap",
                "metadata": {"name": "c1", "managedFields": managed}, "data": {"a": "b"}})
            .to_string()
            .as_bytes(),
        )
        .await;
        assert_eq!(response.status, 400, "{managed}");
        let status = response.json();
        assert_eq!(status["message"], "metadata.managedFields must be nil");
        assert_eq!(status["reason"], "BadRequest");
    }
    // `null` is no managed fields.
    let response = crate::common::raw(
        env.addr(),
        "PATCH",
        "/api/v1/namespaces/default/configmaps/c1?fieldManager=me",
        &[("Content-Type", "application/apply-patch+yaml")],
        json!({"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": "c1", "managedFields": null}, "data": {"a": "b"}})
        .to_string()
        .as_bytes(),
    )
    .await;
    assert_eq!(response.status, 201);
}
