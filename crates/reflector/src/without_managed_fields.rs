//! Decoding an object without its `metadata.managedFields`: a deserializer
//! that skips the field as it reads it (serde's `IgnoredAny`: parsed, never
//! allocated) instead of building the entries and dropping them afterwards.

use std::borrow::Cow;
use std::fmt;
use std::marker::PhantomData;

use serde::de::value::CowStrDeserializer;
use serde::de::{DeserializeSeed, Deserializer, IgnoredAny, IntoDeserializer, MapAccess, Visitor};
use serde::{Deserialize, forward_to_deserialize_any};

/// An object decoded with its `metadata.managedFields` skipped.
#[derive(Debug)]
pub(crate) struct WithoutManagedFields<K>(pub(crate) K);

impl<'de, K: Deserialize<'de>> Deserialize<'de> for WithoutManagedFields<K> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        K::deserialize(Filtered {
            inner: deserializer,
            level: Level::Object,
        })
        .map(WithoutManagedFields)
    }
}

/// Where a filtered map sits.
#[derive(Clone, Copy)]
enum Level {
    /// The object: its `metadata` is filtered.
    Object,
    /// The object's metadata: its `managedFields` is skipped.
    Metadata,
}

impl Level {
    fn wanted(self, key: &str) -> Option<Level> {
        match self {
            Level::Object => (key == "metadata").then_some(Level::Metadata),
            Level::Metadata => None,
        }
    }

    fn skipped(self, key: &str) -> bool {
        matches!(self, Level::Metadata) && key == "managedFields"
    }
}

/// A deserializer that reads a map, filtered as its level says, whatever
/// the type asks for (an object and its metadata are JSON objects).
struct Filtered<D> {
    inner: D,
    level: Level,
}

impl<'de, D: Deserializer<'de>> Deserializer<'de> for Filtered<D> {
    type Error = D::Error;

    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, D::Error> {
        self.inner.deserialize_map(FilteredVisitor {
            inner: visitor,
            level: self.level,
        })
    }

    fn deserialize_option<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, D::Error> {
        visitor.visit_some(self)
    }

    forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string
        bytes byte_buf unit unit_struct newtype_struct seq tuple
        tuple_struct map struct enum identifier ignored_any
    }
}

struct FilteredVisitor<V> {
    inner: V,
    level: Level,
}

impl<'de, V: Visitor<'de>> Visitor<'de> for FilteredVisitor<V> {
    type Value = V::Value;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.inner.expecting(f)
    }

    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<V::Value, A::Error> {
        self.inner.visit_map(FilteredMap {
            inner: map,
            level: self.level,
            next: None,
        })
    }
}

struct FilteredMap<A> {
    inner: A,
    level: Level,
    /// The level of the value of the key just handed out, when filtered.
    next: Option<Level>,
}

impl<'de, A: MapAccess<'de>> MapAccess<'de> for FilteredMap<A> {
    type Error = A::Error;

    fn next_key_seed<S: DeserializeSeed<'de>>(
        &mut self,
        seed: S,
    ) -> Result<Option<S::Value>, A::Error> {
        loop {
            let Some(key) = self.inner.next_key::<Cow<'de, str>>()? else {
                return Ok(None);
            };
            if self.level.skipped(&key) {
                self.inner.next_value::<IgnoredAny>()?;
                continue;
            }
            self.next = self.level.wanted(&key);
            let key: CowStrDeserializer<'de, A::Error> = key.into_deserializer();
            return seed.deserialize(key).map(Some);
        }
    }

    fn next_value_seed<S: DeserializeSeed<'de>>(&mut self, seed: S) -> Result<S::Value, A::Error> {
        match self.next.take() {
            Some(level) => self
                .inner
                .next_value_seed(FilteredSeed { inner: seed, level }),
            None => self.inner.next_value_seed(seed),
        }
    }

    fn size_hint(&self) -> Option<usize> {
        self.inner.size_hint()
    }
}

struct FilteredSeed<S> {
    inner: S,
    level: Level,
}

impl<'de, S: DeserializeSeed<'de>> DeserializeSeed<'de> for FilteredSeed<S> {
    type Value = S::Value;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<S::Value, D::Error> {
        self.inner.deserialize(Filtered {
            inner: deserializer,
            level: self.level,
        })
    }
}

/// Decodes a sequence of objects, each without its managedFields.
pub(crate) fn items_without_managed_fields<'de, D, K>(deserializer: D) -> Result<Vec<K>, D::Error>
where
    D: Deserializer<'de>,
    K: Deserialize<'de>,
{
    struct Items<K>(PhantomData<K>);
    impl<'de, K: Deserialize<'de>> Visitor<'de> for Items<K> {
        type Value = Vec<K>;

        fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str("a list of objects or null")
        }

        fn visit_unit<E: serde::de::Error>(self) -> Result<Vec<K>, E> {
            Ok(Vec::new())
        }

        fn visit_none<E: serde::de::Error>(self) -> Result<Vec<K>, E> {
            Ok(Vec::new())
        }

        fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<Vec<K>, D::Error> {
            d.deserialize_seq(self)
        }

        fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut seq: A) -> Result<Vec<K>, A::Error> {
            let mut items = Vec::with_capacity(seq.size_hint().unwrap_or(0).min(4096));
            while let Some(WithoutManagedFields(item)) = seq.next_element()? {
                items.push(item);
            }
            Ok(items)
        }
    }
    deserializer.deserialize_option(Items(PhantomData))
}

#[cfg(test)]
mod tests {
    use super::*;
    use k8s_openapi::api::core::v1::ConfigMap;
    use kube::core::DynamicObject;

    const OBJECT: &str = r#"{"apiVersion":"v1","kind":"ConfigMap",
        "metadata":{"name":"a","namespace":"ns","resourceVersion":"5",
            "managedFields":[{"manager":"kubectl","operation":"Apply","fieldsType":"FieldsV1",
                "fieldsV1":{"f:data":{"f:k":{}}}}],
            "labels":{"managedFields":"a label, kept"}},
        "data":{"managedFields":"a data key, kept"}}"#;

    #[test]
    fn managed_fields_should_be_skipped_and_everything_else_kept() {
        let WithoutManagedFields(cm) =
            serde_json::from_str::<WithoutManagedFields<ConfigMap>>(OBJECT)
                .unwrap_or_else(|e| panic!("{e}"));
        let mut expected: ConfigMap =
            serde_json::from_str(OBJECT).unwrap_or_else(|e| panic!("{e}"));
        assert!(expected.metadata.managed_fields.is_some());
        expected.metadata.managed_fields = None;
        assert_eq!(cm, expected);
    }

    #[test]
    fn dynamic_objects_should_lose_their_managed_fields_too() {
        let WithoutManagedFields(obj) =
            serde_json::from_str::<WithoutManagedFields<DynamicObject>>(OBJECT)
                .unwrap_or_else(|e| panic!("{e}"));
        assert!(obj.metadata.managed_fields.is_none());
        assert_eq!(obj.metadata.name.as_deref(), Some("a"));
        assert_eq!(obj.data["data"]["managedFields"], "a data key, kept");
    }

    #[test]
    fn a_bad_object_should_still_be_a_decode_error() {
        let bad = r#"{"metadata":{"name":"a","managedFields":[]},"data":{"k":5}}"#;
        assert!(serde_json::from_str::<WithoutManagedFields<ConfigMap>>(bad).is_err());
    }
}
