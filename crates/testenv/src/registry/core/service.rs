//! Services: defaults and allocations ([`defaults`]), validation of ports, policies and
//! updates ([`validation`]), and the strategy that the generic store calls.

pub(crate) mod defaults;
pub(crate) mod validation;

use serde_json::{Map, Value};

use crate::registry::ResourceDef;
use crate::registry::rest::{NameRule, Strategy};
use crate::store::Store;
use crate::validation::field::FieldError;
use crate::validation::names;

/// The Service strategy: defaults, cluster IPs and node ports allocated on create and kept by
/// updates that leave them out, a DNS-1035 label name, and the update rules of its IPs.
pub(crate) struct ServiceStrategy;

impl Strategy for ServiceStrategy {
    fn returns_deleted_object(&self) -> bool {
        true
    }

    fn defaults(&self, obj: &mut Map<String, Value>) {
        defaults::on_write(obj);
    }

    fn prepare_for_create(&self, store: &Store, _namespace: &str, obj: &mut Map<String, Value>) {
        defaults::prepare_for_create(store, obj);
    }

    fn prepare_for_update(&self, old: &Value, new: &mut Map<String, Value>) {
        defaults::prepare_for_update(old, new);
    }

    fn validate(&self, _def: &ResourceDef, obj: &Map<String, Value>) -> Vec<FieldError> {
        let mut errs = crate::validation::core::service(obj);
        errs.extend(validation::policies(obj));
        errs
    }

    fn validate_update(&self, old: &Value, new: &Map<String, Value>) -> Vec<FieldError> {
        validation::update(old, new)
    }

    fn validate_status_update(&self, _old: &Value, new: &Map<String, Value>) -> Vec<FieldError> {
        validation::load_balancer_status(new)
    }

    fn name_rule(&self) -> NameRule {
        names::dns1035_label
    }
}
