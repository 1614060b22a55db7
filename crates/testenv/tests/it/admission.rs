//! The admission plugins beyond the recorded `admission` cases: LimitRanger, ResourceQuota
//! (with the quota controller), ServiceAccount, and switching plugins off.

use std::time::Duration;

use k8s_openapi::api::core::v1::{
    ConfigMap, LimitRange, Namespace, PersistentVolumeClaim, Pod, ResourceQuota, Secret,
    ServiceAccount,
};
use kube::api::{Api, PostParams};
use kube::Client;
use serde_json::json;

async fn realistic() -> kcr_testenv::TestEnv {
    kcr_testenv::TestEnv::builder()
        .realistic()
        .start()
        .await
        .expect("start")
}

/// Polls until `f` holds (controllers run in the background), for at most five seconds.
async fn eventually<F, Fut>(mut f: F) -> bool
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = bool>,
{
    for _ in 0..100 {
        if f().await {
            return true;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    false
}

fn from<T: serde::de::DeserializeOwned>(v: serde_json::Value) -> T {
    serde_json::from_value(v).expect("valid object")
}

/// A namespace with its `default` ServiceAccount (created by the ServiceAccounts controller).
async fn namespace(client: &Client, name: &str) {
    Api::<Namespace>::all(client.clone())
        .create(&PostParams::default(), &from(json!({"metadata": {"name": name}})))
        .await
        .expect("namespace");
    let accounts: Api<ServiceAccount> = Api::namespaced(client.clone(), name);
    assert!(eventually(|| async { accounts.get_opt("default").await.unwrap().is_some() }).await);
}

fn pod(name: &str, resources: serde_json::Value) -> Pod {
    from(json!({
        "metadata": {"name": name},
        "spec": {"automountServiceAccountToken": false, "containers": [
            {"name": "app", "image": "registry.k8s.io/pause:3.10", "resources": resources}
        ]}
    }))
}

fn forbidden(e: kube::Error) -> String {
    match e {
        kube::Error::Api(s) if s.code == 403 => s.message,
        other => panic!("expected 403, got {other:?}"),
    }
}

#[tokio::test]
async fn dbg_quota() {
    let env = realistic().await;
    let client = env.client();
    namespace(&client, "q").await;
    let quotas: Api<ResourceQuota> = Api::namespaced(client.clone(), "q");
    quotas
        .create(&PostParams::default(), &from(json!({"metadata": {"name": "q"}, "spec": {"hard": {"pods": "1", "services": "1"}}})))
        .await
        .unwrap();
    assert!(eventually(|| async { quotas.get("q").await.unwrap().status.and_then(|s| s.used).is_some() }).await);
    println!("{}", serde_json::to_string(&quotas.get("q").await.unwrap()).unwrap());
    let t = std::time::Instant::now();
    let r = crate::common::raw(env.addr(), "GET", "/api/v1/namespaces/q/configmaps?watch=1&timeoutSeconds=1&labelSelector=kcr-pause%3Dnone", &[], b"").await;
    println!("pause took {:?} {}", t.elapsed(), r.status);
    Api::<Pod>::namespaced(client.clone(), "q").create(&PostParams::default(), &pod("p1", json!({}))).await.unwrap();
    println!("{}", serde_json::to_string(&quotas.get("q").await.unwrap()).unwrap());
    let e = Api::<Pod>::namespaced(client.clone(), "q").create(&PostParams::default(), &pod("p2", json!({}))).await.unwrap_err();
    println!("{e}");
    Api::<k8s_openapi::api::core::v1::Service>::namespaced(client.clone(), "q").create(&PostParams::default(), &from(json!({"metadata": {"name": "s1"}, "spec": {"selector": {"app": "s1"}, "ports": [{"name": "http", "port": 80, "targetPort": 8080}]}}))).await.unwrap();
    println!("{}", serde_json::to_string(&quotas.get("q").await.unwrap()).unwrap());
    let _ = (ConfigMap::default(), LimitRange::default(), PersistentVolumeClaim::default(), Secret::default());
    let _ = forbidden;
}
