//! The `LimitRanger` admission plugin: the LimitRanges of a new Pod's namespace default its
//! containers' resources (mutating: an item of type `Container` gives its `default` as limits
//! and its `defaultRequest` as requests to every container that sets neither, and the Pod gets
//! the annotation `kubernetes.io/limit-ranger` naming what was set), then bound them
//! (validating: `min`, `max` and `maxLimitRequestRatio` per container, per Pod for the sum of
//! its containers, and per PersistentVolumeClaim for its storage request). Every violation of
//! one request comes in one `403`, in kube-apiserver's words (`maximum cpu usage per Container
//! is 1, but limit is 2`), several as a bracketed list.
//!
//! A LimitRange is read as kube-apiserver stores it, with its item defaults: for a `Container`
//! item, `default` from `max`, then `defaultRequest` from `default`, then from `min`.
//! LimitRanges apply in name order, the resources of an item in name order (kube-apiserver
//! iterates Go maps, so a request breaking several rules may list them in another order).

use std::collections::BTreeMap;

use serde_json::{Map, Value, json};

use super::quantity::Quantity;
use super::{Attributes, Plugin, aggregate};
use crate::defaults::json::{existing, items, object};
use crate::status::ApiResult;

const ANNOTATION: &str = "kubernetes.io/limit-ranger";

/// The plugin.
pub(super) struct LimitRanger;

/// A resource list, by resource name.
type Resources = BTreeMap<String, Quantity>;

fn resources(v: Option<&Value>) -> Resources {
    v.and_then(Value::as_object)
        .into_iter()
        .flatten()
        .filter_map(|(k, q)| Some((k.clone(), Quantity::from_value(q)?)))
        .collect()
}

/// One item of a LimitRange, with kube-apiserver's defaults.
struct Item {
    kind: String,
    max: Resources,
    min: Resources,
    default: Vec<(String, Value)>,
    default_request: Vec<(String, Value)>,
    ratio: Resources,
}

fn raw(v: Option<&Value>) -> Vec<(String, Value)> {
    v.and_then(Value::as_object)
        .map(|m| m.iter().map(|(k, v)| (k.clone(), v.clone())).collect())
        .unwrap_or_default()
}

fn put(list: &mut Vec<(String, Value)>, from: &[(String, Value)]) {
    for (k, v) in from {
        if !list.iter().any(|(have, _)| have == k) {
            list.push((k.clone(), v.clone()));
        }
    }
}

/// The items of the LimitRanges of `namespace`, in name order.
fn items_of(a: &Attributes<'_>) -> Vec<Item> {
    let mut out = Vec::new();
    for key in a.store.keys("/limitranges", Some(a.namespace)) {
        let Some(stored) = a.store.get("/limitranges", &key) else {
            continue;
        };
        let limits = stored
            .value
            .pointer("/spec/limits")
            .and_then(Value::as_array);
        for l in limits.into_iter().flatten() {
            let kind = l.get("type").and_then(Value::as_str).unwrap_or_default();
            let mut item = Item {
                kind: kind.to_owned(),
                max: resources(l.get("max")),
                min: resources(l.get("min")),
                default: raw(l.get("default")),
                default_request: raw(l.get("defaultRequest")),
                ratio: resources(l.get("maxLimitRequestRatio")),
            };
            if kind == "Container" {
                put(&mut item.default, &raw(l.get("max")));
                let default = item.default.clone();
                put(&mut item.default_request, &default);
                put(&mut item.default_request, &raw(l.get("min")));
            }
            out.push(item);
        }
    }
    out
}

/// Gives a container the defaults it lacks; what was set, as the annotation names it.
fn merge(
    c: &mut Map<String, Value>,
    limits: &[(String, Value)],
    requests: &[(String, Value)],
    what: &str,
    notes: &mut Vec<String>,
) {
    let name = c
        .get("name")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_owned();
    let Some(r) = object(c, "resources") else {
        return;
    };
    let mut set = |field: &str, defaults: &[(String, Value)]| {
        let mut names = Vec::new();
        if defaults.is_empty() {
            return names;
        }
        if let Some(list) = object(r, field) {
            for (k, v) in defaults {
                if !list.contains_key(k) {
                    list.insert(k.clone(), v.clone());
                    names.push(k.clone());
                }
            }
        }
        names.sort();
        names
    };
    let set_requests = set("requests", requests);
    let set_limits = set("limits", limits);
    if !set_requests.is_empty() {
        notes.push(format!(
            "{} request for {what} {name}",
            set_requests.join(", ")
        ));
    }
    if !set_limits.is_empty() {
        notes.push(format!("{} limit for {what} {name}", set_limits.join(", ")));
    }
}

impl Plugin for LimitRanger {
    fn name(&self) -> &'static str {
        "LimitRanger"
    }

    fn admit_create(&self, a: &Attributes<'_>, obj: &mut Map<String, Value>) -> ApiResult<()> {
        if !a.is_core("Pod") {
            return Ok(());
        }
        let mut limits = Vec::new();
        let mut requests = Vec::new();
        for item in items_of(a).into_iter().filter(|i| i.kind == "Container") {
            // A later item's value wins, as in kube-apiserver's map.
            for (k, v) in item.default {
                limits.retain(|(have, _): &(String, Value)| *have != k);
                limits.push((k, v));
            }
            for (k, v) in item.default_request {
                requests.retain(|(have, _): &(String, Value)| *have != k);
                requests.push((k, v));
            }
        }
        if limits.is_empty() && requests.is_empty() {
            return Ok(());
        }
        let mut notes = Vec::new();
        if let Some(spec) = existing(obj, "spec") {
            for (list, what) in [
                ("containers", "container"),
                ("initContainers", "init container"),
            ] {
                for c in items(spec, list) {
                    merge(c, &limits, &requests, what, &mut notes);
                }
            }
        }
        if !notes.is_empty()
            && let Some(meta) = object(obj, "metadata")
            && let Some(annotations) = object(meta, "annotations")
        {
            annotations.insert(
                ANNOTATION.into(),
                json!(format!("LimitRanger plugin set: {}", notes.join("; "))),
            );
        }
        Ok(())
    }

    fn validate_create(&self, a: &Attributes<'_>, obj: &Map<String, Value>) -> ApiResult<()> {
        let errors = if a.is_core("Pod") {
            validate_pod(&items_of(a), obj)
        } else if a.is_core("PersistentVolumeClaim") {
            validate_claim(&items_of(a), obj)
        } else {
            return Ok(());
        };
        if errors.is_empty() {
            Ok(())
        } else {
            Err(a.forbidden(&aggregate(&errors)))
        }
    }
}

fn min_constraint(
    kind: &str,
    resource: &str,
    enforced: Quantity,
    requests: &Resources,
    limits: &Resources,
) -> Option<String> {
    let Some(request) = requests.get(resource) else {
        return Some(format!(
            "minimum {resource} usage per {kind} is {enforced}.  No request is specified"
        ));
    };
    if *request < enforced {
        return Some(format!(
            "minimum {resource} usage per {kind} is {enforced}, but request is {request}"
        ));
    }
    match limits.get(resource) {
        Some(limit) if *limit < enforced => Some(format!(
            "minimum {resource} usage per {kind} is {enforced}, but limit is {limit}"
        )),
        _ => None,
    }
}

fn max_constraint(
    kind: &str,
    resource: &str,
    enforced: Quantity,
    requests: &Resources,
    limits: &Resources,
) -> Option<String> {
    let Some(limit) = limits.get(resource) else {
        return Some(format!(
            "maximum {resource} usage per {kind} is {enforced}.  No limit is specified"
        ));
    };
    if *limit > enforced {
        return Some(format!(
            "maximum {resource} usage per {kind} is {enforced}, but limit is {limit}"
        ));
    }
    match requests.get(resource) {
        Some(request) if *request > enforced => Some(format!(
            "maximum {resource} usage per {kind} is {enforced}, but request is {request}"
        )),
        _ => None,
    }
}

fn max_request_constraint(
    kind: &str,
    resource: &str,
    enforced: Quantity,
    requests: &Resources,
) -> Option<String> {
    match requests.get(resource) {
        None => Some(format!(
            "maximum {resource} usage per {kind} is {enforced}.  No request is specified"
        )),
        Some(request) if *request > enforced => Some(format!(
            "maximum {resource} usage per {kind} is {enforced}, but request is {request}"
        )),
        _ => None,
    }
}

fn ratio_constraint(
    kind: &str,
    resource: &str,
    enforced: Quantity,
    requests: &Resources,
    limits: &Resources,
) -> Option<String> {
    let request = requests.get(resource).filter(|q| !q.is_zero());
    let limit = limits.get(resource).filter(|q| !q.is_zero());
    let Some(request) = request else {
        return Some(format!(
            "{resource} max limit to request ratio per {kind} is {enforced}, but no request is specified or request is 0"
        ));
    };
    let Some(limit) = limit else {
        return Some(format!(
            "{resource} max limit to request ratio per {kind} is {enforced}, but no limit is specified or limit is 0"
        ));
    };
    // kube-apiserver compares milli values (whole values beyond their range).
    let (l, r) = (limit.milli_value() as f64, request.milli_value() as f64);
    let observed = l / r;
    if observed * 1000.0 > enforced.milli_value() as f64 {
        return Some(format!(
            "{resource} max limit to request ratio per {kind} is {enforced}, but provided ratio is {observed:.6}"
        ));
    }
    None
}

/// The checks of one item against one set of requests and limits.
fn check(
    item: &Item,
    kind: &str,
    requests: &Resources,
    limits: &Resources,
    errors: &mut Vec<String>,
) {
    for (resource, q) in &item.min {
        errors.extend(min_constraint(kind, resource, *q, requests, limits));
    }
    for (resource, q) in &item.max {
        errors.extend(max_constraint(kind, resource, *q, requests, limits));
    }
    for (resource, q) in &item.ratio {
        errors.extend(ratio_constraint(kind, resource, *q, requests, limits));
    }
}

fn containers<'a>(spec: &'a Value, list: &str) -> impl Iterator<Item = &'a Value> {
    spec.get(list)
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
}

fn container_resources(c: &Value) -> (Resources, Resources) {
    (
        resources(c.pointer("/resources/requests")),
        resources(c.pointer("/resources/limits")),
    )
}

/// A Pod's requests or limits: the sum over its containers, at least the largest of its init
/// containers (`resourcehelper.PodRequests` / `PodLimits` without overhead).
fn pod_total(spec: &Value, field: usize) -> Resources {
    let pick = |c: &Value| {
        let (r, l) = container_resources(c);
        if field == 0 { r } else { l }
    };
    let mut total = Resources::new();
    for c in containers(spec, "containers") {
        for (k, q) in pick(c) {
            let sum = total.get(&k).map_or(q, |t| t.add(q));
            total.insert(k, sum);
        }
    }
    for c in containers(spec, "initContainers") {
        for (k, q) in pick(c) {
            if total.get(&k).is_none_or(|t| q > *t) {
                total.insert(k, q);
            }
        }
    }
    total
}

fn validate_pod(items: &[Item], obj: &Map<String, Value>) -> Vec<String> {
    let spec = obj.get("spec").cloned().unwrap_or(json!({}));
    let mut errors = Vec::new();
    for item in items {
        match item.kind.as_str() {
            "Container" => {
                for list in ["containers", "initContainers"] {
                    for c in containers(&spec, list) {
                        let (requests, limits) = container_resources(c);
                        check(item, "Container", &requests, &limits, &mut errors);
                    }
                }
            }
            "Pod" => {
                let (requests, limits) = (pod_total(&spec, 0), pod_total(&spec, 1));
                check(item, "Pod", &requests, &limits, &mut errors);
            }
            _ => {}
        }
    }
    errors
}

fn validate_claim(items: &[Item], obj: &Map<String, Value>) -> Vec<String> {
    let requests = resources(obj.pointer_value("/spec/resources/requests"));
    let mut errors = Vec::new();
    for item in items.iter().filter(|i| i.kind == "PersistentVolumeClaim") {
        for (resource, q) in &item.min {
            errors.extend(min_constraint(
                "PersistentVolumeClaim",
                resource,
                *q,
                &requests,
                &Resources::new(),
            ));
        }
        for (resource, q) in &item.max {
            errors.extend(max_request_constraint(
                "PersistentVolumeClaim",
                resource,
                *q,
                &requests,
            ));
        }
    }
    errors
}

/// `Value::pointer` on a map.
trait PointerValue {
    fn pointer_value(&self, pointer: &str) -> Option<&Value>;
}

impl PointerValue for Map<String, Value> {
    fn pointer_value(&self, pointer: &str) -> Option<&Value> {
        let (first, rest) = pointer.trim_start_matches('/').split_once('/')?;
        self.get(first)?.pointer(&format!("/{rest}"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn item(v: Value) -> Item {
        Item {
            kind: v["type"].as_str().unwrap().to_owned(),
            max: resources(v.get("max")),
            min: resources(v.get("min")),
            default: raw(v.get("default")),
            default_request: raw(v.get("defaultRequest")),
            ratio: resources(v.get("maxLimitRequestRatio")),
        }
    }

    #[test]
    fn a_ratio_should_be_printed_with_six_decimals() {
        let item = item(json!({"type": "Container", "maxLimitRequestRatio": {"memory": "1.5"}}));
        let pod = json!({"spec": {"containers": [{"name": "a", "resources": {
            "requests": {"memory": "1Gi"}, "limits": {"memory": "2Gi"}}}]}});
        assert_eq!(
            validate_pod(&[item], pod.as_object().unwrap()),
            [
                "memory max limit to request ratio per Container is 1500m, but provided ratio is 2.000000"
            ]
        );
    }

    #[test]
    fn init_containers_should_count_as_their_largest_for_a_pod() {
        let spec = json!({"containers": [
            {"resources": {"limits": {"memory": "100Mi"}}},
            {"resources": {"limits": {"memory": "100Mi"}}}
        ], "initContainers": [{"resources": {"limits": {"memory": "300Mi"}}}]});
        assert_eq!(pod_total(&spec, 1)["memory"].to_string(), "300Mi");
    }
}
