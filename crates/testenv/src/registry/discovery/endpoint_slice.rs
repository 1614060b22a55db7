//! EndpointSlices, as discovery/v1's `SetDefaults_EndpointPort` (a port has a name, `""` when
//! not given, and is TCP unless it says otherwise) and kube-apiserver's `endpointslice`
//! strategy: `metadata.generation` is 1 from the create on and bumped by any change but
//! metadata, or a change of the labels; the `addressType` may not change.

use serde_json::{Map, Value, json};

use crate::defaults::json::{items, or_insert};
use crate::registry::rest::{Generation, Strategy};
use crate::validation::field::FieldError;

/// The EndpointSlice strategy.
pub(crate) struct EndpointSliceStrategy;

impl Strategy for EndpointSliceStrategy {
    fn defaults(&self, obj: &mut Map<String, Value>) {
        for port in items(obj, "ports") {
            or_insert(port, "name", json!(""));
            or_insert(port, "protocol", json!("TCP"));
        }
    }

    fn generation(&self) -> Generation {
        Generation::OnChangeOrLabels
    }

    fn validate_update(&self, old: &Value, new: &Map<String, Value>) -> Vec<FieldError> {
        let address_type = new.get("addressType").cloned().unwrap_or(Value::Null);
        if old.get("addressType").unwrap_or(&Value::Null) == &address_type {
            return Vec::new();
        }
        vec![FieldError::invalid(
            "addressType",
            &address_type,
            "field is immutable",
        )]
    }

    fn validates_new_state_first(&self) -> bool {
        true
    }
}
