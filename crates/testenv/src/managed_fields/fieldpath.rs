//! Field paths and field sets, as structured-merge-diff defines them: a path element names a
//! struct or map field (`f:`), a list item by its key fields (`k:`), a set item by its value
//! (`v:`) or a list item by its index (`i:`); a set is a tree of such elements, encoded in
//! `managedFields[].fieldsV1`.

use std::cmp::Ordering;
use std::collections::BTreeMap;
use std::fmt;

use serde_json::{Map, Value};

/// One step of a path into an object.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum PathElement {
    /// A field of a struct or a key of a map.
    Field(String),
    /// An item of a list map, by its key fields, sorted by name.
    Key(Vec<(String, Value)>),
    /// An item of a set, by its value.
    Value(Value),
    /// An item of a list by its position (lists without keys that are not atomic).
    Index(usize),
}

fn rank(v: &Value) -> u8 {
    match v {
        Value::Number(n) if n.is_f64() => 0,
        Value::Number(_) => 1,
        Value::String(_) => 2,
        Value::Bool(_) => 3,
        Value::Array(_) => 4,
        Value::Object(_) => 5,
        Value::Null => 6,
    }
}

/// A total order over JSON values (numbers, strings, booleans, lists, maps, null).
pub(crate) fn compare_values(a: &Value, b: &Value) -> Ordering {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) if rank(a) == rank(b) => {
            if let (Some(x), Some(y)) = (x.as_i64(), y.as_i64()) {
                x.cmp(&y)
            } else {
                let (x, y) = (x.as_f64().unwrap_or(0.0), y.as_f64().unwrap_or(0.0));
                x.partial_cmp(&y).unwrap_or(Ordering::Equal)
            }
        }
        (Value::String(x), Value::String(y)) => x.cmp(y),
        (Value::Bool(x), Value::Bool(y)) => x.cmp(y),
        (Value::Array(x), Value::Array(y)) => {
            for (l, r) in x.iter().zip(y) {
                let c = compare_values(l, r);
                if c != Ordering::Equal {
                    return c;
                }
            }
            x.len().cmp(&y.len())
        }
        (Value::Object(x), Value::Object(y)) => {
            let mut xs: Vec<_> = x.iter().collect();
            let mut ys: Vec<_> = y.iter().collect();
            xs.sort_by(|l, r| l.0.cmp(r.0));
            ys.sort_by(|l, r| l.0.cmp(r.0));
            for ((lk, lv), (rk, rv)) in xs.iter().zip(&ys) {
                let c = lk.cmp(rk).then_with(|| compare_values(lv, rv));
                if c != Ordering::Equal {
                    return c;
                }
            }
            xs.len().cmp(&ys.len())
        }
        _ => rank(a).cmp(&rank(b)),
    }
}

impl Ord for PathElement {
    fn cmp(&self, other: &Self) -> Ordering {
        use PathElement::*;
        let kind = |e: &PathElement| match e {
            Field(_) => 0,
            Key(_) => 1,
            Value(_) => 2,
            Index(_) => 3,
        };
        match (self, other) {
            (Field(a), Field(b)) => a.cmp(b),
            (Key(a), Key(b)) => {
                for ((an, av), (bn, bv)) in a.iter().zip(b) {
                    let c = an.cmp(bn).then_with(|| compare_values(av, bv));
                    if c != Ordering::Equal {
                        return c;
                    }
                }
                a.len().cmp(&b.len())
            }
            (Value(a), Value(b)) => compare_values(a, b),
            (Index(a), Index(b)) => a.cmp(b),
            _ => kind(self).cmp(&kind(other)),
        }
    }
}

impl PartialOrd for PathElement {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

/// A JSON value as structured-merge-diff prints it in a path (`"a"`, `80`, `true`).
fn value_string(v: &Value) -> String {
    serde_json::to_string(v).unwrap_or_default()
}

impl fmt::Display for PathElement {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PathElement::Field(n) => write!(f, ".{n}"),
            PathElement::Key(fields) => {
                let parts: Vec<String> = fields
                    .iter()
                    .map(|(n, v)| format!("{n}={}", value_string(v)))
                    .collect();
                write!(f, "[{}]", parts.join(","))
            }
            PathElement::Value(v) => write!(f, "[={}]", value_string(v)),
            PathElement::Index(i) => write!(f, "[{i}]"),
        }
    }
}

impl PathElement {
    /// The element as a `fieldsV1` key (`f:name`, `k:{...}`, `v:...`, `i:0`).
    fn encode(&self) -> String {
        match self {
            PathElement::Field(n) => format!("f:{n}"),
            PathElement::Key(fields) => {
                let m: Map<String, Value> = fields.iter().cloned().collect();
                format!("k:{}", value_string(&Value::Object(m)))
            }
            PathElement::Value(v) => format!("v:{}", value_string(v)),
            PathElement::Index(i) => format!("i:{i}"),
        }
    }

    fn decode(s: &str) -> Option<PathElement> {
        let (kind, rest) = s.split_once(':')?;
        Some(match kind {
            "f" => PathElement::Field(rest.to_owned()),
            "k" => {
                let Value::Object(m) = serde_json::from_str(rest).ok()? else {
                    return None;
                };
                let mut fields: Vec<(String, Value)> = m.into_iter().collect();
                fields.sort_by(|a, b| a.0.cmp(&b.0));
                PathElement::Key(fields)
            }
            "v" => PathElement::Value(serde_json::from_str(rest).ok()?),
            "i" => PathElement::Index(rest.parse().ok()?),
            _ => return None,
        })
    }
}

/// A path from the root of an object.
pub(crate) type Path = Vec<PathElement>;

/// A path as structured-merge-diff prints it (`.spec.containers[name="app"].image`).
pub(crate) fn path_string(path: &[PathElement]) -> String {
    path.iter().map(ToString::to_string).collect()
}

/// A set of paths, as a tree: `members` are the paths that end here, `children` the subtrees.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Set {
    members: BTreeMap<PathElement, ()>,
    children: BTreeMap<PathElement, Set>,
}

impl Set {
    /// Whether the set holds no path.
    pub(crate) fn is_empty(&self) -> bool {
        self.members.is_empty() && self.children.values().all(Set::is_empty)
    }

    /// Adds a path (the empty path is ignored).
    pub(crate) fn insert(&mut self, path: &[PathElement]) {
        match path {
            [] => {}
            [last] => {
                self.members.insert(last.clone(), ());
            }
            [first, rest @ ..] => self.children.entry(first.clone()).or_default().insert(rest),
        }
    }

    /// Whether the set holds exactly this path.
    pub(crate) fn has(&self, path: &[PathElement]) -> bool {
        match path {
            [] => false,
            [last] => self.members.contains_key(last),
            [first, rest @ ..] => self.children.get(first).is_some_and(|c| c.has(rest)),
        }
    }

    /// The subtree below one element.
    pub(crate) fn child(&self, pe: &PathElement) -> Option<&Set> {
        self.children.get(pe)
    }

    /// Every path of both sets.
    pub(crate) fn union(&self, other: &Set) -> Set {
        let mut out = self.clone();
        for k in other.members.keys() {
            out.members.insert(k.clone(), ());
        }
        for (k, c) in &other.children {
            let merged = match out.children.get(k) {
                Some(mine) => mine.union(c),
                None => c.clone(),
            };
            out.children.insert(k.clone(), merged);
        }
        out.prune_empty();
        out
    }

    /// The paths of `self` that `other` does not hold (exact paths, not subtrees).
    pub(crate) fn difference(&self, other: &Set) -> Set {
        let mut out = Set::default();
        for k in self.members.keys() {
            if !other.members.contains_key(k) {
                out.members.insert(k.clone(), ());
            }
        }
        for (k, c) in &self.children {
            let d = match other.children.get(k) {
                Some(o) => c.difference(o),
                None => c.clone(),
            };
            if !d.is_empty() {
                out.children.insert(k.clone(), d);
            }
        }
        out
    }

    /// The paths of `self` that are neither in `other` nor below one of its paths.
    pub(crate) fn recursive_difference(&self, other: &Set) -> Set {
        let mut out = Set::default();
        for k in self.members.keys() {
            if !other.members.contains_key(k) {
                out.members.insert(k.clone(), ());
            }
        }
        for (k, c) in &self.children {
            if other.members.contains_key(k) {
                continue;
            }
            let d = match other.children.get(k) {
                Some(o) => c.recursive_difference(o),
                None => c.clone(),
            };
            if !d.is_empty() {
                out.children.insert(k.clone(), d);
            }
        }
        out
    }

    /// The paths both sets hold.
    pub(crate) fn intersection(&self, other: &Set) -> Set {
        let mut out = Set::default();
        for k in self.members.keys() {
            if other.members.contains_key(k) {
                out.members.insert(k.clone(), ());
            }
        }
        for (k, c) in &self.children {
            if let Some(o) = other.children.get(k) {
                let i = c.intersection(o);
                if !i.is_empty() {
                    out.children.insert(k.clone(), i);
                }
            }
        }
        out
    }

    fn prune_empty(&mut self) {
        self.children.retain(|_, c| !c.is_empty());
    }

    /// Every path, in structured-merge-diff's order (each element's members before deeper
    /// paths through it).
    pub(crate) fn paths(&self) -> Vec<Path> {
        let mut out = Vec::new();
        self.collect(&mut Vec::new(), &mut out);
        out.sort();
        out
    }

    fn collect(&self, prefix: &mut Path, out: &mut Vec<Path>) {
        for k in self.members.keys() {
            let mut p = prefix.clone();
            p.push(k.clone());
            out.push(p);
        }
        for (k, c) in &self.children {
            prefix.push(k.clone());
            c.collect(prefix, out);
            prefix.pop();
        }
    }

    /// The set as `fieldsV1` JSON.
    pub(crate) fn to_fields_v1(&self) -> Value {
        let mut m = Map::new();
        let mut keys: Vec<&PathElement> = self.members.keys().chain(self.children.keys()).collect();
        keys.sort();
        keys.dedup();
        for k in keys {
            let child = self.children.get(k).filter(|c| !c.is_empty());
            let v = match child {
                Some(c) => {
                    let Value::Object(mut inner) = c.to_fields_v1() else {
                        continue;
                    };
                    if self.members.contains_key(k) {
                        let mut with_dot = Map::new();
                        with_dot.insert(".".into(), Value::Object(Map::new()));
                        with_dot.append(&mut inner);
                        inner = with_dot;
                    }
                    Value::Object(inner)
                }
                None => Value::Object(Map::new()),
            };
            m.insert(k.encode(), v);
        }
        Value::Object(m)
    }

    /// Reads `fieldsV1` JSON; `None` when it is malformed.
    pub(crate) fn from_fields_v1(v: &Value) -> Option<Set> {
        let m = v.as_object()?;
        let mut out = Set::default();
        for (k, child) in m {
            if k == "." {
                continue;
            }
            let pe = PathElement::decode(k)?;
            let cm = child.as_object()?;
            if cm.is_empty() {
                out.members.insert(pe, ());
                continue;
            }
            if cm.contains_key(".") {
                out.members.insert(pe.clone(), ());
            }
            let sub = Set::from_fields_v1(child)?;
            if !sub.is_empty() {
                out.children.insert(pe, sub);
            }
        }
        Some(out)
    }
}

/// Builds a path of field names.
pub(crate) fn fields(names: &[&str]) -> Path {
    names
        .iter()
        .map(|n| PathElement::Field((*n).to_owned()))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn fields_v1_should_round_trip_with_dot_for_a_member_that_has_children() {
        let v = json!({"f:data": {".": {}, "f:k": {}}, "f:spec": {"f:containers": {"k:{\"name\":\"app\"}": {".": {}, "f:image": {}}}}});
        let s = Set::from_fields_v1(&v).unwrap();
        assert_eq!(s.to_fields_v1(), v);
        assert!(s.has(&fields(&["data"])));
        assert!(s.has(&fields(&["data", "k"])));
        assert!(!s.has(&fields(&["spec"])));
    }

    #[test]
    fn paths_should_print_as_structured_merge_diff_prints_them() {
        let p = vec![
            PathElement::Field("spec".into()),
            PathElement::Key(vec![("name".into(), json!("app"))]),
            PathElement::Value(json!("x")),
            PathElement::Index(2),
        ];
        assert_eq!(path_string(&p), ".spec[name=\"app\"][=\"x\"][2]");
    }

    #[test]
    fn recursive_difference_should_drop_subtrees() {
        let mut a = Set::default();
        a.insert(&fields(&["status", "replicas"]));
        a.insert(&fields(&["spec", "replicas"]));
        let mut b = Set::default();
        b.insert(&fields(&["status"]));
        let d = a.recursive_difference(&b);
        assert!(!d.has(&fields(&["status", "replicas"])));
        assert!(d.has(&fields(&["spec", "replicas"])));
        assert_eq!(a.difference(&b), a);
    }
}
