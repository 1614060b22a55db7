//! The Go types of a built-in kind as kube-apiserver's JSON decoder sees them: each struct's Go
//! name and package, and the Go type of each of its JSON fields (`int32`, `string`,
//! `[]v1.Container`, `map[string]string`, `resource.Quantity`, ...).
//!
//! Derived from k8s-openapi's types, which are generated from the same API definitions as the
//! Go types: a recording deserializer drives a type's `Deserialize` implementation and notes
//! what it asks for at each field (`deserialize_i32` for an `int32`, `deserialize_struct` for a
//! struct, `deserialize_newtype_struct("Quantity")` for a quantity, ...). A Go type declared
//! with a name of its own over a string, slice or map (`v1.PullPolicy`, `v1.ResourceList`),
//! which k8s-openapi knows only by what it is made of (`string`,
//! `map[string]resource.Quantity`), takes its name from the table of Go fields
//! ([`go_fields`](super::go_fields)).

use std::any::{TypeId, type_name};
use std::collections::HashMap;
use std::fmt;
use std::sync::{Arc, LazyLock};

use parking_lot::Mutex;
use serde::de::{self, DeserializeOwned, DeserializeSeed, IntoDeserializer, MapAccess, SeqAccess};
use serde::de::{Expected, Visitor};

/// The Go type of a field.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum GoType {
    /// `bool`.
    Bool,
    /// `int32`.
    Int32,
    /// `int64`.
    Int64,
    /// `uint8` (an element of a `[]byte` written as a JSON array).
    Uint8,
    /// `float64`.
    Float64,
    /// `string`.
    String,
    /// `[]byte`: a base64 string.
    Bytes,
    /// `resource.Quantity`, with its own decoder.
    Quantity,
    /// `intstr.IntOrString`, with its own decoder.
    IntOrString,
    /// `v1.Time` (RFC 3339), with its own decoder.
    Time,
    /// `v1.MicroTime` (RFC 3339 with microseconds), with its own decoder.
    MicroTime,
    /// A type that takes any JSON value, by its Go name (`runtime.RawExtension`,
    /// `v1.FieldsV1`).
    Raw(&'static str),
    /// `[]T`.
    Slice(Box<GoType>),
    /// `map[string]T`.
    Map(Box<GoType>),
    /// A struct: its index in [`GoTypes::structs`].
    Struct(usize),
    /// A type Go declares with a name of its own (`v1.PullPolicy`, `v1.ResourceList`), or a
    /// map with a named key (`map[v1.ResourceName]resource.Quantity`): its name, and what it is
    /// made of.
    Named(String, Box<GoType>),
}

impl GoType {
    /// What a named type is made of; any other type itself.
    pub(crate) fn underlying(&self) -> &GoType {
        let mut t = self;
        while let GoType::Named(_, inner) = t {
            t = inner;
        }
        t
    }
}

/// A Go struct.
#[derive(Debug, Clone, Default)]
pub(crate) struct GoStruct {
    /// Its name (`DeploymentSpec`).
    pub(crate) name: String,
    /// Its package's name (`v1`).
    pub(crate) package: String,
    /// Its name qualified by its API group's short name (`apps.v1.DeploymentSpec`,
    /// `core.v1.Container`, `meta.v1.ObjectMeta`).
    pub(crate) qualified: String,
    /// The Go type of each JSON field.
    pub(crate) fields: HashMap<String, GoType>,
}

/// The Go type of a kind and the structs it is made of.
#[derive(Debug, Clone)]
pub(crate) struct GoTypes {
    /// The structs, referred to by [`GoType::Struct`].
    pub(crate) structs: Vec<GoStruct>,
    /// The kind's own type.
    pub(crate) root: GoType,
}

impl GoTypes {
    /// The type as Go's `reflect.Type.String` writes it (`[]v1.Container`).
    pub(crate) fn name(&self, t: &GoType) -> String {
        match t {
            GoType::Bool => "bool".into(),
            GoType::Int32 => "int32".into(),
            GoType::Int64 => "int64".into(),
            GoType::Uint8 => "uint8".into(),
            GoType::Float64 => "float64".into(),
            GoType::String => "string".into(),
            GoType::Bytes => "[]uint8".into(),
            GoType::Quantity => "resource.Quantity".into(),
            GoType::IntOrString => "intstr.IntOrString".into(),
            GoType::Time => "v1.Time".into(),
            GoType::MicroTime => "v1.MicroTime".into(),
            GoType::Raw(name) => (*name).into(),
            GoType::Slice(e) => format!("[]{}", self.name(e)),
            GoType::Map(e) => format!("map[string]{}", self.name(e)),
            GoType::Struct(i) => {
                let s = &self.structs[*i];
                format!("{}.{}", s.package, s.name)
            }
            GoType::Named(name, _) => name.clone(),
        }
    }
}

/// `ty` under the Go type `go` names it (`v1.PullPolicy`, `[]v1.Capability`,
/// `v1.ResourceList`, written as `reflect.Type.String` does): wrapped in [`GoType::Named`]
/// wherever Go names a type that `ty` knows only by its shape.
fn with_go_name(go: &str, ty: GoType) -> GoType {
    if let Some((_, made_of)) = super::go_fields::NAMED_TYPES.iter().find(|(n, _)| *n == go) {
        return GoType::Named(go.to_owned(), Box::new(with_go_name(made_of, ty)));
    }
    match ty {
        GoType::Slice(elem) => match go.strip_prefix("[]") {
            Some(e) => GoType::Slice(Box::new(with_go_name(e, *elem))),
            None => GoType::Slice(elem),
        },
        GoType::Map(elem) => {
            let Some((key, value)) = go.strip_prefix("map[").and_then(split_map) else {
                return GoType::Map(elem);
            };
            let map = GoType::Map(Box::new(with_go_name(value, *elem)));
            if key == "string" {
                map
            } else {
                GoType::Named(go.to_owned(), Box::new(map))
            }
        }
        GoType::Bool | GoType::Int32 | GoType::Int64 | GoType::Float64 | GoType::String
            if go.contains('.') =>
        {
            GoType::Named(go.to_owned(), Box::new(ty))
        }
        other => other,
    }
}

/// The key and value types of a map type written after its `map[`.
fn split_map(rest: &str) -> Option<(&str, &str)> {
    let mut depth = 1;
    for (i, c) in rest.char_indices() {
        match c {
            '[' => depth += 1,
            ']' => {
                depth -= 1;
                if depth == 0 {
                    return Some((&rest[..i], &rest[i + 1..]));
                }
            }
            _ => {}
        }
    }
    None
}

/// Names the fields of `structs` whose Go type has a name of its own.
fn name_fields(structs: &mut [GoStruct]) {
    for s in structs {
        for (field, ty) in &mut s.fields {
            if let Some(go) = super::go_fields::lookup(&s.qualified, field).and_then(|f| f.go_type)
            {
                let shaped = std::mem::replace(ty, GoType::Bool);
                *ty = with_go_name(go, shaped);
            }
        }
    }
}

/// The Go types of `T`, a k8s-openapi type; `None` if its `Deserialize` implementation does
/// something the recorder does not follow.
pub(crate) fn of<T: DeserializeOwned + 'static>() -> Option<Arc<GoTypes>> {
    static CACHE: LazyLock<Mutex<HashMap<TypeId, Option<Arc<GoTypes>>>>> =
        LazyLock::new(Default::default);
    let mut cache = CACHE.lock();
    cache
        .entry(TypeId::of::<T>())
        .or_insert_with(|| {
            let mut builder = Builder::default();
            let mut root = None;
            T::deserialize(Recorder {
                builder: &mut builder,
                out: &mut root,
            })
            .ok()?;
            let mut structs = builder.structs;
            name_fields(&mut structs);
            Some(Arc::new(GoTypes {
                structs,
                root: root?,
            }))
        })
        .clone()
}

/// Go's name of a field that takes any JSON value.
const UNTYPED: &str = "interface {}";

#[derive(Default)]
struct Builder {
    structs: Vec<GoStruct>,
    /// Struct index by Rust type name.
    index: HashMap<&'static str, usize>,
}

/// Why a type could not be recorded.
#[derive(Debug)]
struct RecordError(String);

impl fmt::Display for RecordError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for RecordError {}

impl de::Error for RecordError {
    fn custom<T: fmt::Display>(msg: T) -> Self {
        Self(msg.to_string())
    }
}

/// What a visitor says it expects (`IntOrString`, `a base64-encoded string`).
fn expecting<'de, V: Visitor<'de>>(visitor: &V) -> String {
    (visitor as &dyn Expected).to_string()
}

/// The name of a k8s-openapi type qualified by its API group's short name, from its Rust path:
/// the module before the version module (`...::api::apps::v1::deployment_spec::DeploymentSpec`
/// is `apps.v1.DeploymentSpec`, `...::apimachinery::pkg::apis::meta::v1::...` is `meta.v1.*`).
fn qualified(rust_name: &str, name: &str) -> String {
    let segments: Vec<&str> = rust_name.split("::").collect();
    match segments.iter().rposition(|s| is_version(s)) {
        Some(i) if i > 0 => format!("{}.{}.{name}", segments[i - 1], segments[i]),
        _ => name.to_owned(),
    }
}

/// The Go package of a k8s-openapi type, from its Rust path
/// (`k8s_openapi::v1_36::api::apps::v1::deployment_spec::DeploymentSpec`): the API version
/// module it is generated into (`v1`, `v2`, `v1beta1`).
fn package(rust_name: &str) -> &str {
    rust_name
        .rsplit("::")
        .find(|s| is_version(s))
        .unwrap_or("v1")
}

/// `v1`, `v2`, `v1beta1`, `v1alpha2`.
fn is_version(s: &str) -> bool {
    // Digits, and what follows them; `None` without digits.
    fn digits(t: &str) -> Option<&str> {
        let rest = t.trim_start_matches(|c: char| c.is_ascii_digit());
        (rest.len() < t.len()).then_some(rest)
    }
    let Some(rest) = s.strip_prefix('v').and_then(digits) else {
        return false;
    };
    match rest
        .strip_prefix("alpha")
        .or_else(|| rest.strip_prefix("beta"))
    {
        None => rest.is_empty(),
        Some(level) => digits(level) == Some(""),
    }
}

/// Records the type a `Deserialize` implementation asks for into `out`, and hands it a zero
/// value of that type.
struct Recorder<'a> {
    builder: &'a mut Builder,
    out: &'a mut Option<GoType>,
}

impl<'de> de::Deserializer<'de> for Recorder<'_> {
    type Error = RecordError;

    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, RecordError> {
        if expecting(&visitor) == "IntOrString" {
            *self.out = Some(GoType::IntOrString);
            return visitor.visit_i32(0);
        }
        *self.out = Some(GoType::Raw(UNTYPED));
        visitor.visit_unit()
    }

    fn deserialize_bool<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, RecordError> {
        *self.out = Some(GoType::Bool);
        visitor.visit_bool(false)
    }

    fn deserialize_i32<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, RecordError> {
        *self.out = Some(GoType::Int32);
        visitor.visit_i32(0)
    }

    fn deserialize_i64<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, RecordError> {
        *self.out = Some(GoType::Int64);
        visitor.visit_i64(0)
    }

    fn deserialize_u8<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, RecordError> {
        *self.out = Some(GoType::Uint8);
        visitor.visit_u8(0)
    }

    fn deserialize_f64<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, RecordError> {
        *self.out = Some(GoType::Float64);
        visitor.visit_f64(0.0)
    }

    fn deserialize_str<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, RecordError> {
        // k8s-openapi's `ByteString` (Go's `[]byte`) reads a borrowed string; `String` an owned
        // one (below).
        *self.out = Some(if expecting(&visitor).contains("base64") {
            GoType::Bytes
        } else {
            GoType::String
        });
        visitor.visit_str("")
    }

    fn deserialize_string<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, RecordError> {
        *self.out = Some(GoType::String);
        visitor.visit_string(String::new())
    }

    fn deserialize_option<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, RecordError> {
        // A Go pointer: decoded as the type it points to.
        visitor.visit_some(self)
    }

    fn deserialize_newtype_struct<V: Visitor<'de>>(
        self,
        name: &'static str,
        visitor: V,
    ) -> Result<V::Value, RecordError> {
        let (ty, zero) = match name {
            "Quantity" => (GoType::Quantity, serde_json::json!("0")),
            "Time" | "MicroTime" => {
                let ty = if name == "Time" {
                    GoType::Time
                } else {
                    GoType::MicroTime
                };
                (ty, serde_json::json!("1970-01-01T00:00:00Z"))
            }
            "RawExtension" => (GoType::Raw("runtime.RawExtension"), serde_json::Value::Null),
            "FieldsV1" => (GoType::Raw("v1.FieldsV1"), serde_json::Value::Null),
            "JSON" => (GoType::Raw("v1.JSON"), serde_json::Value::Null),
            _ => (GoType::Raw(UNTYPED), serde_json::Value::Null),
        };
        *self.out = Some(ty);
        visitor
            .visit_newtype_struct(zero)
            .map_err(|e| RecordError(e.to_string()))
    }

    fn deserialize_seq<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, RecordError> {
        let mut elem = None;
        let value = visitor.visit_seq(One {
            builder: &mut *self.builder,
            out: &mut elem,
            done: false,
        })?;
        *self.out = Some(GoType::Slice(Box::new(
            elem.unwrap_or(GoType::Raw(UNTYPED)),
        )));
        Ok(value)
    }

    fn deserialize_map<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, RecordError> {
        let mut elem = None;
        let value = visitor.visit_map(One {
            builder: &mut *self.builder,
            out: &mut elem,
            done: false,
        })?;
        *self.out = Some(GoType::Map(Box::new(elem.unwrap_or(GoType::Raw(UNTYPED)))));
        Ok(value)
    }

    fn deserialize_struct<V: Visitor<'de>>(
        self,
        name: &'static str,
        fields: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, RecordError> {
        let rust_name = type_name::<V::Value>();
        if let Some(&i) = self.builder.index.get(rust_name) {
            // Known already (or being recorded: a recursive type).
            *self.out = Some(GoType::Struct(i));
            return visitor.visit_map(Fields {
                builder: &mut *self.builder,
                names: &[],
                next: 0,
                found: &mut HashMap::new(),
            });
        }
        let i = self.builder.structs.len();
        let package = package(rust_name);
        self.builder.structs.push(GoStruct {
            name: name.to_owned(),
            package: package.to_owned(),
            qualified: qualified(rust_name, name),
            fields: HashMap::new(),
        });
        self.builder.index.insert(rust_name, i);
        let mut found = HashMap::new();
        let value = visitor.visit_map(Fields {
            builder: &mut *self.builder,
            names: fields,
            next: 0,
            found: &mut found,
        })?;
        self.builder.structs[i].fields = found;
        *self.out = Some(GoType::Struct(i));
        Ok(value)
    }

    serde::forward_to_deserialize_any! {
        i8 i16 i128 u16 u32 u64 u128 f32 char bytes byte_buf unit unit_struct tuple
        tuple_struct enum identifier ignored_any
    }
}

/// One element of a sequence, or one entry of a map.
struct One<'a> {
    builder: &'a mut Builder,
    out: &'a mut Option<GoType>,
    done: bool,
}

impl<'de> SeqAccess<'de> for One<'_> {
    type Error = RecordError;

    fn next_element_seed<T: DeserializeSeed<'de>>(
        &mut self,
        seed: T,
    ) -> Result<Option<T::Value>, RecordError> {
        if self.done {
            return Ok(None);
        }
        self.done = true;
        seed.deserialize(Recorder {
            builder: &mut *self.builder,
            out: &mut *self.out,
        })
        .map(Some)
    }
}

impl<'de> MapAccess<'de> for One<'_> {
    type Error = RecordError;

    fn next_key_seed<K: DeserializeSeed<'de>>(
        &mut self,
        seed: K,
    ) -> Result<Option<K::Value>, RecordError> {
        if self.done {
            return Ok(None);
        }
        self.done = true;
        seed.deserialize("key".into_deserializer()).map(Some)
    }

    fn next_value_seed<V: DeserializeSeed<'de>>(
        &mut self,
        seed: V,
    ) -> Result<V::Value, RecordError> {
        seed.deserialize(Recorder {
            builder: &mut *self.builder,
            out: &mut *self.out,
        })
    }
}

/// The fields of a struct, one after the other.
struct Fields<'a> {
    builder: &'a mut Builder,
    names: &'static [&'static str],
    next: usize,
    found: &'a mut HashMap<String, GoType>,
}

impl<'de> MapAccess<'de> for Fields<'_> {
    type Error = RecordError;

    fn next_key_seed<K: DeserializeSeed<'de>>(
        &mut self,
        seed: K,
    ) -> Result<Option<K::Value>, RecordError> {
        // A kind's `apiVersion` and `kind` (Go's embedded `TypeMeta`) are strings; k8s-openapi
        // checks their values, so they are not handed over.
        while let Some(&name) = self.names.get(self.next) {
            if name != "apiVersion" && name != "kind" {
                break;
            }
            self.found.insert(name.to_owned(), GoType::String);
            self.next += 1;
        }
        let Some(&name) = self.names.get(self.next) else {
            return Ok(None);
        };
        seed.deserialize(name.into_deserializer()).map(Some)
    }

    fn next_value_seed<V: DeserializeSeed<'de>>(
        &mut self,
        seed: V,
    ) -> Result<V::Value, RecordError> {
        let name = self.names[self.next];
        self.next += 1;
        let mut ty = None;
        let value = seed.deserialize(Recorder {
            builder: &mut *self.builder,
            out: &mut ty,
        })?;
        self.found
            .insert(name.to_owned(), ty.unwrap_or(GoType::Raw(UNTYPED)));
        Ok(value)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use k8s_openapi::api;

    fn field<'a>(types: &'a GoTypes, path: &[&str]) -> &'a GoType {
        let mut t = &types.root;
        for p in path {
            t = match t {
                GoType::Struct(i) => &types.structs[*i].fields[*p],
                GoType::Slice(e) | GoType::Map(e) => {
                    let GoType::Struct(i) = &**e else {
                        panic!("{p}: not a struct")
                    };
                    &types.structs[*i].fields[*p]
                }
                _ => panic!("{p}: not a struct"),
            };
        }
        t
    }

    #[test]
    fn a_go_name_should_wrap_the_shape_it_names() {
        let quantities = GoType::Map(Box::new(GoType::Quantity));
        let list = with_go_name("v1.ResourceList", quantities.clone());
        let GoType::Named(name, inner) = &list else {
            panic!("{list:?}")
        };
        assert_eq!(name, "v1.ResourceList");
        assert_eq!(
            **inner,
            GoType::Named(
                "map[v1.ResourceName]resource.Quantity".into(),
                Box::new(quantities.clone())
            )
        );
        assert_eq!(list.underlying(), &quantities);
        let caps = with_go_name("[]v1.Capability", GoType::Slice(Box::new(GoType::String)));
        assert_eq!(
            caps,
            GoType::Slice(Box::new(GoType::Named(
                "v1.Capability".into(),
                Box::new(GoType::String)
            )))
        );
        assert_eq!(
            with_go_name("map[string]string", GoType::Map(Box::new(GoType::String))),
            GoType::Map(Box::new(GoType::String))
        );
    }

    #[test]
    fn a_type_s_package_should_be_its_api_version() {
        assert_eq!(
            package("k8s_openapi::v1_36::api::apps::v1::deployment::Deployment"),
            "v1"
        );
        assert_eq!(package("k8s_openapi::v1_36::api::autoscaling::v2::X"), "v2");
        assert_eq!(
            package("k8s_openapi::v1_36::api::x::v1beta1::y::Y"),
            "v1beta1"
        );
        assert_eq!(
            package("k8s_openapi::v1_36::api::x::v1alpha2::Y"),
            "v1alpha2"
        );
        assert_eq!(package("a::vbeta::v1alpha::Y"), "v1");
        assert_eq!(
            qualified(
                "k8s_openapi::v1_36::api::apps::v1::deployment_spec::DeploymentSpec",
                "DeploymentSpec"
            ),
            "apps.v1.DeploymentSpec"
        );
        assert_eq!(
            qualified(
                "k8s_openapi::v1_36::apimachinery::pkg::apis::meta::v1::object_meta::ObjectMeta",
                "ObjectMeta"
            ),
            "meta.v1.ObjectMeta"
        );
    }

    #[test]
    fn the_types_of_a_kind_should_be_read_from_k8s_openapi() {
        let d = of::<api::apps::v1::Deployment>().unwrap();
        assert_eq!(d.name(&d.root), "v1.Deployment");
        assert_eq!(field(&d, &["spec", "replicas"]), &GoType::Int32);
        assert_eq!(d.name(field(&d, &["spec"])), "v1.DeploymentSpec");
        assert_eq!(
            d.name(field(&d, &["spec", "template", "spec", "containers"])),
            "[]v1.Container"
        );
        assert_eq!(
            d.name(field(
                &d,
                &[
                    "spec",
                    "template",
                    "spec",
                    "containers",
                    "resources",
                    "limits"
                ]
            )),
            "v1.ResourceList"
        );
        assert_eq!(
            d.name(field(
                &d,
                &["spec", "template", "spec", "containers", "imagePullPolicy"]
            )),
            "v1.PullPolicy"
        );
        assert_eq!(
            d.name(field(
                &d,
                &[
                    "spec",
                    "template",
                    "spec",
                    "containers",
                    "securityContext",
                    "capabilities",
                    "add"
                ]
            )),
            "[]v1.Capability"
        );
        assert_eq!(d.name(field(&d, &["metadata", "uid"])), "types.UID");
        assert_eq!(
            field(&d, &["spec", "strategy", "rollingUpdate", "maxSurge"]),
            &GoType::IntOrString
        );
        assert_eq!(field(&d, &["metadata", "creationTimestamp"]), &GoType::Time);
        assert_eq!(
            d.name(field(&d, &["metadata", "labels"])),
            "map[string]string"
        );
        assert_eq!(field(&d, &["kind"]), &GoType::String);

        let s = of::<api::core::v1::Secret>().unwrap();
        assert_eq!(s.name(field(&s, &["data"])), "map[string][]uint8");
        let l = of::<api::coordination::v1::Lease>().unwrap();
        assert_eq!(field(&l, &["spec", "renewTime"]), &GoType::MicroTime);
        let h = of::<api::autoscaling::v2::HorizontalPodAutoscaler>().unwrap();
        assert_eq!(
            h.name(field(&h, &["spec"])),
            "v2.HorizontalPodAutoscalerSpec"
        );
        assert_eq!(h.name(field(&h, &["metadata"])), "v1.ObjectMeta");
        let e = of::<api::core::v1::Event>().unwrap();
        assert_eq!(field(&e, &["count"]), &GoType::Int32);
        assert_eq!(field(&e, &["eventTime"]), &GoType::MicroTime);
        let n = of::<api::core::v1::Node>().unwrap();
        assert_eq!(
            n.name(field(&n, &["status", "capacity"])),
            "v1.ResourceList"
        );
    }
}
