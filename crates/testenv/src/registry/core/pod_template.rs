//! PodTemplates: the template's pod spec gets a Pod's defaults (`SetDefaults_PodSpec` and the
//! containers' through `SetObjectDefaults_PodTemplate`) before the field manager records the
//! write, so the writer owns them, as on a cluster; the kind keeps `metadata.generation`.

use serde_json::{Map, Value};

use crate::defaults::json::existing;
use crate::defaults::pod;
use crate::registry::rest::{Generation, Strategy};

/// The PodTemplate strategy.
pub(crate) struct PodTemplateStrategy;

impl Strategy for PodTemplateStrategy {
    fn generation(&self) -> Generation {
        Generation::OnSpecChange
    }

    fn defaults(&self, obj: &mut Map<String, Value>) {
        if let Some(template) = existing(obj, "template") {
            pod::pod_template(template);
        }
    }
}
