//! Field tables: for each message, the number, JSON name and kind of each field, as
//! k8s.io/api's and k8s.io/apimachinery's `generated.proto` number them. The tables themselves
//! are in `tables.rs`, written by `cargo xtask gen` from the Go types' struct tags.
//!
//! Go's encoder writes every field that is not a pointer, zero or not; the JSON form leaves out
//! the zero values of such fields that are `omitempty` / `omitzero`, and keeps those of the
//! others and of pointer fields. The kinds say which is which.

use crate::tables;

/// How a field is encoded, and how it becomes JSON.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Kind {
    /// A string with `omitempty`; left out when empty.
    Str,
    /// A string behind a pointer, or without `omitempty`: kept when empty.
    OptStr,
    /// An integer with `omitempty`; left out when 0.
    Int,
    /// An integer behind a pointer, or without `omitempty`: kept when 0.
    OptInt,
    /// A boolean with `omitempty`; left out when false.
    Bool,
    /// A boolean behind a pointer, or without `omitempty`: kept when false.
    OptBool,
    /// `metav1.Time` (seconds, RFC 3339); the zero time is left out.
    Time,
    /// `metav1.MicroTime` (microseconds); the zero time is left out.
    MicroTime,
    /// `resource.Quantity`: its string.
    Quantity,
    /// `intstr.IntOrString`: a number or a string.
    IntOrString,
    /// `metav1.FieldsV1`: JSON bytes, written into the JSON form as they are.
    FieldsV1,
    /// `runtime.RawExtension`: JSON bytes, written into the JSON form as they are (`null` when
    /// empty).
    Raw,
    /// `[]byte`: a base64 string in JSON; left out when empty.
    Bytes,
    /// A message.
    Msg(&'static [Field]),
    /// An embedded struct whose fields JSON writes into the enclosing object.
    Inline(&'static [Field]),
    /// `map<string, string>`.
    MapStr,
    /// `map<string, bytes>`: base64 strings in JSON.
    MapBytes,
    /// `map<string, Quantity>`.
    MapQuantity,
    /// `map<string, metav1.Time>`.
    MapTime,
    /// `repeated string`.
    RepStr,
    /// `repeated int32` / `repeated int64`, one varint field per item (Go's proto2 encoding).
    RepInt,
    /// `repeated` messages.
    RepMsg(&'static [Field]),
    /// `repeated bool`, one varint field per item.
    RepBool,
    /// `repeated resource.Quantity`: their strings.
    RepQuantity,
    /// `repeated` raw JSON messages (`apiextensions/v1` `JSON`, `raw` = 1), written into the JSON
    /// form as they are.
    RepRaw,
    /// `map<string, message>`.
    MapMsg(&'static [Field]),
    /// `map<string, message>` whose values are [`Kind::Either`] messages.
    MapEither(&'static [Field]),
    /// A `double` behind a pointer (`fixed64`): a JSON number, written as an integer when it is
    /// one (as Go writes a `float64`).
    Float,
    /// A message whose JSON form is not an object but the value of one of its fields: the
    /// highest-numbered one that is set, `null` when none is (`JSONSchemaPropsOrBool`: a
    /// boolean or a schema; `JSONSchemaPropsOrArray`: a schema or an array of them;
    /// `JSONSchemaPropsOrStringArray`; `certificates/v1` `ExtraValue`, a string list).
    Either(&'static [Field]),
    /// A field whose zero JSON writes as `null` where protobuf writes nothing (a slice, map or
    /// pointer without `omitempty`, a `metav1.Time` without `omitzero`): the inner kind, with
    /// `null` in the JSON form where the inner kind would leave the field out.
    Nullable(&'static Kind),
    /// A struct field that is not a pointer (`metadata`, `spec`, a `metav1.Time` ...): Go
    /// writes it always, its zero value included, so the encoder writes the zero where the
    /// JSON form leaves it out; read as the inner kind.
    Always(&'static Kind),
}

impl Kind {
    /// The wire type the kind is sent with.
    pub(crate) fn wire(self) -> u64 {
        match self {
            Kind::Int
            | Kind::OptInt
            | Kind::Bool
            | Kind::OptBool
            | Kind::RepInt
            | Kind::RepBool => crate::wire::VARINT,
            Kind::Float => crate::wire::FIXED64,
            Kind::Nullable(inner) | Kind::Always(inner) => inner.wire(),
            _ => crate::wire::LEN,
        }
    }

    /// The kind without its [`Kind::Nullable`] and [`Kind::Always`] wrappers, and whether it
    /// had a `Nullable` one.
    pub(crate) fn unwrap_nullable(self) -> (Kind, bool) {
        match self {
            Kind::Nullable(inner) => (inner.unwrap_nullable().0, true),
            Kind::Always(inner) => inner.unwrap_nullable(),
            other => (other, false),
        }
    }

    /// The tables this kind refers to.
    #[cfg(test)]
    pub(crate) fn tables(self) -> Option<&'static [Field]> {
        match self.unwrap_nullable().0 {
            Kind::Msg(t)
            | Kind::Inline(t)
            | Kind::RepMsg(t)
            | Kind::MapMsg(t)
            | Kind::MapEither(t)
            | Kind::Either(t) => Some(t),
            _ => None,
        }
    }

    /// Whether the field may occur more than once (a repeated field or a map).
    pub(crate) fn repeated(self) -> bool {
        matches!(
            self.unwrap_nullable().0,
            Kind::MapStr
                | Kind::MapBytes
                | Kind::MapQuantity
                | Kind::MapTime
                | Kind::MapMsg(_)
                | Kind::MapEither(_)
                | Kind::RepStr
                | Kind::RepInt
                | Kind::RepBool
                | Kind::RepQuantity
                | Kind::RepRaw
                | Kind::RepMsg(_)
        )
    }
}

/// A field of a message: its number, its JSON name (empty for an inlined struct) and kind.
pub(crate) type Field = (u64, &'static str, Kind);

/// `metadata.managedFields`' number in `ObjectMeta`.
pub(crate) const MANAGED_FIELDS: u64 = 17;

/// `metav1.ObjectMeta`.
pub(crate) const OBJECT_META: &[Field] = tables::META_V1_OBJECT_META;

/// `metav1.ListMeta`.
pub(crate) const LIST_META: &[Field] = tables::META_V1_LIST_META;

/// The field table of one kind.
#[derive(Debug)]
pub struct Schema {
    api_version: &'static str,
    kind: &'static str,
    pub(crate) fields: &'static [Field],
    /// Whether the table holds every field of the kind's Go type.
    complete: bool,
}

impl Schema {
    /// The field table of a kind, `None` for a kind this crate cannot encode or decode.
    #[must_use]
    pub fn for_kind(api_version: &str, kind: &str) -> Option<&'static Schema> {
        schema_for(api_version, kind)
    }

    /// The field table of the items of a list kind (`ConfigMapList` gives `ConfigMap`'s).
    #[must_use]
    pub fn for_list_item(api_version: &str, list_kind: &str) -> Option<&'static Schema> {
        item_schema_for(api_version, list_kind)
    }

    /// Every kind with a table.
    pub fn all() -> impl Iterator<Item = &'static Schema> {
        kinds()
    }

    /// The kind's `apiVersion`.
    #[must_use]
    pub fn api_version(&self) -> &'static str {
        self.api_version
    }

    /// The kind's name.
    #[must_use]
    pub fn kind(&self) -> &'static str {
        self.kind
    }

    /// Whether the table holds every field of the kind's API type (so every object of the
    /// kind decodes whole); `false` for a kind that reaches a field of a type the tables have
    /// no kind for, whose table leaves that field out (every kind of v1.36.2's covered groups
    /// is complete).
    #[must_use]
    pub fn complete(&self) -> bool {
        self.complete
    }
}

pub(crate) const fn schema(
    api_version: &'static str,
    kind: &'static str,
    fields: &'static [Field],
    complete: bool,
) -> Schema {
    Schema {
        api_version,
        kind,
        fields,
        complete,
    }
}

pub(crate) fn schema_for(api_version: &str, kind: &str) -> Option<&'static Schema> {
    tables::SCHEMAS
        .iter()
        .find(|s| s.api_version == api_version && s.kind == kind)
}

pub(crate) fn item_schema_for(api_version: &str, list_kind: &str) -> Option<&'static Schema> {
    schema_for(api_version, list_kind.strip_suffix("List")?)
}

pub(crate) fn kinds() -> impl Iterator<Item = &'static Schema> {
    tables::SCHEMAS.iter()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every table the kinds reach, each once (a table may reach itself).
    fn every_table() -> Vec<&'static [Field]> {
        fn collect(fields: &'static [Field], out: &mut Vec<&'static [Field]>) {
            if out
                .iter()
                .any(|t| std::ptr::eq(t.as_ptr(), fields.as_ptr()))
            {
                return;
            }
            out.push(fields);
            for (_, _, kind) in fields {
                if let Some(inner) = kind.tables() {
                    collect(inner, out);
                }
            }
        }
        let mut out = Vec::new();
        for s in kinds() {
            collect(s.fields, &mut out);
        }
        collect(LIST_META, &mut out);
        out
    }

    #[test]
    fn field_numbers_should_be_unique_and_small() {
        for fields in every_table() {
            // In number order (the encoder writes fields in table order, as Go writes them),
            // each number once.
            assert!(
                fields.windows(2).all(|w| w[0].0 < w[1].0),
                "numbers out of order or twice in {fields:?}"
            );
            for (number, name, kind) in fields {
                // The decoder tracks the repeated fields it has read in a 128-bit set.
                assert!(*number > 0 && *number < 128, "{name}");
                // `Nullable` wraps the kinds of fields, never another `Nullable`.
                if let Kind::Nullable(inner) = kind {
                    assert!(
                        !matches!(inner, Kind::Nullable(_) | Kind::Inline(_)),
                        "{name}"
                    );
                }
            }
        }
    }

    /// How deeply inlined structs nest under one message.
    fn inline_depth(fields: &'static [Field]) -> usize {
        fields
            .iter()
            .map(|(_, _, kind)| match kind {
                Kind::Inline(inner) => 1 + inline_depth(inner),
                _ => 0,
            })
            .max()
            .unwrap_or(0)
    }

    #[test]
    fn inlined_structs_should_nest_less_than_the_decoder_allows() {
        for fields in every_table() {
            // The decoder keeps a frame per inlined struct, `MAX_INLINE` of them with the
            // message.
            assert!(inline_depth(fields) < crate::de::MAX_INLINE, "{fields:?}");
        }
    }

    #[test]
    fn object_meta_should_hold_managed_fields_at_their_number() {
        assert!(
            OBJECT_META
                .iter()
                .any(|(n, name, _)| *n == MANAGED_FIELDS && *name == "managedFields")
        );
        assert!(
            OBJECT_META
                .iter()
                .all(|(n, name, _)| *n != MANAGED_FIELDS || *name == "managedFields")
        );
    }

    #[test]
    fn kinds_should_be_found_by_type_and_list_type() {
        assert_eq!(
            schema_for("v1", "ConfigMap").map(Schema::kind),
            Some("ConfigMap")
        );
        assert_eq!(
            item_schema_for("apps/v1", "DeploymentList").map(Schema::kind),
            Some("Deployment")
        );
        assert!(schema_for("batch/v1", "Job").is_some_and(Schema::complete));
        assert!(schema_for("example.com/v1", "Widget").is_none());
        assert!(item_schema_for("v1", "ConfigMap").is_none());
    }
}
