//! Operations on an object through its type: the set of fields it sets, the comparison of two
//! versions (added, modified, removed fields), the merge of an applied configuration into the
//! live object, and the removal of fields.

use serde_json::{Map, Value};

use super::fieldpath::{Path, PathElement, Set};
use super::schema::{ListKind, Schema, Ty};

/// How a value of some type is walked.
enum Shape<'a> {
    /// One value: a scalar, an atomic list, map or struct.
    Leaf,
    /// A struct or a granular map: each key on its own.
    Fields,
    /// A set or a list map: each item on its own.
    Items(&'a ListKind, &'a Ty),
}

fn shape<'a>(schema: &Schema, ty: &'a Ty, v: Option<&Value>) -> Shape<'a> {
    match ty {
        Ty::Scalar | Ty::Atomic => Shape::Leaf,
        Ty::Deduced => match v {
            Some(Value::Object(_)) => Shape::Fields,
            _ => Shape::Leaf,
        },
        Ty::Named(n) => match schema.resolve(n) {
            Some(def) if def.atomic => Shape::Leaf,
            _ => Shape::Fields,
        },
        Ty::Map(atomic, _) => {
            if *atomic {
                Shape::Leaf
            } else {
                Shape::Fields
            }
        }
        Ty::List(ListKind::Atomic, _) => Shape::Leaf,
        Ty::List(kind, elem) => Shape::Items(kind, elem),
    }
}

/// The path element of a list item: its key fields (with the schema's defaults for omitted
/// ones) or its value.
pub(crate) fn item_element(
    schema: &Schema,
    kind: &ListKind,
    elem: &Ty,
    item: &Value,
) -> Option<PathElement> {
    match kind {
        ListKind::Set => Some(PathElement::Value(item.clone())),
        ListKind::Map(keys) => {
            let mut fields = Vec::with_capacity(keys.len());
            for k in keys {
                let v = match item.get(k) {
                    Some(v) => v.clone(),
                    None => schema.field(elem, k).and_then(|f| f.default.clone())?,
                };
                fields.push((k.clone(), v));
            }
            fields.sort_by(|a, b| a.0.cmp(&b.0));
            Some(PathElement::Key(fields))
        }
        ListKind::Atomic => None,
    }
}

fn is_declared(schema: &Schema, ty: &Ty, key: &str) -> bool {
    schema.field(ty, key).is_some()
}

/// The fields a value sets (structured-merge-diff's `ToFieldSet`).
pub(crate) fn to_field_set(schema: &Schema, ty: &Ty, v: &Value) -> Set {
    let mut set = Set::default();
    field_set(schema, ty, v, &mut Vec::new(), &mut set);
    set
}

fn field_set(schema: &Schema, ty: &Ty, v: &Value, path: &mut Path, set: &mut Set) {
    match (shape(schema, ty, Some(v)), v) {
        (Shape::Fields, Value::Object(m)) => {
            for (k, child) in m {
                let cty = schema.child(ty, k);
                path.push(PathElement::Field(k.clone()));
                field_set(schema, &cty, child, path, set);
                let empty_map = child.as_object().is_some_and(Map::is_empty);
                if child.is_null() || empty_map || !is_declared(schema, ty, k) {
                    set.insert(path);
                }
                path.pop();
            }
        }
        (Shape::Items(kind, elem), Value::Array(items)) => {
            for item in items {
                let Some(pe) = item_element(schema, kind, elem, item) else {
                    continue;
                };
                path.push(pe);
                field_set(schema, elem, item, path, set);
                set.insert(path);
                path.pop();
            }
        }
        (Shape::Fields | Shape::Items(..), Value::Null) => {}
        _ => set.insert(path),
    }
}

/// The fields that differ between two versions of an object.
#[derive(Debug, Default)]
pub(crate) struct Comparison {
    /// Fields only the new version has.
    pub(crate) added: Set,
    /// Fields whose value changed.
    pub(crate) modified: Set,
    /// Fields only the old version has.
    pub(crate) removed: Set,
}

impl Comparison {
    /// The comparison without the fields of `ignored` and below them.
    pub(crate) fn exclude(self, ignored: &Set) -> Comparison {
        Comparison {
            added: self.added.recursive_difference(ignored),
            modified: self.modified.recursive_difference(ignored),
            removed: self.removed.recursive_difference(ignored),
        }
    }
}

/// Compares two versions of an object (structured-merge-diff's `Compare`).
pub(crate) fn compare(schema: &Schema, ty: &Ty, old: &Value, new: &Value) -> Comparison {
    let mut c = Comparison::default();
    compare_at(schema, ty, Some(old), Some(new), &mut Vec::new(), &mut c);
    c
}

fn is_empty_container(v: Option<&Value>) -> bool {
    match v {
        None | Some(Value::Null) => true,
        Some(Value::Object(m)) => m.is_empty(),
        Some(Value::Array(a)) => a.is_empty(),
        _ => false,
    }
}

/// Whether two values can be walked together (null goes with anything, as an absent value).
fn same_kind(a: Option<&Value>, b: Option<&Value>) -> bool {
    match (a, b) {
        (None | Some(Value::Null), _) | (_, None | Some(Value::Null)) => true,
        (Some(Value::Object(_)), Some(Value::Object(_)))
        | (Some(Value::Array(_)), Some(Value::Array(_))) => true,
        (Some(Value::Object(_) | Value::Array(_)), Some(_))
        | (Some(_), Some(Value::Object(_) | Value::Array(_))) => false,
        _ => true,
    }
}

fn compare_at(
    schema: &Schema,
    ty: &Ty,
    old: Option<&Value>,
    new: Option<&Value>,
    path: &mut Path,
    c: &mut Comparison,
) {
    let probe = new.or(old);
    let sh = shape(schema, ty, probe);
    let leaf = matches!(sh, Shape::Leaf)
        || (is_empty_container(old) && is_empty_container(new))
        || !same_kind(old, new)
        || !matches!(probe, Some(Value::Object(_) | Value::Array(_)));
    if leaf {
        match (old, new) {
            (None, _) => c.added.insert(path),
            (_, None) => c.removed.insert(path),
            (Some(o), Some(n)) if o != n => c.modified.insert(path),
            _ => {}
        }
        return;
    }
    match sh {
        Shape::Fields => {
            let empty = Map::new();
            let om = old.and_then(Value::as_object).unwrap_or(&empty);
            let nm = new.and_then(Value::as_object).unwrap_or(&empty);
            for (k, ov) in om {
                let cty = schema.child(ty, k);
                path.push(PathElement::Field(k.clone()));
                compare_at(schema, &cty, Some(ov), nm.get(k), path, c);
                path.pop();
            }
            for (k, nv) in nm {
                if om.contains_key(k) {
                    continue;
                }
                let cty = schema.child(ty, k);
                path.push(PathElement::Field(k.clone()));
                compare_at(schema, &cty, None, Some(nv), path, c);
                path.pop();
            }
        }
        Shape::Items(kind, elem) => {
            let empty = Vec::new();
            let ol = old.and_then(Value::as_array).unwrap_or(&empty);
            let nl = new.and_then(Value::as_array).unwrap_or(&empty);
            let index = |l: &'_ [Value]| -> Vec<(PathElement, Value)> {
                let mut out: Vec<(PathElement, Value)> = Vec::new();
                for item in l {
                    if let Some(pe) = item_element(schema, kind, elem, item)
                        && !out.iter().any(|(p, _)| *p == pe)
                    {
                        out.push((pe, item.clone()));
                    }
                }
                out
            };
            let oi = index(ol);
            let ni = index(nl);
            for (pe, ov) in &oi {
                let nv = ni.iter().find(|(p, _)| p == pe).map(|(_, v)| v);
                path.push(pe.clone());
                compare_at(schema, elem, Some(ov), nv, path, c);
                path.pop();
            }
            for (pe, nv) in &ni {
                if oi.iter().any(|(p, _)| p == pe) {
                    continue;
                }
                path.push(pe.clone());
                compare_at(schema, elem, None, Some(nv), path, c);
                path.pop();
            }
        }
        Shape::Leaf => {}
    }
    match (old, new) {
        (None, _) => c.added.insert(path),
        (_, None) => c.removed.insert(path),
        _ => {}
    }
}

/// Merges an applied configuration into the live object (structured-merge-diff's `Merge`:
/// the configuration's values win, list maps and sets merge item by item).
pub(crate) fn merge(
    schema: &Schema,
    ty: &Ty,
    live: Option<&Value>,
    config: Option<&Value>,
) -> Value {
    let probe = config.or(live);
    let sh = shape(schema, ty, probe);
    let leaf = matches!(sh, Shape::Leaf)
        || (is_empty_container(live) && is_empty_container(config))
        || !same_kind(live, config)
        || !matches!(probe, Some(Value::Object(_) | Value::Array(_)));
    if leaf {
        return config.or(live).cloned().unwrap_or(Value::Null);
    }
    match sh {
        Shape::Fields => {
            let empty = Map::new();
            let lm = live.and_then(Value::as_object).unwrap_or(&empty);
            let cm = config.and_then(Value::as_object).unwrap_or(&empty);
            let mut out = Map::new();
            for (k, lv) in lm {
                let cty = schema.child(ty, k);
                out.insert(k.clone(), merge(schema, &cty, Some(lv), cm.get(k)));
            }
            for (k, cv) in cm {
                if !lm.contains_key(k) {
                    let cty = schema.child(ty, k);
                    out.insert(k.clone(), merge(schema, &cty, None, Some(cv)));
                }
            }
            Value::Object(out)
        }
        Shape::Items(kind, elem) => {
            let empty = Vec::new();
            let ll = live.and_then(Value::as_array).unwrap_or(&empty);
            let cl = config.and_then(Value::as_array).unwrap_or(&empty);
            let pes = |l: &'_ [Value]| -> Vec<Option<PathElement>> {
                l.iter()
                    .map(|i| item_element(schema, kind, elem, i))
                    .collect()
            };
            Value::Array(merge_items(schema, elem, ll, &pes(ll), cl, &pes(cl)))
        }
        Shape::Leaf => Value::Null,
    }
}

/// The merged list: items of the configuration in its order, live items it does not name kept
/// where they were relative to the shared items.
fn merge_items(
    schema: &Schema,
    elem: &Ty,
    live: &[Value],
    live_pes: &[Option<PathElement>],
    config: &[Value],
    config_pes: &[Option<PathElement>],
) -> Vec<Value> {
    let in_config = |pe: &Option<PathElement>| pe.is_some() && config_pes.contains(pe);
    let live_item = |pe: &Option<PathElement>| {
        live_pes
            .iter()
            .position(|p| p.is_some() && p == pe)
            .map(|i| &live[i])
    };
    let mut out = Vec::with_capacity(live.len().max(config.len()));
    let mut done: Vec<&Option<PathElement>> = Vec::new();
    let (mut li, mut ci) = (0, 0);
    while li < live.len() || ci < config.len() {
        if li < live.len() {
            let pe = &live_pes[li];
            if !in_config(pe) {
                out.push(live[li].clone());
                li += 1;
                continue;
            }
            if done.contains(&pe) {
                li += 1;
                continue;
            }
        }
        if ci < config.len() {
            let pe = &config_pes[ci];
            if !done.contains(&pe) {
                out.push(merge(schema, elem, live_item(pe), Some(&config[ci])));
                done.push(pe);
            }
            ci += 1;
            continue;
        }
        li += 1;
    }
    out
}

/// Removes the fields and items of `set` from a value; containers the removal empties are
/// dropped. `None` when the value itself is removed.
pub(crate) fn remove(schema: &Schema, ty: &Ty, v: &Value, set: &Set) -> Value {
    match (shape(schema, ty, Some(v)), v) {
        (Shape::Fields, Value::Object(m)) => {
            let mut out = Map::new();
            for (k, child) in m {
                let pe = PathElement::Field(k.clone());
                if set.has(std::slice::from_ref(&pe)) {
                    continue;
                }
                match set.child(&pe) {
                    Some(sub) if !sub.is_empty() => {
                        let cty = schema.child(ty, k);
                        let r = remove(schema, &cty, child, sub);
                        if is_empty_container(Some(&r)) && !is_empty_container(Some(child)) {
                            continue;
                        }
                        out.insert(k.clone(), r);
                    }
                    _ => {
                        out.insert(k.clone(), child.clone());
                    }
                }
            }
            Value::Object(out)
        }
        (Shape::Items(kind, elem), Value::Array(items)) => {
            let mut out = Vec::new();
            for item in items {
                let pe = item_element(schema, kind, elem, item);
                match pe {
                    Some(pe) if set.has(std::slice::from_ref(&pe)) => {}
                    Some(pe) => match set.child(&pe) {
                        Some(sub) if !sub.is_empty() => {
                            out.push(remove(schema, elem, item, sub));
                        }
                        _ => out.push(item.clone()),
                    },
                    None => out.push(item.clone()),
                }
            }
            Value::Array(out)
        }
        _ => v.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn deployment() -> Schema {
        Schema::builtin("apps", "v1", "Deployment")
    }

    #[test]
    fn an_applied_deployment_should_own_its_container_by_name_and_its_selector_whole() {
        let s = deployment();
        let config = json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web"},
            "spec": {"replicas": 1, "selector": {"matchLabels": {"app": "web"}},
                "template": {"metadata": {"labels": {"app": "web"}},
                    "spec": {"containers": [{"name": "app", "image": "nginx:1.27"}]}}}});
        let set = to_field_set(&s, &s.root, &config);
        assert_eq!(
            set.to_fields_v1(),
            json!({"f:apiVersion": {}, "f:kind": {}, "f:metadata": {"f:name": {}},
                "f:spec": {"f:replicas": {}, "f:selector": {}, "f:template": {"f:metadata": {"f:labels": {"f:app": {}}},
                    "f:spec": {"f:containers": {"k:{\"name\":\"app\"}": {".": {}, "f:image": {}, "f:name": {}}}}}}})
        );
    }

    #[test]
    fn compare_should_report_new_maps_and_items_with_their_leaves() {
        let s = Schema::builtin("", "v1", "ConfigMap");
        let c = compare(&s, &s.root, &json!({}), &json!({"data": {"k": "v"}}));
        assert_eq!(
            c.added.to_fields_v1(),
            json!({"f:data": {".": {}, "f:k": {}}})
        );
        let c = compare(
            &s,
            &s.root,
            &json!({"data": {"k": "v", "gone": "1"}}),
            &json!({"data": {"k": "w"}}),
        );
        assert_eq!(c.modified.to_fields_v1(), json!({"f:data": {"f:k": {}}}));
        assert_eq!(c.removed.to_fields_v1(), json!({"f:data": {"f:gone": {}}}));
    }

    #[test]
    fn merge_should_keep_containers_the_configuration_does_not_name() {
        let s = deployment();
        let live = json!({"spec": {"template": {"spec": {"containers": [
            {"name": "a", "image": "a:1"}, {"name": "b", "image": "b:1"}]}}}});
        let config = json!({"spec": {"template": {"spec": {"containers": [
            {"name": "b", "image": "b:2"}, {"name": "c", "image": "c:1"}]}}}});
        let merged = merge(&s, &s.root, Some(&live), Some(&config));
        assert_eq!(
            merged["spec"]["template"]["spec"]["containers"],
            json!([{"name": "a", "image": "a:1"}, {"name": "b", "image": "b:2"}, {"name": "c", "image": "c:1"}])
        );
    }

    #[test]
    fn remove_should_drop_items_and_fields_of_the_set() {
        let s = Schema::builtin("", "v1", "ConfigMap");
        let mut set = Set::default();
        set.insert(&super::super::fieldpath::fields(&["data", "gone"]));
        let v = remove(&s, &s.root, &json!({"data": {"k": "v", "gone": "1"}}), &set);
        assert_eq!(v, json!({"data": {"k": "v"}}));
        let v = remove(&s, &s.root, &json!({"data": {"gone": "1"}}), &set);
        assert_eq!(v, json!({}));
    }
}
