//! A stand-in for kube-controller-manager's Deployment controller, for API
//! servers that have none (kcr-testenv, kcr-apiserver): after a delay it
//! reports every replica a Deployment asks for as ready and available, so
//! that Foos converge.

use std::time::Duration;

use async_trait::async_trait;
use k8s_openapi::api::apps::v1::Deployment;
use kcr_controller_manager::Manager;
use kcr_controller_manager::manager::InformerReader;
use kcr_controller_manager::{Action, Controller, Reconciler, Request};
use kube::Client;
use kube::api::{Api, Patch, PatchParams};

use crate::Result;

/// The controller's name.
pub const CONTROLLER_NAME: &str = "deployment-status";

/// Sets `status` (`replicas`, `readyReplicas`, `availableReplicas`,
/// `updatedReplicas`, `observedGeneration`) from `spec.replicas`, `delay`
/// after it sees a Deployment whose status differs.
pub struct DeploymentStatusReconciler {
    client: Client,
    deployments: InformerReader<Deployment>,
    delay: Duration,
}

impl std::fmt::Debug for DeploymentStatusReconciler {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DeploymentStatusReconciler")
            .field("delay", &self.delay)
            .finish_non_exhaustive()
    }
}

/// The status a Deployment reaches, or `None` if it has it already.
pub fn desired_status(deployment: &Deployment) -> Option<serde_json::Value> {
    let replicas = deployment.spec.replicas.unwrap_or(1);
    let generation = deployment.metadata.generation.unwrap_or(0);
    let status = deployment.status.clone().unwrap_or_default();
    let done = status.replicas == Some(replicas)
        && status.ready_replicas == Some(replicas)
        && status.available_replicas == Some(replicas)
        && status.updated_replicas == Some(replicas)
        && status.observed_generation == Some(generation);
    (!done).then(|| {
        serde_json::json!({ "status": {
            "replicas": replicas,
            "readyReplicas": replicas,
            "availableReplicas": replicas,
            "updatedReplicas": replicas,
            "observedGeneration": generation,
        }})
    })
}

#[async_trait]
impl Reconciler for DeploymentStatusReconciler {
    type Error = kube::Error;

    async fn reconcile(&self, req: Request) -> Result<Action, kube::Error> {
        let namespace = req.namespace.as_deref().unwrap_or("default");
        if self
            .deployments
            .get(Some(namespace), &req.name)
            .as_deref()
            .and_then(desired_status)
            .is_none()
        {
            return Ok(Action::done());
        }
        // The pods "start".
        tokio::time::sleep(self.delay).await;
        let Some(patch) = self
            .deployments
            .get(Some(namespace), &req.name)
            .as_deref()
            .and_then(desired_status)
        else {
            return Ok(Action::done());
        };
        let api: Api<Deployment> = Api::namespaced(self.client.clone(), namespace);
        match api
            .patch_status(&req.name, &PatchParams::default(), &Patch::Merge(&patch))
            .await
        {
            Ok(_) => {
                tracing::info!(status = %patch["status"], "deployment status set");
                Ok(Action::done())
            }
            // Deleted meanwhile.
            Err(kube::Error::Api(s)) if s.code == 404 => Ok(Action::done()),
            Err(e) => Err(e),
        }
    }
}

/// Adds the stand-in Deployment controller to `manager` (leader only, 4
/// workers; several managers of a process may each have one).
pub fn add_to_manager(manager: &Manager, delay: Duration) -> Result<Controller> {
    let reconciler = DeploymentStatusReconciler {
        client: manager.client().clone(),
        deployments: manager.informer_reader::<Deployment>(),
        delay,
    };
    Ok(Controller::builder(manager, CONTROLLER_NAME)
        .for_::<Deployment>()
        .max_concurrent_reconciles(4)
        // A test stand-in: tests run one per manager, several in a process.
        .skip_name_validation(true)
        .build(reconciler)?)
}
