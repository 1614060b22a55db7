//! What a new kcr-testenv holds before any client writes, as a new kube-apiserver v1.36 does:
//! the system namespaces, the `default/kubernetes` Service with its EndpointSlice, the RBAC
//! bootstrap policy and the default PriorityClasses.

use k8s_openapi::api::core::v1::{Endpoints, Namespace, Service};
use k8s_openapi::api::discovery::v1::EndpointSlice;
use k8s_openapi::api::rbac::v1::{ClusterRole, ClusterRoleBinding};
use k8s_openapi::api::scheduling::v1::PriorityClass;
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;
use kcr_testenv::TestEnv;
use kube::api::{Api, ListParams};

#[tokio::test]
async fn a_new_server_should_hold_the_system_namespaces() {
    let env = TestEnv::start().await.unwrap();
    let namespaces: Api<Namespace> = Api::all(env.client());
    for name in ["default", "kube-system", "kube-public", "kube-node-lease"] {
        let ns = namespaces.get(name).await.unwrap();
        assert_eq!(ns.status.unwrap().phase.as_deref(), Some("Active"));
    }
}

#[tokio::test]
async fn the_kubernetes_service_should_point_at_the_server() {
    let env = TestEnv::start().await.unwrap();
    let port = i32::from(env.addr().port());
    let services: Api<Service> = Api::namespaced(env.client(), "default");
    let svc = services.get("kubernetes").await.unwrap();
    let labels = svc.metadata.labels.clone().unwrap();
    assert_eq!(labels["component"], "apiserver");
    assert_eq!(labels["provider"], "kubernetes");
    let spec = svc.spec.unwrap();
    assert_eq!(spec.type_.as_deref(), Some("ClusterIP"));
    assert!(spec.cluster_ip.is_some());
    let ports = spec.ports.unwrap();
    assert_eq!(ports[0].name.as_deref(), Some("https"));
    assert_eq!(ports[0].port, 443);
    assert_eq!(ports[0].target_port, Some(IntOrString::Int(port)));
    assert_eq!(
        svc.metadata.managed_fields.unwrap()[0].manager.as_deref(),
        Some("kube-apiserver")
    );

    let slices: Api<EndpointSlice> = Api::namespaced(env.client(), "default");
    let listed = slices
        .list(&ListParams::default().labels("kubernetes.io/service-name=kubernetes"))
        .await
        .unwrap();
    assert_eq!(listed.items.len(), 1);
    let slice = &listed.items[0];
    assert_eq!(slice.address_type, "IPv4");
    assert_eq!(
        slice.endpoints.as_ref().unwrap()[0].addresses,
        [env.addr().ip().to_string()]
    );
    assert_eq!(slice.ports.as_ref().unwrap()[0].port, Some(port));

    let endpoints: Api<Endpoints> = Api::namespaced(env.client(), "default");
    let ep = endpoints.get("kubernetes").await.unwrap();
    let subset = &ep.subsets.unwrap()[0];
    assert_eq!(subset.ports.as_ref().unwrap()[0].port, port);
}

#[tokio::test]
async fn the_rbac_bootstrap_policy_should_exist() {
    let env = TestEnv::start().await.unwrap();
    let roles: Api<ClusterRole> = Api::all(env.client());
    for name in [
        "cluster-admin",
        "admin",
        "edit",
        "view",
        "system:basic-user",
        "system:discovery",
        "system:public-info-viewer",
        "system:kube-controller-manager",
        "system:kube-scheduler",
        "system:node",
        "system:node-proxier",
        "system:auth-delegator",
        "system:controller:deployment-controller",
        "system:controller:namespace-controller",
    ] {
        let role = roles.get(name).await.unwrap();
        let labels = role.metadata.labels.unwrap();
        assert_eq!(
            labels["kubernetes.io/bootstrapping"], "rbac-defaults",
            "{name}"
        );
    }
    let cluster_admin = roles.get("cluster-admin").await.unwrap();
    let rule = &cluster_admin.rules.unwrap()[0];
    assert_eq!(rule.verbs, ["*"]);
    assert_eq!(rule.resources.as_deref(), Some(&["*".to_owned()][..]));
    // The aggregated roles carry the rules of the roles they select.
    let view = roles.get("view").await.unwrap();
    assert!(view.aggregation_rule.is_some());
    let view_rules = view.rules.unwrap();
    assert!(view_rules.iter().any(|r| {
        r.api_groups.as_deref() == Some(&["apps".to_owned()][..])
            && r.resources
                .as_ref()
                .unwrap()
                .contains(&"deployments".to_owned())
            && r.verbs == ["get", "list", "watch"]
    }));
    let edit_rules = roles.get("edit").await.unwrap().rules.unwrap();
    assert!(view_rules.iter().all(|r| edit_rules.contains(r)));

    let bindings: Api<ClusterRoleBinding> = Api::all(env.client());
    let masters = bindings.get("cluster-admin").await.unwrap();
    assert_eq!(masters.role_ref.name, "cluster-admin");
    let subject = &masters.subjects.unwrap()[0];
    assert_eq!(
        (subject.kind.as_str(), subject.name.as_str()),
        ("Group", "system:masters")
    );
    let deployments = bindings
        .get("system:controller:deployment-controller")
        .await
        .unwrap();
    let subject = &deployments.subjects.unwrap()[0];
    assert_eq!(
        (
            subject.kind.as_str(),
            subject.namespace.as_deref(),
            subject.name.as_str()
        ),
        (
            "ServiceAccount",
            Some("kube-system"),
            "deployment-controller"
        )
    );
    bindings.get("system:kube-scheduler").await.unwrap();
    let system_roles: Api<k8s_openapi::api::rbac::v1::Role> =
        Api::namespaced(env.client(), "kube-system");
    system_roles
        .get("extension-apiserver-authentication-reader")
        .await
        .unwrap();
    let system_bindings: Api<k8s_openapi::api::rbac::v1::RoleBinding> =
        Api::namespaced(env.client(), "kube-system");
    let leader = system_bindings
        .get("system::leader-locking-kube-scheduler")
        .await
        .unwrap();
    assert_eq!(leader.role_ref.kind, "Role");
    bindings.get("system:public-info-viewer").await.unwrap();
}

#[tokio::test]
async fn the_default_priority_classes_should_exist() {
    let env = TestEnv::start().await.unwrap();
    let classes: Api<PriorityClass> = Api::all(env.client());
    let node = classes.get("system-node-critical").await.unwrap();
    assert_eq!(node.value, Some(2_000_001_000));
    let cluster = classes.get("system-cluster-critical").await.unwrap();
    assert_eq!(cluster.value, Some(2_000_000_000));
    assert_eq!(
        cluster.preemption_policy.as_deref(),
        Some("PreemptLowerPriority")
    );
}

/// Waits (by watching, never by sleeping) until `name` exists in `api`.
async fn wait_for<K>(api: &Api<K>, name: &str) -> K
where
    K: kube::Resource + Clone + std::fmt::Debug + serde::de::DeserializeOwned + 'static,
{
    use futures::{StreamExt, TryStreamExt};
    use kube::api::{WatchEvent, WatchParams};
    let found = async {
        loop {
            let mut events = api
                .watch(&WatchParams::default().timeout(5), "0")
                .await
                .unwrap()
                .boxed();
            while let Some(event) = events.try_next().await.unwrap() {
                if let WatchEvent::Added(obj) | WatchEvent::Modified(obj) = event
                    && obj.meta().name.as_deref() == Some(name)
                {
                    return obj;
                }
            }
        }
    };
    tokio::time::timeout(std::time::Duration::from_secs(30), found)
        .await
        .unwrap_or_else(|_| panic!("{name} never appeared"))
}

#[tokio::test]
async fn realistic_namespaces_should_get_a_default_service_account_and_the_root_ca() {
    use k8s_openapi::api::core::v1::{ConfigMap, ServiceAccount};
    use kube::api::{DeleteParams, PostParams};
    let env = TestEnv::builder()
        .tls(true)
        .realistic()
        .start()
        .await
        .unwrap();
    let namespaces: Api<Namespace> = Api::all(env.client());
    let mut ns = Namespace::default();
    ns.metadata.name = Some("team-a".into());
    namespaces
        .create(&PostParams::default(), &ns)
        .await
        .unwrap();
    for namespace in ["default", "kube-system", "team-a"] {
        let sas: Api<ServiceAccount> = Api::namespaced(env.client(), namespace);
        wait_for(&sas, "default").await;
        let cms: Api<ConfigMap> = Api::namespaced(env.client(), namespace);
        let root_ca = wait_for(&cms, "kube-root-ca.crt").await;
        assert_eq!(
            root_ca.metadata.managed_fields.clone().unwrap()[0]
                .manager
                .as_deref(),
            Some("kube-controller-manager")
        );
        assert_eq!(
            root_ca.data.unwrap()["ca.crt"],
            env.ca_certificate_pem().unwrap()
        );
    }
    // As on a cluster, a deleted default ServiceAccount comes back.
    let sas: Api<ServiceAccount> = Api::namespaced(env.client(), "team-a");
    let first = sas.get("default").await.unwrap();
    sas.delete("default", &DeleteParams::default())
        .await
        .unwrap();
    let again = wait_for(&sas, "default").await;
    assert_ne!(again.metadata.uid, first.metadata.uid);
}

#[tokio::test]
async fn without_kube_controller_manager_namespaces_should_stay_empty() {
    use k8s_openapi::api::core::v1::{ConfigMap, ServiceAccount};
    let env = TestEnv::start().await.unwrap();
    let sas: Api<ServiceAccount> = Api::namespaced(env.client(), "default");
    assert!(sas.get_opt("default").await.unwrap().is_none());
    let cms: Api<ConfigMap> = Api::namespaced(env.client(), "default");
    assert!(cms.get_opt("kube-root-ca.crt").await.unwrap().is_none());
}
