//! Custom resources: validated by their CRD's schema, and updated only with a resourceVersion.

use serde_json::{Map, Value};

use crate::registry::ResourceDef;
use crate::registry::rest::{Generation, Strategy};
use crate::validation::field::FieldError;

/// The strategy of every custom resource.
pub(crate) struct CustomResourceStrategy;

impl Strategy for CustomResourceStrategy {
    fn generation(&self) -> Generation {
        Generation::OnSpecChange
    }

    fn validate(&self, def: &ResourceDef, obj: &Map<String, Value>) -> Vec<FieldError> {
        crate::custom_resource::validate(def, obj)
    }

    /// apiextensions-apiserver requires `metadata.resourceVersion` on an update.
    fn allow_unconditional_update(&self) -> bool {
        false
    }
}
