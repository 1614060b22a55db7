//! events.k8s.io Events, stored and validated as core Events.

use serde_json::{Map, Value};

use crate::registry::ResourceDef;
use crate::registry::rest::Strategy;
use crate::validation::{self, field::FieldError};

/// The events.k8s.io Event strategy.
pub(crate) struct EventStrategy;

impl Strategy for EventStrategy {
    fn validate(&self, _def: &ResourceDef, obj: &Map<String, Value>) -> Vec<FieldError> {
        validation::coordination::event_v1(obj)
    }

    /// Its `note` cannot change (kube-apiserver's `ValidateEventUpdate`).
    fn validate_update(&self, old: &Value, new: &Map<String, Value>) -> Vec<FieldError> {
        validation::coordination::event_v1_update(old, new)
    }

    /// Its internal type is core's, so its `Invalid` errors name no group.
    fn error_group<'a>(&self, _def: &'a ResourceDef) -> &'a str {
        ""
    }
}
