//! kube-apiserver's `networking` validation: NetworkPolicies (`ValidateNetworkPolicySpec`:
//! the pod selector, each rule's ports and peers, `ipBlock` CIDRs and their exceptions, the
//! policy types), Ingresses (`ValidateIngressSpec`: a default backend or rules, hosts, paths
//! per path type, backends, TLS hosts and secrets, the class name; on create the class
//! annotation must agree with `ingressClassName`) and IngressClasses (a domain-prefixed
//! controller, the parameters reference; the controller is immutable).

use std::net::IpAddr;

use serde_json::{Map, Value, json};

use crate::validation::field::FieldError;
use crate::validation::names;

const PORT_RANGE: &str = "must be between 1 and 65535, inclusive";
const WILDCARD_MSG: &str = "a wildcard DNS-1123 subdomain must start with '*.', followed by a valid DNS subdomain, which must consist of lower case alphanumeric characters, '-' or '.' and end with an alphanumeric character (e.g. '*.example.com', regex used for validation is '\\*\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')";
const CIDR_MSG: &str = "must be a valid CIDR value, (e.g. 10.9.8.0/24 or 2001:db8::/64)";
const HTTP_PATH_FMT: &str = "[A-Za-z0-9/\\-._~%!$&'()*+,;=:]+";
const INGRESS_CLASS_ANNOTATION: &str = "kubernetes.io/ingress.class";

fn present<'a>(v: Option<&'a Value>, key: &str) -> Option<&'a Value> {
    v.and_then(|v| v.get(key)).filter(|v| !v.is_null())
}

fn str_of<'a>(v: Option<&'a Value>, key: &str) -> &'a str {
    present(v, key).and_then(Value::as_str).unwrap_or_default()
}

fn array<'a>(v: Option<&'a Value>, key: &str) -> &'a [Value] {
    present(v, key)
        .and_then(Value::as_array)
        .map_or(&[], Vec::as_slice)
}

/// `IsValidPortNum`.
fn port_num(n: i64) -> Vec<String> {
    if (1..=65535).contains(&n) {
        Vec::new()
    } else {
        vec![PORT_RANGE.into()]
    }
}

/// `IsValidPortName` (an IANA service name).
pub(crate) fn port_name(name: &str) -> Vec<String> {
    let mut msgs = Vec::new();
    if name.len() > 15 {
        msgs.push("must be no more than 15 characters".into());
    }
    if !name
        .bytes()
        .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
        || name.is_empty()
    {
        msgs.push("must contain only alpha-numeric characters (a-z, 0-9), and hyphens (-)".into());
    }
    if !name.bytes().any(|b| b.is_ascii_lowercase()) {
        msgs.push("must contain at least one letter (a-z)".into());
    }
    if name.contains("--") {
        msgs.push("must not contain consecutive hyphens".into());
    }
    if name.starts_with('-') || name.ends_with('-') {
        msgs.push("must not begin or end with a hyphen".into());
    }
    msgs
}

/// Go's `ParseIPSloppy`: an IP address, IPv4 parts may have leading zeros.
fn is_ip(s: &str) -> bool {
    if s.parse::<IpAddr>().is_ok() {
        return true;
    }
    let parts: Vec<&str> = s.split('.').collect();
    parts.len() == 4
        && parts.iter().all(|p| {
            !p.is_empty()
                && p.len() <= 3
                && p.bytes().all(|b| b.is_ascii_digit())
                && p.parse::<u16>().is_ok_and(|n| n <= 255)
        })
}

/// A CIDR as `ParseCIDRSloppy` reads it: the network address (as bits) and the prefix length,
/// with the address family's width.
fn parse_cidr(s: &str) -> Option<(u128, u32, u32)> {
    let (ip, prefix) = s.split_once('/')?;
    if prefix.is_empty() || !prefix.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let prefix: u32 = prefix.parse().ok()?;
    let (bits, width) = if ip.contains(':') {
        (u128::from(ip.parse::<std::net::Ipv6Addr>().ok()?), 128)
    } else {
        if !is_ip(ip) {
            return None;
        }
        let mut v = 0u128;
        for p in ip.split('.') {
            v = (v << 8) | p.parse::<u128>().ok()?;
        }
        (v, 32)
    };
    if prefix > width {
        return None;
    }
    let mask = if prefix == 0 {
        0
    } else {
        (u128::MAX >> (128 - width)) & !((1u128 << (width - prefix)) - 1)
    };
    Some((bits & mask, prefix, width))
}

/// `IsWildcardDNS1123Subdomain`.
fn wildcard_subdomain(s: &str) -> Vec<String> {
    let mut msgs = Vec::new();
    if s.len() > 253 {
        msgs.push("must be no more than 253 characters".into());
    }
    let ok = s
        .strip_prefix("*.")
        .is_some_and(|rest| names::dns1123_subdomain(rest).is_empty() && rest.len() <= 253);
    if !ok {
        msgs.push(WILDCARD_MSG.into());
    }
    msgs
}

/// `ValidateLabelSelector` of the selector at `path`.
pub(crate) fn label_selector(sel: Option<&Value>, path: &str, errs: &mut Vec<FieldError>) {
    let Some(sel) = sel.filter(|s| !s.is_null()) else {
        return;
    };
    if let Some(labels) = sel.get("matchLabels").and_then(Value::as_object) {
        let mut keys: Vec<&String> = labels.keys().collect();
        keys.sort();
        for key in keys {
            for msg in names::qualified_name(key) {
                errs.push(FieldError::invalid(
                    format!("{path}.matchLabels"),
                    &json!(key),
                    &msg,
                ));
            }
            let value = labels[key].as_str().unwrap_or_default();
            for msg in names::label_value(value) {
                errs.push(FieldError::invalid(
                    format!("{path}.matchLabels"),
                    &json!(value),
                    &msg,
                ));
            }
        }
    }
    for (i, expr) in array(Some(sel), "matchExpressions").iter().enumerate() {
        let at = format!("{path}.matchExpressions[{i}]");
        let op = str_of(Some(expr), "operator");
        let values = array(Some(expr), "values");
        match op {
            "In" | "NotIn" => {
                if values.is_empty() {
                    errs.push(FieldError::required(
                        format!("{at}.values"),
                        "must be specified when `operator` is 'In' or 'NotIn'",
                    ));
                }
            }
            "Exists" | "DoesNotExist" => {
                if !values.is_empty() {
                    errs.push(FieldError::forbidden(
                        format!("{at}.values"),
                        "may not be specified when `operator` is 'Exists' or 'DoesNotExist'",
                    ));
                }
            }
            _ => errs.push(FieldError::invalid(
                format!("{at}.operator"),
                &json!(op),
                "not a valid selector operator",
            )),
        }
        let key = str_of(Some(expr), "key");
        for msg in names::qualified_name(key) {
            errs.push(FieldError::invalid(format!("{at}.key"), &json!(key), &msg));
        }
        for (j, v) in values.iter().enumerate() {
            let v = v.as_str().unwrap_or_default();
            for msg in names::label_value(v) {
                errs.push(FieldError::invalid(
                    format!("{at}.values[{j}]"),
                    &json!(v),
                    &msg,
                ));
            }
        }
    }
}

/// `ValidateNetworkPolicyPort`.
fn network_policy_port(port: &Value, path: &str, errs: &mut Vec<FieldError>) {
    let port = Some(port);
    if let Some(protocol) = present(port, "protocol").and_then(Value::as_str)
        && !matches!(protocol, "TCP" | "UDP" | "SCTP")
    {
        errs.push(FieldError::not_supported(
            format!("{path}.protocol"),
            &json!(protocol),
            &["TCP", "UDP", "SCTP"],
        ));
    }
    let end = present(port, "endPort").and_then(Value::as_i64);
    match present(port, "port") {
        Some(Value::String(name)) => {
            if let Some(end) = end {
                errs.push(FieldError::invalid(
                    format!("{path}.endPort"),
                    &json!(end),
                    "may not be specified when `port` is non-numeric",
                ));
            }
            for msg in port_name(name) {
                errs.push(FieldError::invalid(
                    format!("{path}.port"),
                    &json!(name),
                    &msg,
                ));
            }
        }
        Some(number) => {
            let n = number.as_i64().unwrap_or(0);
            for msg in port_num(n) {
                errs.push(FieldError::invalid(format!("{path}.port"), &json!(n), &msg));
            }
            if let Some(end) = end {
                if end < n {
                    errs.push(FieldError::invalid(
                        format!("{path}.endPort"),
                        &json!(n),
                        "must be greater than or equal to `port`",
                    ));
                }
                for msg in port_num(end) {
                    errs.push(FieldError::invalid(
                        format!("{path}.endPort"),
                        &json!(end),
                        &msg,
                    ));
                }
            }
        }
        None => {
            if let Some(end) = end {
                errs.push(FieldError::invalid(
                    format!("{path}.endPort"),
                    &json!(end),
                    "may not be specified when `port` is not specified",
                ));
            }
        }
    }
}

/// `ValidateIPBlock`.
fn ip_block(block: &Value, path: &str, errs: &mut Vec<FieldError>) {
    let cidr = str_of(Some(block), "cidr");
    if cidr.is_empty() {
        errs.push(FieldError::required(format!("{path}.cidr"), ""));
        return;
    }
    let Some((net, prefix, width)) = parse_cidr(cidr) else {
        errs.push(FieldError::invalid(
            format!("{path}.cidr"),
            &json!(cidr),
            CIDR_MSG,
        ));
        return;
    };
    for (i, except) in array(Some(block), "except").iter().enumerate() {
        let at = format!("{path}.except[{i}]");
        let text = except.as_str().unwrap_or_default();
        let Some((ex_net, ex_prefix, ex_width)) = parse_cidr(text) else {
            errs.push(FieldError::invalid(&at, &json!(text), CIDR_MSG));
            continue;
        };
        let inside = ex_width == width && {
            let mask = if prefix == 0 {
                0
            } else {
                (u128::MAX >> (128 - width)) & !((1u128 << (width - prefix)) - 1)
            };
            ex_net & mask == net
        };
        if !inside || prefix >= ex_prefix {
            errs.push(FieldError::invalid(
                &at,
                &json!(text),
                "must be a strict subset of `cidr`",
            ));
        }
    }
}

/// `ValidateNetworkPolicyPeer`.
fn network_policy_peer(peer: &Value, path: &str, errs: &mut Vec<FieldError>) {
    let mut peers = 0;
    for key in ["podSelector", "namespaceSelector"] {
        if let Some(sel) = present(Some(peer), key) {
            peers += 1;
            label_selector(Some(sel), &format!("{path}.{key}"), errs);
        }
    }
    let block = present(Some(peer), "ipBlock");
    if let Some(block) = block {
        peers += 1;
        ip_block(block, &format!("{path}.ipBlock"), errs);
    }
    if peers == 0 {
        errs.push(FieldError::required(path, "must specify a peer"));
    } else if peers > 1 && block.is_some() {
        errs.push(FieldError::forbidden(
            path,
            "may not specify both ipBlock and another peer",
        ));
    }
}

/// `ValidateNetworkPolicySpec`.
pub(crate) fn network_policy(obj: &Map<String, Value>) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let spec = obj.get("spec");
    label_selector(present(spec, "podSelector"), "spec.podSelector", &mut errs);
    for (direction, peers) in [("ingress", "from"), ("egress", "to")] {
        for (i, rule) in array(spec, direction).iter().enumerate() {
            let at = format!("spec.{direction}[{i}]");
            for (j, port) in array(Some(rule), "ports").iter().enumerate() {
                network_policy_port(port, &format!("{at}.ports[{j}]"), &mut errs);
            }
            for (j, peer) in array(Some(rule), peers).iter().enumerate() {
                network_policy_peer(peer, &format!("{at}.{peers}[{j}]"), &mut errs);
            }
        }
    }
    let types = array(spec, "policyTypes");
    if types.len() > 2 {
        errs.push(FieldError::invalid(
            "spec.policyTypes",
            &Value::Array(types.to_vec()),
            "may not specify more than two policyTypes",
        ));
        return errs;
    }
    for (i, t) in types.iter().enumerate() {
        let t = t.as_str().unwrap_or_default();
        if !matches!(t, "Ingress" | "Egress") {
            errs.push(FieldError::not_supported(
                format!("spec.policyTypes[{i}]"),
                &json!(t),
                &["Ingress", "Egress"],
            ));
        }
    }
    errs
}

/// A `TypedLocalObjectReference` of an Ingress backend or class parameters.
fn typed_local_reference(r: &Value, path: &str, errs: &mut Vec<FieldError>) {
    if let Some(group) = present(Some(r), "apiGroup").and_then(Value::as_str) {
        for msg in names::dns1123_subdomain(group) {
            errs.push(FieldError::invalid(
                format!("{path}.apiGroup"),
                &json!(group),
                &msg,
            ));
        }
    }
    for key in ["kind", "name"] {
        let value = str_of(Some(r), key);
        if value.is_empty() {
            errs.push(FieldError::required(
                format!("{path}.{key}"),
                &format!("{key} is required"),
            ));
        } else {
            for msg in crate::registry::autoscaling::path_segment_name(value) {
                errs.push(FieldError::invalid(
                    format!("{path}.{key}"),
                    &json!(value),
                    &msg,
                ));
            }
        }
    }
}

/// `validateIngressBackend`.
fn ingress_backend(backend: Option<&Value>, path: &str, errs: &mut Vec<FieldError>) {
    let resource = present(backend, "resource");
    let service = present(backend, "service");
    match (resource, service) {
        (Some(_), Some(_)) => errs.push(FieldError::invalid(
            path,
            &json!(""),
            "cannot set both resource and service backends",
        )),
        (Some(resource), None) => {
            typed_local_reference(resource, &format!("{path}.resource"), errs)
        }
        (None, Some(service)) => {
            let service = Some(service);
            let name = str_of(service, "name");
            if name.is_empty() {
                errs.push(FieldError::required(format!("{path}.service.name"), ""));
            } else {
                for msg in names::dns1035_label(name) {
                    errs.push(FieldError::invalid(
                        format!("{path}.service.name"),
                        &json!(name),
                        &msg,
                    ));
                }
            }
            let port = present(service, "port");
            let port_name_given = str_of(port, "name");
            let number = present(port, "number").and_then(Value::as_i64).unwrap_or(0);
            match (port_name_given.is_empty(), number == 0) {
                (false, false) => errs.push(FieldError::invalid(
                    path,
                    &json!(""),
                    "cannot set both port name & port number",
                )),
                (false, true) => {
                    for msg in port_name(port_name_given) {
                        errs.push(FieldError::invalid(
                            format!("{path}.service.port.name"),
                            &json!(port_name_given),
                            &msg,
                        ));
                    }
                }
                (true, false) => {
                    for msg in port_num(number) {
                        errs.push(FieldError::invalid(
                            format!("{path}.service.port.number"),
                            &json!(number),
                            &msg,
                        ));
                    }
                }
                (true, true) => errs.push(FieldError::required(
                    path,
                    "port name or number is required",
                )),
            }
        }
        (None, None) => errs.push(FieldError::invalid(
            path,
            &json!(""),
            "resource or service backend is required",
        )),
    }
}

/// `validateHTTPIngressPath`.
fn ingress_path(p: &Value, path: &str, errs: &mut Vec<FieldError>) {
    let Some(path_type) = present(Some(p), "pathType").and_then(Value::as_str) else {
        errs.push(FieldError::required(
            format!("{path}.pathType"),
            "pathType must be specified",
        ));
        return;
    };
    let text = str_of(Some(p), "path");
    let at = format!("{path}.path");
    match path_type {
        "Exact" | "Prefix" => {
            if !text.starts_with('/') {
                errs.push(FieldError::invalid(
                    &at,
                    &json!(text),
                    "must be an absolute path",
                ));
            }
            if !text.is_empty() {
                for seq in ["//", "/./", "/../", "%2f", "%2F"] {
                    if text.contains(seq) {
                        errs.push(FieldError::invalid(
                            &at,
                            &json!(text),
                            &format!("must not contain '{seq}'"),
                        ));
                    }
                }
                for suffix in ["/..", "/."] {
                    if text.ends_with(suffix) {
                        errs.push(FieldError::invalid(
                            &at,
                            &json!(text),
                            &format!("cannot end with '{suffix}'"),
                        ));
                    }
                }
            }
        }
        "ImplementationSpecific" => {
            if !text.is_empty() && !text.starts_with('/') {
                errs.push(FieldError::invalid(
                    &at,
                    &json!(text),
                    "must be an absolute path",
                ));
            }
        }
        other => errs.push(FieldError::not_supported(
            format!("{path}.pathType"),
            &json!(other),
            &["Exact", "ImplementationSpecific", "Prefix"],
        )),
    }
    ingress_backend(
        present(Some(p), "backend"),
        &format!("{path}.backend"),
        errs,
    );
}

/// A rule's HTTP paths (`validateIngressRuleValue`); the number of causes tells whether it is
/// valid.
fn ingress_rule_value(rule: &Value, path: &str, errs: &mut Vec<FieldError>) {
    if let Some(http) = present(Some(rule), "http") {
        let paths = array(Some(http), "paths");
        if paths.is_empty() {
            errs.push(FieldError::required(format!("{path}.http.paths"), ""));
        }
        for (i, p) in paths.iter().enumerate() {
            ingress_path(p, &format!("{path}.http.paths[{i}]"), errs);
        }
    }
}

/// Whether a stored Ingress may keep what later rules refuse: invalid TLS secret names, and
/// invalid rules under wildcard hosts.
fn lenience(old: Option<&Value>) -> (bool, bool) {
    let spec = old.and_then(|o| o.get("spec"));
    let bad_secret = array(spec, "tls").iter().any(|t| {
        let name = str_of(Some(t), "secretName");
        !name.is_empty() && !names::dns1123_subdomain(name).is_empty()
    });
    let bad_wildcard_rule = array(spec, "rules").iter().any(|r| {
        let mut errs = Vec::new();
        ingress_rule_value(r, "", &mut errs);
        str_of(Some(r), "host").contains('*') && !errs.is_empty()
    });
    (bad_secret, bad_wildcard_rule)
}

/// `ValidateIngressSpec` (and on create the class annotation); `old`: the stored Ingress on
/// update.
pub(crate) fn ingress(obj: &Map<String, Value>, old: Option<&Value>) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let (allow_bad_secret, allow_bad_wildcard_rule) = lenience(old);
    let spec = obj.get("spec");
    let rules = array(spec, "rules");
    let default_backend = present(spec, "defaultBackend");
    if rules.is_empty() && default_backend.is_none() {
        let shown = if present(spec, "rules").is_some() {
            json!([])
        } else {
            Value::Null
        };
        errs.push(FieldError::invalid(
            "spec",
            &shown,
            "either `defaultBackend` or `rules` must be specified",
        ));
    }
    if default_backend.is_some() {
        ingress_backend(default_backend, "spec.defaultBackend", &mut errs);
    }
    for (i, rule) in rules.iter().enumerate() {
        let at = format!("spec.rules[{i}]");
        let host = str_of(Some(rule), "host");
        let mut wildcard = false;
        if !host.is_empty() {
            if is_ip(host) {
                errs.push(FieldError::invalid(
                    format!("{at}.host"),
                    &json!(host),
                    "must be a DNS name, not an IP address",
                ));
            }
            let msgs = if host.contains('*') {
                wildcard = true;
                wildcard_subdomain(host)
            } else {
                names::dns1123_subdomain(host)
            };
            for msg in msgs {
                errs.push(FieldError::invalid(
                    format!("{at}.host"),
                    &json!(host),
                    &msg,
                ));
            }
        }
        if !wildcard || !allow_bad_wildcard_rule {
            ingress_rule_value(rule, &at, &mut errs);
        }
    }
    for (t, tls) in array(spec, "tls").iter().enumerate() {
        for (i, host) in array(Some(tls), "hosts").iter().enumerate() {
            let host = host.as_str().unwrap_or_default();
            let msgs = if host.contains('*') {
                wildcard_subdomain(host)
            } else {
                names::dns1123_subdomain(host)
            };
            for msg in msgs {
                errs.push(FieldError::invalid(
                    format!("spec.tls[{t}].hosts[{i}]"),
                    &json!(host),
                    &msg,
                ));
            }
        }
        let secret = str_of(Some(tls), "secretName");
        if !allow_bad_secret && !secret.is_empty() {
            for msg in names::dns1123_subdomain(secret) {
                errs.push(FieldError::invalid(
                    format!("spec.tls[{t}].secretName"),
                    &json!(secret),
                    &msg,
                ));
            }
        }
    }
    if let Some(class) = present(spec, "ingressClassName").and_then(Value::as_str) {
        for msg in names::dns1123_subdomain(class) {
            errs.push(FieldError::invalid(
                "spec.ingressClassName",
                &json!(class),
                &msg,
            ));
        }
    }
    if old.is_none()
        && let Some(annotation) = obj
            .get("metadata")
            .and_then(|m| m.get("annotations"))
            .and_then(|a| a.get(INGRESS_CLASS_ANNOTATION))
            .and_then(Value::as_str)
        && let Some(class) = present(spec, "ingressClassName").and_then(Value::as_str)
        && annotation != class
    {
        errs.push(FieldError::invalid(
            format!("annotations.{INGRESS_CLASS_ANNOTATION}"),
            &json!(annotation),
            "must match `ingressClassName` when both are specified",
        ));
    }
    errs
}

/// `validateIngressClassSpec`.
pub(crate) fn ingress_class(obj: &Map<String, Value>) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let spec = obj.get("spec");
    let controller = str_of(spec, "controller");
    if controller.len() > 250 {
        errs.push(FieldError::too_long("spec.controller", 250));
    }
    // `IsDomainPrefixedPath`.
    match controller.split_once('/') {
        _ if controller.is_empty() => errs.push(FieldError::required("spec.controller", "")),
        Some((host, path)) if !host.is_empty() && !path.is_empty() => {
            for msg in names::dns1123_subdomain(host) {
                errs.push(FieldError::invalid("spec.controller", &json!(host), &msg));
            }
            let http_path = path
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b"/-._~%!$&'()*+,;=:".contains(&b));
            if !http_path {
                errs.push(FieldError::invalid(
                    "spec.controller",
                    &json!(path),
                    &format!("Invalid path (regex used for validation is '{HTTP_PATH_FMT}')"),
                ));
            }
        }
        _ => errs.push(FieldError::invalid(
            "spec.controller",
            &json!(controller),
            "must be a domain-prefixed path (such as \"acme.io/foo\")",
        )),
    }
    if let Some(params) = present(spec, "parameters") {
        let path = "spec.parameters";
        typed_local_reference(params, path, &mut errs);
        match present(Some(params), "scope").and_then(Value::as_str) {
            None => errs.push(FieldError::required(format!("{path}.scope"), "")),
            Some(scope @ ("Namespace" | "Cluster")) => {
                let namespace = present(Some(params), "namespace");
                if scope == "Namespace" {
                    match namespace.and_then(Value::as_str) {
                        None => errs.push(FieldError::required(
                            format!("{path}.namespace"),
                            "`parameters.scope` is set to 'Namespace'",
                        )),
                        Some(ns) => {
                            for msg in names::dns1123_label(ns) {
                                errs.push(FieldError::invalid(
                                    format!("{path}.namespace"),
                                    &json!(ns),
                                    &msg,
                                ));
                            }
                        }
                    }
                } else if namespace.is_some() {
                    errs.push(FieldError::forbidden(
                        format!("{path}.namespace"),
                        "`parameters.scope` is set to 'Cluster'",
                    ));
                }
            }
            Some(other) => errs.push(FieldError::not_supported(
                format!("{path}.scope"),
                &json!(other),
                &["Cluster", "Namespace"],
            )),
        }
    }
    errs
}

/// `validateIngressClassSpecUpdate`: the controller is immutable.
pub(crate) fn ingress_class_update(old: &Value, new: &Map<String, Value>) -> Vec<FieldError> {
    let before = old
        .pointer("/spec/controller")
        .cloned()
        .unwrap_or(json!(""));
    let after = new
        .get("spec")
        .and_then(|s| s.get("controller"))
        .cloned()
        .unwrap_or(json!(""));
    if before == after {
        Vec::new()
    } else {
        vec![FieldError::invalid(
            "spec.controller",
            &after,
            "field is immutable",
        )]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn causes(errs: Vec<FieldError>) -> Vec<(String, String)> {
        errs.into_iter().map(|e| (e.field, e.message)).collect()
    }

    fn pairs(v: &[(&str, &str)]) -> Vec<(String, String)> {
        v.iter()
            .map(|(a, b)| ((*a).to_owned(), (*b).to_owned()))
            .collect()
    }

    fn obj(v: Value) -> Map<String, Value> {
        v.as_object().unwrap().clone()
    }

    #[test]
    fn network_policy_ports_peers_and_blocks_should_be_checked() {
        let np = obj(
            json!({"spec": {"podSelector": {"matchExpressions": [{"key": "a", "operator": "In"}]},
            "ingress": [{"ports": [{"protocol": "HTTP", "port": 70000}, {"port": "http", "endPort": 90}],
                "from": [{}, {"ipBlock": {"cidr": "10.0.0.0/16", "except": ["10.1.0.0/24", "10.0.1.0/24", "x"]},
                    "podSelector": {}}]}],
            "egress": [{"ports": [{"port": 100, "endPort": 50}], "to": [{"ipBlock": {"cidr": "10.0.0.0/33"}}]}],
            "policyTypes": ["Ingress", "Sideways"]}}),
        );
        assert_eq!(
            causes(network_policy(&np)),
            pairs(&[
                (
                    "spec.podSelector.matchExpressions[0].values",
                    "Required value: must be specified when `operator` is 'In' or 'NotIn'"
                ),
                (
                    "spec.ingress[0].ports[0].protocol",
                    "Unsupported value: \"HTTP\": supported values: \"TCP\", \"UDP\", \"SCTP\""
                ),
                (
                    "spec.ingress[0].ports[0].port",
                    "Invalid value: 70000: must be between 1 and 65535, inclusive"
                ),
                (
                    "spec.ingress[0].ports[1].endPort",
                    "Invalid value: 90: may not be specified when `port` is non-numeric"
                ),
                (
                    "spec.ingress[0].from[0]",
                    "Required value: must specify a peer"
                ),
                (
                    "spec.ingress[0].from[1].ipBlock.except[0]",
                    "Invalid value: \"10.1.0.0/24\": must be a strict subset of `cidr`"
                ),
                (
                    "spec.ingress[0].from[1].ipBlock.except[2]",
                    "Invalid value: \"x\": must be a valid CIDR value, (e.g. 10.9.8.0/24 or 2001:db8::/64)"
                ),
                (
                    "spec.ingress[0].from[1]",
                    "Forbidden: may not specify both ipBlock and another peer"
                ),
                (
                    "spec.egress[0].ports[0].endPort",
                    "Invalid value: 100: must be greater than or equal to `port`"
                ),
                (
                    "spec.egress[0].to[0].ipBlock.cidr",
                    "Invalid value: \"10.0.0.0/33\": must be a valid CIDR value, (e.g. 10.9.8.0/24 or 2001:db8::/64)"
                ),
                (
                    "spec.policyTypes[1]",
                    "Unsupported value: \"Sideways\": supported values: \"Ingress\", \"Egress\""
                ),
            ])
        );
    }

    #[test]
    fn ingress_rules_paths_and_backends_should_be_checked() {
        let ing = obj(
            json!({"metadata": {"annotations": {"kubernetes.io/ingress.class": "nginx"}},
            "spec": {"ingressClassName": "traefik",
            "rules": [{"host": "1.2.3.4", "http": {"paths": [
                {"path": "a//b", "pathType": "Prefix", "backend": {"service": {"name": "web"}}},
                {"path": "/x", "pathType": "Regex", "backend": {"service": {"name": "Web", "port": {"number": 70000}}}},
                {"path": "/y", "backend": {}}]}},
                {"host": "*.bad*.example.com", "http": {"paths": []}}],
            "tls": [{"hosts": ["ok.example.com"], "secretName": "Bad_Secret"}]}}),
        );
        let got = causes(ingress(&ing, None));
        let fields: Vec<&str> = got.iter().map(|(f, _)| f.as_str()).collect();
        assert_eq!(
            fields,
            [
                "spec.rules[0].host",
                "spec.rules[0].http.paths[0].path",
                "spec.rules[0].http.paths[0].path",
                "spec.rules[0].http.paths[0].backend",
                "spec.rules[0].http.paths[1].pathType",
                "spec.rules[0].http.paths[1].backend.service.name",
                "spec.rules[0].http.paths[1].backend.service.port.number",
                "spec.rules[0].http.paths[2].pathType",
                "spec.rules[1].host",
                "spec.rules[1].http.paths",
                "spec.tls[0].secretName",
                "annotations.kubernetes.io/ingress.class",
            ]
        );
        assert_eq!(
            got[0].1,
            "Invalid value: \"1.2.3.4\": must be a DNS name, not an IP address"
        );
        assert_eq!(
            got[1].1,
            "Invalid value: \"a//b\": must be an absolute path"
        );
        assert_eq!(got[2].1, "Invalid value: \"a//b\": must not contain '//'");
        assert_eq!(got[3].1, "Required value: port name or number is required");
        assert_eq!(
            got[4].1,
            "Unsupported value: \"Regex\": supported values: \"Exact\", \"ImplementationSpecific\", \"Prefix\""
        );
        assert_eq!(got[7].1, "Required value: pathType must be specified");
        assert_eq!(
            got[11].1,
            "Invalid value: \"nginx\": must match `ingressClassName` when both are specified"
        );
        let empty = obj(json!({"spec": {}}));
        assert_eq!(
            causes(ingress(&empty, None)),
            pairs(&[(
                "spec",
                "Invalid value: null: either `defaultBackend` or `rules` must be specified"
            )])
        );
    }

    #[test]
    fn an_ingress_class_controller_should_be_a_domain_prefixed_path() {
        let class = obj(json!({"spec": {"controller": "nginx",
            "parameters": {"kind": "Params", "name": "p", "scope": "Cluster", "namespace": "x"}}}));
        assert_eq!(
            causes(ingress_class(&class)),
            pairs(&[
                (
                    "spec.controller",
                    "Invalid value: \"nginx\": must be a domain-prefixed path (such as \"acme.io/foo\")"
                ),
                (
                    "spec.parameters.namespace",
                    "Forbidden: `parameters.scope` is set to 'Cluster'"
                ),
            ])
        );
        assert_eq!(
            causes(ingress_class(&obj(json!({"spec": {}})))),
            pairs(&[("spec.controller", "Required value")])
        );
        let old = json!({"spec": {"controller": "example.com/a"}});
        let new = obj(json!({"spec": {"controller": "example.com/b"}}));
        assert_eq!(
            causes(ingress_class_update(&old, &new)),
            pairs(&[(
                "spec.controller",
                "Invalid value: \"example.com/b\": field is immutable"
            )])
        );
    }
}
