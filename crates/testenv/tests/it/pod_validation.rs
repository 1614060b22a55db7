//! Pod spec and Service policies through `kube::Client`: values kube-apiserver does not know
//! are `422 Invalid` with an `Unsupported value` cause naming the supported ones.

use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::core::v1::{Pod, Service};
use kcr_testenv::TestEnv;
use kube::api::{Api, PostParams};
use serde_json::json;

fn causes(err: kube::Error) -> Vec<(String, String)> {
    match err {
        kube::Error::Api(s) => {
            assert_eq!(s.code, 422, "{}", s.message);
            s.details
                .map(|d| d.causes)
                .unwrap_or_default()
                .into_iter()
                .map(|c| (c.field, c.message))
                .collect()
        }
        other => panic!("expected an API error, got {other:?}"),
    }
}

#[tokio::test]
async fn a_pod_with_an_unknown_pull_policy_should_be_refused() {
    let env = TestEnv::start().await.unwrap();
    let api: Api<Pod> = Api::namespaced(env.client(), "default");
    let pod: Pod = serde_json::from_value(json!({
        "metadata": {"name": "p1"},
        "spec": {"containers": [{"name": "app", "image": "nginx:1.27", "imagePullPolicy": "Sometimes"}]}
    }))
    .unwrap();
    let err = api.create(&PostParams::default(), &pod).await.unwrap_err();
    assert_eq!(
        causes(err),
        [(
            "spec.containers[0].imagePullPolicy".to_owned(),
            "Unsupported value: \"Sometimes\": supported values: \"Always\", \"IfNotPresent\", \"Never\"".to_owned()
        )]
    );
}

#[tokio::test]
async fn a_deployment_template_should_always_restart() {
    let env = TestEnv::start().await.unwrap();
    let api: Api<Deployment> = Api::namespaced(env.client(), "default");
    let d: Deployment = serde_json::from_value(json!({
        "metadata": {"name": "web"},
        "spec": {
            "selector": {"matchLabels": {"app": "web"}},
            "template": {"metadata": {"labels": {"app": "web"}},
                "spec": {"restartPolicy": "OnFailure", "containers": [{"name": "a", "image": "nginx:1.27"}]}}
        }
    }))
    .unwrap();
    let err = api.create(&PostParams::default(), &d).await.unwrap_err();
    assert_eq!(
        causes(err),
        [(
            "spec.template.spec.restartPolicy".to_owned(),
            "Unsupported value: \"OnFailure\": supported values: \"Always\"".to_owned()
        )]
    );
}

#[tokio::test]
async fn a_service_port_with_an_unknown_protocol_should_be_refused() {
    let env = TestEnv::start().await.unwrap();
    let api: Api<Service> = Api::namespaced(env.client(), "default");
    let svc: Service = serde_json::from_value(json!({
        "metadata": {"name": "web"},
        "spec": {"ports": [{"port": 80, "protocol": "HTTP"}]}
    }))
    .unwrap();
    let err = api.create(&PostParams::default(), &svc).await.unwrap_err();
    assert_eq!(
        causes(err),
        [(
            "spec.ports[0].protocol".to_owned(),
            "Unsupported value: \"HTTP\": supported values: \"SCTP\", \"TCP\", \"UDP\"".to_owned()
        )]
    );
}

#[tokio::test]
async fn a_deployment_switched_to_recreate_by_a_merge_patch_should_keep_no_rolling_update() {
    use kube::api::{Patch, PatchParams};
    let env = TestEnv::start().await.unwrap();
    let api: Api<Deployment> = Api::namespaced(env.client(), "default");
    let d: Deployment = serde_json::from_value(json!({
        "metadata": {"name": "web"},
        "spec": {
            "selector": {"matchLabels": {"app": "web"}},
            "template": {"metadata": {"labels": {"app": "web"}},
                "spec": {"containers": [{"name": "a", "image": "nginx:1.27"}]}}
        }
    }))
    .unwrap();
    api.create(&PostParams::default(), &d).await.unwrap();
    // The defaulted rollingUpdate stays in a merge patch that only changes the type...
    let err = api
        .patch(
            "web",
            &PatchParams::default(),
            &Patch::Merge(json!({"spec": {"strategy": {"type": "Recreate"}}})),
        )
        .await
        .unwrap_err();
    assert_eq!(
        causes(err),
        [(
            "spec.strategy.rollingUpdate".to_owned(),
            "Forbidden: may not be specified when strategy `type` is 'Recreate'".to_owned()
        )]
    );
    // ...and goes when the patch removes it.
    let patched = api
        .patch(
            "web",
            &PatchParams::default(),
            &Patch::Merge(
                json!({"spec": {"strategy": {"type": "Recreate", "rollingUpdate": null}}}),
            ),
        )
        .await
        .unwrap();
    assert!(patched.spec.strategy.unwrap().rolling_update.is_none());
}
