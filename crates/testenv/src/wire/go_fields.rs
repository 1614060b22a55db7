//! The facts about the Go struct fields of the built-in kinds that k8s-openapi does not carry:
//! whether a field is a pointer, whether its JSON tag has `omitempty` or `omitzero` (which
//! decide what Go's `encoding/json` writes for its zero value), and the name of its type where
//! Go declares one of its own over a string, slice or map (`v1.PullPolicy`, `v1.ResourceList`,
//! `[]v1.Capability`), which Go's decode errors name. The shape of the types (which field is a
//! struct, a slice, a string) comes from [`go_types`](super::go_types).
//!
//! Generated (`table.rs`, by `cargo xtask gen` from `xtask/k8s/go-api.txt`) from the Go
//! sources of Kubernetes v1.36.2: every `type X struct` of `k8s.io/api`
//! v0.36.2 (`core/v1`, `apps/v1`, `coordination/v1`, `events/v1`, `admissionregistration/v1`,
//! `autoscaling/v1`, `autoscaling/v2`, `batch/v1`, `certificates/v1`, `discovery/v1`,
//! `flowcontrol/v1`, `networking/v1`, `node/v1`, `policy/v1`, `rbac/v1`, `scheduling/v1`,
//! `storage/v1`: `types.go`), of `k8s.io/apimachinery` v0.36.2 (`pkg/apis/meta/v1/types.go`)
//! and of `k8s.io/kube-aggregator` v0.36.2 (`pkg/apis/apiregistration/v1/types.go`), read
//! field by field (an embedded field with a JSON name as a field, the fields of an embedded
//! struct of the same package tagged `json:",inline"` as its own, `json:"-"` left out).
//! Format, one struct a line: its name qualified by its package's group and version, then its
//! fields by JSON name:
//!
//! ```text
//! <group>.<version>.<Struct> <field>...
//! ```
//!
//! where `name` has `omitempty` and is a pointer, a slice, a map or a basic type (its zero is
//! dropped), `name=` is not a pointer and has no `omitempty`, `*name` is a pointer without
//! `omitempty`, `name?` has `omitempty` and is of a named type that is not a pointer (a struct,
//! which `omitempty` never drops, or a named string, slice or map, which it does), and `name!`
//! has `omitzero`. A field whose type is, or is made of, a named string, slice or map ends with
//! `:` and the type as Go's `reflect.Type.String` writes it (`imagePullPolicy?:v1.PullPolicy`);
//! the named slices and maps are defined in [`NAMED_TYPES`]. A struct without JSON fields has
//! no line.

use std::collections::HashMap;
use std::sync::LazyLock;

mod table;

use table::GO_FIELDS;
pub(super) use table::NAMED_TYPES;

/// What a field's zero encodes as.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Tag {
    /// Not a pointer, no `omitempty`: the zero of its type.
    Value,
    /// A pointer without `omitempty`: `null`.
    Pointer,
    /// Not a pointer, with `omitempty`, of a named type: a struct's zero (never dropped by
    /// `omitempty`), else dropped.
    NamedOmitEmpty,
    /// `omitzero`: dropped.
    OmitZero,
    /// A pointer, slice, map or basic type with `omitempty`: dropped.
    OmitEmpty,
}

/// A field of the table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Field {
    /// How its zero is written.
    pub(super) tag: Tag,
    /// Its Go type's name, where it is not what its shape is called (`v1.PullPolicy`).
    pub(super) go_type: Option<&'static str>,
}

/// The table's fields by struct, then by JSON name.
pub(super) static TABLE: LazyLock<HashMap<&'static str, HashMap<&'static str, Field>>> =
    LazyLock::new(|| {
        GO_FIELDS
            .lines()
            .filter_map(|line| {
                let mut words = line.split(' ');
                let name = words.next().filter(|n| !n.is_empty())?;
                Some((name, words.map(field).collect()))
            })
            .collect()
    });

/// A field of a line of the table: its name and what it says.
fn field(word: &'static str) -> (&'static str, Field) {
    let (word, go_type) = match word.split_once(':') {
        Some((w, t)) => (w, Some(t)),
        None => (word, None),
    };
    let (name, tag) = if let Some(f) = word.strip_prefix('*') {
        (f, Tag::Pointer)
    } else if let Some(f) = word.strip_suffix('?') {
        (f, Tag::NamedOmitEmpty)
    } else if let Some(f) = word.strip_suffix('!') {
        (f, Tag::OmitZero)
    } else if let Some(f) = word.strip_suffix('=') {
        (f, Tag::Value)
    } else {
        (word, Tag::OmitEmpty)
    };
    (name, Field { tag, go_type })
}

/// The field `name` of the struct `qualified` (`apps.v1.DeploymentSpec`), if the table has it.
pub(super) fn lookup(qualified: &str, name: &str) -> Option<Field> {
    TABLE.get(qualified)?.get(name).copied()
}
