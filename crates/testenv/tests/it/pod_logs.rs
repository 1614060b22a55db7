//! `pods/log` through `kube::Client`: kube-apiserver's `PodLogOptions` rules (decoding,
//! validation, the choice of container) and the kubelet's part (previous instance, tail,
//! since, timestamps, byte limit, follow).

use std::time::{Duration, SystemTime};

use futures::{AsyncBufReadExt, StreamExt};
use k8s_openapi::api::core::v1::Pod;
use k8s_openapi::jiff::Timestamp;
use kcr_testenv::TestEnv;
use kube::api::{Api, DeleteParams, LogParams, PostParams};
use kube::core::Status;
use serde_json::json;

fn api_error(e: kube::Error) -> Status {
    match e {
        kube::Error::Api(s) => *s,
        other => panic!("expected an API error, got {other:?}"),
    }
}

/// A Pod bound to a node (the log of one without a node is `204 No Content`).
fn pod(name: &str) -> Pod {
    serde_json::from_value(json!({
        "metadata": {"name": name},
        "spec": {"nodeName": "node-1", "containers": [{"name": "app", "image": "nginx"}]}
    }))
    .unwrap()
}

async fn env_with_pod(name: &str) -> (TestEnv, Api<Pod>) {
    let env = TestEnv::start().await.unwrap();
    let pods: Api<Pod> = Api::namespaced(env.client(), "default");
    pods.create(&PostParams::default(), &pod(name))
        .await
        .unwrap();
    (env, pods)
}

/// `GET .../pods/<pod>/log?<query>` as raw text, for options `LogParams` cannot send.
async fn raw_log(env: &TestEnv, pod: &str, query: &str) -> Result<String, kube::Error> {
    let req = http::Request::get(format!("/api/v1/namespaces/default/pods/{pod}/log?{query}"))
        .body(Vec::new())
        .unwrap();
    env.client().request_text(req).await
}

#[tokio::test]
async fn without_a_container_name_a_pod_with_several_should_list_them_all() {
    let env = TestEnv::start().await.unwrap();
    let pods: Api<Pod> = Api::namespaced(env.client(), "default");
    let p: Pod = serde_json::from_value(json!({
        "metadata": {"name": "multi"},
        "spec": {
            "nodeName": "node-1",
            "initContainers": [{"name": "setup", "image": "busybox"}],
            "containers": [{"name": "app", "image": "nginx"}, {"name": "proxy", "image": "envoy"}]
        }
    }))
    .unwrap();
    pods.create(&PostParams::default(), &p).await.unwrap();
    let err = api_error(pods.logs("multi", &LogParams::default()).await.unwrap_err());
    assert_eq!(
        (err.code, err.reason.as_str(), err.message.as_str()),
        (
            400,
            "BadRequest",
            "a container name must be specified for pod multi, choose one of: [setup app proxy]"
        )
    );
    // An init container may be named.
    env.set_pod_log("default", "multi", "setup", "prepared\n");
    let setup = LogParams {
        container: Some("setup".into()),
        ..LogParams::default()
    };
    assert_eq!(pods.logs("multi", &setup).await.unwrap(), "prepared\n");
    let unknown = LogParams {
        container: Some("nope".into()),
        ..LogParams::default()
    };
    let err = api_error(pods.logs("multi", &unknown).await.unwrap_err());
    assert_eq!(
        (err.code, err.message.as_str()),
        (400, "container nope is not valid for pod multi")
    );
}

#[tokio::test]
async fn negative_options_should_be_invalid_with_kube_apiserver_causes() {
    let (env, pods) = env_with_pod("p").await;
    let tail = LogParams {
        tail_lines: Some(-1),
        ..LogParams::default()
    };
    let err = api_error(pods.logs("p", &tail).await.unwrap_err());
    assert_eq!(err.code, 422);
    assert_eq!(err.reason, "Invalid");
    assert_eq!(
        err.message,
        "PodLogOptions \"p\" is invalid: tailLines: Invalid value: -1: must be greater than or equal to 0"
    );
    let details = err.details.unwrap();
    assert_eq!(details.kind, "PodLogOptions");
    assert_eq!(details.name, "p");
    assert_eq!(details.causes[0].field, "tailLines");
    assert_eq!(details.causes[0].reason, "FieldValueInvalid");
    // Several at once, in kube-apiserver's order.
    let err = api_error(
        raw_log(&env, "p", "limitBytes=0&sinceSeconds=0&tailLines=-2")
            .await
            .unwrap_err(),
    );
    assert_eq!(
        err.message,
        "PodLogOptions \"p\" is invalid: [tailLines: Invalid value: -2: must be greater than or equal to 0, \
         limitBytes: Invalid value: 0: must be greater than 0, \
         sinceSeconds: Invalid value: 0: must be greater than 0]"
    );
    // Validation comes before the Pod is looked up.
    let err = api_error(pods.logs("absent", &tail).await.unwrap_err());
    assert_eq!(err.code, 422);
}

#[tokio::test]
async fn since_seconds_and_since_time_should_exclude_each_other() {
    let (env, _pods) = env_with_pod("p").await;
    let err = api_error(
        raw_log(&env, "p", "sinceSeconds=10&sinceTime=2026-01-01T00:00:00Z")
            .await
            .unwrap_err(),
    );
    assert_eq!(err.code, 422);
    assert_eq!(
        err.message,
        "PodLogOptions \"p\" is invalid: : Forbidden: at most one of `sinceTime` or `sinceSeconds` may be specified"
    );
    let cause = &err.details.unwrap().causes[0];
    assert_eq!(cause.reason, "FieldValueForbidden");
    assert_eq!(cause.field, "", "the whole object: no field");
}

#[tokio::test]
async fn a_number_that_does_not_parse_should_be_a_bad_request() {
    let (env, _pods) = env_with_pod("p").await;
    let err = api_error(raw_log(&env, "p", "tailLines=ten").await.unwrap_err());
    assert_eq!(
        (err.code, err.message.as_str()),
        (400, "strconv.ParseInt: parsing \"ten\": invalid syntax")
    );
}

#[tokio::test]
async fn timestamps_should_prefix_each_line_with_its_time() {
    let (env, pods) = env_with_pod("p").await;
    let t1 = SystemTime::UNIX_EPOCH + Duration::from_secs(1_800_000_000);
    let t2 = t1 + Duration::from_millis(250);
    env.append_pod_log_at("default", "p", "app", t1, "first\n");
    env.append_pod_log_at("default", "p", "app", t2, "second\n");
    let stamped = LogParams {
        timestamps: true,
        ..LogParams::default()
    };
    assert_eq!(
        pods.logs("p", &stamped).await.unwrap(),
        "2027-01-15T08:00:00Z first\n2027-01-15T08:00:00.25Z second\n"
    );
    // The byte limit counts the timestamps too.
    let limited = LogParams {
        timestamps: true,
        limit_bytes: Some(26),
        ..LogParams::default()
    };
    assert_eq!(
        pods.logs("p", &limited).await.unwrap(),
        "2027-01-15T08:00:00Z first"
    );
}

#[tokio::test]
async fn since_options_should_drop_older_lines_after_the_tail_is_taken() {
    let (env, pods) = env_with_pod("p").await;
    let now = SystemTime::now();
    let hour_ago = now - Duration::from_secs(3600);
    env.append_pod_log_at("default", "p", "app", hour_ago, "old 1\nold 2\n");
    env.append_pod_log_at("default", "p", "app", now, "new 1\nnew 2\n");
    let recent = LogParams {
        since_seconds: Some(60),
        ..LogParams::default()
    };
    assert_eq!(pods.logs("p", &recent).await.unwrap(), "new 1\nnew 2\n");
    let since = Timestamp::try_from(now - Duration::from_secs(1800)).unwrap();
    let by_time = LogParams {
        since_time: Some(since),
        ..LogParams::default()
    };
    assert_eq!(pods.logs("p", &by_time).await.unwrap(), "new 1\nnew 2\n");
    // The kubelet takes the last lines first, then drops the old ones among them.
    let tail_then_since = LogParams {
        tail_lines: Some(3),
        since_seconds: Some(60),
        ..LogParams::default()
    };
    assert_eq!(
        pods.logs("p", &tail_then_since).await.unwrap(),
        "new 1\nnew 2\n"
    );
    let tail = LogParams {
        tail_lines: Some(3),
        ..LogParams::default()
    };
    assert_eq!(
        pods.logs("p", &tail).await.unwrap(),
        "old 2\nnew 1\nnew 2\n"
    );
}

#[tokio::test]
async fn previous_should_read_the_terminated_instance_or_say_there_is_none() {
    let (env, pods) = env_with_pod("p").await;
    env.set_pod_log("default", "p", "app", "running\n");
    let previous = LogParams {
        previous: true,
        ..LogParams::default()
    };
    let err = api_error(pods.logs("p", &previous).await.unwrap_err());
    assert_eq!(
        (err.code, err.reason.as_str(), err.message.as_str()),
        (
            400,
            "BadRequest",
            "previous terminated container \"app\" in pod \"p\" not found"
        )
    );
    env.set_previous_pod_log("default", "p", "app", "crashed\n");
    assert_eq!(pods.logs("p", &previous).await.unwrap(), "crashed\n");
    assert_eq!(
        pods.logs("p", &LogParams::default()).await.unwrap(),
        "running\n"
    );
}

#[tokio::test]
async fn follow_should_stream_appended_lines_until_the_pod_is_deleted() {
    let (env, pods) = env_with_pod("p").await;
    env.set_pod_log("default", "p", "app", "one\n");
    let follow = LogParams {
        follow: true,
        ..LogParams::default()
    };
    let mut lines = pods.log_stream("p", &follow).await.unwrap().lines();
    assert_eq!(lines.next().await.unwrap().unwrap(), "one");
    env.append_pod_log("default", "p", "app", "two\nthree\n");
    assert_eq!(lines.next().await.unwrap().unwrap(), "two");
    assert_eq!(lines.next().await.unwrap().unwrap(), "three");
    pods.delete("p", &DeleteParams::default()).await.unwrap();
    assert!(lines.next().await.is_none(), "the stream ends with the Pod");
}

#[tokio::test]
async fn follow_should_stop_at_the_byte_limit() {
    let (env, pods) = env_with_pod("p").await;
    env.set_pod_log("default", "p", "app", "abc\n");
    let follow = LogParams {
        follow: true,
        limit_bytes: Some(6),
        ..LogParams::default()
    };
    let mut stream = pods.log_stream("p", &follow).await.unwrap();
    env.append_pod_log("default", "p", "app", "defg\n");
    let mut all = String::new();
    futures::AsyncReadExt::read_to_string(&mut stream, &mut all)
        .await
        .unwrap();
    assert_eq!(all, "abc\nde");
}

#[tokio::test]
async fn the_log_of_a_pod_without_a_node_should_be_no_content_at_once() {
    let env = TestEnv::start().await.unwrap();
    let pods: Api<Pod> = Api::namespaced(env.client(), "default");
    let unbound: Pod = serde_json::from_value(json!({
        "metadata": {"name": "pending"},
        "spec": {"containers": [{"name": "app", "image": "nginx"}]}
    }))
    .unwrap();
    pods.create(&PostParams::default(), &unbound).await.unwrap();
    // Even what a test set is not served: there is no kubelet to ask.
    env.set_pod_log("default", "pending", "app", "ignored\n");
    for query in ["", "follow=true", "follow=true&timestamps=true"] {
        let req = http::Request::get(format!(
            "/api/v1/namespaces/default/pods/pending/log?{query}"
        ))
        .body(Vec::new())
        .unwrap();
        // A follow that waited would never end: the answer comes at once.
        let resp = tokio::time::timeout(
            Duration::from_secs(10),
            env.client().send(req.map(Into::into)),
        )
        .await
        .expect("the answer comes at once")
        .unwrap();
        assert_eq!(resp.status(), http::StatusCode::NO_CONTENT, "{query}");
    }
    // The options, the Pod and the container are checked first.
    let err = api_error(
        raw_log(&env, "pending", "container=nope")
            .await
            .unwrap_err(),
    );
    assert_eq!(
        (err.code, err.message.as_str()),
        (400, "container nope is not valid for pod pending")
    );
    let err = api_error(raw_log(&env, "pending", "tailLines=-1").await.unwrap_err());
    assert_eq!(err.code, 422);
    assert_eq!(
        api_error(raw_log(&env, "missing", "").await.unwrap_err()).code,
        404
    );
}
