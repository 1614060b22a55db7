//! Endpoints: core/v1's `SetDefaults_EndpointPort`, a port is TCP unless it says otherwise.

use serde_json::{Map, Value};

use crate::defaults::json::{items, or_insert_str};
use crate::registry::rest::Strategy;

/// The Endpoints strategy.
pub(crate) struct EndpointsStrategy;

impl Strategy for EndpointsStrategy {
    fn defaults(&self, obj: &mut Map<String, Value>) {
        for subset in items(obj, "subsets") {
            for port in items(subset, "ports") {
                or_insert_str(port, "protocol", "TCP");
            }
        }
    }
}
