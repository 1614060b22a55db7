//! The typing of a built-in kind's apply configuration, as structured-merge-diff types the patch
//! object before it merges it (`failed to create typed patch object (<ns>/<name>; <gvk>):
//! <errors>`, a `500` from kube-apiserver):
//!
//! - a field its struct does not declare: `.spec.foo: field not declared in schema` (the rest of
//!   that map is not looked at);
//! - a map where the schema wants a list, or the reverse: `.data: expected map, got &{[a b]}`
//!   (the value as Go's `%v` writes the unstructured value);
//! - a scalar of the wrong kind: `expected string, got &value.valueUnstructured{Value:1}`
//!   (`%#v`), `expected numeric (int or float), got string` (`%T`), `expected boolean, got
//!   &{x}`, `expected any scalar, got &{[a]}` (an int-or-string);
//! - an item of a list keyed by fields that lacks a key without a default: `element 0:
//!   associative list with keys has an element that omits key field "name" (and doesn't have
//!   default value)`, or is no map; two items with the same key: `duplicate entries for key
//!   [name="a"]`.
//!
//! Paths are structured-merge-diff's: `.field`, `[0]` (atomic lists), `[name="a"]` (lists keyed
//! by fields), `[="a"]` (sets). `null` is a valid value of any type. Several errors read
//! `errors:\n  <one>\n  <two>`. Numbers are Go `float64`s (the body went through JSON into a Go
//! map). Custom resources and kinds the table does not know are not typed here.

use std::collections::HashSet;

use serde_json::{Map, Value};

use super::schema::{ListKind, Schema, Ty};
use crate::registry::ResourceDef;
use crate::status::{ApiError, ApiResult};
use crate::wire::go_strconv::{go_float, go_quote};
use crate::wire::go_types::{GoType, GoTypes};

/// The root struct of kinds the table does not know (whose fields are untyped).
const UNKNOWN_ROOT: &str = "kcr.UnknownObject";

/// Types `config`, an apply configuration of the built-in kind `def`; the error is
/// kube-apiserver's `500`.
pub(crate) fn check(def: &ResourceDef, config: &Map<String, Value>) -> ApiResult<()> {
    if def.custom {
        return Ok(());
    }
    let schema = Schema::builtin(&def.group, &def.version, &def.kind);
    if matches!(&schema.root, Ty::Named(n) if &**n == UNKNOWN_ROOT) {
        return Ok(());
    }
    let types = crate::validation::unknown_fields::go_types(def);
    let walker = Walker {
        schema: &schema,
        types: types.as_deref(),
    };
    let value = Value::Object(config.clone());
    let mut errs = Vec::new();
    walker.walk(
        &schema.root,
        types.as_deref().map(|t| &t.root),
        &value,
        "",
        &mut errs,
    );
    if errs.is_empty() {
        return Ok(());
    }
    let meta = |k: &str| {
        config
            .get("metadata")
            .and_then(|m| m.get(k))
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_owned()
    };
    let text = |k: &str| config.get(k).and_then(Value::as_str).unwrap_or_default();
    let (group, version) = text("apiVersion")
        .split_once('/')
        .unwrap_or(("", text("apiVersion")));
    let message = if errs.len() == 1 {
        errs.remove(0)
    } else {
        format!("errors:\n  {}", errs.join("\n  "))
    };
    Err(ApiError::new(
        500,
        "",
        format!(
            "failed to create typed patch object ({}/{}; {group}/{version}, Kind={}): {message}",
            meta("namespace"),
            meta("name"),
            text("kind")
        ),
    ))
}

struct Walker<'a> {
    schema: &'a Schema,
    types: Option<&'a GoTypes>,
}

/// The scalar kinds of structured-merge-diff's schema.
enum Scalar {
    String,
    Numeric,
    Boolean,
    Untyped,
}

impl Walker<'_> {
    fn walk(&self, ty: &Ty, go: Option<&GoType>, v: &Value, path: &str, errs: &mut Vec<String>) {
        if v.is_null() {
            return;
        }
        let go = go.map(GoType::underlying);
        match ty {
            Ty::Deduced | Ty::Atomic => {}
            Ty::Scalar => self.scalar(go, v, path, errs),
            Ty::Named(name) => {
                let Value::Object(m) = v else {
                    errs.push(at(path, &format!("expected map, got {}", go_v_ptr(v))));
                    return;
                };
                let Some(def) = self.schema.resolve(name) else {
                    return;
                };
                let go_fields = match (go, self.types) {
                    (Some(GoType::Struct(i)), Some(t)) => t.structs.get(*i).map(|s| &s.fields),
                    _ => None,
                };
                for (k, child) in m {
                    let p = format!("{path}.{k}");
                    let Some(field) = def.fields.get(k) else {
                        errs.push(at(&p, "field not declared in schema"));
                        return;
                    };
                    let child_go = go_fields.and_then(|f| f.get(k));
                    self.walk(&field.ty, child_go, child, &p, errs);
                }
            }
            Ty::Map(_, elem) => {
                let Value::Object(m) = v else {
                    errs.push(at(path, &format!("expected map, got {}", go_v_ptr(v))));
                    return;
                };
                let elem_go = match go {
                    Some(GoType::Map(e)) => Some(&**e),
                    _ => None,
                };
                for (k, child) in m {
                    self.walk(elem, elem_go, child, &format!("{path}.{k}"), errs);
                }
            }
            Ty::List(kind, elem) => {
                let Value::Array(items) = v else {
                    errs.push(at(path, &format!("expected list, got {}", go_v_ptr(v))));
                    return;
                };
                let elem_go = match go {
                    Some(GoType::Slice(e)) => Some(&**e),
                    _ => None,
                };
                let mut seen = HashSet::new();
                for (i, item) in items.iter().enumerate() {
                    let element = match kind {
                        ListKind::Atomic => format!("[{i}]"),
                        ListKind::Set => match item {
                            Value::Object(_) => {
                                errs.push(at(path, &format!("element {i}: associative list without keys has an element that's a map type")));
                                return;
                            }
                            Value::Array(_) => {
                                errs.push(at(path, &format!("element {i}: associative list without keys has an element that's a list type")));
                                return;
                            }
                            scalar => format!("[={}]", to_string(scalar)),
                        },
                        ListKind::Map(keys) => match self.key_of(elem, keys, item) {
                            Ok(key) => key,
                            Err(e) => {
                                errs.push(at(path, &format!("element {i}: {e}")));
                                return;
                            }
                        },
                    };
                    if !matches!(kind, ListKind::Atomic) && !seen.insert(element.clone()) {
                        errs.push(at(path, &format!("duplicate entries for key {element}")));
                    }
                    self.walk(elem, elem_go, item, &format!("{path}{element}"), errs);
                }
            }
        }
    }

    /// The path element of an item of a list keyed by `keys` (`[name="a"]`, the keys sorted).
    fn key_of(&self, elem: &Ty, keys: &[String], item: &Value) -> Result<String, String> {
        let m = match item {
            Value::Object(m) => m,
            Value::Null => {
                return Err("associative list with keys may not have a null element".into());
            }
            _ => return Err("associative list with keys may not have non-map elements".into()),
        };
        let mut parts = Vec::new();
        for k in keys {
            let value = match m.get(k).filter(|v| !v.is_null()) {
                Some(v) => v.clone(),
                None => match self.schema.field(elem, k).and_then(|f| f.default.clone()) {
                    Some(d) => d,
                    None => {
                        return Err(format!(
                            "associative list with keys has an element that omits key field {} (and doesn't have default value)",
                            go_quote(k)
                        ));
                    }
                },
            };
            parts.push((k.clone(), to_string(&value)));
        }
        parts.sort();
        let parts: Vec<String> = parts.into_iter().map(|(k, v)| format!("{k}={v}")).collect();
        Ok(format!("[{}]", parts.join(",")))
    }

    fn scalar(&self, go: Option<&GoType>, v: &Value, path: &str, errs: &mut Vec<String>) {
        let kind = match go {
            Some(
                GoType::String
                | GoType::Bytes
                | GoType::Quantity
                | GoType::Time
                | GoType::MicroTime,
            ) => Scalar::String,
            Some(GoType::Int32 | GoType::Int64 | GoType::Uint8 | GoType::Float64) => {
                Scalar::Numeric
            }
            Some(GoType::Bool) => Scalar::Boolean,
            Some(GoType::IntOrString) => Scalar::Untyped,
            // A type not known here: only its being a scalar is checked.
            _ => Scalar::Untyped,
        };
        let message = match kind {
            Scalar::String if !v.is_string() => {
                format!(
                    "expected string, got &value.valueUnstructured{{Value:{}}}",
                    go_sharp_v(v)
                )
            }
            Scalar::Numeric if !v.is_number() => {
                format!("expected numeric (int or float), got {}", go_type_name(v))
            }
            Scalar::Boolean if !v.is_boolean() => format!("expected boolean, got {}", go_v_ptr(v)),
            Scalar::Untyped if v.is_object() || v.is_array() => {
                format!("expected any scalar, got {}", go_v_ptr(v))
            }
            _ => return,
        };
        errs.push(at(path, &message));
    }
}

fn at(path: &str, message: &str) -> String {
    if path.is_empty() {
        message.to_owned()
    } else {
        format!("{path}: {message}")
    }
}

/// structured-merge-diff's `value.ToString` of a key: JSON.
fn to_string(v: &Value) -> String {
    serde_json::to_string(v).unwrap_or_default()
}

/// Go's `%v` of the unstructured value behind a pointer: `&{…}`.
fn go_v_ptr(v: &Value) -> String {
    format!("&{{{}}}", go_v(v))
}

/// Go's `%v` of a decoded JSON value (`interface{}`: string, float64, bool, nil, slice, map).
fn go_v(v: &Value) -> String {
    match v {
        Value::Null => "<nil>".into(),
        Value::Bool(b) => b.to_string(),
        Value::Number(n) => go_float(n.as_f64().unwrap_or_default()),
        Value::String(s) => s.clone(),
        Value::Array(items) => {
            let items: Vec<String> = items.iter().map(go_v).collect();
            format!("[{}]", items.join(" "))
        }
        Value::Object(m) => {
            let items: Vec<String> = m.iter().map(|(k, v)| format!("{k}:{}", go_v(v))).collect();
            format!("map[{}]", items.join(" "))
        }
    }
}

/// Go's `%#v` of a decoded JSON value inside an `interface{}` field.
fn go_sharp_v(v: &Value) -> String {
    match v {
        Value::Null => "interface {}(nil)".into(),
        Value::Bool(b) => b.to_string(),
        Value::Number(n) => go_float(n.as_f64().unwrap_or_default()),
        Value::String(s) => go_quote(s),
        Value::Array(items) => {
            let items: Vec<String> = items.iter().map(go_sharp_v).collect();
            format!("[]interface {{}}{{{}}}", items.join(", "))
        }
        Value::Object(m) => {
            let items: Vec<String> = m
                .iter()
                .map(|(k, v)| format!("{}:{}", go_quote(k), go_sharp_v(v)))
                .collect();
            format!("map[string]interface {{}}{{{}}}", items.join(", "))
        }
    }
}

/// Go's `%T` of a decoded JSON value.
fn go_type_name(v: &Value) -> &'static str {
    match v {
        Value::Null => "<nil>",
        Value::Bool(_) => "bool",
        Value::Number(_) => "float64",
        Value::String(_) => "string",
        Value::Array(_) => "[]interface {}",
        Value::Object(_) => "map[string]interface {}",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn def(group: &str, kind: &str) -> ResourceDef {
        crate::registry::builtins()
            .into_iter()
            .find(|d| d.group == group && d.kind == kind)
            .unwrap()
    }

    fn message(group: &str, kind: &str, config: Value) -> Option<String> {
        let Value::Object(m) = config else { panic!() };
        check(&def(group, kind), &m).err().map(|e| e.message)
    }

    #[test]
    fn a_map_given_a_list_should_be_refused_as_kube_apiserver_does() {
        // Recorded from kube-apiserver v1.36.2.
        assert_eq!(
            message(
                "",
                "ConfigMap",
                json!({"apiVersion": "v1", "kind": "ConfigMap",
                "metadata": {"name": "c1"}, "data": ["a", "b"]})
            )
            .as_deref(),
            Some(
                "failed to create typed patch object (/c1; /v1, Kind=ConfigMap): .data: expected map, got &{[a b]}"
            )
        );
    }

    #[test]
    fn other_type_errors_should_read_as_structured_merge_diff_writes_them() {
        let deploy = |spec: Value| {
            message(
                "apps",
                "Deployment",
                json!({"apiVersion": "apps/v1", "kind": "Deployment",
                "metadata": {"name": "d", "namespace": "ns"}, "spec": spec}),
            )
        };
        let prefix = "failed to create typed patch object (ns/d; apps/v1, Kind=Deployment): ";
        assert_eq!(
            deploy(json!({"foo": 1})),
            Some(format!("{prefix}.spec.foo: field not declared in schema"))
        );
        assert_eq!(
            deploy(json!({"replicas": "3"})),
            Some(format!(
                "{prefix}.spec.replicas: expected numeric (int or float), got string"
            ))
        );
        assert_eq!(
            deploy(json!({"paused": "yes"})),
            Some(format!(
                "{prefix}.spec.paused: expected boolean, got &{{yes}}"
            ))
        );
        assert_eq!(
            deploy(json!({"template": {"spec": {"containers": [{"name": "a", "image": 5}]}}})),
            Some(format!(
                "{prefix}.spec.template.spec.containers[name=\"a\"].image: expected string, got &value.valueUnstructured{{Value:5}}"
            ))
        );
        assert_eq!(
            deploy(json!({"template": {"spec": {"containers": ["x"]}}})),
            Some(format!(
                "{prefix}.spec.template.spec.containers: element 0: associative list with keys may not have non-map elements"
            ))
        );
        assert_eq!(
            deploy(json!({"template": {"spec": {"containers": [{"name": "a"}, {"name": "a"}]}}})),
            Some(format!(
                "{prefix}.spec.template.spec.containers: duplicate entries for key [name=\"a\"]"
            ))
        );
        // A port's protocol key has a default.
        assert_eq!(
            deploy(
                json!({"template": {"spec": {"containers": [{"name": "a", "ports": [{"containerPort": 80}]}]}}})
            ),
            None
        );
        assert_eq!(
            deploy(json!({"selector": "app=x", "strategy": {"rollingUpdate": {"maxSurge": [1]}}})),
            Some(format!(
                "{prefix}errors:\n  .spec.selector: expected map, got &{{app=x}}\n  .spec.strategy.rollingUpdate.maxSurge: expected any scalar, got &{{[1]}}"
            ))
        );
        assert_eq!(deploy(json!({"replicas": null, "selector": null})), None);
    }
}
