//! `pods/exec`, `pods/attach` and `pods/portforward`: kube-apiserver's part of the streaming
//! subresources (`pkg/registry/core/pod/strategy.go`, `streamLocation` and
//! `PortForwardLocation`). The Pod must exist (`404`); exec and attach choose the container as
//! kube-apiserver does (`container` may be left out only for a Pod with one container, and
//! must name one of its containers otherwise, `400`); then a Pod that no scheduler has bound to
//! a node is refused with `400 pod <name> does not have a host assigned`. A Pod with a node
//! would be streamed to its kubelet, which kcr-testenv does not run: that request is answered
//! `400` as well, saying so.

use std::sync::Arc;

use serde_json::Value;

use crate::server::{Request, Shared};
use crate::status::{ApiError, ApiResult};
use crate::store::object_key;

fn names(pod: &Value, field: &str) -> Vec<String> {
    pod.pointer(&format!("/spec/{field}"))
        .and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .filter_map(|c| c.get("name").and_then(Value::as_str).map(str::to_owned))
                .collect()
        })
        .unwrap_or_default()
}

/// The container an exec or attach is for, as `streamLocation` checks it.
fn check_container(pod: &Value, name: &str, requested: Option<&str>) -> ApiResult<()> {
    let containers = names(pod, "containers");
    let init = names(pod, "initContainers");
    match requested.filter(|c| !c.is_empty()) {
        None => match containers.len() {
            1 => Ok(()),
            0 => Err(ApiError::bad_request(format!(
                "a container name must be specified for pod {name}"
            ))),
            _ => {
                let mut message = format!(
                    "a container name must be specified for pod {name}, choose one of: [{}]",
                    containers.join(" ")
                );
                if !init.is_empty() {
                    message.push_str(&format!(
                        " or one of the init containers: [{}]",
                        init.join(" ")
                    ));
                }
                Err(ApiError::bad_request(message))
            }
        },
        Some(c) => {
            let known = containers
                .iter()
                .chain(&init)
                .chain(&names(pod, "ephemeralContainers"))
                .any(|n| n == c);
            if known {
                Ok(())
            } else {
                Err(ApiError::bad_request(format!(
                    "container {c} is not valid for pod {name}"
                )))
            }
        }
    }
}

/// Answers `exec`, `attach` or `portforward` (`sub`) of the Pod `namespace`/`name`.
pub(crate) fn connect(
    shared: &Arc<Shared>,
    req: &Request,
    sub: &str,
    namespace: &str,
    name: &str,
) -> ApiResult<(u16, bytes::Bytes)> {
    let pod = shared
        .store
        .lock()
        .get("/pods", &object_key(Some(namespace), name))
        .map(|s| s.value.clone())
        .ok_or_else(|| ApiError::not_found("", "pods", name))?;
    if sub != "portforward" {
        check_container(&pod, name, req.param("container"))?;
    }
    let node = pod
        .pointer("/spec/nodeName")
        .and_then(Value::as_str)
        .unwrap_or_default();
    if node.is_empty() {
        return Err(ApiError::bad_request(format!(
            "pod {name} does not have a host assigned"
        )));
    }
    Err(ApiError::bad_request(format!(
        "kcr-testenv runs no kubelet: {sub} of pod {name} on node {node} cannot be streamed"
    )))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_container_should_be_chosen_as_kube_apiserver_does() {
        let pod = json!({"spec": {"initContainers": [{"name": "init"}],
                                  "containers": [{"name": "a"}, {"name": "b"}]}});
        assert_eq!(
            check_container(&pod, "p", None).unwrap_err().message,
            "a container name must be specified for pod p, choose one of: [a b] or one of the init containers: [init]"
        );
        assert!(check_container(&pod, "p", Some("init")).is_ok());
        assert_eq!(
            check_container(&pod, "p", Some("x")).unwrap_err().message,
            "container x is not valid for pod p"
        );
        let single = json!({"spec": {"containers": [{"name": "a"}]}});
        assert!(check_container(&single, "p", None).is_ok());
    }
}
