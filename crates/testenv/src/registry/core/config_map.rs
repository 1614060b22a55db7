//! ConfigMaps: their keys and `immutable` data.

use serde_json::{Map, Value};

use crate::registry::ResourceDef;
use crate::registry::rest::Strategy;
use crate::validation::{self, field::FieldError};

/// The ConfigMap strategy: valid keys, and data fixed once `immutable: true`.
pub(crate) struct ConfigMapStrategy;

impl Strategy for ConfigMapStrategy {
    fn validate(&self, _def: &ResourceDef, obj: &Map<String, Value>) -> Vec<FieldError> {
        validation::core::config_map(obj)
    }

    fn validate_update(&self, old: &Value, new: &Map<String, Value>) -> Vec<FieldError> {
        validation::core::immutable_data(old, new)
    }
}
