//! CronJobs: batch/v1's `SetDefaults_CronJob` (concurrency `Allow`, not suspended, 3 successful
//! and 1 failed job kept) and the job template's pod defaults, before the field manager records
//! the write (the job template's own spec gets no Job defaults); an empty status on create; the
//! kind keeps `metadata.generation`.

use serde_json::{Map, Value, json};

use crate::defaults::json::{existing, or_insert, or_insert_str};
use crate::defaults::pod;
use crate::registry::rest::{Generation, Strategy};
use crate::store::Store;

/// The CronJob strategy.
pub(crate) struct CronJobStrategy;

impl Strategy for CronJobStrategy {
    fn generation(&self) -> Generation {
        Generation::OnSpecChange
    }

    fn defaults(&self, obj: &mut Map<String, Value>) {
        let Some(spec) = existing(obj, "spec") else {
            return;
        };
        or_insert_str(spec, "concurrencyPolicy", "Allow");
        or_insert(spec, "suspend", json!(false));
        or_insert(spec, "successfulJobsHistoryLimit", json!(3));
        or_insert(spec, "failedJobsHistoryLimit", json!(1));
        if let Some(template) = existing(spec, "jobTemplate")
            .and_then(|j| existing(j, "spec"))
            .and_then(|s| existing(s, "template"))
        {
            pod::pod_template(template);
        }
    }

    fn prepare_for_create(&self, _store: &Store, _namespace: &str, obj: &mut Map<String, Value>) {
        obj.insert("status".into(), json!({}));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cron_job_should_get_its_defaults_and_its_pods_theirs() {
        let mut cj = json!({"spec": {"schedule": "@hourly", "jobTemplate": {"spec": {
            "template": {"spec": {"restartPolicy": "Never",
                "containers": [{"name": "c", "image": "busybox:1.36"}]}}}}}});
        CronJobStrategy.defaults(cj.as_object_mut().unwrap());
        let spec = &cj["spec"];
        assert_eq!(spec["concurrencyPolicy"], "Allow");
        assert_eq!(spec["suspend"], false);
        assert_eq!(spec["successfulJobsHistoryLimit"], 3);
        assert_eq!(spec["failedJobsHistoryLimit"], 1);
        assert!(spec["jobTemplate"]["spec"].get("backoffLimit").is_none());
        let pod = &spec["jobTemplate"]["spec"]["template"]["spec"];
        assert_eq!(pod["dnsPolicy"], "ClusterFirst");
        assert_eq!(pod["containers"][0]["imagePullPolicy"], "IfNotPresent");
    }
}
