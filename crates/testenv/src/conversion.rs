//! Conversion between the versions of a built-in resource that share one storage, as
//! kube-apiserver converts through its internal types: core/v1 Events and events.k8s.io/v1
//! Events are one resource (stored as core/v1), so an Event written through either API reads
//! through the other with its fields renamed (`regarding` ⇄ `involvedObject`, `note` ⇄
//! `message`, `reportingController` ⇄ `reportingComponent`, `deprecated*` ⇄ `source`,
//! `firstTimestamp`, `lastTimestamp`, `count`).
//!
//! Both forms carry what Go always encodes: the empty event source and the `null` timestamps.

use serde_json::{Map, Value, json};

use crate::registry::ResourceDef;
use crate::store::Stored;

/// Field names of events.k8s.io/v1 and their core/v1 counterparts; the others are the same.
const EVENT_FIELDS: &[(&str, &str)] = &[
    ("regarding", "involvedObject"),
    ("note", "message"),
    ("reportingController", "reportingComponent"),
    ("deprecatedSource", "source"),
    ("deprecatedFirstTimestamp", "firstTimestamp"),
    ("deprecatedLastTimestamp", "lastTimestamp"),
    ("deprecatedCount", "count"),
];

fn is_events_v1(def: &ResourceDef) -> bool {
    !def.custom && def.group == "events.k8s.io" && def.kind == "Event"
}

fn is_core_event(def: &ResourceDef) -> bool {
    !def.custom && def.group.is_empty() && def.kind == "Event"
}

/// Renames the members of `obj` from one side of [`EVENT_FIELDS`] to the other.
fn rename(obj: &mut Map<String, Value>, to_core: bool) {
    for (events, core) in EVENT_FIELDS {
        let (from, to) = if to_core {
            (events, core)
        } else {
            (core, events)
        };
        match obj.remove(*from) {
            Some(v) => {
                obj.insert((*to).to_owned(), v);
            }
            None => {
                obj.remove(*to);
            }
        }
    }
}

/// The members Go encodes even when they are empty, in the form `names` gives them
/// (`[source, firstTimestamp, lastTimestamp, involvedObject]`).
fn always_encoded(obj: &mut Map<String, Value>, names: [&str; 4]) {
    let [source, first, last, object] = names;
    for (key, empty) in [
        (source, json!({})),
        (first, Value::Null),
        (last, Value::Null),
        ("eventTime", Value::Null),
        (object, json!({})),
    ] {
        obj.entry(key).or_insert(empty);
    }
}

/// A field label of `def`'s version as its storage names the field (`regarding.name` of an
/// events.k8s.io Event is `involvedObject.name`); `None` when it is the same.
pub(crate) fn field_label(def: &ResourceDef, field: &str) -> Option<String> {
    if !is_events_v1(def) {
        return None;
    }
    EVENT_FIELDS.iter().find_map(|(events, core)| {
        let rest = field.strip_prefix(events)?;
        (rest.is_empty() || rest.starts_with('.')).then(|| format!("{core}{rest}"))
    })
}

/// An object written through `def` as its storage holds it.
pub(crate) fn to_storage(def: &ResourceDef, mut value: Value) -> Value {
    if let Some(obj) = value.as_object_mut() {
        crate::validation::unknown_fields::as_stored(def, obj);
    }
    if !(is_events_v1(def) || is_core_event(def)) {
        return value;
    }
    let Value::Object(mut obj) = value else {
        return value;
    };
    if obj.get("apiVersion").and_then(Value::as_str) == Some("events.k8s.io/v1") {
        rename(&mut obj, true);
        obj.insert("apiVersion".into(), json!("v1"));
    }
    always_encoded(
        &mut obj,
        [
            "source",
            "firstTimestamp",
            "lastTimestamp",
            "involvedObject",
        ],
    );
    Value::Object(obj)
}

/// A stored object as `def`'s version serves it; `None` when it is served as stored.
pub(crate) fn from_storage(def: &ResourceDef, stored: &Value) -> Option<Value> {
    if !is_events_v1(def) || stored.get("apiVersion").and_then(Value::as_str) != Some("v1") {
        return None;
    }
    let mut obj = stored.as_object()?.clone();
    rename(&mut obj, false);
    obj.insert("apiVersion".into(), json!("events.k8s.io/v1"));
    always_encoded(
        &mut obj,
        [
            "deprecatedSource",
            "deprecatedFirstTimestamp",
            "deprecatedLastTimestamp",
            "regarding",
        ],
    );
    Some(Value::Object(obj))
}

/// A stored object as `def`'s version reads it, for the handlers that change it.
pub(crate) fn stored_as(def: &ResourceDef, stored: &Stored) -> Stored {
    match from_storage(def, &stored.value) {
        Some(v) => Stored::new(v),
        None => stored.clone(),
    }
}

/// What converting a built-in object of `def`'s version to kube-apiserver's internal type and
/// back makes of it, beyond its `null`s: a Pod's singular `status.podIP` / `status.hostIP` and
/// their lists (`podIPs`, `hostIPs`), of which the internal type keeps only the list. The
/// singular value wins when both are set and differ (the list becomes just it), fills an empty
/// list, and is always written back as the list's first address.
pub(crate) fn round_trip(def: &ResourceDef, obj: &mut Map<String, Value>) {
    if def.custom || !def.group.is_empty() || def.kind != "Pod" {
        return;
    }
    let Some(status) = obj.get_mut("status").and_then(Value::as_object_mut) else {
        return;
    };
    for (single, plural) in [("podIP", "podIPs"), ("hostIP", "hostIPs")] {
        let one = status
            .get(single)
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_owned();
        let first = status
            .get(plural)
            .and_then(Value::as_array)
            .and_then(|l| l.first())
            .map(|f| {
                f.get("ip")
                    .and_then(Value::as_str)
                    .unwrap_or_default()
                    .to_owned()
            });
        if !one.is_empty() && first.as_deref().is_none_or(|f| f != one) {
            status.insert(plural.into(), json!([{"ip": one}]));
        }
        let first = status
            .get(plural)
            .and_then(Value::as_array)
            .and_then(|l| l.first())
            .map(|f| {
                f.get("ip")
                    .and_then(Value::as_str)
                    .unwrap_or_default()
                    .to_owned()
            });
        match first {
            Some(ip) if !ip.is_empty() => {
                status.insert(single.into(), Value::String(ip));
            }
            Some(_) => {
                status.remove(single);
            }
            None => {}
        }
    }
}

#[cfg(test)]
mod round_trip_tests {
    use super::*;

    fn pod_def() -> ResourceDef {
        crate::registry::builtins()
            .into_iter()
            .find(|d| d.group.is_empty() && d.kind == "Pod")
            .unwrap()
    }

    fn converted(status: Value) -> Value {
        let mut obj = Map::new();
        obj.insert("status".into(), status);
        round_trip(&pod_def(), &mut obj);
        obj["status"].clone()
    }

    #[test]
    fn the_singular_pod_ip_should_win_and_fill_the_list() {
        assert_eq!(
            converted(
                json!({"podIP": "10.0.0.2", "podIPs": [{"ip": "10.0.0.1"}, {"ip": "fd00::1"}]})
            ),
            json!({"podIP": "10.0.0.2", "podIPs": [{"ip": "10.0.0.2"}]})
        );
        assert_eq!(
            converted(json!({"hostIP": "10.1.0.1"})),
            json!({"hostIP": "10.1.0.1", "hostIPs": [{"ip": "10.1.0.1"}]})
        );
        assert_eq!(
            converted(json!({"podIPs": [{"ip": "10.0.0.1"}, {"ip": "fd00::1"}]})),
            json!({"podIP": "10.0.0.1", "podIPs": [{"ip": "10.0.0.1"}, {"ip": "fd00::1"}]})
        );
        assert_eq!(
            converted(json!({"phase": "Pending"})),
            json!({"phase": "Pending"})
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::registry::builtins;

    fn def(group: &str) -> ResourceDef {
        builtins()
            .into_iter()
            .find(|d| d.group == group && d.kind == "Event")
            .unwrap()
    }

    #[test]
    fn an_events_v1_event_should_round_trip_through_core_storage() {
        let written = json!({
            "apiVersion": "events.k8s.io/v1", "kind": "Event",
            "metadata": {"name": "e1"},
            "eventTime": "2026-01-01T00:00:00.000000Z",
            "reportingController": "example.com/ctrl", "reportingInstance": "ctrl-1",
            "action": "Sync", "reason": "Synced", "type": "Normal", "note": "all good",
            "regarding": {"kind": "ConfigMap", "name": "cm1"},
            "series": {"count": 2, "lastObservedTime": "2026-01-01T00:00:01.000000Z"}
        });
        let stored = to_storage(&def("events.k8s.io"), written.clone());
        assert_eq!(stored["apiVersion"], "v1");
        assert_eq!(stored["message"], "all good");
        assert_eq!(stored["reportingComponent"], "example.com/ctrl");
        assert_eq!(stored["involvedObject"]["name"], "cm1");
        assert_eq!(stored["source"], json!({}));
        assert_eq!(stored["firstTimestamp"], Value::Null);
        assert!(stored.get("note").is_none());
        assert!(from_storage(&def(""), &stored).is_none());

        let served = from_storage(&def("events.k8s.io"), &stored).unwrap();
        let mut expected = written;
        let m = expected.as_object_mut().unwrap();
        m.insert("deprecatedSource".into(), json!({}));
        m.insert("deprecatedFirstTimestamp".into(), Value::Null);
        m.insert("deprecatedLastTimestamp".into(), Value::Null);
        assert_eq!(served, expected);
    }
}
