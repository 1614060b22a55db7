//! Validation, as kube-apiserver's `pkg/apis/*/validation` and apimachinery's
//! `ValidateObjectMeta` / `ValidateCreateOptions` do it: each rule answers with the field errors
//! kube-apiserver names, and a list of them becomes one `422 Invalid` Status.
//!
//! [`on_create`] and [`on_update`] are the hooks the request handlers call with the object as
//! it will be stored (after defaulting).

pub(crate) mod apps;
pub(crate) mod coordination;
pub(crate) mod core;
pub(crate) mod crd;
pub(crate) mod field;
pub(crate) mod names;
pub(crate) mod object_meta;
pub(crate) mod options;
pub(crate) mod pod_policies;
pub(crate) mod preconditions;
pub(crate) mod unknown_fields;
mod volumes;

use serde_json::{Map, Value};

use crate::registry::ResourceDef;
use crate::registry::rest::strategy_for;
use crate::status::ApiResult;

fn name_of(obj: &Map<String, Value>) -> &str {
    obj.get("metadata")
        .and_then(|m| m.get("name"))
        .and_then(Value::as_str)
        .unwrap_or_default()
}

/// Validates a new object (`rest.BeforeCreate`): `422 Invalid` with every cause of the
/// metadata and of the kind's strategy.
pub(crate) fn on_create(def: &ResourceDef, obj: &Map<String, Value>) -> ApiResult<()> {
    let strategy = strategy_for(def);
    let mut errs = object_meta::validate(strategy.name_rule(), obj);
    errs.extend(strategy.validate(def, obj));
    if def.custom {
        let rules = crate::custom_resource::validate_rules(def, obj, None, &errs);
        errs.extend(rules);
    }
    field::check(strategy.error_group(def), &def.kind, name_of(obj), errs)
}

/// Validates an update of `old` to `new` (the main resource; `rest.BeforeUpdate`): the
/// metadata, the fields the strategy says cannot change, then the kind's rules on the new state.
/// `immutable`: what [`object_meta::update`] found in the request's metadata, which
/// kube-apiserver checks twice (once for every kind, once in the kind's `ValidateUpdate`), so
/// its causes are listed twice.
pub(crate) fn on_update(
    def: &ResourceDef,
    old: &Value,
    new: &Map<String, Value>,
    immutable: &[field::FieldError],
) -> ApiResult<()> {
    let strategy = strategy_for(def);
    let mut errs = immutable.to_vec();
    errs.extend(immutable.iter().cloned());
    errs.extend(object_meta::validate(strategy.name_rule(), new));
    let new_state = if strategy.validates_new_state_on_update() {
        strategy.validate(def, new)
    } else {
        Vec::new()
    };
    if strategy.validates_new_state_first() {
        errs.extend(new_state);
        errs.extend(strategy.validate_update(old, new));
    } else {
        errs.extend(strategy.validate_update(old, new));
        errs.extend(new_state);
    }
    if def.custom {
        let rules = crate::custom_resource::validate_rules(def, new, Some(old), &errs);
        errs.extend(rules);
    }
    field::check(strategy.error_group(def), &def.kind, name_of(new), errs)
}
