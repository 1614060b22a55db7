//! [`ObjectName`]: an object's namespace and name as a structured key
//! (client-go's `object-names.go`).

use kube_core::ObjectMeta;
use kube_core::Resource;

use crate::delta::DeltaObject;
use crate::error::{Error, Result};
use crate::key::split_meta_namespace_key;

/// A reference to an object of some implied kind: its namespace (empty for
/// a cluster-scoped object) and name (client-go's `ObjectName`). Its
/// [`Display`](std::fmt::Display) is the key [`meta_namespace_key_func`]
/// makes: `namespace/name`, or `name` alone.
///
/// [`meta_namespace_key_func`]: crate::meta_namespace_key_func
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ObjectName {
    /// The namespace; empty for a cluster-scoped object.
    pub namespace: String,
    /// The name.
    pub name: String,
}

impl ObjectName {
    /// The name `name` in `namespace` (client-go's `NewObjectName`).
    pub fn new(namespace: impl Into<String>, name: impl Into<String>) -> Self {
        Self {
            namespace: namespace.into(),
            name: name.into(),
        }
    }

    /// `(namespace, name)` (client-go's `Parts`).
    pub fn parts(&self) -> (&str, &str) {
        (&self.namespace, &self.name)
    }

    /// Parses a key as [`split_meta_namespace_key`] does (client-go's
    /// `ParseObjectName`): `"/b"` is `b` with no namespace.
    pub fn parse(key: &str) -> Result<Self> {
        let (namespace, name) = split_meta_namespace_key(key)?;
        Ok(Self::new(namespace.unwrap_or_default(), name))
    }
}

impl std::fmt::Display for ObjectName {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.namespace.is_empty() {
            f.write_str(&self.name)
        } else {
            write!(f, "{}/{}", self.namespace, self.name)
        }
    }
}

impl std::str::FromStr for ObjectName {
    type Err = Error;
    fn from_str(key: &str) -> Result<Self> {
        Self::parse(key)
    }
}

/// An object's [`ObjectName`] from its metadata (client-go's
/// `MetaObjectToName`).
pub fn meta_object_to_name(meta: &ObjectMeta) -> ObjectName {
    ObjectName::new(
        meta.namespace.clone().unwrap_or_default(),
        meta.name.clone().unwrap_or_default(),
    )
}

/// An object's [`ObjectName`] (client-go's `ObjectToName`).
pub fn object_to_name<K: Resource>(obj: &K) -> ObjectName {
    meta_object_to_name(obj.meta())
}

/// The [`ObjectName`] of an object or of a tombstone's key (client-go's
/// `DeletionHandlingObjectToName`).
pub fn deletion_handling_object_to_name<K: Resource>(obj: &DeltaObject<K>) -> Result<ObjectName> {
    match obj {
        DeltaObject::Object(o) => Ok(object_to_name(o.as_ref())),
        DeltaObject::DeletedFinalStateUnknown(t) => ObjectName::parse(&t.key),
        _ => Err(Error::NoKey),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_util::cm;
    use k8s_openapi::api::core::v1::ConfigMap;

    #[test]
    fn an_object_name_should_print_and_parse_as_a_key() {
        assert_eq!(ObjectName::new("ns", "a").to_string(), "ns/a");
        assert_eq!(ObjectName::new("", "node").to_string(), "node");
        assert_eq!(
            ObjectName::parse("ns/a").unwrap(),
            ObjectName::new("ns", "a")
        );
        assert_eq!(ObjectName::parse("/b").unwrap(), ObjectName::new("", "b"));
        assert!("a/b/c".parse::<ObjectName>().is_err());
        assert_eq!(ObjectName::new("ns", "a").parts(), ("ns", "a"));
    }

    #[test]
    fn object_to_name_should_follow_the_object_or_the_tombstone_key() {
        assert_eq!(
            object_to_name(&*cm("ns", "a", 1)),
            ObjectName::new("ns", "a")
        );
        let tombstone: DeltaObject<ConfigMap> = crate::ExplicitKey::new("x/y").into();
        assert_eq!(
            deletion_handling_object_to_name(&tombstone).unwrap(),
            ObjectName::new("x", "y")
        );
    }
}
