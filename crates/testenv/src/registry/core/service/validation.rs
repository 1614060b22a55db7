//! Services, as kube-apiserver's `ValidateService` and `ValidateServiceUpdate`: port protocols
//! and session affinity are known values, and the cluster IPs a Service was given cannot change
//! while it keeps needing them (any type but `ExternalName`).

use serde_json::{Map, Value};

use crate::validation::field::FieldError;
use crate::validation::pod_policies::PROTOCOLS;

/// Port protocols and session affinity.
pub(crate) fn policies(obj: &Map<String, Value>) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let spec = obj.get("spec");
    for (i, p) in spec
        .and_then(|s| s.get("ports"))
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .enumerate()
    {
        if let Some(protocol) = p.get("protocol").and_then(Value::as_str)
            && !PROTOCOLS.contains(&protocol)
        {
            errs.push(FieldError::not_supported(
                format!("spec.ports[{i}].protocol"),
                &Value::from(protocol),
                PROTOCOLS,
            ));
        }
    }
    // The first cluster IP is `clusterIP`.
    if let Some(ips) = spec
        .and_then(|s| s.get("clusterIPs"))
        .and_then(Value::as_array)
        .filter(|ips| !ips.is_empty())
        && spec.and_then(|s| s.get("clusterIP")) != ips.first()
    {
        errs.push(FieldError::invalid(
            "spec.clusterIPs",
            &Value::Array(ips.clone()),
            "first value must match `clusterIP`",
        ));
    }
    // kcr-testenv serves a single-stack (IPv4) cluster, as its allocator tells.
    if let Some(policy) = spec
        .and_then(|s| s.get("ipFamilyPolicy"))
        .filter(|p| p.as_str() == Some("RequireDualStack"))
    {
        errs.push(FieldError::invalid(
            "spec.ipFamilyPolicy",
            policy,
            "this cluster is not configured for dual-stack services",
        ));
    }
    if let Some(affinity) = spec
        .and_then(|s| s.get("sessionAffinity"))
        .and_then(Value::as_str)
        .filter(|a| !matches!(*a, "ClientIP" | "None"))
    {
        errs.push(FieldError::not_supported(
            "spec.sessionAffinity",
            &Value::from(affinity),
            &["ClientIP", "None"],
        ));
    }
    errs
}

/// `ValidateLoadBalancerStatus`: ingress points only for a `LoadBalancer`, each with a valid IP
/// or a DNS name (the status subresource writes them; an update of the main resource keeps the
/// stored, already valid, status).
pub(crate) fn load_balancer_status(obj: &Map<String, Value>) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let ingress = obj
        .get("status")
        .and_then(|s| s.pointer("/loadBalancer/ingress"))
        .and_then(Value::as_array)
        .filter(|i| !i.is_empty());
    let Some(ingress) = ingress else {
        return errs;
    };
    let ty = obj
        .get("spec")
        .and_then(|s| s.get("type"))
        .and_then(Value::as_str)
        .unwrap_or("ClusterIP");
    if ty != "LoadBalancer" {
        errs.push(FieldError::forbidden(
            "status.loadBalancer.ingress",
            "may only be used when `spec.type` is 'LoadBalancer'",
        ));
        return errs;
    }
    for (i, point) in ingress.iter().enumerate() {
        let path = format!("status.loadBalancer.ingress[{i}]");
        if let Some(ip) = point
            .get("ip")
            .and_then(Value::as_str)
            .filter(|ip| !ip.is_empty())
            && ip.parse::<std::net::IpAddr>().is_err()
        {
            errs.push(FieldError::invalid(
                format!("{path}.ip"),
                &Value::from(ip),
                "must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)",
            ));
        }
        if let Some(host) = point
            .get("hostname")
            .and_then(Value::as_str)
            .filter(|h| !h.is_empty())
        {
            let problems = crate::validation::names::dns1123_subdomain(host);
            if !problems.is_empty() {
                errs.push(FieldError::invalid(
                    format!("{path}.hostname"),
                    &Value::from(host),
                    &problems.join("; "),
                ));
            }
            if host.parse::<std::net::IpAddr>().is_ok() {
                errs.push(FieldError::invalid(
                    format!("{path}.hostname"),
                    &Value::from(host),
                    "must be a DNS name, not an IP address",
                ));
            }
        }
    }
    errs
}

fn cluster_ips(spec: Option<&Value>) -> Vec<Value> {
    spec.and_then(|s| s.get("clusterIPs"))
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default()
}

fn needs_cluster_ip(spec: Option<&Value>) -> bool {
    spec.and_then(|s| s.get("type")).and_then(Value::as_str) != Some("ExternalName")
}

/// The rules of an update of `old` to `new`.
pub(crate) fn update(old: &Value, new: &Map<String, Value>) -> Vec<FieldError> {
    let (old_spec, new_spec) = (old.get("spec"), new.get("spec"));
    let mut errs = Vec::new();
    if !(needs_cluster_ip(old_spec) && needs_cluster_ip(new_spec)) {
        return errs;
    }
    // A headless Service's "None" is no allocation that could not change.
    if old_spec
        .and_then(|s| s.get("clusterIP"))
        .and_then(Value::as_str)
        == Some("None")
    {
        return errs;
    }
    let (before, after) = (cluster_ips(old_spec), cluster_ips(new_spec));
    for (i, (b, a)) in before.iter().zip(&after).enumerate() {
        if a != b {
            errs.push(FieldError::invalid(
                format!("spec.clusterIPs[{i}]"),
                &Value::Array(after.clone()),
                "may not change once set",
            ));
        }
    }
    errs
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_cluster_ip_should_not_change_once_set() {
        let old = json!({"spec": {"type": "ClusterIP", "clusterIPs": ["10.96.0.10"]}});
        let new = json!({"spec": {"type": "ClusterIP", "clusterIPs": ["10.0.0.250"]}});
        let errs = update(&old, new.as_object().unwrap());
        assert_eq!(errs.len(), 1);
        assert_eq!(errs[0].field, "spec.clusterIPs[0]");
        assert_eq!(
            errs[0].message,
            "Invalid value: [\"10.0.0.250\"]: may not change once set"
        );
        let external = json!({"spec": {"type": "ExternalName", "externalName": "x"}});
        assert!(update(&old, external.as_object().unwrap()).is_empty());
    }
}
