//! The `authentication.k8s.io/v1` `tokenreviews` and `authorization.k8s.io/v1`
//! `subjectaccessreviews` APIs, driven with `kube::Client`: known tokens, allow rules, denials,
//! validation, a policy changed while serving, and discovery.

use k8s_openapi::api::authentication::v1::{TokenReview, TokenReviewSpec};
use k8s_openapi::api::authorization::v1::{
    NonResourceAttributes, ResourceAttributes, SubjectAccessReview, SubjectAccessReviewSpec,
};
use kcr_testenv::{AccessRule, TestEnv, UserInfo};
use kube::api::{Api, ListParams, PostParams};

fn token_review(token: &str) -> TokenReview {
    TokenReview {
        spec: TokenReviewSpec {
            token: token.into(),
            audiences: Some(vec!["kcr".into()]),
        },
        ..Default::default()
    }
}

fn non_resource_review(user: &str, groups: &[&str], verb: &str, path: &str) -> SubjectAccessReview {
    SubjectAccessReview {
        spec: SubjectAccessReviewSpec {
            user: Some(user.into()),
            groups: Some(groups.iter().map(|g| (*g).to_owned()).collect()),
            non_resource_attributes: Some(NonResourceAttributes {
                path: Some(path.into()),
                verb: Some(verb.into()),
            }),
            ..Default::default()
        },
        ..Default::default()
    }
}

fn resource_review(
    user: &str,
    verb: &str,
    ns: &str,
    group: &str,
    resource: &str,
) -> SubjectAccessReview {
    SubjectAccessReview {
        spec: SubjectAccessReviewSpec {
            user: Some(user.into()),
            resource_attributes: Some(ResourceAttributes {
                namespace: Some(ns.into()),
                verb: Some(verb.into()),
                group: Some(group.into()),
                resource: Some(resource.into()),
                ..Default::default()
            }),
            ..Default::default()
        },
        ..Default::default()
    }
}

async fn allowed(api: &Api<SubjectAccessReview>, review: &SubjectAccessReview) -> bool {
    let answer = api.create(&PostParams::default(), review).await.unwrap();
    answer.status.expect("a status").allowed
}

#[tokio::test]
async fn a_token_review_should_authenticate_known_tokens_only() {
    let env = TestEnv::builder()
        .token("admin")
        .user_token(
            "alice-token",
            UserInfo::new("alice")
                .uid("u-1")
                .groups(["monitoring", "system:authenticated"]),
        )
        .start()
        .await
        .unwrap();
    let api: Api<TokenReview> = Api::all(env.client());

    let known = api
        .create(&PostParams::default(), &token_review("alice-token"))
        .await
        .unwrap();
    let status = known.status.unwrap();
    assert_eq!(status.authenticated, Some(true));
    let user = status.user.unwrap();
    assert_eq!(user.username.as_deref(), Some("alice"));
    assert_eq!(user.uid.as_deref(), Some("u-1"));
    assert_eq!(user.groups.unwrap(), ["monitoring", "system:authenticated"]);
    assert_eq!(status.audiences.unwrap(), ["kcr"]);

    let unknown = api
        .create(&PostParams::default(), &token_review("mallory"))
        .await
        .unwrap();
    let status = unknown.status.unwrap();
    assert_eq!(status.authenticated, Some(false));
    assert!(status.user.and_then(|u| u.username).is_none());
    // The server's own token is not a TokenReview user.
    let own = api
        .create(&PostParams::default(), &token_review("admin"))
        .await
        .unwrap();
    assert_eq!(own.status.unwrap().authenticated, Some(false));
}

#[tokio::test]
async fn a_token_review_without_a_token_should_be_a_bad_request() {
    let env = TestEnv::start().await.unwrap();
    let api: Api<TokenReview> = Api::all(env.client());
    let err = api
        .create(&PostParams::default(), &TokenReview::default())
        .await
        .unwrap_err();
    assert!(
        matches!(&err, kube::Error::Api(s) if s.code == 400),
        "{err:?}"
    );
}

#[tokio::test]
async fn a_subject_access_review_should_allow_only_what_a_rule_allows() {
    let env = TestEnv::builder()
        .allow(
            AccessRule::user("alice")
                .verbs(["get"])
                .non_resource_urls(["/metrics"]),
        )
        .allow(
            AccessRule::group("readers")
                .verbs(["get", "list"])
                .resources("apps", ["deployments"])
                .namespaces(["default"]),
        )
        .start()
        .await
        .unwrap();
    let api: Api<SubjectAccessReview> = Api::all(env.client());

    assert!(allowed(&api, &non_resource_review("alice", &[], "get", "/metrics")).await);
    assert!(!allowed(&api, &non_resource_review("bob", &[], "get", "/metrics")).await);
    assert!(!allowed(&api, &non_resource_review("alice", &[], "post", "/metrics")).await);
    assert!(!allowed(&api, &non_resource_review("alice", &[], "get", "/healthz")).await);

    let mut by_group = resource_review("carol", "list", "default", "apps", "deployments");
    assert!(!allowed(&api, &by_group).await, "carol is in no group yet");
    by_group.spec.groups = Some(vec!["readers".into()]);
    assert!(allowed(&api, &by_group).await);
    let mut other_ns = by_group.clone();
    other_ns
        .spec
        .resource_attributes
        .as_mut()
        .unwrap()
        .namespace = Some("kube-system".into());
    assert!(!allowed(&api, &other_ns).await);
    let mut delete = by_group.clone();
    delete.spec.resource_attributes.as_mut().unwrap().verb = Some("delete".into());
    assert!(!allowed(&api, &delete).await);

    let denied = api
        .create(
            &PostParams::default(),
            &non_resource_review("bob", &[], "get", "/metrics"),
        )
        .await
        .unwrap();
    let status = denied.status.unwrap();
    assert!(!status.allowed);
    // kube-apiserver's RBAC authorizer gives no reason for a plain denial.
    assert_eq!(status.reason, None);
}

#[tokio::test]
async fn the_review_policy_should_be_changeable_while_serving() {
    let env = TestEnv::start().await.unwrap();
    let tokens: Api<TokenReview> = Api::all(env.client());
    let sars: Api<SubjectAccessReview> = Api::all(env.client());
    let review = non_resource_review("dave", &[], "get", "/metrics");
    assert!(!allowed(&sars, &review).await);
    let authenticated = |r: TokenReview| r.status.unwrap().authenticated;
    assert_eq!(
        authenticated(
            tokens
                .create(&PostParams::default(), &token_review("t"))
                .await
                .unwrap()
        ),
        Some(false)
    );

    env.reviews().add_token("t", UserInfo::new("dave"));
    env.reviews().allow(
        AccessRule::user("dave")
            .verbs(["*"])
            .non_resource_urls(["/met*"]),
    );
    assert_eq!(
        authenticated(
            tokens
                .create(&PostParams::default(), &token_review("t"))
                .await
                .unwrap()
        ),
        Some(true)
    );
    assert!(allowed(&sars, &review).await);

    env.reviews().remove_token("t");
    env.reviews().clear_rules();
    assert_eq!(
        authenticated(
            tokens
                .create(&PostParams::default(), &token_review("t"))
                .await
                .unwrap()
        ),
        Some(false)
    );
    assert!(!allowed(&sars, &review).await);
}

#[tokio::test]
async fn an_invalid_subject_access_review_should_get_422() {
    let env = TestEnv::start().await.unwrap();
    let api: Api<SubjectAccessReview> = Api::all(env.client());
    let mut nobody = non_resource_review("", &[], "get", "/metrics");
    nobody.spec.user = None;
    nobody.spec.groups = None;
    let err = api
        .create(&PostParams::default(), &nobody)
        .await
        .unwrap_err();
    assert!(
        matches!(&err, kube::Error::Api(s) if s.code == 422 && s.reason == "Invalid"),
        "{err:?}"
    );

    let mut both = resource_review("alice", "get", "default", "", "pods");
    both.spec.non_resource_attributes = Some(NonResourceAttributes {
        path: Some("/metrics".into()),
        verb: Some("get".into()),
    });
    let err = api.create(&PostParams::default(), &both).await.unwrap_err();
    assert!(
        matches!(&err, kube::Error::Api(s) if s.code == 422),
        "{err:?}"
    );
}

#[tokio::test]
async fn reviews_should_be_create_only_and_in_discovery() {
    let env = TestEnv::start().await.unwrap();
    let client = env.client();
    let err = Api::<TokenReview>::all(client.clone())
        .list(&ListParams::default())
        .await
        .unwrap_err();
    assert!(
        matches!(&err, kube::Error::Api(s) if s.code == 405),
        "{err:?}"
    );

    for (gv, plural, kind) in [
        ("authentication.k8s.io/v1", "tokenreviews", "TokenReview"),
        (
            "authorization.k8s.io/v1",
            "subjectaccessreviews",
            "SubjectAccessReview",
        ),
    ] {
        let list = client.list_api_group_resources(gv).await.unwrap();
        let r = list
            .resources
            .iter()
            .find(|r| r.name == plural)
            .expect(plural);
        assert_eq!(r.kind, kind);
        assert!(!r.namespaced);
        assert_eq!(r.verbs, ["create"]);
    }
    let groups = client.list_api_groups().await.unwrap();
    for g in ["authentication.k8s.io", "authorization.k8s.io"] {
        assert!(
            groups.groups.iter().any(|x| x.name == g),
            "{g} missing from /apis"
        );
    }
    // Nothing is stored: a created review cannot be read back.
    let api: Api<TokenReview> = Api::all(client);
    let err = api.get("anything").await.unwrap_err();
    assert!(
        matches!(&err, kube::Error::Api(s) if s.code == 404),
        "{err:?}"
    );
}

#[tokio::test]
async fn injected_failures_should_reach_review_clients() {
    let env = TestEnv::builder()
        .user_token("t", UserInfo::new("alice"))
        .start()
        .await
        .unwrap();
    env.faults().fail_next(
        1,
        kcr_testenv::Failure::internal_error().resource("tokenreviews"),
    );
    let api: Api<TokenReview> = Api::all(env.client());
    let err = api
        .create(&PostParams::default(), &token_review("t"))
        .await
        .unwrap_err();
    assert!(
        matches!(&err, kube::Error::Api(s) if s.code == 500),
        "{err:?}"
    );
    let answer = api
        .create(&PostParams::default(), &token_review("t"))
        .await
        .unwrap();
    assert_eq!(answer.status.unwrap().authenticated, Some(true));
}
