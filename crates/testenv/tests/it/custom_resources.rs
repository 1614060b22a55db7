//! Custom resources and their definitions through `kube::Client`: the structural-schema and
//! OpenAPI rules a CRD's schema must follow (each refused with kube-apiserver's cause), the
//! approval of CRDs in protected groups, the scale subresource, and a CRD without the status
//! subresource.

use k8s_openapi::api::autoscaling::v1::{Scale, ScaleSpec};
use kcr_testenv::TestEnv;
use kube::api::{
    Api, ApiResource, DynamicObject, GroupVersionKind, ObjectMeta, Patch, PatchParams, PostParams,
};
use serde_json::{Value, json};

/// CustomResourceDefinitions, as dynamic objects.
fn crd_api(env: &TestEnv) -> Api<DynamicObject> {
    Api::all_with(
        env.client(),
        &ApiResource::from_gvk_with_plural(
            &GroupVersionKind::gvk("apiextensions.k8s.io", "v1", "CustomResourceDefinition"),
            "customresourcedefinitions",
        ),
    )
}

/// A namespaced `Widget` CRD in `group` with one version `v1` of `schema` and `subresources`.
fn widget_crd(group: &str, schema: Value, subresources: Value) -> DynamicObject {
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
                "schema": {"openAPIV3Schema": schema}, "subresources": subresources}]
        }
    }))
    .unwrap()
}

/// A schema with `spec` of `spec_schema` (and a plain status).
fn with_spec(spec_schema: Value) -> Value {
    json!({"type": "object", "properties": {"spec": spec_schema,
        "status": {"type": "object", "properties": {"replicas": {"type": "integer"},
            "selector": {"type": "string"}}}}})
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

/// The `(field, message)` causes of a `422 Invalid`.
async fn refused(env: &TestEnv, crd: &DynamicObject) -> Vec<(String, String)> {
    match crd_api(env).create(&PostParams::default(), crd).await {
        Err(kube::Error::Api(s)) => {
            assert_eq!(
                (s.code, s.reason.as_str()),
                (422, "Invalid"),
                "{}",
                s.message
            );
            s.details
                .map(|d| d.causes.into_iter().map(|c| (c.field, c.message)).collect())
                .unwrap_or_default()
        }
        other => panic!("expected 422, got {other:?}"),
    }
}

fn causes(list: &[(&str, &str)]) -> Vec<(String, String)> {
    list.iter()
        .map(|(f, m)| ((*f).to_owned(), (*m).to_owned()))
        .collect()
}

const ROOT: &str = "spec.validation.openAPIV3Schema";

#[tokio::test]
async fn a_field_without_type_should_make_the_schema_non_structural() {
    let env = TestEnv::start().await.unwrap();
    let crd = widget_crd(
        "a.example.com",
        with_spec(json!({"type": "object", "properties": {"size": {"minimum": 1}}})),
        json!({}),
    );
    assert_eq!(
        refused(&env, &crd).await,
        causes(&[(
            "spec.validation.openAPIV3Schema.properties[spec].properties[size].type",
            "Required value: must not be empty for specified object fields"
        )])
    );
}

#[tokio::test]
async fn properties_and_additional_properties_together_should_be_refused() {
    let env = TestEnv::start().await.unwrap();
    let crd = widget_crd(
        "a.example.com",
        with_spec(
            json!({"type": "object", "properties": {"a": {"type": "string"}},
            "additionalProperties": {"type": "string"}}),
        ),
        json!({}),
    );
    assert_eq!(
        refused(&env, &crd).await,
        causes(&[(
            &format!("{ROOT}.properties[spec].additionalProperties"),
            "Forbidden: additionalProperties and properties are mutual exclusive"
        )])
    );
}

#[tokio::test]
async fn additional_properties_at_the_root_should_be_refused() {
    let env = TestEnv::start().await.unwrap();
    let crd = widget_crd(
        "a.example.com",
        json!({"type": "object", "additionalProperties": {"type": "string"}}),
        json!({}),
    );
    assert_eq!(
        refused(&env, &crd).await,
        causes(&[(
            &format!("{ROOT}.additionalProperties"),
            "Forbidden: must not be used at the root"
        )])
    );
}

#[tokio::test]
async fn metadata_at_the_root_should_restrict_only_name_and_generate_name() {
    let env = TestEnv::start().await.unwrap();
    let crd = widget_crd(
        "a.example.com",
        json!({"type": "object", "properties": {"metadata": {"type": "object",
            "properties": {"labels": {"type": "object",
                "additionalProperties": {"type": "string"}}}}}}),
        json!({}),
    );
    assert_eq!(
        refused(&env, &crd).await,
        causes(&[(
            &format!("{ROOT}.properties[metadata]"),
            "Forbidden: must not specify anything other than name and generateName, but metadata is implicitly specified"
        )])
    );

    // Restricting the name is allowed.
    let crd = widget_crd(
        "b.example.com",
        json!({"type": "object", "properties": {"metadata": {"type": "object",
            "properties": {"name": {"type": "string", "maxLength": 20}}}}}),
        json!({}),
    );
    crd_api(&env)
        .create(&PostParams::default(), &crd)
        .await
        .unwrap();
}

#[tokio::test]
async fn a_default_in_top_level_metadata_should_be_refused() {
    let env = TestEnv::start().await.unwrap();
    let crd = widget_crd(
        "a.example.com",
        json!({"type": "object", "properties": {"metadata": {"type": "object", "default": {}}}}),
        json!({}),
    );
    assert_eq!(
        refused(&env, &crd).await,
        causes(&[(
            &format!("{ROOT}.properties[metadata].default"),
            "Forbidden: must not be set in top-level metadata"
        )])
    );
}

#[tokio::test]
async fn int_or_string_should_allow_its_any_of_pattern_only() {
    let env = TestEnv::start().await.unwrap();
    let ok = widget_crd(
        "a.example.com",
        with_spec(json!({"type": "object", "properties": {"port": {
            "x-kubernetes-int-or-string": true,
            "anyOf": [{"type": "integer"}, {"type": "string"}]}}})),
        json!({}),
    );
    crd_api(&env)
        .create(&PostParams::default(), &ok)
        .await
        .unwrap();

    let crd = widget_crd(
        "b.example.com",
        with_spec(json!({"type": "object", "properties": {"port": {
            "x-kubernetes-int-or-string": true,
            "x-kubernetes-preserve-unknown-fields": true}}})),
        json!({}),
    );
    assert_eq!(
        refused(&env, &crd).await,
        causes(&[(
            &format!(
                "{ROOT}.properties[spec].properties[port].x-kubernetes-preserve-unknown-fields"
            ),
            "Invalid value: true: must be false if x-kubernetes-int-or-string is true"
        )])
    );
}

#[tokio::test]
async fn a_type_under_any_of_should_be_refused() {
    let env = TestEnv::start().await.unwrap();
    let crd = widget_crd(
        "a.example.com",
        with_spec(
            json!({"type": "object", "properties": {"size": {"type": "integer",
            "anyOf": [{"type": "integer", "minimum": 1}, {"maximum": 0}]}}}),
        ),
        json!({}),
    );
    assert_eq!(
        refused(&env, &crd).await,
        causes(&[(
            &format!("{ROOT}.properties[spec].properties[size].anyOf[0].type"),
            "Forbidden: must be empty to be structural"
        )])
    );
}

#[tokio::test]
async fn a_field_only_named_in_a_root_value_validation_should_be_refused() {
    let env = TestEnv::start().await.unwrap();
    let crd = widget_crd(
        "a.example.com",
        json!({"type": "object", "properties": {"spec": {"type": "object"}},
            "anyOf": [{"properties": {"extra": {"minLength": 1}}}]}),
        json!({}),
    );
    assert_eq!(
        refused(&env, &crd).await,
        causes(&[(
            &format!("{ROOT}.properties[extra]"),
            &format!("Required value: because it is defined in {ROOT}.anyOf[0].properties[extra]")
        )])
    );
}

#[tokio::test]
async fn preserve_unknown_fields_false_should_be_refused() {
    let env = TestEnv::start().await.unwrap();
    let crd = widget_crd(
        "a.example.com",
        with_spec(json!({"type": "object", "x-kubernetes-preserve-unknown-fields": false})),
        json!({}),
    );
    assert_eq!(
        refused(&env, &crd).await,
        causes(&[(
            &format!("{ROOT}.properties[spec].x-kubernetes-preserve-unknown-fields"),
            "Invalid value: false: must be true or undefined"
        )])
    );
}

#[tokio::test]
async fn an_array_without_items_should_be_refused() {
    let env = TestEnv::start().await.unwrap();
    let crd = widget_crd(
        "a.example.com",
        with_spec(json!({"type": "object", "properties": {"tags": {"type": "array"}}})),
        json!({}),
    );
    assert_eq!(
        refused(&env, &crd).await,
        causes(&[(
            &format!("{ROOT}.properties[spec].properties[tags].items"),
            "Required value: must be specified"
        )])
    );
}

#[tokio::test]
async fn a_list_type_on_a_non_array_should_be_refused() {
    let env = TestEnv::start().await.unwrap();
    let crd = widget_crd(
        "a.example.com",
        with_spec(
            json!({"type": "object", "properties": {"tags": {"type": "string",
            "x-kubernetes-list-type": "set"}}}),
        ),
        json!({}),
    );
    assert_eq!(
        refused(&env, &crd).await,
        causes(&[(
            &format!("{ROOT}.properties[spec].properties[tags].type"),
            "Invalid value: \"string\": must be array if x-kubernetes-list-type is specified"
        )])
    );
}

#[tokio::test]
async fn a_non_object_root_with_the_status_subresource_should_be_refused() {
    let env = TestEnv::start().await.unwrap();
    let crd = widget_crd(
        "a.example.com",
        json!({"type": "string"}),
        json!({"status": {}}),
    );
    assert_eq!(
        refused(&env, &crd).await,
        causes(&[
            (
                &format!("{ROOT}.type"),
                "Invalid value: \"string\": only \"object\" is allowed as the type at the root of the schema if the status subresource is enabled"
            ),
            (
                &format!("{ROOT}.type"),
                "Invalid value: \"string\": must be object at the root"
            ),
        ])
    );
}

#[tokio::test]
async fn per_version_schemas_should_be_checked_under_their_version() {
    let env = TestEnv::start().await.unwrap();
    let mut crd = widget_crd("a.example.com", json!({}), json!({}));
    crd.data["spec"]["versions"] = json!([
        {"name": "v1", "served": true, "storage": true,
         "schema": {"openAPIV3Schema": with_spec(json!({"type": "object"}))}},
        {"name": "v2", "served": true, "storage": false,
         "schema": {"openAPIV3Schema": with_spec(json!({"type": "object", "uniqueItems": true}))}}
    ]);
    assert_eq!(
        refused(&env, &crd).await,
        causes(&[(
            "spec.versions[1].schema.openAPIV3Schema.properties[spec].uniqueItems",
            "Forbidden: uniqueItems cannot be set to true since the runtime complexity becomes quadratic"
        )])
    );
}

// ---------------------------------------------------------------------------------------------
// Protected groups

#[tokio::test]
async fn a_crd_in_a_protected_group_should_state_its_approval() {
    let env = TestEnv::start().await.unwrap();
    let schema = with_spec(json!({"type": "object"}));
    let annotated = |group: &str, value: Option<&str>| {
        let mut crd = widget_crd(group, schema.clone(), json!({}));
        crd.metadata.annotations = value.map(|v| {
            [("api-approved.kubernetes.io".to_owned(), v.to_owned())]
                .into_iter()
                .collect()
        });
        crd
    };
    let field = "metadata.annotations[api-approved.kubernetes.io]";

    assert_eq!(
        refused(&env, &annotated("a.k8s.io", None)).await,
        causes(&[(
            field,
            "Required value: protected groups must have approval annotation \"api-approved.kubernetes.io\", see https://github.com/kubernetes/enhancements/pull/1111"
        )])
    );
    assert_eq!(
        refused(&env, &annotated("b.kubernetes.io", Some("later"))).await,
        causes(&[(
            field,
            "Invalid value: \"later\": protected groups must have approval annotation \"api-approved.kubernetes.io\" with either a URL or a reason starting with \"unapproved\", see https://github.com/kubernetes/enhancements/pull/1111"
        )])
    );

    let condition = |crd: &DynamicObject| {
        crd.data["status"]["conditions"]
            .as_array()
            .expect("conditions")
            .iter()
            .find(|c| c["type"] == "KubernetesAPIApprovalPolicyConformant")
            .map(|c| {
                (
                    c["status"].clone(),
                    c["reason"].clone(),
                    c["message"].clone(),
                )
            })
    };
    let crds = crd_api(&env);
    let pp = PostParams::default();
    let unapproved = crds
        .create(
            &pp,
            &annotated("c.k8s.io", Some("unapproved, experimental-only")),
        )
        .await
        .unwrap();
    let unapproved = crds.get(&unapproved.metadata.name.unwrap()).await.unwrap();
    assert_eq!(
        condition(&unapproved),
        Some((
            json!("False"),
            json!("UnapprovedAnnotation"),
            json!("not approved: \"unapproved, experimental-only\"")
        ))
    );
    widgets(&env, "c.k8s.io")
        .list(&Default::default())
        .await
        .unwrap();

    let url = "https://github.com/kubernetes/kubernetes/pull/78458";
    crds.create(&pp, &annotated("d.k8s.io", Some(url)))
        .await
        .unwrap();
    let approved = crds.get("widgets.d.k8s.io").await.unwrap();
    assert_eq!(
        condition(&approved),
        Some((
            json!("True"),
            json!("ApprovedAnnotation"),
            json!(format!("approved in {url}"))
        ))
    );

    // Outside the protected groups, no condition.
    crds.create(&pp, &annotated("e.example.com", None))
        .await
        .unwrap();
    let plain = crds.get("widgets.e.example.com").await.unwrap();
    assert_eq!(condition(&plain), None);
}

#[tokio::test]
async fn a_new_crd_should_be_answered_as_stored_then_established_by_the_controllers() {
    let env = TestEnv::start().await.unwrap();
    let crds = crd_api(&env);
    let created = crds
        .create(
            &PostParams::default(),
            &widget_crd(
                "a.example.com",
                with_spec(json!({"type": "object"})),
                json!({}),
            ),
        )
        .await
        .unwrap();
    assert_eq!(
        created.data["status"],
        json!({"conditions": null, "acceptedNames": {"plural": "", "kind": ""},
            "storedVersions": ["v1"]})
    );
    assert_eq!(
        created.data["spec"]["conversion"],
        json!({"strategy": "None"})
    );
    let fields = &created.metadata.managed_fields.as_ref().unwrap()[0];
    let f = &fields.fields_v1.as_ref().unwrap().0;
    assert_eq!(
        f["f:spec"]["f:conversion"],
        json!({".": {}, "f:strategy": {}})
    );
    assert!(f["f:spec"].get(".").is_none() && f["f:spec"]["f:names"].get(".").is_none());

    let crd = crds.get("widgets.a.example.com").await.unwrap();
    assert_ne!(
        crd.metadata.resource_version,
        created.metadata.resource_version
    );
    let conditions: Vec<(Value, Value)> = crd.data["status"]["conditions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| (c["type"].clone(), c["status"].clone()))
        .collect();
    assert_eq!(
        conditions,
        [
            (json!("NamesAccepted"), json!("True")),
            (json!("Established"), json!("True"))
        ]
    );
    assert_eq!(
        crd.data["status"]["acceptedNames"]["listKind"],
        json!("WidgetList")
    );
    let status_entry = crd
        .metadata
        .managed_fields
        .iter()
        .flatten()
        .find(|e| e.subresource.as_deref() == Some("status"))
        .unwrap();
    assert_eq!(status_entry.manager.as_deref(), Some("kube-apiserver"));
}

// ---------------------------------------------------------------------------------------------
// Subresources

fn scale_subresource() -> Value {
    json!({"status": {}, "scale": {"specReplicasPath": ".spec.replicas",
        "statusReplicasPath": ".status.replicas", "labelSelectorPath": ".status.selector"}})
}

async fn widget_with_scale(env: &TestEnv) -> Api<DynamicObject> {
    let schema = with_spec(json!({"type": "object", "properties": {
        "replicas": {"type": "integer"}, "size": {"type": "integer"}}}));
    crd_api(env)
        .create(
            &PostParams::default(),
            &widget_crd("s.example.com", schema, scale_subresource()),
        )
        .await
        .unwrap();
    let api = widgets(env, "s.example.com");
    let w: DynamicObject = serde_json::from_value(json!({
        "apiVersion": "s.example.com/v1", "kind": "Widget",
        "metadata": {"name": "w1"}, "spec": {"size": 1, "replicas": 2}
    }))
    .unwrap();
    api.create(&PostParams::default(), &w).await.unwrap();
    api.patch_status(
        "w1",
        &PatchParams::default(),
        &Patch::Merge(json!({"status": {"replicas": 2, "selector": "app=w1"}})),
    )
    .await
    .unwrap();
    api
}

/// The managed-fields entries of an object as `(manager, subresource, has a time, fields)`.
fn entries(obj: &DynamicObject) -> Vec<(String, String, bool, Value)> {
    obj.metadata
        .managed_fields
        .iter()
        .flatten()
        .map(|e| {
            (
                e.manager.clone().unwrap_or_default(),
                e.subresource.clone().unwrap_or_default(),
                e.time.is_some(),
                e.fields_v1.as_ref().map_or(Value::Null, |f| f.0.clone()),
            )
        })
        .collect()
}

#[tokio::test]
async fn the_scale_of_a_custom_resource_should_read_and_write_the_crd_paths() {
    let env = TestEnv::start().await.unwrap();
    let api = widget_with_scale(&env).await;

    let scale = api.get_scale("w1").await.unwrap();
    assert_eq!(scale.spec.as_ref().and_then(|s| s.replicas), Some(2));
    let status = scale.status.as_ref().unwrap();
    assert_eq!(
        (status.replicas, status.selector.as_deref()),
        (2, Some("app=w1"))
    );

    let put = Scale {
        metadata: ObjectMeta {
            name: Some("w1".into()),
            namespace: Some("default".into()),
            ..Default::default()
        },
        spec: Some(ScaleSpec { replicas: Some(4) }),
        status: None,
    };
    let scale = api
        .replace_scale("w1", &PostParams::default(), &put)
        .await
        .unwrap();
    assert_eq!(scale.spec.and_then(|s| s.replicas), Some(4));
    assert_eq!(scale.status.map(|s| s.replicas), Some(2));

    let w = api.get("w1").await.unwrap();
    assert_eq!(w.data["spec"], json!({"size": 1, "replicas": 4}));
    assert_eq!(w.metadata.generation, Some(2));
    // The scale write owns `spec.replicas` under subresource `scale`, without a time, and takes
    // it from the creator.
    let e = entries(&w);
    assert_eq!(
        (e[0].1.as_str(), e[0].2, &e[0].3),
        ("scale", false, &json!({"f:spec": {"f:replicas": {}}}))
    );
    assert_eq!(e[1].1, "");
    assert_eq!(e[1].3, json!({"f:spec": {".": {}, "f:size": {}}}));
    assert_eq!(e[2].1, "status");

    let scale = api
        .patch_scale(
            "w1",
            &PatchParams::default(),
            &Patch::Merge(json!({"spec": {"replicas": 6}})),
        )
        .await
        .unwrap();
    assert_eq!(scale.spec.and_then(|s| s.replicas), Some(6));
    assert_eq!(
        api.get("w1").await.unwrap().data["spec"]["replicas"],
        json!(6)
    );
}

#[tokio::test]
async fn without_the_status_subresource_status_should_be_written_by_the_main_resource() {
    let env = TestEnv::start().await.unwrap();
    crd_api(&env)
        .create(
            &PostParams::default(),
            &widget_crd(
                "n.example.com",
                with_spec(json!({"type": "object", "properties": {"size": {"type": "integer"}}})),
                json!({}),
            ),
        )
        .await
        .unwrap();
    let api = widgets(&env, "n.example.com");
    let w: DynamicObject = serde_json::from_value(json!({
        "apiVersion": "n.example.com/v1", "kind": "Widget",
        "metadata": {"name": "w1"}, "spec": {"size": 1}, "status": {"replicas": 3}
    }))
    .unwrap();
    let created = api.create(&PostParams::default(), &w).await.unwrap();
    assert_eq!(created.data["status"], json!({"replicas": 3}));
    let fields = &entries(&created)[0].3;
    assert_eq!(fields["f:status"], json!({".": {}, "f:replicas": {}}));

    let patched = api
        .patch(
            "w1",
            &PatchParams::default(),
            &Patch::Merge(json!({"status": {"replicas": 5}})),
        )
        .await
        .unwrap();
    assert_eq!(patched.data["status"], json!({"replicas": 5}));
    // A status change through the main resource moves the generation on.
    assert_eq!(patched.metadata.generation, Some(2));

    match api.get_status("w1").await {
        Err(kube::Error::Api(s)) => {
            assert_eq!((s.code, s.reason.as_str()), (404, "NotFound"));
            assert_eq!(s.message, "widgets.n.example.com \"w1\" not found");
        }
        other => panic!("expected 404, got {other:?}"),
    }
    assert!(api.get_scale("w1").await.is_err());
}

#[tokio::test]
async fn scale_paths_outside_spec_and_status_should_be_refused() {
    let env = TestEnv::start().await.unwrap();
    let crd = widget_crd(
        "a.example.com",
        with_spec(json!({"type": "object"})),
        json!({"scale": {"specReplicasPath": ".status.replicas",
            "statusReplicasPath": "status.replicas", "labelSelectorPath": ".metadata.labels"}}),
    );
    assert_eq!(
        refused(&env, &crd).await,
        causes(&[
            (
                "spec.subresources.scale.specReplicasPath",
                "Invalid value: \".status.replicas\": should be a json path under .spec"
            ),
            (
                "spec.subresources.scale.statusReplicasPath",
                "Invalid value: \"status.replicas\": must be a simple json path starting with ."
            ),
            (
                "spec.subresources.scale.labelSelectorPath",
                "Invalid value: \".metadata.labels\": should be a json path under either .spec or .status"
            ),
        ])
    );
}

#[tokio::test]
async fn a_default_outside_its_enum_should_be_refused() {
    let env = TestEnv::start().await.unwrap();
    let crd = widget_crd(
        "a.example.com",
        with_spec(
            json!({"type": "object", "properties": {"color": {"type": "string",
            "enum": ["red", "green"], "default": "pink"}}}),
        ),
        json!({}),
    );
    assert_eq!(
        refused(&env, &crd).await,
        causes(&[(
            &format!("{ROOT}.properties[spec].properties[color].default"),
            "Unsupported value: \"pink\": supported values: \"red\", \"green\""
        )])
    );
}

#[tokio::test]
async fn a_default_with_unknown_fields_should_be_refused() {
    let env = TestEnv::start().await.unwrap();
    let crd = widget_crd(
        "a.example.com",
        with_spec(
            json!({"type": "object", "default": {"size": 1, "bogus": true},
            "properties": {"size": {"type": "integer"}}}),
        ),
        json!({}),
    );
    assert_eq!(
        refused(&env, &crd).await,
        causes(&[(
            &format!("{ROOT}.properties[spec].default"),
            "Invalid value: {\"bogus\":true,\"size\":1}: must not have unknown fields"
        )])
    );
}
