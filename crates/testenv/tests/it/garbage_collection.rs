//! The garbage collector (`TestEnvBuilder::garbage_collector`, in `realistic`) beyond the
//! recorded `gc` cases: other kinds, cluster-scoped owners, several owners, orphaning, and
//! foreground deletion waiting for a dependent's finalizer.

use crate::common::eventually;
use std::time::Duration;

use k8s_openapi::api::core::v1::{ConfigMap, Secret};
use k8s_openapi::api::rbac::v1::ClusterRole;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::OwnerReference;
use kube::api::{Api, DeleteParams, Patch, PatchParams, PostParams, PropagationPolicy};
use kube::{Client, Resource, ResourceExt};

async fn env() -> kcr_testenv::TestEnv {
    kcr_testenv::TestEnv::builder()
        .garbage_collector(true)
        .start()
        .await
        .expect("start")
}

fn owned_by<K: Resource<DynamicType = ()>>(owner: &K) -> OwnerReference {
    OwnerReference {
        api_version: K::api_version(&()).into_owned(),
        kind: K::kind(&()).into_owned(),
        name: owner.name_any(),
        uid: owner.uid().unwrap_or_default(),
        ..OwnerReference::default()
    }
}

async fn config_map(client: &Client, name: &str, owners: Vec<OwnerReference>) -> ConfigMap {
    let mut cm = ConfigMap::default();
    cm.metadata.name = Some(name.into());
    cm.metadata.owner_references = Some(owners).filter(|o| !o.is_empty());
    Api::<ConfigMap>::namespaced(client.clone(), "default")
        .create(&PostParams::default(), &cm)
        .await
        .expect("create")
}

#[tokio::test]
async fn a_secret_owned_by_a_deleted_config_map_should_be_collected() {
    let env = env().await;
    let client = env.client();
    let owner = config_map(&client, "owner", vec![]).await;
    let secrets: Api<Secret> = Api::namespaced(client.clone(), "default");
    let mut secret = Secret::default();
    secret.metadata.name = Some("dependent".into());
    secret.metadata.owner_references = Some(vec![owned_by(&owner)]);
    secrets
        .create(&PostParams::default(), &secret)
        .await
        .expect("create");
    Api::<ConfigMap>::namespaced(client.clone(), "default")
        .delete("owner", &DeleteParams::default())
        .await
        .expect("delete");
    assert!(eventually(|| async { secrets.get_opt("dependent").await.unwrap().is_none() }).await);
}

#[tokio::test]
async fn a_namespaced_object_may_be_owned_by_a_cluster_scoped_one() {
    let env = env().await;
    let client = env.client();
    let roles: Api<ClusterRole> = Api::all(client.clone());
    let mut role = ClusterRole::default();
    role.metadata.name = Some("gc-owner-role".into());
    let role = roles
        .create(&PostParams::default(), &role)
        .await
        .expect("create");
    config_map(&client, "by-role", vec![owned_by(&role)]).await;
    let cms: Api<ConfigMap> = Api::namespaced(client.clone(), "default");
    // The owner exists: nothing happens.
    tokio::time::sleep(Duration::from_millis(200)).await;
    assert!(cms.get_opt("by-role").await.unwrap().is_some());
    roles
        .delete("gc-owner-role", &DeleteParams::default())
        .await
        .expect("delete");
    assert!(eventually(|| async { cms.get_opt("by-role").await.unwrap().is_none() }).await);
}

#[tokio::test]
async fn a_dependent_with_another_owner_should_lose_only_the_reference_to_the_gone_one() {
    let env = env().await;
    let client = env.client();
    let first = config_map(&client, "first", vec![]).await;
    let second = config_map(&client, "second", vec![]).await;
    config_map(&client, "shared", vec![owned_by(&first), owned_by(&second)]).await;
    let cms: Api<ConfigMap> = Api::namespaced(client.clone(), "default");
    cms.delete("first", &DeleteParams::default())
        .await
        .expect("delete");
    assert!(
        eventually(|| async {
            cms.get_opt("shared").await.unwrap().is_some_and(|c| {
                c.owner_references().len() == 1 && c.owner_references()[0].name == "second"
            })
        })
        .await
    );
}

#[tokio::test]
async fn orphaned_dependents_should_stay_without_the_reference() {
    let env = env().await;
    let client = env.client();
    let owner = config_map(&client, "parent", vec![]).await;
    config_map(&client, "child", vec![owned_by(&owner)]).await;
    let cms: Api<ConfigMap> = Api::namespaced(client.clone(), "default");
    let orphan = DeleteParams {
        propagation_policy: Some(PropagationPolicy::Orphan),
        ..DeleteParams::default()
    };
    cms.delete("parent", &orphan).await.expect("delete");
    assert!(eventually(|| async { cms.get_opt("parent").await.unwrap().is_none() }).await);
    let child = cms.get("child").await.expect("the child stays");
    assert!(child.owner_references().is_empty());
}

#[tokio::test]
async fn a_foreground_owner_should_wait_for_its_dependents_finalizers() {
    let env = env().await;
    let client = env.client();
    let owner = config_map(&client, "fg-owner", vec![]).await;
    let cms: Api<ConfigMap> = Api::namespaced(client.clone(), "default");
    let mut child = ConfigMap::default();
    child.metadata.name = Some("fg-child".into());
    child.metadata.owner_references = Some(vec![owned_by(&owner)]);
    child.metadata.finalizers = Some(vec!["example.com/hold".into()]);
    cms.create(&PostParams::default(), &child)
        .await
        .expect("create");
    let foreground = DeleteParams {
        propagation_policy: Some(PropagationPolicy::Foreground),
        ..DeleteParams::default()
    };
    cms.delete("fg-owner", &foreground).await.expect("delete");
    // The child is being deleted, held by its finalizer; the owner waits for it.
    assert!(
        eventually(|| async {
            cms.get("fg-child")
                .await
                .is_ok_and(|c| c.metadata.deletion_timestamp.is_some())
        })
        .await
    );
    let held = cms.get("fg-owner").await.expect("the owner waits");
    assert!(held.finalizers().contains(&"foregroundDeletion".to_owned()));
    cms.patch(
        "fg-child",
        &PatchParams::default(),
        &Patch::Merge(serde_json::json!({"metadata": {"finalizers": null}})),
    )
    .await
    .expect("release");
    assert!(eventually(|| async { cms.get_opt("fg-owner").await.unwrap().is_none() }).await);
}
