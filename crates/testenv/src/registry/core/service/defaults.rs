//! Service defaults (`SetDefaults_Service`: type, session affinity, traffic policies, port
//! protocols and target ports) and what kube-apiserver's Service registry does after the field
//! manager: cluster IPs allocated from the service range (IPv4 single stack), node ports for
//! `NodePort` and `LoadBalancer` Services, an empty load-balancer status, and on update the
//! allocated values a request leaves out.

use std::collections::HashSet;
use std::net::Ipv4Addr;

use serde_json::{Map, Value, json};

use crate::defaults::json::{existing, items, object, or_insert, or_insert_str};
use crate::meta::random_u64;
use crate::store::Store;

/// The service cluster IP range kcr-testenv allocates from: 10.96.0.0/12 (kubeadm's default).
const RANGE_BASE: u32 = u32::from_be_bytes([10, 96, 0, 0]);
const RANGE_SIZE: u32 = 1 << 20;
/// kube-apiserver's default node port range, 30000-32767.
const NODE_PORTS: std::ops::RangeInclusive<u32> = 30000..=32767;

fn str_of<'a>(m: &'a Map<String, Value>, key: &str) -> &'a str {
    m.get(key).and_then(Value::as_str).unwrap_or_default()
}

/// Whether a Service of this spec is reachable from outside the cluster (node ports, a load
/// balancer or external IPs).
fn externally_accessible(spec: &Map<String, Value>) -> bool {
    match str_of(spec, "type") {
        "LoadBalancer" | "NodePort" => true,
        "ClusterIP" => spec
            .get("externalIPs")
            .and_then(Value::as_array)
            .is_some_and(|a| !a.is_empty()),
        _ => false,
    }
}

/// The defaults kube-apiserver's decoder sets.
/// `dropTypeDependentFields`: a Service whose new type no longer needs node ports or an
/// external traffic policy loses those it kept unchanged from before (values the update sets
/// itself stay, and are then refused by validation).
fn drop_type_dependent_fields(old_spec: &Map<String, Value>, spec: &mut Map<String, Value>) {
    let node_ports =
        |s: &Map<String, Value>| matches!(str_of(s, "type"), "NodePort" | "LoadBalancer");
    let external = |s: &Map<String, Value>| {
        node_ports(s)
            || s.get("externalIPs")
                .and_then(Value::as_array)
                .is_some_and(|ips| !ips.is_empty())
    };
    if node_ports(old_spec) && !node_ports(spec) {
        let old_ports = old_spec
            .get("ports")
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default();
        if let Some(Value::Array(ports)) = spec.get_mut("ports") {
            let same = ports.len() == old_ports.len()
                && ports
                    .iter()
                    .zip(&old_ports)
                    .all(|(p, o)| p.get("nodePort") == o.get("nodePort"));
            if same {
                for p in ports.iter_mut().filter_map(Value::as_object_mut) {
                    p.remove("nodePort");
                }
            }
        }
        if spec.get("healthCheckNodePort") == old_spec.get("healthCheckNodePort") {
            spec.remove("healthCheckNodePort");
        }
    }
    if external(old_spec)
        && !external(spec)
        && spec.get("externalTrafficPolicy") == old_spec.get("externalTrafficPolicy")
    {
        spec.remove("externalTrafficPolicy");
    }
}

pub(crate) fn on_write(obj: &mut Map<String, Value>) {
    let Some(spec) = object(obj, "spec") else {
        return;
    };
    // `clusterIP` is `omitempty`: an empty one is no value at all once decoded (an update
    // then keeps the allocated one).
    if spec.get("clusterIP").and_then(Value::as_str) == Some("") {
        spec.remove("clusterIP");
    }
    or_insert_str(spec, "sessionAffinity", "None");
    match str_of(spec, "sessionAffinity") {
        "None" => {
            spec.remove("sessionAffinityConfig");
        }
        "ClientIP" => {
            let has_timeout = spec
                .get("sessionAffinityConfig")
                .and_then(|c| c.get("clientIP"))
                .and_then(|c| c.get("timeoutSeconds"))
                .is_some_and(|t| !t.is_null());
            if !has_timeout {
                spec.insert(
                    "sessionAffinityConfig".into(),
                    json!({"clientIP": {"timeoutSeconds": 10800}}),
                );
            }
        }
        _ => {}
    }
    or_insert_str(spec, "type", "ClusterIP");
    for port in items(spec, "ports") {
        or_insert_str(port, "protocol", "TCP");
        let unset = port
            .get("targetPort")
            .is_none_or(|t| t.is_null() || t.as_i64() == Some(0) || t.as_str() == Some(""));
        if unset && let Some(p) = port.get("port").cloned() {
            port.insert("targetPort".into(), p);
        }
    }
    if externally_accessible(spec) {
        or_insert_str(spec, "externalTrafficPolicy", "Cluster");
    }
    let ty = str_of(spec, "type").to_owned();
    if matches!(ty.as_str(), "NodePort" | "LoadBalancer" | "ClusterIP") {
        or_insert(spec, "internalTrafficPolicy", json!("Cluster"));
    }
    if ty == "LoadBalancer" {
        or_insert(spec, "allocateLoadBalancerNodePorts", json!(true));
    }
}

/// Every cluster IP and node port the stored Services hold.
fn allocated(store: &Store) -> (HashSet<String>, HashSet<i64>) {
    let mut ips = HashSet::new();
    let mut ports = HashSet::new();
    for key in store.keys("/services", None) {
        let Some(svc) = store.get("/services", &key) else {
            continue;
        };
        let spec = svc.value.get("spec");
        for ip in spec
            .and_then(|s| s.get("clusterIPs"))
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
        {
            ips.insert(ip.to_owned());
        }
        for p in spec
            .and_then(|s| s.get("ports"))
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(|p| p.get("nodePort").and_then(Value::as_i64))
        {
            ports.insert(p);
        }
    }
    (ips, ports)
}

/// A free address of the range (never the network address or the first host, which the
/// `kubernetes` Service takes).
fn free_ip(taken: &HashSet<String>) -> Option<String> {
    let start = random_u64();
    (0..u64::from(RANGE_SIZE)).find_map(|i| {
        let offset = ((start + i) % u64::from(RANGE_SIZE - 3)) as u32 + 2;
        let ip = Ipv4Addr::from(RANGE_BASE + offset).to_string();
        (!taken.contains(&ip)).then_some(ip)
    })
}

fn free_node_port(taken: &HashSet<i64>) -> Option<i64> {
    let size = u64::from(NODE_PORTS.end() - NODE_PORTS.start() + 1);
    let start = random_u64();
    (0..size).find_map(|i| {
        let port = i64::from(*NODE_PORTS.start()) + ((start + i) % size) as i64;
        (!taken.contains(&port)).then_some(port)
    })
}

/// Allocates what a new Service needs and gives it its empty status.
pub(crate) fn prepare_for_create(store: &Store, obj: &mut Map<String, Value>) {
    obj.insert("status".into(), json!({"loadBalancer": {}}));
    let (ips, node_ports) = allocated(store);
    let Some(spec) = existing(obj, "spec") else {
        return;
    };
    let ty = str_of(spec, "type").to_owned();
    if ty == "ExternalName" {
        return;
    }
    let cluster_ip = str_of(spec, "clusterIP").to_owned();
    let has_ips = spec
        .get("clusterIPs")
        .and_then(Value::as_array)
        .is_some_and(|a| !a.is_empty());
    if !cluster_ip.is_empty() && !has_ips {
        spec.insert("clusterIPs".into(), json!([cluster_ip]));
    }
    if cluster_ip.is_empty()
        && !has_ips
        && let Some(ip) = free_ip(&ips)
    {
        spec.insert("clusterIP".into(), json!(ip));
        spec.insert("clusterIPs".into(), json!([ip]));
    }
    or_insert(spec, "ipFamilies", json!(["IPv4"]));
    or_insert(spec, "ipFamilyPolicy", json!("SingleStack"));
    if matches!(ty.as_str(), "NodePort" | "LoadBalancer")
        && spec
            .get("allocateLoadBalancerNodePorts")
            .and_then(Value::as_bool)
            != Some(false)
    {
        let mut taken = node_ports;
        for port in items(spec, "ports") {
            if port
                .get("nodePort")
                .and_then(Value::as_i64)
                .is_none_or(|p| p == 0)
                && let Some(p) = free_node_port(&taken)
            {
                taken.insert(p);
                port.insert("nodePort".into(), json!(p));
            }
        }
    }
}

/// On an update of the main resource, the allocated values a request leaves out stay (as
/// kube-apiserver's `patchAllocatedValues` keeps them), and a changed `clusterIP` alone
/// changes `clusterIPs` with it (`normalizeClusterIPs`), so that validation sees the change.
pub(crate) fn prepare_for_update(old: &Value, new: &mut Map<String, Value>) {
    let Some(old_spec) = old.get("spec").and_then(Value::as_object) else {
        return;
    };
    let Some(spec) = existing(new, "spec") else {
        return;
    };
    drop_type_dependent_fields(old_spec, spec);
    let old_ip = str_of(old_spec, "clusterIP").to_owned();
    let new_ip = str_of(spec, "clusterIP").to_owned();
    let same_ips = spec.get("clusterIPs") == old_spec.get("clusterIPs");
    let needs_ip = str_of(spec, "type") != "ExternalName";
    if needs_ip && new_ip.is_empty() && !old_ip.is_empty() {
        for key in ["clusterIP", "clusterIPs", "ipFamilies", "ipFamilyPolicy"] {
            if spec.get(key).is_none_or(Value::is_null)
                && let Some(v) = old_spec.get(key)
            {
                spec.insert(key.into(), v.clone());
            }
        }
    } else if old_ip != new_ip && same_ips && spec.get("clusterIPs").is_some() {
        spec.insert("clusterIPs".into(), json!([new_ip]));
    }
    if needs_ip {
        for key in ["ipFamilies", "ipFamilyPolicy"] {
            if spec.get(key).is_none_or(Value::is_null)
                && let Some(v) = old_spec.get(key)
            {
                spec.insert(key.into(), v.clone());
            }
        }
    }
    // Node ports a request leaves out keep their values (matched by port and protocol) while
    // the Service still needs them.
    if !matches!(str_of(spec, "type"), "NodePort" | "LoadBalancer") {
        return;
    }
    let old_ports: Vec<&Value> = old_spec
        .get("ports")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .collect();
    for port in items(spec, "ports") {
        if port
            .get("nodePort")
            .and_then(Value::as_i64)
            .is_none_or(|p| p == 0)
            && let Some(old_port) = old_ports.iter().find(|o| {
                o.get("port") == port.get("port") && o.get("protocol") == port.get("protocol")
            })
            && let Some(np) = old_port.get("nodePort")
        {
            port.insert("nodePort".into(), np.clone());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_service_should_get_its_type_affinity_and_target_ports() {
        let mut svc = json!({"spec": {"ports": [{"port": 80}, {"port": 81, "targetPort": "web"}]}});
        on_write(svc.as_object_mut().unwrap());
        let spec = &svc["spec"];
        assert_eq!(spec["type"], "ClusterIP");
        assert_eq!(spec["sessionAffinity"], "None");
        assert_eq!(spec["internalTrafficPolicy"], "Cluster");
        assert_eq!(
            spec["ports"][0],
            json!({"port": 80, "protocol": "TCP", "targetPort": 80})
        );
        assert_eq!(spec["ports"][1]["targetPort"], "web");
        assert!(spec.get("externalTrafficPolicy").is_none());
    }

    #[test]
    fn a_load_balancer_should_get_its_external_defaults() {
        let mut svc = json!({"spec": {"type": "LoadBalancer", "ports": [{"port": 80}]}});
        on_write(svc.as_object_mut().unwrap());
        assert_eq!(svc["spec"]["externalTrafficPolicy"], "Cluster");
        assert_eq!(svc["spec"]["allocateLoadBalancerNodePorts"], true);
    }

    #[test]
    fn cluster_ips_should_be_free_addresses_of_the_range() {
        let taken: HashSet<String> = ["10.96.0.2".to_owned()].into();
        for _ in 0..100 {
            let ip: Ipv4Addr = free_ip(&taken).unwrap().parse().unwrap();
            let n = u32::from(ip);
            assert!((RANGE_BASE + 2..RANGE_BASE + RANGE_SIZE - 1).contains(&n));
            assert_ne!(ip.to_string(), "10.96.0.2");
        }
    }
}
