//! CronJobs: batch/v1's `SetDefaults_CronJob` (concurrency `Allow`, not suspended, 3 successful
//! and 1 failed job kept) and the job template's pod defaults, before the field manager records
//! the write (the job template's own spec gets no Job defaults); an empty status on create; the
//! kind keeps `metadata.generation`. `ValidateCronJobCreate` / `ValidateCronJobUpdate`: the
//! schedule (the cron parser's error, no `TZ=` / `CRON_TZ=` unless the stored schedule already
//! had one), a non-negative starting deadline, a known `timeZone` (checked when it changes), the
//! concurrency policy, the job template (the Job's spec rules, no selector, no manual
//! selector), non-negative history limits; on create, a name of at most 52 characters.

use serde_json::{Map, Value, json};

use super::cron_schedule;
use super::job::job_spec_rules;
use crate::defaults::json::{existing, or_insert, or_insert_str};
use crate::defaults::pod;
use crate::registry::ResourceDef;
use crate::registry::rest::{Generation, Strategy};
use crate::store::Store;
use crate::validation::field::FieldError;

/// The longest CronJob name: a Job's name (63 characters at most) is the CronJob's and an
/// 11-character suffix.
const MAX_NAME_LENGTH: usize = 52;

/// `validateTimeZone`: empty, malformed, `Local` or unknown names.
fn time_zone(tz: &Value) -> Vec<FieldError> {
    let path = "spec.timeZone";
    let Some(name) = tz.as_str() else {
        return Vec::new();
    };
    if name.is_empty() {
        return vec![FieldError::invalid(
            path,
            tz,
            "timeZone must be nil or non-empty string",
        )];
    }
    let well_formed = |part: &str| {
        part != "."
            && part != ".."
            && !part.starts_with('-')
            && (1..=14).contains(&part.len())
            && part
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'-' | b'_' | b'+'))
    };
    if !name.split('/').all(well_formed) {
        return vec![FieldError::invalid(
            path,
            tz,
            &format!("unknown time zone {name}"),
        )];
    }
    let mut errs = Vec::new();
    if name.eq_ignore_ascii_case("Local") {
        errs.push(FieldError::invalid(
            path,
            tz,
            "timeZone must be an explicit time zone as defined in https://www.iana.org/time-zones",
        ));
    }
    if let Some(err) = cron_schedule::load_location_error(name) {
        errs.push(FieldError::invalid(path, tz, &err));
    }
    errs
}

/// `validateCronJobSpec`; `old`: the stored spec on update.
fn cron_job_spec(spec: Option<&Value>, old: Option<&Value>) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let get = |s: Option<&Value>, key: &str| -> Option<Value> {
        s.and_then(|s| s.get(key)).filter(|v| !v.is_null()).cloned()
    };
    let schedule = get(spec, "schedule");
    match schedule
        .as_ref()
        .and_then(Value::as_str)
        .unwrap_or_default()
    {
        "" => errs.push(FieldError::required("spec.schedule", "")),
        text => {
            let value = json!(text);
            if let Some(err) = cron_schedule::parse_error(text) {
                errs.push(FieldError::invalid("spec.schedule", &value, &err));
            }
            let tz_allowed = get(old, "schedule")
                .and_then(|s| s.as_str().map(|s| s.contains("TZ")))
                .unwrap_or(false);
            if text.contains("TZ") {
                if !tz_allowed {
                    errs.push(FieldError::invalid(
                        "spec.schedule",
                        &value,
                        "cannot use TZ or CRON_TZ in schedule, use timeZone field instead",
                    ));
                } else if get(spec, "timeZone").is_some() {
                    errs.push(FieldError::invalid(
                        "spec.schedule",
                        &value,
                        "cannot use both timeZone field and TZ or CRON_TZ in schedule",
                    ));
                }
            }
        }
    }
    if let Some(n) = get(spec, "startingDeadlineSeconds").and_then(|v| v.as_i64())
        && n < 0
    {
        errs.push(FieldError::invalid(
            "spec.startingDeadlineSeconds",
            &json!(n),
            "must be greater than or equal to 0",
        ));
    }
    let tz = get(spec, "timeZone");
    if old.is_none() || tz != get(old, "timeZone") {
        errs.extend(tz.as_ref().map(time_zone).unwrap_or_default());
    }
    match get(spec, "concurrencyPolicy")
        .as_ref()
        .and_then(Value::as_str)
        .unwrap_or_default()
    {
        "Allow" | "Forbid" | "Replace" => {}
        "" => errs.push(FieldError::required("spec.concurrencyPolicy", "")),
        other => errs.push(FieldError::not_supported(
            "spec.concurrencyPolicy",
            &json!(other),
            &["Allow", "Forbid", "Replace"],
        )),
    }
    // `ValidateJobTemplateSpec`: the Job's rules; the selector is always generated.
    let job_spec = spec.and_then(|s| s.pointer("/jobTemplate/spec"));
    errs.extend(job_spec_rules(job_spec, "spec.jobTemplate.spec"));
    if let Some(selector) = job_spec
        .and_then(|s| s.get("selector"))
        .filter(|v| !v.is_null())
    {
        errs.push(FieldError::invalid(
            "spec.jobTemplate.spec.selector",
            selector,
            "`selector` will be auto-generated",
        ));
    }
    if job_spec.and_then(|s| s.get("manualSelector")) == Some(&json!(true)) {
        errs.push(FieldError::not_supported(
            "spec.jobTemplate.spec.manualSelector",
            &json!(true),
            &["nil", "false"],
        ));
    }
    for key in ["successfulJobsHistoryLimit", "failedJobsHistoryLimit"] {
        if let Some(n) = get(spec, key).and_then(|v| v.as_i64())
            && n < 0
        {
            errs.push(FieldError::invalid(
                format!("spec.{key}"),
                &json!(n),
                "must be greater than or equal to 0",
            ));
        }
    }
    errs
}

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

    /// `ValidateCronJobCreate` (after the metadata): the spec, then the name's length.
    fn validate(&self, _def: &ResourceDef, obj: &Map<String, Value>) -> Vec<FieldError> {
        let mut errs = cron_job_spec(obj.get("spec"), None);
        let name = obj
            .get("metadata")
            .and_then(|m| m.get("name"))
            .and_then(Value::as_str)
            .unwrap_or_default();
        if name.len() > MAX_NAME_LENGTH {
            errs.push(FieldError::invalid(
                "metadata.name",
                &json!(name),
                "must be no more than 52 characters",
            ));
        }
        errs
    }

    /// `ValidateCronJobUpdate`: the spec, knowing the stored one (the name's length is not
    /// checked again).
    fn validate_update(&self, old: &Value, new: &Map<String, Value>) -> Vec<FieldError> {
        cron_job_spec(
            new.get("spec"),
            Some(old.get("spec").unwrap_or(&Value::Null)),
        )
    }

    fn validates_new_state_on_update(&self) -> bool {
        false
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

    fn cron_job(spec: Value) -> Map<String, Value> {
        let mut obj = json!({"apiVersion": "batch/v1", "kind": "CronJob",
            "metadata": {"name": "cj"}, "spec": spec});
        CronJobStrategy.defaults(obj.as_object_mut().unwrap());
        obj.as_object().unwrap().clone()
    }

    fn job_template() -> Value {
        json!({"spec": {"template": {"spec": {"restartPolicy": "OnFailure",
            "containers": [{"name": "c", "image": "busybox"}]}}}})
    }

    fn causes(errs: &[FieldError]) -> Vec<(String, String)> {
        errs.iter()
            .map(|e| (e.field.clone(), e.message.clone()))
            .collect()
    }

    fn def() -> ResourceDef {
        crate::registry::builtins()
            .into_iter()
            .find(|d| d.kind == "CronJob")
            .unwrap()
    }

    #[test]
    fn a_valid_cron_job_should_pass() {
        let obj = cron_job(
            json!({"schedule": "*/5 * * * *", "timeZone": "Europe/Paris",
            "jobTemplate": job_template()}),
        );
        assert_eq!(CronJobStrategy.validate(&def(), &obj), vec![]);
    }

    #[test]
    fn each_spec_rule_should_name_its_field_in_kube_apiservers_order() {
        let mut template = job_template();
        template["spec"]["template"]["spec"]["restartPolicy"] = json!("Always");
        template["spec"]["selector"] = json!({"matchLabels": {"a": "b"}});
        template["spec"]["manualSelector"] = json!(true);
        let obj = cron_job(
            json!({"schedule": "61 * * * *", "startingDeadlineSeconds": -1,
            "timeZone": "Mars/Olympus", "concurrencyPolicy": "Sometimes",
            "successfulJobsHistoryLimit": -2, "failedJobsHistoryLimit": -3,
            "jobTemplate": template}),
        );
        assert_eq!(
            causes(&CronJobStrategy.validate(&def(), &obj)),
            [
                ("spec.schedule", "Invalid value: \"61 * * * *\": end of range (61) above maximum (59): 61"),
                ("spec.startingDeadlineSeconds", "Invalid value: -1: must be greater than or equal to 0"),
                ("spec.timeZone", "Invalid value: \"Mars/Olympus\": unknown time zone Mars/Olympus"),
                ("spec.concurrencyPolicy", "Unsupported value: \"Sometimes\": supported values: \"Allow\", \"Forbid\", \"Replace\""),
                ("spec.jobTemplate.spec.template.spec.restartPolicy", "Required value: valid values: \"OnFailure\", \"Never\""),
                ("spec.jobTemplate.spec.selector", "Invalid value: {\"matchLabels\":{\"a\":\"b\"}}: `selector` will be auto-generated"),
                ("spec.jobTemplate.spec.manualSelector", "Unsupported value: true: supported values: \"nil\", \"false\""),
                ("spec.successfulJobsHistoryLimit", "Invalid value: -2: must be greater than or equal to 0"),
                ("spec.failedJobsHistoryLimit", "Invalid value: -3: must be greater than or equal to 0"),
            ]
            .map(|(f, m)| (f.to_owned(), m.to_owned()))
        );
    }

    #[test]
    fn a_schedule_should_not_name_its_time_zone() {
        let obj = cron_job(json!({"schedule": "CRON_TZ=UTC 0 * * * *",
            "jobTemplate": job_template()}));
        assert_eq!(
            causes(&CronJobStrategy.validate(&def(), &obj)),
            [(
                "spec.schedule".to_owned(),
                "Invalid value: \"CRON_TZ=UTC 0 * * * *\": cannot use TZ or CRON_TZ in schedule, use timeZone field instead".to_owned()
            )]
        );
        // A stored schedule with a TZ may keep it, but not with a timeZone beside it.
        let old = Value::Object(obj.clone());
        assert_eq!(CronJobStrategy.validate_update(&old, &obj), vec![]);
        let mut with_tz = obj.clone();
        with_tz["spec"]["timeZone"] = json!("UTC");
        assert_eq!(
            causes(&CronJobStrategy.validate_update(&old, &with_tz))[0].1,
            "Invalid value: \"CRON_TZ=UTC 0 * * * *\": cannot use both timeZone field and TZ or CRON_TZ in schedule"
        );
    }

    #[test]
    fn time_zones_should_be_explicit_and_known() {
        for (tz, want) in [
            (
                "",
                vec!["Invalid value: \"\": timeZone must be nil or non-empty string"],
            ),
            (
                "-Europe",
                vec!["Invalid value: \"-Europe\": unknown time zone -Europe"],
            ),
            (
                "local",
                vec![
                    "Invalid value: \"local\": timeZone must be an explicit time zone as defined in https://www.iana.org/time-zones",
                    "Invalid value: \"local\": unknown time zone local",
                ],
            ),
            (
                "Local",
                vec![
                    "Invalid value: \"Local\": timeZone must be an explicit time zone as defined in https://www.iana.org/time-zones",
                ],
            ),
        ] {
            let got: Vec<String> = time_zone(&json!(tz))
                .into_iter()
                .map(|e| e.message)
                .collect();
            assert_eq!(got, want, "{tz}");
        }
    }

    #[test]
    fn a_long_name_should_be_refused_on_create_only() {
        let mut obj = cron_job(json!({"schedule": "@daily", "jobTemplate": job_template()}));
        let name = "a".repeat(53);
        obj["metadata"]["name"] = json!(name);
        assert_eq!(
            causes(&CronJobStrategy.validate(&def(), &obj)),
            [(
                "metadata.name".to_owned(),
                format!("Invalid value: \"{name}\": must be no more than 52 characters")
            )]
        );
        let old = Value::Object(obj.clone());
        assert_eq!(CronJobStrategy.validate_update(&old, &obj), vec![]);
        // An unchanged unknown time zone is not checked again on update.
        let mut bad_tz = obj.clone();
        bad_tz["spec"]["timeZone"] = json!("Nowhere/Land");
        let old = Value::Object(bad_tz.clone());
        assert_eq!(CronJobStrategy.validate_update(&old, &bad_tz), vec![]);
    }
}
