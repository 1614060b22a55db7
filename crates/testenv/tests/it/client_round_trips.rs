//! `kube::Client` round trips for every verb, against a real in-process server.

use crate::common;

use common::configmap;
use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::coordination::v1::Lease;
use k8s_openapi::api::core::v1::{ConfigMap, Namespace};
use kcr_testenv::TestEnv;
use kube::api::{
    Api, ApiResource, DeleteParams, DynamicObject, GroupVersionKind, ListParams, Patch,
    PatchParams, PostParams, Preconditions, VersionMatch,
};
use serde_json::json;

/// The parts of a `metav1.Status` error the tests look at.
struct Failure {
    code: u16,
    reason: String,
    message: String,
}

fn code(err: kube::Error) -> Failure {
    match err {
        kube::Error::Api(s) => Failure {
            code: s.code,
            reason: s.reason.clone(),
            message: s.message.clone(),
        },
        other => panic!("expected an API error, got {other:?}"),
    }
}

fn rv_of(cm: &ConfigMap) -> u64 {
    cm.metadata
        .resource_version
        .as_deref()
        .unwrap_or("0")
        .parse()
        .unwrap()
}

#[tokio::test]
async fn create_should_fill_in_the_server_set_metadata() {
    let env = TestEnv::start().await.unwrap();
    let api: Api<ConfigMap> = Api::namespaced(env.client(), "default");
    let created = api
        .create(&PostParams::default(), &configmap("a", &[]))
        .await
        .unwrap();
    let m = &created.metadata;
    assert_eq!(m.namespace.as_deref(), Some("default"));
    assert_eq!(m.uid.as_ref().map(String::len), Some(36));
    assert!(m.creation_timestamp.is_some());
    // ConfigMaps carry no generation (kube-apiserver sets it only for kinds with a spec).
    assert_eq!(m.generation, None);
    assert_eq!(rv_of(&created), env.resource_version());

    let fetched = api.get("a").await.unwrap();
    assert_eq!(fetched.metadata.uid, created.metadata.uid);
    assert_eq!(fetched.data, created.data);
}

#[tokio::test]
async fn create_with_generate_name_should_pick_a_unique_name() {
    let env = TestEnv::start().await.unwrap();
    let api: Api<ConfigMap> = Api::namespaced(env.client(), "default");
    let mut cm = ConfigMap::default();
    cm.metadata.generate_name = Some("gen-".into());
    let a = api.create(&PostParams::default(), &cm).await.unwrap();
    let b = api.create(&PostParams::default(), &cm).await.unwrap();
    let (a, b) = (a.metadata.name.unwrap(), b.metadata.name.unwrap());
    assert!(a.starts_with("gen-") && a.len() == 9, "{a}");
    assert_ne!(a, b);
}

#[tokio::test]
async fn create_of_an_existing_name_should_get_already_exists() {
    let env = TestEnv::start().await.unwrap();
    let api: Api<ConfigMap> = Api::namespaced(env.client(), "default");
    api.create(&PostParams::default(), &configmap("a", &[]))
        .await
        .unwrap();
    let e = code(
        api.create(&PostParams::default(), &configmap("a", &[]))
            .await
            .unwrap_err(),
    );
    assert_eq!((e.code, e.reason.as_str()), (409, "AlreadyExists"));
    assert_eq!(e.message, "configmaps \"a\" already exists");
}

#[tokio::test]
async fn get_of_a_missing_object_should_get_not_found() {
    let env = TestEnv::start().await.unwrap();
    let api: Api<Lease> = Api::namespaced(env.client(), "default");
    let e = code(api.get("nope").await.unwrap_err());
    assert_eq!((e.code, e.reason.as_str()), (404, "NotFound"));
    assert_eq!(e.message, "leases.coordination.k8s.io \"nope\" not found");
    assert!(api.get_opt("nope").await.unwrap().is_none());
}

#[tokio::test]
async fn create_in_a_missing_namespace_should_get_not_found() {
    let env = TestEnv::start().await.unwrap();
    let api: Api<ConfigMap> = Api::namespaced(env.client(), "missing");
    let e = code(
        api.create(&PostParams::default(), &configmap("a", &[]))
            .await
            .unwrap_err(),
    );
    assert_eq!(e.code, 404);
    assert_eq!(e.message, "namespaces \"missing\" not found");
}

#[tokio::test]
async fn replace_with_a_stale_resource_version_should_conflict() {
    let env = TestEnv::start().await.unwrap();
    let api: Api<Lease> = Api::namespaced(env.client(), "kube-system");
    let mut lease = Lease::default();
    lease.metadata.name = Some("leader".into());
    let v1 = api.create(&PostParams::default(), &lease).await.unwrap();
    let mut renewed = v1.clone();
    renewed.spec = Some(k8s_openapi::api::coordination::v1::LeaseSpec {
        holder_identity: Some("a".into()),
        ..Default::default()
    });
    let v2 = api
        .replace("leader", &PostParams::default(), &renewed)
        .await
        .unwrap();
    assert!(v2.metadata.resource_version > v1.metadata.resource_version);
    assert_eq!(
        v2.spec.as_ref().and_then(|s| s.holder_identity.as_deref()),
        Some("a")
    );

    // `renewed` still carries v1's version: the second writer loses.
    let e = code(
        api.replace("leader", &PostParams::default(), &renewed)
            .await
            .unwrap_err(),
    );
    assert_eq!((e.code, e.reason.as_str()), (409, "Conflict"));
    assert!(
        e.message.contains("the object has been modified"),
        "{}",
        e.message
    );
}

#[tokio::test]
async fn replace_that_changes_nothing_should_keep_the_resource_version() {
    let env = TestEnv::start().await.unwrap();
    let api: Api<ConfigMap> = Api::namespaced(env.client(), "default");
    let created = api
        .create(&PostParams::default(), &configmap("a", &[]))
        .await
        .unwrap();
    let same = api
        .replace("a", &PostParams::default(), &created)
        .await
        .unwrap();
    assert_eq!(
        same.metadata.resource_version,
        created.metadata.resource_version
    );
}

#[tokio::test]
async fn generation_should_increment_only_when_the_spec_changes() {
    let env = TestEnv::start().await.unwrap();
    let api: Api<Deployment> = Api::namespaced(env.client(), "default");
    let d: Deployment = serde_json::from_value(json!({
        "metadata": {"name": "web"},
        "spec": {"replicas": 1, "selector": {"matchLabels": {"app": "web"}}, "template": {"metadata": {"labels": {"app": "web"}}, "spec": {"containers": [{"name": "web", "image": "nginx"}]}}}
    }))
    .unwrap();
    let d = api.create(&PostParams::default(), &d).await.unwrap();
    assert_eq!(d.metadata.generation, Some(1));
    let labelled = api
        .patch(
            "web",
            &PatchParams::default(),
            &Patch::Merge(json!({"metadata": {"labels": {"x": "y"}}})),
        )
        .await
        .unwrap();
    assert_eq!(labelled.metadata.generation, Some(1));
    let scaled = api
        .patch(
            "web",
            &PatchParams::default(),
            &Patch::Merge(json!({"spec": {"replicas": 3}})),
        )
        .await
        .unwrap();
    assert_eq!(scaled.metadata.generation, Some(2));
}

#[tokio::test]
async fn the_status_subresource_should_split_spec_and_status_writes() {
    let env = TestEnv::start().await.unwrap();
    let api: Api<Deployment> = Api::namespaced(env.client(), "default");
    let d: Deployment = serde_json::from_value(json!({
        "metadata": {"name": "web"},
        "spec": {"replicas": 1, "selector": {"matchLabels": {"app": "web"}}, "template": {"metadata": {"labels": {"app": "web"}}, "spec": {"containers": [{"name": "web", "image": "nginx"}]}}},
        "status": {"replicas": 42}
    }))
    .unwrap();
    let created = api.create(&PostParams::default(), &d).await.unwrap();
    // kube-apiserver drops the status of a create and answers with an empty one.
    assert_eq!(
        created.status,
        Some(Default::default()),
        "status is reset on create"
    );

    // The main resource ignores status...
    let mut with_status = created.clone();
    with_status.status = Some(serde_json::from_value(json!({"replicas": 7})).unwrap());
    with_status.spec.replicas = Some(2);
    let main = api
        .replace("web", &PostParams::default(), &with_status)
        .await
        .unwrap();
    assert_eq!(main.status, Some(Default::default()));
    assert_eq!(main.spec.replicas, Some(2));

    // ...and /status ignores everything else.
    let mut status_write = main.clone();
    status_write.status = Some(serde_json::from_value(json!({"replicas": 7})).unwrap());
    status_write.spec.replicas = Some(99);
    let after = api
        .replace_status("web", &PostParams::default(), &status_write)
        .await
        .unwrap();
    assert_eq!(after.status.as_ref().and_then(|s| s.replicas), Some(7));
    assert_eq!(after.spec.replicas, Some(2));
    assert_eq!(after.metadata.generation, main.metadata.generation);

    let patched = api
        .patch_status(
            "web",
            &PatchParams::default(),
            &Patch::Merge(json!({"status": {"readyReplicas": 1}})),
        )
        .await
        .unwrap();
    assert_eq!(
        patched.status.as_ref().and_then(|s| s.ready_replicas),
        Some(1)
    );
}

#[tokio::test]
async fn the_scale_subresource_should_read_and_write_replicas() {
    let env = TestEnv::start().await.unwrap();
    let api: Api<Deployment> = Api::namespaced(env.client(), "default");
    let d: Deployment = serde_json::from_value(json!({
        "metadata": {"name": "web"},
        "spec": {"replicas": 2, "selector": {"matchLabels": {"app": "web"}}, "template": {"metadata": {"labels": {"app": "web"}}, "spec": {"containers": [{"name": "web", "image": "nginx"}]}}}
    }))
    .unwrap();
    api.create(&PostParams::default(), &d).await.unwrap();
    let scale = api.get_scale("web").await.unwrap();
    assert_eq!(scale.spec.and_then(|s| s.replicas), Some(2));
    assert_eq!(
        scale.status.map(|s| s.selector),
        Some(Some("app=web".to_owned()))
    );
    api.patch_scale(
        "web",
        &PatchParams::default(),
        &Patch::Merge(json!({"spec": {"replicas": 5}})),
    )
    .await
    .unwrap();
    assert_eq!(api.get("web").await.unwrap().spec.replicas, Some(5));
}

#[tokio::test]
async fn patches_should_apply_merge_json_and_strategic_documents() {
    let env = TestEnv::start().await.unwrap();
    let api: Api<ConfigMap> = Api::namespaced(env.client(), "default");
    api.create(&PostParams::default(), &configmap("a", &[]))
        .await
        .unwrap();
    let pp = PatchParams::default();
    let merged = api
        .patch(
            "a",
            &pp,
            &Patch::Merge(json!({"data": {"b": "2", "key": null}})),
        )
        .await
        .unwrap();
    assert_eq!(merged.data, Some([("b".to_owned(), "2".to_owned())].into()));
    let strategic = api
        .patch("a", &pp, &Patch::Strategic(json!({"data": {"c": "3"}})))
        .await
        .unwrap();
    assert_eq!(strategic.data.as_ref().map(|d| d.len()), Some(2));
    // JSON patch (kube's `Patch::Json` needs the `jsonpatch` feature; the wire format is this).
    let path = "/api/v1/namespaces/default/configmaps/a";
    let ct = [("Content-Type", "application/json-patch+json")];
    let ops =
        br#"[{"op":"replace","path":"/data/b","value":"20"},{"op":"remove","path":"/data/c"}]"#;
    let r = common::raw(env.addr(), "PATCH", path, &ct, ops).await;
    assert_eq!(r.status, 200);
    assert_eq!(
        api.get("a").await.unwrap().data,
        Some([("b".to_owned(), "20".to_owned())].into())
    );
    let failing = br#"[{"op":"test","path":"/data/b","value":"nope"}]"#;
    assert_eq!(
        common::raw(env.addr(), "PATCH", path, &ct, failing)
            .await
            .status,
        422
    );

    let e = code(
        api.patch("missing", &pp, &Patch::Merge(json!({})))
            .await
            .unwrap_err(),
    );
    assert_eq!(e.code, 404);
}

#[tokio::test]
async fn a_patch_carrying_a_stale_resource_version_should_conflict() {
    let env = TestEnv::start().await.unwrap();
    let api: Api<ConfigMap> = Api::namespaced(env.client(), "default");
    let created = api
        .create(&PostParams::default(), &configmap("a", &[]))
        .await
        .unwrap();
    api.patch(
        "a",
        &PatchParams::default(),
        &Patch::Merge(json!({"data": {"x": "1"}})),
    )
    .await
    .unwrap();
    let stale = json!({"metadata": {"resourceVersion": created.metadata.resource_version}, "data": {"x": "2"}});
    let e = code(
        api.patch("a", &PatchParams::default(), &Patch::Merge(stale))
            .await
            .unwrap_err(),
    );
    assert_eq!(e.code, 409);
}

#[tokio::test]
async fn server_side_apply_with_json_should_create_then_drop_what_the_manager_stops_applying() {
    let env = TestEnv::start().await.unwrap();
    let api: Api<ConfigMap> = Api::namespaced(env.client(), "default");
    let pp = PatchParams::apply("test");
    let body = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "applied"}, "data": {"a": "1"}});
    let created = api
        .patch("applied", &pp, &Patch::Apply(body))
        .await
        .unwrap();
    assert_eq!(created.data.as_ref().map(|d| d.len()), Some(1));
    let body = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "applied"}, "data": {"b": "2"}});
    let merged = api
        .patch("applied", &pp, &Patch::Apply(body))
        .await
        .unwrap();
    // `a` is no longer applied and nobody else owns it: kube-apiserver removes it.
    assert_eq!(
        merged.data,
        Some([("b".to_string(), "2".to_string())].into())
    );
}

#[tokio::test]
async fn delete_should_remove_the_object() {
    let env = TestEnv::start().await.unwrap();
    let api: Api<ConfigMap> = Api::namespaced(env.client(), "default");
    api.create(&PostParams::default(), &configmap("a", &[]))
        .await
        .unwrap();
    // A ConfigMap's DELETE answers with a `Status` `Success`, not the object.
    let gone = api.delete("a", &DeleteParams::default()).await.unwrap();
    assert!(gone.right().is_some_and(|s| s.is_success()));
    assert!(api.get_opt("a").await.unwrap().is_none());
    let e = code(api.delete("a", &DeleteParams::default()).await.unwrap_err());
    assert_eq!(e.code, 404);
}

#[tokio::test]
async fn delete_with_finalizers_should_wait_until_they_are_removed() {
    let env = TestEnv::start().await.unwrap();
    let api: Api<ConfigMap> = Api::namespaced(env.client(), "default");
    let mut cm = configmap("f", &[]);
    cm.metadata.finalizers = Some(vec!["example.com/cleanup".into()]);
    api.create(&PostParams::default(), &cm).await.unwrap();
    api.delete("f", &DeleteParams::default()).await.unwrap();
    let terminating = api.get("f").await.unwrap();
    assert!(terminating.metadata.deletion_timestamp.is_some());

    // No new finalizers on a terminating object.
    let add = Patch::Merge(json!({"metadata": {"finalizers": ["example.com/cleanup", "other"]}}));
    let e = code(
        api.patch("f", &PatchParams::default(), &add)
            .await
            .unwrap_err(),
    );
    assert_eq!(e.code, 422);

    let remove = Patch::Merge(json!({"metadata": {"finalizers": null}}));
    api.patch("f", &PatchParams::default(), &remove)
        .await
        .unwrap();
    assert!(api.get_opt("f").await.unwrap().is_none());
}

#[tokio::test]
async fn delete_preconditions_should_be_checked() {
    let env = TestEnv::start().await.unwrap();
    let api: Api<ConfigMap> = Api::namespaced(env.client(), "default");
    let created = api
        .create(&PostParams::default(), &configmap("a", &[]))
        .await
        .unwrap();
    let wrong = DeleteParams::default().preconditions(Preconditions {
        uid: Some("not-the-uid".into()),
        resource_version: None,
    });
    let e = code(api.delete("a", &wrong).await.unwrap_err());
    assert_eq!((e.code, e.reason.as_str()), (409, "Conflict"));
    let stale = DeleteParams::default().preconditions(Preconditions {
        uid: None,
        resource_version: Some("1".into()),
    });
    assert_eq!(code(api.delete("a", &stale).await.unwrap_err()).code, 409);
    let right = DeleteParams::default().preconditions(Preconditions {
        uid: created.metadata.uid.clone(),
        resource_version: created.metadata.resource_version.clone(),
    });
    api.delete("a", &right).await.unwrap();
}

#[tokio::test]
async fn delete_collection_should_delete_only_matching_objects() {
    let env = TestEnv::start().await.unwrap();
    let api: Api<ConfigMap> = Api::namespaced(env.client(), "default");
    for (name, app) in [("a", "x"), ("b", "x"), ("c", "y")] {
        api.create(&PostParams::default(), &configmap(name, &[("app", app)]))
            .await
            .unwrap();
    }
    api.delete_collection(
        &DeleteParams::default(),
        &ListParams::default().labels("app=x"),
    )
    .await
    .unwrap();
    let left: Vec<_> = api.list(&ListParams::default()).await.unwrap().items;
    assert_eq!(left.len(), 1);
    assert_eq!(left[0].metadata.name.as_deref(), Some("c"));
}

#[tokio::test]
async fn dry_run_should_not_store_anything() {
    let env = TestEnv::start().await.unwrap();
    let api: Api<ConfigMap> = Api::namespaced(env.client(), "default");
    let before = env.resource_version();
    api.create(
        &PostParams {
            dry_run: true,
            ..Default::default()
        },
        &configmap("a", &[]),
    )
    .await
    .unwrap();
    assert!(api.get_opt("a").await.unwrap().is_none());
    assert_eq!(env.resource_version(), before);
}

#[tokio::test]
async fn list_should_filter_by_label_and_field_selectors() {
    let env = TestEnv::start().await.unwrap();
    let api: Api<ConfigMap> = Api::namespaced(env.client(), "default");
    for (name, app, tier) in [("a", "web", "1"), ("b", "web", "2"), ("c", "db", "3")] {
        api.create(
            &PostParams::default(),
            &configmap(name, &[("app", app), ("tier", tier)]),
        )
        .await
        .unwrap();
    }
    let names = |lp: ListParams| {
        let api = api.clone();
        async move {
            api.list(&lp)
                .await
                .unwrap()
                .items
                .into_iter()
                .map(|c| c.metadata.name.unwrap())
                .collect::<Vec<_>>()
        }
    };
    assert_eq!(
        names(ListParams::default().labels("app=web")).await,
        ["a", "b"]
    );
    assert_eq!(
        names(ListParams::default().labels("app in (db),tier")).await,
        ["c"]
    );
    assert_eq!(
        names(ListParams::default().labels("tier>1,app!=db")).await,
        ["b"]
    );
    assert_eq!(
        names(ListParams::default().labels("!app")).await,
        Vec::<String>::new()
    );
    assert_eq!(
        names(ListParams::default().fields("metadata.name=b")).await,
        ["b"]
    );
    assert_eq!(
        names(ListParams::default().fields("metadata.name!=b,metadata.namespace=default")).await,
        ["a", "c"]
    );
    let all: Api<ConfigMap> = Api::all(env.client());
    assert_eq!(
        all.list(&ListParams::default()).await.unwrap().items.len(),
        3
    );
    let e = code(
        api.list(&ListParams::default().fields("data.key=value"))
            .await
            .unwrap_err(),
    );
    assert_eq!(e.code, 400);
    let e = code(
        api.list(&ListParams::default().labels("app in web"))
            .await
            .unwrap_err(),
    );
    assert_eq!(e.code, 400);
}

#[tokio::test]
async fn list_should_paginate_with_limit_and_continue() {
    let env = TestEnv::start().await.unwrap();
    let api: Api<ConfigMap> = Api::namespaced(env.client(), "default");
    for i in 0..7 {
        api.create(&PostParams::default(), &configmap(&format!("cm-{i}"), &[]))
            .await
            .unwrap();
    }
    let first = api.list(&ListParams::default().limit(3)).await.unwrap();
    assert_eq!(first.items.len(), 3);
    assert_eq!(first.metadata.remaining_item_count, Some(4));
    let list_rv = first.metadata.resource_version.clone();
    // A change between pages does not show up: pages are consistent with the first one.
    api.create(&PostParams::default(), &configmap("cm-9", &[]))
        .await
        .unwrap();
    let mut names: Vec<String> = first
        .items
        .iter()
        .map(|c| c.metadata.name.clone().unwrap())
        .collect();
    let mut token = first.metadata.continue_.clone();
    while let Some(t) = token.filter(|t| !t.is_empty()) {
        let page = api
            .list(&ListParams::default().limit(3).continue_token(&t))
            .await
            .unwrap();
        assert_eq!(page.metadata.resource_version, list_rv);
        names.extend(page.items.iter().map(|c| c.metadata.name.clone().unwrap()));
        token = page.metadata.continue_;
    }
    assert_eq!(names, (0..7).map(|i| format!("cm-{i}")).collect::<Vec<_>>());
}

#[tokio::test]
async fn a_continue_token_older_than_the_history_should_get_410_expired() {
    let env = TestEnv::start().await.unwrap();
    let api: Api<ConfigMap> = Api::namespaced(env.client(), "default");
    for i in 0..3 {
        api.create(&PostParams::default(), &configmap(&format!("cm-{i}"), &[]))
            .await
            .unwrap();
    }
    let first = api.list(&ListParams::default().limit(1)).await.unwrap();
    api.create(&PostParams::default(), &configmap("later", &[]))
        .await
        .unwrap();
    env.faults().compact_history();
    let token = first.metadata.continue_.unwrap();
    let e = code(
        api.list(&ListParams::default().limit(1).continue_token(&token))
            .await
            .unwrap_err(),
    );
    assert_eq!((e.code, e.reason.as_str()), (410, "Expired"));
}

#[tokio::test]
async fn list_should_honour_resource_version_match() {
    let env = TestEnv::start().await.unwrap();
    let api: Api<ConfigMap> = Api::namespaced(env.client(), "default");
    api.create(&PostParams::default(), &configmap("a", &[]))
        .await
        .unwrap();
    let at = env.resource_version().to_string();
    api.create(&PostParams::default(), &configmap("b", &[]))
        .await
        .unwrap();
    api.delete("a", &DeleteParams::default()).await.unwrap();

    let exact = api
        .list(&ListParams::default().at(&at).matching(VersionMatch::Exact))
        .await
        .unwrap();
    assert_eq!(
        exact.metadata.resource_version.as_deref(),
        Some(at.as_str())
    );
    assert_eq!(
        exact
            .items
            .iter()
            .map(|c| c.metadata.name.clone().unwrap())
            .collect::<Vec<_>>(),
        ["a"]
    );

    let newest = api
        .list(
            &ListParams::default()
                .at(&at)
                .matching(VersionMatch::NotOlderThan),
        )
        .await
        .unwrap();
    assert_eq!(newest.items.len(), 1);
    assert_eq!(
        newest.metadata.resource_version,
        Some(env.resource_version().to_string())
    );
    let any = api.list(&ListParams::default().match_any()).await.unwrap();
    assert_eq!(any.items.len(), 1);

    // kube retries 504 by default; see the answer itself.
    let mut config = env.config().unwrap();
    config.default_retry = false;
    let no_retry: Api<ConfigMap> =
        Api::namespaced(kube::Client::try_from(config).unwrap(), "default");
    let future = (env.resource_version() + 100).to_string();
    let e = code(
        no_retry
            .list(
                &ListParams::default()
                    .at(&future)
                    .matching(VersionMatch::NotOlderThan),
            )
            .await
            .unwrap_err(),
    );
    assert_eq!(e.code, 504);

    env.faults().compact_history();
    let e = code(
        api.list(&ListParams::default().at(&at).matching(VersionMatch::Exact))
            .await
            .unwrap_err(),
    );
    assert_eq!((e.code, e.reason.as_str()), (410, "Expired"));

    // kube refuses to send this one; the server answers it as kube-apiserver does.
    let path = "/api/v1/namespaces/default/configmaps?resourceVersion=0&resourceVersionMatch=Exact";
    let r = common::raw(env.addr(), "GET", path, &[], b"").await;
    assert_eq!(
        (r.status, r.json()["reason"].as_str()),
        (422, Some("Invalid"))
    );
    let path = "/api/v1/namespaces/default/configmaps?resourceVersionMatch=NotOlderThan";
    assert_eq!(
        common::raw(env.addr(), "GET", path, &[], b"").await.status,
        422
    );
}

#[tokio::test]
async fn leases_should_support_the_leader_election_cycle() {
    let env = TestEnv::start().await.unwrap();
    let api: Api<Lease> = Api::namespaced(env.client(), "default");
    let lease: Lease = serde_json::from_value(json!({
        "metadata": {"name": "lock"},
        "spec": {"holderIdentity": "a", "leaseDurationSeconds": 15, "acquireTime": "2024-01-01T00:00:00.000000Z", "renewTime": "2024-01-01T00:00:00.000000Z", "leaseTransitions": 0}
    }))
    .unwrap();
    let created = api.create(&PostParams::default(), &lease).await.unwrap();
    let mut renew = created.clone();
    renew.spec.as_mut().unwrap().renew_time =
        Some(serde_json::from_value(json!("2024-01-01T00:00:05.000000Z")).unwrap());
    let renewed = api
        .replace("lock", &PostParams::default(), &renew)
        .await
        .unwrap();
    let mut takeover = created.clone();
    takeover.spec.as_mut().unwrap().holder_identity = Some("b".into());
    assert_eq!(
        code(
            api.replace("lock", &PostParams::default(), &takeover)
                .await
                .unwrap_err()
        )
        .code,
        409
    );
    let mut takeover = renewed.clone();
    takeover.spec.as_mut().unwrap().holder_identity = Some("b".into());
    let taken = api
        .replace("lock", &PostParams::default(), &takeover)
        .await
        .unwrap();
    assert_eq!(taken.spec.unwrap().holder_identity.as_deref(), Some("b"));
}

#[tokio::test]
async fn deleting_a_namespace_should_delete_its_objects() {
    let env = TestEnv::start().await.unwrap();
    let namespaces: Api<Namespace> = Api::all(env.client());
    let mut ns = Namespace::default();
    ns.metadata.name = Some("team".into());
    let created = namespaces
        .create(&PostParams::default(), &ns)
        .await
        .unwrap();
    assert_eq!(
        created.status.and_then(|s| s.phase).as_deref(),
        Some("Active")
    );
    let api: Api<ConfigMap> = Api::namespaced(env.client(), "team");
    api.create(&PostParams::default(), &configmap("a", &[]))
        .await
        .unwrap();
    namespaces
        .delete("team", &DeleteParams::default())
        .await
        .unwrap();
    assert!(namespaces.get_opt("team").await.unwrap().is_none());
    assert!(
        api.list(&ListParams::default())
            .await
            .unwrap()
            .items
            .is_empty()
    );
}

fn crd(scope: &str, plural: &str, kind: &str) -> serde_json::Value {
    json!({
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": format!("{plural}.example.com")},
        "spec": {
            "group": "example.com",
            "names": {"plural": plural, "singular": kind.to_lowercase(), "kind": kind},
            "scope": scope,
            "versions": [
                {"name": "v1", "served": true, "storage": true, "subresources": {"status": {}},
                 "schema": {"openAPIV3Schema": {"type": "object", "x-kubernetes-preserve-unknown-fields": true}}},
                {"name": "v2", "served": true, "storage": false,
                 "schema": {"openAPIV3Schema": {"type": "object", "x-kubernetes-preserve-unknown-fields": true}}}
            ]
        }
    })
}

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

#[tokio::test]
async fn a_crd_should_serve_its_resource_until_it_is_deleted() {
    let env = TestEnv::start().await.unwrap();
    let crds = crd_api(&env);
    let crd_obj: DynamicObject =
        serde_json::from_value(crd("Namespaced", "widgets", "Widget")).unwrap();
    crds.create(&PostParams::default(), &crd_obj).await.unwrap();
    // The create answers before the controllers establish the CRD; a read sees them.
    let created = crds.get("widgets.example.com").await.unwrap();
    let established = created.data["status"]["conditions"]
        .as_array()
        .unwrap()
        .iter()
        .any(|c| c["type"] == "Established" && c["status"] == "True");
    assert!(established);

    let ar = ApiResource::from_gvk_with_plural(
        &GroupVersionKind::gvk("example.com", "v1", "Widget"),
        "widgets",
    );
    let widgets: Api<DynamicObject> = Api::namespaced_with(env.client(), "default", &ar);
    let w: DynamicObject = serde_json::from_value(json!({
        "apiVersion": "example.com/v1", "kind": "Widget",
        "metadata": {"name": "w"}, "spec": {"size": 1}, "status": {"ready": true}
    }))
    .unwrap();
    let w = widgets.create(&PostParams::default(), &w).await.unwrap();
    assert!(
        w.data.get("status").is_none(),
        "status is dropped on create"
    );

    // Custom resources require a resourceVersion on update.
    let mut unversioned = w.clone();
    unversioned.metadata.resource_version = None;
    assert_eq!(
        code(
            widgets
                .replace("w", &PostParams::default(), &unversioned)
                .await
                .unwrap_err()
        )
        .code,
        422
    );

    let st = widgets
        .patch_status(
            "w",
            &PatchParams::default(),
            &Patch::Merge(json!({"status": {"ready": true}, "spec": {"size": 5}})),
        )
        .await
        .unwrap();
    assert_eq!(st.data["status"]["ready"], true);
    assert_eq!(st.data["spec"]["size"], 1);

    // Every served version reads the same objects.
    let ar2 = ApiResource::from_gvk_with_plural(
        &GroupVersionKind::gvk("example.com", "v2", "Widget"),
        "widgets",
    );
    let v2: Api<DynamicObject> = Api::namespaced_with(env.client(), "default", &ar2);
    let read = v2.get("w").await.unwrap();
    assert_eq!(
        read.types.as_ref().map(|t| t.api_version.as_str()),
        Some("example.com/v2")
    );

    crds.delete("widgets.example.com", &DeleteParams::default())
        .await
        .unwrap();
    assert_eq!(code(widgets.get("w").await.unwrap_err()).code, 404);
    assert_eq!(
        code(widgets.list(&ListParams::default()).await.unwrap_err()).code,
        404
    );
}

#[tokio::test]
async fn a_cluster_scoped_crd_should_serve_cluster_scoped_objects() {
    let env = TestEnv::start().await.unwrap();
    let crds = crd_api(&env);
    let crd_obj: DynamicObject =
        serde_json::from_value(crd("Cluster", "gadgets", "Gadget")).unwrap();
    crds.create(&PostParams::default(), &crd_obj).await.unwrap();
    let ar = ApiResource::from_gvk_with_plural(
        &GroupVersionKind::gvk("example.com", "v1", "Gadget"),
        "gadgets",
    );
    let gadgets: Api<DynamicObject> = Api::all_with(env.client(), &ar);
    let g: DynamicObject = serde_json::from_value(
        json!({"apiVersion": "example.com/v1", "kind": "Gadget", "metadata": {"name": "g"}}),
    )
    .unwrap();
    let g = gadgets.create(&PostParams::default(), &g).await.unwrap();
    assert_eq!(g.metadata.namespace, None);
    assert_eq!(
        gadgets
            .list(&ListParams::default())
            .await
            .unwrap()
            .items
            .len(),
        1
    );

    // A CRD whose name does not match its names is invalid.
    let mut bad = crd("Cluster", "things", "Thing");
    bad["metadata"]["name"] = json!("wrong.example.com");
    let bad: DynamicObject = serde_json::from_value(bad).unwrap();
    assert_eq!(
        code(crds.create(&PostParams::default(), &bad).await.unwrap_err()).code,
        422
    );
}

#[tokio::test]
async fn a_token_should_be_required_when_configured() {
    let env = TestEnv::builder().token("s3cret").start().await.unwrap();
    let api: Api<ConfigMap> = Api::namespaced(env.client(), "default");
    api.list(&ListParams::default()).await.unwrap();
    let r = common::raw(
        env.addr(),
        "GET",
        "/api/v1/namespaces/default/configmaps",
        &[],
        b"",
    )
    .await;
    // No credentials: anonymous, whom RBAC forbids (kube-apiserver's default anonymous auth).
    assert_eq!(r.status, 403);
    assert_eq!(r.json()["reason"], "Forbidden");
    let r = common::raw(
        env.addr(),
        "GET",
        "/api",
        &[("Authorization", "Bearer wrong")],
        b"",
    )
    .await;
    assert_eq!(r.status, 401);
    let r = common::raw(
        env.addr(),
        "GET",
        "/api",
        &[("Authorization", "Bearer s3cret")],
        b"",
    )
    .await;
    assert_eq!(r.status, 200);
}

#[tokio::test]
async fn the_kubeconfig_should_load_into_a_working_client() {
    let env = TestEnv::builder().token("t").start().await.unwrap();
    let kubeconfig = kube::config::Kubeconfig::read_from(env.kubeconfig_path()).unwrap();
    let config = kube::Config::from_custom_kubeconfig(kubeconfig, &Default::default())
        .await
        .unwrap();
    let client = kube::Client::try_from(config).unwrap();
    let api: Api<ConfigMap> = Api::default_namespaced(client);
    api.create(&PostParams::default(), &configmap("via-kubeconfig", &[]))
        .await
        .unwrap();
}

#[tokio::test]
async fn metadata_only_requests_should_get_partial_object_metadata() {
    let env = TestEnv::start().await.unwrap();
    let api: Api<ConfigMap> = Api::namespaced(env.client(), "default");
    api.create(&PostParams::default(), &configmap("a", &[("app", "x")]))
        .await
        .unwrap();
    let list = api.list_metadata(&ListParams::default()).await.unwrap();
    assert_eq!(list.items.len(), 1);
    assert_eq!(
        list.items[0]
            .metadata
            .labels
            .as_ref()
            .and_then(|l| l.get("app"))
            .map(String::as_str),
        Some("x")
    );
    let one = api.get_metadata("a").await.unwrap();
    assert_eq!(
        one.types.map(|t| t.kind),
        Some("PartialObjectMetadata".to_owned())
    );
    let r = common::raw(
        env.addr(),
        "GET",
        "/api/v1/namespaces/default/configmaps",
        &[(
            "Accept",
            "application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1",
        )],
        b"",
    )
    .await;
    let body = r.json();
    assert_eq!(body["kind"], "PartialObjectMetadataList");
    assert!(body["items"][0].get("data").is_none());
}

#[tokio::test]
async fn a_namespace_should_serve_its_status_subresource() {
    let env = TestEnv::start().await.unwrap();
    let r = common::raw(
        env.addr(),
        "GET",
        "/api/v1/namespaces/default/status",
        &[],
        b"",
    )
    .await;
    assert_eq!(r.status, 200);
    assert_eq!(r.json()["status"]["phase"], "Active");
}
