//! core/v1 kinds, as kube-apiserver's `pkg/apis/core/validation`: ConfigMaps (keys,
//! `binaryData` duplicates, `immutable`), Secrets (keys, per-type required keys, `type` and
//! `immutable`), Services (ports, type, port names), Pods (containers: names, images, ports,
//! duplicates).

use std::collections::HashSet;

use serde_json::{Map, Value, json};

use super::field::FieldError;
use super::names;

fn obj_map<'a>(v: &'a Map<String, Value>, key: &str) -> Option<&'a Map<String, Value>> {
    v.get(key).and_then(Value::as_object)
}

/// ConfigMap keys: config keys, none in both `data` and `binaryData`.
pub(crate) fn config_map(obj: &Map<String, Value>) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let binary = obj_map(obj, "binaryData");
    if let Some(data) = obj_map(obj, "data") {
        for key in data.keys() {
            for msg in names::config_map_key(key) {
                errs.push(FieldError::invalid(
                    format!("data[{key}]"),
                    &json!(key),
                    &msg,
                ));
            }
            if binary.is_some_and(|b| b.contains_key(key)) {
                errs.push(FieldError::invalid(
                    format!("data[{key}]"),
                    &json!(key),
                    "duplicate of key present in binaryData",
                ));
            }
        }
    }
    if let Some(binary) = binary {
        for key in binary.keys() {
            for msg in names::config_map_key(key) {
                errs.push(FieldError::invalid(
                    format!("binaryData[{key}]"),
                    &json!(key),
                    &msg,
                ));
            }
        }
    }
    errs
}

/// An immutable ConfigMap or Secret keeps its data.
pub(crate) fn immutable_data(old: &Value, new: &Map<String, Value>) -> Vec<FieldError> {
    let mut errs = Vec::new();
    if old.get("immutable").and_then(Value::as_bool) != Some(true) {
        return errs;
    }
    for key in ["data", "binaryData"] {
        if old.get(key) != new.get(key) {
            errs.push(FieldError::forbidden(
                key,
                "field is immutable when `immutable` is set",
            ));
        }
    }
    if new.get("immutable").and_then(Value::as_bool) != Some(true) {
        errs.push(FieldError::forbidden(
            "immutable",
            "field is immutable when `immutable` is set",
        ));
    }
    errs
}

/// Secret keys and the keys each type requires.
pub(crate) fn secret(obj: &Map<String, Value>) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let data = obj_map(obj, "data");
    if let Some(data) = data {
        for key in data.keys() {
            for msg in names::config_map_key(key) {
                errs.push(FieldError::invalid(
                    format!("data[{key}]"),
                    &json!(key),
                    &msg,
                ));
            }
        }
    }
    let has = |k: &str| data.is_some_and(|d| d.contains_key(k));
    match obj.get("type").and_then(Value::as_str).unwrap_or("Opaque") {
        "kubernetes.io/tls" => {
            for key in ["tls.crt", "tls.key"] {
                if !has(key) {
                    errs.push(FieldError::required(format!("data[{key}]"), ""));
                }
            }
        }
        "kubernetes.io/basic-auth" if !has("username") && !has("password") => {
            errs.push(FieldError::required("data[username]", ""));
            errs.push(FieldError::required("data[password]", ""));
        }
        "kubernetes.io/ssh-auth" if !has("ssh-privatekey") => {
            errs.push(FieldError::required("data[ssh-privatekey]", ""));
        }
        "kubernetes.io/dockerconfigjson" if !has(".dockerconfigjson") => {
            errs.push(FieldError::required("data[.dockerconfigjson]", ""));
        }
        _ => {}
    }
    errs
}

/// A Secret's `type` cannot change.
pub(crate) fn secret_update(old: &Value, new: &Map<String, Value>) -> Vec<FieldError> {
    let old_type = old.get("type").and_then(Value::as_str).unwrap_or("Opaque");
    let new_type = new.get("type").and_then(Value::as_str).unwrap_or("Opaque");
    if old_type == new_type {
        return Vec::new();
    }
    vec![FieldError::invalid(
        "type",
        &json!(new_type),
        "field is immutable",
    )]
}

fn port_range(field: String, value: &Value, errs: &mut Vec<FieldError>) {
    if let Some(p) = value.as_i64()
        && !(1..=65535).contains(&p)
    {
        errs.push(FieldError::invalid(
            field,
            value,
            "must be between 1 and 65535, inclusive",
        ));
    }
}

/// Service ports (range, names when several) and type.
pub(crate) fn service(obj: &Map<String, Value>) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let Some(spec) = obj_map(obj, "spec") else {
        return errs;
    };
    let ports = spec
        .get("ports")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    let ty = spec
        .get("type")
        .and_then(Value::as_str)
        .unwrap_or("ClusterIP");
    let headless = spec.get("clusterIP").and_then(Value::as_str) == Some("None");
    if ports.is_empty() && !headless && ty != "ExternalName" {
        errs.push(FieldError::required("spec.ports", ""));
    }
    let mut names: Vec<&str> = Vec::new();
    for (i, port) in ports.iter().enumerate() {
        let name = port.get("name").and_then(Value::as_str).unwrap_or_default();
        if ports.len() > 1 && name.is_empty() {
            errs.push(FieldError::required(format!("spec.ports[{i}].name"), ""));
        } else if !name.is_empty() {
            if names.contains(&name) {
                errs.push(FieldError::duplicate(
                    format!("spec.ports[{i}].name"),
                    &json!(name),
                ));
            } else {
                names.push(name);
            }
        }
        if let Some(p) = port.get("port") {
            port_range(format!("spec.ports[{i}].port"), p, &mut errs);
        }
        if let Some(t) = port.get("targetPort").filter(|t| t.is_number()) {
            port_range(format!("spec.ports[{i}].targetPort"), t, &mut errs);
        }
    }
    // The same port twice for one protocol; the value shown is the internal `ServicePort` key
    // (only its protocol and port set) as Go encodes it.
    let mut seen: Vec<(&str, i64)> = Vec::new();
    for (i, port) in ports.iter().enumerate() {
        let protocol = port
            .get("protocol")
            .and_then(Value::as_str)
            .unwrap_or_default();
        let number = port.get("port").and_then(Value::as_i64).unwrap_or_default();
        if seen.contains(&(protocol, number)) {
            errs.push(FieldError {
                field: format!("spec.ports[{i}]"),
                reason: "FieldValueDuplicate",
                message: format!(
                    "Duplicate value: {{\"Name\":\"\",\"Protocol\":{},\"AppProtocol\":null,\"Port\":{number},\"TargetPort\":0,\"NodePort\":0}}",
                    json!(protocol)
                ),
            });
        } else {
            seen.push((protocol, number));
        }
    }
    if !matches!(
        ty,
        "ClusterIP" | "ExternalName" | "LoadBalancer" | "NodePort"
    ) {
        errs.push(FieldError::not_supported(
            "spec.type",
            &json!(ty),
            &["ClusterIP", "ExternalName", "LoadBalancer", "NodePort"],
        ));
    }
    errs
}

/// The containers of a pod spec at `path` (`spec` of a Pod, `spec.template.spec` of a
/// workload).
pub(crate) fn pod_spec(spec: Option<&Value>, path: &str) -> Vec<FieldError> {
    let mut errs = super::volumes::validate(spec, path);
    errs.extend(super::pod_policies::validate(spec, path));
    let containers = spec
        .and_then(|s| s.get("containers"))
        .and_then(Value::as_array);
    let Some(containers) = containers.filter(|c| !c.is_empty()) else {
        errs.push(FieldError::required(format!("{path}.containers"), ""));
        return errs;
    };
    let mut seen = HashSet::new();
    for (i, c) in containers.iter().enumerate() {
        let at = format!("{path}.containers[{i}]");
        names::check_entry_name(&at, c, &mut seen, &mut errs);
        if c.get("image")
            .and_then(Value::as_str)
            .is_none_or(str::is_empty)
        {
            errs.push(FieldError::required(format!("{at}.image"), ""));
        }
        for (j, p) in c
            .get("ports")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .enumerate()
        {
            if let Some(port) = p.get("containerPort") {
                port_range(format!("{at}.ports[{j}].containerPort"), port, &mut errs);
            }
        }
    }
    // `ValidatePodSpec`: a deadline, when set, is between 1 and the largest int32.
    if let Some(deadline) = spec.and_then(|s| s.get("activeDeadlineSeconds"))
        && deadline
            .as_i64()
            .is_none_or(|d| !(1..=i64::from(i32::MAX)).contains(&d))
    {
        errs.push(FieldError::invalid(
            format!("{path}.activeDeadlineSeconds"),
            deadline,
            "must be between 1 and 2147483647, inclusive",
        ));
    }
    errs
}
