//! RBAC enforcement (`TestEnvBuilder::rbac`) and ServiceAccount tokens, through `kube::Client`:
//! an operator running under its ServiceAccount with and without its Role, users and groups,
//! ClusterRoles (aggregated ones too), resource names, subresources, non-resource URLs, the
//! `403` bodies of kube-apiserver, and the review APIs answering from the same rules.

use k8s_openapi::api::authentication::v1::{
    TokenRequest, TokenRequestSpec, TokenReview, TokenReviewSpec,
};
use k8s_openapi::api::authorization::v1::{
    LocalSubjectAccessReview, ResourceAttributes, SelfSubjectAccessReview,
    SelfSubjectAccessReviewSpec, SubjectAccessReview, SubjectAccessReviewSpec,
};
use k8s_openapi::api::core::v1::{ConfigMap, Pod, ServiceAccount};
use k8s_openapi::api::rbac::v1::{ClusterRole, ClusterRoleBinding, Role, RoleBinding};
use kcr_testenv::{TestEnv, UserInfo};
use kube::api::{Api, DeleteParams, ListParams, PostParams};
use kube::core::Status;
use serde_json::json;

async fn rbac_env() -> TestEnv {
    TestEnv::builder().rbac(true).start().await.unwrap()
}

fn from_json<T: serde::de::DeserializeOwned>(v: serde_json::Value) -> T {
    serde_json::from_value(v).unwrap()
}

async fn create<K>(api: Api<K>, obj: serde_json::Value) -> K
where
    K: kube::Resource + Clone + serde::Serialize + serde::de::DeserializeOwned + std::fmt::Debug,
{
    api.create(&PostParams::default(), &from_json(obj))
        .await
        .unwrap()
}

async fn service_account(env: &TestEnv, ns: &str, name: &str) {
    create(
        Api::<ServiceAccount>::namespaced(env.client(), ns),
        json!({"metadata": {"name": name}}),
    )
    .await;
}

fn config_map(name: &str) -> ConfigMap {
    from_json(json!({"metadata": {"name": name}, "data": {"k": "v"}}))
}

fn api_error(e: kube::Error) -> Status {
    match e {
        kube::Error::Api(s) => *s,
        other => panic!("expected an API error, got {other:?}"),
    }
}

/// The Role an operator needs: read and create ConfigMaps.
async fn operator_role(env: &TestEnv) {
    create(Api::<Role>::namespaced(env.client(), "default"),
        json!({
            "metadata": {"name": "operator"},
            "rules": [{"apiGroups": [""], "resources": ["configmaps"], "verbs": ["get", "list", "watch", "create"]}]
        }),
    )
    .await;
    create(Api::<RoleBinding>::namespaced(env.client(), "default"),
        json!({
            "metadata": {"name": "operator"},
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "operator"},
            "subjects": [{"kind": "ServiceAccount", "name": "operator"}]
        }),
    )
    .await;
}

#[tokio::test]
async fn an_operator_should_be_forbidden_without_its_role_and_allowed_with_it() {
    let env = rbac_env().await;
    service_account(&env, "default", "operator").await;
    let operator = env.service_account_client("default", "operator").unwrap();
    let cms: Api<ConfigMap> = Api::namespaced(operator.clone(), "default");

    let denied = api_error(cms.list(&ListParams::default()).await.unwrap_err());
    assert_eq!(denied.code, 403);
    assert_eq!(denied.reason, "Forbidden");
    assert_eq!(
        denied.message,
        "configmaps is forbidden: User \"system:serviceaccount:default:operator\" cannot list resource \"configmaps\" in API group \"\" in the namespace \"default\""
    );
    let denied = api_error(
        cms.create(&PostParams::default(), &config_map("state"))
            .await
            .unwrap_err(),
    );
    assert_eq!(denied.code, 403);

    operator_role(&env).await;
    assert!(
        cms.list(&ListParams::default())
            .await
            .unwrap()
            .items
            .is_empty()
    );
    cms.create(&PostParams::default(), &config_map("state"))
        .await
        .unwrap();
    assert_eq!(cms.get("state").await.unwrap().data.unwrap()["k"], "v");

    // The Role allows neither deleting nor another namespace.
    let denied = api_error(
        cms.delete("state", &DeleteParams::default())
            .await
            .unwrap_err(),
    );
    assert_eq!(
        denied.message,
        "configmaps \"state\" is forbidden: User \"system:serviceaccount:default:operator\" cannot delete resource \"configmaps\" in API group \"\" in the namespace \"default\""
    );
    let other: Api<ConfigMap> = Api::namespaced(operator.clone(), "kube-system");
    assert_eq!(
        api_error(other.list(&ListParams::default()).await.unwrap_err()).code,
        403
    );
    // The raw body, details included, is kube-apiserver's.
    let raw = operator
        .request::<serde_json::Value>(
            http::Request::get("/api/v1/namespaces/default/pods/p")
                .body(Vec::new())
                .unwrap(),
        )
        .await
        .unwrap_err();
    let raw = api_error(raw);
    assert_eq!(raw.code, 403);
    assert_eq!(
        raw.message,
        "pods \"p\" is forbidden: User \"system:serviceaccount:default:operator\" cannot get resource \"pods\" in API group \"\" in the namespace \"default\""
    );

    // The admin is not held to any binding.
    Api::<ConfigMap>::namespaced(env.client(), "kube-system")
        .list(&ListParams::default())
        .await
        .unwrap();
}

#[tokio::test]
async fn without_rbac_every_authenticated_client_should_be_allowed() {
    let env = TestEnv::start().await.unwrap();
    service_account(&env, "default", "operator").await;
    let operator = env.service_account_client("default", "operator").unwrap();
    Api::<ConfigMap>::namespaced(operator, "kube-system")
        .create(&PostParams::default(), &config_map("x"))
        .await
        .unwrap();
}

#[tokio::test]
async fn cluster_roles_should_apply_to_users_groups_names_and_subresources() {
    let env = rbac_env().await;
    create(Api::<ClusterRole>::all(env.client()),
        json!({
            "metadata": {"name": "log-reader"},
            "rules": [
                {"apiGroups": [""], "resources": ["pods/log"], "verbs": ["get"]},
                {"apiGroups": [""], "resources": ["configmaps"], "resourceNames": ["settings"], "verbs": ["get"]},
                {"apiGroups": ["apps"], "resources": ["*"], "verbs": ["list"]},
                {"nonResourceURLs": ["/version"], "verbs": ["get"]}
            ]
        }),
    )
    .await;
    create(Api::<ClusterRoleBinding>::all(env.client()),
        json!({
            "metadata": {"name": "log-readers"},
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "log-reader"},
            "subjects": [{"kind": "Group", "name": "devs", "apiGroup": "rbac.authorization.k8s.io"}]
        }),
    )
    .await;
    let admin_cms: Api<ConfigMap> = Api::namespaced(env.client(), "default");
    for name in ["settings", "secret-ish"] {
        admin_cms
            .create(&PostParams::default(), &config_map(name))
            .await
            .unwrap();
    }
    Api::<Pod>::namespaced(env.client(), "default")
        .create(
            &PostParams::default(),
            &from_json(json!({"metadata": {"name": "p"}, "spec": {"containers": [{"name": "c", "image": "nginx"}]}})),
        )
        .await
        .unwrap();

    let alice = env
        .client_for_user(UserInfo::new("alice").groups(["devs"]))
        .unwrap();
    let bob = env.client_for_user(UserInfo::new("bob")).unwrap();
    let cms: Api<ConfigMap> = Api::namespaced(alice.clone(), "default");
    cms.get("settings").await.unwrap();
    let denied = api_error(cms.get("secret-ish").await.unwrap_err());
    assert_eq!(
        denied.message,
        "configmaps \"secret-ish\" is forbidden: User \"alice\" cannot get resource \"configmaps\" in API group \"\" in the namespace \"default\""
    );
    // A list names nothing, so a rule with resourceNames does not allow it.
    assert_eq!(
        api_error(cms.list(&ListParams::default()).await.unwrap_err()).code,
        403
    );
    // `pods/log` but not `pods`.
    let pods: Api<Pod> = Api::namespaced(alice.clone(), "default");
    pods.logs("p", &Default::default()).await.unwrap();
    let denied = api_error(pods.get("p").await.unwrap_err());
    assert_eq!(denied.code, 403);
    // Any resource of `apps`, across namespaces.
    Api::<k8s_openapi::api::apps::v1::Deployment>::all(alice.clone())
        .list(&ListParams::default())
        .await
        .unwrap();
    let denied = api_error(
        Api::<k8s_openapi::api::apps::v1::Deployment>::all(bob.clone())
            .list(&ListParams::default())
            .await
            .unwrap_err(),
    );
    assert_eq!(
        denied.message,
        "deployments.apps is forbidden: User \"bob\" cannot list resource \"deployments\" in API group \"apps\" at the cluster scope"
    );
    // A non-resource URL.
    alice.apiserver_version().await.unwrap();
    // (`/version` is public through system:public-info-viewer, as on a cluster.)
    bob.apiserver_version().await.unwrap();
    let metrics = http::Request::get("/metrics").body(Vec::new()).unwrap();
    let denied = api_error(bob.request_text(metrics).await.unwrap_err());
    assert_eq!(
        denied.message,
        "forbidden: User \"bob\" cannot get path \"/metrics\""
    );
}

#[tokio::test]
async fn a_binding_to_a_missing_role_should_be_named_in_the_denial() {
    let env = rbac_env().await;
    create(
        Api::<RoleBinding>::namespaced(env.client(), "default"),
        json!({
            "metadata": {"name": "dangling"},
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "missing"},
            "subjects": [{"kind": "User", "name": "carol"}]
        }),
    )
    .await;
    let carol = env.client_for_user(UserInfo::new("carol")).unwrap();
    let denied = api_error(
        Api::<ConfigMap>::namespaced(carol, "default")
            .list(&ListParams::default())
            .await
            .unwrap_err(),
    );
    assert_eq!(
        denied.message,
        "configmaps is forbidden: User \"carol\" cannot list resource \"configmaps\" in API group \"\" in the namespace \"default\": RBAC: role.rbac.authorization.k8s.io \"missing\" not found"
    );
}

#[tokio::test]
async fn an_aggregated_cluster_role_should_have_the_rules_of_the_roles_it_selects() {
    let env = rbac_env().await;
    create(Api::<ClusterRole>::all(env.client()),
        json!({
            "metadata": {"name": "monitoring"},
            "aggregationRule": {"clusterRoleSelectors": [{"matchLabels": {"rbac.example.com/aggregate-to-monitoring": "true"}}]},
            "rules": []
        }),
    )
    .await;
    create(Api::<ClusterRoleBinding>::all(env.client()),
        json!({
            "metadata": {"name": "monitoring"},
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "monitoring"},
            "subjects": [{"kind": "User", "name": "prom"}]
        }),
    )
    .await;
    let prom = env.client_for_user(UserInfo::new("prom")).unwrap();
    let cms: Api<ConfigMap> = Api::all(prom);
    assert_eq!(
        api_error(cms.list(&ListParams::default()).await.unwrap_err()).code,
        403
    );
    create(Api::<ClusterRole>::all(env.client()),
        json!({
            "metadata": {"name": "configmap-reader", "labels": {"rbac.example.com/aggregate-to-monitoring": "true"}},
            "rules": [{"apiGroups": [""], "resources": ["configmaps"], "verbs": ["list"]}]
        }),
    )
    .await;
    cms.list(&ListParams::default()).await.unwrap();
}

fn resource_attributes(verb: &str, ns: &str, resource: &str) -> ResourceAttributes {
    ResourceAttributes {
        namespace: Some(ns.into()),
        verb: Some(verb.into()),
        group: Some(String::new()),
        resource: Some(resource.into()),
        ..Default::default()
    }
}

#[tokio::test]
async fn subject_access_reviews_should_answer_from_the_stored_rbac_rules() {
    let env = rbac_env().await;
    service_account(&env, "default", "operator").await;
    let sars: Api<SubjectAccessReview> = Api::all(env.client());
    let review = |verb: &str| SubjectAccessReview {
        spec: SubjectAccessReviewSpec {
            user: Some("system:serviceaccount:default:operator".into()),
            groups: Some(vec!["system:serviceaccounts".into()]),
            resource_attributes: Some(resource_attributes(verb, "default", "configmaps")),
            ..Default::default()
        },
        ..Default::default()
    };
    let answer = sars
        .create(&PostParams::default(), &review("list"))
        .await
        .unwrap();
    let status = answer.status.unwrap();
    assert!(!status.allowed);
    assert_eq!(status.reason, None);

    operator_role(&env).await;
    let status = sars
        .create(&PostParams::default(), &review("list"))
        .await
        .unwrap()
        .status
        .unwrap();
    assert!(status.allowed);
    assert_eq!(
        status.reason.as_deref(),
        Some(
            "RBAC: allowed by RoleBinding \"operator/default\" of Role \"operator\" to ServiceAccount \"operator/default\""
        )
    );
    let status = sars
        .create(&PostParams::default(), &review("delete"))
        .await
        .unwrap()
        .status
        .unwrap();
    assert!(!status.allowed);

    // The operator may review its own access (system:basic-user, bound to
    // system:authenticated by the bootstrap policy, as on a cluster)...
    let operator = env.service_account_client("default", "operator").unwrap();
    let ssars: Api<SelfSubjectAccessReview> = Api::all(operator.clone());
    let ssar = SelfSubjectAccessReview {
        spec: SelfSubjectAccessReviewSpec {
            resource_attributes: Some(resource_attributes("create", "default", "configmaps")),
            ..Default::default()
        },
        ..Default::default()
    };
    let status = ssars
        .create(&PostParams::default(), &ssar)
        .await
        .unwrap()
        .status
        .unwrap();
    assert!(status.allowed, "{status:?}");
    // ...but not another subject's.
    let denied = api_error(
        Api::<SubjectAccessReview>::all(operator.clone())
            .create(&PostParams::default(), &review("list"))
            .await
            .unwrap_err(),
    );
    assert_eq!(
        denied.message,
        "subjectaccessreviews.authorization.k8s.io is forbidden: User \"system:serviceaccount:default:operator\" cannot create resource \"subjectaccessreviews\" in API group \"authorization.k8s.io\" at the cluster scope"
    );

    // A LocalSubjectAccessReview is about its own namespace.
    let lsars: Api<LocalSubjectAccessReview> = Api::namespaced(env.client(), "kube-system");
    let mut lsar: LocalSubjectAccessReview = from_json(json!({
        "metadata": {"namespace": "kube-system"},
        "spec": {"user": "system:serviceaccount:default:operator",
                 "resourceAttributes": {"verb": "list", "resource": "configmaps"}}
    }));
    let status = lsars
        .create(&PostParams::default(), &lsar)
        .await
        .unwrap()
        .status
        .unwrap();
    assert!(!status.allowed);
    lsar.spec.resource_attributes.as_mut().unwrap().namespace = Some("default".into());
    let err = api_error(
        lsars
            .create(&PostParams::default(), &lsar)
            .await
            .unwrap_err(),
    );
    assert_eq!(err.code, 400);
}

#[tokio::test]
async fn a_token_request_should_issue_a_token_that_token_reviews_accept() {
    let env = rbac_env().await;
    service_account(&env, "default", "builder").await;
    let sas: Api<ServiceAccount> = Api::namespaced(env.client(), "default");
    let request = TokenRequest {
        spec: Some(TokenRequestSpec {
            expiration_seconds: Some(1200),
            ..Default::default()
        }),
        ..Default::default()
    };
    let issued: TokenRequest = sas
        .create_subresource::<TokenRequest, TokenRequest>(
            "token",
            "builder",
            &PostParams::default(),
            &request,
        )
        .await
        .unwrap();
    assert_eq!(issued.metadata.name.as_deref(), Some("builder"));
    let spec = issued.spec.unwrap();
    assert_eq!(spec.expiration_seconds, Some(1200));
    assert_eq!(
        spec.audiences,
        Some(vec![
            "https://kubernetes.default.svc.cluster.local".to_owned()
        ])
    );
    let token = issued.status.unwrap().token.unwrap();
    assert_eq!(token.split('.').count(), 3);
    // The token authenticates requests as the ServiceAccount (which may do nothing yet).
    let as_builder = env.client_with_token(&token).unwrap();
    let err = Api::<ConfigMap>::namespaced(as_builder, "default")
        .list(&ListParams::default())
        .await
        .unwrap_err();
    assert_eq!(api_error(err).code, 403);

    let reviews: Api<TokenReview> = Api::all(env.client());
    let review = |token: &str| TokenReview {
        spec: TokenReviewSpec {
            token: token.into(),
            audiences: None,
        },
        ..Default::default()
    };
    let answer = reviews
        .create(&PostParams::default(), &review(&token))
        .await
        .unwrap()
        .status
        .unwrap();
    assert_eq!(answer.authenticated, Some(true));
    let user = answer.user.unwrap();
    assert_eq!(
        user.username.as_deref(),
        Some("system:serviceaccount:default:builder")
    );
    assert_eq!(
        user.groups.unwrap(),
        [
            "system:serviceaccounts",
            "system:serviceaccounts:default",
            "system:authenticated"
        ]
    );
    let sa_uid = sas.get("builder").await.unwrap().metadata.uid;
    assert_eq!(user.uid, sa_uid);

    // A too short expiration is invalid; a missing ServiceAccount is not found.
    let short = TokenRequest {
        spec: Some(TokenRequestSpec {
            expiration_seconds: Some(60),
            ..Default::default()
        }),
        ..Default::default()
    };
    let err = sas
        .create_subresource::<TokenRequest, TokenRequest>(
            "token",
            "builder",
            &PostParams::default(),
            &short,
        )
        .await
        .unwrap_err();
    assert_eq!(api_error(err).code, 422);
    let err = sas
        .create_subresource::<TokenRequest, TokenRequest>(
            "token",
            "nobody",
            &PostParams::default(),
            &request,
        )
        .await
        .unwrap_err();
    assert_eq!(api_error(err).code, 404);

    // Deleting the ServiceAccount revokes its tokens.
    sas.delete("builder", &DeleteParams::default())
        .await
        .unwrap();
    let answer = reviews
        .create(&PostParams::default(), &review(&token))
        .await
        .unwrap()
        .status
        .unwrap();
    assert_eq!(answer.authenticated, Some(false));
    let revoked = env.client_with_token(&token).unwrap();
    let err = Api::<ConfigMap>::namespaced(revoked, "default")
        .list(&ListParams::default())
        .await
        .unwrap_err();
    assert_eq!(api_error(err).code, 401);
}

#[tokio::test]
async fn unknown_tokens_should_get_401_when_rbac_is_enforced() {
    let env = rbac_env().await;
    let stranger = env.client_with_token("not-a-token").unwrap();
    let err = api_error(
        Api::<ConfigMap>::namespaced(stranger, "default")
            .list(&ListParams::default())
            .await
            .unwrap_err(),
    );
    assert_eq!(err.code, 401);
    // A ServiceAccount that does not exist gets no token.
    assert!(env.service_account_client("default", "ghost").is_err());
}

#[tokio::test]
async fn a_token_for_another_audience_should_not_authenticate_to_the_server() {
    let env = rbac_env().await;
    service_account(&env, "default", "vault-client").await;
    let sas: Api<ServiceAccount> = Api::namespaced(env.client(), "default");
    let request = TokenRequest {
        spec: Some(TokenRequestSpec {
            audiences: Some(vec!["vault".into()]),
            ..Default::default()
        }),
        ..Default::default()
    };
    let issued: TokenRequest = sas
        .create_subresource::<TokenRequest, TokenRequest>(
            "token",
            "vault-client",
            &PostParams::default(),
            &request,
        )
        .await
        .unwrap();
    assert_eq!(issued.spec.unwrap().expiration_seconds, Some(3600));
    let token = issued.status.unwrap().token.unwrap();
    let reviews: Api<TokenReview> = Api::all(env.client());
    let review = |audiences: Option<Vec<String>>| TokenReview {
        spec: TokenReviewSpec {
            token: token.clone(),
            audiences,
        },
        ..Default::default()
    };
    let status = reviews
        .create(&PostParams::default(), &review(Some(vec!["vault".into()])))
        .await
        .unwrap()
        .status
        .unwrap();
    assert_eq!(status.authenticated, Some(true));
    assert_eq!(status.audiences, Some(vec!["vault".to_owned()]));
    // Not for kube-apiserver's own audience.
    let status = reviews
        .create(&PostParams::default(), &review(None))
        .await
        .unwrap()
        .status
        .unwrap();
    assert_eq!(status.authenticated, Some(false));
    let err = Api::<ConfigMap>::namespaced(env.client_with_token(&token).unwrap(), "default")
        .list(&ListParams::default())
        .await
        .unwrap_err();
    assert_eq!(api_error(err).code, 401);
}

#[tokio::test]
async fn a_self_subject_review_should_report_the_requesting_user() {
    let env = TestEnv::start().await.unwrap();
    service_account(&env, "default", "whoami").await;
    let client = env.service_account_client("default", "whoami").unwrap();
    let answer: serde_json::Value = client
        .request(
            http::Request::post("/apis/authentication.k8s.io/v1/selfsubjectreviews")
                .header("content-type", "application/json")
                .body(
                    serde_json::to_vec(&json!({
                        "apiVersion": "authentication.k8s.io/v1",
                        "kind": "SelfSubjectReview"
                    }))
                    .unwrap(),
                )
                .unwrap(),
        )
        .await
        .unwrap();
    assert_eq!(
        answer.pointer("/status/userInfo/username"),
        Some(&json!("system:serviceaccount:default:whoami"))
    );
    assert_eq!(
        answer.pointer("/status/userInfo/groups"),
        Some(&json!([
            "system:serviceaccounts",
            "system:serviceaccounts:default",
            "system:authenticated"
        ]))
    );
}

#[tokio::test]
async fn an_operator_should_grant_only_what_it_holds_unless_it_may_escalate_or_bind() {
    let env = rbac_env().await;
    service_account(&env, "default", "installer").await;
    create(
        Api::<Role>::namespaced(env.client(), "default"),
        json!({
            "metadata": {"name": "installer"},
            "rules": [
                {"apiGroups": ["rbac.authorization.k8s.io"], "resources": ["roles", "rolebindings"], "verbs": ["create"]},
                {"apiGroups": [""], "resources": ["configmaps"], "verbs": ["get", "list"]}
            ]
        }),
    )
    .await;
    create(
        Api::<RoleBinding>::namespaced(env.client(), "default"),
        json!({
            "metadata": {"name": "installer"},
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "installer"},
            "subjects": [{"kind": "ServiceAccount", "name": "installer", "namespace": "default"}]
        }),
    )
    .await;
    let installer = env.service_account_client("default", "installer").unwrap();
    let roles: Api<Role> = Api::namespaced(installer.clone(), "default");
    // What it holds it may grant.
    roles
        .create(
            &PostParams::default(),
            &from_json(json!({"metadata": {"name": "reader"},
                "rules": [{"apiGroups": [""], "resources": ["configmaps"], "verbs": ["get"]}]})),
        )
        .await
        .unwrap();
    // More is refused, naming what is missing.
    let denied = api_error(
        roles
            .create(
                &PostParams::default(),
                &from_json(json!({"metadata": {"name": "writer"},
                    "rules": [{"apiGroups": [""], "resources": ["configmaps", "secrets"], "verbs": ["get", "delete"]}]})),
            )
            .await
            .unwrap_err(),
    );
    assert_eq!(denied.code, 403);
    assert_eq!(
        denied.message,
        "roles.rbac.authorization.k8s.io \"writer\" is forbidden: user \"system:serviceaccount:default:installer\" (groups=[\"system:serviceaccounts\" \"system:serviceaccounts:default\" \"system:authenticated\"]) is attempting to grant RBAC permissions not currently held:\n{APIGroups:[\"\"], Resources:[\"configmaps\"], Verbs:[\"delete\"]}\n{APIGroups:[\"\"], Resources:[\"secrets\"], Verbs:[\"get\" \"delete\"]}"
    );
    // A binding to a role it does not hold is refused, unless it may `bind` that role.
    create(
        Api::<ClusterRole>::all(env.client()),
        json!({"metadata": {"name": "secret-admin"},
               "rules": [{"apiGroups": [""], "resources": ["secrets"], "verbs": ["*"]}]}),
    )
    .await;
    let bindings: Api<RoleBinding> = Api::namespaced(installer.clone(), "default");
    let binding: RoleBinding = from_json(json!({
        "metadata": {"name": "app-secrets"},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "secret-admin"},
        "subjects": [{"kind": "ServiceAccount", "name": "app"}]
    }));
    let denied = api_error(
        bindings
            .create(&PostParams::default(), &binding)
            .await
            .unwrap_err(),
    );
    assert_eq!(denied.code, 403);
    assert!(denied.message.starts_with(
        "rolebindings.rbac.authorization.k8s.io \"app-secrets\" is forbidden: user \"system:serviceaccount:default:installer\""
    ), "{}", denied.message);
    create(
        Api::<Role>::namespaced(env.client(), "default"),
        json!({"metadata": {"name": "binder"},
               "rules": [{"apiGroups": ["rbac.authorization.k8s.io"], "resources": ["clusterroles"],
                          "verbs": ["bind"], "resourceNames": ["secret-admin"]}]}),
    )
    .await;
    create(
        Api::<RoleBinding>::namespaced(env.client(), "default"),
        json!({
            "metadata": {"name": "binder"},
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "binder"},
            "subjects": [{"kind": "ServiceAccount", "name": "installer"}]
        }),
    )
    .await;
    bindings
        .create(&PostParams::default(), &binding)
        .await
        .unwrap();
}

fn impersonating(env: &TestEnv, base: Option<&str>, user: &str, groups: &[&str]) -> kube::Client {
    let mut config = env.config().unwrap();
    if let Some(token) = base {
        config
            .headers
            .retain(|(k, _)| k != http::header::AUTHORIZATION);
        config.headers.push((
            http::header::AUTHORIZATION,
            http::HeaderValue::from_str(&format!("Bearer {token}")).unwrap(),
        ));
    }
    config.auth_info.impersonate = Some(user.into());
    if !groups.is_empty() {
        config.auth_info.impersonate_groups =
            Some(groups.iter().map(|g| (*g).to_owned()).collect());
    }
    kube::Client::try_from(config).unwrap()
}

#[tokio::test]
async fn impersonation_should_run_requests_as_the_impersonated_user_when_allowed() {
    let env = TestEnv::builder()
        .rbac(true)
        .user_token("alice-token", UserInfo::new("alice"))
        .start()
        .await
        .unwrap();
    create(
        Api::<ClusterRoleBinding>::all(env.client()),
        json!({
            "metadata": {"name": "devs-view"},
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "cm-reader"},
            "subjects": [{"kind": "Group", "name": "devs", "apiGroup": "rbac.authorization.k8s.io"}]
        }),
    )
    .await;
    create(
        Api::<ClusterRole>::all(env.client()),
        json!({"metadata": {"name": "cm-reader"},
               "rules": [{"apiGroups": [""], "resources": ["configmaps"], "verbs": ["list"]}]}),
    )
    .await;
    // The admin may impersonate anyone; the request runs as that user.
    let as_bob = impersonating(&env, None, "bob", &[]);
    let err = api_error(
        Api::<ConfigMap>::all(as_bob)
            .list(&ListParams::default())
            .await
            .unwrap_err(),
    );
    assert_eq!(
        err.message,
        "configmaps is forbidden: User \"bob\" cannot list resource \"configmaps\" in API group \"\" at the cluster scope"
    );
    let as_dev = impersonating(&env, None, "bob", &["devs"]);
    Api::<ConfigMap>::all(as_dev)
        .list(&ListParams::default())
        .await
        .unwrap();
    // Alice may not impersonate until allowed to.
    let alice_as_bob = impersonating(&env, Some("alice-token"), "bob", &[]);
    let err = api_error(
        Api::<ConfigMap>::all(alice_as_bob.clone())
            .list(&ListParams::default())
            .await
            .unwrap_err(),
    );
    assert_eq!(
        err.message,
        "users \"bob\" is forbidden: User \"alice\" cannot impersonate resource \"users\" in API group \"\" at the cluster scope"
    );
}

#[tokio::test]
async fn a_token_bound_to_a_pod_should_stop_working_when_the_pod_goes() {
    let env = TestEnv::start().await.unwrap();
    service_account(&env, "default", "runner").await;
    let pods: Api<Pod> = Api::namespaced(env.client(), "default");
    let pod = pods
        .create(
            &PostParams::default(),
            &from_json(
                json!({"metadata": {"name": "job"}, "spec": {"serviceAccountName": "runner",
                "containers": [{"name": "c", "image": "busybox"}]}}),
            ),
        )
        .await
        .unwrap();
    let sas: Api<ServiceAccount> = Api::namespaced(env.client(), "default");
    let request: TokenRequest = from_json(json!({"spec": {"boundObjectRef": {
        "apiVersion": "v1", "kind": "Pod", "name": "job", "uid": pod.metadata.uid
    }}}));
    let issued = sas
        .create_subresource::<TokenRequest, TokenRequest>(
            "token",
            "runner",
            &PostParams::default(),
            &request,
        )
        .await
        .unwrap();
    let token = issued.status.unwrap().token.unwrap();
    let reviews: Api<TokenReview> = Api::all(env.client());
    let review = TokenReview {
        spec: TokenReviewSpec {
            token: token.clone(),
            audiences: None,
        },
        ..Default::default()
    };
    let status = reviews
        .create(&PostParams::default(), &review)
        .await
        .unwrap()
        .status
        .unwrap();
    assert_eq!(status.authenticated, Some(true));
    // Only a Pod running as the ServiceAccount can be bound.
    let wrong: TokenRequest = from_json(json!({"spec": {"boundObjectRef": {
        "apiVersion": "v1", "kind": "Pod", "name": "job"
    }}}));
    service_account(&env, "default", "other").await;
    let err = sas
        .create_subresource::<TokenRequest, TokenRequest>(
            "token",
            "other",
            &PostParams::default(),
            &wrong,
        )
        .await
        .unwrap_err();
    assert_eq!(
        api_error(err).message,
        "cannot bind token for serviceaccount \"other\" to pod running with serviceaccount \"runner\""
    );
    pods.delete("job", &DeleteParams::default()).await.unwrap();
    let status = reviews
        .create(&PostParams::default(), &review)
        .await
        .unwrap()
        .status
        .unwrap();
    assert_eq!(status.authenticated, Some(false));
}

#[tokio::test]
async fn approving_a_csr_should_need_the_approve_verb_on_its_signer() {
    use k8s_openapi::api::certificates::v1::CertificateSigningRequest;
    use kube::api::{Patch, PatchParams};
    let env = rbac_env().await;
    create(
        Api::<CertificateSigningRequest>::all(env.client()),
        json!({"metadata": {"name": "client"}, "spec": {
            "request": "LS0tLS1CRUdJTiBDRVJUSUZJQ0FURSBSRVFVRVNULS0tLS0K",
            "signerName": "example.com/clients", "usages": ["client auth"]}}),
    )
    .await;
    create(
        Api::<ClusterRole>::all(env.client()),
        json!({"metadata": {"name": "csr-approver"}, "rules": [
            {"apiGroups": ["certificates.k8s.io"], "resources": ["certificatesigningrequests/approval"], "verbs": ["patch"]}
        ]}),
    )
    .await;
    create(
        Api::<ClusterRoleBinding>::all(env.client()),
        json!({
            "metadata": {"name": "csr-approver"},
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "csr-approver"},
            "subjects": [{"kind": "User", "name": "approver"}]
        }),
    )
    .await;
    let approver = env.client_for_user(UserInfo::new("approver")).unwrap();
    let csrs: Api<CertificateSigningRequest> = Api::all(approver);
    let approve = Patch::Merge(json!({"status": {"conditions": [
        {"type": "Approved", "status": "True", "reason": "Test"}
    ]}}));
    let err = api_error(
        csrs.patch_subresource("approval", "client", &PatchParams::default(), &approve)
            .await
            .unwrap_err(),
    );
    assert_eq!(
        err.message,
        "certificatesigningrequests.certificates.k8s.io \"client\" is forbidden: user not permitted to approve requests with signerName \"example.com/clients\""
    );
    create(
        Api::<ClusterRole>::all(env.client()),
        json!({"metadata": {"name": "signer-approver"}, "rules": [
            {"apiGroups": ["certificates.k8s.io"], "resources": ["signers"], "verbs": ["approve"],
             "resourceNames": ["example.com/*"]}
        ]}),
    )
    .await;
    create(
        Api::<ClusterRoleBinding>::all(env.client()),
        json!({
            "metadata": {"name": "signer-approver"},
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "signer-approver"},
            "subjects": [{"kind": "User", "name": "approver"}]
        }),
    )
    .await;
    csrs.patch_subresource("approval", "client", &PatchParams::default(), &approve)
        .await
        .unwrap();
}

/// With kube-controller-manager's clusterrole-aggregation controller, an aggregated ClusterRole
/// holds the rules of the roles it selects, written by `clusterrole-aggregation-controller`, and
/// follows them when they change.
#[tokio::test]
async fn the_aggregation_controller_should_write_the_selected_rules_into_the_role() {
    let env = TestEnv::builder()
        .cluster_role_aggregation(true)
        .start()
        .await
        .unwrap();
    let api = Api::<ClusterRole>::all(env.client());
    create(
        api.clone(),
        json!({"metadata": {"name": "agg-view"},
        "aggregationRule": {"clusterRoleSelectors": [
            {"matchLabels": {"rbac.example.com/aggregate-to-view": "true"}}]}}),
    )
    .await;
    let pods = json!({"apiGroups": [""], "resources": ["pods"], "verbs": ["get", "list"]});
    let jobs = json!({"apiGroups": ["batch"], "resources": ["jobs"], "verbs": ["get"]});
    for (name, rules) in [
        ("agg-pods", json!([pods])),
        ("agg-jobs", json!([jobs, pods])),
    ] {
        create(
            api.clone(),
            json!({"metadata": {"name": name,
            "labels": {"rbac.example.com/aggregate-to-view": "true"}}, "rules": rules}),
        )
        .await;
    }
    // Selected roles by name: agg-jobs, then agg-pods; each rule once.
    let want = json!([jobs, pods]);
    let written = crate::common::eventually(|| {
        let api = api.clone();
        let want = want.clone();
        async move {
            let role = api.get("agg-view").await.unwrap();
            serde_json::to_value(&role.rules).unwrap() == want
        }
    })
    .await;
    assert!(written, "{:?}", api.get("agg-view").await.unwrap().rules);
    let role = api.get("agg-view").await.unwrap();
    let managers: Vec<String> = role
        .metadata
        .managed_fields
        .unwrap_or_default()
        .into_iter()
        .filter_map(|m| m.manager)
        .collect();
    assert!(
        managers.contains(&"clusterrole-aggregation-controller".to_owned()),
        "{managers:?}"
    );
    // A selected role that goes takes its rules with it.
    api.delete("agg-jobs", &DeleteParams::default())
        .await
        .unwrap();
    let followed = crate::common::eventually(|| {
        let api = api.clone();
        let pods = pods.clone();
        async move {
            let role = api.get("agg-view").await.unwrap();
            serde_json::to_value(&role.rules).unwrap() == json!([pods])
        }
    })
    .await;
    assert!(followed);
}
