//! API priority and fairness (`flowcontrol.apiserver.k8s.io/v1`): FlowSchemas match at
//! precedence 1000 unless they say otherwise; a limited priority level has 30 nominal shares and
//! lends none, an exempt one has neither, and queuing takes 64 queues, hands of 8 and queues of
//! 50 (flowcontrol/v1's `SetDefaults_*`). Both kinds keep `metadata.generation`.

use serde_json::{Map, Value, json};

use crate::defaults::json::{existing, or_insert, or_insert_int};
use crate::registry::rest::{Generation, Strategy};

/// The FlowSchema strategy.
pub(crate) struct FlowSchemaStrategy;

/// The PriorityLevelConfiguration strategy.
pub(crate) struct PriorityLevelStrategy;

impl Strategy for FlowSchemaStrategy {
    fn generation(&self) -> Generation {
        Generation::OnSpecChange
    }

    fn defaults(&self, obj: &mut Map<String, Value>) {
        if let Some(spec) = existing(obj, "spec") {
            or_insert_int(spec, "matchingPrecedence", 1000);
        }
    }
}

impl Strategy for PriorityLevelStrategy {
    fn generation(&self) -> Generation {
        Generation::OnSpecChange
    }

    fn defaults(&self, obj: &mut Map<String, Value>) {
        let Some(spec) = existing(obj, "spec") else {
            return;
        };
        if let Some(limited) = existing(spec, "limited") {
            or_insert(limited, "nominalConcurrencyShares", json!(30));
            or_insert(limited, "lendablePercent", json!(0));
            if let Some(queuing) =
                existing(limited, "limitResponse").and_then(|r| existing(r, "queuing"))
            {
                or_insert_int(queuing, "handSize", 8);
                or_insert_int(queuing, "queues", 64);
                or_insert_int(queuing, "queueLengthLimit", 50);
            }
        }
        if let Some(exempt) = existing(spec, "exempt") {
            or_insert(exempt, "nominalConcurrencyShares", json!(0));
            or_insert(exempt, "lendablePercent", json!(0));
        }
    }
}
