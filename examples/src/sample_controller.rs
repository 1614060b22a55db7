//! The Foo controller of kubernetes/sample-controller, on kcr's
//! [`Controller`]: for each Foo, create or update its Deployment (owned by
//! the Foo), copy the Deployment's available replicas into the Foo's status,
//! and record an Event on every sync. A Deployment of that name that the
//! Foo does not control is left alone and reported as an Event
//! (`ErrResourceExists`: "resource ... already exists and is not managed by
//! Foo").

use std::collections::BTreeMap;
use std::path::PathBuf;

use async_trait::async_trait;
use k8s_openapi::api::apps::v1::{Deployment, DeploymentSpec};
use k8s_openapi::api::core::v1::{Container, PodSpec, PodTemplateSpec};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{LabelSelector, ObjectMeta, OwnerReference};
use kcr_controller_manager::Manager;
use kcr_controller_manager::controller::TerminalError;
use kcr_controller_manager::manager::InformerReader;
use kcr_controller_manager::record::{EventRecorder, EventType};
use kcr_controller_manager::{Action, Controller, Reconciler, Request};
use kube::api::{Api, Patch, PatchParams, PostParams};
use kube::{Client, Resource, ResourceExt};

use crate::foo::Foo;
use crate::reconcile_log::Logged;
use crate::{Error, Result};

/// The controller's name (metrics label, event reporter).
pub const CONTROLLER_NAME: &str = "sample-controller";
/// Event reason: the Foo was synced.
pub const SUCCESS_SYNCED: &str = "Synced";
/// Event reason: the Deployment exists and belongs to someone else.
pub const ERR_RESOURCE_EXISTS: &str = "ErrResourceExists";
/// Event message on a successful sync.
pub const MESSAGE_RESOURCE_SYNCED: &str = "Foo synced successfully";

/// How the Foo controller is added to a manager.
#[derive(Clone, Debug)]
#[must_use]
pub struct Settings {
    /// Workers reconciling at once (default 2).
    pub workers: usize,
    /// Append each reconcile's start and end to this file (see
    /// [`Logged`]).
    pub reconcile_log: Option<PathBuf>,
    /// Allow a second controller of this name in the process (for tests
    /// that run several managers; see `Builder::skip_name_validation`).
    pub skip_name_validation: bool,
}

impl Settings {
    /// Sets [`workers`](Settings::workers).
    pub fn workers(mut self, workers: usize) -> Self {
        self.workers = workers;
        self
    }

    /// Sets [`reconcile_log`](Settings::reconcile_log).
    pub fn reconcile_log(mut self, path: impl Into<PathBuf>) -> Self {
        self.reconcile_log = Some(path.into());
        self
    }

    /// Sets [`skip_name_validation`](Settings::skip_name_validation).
    pub fn skip_name_validation(mut self, skip: bool) -> Self {
        self.skip_name_validation = skip;
        self
    }
}

impl Default for Settings {
    fn default() -> Self {
        Self {
            workers: 2,
            reconcile_log: None,
            skip_name_validation: false,
        }
    }
}

/// Reconciles Foos (sample-controller's `syncHandler`), reading Foos and
/// Deployments from the manager's shared caches.
pub struct FooReconciler {
    client: Client,
    foos: InformerReader<Foo>,
    deployments: InformerReader<Deployment>,
    recorder: EventRecorder,
}

impl std::fmt::Debug for FooReconciler {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FooReconciler").finish_non_exhaustive()
    }
}

impl FooReconciler {
    /// A reconciler using `manager`'s client, caches and an event recorder.
    pub fn new(manager: &Manager) -> Result<Self> {
        Ok(Self {
            client: manager.client().clone(),
            foos: manager.informer_reader::<Foo>(),
            deployments: manager.informer_reader::<Deployment>(),
            recorder: manager.event_recorder(CONTROLLER_NAME)?,
        })
    }

    // The logs of a reconcile carry its span (controller, namespace, name, reconcile id): they
    // do not repeat the object.
    async fn sync(&self, req: &Request) -> Result<Action> {
        let namespace = req.namespace.as_deref().unwrap_or("default");
        // The Foo may no longer exist: its Deployment goes with it (owner
        // reference), nothing to do.
        let Some(foo) = self.foos.get(Some(namespace), &req.name) else {
            tracing::info!("foo no longer exists");
            return Ok(Action::done());
        };
        let deployment_name = foo.spec.deployment_name.as_str();
        if deployment_name.is_empty() {
            // Retrying cannot help until the Foo changes.
            return Err(TerminalError::new(format!(
                "{req}: spec.deploymentName must be specified"
            ))
            .into());
        }

        let deployments: Api<Deployment> = Api::namespaced(self.client.clone(), namespace);
        let cached = self.deployments.get(Some(namespace), deployment_name);
        let deployment = match cached {
            None => {
                tracing::info!(
                    deployment = deployment_name,
                    replicas = foo.spec.replicas,
                    "creating deployment"
                );
                deployments
                    .create(&PostParams::default(), &new_deployment(&foo)?)
                    .await?
            }
            Some(d) => (*d).clone(),
        };

        if !is_controlled_by(&deployment, &foo) {
            let message = Error::NotManaged(deployment_name.to_owned()).to_string();
            self.recorder
                .event_for(&*foo, EventType::Warning, ERR_RESOURCE_EXISTS, &message);
            return Err(Error::NotManaged(deployment_name.to_owned()));
        }

        let deployment = match deployment.spec.replicas {
            Some(replicas) if replicas == foo.spec.replicas => deployment,
            current => {
                tracing::info!(deployment = deployment_name, from = ?current, to = foo.spec.replicas, "updating deployment");
                let mut desired = new_deployment(&foo)?;
                desired.metadata.resource_version = deployment.metadata.resource_version.clone();
                deployments
                    .replace(deployment_name, &PostParams::default(), &desired)
                    .await?
            }
        };

        let available = deployment
            .status
            .as_ref()
            .and_then(|s| s.available_replicas)
            .unwrap_or(0);
        if foo.available_replicas() != available || foo.status.is_none() {
            let foos: Api<Foo> = Api::namespaced(self.client.clone(), namespace);
            let patch = serde_json::json!({ "status": { "availableReplicas": available } });
            foos.patch_status(&req.name, &PatchParams::default(), &Patch::Merge(&patch))
                .await?;
            tracing::info!(available, desired = foo.spec.replicas, "foo status updated");
        }
        self.recorder.event_for(
            &*foo,
            EventType::Normal,
            SUCCESS_SYNCED,
            MESSAGE_RESOURCE_SYNCED,
        );
        Ok(Action::done())
    }
}

#[async_trait]
impl Reconciler for FooReconciler {
    type Error = Error;

    async fn reconcile(&self, req: Request) -> Result<Action> {
        // The controller logs and counts errors, and retries them with
        // backoff (terminal ones only when the Foo changes).
        self.sync(&req).await
    }
}

/// Whether `foo` is `deployment`'s controller (metav1 `IsControlledBy`).
pub fn is_controlled_by(deployment: &Deployment, foo: &Foo) -> bool {
    let Some(uid) = foo.metadata.uid.as_deref() else {
        return false;
    };
    deployment
        .owner_references()
        .iter()
        .any(|r| r.controller == Some(true) && r.uid == uid)
}

/// The owner reference that makes `foo` the controller of an object, as Go's
/// `metav1.NewControllerRef`: `controller: true` and `blockOwnerDeletion: true` (a foreground
/// deletion of the Foo waits for the object's removal).
pub fn new_controller_ref(foo: &Foo) -> Result<OwnerReference> {
    let owner = foo.controller_owner_ref(&()).ok_or_else(|| {
        TerminalError::new(format!("foo {:?} has no name or uid", foo.name_any()))
    })?;
    Ok(OwnerReference {
        block_owner_deletion: Some(true),
        ..owner
    })
}

/// The Deployment a Foo asks for: `nginx` pods labelled with the Foo's
/// name, controlled by the Foo (sample-controller's `newDeployment`).
pub fn new_deployment(foo: &Foo) -> Result<Deployment> {
    let owner = new_controller_ref(foo)?;
    let labels = BTreeMap::from([
        ("app".to_owned(), "nginx".to_owned()),
        ("controller".to_owned(), foo.name_any()),
    ]);
    Ok(Deployment {
        metadata: ObjectMeta {
            name: Some(foo.spec.deployment_name.clone()),
            namespace: foo.namespace(),
            owner_references: Some(vec![owner]),
            ..ObjectMeta::default()
        },
        spec: DeploymentSpec {
            replicas: Some(foo.spec.replicas),
            selector: LabelSelector {
                match_labels: Some(labels.clone()),
                ..LabelSelector::default()
            },
            template: PodTemplateSpec {
                metadata: Some(ObjectMeta {
                    labels: Some(labels),
                    ..ObjectMeta::default()
                }),
                spec: Some(PodSpec {
                    containers: vec![Container {
                        name: "nginx".into(),
                        image: Some("nginx:latest".into()),
                        ..Container::default()
                    }],
                    ..PodSpec::default()
                }),
            },
            ..DeploymentSpec::default()
        },
        status: None,
    })
}

/// Adds the Foo controller to `manager`: it reconciles Foos and the
/// Deployments they own, on the elected leader only.
pub async fn add_to_manager(manager: &Manager, settings: Settings) -> Result<Controller> {
    let reconciler = Logged::new(
        FooReconciler::new(manager)?,
        CONTROLLER_NAME,
        manager.identity(),
    );
    let reconciler = match &settings.reconcile_log {
        Some(path) => reconciler.to_file(path).await?,
        None => reconciler,
    };
    Ok(builder(manager, &settings).build(reconciler)?)
}

fn builder(manager: &Manager, settings: &Settings) -> kcr_controller_manager::controller::Builder {
    Controller::builder(manager, CONTROLLER_NAME)
        .for_::<Foo>()
        .owns::<Deployment>()
        .max_concurrent_reconciles(settings.workers)
        .skip_name_validation(settings.skip_name_validation)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::foo::FooSpec;

    #[test]
    fn the_deployment_should_be_owned_by_its_foo_through_a_controller_reference() {
        let mut foo = Foo::new(
            "example-foo",
            FooSpec {
                deployment_name: "example-foo-deployment".into(),
                replicas: 1,
            },
        );
        foo.metadata.namespace = Some("default".into());
        foo.metadata.uid = Some("a1b2".into());
        let deployment = new_deployment(&foo).expect("deployment");
        let owners = deployment.metadata.owner_references.unwrap_or_default();
        assert_eq!(owners.len(), 1);
        let owner = &owners[0];
        assert_eq!(
            (owner.kind.as_str(), owner.name.as_str(), owner.uid.as_str()),
            ("Foo", "example-foo", "a1b2")
        );
        assert_eq!(owner.api_version, "samplecontroller.k8s.io/v1alpha1");
        assert_eq!(owner.controller, Some(true));
        assert_eq!(owner.block_owner_deletion, Some(true));
    }

    #[test]
    fn a_foo_without_a_uid_should_be_a_terminal_error() {
        let foo = Foo::new(
            "example-foo",
            FooSpec {
                deployment_name: "d".into(),
                replicas: 1,
            },
        );
        assert!(new_controller_ref(&foo).is_err());
    }
}
