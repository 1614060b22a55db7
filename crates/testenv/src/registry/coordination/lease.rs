//! Leases: their durations and transitions.

use serde_json::{Map, Value};

use crate::registry::ResourceDef;
use crate::registry::rest::Strategy;
use crate::validation::{self, field::FieldError};

/// The Lease strategy.
pub(crate) struct LeaseStrategy;

impl Strategy for LeaseStrategy {
    fn validate(&self, _def: &ResourceDef, obj: &Map<String, Value>) -> Vec<FieldError> {
        validation::coordination::lease(obj)
    }
}
