//! The structure of an object's type, as field management and strategic merge patch need it:
//! which maps are structs, which lists are atomic, sets or maps keyed by some fields, and the
//! strategic-merge-patch strategy of each field. Built-in kinds read it from
//! [`builtin_types`](super::builtin_types); custom resources from their CRD's
//! `openAPIV3Schema` (`x-kubernetes-list-type`, `x-kubernetes-list-map-keys`,
//! `x-kubernetes-map-type`).

use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, LazyLock};

use serde_json::Value;

use super::builtin_types::BUILTIN_TYPES;

/// How a list's items are told apart.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum ListKind {
    /// The list is one value.
    Atomic,
    /// Items are scalars, each one a member.
    Set,
    /// Items are structs, keyed by these fields.
    Map(Vec<String>),
}

/// The type of a value.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Ty {
    /// A scalar.
    Scalar,
    /// Untyped: maps are granular, lists atomic.
    Deduced,
    /// Untyped and atomic.
    Atomic,
    /// A struct of the schema.
    Named(Arc<str>),
    /// A list.
    List(ListKind, Box<Ty>),
    /// A map of values of one type; `atomic` when the whole map is one value.
    Map(bool, Box<Ty>),
}

/// A field of a struct.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Field {
    /// Its type.
    pub(crate) ty: Ty,
    /// The strategic-merge-patch strategy (`merge`, `retainKeys`, `merge,retainKeys`), if any.
    pub(crate) patch_strategy: Option<String>,
    /// The strategic-merge-patch merge key, if any.
    pub(crate) merge_key: Option<String>,
    /// The value a list item gets for this field when it is a list-map key the item omits.
    pub(crate) default: Option<Value>,
    /// A typed zero object carries this field: as `{}` (a struct value) or `null` (a list or
    /// map without `omitempty`).
    pub(crate) zero: Option<Zero>,
}

/// How a typed zero object carries a field.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Zero {
    /// As the zero object of its struct type.
    Struct,
    /// As `null`.
    Null,
}

/// A struct: named fields; other keys are untyped.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct StructDef {
    /// The whole struct is one value.
    pub(crate) atomic: bool,
    /// Its fields.
    pub(crate) fields: BTreeMap<String, Field>,
}

type Types = HashMap<Arc<str>, StructDef>;

/// A type with the structs it refers to.
#[derive(Debug, Clone)]
pub(crate) struct Schema {
    local: Types,
    /// The type of the whole object.
    pub(crate) root: Ty,
}

const OBJECT_META: &str = "meta.v1.ObjectMeta";
const UNKNOWN_ROOT: &str = "kcr.UnknownObject";

fn parse_ty(s: &str) -> Option<Ty> {
    Some(match s {
        "s" => Ty::Scalar,
        "?" => Ty::Deduced,
        "?a" => Ty::Atomic,
        _ => {
            if let Some(name) = s.strip_prefix('@') {
                Ty::Named(name.into())
            } else if let Some(rest) = s.strip_prefix("[a]") {
                Ty::List(ListKind::Atomic, Box::new(parse_ty(rest)?))
            } else if let Some(rest) = s.strip_prefix("[s]") {
                Ty::List(ListKind::Set, Box::new(parse_ty(rest)?))
            } else if let Some(rest) = s.strip_prefix("[m:") {
                let (keys, elem) = rest.split_once(']')?;
                let keys = keys.split(',').map(str::to_owned).collect();
                Ty::List(ListKind::Map(keys), Box::new(parse_ty(elem)?))
            } else if let Some(rest) = s.strip_prefix("{a}") {
                Ty::Map(true, Box::new(parse_ty(rest)?))
            } else if let Some(rest) = s.strip_prefix("{}") {
                Ty::Map(false, Box::new(parse_ty(rest)?))
            } else {
                return None;
            }
        }
    })
}

fn parse_builtin() -> Types {
    let mut types = Types::new();
    let mut current: Option<(Arc<str>, StructDef)> = None;
    for line in BUILTIN_TYPES.lines() {
        if let Some(rest) = line.strip_prefix(' ') {
            let mut parts = rest.split(' ');
            let (Some(name), Some(ty)) = (parts.next(), parts.next().and_then(parse_ty)) else {
                continue;
            };
            let mut field = Field {
                ty,
                patch_strategy: None,
                merge_key: None,
                default: None,
                zero: None,
            };
            for p in parts {
                if let Some(p) = p.strip_prefix("p:") {
                    let (strategy, key) = match p.split_once(':') {
                        Some((s, k)) => (s, Some(k.to_owned())),
                        None => (p, None),
                    };
                    field.patch_strategy = (strategy != "-").then(|| strategy.to_owned());
                    field.merge_key = key;
                } else if let Some(d) = p.strip_prefix("d:") {
                    field.default = serde_json::from_str(d).ok();
                } else if p == "=" {
                    field.zero = Some(Zero::Struct);
                } else if p == "~" {
                    field.zero = Some(Zero::Null);
                }
            }
            if let Some((_, def)) = current.as_mut() {
                def.fields.insert(name.to_owned(), field);
            }
        } else {
            if let Some((n, d)) = current.take() {
                types.insert(n, d);
            }
            let (name, atomic) = match line.strip_suffix(" atomic") {
                Some(n) => (n, true),
                None => (line, false),
            };
            current = Some((
                name.into(),
                StructDef {
                    atomic,
                    fields: BTreeMap::new(),
                },
            ));
        }
    }
    if let Some((n, d)) = current.take() {
        types.insert(n, d);
    }
    let mut unknown = StructDef::default();
    for (name, ty) in [
        ("apiVersion", Ty::Scalar),
        ("kind", Ty::Scalar),
        ("metadata", Ty::Named(OBJECT_META.into())),
    ] {
        unknown.fields.insert(name.into(), plain(ty));
    }
    types.insert(UNKNOWN_ROOT.into(), unknown);
    types
}

fn plain(ty: Ty) -> Field {
    Field {
        ty,
        patch_strategy: None,
        merge_key: None,
        default: None,
        zero: None,
    }
}

static BUILTIN: LazyLock<Types> = LazyLock::new(parse_builtin);

impl Schema {
    /// The schema of a built-in kind; kinds the table does not know get a struct with
    /// `metadata` and untyped fields.
    pub(crate) fn builtin(group: &str, version: &str, kind: &str) -> Schema {
        let package = if group.is_empty() {
            "core"
        } else {
            group.split('.').next().unwrap_or(group)
        };
        let name = format!("{package}.{version}.{kind}");
        let root = if BUILTIN.contains_key(name.as_str()) {
            name.as_str().into()
        } else {
            UNKNOWN_ROOT.into()
        };
        Schema {
            local: Types::new(),
            root: Ty::Named(root),
        }
    }

    /// The schema of a custom resource from its version's `openAPIV3Schema` (`None`: untyped).
    pub(crate) fn custom(open_api: Option<&Value>) -> Schema {
        let mut local = Types::new();
        let mut root = StructDef::default();
        if let Some(props) = open_api
            .and_then(|s| s.get("properties"))
            .and_then(Value::as_object)
        {
            for (k, v) in props {
                let ty = crd_ty(v, &format!("crd.{k}"), &mut local);
                root.fields.insert(k.clone(), plain(ty));
            }
        }
        for (name, ty) in [
            ("apiVersion", Ty::Scalar),
            ("kind", Ty::Scalar),
            ("metadata", Ty::Named(OBJECT_META.into())),
        ] {
            root.fields.insert(name.into(), plain(ty));
        }
        local.insert("crd".into(), root);
        Schema {
            local,
            root: Ty::Named("crd".into()),
        }
    }

    /// The struct a name refers to.
    pub(crate) fn resolve(&self, name: &str) -> Option<&StructDef> {
        self.local.get(name).or_else(|| BUILTIN.get(name))
    }

    /// The field `name` of the struct `ty` refers to, if `ty` is a struct that declares it.
    pub(crate) fn field(&self, ty: &Ty, name: &str) -> Option<&Field> {
        match ty {
            Ty::Named(n) => self.resolve(n)?.fields.get(name),
            _ => None,
        }
    }

    /// The type of the value under key `name` of a map or struct of type `ty`.
    pub(crate) fn child(&self, ty: &Ty, name: &str) -> Ty {
        match ty {
            Ty::Named(n) => self
                .resolve(n)
                .and_then(|d| d.fields.get(name))
                .map_or(Ty::Deduced, |f| f.ty.clone()),
            Ty::Map(_, elem) => (**elem).clone(),
            Ty::Atomic => Ty::Atomic,
            _ => Ty::Deduced,
        }
    }

    /// A typed zero object of `ty`: the struct-valued fields a Go struct value always has.
    pub(crate) fn zero(&self, ty: &Ty) -> Value {
        let mut m = serde_json::Map::new();
        if let Ty::Named(n) = ty
            && let Some(def) = self.resolve(n)
        {
            for (k, f) in &def.fields {
                match f.zero {
                    Some(Zero::Struct) => {
                        m.insert(k.clone(), self.zero(&f.ty));
                    }
                    Some(Zero::Null) => {
                        m.insert(k.clone(), Value::Null);
                    }
                    None => {}
                }
            }
        }
        Value::Object(m)
    }
}

fn crd_ty(s: &Value, name: &str, local: &mut Types) -> Ty {
    let ext = |k: &str| s.get(k).and_then(Value::as_str);
    if s.get("x-kubernetes-int-or-string").and_then(Value::as_bool) == Some(true) {
        return Ty::Scalar;
    }
    match s.get("type").and_then(Value::as_str) {
        Some("object") => {
            let atomic = ext("x-kubernetes-map-type") == Some("atomic");
            if let Some(props) = s.get("properties").and_then(Value::as_object) {
                let mut def = StructDef {
                    atomic,
                    fields: BTreeMap::new(),
                };
                for (k, v) in props {
                    let ty = crd_ty(v, &format!("{name}.{k}"), local);
                    def.fields.insert(k.clone(), plain(ty));
                }
                if s.get("x-kubernetes-embedded-resource")
                    .and_then(Value::as_bool)
                    == Some(true)
                {
                    def.fields
                        .insert("metadata".into(), plain(Ty::Named(OBJECT_META.into())));
                }
                local.insert(name.into(), def);
                Ty::Named(name.into())
            } else if let Some(items) = s.get("additionalProperties").filter(|v| v.is_object()) {
                Ty::Map(atomic, Box::new(crd_ty(items, &format!("{name}.*"), local)))
            } else if atomic {
                Ty::Atomic
            } else {
                Ty::Deduced
            }
        }
        Some("array") => {
            let elem = s
                .get("items")
                .map_or(Ty::Deduced, |i| crd_ty(i, &format!("{name}[]"), local));
            let kind = match ext("x-kubernetes-list-type") {
                Some("set") => ListKind::Set,
                Some("map") => ListKind::Map(
                    s.get("x-kubernetes-list-map-keys")
                        .and_then(Value::as_array)
                        .map(|a| {
                            a.iter()
                                .filter_map(|k| k.as_str().map(str::to_owned))
                                .collect()
                        })
                        .unwrap_or_default(),
                ),
                _ => ListKind::Atomic,
            };
            Ty::List(kind, Box::new(elem))
        }
        Some(_) => Ty::Scalar,
        None => Ty::Deduced,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_builtin_table_should_know_containers_ports_and_atomic_selectors() {
        let s = Schema::builtin("apps", "v1", "Deployment");
        let spec = s.child(&s.root, "spec");
        let template = s.child(&spec, "template");
        let pod = s.child(&template, "spec");
        let Ty::List(ListKind::Map(keys), container) = s.child(&pod, "containers") else {
            panic!("containers is not a list map");
        };
        assert_eq!(keys, ["name"]);
        let Ty::List(ListKind::Map(keys), port) = s.child(&container, "ports") else {
            panic!("ports is not a list map");
        };
        assert_eq!(keys, ["containerPort", "protocol"]);
        assert_eq!(
            s.field(&port, "protocol").and_then(|f| f.default.clone()),
            Some(Value::String("TCP".into()))
        );
        let f = s.field(&pod, "volumes").unwrap();
        assert_eq!(f.patch_strategy.as_deref(), Some("merge,retainKeys"));
        assert_eq!(f.merge_key.as_deref(), Some("name"));
        let Ty::Named(sel) = s.child(&spec, "selector") else {
            panic!("selector is not a struct");
        };
        assert!(s.resolve(&sel).unwrap().atomic);
        assert_eq!(
            s.zero(&s.root),
            serde_json::json!({"metadata": {}, "spec": {"strategy": {}, "template": {"metadata": {}, "spec": {"containers": null}}}, "status": {}})
        );
    }

    #[test]
    fn an_ephemeral_container_should_have_the_patch_strategies_and_zero_of_a_container() {
        let s = Schema::builtin("", "v1", "Pod");
        let spec = s.child(&s.root, "spec");
        let Ty::List(ListKind::Map(keys), eph) = s.child(&spec, "ephemeralContainers") else {
            panic!("ephemeralContainers is not a list map");
        };
        assert_eq!(keys, ["name"]);
        for (field, key) in [
            ("env", "name"),
            ("ports", "containerPort"),
            ("volumeMounts", "mountPath"),
            ("volumeDevices", "devicePath"),
        ] {
            let f = s.field(&eph, field).unwrap();
            assert_eq!(f.patch_strategy.as_deref(), Some("merge"), "{field}");
            assert_eq!(f.merge_key.as_deref(), Some(key), "{field}");
        }
        // A Go struct value: a typed zero ephemeral container carries `resources: {}`.
        assert_eq!(s.field(&eph, "resources").unwrap().zero, Some(Zero::Struct));
    }

    #[test]
    fn a_crd_should_be_typed_down_to_its_versions_schemas_and_conversion_webhook() {
        let s = Schema::builtin("apiextensions.k8s.io", "v1", "CustomResourceDefinition");
        let spec = s.child(&s.root, "spec");
        let Ty::List(ListKind::Atomic, version) = s.child(&spec, "versions") else {
            panic!("versions is not an atomic list");
        };
        let Ty::Named(_) = *version else {
            panic!("a version is untyped: {version:?}");
        };
        let schema = s.child(&s.child(&version, "schema"), "openAPIV3Schema");
        let Ty::Map(false, prop) = s.child(&schema, "properties") else {
            panic!("properties is not a map");
        };
        assert_eq!(*prop, schema);
        let Ty::List(ListKind::Map(keys), _) = s.child(&schema, "x-kubernetes-validations") else {
            panic!("x-kubernetes-validations is not a list map");
        };
        assert_eq!(keys, ["rule"]);
        assert_eq!(s.child(&schema, "default"), Ty::Deduced);
        let webhook = s.child(&s.child(&spec, "conversion"), "webhook");
        assert!(matches!(s.child(&webhook, "clientConfig"), Ty::Named(_)));
        let status = s.child(&s.root, "status");
        let Ty::List(ListKind::Map(keys), cond) = s.child(&status, "conditions") else {
            panic!("conditions is not a list map");
        };
        assert_eq!(keys, ["type"]);
        // v1.36's conditions carry `observedGeneration`.
        assert!(s.field(&cond, "observedGeneration").is_some());
    }
}
